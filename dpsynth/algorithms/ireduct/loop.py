"""The iReduct loop (Xiao et al. 2011, §4.3 Figure 4) on groups of answers that share one noise scale.

The building blocks (generalized sensitivity, Equation 12; the PickQueries priorities, Equations 14–15 and
§4.3's maximum-error rule), the default scales of §6.1 and the loop itself: :func:`ireduct_marginals` (the
cells of each marginal form a group, §5.3) and :func:`ireduct_groups` (any groups, e.g. one counting query
each, :mod:`dpsynth.algorithms.ireduct.queries`).  The batched rounds (``refresh``) and the deviations from
the paper are described in :mod:`dpsynth.algorithms.ireduct.core`.  Nothing here charges the ledger: the
caller charges the final scales (Theorem 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dpsynth.privacy.allocation import CostAllocation
from dpsynth.privacy.mechanisms import laplace_chain_start, noise_down_step
from dpsynth.progress import Progress, no_progress

__all__ = [
    "MAX_MARGIN",
    "IReductResult",
    "Pick",
    "default_scales",
    "error_weights",
    "generalized_sensitivity",
    "ireduct_groups",
    "ireduct_marginals",
    "max_error_weights",
    "pick_priority",
    "pick_ratio",
]


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
