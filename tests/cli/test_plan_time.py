"""The time model of ``dpsynth plan`` (issue 26): its structure, never wall-clock.

seconds = Σ TIME[term] × work[term] (dpsynth/plan/timing.py), each work term a public quantity; the
coefficients and the model's held-out error come from benchmarks/bench_plan.py time.
"""

from __future__ import annotations

import math

import pytest

from dpsynth.algorithms import algorithm_names
from dpsynth.config import parse_config
from dpsynth.plan import format_plan, make_plan
from dpsynth.plan.coefficients import TIME, TIME_ERROR
from dpsynth.plan.timing import TERMS, seconds, time_error, tree_cells


def _raw(algorithm: str, d: int = 8, m: int = 3, k: int = 2, params: dict | None = None, delta: float = 0.0) -> dict:
    return {
        "schema": {"columns": {f"c{j}": {"type": "categorical", "categories": list(range(m))} for j in range(d)}},
        "privacy": {"epsilon": 1.0, "delta": delta},
        "algorithm": {"name": algorithm, "params": params or {}},
        "workload": {"marginals": {"k": k}},
    }


def test_every_term_has_a_positive_coefficient_and_a_meaning():
    assert set(TIME) == set(TERMS)
    assert all(c > 0 and math.isfinite(c) for c in TIME.values())


def test_stated_error_is_a_measured_ratio():
    median, p90 = time_error()
    assert 1.0 <= median <= p90 and TIME_ERROR["configs"] >= 10


@pytest.mark.parametrize("algorithm", [a for a in algorithm_names() if a != "dualquery"])
def test_seconds_are_the_sum_of_coefficient_times_work(algorithm):
    p = make_plan(parse_config(_raw(algorithm)), rows=5000)
    assert set(p.work) <= set(TERMS) and {"startup", "read", "write", "count"} <= set(p.work)
    assert p.seconds == pytest.approx(p.alg.seconds + sum(TIME[t] * w for t, w in p.work.items()))
    assert p.alg.seconds == 0.0  # everything but DualQuery's work budget is in the fitted model


@pytest.mark.parametrize("algorithm", ["laplace", "mwem", "ireduct", "fourier", "auto"])
def test_rows_enter_through_reading_counting_and_writing_only(algorithm):
    """Ten times the rows: the read, write and count terms grow tenfold, the algorithm's own work does not
    (public n is not a parameter of noise, selection or fitting)."""
    cfg = parse_config(_raw(algorithm))
    small, big = make_plan(cfg, rows=2_000).work, make_plan(cfg, rows=20_000).work
    for term in small:
        ratio = big[term] / small[term] if small[term] else 1.0
        assert ratio == pytest.approx(10.0 if term in ("read", "write", "count") else 1.0), term


def test_work_terms_are_the_public_quantities():
    cfg = parse_config(_raw("laplace", d=8, m=3, k=2))
    p = make_plan(cfg, rows=1000)
    marginals = math.comb(8, 2)
    assert p.work["read"] == p.work["write"] == 1000 * 8
    assert p.work["count"] == 1000 * marginals and p.work["noise"] == marginals * 9
    steps = cfg.params.synthesis_iterations
    assert p.work["pgm"] == steps * tree_cells(cfg.domain.sizes, cfg.marginals, cfg.params.model_cells)
    assert p.work["pgm_measured"] == steps * marginals * 9


def test_junction_tree_cells_are_capped_by_the_model_bound():
    sizes = [4] * 10
    pairs = [(i, j) for i in range(10) for j in range(i + 1, 10)]
    assert tree_cells(sizes, [], 10**9) == 40
    assert tree_cells(sizes, [(0, 1)], 10**9) == 16 + 8 * 4
    assert tree_cells(sizes, pairs, 1000) == 1000  # the full pairwise tree is 4^10 cells: capped


def test_mwem_rounds_scale_its_selection_and_refit_terms():
    few = make_plan(parse_config(_raw("mwem", params={"variant": "pgm", "iterations": 5})), rows=1000).work
    many = make_plan(parse_config(_raw("mwem", params={"variant": "pgm", "iterations": 20})), rows=1000).work
    assert many["mwem_score"] == 4 * few["mwem_score"]
    assert many["mwem_pgm"] > few["mwem_pgm"] and many["count"] == few["count"]


def test_fourier_time_follows_the_fit_the_release_will_use():
    lp = make_plan(parse_config(_raw("fourier", d=6, m=2, k=2)), rows=1000).work
    mw = make_plan(parse_config(_raw("fourier", d=16, m=2, k=2)), rows=1000).work  # 65,536 x 137: auto -> mw
    assert "fourier_lp" in lp and "fourier_mw" not in lp
    assert "fourier_mw" in mw and "fourier_lp" not in mw and mw["fourier_build"] == 65_536 * 137


def test_auto_is_timed_on_the_workload_it_chooses():
    """Issue 26: a wide table where auto measures only the 1-way marginals (n·ε < 5·d²) was timed as MWEM over
    every 2-way candidate (1,431 on loans: "about 20 min" for a 3.3 s run)."""
    cfg = parse_config(_raw("auto", d=54, m=4, k=2, delta=1e-6))
    pairs = make_plan(cfg, rows=10_000)  # rule 0a: pair signal 15.9 >= 3: mwem on the 1,431 pairs, 54 rounds
    assert any(note.startswith("auto chooses mwem:2-way") for note in pairs.alg.notes)
    assert pairs.work["mwem_score"] > 0
    p = make_plan(cfg, rows=1_800)  # signal 2.9 < 3: the 1-way marginals only
    assert any(note.startswith("auto chooses mwem:1-way") for note in p.alg.notes)
    assert p.work["count"] == 1_800 * 54  # the 54 one-way marginals (measured at init), not 1,431 pairs
    assert p.work["mwem_score"] == 0  # no candidate beyond them
    two_way = make_plan(parse_config(_raw("mwem", d=54, m=4, k=2, params={"variant": "pgm"}, delta=1e-6)),
                        rows=1_800)
    assert two_way.work["count"] > 20 * p.work["count"]


def test_plan_states_the_time_and_its_measured_error():
    p = make_plan(parse_config(_raw("laplace")), rows=1000)
    median, p90 = time_error()
    line = next(x for x in format_plan(p).splitlines() if x.startswith("Rough time: "))
    assert line.endswith(f" (typically within x{median:.1f}; 9 in 10 within x{p90:.1f} on the benchmark grid)")
    assert line.startswith("Rough time: about ")
    assert p.to_dict()["time_work"] == p.work


def test_seconds_of_an_unknown_term_is_an_error():
    with pytest.raises(KeyError):
        seconds({"no such term": 1.0})
