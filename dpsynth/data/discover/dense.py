"""A finer histogram where a long-tailed column's rows are dense (issue 27, car_exports' ``value``).

A skewed column gets logarithmic fine cells (:meth:`~dpsynth.data.discover.column.ColumnDiscovery._skew`): 3 to 24
round numbers per decade, so a cell is 10-50 % wide whatever the data.  That resolves amounts spread over many
magnitudes, but not a column whose rows are packed in a small part of its range beside a long tail: car_exports'
``value`` holds six price indices near 1 (86 % of its rows, quantiles at 0.903, 0.921, 1.0, 1.030 and 1.083) and
trade values from 88 to 1.4·10⁸.  Over [0.3, 1.5·10⁶) the E12 cells are 18 % wide, every index lies in 8 of
83 cells, the quantile edges fall on the same few cell edges (7 bins) and the decoder spreads each cell's rows
evenly: 1-way TV 0.125 on seeds 0 and 1 against 0.004 by hand (bins 0.1 wide around 1).

So, after the first fine histogram (post-processing of its noisy counts only), :func:`dense_run` looks for the
fewest adjacent cells holding :data:`DENSE_MASS` of its noisy rows.  When that run spans at most a quarter of the
cells and equal cells over it, as many as its noisy rows fill (the first histogram's rule), would be at least
:data:`FINER` times narrower than its narrowest cell, the rest of the numeric budget (what would otherwise measure
the same cells again, to average) measures those equal cells instead (:func:`measure_dense`).  The column's fine
histogram is then the first histogram's cells outside the run and the finer cells inside it; the tail keeps the
first measurement alone (its noise sd grows by sqrt(1/FINE_SHARE), about 1.3x).

What the budget allows, car_exports at the zero-config share (ρ 5.7·10⁻⁴ per column): the first histogram's σ
is 46 and the rest's 56 (the two averaged: 35); the run [0.39, 1.2) of 8 E12 cells holds about 33,000 rows, so
81 cells of 0.01 hold about 400 rows each, 7 σ.  Its 1-way TV fell from 0.125/0.125 to 0.007/0.013 (seeds 0/1;
hand 0.004/0.006) and the table's 2-way L1 from 0.140 to 0.069 (mean of seeds 0-3; hand 0.050): its bin edges
[0, 0.49, 0.63, 0.82, 0.91, 0.93, 1, 1.04, 1.08, 100, 1.5·10⁶] against the judge's quantiles 0.485, 0.630, 0.810,
0.903, 0.921, 1.0, 1.030, 1.083, 88.5.  Of the 68 seen tables (discovery alone, seeds 0-3) no other column takes
this path.

A column on linear fine cells takes the same path (issue 27, retirement_401k's ``nettfa``: net assets in
thousands, signed, -503 to 1,537, 6 % zeros, deciles -4.8, -1.5, 0, 0.33, 2, 5.6, 12.8, 26.5, 58).  Its 24 %
negatives keep it from being skewed, so its first fine cells are linear, 5 wide over [-15, 200), and its quantile
edges fell on them: [-15, -5, 0, 0, 5, 10, 20, 45, 150], 8 bins (duplicate quantiles merge), the decoder spreading
half the rows evenly over [0, 5).  Its dense run [-15, 35) gets 50 cells of 1 and the edges [-15, -4, -1, 0, 0, 2, 5,
14, 30, 55, 150] (seed 2).  A linear run mostly made of the column's exact zeros (the profile's noisy count:
:data:`ZERO_RUN`) is left alone, as the logarithmic rule leaves the zero cell, and so is an integral column's
(its cells measured again, averaged): with them too, 19 of 98 seen tables' schemas changed (seeds 2-3), mostly
counts such as phone_churn's calls given 10-11 bins for 7-8, and zero-config 2-way L1 moved by x1.000 (seeds 2-3;
retirement_401k x0.918, scorecard x0.862, but phone_churn x1.141, credit x1.075, alcohol_abuse x1.044,
lending_club x1.043); seeds 4-5 of nine of them x1.010 (phone_churn x1.071 again, 4 seeds of 4 worse).  Not
integral: 6 seen tables' schemas changed on seeds 2-3 (98 screened), 4 more columns on seeds 4-5; zero-config 2-way
L1 on seeds 2-5, geometric mean x0.999 over 26 table-seeds: retirement_401k 0.1228 → 0.1036 on seed 2 (``nettfa``'s
1-way TV 0.096 → 0.047; the one seed of 2-5 whose ``nettfa`` was on cells of 5, the others zoomed), randhie x0.992,
innsbruck_rain x1.002, school_spending x1.009 (seed 2 x1.068, seed 3 x0.971), gss_wages x1.015 (seed 4 x1.059),
county_murders x1.018 (seed 2 x0.964, seed 3 x1.117), abortion x1.005 and nafld_cohort x1.016 (one seed each).
With :data:`WITHIN` too (3 column-seeds more, of 392 screened: seeds 2-5 of 98 seen tables): retirement_401k's
seed 4 0.2306 → 0.1303 (``nettfa`` 5 bins → 8) and weather x0.946 and x0.931 (``pressure``, seeds 3 and 4: 7 bins
→ 10); over the 28 table-seeds whose schemas changed, x0.975 (retirement_401k x0.831 over seeds 2-5).

The finer histogram is one charged histogram over public edges (round widths inside the run, chosen from noisy
counts): two outer cells, [first cell's lower edge, run) and [run, last cell's upper edge), take the rows outside
the run (so each row is in exactly one cell: sensitivity as for any histogram) and are dropped.
"""

