"""Per-column fidelity on raw values, and the share of values the release's schema could not represent.

Numbers (columns the neutral view types numeric or integer): Wasserstein-1
distance divided by the real column's standard deviation, the two-sample
Kolmogorov–Smirnov statistic sup|F_real − F_synth|, and the 5/25/50/75/95 %
quantiles of both, all on the parsed non-null values; a histogram of both on
:data:`HIST_BINS` equal-width bins over the real 0.5–99.5 % range (values
beyond it in the end bins) for ``--plot``.  Every column: the total variation
distance of its neutral 1-way marginal (other and null bins included).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from dpsynth.config import Config
from dpsynth.data.discretize import cell_labels
from dpsynth.data.schema import OTHER_LABEL, CategoricalColumn
from dpsynth.data.timestamps import instant_text
from dpsynth.nonprivate.evaluate.neutral import NeutralColumn, numbers

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
HIST_BINS = 30
_PLACEHOLDER = re.compile(r"^__.*__$")
"""Category labels such as ``__other__`` and ``__none__``: a bucket, not a value of the real table."""


def wasserstein1(a: np.ndarray, b: np.ndarray) -> float:
    """W1 of two empirical distributions: ∫|F_a − F_b| over the merged sample (vectorized)."""
    a, b = np.sort(a), np.sort(b)
    grid = np.sort(np.concatenate([a, b]))
    fa = np.searchsorted(a, grid[:-1], side="right") / len(a)
    fb = np.searchsorted(b, grid[:-1], side="right") / len(b)
    return float(np.sum(np.abs(fa - fb) * np.diff(grid)))


def ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample Kolmogorov–Smirnov statistic sup_x |F_a(x) − F_b(x)|."""
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    fa = np.searchsorted(a, grid, side="right") / len(a)
    fb = np.searchsorted(b, grid, side="right") / len(b)
    return float(np.max(np.abs(fa - fb)))


def column_fidelity(col: NeutralColumn, real: pd.Series, synth: pd.Series, real_codes: np.ndarray,
                    synth_codes: np.ndarray) -> dict:
    """One column's figures (module docstring)."""
    p = np.bincount(real_codes, minlength=col.size) / max(len(real_codes), 1)
    q = np.bincount(synth_codes, minlength=col.size) / max(len(synth_codes), 1)
    out = {"name": col.name, "kind": col.kind, "bins": col.size, "tv": float(np.abs(p - q).sum() / 2),
           "null_share": {"real": float(p[-1]), "synthetic": float(q[-1])}}
    if col.kind == "categorical":
        return out | {"bars": {"labels": list(col.labels), "real": p.tolist(), "synthetic": q.tolist()}}
    x, y = numbers(real), numbers(synth)
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    if len(y) == 0:
        return out | {"w1": None, "w1_over_std": None, "ks": None, "std_real": float(np.std(x)),
                      "quantiles": {"q": list(QUANTILES), "real": np.quantile(x, QUANTILES).tolist(), "synthetic": None},
                      "histogram": None}
    w1, std = wasserstein1(x, y), float(np.std(x))
    lo, hi = np.quantile(x, [0.005, 0.995])
    if hi <= lo:
        lo, hi = float(x.min()) - 0.5, float(x.max()) + 0.5
    edges = np.linspace(lo, hi, HIST_BINS + 1)

    def hist(v):
        idx = np.clip(np.searchsorted(edges, v, side="right") - 1, 0, HIST_BINS - 1)
        return (np.bincount(idx, minlength=HIST_BINS) / len(v)).tolist()

    return out | {"w1": w1, "w1_over_std": w1 / std if std > 0 else None, "ks": ks_statistic(x, y), "std_real": std,
                  "quantiles": {"q": list(QUANTILES), "real": np.quantile(x, QUANTILES).tolist(),
                                "synthetic": np.quantile(y, QUANTILES).tolist()},
                  "histogram": {"edges": edges.tolist(), "real": hist(x), "synthetic": hist(y)}}


def unrepresentable(real: pd.DataFrame, synth: pd.DataFrame, config: Config) -> dict:
    """Per schema column, the share of rows whose value the release's schema could not represent.

    Categorical: real non-null values outside the declared categories (merged into ``__other__`` or
    refused) and synthetic values that are a bucket label (``__other__``, ``__none__``: any ``__…__``).
    Numeric and integer: real and synthetic numbers outside the schema's [lower, upper] (clamped), and
    synthetic cells that are not numbers at all; datetime (given as seconds, :func:`.neutral.with_instants`):
    the same for instants.  ``rows_*``: rows with at least one such value.
    """
    columns, real_any, synth_any = [], np.zeros(len(real), bool), np.zeros(len(synth), bool)
    for spec in config.domain.columns:  # loop over columns; each vectorized
        if isinstance(spec, CategoricalColumn):
            declared = pd.Index([str(c) for c in spec.categories], dtype=object)
            buckets = [str(c) for c in spec.categories if _PLACEHOLDER.match(str(c))] + [OTHER_LABEL]
            r_lab = cell_labels(real[spec.name])
            r_bad = pd.notna(r_lab) & ((declared.get_indexer(r_lab) < 0) | pd.Index(r_lab).isin(buckets))
            s_bad = pd.Index(cell_labels(synth[spec.name])).isin(buckets)
            what = "real values outside the declared categories; synthetic " + "/".join(buckets)
        else:
            lo, hi = (spec.lower, spec.upper) if spec.kind == "integer" else (spec.edges[0], spec.edges[-1])
            r, s = numbers(real[spec.name]), numbers(synth[spec.name])
            with np.errstate(invalid="ignore"):
                r_bad = real[spec.name].notna().to_numpy() & ~((r >= lo) & (r <= hi))
                s_bad = synth[spec.name].notna().to_numpy() & ~((s >= lo) & (s <= hi))
            what = f"numbers outside [{lo:g}, {hi:g}] (clamped) or not numbers" if spec.kind != "datetime" else \
                f"instants outside [{instant_text(lo)}, {instant_text(hi)}] (clamped) or not instants"
        r_bad, s_bad = np.asarray(r_bad, bool), np.asarray(s_bad, bool)
        real_any |= r_bad
        synth_any |= s_bad
        columns.append({"name": spec.name, "real": float(r_bad.mean()) if len(r_bad) else 0.0,
                        "synthetic": float(s_bad.mean()) if len(s_bad) else 0.0, "what": what})
    return {"rows_real": float(real_any.mean()) if len(real) else 0.0,
            "rows_synthetic": float(synth_any.mean()) if len(synth) else 0.0,
            "columns": columns}
