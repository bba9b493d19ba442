"""Table-level fidelity evaluation of synthetic data (``dpsynth evaluate``).

NOT PRIVATE: this module reads the *real* table, so everything it returns is
computed from private data without noise.  It is a tool for the data custodian
before publishing; its numbers must not be published with the release.

Both tables are encoded with the configuration's public domain
(:func:`dpsynth.data.discretize.encode`), so every metric is computed on the
schema's discretization.  For each k, the k-way marginals (all of them, or a
random sample) of the real table are compared with those of the synthetic rows
and of three baselines computed on the spot (with ``workload=True``: the
configuration's own marginals, range queries, conjunctions and linear queries,
rebuilt from its public seeds and files exactly as the release measured them):

* ``uniform``: the uniform distribution over the domain (DualQuery §7's
  "uniform data set", MWEM's starting point);
* ``zeros``: the all-zeros record set of DualQuery §7, generalised to
  non-binary columns as *every record takes code 0 in every column* (the
  first category, lowest bin or lower bound).  For 0/1 columns declared as
  ``categories: [0, 1]`` this is exactly DualQuery's data set;
* ``independent``: the product of the true 1-way marginals (the best a
  synthesizer that ignores correlations can do).

See docs/evaluate.md for the metrics and the output schema.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpsynth._version import __version__
from dpsynth.config import Config
from dpsynth.data.discretize import encode
from dpsynth.errors import DataError, UsageError
from dpsynth.nonprivate import metrics as M
from dpsynth.progress import Progress, no_progress
from dpsynth.workload.marginals import default_sanity_bound

__all__ = ["METHODS", "NOT_PRIVATE", "EvalOptions", "evaluate", "parse_released_marginals", "released_query_answers",
           "summary_tables"]

NOT_PRIVATE = (
    "NOT PRIVATE: this evaluation reads the real table; its numbers are not differentially private "
    "and must not be published"
)
METHODS = ("synthetic", "uniform", "zeros", "independent")
FULL_TABLE_MAX_CELLS = 2**20
"""Relative entropy of the full contingency table is reported for domains up to this many cells."""
RANGE_MAX_CELLS = 10_000_000
"""Range queries are answered on the joint table of the ordered columns up to this many cells."""


@dataclass(frozen=True, kw_only=True)
class EvalOptions:
    """What to evaluate.  ``sanity_bound=None`` means 10⁻⁴·n (iReduct §6)."""

    ks: tuple[int, ...] = (1, 2, 3)
    sample_marginals: int | None = None
    sanity_bound: float | None = None
    ranges: int = 1000
    target: str | None = None
    folds: int = 10
    max_cells: int = 10_000_000
    workload: bool = False
    release_per_fold: bool = False

    def __post_init__(self) -> None:
        if not self.ks or any(k < 1 for k in self.ks) or len(set(self.ks)) != len(self.ks):
            raise UsageError(f"--k must list distinct integers >= 1, got {','.join(map(str, self.ks))}")
        if self.sample_marginals is not None and self.sample_marginals < 1:
            raise UsageError(f"--sample-marginals must be >= 1, got {self.sample_marginals}")
        if self.sanity_bound is not None and not self.sanity_bound > 0:
            raise UsageError(f"--sanity-bound must be > 0, got {self.sanity_bound}")
        if self.ranges < 0:
            raise UsageError(f"--ranges must be >= 0, got {self.ranges}")
        if self.workload and self.sample_marginals is not None:
            raise UsageError("--workload scores the configuration's own marginals; drop --sample-marginals")
        if self.folds < 2:
            raise UsageError(f"folds must be >= 2, got {self.folds}")
        if self.release_per_fold and self.target is None:
            raise UsageError("--release-per-fold needs --target (the class column of the Naive Bayes protocol)")


# ------------------------------------------------------------------------- counting
class _Counter:
    """Marginal counts of an (n × d) code array: one combined code per marginal + ``np.bincount``.

    Combined codes of 1- and 2-attribute prefixes are cached, so the 3-way
    marginals (a, b, c), (a, b, d), … reuse the code of (a, b).
    """

    def __init__(self, codes: np.ndarray, sizes: tuple[int, ...]):
        self.codes = np.asfortranarray(codes, dtype=np.int64)
        self.sizes = sizes
        self.n = codes.shape[0]
        self._cache: dict[tuple[int, ...], np.ndarray] = {}

    def _flat(self, attrs: tuple[int, ...]) -> np.ndarray:
        if len(attrs) == 1:
            return self.codes[:, attrs[0]]
        hit = self._cache.get(attrs)
        if hit is not None:
            return hit
        out = self._flat(attrs[:-1]) * self.sizes[attrs[-1]] + self.codes[:, attrs[-1]]
        if len(attrs) <= 2:
            self._cache[attrs] = out
        return out

    def counts(self, attrs: tuple[int, ...]) -> np.ndarray:
        shape = tuple(self.sizes[a] for a in attrs)
        return np.bincount(self._flat(attrs), minlength=math.prod(shape)).reshape(shape)


def _baselines(attrs: tuple[int, ...], sizes, one_way: list[np.ndarray]) -> dict[str, np.ndarray]:
    """The three baselines on the marginal over ``attrs`` (unnormalised; every metric normalises).

    ``one_way`` holds the true 1-way *counts*: the independent baseline is
    their outer product, so on a 1-way marginal it equals the truth exactly.
    """
    shape = tuple(sizes[a] for a in attrs)
    zeros = np.zeros(shape)
    zeros[(0,) * len(attrs)] = 1.0
    return {
        "uniform": np.full(shape, 1.0 / math.prod(shape)),
        "zeros": zeros,
        "independent": functools.reduce(np.multiply.outer, [one_way[a] for a in attrs]),
    }


# ------------------------------------------------------------------------ encoding
def _encode(table: pd.DataFrame, config: Config, which: str) -> np.ndarray:
    missing = [c for c in config.domain.names if c not in set(map(str, table.columns))]
    if missing:
        raise DataError(
            f"schema mismatch: the {which} table has no column '{missing[0]}'"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
            + "; both tables must have every column of the config's schema"
        )
    try:
        return encode(table, config.domain, unknown=config.unknown)
    except DataError as exc:
        raise DataError(f"{which} table: {exc}") from None


# ------------------------------------------------------------------ per-k marginals
def _choose_marginals(d: int, k: int, sample: int | None, rng: np.random.Generator) -> tuple[list, int]:
    combos = list(itertools.combinations(range(d), k))
    if sample is not None and sample < len(combos):
        pick = np.sort(rng.choice(len(combos), size=sample, replace=False))
        return [combos[i] for i in pick], len(combos)
    return combos, len(combos)


def _marginal_row(true: np.ndarray, approx: dict[str, np.ndarray], n: int, delta: float) -> dict[str, tuple]:
    """Per method: (L1 = sum of cell errors, max cell error, cuboid error, mean relative error).

    The count-scale errors use |true − n·q| = n·|p − q| (p = true/n, q the
    normalised approximation): the same numbers as ``M.cuboid_error(true,
    M.rescale(a, n))`` and ``M.relative_errors(M.rescale(a, n), true, δ)``,
    but exactly 0 wherever the normalised cells agree.
    """
    floor = np.maximum(true.ravel(), delta)
    out = {}
    for method, a in approx.items():
        cells = M.cell_abs_errors(true, a)
        out[method] = (float(cells.sum()), float(cells.max()), float(n * cells.mean()), float((n * cells / floor).mean()))
    return out


def _evaluate_k(real: _Counter, synth: _Counter, k: int, ctx: dict, progress: Progress) -> dict:
    chosen, total = _choose_marginals(len(real.sizes), k, ctx["sample"], ctx["rng"])
    return _evaluate_marginals(real, synth, k, chosen, total, ctx, progress)


def _evaluate_marginals(real: _Counter, synth: _Counter, k: int, chosen: list, total: int, ctx: dict,
                        progress: Progress) -> dict:
    names, sizes = ctx["names"], real.sizes
    kept = [m for m in chosen if math.prod(sizes[a] for a in m) <= ctx["max_cells"]]
    rows = {m: [] for m in METHODS}
    cells_total = 0
    for i, attrs in enumerate(kept):  # loop over marginals; each is vectorized over rows and cells
        true = real.counts(attrs)
        approx = {"synthetic": synth.counts(attrs), **_baselines(attrs, sizes, ctx["one_way"])}
        for method, row in _marginal_row(true, approx, real.n, ctx["delta_of"](attrs)).items():
            rows[method].append(row)
        cells_total += true.size
        progress(f"{k}-way marginals", i + 1, len(kept))
    result = {"k": k, "marginals_total": total, "marginals_evaluated": len(kept),
              "marginals_skipped_too_large": len(chosen) - len(kept), "cells": cells_total, "metrics": {}}
    if not kept:
        return result | {"metrics": None, "per_marginal": None}
    for method in METHODS:
        r = np.array(rows[method])
        result["metrics"][method] = {
            "l1_mean": float(r[:, 0].mean()), "l1_max": float(r[:, 0].max()),
            "tv_mean": float(r[:, 0].mean() / 2), "tv_max": float(r[:, 0].max() / 2),
            "cell_error_mean": float(r[:, 0].sum() / cells_total), "cell_error_max": float(r[:, 1].max()),
            "cuboid_error_mean": float(r[:, 2].mean()), "cuboid_error_max": float(r[:, 2].max()),
            "relative_error": float(r[:, 3].mean()),
        }
    result["per_marginal"] = {
        "attrs": [[names[a] for a in m] for m in kept],
        "l1": {method: [float(x[0]) for x in rows[method]] for method in METHODS},
    }
    return result


# ------------------------------------------------------------ full-table relative entropy
def _full_table_re(real: _Counter, synth: _Counter, one_way) -> dict:
    """RE(real ‖ method) of the full contingency table (MWEM §3.2), for small domains only.

    Synthetic rows leave most cells of a large domain empty, which makes the
    divergence infinite (reported as ``null``); the smoothed value mixes every
    approximation with the uniform distribution at weight α = 1/(m + 1) (m
    synthetic rows: one extra record spread evenly over the domain).
    """
    sizes = real.sizes
    n_cells = math.prod(sizes)
    alpha = 1.0 / (synth.n + 1)
    out = {"cells": n_cells, "smoothing": alpha}
    if n_cells > FULL_TABLE_MAX_CELLS:
        return out | {"skipped": f"the domain has {n_cells} cells, more than {FULL_TABLE_MAX_CELLS}"}
    attrs = tuple(range(len(sizes)))
    true = real.counts(attrs)
    approx = {"synthetic": synth.counts(attrs), **_baselines(attrs, sizes, [o / real.n for o in one_way])}
    raw, smooth = {}, {}
    for method, a in approx.items():
        value = M.relative_entropy(true, a)
        raw[method] = None if math.isinf(value) else value
        smooth[method] = M.relative_entropy(true, a, smoothing=alpha)
    missing = float(true[approx["synthetic"] == 0].sum() / real.n)
    return out | {"relative_entropy": raw, "relative_entropy_smoothed": smooth,
                  "real_mass_on_empty_synthetic_cells": missing}


# --------------------------------------------------------------------- range queries
def _range_queries(real: _Counter, synth: _Counter, domain, count: int, rng, one_way) -> dict | None:
    if count == 0:
        return None
    ordered = [j for j, c in enumerate(domain.columns) if c.ordered]
    names = [domain.names[j] for j in ordered]
    if not ordered:
        return {"queries": count, "columns": [], "skipped": "the schema has no ordered (numeric or integer) column"}
    cells = math.prod(real.sizes[j] for j in ordered)
    if cells > RANGE_MAX_CELLS:
        return {"queries": count, "columns": names, "skipped": f"the ordered columns span {cells} cells"}
    attrs = tuple(ordered)
    inner = tuple(slice(0, domain.columns[j].size - int(domain.columns[j].missing)) for j in ordered)
    tables = {"synthetic": synth.counts(attrs), **_baselines(attrs, real.sizes, one_way)}
    true = real.counts(attrs).astype(float)[inner]
    lows, highs = M.random_ranges(true.shape, count, rng=rng)
    mse = {m: M.range_query_squared_error(true, M.rescale(t, real.n)[inner], lows, highs) for m, t in tables.items()}
    return {"queries": count, "columns": names, "squared_error_mean": mse,
            "rmse": {m: math.sqrt(v) for m, v in mse.items()}}


# ------------------------------------------------------------------ the release's workload
def _workload_marginals(real: _Counter, synth: _Counter, marginals, ctx: dict, progress: Progress) -> list[dict]:
    """The configured marginals (``workload.marginals``: the list, or the k-subsets sampled with the
    config's seed), one block per size k, in the order the release measured them."""
    out = []
    for k in sorted({len(m) for m in marginals}):
        chosen = [tuple(m) for m in marginals if len(m) == k]
        out.append(_evaluate_marginals(real, synth, k, chosen, len(chosen), ctx, progress))
    return out


def _workload_ranges(real: _Counter, synth: _Counter, sets, domain, one_way) -> dict | None:
    """The configured range queries (``workload.ranges``, MWEM §3.1), pooled over their column sets."""
    if not sets:
        return None
    errors: dict[str, list] = {m: [] for m in METHODS}
    for rq in sets:  # loop over column sets; each vectorized over its queries
        true = rq.answers(real.counts(rq.attrs))
        tables = {"synthetic": synth.counts(rq.attrs), **_baselines(rq.attrs, real.sizes, one_way)}
        for method, t in tables.items():
            errors[method].append(rq.answers(M.rescale(t, real.n)) - true)
    sq = {m: float(np.mean(np.concatenate(e) ** 2)) for m, e in errors.items()}
    columns = sorted({a for rq in sets for a in rq.attrs})
    return {"queries": int(sum(len(rq) for rq in sets)), "columns": [domain.names[a] for a in columns],
            "squared_error_mean": sq, "rmse": {m: math.sqrt(v) for m, v in sq.items()}}


def _workload_conjunctions(real_codes, synth_codes, queries, domain, one_way, n: int) -> dict:
    """Error of the configured conjunctions (DualQuery §7: answers as fractions in [0, 1]; a negated
    query has the same error).  Average and maximum absolute error per method."""
    from dpsynth.data.counts import ArrayCounts

    true = ArrayCounts(real_codes, domain).conjunction_counts(queries.attrs, queries.values) / max(n, 1)
    freq_bits = np.concatenate(one_way) / max(n, 1)  # true 1-way frequencies, indexed by bit
    bits = np.asarray(domain.offsets)[queries.attrs] + queries.values
    sizes = np.asarray(domain.sizes, dtype=float)
    answers = {
        "synthetic": (ArrayCounts(synth_codes, domain).conjunction_counts(queries.attrs, queries.values)
                      / max(len(synth_codes), 1)),
        "uniform": np.prod(1.0 / sizes[queries.attrs], axis=1),
        "zeros": np.all(queries.values == 0, axis=1).astype(float),
        "independent": np.prod(freq_bits[bits], axis=1),
    }
    err = {m: np.abs(a - true) for m, a in answers.items()}
    return {"queries": len(queries), "k": queries.k,
            "error_mean": {m: float(e.mean()) for m, e in err.items()},
            "error_max": {m: float(e.max()) for m, e in err.items()}}


def _workload_linear(real: _Counter, synth: _Counter, linear, domain, one_way) -> dict | None:
    """The configured linear queries (``workload.linear``, MWEM §2), answers as fractions q(B)/n in
    [−1, 1] (as the conjunctions): mean and maximum absolute error per method, pooled over supports."""
    if linear is None:
        return None
    errors: dict[str, list] = {m: [] for m in METHODS}
    for s in linear.sets:  # loop over supports; each vectorized over its queries
        true = s.answers(real.counts(s.attrs)) / max(real.n, 1)
        tables = {"synthetic": synth.counts(s.attrs), **_baselines(s.attrs, real.sizes, one_way)}
        for method, t in tables.items():
            errors[method].append(np.abs(s.answers(M.rescale(t, 1.0)) - true))
    err = {m: np.concatenate(e) for m, e in errors.items()}
    columns = sorted({a for s in linear.sets for a in s.attrs})
    return {"queries": len(linear), "columns": [domain.names[a] for a in columns],
            "error_mean": {m: float(e.mean()) for m, e in err.items()},
            "error_max": {m: float(e.max()) for m, e in err.items()}}


def _workload_parities(real_codes, synth_codes, queries, domain, one_way, n: int) -> dict:
    """Error of the configured parities (DualQuery §6-§7), answered exactly as the release measured them:
    the fraction of rows with an even number of the literals on (the 0/1 form of Definition 6.1; the ±1
    answer's error is twice this).  Average and maximum absolute error per method; baselines are the
    parity answer of independent bits, P(even) = (1 + Πⱼ (1 − 2pⱼ))/2, with pⱼ = 1/|column| (uniform) or
    the true 1-way frequency (independent), and the all-code-0 row (zeros)."""
    def answer(codes):
        rows, mult = np.unique(np.asarray(codes), axis=0, return_counts=True)  # distinct rows, weighted
        return queries.answers(rows, mult)

    true = answer(real_codes) if n else np.zeros(len(queries))
    freq_bits = np.concatenate(one_way) / max(n, 1)
    bits = np.asarray(domain.offsets)[queries.attrs] + queries.values
    sizes = np.asarray(domain.sizes, dtype=float)
    answers = {
        "synthetic": answer(synth_codes) if len(synth_codes) else np.zeros(len(queries)),
        "uniform": (1.0 + np.prod(1.0 - 2.0 / sizes[queries.attrs], axis=1)) / 2.0,
        "zeros": queries.satisfied(np.zeros(len(domain), dtype=np.int64)).astype(float),
        "independent": (1.0 + np.prod(1.0 - 2.0 * freq_bits[bits], axis=1)) / 2.0,
    }
    err = {m: np.abs(a - true) for m, a in answers.items()}
    return {"queries": len(queries), "k": queries.k,
            "answer": "fraction of rows with an even number of the literals on (Definition 6.1's +1)",
            "error_mean": {m: float(e.mean()) for m, e in err.items()},
            "error_max": {m: float(e.max()) for m, e in err.items()}}


def _workload_queries(real: _Counter, synth: _Counter, queries, deltas, one_way, released) -> dict:
    """Relative error |a − q|/max(q, δ_i) (iReduct Eq. 1, each query's own δ) of the configured counting
    queries (``workload.queries``): synthetic rows (rescaled to n), baselines, and the released noisy
    answers when the release report is given.  Mean and maximum over the queries, per method."""
    n = real.n
    true = queries.answers(real.counts(queries.attrs))
    sizes = [real.sizes[a] for a in queries.attrs]
    uniform = n * np.prod([m.sum(axis=1) / s for m, s in zip(queries.member, sizes)], axis=0)
    indep = n * np.prod([m @ (one_way[a] / max(n, 1)) for m, a in zip(queries.member, queries.attrs)], axis=0)
    zeros = n * np.prod([m[:, 0] for m in queries.member], axis=0).astype(float)
    answers = {"synthetic": queries.answers(synth.counts(queries.attrs)) * n / max(synth.n, 1),
               "uniform": uniform, "zeros": zeros, "independent": indep}
    if released is not None:
        answers["released"] = np.array([r["answer"] for r in released], dtype=float)
    err = {m: np.abs(a - true) / np.maximum(true, deltas) for m, a in answers.items()}
    return {"queries": len(queries), "sanity_bounds": {"min": float(deltas.min()), "max": float(deltas.max())},
            "relative_error_mean": {m: float(e.mean()) for m, e in err.items()},
            "relative_error_max": {m: float(e.max()) for m, e in err.items()}}


def released_query_answers(report: dict | None, config: Config) -> list[dict] | None:
    """The noisy answers of a release report (``algorithm.details.queries``) if they answer the config's queries."""
    try:
        rows = report["algorithm"]["details"]["queries"]
    except (KeyError, TypeError):
        return None
    wq = config.workload.queries
    if wq is None or [r.get("name") for r in rows] != list(wq.names):
        raise DataError("the release report's query answers do not match the config's workload.queries "
                        "(names or order differ); evaluate with the config the release used")
    return rows


def _configured_workload(config: Config):
    """(marginals, range query sets, conjunctions or None) exactly as the release built them (the typed
    workload is built from the config's own seeds when it is parsed)."""
    wl = config.workload
    return wl.marginals, list(wl.ranges), wl.conjunctions


# ----------------------------------------------------------------- released marginals
def parse_released_marginals(table: pd.DataFrame, domain) -> list[tuple[tuple[int, ...], np.ndarray]]:
    """Read the long-format noisy marginals written by ``release --marginals`` back into arrays.

    Columns: ``marginal_id``, ``marginal`` (column names joined by ``|``), one
    column per schema column (the cell's label, empty outside the marginal)
    and ``noisy_count``.  Every marginal must list each of its cells once.
    """
    need = ["marginal_id", "marginal", "noisy_count"]
    missing = [c for c in need if c not in table.columns]
    if missing:
        raise DataError(f"released marginals: missing column '{missing[0]}' (expected the output of release --marginals)")
    out = []
    for _, group in table.groupby("marginal_id", sort=True):  # loop over marginals
        names = str(group["marginal"].iloc[0]).split("|")
        unknown = [c for c in names if c not in domain.names or c not in group.columns]
        if unknown:
            raise DataError(f"released marginals: column '{unknown[0]}' is not in the config's schema")
        attrs = domain.indices(names)
        shape = domain.shape(attrs)
        idx = []
        for a in attrs:
            codes = pd.Index(domain.columns[a].labels()).get_indexer(group[domain.names[a]].astype("string"))
            if np.any(codes < 0):
                raise DataError(f"released marginals: column '{domain.names[a]}' has labels outside the schema")
            idx.append(np.asarray(codes, dtype=np.int64))
        flat = np.ravel_multi_index(idx, shape)
        if len(flat) != math.prod(shape) or len(np.unique(flat)) != len(flat):
            raise DataError(f"released marginals: marginal '{'|'.join(names)}' does not list each of its cells once")
        values = np.zeros(math.prod(shape))
        values[flat] = pd.to_numeric(group["noisy_count"], errors="coerce").to_numpy(dtype=float)
        if not np.all(np.isfinite(values)):
            raise DataError("released marginals: column 'noisy_count' has non-numeric values")
        out.append((attrs, values.reshape(shape)))
    return out


def _released_errors(real: _Counter, synth: _Counter, released, delta_of, one_way) -> dict:
    """Overall relative error (iReduct Def. 6, per-marginal δ) of the released marginals, next to the synthetic rows'."""
    true = [real.counts(attrs) for attrs, _ in released]
    delta = [delta_of(attrs) for attrs, _ in released]
    approx = {"released": [v for _, v in released]}
    for method in METHODS:
        approx[method] = []
    for attrs, _ in released:  # loop over marginals
        tables = {"synthetic": synth.counts(attrs), **_baselines(attrs, real.sizes, one_way)}
        for method, t in tables.items():
            approx[method].append(M.rescale(t, real.n))
    return {"marginals": len(released), "sanity_bound": delta_of(()),
            "overall_relative_error": {m: M.overall_relative_error(v, true, delta) for m, v in approx.items()}}


# ----------------------------------------------------------------------- classifier
def _fit_rows(codes: np.ndarray, target: int, features: list[int], sizes) -> tuple:
    y = codes[:, target]
    joints = [np.bincount(y * sizes[f] + codes[:, f], minlength=sizes[target] * sizes[f]).reshape(sizes[target], sizes[f])
              for f in features]  # loop over features
    return M.naive_bayes_fit(np.bincount(y, minlength=sizes[target]), joints)


def _fit_released(released, target: int, features: list[int], sizes) -> tuple[tuple | None, list[str]]:
    """Naive Bayes from noisy marginals: class counts and (class × feature) tables projected from them."""
    def project(attrs, values, keep):
        axes = tuple(i for i, a in enumerate(attrs) if a not in keep)
        kept = [a for a in attrs if a in keep]
        v = values.sum(axis=axes) if axes else values
        return np.transpose(v, [kept.index(a) for a in keep])

    with_target = [(a, v) for a, v in released if target in a]
    if not with_target:
        return None, []
    prior = np.mean([project(a, v, (target,)) for a, v in with_target], axis=0)
    joints, used, dropped = [], [], []
    for f in features:  # loop over features
        hit = next(((a, v) for a, v in with_target if f in a), None)
        if hit is None:
            dropped.append(f)
        else:
            joints.append(project(hit[0], hit[1], (target, f)))
            used.append(f)
    return (M.naive_bayes_fit(prior, joints), used), dropped


def _classifier(real: _Counter, synth: _Counter, target: int, names, released, folds: int, rng,
                per_fold=None) -> dict:
    """Naive Bayes accuracy on the real table (iReduct §6.5): from synthetic rows, released marginals, real rows.

    ``per_fold`` (config, rng, progress): also run the §6.5 protocol, one release per training fold
    (:func:`_release_per_fold`), on the same folds as the real table's cross-validation.
    """
    sizes, n = real.sizes, real.n
    features = [j for j in range(len(sizes)) if j != target]
    y, x = real.codes[:, target], real.codes[:, features]
    fold_acc = []
    splits = np.array_split(rng.permutation(n), folds)
    for test in splits:  # loop over the 10 folds
        train = np.ones(n, dtype=bool)
        train[test] = False
        model = _fit_rows(real.codes[train], target, features, sizes)
        fold_acc.append(M.accuracy(M.naive_bayes_predict(model, x[test]), y[test]))
    out = {
        "target": names[target],
        "majority_class_rate": float(np.bincount(y).max() / n),
        "real_cross_validated": float(np.mean(fold_acc)),
        "folds": folds,
        "synthetic": M.accuracy(M.naive_bayes_predict(_fit_rows(synth.codes, target, features, sizes), x), y),
        "released_marginals": None,
    }
    if released is not None:
        fitted, dropped = _fit_released(released, target, features, sizes)
        if fitted is not None:
            model, used = fitted
            pred = M.naive_bayes_predict(model, real.codes[:, used])
            out["released_marginals"] = {"accuracy": M.accuracy(pred, y),
                                         "features_without_marginal": [names[f] for f in dropped]}
    if per_fold is not None:
        out["release_per_fold"] = _release_per_fold(real.codes, target, splits, *per_fold)
    return out


def _release_per_fold(codes: np.ndarray, target: int, splits, config: Config, rng, progress: Progress) -> dict:
    """iReduct §6.5: for each fold, release the Naive Bayes marginals of the other folds with the configured
    algorithm and budget, then score (i) their overall relative error (Def. 6, δ = 10⁻⁴ of the training
    rows) against the training table and (ii) the accuracy on the held-out fold of Naive Bayes built from
    them (footnote 3 smoothing) and from the release's synthetic rows.  Averages over the folds."""
    import dataclasses

    from dpsynth.algorithms import get_algorithm
    from dpsynth.data.counts import ArrayCounts
    from dpsynth.errors import DpsynthError
    from dpsynth.pipeline import release_from_counts
    from dpsynth.workload.spec import Workload

    domain, sizes, n = config.domain, config.domain.sizes, len(codes)
    features = [j for j in range(len(sizes)) if j != target]
    pairs = tuple((target, f) for f in features)
    # A 1-way class marginal and one (class, feature) marginal per feature; conjunction-based algorithms
    # (DualQuery) need marginals of one size, and the 2-way ones already hold the class counts.
    conj = "conjunctions" in get_algorithm(config.algorithm).workload
    nb = pairs if conj else ((target,), *pairs)
    cfg = dataclasses.replace(config, workload=Workload(marginals=nb, given=frozenset({"marginals"})))
    errors, acc_released, acc_synth = [], [], []
    for i, (test, fold_rng) in enumerate(zip(splits, rng.spawn(len(splits)))):  # one release per fold
        train = np.ones(n, dtype=bool)
        train[test] = False
        counts = ArrayCounts(codes[train], domain)
        try:
            res = release_from_counts(counts, cfg, rng=fold_rng)
        except DpsynthError as exc:
            raise type(exc)(f"--release-per-fold: the configured release on the {len(nb)} Naive Bayes "
                            f"marginals failed: {exc}") from None
        x, y = codes[test][:, features], codes[test, target]
        synth = encode(res.synthetic, domain, unknown=config.unknown)
        acc_synth.append(M.accuracy(M.naive_bayes_predict(_fit_rows(synth, target, features, sizes), x), y))
        if res.marginals is not None:
            released = parse_released_marginals(res.marginals, domain)
            truth = [counts.marginal(a) for a, _ in released]
            errors.append(M.overall_relative_error([v for _, v in released], truth,
                                                   default_sanity_bound(int(train.sum()))))
            fitted, _ = _fit_released(released, target, features, sizes)
            if fitted is not None:
                model, used = fitted
                acc_released.append(M.accuracy(M.naive_bayes_predict(model, codes[test][:, used]), y))
        progress("release per fold", i + 1, len(splits))
    def mean(values: list) -> float | None:
        return float(np.mean(values)) if values else None

    return {"algorithm": config.algorithm, "epsilon": config.privacy.epsilon, "folds": len(splits),
            "marginals": [[domain.names[a] for a in m] for m in nb],
            "overall_relative_error": mean(errors), "released_marginals_accuracy": mean(acc_released),
            "synthetic_accuracy": mean(acc_synth),
            "per_fold": {"overall_relative_error": errors, "released_marginals_accuracy": acc_released,
                         "synthetic_accuracy": acc_synth}}


# ----------------------------------------------------------------------------- main
def evaluate(
    real_table: pd.DataFrame,
    synthetic_table: pd.DataFrame,
    config: Config,
    *,
    rng: np.random.Generator,
    options: EvalOptions = EvalOptions(),
    released: pd.DataFrame | None = None,
    released_queries: list[dict] | None = None,
    progress: Progress = no_progress,
) -> dict:
    """Compare a synthetic table (and optionally released noisy marginals) with the real table.

    Returns a JSON-ready dict (see docs/evaluate.md); key order is fixed and,
    for a fixed ``rng`` seed, so are all values.  NOT PRIVATE (module docstring).
    """
    domain = config.domain
    target = None
    if options.target is not None:
        if options.target not in domain.names:
            raise UsageError(f"--target '{options.target}' is not a column of the config's schema")
        target = domain.index(options.target)
    if not options.workload and max(options.ks) > len(domain):
        raise UsageError(f"--k {max(options.ks)} is larger than the number of schema columns ({len(domain)})")
    real_codes = _encode(real_table, config, "real")
    synth_codes = _encode(synthetic_table, config, "synthetic")
    released_m = parse_released_marginals(released, domain) if released is not None else None
    real, synth = _Counter(real_codes, domain.sizes), _Counter(synth_codes, domain.sizes)
    delta = _default_sanity_bound(config, options, real.n)
    own = dict(config.workload.sanity_bounds.per_marginal)

    def delta_of(attrs) -> float:  # per-marginal sanity bounds of the config (§2), else the default
        return own.get(tuple(sorted(attrs)), delta)
    one_way = [real.counts((a,)).astype(float) for a in range(len(domain))]
    sample_rng, range_rng, cv_rng, fold_rng = rng.spawn(4)
    ctx = {"names": domain.names, "sample": options.sample_marginals, "rng": sample_rng,
           "max_cells": options.max_cells, "delta_of": delta_of, "one_way": one_way}
    if options.workload:
        marginals, range_sets, conj = _configured_workload(config)
        ks = sorted({len(m) for m in marginals})
        blocks = _workload_marginals(real, synth, marginals, ctx, progress)
        ranges = _workload_ranges(real, synth, range_sets, domain, one_way)
        n_ranges = int(sum(len(rq) for rq in range_sets))
        conjunctions = (_workload_conjunctions(real_codes, synth_codes, conj, domain, one_way, real.n)
                        if conj is not None else None)
        par = config.workload.parities
        parities = _workload_parities(real_codes, synth_codes, par, domain, one_way, real.n) if par is not None else None
        linear = _workload_linear(real, synth, config.workload.linear, domain, one_way)
        wq = config.workload.queries
        queries = (_workload_queries(real, synth, wq, wq.bounds(delta), one_way, released_queries)
                   if wq is not None else None)
    else:
        ks, n_ranges = list(options.ks), options.ranges
        conjunctions = linear = parities = queries = None
        blocks = [_evaluate_k(real, synth, k, ctx, progress) for k in options.ks]
        ranges = _range_queries(real, synth, domain, options.ranges, range_rng, one_way)
    return {
        "warning": NOT_PRIVATE,
        "dpsynth_version": __version__,
        "rows": {"real": real.n, "synthetic": synth.n},
        "domain": {"columns": len(domain), "cells": math.prod(domain.sizes)},
        "settings": {"k": ks, "sample_marginals": options.sample_marginals,
                     "sanity_bound": delta, "ranges": n_ranges, "target": options.target,
                     "workload": options.workload},
        "methods": list(METHODS),
        "marginals": blocks,
        "relative_entropy": _full_table_re(real, synth, one_way),
        "range_queries": ranges,
        "conjunctions": conjunctions,
        "parities": parities,
        "linear_queries": linear,
        "queries": queries,
        "released_marginals": _released_errors(real, synth, released_m, delta_of, one_way) if released_m else None,
        "classifier": (_classifier(real, synth, target, domain.names, released_m, options.folds, cv_rng,
                                   (config, fold_rng, progress) if options.release_per_fold else None)
                       if target is not None else None),
    }


def _default_sanity_bound(config: Config, options: EvalOptions, n: int) -> float:
    """δ of marginals without their own bound: ``--sanity-bound``, else the config's
    ``workload.sanity_bounds.default``, else its algorithm's ``sanity_bound``, else 10⁻⁴·n (iReduct §6.1)."""
    for value in (options.sanity_bound, config.workload.sanity_bounds.default,
                  getattr(config.params, "sanity_bound", None)):
        if value is not None:
            return float(value)
    return default_sanity_bound(n)


# ------------------------------------------------------------------------ rendering
def summary_tables(result: dict) -> list:
    """Rich tables (and one-line notes) of an :func:`evaluate` result, in a fixed order (for the CLI)."""
    from rich.table import Table

    def fmt(x) -> str:
        return "—" if x is None else f"{x:.4g}"

    tables = []
    cols = [("l1_mean", "L1 mean"), ("l1_max", "L1 max"), ("cell_error_mean", "cell err mean"),
            ("cell_error_max", "cell err max"), ("cuboid_error_mean", "cuboid err mean"),
            ("cuboid_error_max", "cuboid err max"), ("relative_error", "rel. err")]
    for block in result["marginals"]:
        t = Table(title=f"{block['k']}-way marginals: {block['marginals_evaluated']} of {block['marginals_total']}"
                  + (f" ({block['marginals_skipped_too_large']} too large, skipped)" if block["marginals_skipped_too_large"] else ""),
                  title_justify="left")
        t.add_column("method")
        for _, label in cols:
            t.add_column(label, justify="right")
        for method in result["methods"]:
            m = (block["metrics"] or {}).get(method, {})
            t.add_row(method, *[fmt(m.get(key)) for key, _ in cols])
        tables.append(t)
    answers = bool(result.get("queries") and "released" in result["queries"]["relative_error_mean"])
    released = bool(result["released_marginals"]) or answers
    source = "the release report's query answers" if answers else "the --marginals file"
    extra = Table(title="other metrics" + (f" (the released column: {source})" if released else ""),
                  title_justify="left")
    extra.add_column("metric")
    for method in (("released",) if released else ()) + tuple(result["methods"]):
        extra.add_column(method, justify="right")
    if _extra_rows(extra, result):
        tables.append(extra)
    for label, part in (("relative entropy of the full table", result["relative_entropy"]),
                        ("range queries", result["range_queries"])):
        if part and "skipped" in part:
            tables.append(f"{label}: skipped ({part['skipped']})")
    clf = result["classifier"]
    if clf:
        t = Table(title=f"Naive Bayes predicting '{clf['target']}' on the real table", title_justify="left")
        t.add_column("built from")
        t.add_column("accuracy", justify="right")
        t.add_row("synthetic rows", fmt(clf["synthetic"]))
        if clf["released_marginals"]:
            t.add_row("released marginals", fmt(clf["released_marginals"]["accuracy"]))
        proto = clf.get("release_per_fold")
        if proto:
            t.add_row(f"released marginals, one {proto['algorithm']} release per training fold",
                      fmt(proto["released_marginals_accuracy"]))
            t.add_row(f"synthetic rows, one {proto['algorithm']} release per training fold",
                      fmt(proto["synthetic_accuracy"]))
        t.add_row(f"real table ({clf['folds']}-fold cross-validated)", fmt(clf["real_cross_validated"]))
        t.add_row("majority class (reference)", fmt(clf["majority_class_rate"]))
        tables.append(t)
    return tables


def _extra_rows(t, result: dict) -> int:
    methods = result["methods"]
    rows = 0

    with_released = bool(result["released_marginals"]) or bool(  # released marginals or query answers
        result.get("queries") and "released" in result["queries"]["relative_error_mean"])

    def row(label: str, values: dict, released=None) -> None:
        nonlocal rows
        first = ["—" if released is None else f"{released:.4g}"] if with_released else []
        t.add_row(label, *first, *["inf" if values.get(m) is None else f"{values[m]:.4g}" for m in methods])
        rows += 1

    re_ = result["relative_entropy"]
    if "skipped" not in re_:
        row("relative entropy, full table", re_["relative_entropy"])
        row(f"relative entropy, smoothed α={re_['smoothing']:.2g}", re_["relative_entropy_smoothed"])
    rq = result["range_queries"]
    if rq and "skipped" not in rq:
        row(f"range queries ({rq['queries']}), RMSE", rq["rmse"])
    conj = result["conjunctions"]
    if conj:
        row(f"conjunctions ({conj['queries']}, {conj['k']}-way), mean error", conj["error_mean"])
        row(f"conjunctions ({conj['queries']}, {conj['k']}-way), max error", conj["error_max"])
    par = result.get("parities")
    if par:
        row(f"parities ({par['queries']}, {par['k']}-wise), mean error", par["error_mean"])
        row(f"parities ({par['queries']}, {par['k']}-wise), max error", par["error_max"])
    lin = result.get("linear_queries")
    if lin:
        row(f"linear queries ({lin['queries']}), mean error", lin["error_mean"])
        row(f"linear queries ({lin['queries']}), max error", lin["error_max"])
    cq = result.get("queries")
    if cq:
        for stat in ("mean", "max"):
            values = cq[f"relative_error_{stat}"]
            row(f"counting queries ({cq['queries']}), {stat} relative error", values, values.get("released"))
    rel = result["released_marginals"]
    if rel:
        err = rel["overall_relative_error"]
        row(f"overall rel. err ({rel['marginals']} released marginals)", err, err["released"])
    return rows
