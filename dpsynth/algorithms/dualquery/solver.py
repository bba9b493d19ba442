"""The mixed-integer solver behind DualQuery's best response (Gaboardi et al. 2014, §5).

:func:`mip_solver` is the one place that chooses and configures the solver:
PuLP's ``PULP_CBC_CMD`` (PuLP < 4 ships the CBC binary); :func:`lp_solver`, its
sibling, configures the same CBC for the linear program of ``algorithm: fourier``.  :func:`solve_clauses_ip`
builds the §5 integer program for one round and solves it.

The program (the paper's encoding plus one-hot rows): a binary xᵦ per bit of
the binary-attribute view (only bits of columns some clause touches), a
clause variable cⱼ ∈ [0, 1] per distinct sampled clause with weight wⱼ (its
multiplicity), and

* maximise Σⱼ wⱼ·cⱼ;
* positive clause (x_a ∧ x_b ∧ x_c): cⱼ ≤ x_ℓ for each of its literals ℓ;
* negated clause (¬x_a ∨ ¬x_b ∨ ¬x_c): cⱼ ≤ Σ_ℓ (1 − x_ℓ);
* exactly one bit per touched column: Σ_{v} x_{(col, v)} = 1.  The paper's
  binarisation has no such constraint, so its records may switch on two
  values of one original attribute (or none); ours are always valid rows.

cⱼ may be continuous: for integral x the optimum sets cⱼ to the clause's
truth value, so the objective counts satisfied clauses.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
import time
import warnings
from dataclasses import dataclass

import numpy as np

from dpsynth.errors import ConfigError

__all__ = ["IPResult", "lp_solver", "mip_solver", "solve_clauses_ip"]

_IO_RESERVE = 0.5
"""Seconds kept for writing the model, starting CBC and reading its solution."""


@dataclass(frozen=True)
class IPResult:
    """Outcome of one CBC call (all values are functions of the clauses only)."""

    codes: np.ndarray | None  # best record found by CBC (full row of codes), None if none
    objective: float | None
    status: str  # "optimal", "time-limit", "gap-limit", "infeasible", "not-solved", ...
    bound: float | None  # CBC's best bound on the optimum, when it reports one
    gap: float | None  # (bound - objective) / max(1, |objective|)
    seconds: float


def mip_solver(*, time_limit: float, gap: float, threads: int, warm_start: bool, log_path: str | None = None):
    """PuLP's CBC command with a time limit (s), relative gap, threads and warm start; quiet.

    Raises ConfigError (one line) if the CBC binary is missing.
    """
    import pulp

    with warnings.catch_warnings():
        # PuLP 3.x announces PULP_CBC_CMD's removal in 4.0; we pin pulp<4 for its bundled CBC.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        solver = pulp.PULP_CBC_CMD(
            msg=False,
            timeLimit=float(time_limit),
            gapRel=float(gap),
            threads=int(threads),
            warmStart=bool(warm_start),
            logPath=log_path,
        )
    if not solver.available():
        raise ConfigError(
            "algorithm.params.best_response: the CBC solver binary is not available; install "
            "'pulp<4' (its wheel ships CBC) or set best_response: local"
        )
    return solver


def lp_solver(*, time_limit: float):
    """CBC for a pure linear program (``algorithm: fourier``): one thread, a time limit (s), quiet.

    Raises ConfigError (one line) if the CBC binary is missing.
    """
    try:
        return mip_solver(time_limit=time_limit, gap=0.0, threads=1, warm_start=False)
    except ConfigError:
        raise ConfigError(
            "algorithm.params.fit: the CBC solver binary is not available; install 'pulp<4' "
            "(its wheel ships CBC) or set fit: mw"
        ) from None


def solve_clauses_ip(
    clauses,
    domain,
    *,
    base: np.ndarray,
    incumbent: np.ndarray | None,
    time_limit: float,
    gap: float,
    threads: int,
    deadline: float | None = None,
) -> IPResult:
    """Maximise the weighted number of satisfied clauses over valid rows, with CBC.

    ``clauses`` is a :class:`dpsynth.workload.conjunctions.Clauses`; ``base`` supplies
    the codes of untouched columns; ``incumbent`` (codes) warm-starts CBC.
    CBC gets ``time_limit`` seconds (wall clock), cut so that it stops by
    ``deadline`` (a ``time.perf_counter()`` value) after the model is built;
    if no time is left it is not run (status ``skipped``).
    """
    import pulp

    start = time.perf_counter()
    cols = np.unique(clauses.attrs)
    prob = pulp.LpProblem("dualquery_best_response", pulp.LpMaximize)
    x = {}
    for a in cols.tolist():  # loop over touched columns and their values (the model's variables)
        x[a] = [prob.add_variable(f"x_{a}_{v}", cat="Binary") for v in range(domain.sizes[a])]
        prob += pulp.lpSum(x[a]) == 1, f"one_{a}"
    c = [prob.add_variable(f"c_{j}", lowBound=0, upBound=1) for j in range(len(clauses))]
    prob += pulp.lpSum(float(w) * cj for w, cj in zip(clauses.weights.tolist(), c))
    k = clauses.attrs.shape[1]
    for j, (ats, vals, pos) in enumerate(
        zip(clauses.attrs.tolist(), clauses.values.tolist(), clauses.positive.tolist())
    ):  # one to k+... constraints per clause: PuLP has no vectorized constraint builder
        lits = [x[a][v] for a, v in zip(ats, vals)]
        if pos:
            for i, lit in enumerate(lits):
                prob += c[j] <= lit, f"p_{j}_{i}"
        else:
            prob += c[j] <= k - pulp.lpSum(lits), f"n_{j}"
    if incumbent is not None:
        for a in cols.tolist():
            for v, var in enumerate(x[a]):
                var.setInitialValue(1 if int(incumbent[a]) == v else 0)
        sat = clauses.satisfied(incumbent)
        for cj, sj in zip(c, sat.tolist()):
            cj.setInitialValue(1 if sj else 0)
    if deadline is not None:
        time_limit = min(time_limit, deadline - time.perf_counter() - _IO_RESERVE)
    if time_limit < 0.1:
        return IPResult(None, None, "skipped", None, None, time.perf_counter() - start)
    fd, log_path = tempfile.mkstemp(prefix="dpsynth_cbc_", suffix=".log")
    os.close(fd)
    try:
        solver = mip_solver(
            time_limit=time_limit, gap=gap, threads=threads, warm_start=incumbent is not None, log_path=log_path
        )
        prob.solve(solver)
        with open(log_path, encoding="utf-8", errors="replace") as fh:
            log = fh.read()
    finally:
        os.unlink(log_path)
    objective = pulp.value(prob.objective)
    codes = None
    if prob.sol_status in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible) and objective is not None:
        codes = np.array(base, dtype=np.int64, copy=True)
        for a in cols.tolist():
            vals = np.array([var.varValue or 0.0 for var in x[a]])
            codes[a] = int(np.argmax(vals))
        objective = float(clauses.objective(codes))  # recount exactly on the decoded row
    status, bound = _parse_log(log, objective)
    gap_value = None
    if bound is not None and objective is not None:
        gap_value = max(0.0, bound - objective) / max(1.0, abs(objective))
    return IPResult(codes, objective, status, bound, gap_value, time.perf_counter() - start)


_RESULT = {
    "Optimal solution found": "optimal",
    "Stopped on time limit": "time-limit",
    "Stopped on gap": "gap-limit",
    "Stopped on ratio": "gap-limit",
    "Problem proven infeasible": "infeasible",
    "Linear relaxation infeasible": "infeasible",
}


def _parse_log(log: str, objective: float | None) -> tuple[str, float | None]:
    """CBC's result line and best bound (it prints 'Upper bound' when maximising)."""
    m = re.search(r"Result - (.+)", log)
    status = "not-solved"
    if m:
        line = m.group(1).strip()
        status = next((v for k, v in _RESULT.items() if line.startswith(k)), line.lower())
    b = re.search(r"(?:Upper|Lower) bound:\s+(-?[0-9.eE+-]+)", log)
    bound = None
    if b:
        try:
            bound = abs(float(b.group(1)))
        except ValueError:
            bound = None
    if status == "optimal" and objective is not None:
        bound = objective
    if bound is not None and not math.isfinite(bound):
        bound = None
    return status, bound
