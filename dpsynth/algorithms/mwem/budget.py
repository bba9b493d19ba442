"""MWEM's (``variant: paper``) budget split: the one place its per-stage ε (pure) or ρ (zCDP) is computed."""

from __future__ import annotations

import math

import numpy as np

from dpsynth.algorithms.base import AlgorithmContext
from dpsynth.algorithms.mwem.params import Params
from dpsynth.errors import ConfigError
from dpsynth.privacy.accountant import bounded_range_epsilon, split_budget, zcdp_available
from dpsynth.privacy.mechanisms import (
    discrete_gaussian_mechanism,
    gaussian_mechanism,
    geometric_mechanism,
    laplace_mechanism,
)


# ------------------------------------------------------------------------- budget
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
        d = len(ctx.domain)
        f_init = params.init_fraction if params.init != "uniform" else 0.0
        per_round = (1.0 - f_init) / T
        weights = [f_init] + [per_round * params.select_fraction, per_round * (1 - params.select_fraction)] * T
        if self.zcdp:
            avail = _available(ctx, True)
            parts = [avail * w for w in weights]
        else:
            parts = split_budget(ctx.ledger.remaining(), weights)
        if params.init == "cells":  # one measurement of the full table (§2.3.2)
            self.init = [parts[0]]
        else:
            self.init = split_budget(parts[0], [1.0] * d) if f_init > 0 else []
        self.select = parts[1::2]
        self.measure = parts[2::2]

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
