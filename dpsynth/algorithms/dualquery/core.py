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
rows (greedy best-improvement moves with random kicks; ``best_response: local``, the default),
then in ``hybrid`` mode CBC warm-started with it (the better one is kept); ``ip`` runs CBC alone.
The work of every round is a fixed amount (kicks, CBC nodes), never a time: the rows are a function
of the data, the seed and the configuration (:data:`BUDGET_GOVERNS`).  Free columns (touched by no sampled clause) follow the
paper's §7 heuristic: ``first`` (code 0, the paper's "set to 0" on 0/1
data) or ``uniform`` (uniformly random value).

Parity queries (§6, ``workload.parities``) run through the same loop, accounting
and report: they are measured in their 0/1 form (fraction of rows with an even
count, so q(D) moves by at most 1/n as for conjunctions), the local search
recounts flipped parities, and CBC solves §6's integer program
(:func:`~dpsynth.algorithms.dualquery.solver.build_model`).

Parameters: give any two of T, s, eta; the missing one is solved so the
ledger total meets privacy.epsilon (dq_privacy.solve_parameters).  Or give
the target accuracy alpha and failure probability beta instead: Algorithm 2's
T = ⌈16 ln|𝒬|/α²⌉, η = α/4, s = ⌈48 ln(2|X|T/β)/α²⌉
(:func:`~dpsynth.algorithms.dualquery.accounting.algorithm2_parameters`),
checked against the budget; Theorem 4.6 then bounds every query's error by α
with probability 1 − β.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal

import numpy as np

from dpsynth.algorithms.base import AlgorithmContext, AlgorithmOutput
from dpsynth.algorithms.dualquery.accounting import (
    STAGE,
    DualQueryComposition,
    ErrorOutlook,
    all_accountings,
    expected_error,
    round_charge,
    round_charges,
    solve_parameters,
)
from dpsynth.algorithms.spec import AlgorithmSpec, PlannedStage
from dpsynth.errors import ConfigError
from dpsynth.models.mixture import RecordsModel
from dpsynth.params import params_from_mapping
from dpsynth.privacy.mechanisms import exponential_samples_mechanism
from dpsynth.workload.conjunctions import Clauses, Conjunctions, conjunction_counts, conjunction_workload
from dpsynth.workload.parities import Parities, ParityClauses, parity_counts

__all__ = [
    "LocalSearchParams",
    "Params",
    "SolverParams",
    "best_response",
    "composition",
    "configured_queries",
    "local_search",
    "mw_logits",
    "outlook",
    "parse_params",
    "run",
    "sample_queries",
    "true_answers",
]


_LARGEST_T = 10_000
"""Upper limit of T and max_T: the solver and the ledger build one charge per round."""


_NO_CLOCK = ("DualQuery's budget is deterministic work now, so that the rows are a function of the data, "
             "seed and config alone (docs/dualquery.md, \"Work budget\")")


@dataclass(frozen=True, kw_only=True)
class SolverParams:
    REMOVED_KEYS: ClassVar[dict[str, str]] = {
        "time_limit": f"removed: {_NO_CLOCK}; limit CBC with solver.max_nodes instead, and delete this key",
    }
    max_nodes: int = 100  # CBC branch-and-bound nodes per round (CBC's repeatable limit)
    gap: float = 0.0  # CBC relative gap
    threads: int = 1  # more than one: CBC's repeatable parallel mode
    safety_seconds: float = 600.0  # wall-clock stop for one CBC call; when hit the round is flagged

    def __post_init__(self) -> None:
        if self.max_nodes < 0:
            raise ConfigError(f"algorithm.params.solver.max_nodes: must be >= 0, got {self.max_nodes!r}")
        if not (self.safety_seconds > 0 and math.isfinite(self.safety_seconds)):
            raise ConfigError(f"algorithm.params.solver.safety_seconds: must be a number of seconds > 0, got "
                              f"{self.safety_seconds!r}")
        if not 0 <= self.gap < 1:
            raise ConfigError(f"algorithm.params.solver.gap: must be in [0, 1), got {self.gap!r}")
        if self.threads < 1:
            raise ConfigError(f"algorithm.params.solver.threads: must be >= 1, got {self.threads!r}")


