"""Counts engines (numpy, stream, spark): identical counts, byte-identical releases, identical errors.

Nothing here is statistical: every assertion is exact (counts and output bytes
are deterministic given the seed), so the false-failure rate is 0.
"""

from __future__ import annotations

import gzip
import itertools
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import dpsynth.data.engines.stream as stream_mod
from dpsynth.cli import app
from dpsynth.config import load_config, parse_config
from dpsynth.data.counts import ArrayCounts
from dpsynth.data.discretize import encode
from dpsynth.data.engines import open_counts
from dpsynth.data.engines.stream import StreamCounts
from dpsynth.data.io import read_table
from dpsynth.errors import DataError
from dpsynth.pipeline import release_from_source
from tests.helpers import ROOT


@pytest.fixture(autouse=True)
def _chdir_root(monkeypatch):
    monkeypatch.chdir(ROOT)


@pytest.fixture
def small_batches(monkeypatch):
    """Tiny CSV blocks and marginal chunks, so that the multi-batch and multi-chunk paths run."""
    monkeypatch.setattr(stream_mod, "CSV_BLOCK", 1 << 12)
    monkeypatch.setattr(stream_mod, "CHUNK_ROWS", 777)


def _numpy_counts(path, cfg) -> ArrayCounts:
    strings = cfg.domain.text_columns
    return ArrayCounts(encode(read_table(path, string_columns=strings), cfg.domain, unknown=cfg.unknown), cfg.domain)


def _without_fine_view(cfg):
    """The fine view of numbers reads raw values, which only the numpy engine holds (decode.fine: auto turns it on
    there for adult): engines are compared without it."""
    from dataclasses import replace

    from dpsynth.data.fine import FineSettings

    return replace(cfg, decode=FineSettings("off"))


def _release_bytes(path, cfg, engine: str, seed: int = 7) -> tuple[bytes, dict]:
    result = release_from_source(str(path), cfg, engine=engine, rng=np.random.default_rng(seed), seeded=True)
    return result.synthetic.to_csv(index=False).encode(), result.report


# ------------------------------------------------------------------------- identical counts
def test_stream_marginals_equal_numpy_on_adult(tmp_path, monkeypatch):
    """Every 1- and 2-way marginal and some 3- and 4-way ones, over many batches and chunks; CSV, CSV.gz, Parquet."""
    monkeypatch.setattr(stream_mod, "CSV_BLOCK", 1 << 16)
    monkeypatch.setattr(stream_mod, "CHUNK_ROWS", 7777)
    cfg = load_config("configs/adult.yaml")
    src = ROOT / "sample_data" / "adult.csv"
    gz = tmp_path / "adult.csv.gz"
    gz.write_bytes(gzip.compress(src.read_bytes()))
    parquet = tmp_path / "adult.parquet"
    pq.write_table(pa.Table.from_pandas(read_table(src), preserve_index=False), parquet)
    ref = _numpy_counts(src, cfg)
    d = len(cfg.domain)
    subsets = [(a,) for a in range(d)] + list(itertools.combinations(range(d), 2)) + [(13, 0, 6), (2, 9, 14, 3)]
    for path in (src, gz, parquet):
        with StreamCounts(path, cfg.domain) as counts:
            assert counts.n == ref.n == 32561
            for attrs in subsets:
                np.testing.assert_array_equal(counts.marginal(attrs), ref.marginal(attrs), err_msg=f"{path} {attrs}")
            assert int(counts.marginal(())) == ref.n


@pytest.mark.parametrize(
    "config, data",
    [
        pytest.param("configs/adult.yaml", "sample_data/adult.csv", marks=pytest.mark.slow),
        # 32 s of estimator fitting on the whole table: the fast tier checks the same identity on 3,000 rows
        # (test_cli_engine_stream_same_files_as_numpy), keeping make test under its 5-minute budget
        pytest.param("configs/nltcs.yaml", "sample_data/nltcs.csv", marks=pytest.mark.slow),
    ],
)
def test_seeded_release_byte_identical_numpy_vs_stream(config, data):
    cfg = _without_fine_view(load_config(config))
    rows_numpy, report_numpy = _release_bytes(data, cfg, "numpy")
    rows_stream, report_stream = _release_bytes(data, cfg, "stream")
    assert rows_numpy == rows_stream
    assert report_numpy == report_stream


