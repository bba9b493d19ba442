"""Point masses of a numeric column: public round values that hold a sizeable share of its rows exactly.

Real columns often hold many rows at exactly one value: a percentage at 100 (loans' ``account_never_delinq_
percent``: 57% of the rows), a top-code (999999), 40 hours, a round price.  Binned and decoded within a bin,
those rows come out spread over the bin (and past the column's maximum when the value is its upper end).  So
discovery asks, for a **public** set of candidate values, how many rows equal each one exactly:

* the candidates (:func:`candidates`) are the round values the public grids already define, within the learned
  bounds: the edges of the column's last fine histogram (``dpsynth.data.discover.noise.fine_cells``), the
  profile's bucket edges (±{1, 1.5, 2, 3, 5, 7}·10^k) and the top-codes ±(10^k − 1); integers only for an
  integral column.  They depend on mechanism outputs (the bounds, the cells) and public constants only.  0 is no
  candidate: the profile's bucket [0, 10⁻⁶) already counted the exact zeros (its integral-number cell), and that
  count serves (no second payment);
* each row equals at most one candidate, so the counts are a histogram (L1 sensitivity that of a histogram),
  measured once with :data:`POINT_SHARE` of the column's numeric budget through its
  :class:`~dpsynth.data.discover.noise.ColumnBudget` (ledger entry ``rows equal to each of k public round
  values``), and only when it can matter: enough rows (:func:`worth_measuring`) and a cell of the first fine
  histogram heavy enough to hold a point and standing out of its neighbours (:func:`heavy_cells`; only the
  candidates inside such cells are asked);
* a candidate is a point mass when its noisy count passes the cut every zero count stays under with
  probability ≥ 99% (``block_cut``) and holds at least 1/bins of the noisy non-null rows.

A point mass gets a bin of its own (:func:`place`): the value written twice in a real column's edges (a point
bin, which encodes exactly that value and decodes to it: :class:`dpsynth.data.schema.NumericColumn`), the bin
[v − 0.5, v + 0.5) in an integral one; the other bins are quantiles of the fine histogram's noisy counts less the
point masses.  When no row other than the top point mass's stands out of the noise in its fine cell and above,
the upper bound is that value (the last bin is the point itself, closed).  The noisy counts are kept as evidence: 1-way measurements of the point
bins and the within-bin decoding's cells less the point masses (post-processing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpsynth.data.discover.noise import ColumnBudget, coarse_grid, quantile_edges

__all__ = ["POINT_SHARE", "PointMasses", "candidates", "heavy_cells", "place", "worth_measuring"]

POINT_SHARE = 0.1
"""Share of a numeric column's budget (after its profile) for the point-mass histogram, when measured: taken from
the rest the fine histogram leaves (:data:`~dpsynth.data.discover.column.FINE_SHARE` stays as it is) when a
cell of the first fine histogram may hold one (:func:`heavy_cells`)."""

SHRINK_SD, SHRINK_CELLS = 2.0, 1
"""The upper bound moves down to the top point mass when the noisy rows of the fine cell holding it and of the
cells above, less the point's noisy count, stay under SHRINK_SD standard deviations of their noise, and the bounds
(the fine histogram's support) hold at most SHRINK_CELLS cells above the point's: a support reaching further found
rows there (issue 27, credit's ``Expenses``: points 35, 45, 60, 75 and 4% of the rows at 90, whose sum over the
twenty cells above 75 stayed within the noise, were cut at 75).  SHRINK_SD was 3 until session 14: cracker_choice's
``price.kleebler`` (seed 3) had 549 noisy rows above its top point 121, 2.6 sds (sd 209 over nine cells of 1; under
no rows past the point, 2.6 sds or more has probability 0.5 %), and 472 rows (14 %) at 125 and 129 were clamped to
121; at 2 sds charity_mail's ``gift`` (171 rows above 25) and cracker_choice's ``price.sunshine`` (102 above 109)
keep their tops too (seeds 2,3 of 89 seen tables; no other schema changed)."""

_TOP_CODES = np.array([10.0**k - 1 for k in range(1, 16)])


@dataclass
class PointMasses:
    """Detected point masses: values (ascending), noisy counts, the sd of each count's noise."""

    values: np.ndarray
    counts: np.ndarray
    sds: np.ndarray  # 0: a released count not reused as a measurement (heaps.py: near its selection threshold)
    source: str = "noisy counts of rows equal to public round values"

    @staticmethod
    def none() -> PointMasses:
        return PointMasses(np.zeros(0), np.zeros(0), np.zeros(0))

    def with_point(self, value: float, count: float, sd: float) -> PointMasses:
        v = np.append(self.values, value)
        order = np.argsort(v, kind="stable")
        return PointMasses(v[order], np.append(self.counts, count)[order], np.append(self.sds, sd)[order],
                           self.source)


def candidates(lo: float, hi: float, cells: np.ndarray | None, integral: bool) -> np.ndarray:
    """The public candidate values within [lo, hi] (see the module docstring), ascending, without 0."""
    parts = [coarse_grid(lo, hi), _TOP_CODES, -_TOP_CODES]
    if cells is not None:
        parts.append(np.asarray(cells, dtype=float))
    c = np.unique(np.concatenate(parts))
    keep = (c >= lo) & (c <= hi) & (c != 0)
    if integral:
        keep &= c == np.round(c)
    return c[keep]


def worth_measuring(*, integral: bool, lo: float, hi: float, non_null: float | None, bins: int,
                    budget: ColumnBudget) -> bool:
    """Whether the point-mass histogram can change the schema (public facts and profile outputs only): the
    column's noisy row count is known, a point holding a quarter of it would pass the cut at :data:`POINT_SHARE`
    of ``budget``, and an integral range spans more than ``2·bins`` integers (else each integer has its bin)."""
    if non_null is None:
        return False
    if integral and math.floor(hi) - math.ceil(lo) + 1 <= 2 * bins:
        return False
    share, _ = budget.split(POINT_SHARE)
    return non_null >= 4.0 * share.block_cut(1, 256)


def heavy_cells(noisy: np.ndarray, budget: ColumnBudget, non_null: float | None, bins: int) -> np.ndarray:
    """The cells of the first fine histogram that may hold a point mass (post-processing): past the cut, within
    two noise sds of 1/bins of the noisy rows, and standing above both neighbours by half that (a point mass of
    1/bins of the rows on a smooth density; a smooth mode spread over coarse cells does not).  Only candidates
    inside them are asked about, and none is when there is no such cell (a smooth column pays nothing)."""
    if non_null is None:
        return np.zeros(0, dtype=np.int64)
    x = np.asarray(noisy, dtype=float)
    floor = max(budget.block_cut(1, x.size), non_null / bins - 2.0 * budget.sd)
    padded = np.concatenate([[0.0], x, [0.0]])
    excess = x - np.maximum(padded[:-2], padded[2:])
    return np.flatnonzero((x >= floor) & (excess >= max(budget.block_cut(1, x.size), non_null / (2.0 * bins))))


def measure(budget: ColumnBudget, column, values: np.ndarray, *, non_null: float, bins: int) -> PointMasses:
    """The candidates whose noisy count of rows exactly equal to them passes the cut and holds ≥ 1/bins of the
    noisy non-null rows.  ``column.point_counts(values)`` is private and goes straight into the mechanism."""
    noisy = budget.histogram(column.point_counts(values), f"rows equal to each of {values.size} public round values")
    noisy = np.asarray(noisy, dtype=float)
    keep = (noisy >= budget.block_cut(1, max(1, values.size))) & (noisy >= non_null / bins)
    return PointMasses(values[keep], noisy[keep], np.full(int(keep.sum()), budget.sd))


def residual(cells: np.ndarray, counts: np.ndarray, points: PointMasses) -> np.ndarray:
    """The noisy fine counts less each point mass's noisy count in the cell that holds it (post-processing)."""
    out = np.asarray(counts, dtype=float).copy()
    inside = (points.values >= cells[0]) & (points.values < cells[-1])
    at = np.searchsorted(cells, points.values[inside], side="right") - 1
    np.add.at(out, at, -points.counts[inside])
    return out


def place(points: PointMasses, *, lo: float, hi: float, integral: bool, bins: int, weights, evidence,
          equal: bool, first: np.ndarray | None = None) -> tuple[np.ndarray | None, float, list[str]]:
    """Bin edges with a bin of its own for each point mass; (edges or None to keep the caller's, new upper
    bound, what was learned).  ``weights``: (cells, noisy mass) of the fine histogram or None; ``evidence``
    the column's :class:`~dpsynth.data.discover.evidence.Evidence` (its cells give the rows above the top point);
    ``first``: the column's first fine cells, whose width at the top point counts the cells above it when a zoom's
    finer cells gave the bounds (a support 1.5 zoomed cells past 100 is within one first cell of it)."""
    pts = points.values
    listed = ", ".join(f"{v:g}" for v in pts)
    notes = [f"point masses ({points.source}), a bin each: {listed}"]
    top = float(pts[-1])
    if evidence.cells is not None and evidence.cell_counts is not None and lo < top < hi:
        cells = np.asarray(evidence.cells, dtype=float)
        k = int(np.searchsorted(cells, top, side="right")) - 1  # the cell holding the top point
        if 0 <= k < cells.size - 1:  # the rows in that cell and above, less the point's
            above = float(np.asarray(evidence.cell_counts, dtype=float)[k:].sum()) - float(points.counts[-1])
            sd = math.hypot(evidence.cell_sd * math.sqrt(cells.size - 1 - k), float(points.sds[-1]))
            beyond = int(np.count_nonzero(cells[k + 1:-1] < hi))  # cells above the point's within the bounds
            j = int(np.searchsorted(first, top, side="right")) - 1 if first is not None else -1
            if first is not None and 0 <= j < first.size - 1 and hi > cells[k + 1]:  # (in the first cells' width)
                beyond = min(beyond, math.ceil((hi - cells[k + 1]) / float(first[j + 1] - first[j]) - 1e-9))
            if above < SHRINK_SD * sd and beyond <= SHRINK_CELLS:
                hi = top
                notes.append(f"upper bound {top:g}: no row above the top point mass stands out of the noise")
    if weights is not None and not equal:
        cells, mass = weights
        left = np.clip(residual(np.asarray(cells, dtype=float), mass, points), 0, None)
        edges = quantile_edges(np.asarray(cells, dtype=float), left, max(1, bins - pts.size), lo, hi)
    else:
        return None, hi, notes
    return with_points(edges, pts, integral=integral, lo=lo, hi=hi), hi, notes


def with_points(edges: np.ndarray, pts: np.ndarray, *, integral: bool, lo: float, hi: float) -> np.ndarray:
    """``edges`` (within [lo, hi]) with a bin of its own for each value in ``pts`` (within [lo, hi]): a point bin
    (the value written twice) in a real column, [v − 0.5, v + 0.5) (clipped to the bounds) in an integral one."""
    e = np.asarray(edges, dtype=float)
    e = e[(e >= lo) & (e <= hi)]
    if integral:
        # edges in (v − 1, v + 1] other than v ± 0.5 would leave a bin beside the point holding no integer
        near = np.any((e[:, None] > pts[None, :] - 1) & (e[:, None] <= pts[None, :] + 1), axis=1)
        sides = np.concatenate([np.maximum(pts - 0.5, lo), np.minimum(pts + 0.5, hi)])
        return np.unique(np.concatenate([e[~near], sides, [lo, hi]]))
    once = np.unique(np.concatenate([e, pts, [lo, hi]]))
    return np.sort(np.concatenate([once, pts]))
