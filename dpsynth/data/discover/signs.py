"""The other sign of a column whose coarse range ends at 0, read off a few more cells of its first fine histogram
(issue 27, session 17).

The coarse range comes from the profile's logarithmic buckets (:mod:`~dpsynth.data.discover.coarse`), each with
two noises.  On a small table the rows of one sign can be a sizable share and still pass none of its tests:
forbes_companies' ``profits`` (1,995 rows, 280 of them negative from −0.007 to −25.8: 62, 161, 50 and 7 per
decade of magnitude from 0.01 up) has a profile bucket sd of 48, so its negative decades' sums (six buckets, sd
118) stand 0.5, 1.4, 0.4 and 0.1 sd, under their cut of 495 (4.2 sd); all the negative buckets down to −0.01
together (24 buckets, sd 236) hold 280 rows, 1.2 sd: no test over those buckets, however grouped, finds them.
The coarse range was [0, 1) or [0, 3), every negative row clamped to 0 (1-way TV 0.22 against the hand schema's
0.10, which the neutral bins judge mostly on the real 10% quantile at −0.13).

The first fine histogram has some ten times the per-cell precision (σ ≈ 29 there), and its end cells are open:
its cell at 0 already held every negative row.  :func:`measured` splits them off into a few more cells of the same
histogram (each row still in one cell: no more budget, the same sensitivity) when the coarse range ends at 0: the
other side's decades of magnitude, mirrored from the first grid's (:func:`decades`: from the decade of its
smallest nonzero edge to that of its largest, and one open cell beyond).  :func:`other_side` reads them: when
their noisy sum stands :data:`OTHER_SD` sds and holds :data:`OTHER_SHARE` of the noisy rows, every later histogram
of the column leaves the rows past 0 out (:class:`OneSign`: its end cell at 0 no longer holds them, so the zoom,
the evidence and the quantile edges see the measured side as it is), and :func:`joined` adds the other side's
decades to the bounds and the quantile weights with their noisy counts (clipped at 0): the bound is the outer edge
of the outermost decade standing :data:`DECADE_SD` sds (the open cell: one decade further), the rows decoded
evenly inside each decade's bins.  Everything read is a noisy count and public edges.

Measured (session 17, zero-config, seeds 2,3 unless said): of the 112 seen tables' columns, the other side found
on forbes_companies' ``profits`` (seeds 2-5 of a release) and kershaw's ``VDev`` (seed 3; 22% of its rows below
0, which the profile's mirror test missed), on no column of one sign (at OTHER_SD = 3, college_distance's
``tuition``, 0.26-1.40, passed on noise alone at 3.03 sds).  2-way L1: forbes_companies seeds 2-5 0.840 / 0.891 /
0.848 / 0.883 → 0.830 / 0.853 / 0.824 / 0.843 (x0.968; ``profits``' 1-way TV 0.218 / 0.221 / 0.156 / 0.222 →
0.173 / 0.152 / 0.052 / 0.185, the hand schema's 0.10: what is left is its top tenth, 1.1 to 21, clamped at 1 or
1.5), kershaw seeds 2-5 0.276 / 0.329 / 0.307 / 0.244 → 0.276 / 0.297 / 0.264 / 0.244 (x0.927).  The extra
cells change the noise draws of every first fine histogram whose range ends at 0 (75 of the 112 tables' schemas
moved, a reshuffle): all 75, seeds 2,3, x0.997 (11 tables better than x0.97, 12 worse than x1.03: the worst
wa_churn x1.071, its seeds 4,5 x1.02; wilms_tumor x1.055, seeds 4,5 x0.94; charity_mail x1.044, seeds 2-9
x1.06; the best car_exports x0.876, nlswork x0.878), the 73 where it finds no other side x0.998.
"""

from __future__ import annotations

import math

import numpy as np

from dpsynth.data.discover.noise import ColumnBudget
from dpsynth.data.discover.tables import ColumnCounts

__all__ = ["DECADE_SD", "OTHER_SD", "OTHER_SHARE", "OneSign", "decades", "joined", "measured", "other_side"]

OTHER_SHARE, OTHER_SD = 0.05, 3.5
"""The other side's decades (noisy sum) must hold OTHER_SHARE of the column's noisy non-null rows and stand OTHER_SD
sds of their sum's noise (one test a column: a column of one sign passes with probability 2·10⁻⁴)."""

DECADE_SD = 2.0
"""Inside an other side that passed, its outermost decade standing this many sds gives the bound."""


def _side(lo: float, hi: float) -> int:
    """−1: the range starts at 0 (the other side is below), +1: it ends at 0, 0: neither."""
    return -1 if lo == 0.0 < hi else (1 if hi == 0.0 > lo else 0)


def decades(grid: np.ndarray, side: int) -> np.ndarray:
    """The other side's public cell edges as magnitudes from 0 outward (side −1: the cells [−m[j+1], −m[j]) and
    (−∞, −m[-1])): the first the grid's own end there (0, or half a unit cell), then the powers of ten from the
    first at or above the grid's smallest nonzero magnitude (its first cell's width) to the first at or above its
    largest."""
    near = float(-grid[0] if side < 0 else grid[-1])  # (0, or 0.5 for unit cells: the cell of 0 stays in the grid)
    mags = np.abs(grid[grid != 0.0])
    k0 = math.ceil(math.log10(float(mags.min())) - 1e-9)  # (the grid's first cell's mirror: one decade cell)
    k1 = max(k0 + 1, math.ceil(math.log10(float(mags.max())) - 1e-9))
    pts = 10.0 ** np.arange(k0, k1 + 1)
    return np.concatenate([[near], pts[pts > near]])


