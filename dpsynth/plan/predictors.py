"""One memory/budget/time predictor per algorithm (:data:`PREDICTORS`), from public facts only."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from dpsynth.config import Config
from dpsynth.errors import ConfigError
from dpsynth.plan.coefficients import (
    _COUNT_CELL,
    _FOURIER_LP_ENTRY,
    _IREDUCT_CELL,
    _NOISY_CELL,
    _PAYLOAD_CELL,
    _PGM_CELL,
    _QUERY_BYTES,
    _QUERY_INT,
    _T_CBC_DUALQUERY,
    _T_LOCAL_DUALQUERY,
    _T_NODE_DUALQUERY,
    _TRANSIENT,
)
from dpsynth.plan.timing import tree_cells

__all__ = ["PREDICTORS", "AlgorithmPlan", "Facts"]


@dataclass
class AlgorithmPlan:
    """What one algorithm's predictor returns (all from public facts)."""

    stages: list[tuple[str, str]]  # (stage, budget in words)
    memory: dict[str, int]  # part -> bytes
    seconds: float  # a part of the time outside the fitted model (DualQuery's work budget); the rest is ``work`` × TIME
    queries: str  # what the algorithm measures, in words
    noise_sd: float | None  # standard deviation of the noise on one measured cell (counts)
    noise_note: str = ""
    notes: list[str] = field(default_factory=list)
    work: dict[str, float] = field(default_factory=dict)  # time-model term -> public quantity (plan/timing.py)



@dataclass(frozen=True)
class Facts:
    """Public facts a predictor may use."""

    config: Config
    rows: int
    marginal_cells: list[int]
    total_cells: int
    largest: int
    synth_cap: int
    epsilon: float  # ε left for the algorithm after the row count
    sensitivity: float


def _synthesis(f: Facts) -> tuple[int, dict[str, float]]:
    """(bytes, time-model work) of turning the noisy marginals into a model (``SynthesisParams``).

    ``pgm`` (the default estimator, :mod:`dpsynth.models.estimation`): a junction tree of at most
    ``model_cells`` cells (about 48 bytes per cell, docs/estimator.md), ``synthesis_iterations``
    mirror-descent steps over the tree and the measured cells; ``mw``/``ipf``: the factored model,
    factors of at most 1 M cells, ``synthesis_passes`` passes over the marginals.
    """
    p = f.config.params
    method = getattr(p, "synthesis", "mw")
    if method == "pgm":
        steps = p.synthesis_iterations
        tree = tree_cells(f.config.domain.sizes, f.config.marginals, p.model_cells)
        return _PGM_CELL * p.model_cells, {"pgm": steps * tree, "pgm_measured": steps * f.total_cells}
    passes = getattr(p, "synthesis_passes", 10)
    return 3 * 8 * f.synth_cap, {"mw_synthesis": passes * f.total_cells}


def _counting(f: Facts, marginals: int) -> dict[str, float]:
    """Counting ``marginals`` marginals over the n rows (one pass each)."""
    return {"count": float(f.rows) * marginals}


def _marginal_memory(f: Facts) -> dict[str, int]:
    return {
        "exact counts cached by the engine": _COUNT_CELL * f.total_cells,
        "noisy marginals": _NOISY_CELL * f.total_cells,
        "largest marginal (transient)": _TRANSIENT * 8 * f.largest,
        "synthesis model": _synthesis(f)[0],
        "released model file payload (its checksum)": _PAYLOAD_CELL * f.total_cells,
    }


def _laplace(f: Facts) -> AlgorithmPlan:
    from dpsynth.algorithms.laplace import equal_shares

    m = len(f.marginal_cells)
    per = equal_shares(f.epsilon, m)[0] if m else f.epsilon
    scale = f.sensitivity / per
    return AlgorithmPlan(
        stages=[],  # from the algorithm's budget_plan (plan/budget.py)
        memory=_marginal_memory(f), seconds=0.0,
        queries=f"{m} marginals, every cell measured",
        noise_sd=math.sqrt(2.0) * scale,
        work={**_counting(f, m), "noise": f.total_cells, **_synthesis(f)[1]},
    )


