"""``datetime`` schema columns: validation, per-cell parsing, calendar bins, decoding, engines.

Every assertion is exact (parsing, codes and seeded draws are deterministic), so
the false-failure rate is 0.
"""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pandas as pd
import pytest

from dpsynth.config import parse_config
from dpsynth.data.counts import ArrayCounts
from dpsynth.data.discretize import decode, encode, encode_column
from dpsynth.data.engines import open_counts
from dpsynth.data.engines.stream import StreamCounts
from dpsynth.data.io import read_table
from dpsynth.data.profile import ColumnProfile
from dpsynth.data.schema import DatetimeColumn, Domain
from dpsynth.data.timestamps import instants
from dpsynth.errors import ConfigError, DataError
from dpsynth.modelfile import config_document
from dpsynth.params import load_yaml

DAY = 86400.0


def _cfg(when: dict, unknown: str = "error"):
    return parse_config({
        "schema": {"unknown": unknown, "columns": {
            "when": {"type": "datetime", **when},
            "kind": {"type": "categorical", "categories": ["a", "b"]},
        }},
        "privacy": {"epsilon": 1.0},
    })


def _spec(when: dict, unknown: str = "error") -> DatetimeColumn:
    spec = _cfg(when, unknown).domain.columns[0]
    assert isinstance(spec, DatetimeColumn)
    return spec


