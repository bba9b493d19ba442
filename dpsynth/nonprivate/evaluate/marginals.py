"""Per-k marginal errors, the full table's relative entropy and random range queries (the default sections)."""

from __future__ import annotations

import itertools
import math

import numpy as np

from dpsynth.nonprivate import metrics as M
from dpsynth.nonprivate.evaluate.counting import _baselines, _Counter
from dpsynth.nonprivate.evaluate.options import FULL_TABLE_MAX_CELLS, METHODS, RANGE_MAX_CELLS
from dpsynth.progress import Progress


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
