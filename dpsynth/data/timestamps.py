"""Instants of ``datetime`` columns: float seconds since the Unix epoch (UTC), a public calendar grid, text back.

A datetime column is a numeric column over instants: its bin edges are float
seconds, so encoding reuses the numeric path once a cell is parsed.  Parsing is
per cell (a cell's instant depends on that cell alone, so every engine and every
batch gives the same codes): with a ``format`` a cell is read with that strftime
format first, then (either way) as ISO 8601, and without a format then in the
common spellings :data:`COMMON_FORMATS`; a cell that none reads is
unparseable (NaN).  Time zones: an offset in a cell is honoured, a cell without
one is taken as UTC, and decoded instants are written in UTC without an offset.
"""

from __future__ import annotations

import datetime as _dt
import math

import numpy as np
import pandas as pd

from dpsynth.errors import ConfigError

__all__ = [
    "CLOCK_DAY",
    "CLOCK_FORMATS",
    "COMMON_FORMATS",
    "DATE_FORMAT",
    "DAY",
    "HOUR",
    "SPELLINGS",
    "SPELLING_CELLS",
    "TIME_FORMAT",
    "UNITS",
    "calendar_edges",
    "check_format",
    "default_format",
    "format_instants",
    "instant_text",
    "instants",
    "parse_instant",
    "resolution",
    "spelled_format",
    "spelling_cells",
]

UNITS = ("year", "month", "day", "hour")
"""Calendar units of ``unit:`` bins."""

DATE_FORMAT = "%Y-%m-%d"
TIME_FORMAT = "%Y-%m-%dT%H:%M:%S"
DAY = 86400.0
HOUR = 3600.0
MAX_CALENDAR_BINS = 100_000
"""Most calendar bins one column may declare (an hourly grid over 11 years)."""

COMMON_FORMATS = ("%m/%d/%Y %H:%M:%S", "%m/%d/%Y %H:%M", "%m/%d/%Y", "%Y/%m/%d %H:%M:%S", "%Y/%m/%d", "%d.%m.%Y",
                  "%d.%m.%Y %H:%M:%S")
"""Spellings of dates a cell without a ``format`` is read with when it is not ISO 8601 (in this order, the first
that reads it): US month/day/year (as spreadsheets and many exports write them: the FAA's ``9/30/1990 0:00:00``),
year/month/day, and day.month.year.  Day/month/year with slashes is ambiguous with the US order: give it as the
column's ``format``."""

CLOCK_FORMATS = ("%H:%M:%S", "%H:%M")
"""Times of day without a date ('11:38:36', as order logs write them), read by :func:`instants` (without a
``format``) on :data:`CLOCK_DAY`, the day strptime gives a time alone."""
CLOCK_DAY = -2208988800.0
"""1900-01-01T00:00:00Z: the day of every time of day read with :data:`CLOCK_FORMATS`."""

SPELLINGS = ("%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M",
             "%Y-%m-%dT%H:%M") + COMMON_FORMATS + CLOCK_FORMATS
"""The public spellings a discovered datetime column may be written back in (ISO dates and timestamps, then
:data:`COMMON_FORMATS`); :func:`spelling_cells` puts each cell in the first that reads it exactly, or in a last
cell for other readable spellings (fractions of a second, offsets)."""
TIME_STATES = ("midnight", "hour", "finer")
"""What a cell's instant carries besides its date: nothing (midnight), a whole hour, minutes or seconds."""
SPELLING_CELLS = (len(SPELLINGS) + 1) * 2 * len(TIME_STATES)
"""Cells of :func:`spelling_cells`: (spelling or other) × (zero-padded, not) × time state."""
_NUMERIC_DATE = r"^\s*\d{1,4}[/.]\d{1,2}[/.]\d{1,4}(\s|$)"
_CLOCK = r"^\s*\d{1,2}:\d{2}(:\d{2})?\s*$"

_EPOCH = pd.Timestamp(0, tz="UTC")
_SECOND = pd.Timedelta(seconds=1)
_STEPS = ((1.0, ("%S", "%f", "%X", "%c", "%T", "%r", "%s")), (60.0, ("%M", "%R")), (3600.0, ("%H", "%I", "%p")))
_FREQ = {"year": "YS", "month": "MS", "day": "D", "hour": "h"}
_SHORTEST = {"year": 365 * DAY, "month": 28 * DAY, "day": DAY, "hour": 3600.0}


