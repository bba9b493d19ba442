"""Re-synthesis from published noisy marginals (``dpsynth sample --marginals``): post-processing only.

The long-format file written by ``dpsynth release --marginals``
(:func:`dpsynth.pipeline.marginals_table`: one row per cell with
``marginal_id``, ``marginal``, the schema's columns, ``noisy_count`` and
``noise_scale``) is read back into noisy marginals over the public domain of
a configuration, a model is fitted to them
(:func:`dpsynth.models.synthesis.fit_model`, the fit every marginal-releasing
algorithm uses) and rows are drawn from it.  Nothing here reads private data
or spends budget: the marginals are already the output of a mechanism.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

from dpsynth.algorithms.base import NoisyMarginal
from dpsynth.config import Config
from dpsynth.data.io import read_table
from dpsynth.errors import DataError
from dpsynth.modelfile import ReleasedModel
from dpsynth.models.synthesis import fit_model

__all__ = ["marginals_from_table", "model_from_marginals"]

_FIXED = ("marginal_id", "marginal", "noisy_count", "noise_scale")


def marginals_from_table(df: pd.DataFrame, config: Config, name: str = "marginals") -> list[NoisyMarginal]:
    """The noisy marginals of a long-format table, checked against ``config``'s public domain."""
    domain = config.domain
    missing = [c for c in (*_FIXED, *domain.names) if c not in df.columns]
    if missing:
        raise DataError(f"{name}: column '{missing[0]}' is missing (expected the format written by "
                        "'dpsynth release --marginals' with the same configuration)")
    counts = pd.to_numeric(df["noisy_count"], errors="coerce").to_numpy(dtype=float)
    scales = pd.to_numeric(df["noise_scale"], errors="coerce").to_numpy(dtype=float)
    if not (np.all(np.isfinite(counts)) and np.all(np.isfinite(scales))):
        raise DataError(f"{name}: noisy_count and noise_scale must be finite numbers")
    out = []
    for mid, rows in df.groupby(df["marginal_id"].astype(str), sort=False).indices.items():  # loop over marginals
        label = str(df["marginal"].iloc[rows[0]])
        cols = label.split("|")
        if any(c not in domain.names for c in cols) or len(set(cols)) != len(cols):
            raise DataError(f"{name}: marginal {mid} names columns not in the schema ({label})")
        attrs = domain.indices(cols)
        shape = domain.shape(attrs)
        index = []
        for a in attrs:
            labels = pd.Index(domain.columns[a].labels())
            pos = labels.get_indexer(df[domain.names[a]].iloc[rows].astype(str))
            if np.any(pos < 0):
                raise DataError(f"{name}: marginal {mid} has a value of column '{domain.names[a]}' "
                                "outside the schema")
            index.append(pos)
        flat = np.ravel_multi_index(index, shape) if index else np.zeros(len(rows), dtype=np.int64)
        if len(rows) != int(np.prod(shape)) or len(np.unique(flat)) != len(rows):
            raise DataError(f"{name}: marginal {mid} ({label}) does not list each of its "
                            f"{int(np.prod(shape))} cells exactly once")
        if len(np.unique(scales[rows])) != 1:
            raise DataError(f"{name}: marginal {mid} has more than one noise_scale")
        values = np.empty(len(rows))
        values[flat] = counts[rows]
        out.append(NoisyMarginal(attrs, values.reshape(shape), float(scales[rows[0]])))
    if not out:
        raise DataError(f"{name}: no marginals")
    return out


def model_from_marginals(path: str | Path, config: Config, *, passes: int = 10) -> ReleasedModel:
    """Read a published marginals file and fit a model to it (post-processing of those marginals)."""
    p = Path(path)
    strings = [*config.domain.names, "marginal", "marginal_id"]
    df = read_table(p, string_columns=strings)
    marginals = marginals_from_table(df, config, str(p))
    # Each marginal's noisy total estimates n; their mean is the fit's mass (n itself is not in the file).
    total = max(1.0, float(np.mean([m.values.sum() for m in marginals])))
    model, details, warnings = fit_model(config.domain, marginals, total=total, passes=passes)
    source = {
        "kind": "marginals",
        "file": p.name,
        "file_sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
        "fit": details,
        "warnings": warnings,
    }
    return ReleasedModel(config, model, marginals, source=source)
