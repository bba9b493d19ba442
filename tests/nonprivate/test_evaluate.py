"""Table-level evaluation and the ``dpsynth evaluate`` command (exact checks; no statistical tolerance)."""

from __future__ import annotations

import itertools
import json
import re

import jsonschema
import numpy as np
import pandas as pd
import pytest
import yaml

from dpsynth.algorithms.base import NoisyMarginal
from dpsynth.cli import app
from dpsynth.config import parse_config
from dpsynth.errors import DataError, UsageError
from dpsynth.nonprivate.evaluate import METHODS, NOT_PRIVATE, EvalOptions, evaluate
from dpsynth.pipeline import marginals_table

SYNTH_METRICS = ["l1_mean", "l1_max", "tv_mean", "tv_max", "cell_error_mean", "cell_error_max",
                 "cuboid_error_mean", "cuboid_error_max", "relative_error"]


def _eval(real, synth, cfg, seed=0, **opts):
    return evaluate(real, synth, cfg, rng=np.random.default_rng(seed), options=EvalOptions(**opts))


@pytest.fixture
def tiny_cfg(tiny_raw_config):
    return parse_config(tiny_raw_config)


def test_identical_tables_give_zero_error(tiny_cfg, tiny_table):
    res = _eval(tiny_table, tiny_table.copy(), tiny_cfg, target="color")
    for block in res["marginals"]:
        assert all(block["metrics"]["synthetic"][key] == 0.0 for key in SYNTH_METRICS)
    assert res["relative_entropy"]["relative_entropy"]["synthetic"] == 0.0
    assert res["relative_entropy"]["real_mass_on_empty_synthetic_cells"] == 0.0
    assert res["range_queries"]["squared_error_mean"]["synthetic"] == 0.0
    # the classifier trained on an identical table scores like one trained on all real rows
    assert res["classifier"]["synthetic"] >= res["classifier"]["majority_class_rate"] - 1e-12


def test_baselines_hand_computed():
    """Two binary columns, rows (0,0),(0,1),(1,1),(1,1): true 2-way p = [[.25,.25],[0,.5]].

    uniform .25 each: L1 = .5; zeros [[1,0],[0,0]]: L1 = .75+.25+0+.5 = 1.5;
    independent [.5,.5]⊗[.25,.75]: L1 = 4 × .125 = .5.
    """
    cfg = parse_config({"schema": {"columns": {"a": {"type": "categorical", "categories": [0, 1]},
                                               "b": {"type": "categorical", "categories": [0, 1]}}},
                        "privacy": {"epsilon": 1.0}, "algorithm": {"name": "laplace"}})
    real = pd.DataFrame({"a": ["0", "0", "1", "1"], "b": ["0", "1", "1", "1"]})
    res = _eval(real, real, cfg, ks=(2,), ranges=0)
    m = res["marginals"][0]["metrics"]
    assert m["uniform"]["l1_mean"] == pytest.approx(0.5)
    assert m["zeros"]["l1_mean"] == pytest.approx(1.5)
    assert m["independent"]["l1_mean"] == pytest.approx(0.5)
    assert m["zeros"]["cell_error_max"] == pytest.approx(0.75)
    # cuboid error on counts (n = 4): zeros |4-1|,|0-1|,0,|0-2| -> mean 1.5
    assert m["zeros"]["cuboid_error_mean"] == pytest.approx(1.5)
    # relative error, δ = 1e-4·4: zeros |4-1|/1, |0-1|/1, 0/δ', |0-2|/2 -> mean (3+1+0+1)/4
    assert m["zeros"]["relative_error"] == pytest.approx(1.25)
    # full table = the 2-way table: RE(real‖uniform) = .25 ln 1 + .25 ln 1 + .5 ln 2
    assert res["relative_entropy"]["relative_entropy"]["uniform"] == pytest.approx(0.5 * np.log(2))
    assert res["relative_entropy"]["relative_entropy"]["zeros"] is None  # infinite
    assert res["range_queries"] is None


