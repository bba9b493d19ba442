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

* **A support of a heap's cell alone** (acs_2012's ``hrs_work``, 43% of its rows at 40, on seed 5: the first
  support was the cell [39, 43), the zoom over it gave bounds [39, 41.5] and clamped every other row): a
  support is zoomed only when it holds the rows (:func:`holds`, the first histogram's cells outside it and the
  profile's buckets read together); otherwise the first histogram is measured again and its support, widened,
  gives the bounds.

* **Bounds a coarse cell past the data** (cricketers' birth years 1840-1960, zoomed over the first support
  [1800, 2000] of cells of 50): the zoom's bounds are the first histogram's cell edges, and the decoder spread
  the end bins' rows over the empty years (3.9% of the synthetic rows outside the data).  :func:`trimmed` cuts
  each side to the zoom's cells that hold rows, read with the outer coarse cell's own count (a thin tail that
  count shows is kept).  Measured (zero-config 2-way L1, the 12 seen tables whose schemas it changed of 16
  screened, seeds 2-5): geometric mean x0.985 (x0.986 on seeds 2,3, x0.983 on 4,5); cricketers 0.0901 /
  0.0624 / 0.0981 / 0.0788 → 0.0845 / 0.0546 / 0.0736 / 0.0691, txhousing x0.97 (its decimal year's bounds
  [2000, 2050] → [2000, 2016]), doctor_visits_aus x0.965; worse nlswork x1.04 (``ln_wage``'s bound 0.3 → 0.4,
  0.2% of its rows; its own 1-way TV fell, 0.015 → 0.008 on seed 3, the other columns' rose: the model's choice
  moved; x0.987 on seeds 6-9), gapminder x1.015, school_spending x1.01.  It changes the schemas of 57 of the 98
  seen tables (seeds 2,3); over 25 of them, seeds 2-5, x0.988 (13 more: cracker_choice x0.92, kershaw x0.96,
  storms, innovation, college_distance and diamonds x0.98; star x1.05, x1.19 on seeds 2,3 and x0.93 on 4,5;
  botswana_fertility x1.02).  A perfect model (the real rows encoded with the discovered
  edges, decoded uniformly within bins) moves by x0.951 over the 16 tables on seeds 2,3 (cricketers 0.079 →
  0.033 on seed 3).

Everything read here is a mechanism output: the profile's noisy support (:attr:`ColumnDiscovery.core`) and the
noisy histograms; each histogram is charged through :meth:`~dpsynth.data.discover.noise.ColumnBudget.histogram`.
"""

from __future__ import annotations

import math

import numpy as np

from dpsynth.data.discover.noise import DEFAULT_RANGE, ColumnBudget, support

__all__ = [
    "CONFIRM",
    "HELD_SD",
    "HELD_SHARE",
    "MAGNITUDES",
    "MARGIN_SD",
    "NARROW_CELLS",
    "NARROW_MASS",
    "OUTER_REACH",
    "TIED",
    "TRIM_SD",
    "ZOOM_CELLS",
    "ZOOM_FILL",
    "holds",
    "narrow",
    "spread",
    "to_units",
    "trimmed",
    "widen",
    "zoom",
]

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

ZOOM_CELLS, ZOOM_FILL = 512, 4.0
"""A zoom has as many cells as the first fine histogram (at most :data:`~dpsynth.data.discover.noise.FINE_CELLS`,
128) unless the column's noisy rows would fill ZOOM_FILL times more cells (``fill``, the first histogram's own
rule: cells filled FILL times over the cut): then fill/ZOOM_FILL cells, at most ZOOM_CELLS.  Post-processing of the
noisy row count that already sized the first histogram.  The zoom's cells give the edges and the release's fine
decoding within bins, so a rich column decodes in finer steps: movie_ratings' ``timestamp`` (Unix seconds,
100,004 rows) zoomed in cells of 10⁷ s (116 days), which alone costs 0.021 of 1-way TV in the judge's bins; in cells
of 5·10⁶ s its zero-config 2-way L1 went 0.102 / 0.098 → 0.094 / 0.091 (seeds 2 / 3, x0.924).  Measured on the 42
seen tables of 15,000 rows or more (seeds 2, 3): no other schema changed.  With ZOOM_FILL = 1 (fill cells, up to 512)
18 large tables moved x1.012: movie_ratings x0.912 and pizza_sales x0.831, but diamonds x1.254, mplsstops x1.151,
movies x1.106 (finer cells, noisier quantile edges and trims)."""

NARROW_CELLS = 3
"""A first fine support of at most this many cells may hide data much narrower than a cell: its zoom is measured
in two halves, the second maybe over a second, finer zoom (:func:`zoom`)."""

NARROW_MASS = 0.8
"""The first zoom's support is narrow data (zoomed again) only when its noisy rows are at least this share of
the column's noisy non-null rows (:func:`narrow`)."""

