"""The fine view of numbers (issue 25): its public grid, the decision, decoding, the model file and the plan."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dpsynth
from dpsynth.config import parse_config
from dpsynth.data.fine import STAGE, FineColumn, FineSettings, decide, draw_in_bins, fine_counts, fine_grid
from dpsynth.data.schema import DatetimeColumn, Domain, NumericColumn
from dpsynth.errors import ConfigError
from dpsynth.modelfile import model_from_bytes
from dpsynth.plan.budget import planned_stages
from dpsynth.privacy.accountant import Ledger
from dpsynth.privacy.neighbouring import Neighbouring


def test_grid_cuts_every_bin_into_equal_sub_cells():
    spec = NumericColumn("x", (0.0, 10.0, 30.0))
    assert np.allclose(fine_grid(spec, 4), [0, 2.5, 5, 7.5, 10, 15, 20, 25, 30])


def test_grid_of_an_integer_column_is_whole_numbers_one_per_integer_in_small_bins():
    spec = NumericColumn("k", (0.0, 1.0, 3.0, 100.0), integral=True)
    grid = fine_grid(spec, 8)
    assert np.all(grid == np.round(grid))
    assert list(grid[:4]) == [0, 1, 2, 3] and grid[-1] == 101  # the last bin holds 100 (closed)
    assert len(grid) - 1 == 1 + 2 + 8
    assert fine_grid(NumericColumn("b", (0.0, 1.0, 1.5), integral=True), 8) is None  # one integer per bin


def test_fine_counts_ignore_nulls_and_sum_to_the_values():
    spec = NumericColumn("x", (0.0, 10.0, 30.0))
    grid = fine_grid(spec, 4)
    values = np.array([0.0, 2.5, 9.99, 10.0, 30.0, np.nan])
    counts = fine_counts(values, np.isnan(values), spec, grid)
    assert counts.tolist() == [1, 1, 0, 1, 1, 0, 0, 1]


def _draw(spec, weights, b, limit=None, seed=0):
    return draw_in_bins(np.asarray(b), spec, FineColumn(fine_grid(spec, len(weights) // spec.n_bins),
                                                        np.asarray(weights, float)), np.random.default_rng(seed), limit)


def test_draws_follow_the_sub_cell_weights_inside_the_bin():
    """Bin [0, 10) in 4 sub-cells weighted 1:0:0:3: the share of draws below 2.5 is 1/4 (6 standard errors)."""
    spec = NumericColumn("x", (0.0, 10.0, 20.0))
    n = 20_000
    v = _draw(spec, [1, 0, 0, 3, 0, 0, 0, 0], np.zeros(n, dtype=int))
    assert np.all((v >= 0) & (v < 10))
    assert not np.any((v >= 2.5) & (v < 7.5))
    assert abs(np.mean(v < 2.5) - 0.25) < 6 * np.sqrt(0.25 * 0.75 / n)
    # inside a sub-cell the draw is uniform: KS against U[7.5, 10) at level 1e-6
    top = v[v >= 7.5]
    assert stats.kstest(top, stats.uniform(7.5, 2.5).cdf).pvalue > 1e-6


def test_a_bin_without_noisy_mass_decodes_uniformly():
    spec = NumericColumn("x", (0.0, 10.0, 20.0))
    n = 20_000
    v = _draw(spec, [1, 0, 0, 0, 0, 0, 0, 0], np.ones(n, dtype=int))
    assert np.all((v >= 10) & (v < 20))
    assert stats.kstest(v, stats.uniform(10, 10).cdf).pvalue > 1e-6


def test_integer_and_datetime_draws_are_whole_units_inside_bin_and_limit():
    spec = NumericColumn("k", (0.0, 3.0, 100.0), integral=True)
    b = np.repeat([0, 1], 5000)
    grid = fine_grid(spec, 4)
    v = draw_in_bins(b, spec, FineColumn(grid, np.ones(len(grid) - 1)), np.random.default_rng(1))
    assert np.all(v == np.round(v)) and set(v[b == 0]) == {0.0, 1.0, 2.0}
    assert v[b == 1].min() >= 3 and v[b == 1].max() == 100  # the closed upper edge is reachable
    lim = draw_in_bins(b, spec, FineColumn(grid, np.ones(len(grid) - 1)), np.random.default_rng(2), (1.0, 50.0))
    assert set(lim[b == 0]) == {1.0, 2.0} and lim[b == 1].max() <= 50
    day = 86400.0
    t = DatetimeColumn("t", (0.0, 10 * day, 20 * day))
    tv = draw_in_bins(np.repeat([0, 1], 500), t, FineColumn(fine_grid(t, 4) * day, np.ones(8)),
                      np.random.default_rng(3))
    assert np.all(np.mod(tv, day) == 0) and tv.min() >= 0 and tv.max() < 20 * day


def test_a_fine_column_rejects_bad_arrays():
    with pytest.raises(ValueError, match="ascending finite edges"):
        FineColumn(np.array([0.0, 1.0]), np.array([-1.0]))


def _domain():
    return Domain((NumericColumn("x", (0.0, 50.0, 100.0)),))


@pytest.mark.parametrize(("n", "on"), [(100, False), (100_000, True)])
def test_auto_decides_from_n_and_the_noise(n, on):
    ledger = Ledger(1.0)
    d = decide(_domain(), FineSettings(), n=n, ledger=ledger, neighbouring=Neighbouring.ADD_REMOVE)
    assert d.on is on
    # σ = √2·1/0.1 ≈ 14.1; cells = min(32, n // (6σ))
    assert d.cells == (min(32, int(n // (6 * np.sqrt(2) / 0.1))) if on else 0)


def test_auto_is_off_without_a_bin_to_refine_and_on_an_engine_without_raw_numbers():
    dom = Domain((NumericColumn("b", (0.0, 1.0, 1.5), integral=True),))
    assert not decide(dom, FineSettings(), n=1e6, ledger=Ledger(1.0), neighbouring=Neighbouring.ADD_REMOVE).on
    d = decide(_domain(), FineSettings(), n=1e6, ledger=Ledger(1.0), neighbouring=Neighbouring.ADD_REMOVE,
               available=False)
    assert not d.on and "numpy engine" in d.reason
    with pytest.raises(ConfigError, match=re.escape("decode.fine: the fine view reads the raw numbers")):
        decide(_domain(), FineSettings("on"), n=1e6, ledger=Ledger(1.0), neighbouring=Neighbouring.ADD_REMOVE,
               available=False)


@pytest.mark.parametrize(("decode", "message"), [
    ({"fine": "yes"}, "decode.fine: must be one of auto, on, off, got 'yes'"),
    ({"share": 1.5}, "decode.share: must be in (0, 1), got 1.5"),
    ({"cells": 1}, "decode.cells: must be >= 2"),
    ({"bins": 3}, "decode.bins: unknown key (allowed: cells, fine, share)"),
])
def test_decode_section_errors_name_the_key(decode, message):
    raw = {"schema": {"columns": {"x": {"type": "numeric", "lower": 0, "upper": 1, "bins": 2}}},
           "privacy": {"epsilon": 1.0}, "decode": decode}
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_config(raw)


def _income(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"inc": np.clip(rng.lognormal(11, 0.6, n), 0, 3e6).round().astype(int),
                         "g": rng.choice(["a", "b"], n)})


def _raw(fine="auto", **privacy):
    return {"schema": {"columns": {"inc": {"type": "numeric", "lower": 0, "upper": 3000000, "bins": 10,
                                           "integer": True},
                                   "g": {"type": "categorical", "categories": ["a", "b"]}}},
            "privacy": {"epsilon": 1.0, **privacy}, "algorithm": {"name": "laplace"},
            "workload": {"marginals": [["inc", "g"]]}, "decode": {"fine": fine}}


def test_coarse_bins_decode_near_the_real_median_and_the_model_file_decodes_the_same_way():
    """Income bins of 300k: uniform decoding puts the median near 150k; the fine view near the real ~60k."""
    table = _income()
    res = dpsynth.release(table, parse_config(_raw()), rng=np.random.default_rng(5))
    assert res.report["decode"]["fine"] == "on"
    real = np.median(table["inc"])
    synth = res.synthetic["inc"]
    assert synth.dtype == np.int64 and synth.min() >= 0 and synth.max() <= 3_000_000
    assert abs(np.median(synth) / real - 1) < 0.15
    off = dpsynth.release(table, parse_config(_raw("off")), rng=np.random.default_rng(5)).synthetic["inc"]
    assert np.median(off) > 2 * real
    loaded = model_from_bytes(res.model.to_bytes())
    assert loaded.fine is not None and loaded.sha256 == res.model.sha256
    np.testing.assert_array_equal(loaded.fine.columns["inc"].weights, res.model.fine.columns["inc"].weights)
    again = loaded.sample(4000, rng=np.random.default_rng(1))["inc"]
    assert abs(np.median(again) / real - 1) < 0.15


@pytest.mark.parametrize("privacy", [{}, {"delta": 1e-6, "neighbouring": "replace-one"}])
def test_plan_shows_the_fine_stage_as_the_ledger_charges_it(privacy):
    raw = _raw("on", **privacy)
    raw["algorithm"] = {"name": "mwem", "params": {"accounting": "zcdp"}} if privacy else raw["algorithm"]
    cfg = parse_config(raw)
    table = _income()
    report = dpsynth.release(table, cfg, rng=np.random.default_rng(2)).report
    planned = planned_stages(cfg, len(table))
    fine = [c for c in report["ledger"] if c["stage"] == STAGE]
    assert planned[0].stage == STAGE and planned[0].charges == len(fine) == 1
    assert planned[0].epsilon == pytest.approx(tuple(c["epsilon"] for c in fine), abs=1e-12)
    assert planned[0].delta == fine[0]["delta"]
    assert planned[1].stage == report["ledger"][1]["stage"]
    assert ("discrete Gaussian" if privacy else "discrete Laplace") in planned[0].text
