"""DualQuery: queries, best response (local search and CBC vs brute force), MW direction, release."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pandas as pd
import pytest

import dpsynth
from dpsynth.algorithms.base import AlgorithmContext
from dpsynth.algorithms.dualquery import core as dq
from dpsynth.cli import app
from dpsynth.config import parse_config
from dpsynth.data.counts import ArrayCounts
from dpsynth.data.schema import CategoricalColumn, Domain
from dpsynth.errors import ConfigError
from dpsynth.privacy import Neighbouring
from dpsynth.privacy.accountant import Ledger
from dpsynth.report import validate_report
from dpsynth.workload.conjunctions import (
    Clauses,
    Conjunctions,
    all_cells,
    conjunction_counts,
    conjunction_workload,
    random_conjunctions,
)

ROOT_CFG = "configs/nltcs-dualquery.yaml"


def _domain(sizes):
    return Domain(tuple(CategoricalColumn(f"c{i}", tuple(range(s))) for i, s in enumerate(sizes)))


def _all_rows(domain):
    return np.array(list(itertools.product(*[range(s) for s in domain.sizes])), dtype=np.int64)


def _random_clauses(domain, m, rng, k=3):
    q = random_conjunctions(domain, k, m, rng=rng)
    sample = rng.integers(0, 2 * len(q), size=2 * m)
    return Clauses.from_samples(q, sample)


# --------------------------------------------------------------------------- queries
def test_all_cells_enumerates_every_cell_once():
    d = _domain([2, 3, 2])
    q = all_cells(d, [(0, 1), (1, 2)])
    assert len(q) == 6 + 6
    assert len({tuple(a) + tuple(v) for a, v in zip(q.attrs, q.values)}) == 12


def test_random_conjunctions_are_sensible_distinct_and_seeded():
    d = _domain([3, 4, 2, 5, 2])
    a = random_conjunctions(d, 3, 200, rng=np.random.default_rng(5))
    b = random_conjunctions(d, 3, 200, rng=np.random.default_rng(5))
    assert np.array_equal(a.attrs, b.attrs) and np.array_equal(a.values, b.values)
    assert np.all(np.diff(a.attrs, axis=1) > 0)  # distinct columns (sorted)
    assert np.all(a.values < np.asarray(d.sizes)[a.attrs])
    assert len({tuple(x) + tuple(y) for x, y in zip(a.attrs, a.values)}) == 200


def test_random_conjunctions_refuse_more_than_exist():
    d = _domain([2, 2, 2])
    with pytest.raises(ConfigError, match=re.escape(
        "workload.conjunctions.count: 9 exceeds the 8 distinct 3-way conjunctions of this schema"
    )):
        random_conjunctions(d, 3, 9, rng=np.random.default_rng(0))


def test_conjunction_counts_match_naive_and_generic_fallback():
    rng = np.random.default_rng(1)
    d = _domain([3, 2, 4, 2, 3])
    codes = rng.integers(0, d.sizes, size=(500, len(d)))
    counts = ArrayCounts(codes, d)
    q = random_conjunctions(d, 3, 150, rng=rng)
    naive = np.array([np.all(codes[:, a] == v, axis=1).sum() for a, v in zip(q.attrs, q.values)])
    assert np.array_equal(counts.conjunction_counts(q.attrs, q.values), naive)

    class Generic:  # an engine with only marginal()
        def __init__(self, inner):
            self.inner = inner

        def marginal(self, attrs):
            return self.inner.marginal(attrs)

    assert np.array_equal(conjunction_counts(Generic(counts), q), naive)
    # literal order within a conjunction does not matter
    assert np.array_equal(counts.conjunction_counts(q.attrs[:, ::-1], q.values[:, ::-1]), naive)
    assert np.allclose(q.answers(codes, chunk=7), naive / 500)
    from dpsynth.data.counts import _packed_conjunction_counts

    assert np.array_equal(_packed_conjunction_counts(counts._codes, d, q.attrs, q.values), naive)


def test_workload_parsing_messages():
    d = _domain([2] * 4)
    with pytest.raises(ConfigError, match=re.escape("workload.conjunctions.kk: unknown key (allowed: count, k, seed)")):
        conjunction_workload({"kk": 3}, d, [])
    with pytest.raises(ConfigError, match=re.escape("workload.conjunctions.seed: only meaningful with count")):
        conjunction_workload({"k": 3, "seed": 1}, d, [])
    assert len(conjunction_workload({"k": 3}, d, [])) == 4 * 8
    assert len(conjunction_workload(None, d, [(0, 1), (2, 3)])) == 8


def test_negations_are_complements():
    """Clause i >= Q is the negation of query i - Q: satisfied exactly when the conjunction is not."""
    d = _domain([2, 3, 2, 2])
    q = random_conjunctions(d, 3, 10, rng=np.random.default_rng(2))
    cl = Clauses.from_samples(q, np.arange(2 * len(q)))
    for rec in _all_rows(d):
        sat = cl.satisfied(rec)
        assert np.array_equal(sat[: len(q)], ~sat[len(q):])
        assert cl.objective(rec) == len(q)


# ---------------------------------------------------------------------- best response
def _brute_force(cl, d):
    rows = _all_rows(d)
    objs = np.array([cl.objective(r) for r in rows])
    return objs.max()


@pytest.mark.parametrize("seed", range(6))
def test_local_search_reaches_the_optimum_on_small_instances(seed):
    """12 bits (6 ternary-ish columns); local search with restarts finds the exhaustive maximum.

    Not guaranteed in theory, but checked for these fixed seeds; the returned row is always valid.
    """
    rng = np.random.default_rng(seed)
    d = _domain([2, 3, 2, 3, 2])
    cl = _random_clauses(d, 30, rng)
    starts = [rng.integers(0, d.sizes) for _ in range(3)]
    rec, obj = dq.local_search(cl, d, starts=starts, kicks=20, max_kicks=1000, rng=rng)
    assert obj == cl.objective(rec) == _brute_force(cl, d)
    assert np.all((rec >= 0) & (rec < np.asarray(d.sizes)))


def test_gains_equal_objective_differences():
    rng = np.random.default_rng(3)
    d = _domain([3, 2, 4, 2])
    cl = _random_clauses(d, 25, rng)
    inst = dq._Instance(cl, d)
    owner, value = d.bit_owner()
    for _ in range(5):
        rec = rng.integers(0, d.sizes)
        g = inst.gains(rec)
        for b in range(d.n_bits):
            moved = rec.copy()
            moved[owner[b]] = value[b]
            assert g[b] == cl.objective(moved) - cl.objective(rec)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_cbc_ip_matches_brute_force(seed):
    """The §5 program with exactly-one rows: CBC's optimum equals the exhaustive maximum (12 bits)."""
    from dpsynth.algorithms.dualquery.solver import solve_clauses_ip

    rng = np.random.default_rng(10 + seed)
    d = _domain([2, 3, 2, 3, 2])
    cl = _random_clauses(d, 40, rng)
    base = np.zeros(len(d), dtype=np.int64)
    res = solve_clauses_ip(cl, d, base=base, incumbent=None, max_nodes=10**6, gap=0.0, threads=1)
    assert res.status == "optimal"
    assert res.objective == cl.objective(res.codes) == _brute_force(cl, d)
    assert res.bound == res.objective and res.gap == 0.0
    warm = solve_clauses_ip(cl, d, base=base, incumbent=res.codes, max_nodes=10**6, gap=0.0, threads=1)
    assert warm.objective == res.objective


