"""MWEM with the noise-aware estimator in the loop (``mwem`` ``variant: pgm``, the default).

MWEM (Hardt, Ligett & McSherry 2012, Figure 1) alternates *select* (exponential
mechanism on the current model's errors), *measure* (a noisy marginal) and
*update* (multiplicative weights).  This variant keeps the select / measure loop
and replaces the update by the estimator of :mod:`dpsynth.models.estimation`
(McKenna et al. 2019): after each measurement the graphical model is refitted to
*all* measurements so far, each weighted by its noise.  The other changes, each
suggested by later work on MWEM-style selection (McKenna et al. 2022, "AIM",
§4) and written here in our own terms:

* **candidates** are the workload marginals and all their subsets of two or
  more attributes (lower-order marginals are cheaper to measure accurately);
  a candidate is allowed only while the model with it stays within
  ``model_cells`` cells (upper bound from the junction tree: the cliques on the
  path joining the candidate's attributes merged into one; public information:
  the domain and earlier selections);
* **size-aware score** q(r) = ‖M_r(D) − M_r(p̂)‖₁ − sqrt(2/π)·σ·|r|: the model's
  L1 error on marginal r minus the error expected from measuring it with noise
  of deviation σ (|r| cells), so a large marginal must be badly modelled to be
  worth its noise.  Sensitivity: ``histogram_l1`` (the model p̂ is public);
* **init**: every 1-way marginal is measured first (``init_fraction`` of the budget);
* **adaptive budget**: a round's share starts at (budget after init)/``iterations``;
  when the refitted model moved less on the chosen marginal than the noise
  would explain (‖M_r(p̂_new) − M_r(p̂_old)‖₁ ≤ sqrt(2/π)·σ·|r|), later rounds' σ is divided
  by ``anneal`` (default 2: twice the ε under pure accounting, four times the ρ under zCDP).  When what is left
  cannot pay for two more rounds the next round spends all of it, so the budget
  is used exactly;
* **noise**: ``accounting: pure`` (δ = 0): Laplace measurements, ε-DP exponential
  mechanism, basic composition.  ``accounting: zcdp`` (``auto`` when δ > 0):
  Gaussian measurements of ρ each and the exponential mechanism as bounded range
  (ρ = ε²/8), composed in zCDP (Bun & Steinke 2016) and converted to (ε, δ).

* **batches** (``batch``): a round draws ``batch`` marginals without replacement (one exponential mechanism
  per draw, each paid 1/``batch`` of the round's selection part, over the candidates not yet drawn), measures
  each with 1/``batch`` of the round's measurement part and refits once: more marginals for the same budget
  and fewer refits; the budget grows when the model moved less than the noise explains summed over the picks.

* **absent values** (``absent``): after the final fit, a value that all per-value measurements together
  count at zero or below (:func:`~dpsynth.algorithms.compression.absent_values`) gets no mass (the model is
  conditioned on the other values; post-processing).

Every choice of the loop (candidates allowed, budget of the next round) is a
function of public information and of mechanism outputs (the model is fitted
to noisy measurements only), so the ledger holds exactly the charges of the
mechanisms: per round ``batch`` (default 1) exponential mechanisms and as many noisy marginals.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from dpsynth.algorithms.base import AlgorithmContext, NoisyMarginal, SelectionLog, SelectionRound
from dpsynth.algorithms.compression import absent_values, bins_from_noisy
from dpsynth.algorithms.spec import PlannedStage
from dpsynth.models.base import ZeroProbability
from dpsynth.models.estimation import LinearMeasurement, estimate
from dpsynth.models.graphical import GraphicalModel
from dpsynth.models.synthesis import signal_priority
from dpsynth.privacy.accountant import zcdp_to_approx_dp
from dpsynth.privacy.allocation import RoundBudget
from dpsynth.privacy.mechanisms import (
    discrete_gaussian_mechanism,
    exponential_mechanism,
    gaussian_mechanism,
    geometric_mechanism,
    laplace_mechanism,
)

__all__ = ["budget_plan_pgm", "candidates", "fit_pgm", "merged_cells", "model_bounds", "projections", "round_budget"]

_SQRT_2_PI = math.sqrt(2.0 / math.pi)


def candidates(workload, one_way_done: bool = True) -> list[tuple[int, ...]]:
    """The workload marginals and all their subsets of ≥ 2 attributes (sorted tuples, deduplicated)."""
    out: dict[tuple[int, ...], None] = {}
    for m in workload:
        m = tuple(sorted(m))
        for k in range(2 if one_way_done else 1, len(m) + 1):
            for sub in itertools.combinations(m, k):
                out[sub] = None
    return list(out)


def merged_cells(model: GraphicalModel, attrs, cache: dict | None = None) -> int:
    """Upper bound on the model's cells once ``attrs`` is measured (public: the structure only), the smaller of
    two junction trees that hold ``attrs`` in one clique:

    * *merge*: the cliques of the subtree joining the attributes (and ``attrs``) become one clique;
    * *route*: for a clique r chosen as the meeting point, each attribute a of ``attrs`` not in r is added to
      the cliques on the tree path from the clique holding a nearest to r, up to r (the cliques holding a stay
      a connected subtree, so the tree stays a junction tree), minimised over r in the joining subtree and the
      cliques holding an attribute of ``attrs``.

    Merging a long path multiplies the sizes of all its cliques; routing multiplies each path clique by the
    one or two values carried through it (Adult, all 3-way marginals: routing allows most candidates the
    merge bound rejected at the same ``model_cells``).  ``cache``: a dict kept for one model structure.
    """
    cache = {} if cache is None else cache
    if not cache:
        parent = model._rooted(0)
        cache["parent"] = parent
        cache["depth"] = {i: model._depth(i, parent) for i in parent}
        cache["sizes"] = [math.prod(model.shape(c)) for c in model.cliques]
        cache["home"] = {}
        cache["holders"] = {}
        for i, c in enumerate(model.cliques):
            for a in c:
                cache["home"].setdefault(a, i)
                cache["holders"].setdefault(a, []).append(i)
        cache["sets"] = [set(c) for c in model.cliques]
        cache["paths"] = {}
    want = set(attrs)
    if any(want <= c for c in cache["sets"]):
        return model.cells
    merged, nodes = _merge_bound(model, want, cache)
    meet = nodes.union(*(cache["holders"][a] for a in want))  # meeting points worth trying
    return min(merged, _route_bound(model, want, cache, sorted(meet)))


def model_bounds(model: GraphicalModel, cands, memo: dict) -> list[int]:
    """:func:`merged_cells` of every candidate, kept in ``memo`` while the model's structure (cliques and
    edges) stays the same: a round whose measurement falls inside a clique reuses them."""
    key = (tuple(model.cliques), tuple(model.edges))
    if memo.get("key") != key:
        structure: dict = {}
        memo["key"], memo["bounds"] = key, [merged_cells(model, c, structure) for c in cands]
    return memo["bounds"]


def _path(cache: dict, i: int, j: int) -> list[int]:
    """The cliques on the tree path from i to j (both included), cached."""
    key = (i, j)
    out = cache["paths"].get(key)
    if out is None:
        parent, depth = cache["parent"], cache["depth"]
        left, right = [i], [j]
        while left[-1] != right[-1]:  # climb the deeper end until both ends meet
            if depth[left[-1]] >= depth[right[-1]]:
                left.append(parent[left[-1]])
            else:
                right.append(parent[right[-1]])
        out = cache["paths"][key] = left + right[-2::-1]
    return out


def _merge_bound(model: GraphicalModel, want: set, cache: dict) -> tuple[int, set]:
    parent, depth = cache["parent"], cache["depth"]
    ends = {cache["home"][a] for a in want}
    nodes = set(ends)
    frontier = set(ends)
    while len(frontier) > 1:  # climb the deepest node until all paths meet (their common ancestor)
        deepest = max(frontier, key=lambda i: depth[i])
        frontier.discard(deepest)
        up = parent[deepest]
        frontier.add(up)
        nodes.add(up)
    union = want.union(*(model.cliques[i] for i in nodes))
    return sum(cache["sizes"]) - sum(cache["sizes"][i] for i in nodes) + math.prod(model.sizes[a] for a in union), nodes


def _route_bound(model: GraphicalModel, want: set, cache: dict, meet) -> int:
    total, sizes, sets, best = sum(cache["sizes"]), cache["sizes"], cache["sets"], math.inf
    routes = cache.setdefault("routes", {})
    for r in meet:  # loop over meeting cliques (the joining subtree and the attributes' cliques: few)
        added: dict[int, set] = {}
        for a in want - sets[r]:
            route = routes.get((a, r))
            if route is None:
                route = routes[(a, r)] = min((_path(cache, h, r) for h in cache["holders"][a]), key=len)[1:]
            for i in route:
                added.setdefault(i, set()).add(a)
        cells = total
        for i, extra in added.items():
            cells += sizes[i] * math.prod(model.sizes[b] for b in extra)
            cells -= sizes[i]
            if cells >= best:
                break
        best = min(best, cells)
    return int(best)


def projections(model: GraphicalModel, attrs_list) -> list[np.ndarray]:
    """``model.project(c)`` for every ``c`` of ``attrs_list`` (sorted tuples), each subset of an already
    projected marginal summed out of it instead of projected again (the candidates of a workload's closure:
    every pair of an Adult 3-way workload lies in a projected triple)."""
    done: dict[tuple[int, ...], np.ndarray] = {}
    cover: dict[tuple[int, ...], tuple[int, ...]] = {}
    for c in sorted(set(attrs_list), key=len, reverse=True):  # widest first; loop over candidates
        sup = cover.get(c)
        if sup is None:
            done[c] = model.project(c)
            for k in range(1, len(c)):
                for sub in itertools.combinations(c, k):
                    cover.setdefault(sub, c)
        else:
            done[c] = done[sup].sum(axis=tuple(i for i, a in enumerate(sup) if a not in c))
    return [done[c] for c in attrs_list]


def _measure(ctx: AlgorithmContext, true, part: float, *, zcdp: bool, discrete: bool, rng, stage: str,
             measured: str):
    """A noisy marginal paid with ``part`` (ε, or ρ under zCDP) at histogram sensitivity."""
    nb = ctx.neighbouring
    kw = {"ledger": ctx.ledger, "rng": rng, "stage": stage, "measured": measured}
    if discrete:  # counts are integers: integer noise at the same scale and cost (issue 13 §4)
        true = np.rint(np.asarray(true, dtype=float)).astype(np.int64)
        if zcdp:
            return discrete_gaussian_mechanism(true, l2_sensitivity=nb.histogram_l2, rho=part, **kw)
        return geometric_mechanism(true, sensitivity=nb.histogram_l1, epsilon=part, **kw)
    if zcdp:
        return gaussian_mechanism(true, l2_sensitivity=nb.histogram_l2, rho=part, **kw)
    return laplace_mechanism(true, sensitivity=nb.histogram_l1, epsilon=part, **kw)


def _label(ctx, attrs) -> str:
    return "marginal(" + ", ".join(ctx.domain.names[a] for a in attrs) + ")"


def round_budget(params, total_budget: float, *, zcdp: bool, rounds: bool) -> RoundBudget:
    """The budget of a run (and of its plan): ``total_budget`` (ε left, or ρ available) shared as
    :class:`~dpsynth.privacy.allocation.RoundBudget` says; ``rounds`` false (no candidate to select) gives
    the 1-way marginals the whole budget."""
    init_fraction = params.init_fraction if rounds else 1.0 - 1e-12
    return RoundBudget(total_budget, init_fraction=init_fraction, iterations=params.iterations,
                       select_fraction=params.select_fraction, zcdp=zcdp, anneal=params.anneal)


def budget_plan_pgm(ctx: AlgorithmContext, params, *, zcdp: bool, total_budget: float) -> list[PlannedStage]:
    """What :func:`fit_pgm` charges: the 1-way marginals at a fixed part each, then rounds whose number and
    parts are chosen at run time (:meth:`RoundBudget.grow`), at most :data:`_MAX_ROUNDS` × ``iterations``,
    their selections within ``select_fraction`` of what the rounds share and their measurements within the
    rest.  Under zCDP a stage's ε are bounded from its ρ (Cauchy–Schwarz over at most ``iterations`` + 1
    rounds: each round before the last takes at least the first round's part)."""
    d = len(ctx.domain)
    cands = candidates(ctx.workload)
    budget = round_budget(params, total_budget, zcdp=zcdp, rounds=bool(cands))
    delta = ctx.ledger.delta if zcdp else 0.0
    unit = "rho" if zcdp else "epsilon"
    parts = budget.init_shares(ctx.domain.sizes, getattr(params, "init_split", 0.0))
    init_eps = tuple(zcdp_to_approx_dp(p, delta) if zcdp else p for p in parts)
    each = (f"{parts[0]:.4g} each" if len(set(parts)) <= 1 else
            f"{min(parts):.4g} to {max(parts):.4g}, by column size to the power {params.init_split:g}")
    stages = [PlannedStage(stage="mwem-init", charges=d, total=math.fsum(init_eps), epsilon=init_eps, delta=delta,
                           text=f"{unit} {math.fsum(parts):.4g} over the {d} 1-way marginals ({each})")]
    if not cands:
        return stages
    first_select, first_measure, _ = round_budget(params, total_budget, zcdp=zcdp, rounds=True).take()
    select_total, measure_total = budget.left * params.select_fraction, budget.left * (1 - params.select_fraction)
    if zcdp:  # sum of sqrt(8 rho_i) over at most N rounds <= sqrt(8 * rho * N); rho + 2 sqrt(rho L) likewise
        most = min(_MAX_ROUNDS * params.iterations, params.iterations + 1)
        select_eps = math.sqrt(8.0 * select_total * most * batch_size(params))  # batch draws per round
        measure_eps = measure_total + 2.0 * math.sqrt(measure_total * most * math.log(1.0 / delta))
    else:
        select_eps, measure_eps = select_total, measure_total
    adaptive = (f"about {params.iterations} rounds, {unit} {{first:.4g}} each at first, more once the model stops "
                f"improving; {unit} {{total:.4g}} in all")
    return stages + [
        PlannedStage(stage="mwem-select", charges=None, total=select_eps, delta=0.0, per_round=True,
                     text=adaptive.format(first=first_select, total=select_total) + " (exponential mechanism)"),
        PlannedStage(stage="mwem-measure", charges=None, total=measure_eps, delta=delta, per_round=True,
                     text=adaptive.format(first=first_measure, total=measure_total)),
    ]


