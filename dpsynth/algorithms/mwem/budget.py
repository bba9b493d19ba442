"""MWEM's (``variant: paper``) budget split: the one place its per-stage ε (pure) or ρ (zCDP) is computed.

:func:`split` turns what the rounds may spend into the parts of every charge; :func:`stages` does it from
the configuration alone, :class:`_Budget` from a run's ledger, and spends the parts.  :func:`budget_plan`
(the spec's, what ``dpsynth plan`` prints) builds the same :class:`_Budget` from a context without data, or
asks :func:`~dpsynth.algorithms.mwem_pgm.budget_plan_pgm` for ``variant: pgm``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpsynth.algorithms.base import AlgorithmContext
from dpsynth.algorithms.mwem.params import Params, candidate_count, count_candidates, effective_iterations, resolve
from dpsynth.algorithms.mwem_pgm import batch_size, budget_plan_pgm, round_budget
from dpsynth.algorithms.spec import PlannedStage
from dpsynth.errors import ConfigError
from dpsynth.privacy.accountant import bounded_range_epsilon, split_budget, zcdp_available, zcdp_to_approx_dp
from dpsynth.privacy.mechanisms import (
    discrete_gaussian_mechanism,
    gaussian_mechanism,
    geometric_mechanism,
    laplace_mechanism,
)


@dataclass(frozen=True)
class Stage:
    """Charges of one stage: ``count`` charges of ``amount`` each, in ``unit`` (ε under pure accounting,
    ρ under zCDP); ``stage`` is the ledger's stage name (``mwem-init``, ``mwem-select``, ``mwem-measure``)."""

    stage: str
    unit: Literal["epsilon", "rho"]
    amount: float
    count: int


@dataclass(frozen=True)
class Split:
    """The part of each charge, in ε (pure) or ρ (``zcdp``): ``init`` (one per 1-way marginal for
    ``init: noisy``, one for the full table for ``init: cells``, none for ``uniform``), then per round
    ``select`` and ``measure``."""

    zcdp: bool
    init: list[float]
    select: list[float]
    measure: list[float]

    def stages(self) -> list[Stage]:
        """The charges in ledger order, consecutive equal parts merged (parts may differ by the ulp that
        :func:`~dpsynth.privacy.accountant.split_budget` takes off to keep their exact sum in the budget)."""
        unit: Literal["epsilon", "rho"] = "rho" if self.zcdp else "epsilon"
        order = [("mwem-init", p) for p in self.init]
        order += [(name, p) for pair in zip(self.select, self.measure) for name, p in zip(
            ("mwem-select", "mwem-measure"), pair)]
        out: list[Stage] = []
        for name, part in order:  # loop over charges (a few per round)
            if out and out[-1].stage == name and out[-1].amount == part:
                out[-1] = Stage(name, unit, part, out[-1].count + 1)
            else:
                out.append(Stage(name, unit, part, 1))
        return out


def split(params: Params, columns: int, rounds: int, available: float) -> Split:
    """The budget split of a ``variant: paper`` run with resolved ``params`` over ``columns`` columns and
    ``rounds`` rounds: ``available`` (ε left after the row count, or the ρ available under zCDP) is split
    into ``init_fraction`` for initialisation and ``rounds`` equal shares, each share ``select_fraction``
    for selection and the rest for measurement; the initialisation share is split equally over the 1-way
    marginals (``init: noisy``) or spent at once on the full table (``init: cells``, §2.3.2)."""
    zcdp = params.accounting == "zcdp"
    if params.init_fraction is None or params.select_fraction is None:
        raise ValueError("mwem budget split: params must be resolved first (mwem.params.resolve_config)")
    f_init = params.init_fraction if params.init != "uniform" else 0.0
    per_round = (1.0 - f_init) / rounds
    weights = [f_init] + [per_round * params.select_fraction, per_round * (1 - params.select_fraction)] * rounds
    parts = [available * w for w in weights] if zcdp else split_budget(available, weights)
    if params.init == "cells":  # one measurement of the full table (§2.3.2)
        init = [parts[0]]
    else:
        init = split_budget(parts[0], [1.0] * columns) if f_init > 0 else []
    return Split(zcdp, init, parts[1::2], parts[2::2])


def stages(params: Params, domain, workload, available: float) -> list[Stage]:
    """The charges a ``variant: paper`` run will make, from the configuration alone: ``params`` resolved
    (:func:`~dpsynth.algorithms.mwem.params.resolve_config`), the rounds T of
    :func:`~dpsynth.algorithms.mwem.params.effective_iterations` over the
    :func:`~dpsynth.algorithms.mwem.params.candidate_count`, and ``available`` as in :func:`split`.
    A run that stops early (no candidate left under ``max_factor_cells``) charges a prefix of these."""
    rounds = effective_iterations(params, candidate_count(domain, workload, params))
    return split(params, len(domain), rounds, available).stages()


def _available(ctx: AlgorithmContext, zcdp: bool) -> float:
    """What the rounds may spend: ε left (pure) or ρ left of the configured (ε, δ) (zCDP)."""
    ledger = ctx.ledger
    if not zcdp:
        return ledger.remaining()
    avail = zcdp_available(ledger)
    if avail <= 0:
        raise ConfigError("privacy.epsilon: nothing left for mwem after the row count")
    return avail