def test_missing_cbc_is_one_clear_line(monkeypatch):
    import pulp

    from dpsynth.algorithms.solvers import mip_solver

    monkeypatch.setattr(pulp.PULP_CBC_CMD, "available", lambda self: False)
    msg = ("algorithm.params.best_response: the CBC solver binary is not available; install 'pulp<4' "
           "(its wheel ships CBC) or set best_response: local")
    with pytest.raises(ConfigError, match=re.escape(msg)):
        mip_solver(max_nodes=1, gap=0, threads=1, warm_start=False)
    with pytest.raises(ConfigError, match=re.escape(msg)):  # at config time, before any data is read
        dq.parse_params({"best_response": "hybrid"})
    assert dq.parse_params({"best_response": "local"}).best_response == "local"


# ------------------------------------------------------------------- query player
def test_mw_update_direction_underserved_queries_gain_weight():
    """After a record that does not satisfy q while q(D) = 0.9, q gains weight and ¬q loses it."""
    q = Conjunctions(np.array([[0, 1]]), np.array([[1, 1]]))
    true = np.array([0.9])
    rec = np.array([0, 0])
    r = np.zeros(1) + (true - q.satisfied(rec))
    logits = dq.mw_logits(r, 1.0)
    assert logits[0] == pytest.approx(0.9) and logits[1] == pytest.approx(-0.9)
    p = np.exp(logits) / np.exp(logits).sum()
    assert p[0] > 0.5 > p[1]


