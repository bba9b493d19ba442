"""Bad input never hurts: clean one-line failures, no output, no leaked values; atomic output under SIGKILL.

Each bad-input case checks: the documented exit code, exactly one ``dpsynth: error:`` line (other
stderr lines may only be ``notice:`` lines), no traceback, no file left in the output directory
(not even a temporary one), and a planted canary cell value never appears on stderr or stdout.
(tests/test_cli.py pins the exact messages of the basic CSV errors; the cases here add the canary,
the remaining input defects and the exit-code contract.)  Deterministic except the SIGKILL test,
whose kill times are drawn from a fixed seed.  No wall-clock assertions: the subprocess tests use
a timeout only as a hang guard.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

import dpsynth
from dpsynth.algorithms import algorithm_names
from dpsynth.cli import app, make_rng
from dpsynth.config import parse_config
from dpsynth.report import validate_report

CANARY = "CANARY-93517"
CONFIG = {
    "schema": {"columns": {
        "age": {"type": "numeric", "lower": 0, "upper": 100, "bins": 4},
        "city": {"type": "categorical", "categories": ["a", "b", "c"]},
    }},
    "privacy": {"epsilon": 1.0},
    "algorithm": {"name": "laplace"},
    "workload": {"marginals": {"k": 2}},
}
from tests.helpers import ROOT


@pytest.fixture
def cfg_path(tmp_path) -> Path:
    p = tmp_path / "cfg.yaml"
    p.write_text(yaml.safe_dump(CONFIG))
    return p


@pytest.fixture
def out_dir(tmp_path) -> Path:
    d = tmp_path / "out"
    d.mkdir()
    return d


def _check_clean_failure(res, code: int, message: str, out_dir: Path) -> None:
    assert res.exit_code == code, (res.exit_code, res.stderr)
    lines = res.stderr.splitlines()
    errors = [ln for ln in lines if ln.startswith("dpsynth: error: ")]
    assert errors == [f"dpsynth: error: {message}"], res.stderr
    assert all(ln.startswith("notice: ") for ln in lines if ln not in errors), res.stderr
    assert "Traceback" not in res.stderr and CANARY not in res.stderr + res.stdout
    assert list(out_dir.iterdir()) == []


def _csv(*rows: str) -> bytes:
    return ("\n".join(rows) + "\n").encode()


BIG = "q" * 10_000_000
CSV_CASES = {
    # name: (content, exit code, message with {p} for the input path)
    "empty": (b"", 65, "{p}: the input is empty"),
    "header only": (_csv("age,city,note"), 65, "{p}: the input has a header but no data rows"),
    "all-null column": (_csv("age,city,note", f",a,{CANARY}", ",b,x"), 65,
                        "column 'age' has null values; declare 'missing: category' in its schema to keep them"),
    "non-UTF-8": (_csv("age,city,note", f"3,a,{CANARY}") + b"4,\xe9,x\n", 65,
                  ("{p}: the input is not valid UTF-8 (first bad byte at offset 33); if it is in another encoding, "
                  "pass --encoding (e.g. latin-1)")),
    "NUL byte": (_csv("age,city,note", f"3,a,{CANARY}", "4,b\x00,x"), 65,
                 "{p}: the input contains a NUL byte (is it a binary file?)"),
    "ragged": (_csv("age,city,note", f"3,a,{CANARY}", "4,b,x,y"), 65,
               "{p}: malformed CSV (line 3 has 4 fields, expected 3)"),
    "10 MB field": (_csv("age,city,note", f"3,{CANARY}{BIG},x", "4,b,x"), 65,
                    ("column 'city' has values outside its declared categories; add them to the schema or set "
                    "'schema.unknown: other'")),
    "10 MB field in a numeric column": (_csv("age,city,note", f"3{BIG},a,{CANARY}", "4,b,x"), 65,
                                        "column 'age' is declared numeric but has non-numeric values"),
    "schema/column mismatch": (_csv("age,town,note", f"3,a,{CANARY}"), 65,
                               "column 'city' is declared in the schema but missing from the input"),
    "duplicate header": (_csv("age,city,city", f"3,a,{CANARY}"), 65, "{p}: the header repeats the column name 'city'"),
    "NaN in a numeric column": (_csv("age,city,note", f"nan,a,{CANARY}", "4,b,x"), 65,
                                "column 'age' is declared numeric but has non-numeric values"),
    "inf in a numeric column": (_csv("age,city,note", f"inf,a,{CANARY}", "4,b,x"), 65,
                                ("column 'age' has values outside its declared range [0, 100] (or not finite); widen "
                                "the schema or set 'schema.unknown: other' to clamp them")),
    "text in a numeric column": (_csv("age,city,note", f"{CANARY},a,x", "4,b,x"), 65,
                                 "column 'age' is declared numeric but has non-numeric values"),
}


@pytest.mark.parametrize("case", list(CSV_CASES))
def test_bad_csv(runner, cfg_path, out_dir, tmp_path, case):
    content, code, message = CSV_CASES[case]
    p = tmp_path / "in.csv"
    p.write_bytes(content)
    res = runner.invoke(app, ["release", "-c", str(cfg_path), "-i", str(p), "-o", str(out_dir / "o.csv")])
    _check_clean_failure(res, code, message.format(p=p), out_dir)


PARQUET_CASES = {
    "text in a numeric column": (lambda: pd.DataFrame({"age": [CANARY, "x"], "city": ["a", "b"]}), 65,
                                 "column 'age' is declared numeric but has non-numeric values"),
    "integers in a categorical column": (lambda: pd.DataFrame({"age": [3.0, 4.0], "city": [1, 2],
                                                               "note": [CANARY, "x"]}), 65,
                                         ("column 'city' has values outside its declared categories; add them to "
                                         "the schema or set 'schema.unknown: other'")),
    "booleans in a numeric column": (lambda: pd.DataFrame({"age": [True, False], "city": ["a", "b"],
                                                           "note": [CANARY, "x"]}), 65,
                                     "column 'age' is declared numeric but its values are not numbers"),
    "timestamps in a numeric column": (lambda: pd.DataFrame({"age": pd.to_datetime(["2020-01-01", "2021-01-01"]),
                                                             "city": ["a", "b"], "note": [CANARY, "x"]}), 65,
                                       "column 'age' is declared numeric but its values are not numbers"),
    "NaN in a numeric column": (lambda: pd.DataFrame({"age": [np.nan, 4.0], "city": ["a", "b"],
                                                      "note": [CANARY, "x"]}), 65,
                                "column 'age' has null values; declare 'missing: category' in its schema to keep them"),
    "-inf in a numeric column": (lambda: pd.DataFrame({"age": [-np.inf, 4.0], "city": ["a", "b"],
                                                       "note": [CANARY, "x"]}), 65,
                                 ("column 'age' has values outside its declared range [0, 100] (or not finite); "
                                 "widen the schema or set 'schema.unknown: other' to clamp them")),
    "lists in a categorical column": (lambda: pd.DataFrame({"age": [3.0, 4.0], "city": [[CANARY], ["b"]]}), 65,
                                      ("column 'city' has values outside its declared categories; add them to the "
                                      "schema or set 'schema.unknown: other'")),
}


@pytest.mark.parametrize("case", [*PARQUET_CASES, "not parquet"])
def test_bad_parquet(runner, cfg_path, out_dir, tmp_path, case):
    p = tmp_path / "in.parquet"
    if case == "not parquet":
        p.write_bytes(f"{CANARY} is not a parquet file".encode())
        code, message = 65, f"{p}: not a readable Parquet file"
    else:
        make, code, message = PARQUET_CASES[case]
        make().to_parquet(p)
    res = runner.invoke(app, ["release", "-c", str(cfg_path), "-i", str(p), "-o", str(out_dir / "o.csv")])
    _check_clean_failure(res, code, message, out_dir)


def _good_csv(tmp_path: Path, rows: int = 40) -> Path:
    p = tmp_path / "good.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"age": rng.integers(0, 100, rows), "city": rng.choice(["a", "b", "c"], rows)}).to_csv(p, index=False)
    return p


def test_unwritable_output_path(runner, cfg_path, tmp_path):
    src = _good_csv(tmp_path)
    if os.geteuid() == 0:  # root writes anywhere a mode allows nothing; /sys refuses new files even to root
        target = Path("/sys/dpsynth-robustness.csv")
        message = f"cannot create output {target}: Permission denied"
    else:
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o500)
        target = ro / "o.csv"
        message = f"cannot create output {target}: directory {ro} is not writable"
    res = runner.invoke(app, ["release", "-c", str(cfg_path), "-i", str(src), "-o", str(target), "-q"])  # no progress lines
    assert res.exit_code == 73 and res.stderr == f"dpsynth: error: {message}\n"
    assert not target.exists()


def test_existing_report_without_force_writes_nothing(runner, cfg_path, out_dir, tmp_path):
    src = _good_csv(tmp_path)
    report = out_dir / "r.json"
    report.write_text("keep")
    res = runner.invoke(app, ["release", "-c", str(cfg_path), "-i", str(src), "-o", str(out_dir / "o.csv"),
                              "-r", str(report)])
    assert res.exit_code == 73 and res.stderr == f"dpsynth: error: output exists: {report} (use --force to overwrite)\n"
    assert sorted(p.name for p in out_dir.iterdir()) == ["r.json"] and report.read_text() == "keep"


def test_max_cells_refused_before_the_data_is_read(runner, cfg_path, out_dir, tmp_path, monkeypatch):
    import dpsynth.data.io

    def must_not_read(*args, **kwargs):
        raise AssertionError("the input was read")

    monkeypatch.setattr(dpsynth.data.io, "read_table", must_not_read)
    src = _good_csv(tmp_path)
    res = runner.invoke(app, ["release", "-c", str(cfg_path), "-i", str(src), "-o", str(out_dir / "o.csv"),
                              "--max-cells", "11"])
    _check_clean_failure(res, 64, "workload.marginals: the largest marginal has 12 cells, more than the limit of 11 "
                                  "(raise --max-cells / limits.max_cells or use coarser bins)", out_dir)


# ------------------------------------------------------------------------- randomness and the report
def test_unseeded_runs_differ(tmp_path):
    """100 pairs of unseeded releases (the CLI's generator from OS entropy) are never byte-identical.
    With continuous noise on 12 cells and uniform decoding of a numeric column, a repeat has probability 0."""
    cfg = parse_config({**CONFIG, "algorithm": {"name": "laplace", "params": {"noise": "continuous"}}})
    table = pd.read_csv(_good_csv(tmp_path, rows=20), dtype={"city": str})
    outputs = set()
    for _ in range(200):
        res = dpsynth.release(table, cfg, rng=make_rng(None))
        outputs.add(res.synthetic.to_csv(index=False) + res.marginals.to_csv(index=False))
    assert len(outputs) == 200


def test_seed_in_config_is_reported_and_warned(runner, tmp_path, out_dir):
    cfg = tmp_path / "seeded.yaml"
    cfg.write_text(yaml.safe_dump({**CONFIG, "seed": 12}))
    src = _good_csv(tmp_path)
    res = runner.invoke(app, ["release", "-c", str(cfg), "-i", str(src), "-o", str(out_dir / "o.csv")])
    assert res.exit_code == 0, res.stderr
    report = json.loads((out_dir / "o.csv.report.json").read_text())
    assert report["randomness"]["source"] == "seeded"
    assert "warning: this release was produced with a fixed seed" in res.stderr



_FORBIDDEN_KEY_WORDS = {"hash", "sha", "sha256", "digest", "md5", "checksum", "time", "times", "timing", "runtime",
                        "seconds", "secs", "elapsed", "duration", "date", "timestamp", "clock", "wall"}


def _walk(obj, path=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield f"{path}.{k}", k, v
            yield from _walk(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield f"{path}[{i}]", None, v
            yield from _walk(v, f"{path}[{i}]")


@pytest.mark.parametrize("algorithm", algorithm_names())
def test_report_validates_and_holds_no_true_n_hash_or_time(algorithm):
    from tests.privacy.audit import tiny_neighbours, tiny_raw_config

    true_n = 1234
    table, _ = tiny_neighbours("add-remove", n=true_n)
    cfg = parse_config(tiny_raw_config(algorithm, "add-remove", epsilon=2.0, n_epsilon=0.5))
    result = dpsynth.release(table, cfg, rng=np.random.default_rng(6))
    report = result.report
    validate_report(report)
    assert report["privacy"]["n"]["mode"] == "noisy" and report["output"]["rows"] != true_n  # precondition
    # the one hash allowed: the released model's (a digest of mechanism outputs), linking report and model
    assert report["model"]["sha256"] == result.model.sha256
    for path, key, value in _walk(report):
        if path.startswith((".algorithm.params", ".algorithm.details.solver")) or path == ".model.sha256":
            continue  # the configuration and its echo in details (public, e.g. solver.safety_seconds)
        if key is not None:
            assert not set(key.lower().replace("-", "_").split("_")) & _FORBIDDEN_KEY_WORDS, path
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            assert value != true_n, path
        if isinstance(value, str):
            assert str(true_n) not in value, path
            assert not (len(value) >= 32 and all(c in "0123456789abcdef" for c in value.lower())), path


# --------------------------------------------------------------------------------------- SIGKILL
def _kill_runs(tmp_path: Path, runs: int, seed: int) -> list[str]:
    """Start ``runs`` releases as subprocesses and SIGKILL each at a random time; returns the outcome of each."""
    rows = 20_000
    rng = np.random.default_rng(seed)
    src = tmp_path / "in.csv"
    pd.DataFrame({"age": rng.integers(0, 100, rows), "city": rng.choice(["a", "b", "c"], rows)}).to_csv(src, index=False)
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({**CONFIG, "workload": {"marginals": {"k": 2}},
                                   "algorithm": {"name": "laplace"}}))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def command(out: Path) -> list[str]:
        return [sys.executable, "-m", "dpsynth", "release", "-q", "-c", str(cfg), "-i", str(src), "-o", str(out),
                "--marginals", str(out.with_suffix(".marg.csv"))]

    t0 = time.perf_counter()  # one complete run calibrates the kill window (not asserted)
    full = subprocess.run(command(tmp_path / "calib.csv"), check=False, env=env, capture_output=True, text=True,
                          timeout=120)
    assert full.returncode == 0, full.stderr
    span = time.perf_counter() - t0
    outcomes = []
    for i in range(runs):
        d = tmp_path / f"run{i}"
        d.mkdir()
        out = d / "o.csv"
        proc = subprocess.Popen(command(out), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(float(rng.uniform(0.0, 1.2 * span)))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=120)
        finals = {p.name for p in d.iterdir() if not p.name.startswith(".")}
        if not finals:
            outcomes.append("absent")
            continue
        # every final file that exists is complete
        if "o.csv" in finals:
            assert len(pd.read_csv(out)) > 0
        if "o.csv.report.json" in finals:
            validate_report(json.loads((d / "o.csv.report.json").read_text()))
        if "o.marg.csv" in finals:
            assert len(pd.read_csv(d / "o.marg.csv")) == 12
        outcomes.append("complete" if len(finals) == 3 else "partial set: " + ",".join(sorted(finals)))
    return outcomes


@pytest.mark.slow
def test_sigkill_leaves_complete_or_absent_outputs(tmp_path):
    """24 kills at uniform random times over the run: each output file is complete or absent.  (A kill between
    the renames of two outputs could leave a complete subset: see SECURITY.md; never observed here.)"""
    outcomes = _kill_runs(tmp_path, 24, seed=2)
    assert all(o in ("absent", "complete") for o in outcomes), outcomes  # measured once: 14 complete, 10 absent
