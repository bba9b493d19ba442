"""A row's code depends on that row and the public schema only, identically in every engine (issue 13 §1).

The property behind every sensitivity in the ledger: if datasets D and D′
differ in one row, their encodings differ in at most that row.  Before issue
13 a float-typed categorical column was labelled ``"1"`` only if *every* value
was integral, so one row holding 2.5 moved every other row to the
other-bucket (an L1 change of ≈ 2n in a marginal of declared sensitivity 1).

How the codes are read from an engine: every table here has an ``id`` column
(declared ``integer``, one value per row), so the 2-way marginal (id, column)
of any engine is a one-hot (rows × values) matrix whose row r is row r's
code.  That checks numpy, stream and spark row by row through the public
:class:`~dpsynth.data.counts.Counts` interface only.

An edit may also make the input invalid; then every engine must refuse it
with the same one-line message (no output at all, which depends on no row's
code).  Nothing is statistical: the false-failure rate is 0.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dpsynth.data.engines.stream as stream_mod
from dpsynth.config import parse_config
from dpsynth.data.discretize import category_codes, cell_labels, encode, number_label
from dpsynth.data.engines import open_counts
from dpsynth.data.schema import CategoricalColumn
from dpsynth.errors import DataError
from dpsynth.pipeline import release_from_source

N = 24
# column -> (schema entry, Arrow type of its Parquet column, base values)
COLUMNS = {
    "cs": ({"type": "categorical", "categories": ["red", "green", "blue", "ünï"]}, pa.string(),
           ["red", "green", "blue", "ünï"]),
    "ci": ({"type": "categorical", "categories": [1, 2, 3]}, pa.int64(), [1, 2, 3]),
    "cf": ({"type": "categorical", "categories": [1, 2, 3]}, pa.float64(), [1.0, 2.0, 3.0]),
    "cx": ({"type": "categorical", "categories": [0.5, 2, "2.5", 1e20, "x"]}, pa.float64(), [0.5, 2.0, 2.5, 1e20]),
    "cb": ({"type": "categorical", "categories": [True, False]}, pa.bool_(), [True, False]),
    "k": ({"type": "integer", "lower": 0, "upper": 9}, pa.int64(), [0, 3, 9]),
    "kf": ({"type": "integer", "lower": 0, "upper": 9}, pa.float64(), [0.0, 4.0, 9.0]),
    "x": ({"type": "numeric", "lower": 0, "upper": 10, "bins": 5}, pa.float64(), [0.0, 2.5, 9.99, 10.0]),
    "xs": ({"type": "numeric", "lower": 0, "upper": 10, "bins": 5}, pa.string(), ["0", "2.5", "7", "1e1"]),
}
NAMES = list(COLUMNS)
ENGINES = ("numpy", "stream")


def _config(unknown: str, missing: bool):
    columns = {"id": {"type": "integer", "lower": 0, "upper": N - 1}}
    for name, (entry, _, _) in COLUMNS.items():
        columns[name] = {**entry, **({"missing": "category"} if missing else {})}
    return parse_config({"schema": {"columns": columns, "unknown": unknown}, "privacy": {"epsilon": 1.0},
                         "algorithm": {"name": "laplace"}, "workload": {"marginals": {"k": 1}}})


CONFIGS = {"other+missing": _config("other", True), "error": _config("error", False)}


def _base() -> dict[str, list]:
    cols = {"id": list(range(N))}
    for name, (_, _, values) in COLUMNS.items():
        cols[name] = [values[r % len(values)] for r in range(N)]
    return cols


def _write(cols: dict[str, list], path) -> None:
    fields = [pa.field("id", pa.int64())] + [pa.field(n, COLUMNS[n][1]) for n in NAMES]
    table = pa.table({f.name: pa.array(cols[f.name], type=f.type) for f in fields})
    pq.write_table(table, path, row_group_size=5)


def row_codes(counts, domain) -> np.ndarray:
    """Row r's code of every column, read from the (id, column) marginals of any engine."""
    out = np.empty((N, len(domain) - 1), dtype=np.int64)
    for j in range(1, len(domain)):  # loop over columns
        m = counts.marginal((0, j))
        assert np.array_equal(m.sum(axis=1), np.ones(N)), "every id is one row"
        out[:, j - 1] = m.argmax(axis=1)
    return out