HELD_SD, HELD_SHARE = 3.0, 0.2
"""A first fine support is zoomed (its cells become the bounds) only when it holds the rows (:func:`holds`): the
noisy estimate of the rows outside it must not stand HELD_SD standard deviations AND be HELD_SHARE of the rows."""


TIED = 0.9
"""An integral column's per-integer histogram (:meth:`~dpsynth.data.discover.column.ColumnDiscovery._fine`) shows
tied values only when its support holds this share of the wide cells' noisy rows; else its counts are summed in
blocks (at a small n a per-integer support of the heavy years, 1990–2008, held 88% of planes' years and clamped
2009–2013 to 2008)."""


TRIM_SD, TRIM_SHARE = 2.0, 0.01
"""A zoom's cells beyond its own support, inside the first fine histogram's outer cell, are dropped from the
bounds only when the rows they hold stand under TRIM_SD standard deviations of their estimate and that estimate
is under TRIM_SHARE of the column's noisy rows (:func:`trimmed`)."""


def narrow(noisy: np.ndarray, inner: tuple[int, int] | None, non_null: float | None) -> bool:
    """Whether the support ``inner`` of a zoom's noisy histogram ``noisy`` holds :data:`NARROW_MASS` of the
    column's noisy non-null rows ``non_null`` (the profile's output; None: not known, taken as narrow): the
    data is narrow rather than thin (post-processing of two noisy histograms)."""
    if inner is None:
        return False
    return non_null is None or float(noisy[inner[0]:inner[1] + 1].sum()) >= NARROW_MASS * non_null


