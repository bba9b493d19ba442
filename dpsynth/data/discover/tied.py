"""When an integral column's first fine histogram (cells wider than one integer) is measured again per integer
(:meth:`~dpsynth.data.discover.column.ColumnDiscovery._fine`, "tied integers in a short range"): post-processing of
that noisy histogram and the profile's noisy row count only.

Two cases, either suffices:

* **tied values** (years): the support is at most ``few_cells`` wide cells holding ``concentrated`` of the
  column's noisy rows.  The cells are counted on the *core*, the cells whose own noisy count passes the cut, when
  the rings of :func:`~dpsynth.data.discover.noise.support` reached further: a ring passes on noise alone with
  probability up to 1% by design, and one such cell made anes_therms' survey years (1978-2012, cells of 50) a
  support of 4 cells, zoomed without trimming: bounds [1850, 2050] and bins 130 years wide (issue 27, 1-way TV
  0.043 on one seed of two; the per-integer histogram over the wider support still finds the years' own bounds);
* **few integers for the rows**: the support holds at most as many integers as the column's noisy rows fill
  (``fill``: cells filled FILL times over the cut, as for the first histogram's own cells) and at most
  ``unit_cells``.  A coarse range wider than the data (nlswork's weeks worked, 0-104, in [1.5, 300)) gets cells of
  3 whose support is the data; one cell per integer over that support keeps the spikes at 52, 98 and 104 weeks
  (a third of the rows) that cells of 3 spread evenly (issue 27, 1-way TV 0.117 against 0.009 by hand); asked
  only when a cell stands :data:`SPIKE` times above the median cell.  The
  bounds stay the wide cells' support (:func:`per_integer`): with few rows per integer the integers' own support
  loses the thin ends (nmes1988's ``school``, 0-18 years: [2, 16], 6% of the rows clamped).  Tied values take
  the branch of :meth:`~dpsynth.data.discover.column.ColumnDiscovery._fine` whose integers' support gives the
  bounds, over the wide support widened to the profile's (:func:`~dpsynth.data.discover.zoom.widen`), and on
  each side only where the wide cells past it are mostly empty (:func:`kept_sides`): at a thin budget a smooth
  column's first cells are 3-10 integers wide and three of them hold most rows (botswana's ages and years at
  first marriage and birth), and the per-integer support clamped 2-13% of their rows.
"""

from __future__ import annotations

import math

import numpy as np

from dpsynth.data.discover.heaps import HEAP_SHARE
from dpsynth.data.discover.noise import ColumnBudget, support
from dpsynth.data.discover.points import PointMasses
from dpsynth.data.discover.zoom import TIED, widen, zoom
from dpsynth.privacy.selection import gaussian_partition_threshold, partition_threshold

__all__ = [
    "DENSE_ROWS",
    "DISTINCT_PART",
    "HEAPS_PART",
    "HOPELESS_SD",
    "KEEP",
    "ONE_CELL_SHARE",
    "SPIKE",
    "TRIM",
    "held_most",
    "hopeless",
    "kept_sides",
    "one_cell_held",
    "past_mass",
    "per_integer",
    "tied_cells",
    "tied_or_spread",
    "tied_values",
    "which",
]

SPIKE = 6.0
"""Few integers for the rows are measured one cell each only when a cell of the support holds SPIKE times the
median cell's noisy rows (a spike such as 52 weeks inside it, which the cells spread: nlswork's ``wks_work``, about
10 times): on smoother data the per-integer counts, each noisier than a wide cell's, blur the edges and the
decoding (credit's ``Age``, 4,455 rows over 45 years: 1-way TV 0.023 → 0.042 without this rule; nmes1988's
``school``, 4,406 rows, its 12 years about 4.6 times the median cell: 0.102 → 0.130 at SPIKE 4)."""

