"""``release --model`` and ``dpsynth sample``: links, reproducibility, formats, one-line errors, no partial output."""

from __future__ import annotations

import gzip
import hashlib
import json
import zipfile
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

import dpsynth
from dpsynth.cli import app
from tests.helpers import ROOT

CONFIG = {
    "schema": {"columns": {
        "age": {"type": "numeric", "edges": [17, 30, 40, 50, 65, 90], "integer": True},
        "race": {"type": "categorical", "categories": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo",
                                                        "Other", "Black"]},
        "sex": {"type": "categorical", "categories": ["Female", "Male"]},
        "hours-per-week": {"type": "numeric", "edges": [1, 20, 35, 40, 41, 50, 60, 100]},
        "income": {"type": "categorical", "categories": ["<=50K", ">50K"]},
    }},
    "privacy": {"epsilon": 1.0},
    "algorithm": {"name": "mwem", "params": {"iterations": 4}},
    "workload": {"marginals": {"k": 2}},
}


def _one_line_error(result, code: int, message: str) -> None:
    assert result.exit_code == code, (result.exit_code, result.stderr)
    assert result.stderr == f"dpsynth: error: {message}\n"


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory) -> Path:
    """One seeded release with --model and --marginals, shared by the tests (read-only)."""
    d = tmp_path_factory.mktemp("release")
    cfg = d / "cfg.yaml"
    cfg.write_text(yaml.safe_dump(CONFIG, sort_keys=False))
    table = pd.read_csv(ROOT / "sample_data" / "adult.csv", nrows=3000)[list(CONFIG["schema"]["columns"])]
    table.to_csv(d / "in.csv", index=False)
    res = CliRunner().invoke(app, ["release", "-c", str(cfg), "-i", str(d / "in.csv"), "-o", str(d / "out.csv"),
                                   "--model", str(d / "m.dpm"), "--marginals", str(d / "noisy.csv"),
                                   "--seed", "1", "-q"])
    assert res.exit_code == 0, res.stderr
    return d


def _sample(runner, *args):
    return runner.invoke(app, ["sample", *map(str, args)])


def test_release_links_model_and_report(release_dir):
    report_bytes = (release_dir / "out.csv.report.json").read_bytes()
    report = json.loads(report_bytes)
    with zipfile.ZipFile(release_dir / "m.dpm") as zf:
        manifest = json.loads(zf.read("manifest.json"))
    model = dpsynth.load_model(release_dir / "m.dpm")
    assert manifest["report_sha256"] == hashlib.sha256(report_bytes).hexdigest() == model.report_sha256
    assert manifest["model_sha256"] == report["model"]["sha256"] == model.sha256
    assert model.privacy == report["privacy"] and model.ledger == report["ledger"]
    assert (release_dir / "m.dpm").stat().st_size < 5_000_000


def test_release_rows_equal_the_library_rows(release_dir):
    """The CLI's chunked writer and ReleaseResult.synthetic give the same rows for the same seed."""
    import numpy as np

    cfg = dpsynth.load_config(release_dir / "cfg.yaml")
    table = pd.read_csv(release_dir / "in.csv", dtype={"race": str, "sex": str, "income": str})
    res = dpsynth.release(table, cfg, rng=np.random.default_rng(1))
    written = pd.read_csv(release_dir / "out.csv")
    assert len(written) == len(res.synthetic) == 3000
    pd.testing.assert_frame_equal(written, res.synthetic, check_dtype=False)


@pytest.mark.parametrize("ext", ["csv", "csv.gz", "parquet"])
def test_same_seed_gives_byte_identical_output(runner, release_dir, tmp_path, ext):
    outs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.{ext}"
        res = _sample(runner, "-m", release_dir / "m.dpm", "-n", 200_000, "-o", out, "--seed", 7, "-q")
        assert res.exit_code == 0, res.stderr
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    other = tmp_path / f"c.{ext}"
    assert _sample(runner, "-m", release_dir / "m.dpm", "-n", 200_000, "-o", other, "--seed", 8, "-q").exit_code == 0
    assert other.read_bytes() != outs[0]
    rows = pd.read_parquet(tmp_path / "a.parquet") if ext == "parquet" else pd.read_csv(tmp_path / f"a.{ext}")
    assert len(rows) == 200_000 and list(rows.columns) == list(CONFIG["schema"]["columns"])
    assert rows["sex"].isin(["Female", "Male"]).all() and rows["age"].between(17, 90).all()


