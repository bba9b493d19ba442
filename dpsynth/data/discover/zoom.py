"""Narrowing a numeric column's range after its first fine histogram (post-processing, plus charged histograms).

Two things the first fine histogram of :meth:`~dpsynth.data.discover.column.ColumnDiscovery._fine` can get wrong,
and what is done about each:

* **A thin tail hidden by the fine cells' noise** (dollar amounts with most rows near 0 and a long right tail): a
  fine cell holds few rows of the tail, fewer than its noise, so the fine support stops at the 90–97th
  percentile; the profile's logarithmic buckets hold many more rows each and did see the tail.  :func:`widen`
  makes the fine support reach into every profile bucket that the profile's support found rows in: when the
  fine support ends before the outermost such bucket begins, it is extended to that bucket's outer edge (the
  fine histogram may still trim inside the outermost bucket: that is what it is for).

  A thin tail beside a dense body that neither the profile nor the fine cells show (issue 27, session 12:
  jobless_benefits' ``rr``, 3% of its rows in [0.04, 0.2) and 2.7% in (0.6, 0.69] past bounds [0.2, 0.6], about 20
  rows per fine cell of σ ≈ 35) is clamped into the end bins, and no further test is made for it: measured as not
  worth one.  An oracle no private count can beat (NOT PRIVATE, an experiment only: each release's discovered
  edges given an end bin to the column's true minimum or maximum wherever they clamped over 3% of its rows) moved
  the zero-config 2-way L1 of 14 seen tables by a geometric mean of x0.997 on seeds 2-5 (over 0.5%: x1.009 on
  seeds 2-3): credit x0.94 (``Debt``, 10% past its bound), injury_claims x0.975, wife_hours x1.045 (an extra
  bin's noise), jobless_benefits x0.99.  A tail under a tenth of the rows stays in the judge's end decile when
  clamped, and a count of it at a share of the column's budget would be noisier than the fine cells already are.
  jobless_benefits' gap is elsewhere: ``rr``'s 740 rows in [0.515, 0.525) beside its heap at 0.5 are decoded
  evenly over the fine cell [0.5, 0.55) (1-way TV 0.163 noise-free, as released; cells of 0.01: 0.07): a column
  that is not integral is zoomed when its support spans up to half the fine cells (``ColumnDiscovery._fine``).
* **Narrow data at a large magnitude** (a decimal year 2016.5–2017.7, the latitudes of one city, prices around
  1000): the coarse range is a round bucket such as [1000, 7000), the first fine histogram's support is one
  cell of width 50 and the zoom over it (:func:`zoom`) has cells of 0.5, so the data lies in two or three cells.
  When the first support spans at most :data:`NARROW_CELLS` cells and the profile's support neither holds 0 nor
  spans magnitudes (:func:`spread`: a skewed column's support is narrow because its tail is thin, and a
  tighter zoom would cut the tail), the zoom's budget is halved: the first half
  measures the zoom, and when the zoom's own support again spans at most a quarter of its cells, the second
  half measures a second zoom over that support (whose support gives the bounds) when that support also holds
  :data:`NARROW_MASS` of the column's noisy rows (at a small n a support of a few cells is often the one mode
  that stands out of the noise, not all the data: kershaw's pitch speeds, 65–95 mph, were zoomed onto the
  fastballs' [91, 94]); otherwise the second half
  measures the same zoom again and the two are averaged with inverse-variance weights (under zCDP exactly as
  precise as one measurement with the whole budget).

Everything read here is a mechanism output: the profile's noisy support (:attr:`ColumnDiscovery.core`) and the
noisy histograms; each histogram is charged through :meth:`~dpsynth.data.discover.noise.ColumnBudget.histogram`.
"""

from __future__ import annotations

import math

import numpy as np

from dpsynth.data.discover.noise import DEFAULT_RANGE, ColumnBudget, support

__all__ = ["CONFIRM", "MAGNITUDES", "MARGIN_SD", "NARROW_CELLS", "NARROW_MASS", "OUTER_REACH", "TIED", "narrow", "spread", "to_units",
           "widen", "zoom"]

CONFIRM = 2.0
"""The fine cells between the fine support and a profile bucket it missed must hold this many standard
deviations of their summed noise for the support to reach the bucket (:func:`widen`): a lenient test, since it
only guards against the profile's rare false buckets (the two errors multiply)."""

MAGNITUDES = 10.0
"""A profile support whose outer buckets' magnitudes differ by this factor (or that holds 0) is spread over
magnitudes: the fine support is widened to its outer buckets' edges (:func:`widen`)."""

