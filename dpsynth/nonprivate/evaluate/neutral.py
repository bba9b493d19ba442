"""The neutral view: both tables binned from the REAL table alone, independent of the release's schema.

A release whose schema is coarse, or was discovered with values lost to
``__other__`` or clamped bounds, can look excellent in its own bins: every
synthetic row lands in the one bin that holds the real mass.  This view bins
the raw values its own way (NOT PRIVATE: the bins are read from the real
table), so such a release is judged on what the rows actually contain:

* a column whose non-null real values are (almost all) numbers: integers with
  at most :data:`FEW_VALUES` distinct values get one bin per value; integer
  codes (:data:`CODE_VALUES`) one bin for each of their most frequent values; other
  numbers get right-closed bins at the distinct deciles of the real column
  (a heavy tie such as 92 % zeros keeps its own bin), values beyond the real
  range falling into the end bins;
* any other column: its :data:`TOP_VALUES` most frequent real values;
* every column: one ``other`` bin (an unseen category, an integer value the
  real column does not have, text in a numeric column) and one ``null`` bin.

The marginal L1 distances (Σ|p − q|, 0 equal … 2 disjoint: the ``l1`` of the
release-bin sections) are reported for the synthetic rows and two baselines:
``independent`` (the product of the real 1-way marginals in these bins) and
``uniform`` (uniform over the bins the real column occupies).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpsynth.data.discretize import cell_labels, float_labels
from dpsynth.data.schema import DatetimeColumn, Domain
from dpsynth.data.timestamps import instants
from dpsynth.nonprivate import metrics as M
from dpsynth.nonprivate.evaluate.counting import _Counter
from dpsynth.nonprivate.evaluate.marginals import _choose_marginals
from dpsynth.progress import Progress

TOP_VALUES = 20
"""Text columns keep this many most frequent real values; the rest share the ``other`` bin."""
FEW_VALUES = 20
"""Integer columns with at most this many distinct real values get one bin per value."""
CODE_VALUES = 200
"""Integer columns with more than :data:`FEW_VALUES` but at most this many distinct real values, which fill at most
half the integers between their extremes and lie on no lattice (their differences share no factor), are codes (ZIP codes, station or product numbers): they keep their
:data:`TOP_VALUES` most frequent real values, one bin each, and an integer the real column never has (an invented
code, which decile bins would hide) is ``other``."""
QUANTILE_BINS = 10
"""Other numeric columns are cut at the distinct (1/10, …, 9/10) quantiles of the real column."""
CHECK_BINS = (5, 20)
"""The verdict's k-way L1 is recomputed with numbers cut at this many quantiles instead (:func:`verdict`): rows
are called better than the baseline only when every one of these neutral binnings agrees.  On the held-out
table migraine (session 9, zero-config seed 0) the decile view said 1.10x better, 20 quantiles 1.08x worse and
the benchmark's hand-schema bins 1.09x worse: a claim that one neutral binning reverses is no claim."""
NUMERIC_SHARE = 0.95
"""A column is numeric when at least this share of its non-null real values parse as numbers."""
NEUTRAL_METHODS = ("synthetic", "independent", "uniform")


@dataclass(frozen=True)
class NeutralColumn:
    """The neutral bins of one column: value bins, then ``other``, then ``null``."""

    name: str
    kind: str  # "numeric", "integer" (one bin per value) or "categorical"
    labels: tuple[str, ...]
    edges: np.ndarray | None = None  # numeric: right-closed inner edges (x ≤ edges[0] is bin 0)
    values: np.ndarray | None = None  # integer: the distinct real values (sorted); categorical: top labels

    @property
    def size(self) -> int:
        return len(self.labels)

    def codes(self, col: pd.Series) -> np.ndarray:
        """The bin of every cell (vectorized): ``size − 2`` is other, ``size − 1`` is null."""
        other, null = self.size - 2, self.size - 1
        isnull = col.isna().to_numpy()
        if self.kind == "categorical":
            idx = pd.Index(self.values, dtype=object).get_indexer(cell_labels(col))
            out = np.where(idx < 0, other, idx).astype(np.int64)
        else:
            x = numbers(col)
            parsed = ~np.isnan(x)
            if self.kind == "numeric":
                out = np.where(parsed, np.searchsorted(self.edges, x, side="left"), other).astype(np.int64)
            else:
                pos = np.minimum(np.searchsorted(self.values, x), len(self.values) - 1)
                out = np.where(parsed & (self.values[pos] == x), pos, other).astype(np.int64)
        out[isnull] = null
        return out


