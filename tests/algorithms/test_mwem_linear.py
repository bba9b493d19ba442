"""MWEM over general linear queries q(x) ∈ [−1, 1] (paper §2, Figure 1) from ``workload.linear``."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest

import dpsynth
from dpsynth.algorithms import mwem
from dpsynth.algorithms.base import AlgorithmContext
from dpsynth.cli import app
from dpsynth.config import parse_config
from dpsynth.data.counts import ArrayCounts
from dpsynth.data.discretize import encode
from dpsynth.errors import ConfigError
from dpsynth.models.factored import FactoredModel, Measurement
from dpsynth.pipeline import preflight
from dpsynth.privacy import Neighbouring
from dpsynth.privacy.accountant import Ledger

# Two queries over (color, flag) and one over color alone; "xor" has fractional weights.
QUERIES = [
    {"name": "red minus blue", "columns": ["color"], "weights": [1, 0, -1]},
    {"name": "xor", "columns": ["color", "flag"], "weights": [0.5, -0.5, -0.25, 0.25, 1, -1]},
]


def _raw(tiny_raw_config, params=None, neighbouring="add-remove", queries=QUERIES):
    return {**tiny_raw_config, "privacy": {"epsilon": 1.0, "neighbouring": neighbouring},
            "algorithm": {"name": "mwem", "params": {"marginal_queries": "none", "init": "uniform",
                                                      "iterations": 2, **(params or {})}},
            "workload": {"marginals": [["color", "flag"]], "linear": {"queries": queries}}}


def _context(cfg, table):
    counts = ArrayCounts(encode(table, cfg.domain), cfg.domain)
    return AlgorithmContext(domain=cfg.domain, counts=counts, ledger=Ledger(1.0, 0.0),
                            neighbouring=cfg.privacy.neighbouring, n=float(counts.n), rows=counts.n,
                            workload=cfg.marginals, queries=cfg.workload)


def test_mw_update_with_a_general_query_by_hand():
    """Figure 1 step 3 with q = (1, −0.5) on a 2-value domain, n = 10, A uniform: q(A) = 5 − 2.5 = 2.5; with
    m = 6.5 the step is (m − q(A))/(2n) = 0.2, so A(x) ∝ 5·exp(0.2·q(x)) = 5·(e^0.2, e^−0.1)."""
    model = FactoredModel([2], 10.0)
    model.mw_update(Measurement((0,), np.array([6.5]), np.array([[1.0, -0.5]])))
    expected = 10 * np.array([math.exp(0.2), math.exp(-0.1)]) / (math.exp(0.2) + math.exp(-0.1))
    np.testing.assert_allclose(model.project((0,)), expected, rtol=1e-14)


def test_scores_are_absolute_errors_and_measurements_keep_negative_answers(tiny_raw_config, tiny_table):
    """s(B, q) = |q(A) − q(B)| for every query (A uniform), and a negative noisy answer is clipped to
    [n·min q, n·max q], not to [0, n]."""
    negated = [{**q, "name": "minus " + q["name"], "weights": [-w for w in q["weights"]]} for q in QUERIES]
    queries = QUERIES + negated  # so some signed error q(A) − q(B) is negative
    cfg = parse_config(_raw(tiny_raw_config, queries=queries))
    ctx = _context(cfg, tiny_table)
    fam = mwem._Linear(ctx, cfg.workload.linear)
    model = FactoredModel(cfg.domain.sizes, ctx.n)
    order = [q for s in fam.sets for q in s.names]
    by_name = {q["name"]: q for q in queries}
    true = [np.asarray(by_name[n]["weights"], float)
            @ ctx.counts.marginal(cfg.domain.indices(by_name[n]["columns"])).reshape(-1) for n in order]
    uniform = [np.mean(by_name[n]["weights"]) * ctx.n for n in order]
    signed = np.subtract(uniform, true)
    assert signed.min() < 0 < signed.max()
    scores = fam.scores(model, np.ones(len(fam.sets), dtype=bool))
    np.testing.assert_allclose(scores, np.abs(signed), rtol=1e-12)
    assert fam.value_range(1) == (-1.0, 1.0) and fam.value_range(0) == (-1.0, 1.0)
    params = mwem.resolve(ctx, cfg.params)
    m = mwem._measurement((0,), np.array([-3.0 * ctx.n]), None, 1.0, params, ctx.n, False, fam.value_range(0))
    assert m.values.tolist() == [-ctx.n]


@pytest.mark.parametrize(("neighbouring", "sensitivity"), [("add-remove", 1.0), ("replace-one", 2.0)])
def test_sensitivity_and_noise_per_query(tiny_raw_config, tiny_table, neighbouring, sensitivity):
    """A [−1, 1] query moves by 1 when a row is added or removed and by 2 when one is replaced; integer
    weights are measured with integer noise, fractional ones with continuous noise."""
    cfg = parse_config(_raw(tiny_raw_config, neighbouring=neighbouring))
    res = dpsynth.release(tiny_table, cfg, rng=np.random.default_rng(3))
    ledger = [e for e in res.report["ledger"] if e["stage"].startswith("mwem")]
    assert [e["stage"] for e in ledger] == ["mwem-select", "mwem-measure"] * 2
    assert {e["sensitivity"] for e in ledger} == {sensitivity}
    mech = {e["measured"]: e["mechanism"] for e in ledger if e["stage"] == "mwem-measure"}
    assert mech == {"linear(red minus blue)": "discrete-laplace", "linear(xor)": "laplace"}
    assert res.report["algorithm"]["details"]["query_classes"] == {"linear": 2}
    assert res.report["privacy"]["epsilon_spent"] == pytest.approx(1.0, rel=1e-12)


def test_linear_sensitivity_of_the_neighbouring_relations():
    assert Neighbouring.ADD_REMOVE.linear_sensitivity(-1.0, 0.5) == 1.0
    assert Neighbouring.REPLACE_ONE.linear_sensitivity(-1.0, 0.5) == 1.5
    assert Neighbouring.REPLACE_ONE.linear_sensitivity(0.0, 1.0) == 1.0  # a counting query
    assert Neighbouring.ADD_REMOVE.linear_sensitivity(-0.25, 0.0) == 0.25


def test_mwem_fits_a_linear_query(tiny_raw_config):
    """With a large ε the measured query's answer on the model approaches the truth (post-processing of a
    Laplace draw of scale 2T/ε = 4·10⁻³ and MW passes): error far below the uniform start's."""
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"color": rng.choice(["red", "green", "blue"], 400, p=[0.7, 0.2, 0.1]),
                          "size": 1.0, "count": 1, "flag": rng.integers(0, 2, 400)})
    raw = _raw(tiny_raw_config, {"iterations": 1, "mw_passes": 50}, queries=QUERIES[:1])
    raw["privacy"]["epsilon"] = 1000.0
    cfg = parse_config(raw)
    res = dpsynth.release(table, cfg, rng=np.random.default_rng(1))
    model_color = res.model.model.project((0,))
    true = (table.color == "red").sum() - (table.color == "blue").sum()
    assert abs(model_color[0] - model_color[2] - true) < 0.01 * abs(true)