KEEP, TRIM, EDGE = 2.5, 0.25, 3
"""A side of the wide cells' support is trimmed to the per-integer support (tied values) only when the rows
estimated past it stand less than KEEP standard deviations of their noise and, plus KEEP of those, fill the cells
past it at less than TRIM of the rows per cell of the EDGE cells inside its edge (:func:`kept_sides`): the
per-integer support must be much narrower, with evidence.  Measured (issue 27): the first test alone trimmed
botswana's ``yearfm`` to [74, 88] (its 50-73, 600 rows, stood 2.4 sds on one seed); against half the rows of the
wide cells instead of the edge's density, ``agefm`` lost its 15s and 16s (13% of the rows, 30% of their cell),
and at a quarter who's survey years (1980-2013, 7,000 rows, cells of 200) kept [1800, 2014] or [1980, 2200] on
2 seeds of 4."""


DENSE_ROWS, DISTINCT_PART, HOPELESS_SD, HEAPS_PART = 0.25, 0.1, 3.0, 1 / 3
"""Tied values in a range too long for one cell each are checked before the partition selection is paid for
(:func:`tied_or_spread`): when the first fine histogram's support holds at least DENSE_ROWS noisy rows per integer,
DISTINCT_PART of the rest counts the column's distinct integers (sensitivity 1), and a selection that cannot keep
integers holding :data:`~dpsynth.data.discover.zoom.TIED` of the rows (:func:`hopeless`; noise bounds HOPELESS_SD
sds) leaves the rest to a zoom over the support.  A sparser support (ids or codes spread over a range much wider
than their rows: anes_therms' ``uid``, year-prefixed respondent ids, 34,000 rows over 10⁶ integers) keeps the
selection, whose failure leaves the first histogram's coarse bins: finer bins of such a column cost the model
(session 15: ``uid`` zoomed into 11 bins, the table's 2-way L1 x1.46).  Nor is the count paid for when even every
integer of the support distinct could be held (seattle_pets' zip codes: a count taken from their selection moved
its edges, x1.05 on seeds 4-7).  A spread keeps HEAPS_PART of the rest for a selection whose kept integers become
point masses (``death``'s 11,504: without it ``death``'s 1-way TV was 0.39 and the table x1.32).  Measured
(zero-config 2-way L1; of 112 seen tables, seeds 2,3, the branch is taken by 8 and the schemas of 2 changed):
aids_australia 0.258 / 0.295 / 0.292 / 0.296 → 0.171 / 0.210 / 0.202 / 0.203 (seeds 2-5, x0.687; ``diag``'s
1-way TV 0.209 → 0.03-0.06), who x0.988 (one count column, seeds 2-5: x1.000 / x1.011 / x1.000 / x0.941)."""


def selection_floor(budget: ColumnBudget, delta: float) -> float:
    """A count under which partition selection with ``budget`` (and ``delta``) keeps a value with probability
    about 0.1% (its integer threshold less 3 sds of its noise), at least 1.  Public: budget and δ only."""
    if budget.zcdp:
        sigma, threshold = gaussian_partition_threshold(rho=budget.amount, delta=delta,
                                                        l2_sensitivity=math.sqrt(budget.l1))
    else:
        scale, threshold = partition_threshold(epsilon=budget.amount, delta=delta, sensitivity=budget.l1)
        sigma = math.sqrt(2.0) * scale
    return max(1.0, float(threshold) - 3.0 * float(sigma))


def hopeless(distinct: float, distinct_sd: float, rows: float, floor: float) -> bool:
    """Whether partition selection cannot keep integers holding :data:`~dpsynth.data.discover.zoom.TIED` of
    ``rows`` (noisy non-null rows, an upper bound): at most rows/``floor`` integers reach the selection's
    ``floor`` (:func:`selection_floor`), so at least ``distinct`` less those are left out, a row each at least;
    they must be over (1 - TIED) of the rows with the noisy ``distinct`` (of noise ``distinct_sd``) less
    :data:`HOPELESS_SD` sds.  Post-processing of noisy counts.  aids_australia's ``diag`` (days, 1,580 distinct
    integers in 2,843 rows) and ``death`` (1,148, 37.5 % at one day) are hopeless by far (bound about 400);
    seattle_pets' zip codes (116 in 52,000 rows) are not."""
    return distinct - HOPELESS_SD * distinct_sd > rows / floor + (1.0 - TIED) * rows