def numbers(col: pd.Series) -> np.ndarray:
    """The cells as floats; NaN for nulls, booleans and cells that are not numbers (vectorized)."""
    if pd.api.types.is_bool_dtype(col):
        return np.full(len(col), np.nan)
    if pd.api.types.is_numeric_dtype(col):
        return col.to_numpy(dtype=float, na_value=np.nan)
    codes, uniques = pd.factorize(col)  # parse each distinct cell once
    parsed = pd.to_numeric(pd.Series(uniques, dtype="string").str.strip(), errors="coerce")
    values = np.append(parsed.to_numpy(dtype=float, na_value=np.nan), np.nan)
    return values[codes]  # code -1 (null) picks the appended NaN


def with_instants(table: pd.DataFrame, domain: Domain) -> pd.DataFrame:
    """The table with every datetime schema column's parsed cells as float seconds since the epoch (so the
    neutral view bins them as numbers); cells that do not parse keep their text (the ``other`` bin)."""
    dated = [c for c in domain.columns if isinstance(c, DatetimeColumn) and c.name in table.columns]
    if not dated:
        return table
    out = table.copy()
    for spec in dated:  # loop over columns; each vectorized
        col = table[spec.name]
        seconds = instants(col, spec.format)
        text = np.isnan(seconds) & col.notna().to_numpy()
        values = pd.Series(seconds, index=col.index, dtype=object if text.any() else float)
        values[text] = col[text]
        out[spec.name] = values
    return out


def neutral_column(real: pd.Series, name: str, bins: int = QUANTILE_BINS) -> NeutralColumn:
    """Bins of one column chosen from its real values alone (module docstring); ``bins``: quantile bins of
    numbers that are neither few integers nor codes."""
    nonnull = real.notna().to_numpy()
    x = numbers(real)
    parsed = ~np.isnan(x)
    if nonnull.any() and parsed.sum() >= NUMERIC_SHARE * nonnull.sum():
        v = x[parsed]
        distinct = np.unique(v)
        integral = bool(np.all(distinct == np.round(distinct)))
        if len(distinct) <= FEW_VALUES and integral:
            return NeutralColumn(name, "integer", (*float_labels(distinct), "other", "null"), values=distinct)
        if integral and 2 < len(distinct) <= CODE_VALUES and 2 * len(distinct) <= distinct[-1] - distinct[0] + 1 \
                and np.gcd.reduce(np.diff(distinct).astype(np.int64)) == 1:  # not a lattice (amounts in 100s)
            _, first, counts = np.unique(v, return_index=True, return_counts=True)
            top = np.sort(distinct[np.lexsort((first, -counts))[:TOP_VALUES]])  # ties: first seen
            return NeutralColumn(name, "integer", (*float_labels(top), "other", "null"), values=top)
        qs = np.arange(1, bins) / bins
        edges = np.unique(np.quantile(v, qs, method="inverted_cdf"))  # real values, so ties keep a bin
        shown = [f"{e:.6g}" for e in edges]
        labels = [f"<= {shown[0]}", *[f"({a}, {b}]" for a, b in itertools.pairwise(shown)], f"> {shown[-1]}"]
        return NeutralColumn(name, "numeric", (*labels, "other", "null"), edges=edges)
    labels = pd.Series(cell_labels(real[nonnull]), dtype=object)
    counts = labels.value_counts(sort=False)
    order = sorted(zip(-counts.to_numpy(), counts.index.astype(str)))[:TOP_VALUES]  # ties: by label
    top = np.array([label for _, label in order], dtype=object)
    return NeutralColumn(name, "categorical", (*top, "other", "null"), values=top)


def neutral_codes(real: pd.DataFrame, synth: pd.DataFrame, names,
                  bins: int = QUANTILE_BINS) -> tuple[list[NeutralColumn], np.ndarray, np.ndarray]:
    """The neutral columns and both tables' (n × d) codes (``bins``: :func:`neutral_column`)."""
    cols = [neutral_column(real[name], name, bins) for name in names]  # loop over columns
    real_codes = np.column_stack([c.codes(real[c.name]) for c in cols])
    synth_codes = np.column_stack([c.codes(synth[c.name]) for c in cols])
    return cols, real_codes, synth_codes