def outcome(path, cfg, engine: str, **kw):
    """('ok', codes) or ('error', message) of one engine on one file."""
    try:
        counts = open_counts(path, cfg.domain, engine=engine, unknown=cfg.unknown, **kw)
    except DataError as exc:
        return "error", str(exc)
    try:
        return "ok", row_codes(counts, cfg.domain)
    finally:
        getattr(counts, "close", lambda: None)()


def _check_edit(base_codes: np.ndarray, results: dict, row: int) -> None:
    kinds = {k: r[0] for k, r in results.items()}
    assert len(set(kinds.values())) == 1, f"engines disagree: {kinds}"
    first = next(iter(results.values()))
    if first[0] == "error":
        assert len({r[1] for r in results.values()}) == 1, results
        return
    for engine, (_, codes) in results.items():
        np.testing.assert_array_equal(codes, first[1], err_msg=f"{engine} differs from the numpy engine")
    others = np.arange(N) != row
    np.testing.assert_array_equal(first[1][others], base_codes[others], err_msg="another row's code changed")


# Values a Parquet column of each Arrow type can hold: the special ones first, then anything.
SPECIAL_FLOATS = [2.5, math.inf, -math.inf, math.nan, 1e300, -0.0, 2.0**53 + 2, 1e20, 5e-324, -1.0, 10.0, 0.5]
VALUES = {
    pa.float64(): st.one_of(st.sampled_from(SPECIAL_FLOATS), st.floats(), st.none()),
    pa.int64(): st.one_of(st.sampled_from([2**63 - 1, -(2**63), 2**53 + 1, 0, -1, 10]),
                          st.integers(-(2**63), 2**63 - 1), st.none()),
    pa.string(): st.one_of(st.sampled_from(["", "2.5", "inf", "NaN", "1 ", "٣", "red ", "Red", "1e400", "0x1"]),
                           st.text(max_size=6), st.none()),
    pa.bool_(): st.one_of(st.booleans(), st.none()),
}


@st.composite
def edits(draw):
    name = draw(st.sampled_from(NAMES))
    return draw(st.integers(0, N - 1)), name, draw(VALUES[COLUMNS[name][1]])


@pytest.fixture(scope="module")
def base_files(tmp_path_factory):
    path = tmp_path_factory.mktemp("rows") / "base.parquet"
    _write(_base(), path)
    return path, {k: outcome(path, cfg, "numpy")[1] for k, cfg in CONFIGS.items()}


@pytest.mark.parametrize("config", list(CONFIGS))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edit=edits())
def test_one_row_edit_changes_only_that_row_in_every_engine(base_files, tmp_path, config, edit):
    """Parquet input, numpy and stream engines (stream in 7-row batches): at most row ``row``'s code changes."""
    row, name, value = edit
    _, base_codes = base_files
    cols = _base()
    cols[name][row] = value
    path = tmp_path / "edited.parquet"
    _write(cols, path)
    cfg = CONFIGS[config]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(stream_mod, "PARQUET_BATCH", 7)
        results = {engine: outcome(path, cfg, engine) for engine in ENGINES}
    _check_edit(base_codes[config], results, row)


ANY_VALUE = st.one_of(st.floats(), st.integers(-(2**70), 2**70), st.text(max_size=5), st.booleans(), st.none(),
                      st.sampled_from([2.5, math.inf, math.nan, np.float32(0.5), np.int8(3), b"1", 1 + 2j]))


