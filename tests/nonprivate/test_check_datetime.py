"""``dpsynth check`` (NOT PRIVATE) on a ``datetime`` column: its cells are read as dates, as every engine encodes
them, never as numbers (until session 18 every ISO date was reported as "not a number")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpsynth.config import parse_config
from dpsynth.data.discretize import encode
from dpsynth.errors import DataError
from dpsynth.nonprivate.check import folded_values, schema_violations


def _domain(unknown: str, **extra):
    return parse_config({"schema": {"unknown": unknown, "columns": {
        "d": {"type": "datetime", "lower": "2001-01-01", "upper": "2003-12-31", "unit": "year", **extra}}},
        "privacy": {"epsilon": 1.0}}).domain


def test_dates_inside_the_range_fit():
    table = pd.DataFrame({"d": ["2001-03-04", "2002-12-31", "2003-01-01T10:00:00"]})
    assert schema_violations(table, _domain("error")) == []
    assert folded_values(table, _domain("other"), unknown="other") == []
    encode(table, _domain("error"))  # the engine agrees: no error


def test_text_and_out_of_range_dates_are_reported_as_the_engine_treats_them():
    table = pd.DataFrame({"d": ["2001-03-04", "soon", "1999-05-05", "2002-01-01"]})
    assert [v.describe() for v in schema_violations(table, _domain("error"))] == [
        "d: not an ISO 8601 date: 1 row(s): 2",
        "d: outside the declared range [2001-01-01, 2004-01-01] (or not finite): 1 row(s): 3"]
    with pytest.raises(DataError):
        encode(table, _domain("error"))
    # unknown: other with missing: category reads the text as missing and clamps the early date, as encode does
    domain = _domain("other", missing="category")
    assert schema_violations(table, domain, unknown="other") == []
    assert [f.describe() for f in folded_values(table, domain, unknown="other")] == [
        "d: 1 value(s) not an ISO 8601 date, read as missing",
        "d: 1 value(s) outside the declared range [2001-01-01, 2004-01-01] (or not finite), clamped to it"]
    codes = encode(table, domain, unknown="other")
    assert np.all(codes >= 0)
