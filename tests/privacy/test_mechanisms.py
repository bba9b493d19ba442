"""Statistical tests of the noise samplers and the exponential mechanism.

Every distributional test uses a fixed seed and a significance level of 1e-6,
so a correct implementation fails it with probability at most 1e-6 per test
(for a fixed seed the outcome is deterministic; the level bounds the chance
that a seed is unlucky).  Each test also checks *power*: the same test at 0.7×
and 1.3× the true scale must reject, so the test can fail.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpsynth.errors import BudgetError
from dpsynth.privacy.accountant import Ledger
from dpsynth.privacy.mechanisms import (
    discrete_gaussian_mechanism,
    discrete_gaussian_noise,
    discrete_laplace_noise,
    discrete_laplace_variance,
    exponential_mechanism,
    exponential_probabilities,
    gaussian_mechanism,
    geometric_mechanism,
    laplace_mechanism,
    laplace_noise,
    laplace_variance,
)

ALPHA = 1e-6
N = 200_000


@pytest.mark.parametrize("scale", [0.01, 1.0, 37.5])
def test_laplace_noise_ks(scale):
    x = laplace_noise(scale, N, rng=np.random.default_rng(11))
    assert stats.kstest(x, stats.laplace(scale=scale).cdf).pvalue > ALPHA
    for wrong in (0.7 * scale, 1.3 * scale):
        assert stats.kstest(x, stats.laplace(scale=wrong).cdf).pvalue < ALPHA


def test_laplace_mechanism_scale_and_charge():
    ledger = Ledger(1.0)
    rng = np.random.default_rng(3)
    true = np.zeros(N)
    noisy = laplace_mechanism(true, sensitivity=2.0, epsilon=0.5, ledger=ledger, rng=rng, stage="t")
    assert stats.kstest(noisy, stats.laplace(scale=4.0).cdf).pvalue > ALPHA
    (charge,) = ledger.charges
    assert charge.scale == 4.0 and charge.epsilon == 0.5 and charge.count == N
    # 6 standard errors of the sample variance (Laplace kurtosis excess 3 → Var(s²) ≈ (μ4 − σ⁴)/N)
    var = laplace_variance(4.0)
    se = math.sqrt((24 * 4.0**4 - var**2) / N)
    assert abs(noisy.var() - var) < 6 * se


@pytest.mark.parametrize("scale", [0.5, 3.0, 40.0])
def test_discrete_laplace_chi_square(scale):
    x = discrete_laplace_noise(scale, N, rng=np.random.default_rng(5))
    assert x.dtype == np.int64

    def pmf(k, s):
        a = math.exp(-1.0 / s)
        return (1 - a) / (1 + a) * np.exp(-np.abs(k) / s)

    lim = int(np.ceil(scale * 8))
    ks = np.arange(-lim, lim + 1)

    def pvalue(s):
        p = pmf(ks, s)
        expected = np.append(p, 1 - p.sum()) * N
        observed = np.append(np.bincount(np.clip(x, -lim - 1, lim + 1) + lim + 1, minlength=2 * lim + 3)[1:-1],
                             np.sum(np.abs(x) > lim))
        keep = expected >= 5
        obs, exp = observed[keep], expected[keep]
        if (~keep).any() and expected[~keep].sum() > 0:
            obs = np.append(obs, observed[~keep].sum())
            exp = np.append(exp, expected[~keep].sum())
        exp = exp * obs.sum() / exp.sum()
        return stats.chisquare(obs, exp).pvalue

    assert pvalue(scale) > ALPHA
    assert pvalue(0.7 * scale) < ALPHA and pvalue(1.3 * scale) < ALPHA
    assert abs(x.var() - discrete_laplace_variance(scale)) < 6 * math.sqrt(20 * scale**4 / N) + 0.05


@pytest.mark.parametrize("sigma", [0.4, 1.0, 3.7, 40.0])
def test_discrete_gaussian_chi_square(sigma):
    """P(X = k) ∝ exp(−k²/(2σ²)) (chi-square at 1e-6 over cells with ≥ 5 expected, tails pooled), and the
    same test rejects 0.7σ and 1.3σ (power)."""
    x = discrete_gaussian_noise(sigma, N, rng=np.random.default_rng(6))
    assert x.dtype == np.int64
    lim = int(np.ceil(8 * sigma)) + 1
    ks = np.arange(-lim, lim + 1)
    observed = np.bincount(np.clip(x, -lim, lim) + lim, minlength=2 * lim + 1)

    def pvalue(s):
        p = np.exp(-(ks.astype(float) ** 2) / (2 * s * s))
        expected = p / p.sum() * N
        keep = expected >= 5
        obs = np.append(observed[keep], observed[~keep].sum())
        exp = np.append(expected[keep], expected[~keep].sum())
        obs, exp = obs[exp > 0], exp[exp > 0]
        return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue

    assert pvalue(sigma) > ALPHA
    assert pvalue(0.7 * sigma) < ALPHA and pvalue(1.3 * sigma) < ALPHA


def test_discrete_gaussian_mechanism_charges_rho_and_needs_integers():
    ledger = Ledger(10.0, 1e-6)
    out = discrete_gaussian_mechanism(np.zeros(N, dtype=np.int64), l2_sensitivity=2.0**0.5, rho=0.25, ledger=ledger,
                                      rng=np.random.default_rng(8), stage="t")
    c = ledger.charges[0]
    assert (c.mechanism, c.rho, c.scale, c.count) == ("discrete-gaussian", 0.25, 2.0**0.5 / math.sqrt(0.5), N)
    # σ² = 4: the discrete Gaussian's variance is below σ² and within 1e-6 of it for σ ≥ 1 (CKS 2020, Cor. 9)
    assert abs(out.var() - 4.0) < 6 * math.sqrt(2 * 16 / N)
    with pytest.raises(ValueError, match="integer values"):
        discrete_gaussian_mechanism(np.array([0.5]), l2_sensitivity=1, rho=0.1, ledger=ledger,
                                    rng=np.random.default_rng(0), stage="t")


def test_geometric_mechanism_rejects_floats():
    with pytest.raises(ValueError, match="integer values"):
        geometric_mechanism(np.array([1.5]), sensitivity=1, epsilon=1, ledger=Ledger(1), rng=np.random.default_rng(0), stage="t")


def test_exponential_mechanism_frequencies_chi_square():
    """Selection frequencies match exp(ε·s/(2Δ)) (chi-square at 1e-6), and not with a missing factor 2: with
    2,000 draws the non-centrality against the factor-2 law is 381, power > 1 − 1e-13 (test_exact.py draws
    10⁵ times from the sampler itself)."""
    scores = np.array([0.0, 1.0, 2.5, 3.0, -1.0, 3.0, 0.5, 2.0, 1.5, -2.0])
    eps, sens = 1.2, 1.0
    rng = np.random.default_rng(9)
    ledger = Ledger(1e9)
    draws = 2_000
    picks = np.array([exponential_mechanism(scores, sensitivity=sens, epsilon=eps, ledger=ledger, rng=rng, stage="t")
                      for _ in range(draws)])
    observed = np.bincount(picks, minlength=len(scores))
    p = np.exp(eps * scores / (2 * sens))
    p /= p.sum()
    assert np.allclose(exponential_probabilities(scores, sensitivity=sens, epsilon=eps), p, rtol=1e-12)
    assert stats.chisquare(observed, p * draws).pvalue > ALPHA
    wrong = np.exp(eps * scores / sens)
    wrong /= wrong.sum()
    assert stats.chisquare(observed, wrong * draws).pvalue < ALPHA
    assert len(ledger.charges) == draws and ledger.charges[0].rho == pytest.approx(eps**2 / 8)


@pytest.mark.parametrize("eps", [1e-6, 1e-2, 1.0, 1e3])
@pytest.mark.parametrize("scale", [1e-300, 1.0, 1e300])
def test_exponential_probabilities_numerics(eps, scale):
    scores = np.array([-1.0, 0.0, 0.5, 1.0, 1.0]) * scale
    p = exponential_probabilities(scores, sensitivity=1.0, epsilon=eps)
    assert np.all(np.isfinite(p)) and np.all(p >= 0)
    assert abs(p.sum() - 1.0) < 1e-12
    assert p[3] == p[4]  # ties get equal probability
    i = exponential_mechanism(scores, sensitivity=1.0, epsilon=eps, ledger=Ledger(1e9), rng=np.random.default_rng(0), stage="t")
    assert 0 <= i < len(scores)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_exponential_rejects_non_finite_scores(bad):
    with pytest.raises(ValueError, match=r"scores must be finite \(no NaN or infinity\)"):
        exponential_probabilities(np.array([0.0, bad]), sensitivity=1.0, epsilon=1.0)


def test_mechanisms_charge_before_drawing():
    ledger = Ledger(1.0)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(BudgetError):
        laplace_mechanism(np.zeros(3), sensitivity=1, epsilon=1.5, ledger=ledger, rng=rng, stage="t")
    assert ledger.charges == [] and rng.bit_generator.state == state


def test_gaussian_needs_delta_and_charges_rho():
    with pytest.raises(BudgetError, match="Gaussian noise needs delta > 0"):
        gaussian_mechanism(np.zeros(2), l2_sensitivity=1, rho=0.1, ledger=Ledger(1.0), rng=np.random.default_rng(0), stage="t")
    ledger = Ledger(10.0, 1e-6)
    x = gaussian_mechanism(np.zeros(N), l2_sensitivity=1.0, rho=0.5, ledger=ledger, rng=np.random.default_rng(1), stage="t")
    assert stats.kstest(x, stats.norm(scale=1.0).cdf).pvalue > ALPHA
    assert ledger.charges[0].rho == 0.5
