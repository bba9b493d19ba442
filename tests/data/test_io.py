"""dpsynth.data.io.read_table (found by mypy: string_columns=True crashed on Parquet)."""

from __future__ import annotations

import pandas as pd

from dpsynth.data.io import read_table


def test_parquet_with_every_column_as_text_keeps_integer_labels(tmp_path):
    path = tmp_path / "t.parquet"
    pd.DataFrame({"code": pd.array([1, None, 3], dtype="Int64"), "x": [0.5, 1.5, 2.5]}).to_parquet(path)
    df = read_table(path, string_columns=True)  # before: TypeError (_All & set)
    assert df["code"].tolist()[0] == 1 and df["code"].tolist()[2] == 3 and pd.isna(df["code"].tolist()[1])
    assert df["x"].tolist() == [0.5, 1.5, 2.5]


def test_parquet_with_named_text_columns(tmp_path):
    path = tmp_path / "t.parquet"
    pd.DataFrame({"code": [1, 2], "y": [3, 4]}).to_parquet(path)
    df = read_table(path, string_columns=["code"])
    assert df["code"].tolist() == [1, 2] and df["y"].tolist() == [3, 4]
