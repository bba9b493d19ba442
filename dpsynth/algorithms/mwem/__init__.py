"""``mwem``: Multiplicative Weights + Exponential Mechanism (Hardt, Ligett & McSherry 2012).

Figure 1 of the paper, T rounds over a public set Q of linear queries,
starting from a model A₀ of total mass n:

1. *select* q_i ∈ Q with the exponential mechanism, score s(B, q) = |q(A_{i−1}) − q(B)|;
2. *measure* m_i = q_i(B) + noise with the Laplace mechanism;
3. *update* A_i(x) ∝ A_{i−1}(x)·exp(q_i(x)(m_i − q_i(A_{i−1}))/(2n)).

Query classes (``Q``):

* ``marginal_queries: cuboids`` (default; §3.3): each workload marginal is one
  candidate; its score is Σ_cells |A_c − B_c| (minus the number of cells with
  ``bias_cells: true``, the paper's heuristic, which costs no privacy); the
  whole marginal is measured at once, one Laplace draw per cell at histogram
  sensitivity, and all its cells are updated together.
* ``marginal_queries: cells``: every cell of every workload marginal is a
  counting query (Figure 1 literally).
* ranges (§3.1): the queries of ``workload.ranges`` (see :mod:`dpsynth.workload.ranges`),
  added to the candidates when configured; ``marginal_queries: none`` keeps only them.
* general linear queries (§2: q maps records to [−1, 1]): the queries of
  ``workload.linear`` (see :mod:`dpsynth.workload.linear`), scored by
  |q(A) − q(B)|, measured one at a time, and fitted by the Figure 1 update
  A(x) ∝ A(x)·exp(q(x)(m − q(A))/(2n)) with the query's own weights q(x).

Sensitivities follow the neighbouring relation: a cuboid's score and its cell
vector change by at most ``histogram_l1`` (1 add-remove, 2 replace-one); a
cell or range count and its score by 1; a linear query with q(x) ∈ [lo, hi]
by max(|lo|, |hi|) (add-remove, ≤ 1) or hi − lo (replace-one, ≤ 2): measured at
its own, scored at the largest over the workload's queries.  The exponential mechanism uses the largest
sensitivity of the candidate classes present.

§2.3.2 improvements, each a parameter: ``output: final`` (default) or
``average`` of A₁ … A_T; ``mw_passes`` extra passes of the MW rule over all
measurements so far after each round (0 = Figure 1); ``init: noisy`` spends
``init_fraction`` of ε on the 1-way marginals and starts from their product
(the paper's "noisy count for each element of the domain" is infeasible on
large domains: see docs/mwem.md); ``init: cells`` is that per-cell
initialisation, for domains within ``max_factor_cells`` (checked before any
data is read).  ``reselect: false`` (default) removes
measured queries from the candidates.

Budget (``accounting: pure``, default): ε after the row count is split into
``init_fraction``·ε for initialisation and T equal rounds; each round gives
``select_fraction`` of its share to selection and the rest to measurement
(the paper: ε/2T each).  ``accounting: zcdp`` does the same split in ρ (the
ρ of the configured (ε, δ)): selection is a bounded-range exponential
mechanism of ρ = ε²/8, measurements are Gaussian at L2 sensitivity.

Scalability (§4): the model is a :class:`~dpsynth.models.factored.FactoredModel`.
Before each selection, candidates whose measurement would create a factor of
more than ``max_factor_cells`` cells are removed; this depends only on the
public domain and on earlier (already private) selections, so it costs no
privacy, and the report says how many were removed.

Modules: ``params`` (settings, variant defaults, composition, checks from the configuration),
``families`` (the query classes), ``budget`` (the budget split), ``core`` (the rounds, ``run``,
``SPEC``); ``variant: pgm`` is :mod:`dpsynth.algorithms.mwem_pgm`.
"""

from __future__ import annotations

from dpsynth.algorithms.mwem.budget import Split, Stage, split, stages
from dpsynth.algorithms.mwem.budget import _Budget as _Budget  # private names re-exported for the tests
from dpsynth.algorithms.mwem.core import SPEC, Fit, fit, run
from dpsynth.algorithms.mwem.core import _initial_model as _initial_model
from dpsynth.algorithms.mwem.core import _measurement as _measurement
from dpsynth.algorithms.mwem.families import _Linear as _Linear
from dpsynth.algorithms.mwem.params import (
    DEFAULT_ITERATIONS,
    Params,
    candidate_count,
    check_workload,
    composition,
    count_candidates,
    effective_iterations,
    parse_params,
    preflight,
    resolve,
    resolve_config,
    variant_of,
)

__all__ = ["DEFAULT_ITERATIONS", "SPEC", "Fit", "Params", "Split", "Stage", "candidate_count", "check_workload",
           "composition", "count_candidates", "effective_iterations", "fit", "parse_params", "preflight", "resolve", "resolve_config",
           "run", "split", "stages", "variant_of"]
