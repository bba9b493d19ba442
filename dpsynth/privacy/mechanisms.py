"""Noise mechanisms: Laplace, discrete Laplace, Gaussian and the exponential mechanism.

Pure numpy, no pandas and no I/O.  Every ``*_mechanism`` function takes the
true (private) quantity, its sensitivity and the privacy parameter, **charges
the ledger first** (so an unaffordable call draws nothing), then returns the
noisy answer.  The raw samplers (``*_noise``) are exposed for tests.  The last
block holds iReduct's NoiseDown chain (:func:`laplace_chain_start`,
:func:`noise_down_step`): those draws are charged by the caller at the chain's
final scale (Xiao et al. 2011, Theorem 1) but go through the same test hook.

References: Dwork, "Differential Privacy: A Survey of Results" (2008), §3
Theorem 1 (Laplace: scale Δf/ε gives ε-DP) and §3 "the exponential mechanism"
(output y with probability ∝ exp(ε·u(X, y)/(2Δu))).  The survey prints the
weight as exp(−ε·u/2) with a minus sign for a *cost* u; we use utilities
(higher is better) and the standard exp(+ε·u/(2Δu)).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from dpsynth.privacy.accountant import Charge, Ledger, zcdp_to_approx_dp
from dpsynth.privacy.exact import exponential_indices
from dpsynth.privacy.noisedown import noise_down

recorder = None
"""Test hook, off (None) by default: never set it outside tests.

