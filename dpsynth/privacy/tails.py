"""High-probability bounds on the L1 norm of a mechanism's noise vector (public: a function of its scale).

A noisy marginal y = M(D) + z over k cells has noise z of known distribution: Gaussian of standard
deviation σ (zCDP, :func:`~dpsynth.privacy.mechanisms.gaussian_mechanism`) or Laplace of scale b (pure ε,
:func:`~dpsynth.privacy.mechanisms.laplace_mechanism`), or their integer versions (discrete Gaussian
N_Z(0, σ²), two-sided geometric with P(z) ∝ exp(−|z|/b)) at the same parameter.  A marginal of fewer
cells obtained by summing the measured one (a projection) has noise whose cells are sums of ``merged``
i.i.d. draws.  :func:`l1_quantile` returns a number q with

    P(‖z‖₁ > q) ≤ α

for every one of these variants at once, so a report need not know which of the pair was drawn.

Method: the Chernoff bound (e.g. Boucheron, Lugosi & Massart 2013, §2.2): for every λ > 0,
P(Σ_j |S_j| ≥ t) ≤ exp(k·log E e^{λ|S|} − λt), so t(λ) = (k·log E e^{λ|S|} + ln(1/α))/λ is a valid
(1 − α) bound for each λ, and we take the smallest over a fixed grid of λ (any grid point gives a valid
bound; the grid only costs tightness).  E e^{λ|S|} is bounded by the larger over the continuous and the
discrete variant of

* continuous Gaussian (exact): E e^{λ|S|} = 2·exp(mλ²σ²/2)·Φ(λσ√m) for S ~ N(0, mσ²);
* Laplace, discrete Gaussian, discrete Laplace: the smaller of M_abs(λ)^m (|S| ≤ Σ|Z_i|) and a bound
  from M(λ)^m by symmetry (:func:`_sum_bound`); M(λ) = E e^{λZ} and M_abs(λ) = E e^{λ|Z|} are closed forms for the two
  Laplace variants (1/(1 − λ²b²) and 1/(1 − λb); with a = e^{−1/b}: (1−a)²/((1−ae^λ)(1−ae^{−λ})) and
  (1−a)(1+ae^λ)/((1+a)(1−ae^λ))) and exact sums over the integers for the discrete Gaussian.

For Laplace noise and m = 1 the quantile is exact instead: ‖z‖₁ is Gamma(k, b) distributed for continuous
noise (its quantile by ``scipy.special.gammaincinv``), and for the two-sided geometric a binomial mixture
of negative binomials (:func:`_geometric_l1_quantile`, up to 2,000 cells; the Chernoff bound beyond); the
larger of the two is returned.  For Gaussian
noise the Chernoff bound is at most AIM's E + σ·sqrt(2k·ln(1/α)) (McKenna et al. 2022, §5, E =
kσ·sqrt(2/π)), the bound that uses the sqrt(k)σ-Lipschitz L1 norm's Gaussian concentration.  No data is
read here.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.special import betainc, gammaincinv, gammaln, log_ndtr, xlog1py, xlogy

__all__ = ["NOISE_KINDS", "l1_quantile", "laplace_count_quantile"]

NOISE_KINDS = ("gaussian", "laplace")
_U_GAUSS = np.geomspace(1e-3, 6.0, 120)  # λ·σ√m
_U_LAP = np.unique(np.concatenate([np.geomspace(1e-4, 0.9, 200), 1.0 - np.geomspace(1e-6, 0.1, 60)]))  # λ·b


def _discrete_gaussian(sigma: float, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(λ used, log E e^{λZ}, log E e^{λ|Z|}, P(Z = 0)) for Z ~ N_Z(0, σ²), summed over |z| ≤ σ(λσ + 14) + 2
    (the rest of the sum is below e^{-98} of it; the normaliser is summed over the same range, which only
    raises all three).  Long sums use every s-th λ of the grid only (a coarser grid is still a valid bound),
    so that a call costs about 10⁶ terms; above σ = :data:`_SUM_SIGMA`, integral bounds."""
    if sigma > _SUM_SIGMA:
        return (lam, *_discrete_gaussian_integral(sigma, lam))
    top = math.ceil(sigma * (float(lam.max()) * sigma + 14.0)) + 2
    lam = lam[::max(1, math.ceil((top + 1) * lam.size / 1e6))]
    z = np.arange(0, top + 1, dtype=float)
    log_w = -z * z / (2.0 * sigma * sigma)
    log_w[1:] += math.log(2.0)  # ±z
    log_norm = float(np.logaddexp.reduce(log_w))
    signed = np.empty(lam.size)
    absolute = np.empty(lam.size)
    step = max(1, 2_000_000 // z.size)  # λ values per chunk: about 16 MB per array
    for lo in range(0, lam.size, step):  # loop over chunks of λ (log-sum-exp: no underflow for tiny σ)
        part = lam[lo:lo + step, None] * z[None, :]
        up, down = log_w + part, log_w - part
        shift = up.max(axis=1, keepdims=True)
        absolute[lo:lo + step] = shift[:, 0] + np.log(np.exp(up - shift).sum(axis=1)) - log_norm
        both = np.exp(up - shift).sum(axis=1) + np.exp(down - shift).sum(axis=1)  # 2·Σ w·cosh(λz)·e^{-shift}
        signed[lo:lo + step] = shift[:, 0] + np.log(0.5 * both) - log_norm
    norm = math.exp(log_norm)
    return lam, signed, absolute, 1.0 / norm


_SUM_SIGMA = 500.0
"""Above this σ the discrete Gaussian's sums are bounded by integrals (:func:`_discrete_gaussian_integral`)."""


def _discrete_gaussian_integral(sigma: float, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Upper bounds of (log E e^{λZ}, log E e^{λ|Z|}, P(Z = 0)) for Z ~ N_Z(0, σ²) from integrals: a sum of a
    unimodal function over the integers is within its maximum of its integral, so the normaliser
    Σ_z e^{−z²/2σ²} ≥ σ√(2π) − 1, Σ_z e^{λz − z²/2σ²} ≤ e^{λ²σ²/2}(σ√(2π) + 1) and
    Σ_z e^{λ|z| − z²/2σ²} ≤ 1 + 2(σ√(2π)·e^{λ²σ²/2}·Φ(λσ) + e^{λ²σ²/2}) (each half-line once, its maximum once);
    within about 2/σ of the continuous Gaussian's values (used for σ > 500, where the sums are long; the
    Chernoff bound is then within about 1 % of the continuous Gaussian's)."""
    root = sigma * math.sqrt(2.0 * math.pi)
    log_norm = math.log(root - 1.0)
    half = 0.5 * (lam * sigma) ** 2
    signed = half + math.log(root + 1.0) - log_norm
    absolute = np.logaddexp(0.0, math.log(2.0) + half + np.logaddexp(math.log(root) + log_ndtr(lam * sigma), 0.0)) \
        - log_norm
    return signed, absolute, 1.0 / (root - 1.0)


def _sum_bound(lam, log_signed, log_abs, p0: float, sd: float, m: float) -> np.ndarray:
    """Upper bound of log E e^{λ|S|}, S a sum of m i.i.d. symmetric Z (log E e^{λZ} = ``log_signed``,
    log E e^{λ|Z|} = ``log_abs``, P(Z = 0) ≤ ``p0``, sd(Z) ≤ ``sd``): the smaller of m·log E e^{λ|Z|}
    (|S| ≤ Σ|Z_i|) and, by symmetry and Jensen on {S ≤ 0},
    E e^{λ|S|} = 2M − 2E[e^{λS}; S ≤ 0] + P(S = 0) ≤ 2M − (1 + p0)·exp(−λ·sd·√m/(1 + p0)) + p0,
    M = E e^{λS} (P(S ≤ 0) = (1 + P(S=0))/2, E|S| ≤ sd·√m, P(S = 0) ≤ max_z P(Z = z) = P(Z = 0); the
    right-hand side increases with p0 and sd, so upper bounds of both may be used)."""
    big = m * log_signed
    c = (1.0 + p0) * np.exp(-lam * sd * math.sqrt(m) / (1.0 + p0)) - p0
    return np.minimum(m * log_abs, big + np.log(2.0 - c * np.exp(-big)))


@lru_cache(maxsize=4096)
def _log_mgf(noise: str, scale: float, merged: int) -> tuple[np.ndarray, np.ndarray]:
    """(λ grid, upper bound of log E e^{λ|S|}) for S a sum of ``merged`` i.i.d. noises, the larger over the
    continuous and the discrete variant (module docstring)."""
    m = float(merged)
    if noise == "gaussian":
        s = scale * math.sqrt(m)
        lam, signed, absolute, p0 = _discrete_gaussian(scale, _U_GAUSS / s)
        cont = math.log(2.0) + 0.5 * (lam * s) ** 2 + log_ndtr(lam * s)  # exact: S ~ N(0, mσ²)
        return lam, np.maximum(cont, _sum_bound(lam, signed, absolute, p0, scale, m))
    if noise != "laplace":
        raise ValueError(f"noise must be one of {NOISE_KINDS}, got {noise!r}")
    a = math.exp(-1.0 / scale)
    lam = _U_LAP / scale  # λ·b < 1: the continuous MGFs are finite, and the discrete ones (a·e^λ < 1)
    u, ae = lam * scale, np.exp(lam - 1.0 / scale)  # a·e^λ without overflow
    cont = _sum_bound(lam, -np.log1p(-u * u), -np.log1p(-u), 0.0, math.sqrt(2.0) * scale, m)
    d_abs = math.log1p(-a) - math.log1p(a) + np.log1p(ae) - np.log1p(-ae)
    d_signed = 2.0 * math.log1p(-a) - np.log1p(-ae) - np.log1p(-a * np.exp(-lam))
    disc = _sum_bound(lam, d_signed, d_abs, (1.0 - a) / (1.0 + a), math.sqrt(2.0 * a) / (1.0 - a), m)
    return lam, np.maximum(cont, disc)


def l1_quantile(noise: str, scale: float, cells: int, *, alpha: float, merged: int = 1) -> float:
    """q with P(Σ_{j<cells} |S_j| > q) ≤ α, S_j sums of ``merged`` i.i.d. noises (module docstring).

    ``noise``: ``"gaussian"`` (``scale`` = σ, continuous or discrete) or ``"laplace"`` (``scale`` = b,
    continuous or two-sided geometric).  A function of public parameters only.
    """
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a finite number > 0, got {scale!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if cells < 1 or merged < 1:
        raise ValueError("cells and merged must be >= 1")
    lam, log_m = _log_mgf(noise, float(scale), int(merged))
    chernoff = float(np.min((cells * log_m + math.log(1.0 / alpha)) / lam))
    if noise == "laplace" and merged == 1:  # exact quantiles of both variants
        exact = _geometric_l1_quantile(scale, cells, alpha, chernoff) if cells <= _EXACT_CELLS else chernoff
        return max(float(gammaincinv(cells, 1.0 - alpha)) * scale, exact)
    return chernoff


_EXACT_CELLS = 2000
"""Up to this many cells the geometric's quantile is computed exactly (beyond, the Chernoff bound is within a
few percent of it and the exact sum costs a second per call)."""


@lru_cache(maxsize=4096)
def _geometric_l1_quantile(scale: float, cells: int, alpha: float, upper: float) -> float:
    """The exact (1 − α) quantile of Σ_{j<cells} |Z_j| for two-sided geometric Z of scale b (a = e^{−1/b}):
    N = #{Z_j ≠ 0} ~ Binomial(cells, 2a/(1 + a)) and, given N, the sum is N plus a negative binomial
    (N successes of probability 1 − a), so P(sum ≤ t) = Σ_N P(N)·P(NB(N, 1 − a) ≤ t − N); bisection over
    the integers t ≤ ``upper`` (a bound already known to hold)."""
    a = math.exp(-1.0 / scale)
    count = np.arange(cells + 1)
    p = 2.0 * a / (1.0 + a)
    weight = np.exp(gammaln(cells + 1.0) - gammaln(count + 1.0) - gammaln(cells - count + 1.0)
                    + xlogy(count, p) + xlog1py(cells - count, -p))  # the binomial pmf

    def cdf(t: int) -> float:
        rest = t - count
        # P(NB(N, 1 − a) ≤ r) is the regularized incomplete beta I_{1−a}(N, r + 1)
        inner = np.where(rest >= 0, betainc(np.maximum(count, 1), np.maximum(rest, 0) + 1.0, 1.0 - a), 0.0)
        inner[0] = 1.0 if t >= 0 else 0.0  # N = 0: the sum is 0
        return float(weight @ inner)

    lo, hi = -1, math.ceil(upper)  # cdf(lo) < 1 − α <= cdf(hi)
    if cdf(hi) < 1.0 - alpha:
        return upper
    while hi - lo > 1:  # bisection over integers
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if cdf(mid) >= 1.0 - alpha else (mid, hi)
    return float(hi)


def laplace_count_quantile(scale: float, *, alpha: float) -> float:
    """t with P(|Z| > t) ≤ α for Z the noise of the noisy row count: the smallest integer t ≥ 0 that holds
    for the two-sided geometric of scale b (P(|Z| > t) = 2a^{t+1}/(1 + a), a = e^{−1/b}), and at least the
    continuous Laplace's exact quantile b·ln(1/α)."""
    a = math.exp(-1.0 / scale)
    t = max(0, math.ceil(math.log(alpha * (1.0 + a) / 2.0) / math.log(a) - 1.0))
    return float(max(t, scale * math.log(1.0 / alpha)))