def holds(noisy: np.ndarray, found: tuple[int, int], sd: float, grid: np.ndarray, buckets) -> bool:
    """Whether the first fine histogram's support ``found`` (cells of ``grid``, noisy counts ``noisy``, each of
    noise ``sd``) holds the column's rows, so that a zoom over it may give the bounds.  The rows outside it are
    estimated as the inverse-variance average of two independent reads: the first histogram's cells outside it
    summed, and the profile's logarithmic ``buckets`` ((edges, noisy counts, sd), or None: then the first read
    alone) lying inside the grid summed less the support's noisy rows.  False when that estimate stands
    :data:`HELD_SD` sds of the average and is :data:`HELD_SHARE` of the support's rows and itself.

    Issue 27, session 17: acs_2012's ``hrs_work`` (959 rows, 43% at 40) on seed 5 had a first support of the
    heap's cell [39, 43) alone, 545 noisy rows of cells of σ ≈ 37; the 13 cells outside summed 247 (1.9 sds),
    the profile's buckets in [15, 100) 977 (432 outside, 3.1 sds): averaged 334, 3.5 sds and 38%, where the
    zoom's bounds [39, 41.5] clamped every other row.  (The profile's non-null count, 649 there, is cut at its
    noise: biased low.)  Measured: of 448 discoveries (the 112 seen tables, seeds 2-5) it changed two columns,
    that one and loans' ``annual_income_joint`` on seed 2 (a zoom's bounds [80000, 120000] for rows of median
    113,000 and 75th percentile 151,546 → [80000, 280000]).  Releases (their own noise stream), zero-config 2-way
    L1: acs_2012 seeds 2-13 x0.985 (seed 2 0.274 → 0.247, seed 9 0.310 → 0.286, ``hrs_work``'s 1-way TV 0.25 →
    0.12 on both; the other ten unchanged); loans seeds 2-13 and nine tables with heaped hours or wages
    (wife_hours, cps91_wives, young_males, dropout_wages, wage, nhis_2009, health_insurance, german_health,
    stackoverflow; seeds 2-5) unchanged.  Post-processing of two noisy histograms."""
    inside = float(noisy[found[0]:found[1] + 1].sum())
    m = noisy.size - (found[1] - found[0] + 1)
    if m == 0:
        return True
    w1, est = 1.0 / (sd**2 * m), float(noisy.sum()) - inside
    if buckets is not None:
        edges, counts, bucket_sd = buckets
        within = (edges[:-1] >= grid[0]) & (edges[1:] <= grid[-1])
        k = int(np.count_nonzero(within))
        if k:
            w2 = 1.0 / (bucket_sd**2 * k + sd**2 * (found[1] - found[0] + 1))
            est = (w1 * est + w2 * (float(counts[within].sum()) - inside)) / (w1 + w2)
            w1 += w2
    return not (est >= HELD_SD / math.sqrt(w1) and est >= HELD_SHARE * (inside + est))


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
         cells: int, fill: float | None = None):
    """A second histogram over the first fine histogram's support ``found`` (cells of ``grid``), spending
    ``budget`` (see the module docstring); ``disc`` is the column's
    :class:`~dpsynth.data.discover.column.ColumnDiscovery` (not imported here: column.py imports this module).  Returns (lo, hi, (cell edges, noisy mass clipped at 0))."""
    lo, hi = float(grid[found[0]]), float(grid[found[1] + 1])
    if fill is not None:  # (as many cells as the noisy rows fill, up to ZOOM_CELLS: finer edges and decoding)
        cells = int(np.clip(fill / ZOOM_FILL, cells, ZOOM_CELLS))
    fine = disc._grid(lo, hi, integral, cells)
    wide = (disc.first_grid, *disc.evidence.first)  # (its edges: the zoom made consistent with it, fuse.py)
    disc.coarser = (wide,) if disc.evidence.buckets is None else (disc.evidence.buckets, wide)
    if found[1] - found[0] + 1 > NARROW_CELLS or spread(disc.core):  # (a skewed column's thin tail: one zoom)
        noisy = budget.histogram(disc.profile.cell_counts(fine), f"rows per zoomed fine cell ({fine.size - 1} "
                                 "public cells)")
        disc.learned.append(f"zoomed in on [{lo:g}, {hi:g}]: the bounds (the coarser histogram has more rows per "
                            "cell to find thin tails with); the zoomed histogram gives the edges")
        disc._cells(fine, noisy, budget.sd)
        return _trim(disc, grid, found, lo, hi, fine, noisy, budget)
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
    return _trim(disc, grid, found, lo, hi, fine, mean, ColumnBudget.with_scale(scale, budget))


def _trim(disc, grid: np.ndarray, found: tuple[int, int], lo: float, hi: float, fine: np.ndarray, noisy: np.ndarray,
          budget: ColumnBudget):
    """A zoom's (lo, hi, (cells, noisy mass clipped at 0)) with the bounds trimmed to the cells that hold rows
    (:func:`trimmed`); a column spread over magnitudes keeps the first fine histogram's bounds (its thin tail
    is what they were chosen for).  Post-processing of the two noisy histograms."""
    cut = (0, 0) if spread(disc.core) or disc.evidence.first is None or disc.non_null is None else \
        trimmed(fine, noisy, budget.sd, support(noisy, budget), grid, disc.evidence.first, found, disc.non_null)
    end = fine.size - 1 - cut[1]  # the last cell kept
    if cut != (0, 0):
        lo, hi = (float(fine[cut[0]]) if cut[0] else lo), (float(fine[end + 1]) if cut[1] else hi)
        disc.learned.append(f"bounds trimmed to [{lo:g}, {hi:g}]: the zoomed cells past them hold no rows that "
                            "stand out of their noise, with the first histogram's outer cells")
    return lo, hi, (fine[cut[0]:end + 2], np.clip(noisy[cut[0]:end + 1], 0, None).astype(float))


