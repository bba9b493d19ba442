"""How a discovery's budget reaches its columns: a privacy filter that gives each stage what its profile says
it needs, so that wide tables do not starve the columns that need most (issue 27, hotels: 26 columns).

Every column to learn has an equal nominal allotment (the budget over the columns, basic composition or zCDP).
The columns then run in four phases, each reading only mechanism outputs of the phases before it:

1. **profiles**: in a starved zero-config discovery every column of unknown kind first counts four cells
   (null, text, dates, numbers; :data:`~dpsynth.data.discover.kind.KIND_SHARE` of its allotment): a column of
   text stops there (its stage has the rest, less what the others' four cells cost them,
   :func:`refund`);
   every other column's profile follows (:data:`~dpsynth.data.discover.column.PROFILE_SHARE`);
2. **stages**: a numeric or date column's stage gets the rest of its allotment; a categorical column its probe
   (:data:`~dpsynth.data.discover.values.PROBE_SHARE` of the rest); a column of few integers (an integral coarse
   range of at most 2·bins values) waits for phase 4, with :data:`~dpsynth.data.discover.column.FEW_SHARE` of
   the rest of its allotment reserved (its floor);
3. **the pool**: a categorical column whose probe left rows unexplained first counts its distinct values with
   :data:`~dpsynth.data.discover.column.SCREEN_SHARE` of the rest of its allotment (``ColumnDiscovery.screen``):
   mostly distinct values (identifiers, free text) leave it out, and the rest of its allotment goes back to the
   pool.  What the first phases left of the total, less the floors, goes to the other such columns, for their
   second selection: each gets the rest of its own allotment (as with no pool), and what the cheaper stages
   left is shared among them (equal shares, each capped at what keeps a category of :data:`TARGET_SHARE` of its
   noisy rows, :func:`selection_need`; a capped column's surplus goes to the others).  A real column whose
   heaps reserve goes to its heaps selection (:func:`~dpsynth.data.discover.heaps.waits`) shares the pool the
   same way, its reserve as its floor, up to what keeps a heap of half a bin's share
   (:func:`~dpsynth.data.discover.heaps.need`);
4. **few integers**: each such column's stage gets its floor and, of what the pool left, up to what
   :func:`few_share` says its rows need (at most the rest of its own allotment; shared in proportion to those
   wants when short).  Its bounds also keep the integers its profile showed
   (:func:`~dpsynth.data.discover.values.seen_integers`).  What is still left is never charged: the release
   spends it.

Each phase's budgets are functions of earlier outputs and the pool is the total minus what was charged (less
the floors still to run), so the charges stay within the total whatever the data (adaptive composition with a
fixed total: a privacy filter).
"""

from __future__ import annotations

import math
from dataclasses import replace

from dpsynth.data.discover.column import FEW_SHARE, PROFILE_SHARE, SCREEN_SHARE, ColumnDiscovery
from dpsynth.data.discover.heaps import need as heaps_need
from dpsynth.data.discover.heaps import reserve
from dpsynth.data.discover.kind import KIND_SHARE
from dpsynth.data.discover.noise import BUCKET_MISS, FINE_SHARE, ColumnBudget
from dpsynth.data.discover.tail import probe as tail_probe
from dpsynth.data.discover.values import PROBE_SHARE
from dpsynth.privacy.accountant import Ledger, split_budget
from dpsynth.privacy.selection import gaussian_partition_threshold, partition_threshold

__all__ = ["POOL_MARGIN", "POOL_SD", "TARGET_SHARE", "Allotted", "refund", "run_columns", "selection_need"]

TARGET_SHARE = 0.01
"""A category holding this share of a column's noisy non-null rows should be kept: what a second partition
selection is sized for (and what :func:`~dpsynth.data.discover.share_for` sizes the zero-config discovery for)."""

POOL_SD = 3.0
"""A pending column shares the pool only when the rows its probe left out stand POOL_SD sds above
:data:`~dpsynth.data.discover.values.RESIDUAL` of its noisy rows (else its second selection has the rest of its own
allotment, as before the pool): a probe that left rows out by noise alone (wa_churn's ``online_security``, 3
values all kept, at 1 sd) drew 13x its own budget, 40% of the discovery, from the release."""

