"""The tail beside a spike at 0: a numeric column whose profile shows mostly exact zeros and a coarse range within
a decade of 0 may hold a tail the profile's buckets were too thin to show (issue 27, credit's ``Debt``: 82% zeros
and 780 amounts from 100 to 30,000 spread over fifteen logarithmic buckets, none past the profile's cut, so the
column became {0}; randhie's ``inpdol``, 91-97% zeros, the same).

One noisy histogram over public decades (:data:`DECADES`: cells [1, 10), [10, 100), … and their mirrors, with
[0, 1) between; each finite number in exactly one cell, so the sensitivity is that of any histogram), with
:data:`TAIL_SHARE` of the column's stage budget, asked only when the profile's outputs say so (:func:`wanted`:
post-processing).  A decade holds ten to fifteen of the profile's buckets, so a tail that no bucket showed can pass
the cut as one cell; :func:`~dpsynth.data.discover.noise.support` (rings of doubling width for thinner tails) gives
the decades with data, and each decade just past them whose count passes the lower cut of one cell a side
(:func:`beside`), and the coarse range grows to them; the final bounds keep them
(:func:`~dpsynth.data.discover.values.seen_integers`: the fine histogram's noise may hide a tail its cells share).  When it grows past a decade the fine cells are
logarithmic from the first decade with data (the zeros have the cell below), and the column is no longer one of
few integers (its stage keeps the rest of its budget).

The first decade is then resolved per integer: 0/1 flags and small counts land here when the profile's bucket of
their 1s misses its cut, and the decade [1, 10) alone kept the whole decade as bounds (issue 27, email's ``spam``
released with values 0 to 10 on 12 of 30 seeds; keeping the decade's first integer alone lost the small counts'
real 2-9).  When the data's first or last decade is [1, 10) or [−10, −1) and the column is integral, one more
noisy histogram (:data:`UNIT_SHARE` of the stage) over the public cells of the integers ±1 … ±9
(:data:`UNITS`, cells [k − ½, k + ½), with the zeros and the rest in the outer cells: a histogram) gives, by
:func:`~dpsynth.data.discover.noise.support` over that side's nine cells, the last integer with data; the bounds
stop there.  When no cell or window of cells passes, the integer next to 0 (the decade had rows; they are nearest
0 for a flag).  A decade past the first keeps its last integer as the bound (99 for [10, 100))."""

from __future__ import annotations

import math

import numpy as np

from dpsynth.data.discover.noise import DEFAULT_RANGE, ColumnBudget, support

__all__ = ["BESIDE_BLOCKS", "DECADES", "TAIL_SHARE", "TAIL_TOP", "UNITS", "UNIT_SHARE", "beside", "probe", "reached",
           "wanted"]

TAIL_SHARE = 0.3
"""Share of the column's stage budget (after its profile) for the histogram over decades, when asked."""

TAIL_TOP = 10.0
"""The histogram is asked when the profile shows a zero spike, its support is 0's bucket alone and its coarse range
lies within [−TAIL_TOP, TAIL_TOP] (a range that already reaches past a decade found its tail in the profile)."""

BESIDE_BLOCKS = 2
"""The decade just past the decades' support on each side holds data when its noisy count passes the cut of
BESIDE_BLOCKS blocks (one a side, at :data:`~dpsynth.data.discover.noise.BUCKET_MISS`: 3.3 noise sds under zCDP),
not that of all the cells (3.9 sds over the 19 decades), and so each next one out (:func:`beside`): a tail beside
rows already shown is where data is expected.  Issue 27, doctor_visits_aus' ``hospdays`` (86.5% zeros, 460 rows
in 1-7, 239 in 10-80, cells at σ ≈ 56): the decade [10, 100) stood at 205 under the cut of 218 on seed 3, and the
bounds stopped at 2 (1-way TV 0.098 against 0.030 on seed 2, whose decade passed); with this rule the bounds reach
99 (that column's schema floor, a perfect model's 1-way TV, 0.096 → 0.050) and the table's zero-config 2-way L1 on
seed 3 goes 0.170 → 0.163 (seed 2 unchanged).  An empty decade beside passes with probability 0.5% a side."""

_POWERS = 10.0 ** np.arange(0, 9)
DECADES = np.concatenate([[DEFAULT_RANGE[0]], -_POWERS[::-1], [0.0], _POWERS, [DEFAULT_RANGE[1]]])
"""Public cell edges: (−∞, −10⁸), …, [−10, −1), [−1, 0), [0, 1), [1, 10), …, [10⁸, ∞) (the outer cells end at the
public default range)."""

