"""A neutral binning of a raw table, chosen from the REAL table only, and marginal distances under it.

NOT PRIVATE: this reads the real data to judge synthetic rows; it is a benchmark tool, never part of a release.

The binning ignores every schema (hand-written or discovered), so two releases made with different schemas
are judged in the same bins. Per column of the real table (values read as text):

* **numeric** (every non-null value parses as a number) with at most ``max_values`` (20) distinct values:
  one bin per real value, holding the synthetic numbers nearest to it (boundaries half-way between
  consecutive real values; a number outside the real range is *invalid*).  Until session 10 only the exact
  value counted, so a release that decodes a bin of a 0–18 "years" column with an imputed 9.94 to 12.37
  scored that row as invalid (schooling's ``daded`` and ``momed``: TV 1.0 for every release);
* **numeric** otherwise: ``quantiles`` (10) quantile bins of the real column (edges = unique quantiles,
  the top bin closed), plus two bins the real data never occupies: *below the real minimum* and *above the
  real maximum*;
* **datetime** (not numeric, more than ``max_values`` distinct values, every non-null value parses as a date
  or timestamp): the same quantile bins on the time axis;
* **categorical** otherwise: the ``top`` (20) most frequent real values (ties by value) plus *other*.

Every column also has a *null* bin and an *invalid* bin (a synthetic value that is not a number in a
numeric column, not a date in a datetime column, or not one of the values of a per-value column). Synthetic
values that fall in bins the real data never occupies (out of range, invalid, an unseen category of a column
with few categories) therefore count fully as error. A column absent from the synthetic table is all
*invalid*.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations, pairwise

import numpy as np
import pandas as pd

QUANTILES = 10
MAX_VALUES = 20
TOP = 20


@dataclass(frozen=True)
class ColumnBins:
    """How one column is cut. ``labels`` name the codes 0..size-1 (the last two: null, invalid)."""

    name: str
    kind: str  # "values" | "quantiles" | "datetime" | "categorical"
    labels: tuple[str, ...]
    edges: np.ndarray | None = None  # quantiles/datetime: unique real quantiles (≥ 2)
    values: tuple = ()  # values: the real numbers; categorical: the top real strings

    @property
    def size(self) -> int:
        return len(self.labels)

    @property
    def null(self) -> int:
        return self.size - 2

    @property
    def invalid(self) -> int:
        return self.size - 1

    def encode(self, column: pd.Series | None, n: int) -> np.ndarray:
        """Codes of a column of raw values (text or numbers); ``None`` (an absent column) is all invalid."""
        if column is None:
            return np.full(n, self.invalid, dtype=np.int64)
        text = column.astype("string")
        null = text.isna().to_numpy() | (text.str.strip() == "").fillna(True).to_numpy()
        codes = np.full(len(text), self.invalid, dtype=np.int64)
        if self.kind == "categorical":
            lookup = pd.Index(self.values)
            pos = lookup.get_indexer(text.fillna("").to_numpy(dtype=object))
            codes = np.where(pos >= 0, pos, len(self.values))  # len(values) = other
        elif self.kind == "values":
            x = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)
            v = np.asarray(self.values, dtype=float)
            pos = np.searchsorted((v[:-1] + v[1:]) / 2, x, side="left")  # the nearest real value (ties: lower)
            inside = (x >= v[0]) & (x <= v[-1])  # False for NaN
            codes = np.where(inside, pos, self.invalid)
        else:
            x = _numbers(text, self.kind)
            ok = ~np.isnan(x)
            codes = np.where(ok, self._cut(np.where(ok, x, 0.0)), self.invalid)
        codes[null] = self.null
        return codes.astype(np.int64)

    def _cut(self, x: np.ndarray) -> np.ndarray:
        edges = self.edges
        nb = len(edges) - 1
        b = np.searchsorted(edges, x, side="right") - 1  # [e_k, e_k+1) -> k
        b = np.where(x == edges[-1], nb - 1, b)  # the top bin is closed
        return np.where(x < edges[0], nb, np.where(x > edges[-1], nb + 1, b))  # below min, above max


def _numbers(text: pd.Series, kind: str) -> np.ndarray:
    if kind == "datetime":
        t = pd.to_datetime(text, errors="coerce", utc=True, format="mixed")
        out = t.astype("int64").to_numpy(dtype=float)
        out[t.isna().to_numpy()] = np.nan
        return out
    return pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def bin_column(name: str, column: pd.Series, *, quantiles: int = QUANTILES, max_values: int = MAX_VALUES,
               top: int = TOP) -> ColumnBins:
    """The neutral bins of one real column (see the module docstring)."""
    text = column.astype("string")
    present = text[~(text.isna() | (text.str.strip() == "").fillna(True))]
    tail = ("<null>", "<invalid>")
    x = pd.to_numeric(present, errors="coerce")
    kind = None
    if len(present) and not x.isna().any():
        distinct = np.unique(x.to_numpy(dtype=float))
        if len(distinct) <= max_values:
            return ColumnBins(name, "values", tuple(_fmt(v) for v in distinct) + tail, values=tuple(distinct))
        kind, values = "quantiles", x.to_numpy(dtype=float)
    elif len(present) and present.nunique() > max_values and present.str.contains(r"\d").all():
        t = _numbers(present, "datetime")
        if not np.isnan(t).any():
            kind, values = "datetime", t
    if kind is not None:
        edges = np.unique(np.quantile(values, np.linspace(0, 1, quantiles + 1)))
        if len(edges) >= 2:
            cuts = tuple(f"[{_fmt(a)}, {_fmt(b)})" for a, b in pairwise(edges))
            return ColumnBins(name, kind, cuts + ("<below min>", "<above max>") + tail, edges=edges)
    counts = present.value_counts()
    order = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))[:top]
    values = tuple(str(v) for v, _ in order)
    return ColumnBins(name, "categorical", values + ("<other>",) + tail, values=values)


@dataclass(frozen=True)
class NeutralBinning:
    """The neutral bins of every real column, and the real table's codes under them."""

    columns: tuple[ColumnBins, ...]
    real: np.ndarray  # (n, d) int64 codes of the real rows

    @classmethod
    def from_real(cls, real: pd.DataFrame, **kw) -> NeutralBinning:
        cols = tuple(bin_column(str(c), real[c], **kw) for c in real.columns)
        codes = np.column_stack([b.encode(real[b.name], len(real)) for b in cols]) if cols else np.zeros((0, 0))
        return cls(cols, codes.astype(np.int64))

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(b.size for b in self.columns)

    def encode(self, synthetic: pd.DataFrame) -> np.ndarray:
        n = len(synthetic)
        return np.column_stack([b.encode(synthetic[b.name] if b.name in synthetic.columns else None, n)
                                for b in self.columns]).astype(np.int64)


