"""Exact samplers built from uniform random integers: Bernoulli(exp(−γ)) and the exponential mechanism.

No probability is ever rounded.  Scores, ε and Δ arrive as doubles; each double *is* a rational number,
and the samplers draw from the distribution those rationals define, exactly:

    P(i) ∝ exp(−γᵢ),   γᵢ = f·(max_j qⱼ − qᵢ) ≥ 0,   f = ε/(2Δ) (a :class:`~fractions.Fraction`).

**Bernoulli(exp(−γ)) for rational γ** (Canonne, Kamath & Steinke 2020, "The discrete Gaussian for
differential privacy", Algorithm 1): for γ ∈ [0, 1] draw A₁ ~ Bernoulli(γ/1), A₂ ~ Bernoulli(γ/2), …
until the first A_K = 0; P(K > k) = γᵏ/k!, and P(K odd) = exp(−γ).  Each Bernoulli(p/(q·k)) is
"a uniform integer below q·k is < p".  For γ > 1, exp(−γ) = exp(−1)^⌊γ⌋ · exp(−(γ − ⌊γ⌋)) (their §5.1):
⌊γ⌋ draws with γ = 1 and one with the fractional part, stopping at the first failure.

**The exponential mechanism by rejection**: propose i uniformly among the G candidates and accept it with
probability exp(−γᵢ); the first accepted proposal has exactly the law above (the maximum only makes the
acceptance probabilities ≤ 1, with at least one equal to 1, so the expected number of proposals is
G/Σ exp(−γᵢ) ≤ G).  To keep this vectorized, each acceptance test is split as
exp(−γ) = exp(−x)·exp(−(γ − x)) with x a dyadic lower bound of γ (a multiple of 2⁻²⁰ computed from
floats and then provably ≤ γ: see :func:`_lower_bounds`): the exp(−x) part runs in numpy on every
proposal (integer arithmetic only; Bernoulli(exp(−1)) reads A₂ … A₆ off one uniform integer below 6!),
and the remainder γ − x < 2⁻²⁰ + 2⁻³⁹·(γ + 2⁻²⁰) on the first proposal that passes it: its first
step A₁ = [U < γ − x] is settled by the 64 leading bits of U unless they fall below the bound
(probability about 2⁻¹⁹), and only then does Python :class:`~fractions.Fraction` arithmetic finish it.

**Random bits**: every draw is ``integers`` of a generator.  The number of proposals depends on the
scores, so the samplers draw from a *child* generator seeded with 256 bits of the caller's ``rng``:
the caller's generator advances by the same amount whatever the data (the coupled replay tests rely on
it); like every mechanism here, this treats the generator's output as uniform random bits.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction

import numpy as np

__all__ = ["bernoulli_exp_neg", "child_generator", "exponential_indices", "uniform_below"]

_FRAC_BITS = 20
_ONE = 1 << _FRAC_BITS  # x = 1 in units of 2⁻²⁰
_X_CAP = 1 << 60  # lower bounds are capped at 2⁴⁰ (in units of 2⁻²⁰): exp(−2⁴⁰) never passes anyway
_SHRINK = 1.0 - 2.0**-40  # covers the ≤ 4 roundings of the float estimate of γ (relative 2⁻⁵³ each)
_BATCH_CELLS = 1 << 18  # proposals per vectorized batch (all pending samples together)
_FAST_CAP = 1 << 47  # below this x the remainder bound of _lower_bounds is < 2⁻¹¹ and the fast path applies
_FAST_TOP = 1 << 45  # (γ − x·2⁻²⁰)·2⁶⁴ < 2⁴⁴ + (x + 1)·2⁵ ≤ half of 2⁴⁵ + (x + 1)·2⁶


def child_generator(rng: np.random.Generator) -> np.random.Generator:
    """A generator seeded with 4 × 64 bits drawn from ``rng`` (which always advances by exactly that)."""
    return np.random.default_rng(rng.integers(0, 2**64, size=4, dtype=np.uint64))


def uniform_below(m: int, rng: np.random.Generator) -> int:
    """A uniform integer in [0, m) for any Python int m ≥ 1 (whole 32-bit words, rejection: exact)."""
    if m <= 1 << 62:
        return int(rng.integers(0, m))
    bits = m.bit_length()
    words = -(-bits // 32)
    while True:  # loop over rejections (each round succeeds with probability > 1/2)
        x = 0
        for w in rng.integers(0, 1 << 32, size=words, dtype=np.uint64).tolist():
            x = (x << 32) | w
        x >>= words * 32 - bits
        if x < m:
            return x


def _bernoulli_exp_neg_unit(p: int, q: int, rng: np.random.Generator) -> bool:
    """Algorithm 1 of Canonne, Kamath & Steinke (2020) for γ = p/q ∈ [0, 1]."""
    k = 1
    while uniform_below(q * k, rng) < p:  # A_k ~ Bernoulli(γ/k)
        k += 1
    return k % 2 == 1


def bernoulli_exp_neg(gamma: Fraction, rng: np.random.Generator) -> bool:
    """True with probability exactly exp(−γ), for a rational γ ≥ 0 (module docstring)."""
    gamma = Fraction(gamma)
    if gamma < 0:
        raise ValueError(f"bernoulli_exp_neg needs gamma >= 0, got {gamma}")
    while gamma > 1:  # exp(−1) per whole unit, stopping at the first failure
        if not _bernoulli_exp_neg_unit(1, 1, rng):
            return False
        gamma -= 1
    return _bernoulli_exp_neg_unit(gamma.numerator, gamma.denominator, rng)


def _bernoulli_exp_neg_dyadic(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Vectorized Algorithm 1 for γ = x·2⁻²⁰ ∈ [0, 1] (int64 array 0 ≤ x ≤ 2²⁰): A_k ~ Bernoulli(γ/k) is
    "a uniform integer below 2²⁰·k is < x".  The entries still going all share the same k."""
    odd = np.ones(x.shape, dtype=bool)
    live = np.flatnonzero(x > 0)
    k = 1
    while live.size:  # loop over k (P(K > k) = γᵏ/k!: a handful of rounds)
        live = live[rng.integers(0, k << _FRAC_BITS, size=live.size) < x[live]]
        k += 1
        odd[live] = k % 2 == 1
    return odd


