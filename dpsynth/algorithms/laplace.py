"""``laplace``: noisy counts of every workload marginal, then synthetic rows from them.

Dwork survey §3 Theorem 1 and §4.2 ("second approach": release noisy counts of
the cells and derive everything else from them).  With m workload marginals,
each a histogram of L1 sensitivity Δ_h (1 under add-remove, 2 under
replace-one), the vector of all cells has L1 sensitivity m·Δ_h; we add
Laplace noise of scale m·Δ_h/ε to every cell, i.e. charge ε/m per marginal.
This is the equal-noise baseline the iReduct paper calls "Dwork".

Noise: ``noise: discrete`` (default) adds two-sided geometric noise to the
integer counts, so the released counts are integers and carry none of the
floating-point artefacts of textbook Laplace sampling; ``noise: continuous``
adds real Laplace noise; ``noise: snapping`` uses the snapping mechanism (Mironov 2012, §5.2):
real values on a public lattice of multiples of a power of two, clamped to [−B, B] with
B = max(n, 8·scale) (n public or already noisy), at a scale larger by the factor 1 + 2⁻⁴⁹·B.
All are ε-DP with (essentially) the same scale.

Synthetic rows (post-processing, no privacy cost): :func:`dpsynth.models.synthesis.fit_model`
fits the noise-aware graphical model (:mod:`dpsynth.models.estimation`) to the noisy
marginals, as for iReduct and its baselines (``synthesis`` parameter), and the rows are drawn from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from dpsynth.algorithms.base import (
    AlgorithmContext,
    AlgorithmOutput,
    NoisyMarginal,
    SynthesisParams,
    release_marginals,
    synthesis_preflight,
)
from dpsynth.algorithms.spec import AlgorithmSpec, PlannedStage
from dpsynth.params import params_from_mapping
from dpsynth.privacy.accountant import split_budget
from dpsynth.privacy.mechanisms import geometric_mechanism, laplace_mechanism, snapping_mechanism, snapping_noise_scale

__all__ = ["Params", "budget_plan", "equal_shares", "measure", "measure_marginals", "parse_params", "run"]


@dataclass(frozen=True, kw_only=True)
class Params(SynthesisParams):
    noise: Literal["discrete", "continuous", "snapping"] = "discrete"


def parse_params(raw: Mapping) -> Params:
    return params_from_mapping(Params, raw)


def equal_shares(epsilon: float, m: int) -> list[float]:
    """ε split equally over m marginals (exact sum ≤ ε): the budget of :func:`measure_marginals`."""
    return split_budget(epsilon, [1.0] * m) if m else []


def marginals_stage(stage: str, epsilon: float, m: int, what: str) -> PlannedStage:
    """The :class:`PlannedStage` of :func:`measure_marginals` over m marginals."""
    shares = equal_shares(epsilon, m)
    each = f" ({shares[0]:.4g} each)" if shares else ""
    return PlannedStage(stage=stage, charges=m, total=epsilon, epsilon=tuple(shares),
                        text=f"epsilon {epsilon:.4g} split equally over {m} {what}{each}")


def measure_marginals(
    ctx: AlgorithmContext,
    attr_sets,
    epsilon: float,
    *,
    rng: np.random.Generator,
    noise: str = "discrete",
    stage: str = "measure",
) -> list[NoisyMarginal]:
    """Measure every marginal in ``attr_sets`` with an equal share of ``epsilon``."""
    attr_sets = list(attr_sets)
    shares = equal_shares(epsilon, len(attr_sets))
    sens = ctx.neighbouring.histogram_l1
    mech = geometric_mechanism if noise == "discrete" else laplace_mechanism
    out = []
    for i, (attrs, eps_i) in enumerate(zip(attr_sets, shares)):
        true = ctx.counts.marginal(attrs)
        kw: dict[str, Any] = {"sensitivity": sens, "epsilon": eps_i, "ledger": ctx.ledger, "rng": rng, "stage": stage,
              "measured": "marginal(" + ", ".join(ctx.domain.names[a] for a in attrs) + ")"}
        scale = sens / eps_i
        if noise == "snapping":  # the clamp bound must be public: n is public or already noisy
            bound = max(float(ctx.n), 8.0 * scale)
            scale = snapping_noise_scale(sensitivity=sens, epsilon=eps_i, bound=bound)[0]
            noisy = snapping_mechanism(true, bound=bound, **kw)
        else:
            noisy = mech(true, **kw)
        out.append(NoisyMarginal(tuple(attrs), np.asarray(noisy, dtype=float), scale))
        ctx.progress(stage, i + 1, len(attr_sets))
    return out


def measure(ctx: AlgorithmContext, params: Params, *, rng: np.random.Generator):
    """The noisy workload marginals, the report details and warnings (no synthesis)."""
    marginals = measure_marginals(ctx, ctx.workload, ctx.ledger.remaining(), rng=rng, noise=params.noise)
    details = {
        "marginals_measured": len(marginals),
        "noise": params.noise,
        "noise_scale_per_cell": marginals[0].scale if marginals else None,
    }
    return marginals, details, []


def run(ctx: AlgorithmContext, params: Params, *, rng: np.random.Generator) -> AlgorithmOutput:
    return release_marginals(ctx, params, measure, rng=rng)


def budget_plan(ctx: AlgorithmContext, params: Params) -> list[PlannedStage]:
    """What :func:`measure` charges: ε left equally over the workload marginals."""
    return [marginals_stage("measure", ctx.ledger.remaining(), len(ctx.workload), "marginals")]


SPEC = AlgorithmSpec(
    name="laplace",
    summary="Equal-noise marginals (Dwork survey §3, Laplace/geometric mechanism), rows from a fitted model",
    params=Params,
    run=run,
    workload=frozenset({"marginals"}),
    audit_params=({}, {"noise": "continuous"}, {"noise": "snapping"}),
    preflight=synthesis_preflight,
    budget_plan=budget_plan,
    no_error_bounds=None,
)
