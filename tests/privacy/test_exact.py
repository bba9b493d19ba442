"""The exact samplers (dpsynth/privacy/exact.py): Bernoulli(exp(−γ)) and the exponential mechanism.

Statistical tests use a fixed seed and a chi-square (or binomial) critical value at ALPHA = 1e-6: the
false-failure rate of each assertion is 1e-6.  Power: for the ε/2 and 2ε alternatives the design's
non-centrality is checked to give a rejection probability above 1 − 1e-6 (``_power``), and the observed
counts are asserted to reject them.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpsynth.privacy import exact
from dpsynth.privacy.accountant import Charge, Ledger
from dpsynth.privacy.mechanisms import exponential_mechanism, exponential_samples_mechanism

ALPHA = 1e-6


def _probs(scores, factor: float) -> np.ndarray:
    s = np.asarray(scores, dtype=float)
    w = np.exp(factor * (s - s.max()))
    return w / w.sum()


def _pvalue(counts: np.ndarray, p: np.ndarray) -> float:
    keep = p > 0
    assert counts[~keep].sum() == 0
    if keep.sum() == 1:
        return 1.0  # a single possible outcome, and only it was drawn
    return stats.chisquare(counts[keep], p[keep] * counts.sum()).pvalue


def _power(p: np.ndarray, q: np.ndarray, n: int) -> float:
    """Probability that n draws from q fail the chi-square test of p at level ALPHA."""
    crit = stats.chi2.ppf(1 - ALPHA, df=len(p) - 1)
    return float(stats.ncx2.sf(crit, len(p) - 1, n * float(((q - p) ** 2 / p).sum())))


# ----------------------------------------------------------------------------- Bernoulli(exp(−γ))
@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(7, 3), Fraction(5, 2)])
def test_bernoulli_exp_neg_frequencies(gamma):
    rng = np.random.default_rng(int(gamma * 6))
    n = 6000
    hits = sum(exact.bernoulli_exp_neg(gamma, rng) for _ in range(n))
    assert stats.binomtest(hits, n, math.exp(-gamma)).pvalue > ALPHA
    if gamma > 0:  # power against exp(−2γ) and exp(−γ/2)
        for wrong in (math.exp(-2 * gamma), math.exp(-gamma / 2)):
            assert stats.binomtest(hits, n, wrong).pvalue < ALPHA


@pytest.mark.parametrize("x", [0, 1, 3 << 18, 1 << 20, (1 << 20) + 12345, 3 << 20, 40 << 20])
def test_vectorized_bernoulli_exp_neg(x):
    """Bernoulli(exp(−x·2⁻²⁰)) in numpy, 200,000 draws (binomial test at 1e-6)."""
    n = 200_000
    hits = int(exact._bernoulli_exp_neg_fixed(np.full(n, x, dtype=np.int64), np.random.default_rng(x % 97)).sum())
    p = math.exp(-x / 2**20)
    assert stats.binomtest(hits, n, p).pvalue > ALPHA
    if 1 << 18 <= x < 20 << 20:
        assert stats.binomtest(hits, n, math.exp(-2 * x / 2**20)).pvalue < ALPHA


def test_bernoulli_exp_neg_rejects_negative_gamma():
    with pytest.raises(ValueError, match="gamma >= 0"):
        exact.bernoulli_exp_neg(Fraction(-1, 2), np.random.default_rng(0))


def test_uniform_below_big_moduli():
    """Above 2⁶² the sampler assembles 32-bit words: values stay below m and the top bit is fair."""
    rng = np.random.default_rng(1)
    m = 3 * 2**100 + 7
    draws = [exact.uniform_below(m, rng) for _ in range(4000)]
    assert all(0 <= v < m for v in draws)
    above = sum(v >= m // 2 for v in draws)
    assert stats.binomtest(above, 4000, (m - m // 2) / m).pvalue > ALPHA


# --------------------------------------------------------------------------- exponential mechanism
def test_exponential_indices_chi_square_and_power():
    """100,000 draws from weights exp(ε·u/(2Δ)) with ε/(2Δ) = 0.4: accepted against the exact law,
    rejected against the 2ε and ε/2 laws (whose power at this n exceeds 1 − 1e-6)."""
    scores = np.array([0.0, 1.0, 2.5, 3.0, -1.0, 3.0, 0.5, 2.0, 1.5, -2.0])
    n = 100_000
    out = exact.exponential_indices(scores[None, :], Fraction(2, 5), np.zeros(n), rng=np.random.default_rng(3))
    counts = np.bincount(out, minlength=scores.size)
    p = _probs(scores, 0.4)
    assert _pvalue(counts, p) > ALPHA
    for wrong in (0.8, 0.2):
        q = _probs(scores, wrong)
        assert _power(p, q, n) > 1 - 1e-6
        assert _pvalue(counts, q) < ALPHA


def test_exponential_indices_one_row_per_distribution():
    """Rows of a matrix are independent distributions (the quantile mechanism's m × G layout)."""
    scores = np.array([[0.0, 1.0, 2.0, 3.0], [3.0, 2.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    rows = np.repeat(np.arange(3), 30_000)
    out = exact.exponential_indices(scores, Fraction(1, 2), rows, rng=np.random.default_rng(5))
    for r in range(3):
        counts = np.bincount(out[rows == r], minlength=4)
        assert _pvalue(counts, _probs(scores[r], 0.5)) > ALPHA


@pytest.mark.parametrize(("scores", "factor"), [
    ([2.5], Fraction(1)),  # one candidate
    ([4.0] * 7, Fraction(3)),  # all equal: uniform
    ([0.0, -1e6, 1.0, -1e300], Fraction(1, 2)),  # huge gaps: exp(−5e5) has probability 0 in floats
    ([0.0, 1.0, 2.0], Fraction(1e-300)),  # ε tiny: uniform up to 1e-300
])
def test_exponential_indices_edge_cases(scores, factor):
    n = 30_000
    out = exact.exponential_indices(np.array([scores]), factor, np.zeros(n), rng=np.random.default_rng(7))
    counts = np.bincount(out, minlength=len(scores))
    assert _pvalue(counts, _probs(scores, float(factor))) > ALPHA


def test_exponential_indices_scores_1e308_apart_and_a_subnormal_factor():
    """Differences overflow (inf) and ε/(2Δ) = 2⁻¹⁰²⁵ is below the normal range: the float bounds are
    useless and every acceptance runs in exact rationals; γ = 2⁻¹⁰²⁵·(1e308 − q) are all of order 1."""
    scores = np.array([1e308, -1e308, 0.0, 5e307])
    factor = Fraction(1, 2**1025)
    gamma = [float(factor * (Fraction(1e308) - Fraction(float(q)))) for q in scores]
    p = np.exp(-np.array(gamma))
    p /= p.sum()
    n = 8_000  # non-centrality against the uniform law: 340 (power > 1 − 1e-6)
    out = exact.exponential_indices(scores[None, :], factor, np.zeros(n), rng=np.random.default_rng(11))
    counts = np.bincount(out, minlength=4)
    assert _pvalue(counts, p) > ALPHA
    assert _pvalue(counts, np.full(4, 0.25)) < ALPHA  # the remainders matter: not uniform


def test_lower_bounds_never_exceed_the_exact_gamma():
    """x·2⁻²⁰ ≤ γ exactly and, where bounded, γ·2²⁰ − x < 1 + (x + 1)·2⁻³⁹, on adversarial inputs: scores
    whose γ·2²⁰ lies one ulp below an integer (where a float product rounds up to the integer)."""
    rng = np.random.default_rng(13)
    for f in (1 / 3, 0.1, 7.123456789, 1e-3, 2.0**-30 * 3):
        factor = Fraction(f)
        targets = rng.integers(1, 2**40, size=300).astype(float)
        diffs = np.nextafter(targets / (f * 2**20), 0.0)
        scores = np.concatenate([[0.0], -diffs])[None, :]
        x, bounded = exact._lower_bounds(scores, factor)
        for q, xi, ok in zip(scores[0], x[0], bounded[0]):
            g = factor * (Fraction(0.0) - Fraction(float(q))) * 2**20
            assert xi <= g
            if ok:
                assert g - xi < 1 + Fraction(int(xi) + 1, 2**39)


def test_sampler_draws_only_integers_and_advances_the_caller_by_a_fixed_amount():
    """No float probability: the sampler works with a generator that offers only ``integers``.  The
    caller's generator advances by the same 4 words whatever the scores (the child draws the rest)."""

    class IntegersOnly:
        def __init__(self, rng):
            self._rng = rng

        def integers(self, *a, **kw):
            return self._rng.integers(*a, **kw)

    states = []
    for scores in ([0.0, 0.0, 0.0], [0.0, -50.0, -90.0, 3.0, 1.0] * 200):
        rng = np.random.default_rng(21)
        exact.exponential_indices(np.array([scores]), Fraction(1), np.zeros(50), rng=IntegersOnly(rng))
        states.append(rng.bit_generator.state["state"])
    assert states[0] == states[1]


def test_mechanisms_charge_then_draw_exactly():
    ledger = Ledger(10.0)
    i = exponential_mechanism([0.0, 5.0, -3.0], sensitivity=1.0, epsilon=2.0, ledger=ledger,
                              rng=np.random.default_rng(2), stage="t")
    assert 0 <= i < 3 and ledger.charges[0].mechanism == "exponential"
    charge = Charge(stage="dq", mechanism="exponential", sensitivity=0.25, epsilon=0.5, count=40)
    out = exponential_samples_mechanism(np.array([0.0, 1.0]), 40, weight=1.0, charge=charge, ledger=ledger,
                                        rng=np.random.default_rng(2))
    assert out.shape == (40,) and set(out.tolist()) <= {0, 1} and ledger.charges[-1] is charge
    with pytest.raises(ValueError, match="count must be >= 1"):
        exponential_samples_mechanism(np.array([0.0]), 0, weight=1.0, charge=charge, ledger=ledger,
                                      rng=np.random.default_rng(2))
