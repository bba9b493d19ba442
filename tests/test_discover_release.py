"""One run: ``schema: {discover: ...}`` learns the schema in the release's budget, then releases with it."""

from __future__ import annotations

import json
import re
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import yaml

import dpsynth
from dpsynth.cli import app
from dpsynth.config import parse_config
from dpsynth.errors import ConfigError
from dpsynth.pipeline import release_from_source
from dpsynth.privacy.accountant import approx_dp_to_zcdp, zcdp_share, zcdp_to_approx_dp
from dpsynth.report import validate_report

CONFIG = {
    "schema": {"discover": {"epsilon": 0.3, "delta": 1e-7,
                            "columns": {"workclass": {"missing": "category"}, "age": {}, "sex": {},
                                        "hours-per-week": {"type": "numeric", "lower": 1, "upper": 99},
                                        "income": {"type": "categorical", "categories": ["<=50K", ">50K"],
                                                   "missing": "error"}}}},
    "privacy": {"epsilon": 1.0, "delta": 1e-6},
    "algorithm": {"name": "mwem", "params": {"iterations": 3}},
    "workload": {"marginals": [["age", "sex"], ["workclass", "income"], ["hours-per-week"]]},
}


@pytest.fixture(autouse=True)
def _chdir_root(root, monkeypatch):
    monkeypatch.chdir(root)


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return pd.read_csv("sample_data/adult.csv", nrows=5000, keep_default_na=False, na_values=[""])


@pytest.mark.parametrize(("algorithm", "params"), [("mwem", {"iterations": 3}), ("laplace", {}),
                                                   ("mwem", {"iterations": 3, "accounting": "zcdp"})])
def test_release_with_discovery_covers_both_phases_in_one_ledger(adult, algorithm, params):
    raw = {**CONFIG, "algorithm": {"name": algorithm, "params": params}}
    hinted = list(CONFIG["schema"]["discover"]["columns"])  # (a column the hints do not list is discovered too)
    res = dpsynth.release(adult[hinted], parse_config(raw), rng=np.random.default_rng(5))
    report = res.report
    validate_report(report)
    p = report["privacy"]
    assert (p["epsilon_requested"], p["delta_requested"]) == (1.0, 1e-6)
    stages = [c["stage"] for c in report["ledger"]]
    n_disc = stages.count("discover")
    assert n_disc >= 5 and stages[:n_disc] == ["discover"] * n_disc  # discovery first
    assert Fraction(p["epsilon_spent"]) <= Fraction(1.0) and Fraction(p["delta_spent"]) <= Fraction(1e-6)
    assert p["epsilon_spent"] == pytest.approx(1.0)  # the release spends what discovery left
    if p["composition"]["theorem"] == "basic":  # two ledgers composed sequentially
        eps_disc = sum((Fraction(c["epsilon"]) for c in report["ledger"][:n_disc]), Fraction(0))
        eps_all = sum((Fraction(c["epsilon"]) for c in report["ledger"]), Fraction(0))
        assert eps_disc <= Fraction(0.3) and p["discovery"]["epsilon_spent"] == float(eps_disc)
        assert p["epsilon_spent"] == float(eps_all) and eps_all <= Fraction(1.0)
        assert sum((Fraction(c["delta"]) for c in report["ledger"]), Fraction(0)) <= Fraction(1e-6)
        assert p["discovery"]["release_epsilon_budget"] == pytest.approx(1.0 - float(eps_disc))
    else:  # one zCDP ledger: the discovery takes 0.3 of the rho left once its partition selections' delta is set aside
        disc = report["ledger"][:n_disc]
        approx = sum(c["approx_delta"] for c in disc)
        assert 0 < approx <= 1e-7 and {c["mechanism"] for c in disc} >= {"discrete-gaussian",
                                                                         "gaussian-partition-selection"}
        rho_disc = sum(c["rho"] for c in disc)
        assert rho_disc <= zcdp_share(1.0, 1e-6, 0.3, 1e-7) * (1 + 1e-12)
        assert sum(c["rho"] for c in report["ledger"]) <= approx_dp_to_zcdp(1.0, 1e-6 - approx) * (1 + 1e-12)
        assert p["discovery"]["epsilon_spent"] == pytest.approx(zcdp_to_approx_dp(rho_disc, 1e-6 - approx))
        assert p["discovery"]["release_epsilon_budget"] == 1.0
    assert [c["name"] for c in report["domain"]] == ["workclass", "age", "sex", "hours-per-week", "income"]
    assert list(res.synthetic.columns) == ["workclass", "age", "sex", "hours-per-week", "income"]
    assert res.diagnostics["discovered_schema"]["columns"]["income"]["categories"] == ["<=50K", ">50K"]
    assert "discovery" in p["public_information"][0]
    assert res.model.privacy == p and res.model.ledger == report["ledger"]
    assert report["model"]["sha256"] == res.model.sha256