def _seconds(parsed: pd.Series | pd.DatetimeIndex) -> np.ndarray:
    """Seconds since the epoch (NaN for NaT), at whatever resolution pandas parsed: a year such as 5126 is
    beyond nanosecond timestamps, so the arithmetic is done in whole seconds plus the sub-second part."""
    values = pd.Series(parsed).dt.tz_convert(None) if getattr(parsed.dtype, "tz", None) else pd.Series(parsed)
    whole = values.astype("datetime64[s]")
    secs = whole.astype("int64").to_numpy().astype(float)
    frac = ((values - whole) / _SECOND).to_numpy(dtype=float, na_value=np.nan)
    out = secs + np.nan_to_num(frac)
    out[values.isna().to_numpy()] = np.nan
    return out


def instants(col: pd.Series, fmt: str | None = None) -> np.ndarray:
    """Seconds since the epoch of every cell (NaN: null or unparseable), vectorised per column.

    Datetime-typed columns (Parquet timestamps) are taken as they are; numbers and
    booleans are not instants; every other cell is read as text (see the module docstring).
    """
    if pd.api.types.is_datetime64_any_dtype(col):
        return _seconds(pd.to_datetime(col, utc=True))
    if pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col):
        return np.full(len(col), np.nan)
    text = col.astype("string")
    out = np.full(len(col), np.nan)
    todo = text.notna().to_numpy().copy()
    read = fmt.replace("%-", "%") if fmt else None  # '%-m' (no zero padding) writes what '%m' reads
    for form in ((read,) if read else ()) + ("ISO8601",):  # at most two vectorised passes
        if not todo.any():
            break
        parsed = pd.to_datetime(text[todo], errors="coerce", utc=True, format=form)
        out[todo] = _seconds(parsed)
        todo &= np.isnan(out)
    if fmt is None and todo.any():  # common non-ISO spellings, each cell read by itself in a fixed order
        for pattern, forms in ((_NUMERIC_DATE, COMMON_FORMATS), (_CLOCK, CLOCK_FORMATS)):
            left = todo & text.str.match(pattern).fillna(False).to_numpy(dtype=bool)
            for form in forms:
                if not left.any():
                    break
                parsed = pd.to_datetime(text[left], errors="coerce", utc=True, format=form)
                out[left] = _seconds(parsed)
                left &= np.isnan(out)
    return out


def spelling_cells(col: pd.Series) -> np.ndarray:
    """The cell of each cell's spelling (−1 when null, a number, or not an instant), vectorised per spelling.

    Cell ((s·2 + p)·3 + t): s the first of :data:`SPELLINGS` that reads the text exactly (len(SPELLINGS): another
    spelling :func:`instants` reads), p = 1 when a numeric field has one digit only ('9/30/1990 0:00:00': not
    zero-padded), t the :data:`TIME_STATES` of its instant (midnight, a whole hour, finer).  A cell's code depends
    on that cell alone."""
    out = np.full(len(col), -1, dtype=np.int64)
    if pd.api.types.is_bool_dtype(col) or pd.api.types.is_numeric_dtype(col) or \
            pd.api.types.is_datetime64_any_dtype(col):
        return out  # numbers are not instants; a typed timestamp has no spelling
    text = col.astype("string").str.strip()
    numeric = pd.to_numeric(text, errors="coerce").notna().to_numpy()
    seconds = instants(col)
    todo = ~np.isnan(seconds) & ~numeric
    which = np.full(len(col), len(SPELLINGS), dtype=np.int64)
    pending = todo.copy()
    for s, form in enumerate(SPELLINGS):  # loop over the public spellings; each pass is vectorised
        if not pending.any():
            break
        hit = pd.to_datetime(text[pending], errors="coerce", utc=True, format=form).notna().to_numpy()
        idx = np.flatnonzero(pending)[hit]
        which[idx] = s
        pending[idx] = False
    short = text.str.contains(r"(?<!\d)\d(?!\d)", regex=True).fillna(False).to_numpy(dtype=bool)
    state = np.where(np.nan_to_num(seconds) % DAY == 0, 0, np.where(np.nan_to_num(seconds) % HOUR == 0, 1, 2))
    code = (which * 2 + short) * len(TIME_STATES) + state
    out[todo] = code[todo]
    return out


def spelled_format(spelling: str, unpadded: bool, state: int) -> str:
    """The strftime format that writes instants as ``spelling`` does: without zero padding of month, day and hour
    when ``unpadded`` ('%-m'), and with the time fields that the :data:`TIME_STATES` ``state`` says are always
    zero written as literal zeros ('%m/%d/%Y 0:00:00' for midnights), so that decoding draws whole days or hours
    (:func:`resolution`)."""
    fmt = spelling
    if "%Y" not in spelling:  # a time of day (:data:`CLOCK_FORMATS`): its fields are all it writes
        state = 2
    if unpadded:
        fmt = fmt.replace("%m", "%-m").replace("%d", "%-d").replace("%H", "%-H")
    if state <= 1:
        fmt = fmt.replace("%M", "00").replace("%S", "00")
    if state == 0:
        fmt = fmt.replace("%-H", "0").replace("%H", "00")
    return fmt