When set to a callable ``recorder(mechanism, true, output, info)``, every
``*_mechanism`` calls it after drawing, with the pre-noise quantity ``true``
(a copy), the ``output`` and ``info`` (stage, measured, sensitivity, epsilon
or rho).  A non-None return value replaces the output; the coupled replay
test (tests/privacy/test_replay.py) uses this to feed a run on D′ the noisy
values drawn on D.  With the hook unset nothing changes.
"""


def _tap(mechanism: str, true, output, **info):
    if recorder is None:
        return output
    replaced = recorder(mechanism, np.array(true, copy=True), output, info)
    return output if replaced is None else replaced

__all__ = [
    "discrete_gaussian_mechanism",
    "discrete_gaussian_noise",
    "discrete_laplace_noise",
    "discrete_laplace_variance",
    "exponential_mechanism",
    "exponential_probabilities",
    "exponential_samples_mechanism",
    "gaussian_mechanism",
    "geometric_mechanism",
    "laplace_chain_start",
    "laplace_mechanism",
    "laplace_noise",
    "laplace_variance",
    "noise_down_step",
    "snapping_mechanism",
    "snapping_noise_scale",
]


def _check_positive(name: str, value: float) -> float:
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return value


# --------------------------------------------------------------------------- Laplace
def laplace_noise(scale: float, size, *, rng: np.random.Generator) -> np.ndarray:
    """Draws from Laplace(0, scale), density exp(−|x|/scale)/(2·scale)."""
    _check_positive("scale", scale)
    return rng.laplace(0.0, scale, size=size)


def laplace_variance(scale: float) -> float:
    """Variance of Laplace(0, scale): 2·scale²."""
    return 2.0 * float(scale) ** 2


def laplace_mechanism(
    values,
    *,
    sensitivity: float,
    epsilon: float,
    ledger: Ledger,
    rng: np.random.Generator,
    stage: str,
    measured: str = "",
) -> np.ndarray:
    """ε-DP release of a vector whose L1 sensitivity is ``sensitivity`` (survey §3, Thm 1)."""
    sensitivity = _check_positive("sensitivity", sensitivity)
    epsilon = _check_positive("epsilon", epsilon)
    values = np.asarray(values, dtype=float)
    scale = sensitivity / epsilon
    ledger.charge(
        Charge(
            stage=stage,
            mechanism="laplace",
            sensitivity=sensitivity,
            epsilon=epsilon,
            scale=scale,
            rho=epsilon**2 / 2.0,
            measured=measured,
            count=int(values.size),
        )
    )
    out = values + laplace_noise(scale, values.shape, rng=rng)
    return _tap("laplace", values, out, stage=stage, measured=measured, sensitivity=sensitivity, epsilon=epsilon)


# ------------------------------------------------------------------ discrete Laplace
def discrete_laplace_noise(scale: float, size, *, rng: np.random.Generator) -> np.ndarray:
    """Integer noise with P(X = k) ∝ exp(−|k|/scale) (the two-sided geometric distribution).

    Sampled as the difference of two i.i.d. geometric variables with success
    probability p = 1 − exp(−1/scale).  Outputs are integers, so released
    integer counts do not carry the floating-point artefacts of textbook
    inverse-CDF Laplace noise (Mironov 2012).
    """
    _check_positive("scale", scale)
    p = -math.expm1(-1.0 / scale)
    g1 = rng.geometric(p, size=size)
    g2 = rng.geometric(p, size=size)
    return (g1 - g2).astype(np.int64)


def discrete_laplace_variance(scale: float) -> float:
    """Variance of the two-sided geometric: 2·a/(1−a)² with a = exp(−1/scale)."""
    a = math.exp(-1.0 / float(scale))
    return 2.0 * a / (1.0 - a) ** 2


def geometric_mechanism(
    values,
    *,
    sensitivity: float,
    epsilon: float,
    ledger: Ledger,
    rng: np.random.Generator,
    stage: str,
    measured: str = "",
) -> np.ndarray:
    """ε-DP release of integer counts with L1 sensitivity ``sensitivity`` (an integer).

    Adds two-sided geometric noise with scale Δ/ε: for integer neighbouring
    vectors at L1 distance ≤ Δ the output probabilities differ by at most e^ε.
    """
    sensitivity = _check_positive("sensitivity", sensitivity)
    epsilon = _check_positive("epsilon", epsilon)
    values = np.asarray(values)
    if not np.issubdtype(values.dtype, np.integer):
        raise ValueError("geometric_mechanism needs integer values")
    scale = sensitivity / epsilon
    ledger.charge(
        Charge(
            stage=stage,
            mechanism="discrete-laplace",
            sensitivity=sensitivity,
            epsilon=epsilon,
            scale=scale,
            rho=epsilon**2 / 2.0,
            measured=measured,
            count=int(values.size),
        )
    )
    out = values.astype(np.int64) + discrete_laplace_noise(scale, values.shape, rng=rng)
    return _tap("discrete-laplace", values, out, stage=stage, measured=measured, sensitivity=sensitivity,
                epsilon=epsilon)


# -------------------------------------------------------------------------- Gaussian
def _charge_gaussian(mechanism: str, l2_sensitivity: float, rho: float, ledger: Ledger, *, stage: str,
                     measured: str, count: int) -> float:
    """Charge ρ (with the (ε, δ) it implies at the ledger's δ) for Gaussian noise of either kind on ``count``
    values; returns its deviation σ = Δ₂/sqrt(2ρ).  Refuses when the ledger's δ is 0."""
    l2_sensitivity = _check_positive("l2_sensitivity", l2_sensitivity)
    rho = _check_positive("rho", rho)
    sigma = l2_sensitivity / math.sqrt(2.0 * rho)
    eps = zcdp_to_approx_dp(rho, ledger.delta) if ledger.delta > 0 else math.inf
    if not math.isfinite(eps):
        from dpsynth.errors import BudgetError

        raise BudgetError("Gaussian noise needs delta > 0 (set privacy.delta)")
    ledger.charge(
        Charge(
            stage=stage,
            mechanism=mechanism,
            sensitivity=l2_sensitivity,
            epsilon=eps,
            delta=ledger.delta,
            scale=sigma,
            rho=rho,
            measured=measured,
            count=count,
        )
    )
    return sigma


def gaussian_mechanism(
    values,
    *,
    l2_sensitivity: float,
    rho: float,
    ledger: Ledger,
    rng: np.random.Generator,
    stage: str,
    measured: str = "",
) -> np.ndarray:
    """ρ-zCDP release with N(0, σ²) noise, σ = Δ₂/sqrt(2ρ) (Bun & Steinke 2016, Prop. 1.6).

    The charge also carries the (ε, δ) implied by ρ at the ledger's δ, so that
    basic composition of such charges remains a valid (loose) bound.
    """
    values = np.asarray(values, dtype=float)
    sigma = _charge_gaussian("gaussian", l2_sensitivity, rho, ledger, stage=stage, measured=measured,
                             count=int(values.size))
    out = values + rng.normal(0.0, sigma, size=values.shape)
    return _tap("gaussian", values, out, stage=stage, measured=measured, sensitivity=l2_sensitivity, rho=rho)


# ------------------------------------------------------------------ discrete Gaussian
def discrete_gaussian_noise(sigma: float, size, *, rng: np.random.Generator) -> np.ndarray:
    """Integer noise with P(X = k) ∝ exp(−k²/(2σ²)) (the discrete Gaussian N_Z(0, σ²)).

    Canonne, Kamath & Steinke 2020, Algorithm 3: propose Y from the discrete Laplace with scale
    t = ⌊σ⌋ + 1 and accept it with probability exp(−(|Y| − σ²/t)²/(2σ²)); vectorized, one pass over
    the still-rejected cells per round (the acceptance rate is ≥ 1/2 for σ ≥ 1, so a few rounds).
    The acceptance test compares a uniform double with a rounded probability, an error of order 2⁻⁵³
    per proposal; the outputs are integers, so no low-order bits reveal the input (Mironov 2012).
    """
    sigma = _check_positive("sigma", sigma)
    shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size)
    out = np.zeros(shape, dtype=np.int64).reshape(-1)
    todo = np.arange(out.size)
    t = math.floor(sigma) + 1.0
    while todo.size:  # loop over rejection rounds, vectorized over the cells still to draw
        y = discrete_laplace_noise(t, todo.size, rng=rng)
        accept = rng.random(todo.size) < np.exp(-((np.abs(y) - sigma**2 / t) ** 2) / (2.0 * sigma**2))
        out[todo[accept]] = y[accept]
        todo = todo[~accept]
    return out.reshape(shape)


