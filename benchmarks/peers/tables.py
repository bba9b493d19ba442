"""The peer benchmark's tables: the grid's (``benchmarks.grid.DATASETS``) and three HELD-OUT ones.

Held-out tables (issue 28): tables no dpsynth default was tuned on, each with a hand-written public schema.

* ``adult_test``: the UCI Adult test split (16,281 rows), ``../shared/data/adult/adult_test.csv``, encoded
  with the training split's public schema ``configs/adult.yaml``;
* ``compas``: ProPublica's compas-scores-two-years (7,214 rows), ``$DPSYNTH_RAW_DATA/compas.csv``
  (default ``/work/rawdata``), schema ``benchmarks/raw_configs/compas.yaml`` (16 analysis columns);
* ``loans``: openintro's loans_full_schema (10,000 rows), ``$DPSYNTH_RAW_DATA/loans.csv``, schema
  ``benchmarks/raw_configs/loans.yaml`` (54 columns: scored on a fixed public sample of 500 attribute sets
  per k, as KDD99 and Netflix are).

compas.csv's header repeats two names (``decile_score``, ``priors_count``: ProPublica's export joined two
tables); dpsynth's reader refuses a repeated name, so :func:`read_rows` keeps the first of each after
checking that the repeat holds the same values (else it refuses: the two would be different columns).
"""

from __future__ import annotations

import csv
import os
import tempfile
from pathlib import Path

import pandas as pd

from benchmarks.grid import DATASETS, ROOT, SHARED, Dataset

__all__ = ["HELDOUT", "RAW", "TABLES", "read_rows"]

RAW = Path(os.environ.get("DPSYNTH_RAW_DATA", "/work/rawdata"))
RAW_CONFIGS = ROOT / "benchmarks" / "raw_configs"

HELDOUT: dict[str, Dataset] = {
    d.name: d
    for d in (
        Dataset(name="adult_test", config=ROOT / "configs" / "adult.yaml", data=SHARED / "adult" / "adult_test.csv"),
        Dataset(name="compas", config=RAW_CONFIGS / "compas.yaml", data=RAW / "compas.csv"),
        Dataset(name="loans", config=RAW_CONFIGS / "loans.yaml", data=RAW / "loans.csv", eval_sample=500, wide=True),
    )
}
TABLES: dict[str, Dataset] = {**DATASETS, **HELDOUT}


def _header(path: Path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as f:
        return next(csv.reader(f), [])


def read_rows(path: Path, *, string_columns=()) -> pd.DataFrame:
    """``dpsynth.data.io.read_table`` of ``path``; a header that repeats a name keeps its first column.

    Each repeat must hold exactly the first column's text in every row (compared as read, before any
    parsing), else ``ValueError``: then they are different columns under one name and neither can be kept.
    """
    from dpsynth.data.io import read_table

    path = Path(path)
    header = _header(path) if path.suffix == ".csv" else []
    if len(set(header)) == len(header):
        return read_table(path, string_columns=string_columns)
    text = pd.read_csv(path, dtype=str, keep_default_na=False)  # pandas names the repeats 'x.1', 'x.2', ...
    seen: dict[str, int] = {}
    drop = []
    for i, name in enumerate(header):  # loop over header names, not rows
        if name in seen:
            repeat = text.columns[i]
            if not text[repeat].equals(text[name]):
                raise ValueError(f"{path}: the header repeats '{name}' with different values; cannot keep one")
            drop.append(repeat)
        seen[name] = i
    with tempfile.TemporaryDirectory(prefix="dpsynth-peers-") as tmp:
        clean = Path(tmp) / path.name
        text.drop(columns=drop).to_csv(clean, index=False)
        return read_table(clean, string_columns=string_columns)