def tied_or_spread(disc, rest: ColumnBudget, delta: float, grid: np.ndarray, found: tuple[int, int],
                   noisy: np.ndarray, first: ColumnBudget, integral: bool, cells: int, fill: float):
    """An integral column whose first fine histogram (``noisy``, measured with ``first`` over ``grid``) has its
    support ``found`` in a few cells too wide for one cell per integer: tied values (partition selection, as
    :func:`tied_values`) or a spread (a zoom over the support, :func:`~dpsynth.data.discover.zoom.zoom`), decided
    before ``rest`` is spent (see :data:`DENSE_ROWS`).  Until session 17 the selection always ran, and when it
    failed the first histogram alone gave the bins: aids_australia's ``diag`` and ``death`` (days 8,302-11,504,
    support three cells of 1,000) got three bins of 1,000 days, 8,302-8,999 clamped (``diag``'s 1-way TV 0.209
    against 0.108 by hand).  Returns what ``_fine`` returns, or None (the selection failed: the first histogram
    gives the bins).  ``disc`` is the column's ColumnDiscovery."""
    integers = (found[1] - found[0] + 1) * float(grid[1] - grid[0])
    rows = float(np.clip(noisy[found[0]:found[1] + 1], 0, None).sum())
    non_null = float(disc.non_null if disc.non_null is not None else rows)
    upper = max(non_null + HOPELESS_SD * float(disc.non_null_sd), rows)
    count, after = rest.split(DISTINCT_PART)  # (nothing is charged until a mechanism runs)
    # at most the support's integers and a value per row past it are distinct: when even that many could be held
    # (zip codes: 116 in 52,000 rows over 2,000 integers) no count is paid for and the selection has it all
    if rows >= DENSE_ROWS * integers and hopeless(integers + max(0.0, upper - rows), 0.0, upper,
                                                  selection_floor(after, delta)):
        rest = after
        _, counts = disc.profile.integer_counts()
        distinct = count.count(int(np.size(counts)), "distinct integers (tied values or a spread)")
        if hopeless(distinct, count.count_sd, upper, selection_floor(rest, delta)):
            disc.learned.append(f"a spread, not tied values: about {max(distinct, 0.0):.0f} distinct integers "
                                f"(noisy count) in about {non_null:.0f} rows: heaped integers, then a zoom")
            heaps, rest = rest.split(HEAPS_PART)  # (heaped integers: point masses, held_most)
            if (values := tied_values(disc, heaps, delta)) is not None:
                return float(values[0][0]), float(values[0][-1]), None, values
            wide = widen(found, grid, disc.core, noisy, first, disc.margins, disc.learned) or found
            return (*zoom(disc, rest, grid, wide, integral, cells, fill), None)
    if (values := tied_values(disc, rest, delta, one_cell=found[0] == found[1])) is not None:  # (holding most rows)
        return float(values[0][0]), float(values[0][-1]), None, values
    return None


def tied_values(col, budget: ColumnBudget, delta: float, *, one_cell: bool = False) -> tuple[np.ndarray, np.ndarray] | None:
    """Partition selection over a column's observed integers (tied values in a range too long for one cell each,
    with the rest of its budget): (sorted kept values, noisy counts) when they hold most of its rows
    (:func:`held_most`), or when ``one_cell`` (the first fine histogram's support is a single cell) and they hold
    :data:`ONE_CELL_SHARE` of them (:func:`one_cell_held`); else None (the first fine histogram gives the bins)."""
    labels, counts = col.profile.integer_counts()
    idx, noisy = budget.partition(counts, delta, what="rows per observed integer")
    if idx.size == 0:
        return None
    order = np.argsort(labels[idx])
    col.learned.append(f"{idx.size} integer values by partition selection (tied values in a narrow range)")
    values = labels[idx][order], np.clip(noisy[order], 0, None).astype(float)
    if one_cell and one_cell_held(col, values):
        return values
    return values if held_most(col, values, budget.sd) else None