def discrete_gaussian_mechanism(
    values,
    *,
    l2_sensitivity: float,
    rho: float,
    ledger: Ledger,
    rng: np.random.Generator,
    stage: str,
    measured: str = "",
) -> np.ndarray:
    """ρ-zCDP release of integer counts with N_Z(0, σ²) noise, σ = Δ₂/sqrt(2ρ).

    Canonne, Kamath & Steinke 2020, Theorem 14: for integer vectors at L2 distance ≤ Δ₂ the discrete
    Gaussian is (Δ₂²/(2σ²))-zCDP, the same ρ as the continuous Gaussian of Bun & Steinke (Prop. 1.6).
    The charge carries the (ε, δ) implied by ρ at the ledger's δ, as :func:`gaussian_mechanism` does.
    """
    values = np.asarray(values)
    if not np.issubdtype(values.dtype, np.integer):
        raise ValueError("discrete_gaussian_mechanism needs integer values")
    sigma = _charge_gaussian("discrete-gaussian", l2_sensitivity, rho, ledger, stage=stage, measured=measured,
                             count=int(values.size))
    out = values.astype(np.int64) + discrete_gaussian_noise(sigma, values.shape, rng=rng)
    return _tap("discrete-gaussian", values, out, stage=stage, measured=measured, sensitivity=l2_sensitivity,
                rho=rho)


# ------------------------------------------------------------- exponential mechanism
def _scores(scores) -> np.ndarray:
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 1 or scores.size == 0:
        raise ValueError("scores must be a non-empty 1-d array")
    if not np.all(np.isfinite(scores)):
        raise ValueError("scores must be finite (no NaN or infinity)")
    return scores


def _logits(scores, sensitivity: float, epsilon: float) -> np.ndarray:
    scores = _scores(scores)
    factor = epsilon / (2.0 * sensitivity)
    # Shift by the maximum before scaling: the differences stay finite for
    # scores within ±1e308/2, and the product is in [-inf, 0], never NaN.
    with np.errstate(over="ignore"):
        shifted = scores - scores.max()
        logits = shifted * factor
    logits[shifted == 0] = 0.0
    return logits


def exponential_probabilities(scores, *, sensitivity: float, epsilon: float) -> np.ndarray:
    """Selection probabilities ∝ exp(ε·score/(2Δ)), computed stably in floating point (max-shifted).

    For expectations and tests: :func:`exponential_mechanism` does not use them (it samples exactly)."""
    sensitivity = _check_positive("sensitivity", sensitivity)
    epsilon = _check_positive("epsilon", epsilon)
    logits = _logits(scores, sensitivity, epsilon)
    w = np.exp(logits)  # max element is exactly 1, so the sum is >= 1
    return w / w.sum()


def _exact_factor(sensitivity: float, epsilon: float) -> Fraction:
    """ε/(2Δ) as the exact rational of the two doubles (no rounding)."""
    return Fraction(epsilon) / (2 * Fraction(sensitivity))


