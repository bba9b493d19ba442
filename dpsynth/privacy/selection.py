"""Mechanisms for learning a domain privately: partition selection and quantiles.

Pure numpy, no pandas.  Each ``*_mechanism`` charges the ledger *before* it
draws and calls the :data:`dpsynth.privacy.mechanisms.recorder` test hook, like
the mechanisms of :mod:`dpsynth.privacy.mechanisms`.

**Partition selection** (which values of an open category set to release).
Laplace thresholding was introduced by Korolova, Kenthapadi, Mishra and
Ntoulas, "Releasing search queries and clicks privately" (WWW 2009); the
setting where each person contributes to one partition is studied by
Desfontaines, Voss, Gipson and Mandayam, "Differentially private partition
selection" (PoPETs 2022, arXiv:2006.03684), and the multi-partition case by
Gopi et al., "Differentially private set union" (ICML 2020).  We use the
discrete (two-sided geometric) version so that counts stay integers:

    value v is released  ⇔  c_v + G_v ≥ T,   G_v ~ P(k) ∝ α^|k|,  α = exp(−ε/Δ)

where c_v ≥ 1 is the number of rows holding v, Δ the histogram L1 sensitivity
(1 under add-remove, 2 under replace-one) and T the integer threshold below.

*Why this is (ε, δ)-DP.*  Neighbouring tables change at most Δ coordinates of
the value histogram, each by 1.  For a value present in both tables the
thresholded noisy count is post-processing of the geometric mechanism, whose
pmf (hence also its CDF) moves by at most a factor e^{ε/Δ} when the count
moves by 1: these coordinates cost ε in total.  A value held by exactly one
row exists in one table only.  In the table without it the value is never
released; in the table with it, it is released with probability

    p(T) = P(1 + G ≥ T) = α^{T−1}/(1 + α)      (two-sided geometric tail, T ≥ 2),

and this event is the δ of the guarantee (at most one such value can appear on
the favoured side of each comparison).  Conversely the probability of *not*
releasing it is 1 − p(T) ≥ e^{−ε/Δ}, which we check, so that direction costs no
more than an ordinary coordinate.  Hence the threshold

    T = 1 + ⌈ ln(1/(δ·(1 + α))) / ln(1/α) ⌉    (then T is increased until p(T) ≤ δ in floating point)

is the smallest integer with p(T) ≤ δ.

**Quantiles** (numeric bounds and bin edges): the exponential mechanism of
McSherry & Talwar (2007) with the rank utility of Smith, "Privacy-preserving
statistical estimation with optimal convergence rates" (STOC 2011), on a
*public* grid of candidate points c_1 < … < c_G:

    u_q(c_k) = −| #{x < c_k} − q·n |

Adding or removing a row changes #{x < c_k} by at most 1 and q·n by q ≤ 1,
with the same sign, so |Δu| ≤ 1; replacing a row changes the count by at most
1 and n not at all.  The sensitivity is 1 under both relations.  (Smith samples
an interval between consecutive data points with weight ∝ its length; on a
public grid the intervals are the grid cells, so this is his mechanism with the
data points snapped to the grid.)
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from dpsynth.errors import BudgetError
from dpsynth.privacy import mechanisms as _mech
from dpsynth.privacy.accountant import Charge, Ledger, zcdp_to_approx_dp
from dpsynth.privacy.exact import exponential_indices
from dpsynth.privacy.mechanisms import discrete_gaussian_noise, discrete_laplace_noise

__all__ = [
    "discrete_gaussian_tail",
    "gaussian_partition_selection_mechanism",
    "gaussian_partition_threshold",
    "partition_release_probability",
    "partition_selection_mechanism",
    "partition_threshold",
    "quantile_mechanism",
    "quantile_scores",
]


_positive = _mech._check_positive


def _observed(counts, public: int) -> np.ndarray:
    """``counts`` checked as a selection's input: 1-d integers, the first ``public`` (public keys) ≥ 0, the
    observed values' ≥ 1 (a value absent from the table has no count to select)."""
    counts = np.asarray(counts)
    if counts.ndim != 1 or not np.issubdtype(counts.dtype, np.integer):
        raise ValueError("counts must be a 1-d array of integers")
    if not 0 <= public <= counts.size or np.any(counts[:public] < 0) or np.any(counts[public:] < 1):
        raise ValueError("partition selection takes the counts of observed values (all >= 1; public keys >= 0)")
    return counts


def _released(noisy: np.ndarray, threshold: int, public: int, return_noisy: bool):
    """The indices a selection releases, by decreasing noisy count: those at or over ``threshold``, and the
    ``public`` keys whatever their count (post-processing of the noisy counts)."""
    keep = np.flatnonzero((noisy >= threshold) | (np.arange(noisy.size) < public))  # (public keys: always)
    keep = keep[np.argsort(-noisy[keep], kind="stable")]
    return (keep, noisy[keep]) if return_noisy else keep