ONE_CELL_SHARE = 0.5
"""Codes whose first fine histogram holds them all in one cell (:func:`one_cell_held`): the kept integers are
the column's values and bounds when they hold this share of its noisy non-null rows."""


def one_cell_held(col, values: tuple[np.ndarray, np.ndarray]) -> bool:
    """Whether integers kept by partition selection (``values``: at least two, sorted, with noisy counts) give the
    bins of a column whose first fine histogram put all its rows in one cell: those cells cannot place an edge,
    so without them the column is one bin decoded uniformly over the cell.  They must hold
    :data:`ONE_CELL_SHARE` of the larger of the profile's noisy non-null rows and the first histogram's total.
    The rows of integers the selection missed then fall between kept ones (bins between them, the decoder
    drawing only kept integers) or clamp to the nearest kept end.  Post-processing of noisy counts.

    Issue 27, session 19's closing check: king_county_homes' ``zipcode`` (70 ZIP codes 98001-98199, 21,613 rows)
    fell in the cell [98000, 100000) of a first histogram of 2,000-wide cells; the selection kept 27 codes
    holding 55 % of the rows, not :data:`~dpsynth.data.discover.zoom.TIED`, and the column became the one bin
    [98000, 100000]: synthetic codes such as 99772 that do not exist, 1-way TV 0.90 against the hand schema's
    0.02 and the table's 2-way L1 0.29 against 0.16."""
    kept, counts = values
    if kept.size < 2:
        return False
    non_null = float(col.non_null or max(1.0, counts.sum()))
    first = getattr(getattr(col, "evidence", None), "first", None)
    if first is not None:
        non_null = max(non_null, float(np.sum(first[0])))
    if float(counts.sum()) < ONE_CELL_SHARE * non_null:
        return False
    col.learned.append(f"the first fine histogram holds the column in one cell: the {kept.size} integers kept "
                       f"(about {counts.sum() / non_null:.0%} of the rows) give its bins and values")
    return True