def exponential_mechanism(
    scores,
    *,
    sensitivity: float,
    epsilon: float,
    ledger: Ledger,
    rng: np.random.Generator,
    stage: str,
    measured: str = "",
) -> int:
    """Index i chosen with probability ∝ exp(ε·scores[i]/(2Δ)); ε-DP (survey §3).

    Sampled exactly (:func:`dpsynth.privacy.exact.exponential_indices`): the scores, ε and Δ are taken as
    the rationals their doubles represent and no probability is rounded, so the ε-DP proof holds for the
    sampler itself (not only for an idealized real-arithmetic one; Mironov 2012).  Ties are broken
    uniformly.  The charge also records ρ = ε²/8, the zCDP cost of this bounded-range mechanism
    (Cesar & Rogers 2021), for ledgers that compose under zCDP.
    """
    sensitivity = _check_positive("sensitivity", sensitivity)
    epsilon = _check_positive("epsilon", epsilon)
    scores = _scores(scores)
    ledger.charge(
        Charge(
            stage=stage,
            mechanism="exponential",
            sensitivity=sensitivity,
            epsilon=epsilon,
            rho=epsilon**2 / 8.0,
            measured=measured,
            count=1,
        )
    )
    out = int(exponential_indices(scores[None, :], _exact_factor(sensitivity, epsilon), [0], rng=rng)[0])
    return _tap("exponential", scores, out, stage=stage, measured=measured, sensitivity=sensitivity,
                epsilon=epsilon)


def exponential_samples_mechanism(
    scores,
    count: int,
    *,
    weight: float,
    charge: Charge,
    ledger: Ledger,
    rng: np.random.Generator,
) -> np.ndarray:
    """``count`` i.i.d. indices with P(i) ∝ exp(weight·scores[i]), sampled exactly (as
    :func:`exponential_mechanism`), after charging the caller's ``charge``.

    For algorithms whose sampling distribution is an exponential mechanism with ε = 2·weight·Δ but whose
    cost is set by their own composition (DualQuery, Gaboardi et al. 2014, §3 and the proof of
    Theorem 4.2: each of the s samples of round t is a 2η(t−1)/n-DP draw with scores r of sensitivity
    (t−1)/n); ``charge.sensitivity`` is the scores' sup-norm sensitivity, reported to the test hook.
    """
    weight = _check_positive("weight", weight)
    scores = _scores(scores)
    count = int(count)
    if count < 1:
        raise ValueError(f"count must be >= 1, got {count!r}")
    ledger.charge(charge)
    out = exponential_indices(scores[None, :], Fraction(weight), np.zeros(count, dtype=np.int64), rng=rng)
    return _tap("exponential-samples", scores, out, stage=charge.stage, measured=charge.measured,
                sensitivity=charge.sensitivity, epsilon=charge.epsilon, count=count, weight=weight)


# ------------------------------------------------------------------- snapping mechanism
_SNAP_SLACK = 2.0**-49


def snapping_noise_scale(*, sensitivity: float, epsilon: float, bound: float) -> tuple[float, float]:
    """(λ, Λ) of the snapping mechanism: λ = Δ·(1 + 2⁻⁴⁹·B)/ε and Λ the smallest power of 2 ≥ λ.

    Mironov 2012, Theorem 1 (sensitivity 1): the mechanism is (1/λ + 2⁻⁴⁹·B/λ)-DP for λ < B < 2⁴⁶·λ;
    with Δ coordinates changing by at most 1 each, the losses add up, hence the factor Δ.
    """
    sensitivity = _check_positive("sensitivity", sensitivity)
    epsilon = _check_positive("epsilon", epsilon)
    bound = _check_positive("bound", bound)
    lam = sensitivity * (1.0 + _SNAP_SLACK * bound) / epsilon
    lam = math.nextafter(lam, math.inf)  # never below the exact value
    if not lam < bound < 2.0**46 * lam:
        raise ValueError(
            f"snapping mechanism needs noise scale < bound < 2^46 * scale, got scale {lam:.6g} and bound {bound:.6g}"
        )
    return lam, 2.0 ** math.ceil(math.log2(lam))