def test_csv_gz_and_stdout_hold_the_csv_rows(runner, release_dir, tmp_path):
    args = ["-m", release_dir / "m.dpm", "-n", 1000, "--seed", 3, "-q"]
    assert _sample(runner, *args, "-o", tmp_path / "s.csv").exit_code == 0
    assert _sample(runner, *args, "-o", tmp_path / "s.csv.gz").exit_code == 0
    res = _sample(runner, *args, "-o", "-", "-r", tmp_path / "stdout.report.json")
    assert res.exit_code == 0, res.stderr
    plain = (tmp_path / "s.csv").read_bytes()
    assert gzip.decompress((tmp_path / "s.csv.gz").read_bytes()) == plain == res.stdout_bytes


def test_companion_report_names_the_release(runner, release_dir, tmp_path):
    out = tmp_path / "s.parquet"
    res = _sample(runner, "-m", release_dir / "m.dpm", "-n", 50, "-o", out, "--where", "sex=Female,age>=40", "-q")
    assert res.exit_code == 0, res.stderr
    rep = json.loads((tmp_path / "s.parquet.report.json").read_text())
    release_report = json.loads((release_dir / "out.csv.report.json").read_text())
    post = rep["post_processing"]
    assert rep["kind"] == "sample" and post["model_sha256"] == release_report["model"]["sha256"]
    assert post["release_report_sha256"] == hashlib.sha256(
        (release_dir / "out.csv.report.json").read_bytes()).hexdigest()
    assert "no additional privacy cost" in post["statement"] and rep["privacy"] == release_report["privacy"]
    assert rep["output"]["where"] == "sex=Female,age>=40" and rep["randomness"]["source"] == "os-entropy"
    rows = pd.read_parquet(out)
    assert (rows["sex"] == "Female").all() and (rows["age"] >= 40).all() and len(rows) == 50


def test_resample_from_published_marginals(runner, release_dir, tmp_path):
    out = tmp_path / "r.csv"
    res = _sample(runner, "--marginals", release_dir / "noisy.csv", "-c", release_dir / "cfg.yaml",
                  "-n", 2000, "-o", out, "--seed", 1, "-q")
    assert res.exit_code == 0, res.stderr
    rows = pd.read_csv(out)
    assert len(rows) == 2000 and rows["income"].isin(["<=50K", ">50K"]).all()
    post = json.loads((tmp_path / "r.csv.report.json").read_text())["post_processing"]
    assert post["source"]["kind"] == "marginals"
    assert post["source"]["file_sha256"] == hashlib.sha256((release_dir / "noisy.csv").read_bytes()).hexdigest()


def _bad_model(tmp_path: Path, release_dir: Path, case: str) -> tuple[Path, str]:
    data = (release_dir / "m.dpm").read_bytes()
    p = tmp_path / f"{case}.dpm"
    if case == "truncated":
        p.write_bytes(data[: len(data) - 100])
        return p, f"{p}: the model file is corrupt or truncated (unreadable zip archive)"
    if case == "foreign":
        p.write_bytes((release_dir / "out.csv").read_bytes())
        return p, f"{p}: not a dpsynth model file (not a zip archive)"
    with zipfile.ZipFile(release_dir / "m.dpm") as src, zipfile.ZipFile(p, "w") as dst:
        for info in src.infolist():
            blob = src.read(info)
            if info.filename == "manifest.json":
                blob = blob.replace(b'"schema_version": 2', b'"schema_version": 9')
            dst.writestr(info.filename, blob)
    return p, (f"{p}: the model was written by a newer dpsynth (model schema_version 9; this dpsynth "
               f"{dpsynth.__version__} reads up to 2): upgrade dpsynth")


