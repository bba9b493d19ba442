"""Values on a lattice: an integral column whose values are all multiples of a step (knots in fives, coins in
cents of 25), found privately and honoured by the discovered bins.

One noisy histogram (:data:`LATTICE_SHARE` of the column's numeric budget) over the public candidate steps
:data:`STEPS` (1, 2, 5, 10, 20, 25, 50, 100, … : 2^a·5^b, closed under least common multiples): each nonzero
integer of the column is counted once, in the cell of the largest candidate dividing it
(:meth:`~dpsynth.data.profile.ColumnProfile.step_counts`; a row is in at most one cell, so the sensitivity is
that of any histogram).  Because the candidates are closed under least common multiples, a row is a multiple of
a candidate s exactly when its cell's step is a multiple of s, so the share of rows on multiples of s is a sum
of cells (post-processing).  Zeros lie on every lattice and are left out; cells under the cut all empty cells
stay under with probability 99% count as 0.  The largest s > 1 whose cells hold :data:`LATTICE_MOST` of the
noisy total is the column's ``step``; the total is at least :data:`LATTICE_SEEN` of the profile's noisy count of
nonzero numbers, so cells that pass the cut but hold a minority of the rows (credit's ``Assets``: the 2000-cell
of 4000, 6000, 8000 past the cut, 3000, 3500, 5000, … each under it) do not make a lattice by themselves.

Steps with a factor 3 (months in sixes or twelves, hours in 24s) are asked by a second histogram of two cells
(:data:`THREE_SHARE`, asked when a round step s > 1 was found): the nonzero integers that are multiples of 3 and
those that are not.  When multiples of 3
hold :data:`LATTICE_MOST` of its noisy total, the step is three times the round one (credit's ``Time``, loan terms
of 6 to 72 months: round step 2, so 6).  A separate histogram rather than more candidates in the first: cells such
as 15, 30, 60, 300 would split the round steps' rows into cells each under the cut.  A column whose profile shows fewer than :data:`LATTICE_ROWS` times the
histogram's cut in noisy nonzero rows is not asked (post-processing of the profile; nothing is spent).

The discovered spec then puts its edges halfway between multiples of the step (:func:`on_lattice`), so every
bin holds at least one multiple and no multiple is split, and decoding (``discretize`` and ``fine``) draws
multiples of the step only.  A value off the lattice (at most about a tenth of the rows) is encoded in the bin
of its nearest multiple and decoded on the lattice.
"""

from __future__ import annotations

import math

import numpy as np

from dpsynth.data.discover.noise import ColumnBudget
from dpsynth.data.schema import point_values

__all__ = ["LATTICE_FEW", "LATTICE_MOST", "LATTICE_ROWS", "LATTICE_SEEN", "LATTICE_SHARE", "OFF_SDS", "OFF_SHARE",
           "STEPS", "THREE_SHARE", "ask", "off_lattice", "on_lattice", "refuted", "settle", "step_of"]

LATTICE_SHARE = 0.05
"""Share of an integral numeric column's budget (after its profile) spent on the histogram of candidate steps."""

LATTICE_MOST = 0.9
"""A step is the column's when the noisy counts of its multiples hold at least this share of the nonzero
integers' noisy total."""

LATTICE_FEW = 0.98
"""Between bounds holding at most 2·bins integers (each integer has a bin of its own without a lattice), a step is
kept only when its multiples' noisy counts hold LATTICE_FEW of the nonzero integers (:func:`settle`): there the
lattice saves no bin and decodes every row off it onto it.  Until session 13 :data:`LATTICE_MOST` served there too:
held-out-13's nhis_2009 ``yedu`` (years of education 0-18, 94.6% even: 12, 14, 16, 18) got step 2 on both seeds
of the closing check and decoded its 400 nines, 355 elevens and every other odd year as even (1-way TV 0.058 and
0.064 against the hand schema's 0.005).  Zero-config 2-way L1, seeds 2-3, the 2 tables of 82 screened whose
schemas this changed: nhis_2009 0.065 / 0.064 → 0.053 / 0.051, weather 0.172 / 0.172 → 0.162 / 0.156 (``visib``,
0-10 miles, lost its odd miles to step 2)."""

LATTICE_SEEN = 0.5
"""The share's denominator is at least LATTICE_SEEN of the profile's noisy nonzero numbers (non-null less the exact
zeros): when the cells past the cut hold fewer rows than that, the rows under the cut could lie anywhere.  Issue 27:
credit's ``Assets`` (tens of steps each under the cut, one cell past it) got step 2000 from 30% of its rows."""