def test_one_shuffled_column_matches_independent_computation(tiny_cfg, tiny_table):
    """Shuffling 'color' keeps every 1-way marginal and every marginal without it; the rest is
    recomputed here with pandas crosstabs on the binned columns (an independent code path)."""
    synth = tiny_table.copy()
    synth["color"] = np.random.default_rng(7).permutation(synth["color"].to_numpy())
    res = _eval(tiny_table, synth, tiny_cfg, ks=(1, 2))
    one, two = res["marginals"]
    assert one["metrics"]["synthetic"]["l1_max"] == 0.0

    def binned(df):
        return df.assign(size=np.clip(np.floor(df["size"] / 2), 0, 4).astype(int))

    r, s = binned(tiny_table), binned(synth)
    sizes = {"color": 3, "size": 5, "count": 4, "flag": 2}
    expected, cuboid = {}, {}
    for a, b in itertools.combinations(sizes, 2):
        p = pd.crosstab(r[a], r[b], normalize=True)
        q = pd.crosstab(s[a], s[b], normalize=True).reindex_like(p).fillna(0)
        expected[(a, b)] = float(np.abs(p - q).to_numpy().sum())
        diff = pd.crosstab(r[a], r[b]).sub(pd.crosstab(s[a], s[b]), fill_value=0)
        cuboid[(a, b)] = float(diff.abs().to_numpy().sum()) / (sizes[a] * sizes[b])
    assert two["metrics"]["synthetic"]["cuboid_error_mean"] == pytest.approx(np.mean(list(cuboid.values())))
    assert two["metrics"]["synthetic"]["cuboid_error_max"] == pytest.approx(max(cuboid.values()))
    got = dict(zip(map(tuple, two["per_marginal"]["attrs"]), two["per_marginal"]["l1"]["synthetic"]))
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-12)
        assert (value > 0.0) if "color" in key else (value == 0.0)
    assert two["metrics"]["synthetic"]["l1_mean"] == pytest.approx(np.mean(list(expected.values())))


NUM = {"type": "number"}
NUM_OR_NULL = {"type": ["number", "null"]}
PER_METHOD = {"type": "object", "required": list(METHODS), "additionalProperties": False,
              "properties": {m: NUM for m in METHODS}}