@pytest.mark.parametrize("case", ["truncated", "foreign", "newer"])
def test_bad_model_file_exit_65_and_no_output(runner, release_dir, tmp_path, case):
    path, message = _bad_model(tmp_path, release_dir, case)
    out = tmp_path / "o.csv"
    _one_line_error(_sample(runner, "-m", path, "-n", 10, "-o", out), 65, message)
    assert not out.exists() and not Path(f"{out}.report.json").exists()
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary left behind


@pytest.mark.parametrize(("args", "code", "message"), [
    (["-n", 0], 2, "--rows must be >= 1, got 0"),
    (["-n", -5], 2, "--rows must be >= 1, got -5"),
    (["-n", 10, "--where", "colour=red"], 2,
     "--where: unknown column 'colour' (columns: age, race, sex, hours-per-week, income)"),
    (["-n", 10, "--where", "sex=F"], 2, "--where: column 'sex' has no value 'F' (values: Female, Male)"),
    (["-n", 10, "--where", "age>90"], 2,
     "--where: 'age>90' has probability 0 under the model (no synthetic row can satisfy it)"),
    (["-n", 10, "--where", "hours-per-week=40.5"], 2,
     "--where: 'hours-per-week=40.5' has probability 0 under the model (no synthetic row can satisfy it)"),
])
def test_bad_requests_are_one_line_errors_without_output(runner, release_dir, tmp_path, args, code, message):
    out = tmp_path / "o.parquet"
    _one_line_error(_sample(runner, "-m", release_dir / "m.dpm", "-o", out, *args), code, message)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("args", "code", "message"), [
    (["-n", 5, "-o", "x.csv"], 2, "give exactly one of --model or --marginals"),
    (["-n", 5, "-o", "-", "-m", "m.dpm"], 2, "--report is required when the output is stdout (-o -)"),
    (["-n", 5, "-o", "x.txt", "-m", "m.dpm"], 2, "x.txt: unknown table format (use .csv, .csv.gz, .parquet or '-')"),
    (["-n", 5, "-o", "x.csv", "-m", "missing.dpm"], 66, "model file not found: missing.dpm"),
    (["-n", 5, "-o", "x.csv", "--marginals", "noisy.csv"], 2, "--marginals needs --config (the release's configuration)"),
])
def test_usage_errors(runner, release_dir, tmp_path, monkeypatch, args, code, message):
    monkeypatch.chdir(tmp_path)
    _one_line_error(_sample(runner, *args), code, message)


def test_existing_output_is_kept_without_force(runner, release_dir, tmp_path):
    out = tmp_path / "o.csv"
    out.write_text("keep\n")
    _one_line_error(_sample(runner, "-m", release_dir / "m.dpm", "-n", 5, "-o", out), 73,
                    f"output exists: {out} (use --force to overwrite)")
    assert out.read_text() == "keep\n"


def test_bad_marginals_file_exit_65_and_no_output(runner, release_dir, tmp_path):
    noisy = pd.read_csv(release_dir / "noisy.csv", dtype=str)
    bad = tmp_path / "bad.csv"
    noisy.drop(columns=["noise_scale"]).to_csv(bad, index=False)
    out = tmp_path / "o.csv"
    _one_line_error(_sample(runner, "--marginals", bad, "-c", release_dir / "cfg.yaml", "-n", 10, "-o", out), 65,
                    f"{bad}: column 'noise_scale' is missing (expected the format written by 'dpsynth release "
                    "--marginals' with the same configuration)")
    noisy.iloc[1:].to_csv(bad, index=False)  # one cell of marginal 0 dropped
    first = noisy["marginal"].iloc[0]
    res = _sample(runner, "--marginals", bad, "-c", release_dir / "cfg.yaml", "-n", 10, "-o", out)
    assert res.exit_code == 65 and f"marginal 0 ({first}) does not list each of its" in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv"]