# ----------------------------------------------------------------- partition selection
def partition_release_probability(threshold: int, *, epsilon: float, sensitivity: float) -> float:
    """p(T) = P(1 + G ≥ T) for G two-sided geometric with α = exp(−ε/Δ): the release probability of a
    value held by a single row (α^{T−1}/(1+α) for T ≥ 2, and larger than 1/2 below)."""
    alpha = math.exp(-_positive("epsilon", epsilon) / _positive("sensitivity", sensitivity))
    m = int(threshold) - 1
    if m <= 0:
        return 1.0 - alpha ** (-m + 1) / (1.0 + alpha)  # P(G ≥ m) = 1 − P(G ≤ m − 1) for m ≤ 0
    return alpha**m / (1.0 + alpha)


def partition_threshold(*, epsilon: float, delta: float, sensitivity: float) -> tuple[float, int]:
    """(noise scale Δ/ε, integer threshold T) of the (ε, δ)-DP partition selection (module docstring).

    Raises :class:`BudgetError` when δ is not in (0, 1 − e^{−ε/Δ}]: with a larger δ the probability of
    *suppressing* a single-row value would fall below e^{−ε/Δ} and cost more than ε.
    """
    epsilon = _positive("epsilon", epsilon)
    sensitivity = _positive("sensitivity", sensitivity)
    delta = float(delta)
    scale = sensitivity / epsilon
    alpha = math.exp(-1.0 / scale)
    if not 0.0 < delta <= -math.expm1(-1.0 / scale):
        raise BudgetError(
            f"partition selection needs 0 < delta <= 1 - exp(-epsilon/sensitivity) = "
            f"{-math.expm1(-1.0 / scale):.3g}, got delta={delta!r}"
        )
    m = max(1, math.ceil(math.log(1.0 / (delta * (1.0 + alpha))) * scale))
    while alpha**m / (1.0 + alpha) * (1.0 + 1e-12) > delta:  # guard against rounding of the logarithm
        m += 1
    return scale, m + 1


