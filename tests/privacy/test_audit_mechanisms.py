"""Empirical ε audits of the mechanisms, each with a mutant the audit must catch.

Method: :mod:`tests.privacy.audit` (event chosen on one half of the draws,
one-sided Clopper–Pearson bounds on the other half).  A correct mechanism
fails an audit with probability ≤ 1e-3 (``audit.ALPHA``); with fixed seeds
the outcome is deterministic.  Every audit is paired with a deliberately
broken variant (half the noise, a wrong sensitivity, the exponential
mechanism without its factor 2, NoiseDown replaced by fresh draws) whose
lower bound must exceed the claimed ε, so each audit can fail.

Vectorised mechanisms are run once on a vector of N identical true values:
the noise of the coordinates is i.i.d., so this is N independent runs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpsynth.privacy.accountant import Charge, Ledger
from dpsynth.privacy.mechanisms import (
    exponential_samples_mechanism,
    geometric_mechanism,
    laplace_mechanism,
    snapping_mechanism,
    snapping_noise_scale,
)
from dpsynth.privacy.noisedown import noise_down
from tests.privacy.audit import audit, epsilon_lower_bound

N = 200_000


def _runs(mech, true, draws, *, seed, **kw):
    """``draws`` independent outputs of ``mech`` on the vector ``true`` (rows: draws)."""
    true = np.asarray(true)
    big = np.broadcast_to(true, (draws, *true.shape))
    ledger = Ledger(1e9)
    return mech(big, ledger=ledger, rng=np.random.default_rng(seed), stage="audit", **kw)


def test_clopper_pearson_bound_is_conservative():
    """Exact check of the false-alarm rate: for a pair with ratio exactly e^ε, P(bound > ε) ≤ α.

    Binomial probabilities are summed exactly over all outcomes (no sampling), so this cannot fail by chance."""
    from scipy import stats

    eps, n, alpha = 1.0, 300, 1e-3
    p2 = 0.05
    p1 = p2 * np.exp(eps)
    k = np.arange(n + 1)
    b = epsilon_lower_bound(k[:, None], n, k[None, :], n, alpha=alpha)
    joint = stats.binom.pmf(k, n, p1)[:, None] * stats.binom.pmf(k, n, p2)[None, :]
    assert joint[b > eps].sum() <= alpha


@pytest.mark.parametrize("eps", [0.5, 1.0])
def test_laplace_count_audit_and_half_noise_mutant(eps):
    """Count query, Δ = 1, D: 0 vs D′: 1.  The correct mechanism passes; half the noise (true ε = 2ε) is caught."""
    good = [_runs(laplace_mechanism, [c], N, seed=10 + c, sensitivity=1.0, epsilon=eps)[:, 0] for c in (0, 1)]
    res = audit(*good, claimed_epsilon=eps)
    assert res.passed, res
    bad = [_runs(laplace_mechanism, [c], N, seed=20 + c, sensitivity=0.5, epsilon=eps)[:, 0] for c in (0, 1)]
    res = audit(*bad, claimed_epsilon=eps)
    assert not res.passed, res


def test_laplace_histogram_replace_one_and_wrong_sensitivity_mutant():
    """Replace-one histogram: D = (5, 5), D′ = (4, 6), L1 distance 2.  With Δ = 2 the release passes; a bug that
    uses the add-remove sensitivity Δ = 1 (true ε = 2) is caught.  Feature: the difference of the two cells."""
    eps = 1.0

    def feature(sens, seed):
        outs = []
        for i, true in enumerate(([5, 5], [4, 6])):
            y = _runs(laplace_mechanism, true, N, seed=seed + i, sensitivity=sens, epsilon=eps)
            outs.append(y[:, 1] - y[:, 0])
        return outs

    assert audit(*feature(2.0, 30), claimed_epsilon=eps).passed
    res = audit(*feature(1.0, 40), claimed_epsilon=eps)
    assert not res.passed, res


def test_geometric_count_audit_and_half_noise_mutant():
    """Discrete Laplace on an integer count: passes at ε = 1; scale halved (true ε = 2) is caught."""
    eps = 1.0
    good = [_runs(geometric_mechanism, np.array([c]), N, seed=50 + c, sensitivity=1.0, epsilon=eps)[:, 0]
            for c in (3, 4)]
    assert audit(*good, claimed_epsilon=eps).passed
    bad = [_runs(geometric_mechanism, np.array([c]), N, seed=60 + c, sensitivity=0.5, epsilon=eps)[:, 0]
           for c in (3, 4)]
    res = audit(*bad, claimed_epsilon=eps)
    assert not res.passed, res


def _em_draws(scores, draws, *, seed, sensitivity, epsilon):
    """``draws`` independent runs of the ε-exponential mechanism, as one batched call of the same exact
    sampler (i.i.d. draws with weights exp(ε·u/(2Δ)); the per-call path is tested in test_mechanisms.py)."""
    ledger, rng = Ledger(1e12), np.random.default_rng(seed)
    charge = Charge(stage="audit", mechanism="exponential", sensitivity=sensitivity, epsilon=epsilon * draws,
                    count=draws)
    return list(exponential_samples_mechanism(scores, draws, weight=epsilon / (2 * sensitivity), charge=charge,
                                              ledger=ledger, rng=rng))


def test_exponential_mechanism_worst_case_pair_and_missing_factor_2():
    """k = 10 candidates, Δ = 1, ε = 1.  Worst-case neighbours: in D candidate 0 scores Δ and the rest 0; in D′
    candidate 0 scores 0 and the rest Δ.  True log ratio of {output = 0}: 0.897 (≤ ε); without the factor 2 in
    exp(ε·u/(2Δ)) it is 1.776, which the audit catches."""
    k, eps, draws = 10, 1.0, 6_000
    d = np.zeros(k)
    d[0] = 1.0
    d2 = np.ones(k)
    d2[0] = 0.0
    good = [_em_draws(s, draws, seed=70 + i, sensitivity=1.0, epsilon=eps) for i, s in enumerate((d, d2))]
    res = audit(*good, claimed_epsilon=eps, discrete=True)
    assert res.passed, res
    # missing factor 2: weights exp(ε·u/Δ), i.e. the correct code called with half the sensitivity
    bad = [_em_draws(s, draws, seed=80 + i, sensitivity=0.5, epsilon=eps) for i, s in enumerate((d, d2))]
    res = audit(*bad, claimed_epsilon=eps, discrete=True)
    assert not res.passed, res


def test_noise_down_pair_costs_only_the_final_scale():
    """iReduct's NoiseDown: publishing (Y, Y′) with Y ~ Lap(μ, 2), Y′ = NoiseDown to scale 1 costs Δ/1 = 1.
    Mutant: Y′ drawn independently (the pair then costs 1/2 + 1 = 1.5).  Feature: min(Y, Y′), whose event
    {min ≥ 1} is the corner where the mutant's ratio is exactly e^1.5 (chosen before looking at any draw)."""
    lam, lam2 = 2.0, 1.0

    def pairs(mu, seed, fresh):
        rng = np.random.default_rng(seed)
        y = mu + rng.laplace(0.0, lam, size=N)
        y2 = mu + rng.laplace(0.0, lam2, size=N) if fresh else noise_down(mu, y, lam, lam2, rng=rng)
        return np.minimum(y, y2)

    assert audit(pairs(0.0, 90, False), pairs(1.0, 91, False), claimed_epsilon=1.0 / lam2).passed
    res = audit(pairs(0.0, 92, True), pairs(1.0, 93, True), claimed_epsilon=1.0 / lam2)
    assert not res.passed, res


