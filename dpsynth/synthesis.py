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
2. Start from the average noisy 1-way projections and run ``passes`` MW passes
   over all marginals (negative noisy counts are kept: the MW update treats
   them as "fewer than the model", which is the unbiased direction).
3. Sample ``rows`` independent records from the fitted model.

Error added (docs/ireduct.md, benchmark figures): the model cannot represent
the correlations between attribute groups it could not merge, MW passes do not
converge exactly, and sampling adds multinomial noise (relative standard error
about 1/sqrt(n·p) per cell).  The benchmark reports the overall relative error
of the synthetic rows' marginals next to that of the released marginals.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .factored import DEFAULT_MAX_FACTOR_CELLS, fit_marginals

__all__ = ["synthesis_order", "synthesize"]


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
    order = synthesis_order(marginals, total)
    model = fit_marginals(
        domain, [marginals[i] for i in order], total=max(float(total), 1.0), passes=passes,
        max_factor_cells=max_factor_cells,
    )
    codes = model.sample(int(rows), rng=rng)
    details = {
        "method": "multiplicative-weights fit of a product-of-factors model to the noisy marginals, then sampling",
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
