"""iReduct over counting queries (workload.queries) and PickQueries for the maximum relative error (§4.3)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import yaml

import dpsynth
from dpsynth.algorithms.ireduct import MAX_MARGIN, Pick, ireduct_groups, ireduct_marginals, max_error_weights
from dpsynth.cli import app
from dpsynth.config import parse_config
from dpsynth.errors import ConfigError
from dpsynth.privacy.allocation import PatternCostAllocation
from tests.privacy.audit import tiny_neighbours, tiny_raw_config

# (x, x) lies in q_ax and q_bx only, (z, z) in q_az and q_bz only: replace-one moves 4 answers by 1
QUERIES = [{"where": {"a": "x"}, "name": "q_ax"}, {"where": {"b": "x"}, "name": "q_bx"},
           {"where": {"a": "z"}, "name": "q_az"}, {"where": {"b": ["z"]}, "name": "q_bz", "sanity_bound": 3}]


def _raw(neighbouring="replace-one", **params):
    raw = tiny_raw_config("ireduct", neighbouring)
    raw["algorithm"]["params"].update({"lambda_delta": 0.5, **params})
    raw["workload"] = {"queries": QUERIES}
    return raw


@pytest.mark.parametrize(("neighbouring", "sensitivity"), [("replace-one", 4.0), ("add-remove", 2.0)])
def test_release_charges_the_generalized_sensitivity_once(neighbouring, sensitivity):
    d, _ = tiny_neighbours(neighbouring, n=60)
    res = dpsynth.release(d, parse_config(_raw(neighbouring)), rng=np.random.default_rng(4))
    charges = [c for c in res.report["ledger"] if c["mechanism"] == "laplace+noisedown"]
    det = res.report["algorithm"]["details"]
    assert len(charges) == 1 and charges[0]["count"] == 4 and charges[0]["sensitivity"] == sensitivity
    scales = np.array([r["scale"] for r in det["queries"]])
    # Definition 4 by hand: every row is in one a-query and one b-query; the worst pairs the largest 1/λ of each
    gs = sensitivity / 2 * (max(1 / scales[0], 1 / scales[2]) + max(1 / scales[1], 1 / scales[3]))
    assert gs <= charges[0]["epsilon"] <= gs * (1 + 1e-9)
    eps = res.report["privacy"]["epsilon_requested"] - (0.2 if neighbouring == "add-remove" else 0.0)
    assert charges[0]["epsilon"] <= eps and charges[0]["epsilon"] >= 0.9 * eps  # the budget is used
    assert [r["name"] for r in det["queries"]] == ["q_ax", "q_bx", "q_az", "q_bz"]
    assert [r["sanity_bound"] for r in det["queries"]][3] == 3.0
    assert det["query_sensitivity"] == sensitivity and list(res.synthetic.columns) == ["a", "b"]
    assert res.marginals is None  # no marginals: the answers are in the report


def test_answers_are_unbiased_laplace_around_the_truth():
    """Chains on two overlapping queries, many seeds: each answer's mean is within 6 standard errors of the
    true count (false-failure rate ~4e-9 for the two).  Laplace(λ) has variance 2λ²; the final scales vary by
    run, so the standard error uses each run's own scale."""
    patterns = np.array([[True, True]])
    true = np.array([30.0, 5.0])
    got, scales = [], []
    for seed in range(120):
        budget = PatternCostAllocation(1.0, 2.0, patterns, np.full(2, 40.0))
        res = ireduct_groups(true, np.ones(2, dtype=np.int64), budget, lambda_max=40.0, lambda_delta=4.0,
                             sanity_bound=1.0, rng=np.random.default_rng(seed), refresh=0.0)
        assert budget.total <= 1.0
        got.append(res.values[0])
        scales.append(res.scales)
    got, scales = np.array(got), np.array(scales)
    se = np.sqrt(np.sum(2 * scales**2, axis=0)) / len(got)
    assert np.all(np.abs(got.mean(axis=0) - true) <= 6 * se)


def test_lambda_max_too_small_for_the_queries():
    with pytest.raises(ConfigError, match=re.escape(
            "algorithm.params.lambda_max: 2 cannot pay for the first draw of the queries (sensitivity 4, cost 2 > "
            "epsilon 1); raise it to at least 4")):
        dpsynth.release(tiny_neighbours("replace-one")[0], parse_config(_raw(lambda_max=2.0)),
                        rng=np.random.default_rng(0))