def test_cli_engine_stream_same_files_as_numpy(runner, tmp_path):
    small = tmp_path / "nltcs_small.csv"
    small.write_text("".join((ROOT / "sample_data" / "nltcs.csv").read_text().splitlines(keepends=True)[:3001]))
    outs = {}
    for engine in ("numpy", "stream"):
        out = tmp_path / f"{engine}.parquet"
        res = runner.invoke(app, ["release", "-c", "configs/nltcs.yaml", "-i", str(small), "-o", str(out),
                                  "--seed", "5", "--engine", engine, "-q"])
        assert res.exit_code == 0, res.stderr
        outs[engine] = (out.read_bytes(), Path(f"{out}.report.json").read_bytes())
    assert outs["numpy"] == outs["stream"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--engine", "stream", "-i", "-"], "--engine stream reads a file: give --input as a path, not - (stdin)"),
        (["--engine", "gpu", "-i", "sample_data/nltcs.csv"], "--engine must be one of numpy, stream, spark, got 'gpu'"),
        (["--spark-master", "local[2]", "-i", "sample_data/nltcs.csv"], "--spark-master needs --engine spark"),
    ],
)
def test_cli_engine_usage_errors(runner, tmp_path, args, message):
    res = runner.invoke(app, ["release", "-c", "configs/nltcs.yaml", "-o", str(tmp_path / "o.csv"), *args])
    assert res.exit_code == 2
    assert res.stderr == f"dpsynth: error: {message}\n"
    assert not (tmp_path / "o.csv").exists()


# ------------------------------------------------------------------------- identical errors
def _tiny_cfg(unknown: str = "error"):
    return parse_config({
        "schema": {
            "columns": {
                "color": {"type": "categorical", "categories": ["red", "green", "blue"]},
                "size": {"type": "numeric", "lower": 0, "upper": 10, "bins": 5},
                "count": {"type": "integer", "lower": 1, "upper": 4},
                "note": {"type": "categorical", "categories": ["a", "b"], "missing": "category"},
            },
            "unknown": unknown,
        },
        "privacy": {"epsilon": 1.0},
        "algorithm": {"name": "laplace"},
        "workload": {"marginals": {"k": 2}},
    })


def _good_rows(n: int) -> list[str]:
    colors, notes = ["red", "green", "blue"], ["a", "b", ""]
    return [f"{colors[i % 3]},{(i * 7) % 10 + 0.5 * (i % 2)},{1 + i % 4},{notes[i % 3]}" for i in range(n)]


def _csv(tmp_path: Path, rows: list[str], header: str = "color,size,count,note", name: str = "t.csv") -> Path:
    p = tmp_path / name
    p.write_text("\n".join([header, *rows]) + "\n")
    return p


def _numpy_error(path: Path, cfg) -> str:
    with pytest.raises(DataError) as exc:
        _numpy_counts(path, cfg)
    return str(exc.value)


def _case_rows(case: str) -> tuple[list[str], str]:
    rows = _good_rows(3000)
    edits = {
        "unknown category": ({2500: "purple,1,1,a"}, "column 'color' has values outside its declared categories"),
        "out of range": ({2600: "red,11,1,a"}, "column 'size' has values outside its declared range [0, 10]"),
        "non-numeric": ({2700: "red,ten,1,a"}, "column 'size' is declared numeric but has non-numeric values"),
        "fractional": ({2800: "red,1,1.5,a"}, "column 'count' is declared integer but has fractional values"),
        "null not allowed": ({2900: "red,,1,a"}, "column 'size' has null values"),
        "not finite": ({2950: "red,inf,1,a"}, "column 'size' has values outside its declared range"),
        # two columns broken in different batches: the earlier COLUMN wins, as in the numpy engine
        "two errors": ({100: "red,1,9,a", 2990: "purple,1,1,a"}, "column 'color' has values outside"),
        # two rules of one column in different batches: the earlier RULE wins
        "two rules": ({100: "red,99,1,a", 2990: "red,x,1,a"}, "column 'size' is declared numeric but has non-numeric"),
        "ragged": ({1500: "red,1,1,a,extra"}, "malformed CSV (line 1502 has 5 fields, expected 4)"),
    }
    changes, expected = edits[case]
    for i, row in changes.items():
        rows[i] = row
    return rows, expected