# ------------------------------------------------------------------- snapping mechanism (Mironov 2012)
def test_snapping_outputs_lie_on_one_public_lattice():
    """The set of reachable outputs does not depend on the input: multiples of Λ in [−B, B] (for inputs 0, 1,
    0.3 and a value outside the bound), which is what textbook Laplace on doubles gets wrong."""
    lam, grid = snapping_noise_scale(sensitivity=1.0, epsilon=0.3, bound=40.0)
    assert grid == 4.0 and 3.333 < lam < 3.334
    for x in (0.0, 1.0, 0.3, 1e6):
        y = _runs(snapping_mechanism, [x], 20_000, seed=11, sensitivity=1.0, epsilon=0.3, bound=40.0)[:, 0]
        assert np.all(np.abs(y) <= 40.0) and np.all(y / grid == np.round(y / grid))


def test_snapping_law_chi_square():
    """Away from the bound, outputs follow Laplace(x, λ) rounded to the nearest multiple of Λ (χ² at 1e-6 on
    2·10⁵ draws); the laws at 0.7λ and 1.3λ are rejected."""
    from scipy import stats

    x, eps, bound = 2.5, 0.3, 1e4
    lam, grid = snapping_noise_scale(sensitivity=1.0, epsilon=eps, bound=bound)
    y = _runs(snapping_mechanism, [x], N, seed=12, sensitivity=1.0, epsilon=eps, bound=bound)[:, 0]
    k = np.round(y / grid).astype(int)
    ks = np.arange(-12, 13)
    observed = np.array([np.sum(k < ks[0]), *[np.sum(k == v) for v in ks], np.sum(k > ks[-1])])

    def pvalue(scale):
        cdf = stats.laplace(loc=x, scale=scale).cdf
        edges = np.concatenate([[-np.inf], (ks - 0.5) * grid, [(ks[-1] + 0.5) * grid], [np.inf]])
        p = np.diff(cdf(edges))
        return stats.chisquare(observed, p / p.sum() * N).pvalue

    assert pvalue(lam) > 1e-6
    assert pvalue(0.7 * lam) < 1e-6 and pvalue(1.3 * lam) < 1e-6