@dataclass(frozen=True, kw_only=True)
class LocalSearchParams:
    restarts: int = 2  # random starting rows (plus the previous round's record)
    kicks: int = 100  # stop a start after this many random 3-column kicks without improvement
    max_kicks: int = 1000  # and after this many kicks in all (a fixed amount of work per start)

    def __post_init__(self) -> None:
        if self.restarts < 0 or self.kicks < 0 or self.max_kicks < 0:
            raise ConfigError("algorithm.params.local_search: restarts, kicks and max_kicks must be >= 0")


@dataclass(frozen=True, kw_only=True)
class Params:
    REMOVED_KEYS: ClassVar[dict[str, str]] = {
        "time_budget": f"removed: {_NO_CLOCK}; the work is set by local_search (kicks, max_kicks) and "
                       "solver.max_nodes; delete this key",
    }
    T: int | None = None
    s: int | None = None
    eta: float | None = None
    alpha: float | None = None  # target max error (Algorithm 2); with beta, replaces T, s and eta
    beta: float | None = None  # failure probability of the alpha guarantee (Theorem 4.6)
    accounting: Literal["auto", "pure", "thm43", "advanced", "zcdp"] = "auto"
    best_response: Literal["hybrid", "local", "ip"] = "local"
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
        self._check_accuracy_target()

    def _check_accuracy_target(self) -> None:
        """alpha and beta (Algorithm 2) come together, each in (0, 1), and replace T, s and eta."""
        for key in ("alpha", "beta"):
            value = getattr(self, key)
            if value is not None and not 0 < value < 1:
                raise ConfigError(f"algorithm.params.{key}: must be in (0, 1), got {value!r}")
        if (self.alpha is None) != (self.beta is None):
            given, missing = ("alpha", "beta") if self.alpha is not None else ("beta", "alpha")
            raise ConfigError(f"algorithm.params.{given}: give {missing} too (Algorithm 2 derives T, s and eta "
                              "from alpha and beta together)")
        clash = [k for k in ("T", "s", "eta") if getattr(self, k) is not None]
        if self.alpha is not None and clash:
            raise ConfigError(f"algorithm.params.alpha: alpha and beta derive T, s and eta (Algorithm 2); remove "
                              f"{', '.join(clash)} or remove alpha and beta")