MARGIN_SD = 2.5
"""The fine support reaches a margin bucket of the coarse range (:func:`~dpsynth.data.discover.coarse.margins`)
when the inverse-variance average of the bucket's profile count and of the fine cells inside it is at least
MARGIN_SD standard deviations of that average (:func:`widen`).  The buckets are tested from the support outwards
and the first that fails ends a side: on a column with no rows beside its support, a side reaches a margin
with probability about 0.006."""

OUTER_REACH = 2.0
"""A widened support reaches at most this many times a profile bucket's edge nearer 0 into it (:func:`_reach`)."""

NARROW_CELLS = 3
"""A first fine support of at most this many cells may hide data much narrower than a cell: its zoom is measured
in two halves, the second maybe over a second, finer zoom (:func:`zoom`)."""

NARROW_MASS = 0.8
"""The first zoom's support is narrow data (zoomed again) only when its noisy rows are at least this share of
the column's noisy non-null rows (:func:`narrow`)."""


TIED = 0.9
"""An integral column's per-integer histogram (:meth:`~dpsynth.data.discover.column.ColumnDiscovery._fine`) shows
tied values only when its support holds this share of the wide cells' noisy rows; else its counts are summed in
blocks (at a small n a per-integer support of the heavy years, 1990–2008, held 88% of planes' years and clamped
2009–2013 to 2008)."""


def narrow(noisy: np.ndarray, inner: tuple[int, int] | None, non_null: float | None) -> bool:
    """Whether the support ``inner`` of a zoom's noisy histogram ``noisy`` holds :data:`NARROW_MASS` of the
    column's noisy non-null rows ``non_null`` (the profile's output; None: not known, taken as narrow): the
    data is narrow rather than thin (post-processing of two noisy histograms)."""
    if inner is None:
        return False
    return non_null is None or float(noisy[inner[0]:inner[1] + 1].sum()) >= NARROW_MASS * non_null


def spread(core) -> bool:
    """Whether the profile's support (((first bucket's edges), (last bucket's edges)), or None) holds 0 or spans
    :data:`MAGNITUDES` (skewed amounts, counts) rather than a narrow range at one magnitude."""
    if core is None:
        return False
    (first_lo, first_hi), (last_lo, last_hi) = core
    return first_lo <= 0.0 <= last_hi or (first_lo > 0.0 and last_lo >= MAGNITUDES * first_lo) or \
        (last_hi < 0.0 and first_hi <= MAGNITUDES * last_hi)


def widen(found: tuple[int, int] | None, grid: np.ndarray, core, noisy: np.ndarray,
          budget: ColumnBudget, margins=(), notes: list | None = None) -> tuple[int, int] | None:
    """The fine support ``found`` (first and last cell of ``grid``, whose noisy counts are ``noisy``, noise of
    ``budget``'s scale) made to reach the profile's support ``core`` (((first bucket's lower, upper edge), (last
    bucket's lower, upper edge)), or None), post-processing of two noisy histograms.  A candidate: when the fine
    support ends at or before the last bucket's lower edge, the cell holding that bucket's upper edge; so too
    when it ends inside the last bucket and the profile's support spans :data:`MAGNITUDES` or holds 0 (skewed
    amounts: a bucket is then about as wide as the tail's cells should be, its upper edge at most 1.7 times its
    lower).  The support is extended to the candidate when the noisy sum of the w fine cells in between is at
    least :data:`CONFIRM` standard deviations of a sum of w noises: a tail spread too thin for any cell or ring
    of :func:`support` to pass, whose place the profile tells, passes as one block, while a bucket the profile
    found by chance (probability at most BUCKET_MISS) and the empty part of a bucket rarely do.  Likewise on
    the lower side.  Then the coarse range's ``margins`` ((lower edge, upper edge, noisy count, its sd) of the
    profile's buckets beside its support), from the support outwards on each side until one fails: the support
    reaches a bucket's outer edge when the inverse-variance average of its noisy count and of the noisy sum of
    the fine cells inside it stands :data:`MARGIN_SD` sds of that average (a tail of a tenth of the rows that
    neither the profile's cut nor the fine cells' passes alone); a bucket with no fine cell inside is skipped.
    On unit cells the upper side reaches the cell of the bucket's upper edge, one integer past the bucket (a tail
    reaching a bucket usually goes on: nmes1988's ``hospital``, 4% at 2, 1.1% at 3, 1% past it, keeps its 3 on
    most seeds by it; ending at the bucket's last integer instead, ``hospital``, ``emergency`` and ``chronic``
    lost their last integer on most of seeds 2-9 and nmes1988's 2-way L1 rose 8% and 10% on seeds 2 and 3
    (issue 27's flags), while a flag reaching [2, 3) by noise, 0.6% of seeds, is given an empty 3 beside its 2).
    Each margin reached is told in ``notes`` (the column's learned reasons), when given."""
    if found is None or core is None:
        return found
    (first_lo, first_hi), (last_lo, last_hi) = core
    wide = spread(core)
    a, b = found
    cells = grid.size - 1
    if grid[b + 1] <= last_lo or (wide and grid[b + 1] < last_hi):  # a tail the fine cells' noise may hide
        j = min(cells - 1, int(np.searchsorted(grid, _reach(last_lo, last_hi)[1], side="left")) - 1)
        if j > b and float(noisy[b + 1:j + 1].sum()) >= CONFIRM * budget.sd * math.sqrt(j - b):
            b = j
    if grid[a] >= first_hi or (wide and grid[a] > first_lo):
        i = max(0, int(np.searchsorted(grid, _reach(first_lo, first_hi)[0], side="right")) - 1)
        if i < a and float(noisy[i:a].sum()) >= CONFIRM * budget.sd * math.sqrt(a - i):
            a = i
    for lower, upper, count, sd in sorted(m for m in margins if m[0] >= last_hi):  # (from the support out)
        j = min(cells - 1, int(np.searchsorted(grid, _reach(lower, upper)[1], side="left")) - 1)
        shown = _shown(grid, noisy, budget.sd, lower, upper, count, sd)
        if shown is False or j <= b:
            break
        b = j if shown else b
        _tell(notes, shown, lower, upper)
    for lower, upper, count, sd in sorted((m for m in margins if m[1] <= first_lo), reverse=True):
        i = max(0, int(np.searchsorted(grid, _reach(lower, upper)[0], side="right")) - 1)
        shown = _shown(grid, noisy, budget.sd, lower, upper, count, sd)
        if shown is False or i >= a:
            break
        a = i if shown else a
        _tell(notes, shown, lower, upper)
    return a, b


