"""Partition selection over a column's observed values: the categories of a categorical column, and the values of
a numeric column of few distinct numbers.

Both are charged through :meth:`~dpsynth.data.discover.noise.ColumnBudget.partition` (Laplace or Gaussian partition
selection, with δ); every decision here reads mechanism outputs only (noisy counts past their cuts, the profile's
noisy non-null count), so it is post-processing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpsynth.data.discover.heaps import HEAP_SHARE, ask_points, first_delta
from dpsynth.data.discover.noise import ColumnBudget, support
from dpsynth.data.discover.points import PointMasses
from dpsynth.data.discover.zoom import averaged
from dpsynth.privacy.accountant import split_budget

__all__ = ["DISCRETE_RUNS", "DISCRETE_SHARE", "DISCRETE_SPAN", "FEW_MARGIN_NEXT", "FEW_MARGIN_SD", "LABELS_ALL",
           "LAST_SD", "OUTSIDE_SD", "PROBE_SHARE", "RESIDUAL", "Selected", "few_distinct", "label_points",
           "label_values", "points_of", "seen_integers", "select_categories", "select_numbers", "spaced_bins", "spaced_edges"]

DISCRETE_SHARE, DISCRETE_RUNS, DISCRETE_SPAN = 0.9, 0.6, 0.5
"""A fractional column whose fine cells past the cut hold DISCRETE_SHARE of its noisy numbers, are at most
``max_categories`` and at most DISCRETE_SPAN of its support's cells, and lie mostly apart (runs of adjacent cells at
least DISCRETE_RUNS of them) may hold few distinct numbers (codes such as 0.0, 4.5, 14.5, …, 100.0; logs of a
family size, 0, 0.69, 1.10, …, 2.64, a tenth apart): the rest of its budget goes to partition selection over its
values, and when the kept values hold DISCRETE_SHARE of its numbers it is categorical (each value decodes exactly)
instead of binned.  DISCRETE_SPAN was a quarter until issue 27's randhie (``lfam``: 14 values, 8 cells past the
cut in a support of 21 cells of 0.1: binned, every synthetic value between two real ones); a continuous column's
cells past the cut are adjacent (one run), which the runs rule refuses whatever the span."""

LABELS_ALL = 0.99
"""A column of few distinct numbers is categorical over the values partition selection kept (each decodes exactly)
only when their noisy counts hold LABELS_ALL of its noisy non-null rows (plus one sd of that sum's noise): the
rest would be released as ``__other__``, a text value in a column of numbers.  Otherwise the kept values whose
noisy counts hold :data:`~dpsynth.data.discover.heaps.HEAP_SHARE`/bins of the rows are point bins of the binned
column (:func:`label_points`), and the rows of the values selection missed keep numbers between them (the first
fine histogram's bounds and residual mass).  Until session 13 :data:`DISCRETE_SHARE` (90%) made a column
categorical: held-out-13's charity_mail, ``weekslast`` (17 mailing-calendar values; the kept 6 hold 84%) and
``gift`` (0, 10, 25 kept: 86%) released 14-16% of their rows as ``__other__`` (1-way TV 0.17 and 0.15 against the
hand schema's 0.05 and 0.01).  Zero-config 2-way L1, seeds 2-3, the 7 tables of 82 screened whose schemas
this changed: charity_mail x0.81, movies x0.94 (r1-r10: IMDB codes with rows between them), anes_therms x0.93
(thermometer anchors), hpc_jobs x0.93 (``iterations``: 10 and 20 kept, 100, 50, 200 had gone to ``__other__``),
cps91_wives x0.95 (``faminc``'s band midpoints as point bins), randhie x0.97, tv16 x0.96; none worse."""

OUTSIDE_SD = 2.0
"""A column of few distinct numbers is categorical only when its first fine histogram's cells that hold none of the
kept values sum to under :data:`RESIDUAL` of its noisy rows plus OUTSIDE_SD sds of that sum (:func:`outside`).
Session 13: of 164 column-seeds screened (82 seen tables, seeds 2-3) it changed one, charity_mail's ``gift`` on
seed 2 (0, 10, 25 kept, 15/20/50/30 and the rest, 10.8% of the rows, had gone to ``__other__``): 2-way L1 0.286 →
0.237."""

FEW_MARGIN_SD, FEW_MARGIN_NEXT = 2.25, 1.0
"""A column of few integers keeps the integers of the margin buckets of its coarse range
(:func:`~dpsynth.data.discover.coarse.margins`) whose noisy counts show rows (:func:`seen_integers`,
:func:`_reached`): each bucket's profile count averaged with the fine cells inside it, the first k buckets from
the support out kept when their sum stands FEW_MARGIN_SD sds of its noise for some k (up to the last of them
standing FEW_MARGIN_NEXT sds alone), each next one out while its own stands FEW_MARGIN_NEXT.  A few-integers stage
spends little (its cells' noise swamps a tail of a few percent), so a thin tail is told by the profile; a false
bucket adds an integer whose bin holds noise near 0.  Until issue 27's flags the first bucket alone passed at
2 sds of the profile's count (an empty one with probability 0.023): 0/1 flags were given an empty 2 on 2.3% of
their discoveries (botswana_fertility, nlswork, check_times and email, seeds 0-59: 44 of 1,918, 34 by this rule),
1.5% after (28, 18 by this rule; the others by the fine support's rings, its margins or the zero spike's tail).
Rows outside the bounds of those tables' few-integer columns 1.00% → 0.95% on average (email's ``exclaim_mess``
13.1% → 10.9%, botswana's ``idlnchld`` 3.9% both, a tail over two buckets summed: [7, 10) and [10, 15) at 2.0
and 1.8 sds, 2.7 together).  Measured and rejected: 2.5 sds (flags 0.7%, none by this rule, but a tail in one
bucket at 2-2.5 sds lost: ``idlnchld`` 3.9% → 5.1% outside)."""

LAST_SD = 2.5
"""A column of few integers whose bounds end inside the profile's last support bucket keeps the bucket's further
integers when their rows stand LAST_SD sds of their noise (:func:`seen_integers`, ``_rest_of_last``; an empty
one passes with probability 0.006).  Held-out-13's big_five: C1's 6s (597 rows, 21%) in the bucket [5, 7) beside
its 5s were lost when a zoom onto the fine support (4 and 5) gave the bounds, by the rule that ends a support at
its last bucket's first integer (for mplsstops' precincts 1-5, given an empty 6 by [5, 7)): items lost their
6s on 52 of 200 discoveries (seeds 2-9), 33 after; rows outside the bounds 4.6% → 3.4% at the cheap stage, no
empty integer added; of 13 other seen tables with few-integer columns only check_times' ``depends`` changed (a
6 of 1.6% kept, seed 3).  Zero-config 2-way L1 of big_five (seeds 2-5) 0.331 → 0.295 at the cheap stage."""

PROBE_SHARE, RESIDUAL, RESIDUAL_SD = 0.15, 0.01, 1.0
"""A categorical column first runs partition selection with PROBE_SHARE of its stage's budget (and half its δ).
When the kept categories' noisy counts leave at most RESIDUAL of its noisy non-null rows (plus RESIDUAL_SD sds of
that difference) unexplained, no category the discovery is sized for
(:data:`~dpsynth.data.discover.TARGET_SHARE` of the rows) can be missing and that is its answer; otherwise the
rest of the budget (and δ) runs partition selection again, whose answer replaces the probe's (many or rare
categories).  (RESIDUAL was 3% with 2 sds until issue 27: storms' ``status``
kept 5 of its 9 values, the probe leaving 3.5% of the rows, 4 categories of 111–298 rows, in ``__other__``.)"""


@dataclass
class Selected:
    """Released values (indices into the candidates, by decreasing noisy count), their noisy counts, the sd of
    each count's noise, and what was learned."""

    idx: np.ndarray
    noisy: np.ndarray
    sd: float
    learned: list[str] = field(default_factory=list)
    again: Callable[[ColumnBudget], Selected] | None = None  # a probe that left rows out: the second selection
    surplus: float = 0.0  # how many sds the rows the probe left out stand above RESIDUAL (allot.py: the pool)
    nulls: tuple[tuple[float, float], ...] = ()  # (noisy count of null rows, sd) of each selection: a public cell


def few_distinct(noisy: np.ndarray, found, budget: ColumnBudget, *, max_categories: int) -> bool:
    """Whether a fine histogram (``noisy``, support ``found``, measured with ``budget``) shows few distinct
    numbers (:data:`DISCRETE_SHARE`, :data:`DISCRETE_RUNS`, :data:`DISCRETE_SPAN`; post-processing)."""
    if found is None:
        return False
    spikes = np.flatnonzero(noisy >= budget.block_cut(1, noisy.size))
    span = found[1] - found[0] + 1
    if not 2 <= spikes.size <= min(max_categories, int(DISCRETE_SPAN * span)):
        return False
    runs = 1 + int(np.count_nonzero(np.diff(spikes) > 1))
    mass = float(noisy[found[0]:found[1] + 1].sum())  # (unclipped: the noise of its many empty cells sums to ~0)
    return runs >= DISCRETE_RUNS * spikes.size and float(noisy[spikes].sum()) >= DISCRETE_SHARE * mass


def spaced_bins(col, budget: ColumnBudget, lo: float, hi: float, bins: int, points=None) -> np.ndarray | None:
    """:func:`spaced_edges` over a column's last fine cells (``col`` a
    :class:`~dpsynth.data.discover.column.ColumnDiscovery`: its evidence's noisy counts and their noise sd, under
    ``budget``'s kind of noise), at most 2·``bins`` numbers; None when they are not few numbers spaced apart.
    Asked first without ``points`` (told in the column's learned reasons), then with its point masses' values."""
    ev = col.evidence
    if ev.cells is None or ev.cell_counts is None or ev.cell_sd <= 0:
        return None
    scale = ev.cell_sd if budget.zcdp else ev.cell_sd / math.sqrt(2.0)
    edges = spaced_edges(np.asarray(ev.cells, dtype=float), ev.cell_counts, ColumnBudget.with_scale(scale, budget),
                         lo, hi, most=2 * bins, points=None if points is None else np.asarray(points, dtype=float))
    if edges is not None and points is None:
        col.learned.append(f"{edges.size - 1} bins, one per run of fine cells past the cut (few distinct numbers "
                           "spaced apart)")
    return edges


def spaced_edges(cells: np.ndarray, noisy: np.ndarray, budget: ColumnBudget, lo: float, hi: float, *,
                 most: int, points: np.ndarray | None = None) -> np.ndarray | None:
    """Bin edges for a column whose last fine histogram (cell edges ``cells``, noisy counts ``noisy`` measured
    with ``budget``'s noise) shows few distinct numbers spaced apart: at most ``most`` cells past the cut, no two
    side by side, holding :data:`DISCRETE_SHARE` of the support's noisy rows; None otherwise (quantile edges
    then).  Post-processing.

    A bin per number: the edges lie midway between the runs' centres (at cell edges: the evidence's bins stay
    unions of cells), within [lo, hi].  Numbers under the cut hide in the wide gaps (a band's midpoints, a scale's
    anchors): a gap of about k times the runs' median spacing is split in k bins (k − 1 numbers in it, evenly
    spaced), while the bins stay at most ``most``.  A run holding one of ``points`` (point masses, which get a
    point bin of their own) has no edge beside it: the point bin is its number's bin.

    Quantile edges put two to four such numbers in a bin (held-out-13's doctor_visits_aus, ``age``: twelve band
    midpoints 0.19 … 0.72, a fine cell of 0.01 each in the zoom, seven of them past its cut; ten quantile bins
    and five point masses: 0.32 … 0.62 shared three bins), and the model's one count per bin is split among them
    by the zoom's noisy cells (1-way TV 0.06-0.09 against the hand schema's 0.02).  Zero-config 2-way L1 there:
    0.153 → 0.137 on seed 2 (every age its bin; seeds 3-5 the ages' share past the cut missed DISCRETE_SHARE).
    Measured and rejected: runs of adjacent cells allowed (:data:`DISCRETE_RUNS` of them single): pizza_sales'
    prices a quarter apart in cells of 0.2 (25 of them, runs such as 12-12.75) got 15-23 bins instead of 10, 2-way
    L1 x1.07 on seeds 2-3 and x1.025 on 4-5; the runs' share tested against a noise allowance instead of
    DISCRETE_SHARE: heaps on a spread taken for spaced numbers (dropout_wages' ``postexp``: edges [0, 0, 6])."""
    x = np.asarray(noisy, dtype=float)
    found = support(x, budget)
    if found is None or x.size < 3:
        return None
    spikes = np.flatnonzero(x >= budget.block_cut(1, x.size))
    if spikes.size < 2:
        return None
    breaks = np.flatnonzero(np.diff(spikes) > 1)
    starts, ends = np.concatenate([[spikes[0]], spikes[breaks + 1]]), np.concatenate([spikes[breaks], [spikes[-1]]])
    mass = float(x[found[0]:found[1] + 1].sum())  # (unclipped: the noise of its many empty cells sums to ~0)
    if not 2 <= starts.size <= most or starts.size < spikes.size or \
            float(x[spikes].sum()) < DISCRETE_SHARE * mass:
        return None
    grid = np.asarray(cells, dtype=float)
    centre = (starts + ends + 1) / 2.0  # (in cell edges' index: cell k spans edges k … k + 1)
    gap = np.diff(centre)
    step = float(np.median(gap))
    i, j = np.searchsorted(grid, lo, side="left"), np.searchsorted(grid, hi, side="right") - 1  # (lo, hi's edges)
    pieces = np.maximum(1, np.round(gap / step)).astype(int)
    below, above = int((centre[0] - i) // step), int((j - centre[-1]) // step)  # numbers past the first, last runs
    if int(pieces.sum()) + below + above + 1 > most:  # (too many hidden numbers for the bins: one bin per run)
        pieces[:], below, above = 1, 0, 0
    pts = np.zeros(0) if points is None else np.asarray(points, dtype=float)
    pointed = ((pts[None, :] >= grid[starts][:, None]) & (pts[None, :] < grid[ends + 1][:, None])).any(axis=1)
    at = [centre[0] - (np.arange(1 if pointed[0] else 0, below) + 0.5) * step,
          centre[-1] + (np.arange(1 if pointed[-1] else 0, above) + 0.5) * step]
    for k in range(gap.size):  # (at most ``most`` gaps)
        m = np.arange(1 if pointed[k] else 0, pieces[k] - (1 if pointed[k + 1] else 0))
        at.append(centre[k] + (m + 0.5) * gap[k] / pieces[k])
    mids = grid[np.clip(np.round(np.concatenate(at)), 0, grid.size - 1).astype(int)]
    return np.unique(np.concatenate([[lo], mids[(mids > lo) & (mids < hi)], [hi]]))


def select_numbers(budget: ColumnBudget, labels: np.ndarray, counts: np.ndarray, delta: float, *,
                   max_categories: int, non_null: float | None,
                   non_null_sd: float = 0.0) -> tuple[list[str] | None, Selected]:
    """Partition selection over the observed values of a column of few distinct numbers (``labels``, their
    private ``counts`` going straight into the mechanism): (the kept values as text in numeric order, or None when
    fewer than two are kept or they hold under :data:`DISCRETE_SHARE` of the noisy non-null rows; the release)."""
    if labels.size == 0:
        counts = np.zeros(0, dtype=np.int64)
    idx, noisy = budget.partition(counts, delta, what="rows per observed number (few distinct numbers)")
    top = idx[:max_categories]
    held = float(np.clip(noisy[: len(top)], 0, None).sum())
    slack = RESIDUAL_SD * math.sqrt(top.size * budget.sd**2 + non_null_sd**2)  # (held and non_null are noisy)
    if top.size < 2 or held + slack < DISCRETE_SHARE * (non_null or held + 1.0):
        return None, Selected(top, np.asarray(noisy[: len(top)], dtype=float), budget.sd, [
            (f"not few distinct numbers ({top.size} values by partition selection hold about {held:.0f} rows): "
             "binned from the first fine histogram")])
    values = pd.to_numeric(pd.Series(labels[top], dtype=object), errors="coerce").to_numpy(dtype=float)
    order = np.argsort(values, kind="stable")  # in numeric order (text, if any was kept, last)
    kept = [str(x) for x in labels[top][order]]
    return kept, Selected(top[order], np.asarray(noisy[: len(top)], dtype=float)[order], budget.sd, [
        (f"few distinct numbers (isolated fine cells): categorical over its {top.size} values kept by partition "
         "selection (each decodes exactly)")])


def label_values(col, budget: ColumnBudget, delta: float, first=None, heap: float = HEAP_SHARE) -> bool:
    """Partition selection over the values of a column of few distinct numbers (``col`` a
    :class:`~dpsynth.data.discover.column.ColumnDiscovery`; the rest of its budget, :func:`select_numbers`):
    True and ``col.labels`` set when they are its values (:data:`LABELS_ALL`, and ``first``, the first fine
    histogram's noisy counts over ``col.first_grid`` and its budget, shows no rows outside the kept values'
    cells: :func:`outside`); else False, the released values that hold ``heap``/bins of the rows kept for
    :func:`label_points` (:mod:`~dpsynth.data.discover.codes`: any released value) (post-processing of the
    selection's and the histogram's noisy counts).

    The kept values' share is read against the larger of the profile's noisy non-null count and the first fine
    histogram's noisy total, as ``tied.held_most`` does: the profile's count is biased low where rows spread over
    buckets under its cut.  held-out-19's chile_plebiscite (2,700 rows): ``income``'s 7 codes read as 2,300
    non-null rows against 2,602, the 4 values kept "held 99 %", and the column became categorical with 2,500,
    125,000 and 200,000 (12 % of the rows) as ``__other__`` (1-way TV 0.145 against the hand schema's 0.028).
    Screened on 126 seen tables, seeds 2,3: 14 discoveries moved; the 9 tables they belong to, zero-config 2-way L1
    x0.987 (chile_plebiscite x0.897, nhis_2009 x0.940; worse movies x1.020, randhie x1.019, charity_mail x1.022),
    x0.998 without chile.  Counting the total's own noise (about 180 rows over 36 cells) in the slack no longer
    fixed chile."""
    labels, counts = col.profile.value_counts()
    kept, sel = select_numbers(budget, labels, counts, delta, max_categories=col.spec.max_categories,
                               non_null=col.non_null, non_null_sd=col.non_null_sd)
    noisy = np.asarray(sel.noisy, dtype=float)
    held = float(np.clip(noisy, 0, None).sum())
    slack = RESIDUAL_SD * math.sqrt(noisy.size * sel.sd**2 + col.non_null_sd**2)
    non_null = float(col.non_null or held + 1.0)
    if first is not None and col.first_grid is not None:  # the profile's count is biased low (docstring)
        non_null = max(non_null, float(np.sum(first[0])))
    if kept is not None and held + slack >= LABELS_ALL * non_null and not outside(col, kept, first, non_null):
        col.learned.extend(sel.learned)
        col.labels = kept
        col.evidence.labels, col.evidence.label_sd, col.evidence.label_counts = tuple(kept), sel.sd, noisy
        return True
    values = pd.to_numeric(pd.Series(labels[sel.idx] if labels.size else [], dtype=object),
                           errors="coerce").to_numpy(dtype=float)
    bins = col.hint.bins or col.spec.bins
    keep = np.isfinite(values) & (noisy >= heap * non_null / bins)  # (0 too: column._points skips the profile's)
    if col.integral:
        keep &= values == np.round(values)
    order = np.argsort(values[keep])
    col.label_points = PointMasses(values[keep][order], noisy[keep][order], np.zeros(int(keep.sum())),
                                   "values released by partition selection")
    col.learned.append(f"few distinct numbers? {noisy.size} values kept by partition selection hold about "
                       f"{held / non_null:.0%} of the rows: binned, {int(keep.sum())} of them as point masses")
    return False


def outside(col, kept: list[str], first, non_null: float) -> bool:
    """Whether the first fine histogram (``first``: noisy counts over ``col.first_grid`` and its budget) holds
    rows outside the cells of the ``kept`` values: the noisy sum of the support's other cells stands
    :data:`OUTSIDE_SD` sds above :data:`RESIDUAL` of the noisy non-null rows (post-processing).  The profile's
    non-null count, the share's denominator, is biased low where rows spread over buckets under its cut, so the
    kept values' share alone can pass :data:`LABELS_ALL` with a tenth of the rows left out."""
    if first is None or col.first_grid is None:
        return False
    noisy, budget = first
    grid = np.asarray(col.first_grid, dtype=float)
    found = support(noisy, budget)
    if found is None:
        return False
    at = np.searchsorted(grid, pd.to_numeric(pd.Series(kept, dtype=object), errors="coerce").to_numpy(dtype=float),
                         side="right") - 1
    other = np.ones(grid.size - 1, dtype=bool)
    other[at[(at >= 0) & (at < grid.size - 1)]] = False
    other[: found[0]] = False
    other[found[1] + 1:] = False
    rest = float(np.asarray(noisy, dtype=float)[other].sum())
    return rest > RESIDUAL * non_null + OUTSIDE_SD * budget.sd * math.sqrt(max(1, int(other.sum())))


def label_points(col, lo: float, hi: float) -> PointMasses:
    """The point masses :func:`label_values` kept, within [lo, hi] (none when it did not run)."""
    pts = getattr(col, "label_points", None)
    if pts is None:
        return PointMasses.none()
    inside = (pts.values >= lo) & (pts.values <= hi)
    return PointMasses(pts.values[inside], pts.counts[inside], pts.sds[inside], pts.source)


def points_of(col, lo: float, hi: float, integral: bool, bins: int) -> PointMasses:
    """Point masses within [lo, hi] (:mod:`dpsynth.data.discover.points`; ``col`` a
    :class:`~dpsynth.data.discover.column.ColumnDiscovery`): 0 from the profile's exact-zero cell (an integral
    column's zero spike as before; a real column's when its exact zeros hold
    :data:`~dpsynth.data.discover.heaps.HEAP_SHARE`/bins of the rows, as any heaped value: 1/bins until
    held-out-12, and taxi_trips' ``distance``, 8.2% zeros, decoded them over [0, 0.5), half past the real 0.27
    decile; zero-config 2-way L1 seeds 2-5: taxi_trips 0.0640 / 0.0805 / 0.0677 / 0.0693 → 0.0625 / 0.0670 /
    0.0600 / 0.0644; seeds 2, 3: abortion x0.990, worse randhie x1.019 and weather x1.013, one seed changed;
    geometric mean of the four tables whose schemas it changed, of 47 screened, x0.980), the public round values
    inside the first fine histogram's heavy cells from one noisy histogram of rows equal to each (when the column's
    ``_fine`` set its budget aside), or with a δ any heaped number, by partition selection (heaps.py)."""
    if col._spikes is None:
        found = label_points(col, lo, hi)
    else:
        spikes, heavy, _ = col._spikes  # (half the δ when a second heaps selection may follow: heaps.halves)
        found = ask_points(spikes, heavy, first_delta(col), col.profile, col.evidence.cells, lo=lo, hi=hi, integral=integral,
                           non_null=float(col.non_null), bins=bins)
    if col.zeros is not None and lo <= 0 <= hi and not np.any(found.values == 0):
        zeros, sd = col.zeros
        if (integral and col.zero_spike) or (not integral and col.non_null and zeros >= HEAP_SHARE * col.non_null / bins):
            found = found.with_point(0.0, zeros, sd)
    return found


def _with_nulls(budget: ColumnBudget, counts: np.ndarray, nulls: int | None, delta: float, what: str):
    """Partition selection over the observed values' ``counts`` and, when ``nulls`` (the column's private count of
    null rows) is given, the null cell as a public key (every row in one cell: the same sensitivity; its noisy
    count is always released).  Returns (released indices into ``counts``, their noisy counts, the null cell's
    noisy count and sd, or ())."""
    if nulls is None:
        idx, noisy = budget.partition(counts, delta, what=what)
        return idx, np.asarray(noisy, dtype=float), ()
    cells = np.concatenate([np.array([int(nulls)], dtype=np.int64), np.asarray(counts, dtype=np.int64)])
    idx, noisy = budget.partition(cells, delta, what=f"{what}, and the null rows (a public cell)", public=1)
    values = idx != 0
    null = float(np.asarray(noisy)[~values][0])
    return idx[values] - 1, np.asarray(noisy, dtype=float)[values], ((null, budget.sd),)


def select_categories(budget: ColumnBudget, counts: np.ndarray, delta: float, *, non_null: float | None,
                      non_null_sd: float, max_categories: int, nulls: int | None = None) -> Selected:
    """Partition selection over a categorical column's observed values (private ``counts``; with ``nulls``, the
    column's private count of null rows, the null cell too, as a public key: :attr:`Selected.nulls`).  With the
    profile's noisy non-null count: a probe with ``budget`` and half of ``delta``; when it leaves rows unexplained
    (:data:`RESIDUAL`), the answer's :attr:`Selected.again` runs the second selection (the other half of δ) with
    the budget :mod:`~dpsynth.data.discover.allot` gives it, whose answer is the column's."""
    if non_null is None:
        idx, noisy, null = _with_nulls(budget, counts, nulls, delta, "rows per observed value")
        return Selected(idx, noisy, budget.sd, nulls=null)
    probe = budget
    d_probe, d_more = split_budget(delta, [1.0, 1.0])
    idx, noisy, null = _with_nulls(probe, counts, nulls, d_probe, "rows per observed value (probe)")
    top = min(idx.size, max_categories)
    held = float(noisy[:top].sum())
    sd = math.sqrt(top * probe.sd**2 + non_null_sd**2)
    slack = RESIDUAL * non_null + RESIDUAL_SD * sd
    if non_null - held <= slack:
        return Selected(idx, noisy, probe.sd, ["partition selection with the probe's budget sufficed (the probe)"],
                        nulls=null)
    learned = [f"selection again: the probe left about {non_null - held:.0f} noisy rows out"]

    def again(more: ColumnBudget) -> Selected:
        idx, noisy, more_null = _with_nulls(more, counts, nulls, d_more, "rows per observed value")
        return Selected(idx, noisy, more.sd, learned, nulls=null + more_null)

    return Selected(idx, noisy, probe.sd, [], again, (non_null - held - RESIDUAL * non_null) / max(sd, 1e-12),
                    nulls=null)


def seen_integers(col, lo: float, hi: float) -> tuple[float, float]:
    """The bounds of a column of few integers widened to the integers of the logarithmic buckets its profile
    showed data in (:attr:`~dpsynth.data.discover.column.ColumnDiscovery.core`; post-processing of the profile), up
    to the first integer of the last one (mplsstops' precincts 1-5 got an empty 6 from the bucket [5, 7)).
    The profile's buckets below 10 are nearly one per integer (0, 1, 2, 3-4, 5-6, 7-9) and its cut is often
    lower than the fine histogram's (a few-integers stage spends little): hotels' ``children`` lost its 2 (3.5%
    of the rows), shown by the profile, when the fine histogram alone gave the bounds.  Beyond the support, the
    margin buckets of the coarse range whose profile counts alone show rows (:data:`FEW_MARGIN_SD`, :func:`_reached`)
    add their integer nearest the support (issue 27, botswana's ``idlnchld``: 7-20 hold 11.7% of its rows, in
    [7, 10) and [10, 15) at 2.0 and 1.8 sds (seed 1), which the cheap stage's cells (σ ≈ 150 per integer) did not
    show: bounds [2, 6] or [2, 7]).  Measured (zero-config discovery, 14 seen small tables with few-integer columns,
    seeds 0-5, 610 few-integer columns): 29 bounds widened, 27 of them with fewer rows outside (idlnchld 11.5% and
    14.5% → 3.7% on seeds 0-1, phone_churn's ``total_intl_calls`` 12.6% → 7.3%, nmes1988's ``hospital`` 6.0% → 2.0%,
    deliveries' items 1-2% → 0.1%), 2 flags given an empty 2 (botswana's ``radio`` and ``urban``, one seed each);
    rows outside the bounds 11.0% → 10.8% on average.  Zero-config releases (2-way L1, seeds 0-5 of botswana,
    phone_churn and resume, 0-1 of schooling, nmes1988, deliveries and email): geometric mean x0.993 (botswana
    0.189 → 0.186, phone_churn 0.199 → 0.196, resume 0.1016 → 0.1020), idlnchld's 1-way TV 0.12 and 0.17 → 0.07
    and 0.09 (seeds 0, 1); botswana's seed 2 0.184 → 0.207 (its ``urban`` given an empty 2).  The last bucket's
    further integers are kept when the rows past the bounds in it show them (:data:`LAST_SD`, ``_rest_of_last``:
    big_five's Likert items lost their 6s, 21% of a column's rows, beside the 5s in [5, 7)).  Any column's bounds
    also keep the decades its tail histogram showed beside a zero spike (``col.reach``,
    :mod:`~dpsynth.data.discover.tail`)."""
    if col.hint.lower is not None:
        return lo, hi
    if col.reach is not None:  # the decades beside a zero spike showed a tail (tail.py): the bounds keep it
        lo, hi = min(lo, col.reach[0]), max(hi, col.reach[1])
    if not col.few or col.core is None:
        return lo, hi
    first, last = math.ceil(col.core[0][0]), math.ceil(col.core[1][1]) - 1  # the integers in [core_lo, core_hi)
    last = min(last, max(first, math.ceil(col.core[1][0])))  # up to the last bucket's first integer ([5, 7): 5)
    if last < first:
        return lo, hi
    up = sorted(m for m in col.margins if m[0] >= col.core[1][1])  # (from the support out)
    down = sorted((m for m in col.margins if m[1] <= col.core[0][0]), reverse=True)
    ev = col.evidence  # the fine cells (when measured): averaged with each bucket's profile count
    fine = None if ev.cells is None or ev.cell_counts is None else (ev.cells, ev.cell_counts, ev.cell_sd)
    last = max([last, *(math.ceil(m[0]) for m in _reached(up, fine))])  # a bucket's first integer, as the support's last
    last = max(last, _rest_of_last(col, max(last, math.floor(hi))))  # its other integers, when its rows show them
    first = min([first, *(math.ceil(m[1]) - 1 for m in _reached(down, fine))])  # (its integer nearest the support)
    return min(lo, float(first)), max(hi, float(last))


def _rest_of_last(col, h: int) -> int:
    """The last integer of the profile's last support bucket (:attr:`~dpsynth.data.discover.column.ColumnDiscovery.core`)
    when the bounds end before it, at ``h``, and the rows of its integers past ``h`` stand :data:`LAST_SD` sds of
    their noise; else ``h``.  Two independent reads of those rows, averaged with inverse-variance weights: the
    bucket's profile count less the fine cells of its integers up to ``h`` (the latest fine histogram,
    ``col.evidence.cells``), and the first fine histogram's cells of its integers past ``h`` (a zoom onto the fine
    support measures only the support again).  Unit cells only.  Post-processing of noisy counts."""
    lo, hi = col.core[1]
    top = math.ceil(hi) - 1
    ev = col.evidence
    bucket = [m for m in col.margins if (m[0], m[1]) == (lo, hi)]
    if top <= h or not bucket:
        return h
    reads = []
    if ev.cells is not None and ev.cell_counts is not None and _unit_cells(ev.cells):
        got = _cells_of(ev.cells, ev.cell_counts, math.ceil(lo), h)
        if got is not None:
            reads.append((bucket[0][2] - got[0], math.sqrt(bucket[0][3] ** 2 + got[1] * ev.cell_sd**2)))
    if ev.first is not None and col.first_grid is not None and _unit_cells(col.first_grid):
        got = _cells_of(col.first_grid, ev.first[0], h + 1, top)
        if got is not None:
            reads.append((got[0], math.sqrt(got[1]) * ev.first[1]))
    if not reads:
        return h
    w = np.array([1.0 / sd**2 for _, sd in reads])
    mean = float(np.dot(w, [r for r, _ in reads]) / w.sum())
    return top if mean >= LAST_SD / math.sqrt(float(w.sum())) else h


def _unit_cells(grid: np.ndarray) -> bool:
    """Whether ``grid``'s cells are one per integer ([k - 0.5, k + 0.5))."""
    return grid.size > 1 and bool(np.all(np.diff(grid) == 1.0)) and float(grid[0]) % 1 == 0.5


def _cells_of(grid: np.ndarray, noisy: np.ndarray, a: int, b: int) -> tuple[float, int] | None:
    """(the noisy sum of the unit cells of the integers a … b, how many) when ``grid`` holds them all, else None."""
    start = float(grid[0]) + 0.5  # (the first cell's integer)
    i, j = round(a - start), round(b - start)
    if b < a or i < 0 or j >= noisy.size:
        return None
    return float(noisy[i:j + 1].sum()), j - i + 1


def _reached(buckets: list, fine=None) -> list:
    """The margin buckets (lower edge, upper edge, noisy count, sd), in order from the support out, that a column
    of few integers keeps (:func:`seen_integers`); a bucket holding no integer ([1.5, 2)) is passed over.  Each
    bucket's count is the inverse-variance average of its profile count and of the fine cells ``fine`` (edges,
    noisy counts, sd) inside it (:func:`~dpsynth.data.discover.zoom.averaged`).  The side reaches the first k
    buckets when their summed counts stand :data:`FEW_MARGIN_SD` sds of that sum for some k (the largest such k,
    less its outer buckets whose own count stands under FEW_MARGIN_NEXT sds), then each next one out while its
    own stands FEW_MARGIN_NEXT (a tail thinning outwards, beside rows already shown: botswana's ``idlnchld``,
    [7, 10) and [10, 15) at 2.0 and 1.8 sds, 2.7 summed).  Post-processing of the profile's and the fine
    histogram's noisy counts."""
    held = [m for m in buckets if math.ceil(m[0]) < m[1]]
    if not held:
        return []
    got = [None if fine is None else averaged(*fine, *m) for m in held]
    count = np.array([m[2] if g is None else g[0] for m, g in zip(held, got, strict=True)])
    sd = np.array([m[3] if g is None else g[1] for m, g in zip(held, got, strict=True)])
    passed = np.flatnonzero(np.cumsum(count) >= FEW_MARGIN_SD * np.sqrt(np.cumsum(sd**2)))
    own = count >= FEW_MARGIN_NEXT * sd
    k = int(passed[-1]) + 1 if passed.size else 0
    while k and not own[k - 1]:  # (a sum passing on its inner buckets: the empty outer ones are not kept)
        k -= 1
    while k and k < len(held) and own[k]:
        k += 1
    return held[:k]
