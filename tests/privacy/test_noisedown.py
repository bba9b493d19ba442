"""NoiseDown (dpsynth.privacy.noisedown): exact law of Y′, of Y′ | Y = y, and the privacy of the pair.

Statistical tests use fixed seeds and critical values at a false-failure rate
of 1e-6 per assertion (KS and chi-square from scipy; binomial/ratio checks at
6 standard errors, false-failure rate < 2e-9 each under the normal
approximation).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpsynth.privacy.noisedown import chain_kernel_atom, conditional_density, noise_down, noise_down_pieces

ALPHA = 1e-6
CASES = [
    (2.0, 1.0, 0.0),  # the example
    (1.0, 0.999, 5.0),  # ratio near 1
    (1.0, 1.0 - 1e-9, -2.0),  # ratio extremely near 1
    (1e6, 1.0, -3.0),  # ratio >> 1
    (10.0, 1e-3, 1e3),  # ratio 1e4, large mu
    (1e-3, 1e-12, 0.5),  # tiny scales, ratio 1e9
]


@pytest.mark.parametrize("lam, lam_new, mu", CASES)
def test_marginal_law_is_laplace_new_scale(lam, lam_new, mu):
    """Y ~ Laplace(mu, lam), Y′ = NoiseDown(Y): KS test of Y′ against Laplace(mu, lam_new), 1e5 samples, p > 1e-6."""
    rng = np.random.default_rng(11)
    y = mu + rng.laplace(0.0, lam, size=100_000)
    y_new = noise_down(mu, y, lam, lam_new, rng=rng)
    assert stats.kstest(y_new, stats.laplace(loc=mu, scale=lam_new).cdf).pvalue > ALPHA


@pytest.mark.parametrize("lam, lam_new, mu", CASES[:4])
def test_increment_is_independent_mixture(lam, lam_new, mu):
    """Z = Y − Y′ has the atom r² at 0 (6 SE) and Laplace(0, lam) otherwise (KS), independently of Y′.

    Independence is checked by comparing Z on {Y′ < mu} and {Y′ ≥ mu} (two-sample KS, p > 1e-6):
    this is the Markov structure μ → Y′ → Y that gives Equation 5.
    """
    rng = np.random.default_rng(12)
    n = 200_000
    y = mu + rng.laplace(0.0, lam, size=n)
    y_new = noise_down(mu, y, lam, lam_new, rng=rng)
    z = y - y_new
    atom = z == 0.0
    r2 = chain_kernel_atom(lam, lam_new)
    assert abs(atom.mean() - r2) <= 6 * math.sqrt(r2 * (1 - r2) / n) + 1e-12
    cont = z[~atom]
    if cont.size > 1000:
        assert stats.kstest(cont, stats.laplace(scale=lam).cdf).pvalue > ALPHA
        low = (y_new < mu)[~atom]
        assert stats.ks_2samp(cont[low], cont[~low]).pvalue > ALPHA


def _chain(samples: int) -> np.ndarray:
    rng = np.random.default_rng(13)
    mu = 7.0
    scales = np.geomspace(100.0, 1.0, 1001)
    y = mu + rng.laplace(0.0, scales[0], size=samples)
    for old, new in itertools.pairwise(scales):
        y = noise_down(mu, y, old, new, rng=rng)
    return y


def test_chain_of_1000_reductions_quick():
    """1,000 successive NoiseDowns from scale 100 to 1 on 2e4 samples: final value Laplace(7, 1) (KS, p > 1e-6)."""
    assert stats.kstest(_chain(20_000), stats.laplace(loc=7.0, scale=1.0).cdf).pvalue > ALPHA


@pytest.mark.slow
def test_chain_of_1000_reductions():
    """The same chain on 1e5 samples (KS, p > 1e-6)."""
    assert stats.kstest(_chain(100_000), stats.laplace(loc=7.0, scale=1.0).cdf).pvalue > ALPHA


@pytest.mark.parametrize("y", [0.0, 2.0, 5.0, -3.5])
def test_conditional_density_integrates_to_one(y):
    """Atom weight + numeric integral of the continuous part = 1 (quad tolerance 1e-9); pieces agree."""
    mu, lam, lam_new = 0.0, 2.0, 1.0
    p = noise_down_pieces(mu, y, lam, lam_new)
    lo, hi = min(mu, y), max(mu, y)
    parts = [(-np.inf, lo), (lo, hi), (hi, np.inf)]
    masses = [integrate.quad(conditional_density, a, b, args=(mu, y, lam, lam_new), epsabs=1e-12)[0] for a, b in parts]
    if y < mu:  # the pieces are stated in the frame where y ≥ mu
        masses = masses[::-1]
    assert float(p["w0"]) + sum(masses) == pytest.approx(1.0, abs=1e-9)
    for got, key in zip(masses, ("p1", "p2", "p3")):
        assert got == pytest.approx(float(p[key]), abs=1e-9)


@pytest.mark.parametrize("y", [2.0, -5.0])
def test_conditional_sampler_matches_density(y):
    """Y′ | Y = y: atom frequency within 6 SE of w0; binned chi-square of the rest against quad (p > 1e-6)."""
    rng = np.random.default_rng(14)
    mu, lam, lam_new, n = 0.0, 2.0, 1.0, 400_000
    draws = noise_down(mu, np.full(n, y), lam, lam_new, rng=rng)
    w0 = float(noise_down_pieces(mu, y, lam, lam_new)["w0"])
    atom = draws == y
    assert abs(atom.mean() - w0) <= 6 * math.sqrt(w0 * (1 - w0) / n)
    edges = np.concatenate([[-np.inf], np.linspace(-8, 8, 65), [np.inf]])
    probs = np.array([
        integrate.quad(conditional_density, a, b, args=(mu, y, lam, lam_new), points=[mu, y] if np.isfinite(a) and np.isfinite(b) and a < y < b else None)[0]
        for a, b in itertools.pairwise(edges)
    ])
    probs /= 1.0 - w0
    observed, _ = np.histogram(draws[~atom], bins=edges)
    expected = probs * observed.sum()
    keep = expected >= 5
    chi2 = float(np.sum((observed[keep] - expected[keep]) ** 2 / expected[keep]))
    assert chi2 < stats.chi2.isf(ALPHA, keep.sum() - 1)


def test_paper_equation_6_is_not_a_density():
    """Documents the misprint: Equation 6 (μ=0, λ=2, λ′=1) integrates to 0.857 at y=0 and 1.020 at y=5, and
    Equation 9 gives θ₂ = 0.4645 at y = 2 where Equation 6 integrates to 0.301 on (ξ, y−1]."""
    lam, lam_new, mu = 2.0, 1.0, 0.0
    c = math.cosh(1 / lam_new)

    def f(yp, y):
        gam = (2 * c * math.exp(-abs(y - yp) / lam) - math.exp(-abs(y - yp - 1) / lam)
               - math.exp(-abs(y - yp + 1) / lam)) / (4 * lam * (c - 1))
        return lam / lam_new * math.exp(-abs(yp - mu) / lam_new + abs(y - mu) / lam) * gam

    def total(y):
        pts = sorted({mu, y - 1, y, y + 1})
        inner = sum(integrate.quad(f, a, b, args=(y,))[0] for a, b in itertools.pairwise(pts))
        return integrate.quad(f, -np.inf, pts[0], args=(y,))[0] + inner + integrate.quad(f, pts[-1], np.inf, args=(y,))[0]

    assert total(0.0) == pytest.approx(0.8567, abs=1e-3)
    assert total(5.0) == pytest.approx(1.0200, abs=1e-3)
    y = 2.0
    xi = min(mu, y - 1)
    theta2 = (lam * c * (math.exp(1 / lam_new) - math.exp(1 / lam)) * (1 - math.exp(-1 / lam_new - 1 / lam))
              / (4 * (lam - lam_new) * (c - 1)) * (1 - math.exp((1 / lam_new - 1 / lam) * (xi - y + 1))))
    assert theta2 == pytest.approx(0.4645, abs=1e-3)
    assert integrate.quad(f, xi, y - 1, args=(y,))[0] == pytest.approx(0.301, abs=1e-3)


def _audit(pairs0, pairs1, edges):
    """Largest log ratio of binned joint frequencies minus its 6-SE allowance, over well-populated bins."""
    h0, _, _ = np.histogram2d(*pairs0, bins=edges)
    h1, _, _ = np.histogram2d(*pairs1, bins=edges)
    ok = (h0 >= 400) & (h1 >= 400)
    ratio = np.abs(np.log(h0[ok] / h1[ok]))
    se = np.sqrt(1 / h0[ok] + 1 / h1[ok])
    return ratio, se


def test_privacy_audit_pair_costs_only_last_scale():
    """Empirical audit of (Y, Y′) on mu = 0 vs mu = 1 (λ = 2, λ′ = 1): every 2-D bin's log probability ratio
    is ≤ 1/λ′ + 6 SE; independent fresh draws (cost 1/λ + 1/λ′ = 1.5) are caught above 1/λ′ + 6 SE."""
    rng = np.random.default_rng(15)
    lam, lam_new, n = 2.0, 1.0, 1_000_000
    edges = [np.linspace(-4, 5, 10), np.linspace(-4, 5, 10)]
    runs = []
    for mu in (0.0, 1.0):
        y = mu + rng.laplace(0.0, lam, size=n)
        runs.append((y, noise_down(mu, y, lam, lam_new, rng=rng)))
    ratio, se = _audit(runs[0], runs[1], edges)
    assert np.all(ratio <= 1 / lam_new + 6 * se)
    fresh = [(mu + rng.laplace(0.0, lam, size=n), mu + rng.laplace(0.0, lam_new, size=n)) for mu in (0.0, 1.0)]
    ratio, se = _audit(fresh[0], fresh[1], edges)
    assert np.any(ratio > 1 / lam_new + 6 * se)


def test_equal_scales_keep_values_and_bad_scales_raise():
    rng = np.random.default_rng(16)
    y = np.array([1.0, -2.0, 3.5])
    assert np.array_equal(noise_down(0.0, y, 2.0, 2.0, rng=rng), y)
    with pytest.raises(ValueError, match="new_scale must be <= scale"):
        noise_down(0.0, y, 1.0, 2.0, rng=rng)
    with pytest.raises(ValueError, match="new_scale must be > 0"):
        noise_down(0.0, y, 1.0, 0.0, rng=rng)


def test_reproducible_with_seed():
    y = np.linspace(-5, 5, 50)
    a = noise_down(0.3, y, 3.0, 1.0, rng=np.random.default_rng(1))
    b = noise_down(0.3, y, 3.0, 1.0, rng=np.random.default_rng(1))
    c = noise_down(0.3, y, 3.0, 1.0, rng=np.random.default_rng(2))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
