"""Discretization and decoding: round trips, nulls, out-of-domain values, messages without values."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from dpsynth.config import parse_config
from dpsynth.data.discretize import decode, encode
from dpsynth.data.schema import Domain, IntegerColumn, NumericColumn
from dpsynth.errors import DataError


def test_encode_decode_round_trip_codes(tiny_raw_config, tiny_table):
    cfg = parse_config(tiny_raw_config)
    codes = encode(tiny_table, cfg.domain)
    assert codes.shape == (len(tiny_table), 4)
    assert np.all(codes >= 0) and np.all(codes < np.array(cfg.domain.sizes))
    back = decode(codes, cfg.domain, rng=np.random.default_rng(0))
    assert (back["color"] == tiny_table["color"]).all()
    assert (back["count"] == tiny_table["count"]).all() and back["count"].dtype == np.int64
    assert (back["flag"] == tiny_table["flag"]).all() and back["flag"].dtype == np.int64
    # numeric values decode into the same bin
    assert np.array_equal(encode(back, cfg.domain), codes)


def test_numeric_bins_edges_and_midpoint():
    col = NumericColumn("x", (0.0, 1.0, 5.0, 10.0))
    dom = Domain((col,))
    df = pd.DataFrame({"x": [0.0, 0.999, 1.0, 4.9, 5.0, 10.0]})
    assert encode(df, dom)[:, 0].tolist() == [0, 0, 1, 1, 2, 2]
    mid = decode(np.array([[0], [1], [2]]), dom, numeric="midpoint", rng=np.random.default_rng(0))
    assert mid["x"].tolist() == [0.5, 3.0, 7.5]


def test_integer_numeric_decodes_to_integers_inside_bin():
    col = NumericColumn("age", (17.0, 20.0, 25.0, 90.0), integral=True)
    dom = Domain((col,))
    codes = np.repeat(np.arange(3), 2000)[:, None]
    out = decode(codes, dom, rng=np.random.default_rng(1))["age"].to_numpy()
    assert out.dtype == np.int64
    b = codes[:, 0]
    assert np.all(out[b == 0] >= 17) and np.all(out[b == 0] <= 19)
    assert np.all(out[b == 1] >= 20) and np.all(out[b == 1] <= 24)
    assert np.all(out[b == 2] >= 25) and np.all(out[b == 2] <= 90)  # last bin includes its upper edge
    assert set(out[b == 0]) == {17, 18, 19}


def test_nulls_error_or_category():
    raw = {"schema": {"columns": {"c": {"type": "categorical", "categories": ["a", "b"]},
                                  "n": {"type": "integer", "lower": 0, "upper": 3}}},
           "privacy": {"epsilon": 1}}
    df = pd.DataFrame({"c": ["a", None, "b"], "n": [1, 2, 3]})
    with pytest.raises(DataError, match=re.escape(
            "column 'c' has null values; declare 'missing: category' in its schema to keep them")):
        encode(df, parse_config(raw).domain)
    raw["schema"]["columns"]["c"]["missing"] = "category"
    raw["schema"]["columns"]["n"]["missing"] = "category"
    dom = parse_config(raw).domain
    df2 = pd.DataFrame({"c": ["a", None, "b"], "n": [1.0, None, 3.0]})
    codes = encode(df2, dom)
    assert codes[:, 0].tolist() == [0, 2, 1] and codes[:, 1].tolist() == [1, 4, 3]
    back = decode(codes, dom, rng=np.random.default_rng(0))
    assert back["c"].isna().tolist() == [False, True, False]
    assert back["n"].isna().tolist() == [False, True, False] and back["n"].iloc[2] == 3


def test_unknown_values_error_without_leaking_them():
    raw = {"schema": {"columns": {"c": {"type": "categorical", "categories": ["a", "b"]},
                                  "x": {"type": "numeric", "lower": 0, "upper": 10, "bins": 2}}},
           "privacy": {"epsilon": 1}}
    dom = parse_config(raw).domain
    with pytest.raises(DataError) as info:
        encode(pd.DataFrame({"c": ["a", "SECRET-CANARY"], "x": [1, 2]}), dom)
    assert str(info.value) == ("column 'c' has values outside its declared categories; add them to the "
                               "schema or set 'schema.unknown: other'")
    with pytest.raises(DataError) as info:
        encode(pd.DataFrame({"c": ["a", "b"], "x": [1, 987654]}), dom)
    assert "987654" not in str(info.value) and "column 'x' has values outside its declared range [0, 10]" in str(info.value)
    with pytest.raises(DataError, match="declared numeric but has non-numeric values"):
        encode(pd.DataFrame({"c": ["a", "b"], "x": ["1", "abc"]}), dom)


def test_unknown_other_collects_and_clamps():
    raw = {"schema": {"unknown": "other",
                      "columns": {"c": {"type": "categorical", "categories": ["a", "b"]},
                                  "x": {"type": "numeric", "lower": 0, "upper": 10, "bins": 2}}},
           "privacy": {"epsilon": 1}}
    dom = parse_config(raw).domain
    assert dom.sizes == (3, 2)
    codes = encode(pd.DataFrame({"c": ["a", "zzz", "b"], "x": [-5, 50, float("inf")]}), dom, unknown="other")
    assert codes[:, 0].tolist() == [0, 2, 1] and codes[:, 1].tolist() == [0, 1, 1]


def test_integer_column_rejects_fractions():
    dom = Domain((IntegerColumn("k", 0, 5),))
    with pytest.raises(DataError, match="column 'k' is declared integer but has fractional values"):
        encode(pd.DataFrame({"k": [1.5]}), dom)


def test_binary_view_round_trip(tiny_raw_config, tiny_table):
    dom = parse_config(tiny_raw_config).domain
    codes = encode(tiny_table, dom)
    bits = dom.to_bits(codes)
    assert bits.shape == (len(codes), dom.n_bits) and np.all(bits.sum(axis=1) == len(dom))
    assert np.array_equal(dom.from_bits(bits), codes)
    attr, value = dom.bit_owner()
    assert all(dom.bit(a, v) == i for i, (a, v) in enumerate(zip(attr, value)))
    bits[0, :] = 0
    with pytest.raises(ValueError, match="exactly one bit set per attribute"):
        dom.from_bits(bits)


def test_float_read_integers_match_integer_categories():
    raw = {"schema": {"columns": {"f": {"type": "categorical", "categories": [0, 1]}}}, "privacy": {"epsilon": 1}}
    dom = parse_config(raw).domain
    assert encode(pd.DataFrame({"f": [1.0, 0.0]}), dom)[:, 0].tolist() == [1, 0]