def _secs(text: str) -> float:
    return (pd.Timestamp(text, tz="UTC") - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(seconds=1)


# ---------------------------------------------------------------------------- validation
P = "schema.columns.when"


@pytest.mark.parametrize("when, message", [
    ({"lower": "2016-01-01", "upper": "2017-01-01"},
     f"{P}: give exactly one of bins (equal-width bins) or unit (year, month, day, hour: calendar bins)"),
    ({"lower": "2016-01-01", "upper": "2017-01-01", "bins": 4, "unit": "day"},
     f"{P}: give exactly one of bins (equal-width bins) or unit (year, month, day, hour: calendar bins)"),
    ({"upper": "2017-01-01", "bins": 4}, f"{P}.lower: required for a datetime column without edges"),
    ({"lower": "2016-01-01", "bins": 4}, f"{P}.upper: required for a datetime column without edges"),
    ({"lower": "2016-13-01", "upper": "2017-01-01", "bins": 4},
     f"{P}.lower: expected an ISO 8601 date or timestamp such as 2016-01-01 or 2016-01-01T12:00:00, got '2016-13-01'"),
    ({"lower": 2016, "upper": "2017-01-01", "bins": 4},
     f"{P}.lower: expected an ISO 8601 date or timestamp such as 2016-01-01 or 2016-01-01T12:00:00, got 2016"),
    ({"lower": "2017-01-01", "upper": "2016-01-01", "bins": 4},
     f"{P}.upper: must be later than lower (2016-01-01 <= 2017-01-01)"),
    ({"lower": "2016-01-01", "upper": "2017-01-01", "unit": "week"},
     f"{P}.unit: must be one of year, month, day, hour, got 'week'"),
    ({"lower": "2016-01-01", "upper": "2017-01-01", "bins": 0}, f"{P}.bins: must be >= 1, got 0"),
    ({"lower": "1900-01-01", "upper": "2100-01-01", "unit": "hour"},
     f"{P}.unit: hour bins from 1900-01-01 to 2100-01-01 are more than 100,000; use a coarser unit or 'bins:'"),
    ({"edges": ["2016-01-01"]}, f"{P}.edges: expected a list of at least 2 ISO 8601 dates or timestamps"),
    ({"edges": ["2016-02-01", "2016-01-01"]},
     f"{P}.edges: must be strictly increasing (each edge later than the one before)"),
    ({"edges": ["2016-01-01", "2016-02-01"], "bins": 3},
     f"{P}: give either edges or lower/upper with bins or unit, not both"),
    ({"lower": "2016-01-01", "upper": "2017-01-01", "bins": 4, "format": "%Q"},
     (f"{P}.format: expected a strftime format that can be read back, such as '%d/%m/%Y' or '%Y-%m-%d %H:%M', "
     "got '%Q'")),
    ({"lower": "2016-01-01", "upper": "2017-01-01", "bins": 4, "format": "day"},
     (f"{P}.format: expected a strftime format that can be read back, such as '%d/%m/%Y' or '%Y-%m-%d %H:%M', "
     "got 'day'")),
    ({"lower": "2016-01-01", "upper": "2017-01-01", "bins": 4, "integer": True},
     f"{P}.integer: unknown key"),
])
def test_config_errors(when, message):
    with pytest.raises(ConfigError) as info:
        _cfg(when)
    assert str(info.value).startswith(message), str(info.value)
    assert "\n" not in str(info.value)


def test_type_choices_name_datetime():
    with pytest.raises(ConfigError, match=re.escape(
            f"{P}.type: must be one of numeric, integer, categorical, datetime, got 'date'")):
        _cfg({"type": "date"})


def test_unquoted_yaml_dates_and_timestamps_are_accepted():
    raw = load_yaml("schema:\n  columns:\n    when: {type: datetime, lower: 2016-01-01, upper: 2017-12-31T23:59:59,"
                    " bins: 24}\nprivacy: {epsilon: 1}\n")
    spec = parse_config(raw).domain.columns[0]
    assert spec.edges[0] == _secs("2016-01-01") and spec.edges[-1] == _secs("2017-12-31T23:59:59")
    assert spec.n_bins == 24 and spec.kind == "datetime" and spec.ordered


def test_calendar_bins_follow_the_public_grid():
    month = _spec({"lower": "2016-01-15", "upper": "2017-12-31", "unit": "month"})
    assert month.n_bins == 24
    assert month.labels()[0] == "[2016-01-01, 2016-02-01)" and month.labels()[-1] == "[2017-12-01, 2018-01-01]"
    assert month.edges[2] - month.edges[1] == 29 * DAY  # February 2016 is a leap month
    year = _spec({"lower": "2016-06-01", "upper": "2018-01-01", "unit": "year"})
    assert [pd.Timestamp(e, unit="s").year for e in year.edges] == [2016, 2017, 2018, 2019]
    hour = _spec({"lower": "2016-01-01T10:30:00", "upper": "2016-01-01T12:00:00", "unit": "hour"})
    assert np.diff(hour.edges).tolist() == [3600.0] * 3 and hour.edges[0] == _secs("2016-01-01T10:00:00")
    day = _spec({"lower": "2016-01-01", "upper": "2016-01-10", "unit": "day"})
    assert day.n_bins == 10 and day.output_format == "%Y-%m-%d"


def test_default_format_is_a_date_only_when_every_edge_is_a_whole_day():
    assert _spec({"lower": "2016-01-01", "upper": "2016-01-11", "bins": 10}).output_format == "%Y-%m-%d"
    assert _spec({"lower": "2016-01-01", "upper": "2017-12-31T23:59:59", "bins": 24}).output_format == \
        "%Y-%m-%dT%H:%M:%S"
    assert _spec({"lower": "2016-01-01", "upper": "2016-01-11", "bins": 10,
                  "format": "%d/%m/%Y"}).output_format == "%d/%m/%Y"


@pytest.mark.parametrize("when", [
    {"lower": dt.date(2016, 1, 1), "upper": "2017-12-31T23:59:59", "bins": 24, "format": "%d/%m/%Y %H:%M"},
    {"lower": "2016-01-15", "upper": "2017-12-31", "unit": "month"},
    {"edges": ["2016-01-01", "2016-03-01T12:00:00", dt.datetime(2017, 1, 1, 6)]},
])
def test_model_file_document_parses_back_to_the_same_column(when):
    cfg = _cfg({**when, "missing": "category"})
    again = parse_config(config_document(cfg))
    assert again.domain == cfg.domain


# ---------------------------------------------------------------------------- parsing, encoding
def test_cells_parse_by_themselves():
    col = pd.Series(["2016-01-02", "2016-01-02T03:04:05", "2016-01-02 03:04:05+01:00", "20160102", "02/01/2016",
                     "12", "soon", None, " 2016-01-02"], dtype=object)
    got = instants(col)
    day = _secs("2016-01-02")
    np.testing.assert_array_equal(got[:4], [day, day + 3 * 3600 + 245, day + 2 * 3600 + 245, day])
    assert got[4] == _secs("2016-02-01")  # without a format, slashes read month first (COMMON_FORMATS)
    assert np.isnan(got[5:8]).all() and got[8] == day
    with_format = instants(col, "%d/%m/%Y")  # the format first, then ISO 8601
    assert with_format[4] == day and with_format[0] == day and np.isnan(with_format[5])
    # a cell's instant does not depend on its neighbours
    np.testing.assert_array_equal(instants(col[4:5], "%d/%m/%Y"), with_format[4:5])


def test_parquet_timestamps_and_dates_are_instants():
    stamps = pd.Series(pd.to_datetime(["2016-01-02", None, "2016-03-04T05:06:07"], format="ISO8601"))
    np.testing.assert_array_equal(instants(stamps)[[0, 2]], [_secs("2016-01-02"), _secs("2016-03-04T05:06:07")])
    dates = pd.Series([dt.date(2016, 1, 2), None], dtype=object)
    assert instants(dates)[0] == _secs("2016-01-02") and np.isnan(instants(dates)[1])
    assert np.isnan(instants(pd.Series([20160102, 5]))).all()  # numbers are not instants


def test_encode_codes_by_instant():
    spec = _spec({"lower": "2016-01-01", "upper": "2016-01-05", "bins": 4, "missing": "category"})
    col = pd.Series(["2016-01-01", "2016-01-01T23:59:59", "2016-01-02", "2016-01-04T12:00:00", "2016-01-05", None])
    np.testing.assert_array_equal(encode_column(col, spec, "error"), [0, 0, 1, 3, 3, 4])


def test_unparseable_is_missing_under_unknown_other_else_one_line_error():
    spec = _spec({"lower": "2016-01-01", "upper": "2016-01-05", "bins": 4, "missing": "category"}, "other")
    col = pd.Series(["2016-01-02", "not a date", "2015-06-01", "2030-01-01", None], dtype=object)
    np.testing.assert_array_equal(encode_column(col, spec, "other"), [1, 4, 0, 3, 4])  # clamped out of range
    strict = _spec({"lower": "2016-01-01", "upper": "2016-01-05", "bins": 4, "missing": "category"})
    with pytest.raises(DataError, match=re.escape(
            "column 'when' is declared datetime but has values that are not ISO 8601 dates or timestamps (give its "
            "'format:'); set 'schema.unknown: other' and 'missing: category' to count them as missing") + "$"):
        encode_column(col, strict, "error")
    with pytest.raises(DataError, match=re.escape(
            "column 'when' has values outside its declared range [2016-01-01, 2016-01-05] (or not finite); widen "
            "the schema or set 'schema.unknown: other' to clamp them") + "$"):
        encode_column(col.iloc[[0, 2]], strict, "error")
    fmt = _spec({"lower": "2016-01-01", "upper": "2016-01-05", "bins": 4, "format": "%d/%m/%Y"}, "other")
    with pytest.raises(DataError, match=re.escape("has values that match neither its format '%d/%m/%Y' nor ISO 8601")):
        encode_column(col.iloc[:2], fmt, "other")  # unknown: other without missing: category still refuses


@pytest.mark.parametrize("when, inside", [
    ({"lower": "2016-01-01", "upper": "2017-12-31T23:59:59", "bins": 24}, r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d"),
    ({"lower": "2016-01-01", "upper": "2017-12-31", "unit": "month"}, r"\d{4}-\d\d-\d\d"),
    ({"lower": "2016-01-01", "upper": "2016-01-03", "unit": "hour", "format": "%d/%m/%Y %H:%M"},
     r"\d\d/\d\d/\d{4} \d\d:\d\d"),
    ({"lower": "2016-01-01", "upper": "2016-01-01T00:03:00", "bins": 3, "format": "%Y-%m-%d %H:%M"},
     r"2016-01-01 00:0[0-2]"),
    ({"lower": "2016-01-01", "upper": "2016-01-01T00:00:03", "bins": 3}, r"2016-01-01T00:00:0[0-2]"),
])
@pytest.mark.parametrize("numeric", ["uniform", "midpoint"])
def test_decoded_instants_lie_in_their_bins_and_keep_the_format(when, inside, numeric):
    spec = _spec({**when, "missing": "category"})
    codes = np.tile(np.arange(spec.size), 50)
    out = decode(codes[:, None], Domain((spec,)), numeric=numeric, rng=np.random.default_rng(3))["when"]
    assert out[codes == spec.size - 1].isna().all()
    text = out[codes < spec.size - 1]
    assert text.str.fullmatch(inside).all(), text.head()
    np.testing.assert_array_equal(encode_column(out, spec, "error"), codes)  # decoded text re-encodes to its bin
    assert encode_column(out, spec, "error").dtype == np.int64


def test_uniform_decoding_draws_spread_over_the_bin():
    """1000 draws in a 31-day bin: each of the 31 days has probability 1/31; P(some day missing) < 31·(30/31)^1000
    ≈ 2e-13."""
    spec = _spec({"lower": "2016-01-01", "upper": "2016-03-01", "unit": "month"})
    out = decode(np.zeros((1000, 1), dtype=np.int64), Domain((spec,)), rng=np.random.default_rng(0))["when"]
    assert set(out) == {f"2016-01-{d:02d}" for d in range(1, 32)}


def test_profile_datetime_seconds():
    col = pd.Series(["2016-01-02", "x", None, "03/01/2016", "25/01/2016"], dtype=object)
    seconds, ok = ColumnProfile(col).datetime_seconds()  # without a format: month first, so 25/01 reads as nothing
    assert seconds[0] == _secs("2016-01-02") and ok.tolist() == [True, False, False, True, False]
    assert seconds[3] == _secs("2016-03-01")
    seconds, ok = ColumnProfile(col).datetime_seconds("%d/%m/%Y")
    assert ok.tolist() == [True, False, False, True, True] and seconds[3] == _secs("2016-01-03")


# ---------------------------------------------------------------------------- engines
def _write_table(tmp_path, n: int = 3000):
    start = pd.Timestamp("2015-12-20")
    when = (start + pd.to_timedelta(np.arange(n) * 997 % (800 * 24), unit="h")).strftime("%Y-%m-%dT%H:%M:%S")
    when = np.asarray(when, dtype=object)
    when[::37] = None
    when[5::101] = "garbage"
    when[7::211] = "2016-02-03"  # a plain date among timestamps
    when[9::307] = "20160203"  # would be a number to a numeric parser
    table = pd.DataFrame({"when": when, "kind": np.where(np.arange(n) % 3 == 0, "a", "b")})
    path = tmp_path / "t.csv"
    table.to_csv(path, index=False)
    return path


def test_numpy_and_stream_engines_count_the_same(tmp_path, monkeypatch):
    import dpsynth.data.engines.stream as stream_mod

    monkeypatch.setattr(stream_mod, "CSV_BLOCK", 1 << 12)  # many batches
    path = _write_table(tmp_path)
    cfg = _cfg({"lower": "2016-01-01", "upper": "2017-12-31", "unit": "month", "missing": "category"}, "other")
    ref = ArrayCounts(encode(read_table(path, string_columns=cfg.domain.text_columns), cfg.domain, unknown="other"),
                      cfg.domain)
    assert ref.marginal((0,))[-1] > 0  # nulls and garbage are counted as missing
    with StreamCounts(path, cfg.domain, unknown="other") as counts:
        for attrs in [(0,), (1,), (0, 1)]:
            np.testing.assert_array_equal(counts.marginal(attrs), ref.marginal(attrs))
    strict = _cfg({"lower": "2016-01-01", "upper": "2017-12-31", "unit": "month", "missing": "category"})
    with pytest.raises(DataError) as numpy_error:
        encode(read_table(path, string_columns=strict.domain.text_columns), strict.domain)
    with pytest.raises(DataError, match=re.escape(str(numpy_error.value)) + "$"):
        StreamCounts(path, strict.domain)


def test_spark_refuses_datetime_columns_before_any_work(tmp_path):
    """Spark counts a datetime column only when no row can break it (unknown: other, missing: category)."""
    path = _write_table(tmp_path, 10)
    cfg = _cfg({"lower": "2016-01-01", "upper": "2017-12-31", "unit": "month", "missing": "category"})
    with pytest.raises(ConfigError, match=re.escape(
            "schema.columns.when: datetime columns are counted by the numpy and stream engines only, or by spark "
            "under 'unknown: other' with 'missing: category'; use --engine stream (or numpy), not spark") + "$"):
        open_counts(path, cfg.domain, engine="spark")


@pytest.mark.parametrize("engine", ["numpy", "stream"])
def test_datetime_columns_are_read_as_text(tmp_path, engine):
    """ISO 8601 basic dates look like numbers: neither engine may read them as numbers."""
    path = tmp_path / "d.csv"
    path.write_text("when,kind\n20160203,a\n20160204,b\n")
    cfg = _cfg({"lower": "2016-02-01", "upper": "2016-02-10", "unit": "day"})
    counts = open_counts(path, cfg.domain, engine=engine)
    try:
        np.testing.assert_array_equal(counts.marginal((0,)), [0, 0, 1, 1, 0, 0, 0, 0, 0, 0])
    finally:
        getattr(counts, "close", lambda: None)()
    assert cfg.domain.text_columns == ["when", "kind"]


def test_common_spellings_of_dates_read_without_a_format():
    """A discovered schema has no format: the FAA's '9/30/1990 0:00:00' was text, every synthetic date __other__.
    Cells that are not ISO 8601 are read in the public COMMON_FORMATS, each by itself."""
    col = pd.Series(["9/30/1990 0:00:00", "11/29/1993 13:05", "1990/09/30", "30.09.1990", "9/30/90x", "30/9/1990"],
                    dtype=object)
    got = instants(col)
    day = _secs("1990-09-30")
    assert got[0] == day and got[1] == _secs("1993-11-29T13:05:00") and got[2] == day and got[3] == day
    assert np.isnan(got[4:]).all()
    np.testing.assert_array_equal([instants(col[i:i + 1])[0] for i in range(6)], got)  # cell by cell, the same
