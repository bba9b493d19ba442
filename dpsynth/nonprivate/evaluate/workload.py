"""Errors on the release's own workload (``--workload``) and on released noisy marginals (``--marginals``)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpsynth.config import Config
from dpsynth.errors import DataError
from dpsynth.nonprivate import metrics as M
from dpsynth.nonprivate.evaluate.counting import _baselines, _Counter
from dpsynth.nonprivate.evaluate.marginals import _evaluate_marginals
from dpsynth.nonprivate.evaluate.options import METHODS
from dpsynth.progress import Progress


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
