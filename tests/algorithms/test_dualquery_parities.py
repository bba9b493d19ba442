"""DualQuery on parity queries (Gaboardi et al. 2014, §6): best response (local search, the §6 integer
program with CBC) against brute force, and the release end to end."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest

import dpsynth
from dpsynth.algorithms.dualquery import core as dq
from dpsynth.algorithms.dualquery import solver
from dpsynth.cli import app
from dpsynth.config import parse_config
from dpsynth.data.schema import CategoricalColumn, Domain
from dpsynth.report import validate_report
from dpsynth.workload.parities import ParityClauses, parity_workload

ROOT_CFG = "configs/nltcs-dualquery-parities.yaml"


def _domain(sizes):
    return Domain(tuple(CategoricalColumn(f"c{i}", tuple(range(s))) for i, s in enumerate(sizes)))


def _all_rows(domain):
    return np.array(list(itertools.product(*[range(s) for s in domain.sizes])), dtype=np.int64)


def _instance(sizes, m, seed, k=3):
    """m samples (with repeats, parities and negations) from every k-wise parity of the domain."""
    d = _domain(sizes)
    q = parity_workload({"k": k}, d)
    rng = np.random.default_rng(seed)
    return d, ParityClauses.from_samples(q, rng.integers(0, 2 * len(q), size=m))


def _brute_force(cl, d) -> int:
    """The best response by enumeration: the largest weighted count over every record of the domain."""
    return max(cl.objective(r) for r in _all_rows(d))


def test_gains_equal_objective_differences():
    d, cl = _instance([2, 3, 2, 2, 4], 40, seed=1)
    inst = dq._instance(cl, d)
    owner, value = d.bit_owner()
    rng = np.random.default_rng(2)
    for _ in range(4):
        rec = rng.integers(0, d.sizes)
        g = inst.gains(rec)
        for b in range(d.n_bits):
            moved = rec.copy()
            moved[owner[b]] = value[b]
            assert g[b] == cl.objective(moved) - cl.objective(rec)


@pytest.mark.parametrize("seed", range(4))
def test_local_search_reaches_the_brute_force_optimum(seed):
    """Not guaranteed in theory; checked for these fixed seeds (7 binary columns, 60 samples)."""
    d, cl = _instance([2] * 7, 60, seed=seed)
    rng = np.random.default_rng(seed)
    rec, obj = dq.local_search(cl, d, starts=[rng.integers(0, d.sizes) for _ in range(3)], kicks=20,
                               max_kicks=1000, rng=rng)
    assert obj == cl.objective(rec) == _brute_force(cl, d)


def _ip(cl, d, incumbent=None):
    return solver.solve_clauses_ip(cl, d, base=np.zeros(len(d), dtype=np.int64), incumbent=incumbent,
                                   max_nodes=10**6, gap=0.0, threads=1)


@pytest.mark.parametrize(("sizes", "k", "seed"), [([2, 3, 2, 2, 4], 3, 5)])
def test_ip_best_response_equals_brute_force(sizes, k, seed):
    """§6's program (Σx = 2d + c − 1 for a parity, Σx = 2d + c for a negated one) solved by CBC: its
    optimum is the exhaustive maximum over every record of the domain, and CBC proves it."""
    d, cl = _instance(sizes, 50, seed=seed, k=k)
    res = _ip(cl, d)
    assert res.failure is None and res.status == "optimal"
    assert res.objective == cl.objective(res.codes) == _brute_force(cl, d)
    assert res.bound == res.objective


@pytest.mark.slow
@pytest.mark.parametrize(("sizes", "k", "seed"), [([2] * 10, 3, s) for s in range(4)]
                         + [([2] * 8, 3, 0), ([2] * 8, 2, 9), ([2] * 8, 4, 10), ([3, 2, 4, 2, 2, 3], 3, 11)])
def test_ip_best_response_equals_brute_force_more(sizes, k, seed):
    d, cl = _instance(sizes, 80, seed=seed, k=k)
    res = _ip(cl, d)
    assert res.status == "optimal" and res.objective == _brute_force(cl, d)
    warm = _ip(cl, d, incumbent=res.codes)  # the warm start file carries d_j too
    assert warm.failure is None and warm.objective == res.objective


def test_ip_model_rows_are_the_papers_equalities():
    """One parity (even) and one negated parity on columns (0, 1, 2): Σx − 2d − c = −1, resp. 0."""
    d = _domain([2, 2, 2])
    q = parity_workload({"k": 3}, d)
    cl = ParityClauses.from_samples(q, np.array([0, 1, 1]))
    model = solver.build_model(cl, d)
    assert model.n_aux == 2 and model.aux_upper == 2 and model.n_clauses == 2 and model.n_x == 6
    assert model.senses.tolist() == ["E"] * 5 and model.rhs.tolist() == [1, 1, 1, -1, 0]
    row, var, coef = model.entries
    for r in (3, 4):
        on = row == r
        got = sorted(zip(var[on].tolist(), coef[on].tolist()))
        c, dv = 6 + r - 3, 8 + r - 3
        assert got == [(1, 1), (3, 1), (5, 1), (c, -1), (dv, -2)]  # x bits (col, 1), c_j, d_j
    obj = row == -1
    assert sorted(zip(var[obj].tolist(), coef[obj].tolist())) == [(6, -1), (7, -2)]  # weights 1 and 2


def test_hybrid_best_response_never_below_local_search():
    d, cl = _instance([2] * 6, 30, seed=3)
    params = dq.parse_params({"best_response": "hybrid", "local_search": {"restarts": 0, "kicks": 0}})
    rec, info = dq.best_response(cl, d, params, previous=None, rng=np.random.default_rng(0))
    assert info["objective"] == cl.objective(rec) >= info["local_objective"]
    assert info["objective"] == _brute_force(cl, d)


# ---------------------------------------------------------------------- release / CLI
@pytest.fixture
def nltcs(root):
    return pd.read_csv(root / "sample_data" / "nltcs.csv")


def _raw(root, **params):
    import yaml

    raw = yaml.safe_load((root / ROOT_CFG).read_text())
    raw["algorithm"]["params"].update({"best_response": "local", "local_search": {"kicks": 5}, **params})
    return raw


def test_release_on_parities_reports_the_parity_workload(root, nltcs):
    raw = _raw(root, T=6, s=60, eta=None)
    res = dpsynth.release(nltcs, parse_config(raw), rng=np.random.default_rng(0))
    det = res.report["algorithm"]["details"]
    assert det["query_class"] == "parity" and det["queries"] == 560 and det["k"] == 3
    assert det["queries_with_negations"] == 1120
    assert res.report["workload"]["parities"]["spec"] == raw["workload"]["parities"]
    assert res.report["workload"]["parities"]["queries"] == 560
    assert "conjunctions" not in res.report["workload"]
    assert len(res.report["ledger"]) == 6 and len(res.synthetic) == len(nltcs)
    validate_report(json.loads(json.dumps(res.report)))


def test_records_serve_the_parities_of_a_constant_table():
    """All rows (1, 1, 0, 0): every 3-wise parity's answer is 0 or 1; the best responses move towards it."""
    d = _domain([2] * 4)
    table = pd.DataFrame(np.tile([1, 1, 0, 0], (400, 1)), columns=d.names)
    raw = {"schema": {"columns": {c: {"type": "categorical", "categories": [0, 1]} for c in d.names}},
           "privacy": {"epsilon": 50.0}, "algorithm": {"name": "dualquery", "params": {
               "T": 8, "s": 200, "best_response": "local", "local_search": {"kicks": 3}}},
           "workload": {"parities": {"k": 3}}}
    res = dpsynth.release(table, parse_config(raw), rng=np.random.default_rng(1))
    q = parity_workload({"k": 3}, d)
    true = q.answers(table.to_numpy())
    synth = q.answers(res.synthetic.to_numpy().astype(int))
    assert np.abs(synth - true).mean() < 0.5  # random records: 0.5 on average; the MW game pulls them in