def _mwem_pgm(f: Facts, p, sd: float) -> AlgorithmPlan:
    from dpsynth.algorithms.mwem_pgm import candidates as pgm_candidates
    from dpsynth.models.junction import BYTES_PER_CELL

    T = p.iterations
    cand_list = pgm_candidates(f.config.marginals)
    cands = len(cand_list)
    cand_cells = sum(f.config.domain.cells(c) for c in cand_list)
    batch = int(getattr(p, "batch", 1) or 1)  # measurements per round (one refit each round)
    # the tree grows by about one candidate per measurement, up to model_cells
    tree = min(p.model_cells, sum(f.config.domain.sizes) + T * batch * cand_cells // max(cands, 1))
    memory = {
        "exact counts cached by the engine": _COUNT_CELL * f.total_cells,
        "candidate tables (exact counts)": _COUNT_CELL * f.total_cells,
        "largest marginal (transient)": _TRANSIENT * 8 * f.largest,
        "graphical model (up to model_cells)": BYTES_PER_CELL * p.model_cells,
    }
    return AlgorithmPlan(
        stages=[],  # from the algorithm's budget_plan (plan/budget.py)
        memory=memory, seconds=0.0,
        work={**_counting(f, cands + len(f.config.domain.sizes)), "mwem_score": T * cand_cells,  # + 1-way init
              "mwem_candidates": T * cands,
              "mwem_pgm": (T * p.round_iterations + p.final_iterations) * tree},
        queries=f"{cands} candidate marginals (the workload and its subsets), about {T} rounds"
        + (f" of {batch} measurements" if batch > 1 else ""),
        noise_sd=sd, noise_note="on each measured marginal, first rounds",
        notes=["variant pgm: the estimator is refitted after every measurement (docs/mwem.md)" if batch == 1 else
               f"variant pgm: the estimator is refitted after every round of {batch} measurements (docs/mwem.md)"],
    )


def _mwem(f: Facts) -> AlgorithmPlan:
    """Memory and time of MWEM; its stages come from its ``budget_plan`` and the noise from its budget."""
    from dpsynth.algorithms.mwem import DEFAULT_ITERATIONS, count_candidates, resolve
    from dpsynth.algorithms.mwem.budget import measure_deviation, rounds
    from dpsynth.plan.budget import plan_context

    ctx, _ = plan_context(f.config, f.rows)
    p = resolve(ctx, f.config.params)
    sd = measure_deviation(ctx, p)
    if p.variant == "pgm":
        return _mwem_pgm(f, p, sd)
    linear = f.config.workload.linear
    candidates = count_candidates(ctx.domain, ctx.workload, ctx.queries, p)
    T = rounds(ctx, p)
    classes = (([p.marginal_queries] if p.marginal_queries != "none" else [])
               + (["ranges"] if f.config.workload.ranges else []) + (["linear"] if linear is not None else []))
    memory = {
        "exact counts cached by the engine": _COUNT_CELL * f.total_cells,
        "candidate tables (exact counts)": _COUNT_CELL * f.total_cells,
        "largest marginal (transient)": _TRANSIENT * 8 * f.largest,
        "model (factors up to max_factor_cells)": 3 * 8 * p.max_factor_cells,
    }
    notes = []
    if p.iterations is None and T < DEFAULT_ITERATIONS:
        notes.append(f"iterations not set: {T} rounds, one per candidate query (fewer than the default "
                     f"{DEFAULT_ITERATIONS})")
    return AlgorithmPlan(
        stages=[],  # from the algorithm's budget_plan (plan/budget.py)
        memory=memory, seconds=0.0,
        work={**_counting(f, len(f.marginal_cells)), "mwem_score": T * f.total_cells,
              "mwem_update": T * min(p.max_factor_cells, f.synth_cap)},
        queries=f"{candidates} candidate queries ({', '.join(classes)}), {T} rounds",
        noise_sd=sd, noise_note="on each of the T measured marginals", notes=notes,
    )


def _aim(f: Facts) -> AlgorithmPlan:
    """Memory and time of ``aim``: its stages come from its ``budget_plan``; the noise is the first round's."""
    from dpsynth.algorithms.aim import candidates as aim_candidates
    from dpsynth.algorithms.aim import first_deviation
    from dpsynth.models.junction import BYTES_PER_CELL
    from dpsynth.plan.budget import plan_context

    ctx, _ = plan_context(f.config, f.rows)
    p = f.config.params
    nominal = p.rounds_per_column * len(f.config.domain)
    T = max(1, nominal // 4)  # annealing usually ends a run after about a quarter of its nominal rounds
    cand_list = aim_candidates(f.config.marginals)
    cands = len(cand_list)
    cand_cells = sum(f.config.domain.cells(c) for c in cand_list)
    tree = min(p.model_cells, sum(f.config.domain.sizes) + T * cand_cells // max(cands, 1))
    rounds_fit = T * getattr(p, "round_iterations", 100) + getattr(p, "final_iterations", 500)
    memory = {
        "exact counts cached by the engine": _COUNT_CELL * f.total_cells,
        "candidate tables (exact counts)": _COUNT_CELL * f.total_cells,
        "largest marginal (transient)": _TRANSIENT * 8 * f.largest,
        "graphical model (up to model_cells)": BYTES_PER_CELL * p.model_cells,
    }
    return AlgorithmPlan(
        stages=[],  # from the algorithm's budget_plan (plan/budget.py)
        memory=memory, seconds=0.0,  # timed like MWEM's pgm variant (the same steps), in the fitted model
        work={**_counting(f, cands + len(f.config.domain.sizes)), "mwem_score": T * cand_cells,
              "mwem_candidates": T * cands, "mwem_pgm": rounds_fit * tree},
        queries=f"{cands} candidate marginals (the workload's downward closure), up to {nominal} rounds "
                f"(about {T} once the budget anneals)",
        noise_sd=first_deviation(ctx, p), noise_note="on each measured marginal, first rounds",
        notes=["the estimator is refitted after every measurement; later rounds get more budget (docs/aim.md)"],
    )


def _dualquery(f: Facts) -> AlgorithmPlan:
    from dpsynth.algorithms.dualquery.accounting import solve_parameters
    from dpsynth.algorithms.dualquery.core import composition as dq_composition
    from dpsynth.algorithms.dualquery.core import configured_queries
    from dpsynth.errors import BudgetError
    from dpsynth.workload.parities import Parities

    p = f.config.params
    queries = configured_queries(f.config.workload, f.config.domain, f.config.marginals)
    Q, k = len(queries), queries.k
    kind = "parities" if isinstance(queries, Parities) else "conjunctions"
    log_x = float(sum(math.log(size) for size in f.config.domain.sizes))
    stages, notes, T, s = [], [], p.T or p.max_T, p.s
    try:
        sol = solve_parameters(epsilon=f.epsilon, delta=f.config.privacy.delta, n=float(f.rows),
                               composition=dq_composition(p, f.config.privacy), T=p.T, s=p.s, eta=p.eta,
                               max_T=p.max_T, accuracy=(p.alpha, p.beta, Q, log_x) if p.alpha is not None else None)
        T, s = sol.T, sol.s  # the stages come from the algorithm's budget_plan (plan/budget.py)
        notes.append(_dualquery_outlook(f, sol, Q))
    except BudgetError as exc:
        notes.append(f"no DualQuery setting fits at n={f.rows:,}: {exc}")
        stages.append(("dualquery", "infeasible at this n"))
    memory = {
        f"{kind} (attributes, values, answers, weights)": Q * (_QUERY_BYTES + _QUERY_INT * k),
        "distinct rows (numpy engine)": 8 * len(f.config.domain) * f.rows,
    }
    seconds, work = _dualquery_work(p, T, s if s is not None else 10 * T)
    return AlgorithmPlan(
        stages=stages, memory=memory, seconds=seconds,
        queries=f"{Q:,} {kind} of {k} literals (and their negations)",
        noise_sd=None, noise_note="DualQuery measures no counts; its error depends on T, s and eta",
        notes=notes + [work],
    )


def _dualquery_work(p, T: int, s: int) -> tuple[float, str]:
    """DualQuery's time (a rough estimate) and its work budget in words: fixed counts of moves and nodes, no clock."""
    starts = p.local_search.restarts + 1
    local = T * s * starts * _T_LOCAL_DUALQUERY if p.best_response != "ip" else 0.0
    cbc = 0.0
    if p.best_response != "local":
        cbc = T * s * (_T_CBC_DUALQUERY + _T_NODE_DUALQUERY * p.solver.max_nodes)
    parts = [] if p.best_response == "ip" else [
        f"local search from {starts} starts, at most {p.local_search.max_kicks} kicks each"]
    if p.best_response != "local":
        parts.append(f"CBC with at most {p.solver.max_nodes} nodes (safety stop {p.solver.safety_seconds:g} s)")
    return local + cbc, (f"work budget (no clock): each of the {T} rounds runs {' then '.join(parts)}; the rows do not "
                         "depend on the machine's speed, only the time does")


def _dualquery_outlook(f: Facts, sol, n_queries: int) -> str:
    """DualQuery's accuracy outlook (dualquery.accounting.expected_error) as one plan note."""
    from dpsynth.algorithms.dualquery.accounting import expected_error

    params = f.config.params
    if params.alpha is None:  # alpha/beta derive T, s and eta themselves
        params = dataclasses.replace(params, T=sol.T, s=sol.s, eta=sol.eta)
    view = expected_error(float(f.rows), f.epsilon, f.config.privacy.delta, params, n_queries=n_queries,
                          log_universe=float(sum(math.log(size) for size in f.config.domain.sizes)))
    return (f"accuracy outlook: {view.verdict} (at most T={view.T} distinct records; Theorem 4.6 bound on the "
            f"max error {view.theorem_alpha:.3g}, vacuous when >= 1)" + (f"; {view.message}" if view.message else ""))


def _ireduct_queries(f: Facts) -> AlgorithmPlan:
    """iReduct over ``workload.queries`` (counting queries as cell sets): one charge for all queries at the
    generalized sensitivity (Definition 4), noise-down arrays over the queries, the counts of their columns."""
    q = f.config.workload.queries
    if q is None:  # PREDICTORS call this for a workload.queries release only
        raise ValueError("iReduct's queries plan needs a workload.queries section")
    domain = f.config.domain
    factor = f.config.privacy.neighbouring.histogram_l1
    sens = factor * q.depth
    cells = domain.cells(q.attrs)
    share = float(q.masks(domain).mean(axis=1).mean()) if len(q) else 0.0
    sd = math.sqrt(2.0) * sens / f.epsilon
    cols = ", ".join(domain.names[a] for a in q.attrs)
    memory = {"exact counts of the queries' columns": _COUNT_CELL * cells,
              "noise-down working arrays": _IREDUCT_CELL * len(q)}
    synth_bytes, synth_work = _synthesis(f)
    memory["synthesis model"] = synth_bytes
    return AlgorithmPlan(
        stages=[],  # from the algorithm's budget_plan (plan/budget.py)
        memory=memory, seconds=0.0,
        work={**_counting(f, 1), "ireduct": cells + len(q), **synth_work},
        queries=f"{len(q)} counting queries (cell sets) over {len(q.attrs)} columns ({cols})",
        noise_sd=None,
        noise_note=(f"standard deviation {sd:.4g} per query answer at equal scales ({sd / max(f.rows, 1):.3g} of n; "
                    f"iReduct lowers it where relative error matters); an average query holds about "
                    f"{share * f.rows:.4g} rows if the rows were spread evenly over its columns' cells"),
    )


def _ireduct_like(name: str) -> Callable[[Facts], AlgorithmPlan]:
    def predict(f: Facts) -> AlgorithmPlan:
        if name == "ireduct" and f.config.workload.queries is not None:
            return _ireduct_queries(f)
        m = len(f.marginal_cells)
        per = f.epsilon / max(m, 1)
        memory = _marginal_memory(f)
        if name == "ireduct":  # the vectorized noise-down rounds work on all cells at once
            memory["noise-down working arrays"] = _IREDUCT_CELL * f.total_cells
        if name == "twophase":
            from dpsynth.algorithms.ireduct.twophase import phase_budgets

            sd = math.sqrt(2.0) * f.sensitivity * m / phase_budgets(f.epsilon, f.config.params)[0]
            note = "phase 1; phase 2 adds less noise where counts are large"
        else:
            sd = math.sqrt(2.0) * f.sensitivity / per
            note = "equal-split reference; iReduct lowers the noise where it matters"
        return AlgorithmPlan(stages=[], memory=memory, seconds=0.0,
                             work={**_counting(f, m), "ireduct": f.total_cells, **_synthesis(f)[1]},
                             queries=f"{m} marginals", noise_sd=sd, noise_note=note)

    return predict


def _fourier(f: Facts) -> AlgorithmPlan:
    from dpsynth.algorithms.fourier import coefficient_sensitivity, lp_entries, resolve_fit

    p = f.config.params
    cells, size, entries = lp_entries(f.config.domain, f.config.marginals)
    try:
        chosen, why = resolve_fit(f.config.domain, f.config.marginals, p)
    except ConfigError as exc:  # the plan still shows what it would take
        chosen, why = ("mw" if p.fit == "auto" else p.fit), f"release refuses this configuration: {exc}"
    measured = max(size - 1, 1)
    sens = coefficient_sensitivity(measured, f.config.privacy.neighbouring)
    per_entry = _FOURIER_LP_ENTRY if chosen == "lp" else 2  # MW: the int8 character matrix and its assembly
    notes = [why] + ([f"the LP stops at lp_time_limit = {p.lp_time_limit:g} s"] if chosen == "lp" else [])
    return AlgorithmPlan(
        stages=[],  # from the algorithm's budget_plan (plan/budget.py)
        memory={"exact counts cached by the engine": _COUNT_CELL * f.total_cells,
                f"table fit ({chosen}): {cells:,} cells x {size:,} coefficients": per_entry * entries + 8 * 4 * cells},
        seconds=0.0,
        work={**_counting(f, len(f.marginal_cells)), "fourier_build": entries,
              **({"fourier_lp": entries} if chosen == "lp" else {"fourier_mw": p.mw_passes * entries})},
        queries=f"{measured:,} Fourier coefficients (the downward closure of {len(f.marginal_cells)} marginals)",
        noise_sd=math.sqrt(2.0) * sens / f.epsilon, noise_note="per coefficient, not per cell",
        notes=notes,
    )


def _auto(f: Facts) -> AlgorithmPlan:
    from dpsynth.algorithms import auto, get_algorithm

    name, raw, why = auto.choose(workload=f.config.marginals, delta=f.config.privacy.delta, n=float(f.rows),
                                 epsilon=f.epsilon, sizes=f.config.domain.sizes)
    base, _, scope = name.partition(":")
    params = get_algorithm(base).parse_params({**raw, "sampling": f.config.params.sampling})
    marginals = auto.scoped(scope, f.config.marginals)  # the workload the chosen algorithm is given
    config = dataclasses.replace(f.config, algorithm=base, params=params,
                                 workload=dataclasses.replace(f.config.workload, marginals=marginals))
    cells = [config.domain.cells(m) for m in marginals]
    chosen = dataclasses.replace(f, config=config, marginal_cells=cells, total_cells=int(sum(cells)),
                                 largest=max(cells, default=0))
    out = PREDICTORS[base](chosen)
    out.notes = [f"auto chooses {name}: {why[-1]}", *out.notes]
    return out


PREDICTORS: dict[str, Callable[[Facts], AlgorithmPlan]] = {
    "auto": _auto,
    "aim": _aim,
    "fourier": _fourier,
    "laplace": _laplace,
    "mwem": _mwem,
    "dualquery": _dualquery,
    "ireduct": _ireduct_like("ireduct"),
    "twophase": _ireduct_like("twophase"),
    "iresamp": _ireduct_like("iresamp"),
}
"""One memory/budget/time predictor per algorithm: update it when the algorithm changes."""

