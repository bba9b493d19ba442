"""Synthetic rows from released noisy marginals (dpsynth.models.synthesis), and the iReduct release end to end."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from dpsynth.algorithms.base import NoisyMarginal
from dpsynth.cli import app
from dpsynth.data.schema import CategoricalColumn, Domain
from dpsynth.models.synthesis import fit, synthesis_order, synthesize


def _domain(sizes):
    return Domain(tuple(CategoricalColumn(f"c{i}", tuple(range(s))) for i, s in enumerate(sizes)))


def _consistent(seed=0, n=10_000):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(60, 0.5)).reshape(3, 4, 5)
    return [NoisyMarginal((0, 1), p.sum(2) * n, 1.0), NoisyMarginal((1, 2), p.sum(0) * n, 1.0)], n


def test_ipf_fit_matches_consistent_marginals():
    """IPF reproduces exact (consistent) marginals up to the 1e-3 uniform mixing: L1/n ≤ 2e-3 per marginal."""
    marginals, n = _consistent()
    model = fit([3, 4, 5], marginals, total=n, passes=5, method="ipf")
    for m in marginals:
        assert np.abs(model.project(m.attrs) - m.values).sum() / n <= 2e-3


def test_mw_fit_moves_towards_the_marginals():
    """MW passes (default) reduce the L1 distance to consistent marginals: 10 passes beat 1 on every marginal."""
    marginals, n = _consistent()
    one = fit([3, 4, 5], marginals, total=n, passes=1)
    ten = fit([3, 4, 5], marginals, total=n, passes=10)
    for m in marginals:
        assert np.abs(ten.project(m.attrs) - m.values).sum() < np.abs(one.project(m.attrs) - m.values).sum()


def test_unknown_method_raises():
    marginals, n = _consistent()
    with pytest.raises(ValueError, match=re.escape("method must be 'mw' or 'ipf', got 'em'")):
        fit([3, 4, 5], marginals, total=n, method="em")


def test_sampled_rows_follow_the_fitted_model():
    """Chi-square of the sampled (0, 1) counts against the model's projection, p > 1e-6."""
    marginals, n = _consistent()
    domain = _domain([3, 4, 5])
    codes, details, warnings = synthesize(domain, marginals, 20_000, total=n, rng=np.random.default_rng(1), passes=5,
                                          method="mw")
    expected = fit(domain, marginals, total=n, passes=5).project((0, 1)).reshape(-1) * 20_000 / n
    observed = np.bincount(codes[:, 0] * 4 + codes[:, 1], minlength=12)
    assert stats.chisquare(observed, expected).pvalue > 1e-6
    assert warnings == [] and details["marginals_fitted_by_projection"] == 0


def test_negative_noisy_counts():
    """IPF: a cell with a negative noisy count gets only the mixing weight (≤ 1e-3/cells) and no NaN.
    MW: probabilities stay finite and the negative cell gets the least mass."""
    values = np.array([[500.0, -80.0], [300.0, 200.0]])
    mw = fit([2, 2], [NoisyMarginal((0, 1), values, 10.0)], total=1000, passes=3).project((0, 1))
    assert np.all(np.isfinite(mw)) and int(np.argmin(mw)) == 1
    model = fit([2, 2], [NoisyMarginal((0, 1), values, 10.0)], total=1000, passes=3, method="ipf")
    p = model.project((0, 1)) / 1000
    assert np.all(np.isfinite(p)) and p[0, 1] <= 1e-3 / 4 + 1e-12
    assert p[0, 0] == pytest.approx((1 - 1e-3) * 0.5 + 1e-3 / 4)


def test_uncovered_column_warning():
    marginals, n = _consistent()
    domain = _domain([3, 4, 5, 2])
    codes, _, warnings = synthesize(domain, marginals, 100, total=n, rng=np.random.default_rng(2))
    assert warnings == ["no workload marginal covers column(s) c3; they are sampled uniformly"]
    assert codes.shape == (100, 4) and codes[:, 3].max() <= 1


def test_synthesis_order_by_relative_noise():
    """scale·cells/n: (2·4, 1·20, 0.1·6)/100 → order 2, 0, 1."""
    ms = [NoisyMarginal((0,), np.zeros(4), 2.0), NoisyMarginal((1,), np.zeros(20), 1.0),
          NoisyMarginal((2,), np.zeros(6), 0.1)]
    assert synthesis_order(ms, 100) == [2, 0, 1]


def test_cli_release_ireduct_marginals_and_rows(runner, tmp_path, adult_path, adult_config_path):
    """`dpsynth release` with ireduct on sample_data/adult.csv: rows, long-format marginals, ledger per marginal."""
    raw = yaml.safe_load(adult_config_path.read_text())
    raw["algorithm"] = {"name": "ireduct", "params": {"synthesis_passes": 5}}
    raw["workload"] = {"marginals": [["age", "income"], ["sex", "race"], ["education"], ["hours-per-week", "sex"]]}
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump(raw, sort_keys=False))
    out, marg = tmp_path / "synth.csv", tmp_path / "marginals.csv"
    result = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(adult_path), "-o", str(out),
                                 "--marginals", str(marg), "--seed", "3", "-q"])
    assert result.exit_code == 0, result.output
    synth = pd.read_csv(out)
    assert len(synth) == 32561 and list(synth.columns) == list(raw["schema"]["columns"])
    table = pd.read_csv(marg)
    assert sorted(table["marginal_id"].unique()) == [0, 1, 2, 3]
    assert len(table) == 12 * 2 + 2 * 5 + 16 + 7 * 2
    report = json.loads((tmp_path / "synth.csv.report.json").read_text())
    assert report["privacy"]["epsilon_spent"] <= 1.0
    ledger = [c for c in report["ledger"] if c["stage"] != "fine-decode"]  # the fine view's histograms first
    assert [c["measured"] for c in ledger] == ["marginal(age, income)", "marginal(sex, race)",
                                               "marginal(education)", "marginal(hours-per-week, sex)"]
    scales = table.groupby("marginal_id")["noise_scale"].first().to_numpy()
    assert [c["scale"] for c in ledger] == pytest.approx(list(scales))
    assert re.fullmatch(r"laplace\+noisedown", ledger[0]["mechanism"])