def _odd_k_table() -> np.ndarray:
    """For u ∈ [0, 6!): is K odd, where A_k = [digit k of u is 0] in the mixed radix u = d₂ + 2·d₃ + 6·d₄ +
    … (d_k uniform in [0, k) when u is uniform) and K is the first k ≥ 2 with A_k = 0, i.e. the first k
    with u mod k! ≠ 0.  Entry 0 (K > 6) is not used."""
    u = np.arange(720)
    k = np.full(720, 7)
    for j, fact in zip(range(6, 1, -1), (720, 120, 24, 6, 2)):
        k[u % fact != 0] = j
    return k % 2 == 1


_ODD_K = _odd_k_table()


def _bernoulli_exp_neg_one(size: int, rng: np.random.Generator) -> np.ndarray:
    """Vectorized Algorithm 1 for γ = 1 (A₁ = 1 always; A_k ~ Bernoulli(1/k)).  One uniform integer
    below 6! = 2·3·…·6 gives A₂ … A₆ at once (its mixed-radix digits, :func:`_odd_k_table`); the
    1/720 of entries with all five equal to 1 continue one k at a time."""
    u = rng.integers(0, 720, size=size)
    odd = _ODD_K[u]
    live = np.flatnonzero(u == 0)
    k = 7
    while live.size:  # loop over k ≥ 7 (P(K > k) = 1/k!)
        odd[live] = k % 2 == 1  # K = k unless A_k = 1
        live = live[rng.integers(0, k, size=live.size) == 0]
        k += 1
    return odd


