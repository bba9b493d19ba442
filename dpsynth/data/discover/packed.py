"""Logarithmic fine cells for a column that linear cells would pack: a test on the grids themselves.

The profile's skew test (:meth:`~dpsynth.data.discover.column.ColumnDiscovery._skew`) asks for logarithmic fine
cells when the noisy 10% and 90% quantiles are magnitudes apart (SKEW_RATIO) or the median sits under 1/PACKED of
the coarse range's top.  Both read quantiles of the profile's buckets *past the cut*, which miss a thin right tail,
and PACKED assumes ~100 fine cells while a small table fills fewer (issue 27, held-out-12's hpc_jobs:
``compounds``, 20-14,103 with median 226 and 10%/90% quantiles 37/967, got linear cells of 200 on [10, 10,000]
from 50 fine cells, whose first cell held about half the rows; 1-way TV 0.11-0.13 against the hand schema's
0.05-0.06).

So when the profile did not say skewed, the first fine histogram's grid is chosen on what it would do with the
profile's noisy bucket masses (post-processing: rows spread evenly within each bucket): linear cells are replaced
by logarithmic ones (from the bucket of the noisy 1% quantile, as the skew test does) when the heaviest linear
cell would hold more than :data:`PACK_SHARE` of a bin's share of the positive numbers (quantile edges cannot
split a cell: that many rows decode by one cell's shape) and the heaviest logarithmic cell at most
:data:`PACK_GAIN` of that.  A spike (a point mass, a heap) is heavy in both grids and changes nothing; a smooth
column over a narrow range of magnitudes (ages, scores) has light cells in both.

Measured (zero-config discovery of 47 seen tables, seeds 2 and 3: 18 tables' schemas changed, loans most, ten
columns; releases of 11 of them, 2-way L1 seeds 2, 3): geometric mean x0.975; hpc_jobs 0.352 / 0.294 → 0.304 /
0.263, college_distance x0.939, schooling x0.945, txhousing x0.960, innovation x0.964; worse: exam x1.043 (its
``student`` ids, 1-800, now log cells), nmes1988 x1.033 (``income``), city_weather x1.012, cps91_wives x1.011.
Seeds 4, 5 of the noisy ones: hpc_jobs 0.351 / 0.390 → 0.301 / 0.361 (seeds 2-5 x0.884), exam x0.978 (seeds 2-5
x1.010), nmes1988 x0.970 (seeds 2-5 x1.001).
"""

from __future__ import annotations

import numpy as np

from dpsynth.data.discover.noise import fine_cells, log_cells

__all__ = ["PACK_GAIN", "PACK_SHARE", "heaviest", "packed_start"]

PACK_SHARE, PACK_GAIN = 1.0, 0.5
"""Linear cells pack a column when their heaviest holds more than PACK_SHARE/bins of its positive numbers (by the
profile's buckets) and the logarithmic cells' heaviest at most PACK_GAIN times that."""


def heaviest(grid: np.ndarray, ext: np.ndarray, mass: np.ndarray) -> float:
    """The largest share of ``mass`` (noisy counts per bucket ``ext[i], ext[i + 1]``, rows spread evenly within a
    bucket) that one cell of ``grid`` would hold (post-processing)."""
    total = float(mass.sum())
    if total <= 0 or grid.size < 2:
        return 0.0
    cdf = np.concatenate([[0.0], np.cumsum(mass)]) / total
    at = np.interp(np.clip(grid, ext[0], ext[-1]), ext, cdf)
    return float(np.diff(at).max())


def packed_start(ext: np.ndarray, positive: np.ndarray, *, lo: float, hi: float, integral: bool, cells: int,
                 bins: int) -> float | None:
    """Where logarithmic fine cells should start for a column whose linear cells would pack it (module
    docstring), else None.  ``positive``: the profile's noisy counts of positive numbers per bucket of ``ext``."""
    total = float(positive.sum())
    if total <= 0 or not 0 <= lo < hi:
        return None
    i01 = int(np.searchsorted(np.cumsum(positive) / total, 0.01, side="left"))
    start = max(lo, float(ext[i01]))
    if not (0 < start and start * 2 < hi):
        return None
    linear = heaviest(fine_cells(lo, hi, integral=integral, cells=cells), ext, positive)
    if linear <= PACK_SHARE / bins:
        return None
    log = heaviest(log_cells(lo, start, hi, integral=integral, cells=cells), ext, positive)
    return start if log <= PACK_GAIN * linear else None