RESULT_SCHEMA = {
    "type": "object",
    "required": ["warning", "dpsynth_version", "rows", "verdict", "neutral", "unrepresentable", "release_bins",
                 "domain", "settings", "methods", "marginals",
                 "relative_entropy", "range_queries", "conjunctions", "parities", "linear_queries", "queries",
                 "released_marginals", "classifier"],
    "additionalProperties": False,
    "properties": {
        "warning": {"const": NOT_PRIVATE},
        "dpsynth_version": {"type": "string"},
        "rows": {"type": "object", "required": ["real", "synthetic"], "additionalProperties": {"type": "integer"}},
        "domain": {"type": "object", "required": ["columns", "cells"], "additionalProperties": {"type": "integer"}},
        "verdict": {"type": "object", "required": ["k", "baseline", "synthetic_l1", "baseline_l1", "ratio",
                                                   "better_than_baseline", "release_bins_ratio", "text"]},
        "neutral": {"type": "object", "required": ["about", "methods", "marginals", "columns"], "properties": {
            "methods": {"const": ["synthetic", "independent", "uniform"]},
            "marginals": {"type": "array", "items": {"type": "object", "required": [
                "k", "marginals_total", "marginals_evaluated", "marginals_skipped_too_large", "metrics"]}},
            "columns": {"type": "array", "items": {"type": "object", "required": [
                "name", "kind", "bins", "tv", "null_share"]}}}},
        "unrepresentable": {"type": "object", "required": ["rows_real", "rows_synthetic", "columns"]},
        "release_bins": {"type": "string"},
        "settings": {"type": "object",
                     "required": ["k", "sample_marginals", "sanity_bound", "ranges", "target", "workload"],
                     "additionalProperties": False,
                     "properties": {"k": {"type": "array", "items": {"type": "integer"}},
                                    "sample_marginals": {"type": ["integer", "null"]}, "sanity_bound": NUM,
                                    "ranges": {"type": "integer"}, "target": {"type": ["string", "null"]},
                                    "workload": {"type": "boolean"}}},
        "methods": {"const": list(METHODS)},
        "marginals": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["k", "marginals_total", "marginals_evaluated", "marginals_skipped_too_large", "cells",
                         "metrics", "per_marginal"],
            "properties": {
                "k": {"type": "integer"}, "marginals_total": {"type": "integer"},
                "marginals_evaluated": {"type": "integer"}, "marginals_skipped_too_large": {"type": "integer"},
                "cells": {"type": "integer"},
                "metrics": {"type": "object", "required": list(METHODS), "additionalProperties": {
                    "type": "object", "required": SYNTH_METRICS, "additionalProperties": NUM}},
                "per_marginal": {"type": "object", "required": ["attrs", "l1"], "properties": {
                    "attrs": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
                    "l1": {"type": "object", "required": list(METHODS),
                           "additionalProperties": {"type": "array", "items": NUM}}}},
            }}},
        "relative_entropy": {"type": "object", "required": ["cells", "smoothing"], "properties": {
            "relative_entropy": {"type": "object", "additionalProperties": NUM_OR_NULL},
            "relative_entropy_smoothed": PER_METHOD, "real_mass_on_empty_synthetic_cells": NUM,
            "skipped": {"type": "string"}}},
        "range_queries": {"type": ["object", "null"], "required": ["queries", "columns"], "properties": {
            "squared_error_mean": PER_METHOD, "rmse": PER_METHOD, "skipped": {"type": "string"}}},
        "queries": {"type": ["object", "null"], "required": ["queries", "sanity_bounds", "relative_error_mean",
                                                                "relative_error_max"]},
        "conjunctions": {"type": ["object", "null"], "required": ["queries", "k", "error_mean", "error_max"],
                         "additionalProperties": False, "properties": {
                             "queries": {"type": "integer"}, "k": {"type": "integer"},
                             "error_mean": PER_METHOD, "error_max": PER_METHOD}},
        "parities": {"type": ["object", "null"], "required": ["queries", "k", "answer", "error_mean", "error_max"],
                     "additionalProperties": False, "properties": {
                         "queries": {"type": "integer"}, "k": {"type": "integer"}, "answer": {"type": "string"},
                         "error_mean": PER_METHOD, "error_max": PER_METHOD}},
        "linear_queries": {"type": ["object", "null"], "required": ["queries", "columns", "error_mean", "error_max"],
                           "additionalProperties": False, "properties": {
                               "queries": {"type": "integer"}, "columns": {"type": "array", "items": {"type": "string"}},
                               "error_mean": PER_METHOD, "error_max": PER_METHOD}},
        "classifier": {"type": ["object", "null"], "required": [
            "target", "majority_class_rate", "real_cross_validated", "folds", "synthetic", "released_marginals"]},
        "released_marginals": {"type": ["object", "null"], "required": ["marginals", "sanity_bound",
                                                                        "overall_relative_error"]},
    },
}


def test_json_schema_and_determinism(tiny_cfg, tiny_table):
    synth = tiny_table.sample(frac=1.0, replace=True, random_state=1)
    res = _eval(tiny_table, synth, tiny_cfg, target="flag", sample_marginals=3)
    jsonschema.validate(res, RESULT_SCHEMA)
    text = json.dumps(res, allow_nan=False)
    assert list(res) == RESULT_SCHEMA["required"]
    assert text == json.dumps(_eval(tiny_table, synth, tiny_cfg, target="flag", sample_marginals=3), allow_nan=False)
    assert text != json.dumps(_eval(tiny_table, synth, tiny_cfg, seed=1, target="flag", sample_marginals=3))
    two = res["marginals"][1]
    assert (two["marginals_total"], two["marginals_evaluated"]) == (6, 3)


