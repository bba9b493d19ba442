"""DualQuery's CBC path: the NumPy-built program, every way CBC can fail, the work budget, the outlook."""

from __future__ import annotations

import itertools
import re
import stat
import sys

import numpy as np
import pytest

import dpsynth
from dpsynth.algorithms.dualquery import accounting as dqa
from dpsynth.algorithms.dualquery import core as dq
from dpsynth.algorithms.dualquery import solver
from dpsynth.config import parse_config
from dpsynth.data.schema import CategoricalColumn, Domain
from dpsynth.errors import ConfigError
from dpsynth.workload.conjunctions import Clauses, random_conjunctions

ROOT_CFG = "configs/nltcs-dualquery.yaml"


def _domain(sizes):
    return Domain(tuple(CategoricalColumn(f"c{i}", tuple(range(s))) for i, s in enumerate(sizes)))


def _clauses(domain, m, seed):
    rng = np.random.default_rng(seed)
    q = random_conjunctions(domain, 3, m, rng=rng)
    return Clauses.from_samples(q, rng.integers(0, 2 * len(q), size=2 * m))


# ------------------------------------------------------------------------ the program
@pytest.mark.parametrize("seed", range(3))
def test_numpy_model_encodes_the_clauses(seed):
    """For every valid row: its one-hot x with c = clause truth values meets every constraint and the
    objective is −(weighted satisfied clauses); raising any false clause's c to 1 breaks a constraint."""
    d = _domain([2, 3, 2, 4, 2])
    cl = _clauses(d, 30, seed)
    model = solver.build_model(cl, d)
    row, var, coef = model.entries
    n_var = model.n_x + model.n_clauses
    a = np.zeros((len(model.senses) + 1, n_var))
    np.add.at(a, (row, var), coef)  # row -1 (the objective) lands in the last row
    offsets = np.asarray(d.offsets)
    for rec in itertools.product(*[range(s) for s in d.sizes]):
        rec = np.array(rec)
        on = np.zeros(d.n_bits)
        on[offsets + rec] = 1
        sat = cl.satisfied(rec).astype(float)
        v = np.concatenate([on[model.bits], sat])
        lhs = a[:-1] @ v
        eq = model.senses == "E"
        assert np.array_equal(lhs[eq], model.rhs[eq]) and np.all(lhs[~eq] <= model.rhs[~eq])
        assert -a[-1] @ v == cl.objective(rec)
        for j in np.flatnonzero(sat == 0):
            bad = v.copy()
            bad[model.n_x + j] = 1
            assert np.any((a[:-1] @ bad)[~eq] > model.rhs[~eq])


def test_mps_file_is_fixed_layout(tmp_path):
    d = _domain([2, 3, 2, 3])
    cl = _clauses(d, 10, 0)
    model = solver.build_model(cl, d)
    path = tmp_path / "m.mps"
    solver.write_mps(model, str(path))
    lines = path.read_text().splitlines()
    assert lines[0].startswith("NAME") and lines[-1] == "ENDATA"
    bounds = lines[lines.index("BOUNDS") + 1:-1]
    assert len(bounds) == model.n_x + model.n_clauses
    assert bounds[0] == " BV BND       x0                   1"  # fields at columns 2, 5, 15, 25


# ---------------------------------------------------------------- CBC failing each way
_STUB = """#!{python}
import sys, time
args = sys.argv[1:]
sol = args[args.index("-solution") + 1]
mode = {mode!r}
if mode == "nonzero-exit":
    sys.exit(3)
if mode == "safety-stop":
    time.sleep(60)
text = {{
    "no-solution": b"Stopped on time (no integer solution - continuous used) - objective value -3\\n"
                   b"      0 x0  0.5  0\\n",
    "infeasible": b"Infeasible - objective value 0\\n",
    "integer-infeasible": b"Integer infeasible - objective value 0\\n",
    "unbounded": b"Unbounded - objective value 0\\n",
    "unreadable-solution": b"garbage line\\n",
    "not-text": b"\\xff\\xfe\\x00\\n",
    "bad-number": b"Optimal - objective value -1\\n      0 x0  one  0\\n",
    "invalid-solution": b"Optimal - objective value -1\\n      0 x0  0.5  0\\n      1 x1  0.5  0\\n",
}}.get(mode)
if text is not None:
    open(sol, "wb").write(text)
"""

