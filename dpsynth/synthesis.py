"""Synthetic rows from released noisy marginals (post-processing, no privacy cost).

iReduct (and its baselines) release noisy marginals; the paper leaves turning
them into records as future work.  We fit a product-of-factors distribution
(:class:`dpsynth.factored.FactoredModel`, shared with MWEM) to the noisy
marginals by multiplicative-weights passes (:func:`dpsynth.factored.fit_marginals`,
MWEM §2.3.2 / §3.3 update), then draw rows from it.

Method:

1. Order the marginals by relative noise, scale·|M|/n ascending (the most
   informative first), because ``fit_marginals`` merges factors in the given
   order until a factor would exceed ``max_factor_cells``; a marginal that
   cannot be merged is still fitted through its projections onto the existing
   attribute groups (its lower-order information counts).
2. Build the model with ``fit_marginals`` (structure, start from the average
   noisy 1-way projections, one MW pass at the MWEM learning rate), then run
   ``passes`` passes of iterative proportional fitting (IPF, raking): for each
   marginal, multiply the factor holding it by target/current cell by cell.
   MWEM's learning rate exp((m − A)/(2n)) is far too slow to fit fixed
   marginals (one 3×4 marginal: L1 distance 0.43 after 10 MW passes, 0.03
   after 200), while one IPF pass fits a single marginal exactly.  The
   targets are the noisy counts clipped at 0 and normalised, mixed with
   weight 10⁻³ with the uniform distribution so that no cell is fixed at 0
   (IPF cannot revive a zero).  Clipping biases small cells upwards.
3. Sample ``rows`` independent records from the fitted model.

Error added (docs/ireduct.md, benchmark figures): the model cannot represent
the correlations between attribute groups it could not merge, IPF on noisy
(inconsistent) marginals settles between them, clipping adds a positive bias
to small cells, and sampling adds multinomial noise (relative standard error
about 1/sqrt(n·p) per cell).  The benchmark reports the overall relative error
of the synthetic rows' marginals next to that of the released marginals, and
of rows synthesised from the exact marginals (synthesis error alone).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .factored import DEFAULT_MAX_FACTOR_CELLS, FactoredModel, fit_marginals

__all__ = ["fit", "ipf_pass", "synthesis_order", "synthesize"]

_MIX = 1e-3
"""Weight of the uniform distribution mixed into every IPF target."""


def synthesis_order(marginals: Sequence, total: float) -> list[int]:
    """Indices of ``marginals`` by relative noise scale·cells/total, ascending (stable)."""
    keys = [float(m.scale) * float(np.size(m.values)) / max(float(total), 1.0) for m in marginals]
    return sorted(range(len(marginals)), key=lambda i: keys[i])


def synthesize(
    domain,
    marginals: Sequence,
    rows: int,
    *,
    total: float,
    rng: np.random.Generator,
    passes: int = 10,
    max_factor_cells: int = DEFAULT_MAX_FACTOR_CELLS,
) -> tuple[np.ndarray, dict, list[str]]:
    """Rows (codes) drawn from a factored model fitted to the noisy ``marginals``.

    Returns ``(codes, details, warnings)``; ``details`` holds public facts
    about the fit (groups, unmerged marginals) for the report.
    """
    marginals = list(marginals)
    warnings: list[str] = []
    covered = {a for m in marginals for a in m.attrs}
    uncovered = [domain.names[a] for a in range(len(domain)) if a not in covered]
    if uncovered:
        warnings.append(
            "no workload marginal covers column(s) " + ", ".join(uncovered) + "; they are sampled uniformly"
        )
    if not marginals:
        sizes = np.asarray(domain.sizes)
        codes = (rng.random((int(rows), len(sizes))) * sizes).astype(np.int64)
        return codes, {"method": "uniform (no marginals)"}, warnings
    model = fit(domain, marginals, total=total, passes=passes, max_factor_cells=max_factor_cells)
    codes = model.sample(int(rows), rng=rng)
    details = {
        "method": "product-of-factors model fitted to the noisy marginals by iterative proportional fitting, then sampling",
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
    return codes, details, warnings


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
        max_factor_cells: int = DEFAULT_MAX_FACTOR_CELLS) -> FactoredModel:
    """The fitted :class:`FactoredModel` (steps 1–2 of the module docstring)."""
    marginals = list(marginals)
    ordered = [marginals[i] for i in synthesis_order(marginals, total)]
    model = fit_marginals(domain, ordered, total=max(float(total), 1.0), passes=1, max_factor_cells=max_factor_cells)
    targets = _targets(model, ordered, set(model.unmerged))
    for _ in range(int(passes)):
        ipf_pass(model, targets)
    return model