def test_released_exact_marginals_have_zero_relative_error(tiny_cfg, tiny_table):
    from dpsynth.data.counts import ArrayCounts
    from dpsynth.data.discretize import encode

    counts = ArrayCounts(encode(tiny_table, tiny_cfg.domain), tiny_cfg.domain)
    exact = [NoisyMarginal(m, counts.marginal(m).astype(float), 1.0) for m in tiny_cfg.marginals]
    csv = marginals_table(exact, tiny_cfg).astype(str).replace("None", "")
    res = evaluate(tiny_table, tiny_table, tiny_cfg, rng=np.random.default_rng(0),
                   options=EvalOptions(target="flag"), released=csv)
    err = res["released_marginals"]["overall_relative_error"]
    assert err["released"] == 0.0 and err["synthetic"] == 0.0
    assert res["released_marginals"]["marginals"] == len(tiny_cfg.marginals)
    # the classifier from exact 2-way marginals equals the one from the identical synthetic table
    assert res["classifier"]["released_marginals"]["accuracy"] == res["classifier"]["synthetic"]


def test_classifier_perfect_feature():
    cfg = parse_config({"schema": {"columns": {"y": {"type": "categorical", "categories": ["a", "b"]},
                                               "x": {"type": "categorical", "categories": ["p", "q", "r"]}}},
                        "privacy": {"epsilon": 1.0}, "algorithm": {"name": "laplace"}})
    x = np.array(["p", "q", "r"] * 40)
    real = pd.DataFrame({"y": np.where(x == "p", "a", "b"), "x": x})
    clf = _eval(real, real, cfg, ks=(1,), target="y")["classifier"]
    assert clf["real_cross_validated"] == 1.0 and clf["synthetic"] == 1.0
    assert clf["majority_class_rate"] == pytest.approx(2 / 3)


def test_library_errors(tiny_cfg, tiny_table):
    with pytest.raises(DataError, match=re.escape(
            "schema mismatch: the synthetic table has no column 'flag'; both tables must have every column "
            "of the config's schema")):
        _eval(tiny_table, tiny_table.drop(columns="flag"), tiny_cfg)
    bad = tiny_table.assign(size=99.0)
    with pytest.raises(DataError, match=re.escape("synthetic table: column 'size' has values outside its declared")):
        _eval(tiny_table, bad, tiny_cfg)
    with pytest.raises(UsageError, match=re.escape("--k 5 is larger than the number of schema columns (4)")):
        _eval(tiny_table, tiny_table, tiny_cfg, ks=(5,))
    with pytest.raises(UsageError, match=re.escape("--target 'nope' is not a column of the config's schema")):
        _eval(tiny_table, tiny_table, tiny_cfg, target="nope")


# ----------------------------------------------------------------------------- CLI
@pytest.fixture
def tiny_files(tmp_path, tiny_raw_config, tiny_table):
    cfg = tmp_path / "tiny.yaml"
    cfg.write_text(yaml.safe_dump(tiny_raw_config, sort_keys=False))
    real = tmp_path / "real.csv"
    tiny_table.to_csv(real, index=False)
    synth = tmp_path / "synth.csv"
    tiny_table.sample(frac=1.0, replace=True, random_state=2).to_csv(synth, index=False)
    return cfg, real, synth


def test_cli_evaluate_writes_json_and_plot(runner, tiny_files, tmp_path):
    cfg, real, synth = tiny_files
    out_json, out_png = tmp_path / "e.json", tmp_path / "e.png"
    res = runner.invoke(app, ["evaluate", "-c", str(cfg), "--real", str(real), "--synthetic", str(synth),
                              "--k", "1,2", "--target", "flag", "--json", str(out_json), "--plot", str(out_png), "-q"])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0] == NOT_PRIVATE
    assert "2-way marginals: 6 of 6" in res.stdout
    assert "Naive Bayes predicting 'flag' on the real table" in res.stdout
    data = json.loads(out_json.read_text())
    jsonschema.validate(data, RESULT_SCHEMA)
    assert data["settings"]["k"] == [1, 2]
    png = out_png.read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
    assert not list(tmp_path.glob(".*.tmp"))