_MAX_ROUNDS = 10
""":func:`fit_pgm` stops after this many times ``iterations`` rounds whatever is left."""


def batch_size(params) -> int:
    """Marginals selected and measured per round (``batch``; 1 when the parameters have none)."""
    return int(getattr(params, "batch", 1))


def _select_batch(ctx: AlgorithmContext, allowed, est, true, cells, current: int, k: int, *, sd: float,
                  cap: int, epsilon: float, rng, label: str) -> list:
    """Up to ``k`` (candidate drawn, candidates offered) pairs, drawn without replacement, each by an exponential
    mechanism paid ``epsilon`` on the scores of the candidates not yet drawn (the current model's L1 error minus
    the expected noise of a measurement at ``sd``); a later draw is offered only the candidates whose model-size
    bound plus the growth the earlier draws' bounds add to the ``current`` model's cells stays within ``cap``
    (public: the bounds are the model's structure)."""
    nb, extra = ctx.neighbouring, 0
    picks: list[tuple[tuple[int, ...], list[tuple[int, ...]]]] = []
    score = {c: np.abs(true[c] - est[c]).sum() - _SQRT_2_PI * sd * cells[c] for c, _ in allowed}
    for j in range(k):  # loop over the draws of one round (a few)
        offered = [(c, b) for c, b in allowed if all(c != p for p, _ in picks) and b + extra <= cap]
        if not offered:
            break
        scores = np.array([score[c] for c, _ in offered])
        pick = exponential_mechanism(scores, sensitivity=nb.histogram_l1, epsilon=epsilon, ledger=ctx.ledger,
                                     rng=rng, stage="mwem-select",
                                     measured=f"{label}: one of {scores.size} candidate marginals")
        picks.append((offered[pick][0], [c for c, _ in offered]))
        extra += max(0, offered[pick][1] - current)
    return picks