from __future__ import annotations

import math

import numpy as np

from dpsynth.data.discover.noise import FILL, FINE_CELLS, MIN_CELLS, ColumnBudget, fine_cells, support
from dpsynth.data.discover.zoom import widen

__all__ = ["DENSE_MASS", "FINER", "WITHIN", "ZERO_RUN", "dense_run", "measure_dense"]

DENSE_MASS = 0.8
"""The dense run is the fewest adjacent cells of the first fine histogram holding this share of its noisy rows
(clipped at 0).  car_exports: 0.7 gives the run [0.47, 1.2) and the same bins within 0.01; at 0.9 the run
reaches into the trade values, too wide for equal cells (no finer histogram, as before)."""

FINER = 4.0
"""The finer cells must be at least FINER times narrower than the dense run's narrowest cell: otherwise the
first histogram's cells are fine enough there and the rest of the budget measures them again (to average)."""


WITHIN = 8
"""A column on linear cells whose support the first fine histogram would zoom onto (:mod:`~dpsynth.data.discover.zoom`)
measures its dense run finer instead when the run spans at most 1/WITHIN of the support's cells: a support
stretched by a tail (retirement_401k's ``nettfa`` on seed 4: [-100, 3000], cells of 50, 80 % of the rows in [-20,
50)) would be zoomed onto cells as coarse as the first's, and its edges were [-100, -50, 0, 0, 50, 100, 3000]."""

ZERO_RUN = 0.5
"""A column on linear fine cells (not skewed) has a dense run only when its exact zeros (the profile's noisy
count) hold under ZERO_RUN of the run's noisy rows: a run that is mostly a zero spike is the point mass's
(points.py), and finer cells would not resolve it."""


def dense_run(noisy: np.ndarray, grid: np.ndarray, rest: ColumnBudget, integral: bool,
              log_from: float | None, zeros: tuple | None = None, *,
              within: tuple[int, int] | None = None) -> tuple[int, int, np.ndarray] | None:
    """(first cell, last cell, finer edges over them) of the dense run of a noisy fine histogram ``noisy`` over
    ``grid`` (see the module docstring), or None when there is none worth measuring finer with ``rest``.  The run
    must lie in the logarithmic cells (from ``log_from``): the one cell below them holds a column's zeros, whose
    point mass has its own measurement (points.py) and which finer cells would not resolve (adult's
    ``capital-gain`` and kddcup99's ``dst_bytes``, mostly 0, had runs [0, 3000) and [0, 100)).  On linear cells
    (``log_from`` None) the column must not be ``integral`` and a run holding 0 must not be mostly its ``zeros``
    (the profile's noisy count of exact zeros: :data:`ZERO_RUN`).  Post-processing of noisy counts and public
    constants."""
    mass = np.clip(np.asarray(noisy, dtype=float), 0, None)
    cells = mass.size
    total = float(mass.sum())
    if cells < 4 or total <= 0:
        return None
    csum = np.concatenate([[0.0], np.cumsum(mass)])
    ends = np.searchsorted(csum, csum[:-1] + DENSE_MASS * total, side="left")  # run [i, ends[i]) holds the share
    ok = ends <= cells
    if not ok.any():
        return None
    starts = np.flatnonzero(ok)
    best = int(starts[np.argmin(ends[ok] - starts)])
    a, b = best, int(ends[best]) - 1
    lo, hi = float(grid[a]), float(grid[b + 1])
    run_rows = float(csum[b + 1] - csum[a])
    zero = 0.0 if zeros is None else float(zeros[0])
    if (b - a + 1) * 4 > cells or (grid[a] < log_from if log_from is not None else
                                   (integral or lo <= 0 < hi and zero >= ZERO_RUN * run_rows)):
        return None
    if within is not None and (log_from is not None or (b - a + 1) * WITHIN > within[1] - within[0] + 1):
        return None
    want = int(np.clip(run_rows / (FILL * rest.block_cut(1, FINE_CELLS)), MIN_CELLS, FINE_CELLS))
    finer = _equal(lo, hi, want, integral)
    if finer.size < 3 or float(np.diff(finer).max()) * FINER > float(np.diff(grid[a:b + 2]).min()):
        return None
    return a, b, finer