def _reach(lower: float, upper: float) -> tuple[float, float]:
    """How far a widened support may reach into the profile's bucket [``lower``, ``upper``): all of it, but at most
    :data:`OUTER_REACH` times its edge nearer 0 when it is one of the profile's two outer buckets, beyond
    DEFAULT_RANGE (1e9 to 1e15); every other bucket whole (the public grid's are at most 5/3 wide, the tail
    probe's decades 10: tail.py).

    Issue 27, session 15: txhousing's ``volume`` (dollar volumes to 2.6e9, a few rows in [1e9, 1e15)) was widened
    to 1e15 on seeds 3 and 4, its top bin [8.2e8, 1e15] decoded evenly; where in an outer bucket its rows lie is
    not known, and a real tail far into it shows in the fine cells themselves (gapminder's GDP to 1.2e13)."""
    if lower >= DEFAULT_RANGE[1]:
        return lower, min(upper, OUTER_REACH * lower)
    if upper <= DEFAULT_RANGE[0]:
        return max(lower, OUTER_REACH * upper), upper
    return lower, upper


def _tell(notes: list | None, shown: bool | None, lower: float, upper: float) -> None:
    note = f"the fine support reaches the profile's margin bucket [{lower:g}, {upper:g}) (its noisy count and " \
        "the fine cells inside it, averaged)"
    if notes is not None and shown and note not in notes:
        notes.append(note)


def _shown(grid: np.ndarray, noisy: np.ndarray, cell_sd: float, lower: float, upper: float, count: float,
           sd: float) -> bool | None:
    """Whether a profile bucket [lower, upper) with noisy ``count`` (noise ``sd``) holds rows by :data:`MARGIN_SD`
    sds of the inverse-variance average of that count and the noisy sum of the fine cells of ``grid`` inside it
    (:func:`averaged`); None when no cell is inside.  Post-processing of two histograms."""
    got = averaged(grid, noisy, cell_sd, lower, upper, count, sd)
    return None if got is None else bool(got[0] >= MARGIN_SD * got[1])


def averaged(grid: np.ndarray, noisy: np.ndarray, cell_sd: float, lower: float, upper: float, count: float,
             sd: float) -> tuple[float, float] | None:
    """(the inverse-variance average of a profile bucket [lower, upper)'s noisy ``count``, noise ``sd``, and of
    the noisy sum of the fine cells of ``grid`` inside it (``noisy``, each of noise ``cell_sd``; a unit cell
    [k - 0.5, k + 0.5) is inside when its integer k is), that average's sd); None when no cell is inside (the
    bucket holds no integer, or lies outside the grid).  Post-processing of two histograms."""
    unit = _unit(grid)
    i, j = int(np.searchsorted(grid, lower - unit, side="left")), int(np.searchsorted(grid, upper - unit, "right")) - 1
    if j <= i:
        return None
    w1, w2 = 1.0 / sd**2, 1.0 / (cell_sd**2 * (j - i))  # (cells i … j − 1: some of the bucket's rows, a cautious sum)
    return (w1 * count + w2 * float(noisy[i:j].sum())) / (w1 + w2), 1.0 / math.sqrt(w1 + w2)