LATTICE_ROWS = 6
"""The step histogram is asked only when the profile's noisy count of nonzero numbers (non-null less its noisy
exact zeros; the histogram counts nonzero integers only) is at least LATTICE_ROWS times its cut (fewer rows could not show a lattice above the noise; the budget is left to the fine histograms).  A lattice
is only as good as the cells that would refute it: at r times the cut, a cell of non-multiples holding a quarter
of the rows stands at r/4 cuts, and falls under the cut (so it counts as 0 and the step "divides 100%") with
probability P(Z < -(r/4 - 1)·c), c the cut in sds (about 3.9): 50% at r = 4, 2.5% at 6.  Issue 27, at 4:
schooling's ``age76`` (24-34, 3,010 rows, r 4.2) got step 2 on one seed of four when its odd ages' cell (930 rows)
fell under the cut, and decoded only even ages (1-way TV 0.44); a sweep of every seen table's discovery (seeds
0-3) found 13 such false steps at r 1.3-5.5 (true share of multiples 0.36-0.78: ``ed76``, ``idlnchld``,
city_weather's visibilities on every seed, storms' ``hurricane_force_diameter`` step 20) and the true steps of
small tables at r 7.4 and more (ucla_courses' years, credit's loan terms, stackoverflow's company sizes).  The
count is of nonzero rows: phone_churn's ``number_vmail_messages`` (72% zeros, 5,000 rows) was asked at 6 times
the cut of all its rows and got step 2 from the nonzero ones at 1.8 (true share 0.49)."""


THREE_SHARE = 0.02
"""Share of the column's numeric budget (after the step histogram's) spent on the two-cell histogram of multiples of
3 among the nonzero integers (the factor 3 of a step)."""

THREES = np.array([1.0, 3.0])
"""The candidate steps of the second histogram: each nonzero integer in the cell of 3 when 3 divides it, else 1."""


def _candidates(top: float = 1e6) -> np.ndarray:
    """2^a·5^b for the round numbers {1, 2, 2.5, 5}·10^k up to ``top``, closed under least common multiples."""
    base = {int(m * 10**k) for k in range(int(math.log10(top)) + 1) for m in (1, 2, 2.5, 5)
            if float(m * 10**k).is_integer() and m * 10**k <= top}
    while True:
        more = {math.lcm(a, b) for a in base for b in base if math.lcm(a, b) <= top} - base
        if not more:
            return np.array(sorted(base), dtype=float)
        base |= more


STEPS = _candidates()
"""The public candidate steps (ascending, 1 first)."""


def step_of(noisy: np.ndarray, budget: ColumnBudget, nonzero: float = 0.0,
            steps: np.ndarray = STEPS) -> tuple[float | None, float]:
    """(the largest candidate step s > 1 whose multiples' noisy cells hold :data:`LATTICE_MOST` of the total,
    or None; that share, or the share of the best s > 1).  The total is the cells past the cut, at least
    :data:`LATTICE_SEEN` of ``nonzero`` (the profile's noisy count of nonzero numbers).  Post-processing of the
    noisy histogram and the profile (a step histogram's noisy total, a sum of its noise over all its cells, was
    tried as a lower bound too: it lost step 5 of tests/data/test_discover_lattice.py's wind)."""
    kept = np.where(noisy >= budget.block_cut(1, noisy.size), noisy, 0).astype(float)
    total = max(float(kept.sum()), LATTICE_SEEN * float(nonzero))
    if total <= 0:
        return None, 0.0
    multiple = np.fmod(steps[None, :], steps[:, None]) == 0  # [s, c]: cell c's step is a multiple of s
    share = (multiple * kept[None, :]).sum(axis=1) / total
    on = np.flatnonzero((share >= LATTICE_MOST) & (steps > 1))
    if on.size == 0:
        return None, float(share[1:].max(initial=0.0))
    return float(steps[on[-1]]), float(share[on[-1]])