UNIT_SHARE = 0.3
"""Share of the column's stage budget (after its profile) for the histogram over the integers of the first decade,
when the decades found data there (asked after the decades' histogram; the stage keeps the rest)."""

_HALVES = np.arange(0.5, 10.0)
UNITS = np.concatenate([[DEFAULT_RANGE[0]], -_HALVES[::-1], _HALVES, [DEFAULT_RANGE[1]]])
"""Public cell edges: (−∞, −9.5), [−9.5, −8.5), …, [−1.5, −0.5), [−0.5, 0.5), [0.5, 1.5), …, [8.5, 9.5),
[9.5, ∞): a cell per integer −9 … 9, the rest in the outer cells."""


def wanted(col) -> bool:
    """Whether the decades are asked (profile outputs and hints only): a zero spike, a coarse range within
    [−TAIL_TOP, TAIL_TOP] and no bucket but 0's in the profile's support (0/1 flags and small counts, whose
    profile shows their 1s, are not asked: nothing in their decades would move their bounds)."""
    return (col.kind == "numeric" and col.zero_spike and col.bounds is not None and col.hint.lower is None
            and -TAIL_TOP <= col.bounds[0] and col.bounds[1] <= TAIL_TOP and col.core is not None
            and col.core[0][0] <= 0.0 < col.core[1][1] <= 1e-6)


def probe(col, budget: ColumnBudget) -> ColumnBudget:
    """For a column :func:`wanted` says may hide a tail: the histogram over :data:`DECADES` with
    :data:`TAIL_SHARE` of ``budget``; widens ``col.bounds`` to the decades with data and returns the rest of the
    budget (``budget`` itself, nothing spent, when not asked)."""
    if not wanted(col):
        return budget
    mine, rest = budget.split(TAIL_SHARE)
    noisy = mine.histogram(col.profile.cell_counts(DECADES), f"rows per public decade ({DECADES.size - 1} cells: "
                           "the tail beside the zero spike)")
    found = support(np.asarray(noisy, dtype=float), mine)
    if found is None:
        return rest
    found = beside(np.asarray(noisy, dtype=float), found, mine, col.learned)
    lo, hi = col.bounds
    new_lo, new_hi = min(lo, float(DECADES[found[0]])), max(hi, float(DECADES[found[1] + 1]))
    if (new_lo, new_hi) == (lo, hi):
        col.learned.append("no tail past the coarse range (noisy decades)")
        return rest
    if col.integral:  # the bounds stop at the last integer with data, not at the first decade's far edge
        rest, (new_lo, new_hi) = _integers(col, rest, new_lo, new_hi, noisy, mine.sd)
    col.bounds = col.reach = (new_lo, new_hi)
    if col.integral:  # (an exclusive edge: the last integer below it, where the fine cells end too)
        col.bounds = col.reach = (new_lo, float(math.ceil(new_hi) - 1))
    if col.core is not None:  # the profile's support reaches the decades found (zoom.widen keeps a thin tail)
        first, last = col.core
        if new_lo < lo:  # (a decade, or the integer the first decade was cut at)
            first = (new_lo, float(DECADES[found[0] + 1]) if new_lo == DECADES[found[0]] else new_lo + 1.0)
        if new_hi > hi:
            last = (float(DECADES[found[1]]) if new_hi == DECADES[found[1] + 1] else new_hi - 1.0, new_hi)
        col.core = (first, last)
    col.learned.append(f"tail beside the zero spike: coarse range [{new_lo:g}, {new_hi:g}) (noisy decades)")
    bins = col.hint.bins or col.spec.bins
    col.few = bool(col.integral) and new_hi - new_lo <= 2 * bins
    if new_hi > TAIL_TOP and col.log_from is None:  # log cells from the first positive decade past the cut
        past = np.flatnonzero((noisy >= mine.block_cut(1, noisy.size)) & (DECADES[:-1] >= 1.0))
        col.log_from = float(DECADES[past[0]]) if past.size else 1.0
    return rest


def beside(noisy: np.ndarray, found: tuple[int, int], budget: ColumnBudget,
           notes: list | None = None) -> tuple[int, int]:
    """The decades' support ``found`` (first and last cell of :data:`DECADES`, noisy counts ``noisy`` measured
    with ``budget``) widened by each decade just past it, outwards while it passes the cut of
    :data:`BESIDE_BLOCKS` blocks (post-processing; the outer cells past the public powers are never reached
    this way); each one reached is told in ``notes``."""
    cut = budget.block_cut(1, BESIDE_BLOCKS)
    a, b = found
    while b + 2 < noisy.size and noisy[b + 1] >= cut:
        b += 1
        if notes is not None:
            notes.append(f"the decade [{DECADES[b]:g}, {DECADES[b + 1]:g}) beside the decades' support holds rows "
                         "(its noisy count past the cut of one cell a side)")
    while a > 1 and noisy[a - 1] >= cut:
        a -= 1
        if notes is not None:
            notes.append(f"the decade [{DECADES[a]:g}, {DECADES[a + 1]:g}) beside the decades' support holds rows "
                         "(its noisy count past the cut of one cell a side)")
    return a, b