CAUSES = {  # stub mode -> the cause the report must count
    "nonzero-exit": "nonzero-exit",
    "safety-stop": "safety-stop",
    "no-solution": "no-solution",
    "infeasible": "infeasible",
    "integer-infeasible": "infeasible",
    "unbounded": "unbounded",
    "unreadable-solution": "unreadable-solution",
    "not-text": "unreadable-solution",
    "bad-number": "unreadable-solution",
    "no-file": "unreadable-solution",
    "invalid-solution": "invalid-solution",
}


@pytest.fixture
def stub_cbc(tmp_path, monkeypatch):
    """Replace the CBC binary on the command line by a script that fails in the given way."""

    def install(mode):
        path = tmp_path / f"cbc-{mode}"
        path.write_text(_STUB.format(python=sys.executable, mode=mode))
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        original = solver.cbc_command
        monkeypatch.setattr(solver, "cbc_command", lambda *a: [str(path), *original(*a)[1:]])
        return path

    return install


@pytest.mark.parametrize("mode", sorted(CAUSES))
def test_every_cbc_failure_is_a_result_not_an_exception(mode, stub_cbc):
    stub_cbc(mode)
    d = _domain([2, 3, 2, 3, 2])
    cl = _clauses(d, 20, 1)
    safety = 0.5 if mode == "safety-stop" else 30.0  # the "safety-stop" stub hangs: stop it soon
    res = solver.solve_clauses_ip(cl, d, base=np.zeros(5, dtype=np.int64), incumbent=None, max_nodes=10,
                                  gap=0.0, threads=1, safety_seconds=safety)
    assert (res.status, res.failure, res.codes, res.objective) == ("failed", CAUSES[mode], None, None)


def test_binary_gone_at_run_time(monkeypatch, stub_cbc):
    """The binary was there at config time but not when a round runs: both ways it can show."""
    import pulp

    d = _domain([2, 3, 2])
    cl = _clauses(d, 5, 2)
    kw = {"base": np.zeros(3, dtype=np.int64), "incumbent": None, "max_nodes": 10, "gap": 0.0, "threads": 1}
    path = stub_cbc("nonzero-exit")
    path.unlink()  # exec fails: OSError
    assert solver.solve_clauses_ip(cl, d, **kw).failure == "missing-binary"
    monkeypatch.setattr(pulp.PULP_CBC_CMD, "available", lambda self: False)
    assert solver.solve_clauses_ip(cl, d, **kw).failure == "missing-binary"


@pytest.mark.parametrize("mode", ["hybrid", "ip"])
def test_failed_round_keeps_the_heuristic_row(mode, stub_cbc):
    stub_cbc("nonzero-exit")
    d = _domain([2, 3, 2, 3, 2])
    cl = _clauses(d, 30, 3)
    p = dq.parse_params({"best_response": mode, "local_search": {"kicks": 5}})
    rec, info = dq.best_response(cl, d, p, previous=None, rng=np.random.default_rng(0))
    assert info["cbc_failure"] == "nonzero-exit" and info["cbc_status"] == "failed"
    assert info["objective"] == info["local_objective"] == cl.objective(rec)
    assert np.all((rec >= 0) & (rec < np.asarray(d.sizes)))


def _nltcs_cfg(root, **params):
    import yaml

    raw = yaml.safe_load((root / ROOT_CFG).read_text())
    raw["algorithm"]["params"].update({"T": 4, "s": 40, "eta": None, "local_search": {"kicks": 5}, **params})
    return parse_config(raw)


@pytest.fixture
def nltcs(root):
    import pandas as pd

    return pd.read_csv(root / "sample_data" / "nltcs.csv")


def test_release_survives_a_failing_solver_and_counts_the_causes(root, nltcs, stub_cbc):
    stub_cbc("infeasible")
    res = dpsynth.release(nltcs, _nltcs_cfg(root, best_response="hybrid"), rng=np.random.default_rng(0))
    det = res.report["algorithm"]["details"]
    assert det["rounds_solver_failed"] == {"infeasible": 4}
    assert all(r["cbc_failure"] == "infeasible" for r in det["rounds"])
    failures = [w for w in res.report["warnings"] if "CBC failed" in w]
    assert failures == [
        ("dualquery: CBC failed in 4 of 4 rounds (infeasible 4); those rounds kept the local-search row "
        "(an approximate best response; privacy is unaffected)")
    ]
    assert len(res.synthetic) == len(nltcs)


