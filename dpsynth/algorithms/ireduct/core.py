"""``ireduct``: noisy marginals with reduced relative error (Xiao, Bender, Hay & Gehrke 2011).

iReduct (§4.3, Figure 4) instantiated for marginals (§5.3).  Every workload
marginal M_j gets one Laplace noise scale λ_j, starting at λ_max.  The loop
(:mod:`dpsynth.algorithms.ireduct.loop`) repeatedly picks the marginal with
the best ratio of estimated error decrease (Equation 15) to privacy-cost
increase (Equation 14) and lowers its scale by
λ_Δ with NoiseDown (:mod:`dpsynth.privacy.noisedown`), as long as the generalized
sensitivity g = Σ_j Δ/λ_j (Equation 12) stays ≤ ε.  By Theorem 1 (proved for
our exact NoiseDown in :mod:`dpsynth.privacy.noisedown`), the whole transcript costs
what the final scales cost: ε' = Σ_j Δ/λ_j ≤ ε.

``pick: max`` replaces that PickQueries by §4.3's rule for the maximum
relative error (:class:`Pick`, :func:`max_error_weights`: a pessimistic count
per cell and the expected maximum over the cells of a marginal).  Per-marginal
sanity bounds come from ``workload.sanity_bounds`` (§2).  With a
``workload.queries`` section the same loop (:func:`ireduct_groups`) runs on
counting queries given as cell sets (:mod:`dpsynth.algorithms.ireduct.queries`).

Sensitivity per marginal Δ: the paper's Equation 12 uses 2 (replace-one: a
changed row moves one count down and another up in every marginal).  Under
add-remove one row changes one cell by 1 in every marginal, so Δ = 1.  We use
``ctx.neighbouring.histogram_l1``.

Deviations from the paper (numbers in docs/ireduct.md):

* Equation 15 estimates the error of M_j as λ_j·Σ_{y∈M_j} 1/max(y, δ), a sum
  over cells, while Definition 6 (the objective) and Oracle (§5.2) average
  over the cells of each marginal.  ``error_weight: mean`` (default) divides by
  |M_j| so that PickQueries optimises Definition 6; ``error_weight: sum`` is
  the paper as printed.
* Speed.  With λ_max/λ_Δ = 10⁵ the literal loop takes up to 10⁵ steps *per
  marginal* (about 10⁷ for all 2-way marginals of Adult).  ``refresh > 0``
  (default 0.02) runs the same greedy in rounds: each round lowers every
  marginal whose PickQueries priority is above a common level (a water level
  chosen so that g grows by at most a factor 1 + refresh), with one NoiseDown
  per marginal per round (a chain of NoiseDown steps equals one NoiseDown in
  law), and refreshes the priorities from the new noisy values between rounds.
  The last part of the budget is spent by the literal one-step-at-a-time loop
  of Figure 4.  ``refresh: 0`` runs the literal loop only.  Either way every
  decision uses only noisy values already drawn, so the privacy argument is
  unchanged.
* ``lambda_max`` defaults to n/10 (§6.1) but is raised to 10·Δ·m/ε when n/10
  cannot pay for the first draw of the m marginals (Figure 4 line 3 would
  return nothing); ``lambda_delta`` defaults to λ_max/10⁵ (n/10⁶ in §6.1).

Ledger: one charge per marginal at the end, ε_j = Δ/λ_j (never rounded down) with the
final scale λ_j; the loop keeps Σ_j ε_j ≤ ε by construction (float checks with
a 10⁻⁹ relative margin, exact rational arithmetic near the boundary), and the
ledger checks the exact sum again.  If it ever refused, the run raises and
nothing is released.
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
from dpsynth.algorithms.ireduct.loop import default_scales, generalized_sensitivity, ireduct_marginals
from dpsynth.algorithms.ireduct.queries import queries_stage, run_queries
from dpsynth.algorithms.spec import AlgorithmSpec, PlannedStage
from dpsynth.errors import ConfigError
from dpsynth.params import params_from_mapping
from dpsynth.privacy.accountant import Charge
from dpsynth.privacy.allocation import scale_cost
from dpsynth.workload.marginals import SanityBounds, default_sanity_bound

__all__ = [
    "Params",
    "budget_plan",
    "charge_final_scales",
    "marginal_label",
    "measure",
    "parse_params",
    "resolve_scales",
    "run",
    "sanity_bounds",
    "sanity_details",
]


@dataclass(frozen=True, kw_only=True)
class Params(SynthesisParams):
    lambda_max: float | None = None
    lambda_delta: float | None = None
    sanity_bound: float | None = None
    error_weight: Literal["mean", "sum"] = "mean"
    pick: Literal["average", "max"] = "average"
    refresh: float = 0.02

    def __post_init__(self) -> None:
        super().__post_init__()
        for key in ("lambda_max", "lambda_delta", "sanity_bound"):
            value = getattr(self, key)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ConfigError(f"algorithm.params.{key}: must be a number > 0, got {value!r}")
        if self.pick == "max" and self.error_weight != "mean":
            raise ConfigError("algorithm.params.error_weight: applies to pick: average only (pick: max ranks "
                              "marginals by their estimated largest relative error); remove it")
        if not (math.isfinite(self.refresh) and 0 <= self.refresh <= 1):
            raise ConfigError(f"algorithm.params.refresh: must be in [0, 1] (0: literal loop), got {self.refresh!r}")


def parse_params(raw: Mapping) -> Params:
    return params_from_mapping(Params, raw)



def marginal_label(domain, attrs) -> str:
    return "marginal(" + ", ".join(domain.names[a] for a in attrs) + ")"



# --------------------------------------------------------------------------- run
def resolve_scales(ctx: AlgorithmContext, params, epsilon: float) -> tuple[float, float, np.ndarray, list[str]]:
    """(λ_max, λ_Δ, δ, warnings) from the params and the public n."""
    sens = ctx.neighbouring.histogram_l1
    m = len(ctx.workload)
    warnings = []
    if params.lambda_max is None:
        lam_max, raised = default_scales(ctx.n, m, sens, epsilon)
        if raised:
            warnings.append(
                f"lambda_max = n/10 = {ctx.n / 10:.6g} cannot pay for the first draw of {m} marginals at "
                f"epsilon={epsilon:.6g}; using lambda_max = 10*{sens:g}*m/epsilon = {lam_max:.6g}"
            )
    else:
        lam_max = params.lambda_max
        if sens * m / lam_max > epsilon:
            raise ConfigError(
                f"algorithm.params.lambda_max: {lam_max:.6g} cannot pay for the first draw of {m} marginals "
                f"(cost {sens * m / lam_max:.6g} > epsilon {epsilon:.6g}); raise it to at least {sens * m / epsilon:.6g}"
            )
    lam_delta = getattr(params, "lambda_delta", None) or lam_max * 1e-5
    if lam_delta >= lam_max:
        raise ConfigError(
            f"algorithm.params.lambda_delta: must be smaller than lambda_max ({lam_delta:.6g} >= {lam_max:.6g})"
        )
    return lam_max, lam_delta, sanity_bounds(ctx, params), warnings


def _bounds_and_default(ctx: AlgorithmContext, params) -> tuple[SanityBounds, float]:
    fallback = params.sanity_bound if params.sanity_bound is not None else default_sanity_bound(ctx.n)
    bounds = ctx.queries.sanity_bounds if ctx.queries is not None else SanityBounds()
    return bounds, bounds.default if bounds.default is not None else fallback


def sanity_bounds(ctx: AlgorithmContext, params) -> np.ndarray:
    """δ_j of each workload marginal (public, §2 after Equation 1): its ``workload.sanity_bounds`` entry,
    else ``workload.sanity_bounds.default``, else the ``sanity_bound`` parameter, else 10⁻⁴·n (§6.1)."""
    bounds, default = _bounds_and_default(ctx, params)
    return bounds.for_marginals(ctx.workload, fallback=default)


def sanity_details(ctx: AlgorithmContext, params) -> dict:
    """The report's sanity-bound entries: the default δ and the per-marginal ones (all public)."""
    bounds, default = _bounds_and_default(ctx, params)
    out: dict = {"sanity_bound": float(default)}
    if bounds.per_marginal:
        out["sanity_bounds"] = bounds.to_raw(ctx.domain)["marginals"]
    return out


