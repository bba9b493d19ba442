"""Discovery of one column: a profile histogram, then partition selection or a fine histogram.

Every fact is read off mechanism outputs (:class:`~dpsynth.data.discover.noise.ColumnBudget`); the column's
private counts come from the :class:`~dpsynth.data.profile.ColumnProfile` boundary.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import numpy as np

from dpsynth.data.discover.coarse import around, coarse_support, fractional, margins, reach_zero, with_zeros
from dpsynth.data.discover.codes import few_numbers, settled
from dpsynth.data.discover.dates import discover_datetime
from dpsynth.data.discover.dense import dense_run, measure_dense
from dpsynth.data.discover.evidence import Evidence
from dpsynth.data.discover.fuse import fused
from dpsynth.data.discover.heaps import again, asked, waits
from dpsynth.data.discover.ident import ID_SHARE, identifier, wants_screen
from dpsynth.data.discover.kind import KIND_SHARE, text_kind
from dpsynth.data.discover.lattice import ask as lattice_step
from dpsynth.data.discover.lattice import refuted
from dpsynth.data.discover.lattice import settle as lattice_settle
from dpsynth.data.discover.noise import (
    DEFAULT_RANGE,
    FEW_CELLS,
    FILL,
    FINE_CELLS,
    FINE_SHARE,
    MIN_CELLS,
    OUTER_RANGE,
    ColumnBudget,
    coarse_grid,
    fine_cells,
    log_cells,
    plain,
    quantile_edges,
    support,
    window_sums,
)
from dpsynth.data.discover.nulls import NULL_SD, fuse_nulls, missing_spec
from dpsynth.data.discover.packed import packed_start
from dpsynth.data.discover.points import place, with_points, worth_measuring
from dpsynth.data.discover.signs import joined, measured, other_side
from dpsynth.data.discover.spec import ColumnHint, DiscoverSpec
from dpsynth.data.discover.tables import ColumnCounts
from dpsynth.data.discover.tail import reached
from dpsynth.data.discover.tied import kept_sides, past_mass, per_integer, tied_or_spread, which
from dpsynth.data.discover.values import (
    Selected,
    label_values,
    points_of,
    seen_integers,
    select_categories,
    spaced_bins,
)
from dpsynth.data.discover.zoom import CONFIRM, TIED, holds, to_units, widen, zoom

__all__ = ["OTHER_ONLY", "PROFILE_SHARE", "ColumnDiscovery", "plain"]

PROFILE_SHARE = 0.3
"""Share of a column's budget for the profile histogram (kind and coarse range) when either must be learned;
the rest goes to partition selection (categorical) or the fine histogram (numeric)."""

UNIT_CELLS, CONCENTRATED, UNIT_FILL = 512, 0.8, 8
"""An integral column whose fine support spans at most FEW_CELLS cells holding at least CONCENTRATED of its noisy
numbers and at most UNIT_CELLS integers (years) is measured again with one cell per integer (or a round width
when that is more than UNIT_FILL times the cells its noisy rows fill); a wider one by partition selection."""

COARSE_MARGIN = 2
"""Logarithmic buckets added on each side of the coarse range (see :meth:`ColumnDiscovery._profile`)."""

FALLBACK_WINDOW, FALLBACK_TEXT_SD = 4, 2.0
"""When no run of logarithmic buckets stands out of the profile's noise, the coarse range is centred on the
FALLBACK_WINDOW adjacent buckets with the largest noisy sum (more robust than the single largest bucket).  When no
profile cell stands out, a column is text only if its noisy text cell passes FALLBACK_TEXT_SD sds besides the noisy
sum of its 368 number cells (sd 19 cells'), which alone typed numbers text (issue 27, session 15: acs_2012's
time_to_work on seed 1; who's 54 count columns on 26-50% of draws; 1,662 seen columns' profiles simulated from their
true counts: 1.5 wrong types against 17.2).  A thinner text column would mostly not pass its selection either."""

FREE_TEXT_SHARE = 0.1
"""A categorical column whose released categories hold less than this share of its non-null rows (noisy
counts) is free text or an identifier: it is left out of the schema, and the report says so; since session 12 only
when no count of its distinct values was made (:data:`DISTINCT_SHARE`: a column whose kept values hold under 10%
of its rows always had one, and one that is not mostly distinct keeps its values and ``__other__``: ucla_courses'
``subject_abbr``, about 150 subjects, was left out and judged all invalid)."""

DISTINCT_SHARE, DISTINCT_SD, SCREEN_SHARE = 1 / 3, 2.0, 0.05
"""A categorical column whose probe left rows unexplained first counts, with SCREEN_SHARE of the rest of its
allotment, its distinct values (:meth:`ColumnDiscovery.screen`; sensitivity 1).  When that noisy count stands
DISTINCT_SD sds above DISTINCT_SHARE of its noisy non-null rows (a value held by 3 rows or fewer on average) and
the probe's values hold under :data:`FREE_TEXT_SHARE` of them, the column is mostly distinct values (identifiers,
free text, ids of a case or an order shared by a few rows): left out of the schema before its second selection,
whose budget goes back to the pool.  Until session 12 such a column ran that selection, drawing on the pool (sized
to find a value of 1% of its rows), found nothing and stayed in the schema as one placeholder category: a column
of ``__other__`` in every row (nasscds' ``caseid``, planes' ``tailnum``, trump_tweets' ``text``), while a column
whose kept values hold 5% of its rows was left out (:data:`FREE_TEXT_SHARE`).  A column of many rare but
repeated values (who's ``country``, 219 values of about 33 rows each) keeps its placeholder."""

TEXT_SHARE = 0.05
"""A column the profile finds mostly numbers is categorical after all when its noisy text holds TEXT_SHARE of its
non-null rows and its numbers are integers in a coarse range of at most 2·bins (codes written partly as
numbers, partly as text: '1', '2-10', 'Over 100'); otherwise its text is missing (stray text, '?')."""

FRACTION_SHARE = 0.1
"""A numeric column is integral (decoded to integers) unless the fractional numbers of its profile histogram
(cells past the cut) exceed both the cut and FRACTION_SHARE of its numbers."""

SKEW_RATIO, SKEW_NEGATIVE = 30.0, 0.1
"""A numeric column is skewed, and its fine cells are logarithmic (:func:`~dpsynth.data.discover.noise.log_cells`),
when at most SKEW_NEGATIVE of its noisy numbers are negative and the logarithmic buckets of its positive numbers'
noisy 10% and 90% quantiles are more than SKEW_RATIO apart (sampling weights, amounts, counts of many magnitudes;
zeros, however many, have the cell below the logarithmic ones).  An integral column with a zero spike needs only
ZERO_SKEW_RATIO: on linear cells its zeros and amounts share the first cells, which then look like tied integers
(credit's ``Assets``, 0 and 1,000 to 300,000: partition selection kept 0, 3000, 4000, 5000 and cut the rest).
Or when the bucket of the noisy median ends under 1/PACKED of the coarse range's top (car_exports' indices near 1
beside 14% of trade values up to 10⁸: linear cells put every index in one; its 1-way TV 0.55-0.60 → 0.08-0.12).
A column neither rule calls skewed may still get logarithmic first fine cells when linear ones would pack it
(:mod:`~dpsynth.data.discover.packed`: held-out-12's hpc_jobs, ``compounds`` and ``input_fields``)."""
ZERO_SKEW_RATIO, PACKED = 4.0, 100.0

FEW_SHARE = 0.15
"""What a column spends after its profile depends on what the profile found (post-processing of its noisy counts;
:mod:`~dpsynth.data.discover.allot`): a numeric column of few integers (an integral coarse range of at most
2·bins values) spends FEW_SHARE of the rest, or more when its rows need it and the pool left it (allot.few_share;
its bounds keep the integers its profile showed); a categorical column, a probe and maybe a second selection."""


OTHER_ONLY = "__none__"
"""The placeholder category of a column none of whose values passed partition selection."""


class ColumnDiscovery:
    """Discovery of one column (the steps of :mod:`dpsynth.data.discover`), each through a mechanism."""

    def __init__(self, hint: ColumnHint, profile: ColumnCounts, spec: DiscoverSpec):
        self.hint, self.profile, self.spec = hint, profile, spec
        self.learned: list[str] = []
        self.dropped: str | None = None  # why the column is left out of the schema (free text, identifiers)
        self.non_null: float | None = None  # noisy number of non-null rows (a profile output), when profiled
        self.zero_spike = False  # the profile shows a share of exact zeros above 1/bins (a profile output)
        self.log_from: float | None = None  # skewed (a profile output): log fine cells from here up
        self.labels: list[str] | None = None  # a numeric column of few distinct numbers: its kept values
        self.zeros: tuple[float, float] | None = None  # (noisy count of exact zeros past the cut, sd): profile
        self.non_null_sd = 0.0  # sd of :attr:`non_null` (a sum of profile cells)
        self.core: tuple[tuple[float, float], ...] | None = None  # the profile's support: (first, last bucket's edges)
        self.margins: tuple[tuple[float, ...], ...] = ()  # and its margin buckets (coarse.margins; zoom.widen)
        self.evidence = Evidence()  # the released counts, reusable as 1-way measurements (evidence.py)
        self.few = False  # a numeric column of few integers (a profile output): its stage needs little
        self.positive: tuple[np.ndarray, np.ndarray] | None = None  # profile buckets of a column not skewed (packed.py)
        self.reach: tuple[float, float] | None = None  # bounds the decades beside a zero spike showed (tail.py)
        self.first_grid: np.ndarray | None = None  # the first fine histogram's cells (public)
        self.coarser: tuple = ()  # (edges, noisy counts, sd) measured apart from the last fine cells (fuse.py)
        self.distinct: float | None = None  # a pending column's noisy count of distinct values (screen)
        self.pending: Selected | None = None  # a categorical column's probe whose second selection waits (values.Selected)
        self.quiet_nulls: bool | None = None  # no noisy null (nor a number column's text) stands out: nulls.py
        self.later: Callable[[ColumnBudget | None], dict] | None = None  # a numeric column whose heaps selection waits for the pool: the rest of its stage

    def start(self, budget: ColumnBudget) -> ColumnBudget:
        """Step 1 (when the type, integrality or range is unknown): the profile, with :data:`PROFILE_SHARE` of
        ``budget``.  Returns the rest, the stage's nominal budget (:mod:`~dpsynth.data.discover.allot` may give
        the stage less or more: the profile's outputs say what it needs)."""
        h = self.hint
        self.kind, self.integral = h.type, (True if h.type == "integer" else h.integer)
        self.missing = h.missing or "category"  # nulls are always representable: as a category or a fill (nulls.py)
        self.bounds = (h.lower, h.upper) if h.lower is not None else None
        if self.kind is None or (self.kind != "categorical" and (self.bounds is None or self.integral is None)):
            kind_first = self.kind is None and self.spec.kind_first  # four cells first: text needs no profile
            if kind_first:  # (kind.py: a starved zero-config discovery)
                test, budget = budget.split(KIND_SHARE)
                if text_kind(self, test, coarse_grid(*DEFAULT_RANGE)):
                    return budget
            first, budget = budget.split(PROFILE_SHARE / (1.0 - KIND_SHARE) if kind_first else PROFILE_SHARE)
            self.kind, self.integral, found = self._profile(first, self.kind, self.integral)
            self.bounds = self.bounds or found
            self.few = self.kind == "numeric" and bool(self.integral) and found is not None and h.lower is None \
                and found[1] - found[0] <= 2 * (h.bins or self.spec.bins)  # few integers: a cheap stage
        return budget

    @property
    def selects(self) -> bool:
        """Whether the stage is partition selection over the column's categories (after :meth:`start`)."""
        return self.kind == "categorical" and not self.hint.categories

    def finish(self, budget: ColumnBudget, delta: float) -> dict | None:
        """Step 2 or 3 with ``budget``; None when the column is left out, or (:attr:`pending`) when a categorical
        column's probe left rows out and its second selection waits for :meth:`complete`."""
        h = self.hint
        if self.kind == "categorical":
            cats = list(h.categories) if h.categories else self._categories(budget, delta)
            if cats is None:
                return None
            spec = {"type": "categorical", "categories": cats}
        elif self.kind == "datetime":
            spec = discover_datetime(self, budget)
        else:  # values on multiples of a step (lattice.py): a histogram of candidate steps, then edges between them
            budget, self.step = lattice_step(self, budget, self.kind, self.integral)
            found = self._numeric(budget, self.kind, bool(self.integral), self.bounds, delta)
            if found is None:  # an integer identifier (ident.py): left out
                return None
            if self.later is not None:  # (its heaps selection waits for the pool: allot.py calls ``later``)
                self.later = partial(self._settled, self.later, h.bins or self.spec.bins)
                return None
            spec = lattice_settle(self, found, h.bins or self.spec.bins)
        spec.update(missing_spec(self, spec))  # missing: category, or fill when no null stood out (nulls.py)
        return spec

    def _settled(self, tail, bins: int, more: ColumnBudget | None) -> dict:
        spec = lattice_settle(self, tail(more), bins)
        return {**spec, **missing_spec(self, spec)}

    def screen(self, budget: ColumnBudget) -> bool:
        """Whether a :attr:`pending` column is mostly distinct values (:data:`DISTINCT_SHARE`): one noisy count
        of its distinct non-null values, with ``budget`` (sensitivity 1: a row added or removed adds or removes
        at most one value).  When it is, the column is left out (:attr:`dropped`) and its second selection is not
        run; the probe's values must hold under :data:`FREE_TEXT_SHARE` of the rows (a column of one common value
        and unique text keeps that value)."""
        _, counts = self.profile.value_counts()
        distinct = budget.count(int(np.size(counts)), "distinct values (identifiers, free text)")
        non_null = float(self.non_null or 0.0)
        held = float(np.clip(self.pending.noisy[: self.spec.max_categories], 0, None).sum()) if self.pending else 0.0
        if (non_null <= 0 or held >= FREE_TEXT_SHARE * non_null
                or distinct < DISTINCT_SHARE * non_null + DISTINCT_SD * budget.count_sd):
            self.learned.append(f"about {max(distinct, 0.0):.0f} distinct values (noisy count)")
            self.distinct = distinct
            return False
        self.pending = None
        self.dropped = (f"mostly distinct values (free text or an identifier): about {distinct:.0f} distinct values "
                        f"in about {non_null:.0f} non-null rows (noisy counts); left out of the schema")
        self.learned.append(self.dropped)
        return True

    def complete(self, more: ColumnBudget | None) -> dict | None:
        """The second partition selection of a :attr:`pending` column, with ``more``: its answer is the column's
        (without ``more``, nothing left to spend: the probe's answer is)."""
        sel, self.pending = self.pending, None
        if sel is None:
            raise RuntimeError("complete() needs a pending second selection")  # (a programming error, not input)
        if more is not None and sel.again is not None:
            sel = sel.again(more)
        self.learned.extend(sel.learned)
        cats = self._kept(sel)
        spec = None if cats is None else {"type": "categorical", "categories": cats}
        return None if spec is None else {**spec, **missing_spec(self, spec)}

    # -- step 1: the profile histogram (kind and coarse bounds in one measurement)
    def _profile(self, budget: ColumnBudget, kind, integral):
        edges = coarse_grid(*DEFAULT_RANGE)
        nb = edges.size + 1
        noisy = budget.histogram(self.profile.profile_counts(edges), "rows per kind and logarithmic bucket (null, "
                                 f"text, dates, integral and fractional numbers per bucket: {3 + 2 * nb} cells)")
        cut = budget.block_cut(1, noisy.size)
        self.evidence.null = (float(noisy[0]), budget.sd)
        kept = np.where(noisy >= cut, noisy, 0)
        text, dates = int(kept[1]), int(kept[2])
        ints, fracs = kept[3:3 + nb], kept[3 + nb:]
        numbers = int(ints.sum() + fracs.sum())
        # noisy non-null rows: the cells past the cut (clipping every cell at 0 adds every empty cell's noise); biased
        # low where rows spread under the cut, but an oracle (NOT PRIVATE, session 12) moved 2-way L1 x1.004 only.
        self.non_null = float(max(1, text + dates + numbers))
        # nulls under the cut and under NULL_SD sds: missing: fill (nulls.py)
        self.quiet_nulls = bool(noisy[0] < min(cut, NULL_SD * budget.sd))
        self.non_null_sd = budget.sd * math.sqrt(max(1, int(np.count_nonzero(kept[1:]))))
        typed_here = kind is None
        if kind is None:
            if text == 0 and dates == 0 and numbers == 0:  # nothing stands out of the noise: the raw noisy sums
                text, numbers = int(noisy[1]), int(noisy[3:].sum())  # (a date column needs its cell past the cut)
            if dates > max(text, numbers, 0):  # (raw noisy sums may both be negative: not a date column)
                kind = "datetime"
            else:
                kind = "categorical" if text > numbers and text >= FALLBACK_TEXT_SD * budget.sd else "numeric"
            self.learned.append(f"type {kind} (noisy text, date and number counts)")
        if kind in ("categorical", "datetime"):
            return kind, integral, None
        ext = np.concatenate([[OUTER_RANGE[0]], edges, [OUTER_RANGE[1]]])  # the outer buckets end at the outer range
        if integral is None:  # (fractional rows spread thin: their cells summed per decade, coarse.fractional)
            integral = bool(fractional(fracs, noisy[3 + nb:], ext, budget) <= max(cut, FRACTION_SHARE * numbers))
            self.learned.append(f"integer: {str(integral).lower()} (noisy fractional count)")
        zero = int(np.searchsorted(edges, 0.0, side="right"))  # the bucket [0, 1e-6): exact zeros of an integral column
        self.zero_spike = bool(ints[zero] + fracs[zero] > max(cut, numbers / (self.hint.bins or self.spec.bins)))
        self.zeros = (float(ints[zero]), budget.sd)  # the exact zeros (integral numbers in [0, 1e-6)): points.py
        per_bucket = noisy[3:3 + nb] + noisy[3 + nb:]  # two noises per bucket: the cuts of twice the variance
        self.evidence.buckets = (ext, per_bucket, budget.sd * math.sqrt(2.0))  # (fuse.py)
        pair = budget.split(0.5)[0] if budget.zcdp else ColumnBudget(budget.amount / math.sqrt(2.0), False, budget.l1,
                                                                       budget.ledger, budget.rng, budget.name)
        found = coarse_support(per_bucket, ext, pair)  # (pair: the cuts of a bucket's two noises)
        if found is not None:  # the buckets the profile found rows in (zoom.widen): first and last bucket's edges
            self.core = tuple((float(ext[i]), float(ext[i + 1])) for i in found)
        else:  # nothing stands out: where the noisy sums of FALLBACK_WINDOW adjacent buckets peak
            w = min(FALLBACK_WINDOW, per_bucket.size)
            start = int(np.argmax(window_sums(per_bucket, w)))
            found = (start, start + w - 1)
        # COARSE_MARGIN buckets each side, or a thin tail is clamped for good (the fine histogram trims; coarse.around)
        shown = around(found, ext, COARSE_MARGIN, bool(integral))
        self.margins = margins(per_bucket, ext, found, shown, pair.sd, ends=True) if self.core is not None else ()
        lo, hi = reach_zero(float(ext[shown[0]]), float(ext[shown[-1] + 1]), self.core,
                            2 * (self.hint.bins or self.spec.bins) if integral else 0.0, noisy[3 + zero] / budget.sd,
                            bool(ints[zero] > 0))  # (the zeros' own noisy cell: past ZERO_SD sds, past the cut)
        self.core = with_zeros(self.core, lo, hi, float(ext[zero + 1]), bool(integral and ints[zero] > 0))
        hi = max(hi, lo + 1.0)
        few = hi - lo <= 2 * (self.hint.bins or self.spec.bins)
        if typed_here and integral and few and 0 < int(kept[1]) >= TEXT_SHARE * self.non_null:
            # a few integers and a sizeable share of text (counts coded '1', '2-10', 'Over 100'): as a number
            # column the text would be null; as categories every value is kept (partition selection)
            self.learned.append(f"type categorical after all: noisy text holds {kept[1] / self.non_null:.0%} of the "
                                f"non-null rows beside a few integers in [{lo:g}, {hi:g})")
            return "categorical", integral, None
        self.quiet_nulls = self.quiet_nulls and int(kept[1]) == 0  # a number column's text is read as null
        self._skew(ext, ints + fracs, numbers, lo, hi, bool(integral))
        self.learned.append(f"coarse range [{lo:g}, {hi:g}) (noisy logarithmic buckets)")
        return kind, integral, (lo, hi)

    def _skew(self, ext: np.ndarray, kept: np.ndarray, numbers: int, lo: float, hi: float, integral: bool = False) -> None:
        """Whether the profile's noisy positive numbers (cells past the cut, per logarithmic bucket) span many
        magnitudes (:data:`SKEW_RATIO`); if so, the fine cells are logarithmic from the bucket of their noisy 1%
        quantile (or the coarse lower bound) up."""
        positive = np.where(ext[:-1] > 0, kept, 0)
        total = float(positive.sum())
        if total <= 0 or float(kept[ext[1:] <= 0].sum()) > SKEW_NEGATIVE * numbers:
            return
        cdf = np.cumsum(positive) / total
        i01, i10, i50, i90 = np.searchsorted(cdf, [0.01, 0.1, 0.5, 0.9], side="left")
        if ext[i90 + 1] < (ZERO_SKEW_RATIO if self.zero_spike and integral else SKEW_RATIO) * ext[i10] and \
                ext[i50 + 1] * PACKED > hi:  # (linear cells would hold half the numbers in one)
            self.positive = (ext, positive)  # (packed.py: the first fine grid may still be logarithmic)
            return
        start = max(lo, float(ext[i01]))
        if 0 < start < hi:
            self.log_from = start
            self.learned.append(f"skewed (noisy 10% and 90% quantile buckets [{ext[i10]:g}, {ext[i10 + 1]:g}) and "
                                f"[{ext[i90]:g}, {ext[i90 + 1]:g})): logarithmic fine cells from {start:g}")

    def _grid(self, lo: float, hi: float, integral: bool, cells: int) -> np.ndarray:
        """The fine cells over [lo, hi]: logarithmic from :attr:`log_from` for a skewed column, else round widths."""
        if self.log_from is not None and not (integral and math.floor(hi) - math.ceil(lo) + 1 <= cells):
            start = max(self.log_from, lo)
            if 0 < start and start * 2 < hi:
                return log_cells(lo, start, hi, integral=integral, cells=cells)
        return fine_cells(lo, hi, integral=integral, cells=cells)

    # -- step 2: categories
    def _categories(self, budget: ColumnBudget, delta: float) -> list | None:
        labels, counts = self.profile.value_counts()
        if labels.size == 0:  # every row null: the mechanism is still charged (its outcome is the empty set)
            counts = np.zeros(0, dtype=np.int64)
        self._labels_seen = labels
        sel = select_categories(budget, counts, delta, non_null=self.non_null, non_null_sd=self.non_null_sd,
                                max_categories=self.spec.max_categories,
                                nulls=int(self.profile.profile_counts(coarse_grid(*DEFAULT_RANGE))[0])
                                if self.spec.kind_first else None)
        self.learned.extend(sel.learned)
        if sel.again is not None:  # the probe left rows out: a second selection, with what allot.py gives it
            self.pending = sel
            return None
        return self._kept(sel)

    def _kept(self, sel) -> list | None:
        """The categories a selection released (the top ``max_categories``), or None for free text."""
        idx, noisy, labels = sel.idx, sel.noisy, self._labels_seen
        fuse_nulls(self, sel.nulls)  # (the selections' null cell: nulls.py)
        top = idx[: self.spec.max_categories]
        kept = [str(x) for x in labels[top]]
        self.evidence.labels, self.evidence.label_sd = tuple(kept), sel.sd
        self.evidence.label_counts = np.asarray(noisy[: len(top)], dtype=float)
        self.learned.append(f"{len(kept)} categories by partition selection"
                            + (f" (top {self.spec.max_categories} kept)" if len(idx) > self.spec.max_categories else ""))
        if self.non_null is not None and kept:
            share = min(1.0, float(np.clip(noisy[: len(top)], 0, None).sum()) / self.non_null)
            if share < FREE_TEXT_SHARE and self.distinct is None:  # (a screened column is not mostly distinct)
                self.dropped = (f"mostly distinct values (free text or an identifier): the kept categories hold "
                                f"about {share:.0%} of the rows (noisy counts); left out of the schema")
                self.learned.append(self.dropped)
                return None
            if share < 0.9:
                self.learned.append(f"the kept categories hold about {share:.0%} of the non-null rows "
                                    "(noisy counts); the rest are released as __other__")
        if not kept:
            kept = [OTHER_ONLY]
            self.learned.append("no value passed the threshold: one placeholder category, every value goes to other")
        return kept

    # -- step 3: numeric
    def _numeric(self, budget: ColumnBudget, kind, integral, bounds, delta: float = 0.0) -> dict | None:
        h, bins = self.hint, self.hint.bins or self.spec.bins
        lo, hi = bounds if bounds is not None else DEFAULT_RANGE
        equal = self.spec.edges == "equal" or bins == 1
        weights = kept_values = spaced = None  # (spaced: edges a bin per few distinct numbers apart, values.py)
        self._spikes: tuple[ColumnBudget, tuple, float] | None = None  # point-mass budget, heavy cells, δ (heaps.py)
        ident = None  # a wide integral column may be an identifier (ident.py): a share set aside for its count
        if kind != "integer" and wants_screen(self, bool(integral), lo, hi):
            ident, budget = budget.split(ID_SHARE)
        if h.lower is None or not equal:  # refine the bounds and read the edges off finer histograms
            want = kind != "integer" and not equal and worth_measuring(
                integral=bool(integral), lo=lo, hi=hi, non_null=self.non_null, bins=bins, budget=budget)
            lo, hi, weights, kept_values = self._fine(budget, lo, hi, integral, delta, points=want)
            lo, hi, weights = joined(self, lo, hi, weights) if kept_values is None else (lo, hi, weights)
            if ident is not None and self.labels is None and (why := identifier(self, ident, lo, hi)) is not None:
                self.dropped = why
                self.learned.append(why)
                return None
            if self.labels is not None:
                return {"type": "categorical", "categories": self.labels}
            lo, hi = seen_integers(self, lo, hi)
            if h.lower is not None:  # hinted bounds are public: kept as given
                lo, hi = h.lower, h.upper
        if integral:
            lo, hi = math.ceil(lo), math.floor(hi)
            if hi <= lo:  # one integer: its neighbour toward 0 is the second value (a 0/1 flag whose 0s are rare)
                lo, hi = (lo - 1, lo) if lo > 0 else (lo, lo + 1)
        values = hi - lo + 1
        too_wide = kind == "integer" and h.lower is None and values > max(2 * bins, self.spec.max_categories)
        if kind == "integer" and not too_wide:  # the hint says integer: one value per integer
            return {"type": "integer", "lower": int(lo), "upper": int(hi)}
        if kind != "integer" and integral and h.bins is None and values <= 2 * bins:
            # Treated like categories: one bin around each integer (a learned 'integer' column would
            # refuse the stray fractional values that the noisy counts cannot rule out).
            self.learned.append("few integers between the bounds: one bin around each")
            return {"type": "numeric", "edges": [plain(e) for e in np.arange(lo, hi + 2) - 0.5], "integer": True}
        if too_wide:
            self.learned.append(f"{int(values)} integers between the learned bounds: binned (numeric, integer: true)")
        if kept_values is not None and not equal:  # edges between kept integers, at quantiles of their counts
            values, mass = kept_values
            self.evidence.kept = (values, mass)  # the decoder draws the kept integers within each bin
            edges = quantile_edges(np.concatenate([values - 0.5, [values[-1] + 0.5]]), mass, bins, lo, hi)
            self.learned.append(f"{len(edges) - 1} bins with edges at quantiles of the kept integers' noisy counts")
        elif equal or (weights := settled(self, weights, bins)) is None:  # (heaps.settle: the reserve, if any)
            edges = np.unique(np.round(np.linspace(lo, hi, bins + 1))) if integral else np.linspace(lo, hi, bins + 1)
        elif self.labels is not None:  # (codes.settled: few distinct numbers in the last fine cells)
            return {"type": "categorical", "categories": self.labels}
        elif not integral and (spaced := spaced_bins(self, budget, lo, hi, bins)) is not None:  # a bin each
            edges, equal = spaced, True  # (the point masses' bins added below, none beside them: spaced_bins)
        else:
            edges = quantile_edges(*fused(self, weights), bins, lo, hi)
            self.learned.append(f"{len(edges) - 1} bins with edges at quantiles of the noisy fine histogram")
        # (kept integers already have a bin each: their share of the budget goes unused)
        points = points_of(self, lo, hi, bool(integral), bins)
        tail = partial(self._placed, lo, hi, edges, spaced, weights, equal or kept_values is not None,
                       bool(integral), bins, budget, points)
        if waits(self, points):  # heaps found: a second selection waits for the pool (heaps.waits): :meth:`finish`
            self.later = tail
            return {}
        return tail()

    def _placed(self, lo, hi, edges, spaced, weights, equal: bool, integral: bool, bins: int, budget, points,
                more: ColumnBudget | None = None) -> dict:
        """The spec from :meth:`_numeric`'s edges and the point masses (and the heaps selection again with
        ``more``, heaps.again)."""
        points = points if more is None else again(self, points, more, lo=lo, hi=hi, bins=bins)
        edges = edges if spaced is None else np.asarray(spaced_bins(self, budget, lo, hi, bins, points.values))
        if points.values.size:  # point masses (0 from the profile, round values from their histogram): own bins
            placed, hi, notes = place(points, lo=lo, hi=hi, integral=integral, bins=bins, weights=weights,
                                      evidence=self.evidence, equal=equal, first=self.first_grid)
            edges = placed if placed is not None else with_points(edges, points.values, integral=integral, lo=lo, hi=hi)
            self.evidence.points = points
            self.learned.extend(notes)
        spec: dict = {"type": "numeric", "edges": [plain(e) for e in edges]}
        if integral:
            spec["integer"] = True
        return spec

    def _fine(self, budget: ColumnBudget, lo: float, hi: float, integral: bool, delta: float = 0.0, *,
              points: bool = False):
        """A noisy histogram over public round cells covering the coarse range (:data:`FINE_SHARE` of the numeric
        budget), as many as the noisy row count fills well above the cut (between :data:`MIN_CELLS` and
        :data:`FINE_CELLS`; one per integer for a short integral range).  The rest of the budget then goes where
        that histogram says it helps most (post-processing decides, the spend is fixed):

        * an integral column whose support fits in at most :data:`FEW_CELLS` cells wider than 1 (tied values at
          a large magnitude, such as years): one cell per integer over the support when it holds at most
          :data:`UNIT_CELLS` integers (its support gives the bounds where the wide cells past it are mostly
          empty: :func:`~dpsynth.data.discover.tied.kept_sides`), else partition selection over its observed
          integers (with δ), whose kept values give the bounds and, when few, one bin each;
        * a support in at most a quarter of the cells (half, for a column that is not integral): a second
          histogram over the support only (zoom; or a dense run inside it, dense.py).  Half since session 12
          (jobless_benefits' ``rr``: 740 rows in [0.515, 0.525) decoded over [0.5, 0.55)): 14 seen tables x0.970,
          seeds 2-5; integral columns too was x0.969 but nlswork x1.071, planes x1.04, so those keep a quarter;
        * a column most of whose rows lie in a few of its cells (logarithmic, or linear and not integral since
          issue 27's ``nettfa``): finer cells over those (:mod:`~dpsynth.data.discover.dense`);
        * otherwise: the same histogram measured again, the two averaged with inverse-variance weights.

        The bounds are the support's outer edges (:func:`support`) and the noisy counts (clipped at 0) give the
        bin edges.  Returns (lo, hi, (cell edges, mass) or None, kept integers or None)."""
        first, rest = budget.split(FINE_SHARE)
        cells = FINE_CELLS
        fill = float(FINE_CELLS)
        if self.non_null is not None:  # as many cells as the noisy row count can fill well above the cut
            fill = self.non_null / (FILL * first.block_cut(1, FINE_CELLS))
            cells = int(np.clip(fill, MIN_CELLS, FINE_CELLS))
        integers = math.floor(hi) - math.ceil(lo) + 1
        if integral and cells < integers <= min(fill, UNIT_CELLS):  # enough rows for one cell per integer
            cells = integers  # (counts such as hours worked, with spikes at 0, 40 and 52)
        if self.log_from is None and self.positive is not None and not (integral and integers <= cells):
            self.log_from = packed_start(*self.positive, lo=lo, hi=hi, integral=bool(integral), cells=cells,
                                         bins=self.hint.bins or self.spec.bins)
            if self.log_from is not None:
                self.learned.append(f"linear cells would pack the rows: logarithmic fine cells from {self.log_from:g}")
        grid = self._grid(lo, hi, integral, cells)
        noisy, other = measured(self, first, grid, lo, hi, f"rows per fine cell ({grid.size - 1} public cells)")
        self.first_grid, self.evidence.first = grid, (noisy, first.sd)  # (points.place; values.seen_integers)
        other_side(self, other)  # (signs.py: a sizable share of rows past 0, where the coarse range ends: apart)
        found = reached(support(noisy, first), grid, self.reach)  # (tail.py: out to the noisy decades' reach)
        first_noisy = noisy
        width = float(grid[1] - grid[0])
        scale = first.scale
        sides: tuple[int, int] | None = None  # tied integers: the per-integer support where nothing says rows lie past it (tied.kept_sides)
        mass: np.ndarray | None = None  # and the mass placing their edges (tied.past_mass)
        few, units = which(noisy, found, first, width, integral=integral and self.log_from is None, non_null=self.non_null,
                           most=min(fill, UNIT_CELLS), few_cells=FEW_CELLS, concentrated=CONCENTRATED)  # (tied.py)
        discrete = few_numbers(self, noisy, found, first, delta) and (not integral or refuted(self, grid, noisy, first))
        if discrete and label_values(self, rest, delta, (noisy, first)):
            return lo, hi, None, None
        ask = asked(noisy, first, self.non_null, self.hint.bins or self.spec.bins, integral=bool(integral),
                    delta=delta) if points and not few and not discrete else None  # (heaps.py)
        if ask is not None:  # a cell that may hold a point mass: a share of the numeric budget asks (points.py)
            spikes, rest = rest.split(ask[1])
            self._spikes = (spikes, (grid[ask[0]], grid[ask[0] + 1]), delta)
        if discrete:
            pass  # the rest of the budget went to the values: the first histogram alone gives bounds and edges
        elif found is not None and units:  # few integers for the rows, not tied: one cell each (tied.py)
            wide = widen(found, grid, self.core, noisy, first, self.margins, self.learned)
            return per_integer(self, rest, grid, wide, noisy, first)
        elif found is not None and few and (found[1] - found[0] + 1) * width <= UNIT_CELLS:
            # tied integers in a short range (years): one cell per integer over the support (widened to the
            # profile's, zoom.widen); its own support gives the bounds where nothing says rows lie past it
            # (tied.kept_sides), so values neither clamp to the heavy integers nor spread over empty ones
            wide = widen(found, grid, self.core, noisy, first, self.margins, self.learned) or found
            first_grid, lo, hi = grid, float(grid[wide[0]]), float(grid[wide[1] + 1])
            grid = fine_cells(lo, hi, integral=True, cells=min(UNIT_CELLS, UNIT_FILL * cells))
            noisy = rest.histogram(self.profile.cell_counts(grid), f"rows per integer of the support ({grid.size - 1}"
                                   " public cells)")
            scale = rest.scale
            what = "one cell per integer" if grid[1] - grid[0] == 1 else f"{grid.size - 1} cells of {grid[1] - grid[0]:g}"
            self.learned.append(f"{what} in [{lo:g}, {hi:g}) (tied integers in a short range)")
            tied = support(noisy, rest)
            wide_mass = float(first_noisy[found[0]:found[1] + 1].sum())
            if tied is None or noisy[tied[0]:tied[1] + 1].sum() < TIED * wide_mass:
                # the integers' own support misses much of the wide cells' rows: not tied values but a spread
                # (test scores): the per-integer counts summed in blocks, as many as the row count fills
                w = max(1, math.ceil((grid.size - 1) / cells))
                starts = np.arange(0, grid.size - 1, w)
                blocks, sums = np.append(grid[starts], grid[-1]), np.add.reduceat(noisy, starts)
                self.learned.append(f"not tied: the per-integer counts summed in blocks of {w}")
                self._cells(grid, noisy, rest.sd)
                spread = support(sums, ColumnBudget.with_scale(rest.scale * math.sqrt(w), budget))
                if spread is not None and sums[spread[0]:spread[1] + 1].sum() >= CONCENTRATED * wide_mass - \
                        CONFIRM * rest.sd * math.sqrt(w * (spread[1] - spread[0] + 1)):  # (less its sum's noise)
                    i, j = starts[spread[0]], min(grid.size - 1, starts[spread[1]] + w)  # unit cells [i, j)
                    seen = (i, j - 1)
                    i, j = kept_sides(grid, noisy, seen, rest.sd, first_grid, first_noisy, wide, first.sd)
                    j += 1
                    self.learned.append(f"bounds [{grid[i] + 0.5:g}, {grid[j] - 0.5:g}] (noisy blocks)")
                    return float(grid[i] + 0.5), float(grid[j] - 0.5), (grid[i:j + 1], past_mass(
                        grid, noisy, seen, rest.sd, first_grid, first_noisy, wide, first.sd)[i:j]), None
                # too few rows per block to find the bounds: the wide cells' support gives them (as a zoom)
                self.learned.append(f"bounds [{lo:g}, {hi:g}] (the wider cells' support)")
                return lo, hi, (blocks, np.clip(sums, 0, None).astype(float)), None
            sides = kept_sides(grid, noisy, tied, rest.sd, first_grid, first_noisy, wide, first.sd)
            mass = past_mass(grid, noisy, tied, rest.sd, first_grid, first_noisy, wide, first.sd)
        elif few and delta > 0:  # (the rest is spent here, whatever it finds: tied.py, selection or a zoom)
            if (done := tied_or_spread(self, rest, delta, grid, found, noisy, first, integral, cells, fill)):
                return done
        elif (wide := widen(found, grid, self.core, noisy, first, self.margins, self.learned)) is not None and \
                ((wide[1] - wide[0] + 1) * (4 if integral else 2) <= grid.size - 1 or to_units(wide, grid, integral, min(cells, fill))) \
                and holds(noisy, wide, first.sd, grid, self.evidence.buckets):  # (not a support of a heap's cell alone: zoom.holds)
            if (run := dense_run(noisy, grid, rest, integral, self.log_from, self.zeros, within=wide)) is None:
                return (*zoom(self, rest, grid, wide, integral, cells, fill), None)  # (zoom.py: maybe twice, narrow data)
            return (*measure_dense(self, first, rest, grid, noisy, run), None)  # (dense.py: narrower than the zoom)
        elif (run := dense_run(noisy, grid, rest, integral, self.log_from, self.zeros)):
            return (*measure_dense(self, first, rest, grid, noisy, run), None)  # (dense.py: finer where rows are dense)
        else:
            again = rest.histogram(self.profile.cell_counts(grid), f"rows per fine cell, again ({grid.size - 1} "
                                   "public cells)")
            w1, w2 = 1.0 / first.scale**2, 1.0 / rest.scale**2
            noisy = (w1 * noisy + w2 * again) / (w1 + w2)
            scale = 1.0 / math.sqrt(w1 + w2)
            self.coarser = (self.evidence.buckets,) if self.evidence.buckets is not None else ()
        self._cells(grid, noisy, scale if budget.zcdp else math.sqrt(2.0) * scale)
        scaled = ColumnBudget.with_scale(scale, budget)
        found = sides or widen(reached(support(noisy, scaled), grid, self.reach), grid, self.core, noisy, scaled,
                               self.margins, self.learned)
        if found is None:
            self.learned.append(f"bounds [{lo:g}, {hi:g}] (no fine cell stood out of the noise)")
            return lo, hi, None, None
        a, b = found
        new_lo, new_hi = float(grid[a]), float(grid[b + 1])
        if integral and grid.size > 1 and grid[1] - grid[0] == 1.0 and grid[0] % 1 == 0.5:
            new_lo, new_hi = new_lo + 0.5, new_hi - 0.5  # unit cells [k - 0.5, k + 0.5): bounds are integers
        self.learned.append(f"bounds [{new_lo:g}, {new_hi:g}] (noisy fine histogram)")
        mass = np.clip(noisy, 0, None).astype(float) if mass is None else mass
        return new_lo, new_hi, (grid[a:b + 2], mass[a:b + 1]), None

    def _cells(self, grid: np.ndarray, noisy: np.ndarray, sd: float) -> None:
        self.evidence.cells, self.evidence.cell_sd = np.asarray(grid, dtype=float), float(sd)
        self.evidence.cell_counts = np.asarray(noisy, dtype=float)
