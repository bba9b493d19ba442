"""The coarse range of a numeric column read off its profile's logarithmic buckets (post-processing only).

The profile (:meth:`~dpsynth.data.discover.column.ColumnDiscovery._profile`) measures one noisy count per public
logarithmic bucket (edges 0 and ±{1, 1.5, 2, 3, 5, 7}·10^k).  Its support
(:func:`~dpsynth.data.discover.noise.support`) finds the buckets whose own noisy count stands out of the noise.  On a small table (a few thousand rows) with a
thin per-column budget that misses whole sides of the data: a signed column (a pitch's break in inches, −9 … 11)
spreads its rows over a dozen buckets on each side of 0, none of which passes the cut alone, and its rows near
0 fill dozens of tiny buckets (−0.1 … 0.1) that no ring of the support crosses; the support then keeps one side
of 0 only (kershaw's ``HDev`` got bounds [−5, 0]).

:func:`coarse_support` therefore also reads the same noisy buckets summed per decade and sign ([1, 10),
[10, 100), [−10, −1), …: six buckets each), and two adjacent decades summed: a decade holding many rows
passes the cut of a sum of its buckets' noises even when no single bucket does.  The coarse support is the
union of the buckets' support and the heaviest bucket of each decade that passes, so a signed column keeps
both sides; the margins and the fine histogram find the extent.

Two more reads of the same noisy buckets, for data the decades' cut (a family of ~200 tests) misses on a small
table (issue 27):

* **The mirror side** (:func:`mirror`): when the support holds one sign only, the buckets of the other sign at
  the same decades are tested as a few blocks (each decade, and all of them together) under the cut of that
  small family: kershaw's ``HPos`` (852 positive rows in [1, 10) against a decades' cut of ~860) keeps its
  positive side, while a column of one sign passes an empty mirror with probability at most BUCKET_MISS.
* **Reaching 0** (:func:`reach_zero`): a coarse range whose support (before the margins) holds one sign and
  ends within :data:`ZERO_REACH` of its width from 0 starts at 0: the fine histogram's cells widen by at most that share
  and its support (rings of doubling width) finds a thin tail toward 0 that no decade passed (course numbers
  1–99 below a range read as [100, 700)); a narrow range far from 0 (a year, [2000, 3000)) is left alone, and
  so is an integral range within 2·bins of 0 (a count of years from 1.5 up).
* **The margins** (:func:`margins`): the buckets the margins add beside the support, with their noisy counts.  A
  margin bucket is not data at the support's cut, but on a small table a tail of a tenth of the rows stands only
  2-3 sd out of it (resume's years of experience, 14-26: [15, 20) at 2.8 sd, [20, 30) at 1.9 sd; its years of
  college, 2 at 3.1 sd beside [3, 5)): :func:`~dpsynth.data.discover.zoom.widen` lets the fine support reach a
  margin bucket whose rows the profile and the fine cells inside it show together.
"""

from __future__ import annotations

import math

import numpy as np

from dpsynth.data.discover.noise import ColumnBudget, support

__all__ = ["GAP", "ISOLATED_SHARE", "RUNS", "ZERO_REACH", "ZERO_SD", "around", "coarse_support", "decades", "fractional", "isolated",
           "margins", "mirror", "reach_zero", "with_zeros"]

ZERO_REACH = 0.25
"""A coarse support of one sign whose end nearer 0 lies within this share of its width from 0 is widened to 0
(:func:`reach_zero`)."""

ZERO_SD = 2.0
"""An integral range of few integers ending within 1 of 0 reaches 0 when the noisy count of exact zeros stands
this many sds (:func:`reach_zero`).  Seen tables, seeds 2 and 3 (~2,200 integral columns): without the test, 11
columns with no 0 gained a 0 bin (first fine cells of width 2 lump a 0 with the 1s: city_weather's ``month``,
bounds [0, 13]) beside 19 with zeros; with it, 1 and 13; wide ranges reached 0 from 1 only reshuffled their
noise (star's ``experience2``, [1, 100): its first fine cell [0, 3) held 0 already), so few integers only: 8
columns with zeros gained a 0 bin (with the zeros' own cut), none without, none lost one."""

