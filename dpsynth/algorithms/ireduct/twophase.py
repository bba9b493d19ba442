"""``twophase``: TwoPhase noisy marginals (Xiao et al. 2011, §3.2 Figure 1, §5.2 Rescale), and Oracle.

Phase 1 spends ε₁ = ``epsilon1_fraction``·ε on equal Laplace noise for every
workload marginal (scale m·Δ/ε₁, Δ = ``ctx.neighbouring.histogram_l1``).
Rescale (§5.2) then sets one scale per marginal as Oracle would, but from the
phase-1 noisy counts y: λ′_j ∝ sqrt(|M_j| / Σ_{y∈M_j} 1/max(δ, y)), scaled so
that Σ_j Δ/λ′_j = ε₂ = ε − ε₁.  Phase 2 measures every marginal again with
scale λ′_j and the release is the minimum-variance combination
(λ′²·y + λ²·y′)/(λ² + λ′²) (Figure 1 line 8).  Basic composition: ε₁ + ε₂ = ε.

Deviation: §5.2 prints Rescale as λ_i ∝ sqrt(|M_i| / Σ_j max{δ, y_ij}),
without the reciprocal; that would give *more* noise to marginals with small
counts, the opposite of Oracle ("sets the noise scale similarly to how it is
set by Oracle except that it uses the noisy counts"), so we use 1/max(δ, y)
as in Oracle.  The paper's best ε₁/ε is 0.07 for 1-way and 0.025 for 2-way
marginals (§6.2, §6.4); the default is 0.07.

The reported ``scale`` of a combined marginal is λλ′/sqrt(λ² + λ′²): the
Laplace scale with the same variance as the combination (it is not Laplace).

:func:`dpsynth.nonprivate.oracle.oracle_marginals` is Oracle (§5.2): the same
allocation computed from the TRUE counts.  It is NOT differentially private and
lives in :mod:`dpsynth.nonprivate` for that reason.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import numpy as np

from dpsynth.algorithms.base import (
    AlgorithmContext,
    AlgorithmOutput,
    NoisyMarginal,
    SynthesisParams,
    release_marginals,
    synthesis_preflight,
)
from dpsynth.algorithms.ireduct.core import marginal_label, sanity_bounds, sanity_details
from dpsynth.algorithms.laplace import marginals_stage, measure_marginals
from dpsynth.algorithms.spec import AlgorithmSpec, PlannedStage
from dpsynth.errors import ConfigError
from dpsynth.params import params_from_mapping
from dpsynth.privacy.accountant import split_budget
from dpsynth.privacy.mechanisms import geometric_mechanism, laplace_mechanism

__all__ = ["Params", "budget_plan", "measure", "oracle_scales", "parse_params", "phase_budgets", "rescale_weights", "run"]


@dataclass(frozen=True, kw_only=True)
class Params(SynthesisParams):
    epsilon1_fraction: float = 0.07
    sanity_bound: float | None = None
    noise: Literal["discrete", "continuous"] = "discrete"

    def __post_init__(self) -> None:
        super().__post_init__()
        if not (0 < self.epsilon1_fraction < 1):
            raise ConfigError(
                f"algorithm.params.epsilon1_fraction: must be in (0, 1), got {self.epsilon1_fraction!r}"
            )
        if self.sanity_bound is not None and not (math.isfinite(self.sanity_bound) and self.sanity_bound > 0):
            raise ConfigError(f"algorithm.params.sanity_bound: must be a number > 0, got {self.sanity_bound!r}")


def parse_params(raw: Mapping) -> Params:
    return params_from_mapping(Params, raw)


def rescale_weights(values: list[np.ndarray], sanity_bound) -> np.ndarray:
    """Per marginal, the mean over its cells of 1/max(δ_j, value) (§5.2); ``sanity_bound``: one δ or one per marginal."""
    deltas = np.broadcast_to(np.asarray(sanity_bound, dtype=float), (len(values),))
    return np.array([float(np.mean(1.0 / np.maximum(np.asarray(v, dtype=float), d))) for v, d in zip(values, deltas)])


def oracle_scales(weights, sensitivity: float, epsilon: float) -> np.ndarray:
    """λ_j ∝ 1/sqrt(w_j) with Σ_j Δ/λ_j = ε: minimises Σ_j λ_j·w_j (Lagrange, §5.2)."""
    root = np.sqrt(np.asarray(weights, dtype=float))
    return sensitivity * root.sum() / (epsilon * root)


def phase_budgets(epsilon: float, params: Params) -> tuple[float, float]:
    """(ε₁, ε₂): ``epsilon1_fraction`` of ε for phase 1, the rest for phase 2."""
    eps1, eps2 = split_budget(epsilon, [params.epsilon1_fraction, 1.0 - params.epsilon1_fraction])
    return eps1, eps2


def measure(ctx: AlgorithmContext, params: Params, *, rng: np.random.Generator):
    """The released noisy marginals, the report details and warnings (no synthesis)."""
    eps = ctx.ledger.remaining()
    eps1, eps2 = phase_budgets(eps, params)
    sens = ctx.neighbouring.histogram_l1
    delta = sanity_bounds(ctx, params)  # per marginal (§2 after Equation 1)
    first = measure_marginals(ctx, ctx.workload, eps1, rng=rng, noise=params.noise, stage="phase 1")
    mech = geometric_mechanism if params.noise == "discrete" else laplace_mechanism
    weights = rescale_weights([m.values for m in first], delta)  # from noisy counts only
    shares = split_budget(eps2, list(np.sqrt(weights)))
    marginals = []
    for i, (m1, e2) in enumerate(zip(first, shares)):
        y2 = mech(
            ctx.counts.marginal(m1.attrs), sensitivity=sens, epsilon=e2, ledger=ctx.ledger, rng=rng,
            stage="phase 2", measured=marginal_label(ctx.domain, m1.attrs),
        )
        lam, lam2 = m1.scale, sens / e2
        combined = (lam2**2 * m1.values + lam**2 * y2) / (lam**2 + lam2**2)
        marginals.append(NoisyMarginal(m1.attrs, combined, lam * lam2 / math.sqrt(lam**2 + lam2**2)))
        ctx.progress("phase 2", i + 1, len(first))
    scales = np.array([m.scale for m in marginals])
    details = {
        "marginals_measured": len(marginals),
        "epsilon1": eps1,
        "epsilon2": eps2,
        **sanity_details(ctx, params),
        "phase1_scale": first[0].scale if first else None,
        "combined_scale_min": float(scales.min()) if len(scales) else None,
        "combined_scale_max": float(scales.max()) if len(scales) else None,
    }
    return marginals, details, []


def run(ctx: AlgorithmContext, params: Params, *, rng: np.random.Generator) -> AlgorithmOutput:
    return release_marginals(ctx, params, measure, rng=rng)


def budget_plan(ctx: AlgorithmContext, params: Params) -> list[PlannedStage]:
    """What :func:`measure` charges: ε₁ equally over the marginals, then ε₂ at shares chosen from phase 1."""
    eps1, eps2 = phase_budgets(ctx.ledger.remaining(), params)
    m = len(ctx.workload)
    return [marginals_stage("phase 1", eps1, m, f"marginals (epsilon1_fraction {params.epsilon1_fraction:g})"),
            PlannedStage(stage="phase 2", charges=m, total=eps2,
                         text=f"epsilon {eps2:.4g} over the {m} marginals, shares chosen from the phase 1 counts")]


SPEC = AlgorithmSpec(
    name="twophase",
    summary="TwoPhase baseline (Xiao et al. 2011, §3.2, §5.2 Rescale)",
    params=Params,
    run=run,
    workload=frozenset({"marginals"}),
    audit_params=({}, {"noise": "continuous"}),
    preflight=synthesis_preflight,
    budget_plan=budget_plan,
)