@pytest.mark.parametrize(
    "case",
    ["unknown category", "out of range", "non-numeric", "fractional", "null not allowed", "not finite",
     "two errors", "two rules", "ragged"],
)
def test_stream_errors_match_numpy(small_batches, tmp_path, case):
    rows, expected = _case_rows(case)
    path = _csv(tmp_path, rows)
    cfg = _tiny_cfg()
    message = _numpy_error(path, cfg)
    assert expected in message
    with pytest.raises(DataError, match=re.escape(message) + "$"):
        StreamCounts(path, cfg.domain)


def test_stream_unknown_other_matches_numpy(small_batches, tmp_path):
    rows, _ = _case_rows("unknown category")
    rows[10] = "blue,12,1,a"
    path = _csv(tmp_path, rows)
    cfg = _tiny_cfg("other")
    ref = _numpy_counts(path, cfg)
    with StreamCounts(path, cfg.domain, unknown="other") as counts:
        for attrs in itertools.combinations(range(4), 2):
            np.testing.assert_array_equal(counts.marginal(attrs), ref.marginal(attrs))


@pytest.mark.parametrize(
    "content, message",
    [
        (b"", "the input is empty"),
        (b"  \n\n", "the input is empty"),
        (b"color,size,count,note\nred,1,1,a\n\x00\n", "the input contains a NUL byte (is it a binary file?)"),
        (b"color,size,count,note\nred,1,1,a\nr\xe9d,1,1,a\n",
         ("the input is not valid UTF-8 (first bad byte at offset 33); if it is in another encoding, pass --encoding "
         "(e.g. latin-1)")),
        (b"color,size,count,note\n", "the input has a header but no data rows"),
    ],
)
def test_stream_input_errors_match_numpy(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    cfg = _tiny_cfg()
    assert _numpy_error(path, cfg) == f"{path}: {message}"
    with pytest.raises(DataError, match=re.escape(f"{path}: {message}") + "$"):
        StreamCounts(path, cfg.domain)


def test_stream_missing_column_and_bad_gzip(tmp_path):
    cfg = _tiny_cfg()
    path = _csv(tmp_path, _good_rows(10), header="color,size,count,other")
    msg = "column 'note' is declared in the schema but missing from the input"
    assert _numpy_error(path, cfg) == msg
    with pytest.raises(DataError, match=re.escape(msg) + "$"):
        StreamCounts(path, cfg.domain)
    gz = tmp_path / "x.csv.gz"
    gz.write_bytes(b"not gzip at all")
    assert _numpy_error(gz, cfg) == f"{gz}: not a valid gzip file"
    with pytest.raises(DataError, match=re.escape(f"{gz}: not a valid gzip file") + "$"):
        StreamCounts(gz, cfg.domain)


def test_stream_errors_never_quote_values(small_batches, tmp_path):
    rows = _good_rows(2000)
    rows[1234] = "CANARY-VALUE,1,1,a"
    rows[1500] = "red,1,1,a,CANARY2"
    for r in (rows[:1400], rows):
        with pytest.raises(DataError) as exc:
            StreamCounts(_csv(tmp_path, r), _tiny_cfg().domain)
        assert "CANARY" not in str(exc.value)


def test_release_from_source_checks_header_before_reading(tmp_path, monkeypatch):
    """The schema check refuses a bad header without starting the engine."""
    cfg = _tiny_cfg()
    path = _csv(tmp_path, _good_rows(10), header="color,size,count,other")
    monkeypatch.setattr(stream_mod.StreamCounts, "__init__", lambda *a, **k: pytest.fail("engine started"))
    with pytest.raises(DataError, match="column 'note' is declared in the schema but missing from the input"):
        release_from_source(str(path), cfg, engine="stream", rng=np.random.default_rng(0))


def test_open_counts_numpy_engine_equals_array_counts():
    cfg = load_config("configs/nltcs.yaml")
    a = open_counts("sample_data/nltcs.csv", cfg.domain, engine="numpy")
    b = _numpy_counts("sample_data/nltcs.csv", cfg)
    np.testing.assert_array_equal(a.marginal((0, 5, 9)), b.marginal((0, 5, 9)))


def test_stream_parquet_with_nulls_matches_numpy(tmp_path):
    cfg = _tiny_cfg()
    df = read_table(_csv(tmp_path, _good_rows(5000)), string_columns=["color", "note"])
    path = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path, row_group_size=700)
    ref = _numpy_counts(path, cfg)
    with StreamCounts(path, cfg.domain) as counts:
        for attrs in itertools.combinations(range(4), 3):
            np.testing.assert_array_equal(counts.marginal(attrs), ref.marginal(attrs))
    assert isinstance(pd.read_parquet(path), pd.DataFrame)


