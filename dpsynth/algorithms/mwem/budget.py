"""MWEM's (``variant: paper``) budget split: the one place its per-stage ε (pure) or ρ (zCDP) is computed.

:func:`split` turns what the rounds may spend into the parts of every charge; :func:`stages` does it from
the configuration alone (what a plan needs), :class:`_Budget` from a run's ledger, and spends the parts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpsynth.algorithms.base import AlgorithmContext
from dpsynth.algorithms.mwem.params import Params, candidate_count, effective_iterations
from dpsynth.errors import ConfigError
from dpsynth.privacy.accountant import bounded_range_epsilon, split_budget, zcdp_available
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
        unit = "rho" if self.zcdp else "epsilon"
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
            mech = discrete_gaussian_mechanism if discrete else gaussian_mechanism
            noisy = mech(true, l2_sensitivity=l2, rho=part, ledger=self.ctx.ledger, rng=rng, stage=stage,
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
