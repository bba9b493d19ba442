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

__all__ = ["KWayScorer", "TabBenchScorer", "Table", "load_table"]


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


class TabBenchScorer:
    """The utility metrics of the SIGMOD 2025 benchmark of DP tabular synthesis (Chen, Li, Gong, McKenna, Wang;
    its code is public as ``tab_bench``), restated on the shared integer codes, in our own code:

    * ``tb_tvd_1way`` / ``tb_tvd_2way``: total variation distance (half the L1 of the normalised marginals)
      averaged over EVERY column and EVERY pair of columns.  The benchmark cuts a numeric column into 100
      equal-width bins over the range of both tables; the codes here have at most 100 levels, so the codes
      are those bins already.
    * ``tb_query_3way``: ``queries`` random counting queries, each a conjunction over 3 distinct columns: an
      ordered column a random interval (two uniform draws over its codes, sorted, both ends included; the
      benchmark draws real numbers over the column's range), an unordered column
      one value drawn from those the real table holds; the score is the mean absolute difference of the
      fractions of real and synthetic rows that satisfy it.

    One difference: the benchmark scores synthetic rows against a held-out test split of the real table;
    here, like :class:`KWayScorer`, against the table the release was computed from.  NOT PRIVATE.
    """

    def __init__(self, codes: np.ndarray, sizes, ordered, *, queries: int = 1000, seed: int = 0):
        self.sizes = tuple(int(s) for s in sizes)
        self.codes = np.asarray(codes)
        d = len(self.sizes)
        rng = np.random.default_rng(seed)
        present = [np.unique(self.codes[:, j]) for j in range(d)]
        self.queries = []
        for _ in range(queries):
            cols = rng.choice(d, size=min(3, d), replace=False)
            conds = []
            for j in cols:
                if ordered[j]:
                    lo, hi = np.sort(rng.integers(0, self.sizes[j], size=2))  # codes: integer ends, inclusive
                    conds.append((int(j), float(lo), float(hi)))
                else:
                    v = float(rng.choice(present[j]))
                    conds.append((int(j), v, v))
            self.queries.append(conds)
        self.true_1 = [self._hist(self.codes, (j,)) for j in range(d)]
        self.pairs = list(itertools.combinations(range(d), 2))
        self.true_2 = [self._hist(self.codes, p) for p in self.pairs]
        self.true_q = self._answers(self.codes)

    def _hist(self, codes: np.ndarray, cols: tuple[int, ...]) -> np.ndarray:
        flat = np.ravel_multi_index(tuple(codes[:, j] for j in cols), tuple(self.sizes[j] for j in cols))
        h = np.bincount(flat, minlength=int(np.prod([self.sizes[j] for j in cols]))).astype(float)
        return h / max(h.sum(), 1.0)

    def _answers(self, codes: np.ndarray) -> np.ndarray:
        out = np.empty(len(self.queries))
        for i, conds in enumerate(self.queries):  # a loop over queries; each is a vector operation over rows
            hit = np.ones(codes.shape[0], dtype=bool)
            for j, lo, hi in conds:
                hit &= (codes[:, j] >= lo) & (codes[:, j] <= hi)
            out[i] = hit.mean() if codes.shape[0] else 0.0
        return out

    def score(self, synthetic: np.ndarray) -> dict[str, float]:
        syn = np.asarray(synthetic)
        tvd1 = [0.5 * np.abs(t - self._hist(syn, (j,))).sum() for j, t in enumerate(self.true_1)]
        tvd2 = [0.5 * np.abs(t - self._hist(syn, p)).sum() for p, t in zip(self.pairs, self.true_2, strict=True)]
        return {"tb_tvd_1way": float(np.mean(tvd1)), "tb_tvd_2way": float(np.mean(tvd2)) if tvd2 else 0.0,
                "tb_query_3way": float(np.mean(np.abs(self.true_q - self._answers(syn))))}
