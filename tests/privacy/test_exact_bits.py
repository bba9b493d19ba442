"""Bit-level exactness of dpsynth/privacy/exact.py: every outcome of small cases, enumerated.

The samplers are driven by :class:`tests.privacy.scripted_bits.ScriptedBits` (a scripted ``integers``
source) over every path of their decision tree, and the probability of each result is an exact rational,
compared with the exact law: Algorithm 1's partial sums Σ_{k odd ≤ d} (γᵏ⁻¹/(k−1)! − γᵏ/k!) (equality of
Fractions), or rational bounds lo ≤ exp(−γ) ≤ hi known to 10⁻¹⁰⁰ (the enumeration's mass, plus its
pruned mass, must bracket it).  No statistical test can see a 2⁻²⁰ bias; these see any bias larger than
the pruned mass (asserted below 2⁻⁴⁰ where it is not zero).  Each enumeration runs with both class
representatives (lowest and highest value of each class of a big range): the answers must agree, so a
comparison the cut points do not account for shows up as a failure, not as a silent pass.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpsynth.privacy import exact
from tests.privacy.scripted_bits import enumerate_outcomes, exp_neg_bounds

ONE = 1 << 20  # exact.py's dyadic unit 2⁻²⁰
TINY = Fraction(1, 2**40)


def _algorithm1_partial(gamma: Fraction, d: int) -> tuple[Fraction, Fraction]:
    """(P(K odd and K ≤ d), P(K > d)) for Algorithm 1 with parameter γ: P(K > k) = γᵏ/k!."""
    tail = [gamma**k / math.factorial(k) for k in range(d + 1)]
    odd = sum((tail[k - 1] - tail[k] for k in range(1, d + 1, 2)), Fraction(0))
    return odd, tail[d]


def _both_reps(run, cuts=(), **kw):
    low = enumerate_outcomes(run, cuts, **kw)
    high = enumerate_outcomes(run, cuts, high_rep=True, **kw)
    assert low[:2] == high[:2], "the cut points miss a comparison the sampler makes"
    return low


def _assert_brackets(mass: Fraction, pruned: Fraction, gamma: Fraction, most: Fraction = TINY) -> None:
    lo, hi = exp_neg_bounds(gamma)
    assert pruned < most
    assert mass <= hi, f"P(accept) exceeds exp(−{gamma}) by {float(mass - hi):.3g}"
    assert mass + pruned >= lo, f"P(accept) falls short of exp(−{gamma}) by {float(lo - mass - pruned):.3g}"


# ----------------------------------------------------------------------- Algorithm 1, exact partial sums
@pytest.mark.parametrize(("p", "q"), [(0, 1), (1, 3), (2, 3), (1, 1), (5, 7), (6, 7)])
def test_algorithm1_unit_partial_sums_are_exact(p, q):
    """Draw k of the unit sampler is A_k = [uniform below q·k < p] (two classes, cut at p): after d
    draws, the accepted mass is exactly Algorithm 1's partial sum and the unfinished mass exactly γᵈ/d!."""
    d = 9
    masses, pruned, _ = _both_reps(lambda bits: exact._bernoulli_exp_neg_unit(p, q, bits), cuts=[p], small=0,
                                   max_draws=d)
    odd, tail = _algorithm1_partial(Fraction(p, q), d)
    assert masses.get(True, 0) == odd
    assert pruned == tail


@pytest.mark.parametrize("x", [0, 1, 349_525, 1 << 19, ONE - 1, ONE])
def test_dyadic_algorithm1_partial_sums_are_exact(x):
    """The vectorized sampler for γ = x·2⁻²⁰ (draws below 2²⁰·k, cut at x): same exact partial sums."""
    d = 7

    def run(bits):
        return bool(exact._bernoulli_exp_neg_dyadic(np.array([x], dtype=np.int64), bits)[0])

    masses, pruned, _ = _both_reps(run, cuts=[x], max_draws=d)
    odd, tail = _algorithm1_partial(Fraction(x, ONE), d)
    assert masses.get(True, 0) == odd and pruned == tail


def test_dyadic_entries_share_rounds_but_not_draws():
    """Three entries at once (one with x = 0, never drawn for): the joint law is the product of the
    three exact laws, within the pruned mass."""
    xs = [0, 349_525, 349_525]

    def run(bits):
        return tuple(exact._bernoulli_exp_neg_dyadic(np.array(xs, dtype=np.int64), bits).tolist())

    masses, pruned, _ = _both_reps(run, cuts=xs, floor=Fraction(1, 2**50))
    assert pruned < TINY
    for outcome, mass in masses.items():
        assert outcome[0] is True
        bounds = [exp_neg_bounds(Fraction(x, ONE)) for x in xs[1:]]
        lo = math.prod((b[0] if o else 1 - b[1]) for o, b in zip(outcome[1:], bounds))
        hi = math.prod((b[1] if o else 1 - b[0]) for o, b in zip(outcome[1:], bounds))
        assert mass <= hi and mass + pruned >= lo, outcome