def _unit(grid: np.ndarray) -> float:
    """0.5 for unit cells [k - 0.5, k + 0.5) (a bucket's integers are their centres), else 0."""
    return 0.5 if grid.size > 1 and grid[1] - grid[0] == 1.0 and grid[0] % 1 == 0.5 else 0.0


def zoom(disc, budget: ColumnBudget, grid: np.ndarray, found: tuple[int, int], integral: bool,
         cells: int):
    """A second histogram over the first fine histogram's support ``found`` (cells of ``grid``), spending
    ``budget`` (see the module docstring); ``disc`` is the column's
    :class:`~dpsynth.data.discover.column.ColumnDiscovery` (not imported here: column.py imports this module).  Returns (lo, hi, (cell edges, noisy mass clipped at 0))."""
    lo, hi = float(grid[found[0]]), float(grid[found[1] + 1])
    fine = disc._grid(lo, hi, integral, cells)
    wide = (disc.first_grid, *disc.evidence.first)  # (its edges: the zoom made consistent with it, fuse.py)
    disc.coarser = (wide,) if disc.evidence.buckets is None else (disc.evidence.buckets, wide)
    if found[1] - found[0] + 1 > NARROW_CELLS or spread(disc.core):  # (a skewed column's thin tail: one zoom)
        noisy = budget.histogram(disc.profile.cell_counts(fine), f"rows per zoomed fine cell ({fine.size - 1} "
                                 "public cells)")
        disc.learned.append(f"zoomed in on [{lo:g}, {hi:g}]: the bounds (the coarser histogram has more rows per "
                            "cell to find thin tails with); the zoomed histogram gives the edges")
        disc._cells(fine, noisy, budget.sd)
        return lo, hi, (fine, np.clip(noisy, 0, None).astype(float))
    first, second = budget.split(0.5)
    noisy = first.histogram(disc.profile.cell_counts(fine), f"rows per zoomed fine cell ({fine.size - 1} public "
                            "cells)")
    inner = support(noisy, first)
    unit = integral and float(fine[1] - fine[0]) <= 1.0  # one cell per integer: nothing finer to measure
    if inner is not None and not unit and (inner[1] - inner[0] + 1) * 4 <= fine.size - 1 and \
            narrow(noisy, inner, disc.non_null):
        lo, hi = float(fine[inner[0]]), float(fine[inner[1] + 1])
        finer = disc._grid(lo, hi, integral, cells)
        noisy = second.histogram(disc.profile.cell_counts(finer), f"rows per cell of a second zoom "
                                 f"({finer.size - 1} public cells)")
        disc.learned.append(f"zoomed in twice, on [{lo:g}, {hi:g}] (narrow data): the first zoom's support gives "
                            "the bounds, the second zoom the edges")
        disc._cells(finer, noisy, second.sd)
        return lo, hi, (finer, np.clip(noisy, 0, None).astype(float))
    again = second.histogram(disc.profile.cell_counts(fine), f"rows per zoomed fine cell, again ({fine.size - 1} "
                             "public cells)")
    w1, w2 = 1.0 / first.scale**2, 1.0 / second.scale**2
    mean = (w1 * noisy + w2 * again) / (w1 + w2)
    scale = 1.0 / math.sqrt(w1 + w2)
    disc.learned.append(f"zoomed in on [{lo:g}, {hi:g}] (measured in two halves, averaged): the bounds (the "
                        "coarser histogram has more rows per cell to find thin tails with); the zoom gives the edges")
    disc._cells(fine, mean, scale if budget.zcdp else math.sqrt(2.0) * scale)
    return lo, hi, (fine, np.clip(mean, 0, None).astype(float))


def to_units(found: tuple[int, int], grid: np.ndarray, integral: bool, most: float) -> bool:
    """Whether an integral column's first fine histogram (equal cells of ``grid`` wider than one integer, support
    ``found``) is zoomed although its support spans more than a quarter of the cells: when the zoom has one cell
    per integer of the support and the noisy rows fill them (at most ``most`` integers).  Cells of 2 spread each
    end of a bounded count evenly over its two integers: stackoverflow's ``YearsCodedJob`` (0-20, top-coded at
    20 with 8.5% of the rows, 33 rows at 0 beside 590 at 1) decoded 21 as often as 20 and 0 as often as 1 (issue
    27, 1-way TV 0.105 against 0.05 by hand).  Post-processing of the noisy support and public constants."""
    widths = np.diff(grid)
    if not integral or widths.size == 0 or float(widths[0]) <= 1.0 or np.ptp(widths) > 0:
        return False
    return math.floor(float(grid[found[1] + 1])) - math.ceil(float(grid[found[0]])) + 1 <= most
