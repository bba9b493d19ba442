"""Draft a schema from a table, for a person to edit.  NOT private: it reads the data.

The draft exists so that users do not type column lists by hand; every value
in it (categories, bounds) is learned from the data and must be replaced by
public knowledge before a release.  The CLI prints a loud warning.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import yaml

__all__ = ["draft_schema"]


def _round_out(lo: float, hi: float) -> tuple[float, float]:
    """Widen [lo, hi] to round numbers (one significant digit of the span)."""
    span = hi - lo if hi > lo else max(abs(hi), 1.0)
    step = 10 ** math.floor(math.log10(span))
    return math.floor(lo / step) * step, math.ceil(hi / step) * step if hi > lo else hi + step


def _column(col: pd.Series, max_categories: int) -> dict:
    spec: dict = {}
    nonnull = col.dropna()
    if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
        values = nonnull.to_numpy(dtype=float)
        integral = bool(len(values)) and bool(np.all(values == np.round(values)))
        lo, hi = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
        if integral and hi - lo < 32:
            spec = {"type": "integer", "lower": int(lo), "upper": int(hi)}
        else:
            lo, hi = _round_out(lo, hi)
            spec = {"type": "numeric", "lower": _plain(lo), "upper": _plain(hi), "bins": 10}
            if integral:
                spec["integer"] = True
    else:
        cats = sorted(nonnull.astype(str).unique().tolist())
        spec = {"type": "categorical", "categories": cats[:max_categories]}
    if col.isna().any():
        spec["missing"] = "category"
    return spec


def _plain(x: float):
    return int(x) if float(x).is_integer() else float(x)


def draft_schema(table: pd.DataFrame, *, max_categories: int = 100) -> str:
    """YAML text of a config skeleton whose schema describes ``table``."""
    columns = {str(name): _column(table[name], max_categories) for name in table.columns}
    doc = {
        "schema": {"columns": columns, "unknown": "error"},
        "privacy": {"epsilon": 1.0, "delta": 0.0, "neighboring": "add-remove", "n": "public"},
        "algorithm": {"name": "laplace", "params": {}},
        "workload": {"marginals": {"k": 2}},
        "output": {"rows": "n", "numeric": "uniform"},
    }
    header = (
        "# DRAFT learned from the data: NOT differentially private.\n"
        "# Replace every category list and bound with public knowledge before a release.\n"
    )
    return header + yaml.safe_dump(doc, sort_keys=False, default_flow_style=None, width=100)
