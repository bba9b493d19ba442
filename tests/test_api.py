"""The names ``dpsynth`` exports (``dpsynth.__all__``) beyond the release calls: the algorithm list and the plan."""

from __future__ import annotations

import json

import dpsynth
from dpsynth.algorithms import algorithm_names, get_algorithm
from dpsynth.cli import app
from dpsynth.plan import make_plan

ADULT_CFG = "configs/adult.yaml"


def test_every_exported_name_exists():
    assert sorted(dpsynth.__all__) == sorted(set(dpsynth.__all__))
    missing = [name for name in dpsynth.__all__ if not hasattr(dpsynth, name)]
    assert not missing, missing


def test_algorithms_is_the_registry():
    assert dpsynth.ALGORITHMS == algorithm_names() and len(dpsynth.ALGORITHMS) >= 8
    for name in dpsynth.ALGORITHMS:
        spec = dpsynth.get_algorithm(name)
        assert isinstance(spec, dpsynth.AlgorithmSpec) and spec.name == name and spec is get_algorithm(name)
        assert spec.summary and dpsynth.Config.build(columns={"a": {"type": "integer", "lower": 0, "upper": 3}},
                                                     epsilon=1.0, delta=1e-6, algorithm=name).algorithm == name


def test_make_plan_is_the_plan_command(runner):
    """``dpsynth.make_plan`` gives the plan ``dpsynth plan --json`` prints, and ``format_plan`` its text."""
    assert dpsynth.make_plan is make_plan
    config = dpsynth.load_config(ADULT_CFG)
    plan = dpsynth.make_plan(config, rows=1000)
    assert isinstance(plan, dpsynth.Plan) and plan.rows == 1000 and plan.rows_source
    as_json = runner.invoke(app, ["plan", "-c", ADULT_CFG, "--rows", "1000", "--json"])
    assert as_json.exit_code == 0 and json.loads(as_json.stdout) == plan.to_dict()
    text = runner.invoke(app, ["plan", "-c", ADULT_CFG, "--rows", "1000"])
    assert text.exit_code == 0 and text.stdout == dpsynth.format_plan(plan)


def test_the_python_api_page_names_every_export():
    from tests.helpers import ROOT

    page = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    table = page.split("\n## Every exported name\n", 1)[1]
    missing = [name for name in dpsynth.__all__ if f"`{name}`" not in table]
    assert not missing, f"docs/python-api.md's list of exported names lacks {missing}"
