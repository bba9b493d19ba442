"""The L1 noise-tail bounds of dpsynth.privacy.tails (the error bounds of the report rest on them).

Coverage by simulation: R = 4,000 noise vectors per case, fixed seeds.  A valid 95 % bound covers each
vector with probability p ≥ 0.95; the simulated coverage then falls below 0.95 − 6·sqrt(0.95·0.05/R) =
0.929 with probability below 1e-9 (6 standard errors, STYLE.md §6), so a failure means the bound is
wrong, not unlucky.  Exact checks: for continuous Laplace noise ‖z‖₁ ~ Gamma(k, b), whose quantile scipy
computes; for Gaussian noise the bound may not exceed AIM's E + σ·sqrt(2k·ln(1/α)) (§5).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import stats

from dpsynth.privacy.mechanisms import discrete_gaussian_noise, discrete_laplace_noise
from dpsynth.privacy.tails import l1_quantile, laplace_count_quantile

R = 4000
FLOOR = 0.95 - 6 * math.sqrt(0.95 * 0.05 / R)


def _draw(noise, discrete, scale, shape, rng):
    if noise == "gaussian":
        return discrete_gaussian_noise(scale, shape, rng=rng) if discrete else rng.normal(0.0, scale, shape)
    return discrete_laplace_noise(scale, shape, rng=rng) if discrete else rng.laplace(0.0, scale, shape)


@pytest.mark.parametrize("discrete", [False, True])
@pytest.mark.parametrize(("noise", "scale"), [("gaussian", 1.0), ("gaussian", 12.5), ("gaussian", 120.0),
                                              ("laplace", 1.0), ("laplace", 7.0)])
@pytest.mark.parametrize(("cells", "merged"), [(1, 1), (8, 1), (60, 1), (12, 4)])
def test_95_bound_covers_simulated_noise(noise, scale, discrete, cells, merged):
    rng = np.random.default_rng(hash((noise, scale, discrete, cells, merged)) % 2**32)
    q = l1_quantile(noise, scale, cells, alpha=0.05, merged=merged)
    z = _draw(noise, discrete, scale, (R, cells, merged), rng).sum(axis=2)
    norms = np.abs(z).sum(axis=1)
    assert np.mean(norms <= q) >= FLOOR, (np.mean(norms <= q), q, np.quantile(norms, 0.95))


@pytest.mark.parametrize("cells", [10, 100, 1000])
@pytest.mark.parametrize("scale", [0.5, 3.0, 40.0])
def test_laplace_bound_is_valid_and_close_to_the_exact_gamma_quantile(cells, scale):
    """Above the exact Gamma(k, b) quantile of the continuous case, and within 15 % of it for k >= 10."""
    q = l1_quantile("laplace", scale, cells, alpha=0.05)
    exact = stats.gamma.ppf(0.95, cells, scale=scale)
    assert exact <= q <= 1.15 * exact


@pytest.mark.parametrize("cells", [1, 10, 200, 5000])
@pytest.mark.parametrize("sigma", [1.0, 9.0, 150.0, 2000.0])
def test_gaussian_bound_is_at_most_aims(cells, sigma):
    """AIM §5: E + σ·sqrt(2k·ln(1/α)) with E = kσ·sqrt(2/π); ours is a Chernoff bound on the exact MGF (on
    integral bounds of the discrete Gaussian's sums above σ = 500: then within 1 % of AIM's)."""
    aim = cells * sigma * math.sqrt(2 / math.pi) + sigma * math.sqrt(2 * cells * math.log(20))
    assert l1_quantile("gaussian", sigma, cells, alpha=0.05) <= aim * (1.01 if sigma > 500 else 1.0)


def test_the_bound_grows_with_the_level_and_the_merged_draws():
    assert l1_quantile("gaussian", 2.0, 10, alpha=0.01) > l1_quantile("gaussian", 2.0, 10, alpha=0.05)
    assert l1_quantile("laplace", 2.0, 10, alpha=0.05, merged=4) > l1_quantile("laplace", 2.0, 10, alpha=0.05)


@pytest.mark.parametrize("scale", [0.5, 5.0, 50.0])
def test_row_count_margin_is_exact_for_the_geometric(scale):
    """P(|Z| > t) = 2a^(t+1)/(1 + a) for the two-sided geometric: at most α at t (and the continuous
    Laplace quantile b·ln(1/α) is not below t)."""
    alpha = 0.005
    t = laplace_count_quantile(scale, alpha=alpha)
    a = math.exp(-1 / scale)
    assert 2 * a ** (math.floor(t) + 1) / (1 + a) <= alpha
    assert t >= scale * math.log(1 / alpha)


@pytest.mark.parametrize(("kwargs", "msg"), [
    ({"noise": "cauchy", "scale": 1.0, "cells": 2}, "noise must be one of ('gaussian', 'laplace'), got 'cauchy'"),
    ({"noise": "gaussian", "scale": 0.0, "cells": 2}, "scale must be a finite number > 0, got 0.0"),
    ({"noise": "gaussian", "scale": 1.0, "cells": 0}, "cells and merged must be >= 1"),
])
def test_bad_arguments(kwargs, msg):
    with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
        l1_quantile(alpha=0.05, **kwargs)


@pytest.mark.parametrize("sigma", [50.5, 80.0, 200.0])
def test_integral_bounds_of_the_discrete_gaussian_are_above_its_sums(sigma, monkeypatch):
    """Above σ = 500 the discrete Gaussian's MGFs are bounded by integrals (the sums are long); here, with
    the threshold lowered, they must lie above the exact sums and within 3/σ of them in log."""
    from dpsynth.privacy import tails

    lam = tails._U_GAUSS / sigma
    exact = tails._discrete_gaussian(sigma, lam)
    monkeypatch.setattr(tails, "_SUM_SIGMA", 1.0)
    bound = tails._discrete_gaussian(sigma, exact[0])
    for b, e in zip(bound[1:3], exact[1:3]):
        assert np.all(b >= e - 1e-12) and np.all(b - e <= 3 / sigma)
    assert bound[3] >= exact[3]
