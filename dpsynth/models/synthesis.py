"""Synthetic rows from released noisy marginals (post-processing, no privacy cost).

iReduct (and its baselines) release noisy marginals; the paper leaves turning
them into records as future work.  We fit a product-of-factors distribution
(:class:`dpsynth.models.factored.FactoredModel`, shared with MWEM) to the noisy
marginals by multiplicative-weights passes (:func:`dpsynth.models.factored.fit_marginals`,
MWEM §2.3.2 / §3.3 update), then draw rows from it.

Method:

1. Order the marginals by relative noise, scale·|M|/n ascending (the most
   informative first), because ``fit_marginals`` merges factors in the given
   order until a factor would exceed ``max_factor_cells``; a marginal that
   cannot be merged is still fitted through its projections onto the existing
   attribute groups (its lower-order information counts).
2. ``method="mw"`` (default): ``fit_marginals`` starts from the average noisy
   1-way projections and runs ``passes`` multiplicative-weights passes at
   MWEM's learning rate, A ∝ A·exp((m − A)/(2n)) per cell.  Noisy counts are
   used as they are (negative ones push mass down).
   ``method="ipf"``: one MW pass for the structure, then ``passes`` passes of
   iterative proportional fitting (rescale each factor by target/current per
   cell; targets clipped at 0, normalised and mixed with weight 10⁻³ with the
   uniform distribution because IPF cannot revive a zero).
3. Sample ``rows`` independent records from the fitted model.

Why MW by default (Adult, all 105 2-way marginals released by iReduct, mean
total variation distance of the synthetic rows' marginals to the truth):
ε = 1: MW 10 passes 0.087, IPF 10 passes 0.167 (the clipped noisy marginals
themselves: 0.118); ε = 0.1: MW 0.193, IPF 0.595 (noisy: 0.473).  IPF fits each
noisy marginal exactly in turn and overfits the noise; MW's small steps
average the inconsistent marginals and denoise.  On exact marginals IPF is
better (TV 0.050 vs 0.073 for MW with 10 passes): use it for noise-free or
nearly noise-free input.

Error added (docs/ireduct.md, benchmark figures): the model cannot represent
the correlations between attribute groups it could not merge, MW passes stop
before convergence (a bias towards the 1-way product), and sampling adds
multinomial noise (relative standard error about 1/sqrt(n·p) per cell).  The
benchmark reports the overall relative error of the synthetic rows'
marginals next to that of the released marginals, and of rows synthesised
from the exact marginals (synthesis error alone).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpsynth.models.factored import DEFAULT_MAX_FACTOR_CELLS, FactoredModel, fit_marginals

__all__ = ["fit", "fit_model", "ipf_pass", "synthesis_order", "synthesize"]

_MIX = 1e-3
"""Weight of the uniform distribution mixed into every IPF target."""

_METHODS = {
    "mw": "multiplicative-weights passes at the MWEM learning rate",
    "ipf": "iterative proportional fitting",
}


def synthesis_order(marginals: Sequence, total: float) -> list[int]:
    """Indices of ``marginals`` by relative noise scale·cells/total, ascending (stable)."""
    keys = [float(m.scale) * float(np.size(m.values)) / max(float(total), 1.0) for m in marginals]
    return sorted(range(len(marginals)), key=lambda i: keys[i])


def fit_model(
    domain,
    marginals: Sequence,
    *,
    total: float,
    passes: int = 10,
    max_factor_cells: int = DEFAULT_MAX_FACTOR_CELLS,
    method: str = "mw",
) -> tuple[FactoredModel, dict, list[str]]:
    """The model of steps 1–2, with ``(model, details, warnings)``; ``details`` holds public facts
    about the fit (groups, unmerged marginals) for the report.  No marginals: the uniform model."""
    marginals = list(marginals)
    warnings: list[str] = []
    covered = {a for m in marginals for a in m.attrs}
    uncovered = [domain.names[a] for a in range(len(domain)) if a not in covered]
    if uncovered:
        warnings.append(
            "no workload marginal covers column(s) " + ", ".join(uncovered) + "; they are sampled uniformly"
        )
    if not marginals:
        return FactoredModel(domain.sizes, max(float(total), 1.0)), {"method": "uniform (no marginals)"}, warnings
    model = fit(domain, marginals, total=total, passes=passes, max_factor_cells=max_factor_cells, method=method)
    details = {
        "method": f"product-of-factors model fitted to the noisy marginals ({_METHODS[method]}), then sampling",
        "passes": int(passes),
        "max_factor_cells": int(max_factor_cells),
        "factor_groups": [[domain.names[a] for a in g] for g in model.groups if len(g) > 1],
        "marginals_fitted_by_projection": len(model.unmerged),
    }
    if model.unmerged:
        warnings.append(
            f"{len(model.unmerged)} of {len(marginals)} marginals could not be merged into the model "
            f"(max_factor_cells={max_factor_cells}); they are fitted through their lower-order projections"
        )
    return model, details, warnings


def synthesize(
    domain,
    marginals: Sequence,
    rows: int,
    *,
    total: float,
    rng: np.random.Generator,
    passes: int = 10,
    max_factor_cells: int = DEFAULT_MAX_FACTOR_CELLS,
    method: str = "mw",
) -> tuple[np.ndarray, dict, list[str]]:
    """Rows (codes) drawn from the model of :func:`fit_model`: ``(codes, details, warnings)``."""
    model, details, warnings = fit_model(domain, marginals, total=total, passes=passes,
                                         max_factor_cells=max_factor_cells, method=method)
    return model.sample(int(rows), rng=rng), details, warnings


def _targets(model: FactoredModel, marginals: Sequence, unmerged: set[int]) -> list[tuple[tuple[int, ...], np.ndarray]]:
    """(attrs, values) pairs to rake: whole marginals, or projections of unmerged ones onto the model's groups."""
    group_of = {a: g for g in model.groups for a in g}
    out = []
    for idx, m in enumerate(marginals):
        attrs = tuple(int(a) for a in m.attrs)
        values = np.asarray(m.values, dtype=float).reshape(tuple(model.sizes[a] for a in attrs))
        if idx not in unmerged:
            out.append((attrs, values))
            continue
        parts: dict[tuple[int, ...], list[int]] = {}
        for pos, a in enumerate(attrs):
            parts.setdefault(group_of[a], []).append(pos)
        for positions in parts.values():
            other = tuple(i for i in range(len(attrs)) if i not in positions)
            out.append((tuple(attrs[i] for i in positions), values.sum(axis=other)))
    return out