FEW_TARGET, FEW_Z = 0.1, 1.0
"""A column of few integers spends enough of the rest of its allotment (:func:`few_share`) that an integer holding
FEW_TARGET of its noisy non-null rows stands FEW_Z sds past the cut of its first fine histogram, when what the
pool left allows (phase 4): FEW_SHARE of the rest is too thin on a small wide table.  Held-out-13's big_five
(2,800 rows x 28 columns, 25 Likert items 1-6; σ ≈ 140 rows per integer at FEW_SHARE, a cut of 530, 19% of the
rows): its items lost a 1, a 2 or a 6 on most discoveries (rows outside the bounds 4.6%, seeds 2-9); the stage
now spends the whole rest there (σ ≈ 54; outside 1.0%, with ``values._rest_of_last``), and zero-config 2-way L1
(seeds 2-5) 0.331 → 0.236 (hand 0.216).  A target of 5% spent more on tables whose profile already showed their
integers: wilms_tumor's flags and codes (4,000 rows x 9) took half their rest for no bound changed, 2-way L1
x1.074; at 10% they keep FEW_SHARE, and so do the larger tables (nlswork, mplsstops, nhis_2009).  Before the pool
(phase 2 as the cheap stage was) they took what phone_churn's ``state`` (51 labels of 2%) needed: x1.09."""

FEW_MARGIN = 1e-6
"""What a few-integers stage may draw beyond its floor is what the pool left shrunk by this relative margin."""

POOL_MARGIN = 1e-9
"""The pool is the unspent total shrunk by this relative margin, so float rounding cannot charge past it."""


class Allotted(dict):
    """Per column: ``spent`` (what its mechanisms charged) and, for a column whose second selection drew on the
    pool, ``pooled`` (that share; it may spend more than its nominal allotment)."""


def _charged(ledger: Ledger, zcdp: bool, since: int) -> float:
    return math.fsum((c.rho if zcdp and c.rho is not None else c.epsilon) for c in ledger.charges[since:])


def selection_need(col: ColumnDiscovery, like: ColumnBudget, delta: float) -> float:
    """The budget with which a second partition selection (δ ``delta``) keeps, one sd above its threshold, a
    value holding :data:`TARGET_SHARE` of the column's noisy non-null rows (post-processing of the profile)."""
    target = TARGET_SHARE * float(col.non_null or 0.0)
    if target <= 1 or delta <= 0:
        return 0.0
    if like.zcdp:
        sigma, t = gaussian_partition_threshold(rho=like.amount, delta=delta, l2_sensitivity=math.sqrt(like.l1))
        z = (t - 1) / sigma + 1.0
        return like.l1 / (2.0 * (target / z) ** 2)
    scale, t = partition_threshold(epsilon=like.amount, delta=delta, sensitivity=like.l1)
    z = (t - 1) / scale + math.sqrt(2.0)
    return like.l1 / (target / z)


def few_share(col: ColumnDiscovery, rest: ColumnBudget) -> float:
    """The share of ``rest`` (the rest of its allotment) that a column of few integers would spend: enough for an
    integer holding :data:`FEW_TARGET` of its noisy non-null rows to stand :data:`FEW_Z` sds past the cut of
    its first fine histogram (one cell per integer of its coarse range; that histogram has
    :data:`~dpsynth.data.discover.noise.FINE_SHARE` of the stage), at least
    :data:`~dpsynth.data.discover.column.FEW_SHARE` and at most all of it.  Post-processing of the profile's
    outputs (the noisy non-null count, the coarse range)."""
    target = FEW_TARGET * float(col.non_null or 0.0)
    if target <= 1.0 or col.bounds is None or col.bounds[0] is None or col.bounds[1] is None:
        return FEW_SHARE
    cells = max(2, math.floor(col.bounds[1]) - math.ceil(col.bounds[0]) + 1)
    z = math.sqrt(2.0 * math.log(cells / BUCKET_MISS)) + FEW_Z
    sd = target / z  # the first fine histogram's noise at which such an integer stands z sds (above its cut)
    first = rest.l1 / (2.0 * sd * sd) if rest.zcdp else math.sqrt(2.0) * rest.l1 / sd
    return float(min(1.0, max(FEW_SHARE, first / FINE_SHARE / rest.amount)))