def neutral_marginals(real: _Counter, synth: _Counter, names, ks, sample, rng, max_cells: int,
                      progress: Progress) -> list[dict]:
    """Per k: mean and max L1 (and TV = L1/2) of the synthetic rows and the two baselines."""
    one_way = [real.counts((a,)).astype(float) for a in range(len(names))]
    support = [(o > 0).astype(float) for o in one_way]
    blocks = []
    for k in ks:
        chosen, total = _choose_marginals(len(names), k, sample, rng)
        kept = [m for m in chosen if math.prod(real.sizes[a] for a in m) <= max_cells]
        l1 = {m: [] for m in NEUTRAL_METHODS}
        for i, attrs in enumerate(kept):  # loop over marginals; each vectorized over rows and cells
            true = real.counts(attrs)
            approx = {"synthetic": synth.counts(attrs),
                      "independent": functools.reduce(np.multiply.outer, [one_way[a] for a in attrs]),
                      "uniform": functools.reduce(np.multiply.outer, [support[a] for a in attrs])}
            for method, a in approx.items():
                l1[method].append(float(M.cell_abs_errors(true, a).sum()))
            progress(f"{k}-way marginals, neutral bins", i + 1, len(kept))
        metrics = {m: {"l1_mean": float(np.mean(v)), "l1_max": float(np.max(v)), "tv_mean": float(np.mean(v) / 2)}
                   for m, v in l1.items()} if kept else None
        blocks.append({"k": k, "marginals_total": total, "marginals_evaluated": len(kept),
                       "marginals_skipped_too_large": len(chosen) - len(kept), "metrics": metrics})
    return blocks


def verdict_k(blocks: list[dict]) -> int | None:
    """The k the verdict reads: the smallest scored k ≥ 2, else the first scored k."""
    scored = [b for b in blocks if b["metrics"]]
    pick = next((b for b in scored if b["k"] >= 2), scored[0] if scored else None)
    return None if pick is None else pick["k"]


def verdict(blocks: list[dict], release_blocks: list[dict], checks: dict[int, dict] | None = None) -> dict:
    """The headline, from the neutral view only: synthetic L1 against the independence baseline at the
    smallest k ≥ 2 (1-way: against uniform); the release-bin figure is shown next to it, never instead.
    ``checks``: the same k's block with numbers in other quantile bins (:data:`CHECK_BINS` → block): the rows are
    called better only when every binning agrees."""
    k = verdict_k(blocks)
    if k is None:
        return {"k": None, "baseline": None, "synthetic_l1": None, "baseline_l1": None, "ratio": None,
                "better_than_baseline": None, "release_bins_ratio": None, "binning_checks": [],
                "text": "no marginal could be scored in the neutral bins"}
    pick = next(b for b in blocks if b["k"] == k)
    baseline = "independent" if k >= 2 else "uniform"
    syn, base = pick["metrics"]["synthetic"]["l1_mean"], pick["metrics"][baseline]["l1_mean"]
    ratio = _ratio(syn, base)
    better = syn < base
    own = next((b for b in release_blocks if b["k"] == k and b.get("metrics")), None)
    own_ratio = (_ratio(own["metrics"]["synthetic"]["l1_mean"], own["metrics"][baseline]["l1_mean"])
                 if own else None)
    checked = [{"quantile_bins": q, "synthetic_l1": b["metrics"]["synthetic"]["l1_mean"],
                "baseline_l1": b["metrics"][baseline]["l1_mean"],
                "ratio": _ratio(b["metrics"]["synthetic"]["l1_mean"], b["metrics"][baseline]["l1_mean"])}
               for q, b in sorted((checks or {}).items()) if b.get("metrics")]
    reversed_by = [c for c in checked if not c["synthetic_l1"] < c["baseline_l1"]]
    where = f"{k}-way L1 in neutral bins (from the real table), mean {syn:.4g} vs {base:.4g} for the {baseline} baseline"
    if better and reversed_by:
        worst = max(reversed_by, key=lambda c: c["ratio"] if c["ratio"] is not None else math.inf)
        text = (f"synthetic rows are NOT clearly better than the {baseline} baseline: {where} "
                f"({_times(ratio, True)} in decile bins), but with numbers in {worst['quantile_bins']} quantile bins "
                f"{_times(worst['ratio'], False)}: another neutral binning reverses the claim")
        better = False
    elif better:
        text = f"synthetic rows beat the {baseline} baseline: {where} ({_times(ratio, better)})"
    else:
        text = f"synthetic rows are WORSE than the {baseline} baseline: {where} ({_times(ratio, better)})"
    if own_ratio is not None and (own_ratio < 1) != better:
        text += (f"; in the release's own bins they look {_times(own_ratio, own_ratio < 1)}, a view that hides "
                 "what the schema merged, clamped or lost")
    return {"k": k, "baseline": baseline, "synthetic_l1": syn, "baseline_l1": base, "ratio": ratio,
            "better_than_baseline": better, "release_bins_ratio": own_ratio, "binning_checks": checked, "text": text}


def _ratio(a: float, b: float) -> float | None:
    return a / b if b > 0 else (1.0 if a == 0 else None)


def _times(ratio: float | None, better: bool) -> str:
    if ratio is None:
        return "the baseline is exact"
    if ratio == 0:
        return "exact (L1 0)"
    return f"{1 / ratio:.2f}x better" if better else f"{ratio:.2f}x worse"