GAP = 3
"""Decades of magnitude between a kept decade run and the nearest run joined to the data beyond which the run is
isolated (:func:`isolated`)."""

ISOLATED_SHARE = 0.05
"""An isolated kept run holding under this share of the noisy rows is dropped (:func:`isolated`)."""

RUNS = 2
"""Windows of 1 to RUNS adjacent decades are tested (a signed column's rows near 0 span two decades, [0.1, 10))."""


def decades(ext: np.ndarray) -> np.ndarray:
    """Start indices of the runs of buckets (bucket i is [ext[i], ext[i + 1])) that share a sign and a decade of
    magnitude (the magnitude of a bucket is its edge nearer 0; the bucket at 0 is a run of its own)."""
    lower, upper = ext[:-1], ext[1:]
    mag = np.where(lower > 0, lower, np.where(upper < 0, -upper, 0.0))
    with np.errstate(divide="ignore"):
        dec = np.where(mag > 0, np.floor(np.log10(np.where(mag > 0, mag, 1.0)) + 1e-9), -math.inf)
    sign = np.where(lower > 0, 1, np.where(upper < 0, -1, 0))
    change = np.concatenate([[True], (dec[1:] != dec[:-1]) | (sign[1:] != sign[:-1])])
    return np.flatnonzero(change)


def coarse_support(per_bucket: np.ndarray, ext: np.ndarray, budget: ColumnBudget) -> tuple[int, int] | None:
    """First and last bucket of the data's coarse support: the union of the buckets' own support
    (:func:`~dpsynth.data.discover.noise.support`, with ``budget``'s cuts for one bucket's noise) and the
    windows of 1 to :data:`RUNS` adjacent decades (:func:`decades`) whose noisy sum passes the cut of a sum of that
    many noises (all windows together miss an empty one with probability at most BUCKET_MISS): of a window that
    passes, the decade with the largest noisy sum (the other may be empty).  None when neither finds anything."""
    found = support(per_bucket, budget, tight=True)  # (buckets are logarithmic: no overshoot by a window)
    starts = decades(ext)
    ends = np.append(starts[1:], per_bucket.size)  # (exclusive)
    csum = np.concatenate([[0], np.cumsum(per_bucket)])
    runs = csum[ends] - csum[starts]
    kept = np.zeros(starts.size, dtype=bool)
    for k in range(1, RUNS + 1):  # windows of k adjacent runs (≤ RUNS tests, each over fewer blocks than runs)
        lo, hi = starts[: starts.size - k + 1], ends[k - 1:]
        sizes, at = np.unique(hi - lo, return_inverse=True)  # (a few distinct run lengths: 1, 6, 7, 12)
        cut = np.array([budget.block_cut(int(w), RUNS * starts.size) for w in sizes])[at]
        hit = np.flatnonzero(csum[hi] - csum[lo] >= cut)
        # a window passing: its run with the largest noisy sum holds data (the others may be empty)
        best = hit + np.argmax(np.stack([runs[hit + j] for j in range(k)]), axis=0) if hit.size else hit
        kept[best] = True
    if found is not None:
        kept &= ~isolated(runs, starts, ends, ext, kept, found)
    if not kept.any():
        if found is None:
            return None
        other = mirror(per_bucket, ext, *found, budget)
        return found if other is None else (min(found[0], other), max(found[1], other))
    # each kept decade's heaviest bucket (its data's place; the margins and the fine histogram find the extent,
    # and a decimal year keeps its one bucket [2000, 3000) rather than the decade [1000, 10000))
    run = np.repeat(np.arange(starts.size), ends - starts)
    order = np.lexsort((-per_bucket, run))
    heavy = order[np.searchsorted(run[order], np.flatnonzero(kept))]
    first, last = int(heavy.min()), int(heavy.max())
    if found is not None:
        first, last = min(first, found[0]), max(last, found[1])
    other = mirror(per_bucket, ext, first, last, budget)
    return (first, last) if other is None else (min(first, other), max(last, other))