def test_variant_and_size_guards_before_any_data(tiny_raw_config):
    cfg = parse_config(_raw(tiny_raw_config, {"variant": "pgm"}))
    with pytest.raises(ConfigError, match=re.escape(
            "algorithm.params.variant: pgm measures marginals only; use variant: paper with workload.ranges or "
            "workload.linear") + "$"):
        preflight(cfg)
    cfg = parse_config(_raw(tiny_raw_config, {"max_factor_cells": 4}))
    with pytest.raises(ConfigError, match=re.escape(
            "workload.linear: query 'xor' depends on columns (color, flag) with 6 cells, more than "
            "algorithm.params.max_factor_cells (4); MWEM could never measure it (raise max_factor_cells or write "
            "the query over fewer columns)") + "$"):
        preflight(cfg)
    raw = _raw(tiny_raw_config)
    raw["limits"] = {"max_cells": 5}
    raw["workload"]["marginals"] = [["color"]]
    with pytest.raises(ConfigError, match=re.escape(
            "workload.linear: the largest query support has 6 cells, more than the limit of 5 (raise --max-cells "
            "/ limits.max_cells or use queries over fewer columns)") + "$"):
        preflight(parse_config(raw))
    default = _raw(tiny_raw_config)
    default["algorithm"]["params"] = {}
    assert mwem.variant_of(parse_config(default).params, True) == "paper"