def trimmed(fine: np.ndarray, noisy: np.ndarray, sd: float, inner: tuple[int, int] | None, grid: np.ndarray,
            first: tuple[np.ndarray, float], found: tuple[int, int], rows: float) -> tuple[int, int]:
    """How many of a zoom's cells (edges ``fine``, noisy counts ``noisy`` of noise ``sd``, support ``inner``) to
    drop at its low and its high end.  The zoom spans the first fine histogram's support ``found`` (cells of
    ``grid``, noisy counts and sd ``first``), so its bounds are that histogram's cell edges, up to a coarse cell
    past the data at each end: cricketers' birth years 1840-1960 (issue 27, session 15) were bounded by
    [1800, 2000] from cells of 50, and 3.9% of the synthetic rows were decoded into the empty years.

    The zoom shows where inside the outer coarse cell the rows start, but its cells are noisy (σ ≈ 43 there, 27
    to 86 rows per three years at the data's edge), and the bounds of the coarse cells were kept for thin tails.
    So each side is cut at the innermost cell edge, between the zoom's support and the outer cell's far edge,
    past which the rows stand under :data:`TRIM_SD` sds of an estimate of them: the inverse-variance average of
    two independent reads, the zoom's cells past the cut summed, and the outer coarse cell's noisy count less
    the zoom's cells inside it before the cut (a unit cell [k - 0.5, k + 0.5) is inside when k is).  The coarse
    count, of one cell's noise, keeps a thin tail the zoom's cells alone cannot show.  The estimate must also be
    under :data:`TRIM_SHARE` of the noisy rows ``rows``: with the sd test alone (2 sds of about 90 rows on
    wage's 3,000 rows) a trim cut 6.7% of ``logwage``'s rows, [4.0, 4.25), on one seed in four; with the share,
    the most any of 73 changed columns on 16 seen tables (seeds 2-5) cut past the old bounds is 2.2% of the rows
    (jobless_benefits' ``rr``, seed 2; 1.8% of cricketers' ``year``, 1840-1844 on seed 3).  The share bounds the
    estimate, not the rows: over all 98 seen tables (seeds 2,3) 34 of 214 changed columns cut over 1% more of
    their rows than before, 14 over 2%, at most 4.6% (innovation's ``competition4``; botswana_fertility's
    ``yearborn`` 3.5%).  Zero-config 2-way
    L1 over the 12 tables, seeds 2-5: x0.985 with a TRIM_SHARE of 1%, x0.983 with 2% (cricketers x0.79,
    school_spending x1.027), x0.986 with the sd test alone (cricketers x0.77, wage x1.078).  Post-processing."""
    if inner is None or noisy.size < 2:
        return 0, 0
    counts, first_sd = first
    unit = _unit(fine)
    upper = float(grid[found[0] + 1])  # the outer coarse cells' inner edges
    lower = float(grid[found[1]])
    inside_lo = int(np.sum(fine[1:] - unit < upper)) if unit else int(np.sum(fine[1:] <= upper))
    inside_hi = int(np.sum(fine[:-1] + unit >= lower))
    most = TRIM_SHARE * rows
    low = _cut(noisy, sd, inner[0], inside_lo, float(counts[found[0]]), first_sd, most)
    high = _cut(noisy[::-1], sd, noisy.size - 1 - inner[1], inside_hi, float(counts[found[1]]), first_sd, most)
    return (low, high) if low + high < noisy.size else (0, 0)


def _cut(noisy: np.ndarray, sd: float, start: int, inside: int, count: float, count_sd: float, most: float) -> int:
    """Cells to drop from the outer end of ``noisy`` (ordered from the outer end inwards; the support starts at
    cell ``start``; the first ``inside`` cells lie inside the outer coarse cell, of noisy ``count`` and noise
    ``count_sd``): the largest j ≤ min(start, inside) whose rows past it stand under :data:`TRIM_SD` sds of
    their averaged estimate (:func:`trimmed`); 0 when none does."""
    top = min(start, inside)
    if top < 1:
        return 0
    csum = np.concatenate([[0.0], np.cumsum(noisy[:inside], dtype=float)])
    j = np.arange(1, top + 1)
    v1, v2 = sd**2 * j, count_sd**2 + sd**2 * (inside - j)
    w1, w2 = 1.0 / v1, 1.0 / v2
    est = (w1 * csum[j] + w2 * (count - (csum[inside] - csum[j]))) / (w1 + w2)
    quiet = np.flatnonzero((est < TRIM_SD / np.sqrt(w1 + w2)) & (est < most))
    return int(j[quiet[-1]]) if quiet.size else 0


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