def refund(cols: dict, budgets: dict, rest: dict) -> dict:
    """The stages' budgets after the kind histograms (``rest``: each column's nominal rest, a
    :class:`~dpsynth.data.discover.noise.ColumnBudget`): a column the four cells did not call text paid
    KIND_SHARE (:mod:`~dpsynth.data.discover.kind`) of its allotment for nothing it uses, and the text columns
    saved PROFILE_SHARE − KIND_SHARE each;
    so each such column's stage gets its KIND_SHARE back from the text columns' savings (in proportion, as far
    as they reach), and the text columns' stages keep the rest.  The nominal total is unchanged (a transfer
    between stages, read off the kind histograms' noisy outputs: post-processing).  Without it the number
    columns' stages were 0.6 of their allotment instead of 0.7: acs_2012's ``income`` (36% zeros, 19% null, the
    rest to 100,000) got bounds [0, 1] on seed 7 (2-way L1 0.243 → 0.345; 0.356 with this: a draw, not the
    budget).  Measured level with the tax kept (x1.001 over 23 small tables, seeds 2-7), but the number columns of
    a table of mostly text keep the budget they had."""
    text = [n for n, c in cols.items() if getattr(c, "no_profile", False)]
    other = [n for n, c in cols.items() if getattr(c, "kind_tested", False) and not getattr(c, "no_profile", False)]
    owed = math.fsum(KIND_SHARE * budgets[n].amount for n in other)
    spare = {n: max(0.0, rest[n].amount - (1.0 - PROFILE_SHARE) * budgets[n].amount) for n in text}
    moved = min(owed, math.fsum(spare.values()))
    if moved <= 0.0:
        return rest
    out = dict(rest)
    for n in other:
        out[n] = replace(rest[n], amount=rest[n].amount + moved * KIND_SHARE * budgets[n].amount / owed)
    total = math.fsum(spare.values())
    for n in text:
        out[n] = replace(rest[n], amount=rest[n].amount - moved * spare[n] / total)
    return out


