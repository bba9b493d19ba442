"""iReduct over a workload of counting queries given as cell sets (Xiao et al. 2011, §4.3 Figure 4).

``algorithm: ireduct`` with a ``workload.queries`` section (:mod:`dpsynth.workload.cellsets`): every
query is its own group with its own scale λ_i, all starting at λ_max (Figure 4 lines 1–4); the
queries overlap, so the budget is the generalized sensitivity of Definition 4,
GS(Λ) = factor · max_r Σ_{i∋r} 1/λ_i over the possible rows r (factor 1 under add-remove, 2 under
replace-one), kept ≤ ε by :class:`~dpsynth.privacy.allocation.PatternCostAllocation`.  PickQueries
is the marginal one applied to single queries: ``pick: average`` steps the queries with the best
ratio (λ_i/max(y_i, δ_i))·λ_i(λ_i − λ_Δ), ``pick: max`` the ones maximising λ_i/max(y_i − cλ_i, δ_i)
(§4.3's rule with a noise margin), a batch at a time (the water level of ``refresh``), then the
literal one-query-at-a-time loop.

Ledger: ONE charge at the end, mechanism ``laplace+noisedown``, ε = GS of the final scales (an
upper bound, :class:`PatternCostAllocation`), ``sensitivity`` the L1 sensitivity S of the query
vector, ``scale`` the smallest final λ_i, ``count`` the number of queries (Theorem 1: each chain
costs its last draw; Proposition 2 with unequal scales).

Release: the noisy answers are in the report (``algorithm.details.queries``: name, answer, scale,
sanity bound) and the synthetic rows come from the noise-aware graphical model fitted to them
(:func:`dpsynth.models.estimation.estimate` with one linear measurement per query on the columns
it names; post-processing).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpsynth.algorithms.base import AlgorithmContext, AlgorithmOutput
from dpsynth.algorithms.ireduct.loop import default_scales, ireduct_groups
from dpsynth.algorithms.spec import PlannedStage
from dpsynth.errors import ConfigError
from dpsynth.models.estimation import LinearMeasurement, estimate
from dpsynth.privacy.accountant import Charge
from dpsynth.privacy.allocation import PatternCostAllocation
from dpsynth.workload.cellsets import CellSetQueries
from dpsynth.workload.marginals import default_sanity_bound

__all__ = ["cell_queries", "measure_queries", "queries_budget", "queries_stage", "query_measurements", "run_queries"]


def _lambda_max(ctx: AlgorithmContext, params, sens: float, eps: float) -> tuple[float, list[str]]:
    if params.lambda_max is None:
        lam, raised = default_scales(ctx.n, 1, sens, eps)
        msg = (f"lambda_max = n/10 = {ctx.n / 10:.6g} cannot pay for the first draw of the queries (sensitivity "
               f"{sens:g}) at epsilon={eps:.6g}; using lambda_max = 10*{sens:g}/epsilon = {lam:.6g}")
        return lam, [msg] if raised else []
    if sens / params.lambda_max > eps:
        raise ConfigError(f"algorithm.params.lambda_max: {params.lambda_max:.6g} cannot pay for the first draw of "
                          f"the queries (sensitivity {sens:g}, cost {sens / params.lambda_max:.6g} > epsilon "
                          f"{eps:.6g}); raise it to at least {sens / eps:.6g}")
    return params.lambda_max, []


def cell_queries(ctx: AlgorithmContext) -> CellSetQueries:
    """The ``workload.queries`` of this release (``run`` comes here only when the workload has them)."""
    if ctx.queries is None or ctx.queries.queries is None:
        raise ValueError("iReduct over counting queries needs a workload.queries section")
    return ctx.queries.queries


def query_bounds(ctx: AlgorithmContext, params) -> tuple[np.ndarray, float]:
    """δ_i of every query (its own ``sanity_bound``, else the workload/params default, else 10⁻⁴·n)."""
    wl = ctx.queries
    if wl is None:
        raise ValueError("iReduct over counting queries needs a workload.queries section")
    default = wl.sanity_bounds.default
    if default is None:
        default = params.sanity_bound if params.sanity_bound is not None else default_sanity_bound(ctx.n)
    return cell_queries(ctx).bounds(default), float(default)


def queries_budget(ctx: AlgorithmContext, epsilon: float) -> PatternCostAllocation:
    """The cost allocation of the queries at equal scales: its ``sensitivity`` is the L1 sensitivity of all the
    queries at once (Definition 4; a row leaves, or leaves and joins, at most ``depth`` of them)."""
    q = cell_queries(ctx)
    factor = ctx.neighbouring.histogram_l1  # one row leaves (add-remove: 1), or leaves and joins (replace-one: 2)
    return PatternCostAllocation(epsilon, factor, q.patterns, np.ones(len(q)))


def queries_stage(ctx: AlgorithmContext, params) -> PlannedStage:
    """What :func:`measure_queries` charges: one entry for all queries, its ε set by the noise-down steps."""
    q = cell_queries(ctx)
    eps = ctx.ledger.remaining()
    sens = queries_budget(ctx, eps).sensitivity
    return PlannedStage(stage="measure", charges=1, total=eps,
                        text=(f"epsilon {eps:.4g} spent by noise-down steps, one charge for all {len(q)} queries "
                              f"(a row is in at most {q.depth} of them: L1 sensitivity {sens:g})"))


def measure_queries(ctx: AlgorithmContext, params, *, rng: np.random.Generator):
    """(noisy answers, final scales, details, warnings); charges the ledger once (module docstring)."""
    q = cell_queries(ctx)
    eps = ctx.ledger.remaining()
    budget = queries_budget(ctx, eps)
    lam_max, warnings = _lambda_max(ctx, params, budget.sensitivity, eps)
    lam_delta = params.lambda_delta or lam_max * 1e-5
    if lam_delta >= lam_max:
        raise ConfigError(f"algorithm.params.lambda_delta: must be smaller than lambda_max "
                          f"({lam_delta:.6g} >= {lam_max:.6g})")
    budget.reset(np.full(len(q), lam_max))
    deltas, default = query_bounds(ctx, params)
    true = q.answers(ctx.counts.marginal(q.attrs))
    res = ireduct_groups(true, np.ones(len(q), dtype=np.int64), budget, lambda_max=lam_max, lambda_delta=lam_delta,
                         sanity_bound=deltas, rng=rng, pick=params.pick, refresh=params.refresh,
                         progress=ctx.progress, label="queries")
    del true
    budget.reset(res.scales)
    ctx.ledger.charge(Charge(stage="measure", mechanism="laplace+noisedown", sensitivity=budget.sensitivity,
                             epsilon=budget.total, scale=float(res.scales.min()),
                             measured=f"{len(q)} counting queries", count=len(q)))
    answers = res.values[0]
    details = {
        "queries_measured": len(q),
        "query_sensitivity": budget.sensitivity,
        "lambda_max": lam_max,
        "lambda_delta": lam_delta,
        "sanity_bound": default,
        "pick": params.pick,
        "refresh": params.refresh,
        "noise_down_steps": res.steps,
        "rounds": res.rounds,
        "literal_steps": res.tail_steps,
        "generalized_sensitivity": budget.total,
        "final_scale_min": float(res.scales.min()),
        "final_scale_median": float(np.median(res.scales)),
        "final_scale_max": float(res.scales.max()),
        "queries": [{"name": n, "answer": float(a), "scale": float(s), "sanity_bound": float(d)}
                    for n, a, s, d in zip(q.names, answers, res.scales, deltas)],
    }
    return answers, res.scales, details, warnings


def query_measurements(queries, domain, answers, scales) -> list[LinearMeasurement]:
    """One estimator input per query: its answer as a linear query on the marginal of the columns it
    names, the row and the value divided by its noise deviation sqrt(2)·λ_i (so σ = 1 for all)."""
    out = []
    for i in range(len(queries)):  # loop over queries (each one vectorized over its cells)
        own = [pos for pos, m in enumerate(queries.member) if not m[i].all()] or [0]
        attrs = tuple(queries.attrs[pos] for pos in own)
        mask = np.ones(1)
        for pos in own:
            mask = np.multiply.outer(mask, queries.member[pos][i].astype(float)).reshape(-1)
        sd = math.sqrt(2.0) * float(scales[i])
        out.append(LinearMeasurement(attrs, np.array([answers[i] / sd]), 1.0, query=mask[None, :] / sd))
    return out


def run_queries(ctx: AlgorithmContext, params, *, rng: np.random.Generator) -> AlgorithmOutput:
    """Measure the queries, then fit the graphical model to their noisy answers (post-processing)."""
    answers, scales, details, warnings = measure_queries(ctx, params, rng=rng)
    q = cell_queries(ctx)
    est = estimate(tuple(ctx.domain.sizes), query_measurements(q, ctx.domain, answers, scales),
                   total=max(float(ctx.n), 1.0), max_cells=params.model_cells, iterations=params.synthesis_iterations)
    est.model.sampling = params.sampling
    details["synthesis"] = {
        "method": "noise-aware graphical model fitted to the noisy query answers (precision-weighted least "
                  "squares, mirror descent on a junction tree), then sampling",
        "sampling": params.sampling,
        **est.details,
    }
    covered = set(q.attrs)
    uncovered = [ctx.domain.names[a] for a in range(len(ctx.domain)) if a not in covered]
    if uncovered:
        warnings.append("no query names column(s) " + ", ".join(uncovered) + "; they are sampled uniformly")
    if est.plan.dropped:
        warnings.append(f"{est.plan.dropped} queries do not fit in a model of at most {params.model_cells} "
                        "cells; the synthetic rows ignore them (their noisy answers are in the report)")
    # GraphicalModel does not match the models.base.Model Protocol's signatures (pyproject.toml's mypy note)
    model: Any = est.model
    return AlgorithmOutput(model=model, marginals=(), details=details, warnings=warnings)
