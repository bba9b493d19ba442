"""``dpsynth report show`` prints the report's error bounds (issue 28 §3): per marginal, per class, or why none."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from dpsynth.cli import app

HEAD = ("## Error bounds\nL1 distance between the true and the model's normalised marginal is at most the bound "
        "with probability >= 95% for each marginal (computed from mechanism outputs only; rows' sampling error "
        "not included).\n")


@pytest.fixture
def released(runner, root, tmp_path):
    src = tmp_path / "small.csv"
    pd.read_csv(root / "sample_data" / "nltcs.csv", nrows=2000).to_csv(src, index=False)
    res = runner.invoke(app, ["release", "-c", str(root / "configs" / "nltcs.yaml"), "-i", str(src), "-o",
                              str(tmp_path / "o.csv"), "--seed", "1", "--silent"])
    assert res.exit_code == 0, res.stderr
    return tmp_path / "o.csv.report.json"


def _show(runner, path) -> str:
    res = runner.invoke(app, ["report", "show", str(path)])
    assert res.exit_code == 0, res.stderr
    return res.stdout


def test_a_large_workload_is_shown_per_class(runner, released):
    """120 two-way marginals (laplace measures each): one row per class, every marginal bounded."""
    report = json.loads(released.read_text())
    c = report["error_bounds"]["classes"][0]
    assert (c["class"], c["marginals"], c["bounded"]) == ("2-way", 120, 120)
    row = f"| 2-way | 120 | 120 | {c['median_bound']:.4f} | {c['max_bound']:.4f} | 95% |\n"
    assert HEAD + "| class | marginals | bounded | median bound | max bound | level |\n|---|---|---|---|---|---|\n" \
        + row + "\n## Public (not protected)" in _show(runner, released)


def test_a_small_workload_is_shown_per_marginal(runner, released):
    report = json.loads(released.read_text())
    report["error_bounds"] = {
        "available": True, "level": 0.95, "statement": "s",
        "classes": [{"class": "1-way", "marginals": 1, "bounded": 1, "median_bound": 0.05, "max_bound": 0.05},
                    {"class": "2-way", "marginals": 2, "bounded": 1, "median_bound": 2.0, "max_bound": 2.0}],
        "marginals": [{"marginal": ["a0"], "bound": 0.05, "measured": "yes", "from": ["a0"]},
                      {"marginal": ["a0", "a1"], "bound": 2.0, "measured": "superset", "from": ["a0", "a1", "a2"]},
                      {"marginal": ["a1", "a2"], "bound": None, "measured": "no", "from": None}],
        "reason_unbounded": "1 workload marginal(s) are contained in no released marginal",
    }
    released.write_text(json.dumps(report))
    assert HEAD + (
        "| marginal | bound | level | measured |\n|---|---|---|---|\n"
        "| a0 | 0.0500 | 95% | yes |\n"
        "| a0, a1 | 2 (vacuous) | 95% | superset |\n"
        "| a1, a2 | no bound | 95% | no |\n"
        "- 1 workload marginal(s) are contained in no released marginal\n\n## Public (not protected)"
    ) in _show(runner, released)


def test_no_bound_is_shown_with_its_reason(runner, released):
    report = json.loads(released.read_text())
    report["error_bounds"] = {"available": False, "level": 0.95, "reason": "dualquery: no per-marginal measurement"}
    released.write_text(json.dumps(report))
    assert "\n## Error bounds\n- no bound: dualquery: no per-marginal measurement\n\n## Public" in _show(runner, released)


def test_a_report_without_the_section_is_still_shown(runner, released):
    """Reports written before the section existed validate and show without it."""
    report = json.loads(released.read_text())
    del report["error_bounds"]
    released.write_text(json.dumps(report))
    assert "## Error bounds" not in _show(runner, released)


def test_a_bound_out_of_range_fails_the_schema(runner, released):
    report = json.loads(released.read_text())
    report["error_bounds"]["marginals"] = [{"marginal": ["a0"], "bound": 3.0, "measured": "yes", "from": ["a0"]}]
    released.write_text(json.dumps(report))
    res = runner.invoke(app, ["report", "show", str(released)])
    assert res.exit_code == 64
    assert res.stderr == (f"dpsynth: error: {released}: not a valid dpsynth report (schema check failed at "
                          "error_bounds/marginals/0/bound)\n")