# ------------------------------------------------------------------------------- spark
def test_spark_missing_is_one_line_engine_error(runner, tmp_path, monkeypatch):
    """Without PySpark (or Java) --engine spark fails with one line and exit 69, before reading data."""
    import dpsynth.data.engines.spark as spark_mod

    reason = "the spark engine needs PySpark: pip install 'dpsynth[spark]'"
    monkeypatch.setattr(spark_mod, "spark_available", lambda: reason)
    out = tmp_path / "o.csv"
    res = runner.invoke(app, ["release", "-c", "configs/nltcs.yaml", "-i", "sample_data/nltcs.csv", "-o", str(out),
                              "--engine", "spark"])
    assert res.exit_code == 69
    assert res.stderr == "dpsynth: error: the spark engine needs PySpark: pip install 'dpsynth[spark]'\n"
    assert not out.exists()


@pytest.mark.slow  # the fast tier's byte-identity check is test_cli_engine_spark_same_files_as_numpy (3,000 rows)
@pytest.mark.parametrize(
    "config, data", [("configs/nltcs.yaml", "sample_data/nltcs.csv"), ("configs/adult.yaml", "sample_data/adult.csv")]
)
def test_spark_release_byte_identical(spark, config, data):
    from dpsynth.data.engines.spark import SparkCounts
    from dpsynth.pipeline import release_from_counts

    cfg = _without_fine_view(load_config(config))
    rows_numpy, report_numpy = _release_bytes(data, cfg, "numpy")
    with SparkCounts(data, cfg.domain, spark=spark) as counts:
        result = release_from_counts(counts, cfg, rng=np.random.default_rng(7), seeded=True)
    assert result.synthetic.to_csv(index=False).encode() == rows_numpy
    assert result.report == report_numpy


def test_spark_marginals_equal_numpy_csv_parquet_and_group_by_fallback(spark, tmp_path):
    from dpsynth.data.engines.spark import SparkCounts

    cfg = _tiny_cfg()
    path = _csv(tmp_path, _good_rows(3000))
    df = read_table(path, string_columns=["color", "note"])
    parquet = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), parquet)
    ref = _numpy_counts(path, cfg)
    for source, max_distinct in ((path, 2_000_000), (parquet, 2_000_000), (path, 1)):
        with SparkCounts(source, cfg.domain, spark=spark, max_distinct=max_distinct) as counts:
            assert counts.n == ref.n
            for attrs in [(0,), (3,), (1, 2), (3, 0, 1), (0, 1, 2, 3)]:
                np.testing.assert_array_equal(counts.marginal(attrs), ref.marginal(attrs), err_msg=f"{source}{attrs}")


