"""What the guarantee is (issue 13 §2): ε under the declared relation and its replace-one equivalent.

Exact arithmetic checks (no randomness matters): false-failure rate 0.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import dpsynth
from dpsynth.cli import app
from dpsynth.config import parse_config
from dpsynth.privacy.accountant import BasicComposition, Charge, Ledger, ZCDPComposition, zcdp_to_approx_dp
from dpsynth.report import validate_report
from tests.helpers import ROOT


def _ledger(composition, eps: float, delta: float = 0.0, rho: float | None = None) -> Ledger:
    ledger = Ledger(10.0, 0.5 if composition.name == "zcdp" else 0.1, composition)
    ledger.charge(Charge("s", "laplace", 1.0, eps, delta=delta, rho=rho))
    return ledger


def test_add_remove_pure_doubles_epsilon():
    assert _ledger(BasicComposition(), 0.75).replace_one_equivalent("add-remove") == (1.5, 0.0)


def test_add_remove_approximate_uses_group_privacy_for_two():
    eps, delta = _ledger(BasicComposition(), 0.5, delta=1e-6).replace_one_equivalent("add-remove")
    assert eps == 1.0
    assert delta >= (1 + math.exp(0.5)) * 1e-6 and delta == pytest.approx((1 + math.exp(0.5)) * 1e-6, rel=1e-15)


def test_zcdp_quadruples_rho_at_the_same_delta():
    ledger = _ledger(ZCDPComposition(), 0.0, rho=0.4)  # ρ large enough for a positive ε at δ = 0.5
    eps, delta = ledger.replace_one_equivalent("add-remove")
    assert eps == zcdp_to_approx_dp(1.6, 0.5) and delta == ledger.spent()[1] == 0.5
    assert eps > ledger.spent()[0] > 0


def test_replace_one_declared_is_its_own_figure():
    ledger = _ledger(BasicComposition(), 0.75, delta=1e-6)
    assert ledger.replace_one_equivalent("replace-one") == ledger.spent()


@pytest.mark.parametrize(
    "privacy, factor",
    [({"epsilon": 1.0}, 2.0), ({"epsilon": 1.0, "n": {"epsilon": 0.1}}, 2.0),
     ({"epsilon": 1.0, "neighboring": "replace-one"}, 1.0)],
)
def test_report_states_both_figures(tiny_raw_config, tiny_table, privacy, factor):
    cfg = parse_config(dict(tiny_raw_config, privacy=privacy))
    report = dpsynth.release(tiny_table, cfg, rng=np.random.default_rng(0)).report
    validate_report(report)
    p = report["privacy"]
    assert p["replace_one"]["epsilon"] == factor * p["epsilon_spent"]
    assert p["replace_one"]["delta"] == 0.0
    if factor == 2.0:
        assert f"epsilon={2 * p['epsilon_spent']:.6g}" in p["replace_one"]["statement"]


def test_python_api_with_a_generator_does_not_claim_os_entropy(tiny_raw_config, tiny_table):
    """A library caller's generator may be seeded: the report must not say os-entropy (issue 13 §2)."""
    report = dpsynth.release(tiny_table, parse_config(tiny_raw_config), rng=np.random.default_rng(0)).report
    assert report["randomness"]["source"] == "caller-supplied generator"
    assert "supplied by the caller" in report["warnings"][0]
    seeded = dpsynth.release(tiny_table, parse_config(tiny_raw_config), rng=np.random.default_rng(0), seeded=True)
    assert seeded.report["randomness"]["source"] == "seeded"


def test_cli_summary_prints_the_replace_one_figure(runner, tmp_path):
    out = tmp_path / "o.csv"
    small = tmp_path / "s.csv"
    small.write_text("".join((ROOT / "sample_data" / "nltcs.csv").read_text().splitlines(keepends=True)[:301]))
    res = runner.invoke(app, ["release", "-c", str(ROOT / "configs" / "nltcs.yaml"), "-i", str(small), "-o", str(out),
                              "--seed", "1"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.stderr
    report = json.loads((tmp_path / "o.csv.report.json").read_text())
    figure = f"epsilon {report['privacy']['replace_one']['epsilon']:.6g}, delta 0"
    assert report["privacy"]["replace_one"]["epsilon"] == 2 * report["privacy"]["epsilon_spent"]
    assert "same guarantee under replace-one (equal-size datasets)" in res.stderr
    assert figure in res.stderr
    assert "epsilon spent / requested (add-remove)" in res.stderr
