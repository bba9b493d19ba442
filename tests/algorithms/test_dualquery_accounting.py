"""DualQuery privacy accounting (Gaboardi et al. 2014, Theorems 4.2, 4.3) and the parameter solver."""

from __future__ import annotations

import math
import re

import pytest

from dpsynth.algorithms.dualquery.accounting import (
    DualQueryComposition,
    accounting_epsilon,
    all_accountings,
    round_charges,
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
    assert comp.total(ch, 0.0) == (all_accountings(ch, 0.0)["pure"], 0.0)