def test_sampling_follows_the_weights():
    """200,000 draws of the 2Q = 4 queries with log-weights η·(r, −r) pass a chi-square test against
    the exact probabilities (critical value at 1e-6: false-failure rate 1e-6); the round's charge is
    recorded once, before the draws."""
    from scipy import stats

    from dpsynth.privacy.accountant import Charge, Ledger

    r, eta = np.array([0.75, -0.25]), 2.0
    ledger = Ledger(10.0)
    charge = Charge(stage="dualquery", mechanism="exponential", sensitivity=0.5, epsilon=2.0, count=200_000)
    draws = dq.sample_queries(r, eta, 200_000, charge=charge, ledger=ledger, rng=np.random.default_rng(4))
    obs = np.bincount(draws, minlength=4)
    w = np.exp(eta * np.array([0.75, -0.25, -0.75, 0.25]))
    exp = 200_000 * w / w.sum()
    chi2 = ((obs - exp) ** 2 / exp).sum()
    assert chi2 < stats.chi2.ppf(1 - 1e-6, df=3)  # false-failure rate 1e-6
    assert ledger.charges == [charge]


def test_dualquery_tracks_a_point_mass_table():
    """All rows identical: the MW loop must steer records to that row (wrong sign would repel them)."""
    d = _domain([2] * 6)
    codes = np.tile(np.array([1, 0, 1, 1, 0, 1]), (20_000, 1))
    ctx, params = _ctx(d, codes, T=30, s=60, eta=1.0, best_response="local", local_search={"kicks": 10})
    out = dq.run(ctx, params, rng=np.random.default_rng(0))
    q = conjunction_workload({"k": 3}, d, [])
    err = np.abs(q.answers(out.codes) - q.answers(codes)).mean()
    assert err < 0.05


def _ctx(d, codes, *, epsilon=1e6, delta=1e-3, rows=None, **kw):
    params = dq.parse_params({**kw})
    ledger = Ledger(epsilon, delta, dq.composition(params, type("P", (), {"delta": delta})()))
    ctx = AlgorithmContext(
        domain=d, counts=ArrayCounts(codes, d), ledger=ledger, neighbouring=Neighbouring.ADD_REMOVE,
        n=float(len(codes)), rows=rows or len(codes), workload=tuple(itertools.combinations(range(len(d)), 3)),
    )
    return ctx, params


def test_params_validation_messages():
    with pytest.raises(ConfigError, match=re.escape("algorithm.params.T: must be >= 2, got 1")):
        dq.parse_params({"T": 1})
    with pytest.raises(ConfigError, match=re.escape("algorithm.params.solver.gap: must be in [0, 1), got 1.5")):
        dq.parse_params({"solver": {"gap": 1.5}})
    with pytest.raises(ConfigError, match=re.escape("algorithm.params.foo: unknown key")):
        dq.parse_params({"foo": 1})
    p = type("P", (), {"delta": 0.0})()
    with pytest.raises(ConfigError, match=re.escape(
        "algorithm.params.accounting: 'zcdp' needs privacy.delta > 0 (or use accounting: pure)"
    )):
        dq.composition(dq.parse_params({"accounting": "zcdp"}), p)


