"""The tail beside a spike at 0: a numeric column whose profile shows mostly exact zeros and a coarse range within
a decade of 0 may hold a tail the profile's buckets were too thin to show (issue 27, credit's ``Debt``: 82% zeros
and 780 amounts from 100 to 30,000 spread over fifteen logarithmic buckets, none past the profile's cut, so the
column became {0}; randhie's ``inpdol``, 91-97% zeros, the same).

One noisy histogram over public decades (:data:`DECADES`: cells [1, 10), [10, 100), … and their mirrors, with
[0, 1) between; each finite number in exactly one cell, so the sensitivity is that of any histogram), with
:data:`TAIL_SHARE` of the column's stage budget, asked only when the profile's outputs say so (:func:`wanted`:
post-processing).  A decade holds ten to fifteen of the profile's buckets, so a tail that no bucket showed can pass
the cut as one cell; :func:`~dpsynth.data.discover.noise.support` (rings of doubling width for thinner tails) gives
the decades with data, and the coarse range grows to them; the final bounds keep them
(:func:`~dpsynth.data.discover.values.seen_integers`: the fine histogram's noise may hide a tail its cells share).  When it grows past a decade the fine cells are
logarithmic from the first decade with data (the zeros have the cell below), and the column is no longer one of
few integers (its stage keeps the rest of its budget)."""

from __future__ import annotations

import numpy as np

from dpsynth.data.discover.noise import DEFAULT_RANGE, ColumnBudget, support

__all__ = ["DECADES", "TAIL_SHARE", "TAIL_TOP", "probe", "wanted"]

TAIL_SHARE = 0.3
"""Share of the column's stage budget (after its profile) for the histogram over decades, when asked."""

TAIL_TOP = 10.0
"""The histogram is asked when the profile shows a zero spike, its support is 0's bucket alone and its coarse range
lies within [−TAIL_TOP, TAIL_TOP] (a range that already reaches past a decade found its tail in the profile)."""

_POWERS = 10.0 ** np.arange(0, 9)
DECADES = np.concatenate([[DEFAULT_RANGE[0]], -_POWERS[::-1], [0.0], _POWERS, [DEFAULT_RANGE[1]]])
"""Public cell edges: (−∞, −10⁸), …, [−10, −1), [−1, 0), [0, 1), [1, 10), …, [10⁸, ∞) (the outer cells end at the
public default range)."""


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
    lo, hi = col.bounds
    new_lo, new_hi = min(lo, float(DECADES[found[0]])), max(hi, float(DECADES[found[1] + 1]))
    if (new_lo, new_hi) == (lo, hi):
        col.learned.append("no tail past the coarse range (noisy decades)")
        return rest
    col.bounds = col.reach = (new_lo, new_hi)
    if col.core is not None:  # the profile's support reaches the decades found (zoom.widen keeps a thin tail)
        first, last = col.core
        if new_lo < lo:
            first = (float(DECADES[found[0]]), float(DECADES[found[0] + 1]))
        if new_hi > hi:
            last = (float(DECADES[found[1]]), float(DECADES[found[1] + 1]))
        col.core = (first, last)
    col.learned.append(f"tail beside the zero spike: coarse range [{new_lo:g}, {new_hi:g}) (noisy decades)")
    bins = col.hint.bins or col.spec.bins
    col.few = bool(col.integral) and new_hi - new_lo <= 2 * bins
    if new_hi > TAIL_TOP and col.log_from is None:  # log cells from the first positive decade past the cut
        past = np.flatnonzero((noisy >= mine.block_cut(1, noisy.size)) & (DECADES[:-1] >= 1.0))
        col.log_from = float(DECADES[past[0]]) if past.size else 1.0
    return rest