def test_cli_json_to_stdout(runner, tiny_files):
    cfg, real, synth = tiny_files
    res = runner.invoke(app, ["evaluate", "-c", str(cfg), "--real", str(real), "--synthetic", str(synth),
                              "--k", "1", "--json", "-", "-q"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["warning"] == NOT_PRIVATE
    assert res.stderr.splitlines()[0] == f"dpsynth: {NOT_PRIVATE}"


def test_cli_notes_skipped_metrics(runner, tmp_path):
    """Two categorical columns: no ordered column, so range queries are skipped with a note."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump({"schema": {"columns": {"a": {"type": "categorical", "categories": ["x", "y"]},
                                                          "b": {"type": "categorical", "categories": ["x", "y"]}}},
                                   "privacy": {"epsilon": 1.0}, "algorithm": {"name": "laplace"}}, sort_keys=False))
    data = tmp_path / "d.csv"
    pd.DataFrame({"a": ["x", "y", "y"], "b": ["y", "y", "x"]}).to_csv(data, index=False)
    res = runner.invoke(app, ["evaluate", "-c", str(cfg), "--real", str(data), "--synthetic", str(data), "--k", "1,2"])
    assert res.exit_code == 0, res.output
    assert "range queries: skipped (the schema has no ordered (numeric or integer) column)" in res.stdout
    assert "relative entropy, full table" in res.stdout


def test_cli_help_says_not_private(runner):
    res = runner.invoke(app, ["evaluate", "--help"])
    assert res.exit_code == 0
    assert "NOT PRIVATE" in res.stdout


@pytest.mark.parametrize(
    "extra, code, message",
    [
        (["--k", "1,x"], 2, "--k must be comma-separated integers such as 1,2,3, got '1,x'"),
        (["--k", "0"], 2, "--k must list distinct integers >= 1, got 0"),
        (["--sanity-bound", "0"], 2, "--sanity-bound must be > 0, got 0.0"),
        (["--plot", "-"], 2, "--plot cannot be stdout; give a .png, .svg or .pdf path"),
        (["--target", "nope"], 2, "--target 'nope' is not a column of the config's schema"),
    ],
)
def test_cli_usage_errors(runner, tiny_files, extra, code, message):
    cfg, real, synth = tiny_files
    res = runner.invoke(app, ["evaluate", "-c", str(cfg), "--real", str(real), "--synthetic", str(synth), *extra])
    assert res.exit_code == code
    assert res.stderr == f"dpsynth: error: {message}\n"


def test_cli_schema_mismatch_and_missing_input(runner, tiny_files, tiny_table, tmp_path):
    cfg, real, _ = tiny_files
    other = tmp_path / "other.csv"
    tiny_table.drop(columns=["size", "count"]).to_csv(other, index=False)
    res = runner.invoke(app, ["evaluate", "-c", str(cfg), "--real", str(real), "--synthetic", str(other)])
    assert res.exit_code == 65
    assert res.stderr == ("dpsynth: error: schema mismatch: the synthetic table has no column 'size' (and 1 more); "
                          "both tables must have every column of the config's schema\n")
    missing = tmp_path / "nope.csv"
    res = runner.invoke(app, ["evaluate", "-c", str(cfg), "--real", str(missing), "--synthetic", str(real)])
    assert res.exit_code == 66
    assert res.stderr == f"dpsynth: error: input file not found: {missing}\n"


def test_cli_existing_output_needs_force(runner, tiny_files, tmp_path):
    cfg, real, synth = tiny_files
    out = tmp_path / "e.json"
    out.write_text("{}")
    args = ["evaluate", "-c", str(cfg), "--real", str(real), "--synthetic", str(synth), "--k", "1", "--json", str(out)]
    res = runner.invoke(app, args)
    assert res.exit_code == 73
    assert res.stderr == f"dpsynth: error: output exists: {out} (use --force to overwrite)\n"
    assert runner.invoke(app, [*args, "--force"]).exit_code == 0
    assert json.loads(out.read_text())["warning"] == NOT_PRIVATE


def test_cli_release_then_evaluate_with_released_marginals(runner, tiny_files, tmp_path):
    """The custodian's workflow: release with --marginals, then score rows and marginals."""
    cfg, real, _ = tiny_files
    synth, marg, out = tmp_path / "s.csv", tmp_path / "m.csv", tmp_path / "e.json"
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(real), "-o", str(synth), "--marginals", str(marg),
                              "--seed", "3", "-q"])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["evaluate", "-c", str(cfg), "--real", str(real), "--synthetic", str(synth),
                              "--marginals", str(marg), "--target", "flag", "--json", str(out), "-q"])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    jsonschema.validate(data, RESULT_SCHEMA)
    assert data["released_marginals"]["marginals"] == 6
    assert data["released_marginals"]["overall_relative_error"]["released"] > 0
    assert data["classifier"]["released_marginals"]["features_without_marginal"] == []