def parse_instant(value, path: str) -> float:
    """Seconds since the epoch of one public schema value: an ISO 8601 date or timestamp.

    YAML reads an unquoted ``2016-01-01`` as a date and ``2016-01-01T10:00:00`` as a
    timestamp; both are accepted, as is the same text quoted."""
    if isinstance(value, _dt.date | _dt.datetime):
        value = value.isoformat()
    if isinstance(value, str) and value.strip():
        x = instants(pd.Series([value], dtype=object))[0]
        if math.isfinite(x):
            return float(x)
    raise ConfigError(f"{path}: expected an ISO 8601 date or timestamp such as 2016-01-01 or "
                      f"2016-01-01T12:00:00, got {value!r}")


def instant_text(seconds: float) -> str:
    """ISO 8601 text of one instant: a date when it is midnight, else a timestamp (to the microsecond if needed)."""
    t = pd.Timestamp(round(seconds * 1e6), unit="us")
    if seconds % DAY == 0:
        return t.strftime(DATE_FORMAT)
    return t.isoformat()


def calendar_edges(lower: float, upper: float, unit: str, path: str) -> np.ndarray:
    """Edges (seconds) of the calendar ``unit`` cells meeting [lower, upper]: from the start of the
    unit holding ``lower`` to the end of the unit holding ``upper`` (public, from the schema alone)."""
    if (upper - lower) / _SHORTEST[unit] + 2 > MAX_CALENDAR_BINS:
        raise ConfigError(f"{path}.unit: {unit} bins from {instant_text(lower)} to {instant_text(upper)} are more "
                          f"than {MAX_CALENDAR_BINS:,}; use a coarser unit or 'bins:'")
    lo, hi = pd.Timestamp(round(lower * 1e6), unit="us"), pd.Timestamp(round(upper * 1e6), unit="us")
    start, last = _floor(lo, unit), _floor(hi, unit)
    grid = pd.date_range(start, last + pd.tseries.frequencies.to_offset(_FREQ[unit]), freq=_FREQ[unit])
    return _seconds(grid.tz_localize("UTC"))


def _floor(t: pd.Timestamp, unit: str) -> pd.Timestamp:
    if unit == "year":
        return pd.Timestamp(t.year, 1, 1)
    if unit == "month":
        return pd.Timestamp(t.year, t.month, 1)
    return t.floor("D" if unit == "day" else "h")


def check_format(fmt, path: str) -> str:
    """A strftime format that writes an instant this module can read back (one-line ConfigError otherwise)."""
    probe = pd.Timestamp(2001, 2, 3, 4, 5, 6)
    ok = isinstance(fmt, str) and "%" in fmt
    if ok:
        try:
            text = probe.strftime(fmt)
            ok = math.isfinite(instants(pd.Series([text], dtype=object), fmt)[0])
        except (ValueError, TypeError):
            ok = False
    if not ok:
        raise ConfigError(f"{path}: expected a strftime format that can be read back, such as '%d/%m/%Y' "
                          f"or '%Y-%m-%d %H:%M', got {fmt!r}")
    return fmt


def default_format(edges) -> str:
    """ISO date when every edge is a whole day (UTC midnight), else an ISO timestamp to the second."""
    return DATE_FORMAT if all(e % DAY == 0 for e in edges) else TIME_FORMAT


def resolution(fmt: str) -> float:
    """Seconds between consecutive decoded instants: the finest field the format writes (second, minute,
    hour), else a day, so that the written text is the decoded instant itself."""
    fmt = fmt.replace("%-", "%")
    return next((step for step, fields in _STEPS if any(f in fmt for f in fields)), DAY)


def format_instants(seconds: np.ndarray, isnull: np.ndarray, fmt: str) -> np.ndarray:
    """Text of every instant in ``fmt`` (None where ``isnull``), as an object array; vectorised."""
    out = np.full(len(seconds), None, dtype=object)
    keep = ~np.asarray(isnull, dtype=bool)
    if keep.any():
        us = np.round(np.asarray(seconds, dtype=float)[keep] * 1e6).astype(np.int64)
        out[keep] = pd.DatetimeIndex(us.astype("datetime64[us]")).strftime(fmt).to_numpy(dtype=object)
    return out
