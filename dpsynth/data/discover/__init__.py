"""Private schema discovery: learn a release schema from the table itself, charged to the ledger.

``dpsynth schema discover``, a config's ``schema: {discover: ...}`` and the zero-config release
(``dpsynth release -i T -o O --epsilon E``) all call :func:`discover_schema`.  Every fact taken from the data
passes through a mechanism of :mod:`dpsynth.privacy.selection` or :mod:`dpsynth.privacy.mechanisms` (the counts
come from the :class:`~dpsynth.data.profile.ColumnProfile` boundary, on a DataFrame or batch by batch on a file:
:mod:`dpsynth.data.discover.tables`); hints are public facts the user gives, and
a column whose hint is complete costs nothing.

**Budget.**  Every row touches every column, so the columns compose.  A discovery with its own ledger (basic
composition) gives each column that needs learning ε_c = ε/(columns) and uses discrete Laplace noise; a
discovery inside the release's zCDP ledger (δ > 0: the zero-config release and ``schema.discover`` under a zCDP
algorithm) gives each column ρ_c = ρ/(columns) and uses discrete Gaussian noise, whose cost grows with
sqrt(columns) in ε terms and whose thresholds are several times lower (:mod:`dpsynth.data.discover.noise`).
δ_c = δ/(columns that may be categorical) for partition selection.  That is the nominal allotment; the columns
then run in phases (:mod:`dpsynth.data.discover.allot`): every profile first, then each stage with what its
profile says it needs (a column of few integers :data:`~dpsynth.data.discover.column.FEW_SHARE` of its rest,
its bounds keeping the integers its profile showed; a categorical column a probe,
:data:`~dpsynth.data.discover.values.PROBE_SHARE`), and what the cheap stages left is pooled for the second
partition selections of the categorical columns whose probes left rows out (wide tables: hotels' ``country``).
What is left after that is never charged: the release spends it.  Each share reads only mechanism outputs and
the charges stay within the total, so the ledger's total still bounds the discovery (adaptive composition with
a fixed total: a privacy filter).

Per column (:class:`~dpsynth.data.discover.column.ColumnDiscovery`):

0. **kind** (when the type is unknown; 10% of the column's budget): four noisy cells, null, text, dates and
   numbers; a column of text is categorical and needs no profile (:mod:`~dpsynth.data.discover.kind`).
1. **profile** (when the type, integrality or range is unknown; 30% of the column's budget): one noisy histogram
   with a cell per row: null, text, and integral and fractional numbers per public logarithmic bucket (edges 0
   and ±{1, 1.5, 2, 3, 5, 7}·10^k within [−10⁹, 10⁹]).  Cells past a cut that all empty cells stay under with
   probability ≥ 99% count: text over numbers makes the column categorical (so does text holding 5% of
   the rows beside a few integers: counts coded 1, 2-10, Over 100); fractional numbers under 10% of the
   numbers make it integral; the support of the buckets (single buckets, or windows of 2, 4, 8, … adjacent
   buckets when none passes alone, then rings and running sums of doubling width for thin tails; joined with the
   heaviest bucket of each decade or pair of decades whose noisy sum passes, the other sign's mirrored decades
   tested as a few blocks, and 0 when the support ends near it: :mod:`~dpsynth.data.discover.coarse`),
   widened by two buckets on each side, is the coarse range.
2. **categorical**: partition selection over the observed values (a probe with 15% of the stage's budget and
   half its δ first; again with the rest only when the probe's values leave rows unexplained), the top
   ``max_categories`` by noisy count kept, the rest going to the other-bucket (``unknown: other``).  When the kept values hold under 10% of the
   noisy non-null rows the column is free text or an identifier: left out of the schema, with a warning; so is
   one whose probe left rows out and whose noisy count of distinct values is over a third of its rows
   (``ColumnDiscovery.screen``, before its second selection).  Each selection's histogram also holds the null
   rows as a public cell (each row in one cell: no further cost), averaged with the kind's null cell for the
   ``missing`` decision (:func:`~dpsynth.data.discover.nulls.fuse_nulls`).
3. **numeric** (a column of few integers, its coarse range at most 2·bins wide, with 15% of the stage's budget):
   a fine noisy histogram over round public cells covering the coarse range (16 to 128 cells, as
   many as the noisy row count fills; one per integer when that many cover an integral range; logarithmic cells,
   round numbers of an E-series, when the profile shows a skewed column whose 10% and 90% quantiles are
   magnitudes apart, such as sampling weights): the bounds are
   its support, and the edges are quantiles of its noisy counts (post-processing; ``edges: equal`` gives equal
   widths).  An integral column whose bounds span at most ``2·bins`` values gets one bin around each integer; a
   column hinted ``type: integer`` is an ``integer`` column unless its learned bounds span more than
   ``max(2·bins, max_categories)`` values, in which case it is binned.  Tied integers in a short range (years:
   a support of at most 3 wide cells holding most of the numbers) are measured again with one cell per integer.
   Narrow fractional data at a large magnitude (decimal years) is zoomed twice, and a thin tail the profile's
   buckets saw but the fine cells' noise hid stays inside the bounds (:mod:`dpsynth.data.discover.zoom`).
   An integral column flat over 500+ integers from near 0 whose noisy count of distinct integers fills a
   quarter of them is an integer identifier: left out (:mod:`dpsynth.data.discover.ident`).

   **Point masses** (:mod:`dpsynth.data.discover.points`): when a cell of the first fine histogram is heavy
   enough to hold one, one noisy histogram of the rows equal to each public round value inside it (the cells'
   edges, the profile's bucket edges, top-codes) with 10% of the numeric budget; a value past the cut holding
   1/bins of the rows gets a bin of its own (a point bin: it decodes exactly).  With a δ, that budget runs
   partition selection over the observed numbers instead, so a heap off every round grid (a price of
   20.75) is found too; a released value holding half a bin's share gets a point bin
   (:mod:`~dpsynth.data.discover.heaps`).  A fractional column whose fine
   cells past the cut are few and apart (codes such as 0.0, 4.5, 14.5) spends the rest of its budget on partition
   selection over its values and becomes categorical over the kept ones.

   **Values on a lattice** (:mod:`dpsynth.data.discover.lattice`): an integral column first spends 5% of its
   numeric budget on one noisy histogram over public candidate steps (1, 2, 5, 10, 20, 25, 50, …; each nonzero
   integer in the cell of the largest dividing it), then (a round step found) 2% on multiples of 3 or not;
   when a step s > 1 divides 90% of the noisy total (at least half the profile's nonzero numbers), the column
   gets ``step: s`` (3s when multiples of 3 hold 90%) and edges halfway between multiples of s.

   **A tail beside a zero spike** (:mod:`dpsynth.data.discover.tail`): a column whose profile shows only its
   zeros spends 30% of its stage on one histogram over public decades; the decades with data widen its bounds
   (an integral column's first decade, 30% more, per integer: its bounds stop at the last integer with data).

**Reuse.**  The released counts (the null cell, the kept categories' counts, the last fine histogram, the point
masses' counts) are kept as :class:`~dpsynth.data.discover.evidence.Evidence`; a release on the discovered schema hands them to its
estimator as 1-way linear measurements (post-processing: no further privacy cost).

Nulls are always representable: ``missing: category``, or ``missing: fill`` when the profile's noisy null count
does not stand out (:mod:`~dpsynth.data.discover.nulls`), unless hinted.  The schema has ``unknown: other``:
values outside the released categories go to the other-bucket, numbers outside the bounds are clamped to the end
bins, and a value a numeric column cannot read (text) is missing — never a refusal that depends on one row.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import yaml

from dpsynth.data.discover.allot import TARGET_SHARE, run_columns
from dpsynth.data.discover.column import FINE_CELLS, MIN_CELLS, PROFILE_SHARE, ColumnDiscovery, plain
from dpsynth.data.discover.noise import (
    DEFAULT_RANGE,
    OUTER_RANGE,
    ColumnBudget,
    coarse_grid,
    column_streams,
    fine_cells,
)
from dpsynth.data.discover.spec import _HINT_KEYS, ColumnHint, DiscoverSpec, Discovery, parse_discover
from dpsynth.data.discover.tables import DiscoveryTable, as_discovery_table
from dpsynth.errors import ConfigError, DataError
from dpsynth.privacy.accountant import Ledger, approx_dp_to_zcdp, split_budget
from dpsynth.privacy.neighbouring import Neighbouring

__all__ = [
    "DEFAULT_RANGE",
    "ColumnHint",
    "DiscoverSpec",
    "Discovery",
    "coarse_grid",
    "discover_schema",
    "fine_cells",
    "parse_discover",
    "schema_yaml",
    "share_for",
]


MIN_SHARE, MAX_SHARE = 0.15, 0.5
"""A zero-config release with n public sizes its discovery (:func:`share_for`): the share of ρ that lets partition
selection keep every category holding :data:`~dpsynth.data.discover.allot.TARGET_SHARE` of the rows, between
MIN_SHARE and MAX_SHARE."""


def share_for(*, n: int, columns: int, epsilon: float, delta: float, approx_delta: float, l1: float) -> float:
    """The share of the release's ρ for a zCDP discovery of ``columns`` columns on ``n`` rows (all public): the
    Gaussian partition-selection threshold T ≈ σ·sqrt(2·ln(columns/δ_a)) at TARGET_SHARE·n gives σ, hence the
    categorical stage's ρ = l1/(2σ²), the column's ρ (the profile takes PROFILE_SHARE first) and the share of
    the ρ the budget allows, clipped to [MIN_SHARE, MAX_SHARE].  Measured on the dev tables (benchmarks/README):
    a fixed 0.2 was 2.3x the hand-written schema's 2-way error on 3,000 rows and slightly worse than 0.1 on 28,000."""
    total = approx_dp_to_zcdp(epsilon, delta - approx_delta)
    z = math.sqrt(2.0 * math.log(max(1, columns) / approx_delta))
    sigma = max(TARGET_SHARE * n / z, 1.0)
    rho_column = l1 / (2.0 * sigma * sigma) / (1.0 - PROFILE_SHARE)
    return float(np.clip(columns * rho_column / total, MIN_SHARE, MAX_SHARE))


