"""Per-marginal sanity bounds (Xiao et al. 2011, §2 after Equation 1): config, algorithms, Oracle, evaluate."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
import yaml

from dpsynth.algorithms.ireduct import error_weights
from dpsynth.algorithms.ireduct.twophase import rescale_weights
from dpsynth.cli import app
from dpsynth.config import parse_config
from dpsynth.errors import ConfigError
from dpsynth.nonprivate.metrics import overall_relative_error
from dpsynth.pipeline import release
from tests.privacy.audit import tiny_neighbours, tiny_raw_config


def _raw(algorithm="ireduct", bounds=None, **params):
    raw = tiny_raw_config(algorithm, "replace-one")
    raw["algorithm"]["params"].update(params)
    if bounds is not None:
        raw["workload"]["sanity_bounds"] = bounds
    return raw


def test_bounds_resolve_per_marginal_whatever_the_column_order():
    cfg = parse_config(_raw(bounds={"default": 2.0, "marginals": [{"columns": ["b", "a"], "bound": 7}]}))
    sb = cfg.workload.sanity_bounds
    assert sb.for_marginals(cfg.marginals, fallback=99.0).tolist() == [2.0, 2.0, 7.0]
    assert sb.to_raw(cfg.domain) == {"default": 2.0, "marginals": [{"columns": ["a", "b"], "bound": 7.0}]}
    # the config written back (model files, discovered schemas) parses to the same bounds
    again = parse_config({**_raw(), "workload": cfg.workload.to_raw(cfg.domain)})
    assert again.workload.sanity_bounds == sb


@pytest.mark.parametrize(("bounds", "params", "message"), [
    ({"marginals": [{"columns": ["a"], "bound": 0}]}, {},
     "workload.sanity_bounds.marginals[0].bound: a sanity bound must be a finite number > 0 (a count, e.g. 10), got 0"),
    ({"default": -1}, {},
     "workload.sanity_bounds.default: a sanity bound must be a finite number > 0 (a count, e.g. 10), got -1"),
    ({"marginals": [{"columns": ["a", "c"], "bound": 1}]}, {},
     "workload.sanity_bounds.marginals[0].columns: unknown column 'c'"),
    ({"marginals": [{"columns": ["a", "a"], "bound": 1}]}, {},
     "workload.sanity_bounds.marginals[0].columns: (a, a) is not a marginal of the workload; list only workload marginals"),
    ({"marginals": [{"columns": ["a"], "bound": 1}, {"columns": ["a"], "bound": 2}]}, {},
     "workload.sanity_bounds.marginals[1].columns: (a) is listed twice"),
    ({"marginals": [{"columns": ["a"]}]}, {}, "workload.sanity_bounds.marginals[0].bound: required"),
    ({"cells": 1}, {}, "workload.sanity_bounds.cells: unknown key (allowed: default, marginals)"),
    ({"default": 3}, {"sanity_bound": 3.0},
     "workload.sanity_bounds.default: algorithm.params.sanity_bound gives the default sanity bound too; keep one of them"),
])
def test_bad_sanity_bounds_are_config_errors(bounds, params, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_config(_raw(bounds=bounds, **params))


def test_bad_sanity_bound_cli_exit_64(runner, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(_raw(bounds={"marginals": [{"columns": ["a"], "bound": "x"}]})))
    res = runner.invoke(app, ["plan", "-c", str(cfg)])
    assert res.exit_code == 64
    assert res.stderr == ("dpsynth: error: workload.sanity_bounds.marginals[0].bound: a sanity bound must be a "
                          "finite number > 0 (a count, e.g. 10), got 'x'\n")


def test_weights_use_each_cells_own_bound():
    """Equation 15 with δ per marginal: cells (0.5, 4) with δ = 1 give 1 + 0.25; cell 10 with δ = 20 gives 0.05."""
    values, seg = np.array([0.5, 4.0, 10.0]), np.array([0, 0, 1])
    assert error_weights(values, seg, [2, 1], np.array([1.0, 1.0, 20.0]), "sum") == pytest.approx([1.25, 0.05])
    assert rescale_weights([values[:2], values[2:]], [1.0, 20.0]) == pytest.approx([0.625, 0.05])
    # Definition 6 with δ per marginal: |1 − 0|/max(0, 2) = 0.5 and |3 − 1|/max(1, 4) = 0.5, mean 0.5
    assert overall_relative_error([np.array([1.0]), np.array([3.0])], [np.array([0.0]), np.array([1.0])],
                                  [2.0, 4.0]) == 0.5


@pytest.mark.parametrize("algorithm", ["ireduct", "twophase", "iresamp"])
def test_algorithms_report_and_use_the_bounds(algorithm):
    """A huge δ on marginal (a, b) makes its weight tiny: iReduct and TwoPhase then give it the largest scale."""
    bounds = {"default": 1.0, "marginals": [{"columns": ["a", "b"], "bound": 1e6}]}
    d, _ = tiny_neighbours("replace-one", n=600)
    raw = _raw(algorithm, bounds=bounds)
    raw["algorithm"]["params"].pop("lambda_max", None)
    res = release(d, parse_config(raw), rng=np.random.default_rng(5))
    det = res.report["algorithm"]["details"]
    assert det["sanity_bound"] == 1.0
    assert det["sanity_bounds"] == [{"columns": ["a", "b"], "bound": 1e6}]
    if algorithm != "iresamp":  # iResamp halves scales, too coarse to order three marginals reliably
        scales = res.marginals.groupby("marginal_id")["noise_scale"].first().to_numpy()
        assert scales[2] == scales.max() and scales[2] > scales[:2].min()


def test_evaluate_scores_released_marginals_with_per_marginal_bounds(runner, tmp_path):
    """evaluate's overall error of the released marginals uses the config's per-marginal δ."""
    bounds = {"default": 1.0, "marginals": [{"columns": ["a", "b"], "bound": 1e9}]}
    raw = _raw("twophase", bounds=bounds)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(raw))
    d, _ = tiny_neighbours("replace-one", n=60)
    d.to_csv(tmp_path / "real.csv", index=False)
    out = tmp_path / "s.csv"
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(tmp_path / "real.csv"), "-o", str(out),
                              "--marginals", str(tmp_path / "m.csv"), "--seed", "3", "--silent"])
    assert res.exit_code == 0, res.stderr
    res = runner.invoke(app, ["evaluate", "-c", str(cfg), "--real", str(tmp_path / "real.csv"), "--synthetic",
                              str(out), "--marginals", str(tmp_path / "m.csv"), "--workload", "--json",
                              str(tmp_path / "e.json"), "-q"])
    assert res.exit_code == 0, res.stderr
    got = json.loads((tmp_path / "e.json").read_text())["released_marginals"]["overall_relative_error"]["released"]
    m = pd.read_csv(tmp_path / "m.csv")
    truth = {"a": d["a"].value_counts(), "b": d["b"].value_counts(), "a|b": d.groupby(["a", "b"]).size()}
    errs = []
    for mid, g in m.groupby("marginal_id"):
        cols = g["marginal"].iloc[0].split("|")
        q = np.array([truth["|".join(cols)].get(tuple(r) if len(cols) > 1 else r[0], 0)
                      for r in g[cols].itertuples(index=False)], dtype=float)
        delta = 1e9 if len(cols) == 2 else 1.0
        errs.append(np.mean(np.abs(g["noisy_count"].to_numpy() - q) / np.maximum(q, delta)))
    assert got == pytest.approx(np.mean(errs), rel=1e-12)