def test_expand_rows_keeps_the_multiset():
    rec = np.arange(10).reshape(5, 2)
    out = dq.expand_rows(rec, 12, rng=np.random.default_rng(0))
    counts = np.bincount(out[:, 0] // 2, minlength=5)
    assert counts.sum() == 12 and counts.min() == 2 and counts.max() == 3


# ---------------------------------------------------------------------- release / CLI
@pytest.fixture
def nltcs(root):
    return pd.read_csv(root / "sample_data" / "nltcs.csv")


def _fast_cfg(root, **params):
    import yaml

    raw = yaml.safe_load((root / ROOT_CFG).read_text())
    raw["algorithm"]["params"].update({"best_response": "local", "local_search": {"kicks": 10}, **params})
    return parse_config(raw)


def test_release_spends_the_budget_and_reports_rounds(root, nltcs):
    cfg = _fast_cfg(root)
    res = dpsynth.release(nltcs, cfg, rng=np.random.default_rng(0))
    det = res.report["algorithm"]["details"]
    priv = res.report["privacy"]
    assert priv["epsilon_spent"] <= 1.0 and priv["epsilon_spent"] > 0.9
    assert det["accounting_used"] == "zcdp" and det["epsilon_by_accounting"]["zcdp"] == priv["epsilon_spent"]
    assert len(det["rounds"]) == det["T"] == 50 and det["s"] == 500
    assert len(res.synthetic) == len(nltcs)
    assert len(res.report["ledger"]) == det["T"]


def test_release_is_reproducible(root, nltcs):
    cfg = _fast_cfg(root, T=10, s=100, eta=None)
    a = dpsynth.release(nltcs, cfg, rng=np.random.default_rng(7)).synthetic
    b = dpsynth.release(nltcs, cfg, rng=np.random.default_rng(7)).synthetic
    c = dpsynth.release(nltcs, cfg, rng=np.random.default_rng(8)).synthetic
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def test_cli_release_end_to_end(root, runner, tmp_path):
    import yaml

    raw = yaml.safe_load((root / ROOT_CFG).read_text())
    raw["algorithm"]["params"].update({"best_response": "local", "local_search": {"kicks": 10}})
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    out, rep = tmp_path / "s.csv", tmp_path / "r.json"
    result = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(root / "sample_data" / "nltcs.csv"),
                                 "-o", str(out), "-r", str(rep), "--seed", "3", "--quiet"])
    assert result.exit_code == 0, result.output
    synth = pd.read_csv(out)
    assert list(synth.columns) == [f"a{i}" for i in range(16)] and len(synth) == 21574
    assert set(np.unique(synth.to_numpy())) <= {0, 1}
    report = json.loads(rep.read_text())
    assert report["algorithm"]["name"] == "dualquery"
    assert report["privacy"]["epsilon_spent"] <= 1.0


def test_cli_infeasible_budget_exit_code(root, runner, tmp_path):
    import yaml

    raw = yaml.safe_load((root / ROOT_CFG).read_text())
    raw["privacy"]["epsilon"] = 0.001
    raw["algorithm"]["params"].update({"s": 5000, "eta": 2.0})
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    result = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(root / "sample_data" / "nltcs.csv"),
                                 "-o", str(tmp_path / "s.csv"), "--quiet"])
    assert result.exit_code == 3


def test_free_attributes_follow_the_heuristic():
    d = _domain([3, 3, 3, 3])
    q = Conjunctions(np.array([[0, 1]]), np.array([[2, 2]]))
    cl = Clauses.from_samples(q, np.array([0]))
    rec = np.array([2, 2, 1, 2])
    assert np.array_equal(dq._free(rec, cl, d, "first", np.random.default_rng(0)), [2, 2, 0, 0])
    draws = np.array([dq._free(rec, cl, d, "uniform", np.random.default_rng(i))[2:] for i in range(300)])
    assert set(draws.ravel()) == {0, 1, 2}  # P(a value never drawn in 600 draws) = 3·(2/3)^600 < 1e-100


@pytest.mark.slow
def test_hybrid_never_worse_than_local_search():
    """CBC warm-started from the local-search row keeps at least its objective (200 bits, 400 clauses)."""
    d = _domain([2] * 100)
    rng = np.random.default_rng(21)
    cl = _random_clauses(d, 200, rng)
    p = dq.parse_params({"best_response": "hybrid", "solver": {"max_nodes": 20}})
    rec, info = dq.best_response(cl, d, p, previous=None, rng=rng)
    assert info["objective"] >= info["local_objective"]
    assert info["objective"] == cl.objective(rec)
    assert info["cbc_status"] in ("optimal", "node-limit")