def test_cli_bad_released_marginals(runner, tiny_files, tmp_path):
    cfg, real, synth = tiny_files
    bad = tmp_path / "m.csv"
    pd.DataFrame({"marginal_id": [0], "marginal": ["color|nope"], "color": ["red"], "noisy_count": [1.0]}).to_csv(
        bad, index=False)
    res = runner.invoke(app, ["evaluate", "-c", str(cfg), "--real", str(real), "--synthetic", str(synth),
                              "--marginals", str(bad)])
    assert res.exit_code == 65
    assert res.stderr == "dpsynth: error: released marginals: column 'nope' is not in the config's schema\n"


# ---------------------------------------------------------------- the release's own workload
def _workload_cfg(tiny_raw_config, algorithm: str, workload: dict):
    raw = {**tiny_raw_config, "algorithm": {"name": algorithm}, "workload": workload}
    return parse_config(raw)


def test_workload_marginals_are_the_released_ones(tiny_raw_config, tiny_table):
    """A sampled marginal workload is rebuilt from the config's seed: exactly the marginals the release
    measured, grouped by size, and no others (not all k-way marginals)."""
    cfg = _workload_cfg(tiny_raw_config, "laplace", {"marginals": {"k": 2, "sample": 3, "seed": 4}})
    synth = tiny_table.sample(frac=1.0, replace=True, random_state=3)
    res = _eval(tiny_table, synth, cfg, workload=True)
    jsonschema.validate(res, RESULT_SCHEMA)
    names = cfg.domain.names
    assert res["settings"]["k"] == [2] and res["settings"]["workload"] is True
    (block,) = res["marginals"]
    assert block["marginals_total"] == block["marginals_evaluated"] == 3
    assert block["per_marginal"]["attrs"] == [[names[a] for a in m] for m in cfg.marginals]
    assert res["range_queries"] is None and res["conjunctions"] is None
    mixed = _workload_cfg(tiny_raw_config, "laplace", {"marginals": [["flag", "color"], ["size"]]})
    res = _eval(tiny_table, synth, mixed, workload=True)
    assert [b["k"] for b in res["marginals"]] == [1, 2]
    assert res["marginals"][1]["per_marginal"]["attrs"] == [["flag", "color"]]


def test_workload_ranges_match_a_direct_computation(tiny_raw_config, tiny_table):
    """The configured range queries (same seed as the release), answered on both tables by the
    workload's own RangeQueries.answers on each marginal: mean squared error on the count scale."""
    from dpsynth.data.counts import ArrayCounts
    from dpsynth.data.discretize import encode
    from dpsynth.workload.ranges import parse_ranges

    spec = {"count": 40, "columns": ["size", "count"], "seed": 9, "dims": 1}
    cfg = _workload_cfg(tiny_raw_config, "mwem", {"marginals": {"k": 2}, "ranges": spec})
    synth = tiny_table.sample(n=250, replace=True, random_state=4)
    res = _eval(tiny_table, synth, cfg, workload=True)
    real_c = ArrayCounts(encode(tiny_table, cfg.domain), cfg.domain)
    synth_c = ArrayCounts(encode(synth, cfg.domain), cfg.domain)
    errs = [rq.answers(synth_c.marginal(rq.attrs)) * (len(tiny_table) / 250) - rq.answers(real_c.marginal(rq.attrs))
            for rq in parse_ranges(spec, cfg.domain)]
    expected = float(np.mean(np.concatenate(errs) ** 2))
    assert res["range_queries"]["queries"] == 40 and res["settings"]["ranges"] == 40
    assert res["range_queries"]["squared_error_mean"]["synthetic"] == pytest.approx(expected, rel=1e-12)
    assert _eval(tiny_table, tiny_table, cfg, workload=True)["range_queries"]["rmse"]["synthetic"] == 0.0


