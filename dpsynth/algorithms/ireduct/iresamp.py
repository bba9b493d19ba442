"""``iresamp``: iterative resampling with independent draws (Xiao et al. 2011, Appendix A, Figure 12).

Like iReduct, every workload marginal starts with Laplace noise of scale λ_max;
then PickQueries repeatedly picks a marginal, draws a *fresh, independent*
noisy copy with half the previous scale (Figure 12 lines 8–9, 15), and
releases the inverse-variance average of all its copies (Equation 16).  Each
draw is a Laplace mechanism charged to the ledger before it runs, so the cost
of marginal j is Δ·(1/λ_max + 2/λ_max + … + 2^{k−1}/λ_max) = Δ·(2/λ_j − 1/λ_max)
(the λ′ of line 10); a draw that does not fit the remaining budget removes the
marginal from the working set (lines 18–21).

PickQueries is not specified for iResamp beyond "the same black box"; we use
the §5.3 ratio with iResamp's own quantities: estimated error decrease
w_j·(σ_j − σ′_j), with w_j the mean of 1/max(y, δ) over the marginal and
σ = 1/sqrt(Σ_k 1/λ_k²) the Laplace-equivalent scale of the combination before
and after the new draw, over the privacy cost 2Δ/λ_j of that draw.  The
reported ``scale`` of a marginal is σ (the combination is not Laplace).
Defaults for λ_max and δ are iReduct's.
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
from dpsynth.algorithms.ireduct.core import marginal_label, resolve_scales, sanity_details
from dpsynth.algorithms.spec import AlgorithmSpec, PlannedStage
from dpsynth.errors import ConfigError
from dpsynth.params import params_from_mapping
from dpsynth.privacy.accountant import Charge
from dpsynth.privacy.mechanisms import geometric_mechanism, laplace_mechanism

__all__ = ["Params", "measure", "parse_params", "run"]


@dataclass(frozen=True, kw_only=True)
class Params(SynthesisParams):
    lambda_max: float | None = None
    sanity_bound: float | None = None
    error_weight: Literal["mean", "sum"] = "mean"
    noise: Literal["discrete", "continuous"] = "discrete"

    def __post_init__(self) -> None:
        super().__post_init__()
        for key in ("lambda_max", "sanity_bound"):
            value = getattr(self, key)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ConfigError(f"algorithm.params.{key}: must be a number > 0, got {value!r}")


def parse_params(raw: Mapping) -> Params:
    return params_from_mapping(Params, raw)


def initial_epsilon(ctx: AlgorithmContext, params: Params, epsilon: float):
    """(ε of each initial draw Δ/λ_max, λ_max, sanity bounds δ, warnings): Figure 12 lines 1–4."""
    lam_max, _, delta, warnings = resolve_scales(ctx, params, epsilon)
    return ctx.neighbouring.histogram_l1 / lam_max, lam_max, delta, warnings


def measure(ctx: AlgorithmContext, params: Params, *, rng: np.random.Generator):
    """The released noisy marginals, the report details and warnings (no synthesis)."""
    eps = ctx.ledger.remaining()
    sens = ctx.neighbouring.histogram_l1
    first_eps, lam_max, delta, warnings = initial_epsilon(ctx, params, eps)
    m = len(ctx.workload)
    mech = geometric_mechanism if params.noise == "discrete" else laplace_mechanism  # integer counts: integer noise
    last = np.full(m, lam_max)  # scale of the latest draw of each marginal
    num: list[np.ndarray] = []
    den = np.zeros(m)  # Σ 1/λ_k² per marginal
    for attrs in ctx.workload:  # Figure 12 lines 1–4
        e = first_eps
        y = mech(ctx.counts.marginal(attrs), sensitivity=sens, epsilon=e, ledger=ctx.ledger,
                 rng=rng, stage="initial", measured=marginal_label(ctx.domain, attrs))
        num.append(y / lam_max**2)
    den[:] = 1.0 / lam_max**2
    values = [v / d for v, d in zip(num, den)]
    size = np.array([v.size for v in values], dtype=float)
    weights = np.array([np.sum(1.0 / np.maximum(v, d)) for v, d in zip(values, delta)])
    if params.error_weight == "mean":
        weights = weights / size
    active = np.ones(m, dtype=bool)
    draws = m
    while active.any():  # lines 6–21
        sigma = 1.0 / np.sqrt(den)
        sigma_new = 1.0 / np.sqrt(den + 4.0 / last**2)
        score = np.where(active, weights * (sigma - sigma_new) * last / (2.0 * sens), -np.inf)
        j = int(np.argmax(score))
        new_scale = last[j] / 2.0
        e = sens / new_scale
        if not ctx.ledger.would_fit(Charge(stage="resample", mechanism="laplace", sensitivity=sens, epsilon=e)):
            active[j] = False
            continue
        attrs = ctx.workload[j]
        y = mech(ctx.counts.marginal(attrs), sensitivity=sens, epsilon=e, ledger=ctx.ledger,
                 rng=rng, stage="resample", measured=marginal_label(ctx.domain, attrs))
        draws += 1
        num[j] = num[j] + y / new_scale**2
        den[j] += 1.0 / new_scale**2
        last[j] = new_scale
        values[j] = num[j] / den[j]  # Equation 16
        w = np.sum(1.0 / np.maximum(values[j], delta[j]))
        weights[j] = w / size[j] if params.error_weight == "mean" else w
    sigma = 1.0 / np.sqrt(den)
    marginals = [NoisyMarginal(tuple(a), v, float(s)) for a, v, s in zip(ctx.workload, values, sigma)]
    details = {
        "marginals_measured": m,
        "lambda_max": lam_max,
        **sanity_details(ctx, params),
        "draws": draws,
        "combined_scale_min": float(sigma.min()),
        "combined_scale_max": float(sigma.max()),
    }
    return marginals, details, warnings


def run(ctx: AlgorithmContext, params: Params, *, rng: np.random.Generator) -> AlgorithmOutput:
    return release_marginals(ctx, params, measure, rng=rng)


def budget_plan(ctx: AlgorithmContext, params: Params) -> list[PlannedStage]:
    """What :func:`measure` charges: one draw per marginal at λ_max, then resamples while the budget lasts."""
    eps = ctx.ledger.remaining()
    first, lam_max, _, _ = initial_epsilon(ctx, params, eps)
    m = len(ctx.workload)
    return [PlannedStage(stage="initial", charges=m, total=first * m, epsilon=(first,) * m,
                         text=f"{m} draws at lambda_max {lam_max:.4g} (epsilon {first:.4g} each)"),
            PlannedStage(stage="resample", charges=None, total=eps - first * m,
                         text=("the rest, in draws at halved scales (doubled epsilon) chosen from the noisy "
                               "counts while the budget lasts"))]


SPEC = AlgorithmSpec(
    name="iresamp",
    summary="iResamp baseline: resampling with doubled budgets (Xiao et al. 2011, §3.3)",
    params=Params,
    run=run,
    workload=frozenset({"marginals"}),
    audit_params=({}, {"noise": "continuous"}),
    preflight=synthesis_preflight,
    budget_plan=budget_plan,
)