def charge_final_scales(ctx: AlgorithmContext, scales, *, stage: str, mechanism: str) -> None:
    """One ledger charge per marginal: ε_j = Δ/λ_j with the final scale λ_j (Theorem 1)."""
    sens = ctx.neighbouring.histogram_l1
    for attrs, lam in zip(ctx.workload, scales):
        ctx.ledger.charge(
            Charge(
                stage=stage,
                mechanism=mechanism,
                sensitivity=sens,
                epsilon=scale_cost(sens, lam),
                scale=float(lam),
                measured=marginal_label(ctx.domain, attrs),
                count=int(ctx.domain.cells(attrs)),
            )
        )


def measure(ctx: AlgorithmContext, params: Params, *, rng: np.random.Generator):
    """The released noisy marginals, the report details and warnings (no synthesis)."""
    eps = ctx.ledger.remaining()
    sens = ctx.neighbouring.histogram_l1
    lam_max, lam_delta, delta, warnings = resolve_scales(ctx, params, eps)
    true = ctx.counts.marginals(ctx.workload)
    res = ireduct_marginals(
        true, sensitivity=sens, epsilon=eps, lambda_max=lam_max, lambda_delta=lam_delta, sanity_bound=delta,
        rng=rng, error_weight=params.error_weight, pick=params.pick, refresh=params.refresh, progress=ctx.progress,
    )
    del true
    charge_final_scales(ctx, res.scales, stage="measure", mechanism="laplace+noisedown")
    marginals = [NoisyMarginal(tuple(a), v, float(s)) for a, v, s in zip(ctx.workload, res.values, res.scales)]
    details = {
        "marginals_measured": len(marginals),
        "lambda_max": lam_max,
        "lambda_delta": lam_delta,
        **sanity_details(ctx, params),
        "error_weight": params.error_weight,
        "pick": params.pick,
        "refresh": params.refresh,
        "noise_down_steps": res.steps,
        "rounds": res.rounds,
        "literal_steps": res.tail_steps,
        "generalized_sensitivity": generalized_sensitivity(res.scales, sens),
        "final_scale_min": float(res.scales.min()),
        "final_scale_median": float(np.median(res.scales)),
        "final_scale_max": float(res.scales.max()),
    }
    return marginals, details, warnings