def test_workload_conjunctions_match_a_direct_computation(tiny_raw_config, tiny_table):
    """Sampled conjunctions (DualQuery §7) rebuilt from the config's seed; the synthetic and baseline
    answers are checked against Conjunctions.answers on the rows (another code path)."""
    from dpsynth.data.discretize import encode
    from dpsynth.workload.conjunctions import conjunction_workload

    spec = {"k": 2, "count": 30, "seed": 2}
    cfg = _workload_cfg(tiny_raw_config, "dualquery", {"marginals": {"k": 2}, "conjunctions": spec})
    synth = tiny_table.sample(n=200, replace=True, random_state=5)
    res = _eval(tiny_table, synth, cfg, workload=True)
    queries = conjunction_workload(spec, cfg.domain, cfg.marginals)
    real = queries.answers(encode(tiny_table, cfg.domain))
    err = np.abs(queries.answers(encode(synth, cfg.domain)) - real)
    got = res["conjunctions"]
    assert (got["queries"], got["k"]) == (30, 2)
    assert got["error_mean"]["synthetic"] == pytest.approx(err.mean(), abs=1e-15)
    assert got["error_max"]["synthetic"] == pytest.approx(err.max(), abs=1e-15)
    zeros = np.all(queries.values == 0, axis=1).astype(float)
    assert got["error_max"]["zeros"] == pytest.approx(np.abs(zeros - real).max(), abs=1e-15)
    same = _eval(tiny_table, tiny_table, cfg, workload=True)["conjunctions"]
    assert same["error_max"]["synthetic"] == 0.0


def test_workload_parities_match_brute_force(tiny_raw_config, tiny_table):
    """Sampled parities (DualQuery §6) rebuilt from the config's seed and scored exactly as released: the
    fraction of rows with an even number of literals on, checked against a per-row count of the literals."""
    from dpsynth.data.discretize import encode
    from dpsynth.workload.parities import parity_workload

    spec = {"k": 2, "count": 12, "seed": 4}
    cfg = _workload_cfg(tiny_raw_config, "dualquery", {"marginals": {"k": 2}, "parities": spec})
    synth = tiny_table.sample(n=200, replace=True, random_state=5)
    res = _eval(tiny_table, synth, cfg, workload=True)
    jsonschema.validate(res, RESULT_SCHEMA)
    queries = parity_workload(spec, cfg.domain)

    def brute(codes):  # literal hits counted per row, then the parity
        hits = sum((codes[:, queries.attrs[:, j]] == queries.values[:, j]).astype(int) for j in range(2))
        return (hits % 2 == 0).mean(axis=0)

    real = brute(encode(tiny_table, cfg.domain))
    err = np.abs(brute(encode(synth, cfg.domain)) - real)
    got = res["parities"]
    assert (got["queries"], got["k"], res["conjunctions"]) == (12, 2, None)
    assert got["error_mean"]["synthetic"] == pytest.approx(err.mean(), abs=1e-12)
    assert got["error_max"]["synthetic"] == pytest.approx(err.max(), abs=1e-12)
    assert _eval(tiny_table, tiny_table, cfg, workload=True)["parities"]["error_max"]["synthetic"] == pytest.approx(
        0.0, abs=1e-12)


