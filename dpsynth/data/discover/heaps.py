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
    if delta > 0:
        return heaped(spikes, column, lo=lo, hi=hi, delta=delta, non_null=non_null, bins=bins, integral=integral)
    values = candidates(lo, hi, None if cells is None else np.asarray(cells, dtype=float), integral)
    values = values[np.any((values[:, None] >= heavy[0]) & (values[:, None] <= heavy[1]), axis=1)]
    if values.size == 0:  # (its share of the budget goes unused)
        return PointMasses.none()
    return measure(spikes, column, values, non_null=non_null, bins=bins)


def heaped(budget, column, *, lo: float, hi: float, delta: float, non_null: float, bins: int,
           integral: bool) -> PointMasses:
    """The heaped values of ``column`` within [lo, hi] (see the module docstring), by partition selection with
    ``budget`` and ``delta``.  ``column.number_counts(lo, hi)`` is private and goes straight into the mechanism."""
    values, counts = column.number_counts(lo, hi)
    idx, noisy = budget.partition(np.asarray(counts, dtype=np.int64), delta,
                                  what=f"rows per observed number in [{lo:g}, {hi:g}] (heaped values)")
    if idx.size == 0:
        return PointMasses.none()
    v, c = np.asarray(values, dtype=float)[idx], np.asarray(noisy, dtype=float)
    keep = (c >= HEAP_SHARE * non_null / bins) & (v != 0)
    if integral:
        keep &= v == np.round(v)
    v, c = v[keep][:bins], c[keep][:bins]  # (by decreasing noisy count: the heaviest)
    threshold = _threshold(budget, delta)
    sds = np.where(c >= threshold + MARGIN * budget.sd, budget.sd, 0.0)  # sd 0: not a measurement (evidence.py)
    order = np.argsort(v)
    return PointMasses(v[order], c[order], sds[order], "heaped values released by partition selection")


def _threshold(budget, delta: float) -> float:
    """The partition selection's public threshold for ``budget`` and ``delta``."""
    if budget.zcdp:
        return float(gaussian_partition_threshold(rho=budget.amount, delta=delta,
                                                  l2_sensitivity=math.sqrt(budget.l1))[1])
    return float(partition_threshold(epsilon=budget.amount, delta=delta, sensitivity=budget.l1)[1])