def fractional(kept: np.ndarray, fracs: np.ndarray, ext: np.ndarray, budget: ColumnBudget) -> float:
    """The profile's noisy count of fractional numbers: the larger of its fractional cells past the cut (``kept``)
    and its fractional cells ``fracs`` counted per decade run (:func:`decades`): the noisy sum of the runs whose
    sum passes the cut of a sum of that many noises (``budget``'s, one noise per cell; all runs together pass an
    empty one with probability at most BUCKET_MISS).  Post-processing of the noisy profile.

    Issue 27, session 19: a share whose rows spread thin over many buckets, none past the profile's cut, read as
    integral (the fractional cells past the cut summed to 0): belgian_budgets' ``stobacco`` (62% exact zeros, the
    rest in [0.0002, 0.19]: 661 rows in [0.01, 0.1), each of its 6 buckets' noisy count under the cut of 166 at a
    cell sd of 36, their sum well over the block's cut of ~350) became {0, 1} (1-way TV 0.160 against 0.031 by
    hand)."""
    starts = decades(ext)
    ends = np.append(starts[1:], fracs.size)
    csum = np.concatenate([[0.0], np.cumsum(fracs)])
    sums = csum[ends] - csum[starts]
    sizes, at = np.unique(ends - starts, return_inverse=True)  # (a few distinct run lengths)
    cut = np.array([budget.block_cut(int(w), starts.size) for w in sizes])[at]
    return max(float(kept.sum()), float(sums[sums >= cut].sum()))


def isolated(runs: np.ndarray, starts: np.ndarray, ends: np.ndarray, ext: np.ndarray, kept: np.ndarray,
             found: tuple[int, int]) -> np.ndarray:
    """The kept decade runs (``kept``, over the runs ``starts`` … ``ends`` with noisy sums ``runs``) that no chain
    of kept runs, each within :data:`GAP` decades of magnitude of the next, joins to the buckets' own support
    ``found``, and whose noisy sum is under :data:`ISOLATED_SHARE` of the noisy rows of the support and the kept
    runs together: a window that passed by chance far from the data (post-processing of the noisy buckets).

    Issue 27, session 15: nafld_cohort's ``futime`` (follow-up days, 7 to 7,268) had the outer bucket
    [−1e15, −1e9) pass as a window of its own on seed 2 (noisy 279 at a bucket sd of 66, 4.25 sds); the coarse
    range became [−1e15, 15000), its fine cells 7.8e12 wide held every row in one, and the column got one bin
    (1-way TV 1.0, the table's 2-way L1 0.615 against 0.063 on seed 3).  A far cluster of real rows keeps its
    decades when it holds a share of the rows; when it is thin, clamping it into the body's end bin costs less
    than a range whose fine cells cannot resolve the body."""
    lower, upper = ext[starts], ext[ends]
    mag = np.where(lower > 0, lower, np.where(upper <= 0, -upper, 0.0))
    with np.errstate(divide="ignore"):
        dec = np.where(mag > 0, np.floor(np.log10(np.where(mag > 0, mag, 1.0)) + 1e-9), np.nan)
    low = np.nanmin(dec) if np.isfinite(dec).any() else 0.0
    dec = np.where(np.isnan(dec), low - 1.0, dec)  # (the run of 0: below the smallest magnitude)
    run_of = np.searchsorted(starts, np.arange(found[0], found[1] + 1), side="right") - 1
    joined = np.zeros(starts.size, dtype=bool)
    joined[run_of] = True
    while True:  # (a chain: at most as many rounds as runs)
        near = (np.abs(dec[:, None] - dec[joined][None, :]) <= GAP).any(axis=1) & kept & ~joined
        if not near.any():
            break
        joined |= near
    total = float(np.clip(runs[joined | kept], 0.0, None).sum())
    return kept & ~joined & (runs < ISOLATED_SHARE * total)