def test_cli_workload_flag(runner, tiny_files):
    cfg, real, synth = tiny_files
    base = ["evaluate", "-c", str(cfg), "--real", str(real), "--synthetic", str(synth)]
    res = runner.invoke(app, [*base, "--workload", "--json", "-", "-q"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    jsonschema.validate(data, RESULT_SCHEMA)
    assert data["settings"]["workload"] is True and [b["k"] for b in data["marginals"]] == [2]
    assert data["marginals"][0]["marginals_total"] == 6 and data["range_queries"] is None
    for extra in (["--k", "1"], ["--ranges", "10"]):
        res = runner.invoke(app, [*base, "--workload", *extra])
        assert res.exit_code == 2
        assert res.stderr == ("dpsynth: error: --workload scores the configuration's own marginals and ranges; "
                              "drop --k and --ranges\n")
    res = runner.invoke(app, [*base, "--workload", "--sample-marginals", "2"])
    assert res.exit_code == 2
    assert res.stderr == ("dpsynth: error: --workload scores the configuration's own marginals; "
                          "drop --sample-marginals\n")


# ------------------------------------------------------- iReduct §6.5: one release per training fold
def test_release_per_fold_with_negligible_noise_matches_the_real_cross_validation(tiny_raw_config, tiny_table):
    """At ε = 10⁹ the geometric noise is 0 with probability 1 − O(10⁻⁸) per cell, so each fold's released
    Naive Bayes marginals are the training fold's exact counts: the classifier built from them is the
    real-table classifier of the same fold, and their overall relative error is 0."""
    raw = {**tiny_raw_config, "privacy": {"epsilon": 1e9}}
    cfg = parse_config(raw)
    res = _eval(tiny_table, tiny_table, cfg, ks=(1,), ranges=0, target="flag", release_per_fold=True)
    clf = res["classifier"]
    proto = clf["release_per_fold"]
    assert proto["folds"] == 10 and proto["algorithm"] == "laplace" and len(proto["per_fold"]["synthetic_accuracy"]) == 10
    assert proto["marginals"] == [["flag"], ["flag", "color"], ["flag", "size"], ["flag", "count"]]
    assert proto["overall_relative_error"] == 0.0
    assert proto["released_marginals_accuracy"] == pytest.approx(clf["real_cross_validated"], abs=1e-12)
    jsonschema.validate(res, RESULT_SCHEMA)


def test_release_per_fold_spends_the_budget_per_fold_and_is_reproducible(tiny_raw_config, tiny_table):
    cfg = parse_config(tiny_raw_config)  # ε = 1 per fold release
    a = _eval(tiny_table, tiny_table, cfg, ks=(1,), ranges=0, target="flag", release_per_fold=True)
    b = _eval(tiny_table, tiny_table, cfg, ks=(1,), ranges=0, target="flag", release_per_fold=True)
    assert a == b
    proto = a["classifier"]["release_per_fold"]
    assert proto["epsilon"] == 1.0 and proto["overall_relative_error"] > 0
    assert 0.0 <= proto["released_marginals_accuracy"] <= 1.0 and 0.0 <= proto["synthetic_accuracy"] <= 1.0
    # the real-table part is unchanged by the protocol (its folds come from the same generator)
    plain = _eval(tiny_table, tiny_table, cfg, ks=(1,), ranges=0, target="flag")
    assert plain["classifier"]["real_cross_validated"] == a["classifier"]["real_cross_validated"]


def test_release_per_fold_errors(tiny_raw_config, tiny_table, runner, tiny_files):
    with pytest.raises(UsageError, match=re.escape(
            "--release-per-fold needs --target (the class column of the Naive Bayes protocol)")):
        EvalOptions(release_per_fold=True)
    cfg = parse_config({**tiny_raw_config, "algorithm": {"name": "mwem", "params": {"iterations": 9, "variant": "paper"}}})
    from dpsynth.errors import ConfigError

    with pytest.raises(ConfigError, match=re.escape(
            "--release-per-fold: the configured release on the 4 Naive Bayes marginals failed: "
            "algorithm.params.iterations: 9 rounds but only 4 candidate queries")):
        _eval(tiny_table, tiny_table, cfg, ks=(1,), ranges=0, target="flag", release_per_fold=True)
    c, real, synth = tiny_files
    res = runner.invoke(app, ["evaluate", "-c", str(c), "--real", str(real), "--synthetic", str(synth), "--k", "1",
                              "--target", "flag", "--release-per-fold", "-q"])
    assert res.exit_code == 0, res.output
    assert "released marginals, one laplace release per training fold" in res.stdout
