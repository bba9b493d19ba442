"""Ledger completeness and exact totals for every algorithm, end to end.

* Every draw is in the ledger: each call of a ``*_mechanism`` (seen through
  ``dpsynth.privacy.mechanisms.recorder``) has its own ledger entry, in order, with
  the same stage, mechanism, sensitivity, ε and number of values; iReduct's
  charges cover every cell of its NoiseDown chains (``laplace-chain`` taps); DualQuery's per-round charges count the
  samples it drew.  No entry is left without a draw.
* Totals computed exactly (``fractions.Fraction`` of each float) never exceed
  the requested ε and δ, and under basic composition the report's
  ``epsilon_spent`` is exactly the float of that sum.
Deterministic (fixed seeds): no false failures.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

import dpsynth
from dpsynth.algorithms import algorithm_names, get_algorithm
from dpsynth.config import parse_config
from dpsynth.privacy import mechanisms
from dpsynth.privacy.accountant import zcdp_to_approx_dp
from tests.privacy.audit import SECTION_RUNS, section_variants, tiny_neighbours, tiny_raw_config, with_section

VARIANTS = [
    (name, raw, 1e-3 if get_algorithm(name).needs_delta(raw) else 0.0)
    for name in algorithm_names()
    for raw in get_algorithm(name).audit_params
]
"""Every parameter variant each algorithm declares (``AlgorithmSpec.audit_params``), with δ when it needs one."""

AWKWARD_EPSILONS = [0.1 + 0.2, 1 / 3, 0.7, 2.9999999999999996, 13.0]
"""Budgets whose parts do not add up exactly in floating point."""


class _Draws:
    """Every mechanism call, plus iReduct's cells and DualQuery's samples, in order."""

    def __init__(self):
        self.calls: list[dict] = []

    def __call__(self, mechanism, true, output, info):
        count = 1 if mechanism == "exponential" else int(np.size(true))  # one choice among the scores
        self.calls.append({"mechanism": mechanism, "count": count, **info})


def _run(monkeypatch, raw, table, seed=3):
    draws = _Draws()
    monkeypatch.setattr(mechanisms, "recorder", draws)
    res = dpsynth.release(table, parse_config(raw), rng=np.random.default_rng(seed))
    return res.report, draws.calls


def _check_draws_match_ledger(ledger: list[dict], calls: list[dict]) -> None:
    chain = ("laplace-chain", "noise-down")  # iReduct's uncharged chain draws, charged at their final scales
    mech = [c for c in calls if c["mechanism"] not in (*chain, "exponential-samples")]
    direct = [e for e in ledger if e["mechanism"] not in ("laplace+noisedown",) and e["stage"] != "dualquery"]
    assert len(direct) == len(mech)
    for entry, call in zip(direct, mech):
        assert entry["stage"] == call["stage"] and entry["mechanism"] == call["mechanism"]
        assert entry["sensitivity"] == call["sensitivity"] and entry["count"] == call["count"]
        if call["mechanism"] in ("gaussian", "discrete-gaussian"):
            assert entry["rho"] == call["rho"]
        else:
            assert entry["epsilon"] == call["epsilon"]
    starts = [c for c in calls if c["mechanism"] == "laplace-chain"]
    ir_entries = [e for e in ledger if e["mechanism"] == "laplace+noisedown"]
    # every cell of every chain is covered by a charge at its final scale, and no charge lacks a chain
    assert sum(e["count"] for e in ir_entries) == sum(c["count"] for c in starts)
    assert bool(ir_entries) == bool(starts)
    steps = [c for c in calls if c["mechanism"] == "noise-down"]
    assert not steps or starts and calls.index(starts[0]) < calls.index(steps[0])
    dq_calls = [c for c in calls if c["mechanism"] == "exponential-samples"]
    dq_entries = [e for e in ledger if e["stage"] == "dualquery"]
    assert [e["count"] for e in dq_entries] == [c["count"] for c in dq_calls]


def _check_totals(report: dict, epsilon: float, delta: float) -> None:
    p = report["privacy"]
    ledger = report["ledger"]
    exact_eps = sum((Fraction(e["epsilon"]) for e in ledger), Fraction(0))
    exact_delta = sum((Fraction(e["delta"]) for e in ledger), Fraction(0))
    assert p["composition"]["epsilon_spent_basic"] == float(exact_eps)
    theorem = p["composition"]["theorem"]
    if theorem == "basic":
        assert exact_eps <= Fraction(epsilon) and exact_delta <= Fraction(delta)
        assert p["epsilon_spent"] == float(exact_eps) and p["delta_spent"] == float(exact_delta)
    elif theorem == "zcdp":
        rho = math.fsum(e["rho"] if e["rho"] is not None else e["epsilon"] ** 2 / 2 for e in ledger)
        assert p["epsilon_spent"] == pytest.approx(zcdp_to_approx_dp(rho, delta), rel=1e-12)
    if theorem.startswith("dualquery") and report["algorithm"]["details"]["accounting_used"] == "pure":
        assert exact_eps <= Fraction(epsilon)  # pure DualQuery is basic composition of the rounds
    assert Fraction(p["epsilon_spent"]) <= Fraction(epsilon)
    assert Fraction(p["delta_spent"]) <= Fraction(delta)


@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
@pytest.mark.parametrize(("algorithm", "params", "delta"), VARIANTS)
def test_every_draw_is_charged_and_totals_are_exact(algorithm, params, delta, neighbouring, monkeypatch):
    raw = tiny_raw_config(algorithm, neighbouring)
    raw["algorithm"]["params"] = {**raw["algorithm"]["params"], **params}
    raw["privacy"]["delta"] = delta
    table, _ = tiny_neighbours(neighbouring, n=60)
    report, calls = _run(monkeypatch, raw, table)
    _check_draws_match_ledger(report["ledger"], calls)
    _check_totals(report, raw["privacy"]["epsilon"], delta)
    # the budget is used, not wasted (iResamp and iReduct with coarse steps stop when the next draw would not fit)
    floor = {"iresamp": 0.5, "ireduct": 0.9}.get(algorithm, 0.99)
    assert report["privacy"]["epsilon_spent"] >= floor * raw["privacy"]["epsilon"]


@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
@pytest.mark.parametrize(("algorithm", "section"), section_variants())
def test_workload_sections_are_charged_exactly(algorithm, section, neighbouring, monkeypatch):
    """The optional workload sections (tests.privacy.audit.TINY_WORKLOADS), e.g. MWEM's linear queries."""
    raw = tiny_raw_config(algorithm, neighbouring)
    raw["algorithm"]["params"] = {**raw["algorithm"]["params"], **SECTION_RUNS[(algorithm, section)]["params"]}
    raw["workload"] = with_section(raw["workload"], section)
    table, _ = tiny_neighbours(neighbouring, n=60)
    report, calls = _run(monkeypatch, raw, table)
    _check_draws_match_ledger(report["ledger"], calls)
    _check_totals(report, raw["privacy"]["epsilon"], 0.0)
    assert report["privacy"]["epsilon_spent"] >= 0.99 * raw["privacy"]["epsilon"]
    assert {c["mechanism"] for c in calls} >= SECTION_RUNS[(algorithm, section)]["kinds"]