@pytest.mark.slow
def test_kddcup99_config_encodes_the_shared_file(root):
    """The public KDD99 config covers every value of the 10% file (no DataError), 200 bits."""
    from dpsynth.data.discretize import encode
    from tests.helpers import shared_file

    path = shared_file("kddcup99", "kddcup99_10pct.csv.gz")
    cfg = dpsynth.load_config(root / "configs" / "kddcup99.yaml")
    assert cfg.domain.n_bits == 200 and len(cfg.domain) == 42
    codes = encode(pd.read_csv(path), cfg.domain)
    assert codes.shape == (494_021, 42)


def test_noisy_n_is_charged_first_and_counted_by_the_solver(root, nltcs):
    """With privacy.n noisy, the row count's ε adds (basic composition) and the rounds fit the rest."""
    import yaml

    raw = yaml.safe_load((root / ROOT_CFG).read_text())
    raw["privacy"]["n"] = {"epsilon": 0.2}
    raw["algorithm"]["params"].update({"best_response": "local", "local_search": {"kicks": 5}})
    res = dpsynth.release(nltcs, parse_config(raw), rng=np.random.default_rng(1))
    ledger, det = res.report["ledger"], res.report["algorithm"]["details"]
    assert ledger[0]["stage"] == "row-count"
    assert det["epsilon_by_accounting"]["zcdp"] <= 0.8
    assert res.report["privacy"]["epsilon_spent"] == pytest.approx(0.2 + det["epsilon_by_accounting"]["zcdp"])
    assert res.report["privacy"]["epsilon_spent"] <= 1.0


def test_popcount_fallback_without_numpy_bitwise_count(monkeypatch):
    from dpsynth.data.counts import _popcount

    x = np.array([[0, 1, 255, 2**64 - 1]], dtype=np.uint64)
    monkeypatch.delattr(np, "bitwise_count", raising=False)
    assert _popcount(x).tolist() == [[0, 1, 8, 64]]


@pytest.mark.slow
def test_hybrid_release_reports_cbc_facts_per_round(root, nltcs):
    cfg = _fast_cfg(root, best_response="hybrid", T=3, s=60, eta=None, solver={"max_nodes": 5})
    res = dpsynth.release(nltcs, cfg, rng=np.random.default_rng(0))
    det = res.report["algorithm"]["details"]
    assert det["solved_for"] == "eta" and len(det["rounds"]) == 3
    assert len(res.diagnostics["round_seconds"]) == 3  # run times: for callers, never in the report
    for r in det["rounds"]:
        assert {"objective", "local_objective", "cbc_status", "cbc_bound", "cbc_gap"} <= set(r)
        assert "seconds" not in r
        assert r["objective"] >= r["local_objective"]
        assert r["cbc_status"] in ("optimal", "node-limit")


# ------------------------------------------------------------------ alpha/beta (Algorithm 2)
@pytest.mark.parametrize(("params", "message"), [
    ({"alpha": 0.2}, ("algorithm.params.alpha: give beta too (Algorithm 2 derives T, s and eta from alpha and "
                     "beta together)")),
    ({"beta": 0.05}, ("algorithm.params.beta: give alpha too (Algorithm 2 derives T, s and eta from alpha and "
                     "beta together)")),
    ({"alpha": 1.5, "beta": 0.05}, "algorithm.params.alpha: must be in (0, 1), got 1.5"),
    ({"alpha": 0.2, "beta": 0.0}, "algorithm.params.beta: must be in (0, 1), got 0.0"),
    ({"alpha": 0.2, "beta": 0.05, "T": 10, "eta": 1.0},
     ("algorithm.params.alpha: alpha and beta derive T, s and eta (Algorithm 2); remove T, eta or remove alpha "
     "and beta")),
])
def test_alpha_beta_contradictions_are_config_errors(root, runner, tmp_path, params, message):
    import yaml

    raw = yaml.safe_load((root / ROOT_CFG).read_text())
    raw["algorithm"]["params"] = {"best_response": "local", **params}
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    result = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(root / "sample_data" / "nltcs.csv"),
                                 "-o", str(tmp_path / "s.csv"), "--quiet"])
    assert result.exit_code == 64
    assert result.stderr == f"dpsynth: error: {message}\n"
    assert not (tmp_path / "s.csv").exists()


