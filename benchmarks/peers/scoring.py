"""The shared input and the shared yardstick: dpsynth's integer codes of a table, and k-way L1 scores.

Both tools are scored on the same codes: the table encoded with dpsynth's
public schema (``configs/<name>.yaml``; the encoding is deterministic given
the schema).  A score is the mean, over attribute sets of size k, of
Σ|p − q| between the true and the synthetic *normalised* marginal
distributions (0 = identical, 2 = disjoint), computed with
``dpsynth.nonprivate.metrics.cell_abs_errors``.  Wide tables are scored on a
fixed public random sample of the attribute sets.  NOT PRIVATE: the scores
read the real table.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.grid import SHARED
from benchmarks.worker import marginal_counts

from .tables import TABLES, read_rows

__all__ = ["KWayScorer", "Table", "load_table"]


@dataclass(frozen=True)
class Table:
    """A benchmark table: its raw public config, the rows, the parsed config and dpsynth's codes."""

    name: str
    raw: dict
    rows: pd.DataFrame
    config: object
    codes: np.ndarray

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(int(k) for k in self.config.domain.sizes)


def data_path(name: str, shared: Path | None = None) -> Path:
    """Where table ``name`` lives; files under ../shared/data are looked up under ``shared`` instead when given."""
    path = TABLES[name].data
    if shared is not None and path.is_relative_to(SHARED):
        return Path(shared) / path.relative_to(SHARED)
    return path


def load_table(name: str, *, shared: Path | None = None, path: Path | None = None) -> Table:
    """Read table ``name`` (:data:`.tables.TABLES`) and encode it with its public schema."""
    import yaml

    from dpsynth.config import parse_config
    from dpsynth.data.discretize import encode
    ds = TABLES[name]
    raw = yaml.safe_load(ds.config.read_text())
    cfg = parse_config(raw)
    rows = read_rows(path or data_path(name, shared), string_columns=cfg.domain.text_columns)
    rows = rows[list(cfg.domain.names)]
    return Table(name, raw, rows, cfg, encode(rows, cfg.domain, unknown=cfg.unknown))


class KWayScorer:
    """Average L1 distance between normalised k-way marginals of the true codes and of synthetic codes."""

    def __init__(self, codes: np.ndarray, sizes, *, ks=(2, 3), sample: int | None = None, seed: int = 0):
        self.sizes = tuple(int(s) for s in sizes)
        self.n = int(codes.shape[0])
        self.sets: dict[int, list[tuple[int, ...]]] = {}
        self.true: dict[int, list[np.ndarray]] = {}
        for k in ks:
            combos = list(itertools.combinations(range(len(self.sizes)), k))
            if sample is not None and sample < len(combos):  # a fixed public sample on wide tables
                pick = np.sort(np.random.default_rng(seed + k).choice(len(combos), size=sample, replace=False))
                combos = [combos[i] for i in pick]
            self.sets[k] = combos
            cache: dict = {}
            self.true[k] = [marginal_counts(codes, self.sizes, s, cache) for s in combos]

    def score(self, synthetic: np.ndarray) -> dict[str, float]:
        """``{"l1_<k>way": mean L1, "marginals_<k>way": count}`` for every k."""
        from dpsynth.nonprivate.metrics import cell_abs_errors

        synthetic = np.asarray(synthetic)
        if synthetic.ndim != 2 or synthetic.shape[1] != len(self.sizes):
            raise ValueError(f"synthetic codes have shape {synthetic.shape}; expected (rows, {len(self.sizes)})")
        bad = (synthetic < 0) | (synthetic >= np.asarray(self.sizes))
        if bad.any():
            col = int(np.nonzero(bad.any(axis=0))[0][0])
            raise ValueError(f"synthetic column {col} has codes outside 0..{self.sizes[col] - 1}")
        out: dict[str, float] = {}
        for k, combos in self.sets.items():
            cache: dict = {}
            l1 = [cell_abs_errors(t, marginal_counts(synthetic, self.sizes, s, cache)).sum()
                  for s, t in zip(combos, self.true[k], strict=True)]
            out[f"l1_{k}way"] = float(np.mean(l1))
            out[f"marginals_{k}way"] = len(combos)
        return out