def fit_pgm(ctx: AlgorithmContext, params, *, zcdp: bool, total_budget: float, rng: np.random.Generator):
    """The rounds; returns (model, released marginals, details, warnings, selection log)."""
    sizes = tuple(ctx.domain.sizes)
    nb = ctx.neighbouring
    cands = candidates(ctx.workload)
    budget = round_budget(params, total_budget, zcdp=zcdp, rounds=bool(cands))
    discrete = getattr(params, "noise", "discrete") == "discrete"
    noise = "gaussian" if zcdp else "laplace"
    released: list[NoisyMarginal] = []
    measurements: list[LinearMeasurement] = []
    init_parts = budget.init_shares(sizes, getattr(params, "init_split", 0.0))
    for a, part in enumerate(init_parts):  # loop over columns
        values = np.asarray(_measure(ctx, ctx.counts.marginal((a,)), part, zcdp=zcdp, discrete=discrete,
                                     rng=rng, stage="mwem-init", measured=_label(ctx, (a,))), dtype=float)
        sd = budget.deviation(part, nb.histogram_l1, nb.histogram_l2)
        released.append(NoisyMarginal((a,), values, sd if zcdp else sd / math.sqrt(2.0), noise))
        measurements.append(LinearMeasurement((a,), values, sd))
    measurements.extend(ctx.prior)  # a discovery's released histograms (post-processing)
    compress = getattr(params, "compress", False)  # released 1-way values only (post-processing)
    bins = bins_from_noisy([m.values for m in measurements[:len(sizes)]],
                           [m.sigma for m in measurements[:len(sizes)]]) if compress else None
    fit_kw = {"total": ctx.n, "max_cells": params.model_cells, "coarsen": True}
    model = estimate(sizes, measurements, iterations=params.round_iterations, **fit_kw).model
    true = {c: ctx.counts.marginal(c) for c in cands}
    if bins is not None:  # the measured (binned) marginals; rare values share a bin (post-processing of 1-ways)
        true = {c: bins.apply(v, c) for c, v in true.items()}
    cells = {c: true[c].size for c in cands}

    def fold(table, c):  # a model's marginal as measured
        return table if bins is None else bins.apply(table, c)
    selected, removed_by_size, grown, binned, rounds = [], 0, 0, 0, 0
    bounds: dict = {}
    log = SelectionLog()
    for t in range(_MAX_ROUNDS * params.iterations):  # loop over rounds (ends when the budget is spent)
        sel_part, meas_part, last = budget.take()
        k = batch_size(params)
        sd = budget.deviation(meas_part / k, nb.histogram_l1, nb.histogram_l2)
        bound = model_bounds(model, cands, bounds)
        allowed = [(c, b) for c, b in zip(cands, bound) if b <= params.model_cells]
        removed_by_size = max(removed_by_size, len(cands) - len(allowed))
        if not allowed:
            break
        full = dict(zip([c for c, _ in allowed], projections(model, [c for c, _ in allowed])))
        est = {c: fold(e, c) for c, e in full.items()}
        select_eps = budget.select_epsilon(sel_part / k)
        draws = _select_batch(ctx, allowed, est, true, cells, model.cells, k, sd=sd, cap=params.model_cells,
                              epsilon=select_eps, rng=rng, label=f"round {t + 1}")
        picks = [attrs for attrs, _ in draws]
        scored_sd, sd = sd, budget.deviation(meas_part / len(picks), nb.histogram_l1, nb.histogram_l2)  # fewer: less
        for attrs, offered in draws:  # loop over the round's picks (at most batch)
            values = np.asarray(_measure(ctx, true[attrs], meas_part / len(picks), zcdp=zcdp, discrete=discrete,
                                         rng=rng, stage="mwem-measure", measured=_label(ctx, attrs)), dtype=float)
            _log_round(log, offered, [est[c] for c in offered], bins, select_eps, nb.histogram_l1,
                       float(np.abs(values - est[attrs]).sum()), values.size, noise,
                       sd if zcdp else sd / math.sqrt(2.0), scored_sd, full=[full[c] for c in offered])
            query = bins.query(attrs, sizes) if bins is not None and bins.binned(attrs) else None
            if query is None:
                released.append(NoisyMarginal(attrs, values, sd if zcdp else sd / math.sqrt(2.0), noise))
            else:  # in the ledger and the model; not a per-value marginal of the report (its bins are in details)
                binned += 1
            measurements.append(LinearMeasurement(attrs, values, sd, query))
            selected.append(_label(ctx, attrs))
        rounds += 1
        model = estimate(sizes, measurements, iterations=params.round_iterations, warm=model, **fit_kw).model
        moved = sum(np.abs(fold(model.project(a), a) - est[a]).sum() for a in picks)
        if moved <= _SQRT_2_PI * sd * sum(cells[a] for a in picks):
            budget.grow()
            grown += 1
        ctx.progress("mwem", t + 1, params.iterations)
        if last:
            break
    # Final fit: measured marginals without a dependence beyond their noise are fitted through
    # their lower-order projections (signal_priority; post-processing of the noisy values).
    final = estimate(sizes, measurements, iterations=params.final_iterations, warm=model,
                     priority=signal_priority(measurements), **fit_kw)
    model = final.model
    absent = absent_values(measurements, sizes) if getattr(params, "absent", False) else [None] * len(sizes)
    if any(w is not None for w in absent):  # values the measurements count at <= 0 get no mass (post-processing)
        try:
            model = model.condition(absent)
        except ZeroProbability:  # every remaining combination has no mass: keep the fitted model
            absent = [None] * len(sizes)
    model.sampling = params.sampling
    details = {
        "variant": "pgm",
        "accounting": "zcdp" if zcdp else "pure",
        "rounds": rounds,
        "batch": batch_size(params),
        "selected": selected,
        "candidates": len(cands),
        "candidates_over_model_cells": removed_by_size,
        "budget_increases": grown,
        "model_cells_bound": params.model_cells,
        "score_sensitivity": nb.histogram_l1,
        "binned_values": {} if bins is None else bins.describe(ctx.domain.names),
        "binned_measurements": binned,
        "absent_values": {ctx.domain.names[a]: np.flatnonzero(w == 0).tolist()
                          for a, w in enumerate(absent) if w is not None},
        "synthesis": {**final.details, "sampling": params.sampling,
                      "model_cliques": [[ctx.domain.names[a] for a in c] for c in model.cliques if len(c) > 1]},
    }
    return model, released, details, [], log