def _uniform_doubles(size, rng: np.random.Generator) -> np.ndarray:
    """U* of Mironov §5.2: every double in (0, 1) with probability proportional to its spacing.

    Exponent: geometric (P(2⁻ᵏ ≤ U < 2⁻ᵏ⁺¹) = 2⁻ᵏ); mantissa: 52 uniform bits.  Exact, no rounding.
    """
    k = rng.geometric(0.5, size=size)
    mantissa = rng.integers(0, 2**52, size=size, dtype=np.int64)
    return np.ldexp(1.0 + mantissa.astype(float) / 2.0**52, -k)


def snapping_mechanism(
    values,
    *,
    sensitivity: float,
    epsilon: float,
    bound: float,
    ledger: Ledger,
    rng: np.random.Generator,
    stage: str,
    measured: str = "",
) -> np.ndarray:
    """ε-DP real-valued release robust to floating-point attacks (Mironov 2012, §5.2, the snapping mechanism).

    For counting vectors (histograms): neighbouring inputs differ in at most ``sensitivity``
    coordinates, each by at most 1.  Each coordinate x is released as
    clamp_B(round_Λ(clamp_B(x) + S·λ·ln U*)) with S a random sign: every output is a multiple of
    the power of two Λ in [−B, B], so the set of reachable outputs does not depend on the input
    (the textbook Laplace sampler's does).  ``bound`` B must be public (e.g. a public or noisy n).
    """
    values = np.asarray(values, dtype=float)
    lam, grid = snapping_noise_scale(sensitivity=sensitivity, epsilon=epsilon, bound=bound)
    ledger.charge(
        Charge(
            stage=stage,
            mechanism="snapping",
            sensitivity=float(sensitivity),
            epsilon=float(epsilon),
            scale=lam,
            rho=float(epsilon) ** 2 / 2.0,
            measured=measured,
            count=int(values.size),
        )
    )
    sign = np.where(rng.random(values.shape) < 0.5, -1.0, 1.0)
    noisy = np.clip(values, -bound, bound) + sign * lam * np.log(_uniform_doubles(values.shape, rng))
    out = np.clip(np.round(noisy / grid) * grid, -bound, bound)
    return _tap("snapping", values, out, stage=stage, measured=measured, sensitivity=sensitivity, epsilon=epsilon)


# ------------------------------------------- iReduct: a NoiseDown chain, charged at its last scale
# (block kept apart from the mechanisms above: its charge comes after the draws, see below)
def laplace_chain_start(
    values,
    *,
    scale: float,
    sensitivity: float,
    rng: np.random.Generator,
    stage: str,
    measured: str = "",
) -> np.ndarray:
    """First draw of a NoiseDown chain (Xiao et al. 2011, Figure 4 line 4): ``values`` + Laplace(0, ``scale``).

    NOT charged here: by Theorem 1 a chain Laplace(λ_max) → NoiseDown → … costs only its
    last draw, whose scale is not known yet.  The caller must charge the ledger with the
    final scales before anything computed from the chain leaves it (iReduct does:
    :func:`dpsynth.algorithms.ireduct.core.charge_final_scales`).  ``sensitivity`` is the L1
    sensitivity of the whole ``values`` vector (for the record of the test hook).
    """
    sensitivity = _check_positive("sensitivity", sensitivity)
    values = np.asarray(values, dtype=float)
    out = values + laplace_noise(scale, values.shape, rng=rng)
    return _tap("laplace-chain", values, out, stage=stage, measured=measured, sensitivity=sensitivity,
                scale=float(scale))


def noise_down_step(
    mu,
    y,
    scale,
    new_scale,
    *,
    sensitivity: float,
    rng: np.random.Generator,
    stage: str,
    measured: str = "",
) -> np.ndarray:
    """One NoiseDown step of a chain (Xiao et al. 2011, §4.1–4.2, Figure 4 line 12), through the test hook.

    Draws Y′ | Y = ``y`` with :func:`dpsynth.privacy.noisedown.noise_down`; ``mu`` are the true
    answers.  Not charged (the chain is charged at its final scale, Theorem 1).  ``sensitivity``:
    the L1 sensitivity of the ``mu`` sub-vector stepped here (for the record of the test hook).
    """
    sensitivity = _check_positive("sensitivity", sensitivity)
    mu = np.asarray(mu, dtype=float)
    out = noise_down(mu, y, scale, new_scale, rng=rng)
    return _tap("noise-down", mu, out, stage=stage, measured=measured, sensitivity=sensitivity,
                cells=int(mu.size))