def _bernoulli_exp_neg_fixed(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Vectorized Bernoulli(exp(−x·2⁻²⁰)) for int64 x ≥ 0: ⌊x/2²⁰⌋ draws of exp(−1), then the fraction."""
    ok = np.ones(x.shape, dtype=bool)
    whole = x >> _FRAC_BITS
    live = np.flatnonzero(whole > 0)
    while live.size:  # loop over whole units; each kills a fraction 1 − 1/e of the live proposals
        a = _bernoulli_exp_neg_one(live.size, rng)
        ok[live[~a]] = False
        live = live[a]
        whole[live] -= 1
        live = live[whole[live] > 0]
    live = np.flatnonzero(ok)
    ok[live] = _bernoulli_exp_neg_dyadic(x[live] & (_ONE - 1), rng)
    return ok


def _lower_bounds(scores: np.ndarray, factor: Fraction) -> tuple[np.ndarray, np.ndarray]:
    """(x, bounded): int64 x with x·2⁻²⁰ ≤ γ = factor·(row max − score), exactly, for every entry of
    ``scores``, and where ``bounded`` also γ·2²⁰ − x < 1 + (x + 1)·2⁻³⁹.

    γ·2²⁰ is estimated in floats: the difference, ``float(factor)`` (correctly rounded), the product and
    the shrink are each rounded once (relative error ≤ 2⁻⁵³ each while no intermediate is subnormal);
    1 − 2⁻⁴⁰ covers all four, so the estimate g is ≤ γ·2²⁰ and x = ⌊g⌋, and g ≥ γ·2²⁰·(1 − 2⁻³⁹) gives
    the second bound.  An infinite difference (scores more than 1.8e308 apart) or a factor below the
    normal range gets the trivial x = 0 and no second bound; so does an estimate capped at 2⁶⁰.
    """
    f = float(factor)
    if not (sys.float_info.min <= f < math.inf):
        return np.zeros(scores.shape, dtype=np.int64), np.zeros(scores.shape, dtype=bool)
    span = float(np.abs(scores).max())
    if span < 2.0**1000 and span * f < 2.0**900:  # nothing can overflow: no error-state switching needed
        diff = scores.max(axis=1, keepdims=True) - scores
        est = diff * f * _SHRINK * float(_ONE)
        finite = True
    else:
        with np.errstate(over="ignore"):
            diff = scores.max(axis=1, keepdims=True) - scores
            est = diff * f * _SHRINK * float(_ONE)
        finite = np.isfinite(diff)
        est[~finite] = 0.0
    x = np.floor(np.minimum(est, float(_X_CAP))).astype(np.int64)
    return x, finite & (x < _FAST_CAP)


def _batch(weights: np.ndarray, pending: int, G: int) -> int:
    """Proposals per pending sample: about twice the expected number G/Σ exp(−γ) (float estimate: it
    sizes the batches only), within the batch cap."""
    per = int(min(2.0 * G / max(float(weights.min()), 1.0), float(G) * 4.0))
    return max(1, min(per, _BATCH_CELLS // max(pending, 1)))


def _bernoulli_exp_neg_from(rest: Fraction, top: int, rng: np.random.Generator) -> bool:
    """Algorithm 1 for γ = ``rest`` ∈ [0, 1] when the uniform U of its first step A₁ = [U < γ] has the
    64 leading bits ``top``: U = (top + V)·2⁻⁶⁴ with V uniform in [0, 1), drawn only if needed."""
    scaled = rest * (1 << 64)
    if top + 1 <= scaled:
        first = True
    elif top >= scaled:
        first = False
    else:
        frac = scaled - top
        first = uniform_below(frac.denominator, rng) < frac.numerator
    if not first:
        return True  # K = 1
    k = 2
    while uniform_below(rest.denominator * k, rng) < rest.numerator:
        k += 1
    return k % 2 == 1


def exponential_indices(scores, factor: Fraction, rows, *, rng: np.random.Generator) -> np.ndarray:
    """One exact draw per entry of ``rows``: index j ∈ [0, G) with P(j) ∝ exp(factor·scores[row, j]).

    ``scores``: (R, G) finite doubles; ``factor`` > 0 (rational); ``rows``: which row each draw uses
    (e.g. ``[0] * s`` for s draws from one distribution).  Rejection with uniform proposals (module
    docstring); draws from :func:`child_generator` of ``rng``.

    Per batch and pending draw, the first proposal that passes the vectorized exp(−x) test gets 64
    uniform bits ``top`` for the first step of its remainder's Algorithm 1; when ``top``·2⁻⁶⁴ is above
    the bound on γ − x of :func:`_lower_bounds` that step is 0 and the proposal is accepted (all in
    numpy).  Otherwise (probability about 2⁻¹⁹) it, and the later proposals of that draw, finish in
    exact :class:`~fractions.Fraction` arithmetic.
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 2 or scores.size == 0:
        raise ValueError("scores must be a non-empty 2-d array (one row per distribution)")
    rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    factor = Fraction(factor)
    G = scores.shape[1]
    lower, bounded = _lower_bounds(scores, factor)
    mass = np.exp(-lower / float(_ONE)).sum(axis=1)  # Σ exp(−x) ≥ Σ exp(−γ): for batch sizes only
    top = scores.max(axis=1)

    def rest(row: int, j: int, x: int) -> Fraction:
        value = factor * (Fraction(float(top[row])) - Fraction(float(scores[row, j]))) - Fraction(x, _ONE)
        if value < 0:
            raise RuntimeError("exact exponential sampler: a float lower bound exceeds the exact value")
        return value

    child = child_generator(rng)
    out = np.full(rows.size, -1, dtype=np.int64)
    pending = np.arange(rows.size)
    while pending.size:  # loop over batches of proposals (about one batch per draw on average)
        b = _batch(mass if mass.size == 1 else mass[np.unique(rows[pending])], pending.size, G)
        props = child.integers(0, G, size=(pending.size, b))
        r = rows[pending][:, None]
        x = lower[r, props]
        passed = _bernoulli_exp_neg_fixed(x.reshape(-1), child).reshape(x.shape)
        some = np.flatnonzero(passed.any(axis=1))
        first = passed[some].argmax(axis=1)
        bits = child.integers(0, 2**64, size=some.size, dtype=np.uint64)
        x1 = x[some, first]
        fast = bounded[r[some, 0], props[some, first]]
        fast[fast] = bits[fast] >= (_FAST_TOP + (x1[fast] + 1) * 64).astype(np.uint64)
        out[pending[some[fast]]] = props[some[fast], first[fast]]
        for i, c0, b0 in zip(some[~fast].tolist(), first[~fast].tolist(), bits[~fast].tolist()):  # rare
            row = int(rows[pending[i]])
            for c in np.flatnonzero(passed[i]).tolist():
                j, xc = int(props[i, c]), int(x[i, c])
                if c == c0 and bounded[row, j]:
                    accepted = _bernoulli_exp_neg_from(rest(row, j, xc), b0, child)
                else:  # unbounded first proposals discard their (unused, independent) bits
                    accepted = bernoulli_exp_neg(rest(row, j, xc), child)
                if accepted:
                    out[pending[i]] = j
                    break
        pending = pending[out[pending] < 0]
    return out