def mirror(per_bucket: np.ndarray, ext: np.ndarray, first: int, last: int, budget: ColumnBudget) -> int | None:
    """When buckets ``first`` … ``last`` hold one sign only: the outer bucket of the heaviest of the mirrored
    decades (the other sign, magnitudes from the decade of the support's inner edge to that of its outer edge;
    the margins and the fine histogram trim it) when one of them, or their sum, passes the cut of that family
    of sums (post-processing of the noisy buckets; all tests together pass an empty mirror with probability at
    most BUCKET_MISS).  None otherwise."""
    lower, upper = ext[:-1], ext[1:]
    a, b = float(ext[first]), float(ext[last + 1])
    if a < 0.0 < b:
        return None
    inner, outer = (a, b) if a >= 0.0 else (-b, -a)
    inner = 10.0 ** math.floor(math.log10(inner) + 1e-9) if inner > 0.0 else 0.0
    outer = 10.0 ** math.ceil(math.log10(outer) - 1e-9)
    if a >= 0.0:
        side = np.flatnonzero((upper <= -inner) & (lower >= -outer))
    else:
        side = np.flatnonzero((lower >= inner) & (upper <= outer))
    if side.size == 0:
        return None
    starts = decades(ext[side[0]:side[-1] + 2]) + side[0]
    ends = np.append(starts[1:], side[-1] + 1)
    csum = np.concatenate([[0], np.cumsum(per_bucket)])
    sums = csum[ends] - csum[starts]
    tests = starts.size + 1
    passed = sums >= np.array([budget.block_cut(int(w), tests) for w in ends - starts])
    whole = csum[side[-1] + 1] - csum[side[0]] >= budget.block_cut(int(side.size), tests)
    if not passed.any() and not whole:
        return None
    d = int(np.argmax(np.where(passed, sums, -np.inf))) if passed.any() else int(np.argmax(sums))
    return int(ends[d] - 1) if a < 0.0 else int(starts[d])  # (its outer bucket: where in it is not known)


def reach_zero(lo: float, hi: float, core, floor: float = 0.0, zeros: float = 0.0,
               passed: bool = False) -> tuple[float, float]:
    """The coarse range [``lo``, ``hi``) widened to 0 when the buckets' support ``core`` (((first bucket's
    edges), (last bucket's edges)), or None) holds one sign, its end nearer 0 is within :data:`ZERO_REACH` of its
    width from 0 (a year's [1500, 3000) is not) and the range's end nearer 0 is farther from 0 than ``floor``
    (an integral column: 2·bins; the few integers nearer 0 have buckets of their own, and a range widened by
    them may change its fine cells from pairs of integers to single ones, whose noise hides a thin tail).
    An integral range (``floor`` > 0) reaches 0 when the profile's noisy cell of exact zeros ``passed`` its cut
    (the cut of one cell's noise, under the cut of the zero bucket's two cells that the support reads), or when
    its end nearer 0 is within 1 of it, its other end within ``floor`` (few integers, one fine cell each) and that
    cell stands ``zeros`` ≥ :data:`ZERO_SD` sds (one test, not a family's cut: the next integer toward 0 is 0
    itself, one more fine cell; star's ``experience2``, [1, 100), already had 0 in its first fine cell [0, 3)).  Issue 27, session 19:
    belgian_budgets' ``age`` (codes 0-4, 212 zeros: noisy 221 against a cell's cut of 166 and the pair's 220)
    had its support start at [1, 1.5), its margins at [0.5, 0.7) and bounds [1, 4] (1-way TV 0.082 against
    0.012 by hand); kershaw's ``Outs`` (0-3, 10% zeros), bounds [1, 3] on seed 2.  Post-processing of the
    profile's output."""
    near = passed or zeros >= ZERO_SD  # (from within 1 only for few integers: wider cells from 1 hold 0 already)
    if floor > 0 and near and 0.0 < lo and (passed or (lo <= 1.0 and hi <= floor)):
        lo = 0.0
    if floor > 0 and near and hi < 0.0 and (passed or (hi >= -1.0 and lo >= -floor)):
        hi = 0.0
    if core is None:
        return lo, hi
    a, b = core[0][0], core[-1][1]
    if floor < lo and a <= ZERO_REACH * (b - a):
        return 0.0, hi
    if -floor > hi and b >= -ZERO_REACH * (b - a):
        return lo, 0.0
    return lo, hi