def measured(disc, budget: ColumnBudget, grid: np.ndarray, lo: float, hi: float, what: str):
    """The first fine histogram's noisy counts over ``grid`` and, when the coarse range [``lo``, ``hi``) ends at 0,
    the noisy counts of the rows past the grid's end there per decade (:func:`decades`; more cells of the same
    histogram, measured after the grid's), else None."""
    side = _side(lo, hi) if disc.hint.lower is None else 0  # (hinted bounds are kept)
    if side == 0:
        return budget.histogram(disc.profile.cell_counts(grid), what), None
    mags = decades(grid, side)
    k = mags.size  # (the other side's cells, the last open)
    if side < 0:  # cells (−∞, −m[-1]), …, [−m[1], grid[0]) split off the grid's first cell
        counts = disc.profile.cell_counts(np.concatenate([[-10.0 * mags[-1]], -mags[::-1], grid[1:]]))
        counts = np.concatenate([counts[k:], counts[:k][::-1]])  # (the grid's cells first, then outward)
    else:  # cells (grid[-1], m[1]), …, [m[-1], ∞) split off the last cell (a row at grid[-1] stays in it)
        counts = disc.profile.cell_counts(np.concatenate([grid[:-1], [np.nextafter(grid[-1], math.inf)], mags[1:],
                                                          [10.0 * mags[-1]]]))
    noisy = budget.histogram(counts, f"{what}, and the rows past 0 per decade ({k} cells)")
    return noisy[:-k], (side, float(grid[0] if side < 0 else grid[-1]), mags, noisy[-k:], budget.sd)


def other_side(disc, other) -> None:
    """Whether the rows past 0 (``other``, from :func:`measured`) are a sizable side (module docstring): then the
    column's later histograms leave them out (:class:`OneSign`) and ``disc.other`` keeps them for :func:`joined`."""
    disc.other = None
    if other is None or disc.non_null is None:
        return
    side, at, _, noisy, sd = other
    total = float(np.sum(noisy))
    if total < max(OTHER_SD * sd * math.sqrt(noisy.size), OTHER_SHARE * float(disc.non_null)):
        return
    disc.other = other
    disc.profile = OneSign(disc.profile, side, at)
    disc.learned.append(f"rows past 0: noisy {total:.0f} in {noisy.size} decades of the first fine histogram")


def joined(disc, lo: float, hi: float, weights):
    """(lo, hi, weights) with the other side's decades added (module docstring); unchanged without one."""
    other = getattr(disc, "other", None)
    if other is None:
        return lo, hi, weights
    side, _, mags, noisy, sd = other
    stands = np.flatnonzero(noisy >= DECADE_SD * sd)
    last = int(stands[-1]) if stands.size else int(np.argmax(noisy))  # (the sum passed: some decade holds rows)
    mags = np.append(mags, 10.0 * mags[-1])[:last + 2]  # (the open cell: one decade further)
    mass = np.clip(noisy[:last + 1], 0.0, None).astype(float)
    if side < 0:
        edges, mass, lo = -mags[::-1], mass[::-1], min(lo, float(-mags[-1]))
    else:
        edges, hi = mags, max(hi, float(mags[-1]))
    if weights is not None:  # (a gap between the measured cells and 0: a cell of no mass)
        cells, w = np.asarray(weights[0], dtype=float), np.asarray(weights[1], dtype=float)
        if side < 0 and cells[0] >= edges[-1]:
            gap = int(cells[0] > edges[-1])
            weights = np.concatenate([edges, cells[1:] if not gap else cells]), np.concatenate([mass, [0.0] * gap, w])
        elif side > 0 and cells[-1] <= edges[0]:
            gap = int(cells[-1] < edges[0])
            weights = np.concatenate([cells if gap else cells[:-1], edges]), np.concatenate([w, [0.0] * gap, mass])
    disc.learned.append(f"bounds [{lo:g}, {hi:g}] with the rows past 0 (noisy decades)")
    return lo, hi, weights


class OneSign:
    """A column's counts without its rows past ``at`` (the first grid's end at 0; ``side`` −1: the rows below it)
    in every histogram whose cells end there or on its side of it: each row still in at most one cell (the same
    sensitivity)."""

    def __init__(self, counts: ColumnCounts, side: int, at: float):
        self.counts, self.side, self.at = counts, side, at

    def cell_counts(self, edges) -> np.ndarray:
        edges, at = np.asarray(edges, dtype=float), self.at
        if self.side < 0 and edges[0] >= at:  # cells (−∞, at) (left out), [at, e1) (the first cell's other rows), …
            return self.counts.cell_counts(np.concatenate([[at - 1.0, at], edges[1:]]))[1:]
        if self.side > 0 and edges[-1] <= at:  # …, [e[G-1], at] (the last cell's other rows), (at, ∞) (left out)
            return self.counts.cell_counts(np.concatenate([edges[:-1], [np.nextafter(at, math.inf), at + 1.0]]))[:-1]
        return self.counts.cell_counts(edges)

    def profile_counts(self, edges) -> np.ndarray:
        return self.counts.profile_counts(edges)

    def point_counts(self, values) -> np.ndarray:
        return self.counts.point_counts(values)

    def value_counts(self) -> tuple:
        return self.counts.value_counts()

    def integer_counts(self) -> tuple[np.ndarray, np.ndarray]:
        return self.counts.integer_counts()

    def number_counts(self, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
        return self.counts.number_counts(lo, hi)

    def step_counts(self, steps) -> np.ndarray:
        return self.counts.step_counts(steps)

    def spelling_counts(self) -> np.ndarray:
        return self.counts.spelling_counts()

    def as_instants(self) -> ColumnCounts:
        return self.counts.as_instants()