def test_snapping_audit_and_half_noise_mutant():
    """Count 0 vs 1 at ε = 1 (B = 50): passes; the scale halved (true ε ≈ 2) is caught."""
    good = [_runs(snapping_mechanism, [c], N, seed=13 + c, sensitivity=1.0, epsilon=1.0, bound=50.0)[:, 0]
            for c in (0, 1)]
    res = audit(*good, claimed_epsilon=1.0)
    assert res.passed, res
    bad = [_runs(snapping_mechanism, [c], N, seed=15 + c, sensitivity=0.5, epsilon=1.0, bound=50.0)[:, 0]
           for c in (0, 1)]
    res = audit(*bad, claimed_epsilon=1.0)
    assert not res.passed, res


def test_snapping_clamps_its_input_before_the_noise():
    """Mironov's proof (§5.2) assumes the noise is added to clamp_B(x): an input beyond ±B must give
    exactly the outputs of ±B for the same generator state.  Deterministic (same seed): no false failure."""
    outs = [snapping_mechanism(np.full(2000, x), sensitivity=1.0, epsilon=1.0, bound=64.0, ledger=Ledger(1e9),
                               rng=np.random.default_rng(3), stage="t") for x in (64.0, 640.0, -64.0, -1e6)]
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[2], outs[3])
    assert len(np.unique(outs[0])) > 1  # the noise really moved the clamped value


@pytest.mark.parametrize("sensitivity, epsilon, bound", [(2.0, 0.5, 2.0**40), (1.0, 1.0, 64.0), (3.0, 0.1, 1e9)])
def test_snapping_scale_includes_mironovs_slack(sensitivity, epsilon, bound):
    """Mironov 2012, Theorem 1: the snapping mechanism with noise scale λ is (1/λ + 2⁻⁴⁹·B/λ)-DP per unit of
    sensitivity, so ε-DP needs λ ≥ Δ·(1 + 2⁻⁴⁹·B)/ε exactly (checked in rationals), and Λ is the smallest power
    of two ≥ λ.  Deterministic."""
    from fractions import Fraction

    lam, grid = snapping_noise_scale(sensitivity=sensitivity, epsilon=epsilon, bound=bound)
    need = Fraction(sensitivity) * (1 + Fraction(bound) / 2**49) / Fraction(epsilon)
    assert Fraction(lam) >= need and lam <= float(need) * (1 + 1e-15)
    assert grid >= lam and grid / 2 < lam and math.log2(grid).is_integer()


def test_snapping_refuses_a_bound_below_the_scale():
    with pytest.raises(ValueError, match=r"snapping mechanism needs noise scale < bound < 2\^46 \* scale"):
        snapping_noise_scale(sensitivity=1.0, epsilon=0.1, bound=5.0)


def test_laplace_algorithm_snapping_option_releases_lattice_values():
    """``algorithm.params.noise: snapping``: released marginals lie on the public lattice of the mechanism."""
    import dpsynth
    from dpsynth.config import parse_config
    from tests.privacy.audit import tiny_neighbours, tiny_raw_config

    raw = tiny_raw_config("laplace", "add-remove")
    raw["algorithm"]["params"] = {"noise": "snapping"}
    table, _ = tiny_neighbours("add-remove")
    res = dpsynth.release(table, parse_config(raw), rng=np.random.default_rng(4))
    assert {c["mechanism"] for c in res.report["ledger"]} == {"discrete-laplace", "snapping"}
    for c in res.report["ledger"][1:]:
        n_noisy = res.report["output"]["rows"]
        bound = max(float(n_noisy), 8.0 * 1.0 / c["epsilon"])
        _, grid = snapping_noise_scale(sensitivity=1.0, epsilon=c["epsilon"], bound=bound)
        values = res.marginals["noisy_count"].to_numpy()
        assert np.all(values / grid == np.round(values / grid)) and np.all(np.abs(values) <= bound)
