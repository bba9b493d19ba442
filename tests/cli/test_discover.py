"""``dpsynth schema discover``: outputs, report, exact one-line errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from dpsynth.cli import app
from dpsynth.config import parse_config


@pytest.fixture(autouse=True)
def _chdir_root(root, monkeypatch):
    monkeypatch.chdir(root)


def _small_adult(tmp_path, rows=2000):
    p = tmp_path / "adult.csv"
    pd.read_csv("sample_data/adult.csv", nrows=rows, dtype=str, keep_default_na=False).to_csv(p, index=False)
    return p


def _discover(runner, *args):
    return runner.invoke(app, ["schema", "discover", *map(str, args)])


def _one_line_error(result, code: int, message: str) -> None:
    assert result.exit_code == code, (result.exit_code, result.stderr)
    assert result.stderr == f"dpsynth: error: {message}\n"


def test_discover_writes_a_schema_section_with_header_and_a_report(runner, tmp_path):
    src = _small_adult(tmp_path)
    out = tmp_path / "schema.yaml"
    res = _discover(runner, "-i", src, "--epsilon", 2, "--delta", 1e-6, "-o", out, "--seed", 1,
                    "--max-categories", 5)
    assert res.exit_code == 0, res.stderr
    text = out.read_text()
    lines = text.splitlines()
    assert lines[0].startswith("# Learned from the data by DP schema discovery")
    assert lines[1].startswith("# Budget: epsilon=2, delta=1e-06 (spent epsilon=")
    assert "add-remove neighbours, 20" in lines[1]
    schema = yaml.safe_load(text)["schema"]
    assert list(schema["columns"]) == list(pd.read_csv(src, nrows=0).columns)
    assert all(len(c.get("categories", [])) <= 5 for c in schema["columns"].values())
    cfg = parse_config({"schema": schema, "privacy": {"epsilon": 1.0}, "workload": {"marginals": {"k": 1}}})
    assert len(cfg.domain) == 15
    report = json.loads((tmp_path / "schema.yaml.report.json").read_text())
    assert report["kind"] == "schema-discovery" and report["schema"] == schema
    p = report["privacy"]
    assert 0 < p["epsilon_spent"] <= 2.0 and p["delta_spent"] <= 1e-6
    assert sum(c["epsilon"] for c in report["ledger"]) == pytest.approx(p["epsilon_spent"])
    assert set(report["columns"]) == set(schema["columns"]) and report["settings"]["max_categories"] == 5
    assert report["randomness"]["source"] == "seeded" and "fixed seed" in report["warnings"][0]
    assert res.stderr.startswith("schema discover: 15 columns (15 learned), epsilon spent ")


def test_discover_with_hints_file_and_stdout(runner, tmp_path):
    src = _small_adult(tmp_path)
    pd.read_csv(src, dtype=str, keep_default_na=False)[["sex", "age"]].to_csv(src, index=False)  # (unlisted: discovered)
    hints = tmp_path / "hints.yaml"
    hints.write_text("columns:\n  sex: {type: categorical, categories: [Female, Male], missing: error}\n"
                     "  age: {type: numeric, lower: 17, upper: 90, integer: true, missing: error}\n")
    rep = tmp_path / "r.json"
    res = _discover(runner, "-i", src, "--epsilon", 1, "-o", "-", "-r", rep, "--hints", hints, "-q")
    assert res.exit_code == 0, res.stderr
    schema = yaml.safe_load(res.stdout)["schema"]
    assert list(schema["columns"]) == ["sex", "age"]
    assert schema["columns"]["sex"]["categories"] == ["Female", "Male"]
    report = json.loads(rep.read_text())
    assert [c["measured"] for c in report["ledger"]] == [
        "age: nonzero integers per largest public step dividing them (24 cells)",
        "age: rows per fine cell (74 public cells)", "age: rows per fine cell, again (74 public cells)"]
    assert res.stderr == ""


def test_discover_errors(runner, tmp_path):
    src = _small_adult(tmp_path)
    out = tmp_path / "s.yaml"
    _one_line_error(_discover(runner, "-i", src, "--epsilon", 1, "-o", out), 64,
                    "discovery of categories (column 'age') needs delta > 0 for partition selection; set "
                    "--delta / discover.delta (e.g. 1e-6) or give the column's type or categories as a hint")
    assert not out.exists()
    _one_line_error(_discover(runner, "-i", src, "--epsilon", 0, "-o", out), 64,
                    "discover.epsilon: must be > 0, got 0.0")
    _one_line_error(_discover(runner, "-i", src, "--epsilon", 1, "-o", out, "--edges", "log"), 2,
                    "--edges must be quantile or equal, got 'log'")
    _one_line_error(_discover(runner, "-i", src, "--epsilon", 1, "-o", "-"), 2,
                    "--report is required when the output is stdout (-o -)")
    _one_line_error(_discover(runner, "-i", tmp_path / "nope.csv", "--epsilon", 1, "--delta", 1e-6, "-o", out), 66,
                    f"input file not found: {tmp_path / 'nope.csv'}")
    out.write_text("x")
    _one_line_error(_discover(runner, "-i", src, "--epsilon", 1, "-o", out), 73,
                    f"output exists: {out} (use --force to overwrite)")


def test_schema_draft_points_to_discover(runner):
    res = runner.invoke(app, ["schema", "draft", "sample_data/nltcs.csv"])
    assert res.exit_code == 0
    assert "dpsynth schema discover" in res.stderr


def test_discover_reads_other_delimiters(runner, tmp_path):
    src = tmp_path / "semi.csv"
    pd.read_csv("sample_data/nltcs.csv", nrows=3000).to_csv(src, index=False, sep=";")
    res = _discover(runner, "-i", src, "--epsilon", 1, "--delta", 1e-6, "-o", tmp_path / "s.yaml", "--delimiter", ";",
                    "-q")
    assert res.exit_code == 0, res.stderr
    assert list(yaml.safe_load((tmp_path / "s.yaml").read_text())["schema"]["columns"]) == [f"a{i}" for i in range(16)]