def partition_selection_mechanism(
    counts,
    *,
    epsilon: float,
    delta: float,
    sensitivity: float,
    ledger: Ledger,
    rng: np.random.Generator,
    stage: str,
    measured: str = "",
    return_noisy: bool = False,
    public: int = 0,
):
    """(ε, δ)-DP selection among the *observed* values of a column (each row holds one value).

    ``counts[i] ≥ 1`` is the number of rows holding candidate i (candidates are
    private: only the returned ones may be published).  Returns the indices of
    the released candidates ordered by decreasing noisy count (ties by index),
    so that keeping the first K is post-processing; with ``return_noisy`` also
    their noisy counts (mechanism outputs, in the same order).

    The ledger entry counts ONE invocation: the number of candidates is the
    number of distinct values observed, a private count that must not be
    published (the ledger goes into the report and the model file).

    ``public``: the first ``public`` candidates are public keys (counts ≥ 0, rows equal to values fixed before
    the data was read, each row in at most one count over all candidates): their noisy counts are released
    whatever they are.  They exist in both neighbouring tables, so they are coordinates of the noisy histogram
    like the observed values present in both (no δ); the δ event, a value held by one row, concerns the others.
    """
    counts = _observed(counts, public)
    scale, threshold = partition_threshold(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    ledger.charge(
        Charge(
            stage=stage,
            mechanism="partition-selection",
            sensitivity=float(sensitivity),
            epsilon=float(epsilon),
            delta=float(delta),
            scale=scale,
            measured=f"{measured} (threshold {threshold})" if measured else f"threshold {threshold}",
            count=1,
        )
    )
    noisy = counts.astype(np.int64) + discrete_laplace_noise(scale, counts.shape, rng=rng)
    noisy = np.asarray(_mech._tap("partition-selection", counts, noisy, stage=stage, measured=measured,
                                  sensitivity=float(sensitivity), epsilon=float(epsilon), delta=float(delta)))
    return _released(noisy, threshold, public, return_noisy)


# ------------------------------------------------------ Gaussian partition selection
def discrete_gaussian_tail(m: int, sigma: float) -> float:
    """P(Z ≥ m) for Z ~ N_Z(0, σ²), the discrete Gaussian (pmf ∝ exp(−k²/(2σ²))), summed over k in float64 to
    where the terms fall below 1e-300 of the largest (a relative error far below the δ it is compared with)."""
    sigma = _positive("sigma", sigma)
    reach = math.ceil(sigma * math.sqrt(2.0 * 700.0)) + 2
    k = np.arange(-reach, reach + 1, dtype=float)
    w = np.exp(-(k * k) / (2.0 * sigma * sigma))
    return float(w[k >= m].sum() / w.sum())


def gaussian_partition_threshold(*, rho: float, delta: float, l2_sensitivity: float) -> tuple[float, int]:
    """(σ = Δ₂/sqrt(2ρ), integer threshold T): the smallest T with P(1 + Z ≥ T) ≤ δ, Z ~ N_Z(0, σ²)."""
    rho = _positive("rho", rho)
    sigma = _positive("l2_sensitivity", l2_sensitivity) / math.sqrt(2.0 * rho)
    if not 0.0 < float(delta) < 0.5:
        raise BudgetError(f"Gaussian partition selection needs 0 < delta < 0.5, got delta={delta!r}")
    m = max(1, math.floor(sigma * math.sqrt(2.0 * math.log(1.0 / delta))) - 2)
    while m > 1 and discrete_gaussian_tail(m - 1, sigma) <= delta:  # the bound may overshoot: walk down
        m -= 1
    while discrete_gaussian_tail(m, sigma) > delta:
        m += 1
    return sigma, m + 1


def gaussian_partition_selection_mechanism(
    counts,
    *,
    rho: float,
    delta: float,
    l2_sensitivity: float,
    ledger: Ledger,
    rng: np.random.Generator,
    stage: str,
    measured: str = "",
    return_noisy: bool = False,
    public: int = 0,
):
    """δ-approximate ρ-zCDP selection among the observed values of a column (as
    :func:`partition_selection_mechanism`, with discrete Gaussian noise and threshold; ``public`` likewise).

    *Why.*  Values present in both neighbouring tables: their count vectors differ by at most Δ₂ in L2 norm
    (1 under add-remove, √2 under replace-one), and the discrete Gaussian is ρ = Δ₂²/(2σ²)-zCDP on them
    (Canonne, Kamath & Steinke 2020, Thm. 14); thresholding is post-processing.  A value held by one row exists
    in one table only: the event that it is released has probability P(1 + Z ≥ T) ≤ δ, and conditioned on its
    complement the output is the post-processed noisy counts of the shared values.  That is δ-approximate
    ρ-zCDP (Bun & Steinke 2016, Def. 1.8): the charge carries ``rho`` and ``approx_delta = δ``, and for basic
    composition alone (ρ + 2·sqrt(ρ·ln(1/δ)), 2δ).  The ledger entry counts one invocation (the number of
    observed values is private).  Returns the released indices by decreasing noisy count (and the counts).
    """
    counts = _observed(counts, public)
    sigma, threshold = gaussian_partition_threshold(rho=rho, delta=delta, l2_sensitivity=l2_sensitivity)
    ledger.charge(
        Charge(
            stage=stage,
            mechanism="gaussian-partition-selection",
            sensitivity=float(l2_sensitivity),
            epsilon=zcdp_to_approx_dp(float(rho), float(delta)),
            delta=2.0 * float(delta),
            scale=sigma,
            rho=float(rho),
            measured=f"{measured} (threshold {threshold})" if measured else f"threshold {threshold}",
            count=1,
            approx_delta=float(delta),
        )
    )
    noisy = counts.astype(np.int64) + discrete_gaussian_noise(sigma, counts.shape, rng=rng)
    noisy = np.asarray(_mech._tap("gaussian-partition-selection", counts, noisy, stage=stage, measured=measured,
                                  sensitivity=float(l2_sensitivity), rho=float(rho), delta=float(delta)))
    return _released(noisy, threshold, public, return_noisy)


# ------------------------------------------------------------------------- quantiles
def quantile_scores(below, total: int, qs) -> np.ndarray:
    """Utilities u_q(c_k) = −|below[k] − q·total| for every quantile q (rows) and candidate k (columns)."""
    below = np.asarray(below, dtype=float)
    qs = np.asarray(qs, dtype=float).reshape(-1)
    if below.ndim != 1 or below.size == 0:
        raise ValueError("below must be a non-empty 1-d array of rank counts")
    if np.any((qs < 0) | (qs > 1)):
        raise ValueError("quantiles must lie in [0, 1]")
    return -np.abs(below[None, :] - qs[:, None] * float(total))


def quantile_mechanism(
    below,
    total: int,
    *,
    qs,
    epsilon: float,
    ledger: Ledger,
    rng: np.random.Generator,
    stage: str,
    measured: str = "",
) -> np.ndarray:
    """ε-DP quantiles: for each q in ``qs`` the index of a grid candidate, by the exponential mechanism.

    ``below[k]`` is the number of non-null values strictly below public candidate k and ``total`` the
    number of non-null values.  Each of the m quantiles gets ε/m (basic composition; one ledger entry of
    ε with ``count`` m, zCDP cost m·(ε/m)²/8).  Sampled exactly with weights exp((ε/m)·u/2), ε/m taken
    as an exact rational (:func:`dpsynth.privacy.exact.exponential_indices`, one draw per row of the
    m × G score matrix).
    """
    epsilon = _positive("epsilon", epsilon)
    scores = quantile_scores(below, total, qs)
    m = scores.shape[0]
    each = epsilon / m
    ledger.charge(
        Charge(
            stage=stage,
            mechanism="exponential-quantiles",
            sensitivity=1.0,
            epsilon=epsilon,
            rho=m * each**2 / 8.0,
            measured=measured,
            count=m,
        )
    )
    factor = Fraction(epsilon) / (2 * m)  # exactly (ε/m)/(2·1): no rounding of ε/m
    out = exponential_indices(scores, factor, np.arange(m), rng=rng)
    return np.asarray(_mech._tap("exponential-quantiles", scores, out, stage=stage, measured=measured,
                                 sensitivity=1.0, epsilon=epsilon))