def _equal(lo: float, hi: float, cells: int, integral: bool) -> np.ndarray:
    """About ``cells`` cells of a round width over [lo, hi] (integer edges for an integral column), cut at lo and hi."""
    edges = fine_cells(lo, hi, integral=False, cells=cells)
    if integral:
        width = max(1.0, math.ceil(float(edges[1] - edges[0])))
        edges = np.arange(math.floor(lo / width), math.ceil(hi / width) + 1) * width
    return np.unique(np.concatenate([[lo, hi], edges[(edges > lo) & (edges < hi)]]))


def measure_dense(disc, first: ColumnBudget, rest: ColumnBudget, grid: np.ndarray, first_noisy: np.ndarray,
                  run: tuple[int, int, np.ndarray]):
    """The finer histogram over the dense ``run`` (from :func:`dense_run`), charged to ``rest``; ``disc`` is the
    column's :class:`~dpsynth.data.discover.column.ColumnDiscovery`, ``first_noisy`` the first fine histogram
    over ``grid`` (noise of ``first``).  The bounds are that histogram's support, widened to the profile's
    (:func:`~dpsynth.data.discover.zoom.widen`): the finer cells hold fewer rows each, and a zoom whose run holds
    empty cells (adult's ``capital-gain``: 119 cells of 25 over [0, 3000), its rows at 0) put the tail past
    more rings of noise than :func:`~dpsynth.data.discover.noise.support` reaches.  Returns (lo, hi, (cell
    edges, noisy counts clipped at 0) inside the bounds): ``grid``'s cells outside the run, the finer ones inside."""
    a, b, finer = run
    measured = np.concatenate([[grid[0]], finer, [grid[-1]]])  # outer cells: the rows outside the run
    noisy = rest.histogram(disc.profile.cell_counts(measured), f"rows per finer cell of the dense run ({finer.size - 1} "
                           "public cells and 2 outer ones)")
    disc.learned.append(f"{finer.size - 1} cells of {finer[2] - finer[1]:g} over the dense run [{finer[0]:g}, "
                        f"{finer[-1]:g}) (holding {DENSE_MASS:.0%} of the first fine histogram's noisy rows)")
    edges = np.concatenate([grid[:a], finer, grid[b + 2:]])
    counts = np.concatenate([first_noisy[:a], noisy[1:-1], first_noisy[b + 1:]]).astype(float)
    disc._cells(edges, counts, max(first.sd, rest.sd))  # (the decoder's within-bin weights; reused counts)
    found = widen(support(first_noisy, first), grid, disc.core, first_noisy, first, disc.margins, disc.learned)
    if found is None:
        lo, hi = float(grid[0]), float(grid[-1])
        disc.learned.append(f"bounds [{lo:g}, {hi:g}] (no fine cell stood out of the noise)")
        return lo, hi, None
    lo, hi = float(grid[found[0]]), float(grid[found[1] + 1])
    inside = (edges[:-1] >= lo) & (edges[1:] <= hi)
    if not inside.any():
        return lo, hi, None
    i, j = int(np.argmax(inside)), int(inside.size - np.argmax(inside[::-1]))  # cells [i, j) inside the bounds
    disc.learned.append(f"bounds [{lo:g}, {hi:g}] (noisy fine histogram)")
    return lo, hi, (edges[i:j + 1], np.clip(counts[i:j], 0, None))
