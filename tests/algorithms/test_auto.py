"""``algorithm: auto``: the choice depends on public facts only and is reported."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpsynth
from dpsynth.algorithms import auto
from dpsynth.config import parse_config
from dpsynth.privacy.accountant import BasicComposition, ZCDPComposition, approx_dp_to_zcdp


def test_rules():
    two = [(0, 1), (1, 2)]
    assert auto.choose(workload=two, delta=1e-6, n=1000, epsilon=1.0, sizes=(2, 2, 2))[:2] == (
        "mwem:3-way", {**auto.MWEM_PARAMS, "anneal": auto.ZCDP_ANNEAL, "batch": auto.ZCDP_BATCH})
    assert auto.choose(workload=two, delta=0.0, n=1000, epsilon=1.0, sizes=(2, 2, 2))[1] == auto.MWEM_PARAMS
    assert auto.choose(workload=[(0, 1, 2)], delta=0.0, n=1000, epsilon=1.0, sizes=(2, 2, 2))[0] == "mwem"
    assert auto.choose(workload=[(0, 1)], delta=0.0, n=1000, epsilon=1.0, sizes=(2, 2))[0] == "mwem"
    assert auto.choose(workload=[(0,), (1,)], delta=0.0, n=1000, epsilon=1.0, sizes=(2, 2))[0] == "laplace"
    assert auto.choose(workload=[], delta=0.0, n=1000, epsilon=1.0, sizes=(2, 2))[0] == "laplace"
    name, _, why = auto.choose(workload=two, delta=0.0, n=1000, epsilon=1.0, sizes=(2, 2, 2))
    assert name == "mwem:3-way" and why[0] == ("n = 1000, epsilon = 1, delta = 0, 3 columns, "
                                         "2 workload marginals of up to 2 columns")


def test_mwem_model_bound_leaves_room_for_a_wide_domain():
    """The 80,000-cell bound of rules 1 and 3 grows to twice the 1-way model's cells (at most mwem's 200,000)."""
    assert auto.MWEM_PARAMS["model_cells"] == 80_000
    assert auto.mwem_params((2, 2, 2))["model_cells"] == 80_000
    assert auto.mwem_params((500,) * 40)["model_cells"] == 80_000
    assert auto.mwem_params((1500,) * 40)["model_cells"] == 120_000
    assert auto.mwem_params((5000,) * 40)["model_cells"] == 200_000
    wide = auto.choose(workload=[(0, 1, 2)], delta=1e-6, n=10**5, epsilon=1.0, sizes=(1500,) * 40)[1]
    assert wide["model_cells"] == 120_000


def test_low_signal_rule():
    """n·ε < 5·d²: only the 1-way marginals (d = 3 columns: threshold 45)."""
    two = [(0, 1), (1, 2)]
    assert auto.choose(workload=two, delta=0.0, n=40, epsilon=1.0, sizes=(2, 2, 2))[0] == "laplace:1-way"
    assert auto.choose(workload=two, delta=1e-6, n=40, epsilon=1.0, sizes=(2, 2, 2))[0] == "mwem:1-way"
    assert auto.choose(workload=two, delta=0.0, n=46, epsilon=1.0, sizes=(2, 2, 2))[0] == "mwem:3-way"


def test_pair_signal_rule_on_a_wide_table():
    """Rule 0a: n / (mean pair cells · σ of one of d measurements) ≥ 3 with δ > 0 runs mwem on the pairs, d rounds."""
    sizes = (4,) * 50  # mean pair cells 16; d = 50
    L = math.log(1e9)
    rho = (math.sqrt(L + 1.0) - math.sqrt(L)) ** 2  # the Bun–Steinke ρ the threshold was measured on
    assert rho < approx_dp_to_zcdp(1.0, 1e-9)
    want = 10_000 / (16 * np.sqrt(50 / (2 * rho)))
    assert auto.pair_signal(n=10_000, epsilon=1.0, delta=1e-9, sizes=sizes, columns=range(50)) == pytest.approx(want)
    assert auto.pair_signal(n=10_000, epsilon=1.0, delta=0.0, sizes=sizes, columns=range(50)) == 0.0
    three = [tuple(range(i, i + 3)) for i in range(48)]
    name, raw, why = auto.choose(workload=three, delta=1e-9, n=10_000, epsilon=1.0, sizes=sizes)
    assert want >= auto.PAIR_SIGNAL and name == "mwem:2-way" and raw["iterations"] == 50 and f"= {want:.1f} >= 3" in why[-1]
    assert auto.choose(workload=three, delta=0.0, n=10_000, epsilon=1.0, sizes=sizes)[0] == "laplace:1-way"
    n_low = int(auto.PAIR_SIGNAL * 16 * np.sqrt(50 / (2 * rho))) - 1  # just under the threshold
    assert auto.choose(workload=three, delta=1e-9, n=n_low, epsilon=1.0, sizes=sizes)[0] == "mwem:1-way"


def test_pair_rule_release_measures_pairs_only():
    """12 binary columns, 2,000 rows, ε = 0.3, δ = 1e-6: n·ε = 600 < 5·d² = 720 and the pair signal is 8.2, so
    auto runs mwem on the pairs: every measurement holds at most 2 columns, and the report says why."""
    import pandas as pd

    rng = np.random.default_rng(1)
    base = rng.integers(0, 2, size=2000)
    table = pd.DataFrame({f"c{i}": np.where(rng.random(2000) < 0.8, base, 1 - base) for i in range(12)})
    raw = {"schema": {"columns": {c: {"type": "categorical", "categories": [0, 1]} for c in table.columns}},
           "privacy": {"epsilon": 0.3, "delta": 1e-6}, "algorithm": {"name": "auto"},
           "workload": {"marginals": {"k": 2}}}
    res = dpsynth.release(table, parse_config(raw), rng=np.random.default_rng(0))
    details = res.report["algorithm"]["details"]["auto"]
    assert details["chosen"] == "mwem:2-way" and "= 8.2 >= 3" in details["why"][-1]
    sizes = {len(c["measured"].split(",")) for c in res.report["ledger"] if c["stage"].endswith("measure")}
    assert sizes == {2}  # the rounds measure pairs (the 1-way marginals come first, in stage mwem-init)


def test_widened_workload_holds_every_pair_and_only_workload_columns():
    """Triples = a workload pair + another workload column; every pair lies in one (d ≥ 3)."""
    assert auto.widened([(0, 1), (1, 2)]) == ((0, 1, 2),)
    assert auto.widened([(0, 1), (2, 3)]) == ((0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3))
    four = [(a, b) for a in range(4) for b in range(a + 1, 4)]
    got = auto.widened(four + [(5,)])
    assert len(got) == 4 + 6  # C(4,3) triples of the pair columns, and each of the 6 pairs with column 5
    assert all(any(set(p) <= set(t) for t in got) for p in four)
    assert auto.widened([(3, 1), (1, 0)]) == ((0, 1, 3),)


def test_low_signal_release_measures_one_way(tiny_raw_config, tiny_table):
    raw = dict(tiny_raw_config, algorithm={"name": "auto", "params": {}}, privacy={"epsilon": 0.05})
    res = dpsynth.release(tiny_table, parse_config(raw), rng=np.random.default_rng(0))
    assert res.report["algorithm"]["details"]["auto"]["chosen"] == "laplace:1-way"
    assert {len(c["measured"].split(",")) for c in res.report["ledger"] if c["stage"] == "measure"} == {1}


def test_composition_from_delta_alone():
    P = type("P", (), {})
    p = P()
    p.delta = 0.0
    assert isinstance(auto.composition(auto.Params(), p), BasicComposition)
    p.delta = 1e-6
    assert isinstance(auto.composition(auto.Params(), p), ZCDPComposition)


def test_release_reports_the_choice(tiny_raw_config, tiny_table):
    raw = dict(tiny_raw_config, algorithm={"name": "auto", "params": {}})
    res = dpsynth.release(tiny_table, parse_config(raw), rng=np.random.default_rng(0))
    chosen = res.report["algorithm"]["details"]["auto"]
    assert chosen["chosen"] == "mwem:3-way"
    # the chosen algorithm's parameters as it resolved them (every field; delta = 0: pure accounting)
    assert {k: chosen["params"][k] for k in ("variant", "sampling", "accounting", "iterations", "model_cells",
                                             "round_iterations", "anneal")} == {
        "variant": "pgm", "sampling": "systematic", "accounting": "pure", "iterations": 20,
        "model_cells": auto.MWEM_PARAMS["model_cells"], "round_iterations": auto.MWEM_PARAMS["round_iterations"],
        "anneal": 2.0}
    assert res.report["privacy"]["epsilon_spent"] <= 1.0


def test_rich_signal_rule_chooses_aim():
    """δ > 0 and n·ε ≥ 500 × the mean cells of the (widened) workload marginals: aim (rule 1a); the same
    workload with δ = 0, or with fewer rows per cell, keeps mwem."""
    two = [(0, 1), (1, 2)]  # widened to (0, 1, 2): 8 cells
    assert auto.cells_per_marginal(two, (2, 2, 2)) == 8.0
    assert auto.cells_per_marginal([(0, 1), (1,)], (2, 3, 5)) == pytest.approx((6 + 3) / 2)  # 2 columns: not widened
    assert auto.choose(workload=two, delta=1e-6, n=4000, epsilon=1.0, sizes=(2, 2, 2))[:2] == (
        "aim:3-way", auto.AIM_PARAMS)
    assert auto.choose(workload=two, delta=1e-6, n=3999, epsilon=1.0, sizes=(2, 2, 2))[0] == "mwem:3-way"
    assert auto.choose(workload=two, delta=0.0, n=4000, epsilon=1.0, sizes=(2, 2, 2))[0] == "mwem:3-way"
    assert auto.choose(workload=[(0, 1, 2)], delta=1e-6, n=4000, epsilon=1.0, sizes=(2, 2, 2))[0] == "aim"
    assert auto.choose(workload=[(0,), (1,)], delta=1e-6, n=10**6, epsilon=1.0, sizes=(2, 2))[0] == "mwem"


def test_release_with_delta_runs_aim(tiny_raw_config, tiny_table):
    """δ > 0 and a rich signal (ε = 200 on the tiny table): aim under zCDP, its resolved parameters reported."""
    raw = dict(tiny_raw_config, algorithm={"name": "auto", "params": {}},
               privacy={**tiny_raw_config["privacy"], "epsilon": 200.0, "delta": 1e-6})
    res = dpsynth.release(tiny_table, parse_config(raw), rng=np.random.default_rng(0))
    chosen = res.report["algorithm"]["details"]["auto"]
    assert chosen["chosen"].startswith("aim")
    assert chosen["params"]["accounting"] == "zcdp"
    assert chosen["params"]["rounds_per_column"] == auto.AIM_PARAMS["rounds_per_column"]
    assert {c["stage"] for c in res.report["ledger"]} >= {"aim-init", "aim-select", "aim-measure"}
    assert res.report["privacy"]["epsilon_spent"] <= 200.0


def test_zcdp_release_anneals_by_sqrt2(tiny_raw_config, tiny_table):
    """Rule 1 (δ > 0, mwem): the reported resolved parameters hold ``anneal`` √2 (ρ × 2 per increase)."""
    raw = dict(tiny_raw_config, algorithm={"name": "auto", "params": {}},
               privacy={**tiny_raw_config["privacy"], "epsilon": 1.0, "delta": 1e-6})
    res = dpsynth.release(tiny_table, parse_config(raw), rng=np.random.default_rng(0))
    chosen = res.report["algorithm"]["details"]["auto"]
    assert chosen["chosen"].startswith("mwem")
    assert chosen["params"]["accounting"] == "zcdp" and chosen["params"]["anneal"] == auto.ZCDP_ANNEAL


def _ctx(rows: int, n: float, delta: float):
    from dpsynth.algorithms.base import AlgorithmContext
    from dpsynth.data.counts import ArrayCounts
    from dpsynth.data.schema import CategoricalColumn, Domain, IntegerColumn
    from dpsynth.privacy import Neighbouring
    from dpsynth.privacy.accountant import Ledger

    domain = Domain((CategoricalColumn("a", ("x", "y", "z")), IntegerColumn("b", 1, 4), CategoricalColumn("c", (0, 1))))
    rng = np.random.default_rng(3)
    codes = np.stack([rng.integers(0, s, rows) for s in domain.sizes], axis=1)
    comp = ZCDPComposition() if delta > 0 else BasicComposition()
    return AlgorithmContext(domain=domain, counts=ArrayCounts(codes, domain), ledger=Ledger(1.0, delta, comp),
                            neighbouring=Neighbouring.ADD_REMOVE, n=n, rows=rows, workload=((0, 1, 2),))


@pytest.mark.parametrize("rows, n, anneal", [(1000, 100.0, False), (100, 1000.0, True)])
def test_anneal_rule_reads_the_public_n_only(rows, n, anneal):
    """The anneal rule (δ > 0, n·ε per cell ≥ ANNEAL_SIGNAL; one 24-cell marginal, ε = 1: threshold n = 240) reads
    ``ctx.n`` (public, or the noisy count already charged), never the true row count: a table of 1,000 rows whose
    public n is 100 does not anneal by √2, one of 100 rows whose public n is 1,000 does.  δ = 0 never does."""
    raw = auto.chosen(_ctx(rows, n, 1e-6), auto.Params())[4]
    assert ("anneal" in raw) is anneal and raw.get("anneal", auto.ZCDP_ANNEAL) == auto.ZCDP_ANNEAL
    assert "anneal" not in auto.chosen(_ctx(rows, n, 0.0), auto.Params())[4]


def test_batch_rule_under_zcdp_only():
    """δ > 0 (zCDP): ``batch`` :data:`~dpsynth.algorithms.auto.ZCDP_BATCH` under rule 1 whatever the signal and
    under rule 0a (mwem on the pairs); δ = 0 (rule 3, pure ε-DP: measured worse): one marginal per round."""
    assert auto.mwem_params((2, 2, 2), delta=1e-6)["batch"] == auto.ZCDP_BATCH == 2
    assert "batch" not in auto.mwem_params((2, 2, 2))
    low = auto.choose(workload=[(0, 1, 2)], delta=1e-6, n=50, epsilon=1.0, sizes=(10, 10, 10))[1]
    assert low["batch"] == auto.ZCDP_BATCH and "anneal" not in low
    assert "batch" not in auto.choose(workload=[(0, 1, 2)], delta=0.0, n=50, epsilon=1.0, sizes=(10, 10, 10))[1]


def test_init_fraction_rule():
    """Rule 1's ``init_fraction`` (:data:`~dpsynth.algorithms.auto.INIT_SIGNAL`): 0.1 on a large table or on binary
    columns, INIT_SIGNAL / v − 0.1 on a small table of many-valued columns, never above INIT_MOST, and rising as n
    falls."""
    rho = approx_dp_to_zcdp(1.0, 1e-6)
    assert auto.init_fraction(n=100_000, rho=rho, sizes=[10] * 8) == 0.1
    assert auto.init_fraction(n=2_000, rho=rho, sizes=[2] * 8) == 0.1  # binary: the rounds measure 1-way well
    v = auto.init_signal(n=2_000, rho=rho, d=8)
    assert v == pytest.approx(2_000 * math.sqrt(2 * rho / 8))
    assert auto.init_fraction(n=2_000, rho=rho, sizes=[10] * 8) == pytest.approx(auto.INIT_SIGNAL / v - 0.1)
    assert auto.init_fraction(n=100, rho=rho, sizes=[10] * 8) == auto.INIT_MOST
    fractions = [auto.init_fraction(n=n, rho=rho, sizes=[10] * 8) for n in (500, 1_000, 2_000, 4_000, 8_000)]
    assert fractions == sorted(fractions, reverse=True) and fractions[-1] == 0.1
    name, raw, why = auto.choose(workload=[(0, 1), (1, 2)], delta=1e-6, n=2_000, epsilon=1.0, sizes=(10, 10, 10))
    assert name == "mwem:3-way" and raw["init_fraction"] == round(auto.init_fraction(
        n=2_000, rho=rho, sizes=[10, 10, 10]), 4) and "1-way marginals first" in why[1]
    assert "init_fraction" not in auto.choose(workload=[(0, 1), (1, 2)], delta=0.0, n=2_000, epsilon=1.0,
                                              sizes=(10, 10, 10))[1]  # pure ε-DP (rule 3): not measured


def _wide_ctx(n: float, spent_rho: float):
    from dpsynth.algorithms.base import AlgorithmContext
    from dpsynth.data.counts import ArrayCounts
    from dpsynth.data.schema import CategoricalColumn, Domain
    from dpsynth.privacy import Neighbouring
    from dpsynth.privacy.accountant import Charge, Ledger

    domain = Domain(tuple(CategoricalColumn(c, tuple(range(8))) for c in "abc"))
    codes = np.random.default_rng(4).integers(0, 8, (500, 3))
    ledger = Ledger(1.0, 1e-6, ZCDPComposition())
    if spent_rho:  # an earlier phase on the same ledger (a discovery), as the zero-config release charges it
        ledger.charge(Charge(stage="discover", mechanism="gaussian", sensitivity=1.0, epsilon=1.0, delta=0.0,
                             rho=spent_rho))
    return AlgorithmContext(domain=domain, counts=ArrayCounts(codes, domain), ledger=ledger,
                            neighbouring=Neighbouring.ADD_REMOVE, n=n, rows=500, workload=((0, 1), (1, 2)))


def test_init_fraction_reads_the_budget_left_and_the_public_n():
    """The rule reads what the release has left on the ledger (after a discovery, half of ρ: a larger init) and
    ``ctx.n`` (public or noisy), never the true row count."""
    rho = approx_dp_to_zcdp(1.0, 1e-6)
    fresh = auto.chosen(_wide_ctx(1_500.0, 0.0), auto.Params())[4]["init_fraction"]
    after = auto.chosen(_wide_ctx(1_500.0, rho / 2), auto.Params())[4]["init_fraction"]
    assert fresh == round(auto.init_fraction(n=1_500, rho=rho, sizes=[8, 8, 8]), 4)
    assert after == round(auto.init_fraction(n=1_500, rho=rho / 2, sizes=[8, 8, 8]), 4)
    assert after == pytest.approx((fresh + 0.1) * math.sqrt(2) - 0.1, rel=1e-3) and after > fresh
    assert "init_fraction" not in auto.chosen(_wide_ctx(1e6, 0.0), auto.Params())[4]  # 500 true rows, n public 10⁶


def test_init_split_shares_the_init_part_by_size():
    """``init_split`` (:data:`~dpsynth.algorithms.auto.INIT_SPLIT`): the initial parts are ∝ s^(2/3) and sum to
    the initial part (never past it); auto sets it under zCDP only where the columns' sizes differ."""
    from dpsynth.privacy.allocation import RoundBudget

    budget = RoundBudget(1.0, init_fraction=0.3, iterations=20, select_fraction=0.1, zcdp=True)
    parts = budget.init_shares([1, 8, 27], auto.INIT_SPLIT)
    assert parts[1] / parts[0] == pytest.approx(4.0) and parts[2] / parts[0] == pytest.approx(9.0)
    assert budget.init_part * (1 - 1e-9) <= math.fsum(parts) <= budget.init_part
    assert budget.init_shares([5, 5], auto.INIT_SPLIT) == pytest.approx(budget.init_shares([5, 5]))
    mixed = auto.choose(workload=[(0, 1), (1, 2)], delta=1e-6, n=2_000, epsilon=1.0, sizes=(2, 10, 30))[1]
    assert mixed["init_split"] == round(auto.INIT_SPLIT, 4)
    assert "init_split" not in auto.choose(workload=[(0, 1), (1, 2)], delta=1e-6, n=2_000, epsilon=1.0,
                                           sizes=(10, 10, 10))[1]
    assert "init_split" not in auto.choose(workload=[(0, 1), (1, 2)], delta=0.0, n=2_000, epsilon=1.0,
                                           sizes=(2, 10, 30))[1]
    assert "init_split" not in auto.choose(workload=[(0, 1), (1, 2)], delta=1e-6, n=200_000, epsilon=1.0,
                                           sizes=(2, 10, 30))[1]  # a large table: v above SPLIT_SIGNAL