def _needs_delta(h: ColumnHint) -> bool:
    return not h.complete() and h.type in (None, "categorical") and h.categories is None


def discover_schema(
    table: pd.DataFrame | DiscoveryTable,
    spec: DiscoverSpec,
    *,
    ledger: Ledger,
    neighbouring: Neighbouring = Neighbouring.ADD_REMOVE,
    rng: np.random.Generator,
    rho: float | None = None,
) -> Discovery:
    """Learn a schema for ``table`` (see the module docstring), charging ``ledger``.

    ``table``: a DataFrame, or a :class:`~dpsynth.data.discover.tables.DiscoveryTable` that an engine scans
    (:func:`dpsynth.data.engines.discovery_table`); the same seed gives the same schema either way.

    Without ``rho``: pure-ε discovery spending ``spec.epsilon`` (and ``spec.delta``) under the ledger's basic
    composition.  With ``rho``: discovery inside a zCDP ``ledger`` spending ``rho`` (and ``spec.delta`` as the
    approximate δ of partition selection); the release then continues on the same ledger.
    """
    source = as_discovery_table(table)
    present = list(source.names)
    if len(set(present)) != len(present):
        raise DataError("the input has duplicate column names")
    if spec.columns is None:
        hints = {name: ColumnHint() for name in present}
    else:
        missing = [n for n in spec.columns if n not in present]
        if missing:
            raise DataError(f"column '{missing[0]}' has discovery hints but is missing from the input")
        hints = {name: spec.columns.get(name, ColumnHint()) for name in present}  # hints add facts, drop nothing
    if source.n_rows() == 0:
        raise DataError("the input has no data rows")
    learn = [n for n, h in hints.items() if not h.complete()]
    maybe_cat = [n for n in learn if _needs_delta(hints[n])]
    if maybe_cat and spec.delta <= 0:
        raise ConfigError(
            f"discovery of categories (column '{maybe_cat[0]}') needs delta > 0 for partition selection; "
            "set --delta / discover.delta (e.g. 1e-6) or give the column's type or categories as a hint"
        )
    total = spec.epsilon if rho is None else rho
    eps_parts = split_budget(total, [1.0] * len(learn)) if learn else []
    delta_parts = split_budget(spec.delta, [1.0] * len(maybe_cat)) if maybe_cat else []
    eps_of = dict(zip(learn, eps_parts))
    delta_of = dict(zip(maybe_cat, delta_parts))
    unit = "epsilon" if rho is None else "rho"
    out = Discovery(schema={"columns": {}, "unknown": "other"})
    cols = {name: ColumnDiscovery(hints[name], source.column(name), spec) for name in learn}
    streams = column_streams(rng, learn)  # one noise stream per column (noise.column_streams)
    budgets = {name: ColumnBudget(eps_of[name], rho is not None, neighbouring.histogram_l1, ledger, streams[name],
                                  name) for name in learn}
    found, book = run_columns(cols, budgets, delta_of, ledger)
    for name, hint in hints.items():  # in the input's order
        if name not in cols:
            out.schema["columns"][name] = _spec_from_hint(hint)
            out.columns[name] = {unit: 0.0, f"{unit}_spent": 0.0, "delta": 0.0, "learned": [],
                                 "public": sorted(_given(hint))}
            continue
        col = cols[name]
        if found[name] is not None:
            out.schema["columns"][name] = found[name]
            out.evidence[name] = col.evidence
        out.columns[name] = {unit: eps_of[name], f"{unit}_spent": book[name]["spent"],
                             "delta": delta_of.get(name, 0.0), "learned": col.learned, "public": sorted(_given(hint))}
        if "pooled" in book[name]:
            out.columns[name][f"{unit}_pooled"] = book[name]["pooled"]
        if col.dropped is not None:
            out.columns[name]["dropped"] = col.dropped
    if not out.schema["columns"]:
        raise DataError("schema discovery left no column in the schema (every column looks like free text or an "
                        "identifier); give hints for the columns to keep")
    noise = "discrete Laplace noise (basic composition)" if rho is None else "discrete Gaussian noise (zCDP)"
    out.public = [
        "the column names (the input's header)",
        "the hints given for each column (type, categories, bounds, bins, missing)",
        (f"the public candidate grids: default range [{DEFAULT_RANGE[0]:g}, {DEFAULT_RANGE[1]:g}] unless hinted "
         f"(with outer buckets to {OUTER_RANGE[0]:g} and {OUTER_RANGE[1]:g}), "
         f"fine cells of round widths ({MIN_CELLS} to {FINE_CELLS}, or one per integer, or E-series numbers for "
         "a skewed column; point-mass candidates: the cells' edges, the buckets' edges and top-codes ±(10^k − 1), "
         "without δ (with δ: partition selection over the observed numbers); "
         "candidate steps of a lattice: 2^a·5^b up to 10^6), "
         f"max_categories={spec.max_categories}, bins={spec.bins}, edges={spec.edges}; {noise}"),
    ]
    return out


def _given(h: ColumnHint) -> set[str]:
    return {k for k in _HINT_KEYS if getattr(h, k) is not None}


def _spec_from_hint(h: ColumnHint) -> dict:
    if h.type == "categorical":
        spec: dict = {"type": "categorical", "categories": list(h.categories)}
    elif h.type == "integer":
        spec = {"type": "integer", "lower": int(h.lower), "upper": int(h.upper)}
    else:
        spec = {"type": "numeric", "lower": plain(h.lower), "upper": plain(h.upper), "bins": h.bins}
        if h.integer:
            spec["integer"] = True
        if h.step is not None:
            spec["step"] = plain(h.step)
    spec["missing"] = h.missing or "category"
    return spec


# ----------------------------------------------------------------------------- output
def schema_yaml(discovery: Discovery, header: str = "") -> str:
    """The discovered ``schema:`` section as YAML (a config fragment), after an optional comment header."""
    text = yaml.safe_dump({"schema": discovery.schema}, sort_keys=False, default_flow_style=None, width=110)
    return header + text