def test_cli_release_and_evaluate_the_linear_workload(runner, tmp_path, tiny_raw_config, tiny_table):
    """End to end: a terms file, a release, the report's workload, and evaluate --workload on the queries."""
    (tmp_path / "q.csv").write_text('query,weight,color,size\nred big,1,red,"[8, 10]"\nred big,-0.5,blue,\n')
    raw = _raw(tiny_raw_config, {"iterations": 2, "marginal_queries": "cuboids"})
    raw["workload"]["linear"] = {"file": str(tmp_path / "q.csv")}
    import yaml

    (tmp_path / "c.yaml").write_text(yaml.safe_dump(raw))
    tiny_table.to_csv(tmp_path / "real.csv", index=False)
    args = ["release", "-c", str(tmp_path / "c.yaml"), "-i", str(tmp_path / "real.csv"), "-o",
            str(tmp_path / "s.csv"), "--seed", "1", "-q"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    report = json.loads((tmp_path / "s.csv.report.json").read_text())
    assert report["workload"]["linear"]["queries"] == 1
    assert report["workload"]["linear"]["sets"] == [{"columns": ["color", "size"], "queries": 1}]
    res = runner.invoke(app, ["evaluate", "-c", str(tmp_path / "c.yaml"), "--real", str(tmp_path / "real.csv"),
                              "--synthetic", str(tmp_path / "s.csv"), "--workload", "--json", "-", "-q"])
    assert res.exit_code == 0, res.output
    lin = json.loads(res.stdout)["linear_queries"]
    assert lin["queries"] == 1 and lin["columns"] == ["color", "size"]
    assert 0 <= lin["error_mean"]["synthetic"] == lin["error_max"]["synthetic"] <= 1


def test_cli_refuses_a_bad_query_file_before_reading_data(runner, tmp_path, tiny_raw_config):
    (tmp_path / "q.csv").write_text("query,weight,color\nq,1.5,red\n")
    raw = _raw(tiny_raw_config)
    raw["workload"]["linear"] = {"file": str(tmp_path / "q.csv")}
    import yaml

    (tmp_path / "c.yaml").write_text(yaml.safe_dump(raw))
    res = runner.invoke(app, ["release", "-c", str(tmp_path / "c.yaml"), "-i", str(tmp_path / "absent.csv"),
                              "-o", str(tmp_path / "s.csv")])
    assert res.exit_code == 64
    assert res.stderr == ("dpsynth: error: workload.linear: query 'q' has q(x) = 1.5 on "
                          "some records; every q(x) must lie in [-1, 1] (the sum of the weights of the terms a record "
                          "satisfies)\n")
    assert not (tmp_path / "s.csv").exists()


@pytest.mark.parametrize(("params", "candidates"), [
    ({"iterations": 4}, 2),  # marginal_queries none: the 2 linear queries
    ({"iterations": 4, "marginal_queries": "cuboids"}, 3),  # + the (color, flag) marginal
    ({"iterations": 9, "marginal_queries": "cells"}, 8),  # + its 6 cells
])
def test_too_many_rounds_refused_before_any_data(tiny_raw_config, params, candidates):
    """Without reselect each round measures a new candidate: the count comes from the configuration."""
    cfg = parse_config(_raw(tiny_raw_config, params))
    assert mwem.candidate_count(cfg.domain, cfg.workload, cfg.params) == candidates
    with pytest.raises(ConfigError, match=re.escape(
            f"algorithm.params.iterations: {params['iterations']} rounds but only {candidates} candidate queries "
            "(lower iterations, leave it unset, or set reselect: true)") + "$"):
        preflight(cfg)
    preflight(parse_config(_raw(tiny_raw_config, {**params, "reselect": True})))


def test_nothing_to_query_refused_before_any_data(tiny_raw_config):
    raw = _raw(tiny_raw_config)
    del raw["workload"]["linear"]
    raw["algorithm"]["params"]["variant"] = "paper"
    with pytest.raises(ConfigError, match=re.escape(
            "algorithm.params.marginal_queries: is 'none' but neither workload.ranges nor workload.linear is set; "
            "there is nothing to query") + "$"):
        preflight(parse_config(raw))


def test_each_query_measured_at_its_own_sensitivity(tiny_raw_config, tiny_table):
    """Under replace-one a 0/1 query moves by 1 and a ±1 query by 2: each is measured at its own bound, and the
    selection (one exponential mechanism over both) at the larger."""
    queries = [{"name": "red", "columns": ["color"], "weights": [1, 0, 0]}, QUERIES[0]]
    cfg = parse_config(_raw(tiny_raw_config, neighbouring="replace-one", queries=queries))
    res = dpsynth.release(tiny_table, cfg, rng=np.random.default_rng(5))
    ledger = [e for e in res.report["ledger"] if e["stage"].startswith("mwem")]
    assert {e["sensitivity"] for e in ledger if e["stage"] == "mwem-select"} == {2.0}
    assert {e["measured"]: e["sensitivity"] for e in ledger if e["stage"] == "mwem-measure"} == {
        "linear(red)": 1.0, "linear(red minus blue)": 2.0}