def test_cli_release_and_evaluate_the_released_parities(root, runner, tmp_path, nltcs):
    import yaml

    cfg = tmp_path / "c.yaml"
    raw = _raw(root, T=5, s=50, eta=None)
    raw["workload"]["marginals"] = [["a0", "a1", "a2"]]  # what --workload scores besides the parities
    raw["output"] = {"rows": 500}
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    data = tmp_path / "real.csv"
    nltcs = nltcs.iloc[:3000]
    nltcs.to_csv(data, index=False)
    out, rep, ev = tmp_path / "s.csv", tmp_path / "r.json", tmp_path / "e.json"
    result = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(data), "-o", str(out), "-r", str(rep),
                                 "--seed", "3", "--quiet"])
    assert result.exit_code == 0, result.output
    report = json.loads(rep.read_text())
    assert report["workload"]["parities"]["spec"] == {"k": 3} and report["algorithm"]["details"]["T"] == 5
    result = runner.invoke(app, ["evaluate", "-c", str(cfg), "--real", str(data), "--synthetic", str(out),
                                 "--workload", "--json", str(ev), "-q"])
    assert result.exit_code == 0, result.output
    got = json.loads(ev.read_text())["parities"]
    q = parity_workload({"k": 3}, parse_config(yaml.safe_load(cfg.read_text())).domain)
    err = np.abs(q.answers(pd.read_csv(out).to_numpy()) - q.answers(nltcs.to_numpy()))
    assert got["queries"] == 560 and got["error_mean"]["synthetic"] == pytest.approx(err.mean(), abs=1e-12)
    assert got["error_max"]["synthetic"] == pytest.approx(err.max(), abs=1e-12)


