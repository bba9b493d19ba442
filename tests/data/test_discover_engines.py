"""Private schema discovery on every engine (issue 27 item 6): the same seed gives the same schema, report and
rows whether the table is read in memory (numpy), in record batches (stream) or by Spark."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dpsynth.data.engines.stream as stream_mod
from dpsynth.cli import app
from dpsynth.config import zero_config
from dpsynth.data.discover import discover_schema, parse_discover
from dpsynth.data.discover.lattice import STEPS
from dpsynth.data.discover.tables import KeyedSum, ScannedTable
from dpsynth.data.engines import discovery_table
from dpsynth.data.profile import ColumnProfile
from dpsynth.pipeline import release_from_source
from dpsynth.privacy.accountant import Ledger


def raw_table(n: int = 1500, seed: int = 0) -> pd.DataFrame:
    """Nulls, stray text in numeric columns, dates, categories (a rare one), a free-text column, signed numbers."""
    rng = np.random.default_rng(seed)
    t = pd.DataFrame({
        "year": rng.integers(1997, 2003, size=n).astype(object),
        "amount": rng.integers(-11_537, -10_001, size=n).astype(object),
        "score": np.round(rng.normal(50.0, 10.0, size=n), 2),
        "state": rng.choice(["alive", "dead", "gone"], size=n, p=[0.75, 0.2, 0.05]),
        "when": (pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 400, size=n), unit="D"))
        .strftime("%Y-%m-%d"),
        "job": [f"title {i}" for i in rng.integers(0, 5000, size=n)],
    })
    t["pct"] = np.where(rng.random(n) < 0.6, 100.0, np.round(rng.uniform(0.0, 100.0, size=n), 1))  # a point mass
    t.loc[:4, "score"] = np.nan
    t.loc[7, "year"] = "n/a"  # stray text in a numeric column
    t.loc[9, "amount"] = None
    t.loc[11, "when"] = "unknown"
    return t


@pytest.fixture
def tiny_batches(monkeypatch):
    """Batches of a few dozen rows, so every merge path runs (and the last batch is a partial one)."""
    monkeypatch.setattr(stream_mod, "CSV_BLOCK", 1 << 11)
    monkeypatch.setattr(stream_mod, "PARQUET_BATCH", 97)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("raw")
    t = raw_table()
    csv, parquet = d / "raw.csv", d / "raw.parquet"
    t.to_csv(csv, index=False)
    t.astype({"year": str, "amount": "Int64"}).to_parquet(parquet)
    return {"csv": csv, "parquet": parquet}


def _discover(path, engine: str, seed: int = 1, **kw):
    spec = parse_discover({"epsilon": 1.0, "delta": 1e-6})
    table = discovery_table(str(path), engine=engine, **kw)
    ledger = Ledger(1.0, 1e-6)
    try:
        found = discover_schema(table, spec, ledger=ledger, rng=np.random.default_rng(seed))
    finally:
        getattr(table, "close", lambda: None)()
    return found.schema, found.columns, [(c.measured, c.epsilon, c.delta) for c in ledger.charges], table


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_discovered_schema_identical_numpy_vs_stream(tiny_batches, files, fmt):
    a = _discover(files[fmt], "numpy")
    b = _discover(files[fmt], "stream")
    assert a[:3] == b[:3]
    kinds = {name: col.get("type") for name, col in a[0]["columns"].items()}
    assert kinds["when"] == "datetime" and kinds["state"] == "categorical" and kinds["score"] == "numeric"
    assert b[3].scans >= len(kinds)  # one pass for every profile, then one per question: never loaded whole


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_zero_config_release_identical_numpy_vs_stream(tiny_batches, files, fmt):
    got = {}
    for engine in ("numpy", "stream"):
        r = release_from_source(str(files[fmt]), zero_config(1.0, None), engine=engine,
                                rng=np.random.default_rng(3), seeded=True)
        got[engine] = (r.diagnostics["discovered_schema"], json.dumps(r.report), r.synthetic.to_csv(index=False),
                       json.dumps(r.config_document, default=str))
    assert got["numpy"] == got["stream"]
    other = release_from_source(str(files[fmt]), zero_config(1.0, None), engine="stream",
                                rng=np.random.default_rng(4), seeded=True)
    assert other.synthetic.to_csv(index=False) != got["stream"][2]  # another seed, other rows


def test_cli_zero_config_and_schema_discover_same_files(runner, tmp_path, files):
    outs = {}
    for engine in ("numpy", "stream"):
        out, schema = tmp_path / f"{engine}.csv", tmp_path / f"{engine}.yaml"
        res = runner.invoke(app, ["release", "-i", str(files["csv"]), "-o", str(out), "--epsilon", "1", "--seed",
                                  "5", "--engine", engine, "-q"])
        assert res.exit_code == 0, res.stderr
        res = runner.invoke(app, ["schema", "discover", "-i", str(files["csv"]), "-o", str(schema), "--epsilon",
                                  "0.5", "--delta", "1e-6", "--seed", "5", "--engine", engine, "-q"])
        assert res.exit_code == 0, res.stderr
        outs[engine] = [Path(f"{p}").read_bytes() for p in (out, f"{out}.report.json", f"{out}.config.yaml",
                                                            schema, f"{schema}.report.json")]
    assert outs["numpy"] == outs["stream"]


@pytest.mark.parametrize(("args", "message"), [
    (["--engine", "stream", "-i", "-"], "--engine stream reads a file: give --input as a path, not - (stdin)"),
    (["--engine", "gpu", "-i", "x.csv"], "--engine must be one of numpy, stream, spark, got 'gpu'"),
    (["--spark-master", "local[2]", "-i", "x.csv"], "--spark-master needs --engine spark"),
])
def test_schema_discover_engine_usage_errors(runner, tmp_path, args, message):
    res = runner.invoke(app, ["schema", "discover", "-o", str(tmp_path / "s.yaml"), "--epsilon", "1", *args])
    assert res.exit_code == 2
    assert res.stderr == f"dpsynth: error: {message}\n"


def test_stream_discovery_header_only_input_same_message_as_numpy(runner, tmp_path):
    src = tmp_path / "empty.csv"
    src.write_text("a,b\n")
    errs = []
    for engine in ("numpy", "stream"):
        res = runner.invoke(app, ["release", "-i", str(src), "-o", str(tmp_path / f"{engine}.csv"), "--epsilon", "1",
                                  "--engine", engine, "-q"])
        errs.append((res.exit_code, res.stderr))
    assert errs[0] == errs[1] and errs[0][0] != 0 and "has a header but no data rows" in errs[0][1]


def test_keyed_merge_equals_unique_over_the_whole_column():
    """Distinct values merged over many batches (by doubling): the sorted values and counts of np.unique."""
    rng = np.random.default_rng(0)
    words = np.array([f"w{i}" for i in range(300)] + ["é", "Z", "", "a b"], dtype=object)
    column = rng.choice(words, size=5000)
    acc = KeyedSum(text=True)
    for part in np.array_split(column, 61):
        keys, counts = np.unique(part.astype(str), return_counts=True)
        acc.add(pa.array(keys.astype(object), type=pa.string()), counts)
    labels, counts = acc.result()
    want_keys, want_counts = np.unique(column.astype(str), return_counts=True)
    assert list(labels.to_numpy()) == list(want_keys) and counts.tolist() == want_counts.tolist()
    assert list(labels[np.array([3, 0])]) == [want_keys[3], want_keys[0]]


def test_batched_answers_equal_whole_column_answers():
    """Each question's answer is a sum over rows, so any split into batches gives the whole column's answer."""
    t = raw_table(700)
    edges = np.array([-1e4, 0.0, 10.0, 100.0, 2000.0])
    for name in t.columns:
        col = t[name].astype(object).where(t[name].notna(), None)
        whole = ColumnProfile(col)
        batches, rows = [col.iloc[i:i + 53] for i in range(0, len(col), 53)], len(col)
        table = ScannedTable([name], lambda _n, consume, b=batches: [consume([s]) for s in b], lambda k=rows: k)
        part = table.column(name)
        assert np.array_equal(part.profile_counts(edges), whole.profile_counts(edges))
        assert np.array_equal(part.cell_counts(edges), whole.cell_counts(edges))
        assert np.array_equal(part.point_counts(edges), whole.point_counts(edges))
        labels, counts = part.value_counts()
        want = whole.value_counts()
        assert list(labels.to_numpy()) == list(want[0]) and np.array_equal(counts, want[1])
        ints, icounts = part.integer_counts()
        assert np.array_equal(ints, whole.integer_counts()[0]) and np.array_equal(icounts, whole.integer_counts()[1])
        assert np.array_equal(part.as_instants().cell_counts(edges), whole.as_instants().cell_counts(edges))
        assert np.array_equal(part.step_counts(STEPS), whole.step_counts(STEPS))


def test_boolean_cells_are_never_numbers_whatever_the_other_rows():
    """A Parquet boolean column with a null arrives as objects: True must not become the number 1 there while it
    is text in a column without nulls (one row's null would change every other row's kind)."""
    edges = np.array([0.0, 1.0])
    with_null = ColumnProfile(pd.Series([True, False, None], dtype=object)).profile_counts(edges)
    without = ColumnProfile(pd.Series([True, False])).profile_counts(edges)
    assert with_null[0] == 1 and with_null[1] == 2 and without[1] == 2
    assert with_null[3:].sum() == 0 and without[3:].sum() == 0


# ------------------------------------------------------------------------------- spark
@pytest.mark.slow  # 37 s (its Spark jobs): make test must stay under 5 min on a fresh clone; make test-slow runs it
def test_spark_discovered_schema_identical_to_numpy(spark, tmp_path):
    """Spark answers each question on its executors with the same per-batch code: the same schema and ledger."""
    src = tmp_path / "small.csv"
    raw_table(400)[["year", "state", "when"]].to_csv(src, index=False)
    a = _discover(src, "numpy")
    b = _discover(src, "spark", spark=spark)
    assert a[:3] == b[:3]


@pytest.mark.slow  # Spark in local mode: about a minute per table on this machine
@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_spark_zero_config_release_identical_to_numpy(spark, files, fmt):
    got = {}
    for engine in ("numpy", "spark"):
        r = release_from_source(str(files[fmt]), zero_config(1.0, None), engine=engine,
                                rng=np.random.default_rng(3), seeded=True)
        got[engine] = (r.diagnostics["discovered_schema"], json.dumps(r.report), r.synthetic.to_csv(index=False))
    assert got["numpy"] == got["spark"]
