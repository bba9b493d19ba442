"""``ireduct``: noisy marginals with reduced relative error (Xiao, Bender, Hay & Gehrke 2011).

iReduct (§4.3, Figure 4) instantiated for marginals (§5.3).  Every workload
marginal M_j gets one Laplace noise scale λ_j, starting at λ_max.  The loop
repeatedly picks the marginal with the best ratio of estimated error decrease
(Equation 15) to privacy-cost increase (Equation 14) and lowers its scale by
λ_Δ with NoiseDown (:mod:`dpsynth.privacy.noisedown`), as long as the generalized
sensitivity g = Σ_j Δ/λ_j (Equation 12) stays ≤ ε.  By Theorem 1 (proved for
our exact NoiseDown in :mod:`dpsynth.privacy.noisedown`), the whole transcript costs
what the final scales cost: ε' = Σ_j Δ/λ_j ≤ ε.

``pick: max`` replaces that PickQueries by §4.3's rule for the maximum
relative error (:class:`Pick`, :func:`max_error_weights`: a pessimistic count
per cell and the expected maximum over the cells of a marginal).  Per-marginal
sanity bounds come from ``workload.sanity_bounds`` (§2).  With a
``workload.queries`` section the same loop (:func:`ireduct_groups`) runs on
counting queries given as cell sets (:mod:`dpsynth.algorithms.ireduct_queries`).

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
from dataclasses import dataclass, field
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
from dpsynth.algorithms.ireduct_queries import queries_stage, run_queries
from dpsynth.algorithms.spec import AlgorithmSpec, PlannedStage
from dpsynth.errors import ConfigError
from dpsynth.params import params_from_mapping
from dpsynth.privacy.accountant import Charge, CostAllocation, scale_cost
from dpsynth.privacy.mechanisms import laplace_chain_start, noise_down_step
from dpsynth.progress import Progress, no_progress
from dpsynth.workload.marginals import SanityBounds, default_sanity_bound

__all__ = [
    "IReductResult",
    "Params",
    "Pick",
    "budget_plan",
    "default_scales",
    "error_weights",
    "generalized_sensitivity",
    "ireduct_marginals",
    "marginal_label",
    "max_error_weights",
    "measure",
    "parse_params",
    "pick_priority",
    "pick_ratio",
    "run",
    "sanity_bounds",
    "sanity_details",
    "scale_cost",
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


# ----------------------------------------------------------------- building blocks
def generalized_sensitivity(scales, sensitivity: float) -> float:
    """Equation 12: g = Σ_j Δ/λ_j for marginals with per-marginal scales λ_j (Definition 4)."""
    return math.fsum(float(sensitivity) / float(s) for s in np.asarray(scales, dtype=float).reshape(-1))


def error_weights(values, seg, sizes, sanity_bound, weight: str = "mean") -> np.ndarray:
    """Per marginal, Σ_{y∈M_j} 1/max(y, δ) (Equation 15), divided by |M_j| when ``weight == 'mean'``.

    ``sanity_bound``: one δ, or one per cell (per-query sanity bounds, §2 after Equation 1)."""
    inv = 1.0 / np.maximum(np.asarray(values, dtype=float), sanity_bound)
    sums = np.bincount(seg, weights=inv, minlength=len(sizes))
    return sums / np.asarray(sizes, dtype=float) if weight == "mean" else sums


def pick_priority(weights, scales, lambda_delta: float) -> np.ndarray:
    """w_j·λ_j·(λ_j − λ_Δ): proportional (same factor for every j) to the Equation 15 / 14 ratio."""
    lam = np.asarray(scales, dtype=float)
    return np.asarray(weights, dtype=float) * lam * (lam - lambda_delta)


MAX_MARGIN = 3.0
"""``pick: max`` reads a noisy count y of scale λ as at least max(y − c·λ, δ) with c = 3 + ln(cells): the
chance that ANY cell's Laplace noise exceeds c·λ is at most cells·e^(−c)/2 = e⁻³/2 ≈ 2.5% (union bound).
Measured on Adult (docs/ireduct.md): 0 + ln(cells) and 6 + ln(cells) each lose somewhere (1-way ε = 1,
2-way ε = 0.1 with one run in ten stuck at a large scale); 3 + ln(cells) beat the default in all four."""


def max_error_weights(values, seg, sizes, cell_scales, sanity_bound, margin: float = MAX_MARGIN) -> np.ndarray:
    """Per marginal j, w_j with λ_j·w_j ≈ the expected LARGEST relative error of its cells (``pick: max``).

    Each cell's count is estimated pessimistically, d = max(y − margin·λ_j, δ) (a noisy value does
    not hide a small count behind noise of scale λ_max), and the expected maximum of the C_j
    errors |Z_i|/d_i with |Z_i| ~ Exp(λ_j) is bounded below by max_t H_t/d_(t) (d_(t) the t-th
    smallest d, H_t the harmonic number: the largest of t exponentials has mean λ·H_t).
    Vectorised over all cells: one sort by (marginal, d), one ``maximum.reduceat``.
    """
    d = np.maximum(np.asarray(values, dtype=float) - margin * np.asarray(cell_scales, dtype=float), sanity_bound)
    order = np.lexsort((d, seg))
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    rank = np.arange(d.size) - starts[np.asarray(seg)[order]]  # 0-based rank within the marginal
    harmonic = np.cumsum(1.0 / np.arange(1, int(np.max(sizes)) + 1))
    return np.maximum.reduceat(harmonic[rank] / d[order], starts)


@dataclass(frozen=True)
class Pick:
    """PickQueries (Figure 4 line 7) from noisy values and scales only.

    ``average`` (§5.3): priority w_j·λ_j·(λ_j − λ_Δ), w_j from :func:`error_weights` (the Equation 15 /
    Equation 14 ratio).  ``max`` (§4.3's "minimise the maximum relative error" variant, applied per
    marginal): priority λ_j·w_j, the estimated largest relative error of marginal j
    (:func:`max_error_weights`); the greedy keeps reducing the current worst marginal, which
    equalises λ_j·w_j (the minimax allocation λ_j ∝ 1/w_j under Σ Δ/λ_j ≤ ε).
    """

    mode: str
    seg: np.ndarray
    sizes: np.ndarray
    delta: np.ndarray
    error_weight: str = "mean"
    margin: float = MAX_MARGIN

    def weights(self, y, scales) -> np.ndarray:
        if self.mode == "max":
            return max_error_weights(y, self.seg, self.sizes, np.asarray(scales)[self.seg], self.delta, self.margin)
        return error_weights(y, self.seg, self.sizes, self.delta, self.error_weight)

    def weight_one(self, y_j, scale: float, delta_j) -> float:
        if self.mode == "max":
            return float(max_error_weights(y_j, np.zeros(y_j.size, dtype=np.int64), [y_j.size],
                                           np.full(y_j.size, scale), delta_j, self.margin)[0])
        inv = 1.0 / np.maximum(y_j, delta_j)
        return float(inv.sum() / (y_j.size if self.error_weight == "mean" else 1.0))

    def priority(self, weights, scales, lambda_delta: float) -> np.ndarray:
        if self.mode == "max":
            return np.asarray(weights, dtype=float) * np.asarray(scales, dtype=float)
        return pick_priority(weights, scales, lambda_delta)

    def threshold(self, level: float, weights, lambda_delta: float) -> np.ndarray:
        """The smallest scale whose priority is still ≥ ``level`` (a step from λ is taken iff λ ≥ it)."""
        if self.mode == "max":
            return level / weights
        return 0.5 * (lambda_delta + np.sqrt(lambda_delta**2 + 4.0 * level / weights))


def pick_ratio(weights, scales, lambda_delta: float, n_marginals: int, sensitivity: float) -> np.ndarray:
    """The §5.3 ratio as printed: (λ_Δ/|𝓜|·w_j) / (Δ/(λ_j − λ_Δ) − Δ/λ_j) (for tests and docs)."""
    lam = np.asarray(scales, dtype=float)
    gain = lambda_delta / n_marginals * np.asarray(weights, dtype=float)
    return gain / (sensitivity / (lam - lambda_delta) - sensitivity / lam)


def default_scales(n: float, m: int, sensitivity: float, epsilon: float) -> tuple[float, bool]:
    """(λ_max, raised): n/10 (§6.1), or 10·Δ·m/ε when n/10 cannot pay for the first draw."""
    lam = float(n) / 10.0
    need = sensitivity * m / epsilon
    if lam >= need * (1 + 1e-6):
        return lam, False
    return 10.0 * need, True


def marginal_label(domain, attrs) -> str:
    return "marginal(" + ", ".join(domain.names[a] for a in attrs) + ")"


# ----------------------------------------------------------------------- the loop
@dataclass
class IReductResult:
    values: list[np.ndarray]
    scales: np.ndarray
    rounds: int = 0
    steps: int = 0
    tail_steps: int = 0
    stats: dict = field(default_factory=dict)


def ireduct_marginals(
    true: list[np.ndarray],
    *,
    sensitivity: float,
    epsilon: float,
    lambda_max: float,
    lambda_delta: float,
    sanity_bound,
    rng: np.random.Generator,
    error_weight: str = "mean",
    pick: str = "average",
    refresh: float = 0.02,
    progress: Progress = no_progress,
) -> IReductResult:
    """Figure 4 on marginals (§5.3): returns noisy marginals and their final scales (Σ Δ/λ_j ≤ ε).

    ``true`` holds the exact marginals (private); ``sanity_bound`` is one δ or one per
    marginal (per-query sanity bounds, §2).  The caller must charge the
    ledger with Δ/λ_j per marginal (Theorem 1).  Raises ``ValueError`` when
    λ_max cannot pay for the first draw (Figure 4 line 3).
    """
    m = len(true)
    shapes = [np.shape(t) for t in true]
    sizes = np.array([max(1, int(np.prod(s))) for s in shapes])
    mu = np.concatenate([np.asarray(t, dtype=float).reshape(-1) for t in true])
    if lambda_delta >= lambda_max:
        raise ValueError("lambda_delta must be smaller than lambda_max")
    budget = CostAllocation(epsilon, sensitivity, np.full(m, lambda_max))
    result = ireduct_groups(mu, sizes, budget, lambda_max=lambda_max, lambda_delta=lambda_delta,
                            sanity_bound=sanity_bound, rng=rng, error_weight=error_weight, pick=pick,
                            refresh=refresh, progress=progress, label="marginals")
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    result.values = [result.values[0][bounds[j]:bounds[j + 1]].reshape(shapes[j]) for j in range(m)]
    return result


def ireduct_groups(mu, sizes, budget, *, lambda_max: float, lambda_delta: float, sanity_bound,
                   rng: np.random.Generator, error_weight: str = "mean", pick: str = "average",
                   refresh: float = 0.02, progress: Progress = no_progress, label: str = "marginals") -> IReductResult:
    """Figure 4 on groups of answers sharing one scale (the cells of a marginal, §5.3, or one counting query).

    ``mu``: the true answers, group after group (private); ``sizes``: answers per group; ``budget``: a
    :class:`CostAllocation` (marginals) or :class:`PatternCostAllocation` (overlapping queries) at
    λ_max for every group; ``sanity_bound``: one δ or one per group.  Returns the noisy answers as
    ``values[0]`` (one flat array) and the final scales; the caller charges ``budget.total``'s terms.
    """
    m = len(sizes)
    seg = np.repeat(np.arange(m), sizes)
    delta = np.broadcast_to(np.asarray(sanity_bound, dtype=float), (m,))[seg]  # δ of every answer
    steps_k = np.zeros(m, dtype=np.int64)  # λ_j = λ_max − k_j·λ_Δ, always from integers
    if budget.total > budget.epsilon:
        need = lambda_max * budget.total / budget.epsilon
        raise ValueError(
            f"lambda_max={lambda_max:.6g} cannot pay for the first draw: {m} {label} cost "
            f"{budget.total:.6g} > epsilon={budget.epsilon:.6g}; raise lambda_max to at least {need:.6g}"
        )
    everything = np.ones(m, dtype=bool)
    y = laplace_chain_start(mu, scale=lambda_max, sensitivity=budget.sub_sensitivity(everything), rng=rng,
                            stage="measure", measured=f"{m} {label}")  # Figure 4 line 4 (charged at the end)
    picker = Pick(pick, seg, sizes, delta, error_weight, margin=MAX_MARGIN + math.log(mu.size))
    weights = picker.weights(y, np.full(m, lambda_max))
    result = IReductResult(values=[], scales=np.empty(0))
    if refresh > 0:
        steps_k, y, weights = _rounds(
            mu, y, steps_k, weights, budget, lambda_max, lambda_delta, picker, refresh, rng, progress, result,
        )
    steps_k, y = _literal_loop(mu, y, steps_k, weights, budget, lambda_max, lambda_delta, picker, rng, result)
    progress("noise reduction", 1000, 1000)
    result.values = [y]
    result.scales = lambda_max - steps_k * lambda_delta
    return result


def _water_fill(weights, steps_k, lambda_max, lambda_delta, budget, target, picker) -> np.ndarray:
    """Extra steps per marginal that take every step with priority ≥ L, for the smallest L with g ≤ target."""
    lam = lambda_max - steps_k * lambda_delta
    last = np.ceil(lambda_max / lambda_delta) - 1  # last lattice index with λ > 0

    def steps_at(level: float) -> np.ndarray:
        thr = picker.threshold(level, weights, lambda_delta)
        top = np.floor((lambda_max - thr) / lambda_delta)  # largest t with λ_t ≥ thr
        top = np.minimum(top, last - 1)
        return np.maximum(0, top - steps_k + 1).astype(np.int64)

    def g_at(level: float) -> float:
        return budget.total_for(lambda_max - (steps_k + steps_at(level)) * lambda_delta)

    hi = float(np.max(picker.priority(weights, lam, lambda_delta)))
    if not hi > 0:
        return np.zeros_like(steps_k)
    hi = math.log(hi) + 1e-9
    lo = hi - 80.0
    if g_at(math.exp(lo)) <= target:
        return steps_at(math.exp(lo))
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if g_at(math.exp(mid)) <= target:
            hi = mid
        else:
            lo = mid
    return steps_at(math.exp(hi))


def _rounds(mu, y, steps_k, weights, budget, lambda_max, lambda_delta, picker, refresh, rng, progress, result):
    seg = picker.seg
    eps_safe = budget.safe_total
    final_rounds = 0
    while final_rounds < 50:
        g = budget.total
        target = min(eps_safe, g * (1 + refresh))
        if target >= eps_safe:
            final_rounds += 1
        extra = _water_fill(weights, steps_k, lambda_max, lambda_delta, budget, target, picker)
        if not extra.any():
            break
        new_k = steps_k + extra
        old_lam = lambda_max - steps_k * lambda_delta
        new_lam = lambda_max - new_k * lambda_delta
        cells = extra[seg] > 0
        y = y.copy()
        y[cells] = noise_down_step(mu[cells], y[cells], old_lam[seg][cells], new_lam[seg][cells],
                                   sensitivity=budget.sub_sensitivity(extra > 0), rng=rng, stage="measure",
                                   measured=f"{int(np.count_nonzero(extra))} groups")
        steps_k = new_k
        budget.reset(new_lam)
        weights = picker.weights(y, new_lam)
        result.rounds += 1
        result.steps += int(extra.sum())
        progress("noise reduction", min(999, int(1000 * budget.total / budget.epsilon)), 1000)
    return steps_k, y, weights


def _literal_loop(mu, y, steps_k, weights, budget, lambda_max, lambda_delta, picker, rng, result):
    """Figure 4 lines 5–16, one marginal and one λ_Δ step at a time; marginals that cannot step leave Q′."""
    sizes = picker.sizes
    m = len(sizes)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    active = np.ones(m, dtype=bool)
    weights = weights.copy()
    while active.any():
        lam = lambda_max - steps_k * lambda_delta
        prio = np.where(active, picker.priority(weights, lam, lambda_delta), -np.inf)
        j = int(np.argmax(prio))
        new_scale = lambda_max - (steps_k[j] + 1) * lambda_delta
        ok, cost = (False, 0.0) if new_scale <= 0 else budget.fits_with(j, new_scale)
        if not ok:
            active[j] = False  # line 16: Q′ = Q′ \ Q_Δ
            continue
        sl = slice(bounds[j], bounds[j + 1])
        y[sl] = noise_down_step(mu[sl], y[sl], lam[j], new_scale, sensitivity=budget.sub_sensitivity([j]),
                                rng=rng, stage="measure", measured=f"group {j}")
        steps_k[j] += 1
        budget.set(j, cost)
        weights[j] = picker.weight_one(y[sl], new_scale, picker.delta[sl])
        result.tail_steps += 1
        result.steps += 1
    return steps_k, y


# --------------------------------------------------------------------------- run
def resolve_scales(ctx: AlgorithmContext, params, epsilon: float) -> tuple[float, float, float, list[str]]:
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
