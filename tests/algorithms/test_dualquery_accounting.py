"""DualQuery privacy accounting (Gaboardi et al. 2014, Theorems 4.2, 4.3) and the parameter solver."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import pytest

from dpsynth.algorithms.dualquery.accounting import (
    DualQueryComposition,
    accounting_epsilon,
    all_accountings,
    round_charge,
    round_charges,
    round_epsilon,
    solve_parameters,
)
from dpsynth.errors import BudgetError
from dpsynth.privacy.accountant import Charge, Ledger

KDD = {"eta": 1.2, "T": 170, "s": 1750, "n": 494_021}


def test_issue_numbers_for_the_papers_kdd_setting():
    """The four accountings at eta=1.2, T=170, s=1750, n=494,021, delta=1e-3: 122, 1.86, 1.03, 0.49."""
    got = all_accountings(round_charges(**KDD), 1e-3)
    assert round(got["pure"]) == 122
    assert round(got["thm43"], 2) == 1.86
    assert round(got["advanced"], 2) == 1.03
    assert round(got["zcdp"], 2) == 0.49


def test_closed_forms_match_hand_computation():
    """Each accounting equals its formula written out by hand (relative 1e-12)."""
    eta, T, s, n, delta = 0.7, 40, 300, 10_000.0, 1e-5
    L = math.log(1 / delta)
    got = all_accountings(round_charges(T=T, s=s, eta=eta, n=n), delta)
    assert got["pure"] == pytest.approx(eta * T * (T - 1) * s / n, rel=1e-12)  # Theorem 4.2
    e1 = 2 * eta * (T - 1) / n
    thm43 = e1 * (math.sqrt(2 * s * (T - 1) * L) + s * (T - 1) * (math.exp(e1) - 1))  # Theorem 4.3
    assert got["thm43"] == pytest.approx(thm43, rel=1e-12)
    et = [2 * eta * (t - 1) / n for t in range(1, T + 1)]
    adv = math.sqrt(2 * L * sum(s * e * e for e in et)) + sum(s * e * (math.exp(e) - 1) for e in et)
    assert got["advanced"] == pytest.approx(adv, rel=1e-12)
    rho = sum(s * e * e / 8 for e in et)
    assert got["zcdp"] == pytest.approx(rho + 2 * math.sqrt(rho * L), rel=1e-12)


def test_first_round_is_free_and_pure_needs_no_delta():
    assert accounting_epsilon("pure", [0.0], [10], 0.0) == 0.0
    assert accounting_epsilon("zcdp", [0.1], [1], 0.0) == math.inf


@pytest.mark.parametrize("accounting", ["auto", "pure", "thm43", "advanced", "zcdp"])
@pytest.mark.parametrize("missing", ["T", "s", "eta", "T,s"])
def test_solver_meets_target_and_is_maximal(accounting, missing):
    """The solved value fits the budget and the next larger value (T+1, s+1, 1.001*eta) does not."""
    comp = DualQueryComposition(accounting)
    given = {"T": 100, "s": 1000, "eta": 1.2}
    for m in missing.split(","):
        given[m] = None
    eps, delta, n = 1.0, 1e-3, 494_021.0
    if accounting == "pure":
        eps = 20.0
    sol = solve_parameters(epsilon=eps, delta=delta, n=n, composition=comp, **given)
    total = comp.total(round_charges(T=sol.T, s=sol.s, eta=sol.eta, n=n), delta)[0]
    assert total <= eps
    assert sol.epsilon == total
    bigger = {"T": (sol.T + 1, sol.s, sol.eta), "s": (sol.T, sol.s + 1, sol.eta),
              "eta": (sol.T, sol.s, sol.eta * 1.001)}
    if missing in bigger:
        T, s, eta = bigger[missing]
        assert comp.total(round_charges(T=T, s=s, eta=eta, n=n), delta)[0] > eps


def test_solver_counts_prior_charges():
    comp = DualQueryComposition("zcdp")
    prior = [Charge(stage="row-count", mechanism="discrete-laplace", sensitivity=1, epsilon=0.1)]
    a = solve_parameters(epsilon=1.0, delta=1e-3, n=494_021, composition=comp, s=1750, eta=1.2)
    b = solve_parameters(epsilon=1.0, delta=1e-3, n=494_021, composition=comp, prior=prior, s=1750, eta=1.2)
    assert b.T < a.T and b.epsilon <= 1.0


def test_infeasible_budget_is_refused_with_a_clear_message():
    msg = (
        "DualQuery cannot meet privacy.epsilon=0.01 (delta=0.001, n=1000) under accounting 'zcdp' with "
        "s=5000, eta=2: even T >= 2 costs more; lower algorithm.params.T, s or eta, raise the budget, "
        "or prefer MWEM for small n"
    )
    with pytest.raises(BudgetError, match=re.escape(msg)):
        solve_parameters(epsilon=0.01, delta=1e-3, n=1000, composition=DualQueryComposition("zcdp"), s=5000, eta=2.0)


def test_all_three_given_and_over_budget_raises():
    with pytest.raises(BudgetError):
        solve_parameters(epsilon=1.0, delta=1e-3, composition=DualQueryComposition("thm43"), **KDD)
    ok = solve_parameters(epsilon=1.0, delta=1e-3, composition=DualQueryComposition("advanced"), **{**KDD, "T": 160})
    assert ok.solved == "none"


def test_ledger_uses_the_composition_and_refuses_overspend():
    """Charging round by round under zcdp spends exactly the solved total; one more round is refused."""
    comp = DualQueryComposition("zcdp")
    sol = solve_parameters(epsilon=0.5, delta=1e-3, n=494_021, composition=comp, s=1750, eta=1.2)
    ledger = Ledger(0.5, 1e-3, comp)
    charges = round_charges(T=sol.T + 1, s=sol.s, eta=sol.eta, n=494_021)
    for c in charges[:-1]:
        ledger.charge(c)
    assert ledger.spent()[0] == pytest.approx(sol.epsilon, rel=1e-15)
    assert ledger.spent()[1] == 1e-3
    with pytest.raises(BudgetError):
        ledger.charge(charges[-1])
    assert ledger.basic_spent()[0] == pytest.approx(sol.eta * sol.T * (sol.T - 1) * sol.s / 494_021, rel=1e-9)


def test_auto_is_the_minimum_and_names_it():
    comp = DualQueryComposition("auto")
    ch = round_charges(**KDD)
    assert comp.total(ch, 1e-3)[0] == min(all_accountings(ch, 1e-3).values())
    assert comp.chosen(ch, 1e-3) == "zcdp"
    # pure: the exact sum of the (rounded-up) charges, which may exceed the float formula by an ulp
    pure, pure_delta = comp.total(ch, 0.0)
    assert pure_delta == 0.0 and all_accountings(ch, 0.0)["pure"] <= pure == pytest.approx(
        all_accountings(ch, 0.0)["pure"], rel=1e-15)


# ------------------------------------------------------------------ alpha/beta (Algorithm 2)
def test_algorithm2_parameters_by_hand():
    """T = ceil(16 ln|Q|/a^2), eta = a/4, s = ceil(48 ln(2|X|T/b)/a^2); |Q| counts negations.

    NLTCS, all 4,480 3-way cells (|Q| = 8,960), |X| = 2^16, alpha = 0.5, beta = 0.05:
    16 ln 8960 / 0.25 = 582.43 -> T = 583; 48 (ln 2 + 16 ln 2 + ln 583 - ln 0.05) / 0.25 = 4,060.3 -> s = 4,061.
    """
    from dpsynth.algorithms.dualquery.accounting import algorithm2_parameters

    T, s, eta = algorithm2_parameters(alpha=0.5, beta=0.05, n_queries=4480, log_universe=16 * math.log(2))
    assert (T, s, eta) == (583, 4061, 0.125)
    assert 16 * math.log(8960) / 0.25 == pytest.approx(582.43, abs=0.01)
    assert 48 * math.log(2 * 2**16 * 583 / 0.05) / 0.25 == pytest.approx(4060.3, abs=0.1)


@pytest.mark.parametrize(("alpha", "beta", "q", "log_x"), [(0.5, 0.05, 4480, 16 * math.log(2)),
                                                            (0.1, 0.01, 100_000, 42.7), (0.9, 0.5, 1, 0.0)])
def test_algorithm2_parameters_meet_theorem_4_6(alpha, beta, q, log_x):
    """With Algorithm 2's values the three terms of the Theorem 4.6 bound are a/4 (step), a/4 (MW regret) and
    a/2 (sampling, twice Lemma 4.5's a/4), so theorem_alpha <= alpha; rounding T, s up costs < 1%."""
    from dpsynth.algorithms.dualquery.accounting import algorithm2_parameters, theorem_alpha

    T, s, eta = algorithm2_parameters(alpha=alpha, beta=beta, n_queries=q, log_universe=log_x)
    bound = theorem_alpha(T=T, s=s, eta=eta, n_queries=q, log_universe=log_x, beta=beta)
    assert bound <= alpha
    assert bound >= alpha * (1 - 0.01) if T > 100 else bound > 0.8 * alpha


def test_alpha_beta_checked_against_the_budget():
    from dpsynth.algorithms.dualquery.accounting import algorithm2_parameters

    comp = DualQueryComposition("zcdp")
    acc = (0.5, 0.05, 4480, 16 * math.log(2))
    T, s, eta = algorithm2_parameters(alpha=0.5, beta=0.05, n_queries=4480, log_universe=16 * math.log(2))
    cost = all_accountings(round_charges(T=T, s=s, eta=eta, n=1e7), 1e-3)["zcdp"]
    sol = solve_parameters(epsilon=1.0, delta=1e-3, n=1e7, composition=comp, accuracy=acc)
    assert (sol.T, sol.s, sol.eta, sol.solved) == (T, s, eta, "alpha,beta")
    assert sol.epsilon == pytest.approx(cost, rel=1e-12)
    with pytest.raises(BudgetError, match=re.escape(
            "DualQuery: alpha=0.5, beta=0.05 give T=583, s=4061, eta=0.125 (Algorithm 2), which cost "
            "epsilon=15.63 under accounting 'zcdp' (delta=0.001, n=21574), more than privacy.epsilon=1: raise alpha "
            "or the budget, or give T, s and eta instead")):
        solve_parameters(epsilon=1.0, delta=1e-3, n=21574, composition=comp, accuracy=acc)
    from dpsynth.errors import ConfigError

    with pytest.raises(ConfigError, match=re.escape(
            "algorithm.params.alpha: alpha=0.5, beta=0.05 give T=583, s=4061, eta=0.125 (Algorithm 2) for 8960 "
            "queries with negations; T is more than max_T=500: raise alpha or max_T, or give T, s and eta instead")):
        solve_parameters(epsilon=1e9, delta=1e-3, n=21574, composition=comp, accuracy=acc, max_T=500)


def test_round_costs_are_rounded_up():
    """ε'ₜ = 2η(t−1)/n and the round's s·ε'ₜ are never below their exact values for the doubles η and n
    (the sampler draws with η exactly; e.g. t = 2, η = 1.2, n = 494,021 rounds down to nearest)."""
    for t, eta, n in [(2, 1.2, 494_021.0), (6, 1.2, 30.0), (8, 0.1, 494_021.0), (17, 1 / 3, 21_574.0)]:
        exact = 2 * Fraction(eta) * (t - 1) / Fraction(n)
        e = round_epsilon(t, eta, n)
        assert exact <= Fraction(e) and Fraction(math.nextafter(e, 0.0)) < exact
        c = round_charge(t, s=7, eta=eta, n=n)
        assert Fraction(c.epsilon) >= 7 * exact and Fraction(c.rho) >= 7 * exact**2 / 8
