"""Whether a discovered column keeps a null category, or reads a null as a value it holds (``missing: fill``).

A discovered schema used to give every column ``missing: category``.  On a column without nulls that cell is
never filled, yet it costs: a binary column becomes 3 values, so more of mwem's candidate marginals pass the
model-cells bound (german_health, seeds 4 / 5: 468 / 396 of 680 candidates over it against 315 / 341 without null
cells), and the model puts noisy mass on cells the data never holds.  Removing the null cell where the real
column has no null (an oracle, issue 27, seeds 2 / 3) measured 2-way L1 x0.84 on german_health (x0.91 on seeds
4 / 5), x0.90 infant_pneumonia, x0.92 wilms_tumor and health_insurance, x0.95 wa_churn, x1.00-1.02 on
college_distance, phone_churn and credit; null cells added to german_health's hand schema cost x1.18.

The decision reads the profile's NOISY counts only (post-processing): when the null cell (and, for a number
column, the text cell, as such text is read as null) does not stand out of the noise (the profile's block cut, as
every other profile decision, and :data:`NULL_SD` sds), the column gets ``missing: fill`` with a value read off noisy counts: the kept
category with the largest noisy count, or, for a number column, the value of the fine histogram's noisy median
(a point value when one lies in that cell).  A null row (below the cut, so few) is then encoded as that value:
no refusal, and a row's code still depends on that row and the public schema only.  A column whose profile was
not run (hinted type and bounds) or with a ``missing`` hint keeps the hint or ``missing: category``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpsynth.data.schema import bin_index

__all__ = ["NULL_SD", "fuse_nulls", "missing_spec"]

NULL_SD = 2.0
"""A column gets ``missing: fill`` only when its noisy null count is under the profile's cut AND under NULL_SD sds
of its noise: on a small table the cut is a large share of the rows (pums_null, 1,948 rows: cut 146, sd 32, 68-132
nulls in every column), and the cut alone folded those nulls into values: 2-way L1 x1.43 / x1.40 (seeds 2 / 3),
wvs_usa x1.06 / x1.09.  Measured over 15 seen tables, seeds 2-5 (geometric mean of after / before): the cut alone
x0.973 (seeds 2 / 3 only), max(2 sds, 1% of the noisy non-null rows) x0.962 (nasscds x1.02: its 153 nulls of
injSeverity, 0.6%, folded), 2 sds x0.955 (pums_null x1.03, nasscds x0.93).  On those tables (seeds 2 / 3) 9 of 351
null-free column-seeds keep the null category (their noise passed 2 sds; the cut alone: 1), and 14 of 64 with
nulls (1 to 132 of them) fold them into a value (the cut alone: 43)."""


def missing_spec(col: Any, spec: dict) -> dict:
    """The ``missing`` keys of a discovered column's spec (a ``ColumnDiscovery`` ``col`` after its stage), with
    a note in ``col.learned``."""
    if col.hint.missing is not None:
        return {"missing": col.hint.missing}
    quiet = getattr(col, "quiet_nulls", None)
    if quiet is None:
        col.learned.append("missing: category (no profile: a discovered schema always has room for nulls)")
        return {"missing": "category"}
    if not quiet:
        col.learned.append("missing: category (the noisy null count stood out of the noise)")
        return {"missing": "category"}
    value = fill_value(col.evidence, spec)
    if value is None:
        col.learned.append("missing: category (no nulls stood out of the noise, but no noisy count to pick a fill)")
        return {"missing": "category"}
    col.learned.append(f"missing: fill (no nulls stood out of the noise: a null is encoded as {value!r})")
    return {"missing": "fill", "fill": value}


def fill_value(ev: Any, spec: dict):
    """The value a null is read as, from the column's released noisy counts (``ev``, an Evidence) and its spec;
    None when none fits (a datetime column, no released counts)."""
    kind = spec.get("type")
    if kind == "categorical":
        cats = [str(c) for c in spec["categories"]]
        if ev.labels is not None and ev.label_counts is not None and len(ev.labels):
            best = ev.labels[int(np.argmax(np.asarray(ev.label_counts, dtype=float)))]
            if best in cats:
                return spec["categories"][cats.index(best)]
        return None
    if kind not in ("numeric", "integer") or ev.cells is None or ev.cell_counts is None:
        return None
    cells = np.asarray(ev.cells, dtype=float)
    counts = np.clip(np.asarray(ev.cell_counts, dtype=float), 0, None)
    if counts.size == 0 or counts.sum() <= 0:
        return None
    i = int(np.searchsorted(np.cumsum(counts) / counts.sum(), 0.5, side="left"))
    lo, hi = float(cells[i]), float(cells[i + 1])
    median = 0.5 * (lo + hi)
    whole = math.ceil(median - 0.5)  # the integer nearest the cell's middle (ties down: [1, 2) holds 1)
    if kind == "integer":
        return int(np.clip(whole, spec["lower"], spec["upper"]))
    edges = np.asarray(spec["edges"] if "edges" in spec else
                       np.linspace(spec["lower"], spec["upper"], int(spec["bins"]) + 1), dtype=float)
    points = edges[:-1][np.diff(edges) == 0]
    inside = points[(points >= lo) & (points < hi)]
    if inside.size:  # a point bin in the median cell: its value
        return _plain(float(inside[0]))
    if spec.get("integer"):  # an integer in the median's cell (its bin may be another: [0, 0.5) holds 0)
        return _plain(float(np.clip(whole, math.ceil(edges[0]), math.floor(edges[-1]))))
    median = float(np.clip(median, edges[0], edges[-1]))
    b = int(bin_index(np.array([median]), edges)[0])
    # the shortest number in the median's bin (9.92 rather than 9.920000076293944): only its bin is encoded
    tries = [float(f"{median:.{d}g}") for d in range(1, 17)]
    same = [v for v in tries if edges[0] <= v <= edges[-1] and int(bin_index(np.array([v]), edges)[0]) == b]
    return _plain(same[0] if same else median)


def _plain(x: float):
    return int(x) if float(x).is_integer() and abs(x) < 2**53 else float(x)


def fuse_nulls(col: Any, reads: tuple[tuple[float, float], ...]) -> None:
    """A categorical column's null evidence with the null cell its partition selections released (``reads``:
    (noisy count, sd) each; the null rows are a public cell of the selection's histogram, which holds every row
    once, so they cost nothing more): the inverse-variance average of those and of the profile's (or the kind
    histogram's) null cell becomes :attr:`~dpsynth.data.discover.evidence.Evidence.null`, and the column reads its
    nulls as quiet when that average stands under :data:`NULL_SD` of its sd (post-processing)."""
    prior = getattr(col.evidence, "null", None)
    found = [*(() if prior is None else (prior,)), *reads]
    if not reads or any(sd <= 0 for _, sd in found):
        return
    w = np.array([1.0 / sd**2 for _, sd in found])
    mean = float(np.dot(w, [v for v, _ in found]) / w.sum())
    sd = 1.0 / math.sqrt(float(w.sum()))
    col.evidence.null = (mean, sd)
    if getattr(col, "quiet_nulls", None) is not None:
        col.quiet_nulls = bool(mean < NULL_SD * sd)
