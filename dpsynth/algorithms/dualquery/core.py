"""``dualquery``: DualQuery (Gaboardi, Gallego Arias, Hsu, Roth, Wu 2014, Algorithm 2).

The query player runs multiplicative weights over the 2|Q| queries (each
conjunction and its negation, §3); each round samples s queries from its
distribution (the only access to the data, charged as s exponential
mechanisms: see :mod:`dpsynth.algorithms.dualquery.accounting`), and the data player best-responds
with the valid row that satisfies the most sampled clauses (§5).  The T best
responses are the synthetic data.

Sign of the update (deviation from Algorithm 2 as printed).  Algorithm 2
writes Q^{t+1}_q ∝ exp(−η·A_D(xᵗ, q)) and a best response maximising A_D,
which contradicts §4/§5 (the data player *minimises* the payoff
A(x, q) = q(D) − q(x), i.e. maximises Σᵢ q̂ᵢ(x)) and makes the proof of
Theorem 4.2 (weights ∝ exp(η·Σ_{i<t}(q(D) − q(xⁱ)))) inconsistent.  We follow
the proof and the authors' code: log-weights r_q = Σ_{i<t} (q(D) − q(xⁱ)),
weight ∝ exp(+η·r_q), so queries the chosen records under-serve gain weight.
For a negation, q̄(D) − q̄(x) = −(q(D) − q(x)), so its log-weight is −η·r_q.

Best response (§5, plus exactly-one constraints so that every record is a
valid row; see :mod:`dpsynth.algorithms.dualquery.solver`): a vectorized local search over valid
rows (greedy best-improvement moves with random kicks), then CBC warm-started
with it; the better one is kept.  ``best_response: local`` skips CBC, ``ip``
runs CBC alone.  Free columns (touched by no sampled clause) follow the
paper's §7 heuristic: ``first`` (code 0, the paper's "set to 0" on 0/1
data) or ``uniform`` (uniformly random value).

Parameters: give any two of T, s, eta; the missing one is solved so the
ledger total meets privacy.epsilon (dq_privacy.solve_parameters).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from dpsynth.algorithms.base import AlgorithmContext, AlgorithmOutput
from dpsynth.algorithms.dualquery.accounting import (
    STAGE,
    DualQueryComposition,
    all_accountings,
    round_charge,
    solve_parameters,
)
from dpsynth.algorithms.spec import AlgorithmSpec
from dpsynth.errors import ConfigError
from dpsynth.models.mixture import RecordsModel
from dpsynth.params import params_from_mapping
from dpsynth.workload.conjunctions import Clauses, Conjunctions, conjunction_counts, conjunction_workload

__all__ = [
    "LocalSearchParams",
    "Params",
    "SolverParams",
    "best_response",
    "composition",
    "local_search",
    "mw_logits",
    "parse_params",
    "run",
    "sample_queries",
]


_LARGEST_T = 10_000
"""Upper limit of T and max_T: the solver and the ledger build one charge per round."""


@dataclass(frozen=True, kw_only=True)
class SolverParams:
    time_limit: float = 20.0  # seconds per round for the whole best response
    gap: float = 0.0  # CBC relative gap
    threads: int = 1

    def __post_init__(self) -> None:
        if not self.time_limit > 0:
            raise ConfigError(f"algorithm.params.solver.time_limit: must be > 0, got {self.time_limit!r}")
        if not 0 <= self.gap < 1:
            raise ConfigError(f"algorithm.params.solver.gap: must be in [0, 1), got {self.gap!r}")
        if self.threads < 1:
            raise ConfigError(f"algorithm.params.solver.threads: must be >= 1, got {self.threads!r}")


@dataclass(frozen=True, kw_only=True)
class LocalSearchParams:
    restarts: int = 2  # random starting rows (plus the previous round's record)
    kicks: int = 100  # stop a start after this many random 3-column kicks without improvement

    def __post_init__(self) -> None:
        if self.restarts < 0 or self.kicks < 0:
            raise ConfigError("algorithm.params.local_search: restarts and kicks must be >= 0")


@dataclass(frozen=True, kw_only=True)
class Params:
    T: int | None = None
    s: int | None = None
    eta: float | None = None
    accounting: Literal["auto", "pure", "thm43", "advanced", "zcdp"] = "auto"
    best_response: Literal["hybrid", "local", "ip"] = "hybrid"
    free_attributes: Literal["first", "uniform"] = "first"
    solver: SolverParams = field(default_factory=SolverParams)
    local_search: LocalSearchParams = field(default_factory=LocalSearchParams)
    max_T: int = 2000

    def __post_init__(self) -> None:
        if self.T is not None and self.T < 2:
            raise ConfigError(f"algorithm.params.T: must be >= 2, got {self.T!r}")
        if self.s is not None and self.s < 1:
            raise ConfigError(f"algorithm.params.s: must be >= 1, got {self.s!r}")
        if self.eta is not None and not self.eta > 0:
            raise ConfigError(f"algorithm.params.eta: must be > 0, got {self.eta!r}")
        if self.max_T < 2:
            raise ConfigError(f"algorithm.params.max_T: must be >= 2, got {self.max_T!r}")
        if self.max_T > _LARGEST_T:
            raise ConfigError(f"algorithm.params.max_T: must be <= {_LARGEST_T}, got {self.max_T!r}")
        if self.T is not None and self.T > self.max_T:
            raise ConfigError(f"algorithm.params.T: must be <= max_T ({self.max_T}), got {self.T!r}")


def parse_params(raw: Mapping) -> Params:
    params = params_from_mapping(Params, raw)
    if params.best_response != "local":  # a missing CBC binary fails at config time, before any data
        from dpsynth.algorithms.dualquery.solver import mip_solver

        mip_solver(time_limit=params.solver.time_limit, gap=params.solver.gap, threads=params.solver.threads,
                   warm_start=False)
    return params


def composition(params: Params, privacy) -> DualQueryComposition:
    if params.accounting not in ("auto", "pure") and not privacy.delta > 0:
        raise ConfigError(
            f"algorithm.params.accounting: '{params.accounting}' needs privacy.delta > 0 "
            "(or use accounting: pure)"
        )
    return DualQueryComposition(params.accounting)


# ------------------------------------------------------------------ query player
def mw_logits(r: np.ndarray, eta: float) -> np.ndarray:
    """Log-weights of the 2Q queries: +η·r for the conjunctions, −η·r for their negations."""
    return np.concatenate([eta * r, -eta * r])


def sample_queries(logits: np.ndarray, s: int, *, rng: np.random.Generator) -> np.ndarray:
    """s i.i.d. indices with P(i) ∝ exp(logits[i]) (inverse CDF, max-shifted: no overflow)."""
    cdf = np.cumsum(np.exp(logits - logits.max()))
    u = rng.random(s) * cdf[-1]
    return np.minimum(np.searchsorted(cdf, u, side="right"), len(cdf) - 1)


# ------------------------------------------------------------------- data player
class _Instance:
    """Precomputed index arrays of one round's clauses for fast gain evaluation."""

    def __init__(self, clauses: Clauses, domain):
        self.cl = clauses
        self.d = len(domain)
        self.k = clauses.attrs.shape[1]
        self.owner, self.value = domain.bit_owner()
        self.lit_bit = np.asarray(domain.offsets)[clauses.attrs] + clauses.values
        self.pos = clauses.positive
        self.w = clauses.weights.astype(float)
        self.touched = np.unique(clauses.attrs)
        self.sizes = np.asarray(domain.sizes)

    def gains(self, rec: np.ndarray) -> np.ndarray:
        """Objective change of setting bit b's column to bit b's value, for every bit b.

        A clause's literal on column a is matched after the move iff the new
        value equals the literal's; the clause's matched-literal count goes
        from m to rest = m − match (other value) or rest + 1 (its value).
        """
        match = rec[self.cl.attrs] == self.cl.values
        m = match.sum(axis=1)
        sat = np.where(self.pos, m == self.k, m < self.k).astype(float)
        rest = m[:, None] - match
        sat_match = np.where(self.pos[:, None], rest + 1 == self.k, rest + 1 < self.k)
        sat_other = np.broadcast_to(~self.pos[:, None], match.shape)
        d_other = self.w[:, None] * (sat_other - sat[:, None])
        d_match = self.w[:, None] * (sat_match - sat[:, None])
        base = np.bincount(self.cl.attrs.ravel(), d_other.ravel(), minlength=self.d)
        diff = np.bincount(self.lit_bit.ravel(), (d_match - d_other).ravel(), minlength=len(self.owner))
        return base[self.owner] + diff

    def ascend(self, rec: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Best-improvement moves (ties broken at random) until no move gains."""
        rec = rec.copy()
        for _ in range(10 * len(self.owner) + len(self.cl)):  # each move gains >= 1: bounded
            g = self.gains(rec)
            best = g.max()
            if best <= 0.5:
                break
            b = rng.choice(np.flatnonzero(g >= best - 0.5))
            rec[self.owner[b]] = self.value[b]
        return rec


def local_search(
    clauses: Clauses, domain, *, starts: list[np.ndarray], kicks: int, rng: np.random.Generator, deadline: float
) -> tuple[np.ndarray, int]:
    """Iterated local search over valid rows from each start; returns the best row and its objective.

    From each start: greedy ascent, then repeated kicks (3 random touched columns set to random
    values, ascend again, accept if not worse) until ``kicks`` kicks in a row fail to improve
    or ``deadline`` (a ``time.perf_counter()`` value) passes.
    """
    inst = _Instance(clauses, domain)
    best, best_obj = None, -1
    for start in starts:  # loop over starting rows
        cur = inst.ascend(start, rng)
        cur_obj = clauses.objective(cur)
        stale = 0
        while stale < kicks and time.perf_counter() <= deadline:  # perturb until `kicks` fail in a row
            cand = cur.copy()
            cols = rng.choice(inst.touched, size=min(3, len(inst.touched)), replace=False)
            cand[cols] = rng.integers(0, inst.sizes[cols])
            cand = inst.ascend(cand, rng)
            obj = clauses.objective(cand)
            stale = 0 if obj > cur_obj else stale + 1
            if obj >= cur_obj:  # equal moves are accepted too (plateau walk)
                cur, cur_obj = cand, obj
        if cur_obj > best_obj:
            best, best_obj = cur, cur_obj
        if time.perf_counter() > deadline:
            break
    return best, best_obj


def best_response(
    clauses: Clauses, domain, params: Params, *, previous: np.ndarray | None, rng: np.random.Generator
) -> tuple[np.ndarray, dict]:
    """A valid row maximising the weighted number of satisfied clauses, and per-round facts."""
    from dpsynth.algorithms.dualquery.solver import solve_clauses_ip

    t0 = time.perf_counter()
    limit = params.solver.time_limit
    sizes = np.asarray(domain.sizes)
    info: dict = {"clauses": len(clauses), "samples": int(clauses.weights.sum())}
    rec, obj = None, -1
    if params.best_response in ("hybrid", "local"):
        starts = [rng.integers(0, sizes) for _ in range(params.local_search.restarts)]
        if previous is not None:
            starts.insert(0, previous.copy())
        if not starts:
            starts = [rng.integers(0, sizes)]
        budget = limit if params.best_response == "local" else 0.25 * limit
        rec, obj = local_search(
            clauses, domain, starts=starts, kicks=params.local_search.kicks, rng=rng, deadline=t0 + budget
        )
        info["local_objective"] = obj
    if params.best_response in ("hybrid", "ip"):
        base = rec if rec is not None else np.zeros(len(domain), dtype=np.int64)
        res = solve_clauses_ip(  # CBC stops by 90% of the round's limit (after building its model)
            clauses, domain, base=base, incumbent=rec, time_limit=limit,
            gap=params.solver.gap, threads=params.solver.threads, deadline=t0 + 0.9 * limit,
        )
        info.update(cbc_status=res.status, cbc_objective=res.objective, cbc_bound=res.bound, cbc_gap=res.gap)
        if res.codes is not None and res.objective is not None and res.objective > obj:
            rec, obj = res.codes, int(res.objective)
    if rec is None:  # CBC found nothing in time and no heuristic ran: any valid row
        rec = rng.integers(0, sizes)
        obj = clauses.objective(rec)
    info["objective"] = int(obj)
    info["seconds"] = round(time.perf_counter() - t0, 4)
    return rec, info


def _free(rec: np.ndarray, clauses: Clauses, domain, how: str, rng: np.random.Generator) -> np.ndarray:
    """Set the columns no sampled clause touches (§7 'free attributes')."""
    free = np.setdiff1d(np.arange(len(domain)), clauses.attrs)
    out = rec.copy()
    if how == "first":
        out[free] = 0
    else:
        out[free] = rng.integers(0, np.asarray(domain.sizes)[free])
    return out


# ----------------------------------------------------------------------- the run
def run(ctx: AlgorithmContext, params: Params, *, rng: np.random.Generator) -> AlgorithmOutput:
    ledger = ctx.ledger
    if not isinstance(ledger.composition, DualQueryComposition):
        raise TypeError("dualquery needs a ledger built with dualquery.composition(params, privacy)")
    given = ctx.queries.conjunctions if ctx.queries is not None else None
    queries = given if given is not None else conjunction_workload(None, ctx.domain, ctx.workload)
    n = float(ctx.n)
    true = np.clip(conjunction_counts(ctx.counts, queries) / n, 0.0, 1.0)
    sol = solve_parameters(
        epsilon=ledger.epsilon, delta=ledger.delta, n=n, composition=ledger.composition,
        prior=list(ledger.charges), T=params.T, s=params.s, eta=params.eta, max_T=params.max_T,
    )
    records, rounds = _iterate(ctx, params, queries, true, sol.T, sol.s, sol.eta, n, rng=rng)
    codes = expand_rows(records, ctx.rows, rng=rng)
    dq = [c for c in ledger.charges if c.stage == STAGE]
    delta_dq = ledger.delta - sum(c.delta for c in ledger.charges if c.stage != STAGE)
    warnings = []
    if sol.T < 20:
        warnings.append(
            f"dualquery: only T={sol.T} rounds fit the budget at this n; the synthetic data has {sol.T} "
            "distinct records at most and MWEM is likely more accurate"
        )
    details = {
        "T": sol.T, "s": sol.s, "eta": sol.eta, "solved_for": sol.solved,
        "accounting_requested": params.accounting,
        "accounting_used": ledger.composition.chosen(ledger.charges, ledger.delta),
        # δ-based accountings are infinite when δ = 0: null in the (strict) JSON report
        "epsilon_by_accounting": {
            k: (v if math.isfinite(v) else None) for k, v in all_accountings(dq, delta_dq).items()
        },
        "delta": delta_dq if delta_dq > 0 else 0.0,
        "n_used": n,
        "per_sample_epsilon": "round t costs s samples of 2*eta*(t-1)/n each (see the ledger)",
        "queries": len(queries), "queries_with_negations": 2 * len(queries), "k": queries.k,
        "best_response": params.best_response, "free_attributes": params.free_attributes,
        "solver": {"time_limit": params.solver.time_limit, "gap": params.solver.gap,
                   "threads": params.solver.threads},
        "synthesis": f"the T={sol.T} best responses; {ctx.rows} rows drawn from them (post-processing)",
        "rounds": rounds,
    }
    # Wall times stay out of the report (no run times in a release): library callers get them here.
    diagnostics = {"round_seconds": [r.pop("seconds") for r in rounds]}
    model = RecordsModel(records, ctx.domain.sizes)  # the T best responses, for later sampling
    return AlgorithmOutput(model=model, codes=codes, details=details, warnings=warnings, diagnostics=diagnostics)


def _iterate(ctx, params, queries: Conjunctions, true, T, s, eta, n, *, rng):
    """Algorithm 2's loop: charge, sample s of the 2Q queries, best-respond, update r."""
    r = np.zeros(len(queries))  # r_q = Σ_{i<t} (q(D) − q(xⁱ))
    records = np.empty((T, len(ctx.domain)), dtype=np.int64)
    rounds, previous = [], None
    for t in range(1, T + 1):  # loop over rounds
        ctx.ledger.charge(round_charge(t, s=s, eta=eta, n=n))
        sample = sample_queries(mw_logits(r, eta), s, rng=rng)
        clauses = Clauses.from_samples(queries, sample)
        rec, info = best_response(clauses, ctx.domain, params, previous=previous, rng=rng)
        previous = rec
        rec = _free(rec, clauses, ctx.domain, params.free_attributes, rng)
        records[t - 1] = rec
        r += true - queries.satisfied(rec)
        rounds.append({"t": t, **info})
        ctx.progress("dualquery", t, T)
    return records, rounds


def expand_rows(records: np.ndarray, rows: int, *, rng: np.random.Generator) -> np.ndarray:
    """``rows`` rows from the T records: each repeated ⌊rows/T⌋ times, the rest drawn without replacement."""
    T = records.shape[0]
    reps, extra = divmod(rows, T)
    idx = np.concatenate([np.repeat(np.arange(T), reps), rng.choice(T, size=extra, replace=False)])
    return records[rng.permutation(idx)]


SPEC = AlgorithmSpec(
    name="dualquery",
    summary="DualQuery: a zero-sum game solved by sampled best responses (Gaboardi et al. 2014)",
    params=Params,
    run=run,
    composition=composition,
    workload=frozenset({"marginals", "conjunctions"}),
    audit_params=({}, {"accounting": "advanced"}, {"accounting": "zcdp"}, {"free_attributes": "uniform"}),
    needs_delta=lambda raw: raw.get("accounting") in ("advanced", "thm43", "zcdp"),
)