def run_columns(cols: dict[str, ColumnDiscovery], budgets: dict[str, ColumnBudget], deltas: dict[str, float],
                ledger: Ledger) -> tuple[dict[str, dict | None], Allotted]:
    """Discover every column of ``cols`` with its nominal ``budgets`` (see the module docstring).  Returns the
    specs (None for a column left out) and the book (:class:`Allotted`)."""
    book = Allotted({n: {"spent": 0.0} for n in cols})
    zcdp = any(b.zcdp for b in budgets.values())
    total = math.fsum(b.amount for b in budgets.values())

    def run(name: str, step, *args):
        since = len(ledger.charges)
        out = step(*args)
        book[name]["spent"] += _charged(ledger, zcdp, since)
        return out

    def left() -> float:  # what is not charged yet, less the few-integers stages' floors still to run
        return max(0.0, total - math.fsum(v["spent"] for v in book.values()) - math.fsum(floor.values()))

    rest = {}
    for name, col in cols.items():  # phase 1: the profiles (loops over columns; each vectorised over rows)
        rest[name] = run(name, col.start, budgets[name])
    rest = refund(cols, budgets, rest)  # (the kind histograms' cost back to the columns that were not text)
    specs: dict[str, dict | None] = {}
    probes: dict[str, float] = {}
    few: dict[str, ColumnBudget] = {}  # columns of few integers: their stages run last (phase 4)
    for name, col in cols.items():  # phase 2: the stages
        stage = run(name, tail_probe, col, rest[name])  # a tail beside a zero spike (tail.py), when it may hide one
        if col.few:  # its bounds also keep the integers its profile showed (values.seen_integers)
            few[name] = stage
            continue
        if col.selects:
            stage = stage.split(PROBE_SHARE)[0]
            probes[name] = stage.amount
        specs[name] = run(name, col.finish, stage, deltas.get(name, 0.0))
    floor = {n: stage.split(FEW_SHARE)[0].amount for n, stage in few.items()}  # (reserved: the pool never takes it)
    pending = [n for n in cols if cols[n].pending is not None]
    screened = {}
    for name in pending:  # mostly distinct values (column.screen): left out before a second selection
        screen, keep = replace(budgets[name], amount=rest[name].amount - probes[name]).split(SCREEN_SHARE)
        if run(name, cols[name].screen, screen):
            specs[name] = None
        else:
            screened[name] = keep.amount
    pending = [n for n in pending if n in screened]
    heaps = {n: reserve(c).amount for n, c in cols.items() if c.later is not None}  # (second heaps selections)
    if pending or heaps:
        _pool(cols, budgets, deltas, book, specs, pending, screened, run, left() * (1.0 - POOL_MARGIN), heaps)
    wants = {n: few_share(cols[n], stage) for n, stage in few.items()}  # phase 4: the stages of few integers
    more = {n: max(0.0, w * few[n].amount - floor[n]) for n, w in wants.items()}
    scale = min(1.0, left() * (1.0 - FEW_MARGIN) / math.fsum(more.values())) if any(more.values()) else 0.0
    for name, stage in few.items():  # (what the pool left is shared in proportion to the wants)
        base = floor.pop(name)
        extra = scale * more[name]
        if extra >= FEW_MARGIN * base:  # (a share of what is left, not of the rest: no float rounding past it)
            stage = stage if base + extra >= stage.amount else replace(stage, amount=base + extra)
        else:
            stage = stage.split(FEW_SHARE)[0]  # the floor, exactly as reserved
        cols[name].learned.append(f"few integers in the coarse range: {stage.amount / few[name].amount:.0%} of the "
                                  "rest spent")
        specs[name] = run(name, cols[name].finish, stage, deltas.get(name, 0.0))
    return specs, book


def _pool(cols, budgets, deltas, book, specs, pending, screened, run, pool: float, heaps: dict) -> None:
    """Phase 3: the second selections of the ``pending`` columns and the waiting heaps selections (``heaps``:
    their reserves, :func:`~dpsynth.data.discover.heaps.waits`) share ``pool`` (see the module docstring)."""
    floors = {**screened, **dict.fromkeys(heaps, 0.0)}  # the rest of its own allotment, less its screen
    extra = max(0.0, pool - math.fsum(floors.values()))
    wants = {n: max(0.0, selection_need(cols[n], budgets[n], split_budget(deltas[n], [1.0, 1.0])[1]) - floors[n])
             if getattr(cols[n].pending, "surplus", 0.0) > POOL_SD else 0.0 for n in pending}
    wants.update({n: heaps_need(cols[n], cols[n].hint.bins or cols[n].spec.bins) for n in heaps})
    pending = [*pending, *heaps]
    for i, name in enumerate(sorted(pending, key=lambda n: (wants[n], pending.index(n)))):  # smallest want first
        add = min(wants[name], extra / (len(pending) - i))
        extra -= add
        share = min(floors[name] + add, pool)
        pool -= share
        book[name]["pooled"] = share
        if add > 0 and (name not in heaps or share >= heaps[name]):
            what = f"heaps selection again with {share / heaps[name]:.2g}x its reserve" if name in heaps else \
                f"second selection with {share / floors[name]:.2g}x the rest of its own budget"
            cols[name].learned.append(f"{what} (the pool the cheaper stages left)")
        if name in heaps:  # (a share under the first's budget would release nothing new: the first's heaps alone)
            specs[name] = run(name, cols[name].later, replace(reserve(cols[name]), amount=share)
                              if share >= heaps[name] else None)
        else:
            specs[name] = run(name, cols[name].complete, replace(budgets[name], amount=share) if share > 0 else None)
