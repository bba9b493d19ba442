"""Heaped values of a binned numeric column: any number that holds a sizeable share of the rows exactly.

:mod:`~dpsynth.data.discover.points` asks about *public* round values (cell edges, bucket edges, top-codes).
Real heaps are often elsewhere: menu prices on quarters (pizza_sales' ``price``: 20.75 holds 18% of the rows,
nine prices 79%), the anchors of a feeling thermometer's card (0, 15, 30, 40, 50, 60, 70, 85, 97), the seat
counts of a few aircraft models (149, 140, 55, 178).  Binned and decoded uniformly within a bin, such rows come
out smeared over their bin and the column's quantiles move off the heaps.

So when a point-mass budget was set aside (a heavy cell of the first fine histogram,
:func:`~dpsynth.data.discover.points.heavy_cells`) and the column has a δ, that budget runs **partition
selection** over the column's observed numbers within its learned bounds (``number_counts(lo, hi)``: each row
in at most one count; Gaussian or Laplace partition selection through
:meth:`~dpsynth.data.discover.noise.ColumnBudget.partition`, charged to the ledger with its δ).  Every released
value is DP output, so it may become an edge: a released value whose noisy count holds :data:`HEAP_SHARE`/bins
of the noisy non-null rows gets a point bin (:func:`~dpsynth.data.discover.points.place`), at most ``bins`` of
them (the heaviest).  0 is left to the profile's exact-zero cell (already paid for).  The noisy counts of the
points well above the selection threshold (:data:`MARGIN` sds) are kept as evidence measurements; the others
only weigh the decoding (a selected count is biased upwards near the threshold).

The public round values inside the heavy cells (those the δ-free path asks) are **public keys** of that same
selection: their counts come first, released whatever their noise, and a row equal to one is not counted among
the observed numbers (each row in one count: the same sensitivity, one charge, no budget split).  One is kept by
the heaps' rule or by the round values' (past the cut of :func:`~dpsynth.data.discover.points.measure`, 1/bins
of the rows), whose cut is far below the selection's threshold (≈ σ·sqrt(2 ln 1/δ)): jobless_benefits' ``rr``
holds 620 of 4,877 rows at exactly 0.5 against a threshold of 577 at σ 106, and the heap was missed on both
seeds of session 11's closing check (its rows decoded over [0.5, 0.55): 1-way TV 0.25-0.28, the hand schema's
0.05).  The round values' rule alone lost pizza_sales' heap at 16 (4,500 rows, under 1/bins: 2-way L1 1.45×).
"""

from __future__ import annotations

import math

import numpy as np

from dpsynth.data.discover.points import PointMasses, candidates, measure
from dpsynth.privacy.selection import gaussian_partition_threshold, partition_threshold

__all__ = ["HEAP_SHARE", "MARGIN", "ask_points", "heaped"]

HEAP_SHARE = 0.5
"""A released value is a point mass when its noisy count holds HEAP_SHARE/bins of the noisy non-null rows (the
public round values of :mod:`~dpsynth.data.discover.points` need 1/bins: a heap of half a bin's share, on an
edge of the column's quantiles, still moves them)."""

MARGIN = 2.0
"""A point's noisy count is reused as a measurement when it is at least MARGIN sds above the selection
threshold (:data:`dpsynth.data.discover.evidence.SELECTION_MARGIN`: its selection bias is negligible)."""


def ask_points(spikes, heavy: tuple[np.ndarray, np.ndarray], delta: float, column, cells, *, lo: float, hi: float,
               integral: bool, non_null: float, bins: int) -> PointMasses:
    """The point masses the budget ``spikes`` that :meth:`~dpsynth.data.discover.column.ColumnDiscovery._fine` set
    aside finds within [lo, hi]: with ``delta``, any heaped number (:func:`heaped`); without, the public round
    values inside the ``heavy`` cells (their edges, :func:`~dpsynth.data.discover.points.measure`)."""
    values = candidates(lo, hi, None if cells is None else np.asarray(cells, dtype=float), integral)
    values = values[np.any((values[:, None] >= heavy[0]) & (values[:, None] <= heavy[1]), axis=1)]
    if delta > 0:
        return heaped(spikes, column, lo=lo, hi=hi, delta=delta, non_null=non_null, bins=bins, integral=integral,
                      public=values)
    if values.size == 0:  # (its share of the budget goes unused)
        return PointMasses.none()
    return measure(spikes, column, values, non_null=non_null, bins=bins)


def heaped(budget, column, *, lo: float, hi: float, delta: float, non_null: float, bins: int,
           integral: bool, public: np.ndarray | None = None) -> PointMasses:
    """The heaped values of ``column`` within [lo, hi] (see the module docstring), by partition selection with
    ``budget`` and ``delta``, the ``public`` round values within [lo, hi] (:func:`ask_points`) as public keys.
    ``column.number_counts(lo, hi)`` and ``column.point_counts(public)`` are private and go straight into the
    mechanism: a row equal to a public value is counted there and not among the observed numbers (exact float
    equality both ways), so each row is in one count."""
    pub = np.zeros(0) if public is None else np.asarray(public, dtype=float)
    values, counts = column.number_counts(lo, hi)
    values = np.asarray(values, dtype=float)
    own = ~np.isin(values, pub)
    keys = np.concatenate([pub, values[own]])
    counts = np.concatenate([column.point_counts(pub) if pub.size else np.zeros(0, dtype=np.int64),
                             np.asarray(counts, dtype=np.int64)[own]])
    idx, noisy = budget.partition(counts.astype(np.int64), delta, public=pub.size,
                                  what=f"rows per observed number in [{lo:g}, {hi:g}], {pub.size} public round "
                                       "values first (heaped values)")
    if idx.size == 0:
        return PointMasses.none()
    v, c = keys[idx], np.asarray(noisy, dtype=float)
    threshold = _threshold(budget, delta)
    at_public = idx < pub.size  # a public value: released unthresholded, so its count is unbiased
    heap = (c >= threshold) & (c >= HEAP_SHARE * non_null / bins)  # (any value past the selection: a heap)
    keep = (heap | (at_public & (c >= budget.block_cut(1, max(1, pub.size))) & (c >= non_null / bins))) & (v != 0)
    if integral:  # (a public value also by the round values' rule, points.measure: far under the threshold)
        keep &= v == np.round(v)
    v, c, at_public = v[keep][:bins], c[keep][:bins], at_public[keep][:bins]  # (by decreasing noisy count)
    sds = np.where(at_public | (c >= threshold + MARGIN * budget.sd), budget.sd, 0.0)  # sd 0: no measurement
    order = np.argsort(v)
    return PointMasses(v[order], c[order], sds[order], "heaped values released by partition selection")


def _threshold(budget, delta: float) -> float:
    """The partition selection's public threshold for ``budget`` and ``delta``."""
    if budget.zcdp:
        return float(gaussian_partition_threshold(rho=budget.amount, delta=delta,
                                                  l2_sensitivity=math.sqrt(budget.l1))[1])
    return float(partition_threshold(epsilon=budget.amount, delta=delta, sensitivity=budget.l1)[1])
