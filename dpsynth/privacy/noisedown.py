"""NoiseDown: resample a Laplace answer with less noise at the privacy cost of the last draw only.

Xiao, Bender, Hay & Gehrke, "iReduct: differential privacy with reduced relative
errors" (SIGMOD 2011), §4.1–4.2.  Given Y ~ Laplace(μ, λ) (μ the true answer),
NoiseDown draws Y′ such that Y′ ~ Laplace(μ, λ′) with λ′ < λ and
Pr[T | Y, Y′] = Pr[T | Y′] (the paper's Equation 5), so that publishing both
costs what Y′ alone costs (Theorem 1).

**We do not implement Equations 6–11 as printed**: they do not define a
probability density (docs/ireduct.md, "NoiseDown").  For μ = 0, λ = 2, λ′ = 1
the density of Equation 6 integrates, for fixed y, to 0.93–1.02 instead of 1,
and θ₂ of Equation 9 is 0.464 at y = 2 where the integral of Equation 6 over
(ξ, y − 1] is 0.301 (at y = 5, θ₂ = 1.02 and θ₁ + θ₂ + θ₃ > 1).  Instead we use
an exact construction with the same guarantee, a Markov chain μ → Y′ → Y:

    Y = Y′ + Z,  Z independent of the data,
    Z ~ r²·δ₀ + (1 − r²)·Laplace(0, λ),  r = λ′/λ ∈ (0, 1].

Characteristic functions: 1/(1+λ′²t²) · [r² + (1−r²)/(1+λ²t²)]
= 1/(1+λ²t²), so Y ~ Laplace(μ, λ) and Y′ ~ Laplace(μ, λ′) exactly.  The
joint density of (Y′, Y) is f_{λ′}(y′ − μ)·k(y − y′) with a kernel k that does
not depend on μ, hence Equation 5 and Theorem 1 hold for any sensitivity: the
pair is as private as Y′ alone.  A chain λ₀ > λ₁ > … > λ_K sampled step by
step (each step using only the previous value) has the joint law of this
construction with the K kernels in series, so its density telescopes to
f_{λ_K}(y_K − μ)·Π k_i, even when each next scale is chosen adaptively from
the values published so far.

The reverse conditional Y′ | Y = y, sampled here, is (with d = |y − μ|,
s = sign(y − μ), a = 1/λ′ + 1/λ, b = 1/λ′ − 1/λ, u = s·(Y′ − μ)):

* an atom at Y′ = y with probability w₀ = r·e^{−b·d};
* u < 0: density ∝ e^{a·u}, probability p₁ = (1 − r)/2;
* 0 ≤ u ≤ d: density ∝ e^{−b·u}, probability p₂ = (1 + r)(1 − e^{−b·d})/2;
* u > d: density ∝ e^{−a·(u − d)}, probability p₃ = (1 − r)·e^{−b·d}/2.

(w₀ + p₁ + p₂ + p₃ = 1 identically.)  Every exponent is ≤ 0, so nothing
overflows for any ratio λ/λ′ or any distance d (e^{−b·d} underflows to 0
harmlessly); the differences 1 − r and b are formed as (λ − λ′)/λ and
(λ − λ′)/(λλ′) so that ratios near 1 keep full precision.  Sampling is exact
(inverse CDF on each piece), vectorized over cells, with no rejection loop.

Pure numpy; no pandas, no I/O, no ledger: callers charge the final scale.
"""

from __future__ import annotations

import numpy as np

__all__ = ["chain_kernel_atom", "conditional_density", "noise_down", "noise_down_pieces"]


def _check_scales(scale, new_scale) -> tuple[np.ndarray, np.ndarray]:
    scale = np.asarray(scale, dtype=float)
    new_scale = np.asarray(new_scale, dtype=float)
    if not (np.all(np.isfinite(scale)) and np.all(np.isfinite(new_scale))):
        raise ValueError("noise_down: scales must be finite")
    if np.any(new_scale <= 0):
        raise ValueError("noise_down: new_scale must be > 0")
    if np.any(new_scale > scale):
        raise ValueError("noise_down: new_scale must be <= scale (NoiseDown only reduces noise)")
    return scale, new_scale


