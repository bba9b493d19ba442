"""Exhaustive enumeration of a sampler's random draws: exact outcome probabilities as Fractions.

A sampler that reads its randomness only through ``rng.integers(low, high, size=..., dtype=...)`` is run
again and again with a :class:`ScriptedBits` in place of the generator, one run per path of its decision
tree (depth first, by replaying a script of choices).  Each draw uniform in [low, high) is one branch per
value when the range is small (≤ ``small``, default ``SMALL``), and otherwise one branch per *class*: the range is cut at
the given cut points (a list, or a function of (low, high) giving the cut points for that range), each class [a, b) weighs (b − a)/(high − low) and is represented by one of its
values (its lowest, or with ``high_rep`` its highest).  That is exact as long as the sampler's decisions
are constant on every class, i.e. the cut points include every threshold the sampler compares a draw
with; :func:`enumerate_outcomes` is meant to be run with both representatives, and two different answers
mean a comparison falls inside a class.

Paths are pruned when their probability falls below ``floor`` or after ``max_draws`` draws; the pruned
mass is returned beside the outcomes' masses, and everything adds up to exactly 1.  The probabilities of
the outcomes are then exact rationals, known up to the pruned mass: a bias of 2⁻²⁰ is as visible as one
of 1/2, where a statistical test would need about 2⁴⁰ draws to see it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from fractions import Fraction

import numpy as np

SMALL = 4096
MAX_PATHS = 20_000
MAX_DEPTH = 2_000


class Pruned(Exception):
    """This path was cut: too improbable, or too many draws."""


class ScriptedBits:
    """A stand-in for ``np.random.Generator`` offering only ``integers``: replays ``script`` (the index of
    the branch taken at each draw), then takes branch 0, recording (choice, branches) per draw."""

    def __init__(self, script, cuts, *, floor: Fraction, max_draws: int | None, high_rep: bool, small: int):
        self.script, self.cuts = list(script), cuts if callable(cuts) else sorted({int(c) for c in cuts})
        self.floor, self.max_draws, self.high_rep, self.small = floor, max_draws, high_rep, small
        self.path: list[tuple[int, int]] = []
        self.num, self.den = 1, 1  # the path's probability num/den (a Fraction only at the end: speed)

    @property
    def weight(self) -> Fraction:
        return Fraction(self.num, self.den)

    def _class(self, low: int, high: int, i: int | None) -> tuple[int, int, int]:
        """(number of classes of [low, high), representative and size of class i, or of class 0)."""
        if high - low <= self.small:
            return high - low, low + (i or 0), 1
        cuts = sorted(set(map(int, self.cuts(low, high)))) if callable(self.cuts) else self.cuts
        bounds = [low, *(c for c in cuts if low < c < high), high]
        a, b = bounds[i or 0], bounds[(i or 0) + 1]
        return len(bounds) - 1, (b - 1 if self.high_rep else a), b - a

    def _draw(self, low: int, high: int) -> int:
        if self.max_draws is not None and len(self.path) >= self.max_draws:
            raise Pruned
        assert len(self.path) < MAX_DEPTH, f"a path of more than {MAX_DEPTH} draws: the sampler does not stop"
        i = self.script[len(self.path)] if len(self.path) < len(self.script) else 0
        n, value, count = self._class(low, high, i)
        self.path.append((i, n))
        self.num, self.den = self.num * count, self.den * (high - low)
        if self.num * self.floor.denominator < self.floor.numerator * self.den:
            raise Pruned
        return value

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        if high is None:
            low, high = 0, low
        low, high = int(low), int(high) + int(bool(endpoint))
        if high <= low:
            raise ValueError(f"integers: empty range [{low}, {high})")
        if size is None:
            return np.dtype(dtype).type(self._draw(low, high))
        shape = (int(size),) if np.isscalar(size) else tuple(size)
        values = [self._draw(low, high) for _ in range(math.prod(shape))]
        return np.array(values, dtype=dtype).reshape(shape)


def enumerate_outcomes(run, cuts=(), *, floor=Fraction(0), max_draws=None, high_rep=False, small=SMALL,
                       max_paths=MAX_PATHS):
    """(masses, pruned, leaves): ``masses[o]`` is the exact probability that ``run(bits)`` returns o on a
    path that was not pruned; ``pruned`` is the probability of the pruned paths.  Ranges of at most
    ``small`` values are enumerated value by value, larger ones by the classes of ``cuts``.  More than
    ``max_paths`` paths, or a path of more than ``MAX_DEPTH`` draws, is a failure (the tree of a sampler that is not the one described, e.g. a test
    that accepts more often, can grow without bound; the samplers here need at most a few thousand)."""
    masses: dict = defaultdict(Fraction)
    pruned, script, leaves = Fraction(0), [], 0
    while True:
        bits = ScriptedBits(script, cuts, floor=Fraction(floor), max_draws=max_draws, high_rep=high_rep,
                           small=small)
        try:
            masses[run(bits)] += bits.weight
        except Pruned:
            pruned += bits.weight
        leaves += 1
        assert leaves <= max_paths, f"more than {max_paths} paths: not the decision tree of the sampler described"
        path = bits.path
        while path and path[-1][0] + 1 >= path[-1][1]:
            path.pop()
        if not path:
            break
        script = [c for c, _ in path[:-1]] + [path[-1][0] + 1]
    assert sum(masses.values()) + pruned == 1  # the enumerator's own invariant
    return dict(masses), pruned, leaves


def exp_neg_bounds(gamma: Fraction, terms: int = 80) -> tuple[Fraction, Fraction]:
    """Rationals lo ≤ exp(−γ) ≤ hi for 0 ≤ γ ≤ terms/2 (Taylor series of exp(γ) with its tail bound)."""
    gamma = Fraction(gamma)
    assert 0 <= gamma <= Fraction(terms, 2)
    term, total = Fraction(1), Fraction(0)
    for k in range(terms + 1):
        total += term
        term = term * gamma / (k + 1)  # γ^(k+1)/(k+1)!
    tail = term / (1 - gamma / (terms + 2))  # Σ_{k > terms} γᵏ/k! ≤ γ^(n+1)/(n+1)! · 1/(1 − γ/(n+2))
    return 1 / (total + tail), 1 / total