def held_most(col, values: tuple[np.ndarray, np.ndarray], sd: float) -> bool:
    """Whether the integers partition selection kept for tied values in a range too long for one cell each
    (``values``: sorted values and their noisy counts, noise ``sd``) hold :data:`~dpsynth.data.discover.zoom.TIED`
    of the column's noisy non-null rows (plus one sd of the sums' noise): only then are they the column's values and
    bounds.  Otherwise the column is binned on its first fine histogram and the kept integers holding
    HEAP_SHARE/bins of the rows become point masses (``col.label_points``, as
    :func:`~dpsynth.data.discover.values.label_values` leaves them).  Post-processing of noisy counts.

    Issue 27, session 15's closing check: aids_australia's ``death`` (days since 1960, 8469-11504, 37.5 % at the
    end of observation 11504) spans three cells of 1,000; selection over its 2,843 rows kept 11504 alone and the
    bounds became [11503, 11504]: every other row clamped to 11503 (1-way TV 0.60, the table's 2-way L1 0.57
    against the hand schema's 0.15).  Now 3 bins of 1,000 and a point at 11504 (the table's 2-way L1, seeds
    0-3: 0.56 → 0.27-0.32).  Letting the selection have half the rest and a zoom the other half when it fails gave ``death``
    and ``diag`` 8-10 bins (seeds 0-3: 0.56 → 0.19-0.23), but numeric ids and codes take that path too and their
    finer bins cost the model (anes_therms' ``uid``, 3 → 11 bins: x1.46; seattle_pets' zip codes x1.10): not kept.

    The rows are the larger of the profile's noisy non-null rows and the first fine histogram's (all its cells;
    session 17), and the kept integers must hold TIED of them with no slack for noise: a zero spike's profile can
    show the zeros alone, and a wrong "held" clamps every other row onto the kept integers while a wrong "not held"
    only bins the column with them as point masses.  acs_2012's ``income`` (1,623 incomes, 45 % zeros) read about
    726 rows on some draws, the selection kept 0, "held" 90 % of them, and the column became the two bins {0}, {1};
    credit's ``Debt`` (83 % zeros, 4,436 rows read as 3,640) likewise.  Zero-config 2-way L1, seeds 6-13: acs_2012
    0.356 / 0.340 / 0.416 → 0.270 / 0.228 / 0.310 on the 3 draws of 8 that collapsed (x0.886 over the 8), credit
    0.196 → 0.187 on 1 (x0.994; ``Debt``'s 1-way TV 0.105 on 2 more draws is a clamped tail at 1,000, not this);
    seeds 2-5 and seattle_pets' zip codes (seeds 2-7) unchanged."""
    kept, counts = values
    non_null = float(col.non_null or max(1.0, counts.sum()))
    first = getattr(getattr(col, "evidence", None), "first", None)
    if first is not None:  # (the first fine histogram's rows, all its cells: a spread the profile missed)
        non_null = max(non_null, float(np.sum(first[0])))
    if float(counts.sum()) >= TIED * non_null:
        return True
    keep = counts >= HEAP_SHARE * non_null / (col.hint.bins or col.spec.bins)
    col.label_points = PointMasses(kept[keep], counts[keep], np.zeros(int(keep.sum())),
                                   "values released by partition selection")
    col.learned.append(f"not tied: the {counts.size} integers kept hold about {counts.sum() / non_null:.0%} of the "
                       f"rows: binned, {int(keep.sum())} of them as point masses")
    return False


def kept_sides(cells: np.ndarray, noisy: np.ndarray, inner: tuple[int, int], sd: float, grid: np.ndarray,
               first: np.ndarray, wide: tuple[int, int], first_sd: float) -> tuple[int, int]:
    """The bounds of tied integers (first and last cell of ``cells``, noisy counts ``noisy`` of noise ``sd``,
    measured over the wide cells ``wide`` of the first fine histogram: ``grid``, ``first``, noise ``first_sd``):
    on each side the integers' own support ``inner`` when the wide cells past it are mostly empty, else the wide
    cells' edge.  The rows past a side are estimated twice: the wide cells holding the trimmed integers less the
    kept cells overlapping them (first histogram less second), and the trimmed integers' own sum (second); their
    inverse-variance average must stand under :data:`KEEP` sds, and plus KEEP sds fill the trimmed cells at
    under :data:`TRIM` of the density at the support's edge.  Survey years in cells of 200 (who's ``year``,
    1980-2013 in [1800, 2200), 7,000 rows, about 400 per 2-year cell): about 0 ± 300 past each side over 90 cells,
    trimmed.  Ages at first marriage at a thin budget (botswana's ``agefm``, σ ≈ 53 per wide cell of 5, 65 per
    integer, 30-100 rows each past 25): the per-integer support ended at 25, clamping 11% of the rows to [15, 25];
    past 25 the estimate is about 440 ± 110 rows, 4 sds: kept.  A thin tail over many integers (a tenth of the
    rows at a tenth of the edge's density) may still be trimmed: at σ 65 per integer it is not told from noise.
    Post-processing of two noisy histograms (issue 27)."""
    i, j = inner
    n = noisy.size
    idx = np.arange(n)
    cell_of = np.clip(np.searchsorted(grid, (cells[:-1] + cells[1:]) / 2.0, side="right") - 1, wide[0], wide[1])

    def rows_past(out: np.ndarray, edge: np.ndarray) -> bool:
        held = np.unique(cell_of[out])  # the wide cells holding the trimmed integers
        span = (cells[:-1] < grid[held[-1] + 1]) & (cells[1:] > grid[held[0]])  # (cells wider than 1 may straddle)
        shared = idx[span & ~np.isin(idx, out)]  # the kept cells overlapping them: their rows are the wide cells'
        by_wide = float(first[held].sum()) - float(noisy[shared].sum())
        v_wide = held.size * first_sd**2 + shared.size * sd**2
        v_own = out.size * sd**2
        mean = (by_wide / v_wide + float(noisy[out].sum()) / v_own) / (1.0 / v_wide + 1.0 / v_own)
        sd_mean = 1.0 / math.sqrt(1.0 / v_wide + 1.0 / v_own)
        dense = max(0.0, float(noisy[edge].mean()))  # rows per cell at the support's edge
        return mean >= KEEP * sd_mean or mean + KEEP * sd_mean >= TRIM * dense * out.size

    if j < n - 1 and rows_past(idx[j + 1:], idx[max(i, j - EDGE + 1):j + 1]):
        j = n - 1
    if i > 0 and rows_past(idx[:i], idx[i:min(j, i + EDGE - 1) + 1]):
        i = 0
    return i, j


