"""The privacy ledger: every mechanism call is recorded here, and checked *before* it runs.

The ledger knows nothing about pandas, files or the command line.  It holds the
requested budget (ε, δ), a list of :class:`Charge` records and a
:class:`Composition` rule that turns the charges into a total (ε, δ).  A
charge that would push the total over the budget raises :class:`BudgetError`
and is not recorded, so a mechanism never draws noise it cannot pay for.

Totals are summed exactly: each float is converted to a :class:`fractions.Fraction`
(which represents a double exactly), so rounding can never hide an overspend.
Use :func:`split_budget` to divide a budget into float parts whose exact sum
does not exceed the whole.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any, Protocol, cast

import numpy as np

from dpsynth.errors import BudgetError

__all__ = [
    "BasicComposition",
    "Charge",
    "Composition",
    "CostAllocation",
    "Ledger",
    "PatternCostAllocation",
    "RoundBudget",
    "ZCDPComposition",
    "approx_delta_spent",
    "approx_dp_to_zcdp",
    "approx_part",
    "bounded_range_epsilon",
    "budget_after",
    "exact_sum",
    "group_of_two",
    "recorded_charge",
    "scale_cost",
    "sequential_spent",
    "split_budget",
    "zcdp_available",
    "zcdp_share",
    "zcdp_spent",
    "zcdp_to_approx_dp",
]


@dataclass(frozen=True)
class Charge:
    """One mechanism invocation (or a batch of identical ones) in the ledger.

    ``epsilon``/``delta`` are the pure/approximate DP cost of this entry under
    basic composition.  ``rho`` is its zero-concentrated DP cost when the
    mechanism has one (Gaussian noise, bounded-range exponential mechanism).
    ``measured`` describes *what* was measured using public names only.
    """

    stage: str
    mechanism: str
    sensitivity: float
    epsilon: float
    delta: float = 0.0
    scale: float | None = None
    rho: float | None = None
    measured: str = ""
    count: int = 1
    approx_delta: float = 0.0
    """δ of an approximate-zCDP mechanism: with probability ≥ 1 − approx_delta it is ``rho``-zCDP (Bun & Steinke
    2016, Def. 1.8; Gaussian partition selection: the δ event is a value held by one row being released).  Under
    zCDP composition these add up and are taken out of the δ used to convert ρ; basic composition counts
    ``delta``."""

    def to_dict(self) -> dict:
        return asdict(self)


def approx_part(charge: Charge) -> float:
    """The δ a charge adds under zCDP composition: ``approx_delta`` for a zCDP charge; for a charge without ρ (an
    (ε, δ)-DP mechanism, δ-approximately (ε²/2)-zCDP: Dwork & Roth 2014 Lemma 3.17 decomposes (ε, δ)-DP into ε-DP
    up to total variation δ) its ``delta``."""
    return charge.approx_delta if charge.rho is not None else charge.delta


def exact_sum(values: Sequence[float]) -> Fraction:
    """Exact sum of floats (each double is a dyadic rational)."""
    total = Fraction(0)
    for v in values:
        total += Fraction(float(v))
    return total


def split_budget(total: float, weights: Sequence[float]) -> list[float]:
    """Split ``total`` proportionally to ``weights`` into floats whose exact sum is ≤ ``total``.

    Each part is rounded down one ulp at a time until the exact sum fits, so a
    ledger that receives all the parts never refuses the last one by rounding.
    """
    if total < 0 or not math.isfinite(total):
        raise BudgetError(f"budget must be a finite number >= 0, got {total!r}")
    w = [float(x) for x in weights]
    if not w or any(x < 0 or not math.isfinite(x) for x in w) or sum(w) <= 0:
        raise BudgetError("budget weights must be finite, non-negative and not all zero")
    s = sum(w)
    parts = [total * x / s for x in w]
    target = Fraction(float(total))
    i = 0
    while exact_sum(parts) > target:
        j = i % len(parts)
        if parts[j] > 0:
            parts[j] = math.nextafter(parts[j], 0.0)
        i += 1
    return parts


def budget_after(epsilon: float, delta: float, spent: tuple[float, float]) -> tuple[float, float]:
    """The (ε, δ) left for a later phase after an earlier one spent ``spent``, by basic composition.

    Rounded down (exactly), so that the two phases' totals always add up to at most (ε, δ).  Raises
    :class:`BudgetError` when nothing (ε ≤ 0) would be left.
    """
    parts = []
    for total, used in ((epsilon, spent[0]), (delta, spent[1])):
        exact = Fraction(float(total)) - Fraction(float(used))
        value = float(exact) if exact > 0 else 0.0
        if Fraction(value) > exact:
            value = math.nextafter(value, 0.0)
        parts.append(value)
    if parts[0] <= 0:
        raise BudgetError(
            f"nothing is left of epsilon={epsilon:g} after an earlier phase spent epsilon={spent[0]:g}"
        )
    return parts[0], parts[1]


def sequential_spent(phases: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """Total (ε, δ) of phases run one after the other (basic composition of their totals, exact sums)."""
    return float(exact_sum([p[0] for p in phases])), float(exact_sum([p[1] for p in phases]))


def zcdp_to_approx_dp(rho: float, delta: float) -> float:
    """ε of (ε, δ)-DP implied by ρ-zCDP: ε = ρ + 2·sqrt(ρ·ln(1/δ)) (Bun & Steinke 2016, Prop. 1.3)."""
    if rho <= 0:
        return 0.0
    if not 0 < delta < 1:
        return math.inf
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def approx_dp_to_zcdp(epsilon: float, delta: float) -> float:
    """Largest ρ with ρ + 2·sqrt(ρ·ln(1/δ)) ≤ ε: the inverse of :func:`zcdp_to_approx_dp`
    (Bun & Steinke 2016, Prop. 1.3), the ρ a zCDP algorithm may spend under an (ε, δ) budget."""
    L = math.log(1.0 / delta)
    return (math.sqrt(L + epsilon) - math.sqrt(L)) ** 2


def zcdp_share(epsilon: float, delta: float, share: float, approx_delta: float) -> float:
    """ρ of a first phase that takes ``share`` of the ρ an (ε, δ) zCDP budget allows once ``approx_delta`` (the
    phase's approximate δ, e.g. partition selection) is set aside: share · :func:`approx_dp_to_zcdp` (ε, δ − δ_a).
    The later phase spends what :func:`zcdp_available` leaves on the same ledger."""
    if not 0 < share < 1:
        raise BudgetError(f"a phase's share of the budget must be in (0, 1), got {share!r}")
    if not 0 <= approx_delta < delta:
        raise BudgetError(f"the approximate delta of a phase ({approx_delta!r}) must be below the budget's delta "
                          f"({delta!r})")
    return share * approx_dp_to_zcdp(epsilon, delta - approx_delta) * (1 - 1e-9)


def recorded_charge(*, epsilon: float, delta: float, rho: float | None, approx_delta: float, measured: str) -> Charge:
    """One ledger entry for the spend of an earlier phase run on the same data and recorded with its output (a
    discovered schema's ``schema.discovery``): its ε/δ count under basic composition, its ρ and approximate δ under
    zCDP, so every total of the new ledger includes it."""
    return Charge(stage="discover", mechanism="recorded-discovery", sensitivity=1.0, epsilon=float(epsilon),
                  delta=float(delta), rho=None if rho is None else float(rho), measured=measured, count=1,
                  approx_delta=float(approx_delta))


def bounded_range_epsilon(rho: float) -> float:
    """ε = sqrt(8ρ): the exponential mechanism with this ε is ρ-zCDP (bounded range, Cesar & Rogers 2021)."""
    return math.sqrt(8.0 * rho)


def zcdp_spent(charges: Sequence[Charge]) -> float:
    """Total ρ of ``charges``; pure ε-DP charges count ε²/2 (Bun & Steinke 2016, Prop. 1.4)."""
    return sum(c.rho if c.rho is not None else c.epsilon**2 / 2 for c in charges)


def approx_delta_spent(charges: Sequence[Charge]) -> float:
    """Total approximate δ of ``charges`` under zCDP composition (:func:`approx_part`), rounded up."""
    total = float(exact_sum([approx_part(c) for c in charges]))
    return _round_up(total) if total > 0 else 0.0


def zcdp_available(ledger: Ledger, margin: float = 1e-9) -> float:
    """ρ still available under the ledger's (ε, δ): :func:`approx_dp_to_zcdp` at the δ left after the
    approximate δ already spent, minus :func:`zcdp_spent`, shrunk by the relative ``margin`` so that float sums
    of its parts stay within the budget.  May be ≤ 0 (nothing left); the caller says what that means."""
    left = ledger.delta - approx_delta_spent(ledger.charges)
    if left <= 0:
        return 0.0
    return (approx_dp_to_zcdp(ledger.epsilon, left) - zcdp_spent(ledger.charges)) * (1 - margin)


class Composition(Protocol):
    """A composition theorem: turns a list of charges into a total (ε, δ).

    A composition may also offer the incremental form ``start() -> state``,
    ``add(state, charge) -> state`` and ``value(state, delta_budget) -> (ε, δ)``;
    the ledger then keeps a running state and each charge costs O(1) instead
    of a pass over all previous charges.
    """

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    def total(self, charges: Sequence[Charge], delta_budget: float) -> tuple[float | Fraction, float | Fraction]:
        ...


class IncrementalComposition(Composition, Protocol):
    """A :class:`Composition` that also offers the incremental form (``start``, ``add``, ``value``)."""

    def start(self) -> Any: ...

    def add(self, state: Any, charge: Charge) -> Any: ...

    def value(self, state: Any, delta_budget: float) -> tuple[float | Fraction, float | Fraction]: ...


@dataclass(frozen=True)
class BasicComposition:
    """Sequential (basic) composition: ε and δ add up (Dwork survey, §3)."""

    name: str = "basic"
    description: str = (
        "basic sequential composition: the epsilons (and deltas) of all mechanism "
        "invocations add up"
    )

    def total(self, charges: Sequence[Charge], delta_budget: float) -> tuple[Fraction, Fraction]:
        # Exact: the ledger compares these Fractions with the budget before converting.
        return exact_sum([c.epsilon for c in charges]), exact_sum([c.delta for c in charges])

    # Incremental form (the ledger keeps a running state, so charging is O(1)).
    def start(self):
        return (Fraction(0), Fraction(0))

    def add(self, state, charge: Charge):
        return (state[0] + Fraction(float(charge.epsilon)), state[1] + Fraction(float(charge.delta)))

    def value(self, state, delta_budget: float):
        return state


@dataclass(frozen=True)
class ZCDPComposition:
    """zCDP composition: the ρ of all charges add up; converted to (ε, δ_budget).

    Charges without a ``rho`` are pure ε-DP and contribute ρ = ε²/2 (Bun &
    Steinke 2016, Prop. 1.4).
    """

    name: str = "zcdp"
    description: str = (
        "zero-concentrated DP: rho adds up over all mechanisms (pure eps-DP counts "
        "as eps^2/2), converted to (eps, delta) by eps = rho + 2*sqrt(rho*ln(1/delta))"
    )

    def total(self, charges: Sequence[Charge], delta_budget: float) -> tuple[float, float]:
        state = self.start()
        for c in charges:
            state = self.add(state, c)
        return self.value(state, delta_budget)

    def start(self):
        return (0.0, Fraction(0))

    def add(self, state, charge: Charge):
        rho = state[0] + (charge.rho if charge.rho is not None else charge.epsilon**2 / 2.0)
        return (rho, state[1] + Fraction(float(approx_part(charge))))

    def value(self, state, delta_budget: float):
        """δ-approximate ρ-zCDP with approximate δ_a is (ρ + 2·sqrt(ρ·ln(1/(δ − δ_a))), δ)-DP: the conversion
        uses what the approximate charges left of the budget's δ (Bun & Steinke 2016, Prop. 1.3 and Def. 1.8)."""
        rho, approx = state
        if rho == 0 and approx == 0:
            return 0.0, 0.0
        left = Fraction(float(delta_budget)) - approx
        if left <= 0:
            return (math.inf if rho > 0 else 0.0), (float(approx) if rho == 0 else math.inf)
        return zcdp_to_approx_dp(rho, math.nextafter(float(left), 0.0) if Fraction(float(left)) > left
                                 else float(left)), delta_budget


@dataclass
class Ledger:
    """Budget plus the record of every charge; refuses overspending before it happens."""

    epsilon: float
    delta: float = 0.0
    composition: Composition = field(default_factory=BasicComposition)
    charges: list[Charge] = field(default_factory=list)
    _state: Any = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if not (isinstance(self.epsilon, (int, float)) and math.isfinite(self.epsilon)):
            raise BudgetError(f"epsilon must be a finite number, got {self.epsilon!r}")
        if self.epsilon <= 0:
            raise BudgetError(f"epsilon must be > 0, got {self.epsilon!r}")
        if not 0 <= self.delta < 1:
            raise BudgetError(f"delta must be in [0, 1), got {self.delta!r}")
        inc = self._incremental
        if inc is not None:
            state = inc.start()
            for c in self.charges:
                state = inc.add(state, c)
            self._state = state

    @property
    def _incremental(self) -> IncrementalComposition | None:
        """The composition, when it offers the incremental form (duck-typed: any object with the methods)."""
        c = self.composition
        return cast(IncrementalComposition, c) if all(hasattr(c, m) for m in ("start", "add", "value")) else None

    def _total(self, extra: Charge | None = None):
        inc = self._incremental
        if inc is not None:
            state = self._state if extra is None else inc.add(self._state, extra)
            return inc.value(state, self.delta)
        charges = self.charges if extra is None else [*self.charges, extra]
        return self.composition.total(charges, self.delta)

    # -- queries -----------------------------------------------------------
    def spent(self) -> tuple[float, float]:
        """Total (ε, δ) of all charges under the ledger's composition rule."""
        eps, delta = self._total()
        return float(eps), float(delta)

    def basic_spent(self) -> tuple[float, float]:
        """Total (ε, δ) under basic composition (always reported, whatever the rule)."""
        eps, delta = BasicComposition().total(self.charges, self.delta)
        return float(eps), float(delta)

    def remaining(self) -> float:
        """ε still available under the ledger's composition rule (never negative).

        Rounded down, so that charging exactly this amount next always fits
        under basic composition.
        """
        spent, _ = self._total()
        exact = Fraction(float(self.epsilon)) - Fraction(spent)
        if exact <= 0:
            return 0.0
        value = float(exact)
        if Fraction(value) > exact:
            value = math.nextafter(value, 0.0)
        return value

    def would_fit(self, charge: Charge) -> bool:
        eps, delta = self._total(charge)
        return _fits(eps, self.epsilon) and _fits(delta, self.delta)

    # -- spending ----------------------------------------------------------
    def charge(self, charge: Charge) -> Charge:
        """Record ``charge`` if the budget allows it; otherwise raise BudgetError."""
        if charge.epsilon < 0 or charge.delta < 0 or (charge.rho is not None and charge.rho < 0):
            raise BudgetError(f"a charge cannot be negative ({charge.stage})")
        if not self.would_fit(charge):
            eps, delta = self._total(charge)
            raise BudgetError(
                f"privacy budget exceeded at stage '{charge.stage}': total would be "
                f"epsilon={float(eps):.6g}, delta={float(delta):.3g} against a budget of "
                f"epsilon={self.epsilon:.6g}, delta={self.delta:.3g}; remaining "
                f"epsilon={self.remaining():.6g}"
            )
        self.charges.append(charge)
        inc = self._incremental
        if inc is not None:
            self._state = inc.add(self._state, charge)
        return charge

    def replace_one_equivalent(self, declared: str) -> tuple[float, float]:
        """(ε, δ) of the same run between two datasets of equal size that differ in one row's value.

        ``declared`` is the neighbouring relation the charges were computed for.
        Under ``replace-one`` that is the guarantee itself.  Under
        ``add-remove`` a replaced row is two add-remove steps (remove it, add the
        new one); whether n is private (noisy, charged) or public (the release
        is ε-DP under add-remove for every fixed n, and both datasets have the
        same n), group privacy for two steps gives:

        * pure/basic: (2ε, (1 + e^ε)·δ)  (Dwork & Roth 2014, §2.3; δ = 0 stays 0);
        * zCDP: ρ-zCDP is (2²ρ)-zCDP for groups of two (Bun & Steinke 2016,
          Prop. 1.9), converted with the same δ: ε = 4ρ + 2·sqrt(4ρ·ln(1/δ)).

        An upper bound: a single counting query costs the same under both
        relations, so a mechanism-by-mechanism count could be smaller.
        """
        eps, delta = self.spent()
        if declared == "replace-one":
            return eps, delta
        if isinstance(self.composition, ZCDPComposition):
            rho, approx = self._state if self._state is not None else (0.0, 0)
            if approx > 0:  # approximate zCDP: group privacy of the (ε, δ) figure itself
                return group_of_two(eps, delta)
            return (zcdp_to_approx_dp(4.0 * rho, self.delta), delta) if rho > 0 else (0.0, 0.0)
        return group_of_two(eps, delta)

    def to_dict(self) -> dict:
        eps, delta = self.spent()
        beps, bdelta = self.basic_spent()
        return {
            "composition": self.composition.name,
            "composition_description": self.composition.description,
            "epsilon_budget": self.epsilon,
            "delta_budget": self.delta,
            "epsilon_spent": eps,
            "delta_spent": delta,
            "epsilon_spent_basic": beps,
            "delta_spent_basic": bdelta,
            "charges": [c.to_dict() for c in self.charges],
        }


def group_of_two(epsilon: float, delta: float) -> tuple[float, float]:
    """(ε, δ)-DP under add-remove gives (2ε, (1 + e^ε)·δ) for two rows (a replacement): group privacy
    (Dwork & Roth 2014, §2.3; δ = 0 stays 0)."""
    return 2.0 * epsilon, _round_up((1.0 + math.exp(epsilon)) * delta) if delta > 0 else 0.0


def _round_up(x: float) -> float:
    return math.nextafter(x, math.inf)


def _fits(value: float | Fraction, budget: float) -> bool:
    exact = value if isinstance(value, Fraction) else Fraction(float(value))
    return exact <= Fraction(float(budget))


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

    def __init__(self, epsilon: float, sensitivity: float, scales: Sequence[float]):
        self.epsilon = float(epsilon)
        self.sensitivity = float(sensitivity)
        self.reset(scales)

    def reset(self, scales: Sequence[float]) -> None:
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

    def __init__(self, epsilon: float, factor: float, patterns, scales: Sequence[float]):
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

    def reset(self, scales: Sequence[float]) -> None:
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
    (``select_fraction``) and a measurement part.  :meth:`grow` doubles the per-round ε (quadruples ρ:
    the noise deviation halves); when what is left cannot pay for two more rounds, :meth:`take` hands
    out all of it and says it is the last round, so the budget is used exactly.
    """

    def __init__(self, total: float, *, init_fraction: float, iterations: int, select_fraction: float, zcdp: bool):
        self.zcdp = zcdp
        usable = total * (1.0 - 1e-9)
        self.init_part = usable * init_fraction
        self.left = usable - self.init_part
        self.per_round = self.left / iterations
        self.select_fraction = select_fraction

    def init_share(self, count: int) -> float:
        """The part of each of ``count`` equal initial measurements."""
        return self.init_part / count

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
        self.per_round *= 4.0 if self.zcdp else 2.0