def test_release_without_failures_reports_none(root, nltcs):
    res = dpsynth.release(nltcs, _nltcs_cfg(root, best_response="local"), rng=np.random.default_rng(0))
    det = res.report["algorithm"]["details"]
    assert det["rounds_solver_failed"] == {} and "rounds_solver_skipped" not in det
    assert not [w for w in res.report["warnings"] if "CBC failed" in w]


def test_safety_stop_is_flagged_in_the_report(root, nltcs, stub_cbc):
    """The one machine-dependent outcome: CBC killed by solver.safety_seconds.  The round keeps the local-search
    row, the report counts the cause and a warning says the release depends on the machine."""
    stub_cbc("safety-stop")
    res = dpsynth.release(nltcs, _nltcs_cfg(root, T=2, s=20, best_response="hybrid", solver={"safety_seconds": 0.5}),
                          rng=np.random.default_rng(0))
    det = res.report["algorithm"]["details"]
    assert det["rounds_solver_failed"] == {"safety-stop": 2}
    assert all(r["objective"] == r["local_objective"] for r in det["rounds"])
    assert [w for w in res.report["warnings"] if "safety stop" in w] == [
        ("dualquery: the wall-clock safety stop (solver.safety_seconds = 0.5) ended CBC in 2 rounds, so this release "
         "depends on the machine's speed and load and a rerun with the same seed may differ: lower solver.max_nodes "
         "or raise solver.safety_seconds")
    ]


def test_real_cbc_at_its_smallest_node_limit_never_raises():
    """Real CBC on a 200-bit instance with no branching at all (max_nodes 0), cold and warm-started: whatever
    CBC does, a result comes back, and twice the same call gives the same result."""
    d = _domain([2] * 100)
    cl = _clauses(d, 400, 4)
    base = np.zeros(100, dtype=np.int64)
    for incumbent in (None, base):
        runs = [solver.solve_clauses_ip(cl, d, base=base, incumbent=incumbent, max_nodes=0, gap=0.0, threads=1)
                for _ in range(2)]
        res = runs[0]
        assert res.failure in (None, *solver.FAILURES)
        if res.failure is None:
            assert res.objective == cl.objective(res.codes)
            assert res.status in ("optimal", "node-limit")
            assert np.array_equal(runs[1].codes, res.codes) and (runs[1].bound, runs[1].status) == (res.bound,
                                                                                                     res.status)


# ------------------------------------------------------------------------ work budget
def test_work_budget_is_public_echoed_and_validated(root, nltcs):
    res = dpsynth.release(nltcs, _nltcs_cfg(root, best_response="local"), rng=np.random.default_rng(0))
    det = res.report["algorithm"]["details"]
    assert {k: v for k, v in det["solver"].items() if k != "budget_governs"} == {
        "max_nodes": 100, "gap": 0.0, "threads": 1, "safety_seconds": 600.0, "local_search_kicks": 5,
        "local_search_max_kicks": 1000, "local_search_restarts": 2}
    assert det["solver"]["budget_governs"] == dq.BUDGET_GOVERNS
    assert "seconds" not in json_text(det["rounds"])
    for raw, msg in (({"solver": {"max_nodes": -1}}, "algorithm.params.solver.max_nodes: must be >= 0, got -1"),
                     ({"solver": {"safety_seconds": 0}},
                      "algorithm.params.solver.safety_seconds: must be a number of seconds > 0, got 0.0"),
                     ({"local_search": {"max_kicks": -1}},
                      "algorithm.params.local_search: restarts, kicks and max_kicks must be >= 0")):
        with pytest.raises(ConfigError, match=re.escape(msg)):
            dq.parse_params({"best_response": "local", **raw})
    assert dq.parse_params({}).best_response == "local"


def json_text(report) -> str:
    import json

    return json.dumps(report)