def past_mass(cells: np.ndarray, noisy: np.ndarray, inner: tuple[int, int], sd: float, grid: np.ndarray,
              first: np.ndarray, wide: tuple[int, int], first_sd: float) -> np.ndarray:
    """The mass per cell of ``cells`` that places a tied column's bin edges (arguments as :func:`kept_sides`):
    the noisy counts clipped at 0 inside the integers' support ``inner``; past it, in the sides
    :func:`kept_sides` kept, each wide cell's rows (the inverse-variance average of the wide cell less the kept
    integers inside it, and of its trimmed integers' own sum) spread evenly over its trimmed integers.  There the
    counts per integer are mostly noise, and clipped at 0 they sum to a phantom mass: botswana's ``agefm``, 25
    integers past its support at σ 65 hold about 26 each, 650 rows beside its 2,100, which moved the quantile
    edges into the tail (3 of 11 bins past 28).  Post-processing of two noisy histograms."""
    n = noisy.size
    cell_of = np.clip(np.searchsorted(grid, (cells[:-1] + cells[1:]) / 2.0, side="right") - 1, wide[0], wide[1])
    out = (np.arange(n) < inner[0]) | (np.arange(n) > inner[1])
    mass = np.clip(noisy, 0, None).astype(float)
    if not out.any():
        return mass
    k = grid.size - 1
    own = np.bincount(cell_of[out], weights=noisy[out], minlength=k)
    count = np.bincount(cell_of[out], minlength=k)
    shared = np.bincount(cell_of[~out], weights=noisy[~out], minlength=k)
    v_wide = first_sd**2 + np.bincount(cell_of[~out], minlength=k) * sd**2
    v_own = np.maximum(count, 1) * sd**2
    rows = ((first - shared) / v_wide + own / v_own) / (1.0 / v_wide + 1.0 / v_own)
    mass[out] = np.clip(rows[cell_of[out]], 0, None) / count[cell_of[out]]
    return mass


def tied_cells(noisy: np.ndarray, found: tuple[int, int] | None, budget: ColumnBudget, *, non_null: float | None,
         few_cells: int, concentrated: float) -> bool:
    """Tied values (see the module docstring): the first fine histogram ``noisy`` (measured with ``budget``,
    support ``found``) shows at most ``few_cells`` cells, or a core of at most that many, holding
    ``concentrated`` of the profile's noisy rows ``non_null``."""
    if found is None:
        return False
    core = np.flatnonzero(noisy[found[0]:found[1] + 1] >= budget.block_cut(1, noisy.size))
    if found[1] - found[0] + 1 > few_cells and (core.size == 0 or core[-1] - core[0] + 1 > few_cells):
        return False
    return non_null is None or float(noisy[found[0]:found[1] + 1].sum()) >= concentrated * non_null