def parse_params(raw: Mapping) -> Params:
    params = params_from_mapping(Params, raw)
    if params.best_response != "local":  # a missing CBC binary fails at config time, before any data
        from dpsynth.algorithms.solvers import mip_solver

        mip_solver(max_nodes=params.solver.max_nodes, gap=params.solver.gap, threads=params.solver.threads,
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


def sample_queries(r: np.ndarray, eta: float, s: int, *, charge, ledger, rng: np.random.Generator) -> np.ndarray:
    """Charge round t's ``charge``, then s i.i.d. indices of the 2Q queries with P(i) ∝ exp(η·(r, −r)ᵢ),
    sampled exactly (:func:`dpsynth.privacy.mechanisms.exponential_samples_mechanism`: η and r taken as
    the rationals their doubles represent; each sample is the exponential mechanism of the proof of
    Theorem 4.2 with scores (r, −r) of sensitivity (t−1)/n and ε = 2η(t−1)/n)."""
    return exponential_samples_mechanism(np.concatenate([r, -r]), s, weight=eta, charge=charge, ledger=ledger,
                                         rng=rng)


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

    def _sat(self, m: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """Is a clause with m matched literals satisfied?  Conjunction: all k; negation: fewer."""
        return np.where(pos, m == self.k, m < self.k)

    def gains(self, rec: np.ndarray) -> np.ndarray:
        """Objective change of setting bit b's column to bit b's value, for every bit b.

        A clause's literal on column a is matched after the move iff the new
        value equals the literal's; the clause's matched-literal count goes
        from m to rest = m − match (other value) or rest + 1 (its value).
        """
        match = rec[self.cl.attrs] == self.cl.values
        m = match.sum(axis=1)
        sat = self._sat(m, self.pos).astype(float)
        rest = m[:, None] - match
        sat_match = self._sat(rest + 1, self.pos[:, None])
        sat_other = self._sat(rest, self.pos[:, None])
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


class _ParityInstance(_Instance):
    """The same moves for parity clauses (§6): satisfied when the matched count is even (negation: odd)."""

    def _sat(self, m: np.ndarray, pos: np.ndarray) -> np.ndarray:
        return (m % 2 == 0) == pos


def _instance(clauses, domain) -> _Instance:
    return _ParityInstance(clauses, domain) if isinstance(clauses, ParityClauses) else _Instance(clauses, domain)


def _clauses(queries, sample: np.ndarray):
    """One round's best-response instance from the sampled indices into the 2Q queries."""
    if isinstance(queries, Parities):
        return ParityClauses.from_samples(queries, sample)
    return Clauses.from_samples(queries, sample)


def true_answers(counts, queries, n: float) -> np.ndarray:
    """q(D) for every query, in [0, 1] (conjunctions: fraction satisfying; parities: fraction even)."""
    exact = parity_counts(counts, queries) if isinstance(queries, Parities) else conjunction_counts(counts, queries)
    return np.clip(exact / n, 0.0, 1.0)


def local_search(
    clauses: Clauses, domain, *, starts: list[np.ndarray], kicks: int, max_kicks: int, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """Iterated local search over valid rows from each start; returns the best row and its objective.

    From each start: greedy ascent, then repeated kicks (3 random touched columns set to random
    values, ascend again, accept if not worse) until ``kicks`` kicks in a row fail to improve or
    ``max_kicks`` kicks are done.  The work is counted in moves, never timed: the row is a function
    of the clauses, the starts and ``rng``.
    """
    inst = _instance(clauses, domain)
    best, best_obj = None, -1
    for start in starts:  # loop over starting rows
        cur = inst.ascend(start, rng)
        cur_obj = clauses.objective(cur)
        stale = 0
        for _ in range(max_kicks):  # perturb until `kicks` fail in a row
            if stale >= kicks:
                break
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
    return best, best_obj


def best_response(
    clauses: Clauses,
    domain,
    params: Params,
    *,
    previous: np.ndarray | None,
    rng: np.random.Generator,
) -> tuple[np.ndarray, dict]:
    """A valid row maximising the weighted number of satisfied clauses, and per-round facts.

    The work is fixed by the configuration, never by the clock: the local search makes at most
    ``local_search.max_kicks`` kicks per start, CBC (``hybrid``: warm-started from the local search's
    row; ``ip``: alone) explores at most ``solver.max_nodes`` nodes, so the row and ``info`` (but
    ``seconds``) are functions of the clauses, the settings and ``rng``.  A CBC failure
    (:data:`dpsynth.algorithms.dualquery.solver.FAILURES`) keeps the heuristic's row, which is still an
    approximate best response to the same sampled clauses (Theorem 4.6 needs only an approximate
    maximiser); ``info["cbc_failure"]`` names the cause.  Only ``safety-stop`` (CBC killed after
    ``solver.safety_seconds`` of wall time) depends on the machine, and the report counts it.
    """
    t0 = time.perf_counter()
    info: dict = {"clauses": len(clauses), "samples": int(clauses.weights.sum())}
    rec, obj = None, -1
    if params.best_response in ("hybrid", "local"):
        rec, obj = _heuristic(clauses, domain, params, previous, rng)
        info["local_objective"] = obj
    if params.best_response in ("hybrid", "ip"):
        rec, obj = _cbc(clauses, domain, params, rec, obj, info)
        if rec is None:  # CBC alone failed: the heuristic's row after all
            rec, obj = _heuristic(clauses, domain, params, previous, rng)
            info["local_objective"] = obj
    info["objective"] = int(obj)
    info["seconds"] = round(time.perf_counter() - t0, 4)  # diagnostics only: popped before the report
    return rec, info


def _heuristic(clauses, domain, params, previous, rng) -> tuple[np.ndarray, int]:
    sizes = np.asarray(domain.sizes)
    starts = [rng.integers(0, sizes) for _ in range(params.local_search.restarts)]
    if previous is not None:
        starts.insert(0, previous.copy())
    if not starts:
        starts = [rng.integers(0, sizes)]
    ls = params.local_search
    return local_search(clauses, domain, starts=starts, kicks=ls.kicks, max_kicks=ls.max_kicks, rng=rng)


def _cbc(clauses, domain, params, rec, obj, info):
    """CBC warm-started from ``rec`` with the node limit; the better row of the two."""
    from dpsynth.algorithms.dualquery.solver import solve_clauses_ip

    base = rec if rec is not None else np.zeros(len(domain), dtype=np.int64)
    sp = params.solver
    res = solve_clauses_ip(clauses, domain, base=base, incumbent=rec, max_nodes=sp.max_nodes, gap=sp.gap,
                           threads=sp.threads, safety_seconds=sp.safety_seconds)
    info.update(cbc_status=res.status, cbc_objective=res.objective, cbc_bound=res.bound, cbc_gap=res.gap)
    if res.failure is not None:
        info["cbc_failure"] = res.failure
    if res.codes is not None and res.objective is not None and res.objective > obj:
        return res.codes, int(res.objective)
    return rec, obj


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
def _solve(ledger, params: Params, n: float, n_queries: int, log_universe: float):
    """T, s and η for the budget the ledger has left (the charges already in it are the prior)."""
    accuracy = (params.alpha, params.beta, n_queries, log_universe) if params.alpha is not None else None
    return solve_parameters(
        epsilon=ledger.epsilon, delta=ledger.delta, n=n, composition=ledger.composition,
        prior=list(ledger.charges), T=params.T, s=params.s, eta=params.eta, max_T=params.max_T, accuracy=accuracy,
    )


def budget_plan(ctx: AlgorithmContext, params: Params) -> list[PlannedStage]:
    """What :func:`run` charges: one entry per round t, s samples at ε'ₜ each (T, s, η solved at the public n)."""
    queries = configured_queries(ctx.queries, ctx.domain, ctx.workload)
    n = float(ctx.n)
    sol = _solve(ctx.ledger, params, n, len(queries), _log_universe(ctx.domain))
    charges = round_charges(T=sol.T, s=sol.s, eta=sol.eta, n=n)
    return [PlannedStage(stage=STAGE, charges=sol.T, total=sum(c.epsilon for c in charges),
                         epsilon=tuple(c.epsilon for c in charges),
                         text=(f"T={sol.T} rounds of s={sol.s} query samples, eta={sol.eta:.4g} "
                               f"(solved for {_solved_words(sol.solved)} at n={n:,.0f})"))]


def _solved_words(solved: str) -> str:
    """SolvedParameters.solved ("T,s", "eta", "alpha,beta", "none") in words."""
    if solved == "alpha,beta":
        return "T, s and eta from alpha and beta (Algorithm 2)"
    return "nothing" if solved == "none" else solved.replace(",", " and ")


BUDGET_GOVERNS = ("deterministic work: each round's best response makes at most local_search.max_kicks kicks per "
                  "start (stopping earlier after local_search.kicks kicks without improvement) and CBC explores at "
                  "most solver.max_nodes branch-and-bound nodes; no clock decides anything, so the rows and this "
                  "report are functions of the data, the seed and the configuration alone. solver.safety_seconds "
                  "is a wall-clock safety stop for one CBC call: a call it stops keeps the local-search row and is "
                  "counted as 'safety-stop' in rounds_solver_failed (those rounds then depend on the machine)")


def run(ctx: AlgorithmContext, params: Params, *, rng: np.random.Generator) -> AlgorithmOutput:
    ledger = ctx.ledger
    if not isinstance(ledger.composition, DualQueryComposition):
        raise TypeError("dualquery needs a ledger built with dualquery.composition(params, privacy)")
    queries = configured_queries(ctx.queries, ctx.domain, ctx.workload)
    n = float(ctx.n)
    true = true_answers(ctx.counts, queries, n)
    prior = list(ledger.charges)
    log_universe = _log_universe(ctx.domain)
    sol = _solve(ledger, params, n, len(queries), log_universe)
    solved = params if params.alpha is not None else dataclasses.replace(params, T=sol.T, s=sol.s, eta=sol.eta)
    view = expected_error(n, ledger.epsilon, ledger.delta, solved, n_queries=len(queries), log_universe=log_universe,
                          prior=prior)
    if view.message:
        ctx.notice(view.message)  # before the rounds: a user can stop a run that will not be useful
    records, rounds = _iterate(ctx, params, queries, true, sol.T, sol.s, sol.eta, n, rng=rng)
    codes = expand_rows(records, ctx.rows, rng=rng)
    dq = [c for c in ledger.charges if c.stage == STAGE]
    delta_dq = ledger.delta - sum(c.delta for c in ledger.charges if c.stage != STAGE)
    warnings = []
    failed = _failures(rounds)
    if failed:
        causes = ", ".join(f"{k} {v}" for k, v in failed.items())
        warnings.append(
            f"dualquery: CBC failed in {sum(failed.values())} of {sol.T} rounds ({causes}); those rounds kept "
            "the local-search row (an approximate best response; privacy is unaffected)"
        )
    if "safety-stop" in failed:
        warnings.append(
            f"dualquery: the wall-clock safety stop (solver.safety_seconds = {params.solver.safety_seconds:g}) "
            f"ended CBC in {failed['safety-stop']} rounds, so this release depends on the machine's speed and "
            "load and a rerun with the same seed may differ: lower solver.max_nodes or raise solver.safety_seconds"
        )
    if view.message:
        warnings.append(view.message)
    details = {
        "T": sol.T, "s": sol.s, "eta": sol.eta, "solved_for": sol.solved,
        "accuracy_target": _accuracy_target(params, sol, view),
        "accounting_requested": params.accounting,
        "accounting_used": ledger.composition.chosen(ledger.charges, ledger.delta),
        # δ-based accountings are infinite when δ = 0: null in the (strict) JSON report
        "epsilon_by_accounting": {
            k: (v if math.isfinite(v) else None) for k, v in all_accountings(dq, delta_dq).items()
        },
        "delta": delta_dq if delta_dq > 0 else 0.0,
        "n_used": n,
        "per_sample_epsilon": "round t costs s samples of 2*eta*(t-1)/n each (see the ledger)",
        "query_class": "parity" if isinstance(queries, Parities) else "conjunction",
        "queries": len(queries), "queries_with_negations": 2 * len(queries), "k": queries.k,
        "best_response": params.best_response, "free_attributes": params.free_attributes,
        # the configuration's work settings (public); measured times never enter the report
        "solver": {"max_nodes": params.solver.max_nodes, "gap": params.solver.gap, "threads": params.solver.threads,
                   "safety_seconds": params.solver.safety_seconds, "local_search_kicks": params.local_search.kicks,
                   "local_search_max_kicks": params.local_search.max_kicks,
                   "local_search_restarts": params.local_search.restarts, "budget_governs": BUDGET_GOVERNS},
        "rounds_solver_failed": failed,
        "outlook": {"verdict": view.verdict, "theorem_alpha": view.theorem_alpha, "resolution": view.resolution},
        "synthesis": f"the T={sol.T} best responses; {ctx.rows} rows drawn from them (post-processing)",
        "rounds": rounds,
    }
    # Wall times stay out of the report (no run times in a release): library callers get them here.
    diagnostics = {"round_seconds": [r.pop("seconds") for r in rounds]}
    model = RecordsModel(records, ctx.domain.sizes)  # the T best responses, for later sampling
    return AlgorithmOutput(model=model, codes=codes, details=details, warnings=warnings, diagnostics=diagnostics,
                           params=solved)


def _accuracy_target(params: Params, sol, view: ErrorOutlook) -> dict | None:
    """The given alpha/beta and the T, s, eta Algorithm 2 derives from them (None when T/s/eta were given)."""
    if params.alpha is None:
        return None
    return {"alpha": params.alpha, "beta": params.beta, "T": sol.T, "s": sol.s, "eta": sol.eta,
            "rule": "Algorithm 2: T = ceil(16 ln|Q|/alpha^2), eta = alpha/4, s = ceil(48 ln(2|X|T/beta)/alpha^2), "
                    "|Q| counting negations, ln|X| = sum of ln|column|",
            "theorem_alpha": view.theorem_alpha}


def configured_queries(workload, domain, marginals) -> Conjunctions | Parities:
    """The configured parities, else the configured conjunctions, else every cell of the marginals."""
    if workload is not None and workload.parities is not None:
        return workload.parities
    given = workload.conjunctions if workload is not None else None
    return given if given is not None else conjunction_workload(None, domain, marginals)


def _log_universe(domain) -> float:
    """ln |X|: the natural log of the number of rows of the domain."""
    return float(np.log(np.asarray(domain.sizes, dtype=float)).sum())


def outlook(config, n: float) -> ErrorOutlook:
    """:func:`~dpsynth.algorithms.dualquery.accounting.expected_error` for a parsed DualQuery config.

    ``n`` is the public row count (or the value a user expects); public information only, so
    ``dpsynth plan`` and ``algorithm: auto`` may call it before any data is read.  With
    ``privacy.n`` noisy, the row count's ε is deducted as the release will.
    """
    from dpsynth.privacy.accountant import Charge

    queries = configured_queries(config.workload, config.domain, config.marginals)
    prior = []
    if not config.privacy.n_public:
        prior = [Charge(stage="row-count", mechanism="geometric", sensitivity=1.0, epsilon=config.privacy.n_epsilon,
                        measured="number of rows n")]
    return expected_error(n, config.privacy.epsilon, config.privacy.delta, config.params, n_queries=len(queries),
                          log_universe=_log_universe(config.domain), prior=prior)


def _failures(rounds: list[dict]) -> dict[str, int]:
    """Rounds whose CBC call failed, by cause (in the order of ``solver.FAILURES``)."""
    from dpsynth.algorithms.dualquery.solver import FAILURES

    causes = [r["cbc_failure"] for r in rounds if "cbc_failure" in r]
    return {c: causes.count(c) for c in FAILURES if c in causes}


def _iterate(ctx, params, queries: Conjunctions | Parities, true, T, s, eta, n, *, rng):
    """Algorithm 2's loop: charge, sample s of the 2Q queries, best-respond, update r (no clock anywhere)."""
    r = np.zeros(len(queries))  # r_q = Σ_{i<t} (q(D) − q(xⁱ))
    records = np.empty((T, len(ctx.domain)), dtype=np.int64)
    rounds, previous = [], None
    for t in range(1, T + 1):  # loop over rounds
        sample = sample_queries(r, eta, s, charge=round_charge(t, s=s, eta=eta, n=n), ledger=ctx.ledger, rng=rng)
        clauses = _clauses(queries, sample)
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
    workload=frozenset({"marginals", "conjunctions", "parities"}),
    audit_params=({}, {"accounting": "advanced"}, {"accounting": "zcdp"}, {"free_attributes": "uniform"}),
    needs_delta=lambda raw: raw.get("accounting") in ("advanced", "thm43", "zcdp"),
    budget_plan=budget_plan,
    no_error_bounds=("its release is a set of rows chosen by sampled best responses: no noisy per-marginal "
                    "measurement, so no error bound follows from its outputs"),
)