def test_exp_minus_one_table_partial_sums_are_exact():
    """Bernoulli(exp(−1)) from one uniform below 6! (A₂ … A₆ at once), then one draw per k ≥ 7: with d
    draws, K ≤ d + 5 is settled; the accepted mass is the exact partial sum, the rest exactly 1/(d+5)!."""
    for d in (1, 2, 3, 5):
        masses, pruned, _ = enumerate_outcomes(lambda bits: bool(exact._bernoulli_exp_neg_one(1, bits)[0]),
                                               max_draws=d)
        odd, tail = _algorithm1_partial(Fraction(1), d + 5)
        assert masses.get(True, 0) == odd and pruned == tail, d


# ----------------------------------------------------------------- composites: bracket the exact exp(−γ)
@pytest.mark.parametrize("x", [ONE + 349_525, ONE + 1])
def test_fixed_point_sampler_is_exact(x):
    """A whole unit of exp(−1) (all 720 values of its table), then the dyadic fraction (cut at x mod
    2²⁰).  One whole unit keeps the tree small: 720 × (≈ 270 continuing) would be the next."""

    def run(bits):
        return bool(exact._bernoulli_exp_neg_fixed(np.array([x], dtype=np.int64), bits)[0])

    masses, pruned, _ = _both_reps(run, cuts=[x & (ONE - 1)], floor=Fraction(1, 2**44))
    _assert_brackets(masses.get(True, Fraction(0)), pruned, Fraction(x, ONE), most=Fraction(1, 2**36))


@pytest.mark.parametrize("gamma", [Fraction(1, 3), Fraction(7, 3), Fraction(5, 2)])
def test_rational_sampler_is_exact(gamma):
    """Whole units by Algorithm 1 with γ = 1 (draws below k, cut at 1), then the fraction p/q (cut at p)."""
    masses, pruned, _ = enumerate_outcomes(lambda bits: exact.bernoulli_exp_neg(gamma, bits), small=0,
                                           cuts=[1, (gamma - math.floor(gamma)).numerator], floor=Fraction(1, 2**50))
    _assert_brackets(masses.get(True, Fraction(0)), pruned, gamma)


def _from_cuts(rest: Fraction) -> list[int]:
    scaled = rest * (1 << 64)
    frac = scaled - math.floor(scaled)
    return [math.floor(scaled), math.ceil(scaled), frac.numerator, rest.numerator]


@pytest.mark.parametrize("rest", [Fraction(1, 3 << 20), Fraction(5, 7 << 20), Fraction(1, 3), Fraction(0)])
def test_remainder_from_64_leading_bits_is_exact(rest):
    """The remainder's Algorithm 1 whose first uniform has 64 given leading bits: drawn here uniformly
    (cut where top·2⁻⁶⁴ meets γ), the whole is exactly Bernoulli(exp(−γ))."""

    def run(bits):
        top = int(bits.integers(0, 2**64, dtype=np.uint64))
        return exact._bernoulli_exp_neg_from(rest, top, bits)

    masses, pruned, _ = _both_reps(run, cuts=_from_cuts(rest), floor=Fraction(1, 2**60))
    _assert_brackets(masses.get(True, Fraction(0)), pruned, rest)


@pytest.mark.parametrize("rest", [Fraction(1, 3 << 20), Fraction(5, 7 << 20), Fraction(1, 3)])
@pytest.mark.parametrize("offset", [-1, 0, 1])
def test_remainder_given_its_64_leading_bits_is_exact(rest, offset):
    """Conditional on the 64 leading bits ``top`` of the first uniform: A₁ = 1 with probability
    f = clamp(γ·2⁶⁴ − top, 0, 1) (the interval [top, top + 1)·2⁻⁶⁴ straddles γ when top = ⌊γ·2⁶⁴⌋; the
    test above gives that top a weight of 2⁻⁶⁴ only), then K odd with probability
    P(K odd | K ≥ 2) = (exp(−γ) − 1 + γ)/γ, so P(accept | top) = 1 − f + f·(exp(−γ) − 1 + γ)/γ."""
    scaled = rest * (1 << 64)
    top = math.floor(scaled) + offset
    f = min(max(scaled - top, Fraction(0)), Fraction(1))
    masses, pruned, _ = _both_reps(lambda bits: exact._bernoulli_exp_neg_from(rest, top, bits),
                                   cuts=_from_cuts(rest), floor=Fraction(1, 2**60))
    assert pruned < TINY
    lo, hi = exp_neg_bounds(rest)
    expected_lo, expected_hi = (1 - f + f * (e - 1 + rest) / rest for e in (lo, hi))
    mass = masses.get(True, Fraction(0))
    assert mass <= expected_hi and mass + pruned >= expected_lo, (float(f), float(mass - expected_lo))