OFF_SDS = 3.0
"""Between bounds holding few integers (:func:`settle`), a step is dropped when the first fine histogram's cells
of one integer each that the step does not divide sum, noisy and unclipped, to OFF_SDS sds of that sum
(:func:`off_lattice`; on a true lattice those cells hold noise only and pass with probability 0.13 %, and the column
then gets one bin per integer, as without a step).  :func:`step_of` reads a thin histogram (:data:`LATTICE_SHARE`)
and counts its cells under the cut as 0, so rows off the lattice in a cell under the cut "divide 100 %":
held-out-14's infant_pneumonia ``chldage`` (months 1-12, 67.6 % at 12, 16.5 % odd: its odd cell, 460 rows, noisy
357 against a cut near 530) got step 2 on seed 3 and decoded every odd month as even, while its fine cells of one
month each held the odd months' 573 rows at about 6 sds."""


OFF_SHARE = 0.05
"""...and hold OFF_SHARE of the noisy rows in the bounds: a few rows off a lattice cost less on it than the noise of a
bin per integer costs (storms' ``hour``: 97.4 % at 0, 6, 12, 18 and 2.6 % spread over the other hours, 2-way L1
seed 3 0.113 with step 6, 0.118 with a bin per hour)."""


def off_lattice(grid: np.ndarray | None, first, step: float | None, lo: float, hi: float) -> bool:
    """Whether the first fine histogram (cells ``grid``, ``first`` = (noisy counts, sd)) has cells of one integer
    each in [``lo``, ``hi``] and those of the integers ``step`` does not divide sum to :data:`OFF_SDS` sds of that
    sum and :data:`OFF_SHARE` of the cells' rows (post-processing).  False when the cells are wider (the step histogram decided alone)."""
    if step is None or grid is None or first is None:
        return False
    g = np.asarray(grid, dtype=float)
    noisy, sd = np.asarray(first[0], dtype=float), float(first[1])
    k = np.ceil(g[:-1])  # the integer a cell of width 1 holds
    inside = (k >= lo) & (k <= hi)
    if not inside.any() or float(np.diff(g)[inside].max()) > 1.0:
        return False
    off = inside & (np.fmod(k, float(step)) != 0)
    if not off.any():
        return False
    rows = float(noisy[off].sum())
    return rows >= OFF_SDS * sd * math.sqrt(int(off.sum())) and \
        rows >= OFF_SHARE * float(np.clip(noisy[inside], 0, None).sum())


def ask(col, budget: ColumnBudget, kind, integral) -> tuple[ColumnBudget, float | None]:
    """For an integral numeric column without a ``step`` hint: the histogram of candidate steps with
    :data:`LATTICE_SHARE` of ``budget``; returns (the rest of the budget, the step or None).  A ``step`` hint
    is public: it is the answer, at no cost (``step: 1`` on an integral column: no lattice)."""
    if col.hint.step is not None and kind == "numeric":
        col.learned.append(f"step {col.hint.step:g} (hint)")
        return budget, None if integral and col.hint.step == 1 else col.hint.step
    if kind != "numeric" or not integral:
        return budget, None
    mine, rest = budget.split(LATTICE_SHARE)
    nonzero = (col.non_null or 0.0) - (col.zeros[0] if col.zeros is not None else 0.0)  # profile outputs
    if col.non_null is not None and nonzero < LATTICE_ROWS * mine.block_cut(1, STEPS.size):
        col.learned.append(f"no step asked: {nonzero:.0f} noisy nonzero rows are under {LATTICE_ROWS}× the step "
                           "histogram's cut")
        return budget, None
    noisy = mine.histogram(col.profile.step_counts(STEPS), "nonzero integers per largest public step dividing "
                           f"them ({STEPS.size} cells)")
    step, share = step_of(noisy, mine, nonzero)
    col.step_share = share  # (settle: a few integers' lattice must hold nearly every row)
    if step is not None:  # a round step: is it times 3? (asked only then: post-processing decides)
        threes, rest = rest.split(THREE_SHARE / (1.0 - LATTICE_SHARE))
        by3 = threes.histogram(col.profile.step_counts(THREES), "nonzero integers that are multiples of 3 or not "
                               "(2 cells)")
        if step_of(by3, threes, nonzero, THREES)[0] is not None:  # the factor 3 (post-processing)
            step = 3.0 * step
    if step is None:
        col.learned.append(f"no lattice: no step > 1 divides {LATTICE_MOST:.0%} of the nonzero integers "
                           f"(noisy counts; at most {share:.0%})")
    else:
        col.learned.append(f"values on a lattice: step {step:g} divides about {share:.0%} of the nonzero integers "
                           "(noisy counts)")
    return rest, step