@pytest.mark.parametrize(("change", "message"), [
    ({"privacy": {"epsilon": 0.3}}, ("schema.discover.epsilon: must be smaller than privacy.epsilon (0.3 >= 0.3); "
                                     "it is a share of the release's budget")),
    ({"privacy": {"epsilon": 1.0}}, ("schema.discover.delta: must be at most privacy.delta (1e-07 > 0); it is a "
                                     "share of the release's budget")),
    ({"schema": {"discover": {"epsilon": 0.1}, "columns": {}}}, "schema.columns: unknown key (allowed: discover)"),
    ({"workload": {"margins": {}}},
     ("workload.margins: unknown key (allowed: conjunctions, linear, marginals, parities, queries, ranges, "
      "sanity_bounds)")),
    ({"algorithm": {"name": "nope"}}, "algorithm.name: must be one of"),
])
def test_discover_config_errors_before_reading_data(change, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_config({**CONFIG, **change})


def test_workload_is_checked_against_the_discovered_schema(adult):
    cfg = parse_config({**CONFIG, "workload": {"marginals": [["age", "nope"]]}})
    with pytest.raises(ConfigError, match=re.escape("workload.marginals[0][1]: unknown column 'nope'")):
        dpsynth.release(adult, cfg, rng=np.random.default_rng(0))


def test_discovery_runs_on_the_stream_engine(adult, tmp_path):
    """``schema.discover`` with hints on --engine stream: the same seeded release as the numpy engine (issue 27
    item 6; tests/data/test_discover_engines.py has the zero-config cases)."""
    src = tmp_path / "adult.csv"
    adult.head(2000).to_csv(src, index=False)
    cfg = parse_config(CONFIG)
    got = {e: release_from_source(str(src), cfg, engine=e, rng=np.random.default_rng(0), seeded=True)
           for e in ("numpy", "stream")}
    assert got["numpy"].diagnostics["discovered_schema"] == got["stream"].diagnostics["discovered_schema"]
    assert json.dumps(got["numpy"].report) == json.dumps(got["stream"].report)
    assert got["numpy"].synthetic.equals(got["stream"].synthetic)


def test_cli_release_with_discovery(runner, tmp_path, adult):
    src = tmp_path / "adult.csv"
    adult.to_csv(src, index=False)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(CONFIG))
    out = tmp_path / "s.csv"
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(src), "-o", str(out), "--seed", "1", "-q"])
    assert res.exit_code == 0, res.stderr
    report = json.loads((tmp_path / "s.csv.report.json").read_text())
    validate_report(report)
    assert report["ledger"][0]["stage"] == "discover" and report["privacy"]["epsilon_spent"] <= 1.0
    assert len(pd.read_csv(out)) == 5000


def test_cli_refuses_the_oracle_with_discovery(runner, tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(yaml.safe_dump(CONFIG))
    res = runner.invoke(app, ["oracle", "-c", str(cfg), "-i", "sample_data/adult.csv"])
    assert res.exit_code == 2
    assert res.stderr == "dpsynth: error: dpsynth oracle needs a public schema, not schema.discover\n"
