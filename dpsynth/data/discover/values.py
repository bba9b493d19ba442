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

from dpsynth.data.discover.noise import ColumnBudget
from dpsynth.privacy.accountant import split_budget

__all__ = ["DISCRETE_RUNS", "DISCRETE_SHARE", "DISCRETE_SPAN", "FEW_MARGIN_NEXT", "FEW_MARGIN_SD", "PROBE_SHARE", "RESIDUAL",
           "Selected", "few_distinct", "seen_integers", "select_categories", "select_numbers"]

DISCRETE_SHARE, DISCRETE_RUNS, DISCRETE_SPAN = 0.9, 0.6, 0.5
"""A fractional column whose fine cells past the cut hold DISCRETE_SHARE of its noisy numbers, are at most
``max_categories`` and at most DISCRETE_SPAN of its support's cells, and lie mostly apart (runs of adjacent cells at
least DISCRETE_RUNS of them) may hold few distinct numbers (codes such as 0.0, 4.5, 14.5, …, 100.0; logs of a
family size, 0, 0.69, 1.10, …, 2.64, a tenth apart): the rest of its budget goes to partition selection over its
values, and when the kept values hold DISCRETE_SHARE of its numbers it is categorical (each value decodes exactly)
instead of binned.  DISCRETE_SPAN was a quarter until issue 27's randhie (``lfam``: 14 values, 8 cells past the
cut in a support of 21 cells of 0.1: binned, every synthetic value between two real ones); a continuous column's
cells past the cut are adjacent (one run), which the runs rule refuses whatever the span."""

FEW_MARGIN_SD, FEW_MARGIN_NEXT = 2.0, 1.0
"""A column of few integers keeps the integers of the margin buckets of its coarse range
(:func:`~dpsynth.data.discover.coarse.margins`) whose profile counts alone show rows (:func:`seen_integers`): the
first beside the support at FEW_MARGIN_SD sds, each next one out at FEW_MARGIN_NEXT (then the counts summed from
the support stand at least 2.8 sds).  A lower bar than the fine support's (:data:`~dpsynth.data.discover.zoom.MARGIN_SD`
of the profile and the fine cells averaged), because a few-integers stage spends little (its cells' noise swamps a
tail of a few percent) and a false bucket only adds an integer or two whose bins hold noise near 0 (an empty first
bucket passes with probability about 0.023; measured on a table with no rows below its support, 1 of 40 seeds)."""

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


def select_categories(budget: ColumnBudget, counts: np.ndarray, delta: float, *, non_null: float | None,
                      non_null_sd: float, max_categories: int) -> Selected:
    """Partition selection over a categorical column's observed values (private ``counts``).  With the profile's
    noisy non-null count: a probe with ``budget`` and half of ``delta``; when it leaves rows unexplained
    (:data:`RESIDUAL`), the answer's :attr:`Selected.again` runs the second selection (the other half of δ) with
    the budget :mod:`~dpsynth.data.discover.allot` gives it, whose answer is the column's."""
    if non_null is None:
        idx, noisy = budget.partition(counts, delta)
        return Selected(idx, np.asarray(noisy, dtype=float), budget.sd)
    probe = budget
    d_probe, d_more = split_budget(delta, [1.0, 1.0])
    idx, noisy = probe.partition(counts, d_probe, what="rows per observed value (probe)")
    top = min(idx.size, max_categories)
    held = float(noisy[:top].sum())
    sd = math.sqrt(top * probe.sd**2 + non_null_sd**2)
    slack = RESIDUAL * non_null + RESIDUAL_SD * sd
    if non_null - held <= slack:
        return Selected(idx, np.asarray(noisy, dtype=float), probe.sd,
                        ["partition selection with the probe's budget sufficed (the probe)"])
    learned = [f"selection again: the probe left about {non_null - held:.0f} noisy rows out"]

    def again(more: ColumnBudget) -> Selected:
        idx, noisy = more.partition(counts, d_more)
        return Selected(idx, np.asarray(noisy, dtype=float), more.sd, learned)

    return Selected(idx, np.asarray(noisy, dtype=float), probe.sd, [], again,
                    (non_null - held - RESIDUAL * non_null) / max(sd, 1e-12))


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
    and 0.09 (seeds 0, 1); botswana's seed 2 0.184 → 0.207 (its ``urban`` given an empty 2).  Any column's bounds also keep the decades its tail histogram
    showed beside a zero spike (``col.reach``,
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
    last = max([last, *(math.ceil(m[0]) for m in _reached(up))])  # a bucket's first integer, as the support's last
    first = min([first, *(math.ceil(m[1]) - 1 for m in _reached(down))])  # (its integer nearest the support)
    return min(lo, float(first)), max(hi, float(last))


def _reached(buckets: list) -> list:
    """The margin buckets (lower edge, upper edge, noisy count, sd), in order from the support out, that a column
    of few integers keeps (:func:`seen_integers`): the first holding an integer when its count stands
    :data:`FEW_MARGIN_SD` sds, each next one out while its own stands FEW_MARGIN_NEXT (a tail thinning outwards,
    beside rows already shown: botswana's ``idlnchld``, [7, 10) at 2.0 sds then [10, 15) at 1.8); a bucket holding
    no integer ([1.5, 2)) is passed over.  Post-processing of the profile's noisy buckets."""
    out: list = []
    for m in buckets:
        lower, upper, count, sd = m
        if math.ceil(lower) >= upper:
            continue
        if count < (FEW_MARGIN_NEXT if out else FEW_MARGIN_SD) * sd:
            break
        out.append(m)
    return out