def which(noisy: np.ndarray, found: tuple[int, int] | None, budget: ColumnBudget, width: float, *, integral: bool,
          non_null: float | None, most: float, few_cells: int, concentrated: float) -> tuple[bool, bool]:
    """(tied values, few integers for the rows but not tied) for an ``integral`` column's first fine histogram
    ``noisy`` (cells ``width`` integers wide, measured with ``budget``, support ``found``): see the module
    docstring; ``most`` is the integers the noisy rows fill, at most the unit cells'."""
    if not integral or found is None or width <= 1:
        return False, False
    tied = tied_cells(noisy, found, budget, non_null=non_null, few_cells=few_cells, concentrated=concentrated)
    cells = np.clip(noisy[found[0]:found[1] + 1], 0, None)
    spike = float(cells.max()) >= SPIKE * float(np.median(cells))
    return tied, not tied and spike and (found[1] - found[0] + 1) * width <= most


def per_integer(disc, budget: ColumnBudget, grid: np.ndarray, found: tuple[int, int], first: np.ndarray,
                like: ColumnBudget):
    """Few integers for the rows, not tied: one noisy histogram with a cell per integer of the first fine
    histogram's support ``found`` and one more wide cell on each side (cells of ``grid``), spending ``budget``.
    Its counts summed per wide cell are averaged with the first histogram's (``first``, noise of ``like``;
    inverse-variance weights), and that average's support gives the bounds, as measuring the wide cells twice
    did (nmes1988's ``school``: 18 years, 2% of the rows, past the first support's last cell of 2); the counts
    per integer give the edges and decode within bins.  ``disc`` is the column's
    :class:`~dpsynth.data.discover.column.ColumnDiscovery` (column.py imports this module).  Returns (lo, hi,
    (cell edges, noisy counts clipped at 0), None) as ``_fine`` does.  Post-processing but for the histogram."""
    a, b = max(0, found[0] - 1), min(grid.size - 2, found[1] + 1)
    lo = math.ceil(float(grid[a]))
    starts = np.unique(np.ceil(grid[a:b + 2]).astype(np.int64) - lo)  # each wide cell's first integer, then the end
    cells = np.arange(lo, lo + int(starts[-1]) + 1) - 0.5
    noisy = np.asarray(budget.histogram(disc.profile.cell_counts(cells), f"rows per integer of the support "
                                        f"({cells.size - 1} public cells)"), dtype=float)
    inside = np.flatnonzero((grid[a:b + 1] >= cells[0]) & (grid[a:b + 1] < cells[-1])) + a  # wide cells covered
    width = np.diff(starts).astype(float)
    v1, v2 = like.sd**2, width * budget.sd**2
    mean = (first[inside] / v1 + np.add.reduceat(noisy, starts[:-1]) / v2) / (1.0 / v1 + 1.0 / v2)
    sd = float(np.max(1.0 / np.sqrt(1.0 / v1 + 1.0 / v2)))
    inner = support(mean, ColumnBudget.with_scale(sd if budget.zcdp else sd / math.sqrt(2.0), budget))
    i, j = (0, mean.size - 1) if inner is None else inner
    keep = slice(int(starts[i]), int(starts[j + 1]))
    cells, noisy = cells[keep.start:keep.stop + 1], noisy[keep]
    disc.learned.append(f"one cell per integer in [{cells[0] + 0.5:g}, {cells[-1] - 0.5:g}] (few integers for the "
                        "rows): bounds from the wider cells measured twice")
    disc._cells(cells, noisy, budget.sd)
    return float(cells[0] + 0.5), float(cells[-1] - 0.5), (cells, np.clip(noisy, 0, None).astype(float)), None