def test_plan_names_the_parities_and_the_alpha_beta_parameters(root, runner, tmp_path):
    """``dpsynth plan`` (no data): 560 parities; alpha = 0.9, beta = 0.5 give T = ceil(16 ln 1120/0.81) = 139,
    s = ceil(48 ln(2 * 2^16 * 139/0.5)/0.81) = 1,032, eta = 0.225 (Algorithm 2), which fit epsilon = 5."""
    import yaml

    raw = yaml.safe_load((root / ROOT_CFG).read_text())
    raw["privacy"]["epsilon"] = 5.0
    raw["algorithm"]["params"] = {"alpha": 0.9, "beta": 0.5, "best_response": "local"}
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    res = runner.invoke(app, ["plan", "-c", str(cfg), "--rows", "21574"])
    assert res.exit_code == 0, res.output
    assert "560 parities of 3 literals (and their negations)" in res.stdout
    assert ("T=139 rounds of s=1032 query samples, eta=0.225 (solved for T, s and eta from alpha and beta "
            "(Algorithm 2) at n=21,574)") in res.stdout


def test_benchmark_baselines_are_exact_without_noise(root, nltcs):
    """benchmarks/bench_dualquery_parities.py: at ε = 10¹² the laplace-marginals and Laplace-on-parities
    baselines return the exact parity answers (their reading of the noisy counts is right)."""
    from benchmarks.bench_dualquery_parities import _laplace_marginals, _laplace_parities

    cfg = parse_config(_raw(root))
    codes = nltcs.iloc[:2000].to_numpy()
    q = parity_workload({"k": 3, "count": 40, "seed": 1}, cfg.domain)
    exact = q.answers(codes)
    rng = np.random.default_rng(0)
    np.testing.assert_allclose(_laplace_marginals(codes, q, 1e12, 2000, rng), exact, atol=1e-9)
    np.testing.assert_allclose(_laplace_parities(exact, 1e12, 2000, rng), exact, atol=1e-9)