def test_evaluate_workload_scores_released_answers_cli(runner, tmp_path):
    cfg = tmp_path / "q.yaml"
    cfg.write_text(yaml.safe_dump(_raw()))
    d, _ = tiny_neighbours("replace-one", n=60)
    d.to_csv(tmp_path / "real.csv", index=False)
    out = tmp_path / "s.csv"
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(tmp_path / "real.csv"), "-o", str(out),
                              "--seed", "2", "--silent"])
    assert res.exit_code == 0, res.stderr
    res = runner.invoke(app, ["evaluate", "-c", str(cfg), "--real", str(tmp_path / "real.csv"), "--synthetic", str(out),
                              "--workload", "--json", str(tmp_path / "e.json"), "-q"])
    assert res.exit_code == 0, res.stderr
    got = json.loads((tmp_path / "e.json").read_text())["queries"]
    answers = json.loads((tmp_path / "s.csv.report.json").read_text())["algorithm"]["details"]["queries"]
    truth = np.array([(d["a"] == "x").sum(), (d["b"] == "x").sum(), (d["a"] == "z").sum(), (d["b"] == "z").sum()])
    delta = np.array([60e-4, 60e-4, 60e-4, 3.0])  # default 1e-4·n, q_bz its own
    rel = np.abs(np.array([a["answer"] for a in answers]) - truth) / np.maximum(truth, delta)
    assert got["queries"] == 4
    assert got["relative_error_mean"]["released"] == pytest.approx(rel.mean(), rel=1e-12)
    assert got["relative_error_max"]["released"] == pytest.approx(rel.max(), rel=1e-12)
    assert set(got["relative_error_mean"]) == {"synthetic", "uniform", "zeros", "independent", "released"}


# ---------------------------------------------------------------- pick: max (§4.3)
def test_max_error_weights_hand_case():
    """Cells (10, 0.5) at scale 1, margin 2, δ = 1: d = (8, 1); max(H_1/1, H_2/8) = 1.  Cell 40 at scale 10:
    d = max(40 − 20, 1) = 20, weight 1/20."""
    values, seg = np.array([10.0, 0.5, 40.0]), np.array([0, 0, 1])
    w = max_error_weights(values, seg, [2, 1], np.array([1.0, 1.0, 10.0]), 1.0, margin=2.0)
    assert w == pytest.approx([1.0, 1 / 20])
    # two small cells: H_2/1 = 1.5 (the larger of two exponentials has mean 1.5 λ)
    assert max_error_weights(np.array([0.0, 0.0]), np.array([0, 0]), [2], np.ones(2), 1.0, margin=2.0) == [1.5]


def test_pick_max_threshold_is_where_the_priority_reaches_the_level():
    p = Pick("max", np.array([0, 1]), np.array([1, 1]), np.ones(2), margin=MAX_MARGIN)
    w, lam = np.array([0.5, 2.0]), np.array([4.0, 4.0])
    level = 3.0
    thr = p.threshold(level, w, 0.1)
    assert np.allclose(p.priority(w, thr, 0.1), level)
    assert p.priority(w, lam, 0.1).tolist() == [2.0, 8.0]


def test_pick_max_equalises_the_estimated_worst_error():
    """Two noiseless-looking marginals (counts ≫ noise): one with a cell at 0, one with cells ≥ 1000.
    pick: max gives the small-cell marginal the smaller scale, and spends the budget."""
    true = [np.array([0.0, 5000.0]), np.array([1000.0, 4000.0])]
    res = ireduct_marginals(true, sensitivity=1.0, epsilon=1.0, lambda_max=100.0, lambda_delta=0.01,
                            sanity_bound=10.0, rng=np.random.default_rng(0), pick="max")
    assert res.scales[0] < res.scales[1]
    assert 1 / res.scales[0] + 1 / res.scales[1] <= 1.0 <= (1 / res.scales[0] + 1 / res.scales[1]) * (1 + 1e-3)


def test_pick_max_refuses_error_weight_sum():
    raw = tiny_raw_config("ireduct")
    raw["algorithm"]["params"].update({"pick": "max", "error_weight": "sum"})
    with pytest.raises(ConfigError, match=re.escape(
            "algorithm.params.error_weight: applies to pick: average only (pick: max ranks marginals by their "
            "estimated largest relative error); remove it")):
        parse_config(raw)


def test_oracle_refuses_a_queries_workload_cli(runner, tmp_path):
    cfg = tmp_path / "q.yaml"
    cfg.write_text(yaml.safe_dump(_raw()))
    tiny_neighbours("replace-one")[0].to_csv(tmp_path / "real.csv", index=False)
    res = runner.invoke(app, ["oracle", "-c", str(cfg), "-i", str(tmp_path / "real.csv")])
    assert res.exit_code == 64
    assert res.stderr.endswith("dpsynth: error: workload.queries: Oracle (iReduct §5.2) sets one noise scale per "
                               "marginal; give workload.marginals to compare with it\n")