@pytest.mark.parametrize(
    "case",
    ["unknown category", "out of range", "non-numeric", "fractional", "null not allowed", "not finite",
     "two errors", "two rules"],
)
def test_spark_errors_match_numpy(spark, tmp_path, case):
    from dpsynth.data.engines.spark import SparkCounts

    rows, _ = _case_rows(case)
    path = _csv(tmp_path, rows)
    cfg = _tiny_cfg()
    message = _numpy_error(path, cfg)
    with pytest.raises(DataError, match=re.escape(message) + "$"):
        SparkCounts(path, cfg.domain, spark=spark)


def test_cli_engine_spark_same_files_as_numpy(spark, runner, tmp_path):
    small = tmp_path / "nltcs_small.csv"
    small.write_text("".join((ROOT / "sample_data" / "nltcs.csv").read_text().splitlines(keepends=True)[:3001]))
    outs = {}
    for engine in ("numpy", "spark"):
        out = tmp_path / f"{engine}.csv"
        extra = ["--spark-master", "local[2]"] if engine == "spark" else []
        res = runner.invoke(app, ["release", "-c", "configs/nltcs.yaml", "-i", str(small), "-o", str(out),
                                  "--seed", "5", "--engine", engine, "-q", *extra])
        assert res.exit_code == 0, res.stderr
        outs[engine] = (out.read_bytes(), Path(f"{out}.report.json").read_bytes())
    assert outs["numpy"] == outs["spark"]


def test_stream_parquet_integer_categories_match_numpy(tmp_path):
    """NLTCS as Parquet: int64 columns declared categorical ([0, 1]) take the Arrow int→text path."""
    cfg = load_config("configs/nltcs.yaml")
    df = read_table("sample_data/nltcs.csv")
    path = tmp_path / "nltcs.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path, row_group_size=5000)
    ref = _numpy_counts(path, cfg)
    with StreamCounts(path, cfg.domain) as counts:
        assert counts.n == ref.n
        for attrs in [(0,), (15,), (0, 1, 2), (3, 7, 11, 15)]:
            np.testing.assert_array_equal(counts.marginal(attrs), ref.marginal(attrs))


@pytest.mark.parametrize("nul_first", [True, False])
def test_stream_nul_byte_wins_over_bad_utf8_anywhere(small_batches, tmp_path, nul_first):
    """io.read_table checks NUL bytes (whole input) before UTF-8: so must the stream engine, across blocks."""
    rows = "\n".join(_good_rows(8000)).encode()
    bad, nul = b"r\xe9d,1,1,a\n", b"red,1,1,\x00\n"
    first, second = (nul, bad) if nul_first else (bad, nul)
    path = tmp_path / "bad.csv"
    path.write_bytes(b"color,size,count,note\n" + first + rows + b"\n" + second)
    cfg = _tiny_cfg()
    message = _numpy_error(path, cfg)
    assert message == f"{path}: the input contains a NUL byte (is it a binary file?)"
    with pytest.raises(DataError, match=re.escape(message) + "$"):
        StreamCounts(path, cfg.domain)


def test_stream_progress_reports_bytes_of_the_data_pass(small_batches, tmp_path):
    path = _csv(tmp_path, _good_rows(3000))
    seen = []
    with StreamCounts(path, _tiny_cfg().domain, progress=lambda stage, done, total: seen.append((stage, done, total))):
        pass
    size = path.stat().st_size
    assert {s for s, _, _ in seen} == {"reading input"}
    assert all(t == size for _, _, t in seen)
    assert [d for _, d, _ in seen] == sorted(d for _, d, _ in seen)
    assert seen[-1][1] == size


# ------------------------------------------------------------------------ missing: fill
def _fill_cfg():
    """Every kind of column that takes ``missing: fill`` (issue 27): nulls, and text a number column cannot read
    under ``unknown: other``, are encoded as the fill value's code."""
    return parse_config({
        "schema": {
            "columns": {
                "color": {"type": "categorical", "categories": ["red", "green", "blue"], "missing": "fill",
                          "fill": "green"},
                "size": {"type": "numeric", "lower": 0, "upper": 10, "bins": 5, "missing": "fill", "fill": 7},
                "count": {"type": "integer", "lower": 1, "upper": 4, "missing": "fill", "fill": 3},
                "note": {"type": "categorical", "categories": ["a", "b"], "missing": "fill", "fill": "b"},
            },
            "unknown": "other",
        },
        "privacy": {"epsilon": 1.0},
        "algorithm": {"name": "laplace"},
        "workload": {"marginals": {"k": 2}},
    })