def test_alpha_beta_release_reports_the_target_and_derived_parameters(root, nltcs):
    """2 marginals x 8 cells = 16 conjunctions, alpha = 0.9, beta = 0.5: T = ceil(16 ln 32/0.81) = ceil(68.46) = 69,
    s = ceil(48 ln(2 * 2^16 * 69/0.5)/0.81) = ceil(990.27) = 991; the zCDP cost 0.51 fits epsilon = 1 at n = 21,574."""
    import yaml

    raw = yaml.safe_load((root / ROOT_CFG).read_text())
    raw["workload"] = {"marginals": [["a0", "a1", "a2"], ["a3", "a4", "a5"]]}
    raw["algorithm"]["params"] = {"alpha": 0.9, "beta": 0.5, "best_response": "local", "local_search": {"kicks": 3}}
    cfg = parse_config(raw)
    report = dpsynth.release(nltcs, cfg, rng=np.random.default_rng(0)).report
    validate_report(json.loads(json.dumps(report)))
    det = report["algorithm"]["details"]
    target = det["accuracy_target"]
    assert (det["T"], det["s"], det["eta"], det["solved_for"]) == (69, 991, 0.225, "alpha,beta")
    assert (target["alpha"], target["beta"], target["T"], target["s"], target["eta"]) == (0.9, 0.5, 69, 991, 0.225)
    assert target["theorem_alpha"] <= 0.9


class _JumpingClock:
    """``time.perf_counter`` of a machine under erratic load: every reading jumps ahead by ``step`` seconds."""

    def __init__(self, step: float):
        self.now, self.step = 1000.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_rows_and_report_do_not_depend_on_the_clock_or_machine_load(root, nltcs, monkeypatch):
    """Issue 24 (risk 3): DualQuery's work is counted in kicks and CBC nodes, never in seconds.  The same data,
    seed and config run (a) normally and (b) on a "loaded machine": ``time.perf_counter`` jumps 10⁴ s at every
    reading (a wall-clock budget would be exhausted at once) and every best response is delayed by a real
    sleep.  Rows and every reported field (the solver block, each round's objectives and CBC facts) must be
    identical; only the diagnostics' measured times may differ.  Run in ``hybrid`` mode so that the local
    search and CBC (a real subprocess, node limit 5) both take part."""
    import time

    cfg = _fast_cfg(root, best_response="hybrid", T=4, s=30, eta=None, solver={"max_nodes": 5})
    a = dpsynth.release(nltcs, cfg, rng=np.random.default_rng(7))
    original = dq.best_response

    def delayed(*args, **kwargs):
        time.sleep(0.05)  # a slow machine: real time passes before every best response
        return original(*args, **kwargs)

    monkeypatch.setattr(time, "perf_counter", _JumpingClock(1e4))
    monkeypatch.setattr(dq, "best_response", delayed)
    b = dpsynth.release(nltcs, cfg, rng=np.random.default_rng(7))
    det_a, det_b = a.report["algorithm"]["details"], b.report["algorithm"]["details"]
    assert det_a["solver"] == det_b["solver"]
    assert det_a["solver"]["budget_governs"].startswith("deterministic work")
    assert det_a["rounds"] == det_b["rounds"] and det_a["rounds_solver_failed"] == det_b["rounds_solver_failed"] == {}
    assert all(r["cbc_status"] in ("optimal", "node-limit") for r in det_a["rounds"])  # CBC really ran
    assert det_a == det_b
    pd.testing.assert_frame_equal(a.synthetic, b.synthetic)


def test_old_time_settings_are_one_line_errors(root, runner, tmp_path):
    """``time_budget`` and ``solver.time_limit`` (wall clock) were removed: a config that still has one exits 64
    with one line naming the replacement, before any data is read."""
    import yaml

    for params, key, replacement in ((({"time_budget": 540}), "time_budget", "solver.max_nodes"),
                                     ({"solver": {"time_limit": 3}}, "solver.time_limit", "solver.max_nodes")):
        raw = yaml.safe_load((root / ROOT_CFG).read_text())
        raw["algorithm"]["params"].update(params)
        cfg = tmp_path / "c.yaml"
        cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
        result = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(root / "sample_data" / "nltcs.csv"),
                                     "-o", str(tmp_path / "s.csv"), "--quiet"])
        assert result.exit_code == 64
        assert result.stderr.startswith(f"dpsynth: error: algorithm.params.{key}: removed: DualQuery's budget is "
                                        "deterministic work now")
        assert replacement in result.stderr and result.stderr.count("\n") == 1