def test_max_kicks_bounds_the_local_search(monkeypatch):
    """No kick at all with max_kicks 0 (one ascent per start), exactly max_kicks kicks when no stale run stops
    it first: the local search's work is a count, not a time."""
    d = _domain([2, 3, 2, 3, 2])
    cl = _clauses(d, 30, 5)
    calls = []

    class Spy(dq._Instance):
        def ascend(self, rec, rng):
            calls.append(1)
            return super().ascend(rec, rng)

    monkeypatch.setattr(dq, "_instance", lambda clauses, domain: Spy(clauses, domain))
    for max_kicks in (0, 7):
        calls.clear()
        dq.local_search(cl, d, starts=[np.zeros(5, dtype=np.int64)], kicks=10**6, max_kicks=max_kicks,
                        rng=np.random.default_rng(0))
        assert len(calls) == 1 + max_kicks


# --------------------------------------------------------------------------- outlook
def test_theorem_alpha_is_vacuous_on_the_papers_kdd_setting():
    """η + ln|Q|/(ηT) + 2√(3 ln(2|X|T/β)/s) for η = 1.2, T = 170, s = 1750, 10⁵ queries, 200 binary bits."""
    a = dqa.theorem_alpha(T=170, s=1750, eta=1.2, n_queries=100_000, log_universe=200 * np.log(2))
    expected = 1.2 + np.log(2e5) / (1.2 * 170) + 2 * np.sqrt(3 * (np.log(2 * 170 / 0.05) + 200 * np.log(2)) / 1750)
    assert a == pytest.approx(expected, rel=1e-12) and a > 1


@pytest.mark.parametrize(("n", "verdict", "T"), [(1_000, "poor", 11), (21_574, "weak", 50), (494_021, "good", 242)])
def test_outlook_verdict_follows_the_rounds_that_fit(root, n, verdict, T):
    import dataclasses

    cfg = dataclasses.replace(_nltcs_cfg(root), params=dq.parse_params({"eta": 1.2, "best_response": "local"}))
    view = dq.outlook(cfg, n)
    assert (view.verdict, view.T, view.s) == (verdict, T, 10 * T)
    assert view.useful == (verdict != "poor") and view.resolution == 1 / T
    if verdict == "poor":
        assert view.message == (
            f"dualquery: at n={n}, epsilon=1 only T={T} rounds fit the budget, so the synthetic data has at most "
            f"{T} distinct records; with so few DualQuery was worse than the uniform distribution in our "
            "benchmarks: prefer mwem or laplace (docs/dualquery.md)"
        )
    elif verdict == "good":
        assert view.message is None


def test_outlook_is_announced_before_the_rounds(root, nltcs):
    events = []
    cfg = _nltcs_cfg(root, best_response="local")  # T = 4: poor
    dpsynth.release(nltcs, cfg, rng=np.random.default_rng(0), progress=lambda *a: events.append(("progress", a)),
                    notice=lambda m: events.append(("notice", m)))
    kinds = [e[0] for e in events]
    assert kinds[0] == "notice" and "only T=4 rounds fit" in events[0][1]
    assert kinds.count("notice") == 1


def test_cli_prints_the_outlook_before_the_run(root, runner, tmp_path):
    import yaml

    from dpsynth.cli import app

    raw = yaml.safe_load((root / ROOT_CFG).read_text())
    raw["algorithm"]["params"].update({"T": 4, "s": 40, "eta": None, "best_response": "local",
                                       "local_search": {"kicks": 5}})
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    result = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(root / "sample_data" / "nltcs.csv"),
                                 "-o", str(tmp_path / "s.csv"), "--seed", "3"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.stderr.split())  # the console may wrap long lines
    expected = ("notice: dualquery: at n=21574, epsilon=1 only T=4 rounds fit the budget, so the synthetic data has "
                "at most 4 distinct records; with so few DualQuery was worse than the uniform distribution in our "
                "benchmarks: prefer mwem or laplace (docs/dualquery.md)")
    assert expected in text


@pytest.mark.parametrize(("rows", "verdict"), [(1_000, "poor"), (494_021, "good")])
def test_plan_shows_the_outlook(root, rows, verdict):
    """`dpsynth plan` lists DualQuery's outlook among its notes (public facts only)."""
    import dataclasses

    from dpsynth.plan import make_plan

    cfg = dataclasses.replace(_nltcs_cfg(root), params=dq.parse_params({"eta": 1.2, "best_response": "local"}))
    notes = [n for n in make_plan(cfg, rows=rows).alg.notes if n.startswith("accuracy outlook")]
    assert len(notes) == 1 and notes[0].startswith(f"accuracy outlook: {verdict} (at most T=")
    assert ("only T=11 rounds fit the budget" in notes[0]) == (verdict == "poor")
