"""The relative-error algorithms of Xiao, Bender, Hay & Gehrke 2011 ("iReduct: differential privacy with
reduced relative errors"), three registered algorithms sharing one set of helpers:

* ``core``: ``ireduct`` for marginals (§4.3 Figure 4, §5.3): parameters, scales and sanity bounds from
  public facts, the ledger charges, ``run`` and ``SPEC``;
* ``loop``: the Figure 4 loop itself on groups of answers sharing a scale (PickQueries, NoiseDown rounds);
* ``queries``: ``ireduct`` over a workload of counting queries given as cell sets (Definition 4);
* ``twophase``: ``twophase`` (§3.2 Figure 1, §5.2 Rescale) and the NOT private Oracle;
* ``iresamp``: ``iresamp`` (Appendix A, Figure 12).

Imports run one way: ``twophase``/``iresamp`` -> ``core`` -> ``queries`` -> ``loop``.  This package
re-exports the names of ``core`` and ``loop`` (``from dpsynth.algorithms import ireduct; ireduct.measure``).
"""

from __future__ import annotations

from dpsynth.algorithms.ireduct.core import (
    SPEC,
    Params,
    budget_plan,
    charge_final_scales,
    marginal_label,
    measure,
    parse_params,
    resolve_scales,
    run,
    sanity_bounds,
    sanity_details,
)
from dpsynth.algorithms.ireduct.loop import (
    MAX_MARGIN,
    IReductResult,
    Pick,
    default_scales,
    error_weights,
    generalized_sensitivity,
    ireduct_groups,
    ireduct_marginals,
    max_error_weights,
    pick_priority,
    pick_ratio,
)

__all__ = [
    "MAX_MARGIN",
    "SPEC",
    "IReductResult",
    "Params",
    "Pick",
    "budget_plan",
    "charge_final_scales",
    "default_scales",
    "error_weights",
    "generalized_sensitivity",
    "ireduct_groups",
    "ireduct_marginals",
    "marginal_label",
    "max_error_weights",
    "measure",
    "parse_params",
    "pick_priority",
    "pick_ratio",
    "resolve_scales",
    "run",
    "sanity_bounds",
    "sanity_details",
]