def run(ctx: AlgorithmContext, params: Params, *, rng: np.random.Generator) -> AlgorithmOutput:
    if ctx.queries is not None and ctx.queries.queries is not None:  # a workload of counting queries
        return run_queries(ctx, params, rng=rng)
    return release_marginals(ctx, params, measure, rng=rng)


def budget_plan(ctx: AlgorithmContext, params: Params) -> list[PlannedStage]:
    """What :func:`run` charges: one entry per marginal (or one for all counting queries), each at the final
    scales the noise-down steps reach, within the ε left."""
    if ctx.queries is not None and ctx.queries.queries is not None:
        return [queries_stage(ctx, params)]
    eps, m = ctx.ledger.remaining(), len(ctx.workload)
    return [PlannedStage(stage="measure", charges=m, total=eps,
                         text=f"epsilon {eps:.4g} spent by noise-down steps, one charge per marginal ({m})")]


SPEC = AlgorithmSpec(
    name="ireduct",
    summary="Iterative noise reduction for relative error (Xiao et al. 2011, §4)",
    params=Params,
    run=run,
    workload=frozenset({"marginals", "queries"}),
    audit_params=({}, {"error_weight": "sum"}, {"pick": "max"}),
    preflight=synthesis_preflight,
    budget_plan=budget_plan,
)