# ------------------------------------------------------------------- the exponential mechanism, whole
def _mechanism_cuts(scores: np.ndarray, factor: Fraction):
    """Every threshold the sampler compares a draw with, by the range of the draw: the dyadic parts of
    the lower bounds x (draws below 2²⁰·k), the remainders' numerators (draws below a multiple of their
    denominators), and for the 64 bits of a remainder's first step, where they meet the exact remainder
    and the numpy fast path's bound.  (Cuts that belong to another comparison only split classes.)"""
    lower, _ = exact._lower_bounds(scores, factor)
    top = Fraction(float(scores.max()))
    fractions, numerators, bits = set(), [], set()
    for score, x in zip(scores[0].tolist(), lower[0].tolist()):
        rest = factor * (top - Fraction(score)) - Fraction(x, ONE)
        scaled = rest * (1 << 64)
        frac = scaled - math.floor(scaled)
        fractions.add(x & (ONE - 1))
        numerators += [(rest.denominator, rest.numerator), (frac.denominator, frac.numerator)]
        bits |= {math.floor(scaled), math.ceil(scaled), exact._FAST_TOP + (x + 1) * 64}

    def cuts(low: int, high: int) -> set[int]:
        if high == 1 << 64:
            return bits
        out = {num for den, num in numerators if high % den == 0}
        return out | fractions if high % ONE == 0 else out

    return cuts


class _NextBatch(Exception):
    pass


@pytest.mark.parametrize(("scores", "factor"), [([0.0, 1.0], Fraction(1, 3)), ([3.0, 0.0], Fraction(2, 7))])
def test_exponential_indices_batch_law_is_exact(monkeypatch, scores, factor):
    """One batch of b uniform proposals, each accepted with probability exp(−γⱼ) (the numpy exp(−x) part,
    the fast path on 64 bits, the Fraction slow path), the first accepted one returned: P(j returned by
    the batch) = exp(−γⱼ)/G · (1 − (1 − A)ᵇ)/A with A = Σ exp(−γᵢ)/G, and the rest starts a new batch,
    of the same law with fresh draws.  So exactness of one batch, enumerated here (a second batch stops
    the run), is exactness of the whole law P(j) ∝ exp(−γⱼ).  The child generator is the scripted
    source itself.  Two candidates, γ < 1 (γ > 1 is covered above; more candidates or proposals with
    different x split the classes of the 2²⁰·k draws further and the tree grows past a fast test).
    Pruned mass < 2⁻³⁰, far below the 2⁻²⁰-scale biases this is for (e.g. a fast-path bound too low:
    about 10⁻⁷ here)."""
    scores = np.array([scores])
    G = scores.shape[1]
    monkeypatch.setattr(exact, "child_generator", lambda rng: rng)
    real_batch, sizes = exact._batch, []

    def one_batch(*args):
        if sizes:
            raise _NextBatch
        sizes.append(real_batch(*args))
        return sizes[-1]

    monkeypatch.setattr(exact, "_batch", one_batch)

    def run(bits):
        sizes.clear()
        try:
            return int(exact.exponential_indices(scores, factor, [0], rng=bits)[0])
        except _NextBatch:
            return "next batch"

    masses, pruned, _ = _both_reps(run, cuts=_mechanism_cuts(scores, factor), floor=Fraction(1, 2**40))
    assert pruned < Fraction(1, 2**30)  # measured 2e-11 and 4e-11 (about 700 and 1,100 paths)
    b = sizes[0]
    top = Fraction(float(scores.max()))
    weights = [exp_neg_bounds(factor * (top - Fraction(s)))[0] for s in scores[0].tolist()]  # to 1e-100
    accept = sum(weights) / G
    expected = {j: w / G * (1 - (1 - accept) ** b) / accept for j, w in enumerate(weights)}
    expected["next batch"] = (1 - accept) ** b
    for outcome, p in expected.items():
        mass = masses.get(outcome, Fraction(0))
        assert p - Fraction(1, 10**60) <= mass + pruned and mass <= p + Fraction(1, 10**60), (b, outcome, float(mass - p))