class _Budget:
    """The per-stage privacy parameters: ε under pure accounting, ρ under zCDP."""

    def __init__(self, ctx: AlgorithmContext, params: Params, T: int):
        self.ctx, self.zcdp = ctx, params.accounting == "zcdp"
        self.discrete = params.noise == "discrete"
        parts = split(params, len(ctx.domain), T, _available(ctx, self.zcdp))
        self.init, self.select, self.measure = parts.init, parts.select, parts.measure

    def select_epsilon(self, t: int) -> float:
        return bounded_range_epsilon(self.select[t]) if self.zcdp else self.select[t]

    def noisy(self, true, part: float, l1: float, l2: float, *, rng, stage: str, measured: str,
              integral: bool = True):
        """Laplace (pure) or Gaussian (zCDP) measurement; returns (noisy values, noise scale).

        ``noise: discrete`` (default): the true answers are integer counts, measured with integer noise
        (discrete Laplace, or the discrete Gaussian of Canonne, Kamath & Steinke 2020 under zCDP) at the
        same scale and cost; ``continuous``: real-valued Laplace or Gaussian noise.  ``integral: false``
        (answers that need not be integers, e.g. linear queries with fractional weights): continuous noise.
        """
        discrete = self.discrete and integral
        if discrete:
            true = np.rint(np.asarray(true, dtype=float)).astype(np.int64)  # exact integer counts
        if self.zcdp:
            gauss = discrete_gaussian_mechanism if discrete else gaussian_mechanism
            noisy = gauss(true, l2_sensitivity=l2, rho=part, ledger=self.ctx.ledger, rng=rng, stage=stage,
                         measured=measured)
            return np.asarray(noisy, dtype=float), l2 / math.sqrt(2.0 * part)
        mech = geometric_mechanism if discrete else laplace_mechanism
        noisy = mech(true, sensitivity=l1, epsilon=part, ledger=self.ctx.ledger, rng=rng, stage=stage,
                     measured=measured)
        return np.asarray(noisy, dtype=float), l1 / part

    def describe(self) -> dict:
        key = "rho" if self.zcdp else "epsilon"
        return {
            f"init_{key}_total": float(sum(self.init)),
            f"select_{key}_per_round": self.select[0],
            f"measure_{key}_per_round": self.measure[0],
        }


def rounds(ctx: AlgorithmContext, params: Params) -> int:
    """The rounds T of a ``variant: paper`` run over the candidates of ``ctx`` (its marginals, and the
    range and linear queries of ``ctx.queries``): as many as :func:`~dpsynth.algorithms.mwem.core.fit` has."""
    return effective_iterations(params, count_candidates(ctx.domain, ctx.workload, ctx.queries, params))


def budget_plan(ctx: AlgorithmContext, params: Params) -> list[PlannedStage]:
    """The stages a run charges (the spec's ``budget_plan``), from a context without data: for ``paper``
    the :class:`_Budget` :func:`~dpsynth.algorithms.mwem.core.fit` spends, for ``pgm`` the round budget
    of :func:`~dpsynth.algorithms.mwem_pgm.fit_pgm`.  A ``paper`` run that stops early (no candidate left
    under ``max_factor_cells``) charges a prefix of its rounds."""
    params = resolve(ctx, params)
    zcdp = params.accounting == "zcdp"
    if params.variant == "pgm":
        return budget_plan_pgm(ctx, params, zcdp=zcdp, total_budget=_available(ctx, zcdp))
    T = rounds(ctx, params)
    budget = _Budget(ctx, params, T)
    delta = ctx.ledger.delta if zcdp else 0.0

    def measured(part: float) -> float:  # the ε a measurement's charge records (Laplace, or Gaussian at δ)
        return zcdp_to_approx_dp(part, delta) if zcdp else part

    unit = "rho" if zcdp else "epsilon"
    out = []
    if budget.init:
        what = ("the full table (init: cells)" if params.init == "cells"
                else f"the {len(budget.init)} 1-way marginals ({budget.init[0]:.4g} each)")
        eps = tuple(measured(p) for p in budget.init)
        out.append(PlannedStage(stage="mwem-init", charges=len(eps), total=sum(eps), epsilon=eps, delta=delta,
                                text=f"{unit} {sum(budget.init):.4g} on {what}"))
    select = tuple(budget.select_epsilon(t) for t in range(T))
    measure = tuple(measured(p) for p in budget.measure)
    selector = "bounded-range exponential mechanism" if zcdp else "exponential mechanism"
    noise = "Gaussian" if zcdp else "Laplace"
    out += [
        PlannedStage(stage="mwem-select", charges=T, total=sum(select), epsilon=select, per_round=True,
                     text=f"{T} rounds, {unit} {budget.select[0]:.4g} each ({selector})"),
        PlannedStage(stage="mwem-measure", charges=T, total=sum(measure), epsilon=measure, delta=delta,
                     per_round=True, text=f"{T} rounds, {unit} {budget.measure[0]:.4g} each ({noise} noise)"),
    ]
    return out


def measure_deviation(ctx: AlgorithmContext, params: Params) -> float:
    """Standard deviation of the noise on one cell of a marginal measured in the first round (histogram
    sensitivity), from the budget a run would have: for ``dpsynth plan``."""
    params = resolve(ctx, params)
    zcdp = params.accounting == "zcdp"
    l1, l2 = ctx.neighbouring.histogram_l1, ctx.neighbouring.histogram_l2
    if params.variant == "pgm":
        budget = round_budget(params, _available(ctx, zcdp), zcdp=zcdp, rounds=True)
        return budget.deviation(budget.take()[1] / batch_size(params), l1, l2)  # each of a round's measurements
    part = _Budget(ctx, params, rounds(ctx, params)).measure[0]
    return l2 / math.sqrt(2.0 * part) if zcdp else math.sqrt(2.0) * l1 / part