def _fill_rows() -> list[str]:
    rows = _good_rows(3000)  # a third of `note` is null
    rows[5], rows[700], rows[2900] = ",,,", "red,ten,x,", "purple,3,,a"
    return rows


def test_missing_fill_codes_are_the_fill_values_in_numpy_and_stream(small_batches, tmp_path):
    cfg = _fill_cfg()
    path = _csv(tmp_path, _fill_rows())
    codes = encode(read_table(path, string_columns=cfg.domain.text_columns), cfg.domain, unknown="other")
    assert cfg.domain.sizes == (4, 5, 4, 3)  # no null code (the categories' extra value is __other__)
    np.testing.assert_array_equal(codes[5], [1, 3, 2, 1])  # green, the bin of 7, the integer 3, b
    np.testing.assert_array_equal(codes[700], [0, 3, 2, 1])  # text in the numbers: as a null
    assert codes[2900].tolist() == [3, 1, 2, 0] and (codes[:, 3] == 1).sum() == 1999  # b and the nulls
    ref = ArrayCounts(codes, cfg.domain)
    with StreamCounts(path, cfg.domain, unknown="other") as counts:
        for attrs in itertools.combinations(range(4), 2):
            np.testing.assert_array_equal(counts.marginal(attrs), ref.marginal(attrs))
    df = read_table(path, string_columns=cfg.domain.text_columns)
    parquet = tmp_path / "t.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), parquet, row_group_size=700)
    with StreamCounts(parquet, cfg.domain, unknown="other") as counts:
        np.testing.assert_array_equal(counts.marginal((0, 1, 2, 3)), ref.marginal((0, 1, 2, 3)))


def test_missing_fill_codes_equal_numpy_in_spark(spark, tmp_path):
    from dpsynth.data.engines.spark import SparkCounts

    cfg = _fill_cfg()
    path = _csv(tmp_path, _fill_rows())
    ref = _numpy_counts(path, cfg)
    with SparkCounts(path, cfg.domain, spark=spark, unknown="other") as counts:
        assert counts.n == ref.n
        np.testing.assert_array_equal(counts.marginal((0, 1, 2, 3)), ref.marginal((0, 1, 2, 3)))


def test_cli_release_with_missing_fill_writes_no_null(runner, tmp_path):
    """A hand config with ``missing: fill`` releases through the CLI (numpy and stream: the same bytes) and its
    output has no null in those columns; the model file's config keeps ``missing: fill`` and the fill value."""
    import yaml

    from dpsynth.modelfile import config_document

    path = _csv(tmp_path, _fill_rows())
    doc = config_document(_fill_cfg())
    assert doc["schema"]["columns"]["size"] == {"type": "numeric", "edges": [0.0, 2.0, 4.0, 6.0, 8.0, 10.0],
                                                "missing": "fill", "fill": 7.0}
    assert parse_config(doc).domain == _fill_cfg().domain  # the written config reads back to the same schema
    conf = tmp_path / "c.yaml"
    conf.write_text(yaml.safe_dump({**doc, "decode": {"fine": "off"}}))  # (the fine view reads raw values: numpy only)
    outs = []
    for engine in ("numpy", "stream"):
        out = tmp_path / f"{engine}.csv"
        res = runner.invoke(app, ["release", "-i", str(path), "-o", str(out), "-c", str(conf), "--seed", "3",
                                  "--engine", engine])
        assert res.exit_code == 0, res.output
        outs.append(out.read_bytes())
        assert not pd.read_csv(out, keep_default_na=True).isna().any().any()
    assert outs[0] == outs[1]