def noise_down_pieces(mu, y, scale, new_scale) -> dict[str, np.ndarray]:
    """Parameters of Y′ | Y = y: atom weight ``w0``, piece probabilities ``p1, p2, p3``, rates ``a, b``.

    Broadcasts over all arguments.  See the module docstring for the pieces.
    """
    scale, new_scale = _check_scales(scale, new_scale)
    mu = np.asarray(mu, dtype=float)
    y = np.asarray(y, dtype=float)
    gap = scale - new_scale  # exact for floats within a factor 2, and never negative
    r = new_scale / scale
    one_minus_r = gap / scale
    a = 1.0 / new_scale + 1.0 / scale
    b = gap / (scale * new_scale)
    d = np.abs(y - mu)
    e = np.exp(-b * d)
    one_minus_e = -np.expm1(-b * d)
    return {
        "w0": r * e,
        "p1": 0.5 * one_minus_r * np.ones_like(e),
        "p2": 0.5 * (1.0 + r) * one_minus_e,
        "p3": 0.5 * one_minus_r * e,
        "a": a * np.ones_like(e),
        "b": b * np.ones_like(e),
        "d": d,
        "one_minus_e": one_minus_e,
    }


def noise_down(mu, y, scale, new_scale, *, rng: np.random.Generator) -> np.ndarray:
    """Draw Y′ | Y = y for Y ~ Laplace(mu, scale): then Y′ ~ Laplace(mu, new_scale) (Theorem 1).

    ``mu`` (the true answers: private), ``y`` (the current noisy answers) and
    the scales broadcast together; ``0 < new_scale <= scale``.  Returns a new
    float array; cells with ``new_scale == scale`` keep their value.  Exact
    sampling, two uniform draws per cell, no loop over cells.
    """
    pieces = noise_down_pieces(mu, y, scale, new_scale)
    w0, p1, p2, a, b, d, one_minus_e = (pieces[k] for k in ("w0", "p1", "p2", "a", "b", "d", "one_minus_e"))
    mu = np.asarray(mu, dtype=float)
    y = np.asarray(y, dtype=float)
    shape = np.broadcast_shapes(mu.shape, y.shape, w0.shape)
    sign = np.where(y >= mu, 1.0, -1.0)
    u_piece, u_pos = rng.random((2, *shape))
    tail = -np.log1p(-u_pos) / a  # Exp(1)/a, from a uniform in [0, 1): finite
    # Piece 2: u in [0, d] with density ∝ e^{−b·u}: inverse CDF of the truncated exponential
    # (b = 0 only when the scales are equal, where the piece has probability 0).
    with np.errstate(divide="ignore", invalid="ignore"):
        u2 = np.where(b > 0, -np.log1p(-u_pos * one_minus_e) / b, u_pos * d)
    # Small arrays dominate iReduct's loop: computing every piece and selecting is cheaper than masking.
    out = np.where(
        u_piece < w0,
        y,  # the atom: Y′ = y
        np.where(
            u_piece < w0 + p1,
            mu - sign * tail,  # piece 1: beyond mu, away from y
            np.where(u_piece < w0 + p1 + p2, mu + sign * np.minimum(u2, d), y + sign * tail),  # pieces 2, 3
        ),
    )
    return np.array(out, dtype=float, copy=True).reshape(shape)


def conditional_density(y_prime, mu: float, y: float, scale: float, new_scale: float) -> np.ndarray:
    """Density of the continuous part of Y′ | Y = y at ``y_prime`` (integrates to 1 − w0).

    (1 − r²)·f_{λ′}(y′ − μ)·f_λ(y − y′) / f_λ(y − μ), with f_s the Laplace(0, s)
    density: Bayes' rule in the construction Y = Y′ + Z.  For tests.
    """
    y_prime = np.asarray(y_prime, dtype=float)
    r = new_scale / scale
    log_num = -np.abs(y_prime - mu) / new_scale - np.abs(y - y_prime) / scale
    log_den = -abs(y - mu) / scale
    return (1.0 - r * r) / (2.0 * new_scale) * np.exp(log_num - log_den)


def chain_kernel_atom(scale: float, new_scale: float) -> float:
    """Weight r² of the atom of Z = Y − Y′ (probability that NoiseDown leaves the value unchanged, averaged over Y)."""
    return (new_scale / scale) ** 2
