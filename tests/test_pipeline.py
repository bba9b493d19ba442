"""End-to-end release on real data (sample_data/adult.csv) and report hygiene."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import dpsynth
from dpsynth.config import load_config, parse_config
from dpsynth.data.io import read_table
from dpsynth.models.synthesis import NOISY_DETAILS
from dpsynth.report import validate_report


@pytest.fixture(scope="module")
def adult(request):
    root = request.config.rootpath
    cfg = load_config(root / "configs" / "adult.yaml")
    table = read_table(root / "sample_data" / "adult.csv",
                       string_columns=cfg.domain.text_columns)
    return cfg, table


def test_adult_release_columns_and_types_match_input(adult):
    cfg, table = adult
    res = dpsynth.release(table, cfg, rng=np.random.default_rng(0))
    syn = res.synthetic
    assert list(syn.columns) == list(table.columns)
    assert len(syn) == len(table)
    for col in table.columns:
        real_numeric = pd.api.types.is_numeric_dtype(table[col])
        assert pd.api.types.is_numeric_dtype(syn[col]) == real_numeric, col
        if pd.api.types.is_integer_dtype(table[col]):
            assert pd.api.types.is_integer_dtype(syn[col]), col
    # decoded values stay inside the public bounds of the schema
    assert syn["age"].between(17, 90).all() and syn["hours-per-week"].between(1, 100).all()
    cats = set(cfg.domain.columns[cfg.domain.index("workclass")].categories)
    assert set(syn["workclass"].dropna()) <= cats
    validate_report(res.report)
    assert res.report["privacy"]["epsilon_spent"] <= cfg.privacy.epsilon
    assert res.marginals is not None and res.marginals["marginal_id"].nunique() == len(cfg.marginals)


def test_ledger_total_equals_report_and_budget(adult):
    cfg, table = adult
    res = dpsynth.release(table, cfg, rng=np.random.default_rng(1))
    from fractions import Fraction

    exact = sum(Fraction(c["epsilon"]) for c in res.report["ledger"])
    assert exact <= Fraction(cfg.privacy.epsilon)
    assert float(exact) == pytest.approx(res.report["privacy"]["epsilon_spent"], rel=1e-12)


def test_noisy_n_is_charged_and_true_n_absent(tiny_raw_config, tiny_table):
    raw = dict(tiny_raw_config, privacy={"epsilon": 1.0, "n": {"epsilon": 0.1}})
    cfg = parse_config(raw)
    res = dpsynth.release(tiny_table, cfg, rng=np.random.default_rng(4))
    ledger = res.report["ledger"]
    assert ledger[0]["stage"] == "row-count" and ledger[0]["epsilon"] == 0.1
    assert res.report["privacy"]["n"]["mode"] == "noisy"
    assert res.report["privacy"]["epsilon_spent"] == pytest.approx(1.0)
    # the synthetic row count is the noisy count, which is a mechanism output
    assert abs(len(res.synthetic) - len(tiny_table)) < 6 * np.sqrt(2) / 0.1 * 3


def test_report_holds_no_data_derived_values(tiny_raw_config, tiny_table):
    """Two tables with different observed values give identical reports apart from mechanism outputs."""
    cfg = parse_config(tiny_raw_config)
    other = tiny_table.copy()
    other["color"] = "red"  # only one category observed
    other["size"] = 9.5
    reports = [dpsynth.release(t, cfg, rng=np.random.default_rng(7)).report for t in (tiny_table, other)]
    for r in reports:
        r.pop("ledger")
        r.pop("model")  # a digest of the released model, a function of mechanism outputs only
        r["algorithm"]["details"].pop("noise_scale_per_cell", None)
        for row in (*r["error_bounds"]["marginals"], *r["error_bounds"]["classes"]):  # bounds: functions of the
            for key in ("bound", "median_bound", "max_bound"):  # noisy marginals (replayed: test_replay.py)
                row.pop(key, None)
        for key in NOISY_DETAILS:  # functions of the noisy marginals (which cliques the model kept)
            r["algorithm"]["details"]["synthesis"].pop(key, None)
    assert json.dumps(reports[0], sort_keys=True) == json.dumps(reports[1], sort_keys=True)


def test_replace_one_doubles_histogram_sensitivity(tiny_raw_config, tiny_table):
    raw = dict(tiny_raw_config, privacy={"epsilon": 1.0, "neighboring": "replace-one"})
    res = dpsynth.release(tiny_table, parse_config(raw), rng=np.random.default_rng(0))
    assert {c["sensitivity"] for c in res.report["ledger"]} == {2.0}
    assert res.report["privacy"]["neighbouring"] == "replace-one"
