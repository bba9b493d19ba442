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


class _Chunk:
    def __init__(self, df: pd.DataFrame):
        self.df = df

    def to_pandas(self) -> pd.DataFrame:
        return self.df.copy()

    def to_arrow(self):
        import pyarrow as pa

        return pa.Table.from_pandas(self.df, preserve_index=False)


def test_floats_are_written_alike_whichever_writer_runs():
    """A chunk with a label that needs quoting goes through pandas, which wrote 75.0 where Arrow writes 75: a
    weight class "75" (held-out-20's powerlifting_meets, a column of codes with text among them, "120+") came back
    as "75.0", another value to anyone who reads the column as text (1-way TV 0.72 under the neutral judge with
    every value a point bin, 0.09 written alike).  Nulls stay empty, other floats keep their shortest form."""
    from dpsynth.data.io import _csv_chunk

    df = pd.DataFrame({"w": [75.0, 82.5, None, 0.1 + 0.2], "n": pd.Categorical(["a, b", "c", "d", "e"]),
                       "k": [1, 2, 3, 4]})
    quoted = _csv_chunk(_Chunk(df), header=True).decode().splitlines()
    plain = _csv_chunk(_Chunk(df.assign(n=pd.Categorical(["a", "c", "d", "e"]))), header=True).decode().splitlines()
    assert quoted == ['w,n,k', '75,"a, b",1', '82.5,c,2', ',d,3', '0.30000000000000004,e,4']
    assert [x.split(",")[0] for x in plain] == [x.split(",")[0] for x in quoted]
