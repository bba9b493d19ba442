"""The privacy ledger: every mechanism call is recorded here, and checked *before* it runs.

The ledger knows nothing about pandas, files or the command line.  It holds the
requested budget (ε, δ), a list of :class:`Charge` records and a
:class:`Composition` rule that turns the charges into a total (ε, δ).  A
charge that would push the total over the budget raises :class:`BudgetError`
and is not recorded, so a mechanism never draws noise it cannot pay for.

Totals are summed exactly: each float is converted to a :class:`fractions.Fraction`
(which represents a double exactly), so rounding can never hide an overspend.
Use :func:`split_budget` to divide a budget into float parts whose exact sum
does not exceed the whole.  Budgets planned item by item or round by round
before they are charged (iReduct's scales, MWEM's adaptive rounds) are in
:mod:`dpsynth.privacy.allocation`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any, Protocol, cast

from dpsynth.errors import BudgetError

__all__ = [
    "BasicComposition",
    "Charge",
    "Composition",
    "Ledger",
    "ZCDPComposition",
    "approx_delta_spent",
    "approx_dp_to_zcdp",
    "approx_part",
    "bounded_range_epsilon",
    "budget_after",
    "bun_steinke_epsilon",
    "exact_sum",
    "group_of_two",
    "rdp_epsilon",
    "recorded_charge",
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

    Rounded down (exactly), so that the two phases' totals always add up to at most (ε, δ); pass ``spent`` as
    :meth:`Ledger.spent_exact` gives it (a float total rounded to nearest may be under the exact one).  Raises
    :class:`BudgetError` when nothing (ε ≤ 0) would be left.
    """
    parts = []
    for total, used in ((epsilon, spent[0]), (delta, spent[1])):
        exact = Fraction(float(total)) - (used if isinstance(used, Fraction) else Fraction(float(used)))
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


@functools.lru_cache(maxsize=4096)
def zcdp_to_approx_dp(rho: float, delta: float) -> float:
    """ε of (ε, δ)-DP implied by ρ-zCDP: the smaller of two valid conversions, :func:`bun_steinke_epsilon`
    and :func:`rdp_epsilon` (Canonne, Kamath & Steinke 2020), which is never larger and at δ = 10⁻⁹, ε = 1 lets
    a release spend 27 % more ρ (the conversion MST and AIM use)."""
    if rho <= 0:
        return 0.0
    if not 0 < delta < 1:
        return math.inf
    return max(0.0, min(bun_steinke_epsilon(rho, delta), rdp_epsilon(rho, delta)))  # (ε < 0, δ) is (0, δ)


def bun_steinke_epsilon(rho: float, delta: float) -> float:
    """ε = ρ + 2·sqrt(ρ·ln(1/δ)) (Bun & Steinke 2016, Prop. 1.3), for ρ > 0 and 0 < δ < 1."""
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def _rdp_bound(alpha: float, rho: float, log_inv_delta: float) -> float:
    """ε(α) = αρ + (ln(1/δ) + (α − 1)·ln(1 − 1/α) − ln α) / (α − 1): the ε at which ρ-zCDP (Rényi divergence
    at most αρ of order α) is (ε, δ)-DP, for every α > 1 (Canonne, Kamath & Steinke 2020, Prop. 12 solved for
    ε: δ = exp((α − 1)(αρ − ε))·(1 − 1/α)^α / (α − 1)).  Rounded up by 16 ulps of the sum of the terms' magnitudes
    (more than the float error of the few operations, whatever cancels)."""
    shrink = (alpha - 1.0) * math.log1p(-1.0 / alpha)
    terms = (log_inv_delta, shrink, -math.log(alpha))
    value = alpha * rho + math.fsum(terms) / (alpha - 1.0)
    magnitude = alpha * rho + sum(abs(t) for t in terms) / (alpha - 1.0)
    return value + 16.0 * 2.0**-52 * magnitude


def rdp_epsilon(rho: float, delta: float) -> float:
    """:func:`_rdp_bound` at a numerically chosen order α (for ρ > 0, 0 < δ < 1).

    Every α > 1 gives a valid ε, so the search only decides how tight it is, never whether it is sound.  The
    bound's derivative in α is ρ − ln(1/(αδ))/(α − 1)², whose second term falls with α: bisection on its sign
    finds the minimiser (between 1 and 1/δ, where the second term is ≤ 0)."""
    log_inv = math.log(1.0 / delta)
    lo, hi = 1.0, 2.0
    while rho <= (log_inv - math.log(hi)) / (hi - 1.0) ** 2:  # until the derivative is positive at hi
        lo, hi = hi, 2.0 * hi
    for _ in range(200):  # bisection on the derivative's sign (α between lo and hi)
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if rho > (log_inv - math.log(mid)) / (mid - 1.0) ** 2:
            hi = mid
        else:
            lo = mid
    return _rdp_bound(hi, rho, log_inv)


@functools.lru_cache(maxsize=4096)
def approx_dp_to_zcdp(epsilon: float, delta: float) -> float:
    """Largest ρ (to a relative 10⁻¹³) with :func:`zcdp_to_approx_dp` (ρ, δ) ≤ ε: the ρ a zCDP algorithm may spend
    under an (ε, δ) budget.  Bisection from the Bun–Steinke inverse (ρ + 2·sqrt(ρ·ln(1/δ)) = ε), which the
    smaller conversion always allows; the conversion grows with ρ."""
    L = math.log(1.0 / delta)
    lo = (math.sqrt(L + epsilon) - math.sqrt(L)) ** 2
    if not (lo > 0 and math.isfinite(lo) and 0 < delta < 1):  # nothing to search (the closed form's answer)
        return lo if lo > 0 else 0.0
    while zcdp_to_approx_dp(lo, delta) > epsilon:  # float rounding of the closed form: step down
        lo *= 1.0 - 1e-12
    hi = 2.0 * lo
    while zcdp_to_approx_dp(hi, delta) <= epsilon:
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-13 * lo:  # loop of about 45 halvings
        mid = 0.5 * (lo + hi)
        if zcdp_to_approx_dp(mid, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo  # the largest ρ found whose ε fits (hi does not)


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
        "as eps^2/2), converted to (eps, delta) by the smaller of eps = rho + 2*sqrt(rho*ln(1/delta)) "
        "(Bun & Steinke 2016) and the Renyi conversion of Canonne, Kamath & Steinke 2020 (Prop. 12)"
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
        """δ-approximate ρ-zCDP with approximate δ_a is (:func:`zcdp_to_approx_dp` (ρ, δ − δ_a), δ)-DP: the
        conversion uses what the approximate charges left of the budget's δ (Bun & Steinke 2016, Def. 1.8)."""
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

    def spent_exact(self) -> tuple:
        """Total (ε, δ) unrounded (exact fractions under basic composition), for :func:`budget_after`."""
        return self._total()

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