def marginal(codes: np.ndarray, sizes: tuple[int, ...], cols: tuple[int, ...]) -> np.ndarray:
    """The normalised contingency table of ``cols`` (flattened); zeros for an empty table."""
    shape = tuple(sizes[c] for c in cols)
    flat = np.ravel_multi_index(tuple(codes[:, c] for c in cols), shape)
    counts = np.bincount(flat, minlength=int(np.prod(shape))).astype(float)
    total = counts.sum()
    return counts / total if total else counts


def _product(parts: list[np.ndarray]) -> np.ndarray:
    out = parts[0]
    for p in parts[1:]:
        out = np.multiply.outer(out, p).ravel()
    return out


def subsets(d: int, k: int, *, sample: int | None, seed: int = 0) -> list[tuple[int, ...]]:
    """All k-subsets of d columns, or ``sample`` of them drawn without replacement with a fixed seed."""
    every = list(combinations(range(d), k))
    if sample is None or len(every) <= sample:
        return every
    pick = np.random.default_rng(seed).choice(len(every), size=sample, replace=False)
    return [every[i] for i in sorted(pick)]


@dataclass
class Judge:
    """Scores synthetic tables against the real one: 1-way TV, mean 2-way and 3-way marginal L1."""

    binning: NeutralBinning
    pairs: list[tuple[int, ...]]
    triples: list[tuple[int, ...]]

    @classmethod
    def from_real(cls, real: pd.DataFrame, *, triples: int = 200, pairs: int | None = None, seed: int = 0,
                  **kw) -> Judge:
        b = NeutralBinning.from_real(real, **kw)
        d = len(b.columns)
        return cls(b, subsets(d, 2, sample=pairs, seed=seed), subsets(d, 3, sample=triples, seed=seed))

    def _real(self, cols):
        return marginal(self.binning.real, self.binning.sizes, cols)

    def _scores(self, other) -> dict[str, float]:
        """``other(cols) -> q`` for each marginal; 1-way TV = half the 1-way L1."""
        d = len(self.binning.columns)
        one = [0.5 * np.abs(self._real((c,)) - other((c,))).sum() for c in range(d)]
        out = {"tv_1way": float(np.mean(one)) if one else float("nan")}
        for key, subs in (("l1_2way", self.pairs), ("l1_3way", self.triples)):
            vals = [np.abs(self._real(s) - other(s)).sum() for s in subs]
            out[key] = float(np.mean(vals)) if vals else float("nan")
        return out

    def score(self, synthetic: pd.DataFrame) -> dict[str, float]:
        codes = self.binning.encode(synthetic)
        scores = self._scores(lambda cols: marginal(codes, self.binning.sizes, cols))
        invalid = np.array([b.invalid for b in self.binning.columns])
        scores["invalid_share"] = float((codes == invalid).mean()) if codes.size else float("nan")
        scores["missing_columns"] = sum(b.name not in synthetic.columns for b in self.binning.columns)
        tv = [0.5 * np.abs(self._real((c,)) - marginal(codes, self.binning.sizes, (c,))).sum()
              for c in range(len(self.binning.columns))]
        worst = np.argsort(tv)[::-1][:3]
        scores["worst_1way"] = [[self.binning.columns[c].name, round(float(tv[c]), 3)] for c in worst]
        return scores

    def independence(self) -> dict[str, float]:
        """The product of the true 1-way marginals (perfect 1-way marginals, no dependence)."""
        ones = [self._real((c,)) for c in range(len(self.binning.columns))]
        return self._scores(lambda cols: _product([ones[c] for c in cols]))

    def uniform(self) -> dict[str, float]:
        """Uniform over the bins the real table occupies, independently per column."""
        ones = [self._real((c,)) for c in range(len(self.binning.columns))]
        flat = [(p > 0) / max((p > 0).sum(), 1) for p in ones]
        return self._scores(lambda cols: _product([flat[c] for c in cols]))
