"""The release CLI: exit codes, exact one-line errors, atomic outputs, pipelines, the report."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from dpsynth.cli import app
from dpsynth.report import validate_report

NLTCS_CFG = "configs/nltcs.yaml"


@pytest.fixture(autouse=True)
def _chdir_root(root, monkeypatch):
    monkeypatch.chdir(root)


def _release(runner, *args, input=None):
    return runner.invoke(app, ["release", *map(str, args)], input=input)


def _one_line_error(result, code: int, message: str) -> None:
    assert result.exit_code == code, (result.exit_code, result.stderr)
    assert result.stderr == f"dpsynth: error: {message}\n"
    assert "Traceback" not in result.stderr


def _small_nltcs(tmp_path: Path, rows: int = 300) -> Path:
    df = pd.read_csv("sample_data/nltcs.csv", nrows=rows)
    p = tmp_path / "small.csv"
    df.to_csv(p, index=False)
    return p


def test_release_writes_rows_and_valid_report(runner, tmp_path):
    src = _small_nltcs(tmp_path)
    out = tmp_path / "synth.csv"
    res = _release(runner, "-c", NLTCS_CFG, "-i", src, "-o", out, "--seed", 3, "--silent")
    assert res.exit_code == 0, res.stderr
    synth = pd.read_csv(out)
    assert list(synth.columns) == [f"a{i}" for i in range(16)] and len(synth) == 300
    assert set(synth.stack().unique()) <= {0, 1}
    report = json.loads((tmp_path / "synth.csv.report.json").read_text())
    validate_report(report)
    assert report["privacy"]["epsilon_spent"] == pytest.approx(1.0) and report["privacy"]["epsilon_spent"] <= 1.0
    assert report["randomness"]["source"] == "seeded" and "fixed seed" in report["warnings"][0]
    assert res.stderr == ""  # --silent


def test_seeded_runs_reproduce_and_unseeded_differ(runner, tmp_path):
    src = _small_nltcs(tmp_path)
    outs = []
    for i, seed in enumerate([5, 5, None, None]):
        out = tmp_path / f"o{i}.csv"
        args = ["-c", NLTCS_CFG, "-i", src, "-o", out, "-q"] + (["--seed", seed] if seed is not None else [])
        assert _release(runner, *args).exit_code == 0
        outs.append(out.read_bytes())
    assert outs[0] == outs[1] and outs[2] != outs[3] and outs[0] != outs[2]
    rep = json.loads((tmp_path / "o2.csv.report.json").read_text())
    assert rep["randomness"]["source"] == "os-entropy"


def test_pipeline_stdin_stdout(runner, tmp_path):
    src = _small_nltcs(tmp_path)
    rep = tmp_path / "r.json"
    res = _release(runner, "-c", NLTCS_CFG, "-i", "-", "-o", "-", "-r", rep, "--quiet", input=src.read_text())
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.strip().splitlines()
    assert lines[0] == ",".join(f"a{i}" for i in range(16)) and len(lines) == 301
    assert json.loads(rep.read_text())["output"]["rows"] == 300


@pytest.mark.parametrize(
    ("content", "code", "message"),
    [
        (b"", 65, "{p}: the input is empty"),
        (b"a0,a1\n", 65, "{p}: the input has a header but no data rows"),
        (b"a0,a1\n0,1\n0,1,1\n", 65, "{p}: malformed CSV (line 3 has 3 fields, expected 2)"),
        (b"a0,a1\n\xff,1\n", 65, ("{p}: the input is not valid UTF-8 (first bad byte at offset 6); if it is in another "
                                 "encoding, pass --encoding (e.g. latin-1)")),
        (b"a0,a1\n0\x00,1\n", 65, "{p}: the input contains a NUL byte (is it a binary file?)"),
        (b"a0,a1\n0,1\n", 65, "column 'a2' is declared in the schema but missing from the input (and 13 more)"),
    ],
)
def test_bad_input_one_line_errors(runner, tmp_path, content, code, message):
    p = tmp_path / "in.csv"
    p.write_bytes(content)
    out = tmp_path / "o.csv"
    res = _release(runner, "-c", NLTCS_CFG, "-i", p, "-o", out)
    _one_line_error(res, code, message.format(p=p))
    assert list(tmp_path.iterdir()) == [p]  # nothing written, no temp files left


def test_canary_value_never_printed(runner, tmp_path):
    df = pd.read_csv("sample_data/nltcs.csv", nrows=50)
    df["a3"] = df["a3"].astype(object)
    df.loc[7, "a3"] = "CANARY-7731"
    p = tmp_path / "c.csv"
    df.to_csv(p, index=False)
    res = _release(runner, "-c", NLTCS_CFG, "-i", p, "-o", tmp_path / "o.csv")
    _one_line_error(res, 65, "column 'a3' has values outside its declared categories; add them to the schema "
                             "or set 'schema.unknown: other'")
    assert "CANARY" not in res.stderr + res.stdout


def test_exit_codes(runner, tmp_path):
    src = _small_nltcs(tmp_path)
    out = tmp_path / "o.csv"
    _one_line_error(_release(runner, "-c", NLTCS_CFG, "-i", tmp_path / "missing.csv", "-o", out), 66,
                    f"input file not found: {tmp_path / 'missing.csv'}")
    _one_line_error(_release(runner, "-c", tmp_path / "none.yaml", "-i", src, "-o", out), 66,
                    f"config file not found: {tmp_path / 'none.yaml'}")
    _one_line_error(_release(runner, "-c", NLTCS_CFG, "-i", src, "-o", "-"), 2,
                    "--report is required when the output is stdout (-o -)")
    _one_line_error(_release(runner, "-c", NLTCS_CFG, "-i", src, "-o", tmp_path / "o.txt"), 2,
                    f"{tmp_path / 'o.txt'}: unknown table format (use .csv, .csv.gz, .parquet or '-')")
    _one_line_error(_release(runner, "-c", NLTCS_CFG, "-i", src, "-o", tmp_path / "no" / "o.csv"), 73,
                    f"cannot create output {tmp_path / 'no' / 'o.csv'}: directory {tmp_path / 'no'} does not exist")
    out.write_text("keep me")
    _one_line_error(_release(runner, "-c", NLTCS_CFG, "-i", src, "-o", out), 73,
                    f"output exists: {out} (use --force to overwrite)")
    assert out.read_text() == "keep me"
    assert _release(runner, "-c", NLTCS_CFG, "-i", src, "-o", out, "--force", "-q").exit_code == 0
    assert out.read_text() != "keep me"
    # missing required option: click usage error, exit 2
    assert _release(runner, "-c", NLTCS_CFG).exit_code == 2


def test_config_error_exit_64_and_max_cells(runner, tmp_path):
    src = _small_nltcs(tmp_path)
    raw = yaml.safe_load(Path(NLTCS_CFG).read_text())
    raw["privacy"]["epsilon"] = -1
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(raw))
    _one_line_error(_release(runner, "-c", bad, "-i", src, "-o", tmp_path / "o.csv"), 64,
                    "privacy.epsilon: must be > 0, got -1.0")
    # the domain check happens before the data is read: a missing input is not even looked at
    _one_line_error(_release(runner, "-c", NLTCS_CFG, "-i", tmp_path / "absent.csv", "-o", tmp_path / "o.csv",
                             "--max-cells", 3), 64,
                    "workload.marginals: the largest marginal has 4 cells, more than the limit of 3 "
                    "(raise --max-cells / limits.max_cells or use coarser bins)")


def test_budget_error_exit_3(runner, tmp_path, monkeypatch):
    from dpsynth.algorithms import laplace
    from dpsynth.privacy.accountant import Charge

    src = _small_nltcs(tmp_path)
    original = laplace.run

    def greedy(ctx, params, *, rng):  # a buggy algorithm that overspends is stopped by the ledger
        ctx.ledger.charge(Charge(stage="bug", mechanism="x", sensitivity=1.0, epsilon=5.0))
        return original(ctx, params, rng=rng)

    monkeypatch.setattr(laplace, "SPEC", dataclasses.replace(laplace.SPEC, run=greedy))
    res = _release(runner, "-c", NLTCS_CFG, "-i", src, "-o", tmp_path / "o.csv")
    assert res.exit_code == 3 and res.stderr.startswith("dpsynth: error: privacy budget exceeded at stage 'bug'")
    assert list(tmp_path.iterdir()) == [src]


def test_internal_error_is_one_line_without_locals(runner, tmp_path, monkeypatch):
    from dpsynth.algorithms import laplace

    src = _small_nltcs(tmp_path)

    def crash(ctx, params, *, rng):
        secret = "CANARY-LOCAL"  # noqa: F841  (a local that must never be shown)
        raise RuntimeError("boom")

    monkeypatch.setattr(laplace, "SPEC", dataclasses.replace(laplace.SPEC, run=crash))
    res = _release(runner, "-c", NLTCS_CFG, "-i", src, "-o", tmp_path / "o.csv")
    _one_line_error(res, 70, "internal error (RuntimeError); no output was written. Rerun with DPSYNTH_DEBUG=1 "
                             "to see the traceback (it may show private values)")
    assert "CANARY" not in res.stderr


def test_parquet_and_gzip_round_trip(runner, tmp_path):
    src = _small_nltcs(tmp_path)
    pq = tmp_path / "in.parquet"
    pd.read_csv(src).to_parquet(pq)
    out = tmp_path / "o.csv.gz"
    marg = tmp_path / "m.parquet"
    res = _release(runner, "-c", NLTCS_CFG, "-i", pq, "-o", out, "--marginals", marg, "-q", "--seed", 1)
    assert res.exit_code == 0, res.stderr
    assert len(pd.read_csv(out)) == 300
    m = pd.read_parquet(marg)
    assert list(m.columns[:2]) == ["marginal_id", "marginal"] and m["marginal_id"].nunique() == 120
    assert {"noisy_count", "noise_scale"} <= set(m.columns)


def test_help_and_version(runner):
    assert runner.invoke(app, ["--help"]).exit_code == 0
    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.startswith("dpsynth ")


def test_schema_draft_warns(runner, tmp_path):
    src = _small_nltcs(tmp_path, 20)
    res = runner.invoke(app, ["schema", "draft", str(src)])
    assert res.exit_code == 0
    assert "NOT differentially private" in res.stderr
    doc = yaml.safe_load(res.stdout)
    assert set(doc["schema"]["columns"]) == {f"a{i}" for i in range(16)}


def test_python_dash_m_entry_point(root, tmp_path):
    res = subprocess.run([sys.executable, "-m", "dpsynth", "--version"], capture_output=True, text=True, cwd=root, check=False,
                         env={**os.environ, "PYTHONPATH": str(root)})
    assert res.returncode == 0 and res.stdout.startswith("dpsynth ")


def test_startup_leaves_the_heavy_libraries_unimported(root):
    """Every command starts a process (the doc pages, the shell jobs): scipy.stats (~1 s CPU), plotting, the
    solver and Spark are imported where used, not when ``dpsynth`` starts."""
    heavy = ("scipy.stats", "matplotlib", "pulp", "pyspark")
    code = f"import sys, dpsynth.cli; print([m for m in {heavy!r} if m in sys.modules])"
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=False,
                         env={**os.environ, "PYTHONPATH": str(root)})
    assert res.returncode == 0 and res.stdout.strip() == "[]", res.stdout + res.stderr


@pytest.mark.parametrize(("config", "message"), [
    ("configs/adult-ireduct-queries.yaml", ("workload.queries: the noisy answers are in the report "
     "(algorithm.details.queries), not in --marginals (drop --marginals)")),
])
def test_marginals_an_algorithm_cannot_release_is_refused_before_any_data(runner, tmp_path, config, message):
    """Known from the config alone: exit 2 before the input is opened (it does not exist here) or budget spent."""
    res = _release(runner, "-c", config, "-i", tmp_path / "absent.csv", "-o", tmp_path / "o.csv",
                   "--marginals", tmp_path / "m.csv")
    _one_line_error(res, 2, message)
    assert not list(tmp_path.iterdir())