def reached(found: tuple[int, int] | None, grid: np.ndarray, reach: tuple[float, float] | None):
    """A fine histogram's support ``found`` (first and last cell of ``grid``) made to reach the bounds ``reach``
    the noisy decades found beside a zero spike (:func:`probe`; None: not asked), post-processing.  The decades
    hold ten to fifteen fine cells each, so a tail that passed their cut is often under every fine cell's: the
    support stopped at the zero cell, a zoom onto it set the bounds to 0 and the tail came back through the
    reach as one bin (randhie's ``mentvis``, 3.5% of its rows in 1-99: edges [0, 0.5, 99])."""
    if found is None or reach is None:
        return found
    first = max(0, int(np.searchsorted(grid, reach[0], side="right")) - 1) if reach[0] <= -1.0 else found[0]
    last = min(grid.size - 2, int(np.searchsorted(grid, reach[1], side="left")) - 1) if reach[1] >= 1.0 else found[1]
    return min(found[0], first), max(found[1], last)  # (a side the decades did not widen keeps its support)


def _integers(col, budget: ColumnBudget, lo: float, hi: float, decades: np.ndarray,
              decade_sd: float) -> tuple[ColumnBudget, tuple[float, float]]:
    """For an integral column whose decades (noisy counts ``decades``, noise sd ``decade_sd``) found data in
    [1, 10) (or [−10, −1)) and not past it: the histogram over :data:`UNITS` with :data:`UNIT_SHARE` of the stage
    (``budget`` is what the decades left); returns (the rest of the budget, the bounds: the side's first decade
    cut at its last integer with data, :func:`_last`; an exclusive edge)."""
    up, down = hi == 10.0, lo == -10.0
    if not (up or down):
        return budget, (lo, hi)
    mine, rest = budget.split(UNIT_SHARE / (1.0 - TAIL_SHARE))
    noisy = np.asarray(mine.histogram(col.profile.cell_counts(UNITS), f"rows per integer −9 … 9 ({UNITS.size - 1} "
                                      "public cells: the first decade beside the zero spike)"), dtype=float)
    ones = int(np.flatnonzero(UNITS[:-1] == 0.5)[0])  # the cell of 1; −1's is ones − 2
    if up:
        decade = float(decades[np.flatnonzero(DECADES[:-1] == 1.0)[0]])
        hi = 2.0 + _last(noisy[ones:ones + 9], decade, decade_sd, mine)
    if down:
        decade = float(decades[np.flatnonzero(DECADES[:-1] == -10.0)[0]])
        lo = -1.0 - _last(noisy[ones - 10:ones - 1][::-1], decade, decade_sd, mine)
    col.learned.append(f"integers of the first decade with data: [{lo:g}, {hi:g}) (noisy counts per integer)")
    return rest, (lo, hi)


def _last(units: np.ndarray, decade: float, decade_sd: float, budget: ColumnBudget) -> int:
    """The last integer with data (0 for ±1, … 8 for ±9) from the noisy counts of the integers ±1 … ±9 outward
    (``units``, measured with ``budget``) and the decade's noisy count (post-processing): the farthest of the
    support of ``units`` and the farthest k whose remainder, the decade's count less the cells of ±1 … ±k,
    passes the cut of its noise (sd of the decade's and k cells' noises; eight such tests at the cut's miss rate
    together).  Rows spread over the decade pass as a remainder though no cell or window of cells passes
    (email's ``dollar``: 548 rows over 1-9, none over 151, cells at σ ≈ 70); a flag's remainder is noise.  0
    when neither shows anything (the decade's rows are nearest 0 then)."""
    found = support(units, budget)
    k = np.arange(1, units.size)
    left = decade - np.cumsum(units)[:-1]  # [k − 1]: the decade's rows past ±k
    sd = np.sqrt(decade_sd**2 + k * budget.sd**2)
    unit = 1.0 if budget.zcdp else math.sqrt(2.0)  # (a Laplace of the same sd has the heavier tail: a safe cut)
    cut = np.array([ColumnBudget.with_scale(float(x) / unit, budget).block_cut(1, k.size) for x in sd])
    passed = np.flatnonzero(left >= cut)
    return max(found[1] if found is not None else 0, int(passed[-1]) + 1 if passed.size else 0)