def settle(col, spec: dict, bins: int) -> dict:
    """The column's discovered ``spec`` put on its lattice (:func:`on_lattice`), unless its bounds hold at most
    2·bins integers and the step's noisy share is under :data:`LATTICE_FEW` (post-processing): then one bin per
    integer, as without a step, so the rows off the lattice keep their values (a hinted step is public: kept)."""
    step = getattr(col, "step", None)
    if step is None or col.hint.step is not None or spec.get("type") != "numeric" or "edges" not in spec:
        return on_lattice(spec, step, bins)
    e = np.asarray(spec["edges"], dtype=float)
    share = float(getattr(col, "step_share", 1.0))
    few = math.floor(e[-1]) - math.ceil(e[0]) + 1 <= 2 * bins
    if few and share < LATTICE_FEW:
        col.learned.append(f"no lattice after all: step {step:g} holds about {share:.0%} of the nonzero integers, "
                           f"under {LATTICE_FEW:.0%}, and the bounds hold few integers (one bin each)")
        col.step = None
        return spec
    if few and off_lattice(getattr(col, "first_grid", None), getattr(col.evidence, "first", None), step,
                           float(e[0]), float(e[-1])):
        col.learned.append(f"no lattice after all: the fine cells of integers off step {step:g} hold rows "
                           f"({OFF_SDS:g} sds), and the bounds hold few integers (one bin each)")
        col.step = None
        return spec
    return on_lattice(spec, step, bins)


def on_lattice(spec: dict, step: float | None, bins: int) -> dict:
    """A discovered numeric spec (edges, integer) put on the lattice of ``step`` (post-processing): bounds at the
    outermost multiples inside them, one bin per multiple when at most 2·bins of them, else each inner edge moved
    to the nearest midpoint between multiples (a point bin on a multiple becomes that multiple's bin; one off
    the lattice is dropped), so no bin is empty and none splits a multiple.  ``step`` None: unchanged."""
    if step is None or spec.get("type") != "numeric" or "edges" not in spec:
        return spec
    e = np.asarray(spec["edges"], dtype=float)
    lo, hi = math.ceil(e[0] / step) * step, math.floor(e[-1] / step) * step
    if hi <= lo:  # at most one multiple between the bounds (a false step from noise): not worth a lattice
        return spec
    half = step / 2.0
    if (hi - lo) / step + 1 <= 2 * bins:
        edges = np.arange(lo, hi + step / 2, step) - half
        edges = np.append(edges, hi + half)
    else:
        pts = point_values(e)
        pts = pts[np.fmod(pts, step) == 0]
        inner = e[1:-1][~np.isin(e[1:-1], point_values(e))]
        mids = (np.floor(inner / step) + 0.5) * step  # the nearest midpoint (just above the multiple below)
        edges = np.concatenate([[lo - half, hi + half], mids, pts - half, pts + half])
        edges = np.unique(edges[(edges >= lo - half) & (edges <= hi + half)])
    out = dict(spec)
    out["edges"] = [int(x) if float(x).is_integer() else float(x) for x in edges]
    out["step"] = int(step) if float(step).is_integer() else float(step)
    return out


def refuted(col, grid: np.ndarray, noisy: np.ndarray, budget: ColumnBudget) -> bool:
    """For an integral column's first fine histogram (``noisy`` over ``grid``, measured with ``budget``) whose
    cells are wider than one integer: True when it may hold few distinct integers of its own rather than
    multiples of its step (post-processing; the caller asks partition selection).  With no step, True; with a
    step, True only when a cell past the cut holds no multiple of it, which refutes the lattice, and then the
    step is dropped (``col.step`` None).  Issue 27, stackoverflow's ``CompanySizeNumber`` (1, 10, 20, 100, …,
    10,000): its 1 and 10 (17% of the rows) fell under the step histogram's cut, so step 20 "divided 100%" and
    the bounds moved up to 20; a lattice confirmed by every heavy cell (loan terms in sixes) stays."""
    if float(np.diff(grid).max()) <= 1 or col.hint.step is not None:
        return False  # one cell per integer: few integers get a bin each already; a hinted step is public
    step = getattr(col, "step", None)  # (set by the column's stage from :func:`ask`)
    if step is None:
        return True
    heavy = np.flatnonzero(noisy >= budget.block_cut(1, noisy.size))
    first, end = np.ceil(grid[heavy] / step), np.ceil(grid[heavy + 1] / step)  # multiples k·step in [a, b)
    if not np.any(end <= first):
        return False
    col.step = None
    col.learned.append(f"no lattice after all: a fine cell past the cut holds no multiple of {step:g}")
    return True