@pytest.mark.parametrize("neighbouring", ["replace-one", "add-remove"])
def test_ireduct_queries_with_pick_max_rounds_charge_once(neighbouring, monkeypatch):
    """workload.queries with pick: max and batched rounds: one charge covering every query's chain."""
    raw = tiny_raw_config("ireduct", neighbouring)
    raw["algorithm"]["params"] = {**raw["algorithm"]["params"], "lambda_delta": 0.5, "pick": "max", "refresh": 0.3}
    raw["workload"] = with_section(raw["workload"], "queries")
    report, calls = _run(monkeypatch, raw, tiny_neighbours(neighbouring, n=60)[0])
    _check_draws_match_ledger(report["ledger"], calls)
    _check_totals(report, raw["privacy"]["epsilon"], 0.0)
    assert [e["count"] for e in report["ledger"] if e["mechanism"] == "laplace+noisedown"] == [5]
    assert report["privacy"]["epsilon_spent"] >= 0.9 * raw["privacy"]["epsilon"]


@pytest.mark.parametrize("epsilon", AWKWARD_EPSILONS)
@pytest.mark.parametrize("algorithm", algorithm_names())
def test_awkward_budgets_never_overspend(algorithm, epsilon, monkeypatch):
    """Budgets like 0.1 + 0.2 split into parts whose float sum rounds; the exact sum must still fit."""
    raw = tiny_raw_config(algorithm, "add-remove", epsilon=epsilon, n_epsilon=epsilon / 7)
    raw["algorithm"]["params"] = {k: v for k, v in raw["algorithm"]["params"].items() if k != "lambda_max"}
    if algorithm == "ireduct":
        raw["algorithm"]["params"]["lambda_delta"] = 5.0
    if algorithm == "dualquery":
        raw["algorithm"]["params"] = {**raw["algorithm"]["params"], "T": 3, "s": 7}
    table, _ = tiny_neighbours("add-remove", n=60)
    report, calls = _run(monkeypatch, raw, table)
    _check_draws_match_ledger(report["ledger"], calls)
    _check_totals(report, epsilon, 0.0)
