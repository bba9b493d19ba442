"""How a discovery's budget reaches its columns: a privacy filter that gives each stage what its profile says
it needs, so that wide tables do not starve the columns that need most (issue 27, hotels: 26 columns).

Every column to learn has an equal nominal allotment (the budget over the columns, basic composition or zCDP).
The columns then run in three phases, each reading only mechanism outputs of the phases before it:

1. **profiles**: every column's profile (:data:`~dpsynth.data.discover.column.PROFILE_SHARE` of its allotment);
2. **stages**: a numeric or date column's stage gets the rest of its allotment; a column of few integers (an
   integral coarse range of at most 2·bins values) :data:`~dpsynth.data.discover.column.FEW_SHARE` of it (its
   bounds keep every integer its profile showed, :func:`~dpsynth.data.discover.values.seen_integers`, so the
   cheap stage loses no value the profile found); a categorical column its probe
   (:data:`~dpsynth.data.discover.values.PROBE_SHARE` of the rest);
3. **the pool**: a categorical column whose probe left rows unexplained first counts its distinct values with
   :data:`~dpsynth.data.discover.column.SCREEN_SHARE` of the rest of its allotment (``ColumnDiscovery.screen``):
   mostly distinct values (identifiers, free text) leave it out, and the rest of its allotment goes back to the
   pool.  What the first phases left of the total goes to the other such columns, for their second selection: each gets the rest of its own allotment (as with
   no pool), and what the cheaper stages left is shared among them (equal shares, each capped at what keeps a
   category of :data:`TARGET_SHARE` of its noisy rows, :func:`selection_need`; a capped column's surplus goes
   to the others).  What is still left is never charged: the release spends it.

Each phase's budgets are functions of earlier outputs and the pool is the total minus what was charged, so the
charges stay within the total whatever the data (adaptive composition with a fixed total: a privacy filter).
"""

from __future__ import annotations

import math
from dataclasses import replace

from dpsynth.data.discover.column import FEW_SHARE, SCREEN_SHARE, ColumnDiscovery
from dpsynth.data.discover.noise import ColumnBudget
from dpsynth.data.discover.tail import probe as tail_probe
from dpsynth.data.discover.values import PROBE_SHARE
from dpsynth.privacy.accountant import Ledger, split_budget
from dpsynth.privacy.selection import gaussian_partition_threshold, partition_threshold

__all__ = ["POOL_MARGIN", "POOL_SD", "TARGET_SHARE", "Allotted", "run_columns", "selection_need"]

TARGET_SHARE = 0.01
"""A category holding this share of a column's noisy non-null rows should be kept: what a second partition
selection is sized for (and what :func:`~dpsynth.data.discover.share_for` sizes the zero-config discovery for)."""

POOL_SD = 3.0
"""A pending column shares the pool only when the rows its probe left out stand POOL_SD sds above
:data:`~dpsynth.data.discover.values.RESIDUAL` of its noisy rows (else its second selection has the rest of its own
allotment, as before the pool): a probe that left rows out by noise alone (wa_churn's ``online_security``, 3
values all kept, at 1 sd) drew 13x its own budget, 40% of the discovery, from the release."""

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


def run_columns(cols: dict[str, ColumnDiscovery], budgets: dict[str, ColumnBudget], deltas: dict[str, float],
                ledger: Ledger) -> tuple[dict[str, dict | None], Allotted]:
    """Discover every column of ``cols`` with its nominal ``budgets`` (see the module docstring).  Returns the
    specs (None for a column left out) and the book (:class:`Allotted`)."""
    book = Allotted({n: {"spent": 0.0} for n in cols})
    zcdp = any(b.zcdp for b in budgets.values())

    def run(name: str, step, *args):
        since = len(ledger.charges)
        out = step(*args)
        book[name]["spent"] += _charged(ledger, zcdp, since)
        return out

    rest = {}
    for name, col in cols.items():  # phase 1: the profiles (loops over columns; each vectorised over rows)
        rest[name] = run(name, col.start, budgets[name])
    specs: dict[str, dict | None] = {}
    probes: dict[str, float] = {}
    for name, col in cols.items():  # phase 2: the stages
        stage = run(name, tail_probe, col, rest[name])  # a tail beside a zero spike (tail.py), when it may hide one
        if col.few:  # its bounds also keep the integers its profile showed (values.seen_integers)
            stage = stage.split(FEW_SHARE)[0]
            col.learned.append(f"few integers in the coarse range: {FEW_SHARE:.0%} of the rest spent")
        elif col.selects:
            stage = stage.split(PROBE_SHARE)[0]
            probes[name] = stage.amount
        specs[name] = run(name, col.finish, stage, deltas.get(name, 0.0))
    pending = [n for n in cols if cols[n].pending is not None]
    screened = {}
    for name in pending:  # mostly distinct values (column.screen): left out before a second selection
        screen, keep = replace(budgets[name], amount=rest[name].amount - probes[name]).split(SCREEN_SHARE)
        if run(name, cols[name].screen, screen):
            specs[name] = None
        else:
            screened[name] = keep.amount
    pending = [n for n in pending if n in screened]
    if not pending:
        return specs, book
    total = math.fsum(b.amount for b in budgets.values())
    pool = max(0.0, total - math.fsum(v["spent"] for v in book.values())) * (1.0 - POOL_MARGIN)
    floors = dict(screened)  # the rest of its own allotment, less its screen (always there)
    extra = max(0.0, pool - math.fsum(floors.values()))
    wants = {n: max(0.0, selection_need(cols[n], budgets[n], split_budget(deltas[n], [1.0, 1.0])[1]) - floors[n])
             if getattr(cols[n].pending, "surplus", 0.0) > POOL_SD else 0.0 for n in pending}
    for i, name in enumerate(sorted(pending, key=lambda n: (wants[n], pending.index(n)))):  # smallest want first
        add = min(wants[name], extra / (len(pending) - i))
        extra -= add
        share = min(floors[name] + add, pool)
        pool -= share
        book[name]["pooled"] = share
        if add > 0:
            cols[name].learned.append(f"second selection with {share / floors[name]:.2g}x the rest of its own budget "
                                      "(the pool the cheaper stages left)")
        specs[name] = run(name, cols[name].complete, replace(budgets[name], amount=share) if share > 0 else None)
    return specs, book
