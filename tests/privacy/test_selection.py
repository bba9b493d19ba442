"""Discovery mechanisms (dpsynth/privacy/selection.py): partition selection and quantiles.

Statistical tests use fixed seeds; each states its false-failure rate (a correct
mechanism fails with at most that probability, so with a fixed seed the outcome
is deterministic) and is paired with a mutant it must catch.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import stats

from dpsynth.errors import BudgetError
from dpsynth.privacy.accountant import Ledger, ZCDPComposition
from dpsynth.privacy.selection import (
    gaussian_partition_selection_mechanism,
    partition_release_probability,
    partition_selection_mechanism,
    partition_threshold,
    quantile_mechanism,
    quantile_scores,
)
from tests.privacy.audit import audit

N = 200_000
FAIL = 1e-6  # false-failure rate of each binomial check below


def _select(counts, *, epsilon, delta, sensitivity=1.0, seed=0, ledger=None):
    ledger = ledger or Ledger(1e9, 0.5)
    return partition_selection_mechanism(np.asarray(counts, dtype=np.int64), epsilon=epsilon, delta=delta,
                                         sensitivity=sensitivity, ledger=ledger, rng=np.random.default_rng(seed),
                                         stage="test")


# ---------------------------------------------------------------------------- threshold from δ
@pytest.mark.parametrize("epsilon", [0.01, 0.1, 1.0, 3.0])
@pytest.mark.parametrize("delta", [1e-12, 1e-6, 1e-3])
@pytest.mark.parametrize("sensitivity", [1.0, 2.0])
def test_threshold_is_the_smallest_integer_with_single_row_release_probability_at_most_delta(epsilon, delta,
                                                                                           sensitivity):
    if delta > -math.expm1(-epsilon / sensitivity):
        pytest.skip("delta too large for this epsilon (refused, see below)")
    scale, t = partition_threshold(epsilon=epsilon, delta=delta, sensitivity=sensitivity)
    assert scale == sensitivity / epsilon
    assert partition_release_probability(t, epsilon=epsilon, sensitivity=sensitivity) <= delta
    assert partition_release_probability(t - 1, epsilon=epsilon, sensitivity=sensitivity) > delta
    # the closed form of the docstring: T = 1 + ceil(ln(1/(δ(1+α)))/ln(1/α))
    alpha = math.exp(-epsilon / sensitivity)
    assert abs(t - (1 + math.ceil(math.log(1 / (delta * (1 + alpha))) * scale))) <= 1


def test_release_probability_is_the_two_sided_geometric_tail():
    """p(T) = α^{T−1}/(1+α) for T ≥ 2 and P(G ≥ T − 1) below; exact sums of the pmf."""
    eps = 0.7
    alpha = math.exp(-eps)
    k = np.arange(-200, 201)
    pmf = (1 - alpha) / (1 + alpha) * alpha ** np.abs(k)
    for t in (-3, 0, 1, 2, 5, 11):
        assert partition_release_probability(t, epsilon=eps, sensitivity=1.0) == pytest.approx(
            pmf[k >= t - 1].sum(), rel=1e-12)


def test_threshold_refuses_delta_outside_its_range():
    with pytest.raises(BudgetError, match=re.escape(
            "partition selection needs 0 < delta <= 1 - exp(-epsilon/sensitivity) = 0.0952, got delta=0.0")):
        partition_threshold(epsilon=0.1, delta=0.0, sensitivity=1.0)
    with pytest.raises(BudgetError, match=re.escape("got delta=0.5")):
        partition_threshold(epsilon=0.1, delta=0.5, sensitivity=1.0)


# --------------------------------------------------------------- the δ event, empirically
def _exact_delta(epsilon: float, m: int) -> float:
    """A δ just above p(T) for T = m + 1 (the threshold keeps a 1e-12 relative margin for rounding), so that a
    threshold one lower releases with probability e^ε·p(T) ≈ e^ε·δ."""
    alpha = math.exp(-epsilon)
    return alpha**m / (1 + alpha) * (1 + 1e-9)


def test_single_row_value_is_released_with_probability_at_most_delta_and_a_lower_threshold_is_caught():
    """N values each held by one row (the coordinates are i.i.d., so N independent runs).  The number released
    is Binomial(N, p) with p ≤ δ: it exceeds the (1 − 1e-6) binomial quantile at δ with probability ≤ 1e-6.
    Mutant: the threshold one lower (a rounding slip in T) releases with probability e^ε·δ, and its count must
    exceed the same quantile; a mutant count below it has probability < 1e-6 too (the binomial at e^ε·δ)."""
    eps = 1.0
    delta = _exact_delta(eps, 4)
    _scale, t = partition_threshold(epsilon=eps, delta=delta, sensitivity=1.0)
    assert t == 5
    released = _select(np.ones(N), epsilon=eps, delta=delta, seed=1).size
    limit = stats.binom.ppf(1 - FAIL, N, delta)
    assert released <= limit, (released, limit)
    # exactness of the law as well (two-sided, 1e-6): the rate is p(T), not just below δ
    lo, hi = stats.binom.ppf(FAIL / 2, N, delta), stats.binom.ppf(1 - FAIL / 2, N, delta)
    assert lo <= released <= hi
    noise = np.random.default_rng(2).geometric(-math.expm1(-eps), N) - np.random.default_rng(3).geometric(
        -math.expm1(-eps), N)
    mutant = int(np.sum(1 + noise >= t - 1))
    assert stats.binom.ppf(FAIL, N, math.e * delta) > limit  # the test has the power to see it
    assert mutant > limit, (mutant, limit)


@pytest.mark.parametrize("sensitivity", [1.0, 2.0])
def test_release_rate_of_counts_matches_the_tail_law(sensitivity):
    """For counts c = 1..T+3, the fraction of N draws released matches P(c + G ≥ T) (binomial, 1e-6 two-sided
    for each of the counts, Bonferroni over them)."""
    eps, delta = 0.8, 1e-3
    _, t = partition_threshold(epsilon=eps, delta=delta, sensitivity=sensitivity)
    cs = np.arange(1, t + 4)
    counts = np.repeat(cs, N // 10)
    sel = np.zeros(counts.size, dtype=bool)
    sel[_select(counts, epsilon=eps, delta=delta, sensitivity=sensitivity, seed=5)] = True
    for c in cs:
        k = int(sel[counts == c].sum())
        p = partition_release_probability(t - c + 1, epsilon=eps, sensitivity=sensitivity)
        a = FAIL / (2 * len(cs))
        assert stats.binom.ppf(a, N // 10, p) <= k <= stats.binom.ppf(1 - a, N // 10, p), (c, k, p)


def test_partition_selection_audit_and_half_noise_mutant():
    """A value with 5 rows vs 4 (both present): the event {released} has ratio exactly e^ε in the tail, so the
    held-out Clopper–Pearson bound (false alarm ≤ 1e-3) stays below ε; with half the noise (true ε = 2) it is
    caught.  Feature: 1 if released else 0 (N independent coordinates per side)."""
    eps, delta = 1.0, _exact_delta(1.0, 8)

    def released(count, sens, seed):
        out = np.zeros(N)
        out[_select(np.full(N, count), epsilon=eps, delta=delta, sensitivity=sens, seed=seed)] = 1.0
        return out

    res = audit(released(5, 1.0, 11), released(4, 1.0, 12), claimed_epsilon=eps, delta=delta)
    assert res.passed, res
    res = audit(released(5, 0.5, 13), released(4, 0.5, 14), claimed_epsilon=eps, delta=delta)
    assert not res.passed, res


def test_partition_selection_charges_before_drawing_and_orders_by_noisy_count():
    ledger = Ledger(1.0, 1e-6)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(BudgetError):
        partition_selection_mechanism(np.array([5, 6]), epsilon=2.0, delta=1e-7, sensitivity=1.0, ledger=ledger,
                                      rng=rng, stage="s")
    assert ledger.charges == [] and rng.bit_generator.state == state
    with pytest.raises(BudgetError):  # δ over the ledger's δ
        partition_selection_mechanism(np.array([5]), epsilon=0.5, delta=1e-5, sensitivity=1.0, ledger=ledger,
                                      rng=rng, stage="s")
    counts = np.array([10_000, 3, 50_000, 20_000])
    out = partition_selection_mechanism(counts, epsilon=1.0, delta=1e-6, sensitivity=1.0, ledger=ledger, rng=rng,
                                        stage="s", measured="col")
    assert out.tolist() == [2, 3, 0]
    (c,) = ledger.charges
    assert (c.mechanism, c.epsilon, c.delta, c.count, c.sensitivity) == ("partition-selection", 1.0, 1e-6, 1, 1.0)
    assert c.measured == "col (threshold 15)" and c.rho is None


def test_partition_selection_ledger_entry_does_not_count_the_observed_values():
    """Issue 24: the number of candidates is the number of distinct values observed, a private count; the ledger
    (published in reports and model files) must read the same for D and for D plus one row holding a new value.
    Mutant: count=counts.size (the audit's finding: 3 -> 4 on every run)."""
    entries = []
    for counts in (np.array([500, 300, 200]), np.array([500, 300, 200, 1])):
        ledger = Ledger(1.0, 1e-6)
        partition_selection_mechanism(counts, epsilon=1.0, delta=1e-6, sensitivity=1.0, ledger=ledger,
                                      rng=np.random.default_rng(0), stage="s", measured="col")
        entries.append(ledger.charges[0].to_dict())
    assert entries[0] == entries[1]


def test_partition_selection_refuses_unobserved_or_fractional_counts():
    with pytest.raises(ValueError, match="observed values"):
        _select([0, 3], epsilon=1.0, delta=1e-6)
    with pytest.raises(ValueError, match="integers"):
        partition_selection_mechanism(np.array([1.5]), epsilon=1.0, delta=1e-6, sensitivity=1.0,
                                      ledger=Ledger(9, 0.1), rng=np.random.default_rng(0), stage="s")


# ----------------------------------------------------------------------------------- quantiles
def test_quantile_scores_and_sensitivity_one_under_both_relations():
    """u_q(c) = −|#{x < c} − q·n|; adding a row anywhere moves every utility by at most 1 (exhaustive check
    over the insertion point on a small grid), and so does replacing a row."""
    x = np.array([1.0, 2.0, 2.0, 5.0, 9.0])
    grid = np.arange(0.0, 11.0)
    qs = np.array([0.0, 0.1, 0.5, 0.9, 1.0])

    def scores(values):
        below = np.searchsorted(np.sort(values), grid, side="left")
        return quantile_scores(below, len(values), qs)

    base = scores(x)
    assert base[2, 2] == -abs(1 - 2.5)
    for new in np.arange(-0.5, 11.0, 0.5):
        assert np.abs(scores(np.append(x, new)) - base).max() <= 1.0
        for i in range(len(x)):
            assert np.abs(scores(np.where(np.arange(len(x)) == i, new, x)) - base).max() <= 1.0


def test_quantile_mechanism_finds_quantiles_at_large_epsilon_and_charges_once():
    x = np.arange(1000.0)
    grid = np.linspace(0, 1000, 101)
    below = np.searchsorted(x, grid)
    ledger = Ledger(1e3)
    idx = quantile_mechanism(below, 1000, qs=[0.25, 0.5, 0.75], epsilon=300.0, ledger=ledger,
                             rng=np.random.default_rng(0), stage="q", measured="x")
    assert grid[idx].tolist() == [250.0, 500.0, 750.0]
    (c,) = ledger.charges
    assert (c.mechanism, c.epsilon, c.count, c.sensitivity) == ("exponential-quantiles", 300.0, 3, 1.0)
    assert c.rho == pytest.approx(3 * 100.0**2 / 8)


def test_quantile_mechanism_law_chi_square():
    """One quantile: the index follows exp(ε·u/2)/Z (χ² at 1e-6 on 10⁵ draws); 1.3·ε in the sampler is rejected."""
    below = np.array([0, 2, 5, 9, 12, 15, 20])
    u = quantile_scores(below, 20, [0.5])[0]
    eps, draws = 0.4, 100_000
    ledger = Ledger(1e9)
    rng = np.random.default_rng(4)
    got = np.array([quantile_mechanism(below, 20, qs=[0.5] * 1000, epsilon=eps * 1000, ledger=ledger, rng=rng,
                                       stage="q") for _ in range(draws // 1000)]).reshape(-1)

    def p_of(e):
        w = np.exp(e * (u - u.max()) / 2)
        return w / w.sum()

    crit = stats.chi2.ppf(1 - 1e-6, len(u) - 1)
    obs = np.bincount(got, minlength=len(u))
    assert stats.chisquare(obs, draws * p_of(eps)).statistic < crit
    assert stats.chisquare(obs, draws * p_of(1.3 * eps)).statistic > crit


def test_quantile_mechanism_audit_and_missing_factor_2_mutant():
    """Median on the grid 0..7 of D = (0, 0, 6, 6, 6, 7) vs D′ with the 7 replaced by 0, the worst pair found by
    exhaustive search over tables of 3 to 6 values (true log ratio 0.97 at ε = 1, and 1.94 with weights
    exp(ε·u), i.e. without the factor 2, equivalent to the call with 2ε).  The held-out audit (false alarm
    ≤ 1e-3) passes for the mechanism and catches the mutant."""
    grid = np.arange(8.0)
    d = np.array([0.0, 0.0, 6.0, 6.0, 6.0, 7.0])
    d2 = np.array([0.0, 0.0, 6.0, 6.0, 6.0, 0.0])
    draws = 20_000

    def run(values, eps, seed):
        below = np.searchsorted(np.sort(values), grid)
        ledger = Ledger(1e12)
        rng = np.random.default_rng(seed)
        out = quantile_mechanism(below, len(values), qs=[0.5] * draws, epsilon=eps * draws, ledger=ledger,
                                 rng=rng, stage="a")
        return [int(i) for i in out]

    res = audit(run(d, 1.0, 21), run(d2, 1.0, 22), claimed_epsilon=1.0, discrete=True)
    assert res.passed, res
    res = audit(run(d, 2.0, 23), run(d2, 2.0, 24), claimed_epsilon=1.0, discrete=True)
    assert not res.passed, res


def test_quantile_charge_composes_under_zcdp():
    ledger = Ledger(1.0, 1e-6, ZCDPComposition())
    quantile_mechanism([0, 1, 2], 2, qs=[0.5, 0.5], epsilon=0.2, ledger=ledger, rng=np.random.default_rng(0),
                       stage="q")
    assert ledger.charges[0].rho == pytest.approx(2 * 0.1**2 / 8)


# ------------------------------------------------------------ two phases in one budget (accountant)
def test_budget_after_and_sequential_spent_add_up_exactly():
    from fractions import Fraction

    from dpsynth.privacy.accountant import budget_after, sequential_spent

    for total, used in [(1.0, 0.1), (0.3, 0.1 + 0.2 - 0.3 + 0.1), (1 / 3, 0.1), (13.0, 2.9999999999999996)]:
        eps, delta = budget_after(total, 1e-6, (used, 3e-7))
        assert Fraction(eps) + Fraction(used) <= Fraction(total) and delta <= 1e-6 - 3e-7 + 1e-22
        spent, dspent = sequential_spent([(used, 3e-7), (eps, delta)])
        assert spent <= total and dspent <= 1e-6
    with pytest.raises(BudgetError, match=re.escape(
            "nothing is left of epsilon=0.1 after an earlier phase spent epsilon=0.1")):
        budget_after(0.1, 0.0, (0.1, 0.0))


# --------------------------------------------------------------- Gaussian partition selection
def _tail_by_hand(m: int, sigma: float) -> float:
    """P(Z >= m) for the discrete Gaussian, summed term by term in exact-ish Python floats (an independent
    computation: plain loops over a generous range, no numpy)."""
    reach = int(40 * sigma) + 10
    weights = {k: math.exp(-k * k / (2 * sigma * sigma)) for k in range(-reach, reach + 1)}
    total = math.fsum(weights.values())
    return math.fsum(w for k, w in weights.items() if k >= m) / total


@pytest.mark.parametrize(("rho", "delta", "l2"), [(0.5, 1e-6, 1.0), (3.3e-4, 1e-7, 1.0), (0.02, 1e-9, math.sqrt(2))])
def test_gaussian_threshold_is_the_smallest_with_single_row_release_at_most_delta(rho, delta, l2):
    """T is the smallest integer with P(1 + Z >= T) <= delta.  Mutant: T one lower releases a single-row value with
    probability above delta."""
    from dpsynth.privacy.selection import gaussian_partition_threshold

    sigma, T = gaussian_partition_threshold(rho=rho, delta=delta, l2_sensitivity=l2)
    assert sigma == pytest.approx(l2 / math.sqrt(2 * rho))
    assert _tail_by_hand(T - 1, sigma) <= delta < _tail_by_hand(T - 2, sigma)


def test_gaussian_partition_selection_charges_rho_and_approximate_delta_once():
    """One ledger entry (rho, approx_delta = delta, count 1 whatever the number of observed values: the number
    of distinct values is private); the same entry for D and D plus one row holding a new value."""
    from dpsynth.privacy.accountant import ZCDPComposition
    from dpsynth.privacy.selection import gaussian_partition_selection_mechanism

    entries = []
    for counts in (np.array([5000, 3000, 2000]), np.array([5000, 3000, 2000, 1])):
        ledger = Ledger(1.0, 1e-6, ZCDPComposition())
        keep = gaussian_partition_selection_mechanism(counts, rho=0.01, delta=1e-7, l2_sensitivity=1.0, ledger=ledger,
                                                      rng=np.random.default_rng(0), stage="s", measured="col")
        assert keep.tolist() == [0, 1, 2]
        entries.append(ledger.charges[0].to_dict())
    assert entries[0] == entries[1]
    c = entries[0]
    assert (c["mechanism"], c["rho"], c["approx_delta"], c["count"]) == ("gaussian-partition-selection", 0.01, 1e-7, 1)


def test_gaussian_partition_selection_adds_noise_of_the_stated_scale():
    """The noisy counts of 4,000 candidates with equal counts have the discrete Gaussian's spread: the sample
    variance is within 6 standard errors of sigma^2 (false-failure rate < 1e-8).  Mutant: no noise."""
    from dpsynth.privacy.accountant import ZCDPComposition
    from dpsynth.privacy.selection import gaussian_partition_selection_mechanism

    counts = np.full(4000, 10_000, dtype=np.int64)
    ledger = Ledger(1.0, 1e-6, ZCDPComposition())
    _, noisy = gaussian_partition_selection_mechanism(counts, rho=0.005, delta=1e-7, l2_sensitivity=1.0,
                                                      ledger=ledger, rng=np.random.default_rng(3), stage="s",
                                                      return_noisy=True)
    sigma2 = 1.0 / (2 * 0.005)
    var = float(np.var(noisy.astype(float), ddof=1))
    assert abs(var - sigma2) < 6 * sigma2 * math.sqrt(2 / (counts.size - 1))


@pytest.mark.parametrize("gaussian", [False, True])
def test_partition_selection_releases_public_keys_whatever_their_count_and_thresholds_the_rest(gaussian):
    """The first ``public`` candidates are public keys (heaps.py: round values fixed before the data was read):
    released even at a noisy count near 0, while an observed value held by one row after them stays under the
    threshold (P ≤ δ).  Counts of 0 are refused past the public keys.  Mutant: the first observed value
    released as if public."""
    counts = np.array([0, 0, 0, 1, 1, 1, 5000])
    for seed in range(20):
        ledger = Ledger(1.0, 1e-6, ZCDPComposition()) if gaussian else Ledger(1.0, 1e-6)
        rng = np.random.default_rng(seed)
        if gaussian:
            keep = gaussian_partition_selection_mechanism(counts, rho=0.01, delta=1e-7, l2_sensitivity=1.0,
                                                          ledger=ledger, rng=rng, stage="s", public=3)
        else:
            keep = partition_selection_mechanism(counts, epsilon=0.5, delta=1e-7, sensitivity=1.0, ledger=ledger,
                                                 rng=rng, stage="s", public=3)
        assert sorted(keep.tolist()) == [0, 1, 2, 6]
        assert len(ledger.charges) == 1
    with pytest.raises(ValueError, match="observed values"):
        partition_selection_mechanism(np.array([0, 0]), epsilon=1.0, delta=1e-6, sensitivity=1.0,
                                      ledger=Ledger(9, 0.1), rng=np.random.default_rng(0), stage="s", public=1)
