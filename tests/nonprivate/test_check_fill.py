"""``dpsynth check`` (NOT PRIVATE) under ``missing: fill``: nulls and unreadable text are folded into the fill value,
never a violation, as every engine encodes them (issue 27)."""

from __future__ import annotations

import pandas as pd

from dpsynth.config import parse_config
from dpsynth.nonprivate.check import folded_values, schema_violations


def test_check_reports_nulls_read_as_the_fill_value():
    cfg = parse_config({"schema": {"unknown": "other", "columns": {
        "c": {"type": "categorical", "categories": ["a", "b"], "missing": "fill", "fill": "b"},
        "n": {"type": "integer", "lower": 0, "upper": 3, "missing": "fill", "fill": 1}}},
        "privacy": {"epsilon": 1.0}})
    table = pd.DataFrame({"c": ["a", None, "b", None], "n": [1, None, "x", 2]})
    assert schema_violations(table, cfg.domain, unknown="other") == []
    assert [f.describe() for f in folded_values(table, cfg.domain, unknown="other")] == [
        "c: 2 value(s) null (empty), read as the fill value 'b'",
        "n: 1 value(s) null (empty), read as the fill value 1",
        "n: 1 value(s) not a number, read as the fill value 1",
    ]