def with_zeros(core, lo: float, hi: float, zero_top: float, passed: bool):
    """The profile's support ``core`` joined by the zero bucket [0, ``zero_top``) when the coarse range reaches 0
    past it and the zeros' own noisy cell ``passed`` its cut (:func:`reach_zero`), so that the fine support may
    reach the zeros' cell too (:func:`~dpsynth.data.discover.zoom.widen`).  Issue 27, session 19: kershaw's
    ``Outs`` (0-3, noisy 348 zeros against a cut of 271), whose skewed fine cells put 0 apart, reached 0 in its
    coarse range and still got bounds [1, 4].  Post-processing of the profile's output."""
    if core is None or not passed:
        return core
    if lo == 0.0 and core[0][0] > 0.0:
        return ((0.0, zero_top), core[-1])
    if hi == 0.0 and core[-1][1] < 0.0:
        return (core[0], (-zero_top, 0.0))
    return core


def around(found: tuple[int, int], ext: np.ndarray, width: int, integral: bool) -> np.ndarray:
    """The first and last bucket of the coarse range: ``width`` buckets beside the support ``found`` on each side
    (clipped to the grid); for an integral column, an end bucket holding no integer moves one bucket out when that
    one holds an integer: [1.5, 2) to [1, 1.5) (the only such pair of public edges, with [-1.5, -1) to
    [-2, -1.5); the buckets between -1 and 1 lead to 0, which :func:`reach_zero` handles).  Issue 27, schooling's
    ``famed`` (classes 1-9, its 185 1s under the profile's cut): the support began at [3, 5) and the margin
    buckets [2, 3) and [1.5, 2) gave the coarse range [1.5, 20), in which no fine cell could hold a 1 (its cheap
    few-integers stage still misses them: 1 of 6 seeds kept them before and after).  Measured (zero-config
    discovery, seeds 0-5, share of rows outside the discovered range): resume's ``years_college`` kept its 2s
    (5.6%) on 6 seeds (before: 4); every other seen small table's schema unchanged but for resume's
    ``years_experience`` (rows outside its range 4.2% → 3.1% on average)."""
    lo, hi = np.clip(np.array([int(found[0]) - width, int(found[1]) + width]), 0, ext.size - 2)
    if integral:
        holds = np.ceil(ext[:-1]) < ext[1:]  # bucket i, [ext[i], ext[i + 1]), holds an integer
        lo -= int(lo > 0 and not holds[lo] and holds[lo - 1])
        hi += int(hi < ext.size - 2 and not holds[hi] and holds[hi + 1])
    return np.array([lo, hi])


def margins(per_bucket: np.ndarray, ext: np.ndarray, found: tuple[int, int], shown, sd: float, *, ends: bool = False):
    """The margin buckets of the coarse range: buckets ``shown[0]`` … ``shown[1]`` outside the support ``found``
    (first and last bucket), as (lower edge, upper edge, noisy count, ``sd``), ``sd`` the noise's of one bucket
    (post-processing of the profile's noisy buckets ``per_bucket``; bucket i is [ext[i], ext[i + 1])).  With
    ``ends``, the support's first and last bucket too (:func:`~dpsynth.data.discover.values.seen_integers` reads
    the last one's rows beyond the fine bounds); the margin tests (:func:`~dpsynth.data.discover.zoom.widen`,
    ``values._reached``) read only the buckets beyond the support's edges, and pass over them."""
    inner = sorted({int(found[0]), int(found[1])}) if ends else []
    idx = np.r_[int(shown[0]):int(found[0]), inner, int(found[1]) + 1:int(shown[1]) + 1].astype(int)
    return tuple((float(ext[i]), float(ext[i + 1]), float(per_bucket[i]), float(sd)) for i in idx)