def _log_round(log: SelectionLog, allowed, est, bins, epsilon, sensitivity, residual, cells, noise, scale,
               sd, weights=None, chosen_weight: float = 1.0, full=None) -> None:
    """Record round len(log.rounds) for the bounds of unmeasured marginals (post-processing: the model's marginals
    the scores were computed against, and the chosen measurement's residual against its noisy values).
    ``weights``: the candidates' workload weights (``aim``; None: unweighted scores); ``full``: the candidates'
    model marginals before ``compress``'s bins (a binned candidate is recorded with them, the number of cells it
    was scored on, and the model's mass on its bins of two or more values; without ``full`` it is skipped)."""
    t = len(log.rounds)
    for i, (c, e) in enumerate(zip(allowed, est)):  # loop over candidates (references to arrays already computed)
        w = 1.0 if weights is None else float(weights[i])
        if bins is None or not bins.binned(c):
            log.last_scored[c] = (t, e, w, int(np.asarray(e).size), 0.0)
        elif full is not None:
            members = bins.apply(np.ones(np.shape(full[i])), c)
            log.last_scored[c] = (t, full[i], w, int(np.asarray(e).size), float(np.asarray(e)[members > 1.5].sum()))
    log.rounds.append(SelectionRound(float(epsilon), float(sensitivity), len(allowed), float(residual), noise,
                                     float(scale), int(cells), float(sd), float(chosen_weight)))
