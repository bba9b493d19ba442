"""A release end to end on a table with a date column, ``dpsynth sample`` from its model file, ``evaluate``.

Exact assertions only (formats, codes, exit codes): false-failure rate 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from dpsynth.cli import app
from dpsynth.config import load_config
from dpsynth.data.discretize import encode_column

CONFIG = """schema:
  unknown: other
  columns:
    when: {type: datetime, lower: 2016-01-01, upper: 2017-12-31, unit: month, format: "%d/%m/%Y", missing: category}
    kind: {type: categorical, categories: [a, b, c]}
    x: {type: integer, lower: 0, upper: 9}
privacy: {epsilon: 1.0}
algorithm: {name: mwem, params: {iterations: 3}}
workload: {marginals: {k: 2}}
"""


@pytest.fixture(scope="module")
def release_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("dated")
    rng = np.random.default_rng(0)
    n = 1500
    day = pd.Timestamp("2016-01-01") + pd.to_timedelta(rng.integers(0, 731, n), unit="D")
    table = pd.DataFrame({"when": np.asarray(day.strftime("%d/%m/%Y"), dtype=object),
                          "kind": rng.choice(["a", "b", "c"], n), "x": rng.integers(0, 10, n)})
    table.loc[::50, "when"] = None
    table.loc[3, "when"] = "not recorded"  # unparseable: missing under unknown: other
    table.loc[5, "when"] = "2016-03-04"  # ISO 8601 is read too
    table.to_csv(d / "in.csv", index=False)
    (d / "c.yaml").write_text(CONFIG)
    res = CliRunner().invoke(app, ["release", "-c", str(d / "c.yaml"), "-i", str(d / "in.csv"), "-o",
                                   str(d / "out.csv"), "--model", str(d / "m.dpm"), "--seed", "1", "-q"])
    assert res.exit_code == 0, res.stderr
    return d


def _check_dates(path: Path, cfg) -> pd.Series:
    out = pd.read_csv(path, dtype={"when": str})["when"]
    assert out.dropna().str.fullmatch(r"\d\d/\d\d/\d{4}").all()
    spec = cfg.domain.columns[0]
    codes = encode_column(out, spec, "error")  # every decoded date is inside the declared range: no error
    assert codes.max() < spec.size
    return out


def test_release_writes_dates_in_the_input_format(release_dir):
    cfg = load_config(release_dir / "c.yaml")
    out = _check_dates(release_dir / "out.csv", cfg)
    assert len(out) == 1500 and out.notna().sum() > 0
    report = json.loads((release_dir / "out.csv.report.json").read_text())
    when = report["domain"][0]
    assert when["name"] == "when" and when["kind"] == "datetime" and when["size"] == 25
    assert when["values"][0] == "[2016-01-01, 2016-02-01)" and when["values"][-2:] == ["[2017-12-01, 2018-01-01]", "null"]


def test_sample_decodes_the_model_files_dates(release_dir, tmp_path):
    cfg = load_config(release_dir / "c.yaml")
    for ext in ("csv", "parquet"):
        target = tmp_path / f"s.{ext}"
        res = CliRunner().invoke(app, ["sample", "-m", str(release_dir / "m.dpm"), "-n", "400", "-o", str(target),
                                       "--seed", "2", "-q"])
        assert res.exit_code == 0, res.stderr
    _check_dates(tmp_path / "s.csv", cfg)
    parquet = pd.read_parquet(tmp_path / "s.parquet")
    pd.testing.assert_series_equal(parquet["when"].astype(object),
                                   pd.read_csv(tmp_path / "s.csv", dtype={"when": str})["when"].astype(object),
                                   check_dtype=False)


def test_sample_where_on_a_datetime_column_is_a_one_line_error(release_dir, tmp_path):
    res = CliRunner().invoke(app, ["sample", "-m", str(release_dir / "m.dpm"), "-n", "5", "-o",
                                   str(tmp_path / "s.csv"), "--where", "when>=01/01/2017", "-q"])
    assert res.exit_code == 2
    assert res.stderr == ("dpsynth: error: --where: 'when>=01/01/2017': column 'when' is datetime; conditions on "
                          "datetime columns are not supported yet (only =null and !=null)\n")


def test_stream_engine_release_is_byte_identical(release_dir, tmp_path):
    """Without the fine view (only the numpy engine reads raw numbers for it) both engines write the same bytes."""
    cfg = tmp_path / "c.yaml"
    cfg.write_text(CONFIG + "decode: {fine: 'off'}\n")
    for engine in ("numpy", "stream"):
        res = CliRunner().invoke(app, ["release", "-c", str(cfg), "-i", str(release_dir / "in.csv"), "-o",
                                       str(tmp_path / f"{engine}.csv"), "--engine", engine, "--seed", "1", "-q"])
        assert res.exit_code == 0, res.stderr
    assert (tmp_path / "stream.csv").read_bytes() == (tmp_path / "numpy.csv").read_bytes()


def test_evaluate_bins_dates_as_numbers(release_dir, tmp_path):
    res = CliRunner().invoke(app, ["evaluate", "-c", str(release_dir / "c.yaml"), "--real",
                                   str(release_dir / "in.csv"), "--synthetic", str(release_dir / "out.csv"),
                                   "--json", str(tmp_path / "e.json"), "-q"])
    assert res.exit_code == 0, res.stderr
    result = json.loads((tmp_path / "e.json").read_text())
    when = result["neutral"]["columns"][0]
    assert when["name"] == "when" and when["kind"] == "numeric" and when["ks"] is not None
    unrep = result["unrepresentable"]["columns"][0]
    assert unrep["real"] == pytest.approx(1 / 1500)  # the one unparseable cell
    assert unrep["what"] == "instants outside [2016-01-01, 2018-01-01] (clamped) or not instants"