@pytest.mark.parametrize("config", list(CONFIGS))
@settings(max_examples=60, deadline=None)
@given(row=st.integers(0, N - 1), name=st.sampled_from(NAMES), value=ANY_VALUE)
def test_python_api_any_value_of_any_type_changes_only_that_row(config, row, name, value):
    """Through the Python API a cell may hold anything (the column becomes object dtype)."""
    cfg = CONFIGS[config]
    table = pd.DataFrame(_base())
    base = encode(table, cfg.domain, unknown=cfg.unknown)
    edited = table.copy()
    edited[name] = edited[name].astype(object)
    edited.iat[row, edited.columns.get_loc(name)] = value
    try:
        codes = encode(edited, cfg.domain, unknown=cfg.unknown)
    except DataError:
        return  # refused: no output at all
    others = np.arange(N) != row
    np.testing.assert_array_equal(codes[others], base[others])


def test_issue_reproduction_float_categories_through_parquet(tmp_path):
    """Issue 13: D = 300 float rows c ∈ {1, 2, 3}; D′ = D + one row c = 2.5; ``unknown: other``.

    Before the fix the numpy engine counted 1:99, 2:101, 3:100, other:0 on D and
    other:300 on D′ (every row relabelled "1.0").  Now D′ moves one row only.
    """
    cfg = parse_config({"schema": {"columns": {"c": {"type": "categorical", "categories": [1, 2, 3]}},
                                   "unknown": "other"},
                        "privacy": {"epsilon": 1.0}, "algorithm": {"name": "laplace"},
                        "workload": {"marginals": {"k": 1}}})
    values = np.random.default_rng(0).choice([1.0, 2.0, 3.0], size=300)
    d, d2 = tmp_path / "d.parquet", tmp_path / "d2.parquet"
    pq.write_table(pa.table({"c": pa.array(values, pa.float64())}), d)
    pq.write_table(pa.table({"c": pa.array(np.append(values, 2.5), pa.float64())}), d2)
    expected = np.bincount(values.astype(int) - 1, minlength=4)
    for engine in ENGINES:
        for path, want in ((d, expected), (d2, expected + np.array([0, 0, 0, 1]))):
            counts = open_counts(path, cfg.domain, engine=engine, unknown="other")
            np.testing.assert_array_equal(counts.marginal((0,)), want, err_msg=f"{engine} {path.name}")
            getattr(counts, "close", lambda: None)()


def test_issue_reproduction_release_moves_at_most_one_count(tmp_path):
    """The same through the whole pipeline (seeded).  The other-bucket's noisy count is 1 + Lap(1) (ε = 1, one
    1-way marginal, sensitivity 1), so more than 30 synthetic rows in it has probability < 1e-12 (it was ≈ 300)."""
    cfg = parse_config({"schema": {"columns": {"c": {"type": "categorical", "categories": [1, 2, 3]}},
                                   "unknown": "other"},
                        "privacy": {"epsilon": 1.0, "n": "public"}, "algorithm": {"name": "laplace"},
                        "workload": {"marginals": {"k": 1}}})
    values = np.repeat([1.0, 2.0, 3.0], 100)
    d2 = tmp_path / "d2.parquet"
    pq.write_table(pa.table({"c": pa.array(np.append(values, 2.5), pa.float64())}), d2)
    result = release_from_source(str(d2), cfg, engine="numpy", rng=np.random.default_rng(0), seeded=True)
    assert len(result.synthetic) == 301
    assert (result.synthetic["c"] == "__other__").sum() < 30


def test_number_labels_and_category_matching():
    assert [number_label(x) for x in (1.0, -0.0, 2.5, 1e20, math.inf, 2.0**53, 2.0**53 - 1)] == [
        "1", "0", "2.5", "1e+20", "inf", "9007199254740992.0", "9007199254740991"]
    spec = CategoricalColumn("c", (1, "2.5", 1e20, "01", 2**53 + 1, "inf", 10**20))
    codes = category_codes(pd.Series([1.0, 2.5, 1e20, 1.0, 2.0**53, math.inf, math.nan, 2.0]), spec)
    # '01' and integers from 2**53 on are no float's label; the YAML float 1e20 ('1e+20') is
    assert codes.tolist() == [0, 1, 2, 0, -1, 5, -1, -1]
    mixed = pd.Series([1.0, "1", 1, True, None, 2.5], dtype=object)
    assert category_codes(mixed, spec).tolist() == [0, 0, 0, -1, -1, 1]
    assert cell_labels(mixed).tolist() == ["1", "1", "1", "True", None, "2.5"]
    assert cell_labels(pd.Series([1.0, 2.5, math.nan, -0.0])).tolist() == ["1", "2.5", None, "0"]


