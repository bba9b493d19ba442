"""Budgets planned before they are charged: per-item scale allocations and adaptive round budgets.

An algorithm that chooses its noise scales or its rounds at run time plans them here, checks the plan
against its budget (exactly, with :class:`fractions.Fraction`, near the boundary), and then charges the
ledger (:mod:`dpsynth.privacy.accountant`) with the final costs:

* :func:`scale_cost`: ε = Δ/λ of a Laplace draw, never rounded down;
* :class:`CostAllocation`: ε_j = Δ/λ_j per item (iReduct's marginals, Xiao et al. 2011 Theorem 1);
* :class:`PatternCostAllocation`: the generalized sensitivity of overlapping counting queries (Definition 4);
* :class:`RoundBudget`: MWEM's per-round budget in ε or ρ, doubled as the rounds go (``mwem_pgm``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from dpsynth.privacy.accountant import _round_up, bounded_range_epsilon, exact_sum

__all__ = ["CostAllocation", "PatternCostAllocation", "RoundBudget", "scale_cost"]


# ------------------------------------------------------------------ planned allocations
_MARGIN = 1e-9
"""Relative slack under which a float total is trusted without an exact (Fraction) check."""


def scale_cost(sensitivity: float, scale: float) -> float:
    """ε = Δ/λ of a Laplace draw at scale λ, as a float never below the exact quotient (one ulp up when the
    division is inexact), so that summing such costs never under-reports the budget."""
    q = float(sensitivity) / float(scale)
    if Fraction(q) * Fraction(float(scale)) >= Fraction(float(sensitivity)):
        return q
    return math.nextafter(q, math.inf)


class CostAllocation:
    """A planned per-item allocation ε_j = Δ/λ_j (e.g. iReduct's per-marginal scales, Xiao et al. 2011
    Theorem 1) checked exactly against a budget ε before anything is charged.

    ``fits_with(j, scale)`` answers whether moving item j to ``scale`` keeps Σ ε_j ≤ ε (exact when the float
    total is within a relative 1e-9 of ε); the caller charges the ledger with the final costs.
    """

    def __init__(self, epsilon: float, sensitivity: float, scales: Sequence[float] | np.ndarray):
        self.epsilon = float(epsilon)
        self.sensitivity = float(sensitivity)
        self.reset(scales)

    def reset(self, scales: Sequence[float] | np.ndarray) -> None:
        self.costs = [scale_cost(self.sensitivity, s) for s in [float(x) for x in scales]]
        self.total = math.fsum(self.costs)

    @property
    def safe_total(self) -> float:
        """A total below which no exact check is needed."""
        return self.epsilon * (1 - _MARGIN)

    def fits_with(self, j: int, scale: float) -> tuple[bool, float]:
        cost = scale_cost(self.sensitivity, scale)
        total = self.total - self.costs[j] + cost
        if total <= self.safe_total:
            return True, cost
        if total > self.epsilon * (1 + _MARGIN):
            return False, cost
        exact = sum((Fraction(float(c)) for i, c in enumerate(self.costs) if i != j), Fraction(cost))
        return exact <= Fraction(self.epsilon), cost

    def set(self, j: int, cost: float) -> None:
        self.costs[j] = cost
        self.total = math.fsum(self.costs)

    def total_for(self, scales) -> float:
        """Σ_j Δ/λ_j for candidate scales (float; for searches, not for charging)."""
        return float(np.sum(self.sensitivity / np.asarray(scales, dtype=float)))

    def sub_sensitivity(self, items) -> float:
        """L1 sensitivity of the answers of ``items`` (a bool mask or index array): Δ per item."""
        mask = np.zeros(len(self.costs), dtype=bool)
        mask[items] = True
        return self.sensitivity * int(mask.sum())


class PatternCostAllocation:
    """Per-query scales λ_i of counting queries that overlap (iReduct over cell-set workloads, Xiao et al.
    2011, Definition 4): GS(Λ) = factor · max_r Σ_{i∋r} 1/λ_i over the possible rows r, given by the
    ``patterns`` (P × Q bool: the maximal sets of queries one row can satisfy; factor 1 under add-remove,
    2 under replace-one).  Same interface as :class:`CostAllocation`.

    ``total`` is an upper bound of GS: each 1/λ_i is rounded up (:func:`scale_cost`) and the float
    row sums are inflated by their worst-case rounding error ((Q + 2)·2⁻⁵² relative); within a relative
    10⁻⁹ of ε the rows near the maximum are summed exactly (``Fraction``) instead.  Charging ``total``
    never under-reports the budget.
    """

    def __init__(self, epsilon: float, factor: float, patterns, scales: Sequence[float] | np.ndarray):
        self.epsilon = float(epsilon)
        self.factor = float(factor)
        self.patterns = np.asarray(patterns, dtype=bool)
        self._p = self.patterns.astype(float)
        self._inflate = 1.0 + (self.patterns.shape[1] + 2) * 2.0**-52
        self.sensitivity = self.factor * float(self.patterns.sum(axis=1).max())  # L1 sensitivity (Definition 3)
        self.reset(scales)

    def _bound(self, loads: np.ndarray, costs: np.ndarray) -> float:
        """An upper bound of factor·max_r Σ_{i∈r} costs_i: inflated float, or exact near the budget."""
        top = float(loads.max())
        bound = _round_up(self.factor * top * self._inflate)
        if bound <= self.epsilon or self.factor * top > self.epsilon * (1 + _MARGIN):
            return bound
        near = self.patterns[loads >= top * (1 - _MARGIN)]  # the rows that may hold the exact maximum
        exact = Fraction(self.factor) * max(exact_sum(costs[row]) for row in near)
        out = float(exact)
        return out if Fraction(out) >= exact else _round_up(out)

    def reset(self, scales: Sequence[float] | np.ndarray) -> None:
        self.costs = np.array([scale_cost(1.0, float(s)) for s in np.asarray(scales, dtype=float)])
        self.loads = self._p @ self.costs
        self.total = self._bound(self.loads, self.costs)

    @property
    def safe_total(self) -> float:
        return self.epsilon * (1 - _MARGIN)

    def fits_with(self, j: int, scale: float) -> tuple[bool, float]:
        cost = scale_cost(1.0, scale)
        costs = self.costs.copy()
        costs[j] = cost
        return self._bound(self._p @ costs, costs) <= self.epsilon, cost

    def set(self, j: int, cost: float) -> None:
        self.costs[j] = cost
        self.loads = self._p @ self.costs
        self.total = self._bound(self.loads, self.costs)

    def total_for(self, scales) -> float:
        return self.factor * float(np.max(self._p @ (1.0 / np.asarray(scales, dtype=float))))

    def sub_sensitivity(self, items) -> float:
        """L1 sensitivity of the answers of ``items`` alone: factor · max_r |r ∩ items|."""
        return self.factor * float(self.patterns[:, items].sum(axis=1).max())

# ------------------------------------------------------------------ adaptive round budgets
class RoundBudget:
    """An adaptive per-round budget in ε (pure) or ρ (zCDP): MWEM with the estimator in the loop
    (:mod:`dpsynth.algorithms.mwem_pgm`) spends it round by round.

    ``total`` is what the rounds may spend (ε left, or :func:`zcdp_available`); a relative 10⁻⁹ of it is
    kept back so that float sums of the parts stay below it.  ``init_fraction`` of that pays the initial
    measurements; the rest is shared by ``iterations`` rounds, each split into a selection part
    (``select_fraction``) and a measurement part.  :meth:`grow` divides the noise deviation of later rounds
    by ``anneal`` (at least 1, so no round is ever cheaper than the first): the per-round ε × ``anneal``
    (pure), ρ × ``anneal``² (zCDP); the default 2 doubles ε, quadruples ρ.  When what is left cannot pay
    for two more rounds, :meth:`take` hands out all of it and says it is the last round, so the budget is
    used exactly.
    """

    def __init__(self, total: float, *, init_fraction: float, iterations: int, select_fraction: float, zcdp: bool,
                 anneal: float = 2.0):
        if not 1.0 <= anneal < math.inf:
            raise ValueError(f"RoundBudget: anneal must be a finite number >= 1, got {anneal!r}")
        self.zcdp, self.anneal = zcdp, anneal
        usable = total * (1.0 - 1e-9)
        self.init_part = usable * init_fraction
        self.left = usable - self.init_part
        self.per_round = self.left / iterations
        self.select_fraction = select_fraction

    def init_share(self, count: int) -> float:
        """The part of each of ``count`` equal initial measurements."""
        return self.init_part / count

    def init_shares(self, sizes, power: float = 0.0) -> tuple[float, ...]:
        """The parts of the initial measurements of columns of ``sizes`` values (public), in proportion to
        size**``power`` (0: equal, :meth:`init_share`); they sum to at most the initial part."""
        if power == 0.0 or not len(sizes):
            return (self.init_share(len(sizes)),) * len(sizes)
        weights = [float(s) ** power for s in sizes]
        scale = self.init_part * (1.0 - 1e-12) / math.fsum(weights)  # float parts never sum past init_part
        return tuple(w * scale for w in weights)

    def take(self) -> tuple[float, float, bool]:
        """(selection part, measurement part, last round?) of the next round."""
        part, last = self.per_round, False
        if self.left < 2.0 * part:
            part, last = self.left, True
        self.left -= part
        return part * self.select_fraction, part * (1.0 - self.select_fraction), last

    def select_epsilon(self, part: float) -> float:
        """ε of an exponential mechanism paid with ``part``: itself (pure), or sqrt(8ρ) (zCDP: the
        bounded-range exponential mechanism is ε²/8-zCDP, Cesar & Rogers 2021)."""
        return bounded_range_epsilon(part) if self.zcdp else part

    def deviation(self, part: float, l1: float, l2: float) -> float:
        """Standard deviation of a measurement paid with ``part``: Gaussian Δ₂/sqrt(2ρ) (Bun & Steinke
        2016, Prop. 1.6) or Laplace sqrt(2)·Δ₁/ε."""
        return l2 / math.sqrt(2.0 * part) if self.zcdp else math.sqrt(2.0) * l1 / part

    def grow(self) -> None:
        self.per_round *= self.anneal ** 2 if self.zcdp else self.anneal