def ipf_pass(model: FactoredModel, targets) -> None:
    """One IPF pass: for each (attrs, noisy counts), rescale the factor holding attrs to match them."""
    for attrs, values in targets:
        fi = model.merge(attrs)  # no-op: the attributes already share a factor
        f = model.factors[fi]
        local = tuple(a for a in f.attrs if a in set(attrs))
        target = np.clip(values.transpose([attrs.index(a) for a in local]), 0.0, None)
        total = target.sum()
        target = (1 - _MIX) * target / total + _MIX / target.size if total > 0 else np.full(target.shape, 1 / target.size)
        current = f.marginal(local)
        ratio = np.where(current > 0, target / np.maximum(current, 1e-300), 0.0)
        shape = [model.sizes[a] if a in set(local) else 1 for a in f.attrs]
        f.probs *= ratio.reshape(shape)
        f.probs /= f.probs.sum()
        f.changed()


def fit(domain, marginals: Sequence, *, total: float, passes: int = 10,
        max_factor_cells: int = DEFAULT_MAX_FACTOR_CELLS, method: str = "mw") -> FactoredModel:
    """The fitted :class:`FactoredModel` (steps 1–2 of the module docstring)."""
    if method not in _METHODS:
        raise ValueError(f"method must be 'mw' or 'ipf', got {method!r}")
    marginals = list(marginals)
    ordered = [marginals[i] for i in synthesis_order(marginals, total)]
    model = fit_marginals(domain, ordered, total=max(float(total), 1.0), passes=passes if method == "mw" else 1,
                          max_factor_cells=max_factor_cells)
    if method == "mw":
        return model
    targets = _targets(model, ordered, set(model.unmerged))
    for _ in range(int(passes)):
        ipf_pass(model, targets)
    return model