@given(values=st.lists(st.one_of(st.floats(), st.none()), min_size=2, max_size=30), row=st.integers(0, 29),
       value=st.one_of(st.floats(), st.none()))
@settings(max_examples=60, deadline=None)
def test_cell_labels_depend_on_the_cell_alone(values, row, value):
    """The labels schema discovery counts (data/profile.py) obey the same per-row rule."""
    row %= len(values)
    base = cell_labels(pd.Series(values, dtype=float))
    edited = list(values)
    edited[row] = value
    out = cell_labels(pd.Series(edited, dtype=float))
    others = np.arange(len(values)) != row
    assert out[others].tolist() == base[others].tolist()
    assert base.tolist() == [None if v is None or math.isnan(v) else number_label(v) for v in values]


# Every special value of every column type, one per row (rows far apart), in one file per config:
SPARK_EDITS = [(r, name, v) for r, (name, v) in enumerate(
    [("cf", 2.5), ("cf", math.inf), ("cf", math.nan), ("cf", None), ("cf", -0.0), ("cx", 2.5), ("cx", 1e20),
     ("cx", 0.5), ("ci", 2**63 - 1), ("ci", None), ("cs", ""), ("cs", "Ünï"), ("cs", None), ("cb", None),
     ("k", -(2**63)), ("kf", math.nan), ("kf", 1e300), ("x", -math.inf), ("x", math.nan), ("xs", "inf"),
     ("xs", " 7 "), ("xs", "1e400"), ("cf", 1e300), ("cx", -0.0)])]


@pytest.mark.parametrize("config", list(CONFIGS))
def test_spark_codes_equal_numpy_row_by_row(spark, tmp_path, config):
    """Spark on a table carrying every special value: the numpy engine's codes (or message), row by row.

    With the numpy engine's per-row property (tests above), equal codes on the
    edited table mean Spark's unedited rows keep their base codes too.
    """
    cfg = CONFIGS[config]
    cols = _base()
    for row, name, value in SPARK_EDITS:
        cols[name][row] = value
    path = tmp_path / "edited.parquet"
    _write(cols, path)
    results = {engine: outcome(path, cfg, engine) for engine in ENGINES}
    results["spark"] = _spark_outcome(spark, path, cfg)
    assert len({r[0] for r in results.values()}) == 1, {k: r[0] for k, r in results.items()}
    if results["numpy"][0] == "error":
        assert results["spark"][1] == results["numpy"][1] == results["stream"][1]
        return
    for engine in ("stream", "spark"):
        np.testing.assert_array_equal(results[engine][1], results["numpy"][1], err_msg=engine)
    edited_rows = np.isin(np.arange(N), [r for r, _, _ in SPARK_EDITS])
    np.testing.assert_array_equal(results["numpy"][1][~edited_rows], _base_codes(tmp_path, cfg)[~edited_rows])


def _base_codes(tmp_path, cfg) -> np.ndarray:
    path = tmp_path / "base.parquet"
    _write(_base(), path)
    return outcome(path, cfg, "numpy")[1]


def _spark_outcome(spark, path, cfg):
    from dpsynth.data.engines.spark import SparkCounts

    try:
        counts = SparkCounts(path, cfg.domain, unknown=cfg.unknown, spark=spark)
    except DataError as exc:
        return "error", str(exc)
    with counts:
        return "ok", row_codes(counts, cfg.domain)
