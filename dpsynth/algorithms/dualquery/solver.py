"""The mixed-integer solver behind DualQuery's best response (Gaboardi et al. 2014, §5).

:func:`dpsynth.algorithms.solvers.mip_solver` chooses and configures the solver (CBC, as for
every algorithm: :mod:`dpsynth.algorithms.solvers`); this module holds what is DualQuery's own.
:func:`build_model` writes the §5 integer program
of one round as an MPS file straight from NumPy index arrays (no per-clause
Python objects), and :func:`solve_clauses_ip` runs CBC on it.

The program (the paper's encoding plus one-hot rows): a binary xᵦ per bit of
the binary-attribute view (only bits of columns some clause touches), a
clause variable cⱼ ∈ [0, 1] per distinct sampled clause with weight wⱼ (its
multiplicity), and

* maximise Σⱼ wⱼ·cⱼ (written as: minimise −Σⱼ wⱼ·cⱼ);
* positive clause (x_a ∧ x_b ∧ x_c): cⱼ ≤ x_ℓ for each of its literals ℓ;
* negated clause (¬x_a ∨ ¬x_b ∨ ¬x_c): cⱼ ≤ Σ_ℓ (1 − x_ℓ);
* exactly one bit per touched column: Σ_{v} x_{(col, v)} = 1.  The paper's
  binarisation has no such constraint, so its records may switch on two
  values of one original attribute (or none); ours are always valid rows.

cⱼ may be continuous: for integral x the optimum sets cⱼ to the clause's
truth value, so the objective counts satisfied clauses.

Parity clauses (§6, the integer program after Definition 6.1) replace the
clause rows by one equality per distinct sampled parity, with an integer
dⱼ ∈ {0, …, ⌈k/2⌉}:

* parity p_S (on when an even number of its literals hold):
  Σ_ℓ x_ℓ = 2dⱼ + cⱼ − 1;
* negated parity (odd): Σ_ℓ x_ℓ = 2dⱼ + cⱼ.

For integral x and dⱼ the equality forces cⱼ ∈ [0, 1] to the parity's truth
value (Σx − 2dⱼ + 1 is odd unless Σx is even), so cⱼ may again be
continuous; dⱼ absorbs the even part of the count (0 or 2 for k = 3, as in
the paper, whose dᵢ ∈ {0, 1, 2} is the same bound).

CBC's work is limited by a node count (``solver.max_nodes``), never by the
clock, so the row it returns is a function of the clauses and the settings.

A solver failure never raises: whatever goes wrong (binary missing at run
time, non-zero exit, CBC killed by the wall-clock safety stop, stopped without
a feasible solution, infeasible or unbounded status, unreadable or invalid
solution file) comes back as an :class:`IPResult` with ``failure`` set to one
of :data:`FAILURES`, and the caller keeps its heuristic row.  Privacy does not
depend on this: the program is built from the sampled clauses alone.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass

import numpy as np

from dpsynth.algorithms.solvers import cbc_command, mip_solver
from dpsynth.errors import ConfigError

__all__ = ["FAILURES", "IPResult", "Model", "build_model", "solve_clauses_ip"]

FAILURES = (
    "missing-binary",  # the CBC binary is gone or not executable when a round runs
    "nonzero-exit",  # CBC exited with a non-zero code (or was killed by a signal)
    "safety-stop",  # CBC ran past solver.safety_seconds of wall time and was stopped (machine-dependent)
    "no-solution",  # CBC reached its node limit before finding any feasible solution
    "infeasible",  # CBC reported the program infeasible (it never is: a solver defect)
    "unbounded",  # CBC reported the program unbounded (it never is: a solver defect)
    "unreadable-solution",  # the solution file is missing, empty or not in CBC's format
    "invalid-solution",  # the solution is not one-hot on a touched column
)
"""Causes of a failed CBC call, as counted in the report (``rounds_solver_failed``).  Every cause but
``safety-stop`` is a function of the program and the configuration alone."""


@dataclass(frozen=True)
class IPResult:
    """Outcome of one CBC call (all values are functions of the clauses only)."""

    codes: np.ndarray | None  # best record found by CBC (full row of codes), None if none
    objective: float | None
    status: str  # "optimal", "node-limit", "gap-limit", "failed", ...
    bound: float | None  # CBC's best bound on the optimum, when it reports one
    gap: float | None  # (bound - objective) / max(1, |objective|)
    seconds: float  # wall time (diagnostics only: never in the report)
    failure: str | None = None  # one of FAILURES when the call failed
    build_seconds: float = 0.0  # time spent building and writing the model (diagnostics only)


# ----------------------------------------------------------------------------- model
@dataclass(frozen=True)
class Model:
    """The §5 program of one round as sparse triplets, with the maps back to rows of codes."""

    cols: np.ndarray  # touched columns (sorted)
    bits: np.ndarray  # the x variables' bits (sorted), x variable i is bit bits[i]
    n_clauses: int
    entries: tuple[np.ndarray, np.ndarray, np.ndarray]  # (row, variable, integer coefficient); objective row -1
    senses: np.ndarray  # per constraint row: "E" or "L"
    rhs: np.ndarray  # per constraint row
    n_aux: int = 0  # integer variables after the clause variables (parities: d_j), named d<i>
    aux_upper: int = 0  # their upper bound (lower bound 0)

    @property
    def n_x(self) -> int:
        return len(self.bits)


def build_model(clauses, domain) -> Model:
    """The constraint matrix, vectorized: one-hot rows, then clause rows (§5 encoding; §6 for parities)."""
    if getattr(clauses, "kind", None) == "parity":
        return _build_parity_model(clauses, domain)
    owner, _ = domain.bit_owner()
    offsets = np.asarray(domain.offsets)
    cols = np.unique(clauses.attrs)
    bits = np.flatnonzero(np.isin(owner, cols))
    var_of_bit = np.full(len(owner), -1, dtype=np.int64)
    var_of_bit[bits] = np.arange(len(bits))
    m, k = clauses.attrs.shape
    cvar = len(bits) + np.arange(m)
    lit = var_of_bit[offsets[clauses.attrs] + clauses.values]  # (m, k) x variables of the literals
    pos = np.asarray(clauses.positive, dtype=bool)
    n_one, n_pos, n_neg = len(cols), int(pos.sum()) * k, int((~pos).sum())
    # one-hot rows 0..n_one-1: Σ_v x(col, v) = 1
    one_rows = np.searchsorted(cols, owner[bits])
    # positive clause rows: c_j - x_ℓ ≤ 0, one per literal
    p_rows = n_one + np.arange(n_pos)
    p_c, p_x = np.repeat(cvar[pos], k), lit[pos].ravel()
    # negated clause rows: c_j + Σ_ℓ x_ℓ ≤ k
    n_rows = n_one + n_pos + np.arange(n_neg)
    n_x = lit[~pos]
    row = np.concatenate([one_rows, p_rows, p_rows, n_rows, np.repeat(n_rows, k), np.full(m, -1)])
    var = np.concatenate([np.arange(len(bits)), p_c, p_x, cvar[~pos], n_x.ravel(), cvar])
    one = np.ones
    coef = np.concatenate([one(len(bits)), one(n_pos), -one(n_pos), one(n_neg), one(n_neg * k),
                           -np.asarray(clauses.weights)]).astype(np.int64)
    senses = np.array(["E"] * n_one + ["L"] * (n_pos + n_neg))
    rhs = np.concatenate([np.ones(n_one), np.zeros(n_pos), np.full(n_neg, k)]).astype(np.int64)
    return Model(cols, bits, m, (row, var, coef), senses, rhs)


def _one_hot(clauses, domain):
    """(touched columns, their bits, bit -> x variable, one-hot rows' row index per x variable)."""
    owner, _ = domain.bit_owner()
    cols = np.unique(clauses.attrs)
    bits = np.flatnonzero(np.isin(owner, cols))
    var_of_bit = np.full(len(owner), -1, dtype=np.int64)
    var_of_bit[bits] = np.arange(len(bits))
    return cols, bits, var_of_bit, np.searchsorted(cols, owner[bits])


def _build_parity_model(clauses, domain) -> Model:
    """§6's program: one-hot rows, then Σ_ℓ x_ℓ − 2dⱼ − cⱼ = −1 (parity) or 0 (negated parity)."""
    cols, bits, var_of_bit, one_rows = _one_hot(clauses, domain)
    m, k = clauses.attrs.shape
    n_x, n_one = len(bits), len(cols)
    cvar, dvar = n_x + np.arange(m), n_x + m + np.arange(m)
    lit = var_of_bit[np.asarray(domain.offsets)[clauses.attrs] + clauses.values]  # (m, k) x variables
    rows = n_one + np.arange(m)
    row = np.concatenate([one_rows, np.repeat(rows, k), rows, rows, np.full(m, -1)])
    var = np.concatenate([np.arange(n_x), lit.ravel(), dvar, cvar, cvar])
    coef = np.concatenate([np.ones(n_x + m * k), np.full(m, -2), np.full(m, -1),
                           -np.asarray(clauses.weights)]).astype(np.int64)
    senses = np.array(["E"] * (n_one + m))
    rhs = np.concatenate([np.ones(n_one), np.where(np.asarray(clauses.positive, dtype=bool), -1, 0)]).astype(np.int64)
    return Model(cols, bits, m, (row, var, coef), senses, rhs, n_aux=m, aux_upper=(k + 1) // 2)


def _names(prefix: str, idx: np.ndarray) -> np.ndarray:
    return np.char.add(prefix, np.asarray(idx, dtype=np.int64).astype(str))


def _lines(*columns: np.ndarray) -> list[str]:
    out = columns[0]
    for c in columns[1:]:
        out = np.char.add(np.char.add(out, " "), c)
    return out.tolist()


def _fixed(f1: str, f2, f3, f4=None) -> list[str]:
    """MPS lines in the fixed layout (fields at columns 2, 5, 15, 25), which free-format readers accept too.

    CBC's reader mis-parses some free-format sections (e.g. the first BOUNDS line), so names stay within
    8 characters and every field is at its fixed position.
    """
    f2, f3 = np.asarray(f2).astype(str), np.asarray(f3).astype(str)
    line = np.char.add(np.char.add(" " + f1.ljust(2) + " ", np.char.ljust(f2, 8)), "  ")
    line = np.char.add(line, np.char.ljust(f3, 8) if f4 is not None else f3)
    if f4 is not None:
        line = np.char.add(np.char.add(line, "  "), np.char.rjust(np.asarray(f4).astype(str), 12))
    return np.atleast_1d(line).tolist()


def write_mps(model: Model, path: str) -> None:
    """MPS: names are x<i> (binary), c<j> (clause), R<r> (rows), OBJ (objective); at most 8 characters."""
    row, var, coef = model.entries
    order = np.lexsort((row, var))  # COLUMNS must list each variable's entries together
    row, var, coef = row[order], var[order], coef[order]
    n_x, n_rows = model.n_x, len(model.senses)
    if n_x + model.n_clauses + model.n_aux > 10**7 or n_rows > 10**7:
        raise ValueError("best-response program too large for 8-character MPS names")
    var_names = _var_names(model)
    row_names = np.where(row < 0, "OBJ", _names("R", np.maximum(row, 0)))
    entry = _fixed("", var_names[var], row_names, coef)
    split = int(np.searchsorted(var, n_x))  # binaries first, inside integer markers
    split_aux = int(np.searchsorted(var, n_x + model.n_clauses))  # integer d_j last, inside markers again
    r = np.arange(n_rows)
    nz = model.rhs != 0
    marker = "    MARKER                 'MARKER'                 '{}'"
    aux = ([marker.format("INTORG"), *entry[split_aux:], marker.format("INTEND")] if model.n_aux else [])
    n_c, n_a = model.n_clauses, model.n_aux
    text = [
        "NAME          DUALQUERY", "ROWS", " N  OBJ",
        *np.char.add(np.char.add(" ", np.char.ljust(model.senses.astype(str), 2)),
                     np.char.add(" ", _names("R", r))).tolist(),
        "COLUMNS", marker.format("INTORG"), *entry[:split], marker.format("INTEND"), *entry[split:split_aux], *aux,
        "RHS", *_fixed("", np.full(int(nz.sum()), "RHS"), _names("R", r[nz]), model.rhs[nz]),
        "BOUNDS", *_fixed("BV", np.full(n_x, "BND"), var_names[:n_x], np.full(n_x, 1)),
        *_fixed("UP", np.full(n_c, "BND"), var_names[n_x:n_x + n_c], np.full(n_c, 1)),
        *(_fixed("UP", np.full(n_a, "BND"), var_names[n_x + n_c:], np.full(n_a, model.aux_upper)) if n_a else []),
        "ENDATA",
    ]
    with open(path, "w", encoding="ascii") as fh:
        fh.write("\n".join(text) + "\n")


def _var_names(model: Model) -> np.ndarray:
    return np.concatenate([_names("x", np.arange(model.n_x)), _names("c", np.arange(model.n_clauses)),
                           _names("d", np.arange(model.n_aux))])


def _write_start(model: Model, clauses, incumbent: np.ndarray, domain, path: str) -> None:
    """CBC's warm-start file (the format PuLP writes): every variable's value in the incumbent row."""
    offsets = np.asarray(domain.offsets)
    on = np.zeros(len(domain.bit_owner()[0]), dtype=np.int64)
    on[offsets + np.asarray(incumbent)] = 1
    sat = clauses.satisfied(incumbent).astype(np.int64)
    values = np.concatenate([on[model.bits], sat])
    if model.n_aux:  # parities: d_j = (Σx − c_j + 1)/2 for a parity, (Σx − c_j)/2 for a negated one
        lits = (np.asarray(incumbent)[clauses.attrs] == clauses.values).sum(axis=1)
        values = np.concatenate([values, (lits - sat + np.asarray(clauses.positive, dtype=np.int64)) // 2])
    names = _var_names(model)
    idx = np.arange(len(names)).astype(str)
    with open(path, "w", encoding="ascii") as fh:
        fh.write("Stopped on time - objective value 0\n")
        fh.write("\n".join(_lines(idx, names, values.astype(str), np.full(len(names), "0"))) + "\n")


class _Unreadable(Exception):
    pass


_ENTRY = re.compile(r"^\s*(?:\*\*\s*)?\d+\s+x(\d+)\s+(\S+)", re.MULTILINE)


def _read_solution(path: str, n_x: int) -> tuple[str, np.ndarray | None]:
    """(first word of CBC's status line, x values or None when CBC found no feasible solution)."""
    try:
        with open(path, encoding="ascii", errors="strict") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise _Unreadable from exc
    head, _, body = text.partition("\n")
    words = head.split()
    if not words:
        raise _Unreadable
    kind = words[0].lower()
    feasible = kind == "optimal" or (kind == "stopped" and "objective value" in head)
    if kind in ("infeasible", "unbounded") or (kind == "integer" and "infeasible" in head.lower()):
        return ("unbounded" if kind == "unbounded" else "infeasible"), None
    if kind not in ("optimal", "stopped"):
        raise _Unreadable
    if not feasible or "no integer solution" in head.lower() or "no feasible" in head.lower():
        return "stopped", None
    found = np.array(_ENTRY.findall(body), dtype=object).reshape(-1, 2)
    x = np.zeros(n_x)
    try:
        idx = found[:, 0].astype(np.int64)
        val = found[:, 1].astype(float)
    except ValueError as exc:
        raise _Unreadable from exc
    if np.any((idx < 0) | (idx >= n_x)) or not np.all(np.isfinite(val)):
        raise _Unreadable
    x[idx] = val
    return kind, x


def _decode(model: Model, x: np.ndarray, base: np.ndarray, domain) -> np.ndarray | None:
    """Row of codes from the x values, or None unless each touched column has exactly one bit at 1."""
    on = x > 0.5
    if np.any(np.abs(x - on) > 1e-6):
        return None
    owner, value = domain.bit_owner()
    col_of = owner[model.bits]
    if not np.array_equal(np.bincount(col_of[on], minlength=len(owner))[model.cols], np.ones(len(model.cols))):
        return None
    codes = np.array(base, dtype=np.int64, copy=True)
    codes[col_of[on]] = value[model.bits[on]]
    return codes


def solve_clauses_ip(
    clauses,
    domain,
    *,
    base: np.ndarray,
    incumbent: np.ndarray | None,
    max_nodes: int,
    gap: float,
    threads: int,
    safety_seconds: float | None = None,
) -> IPResult:
    """Maximise the weighted number of satisfied clauses over valid rows, with CBC.

    ``clauses`` is a :class:`dpsynth.workload.conjunctions.Clauses`; ``base`` supplies
    the codes of untouched columns; ``incumbent`` (codes) warm-starts CBC.  CBC stops
    after ``max_nodes`` branch-and-bound nodes (or at the gap, or optimal): deterministic
    work, so the result is a function of the clauses and the settings.  ``safety_seconds``
    (wall clock) only kills a CBC that runs away; that is the one machine-dependent outcome,
    reported as the failure ``safety-stop``.  Never raises on a solver problem: see :data:`FAILURES`.
    """
    start = time.perf_counter()
    model = build_model(clauses, domain)
    with tempfile.TemporaryDirectory(prefix="dpsynth_cbc_") as tmp:
        model_path, sol_path = os.path.join(tmp, "m.mps"), os.path.join(tmp, "m.sol")
        start_path = os.path.join(tmp, "m.mst") if incumbent is not None else None
        write_mps(model, model_path)
        if start_path is not None:
            _write_start(model, clauses, incumbent, domain, start_path)
        built = time.perf_counter() - start
        log, failure = _run_cbc(max_nodes, gap, threads, safety_seconds, start_path, model_path, sol_path)
        x, kind = None, None
        if failure is None:
            try:
                kind, x = _read_solution(sol_path, model.n_x)
            except _Unreadable:
                failure = "unreadable-solution"
    if failure is None and kind in ("infeasible", "unbounded"):
        failure = kind
    elif failure is None and x is None:
        failure = "no-solution"
    codes = _decode(model, x, base, domain) if failure is None else None
    if failure is None and codes is None:
        failure = "invalid-solution"
    if failure is not None:
        return IPResult(None, None, "failed", None, None, time.perf_counter() - start, failure, built)
    objective = float(clauses.objective(codes))  # recount exactly on the decoded row
    status, bound = _parse_log(log, objective)
    gap_value = None if bound is None else max(0.0, bound - objective) / max(1.0, abs(objective))
    return IPResult(codes, objective, status, bound, gap_value, time.perf_counter() - start, None, built)


def _run_cbc(max_nodes, gap, threads, safety_seconds, start_path, model_path, sol_path) -> tuple[str, str | None]:
    """Run CBC; (its log, None) or ("", the failure cause)."""
    try:
        solver = mip_solver(max_nodes=max_nodes, gap=gap, threads=threads, warm_start=start_path is not None)
        args = cbc_command(solver, model_path, sol_path, start_path)
        done = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, check=False,
                              timeout=safety_seconds)
    except ConfigError:
        return "", "missing-binary"
    except subprocess.TimeoutExpired:
        return "", "safety-stop"
    except OSError:  # the binary vanished or lost its execute permission between the check and the run
        return "", "missing-binary"
    if done.returncode != 0:
        return "", "nonzero-exit"
    return done.stdout.decode("utf-8", errors="replace"), None


_RESULT = {
    "Optimal solution found": "optimal",
    "Stopped on node limit": "node-limit",
    "Stopped on time limit": "time-limit",
    "Stopped on gap": "gap-limit",
    "Stopped on ratio": "gap-limit",
    "Problem proven infeasible": "infeasible",
    "Linear relaxation infeasible": "infeasible",
}


def _parse_log(log: str, objective: float | None) -> tuple[str, float | None]:
    """CBC's result line and best bound (the program minimises −Σ wⱼcⱼ, so the bound is negated)."""
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
