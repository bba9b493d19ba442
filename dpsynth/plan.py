"""What a release will cost before it runs: domain, workload, budget split, noise, memory, time.

``dpsynth plan`` prints a :class:`Plan`; ``dpsynth release`` computes the same
plan first and refuses (exit 64, before reading any data) when the predicted
peak memory exceeds ``limits.max_memory`` (default: :data:`DEFAULT_MEMORY_FRACTION`
of the machine's RAM).

A plan reads the configuration and, at most, the size of the input file (never
its contents): everything in it is public.  The row count n matters for memory
(the numpy engine holds the table) and for noise relative to the counts; it is
the ``rows`` argument when given, otherwise an estimate from the input file size
and the schema (stated as such), otherwise an assumption of
:data:`ASSUMED_ROWS` rows (stated as such).

Memory model.  Peak resident memory is predicted as a sum of parts, each a
coefficient times a public quantity, with the coefficients fitted by
``benchmarks/bench_plan.py`` (which prints predicted against measured peaks):

* the interpreter and libraries (a constant);
* the input table (numpy engine only): bytes per input cell;
* per algorithm (one function each in :data:`PREDICTORS`, easy to update when an
  algorithm or the synthesis model changes): the exact counts the engine caches
  (int64 per cell of every marginal counted), what the algorithm keeps (noisy
  marginals, MWEM's candidate tables, DualQuery's query arrays), the transient
  arrays of the largest marginal, and the synthesis model (factors capped at
  ``max_factor_cells`` cells);
* the synthetic rows (codes and the decoded table): bytes per output cell of one chunk
  (rows are sampled and written :data:`dpsynth.modelfile.CHUNK_ROWS` at a time);
* ``release --model``: the model file (its measurements and the zip);
* ``release --marginals``: the long-format table of the released marginals
  (one row per cell with a label per column).

The time estimate is rougher still (a few coefficients per algorithm, measured on
a busy 2-core machine): read it as an order of magnitude.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dpsynth.config import Config, parse_bytes  # noqa: F401  (parse_bytes re-exported)
from dpsynth.errors import ConfigError
from dpsynth.privacy.accountant import split_budget

__all__ = [
    "ASSUMED_ROWS",
    "DEFAULT_MEMORY_FRACTION",
    "PREDICTORS",
    "AlgorithmPlan",
    "Plan",
    "check_memory",
    "default_max_memory",
    "format_bytes",
    "machine_memory",
    "make_plan",
]

DEFAULT_MEMORY_FRACTION = 0.5
"""``limits.max_memory`` defaults to this fraction of the machine's physical RAM."""

ASSUMED_ROWS = 100_000
"""Row count assumed when neither ``--rows`` nor an input file is given."""

MB = 1 << 20

# Coefficients fitted by benchmarks/bench_plan.py (peak RSS of child processes on Adult and NLTCS).
_BASE = 160 * MB  # interpreter, numpy, pandas, pyarrow, scipy (estimator), the CLI
_BASE_DUALQUERY = 40 * MB  # PuLP and the solver interface
_INPUT_CELL = 50  # numpy engine: the parsed table (object strings) and its codes, per input cell
_STREAM_BATCH = 64 * MB  # stream engine: one record batch and its codes
_OUTPUT_CELL = 27  # int64 codes, the decoded table and the CSV writer, per output cell
_COUNT_CELL = 8  # int64 exact counts cached by the engine
_NOISY_CELL = 8  # float64 noisy counts kept by the algorithm
_PGM_CELL = 48  # the pgm estimator's junction tree, per cell (docs/estimator.md)
_PAYLOAD_CELL = 8  # the released model's measurements serialised as .npy for its sha256 (modelfile.py)
_LONG_CELL = 110  # release --marginals: one long-format row per cell (a label per column)
_TRANSIENT = 4  # arrays of the size of the largest marginal alive at once (float64)
_IREDUCT_CELL = 136  # iReduct/iResamp: true, noisy, scale and segment arrays over all cells, and temporaries
_FOURIER_LP_ENTRY = 200  # PuLP: one Python term per (cell, coefficient) of the constraint matrix
_QUERY_BYTES = 64  # DualQuery: per conjunction, attrs and values (k ints each) plus 4 float arrays
_QUERY_INT = 16  # DualQuery: per conjunction and literal

# Time coefficients (seconds), as rough as the text says: measured on a 2-core machine shared by
# about 8 jobs (load ~10), so an idle machine is several times faster.
_T_ROW = 4e-6  # read and encode, per input cell
_T_MARGINAL = 0.04  # fitting the factored synthesis model, per released marginal and 10 passes
_T_PGM_MODEL = 3.5e-6  # the pgm estimator, per junction-tree cell and iteration
_T_PGM_CELL = 1e-8  # the pgm estimator, per measured cell and iteration
_T_CELL_LAPLACE = 1e-6  # count and noise, per workload cell
_T_CELL_MWEM = 4e-8  # scoring, per candidate cell and round
_T_CELL_IREDUCT = 2e-5  # per workload cell (several noise-down rounds and the fit)
_T_ROUND_DUALQUERY = 2.0  # typical best response; at most solver.time_limit


@dataclass
class AlgorithmPlan:
    """What one algorithm's predictor returns (all from public facts)."""

    stages: list[tuple[str, str]]  # (stage, budget in words)
    memory: dict[str, int]  # part -> bytes
    seconds: float
    queries: str  # what the algorithm measures, in words
    noise_sd: float | None  # standard deviation of the noise on one measured cell (counts)
    noise_note: str = ""
    notes: list[str] = field(default_factory=list)


@dataclass
class Plan:
    columns: list[tuple[str, int]]
    domain_cells: int
    marginals: int
    total_cells: int
    largest_cells: int
    rows: int
    rows_source: str
    output_rows: int
    algorithm: str
    guarantee: str
    alg: AlgorithmPlan
    memory: dict[str, int]
    max_memory: int
    max_memory_source: str

    @property
    def peak_memory(self) -> int:
        return int(sum(self.memory.values()))

    @property
    def seconds(self) -> float:
        return self.alg.seconds + _T_ROW * self.rows * len(self.columns)

    def to_dict(self) -> dict:
        return {
            "columns": [{"name": n, "size": s} for n, s in self.columns],
            "domain_cells": self.domain_cells,
            "marginals": self.marginals,
            "total_cells": self.total_cells,
            "largest_marginal_cells": self.largest_cells,
            "rows": self.rows,
            "rows_source": self.rows_source,
            "output_rows": self.output_rows,
            "algorithm": self.algorithm,
            "queries": self.alg.queries,
            "budget": [{"stage": s, "budget": b} for s, b in self.alg.stages],
            "guarantee": self.guarantee,
            "noise_sd_per_cell": self.alg.noise_sd,
            "memory_bytes": dict(self.memory),
            "peak_memory_bytes": self.peak_memory,
            "max_memory_bytes": self.max_memory,
            "seconds": self.seconds,
            "notes": list(self.alg.notes),
        }


# ------------------------------------------------------------------------ machine
def machine_memory() -> int:
    """Physical RAM in bytes (``/proc/meminfo`` MemTotal, else ``os.sysconf``)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 8 << 30  # unknown platform: assume a small machine


def default_max_memory() -> int:
    return int(DEFAULT_MEMORY_FRACTION * machine_memory())


def format_bytes(n: float) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", MB), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


# ------------------------------------------------------------------------ rows
def _estimated_row_bytes(config: Config) -> float:
    """Bytes of one CSV row, guessed from the schema: mean label length per column plus a delimiter."""
    total = 0.0
    for col in config.domain.columns:
        labels = [str(x) for x in col.labels()]
        if col.kind == "categorical":
            total += sum(map(len, labels)) / max(len(labels), 1)
        else:
            total += max(len(labels[-1].split(",")[0].strip("[(")), 2)
        total += 1
    return total


def _rows(config: Config, rows: int | None, input_path: str | None) -> tuple[int, str]:
    if rows is not None:
        return int(rows), "as given (--rows)"
    if input_path and input_path != "-" and Path(input_path).is_file() and len(config.domain):
        size = Path(input_path).stat().st_size
        per_row = _estimated_row_bytes(config)
        name = input_path.lower()
        factor = 4.0 if name.endswith(".gz") else 3.0 if name.endswith(".parquet") else 1.0
        est = max(1, int(size * factor / per_row))
        return est, f"estimated from the input file size ({format_bytes(size)}, ~{per_row:.0f} bytes per row); give --rows N for a better figure"
    return ASSUMED_ROWS, f"assumed ({ASSUMED_ROWS:,}; give --rows N or -i INPUT)"


# ------------------------------------------------------------------ predictors
@dataclass(frozen=True)
class _Facts:
    """Public facts a predictor may use."""

    config: Config
    rows: int
    marginal_cells: list[int]
    total_cells: int
    largest: int
    synth_cap: int
    epsilon: float  # ε left for the algorithm after the row count
    sensitivity: float


def _synthesis(f: _Facts) -> tuple[int, float]:
    """(bytes, seconds) of turning the noisy marginals into a model (``SynthesisParams``).

    ``pgm`` (the default estimator, :mod:`dpsynth.models.estimation`): a junction tree of at most
    ``model_cells`` cells (about 48 bytes per cell, docs/estimator.md), ``synthesis_iterations``
    mirror-descent steps over the tree and the measured cells; ``mw``/``ipf``: the factored model,
    factors of at most 1 M cells, ``synthesis_passes`` passes over the marginals.
    """
    p = f.config.params
    method = getattr(p, "synthesis", "mw")
    if method == "pgm":
        steps = p.synthesis_iterations
        return _PGM_CELL * p.model_cells, steps * (_T_PGM_MODEL * p.model_cells + _T_PGM_CELL * f.total_cells)
    passes = getattr(p, "synthesis_passes", 10)
    return 3 * 8 * f.synth_cap, _T_MARGINAL * len(f.marginal_cells) * passes / 10


def _marginal_memory(f: _Facts) -> dict[str, int]:
    return {
        "exact counts cached by the engine": _COUNT_CELL * f.total_cells,
        "noisy marginals": _NOISY_CELL * f.total_cells,
        "largest marginal (transient)": _TRANSIENT * 8 * f.largest,
        "synthesis model": _synthesis(f)[0],
        "released model file payload (its checksum)": _PAYLOAD_CELL * f.total_cells,
    }


def _laplace(f: _Facts) -> AlgorithmPlan:
    m = len(f.marginal_cells)
    per = split_budget(f.epsilon, [1.0] * m)[0] if m else f.epsilon
    scale = f.sensitivity / per
    return AlgorithmPlan(
        stages=[("measure", f"epsilon {f.epsilon:.4g} split equally over {m} marginals ({per:.4g} each)")],
        memory=_marginal_memory(f),
        seconds=_synthesis(f)[1] + _T_CELL_LAPLACE * f.total_cells,
        queries=f"{m} marginals, every cell measured",
        noise_sd=math.sqrt(2.0) * scale,
    )


def _mwem_pgm(f: _Facts, p) -> AlgorithmPlan:
    from dpsynth.algorithms.mwem_pgm import candidates as pgm_candidates
    from dpsynth.models.junction import BYTES_PER_CELL

    T = p.iterations
    cands = len(pgm_candidates(f.config.marginals))
    weights = [p.init_fraction] + [(1 - p.init_fraction) / T * p.select_fraction,
                                   (1 - p.init_fraction) / T * (1 - p.select_fraction)] * T
    parts = split_budget(f.epsilon, weights)
    unit = "rho" if p.accounting == "zcdp" else "epsilon"
    stages = [("mwem-init", f"{unit} fraction {p.init_fraction:g} over the {len(f.config.domain)} 1-way marginals"),
              ("mwem-select", (f"about {T} rounds, epsilon {parts[1]:.4g} each at first (exponential mechanism); "
                               "later rounds get more when the model stops improving")),
              ("mwem-measure", f"about {T} rounds, epsilon {parts[2]:.4g} each at first")]
    memory = {
        "exact counts cached by the engine": _COUNT_CELL * f.total_cells,
        "candidate tables (exact counts)": _COUNT_CELL * f.total_cells,
        "largest marginal (transient)": _TRANSIENT * 8 * f.largest,
        "graphical model (up to model_cells)": BYTES_PER_CELL * p.model_cells,
    }
    return AlgorithmPlan(
        stages=stages, memory=memory, seconds=2.0 + 0.5 * T + 2e-7 * T * cands * p.model_cells,
        queries=f"{cands} candidate marginals (the workload and its subsets), about {T} rounds",
        noise_sd=math.sqrt(2.0) * f.sensitivity / parts[2], noise_note="on each measured marginal, first rounds",
        notes=["variant pgm: the estimator is refitted after every measurement (docs/mwem.md)"],
    )


def _mwem(f: _Facts) -> AlgorithmPlan:
    from dpsynth.algorithms.mwem import DEFAULT_ITERATIONS, effective_iterations, variant_of

    p = f.config.params
    linear = f.config.workload.linear
    variant = variant_of(p, bool(f.config.workload.ranges) or linear is not None)
    zcdp = p.accounting == "zcdp" or (p.accounting == "auto" and variant == "pgm" and f.config.privacy.delta > 0)
    p = p.resolved(variant, "zcdp" if zcdp else "pure")
    if variant == "pgm":
        return _mwem_pgm(f, p)
    m = len(f.marginal_cells)
    candidates = m if p.marginal_queries == "cuboids" else f.total_cells if p.marginal_queries == "cells" else 0
    candidates += sum(len(rq) for rq in f.config.workload.ranges) + (len(linear) if linear is not None else 0)
    T = effective_iterations(p, candidates)
    classes = (([p.marginal_queries] if p.marginal_queries != "none" else [])
               + (["ranges"] if f.config.workload.ranges else []) + (["linear"] if linear is not None else []))
    f_init = p.init_fraction if p.init == "noisy" else 0.0
    weights = [f_init] + [(1 - f_init) / T * p.select_fraction, (1 - f_init) / T * (1 - p.select_fraction)] * T
    parts = split_budget(f.epsilon, weights)
    unit = "rho" if p.accounting == "zcdp" else "epsilon"
    stages = []
    if f_init:
        stages.append(("mwem-init", f"{unit} fraction {f_init:g} over the {len(f.config.domain)} 1-way marginals"))
    stages += [("mwem-select", f"{T} rounds, epsilon {parts[1]:.4g} each (exponential mechanism)"),
               ("mwem-measure", f"{T} rounds, epsilon {parts[2]:.4g} each")]
    if p.accounting == "zcdp":
        stages = [(s, t + " (split of the zCDP rho; figures shown as pure-epsilon shares)") for s, t in stages]
    cap = p.max_factor_cells
    memory = {
        "exact counts cached by the engine": _COUNT_CELL * f.total_cells,
        "candidate tables (exact counts)": _COUNT_CELL * f.total_cells,
        "largest marginal (transient)": _TRANSIENT * 8 * f.largest,
        "model (factors up to max_factor_cells)": 3 * 8 * cap,
    }
    notes = []
    if p.iterations is None and T < DEFAULT_ITERATIONS:
        notes.append(f"iterations not set: {T} rounds, one per candidate query (fewer than the default "
                     f"{DEFAULT_ITERATIONS})")
    return AlgorithmPlan(
        stages=stages, memory=memory, seconds=2.0 + _T_CELL_MWEM * T * f.total_cells,
        queries=f"{candidates} candidate queries ({', '.join(classes)}), {T} rounds",
        noise_sd=math.sqrt(2.0) * f.sensitivity / parts[2], noise_note="on each of the T measured marginals",
        notes=notes,
    )


def _dualquery(f: _Facts) -> AlgorithmPlan:
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
    stages, notes, T = [], [], p.T or p.max_T
    try:
        sol = solve_parameters(epsilon=f.epsilon, delta=f.config.privacy.delta, n=float(f.rows),
                               composition=dq_composition(p, f.config.privacy), T=p.T, s=p.s, eta=p.eta,
                               max_T=p.max_T, accuracy=(p.alpha, p.beta, Q, log_x) if p.alpha is not None else None)
        T = sol.T
        stages.append(("dualquery", (f"T={sol.T} rounds of s={sol.s} query samples, eta={sol.eta:.4g} "
                                    f"(solved for {_solved_words(sol.solved)} at n={f.rows:,})")))
        notes.append(_dualquery_outlook(f, sol, Q))
    except BudgetError as exc:
        notes.append(f"no DualQuery setting fits at n={f.rows:,}: {exc}")
        stages.append(("dualquery", "infeasible at this n"))
    memory = {
        f"{kind} (attributes, values, answers, weights)": Q * (_QUERY_BYTES + _QUERY_INT * k),
        "distinct rows (numpy engine)": 8 * len(f.config.domain) * f.rows,
    }
    budget = p.time_budget
    return AlgorithmPlan(
        stages=stages, memory=memory, seconds=min(T * _T_ROUND_DUALQUERY, budget),
        queries=f"{Q:,} {kind} of {k} literals (and their negations)",
        noise_sd=None, noise_note="DualQuery measures no counts; its error depends on T, s and eta",
        notes=notes + [f"at most time_budget = {budget:,.0f} s: the best responses share it over the {T} rounds"],
    )


def _solved_words(solved: str) -> str:
    """SolvedParameters.solved ("T,s", "eta", "alpha,beta", "none") in words."""
    if solved == "alpha,beta":
        return "T, s and eta from alpha and beta (Algorithm 2)"
    return "nothing" if solved == "none" else solved.replace(",", " and ")


def _dualquery_outlook(f: _Facts, sol, n_queries: int) -> str:
    """DualQuery's accuracy outlook (dualquery.accounting.expected_error) as one plan note."""
    from dpsynth.algorithms.dualquery.accounting import expected_error

    params = f.config.params
    if params.alpha is None:  # alpha/beta derive T, s and eta themselves
        params = dataclasses.replace(params, T=sol.T, s=sol.s, eta=sol.eta)
    view = expected_error(float(f.rows), f.epsilon, f.config.privacy.delta, params, n_queries=n_queries,
                          log_universe=float(sum(math.log(size) for size in f.config.domain.sizes)))
    return (f"accuracy outlook: {view.verdict} (at most T={view.T} distinct records; Theorem 4.6 bound on the "
            f"max error {view.theorem_alpha:.3g}, vacuous when >= 1)" + (f"; {view.message}" if view.message else ""))


def _ireduct_queries(f: _Facts) -> AlgorithmPlan:
    """iReduct over ``workload.queries`` (counting queries as cell sets): one charge for all queries at the
    generalized sensitivity (Definition 4), noise-down arrays over the queries, the counts of their columns."""
    q = f.config.workload.queries
    domain = f.config.domain
    factor = f.config.privacy.neighbouring.histogram_l1
    sens = factor * q.depth
    cells = domain.cells(q.attrs)
    share = float(q.masks(domain).mean(axis=1).mean()) if len(q) else 0.0
    sd = math.sqrt(2.0) * sens / f.epsilon
    cols = ", ".join(domain.names[a] for a in q.attrs)
    memory = {"exact counts of the queries' columns": _COUNT_CELL * cells,
              "noise-down working arrays": _IREDUCT_CELL * len(q)}
    synth_bytes, synth_seconds = _synthesis(f)
    memory["synthesis model"] = synth_bytes
    return AlgorithmPlan(
        stages=[("ireduct", (f"epsilon {f.epsilon:.4g} spent by noise-down steps, one charge for all "
                            f"{len(q)} queries (a row is in at most {q.depth} of them: L1 sensitivity {sens:g})"))],
        memory=memory, seconds=synth_seconds + _T_CELL_IREDUCT * (cells + len(q)),
        queries=f"{len(q)} counting queries (cell sets) over {len(q.attrs)} columns ({cols})",
        noise_sd=None,
        noise_note=(f"standard deviation {sd:.4g} per query answer at equal scales ({sd / max(f.rows, 1):.3g} of n; "
                    f"iReduct lowers it where relative error matters); an average query holds about "
                    f"{share * f.rows:.4g} rows if the rows were spread evenly over its columns' cells"),
    )


def _ireduct_like(name: str) -> Callable[[_Facts], AlgorithmPlan]:
    def predict(f: _Facts) -> AlgorithmPlan:
        if name == "ireduct" and f.config.workload.queries is not None:
            return _ireduct_queries(f)
        m = len(f.marginal_cells)
        per = f.epsilon / max(m, 1)
        memory = _marginal_memory(f)
        if name == "ireduct":  # the vectorized noise-down rounds work on all cells at once
            memory["noise-down working arrays"] = _IREDUCT_CELL * f.total_cells
        if name == "twophase":
            frac = f.config.params.epsilon1_fraction
            stages = [("twophase-1", f"epsilon fraction {frac:g}, equal over {m} marginals"),
                      ("twophase-2", f"epsilon fraction {1 - frac:g}, scales chosen from phase 1")]
            sd = math.sqrt(2.0) * f.sensitivity * m / (f.epsilon * frac)
            note = "phase 1; phase 2 adds less noise where counts are large"
        else:
            stages = [(name, f"epsilon {f.epsilon:.4g} spent by noise-down steps, one charge per marginal")]
            sd = math.sqrt(2.0) * f.sensitivity / per
            note = "equal-split reference; iReduct lowers the noise where it matters"
        return AlgorithmPlan(stages=stages, memory=memory, seconds=_synthesis(f)[1] + _T_CELL_IREDUCT * f.total_cells,
                             queries=f"{m} marginals", noise_sd=sd, noise_note=note)

    return predict


def _fourier(f: _Facts) -> AlgorithmPlan:
    from dpsynth.algorithms.fourier import coefficient_sensitivity, lp_entries

    p = f.config.params
    cells, size, entries = lp_entries(f.config.domain, f.config.marginals)
    measured = max(size - 1, 1)
    sens = coefficient_sensitivity(measured, f.config.privacy.neighbouring)
    per_entry = _FOURIER_LP_ENTRY if p.fit == "lp" else 2 * 8
    return AlgorithmPlan(
        stages=[("fourier", (f"epsilon {f.epsilon:.4g} on {measured:,} Fourier coefficients at once "
                            f"(L1 sensitivity {sens:g})"))],
        memory={"exact counts cached by the engine": _COUNT_CELL * f.total_cells,
                f"table fit ({p.fit}): {cells:,} cells x {size:,} coefficients": per_entry * entries + 8 * 4 * cells},
        seconds=(p.lp_time_limit / 10 if p.fit == "lp" else 1e-8 * p.mw_passes * entries) + 1.0,
        queries=f"{measured:,} Fourier coefficients (the downward closure of {len(f.marginal_cells)} marginals)",
        noise_sd=math.sqrt(2.0) * sens / f.epsilon, noise_note="per coefficient, not per cell",
        notes=[f"the LP stops at lp_time_limit = {p.lp_time_limit:g} s"] if p.fit == "lp" else [],
    )


def _auto(f: _Facts) -> AlgorithmPlan:
    from dpsynth.algorithms import auto, get_algorithm

    name, raw, why = auto.choose(workload=f.config.marginals, delta=f.config.privacy.delta, n=float(f.rows),
                                 epsilon=f.epsilon, sizes=f.config.domain.sizes)
    base = name.partition(":")[0]
    params = get_algorithm(base).parse_params({**raw, "sampling": f.config.params.sampling})
    chosen = dataclasses.replace(f, config=dataclasses.replace(f.config, algorithm=base, params=params))
    out = PREDICTORS[base](chosen)
    out.notes = [f"auto chooses {name}: {why[-1]}", *out.notes]
    return out


PREDICTORS: dict[str, Callable[[_Facts], AlgorithmPlan]] = {
    "auto": _auto,
    "fourier": _fourier,
    "laplace": _laplace,
    "mwem": _mwem,
    "dualquery": _dualquery,
    "ireduct": _ireduct_like("ireduct"),
    "twophase": _ireduct_like("twophase"),
    "iresamp": _ireduct_like("iresamp"),
}
"""One memory/budget/time predictor per algorithm: update it when the algorithm changes."""


# ------------------------------------------------------------------------ the plan
def _guarantee(config: Config) -> str:
    p = config.privacy
    kind = f"({p.epsilon:g}, {p.delta:g})-differential privacy" if p.delta > 0 else f"{p.epsilon:g}-differential privacy"
    n = ("n (the row count) is public" if p.n_public or p.neighbouring.value == "replace-one"
         else f"n is private (a noisy count costs epsilon {p.n_epsilon:g})")
    public = ("the schema is learned from the data by charged mechanisms (schema.discover); the workload and "
              "parameters are public" if getattr(config, "discover", None) is not None
              else "the schema, workload and parameters are public")
    return f"{kind} for one row of the input table, {p.neighbouring.value} neighbours; {n}; {public}"


def make_plan(
    config: Config,
    *,
    rows: int | None = None,
    input_path: str | None = None,
    engine: str = "numpy",
    write_marginals: bool = False,
    write_model: bool = False,
    max_memory: int | None = None,
) -> Plan:
    """The plan of a release of ``config``; reads no data (at most the input file's size)."""
    from dpsynth.models.factored import DEFAULT_MAX_FACTOR_CELLS

    domain = config.domain
    cells = [domain.cells(m) for m in config.marginals]
    n, source = _rows(config, rows, input_path)
    out_rows = config.output.rows if config.output.rows is not None else n
    eps = config.privacy.epsilon - (config.privacy.n_epsilon or 0.0)
    full = math.prod(domain.sizes)
    facts = _Facts(config=config, rows=n, marginal_cells=cells, total_cells=int(sum(cells)),
                   largest=max(cells, default=0), synth_cap=min(DEFAULT_MAX_FACTOR_CELLS, full), epsilon=eps,
                   sensitivity=config.privacy.neighbouring.histogram_l1)
    if getattr(config, "discover", None) is not None:  # the domain is learned at release time
        alg = AlgorithmPlan(
            stages=[("discover", f"epsilon {config.discover.epsilon:g} for schema discovery (schema.discover)"),
                    ("release", "the rest, split as the algorithm does once the schema is known")],
            memory={}, seconds=0.0, queries="unknown until the schema is discovered", noise_sd=None,
            noise_note="unknown until the schema is discovered",
            notes=[("schema.discover: the domain and workload are learned at release time, so this plan (and "
                   "the memory guard) covers only what is known now; plan the discovered schema.yaml again")],
        )
    else:
        alg = PREDICTORS[config.algorithm](facts)
    d = len(domain)
    memory = {"interpreter and libraries": _BASE + (_BASE_DUALQUERY if config.algorithm == "dualquery" else 0)}
    if engine == "numpy":
        memory["input table (numpy engine)"] = _INPUT_CELL * n * d
    elif engine == "stream":
        memory["record batch (stream engine)"] = _STREAM_BATCH
    memory.update(alg.memory)
    from dpsynth.modelfile import CHUNK_ROWS

    memory["synthetic rows (written in chunks)"] = _OUTPUT_CELL * min(out_rows, CHUNK_ROWS) * d
    if write_model:
        memory["--model file (measurements and zip)"] = 2 * _PAYLOAD_CELL * facts.total_cells
    if write_marginals:
        memory["--marginals long table"] = _LONG_CELL * facts.total_cells
    if max_memory is not None:
        limit, limit_source = max_memory, "--max-memory"
    elif config.max_memory is not None:
        limit, limit_source = config.max_memory, "limits.max_memory"
    else:
        limit = default_max_memory()
        limit_source = f"default: {DEFAULT_MEMORY_FRACTION:.0%} of this machine's {format_bytes(machine_memory())} RAM"
    return Plan(
        columns=list(zip(domain.names, domain.sizes)), domain_cells=full, marginals=len(cells),
        total_cells=facts.total_cells, largest_cells=facts.largest, rows=n, rows_source=source,
        output_rows=out_rows, algorithm=config.algorithm, guarantee=_guarantee(config), alg=alg,
        memory=memory, max_memory=limit, max_memory_source=limit_source,
    )


def check_memory(plan: Plan) -> None:
    """Refuse (ConfigError, exit 64) when the predicted peak exceeds the memory limit."""
    if plan.peak_memory > plan.max_memory:
        biggest = max(plan.memory, key=plan.memory.get)
        raise ConfigError(
            f"limits.max_memory: this release is predicted to need {format_bytes(plan.peak_memory)} "
            f"(largest part: {biggest}, {format_bytes(plan.memory[biggest])}), more than the limit of "
            f"{format_bytes(plan.max_memory)} ({plan.max_memory_source}); reduce the workload or raise "
            "limits.max_memory in the config or --max-memory (see dpsynth plan)"
        )


def format_plan(plan: Plan) -> str:
    """The plan as plain text for people."""
    lines = [f"dpsynth plan: {plan.algorithm}", "", "Columns (domain size):"]
    width = max((len(n) for n, _ in plan.columns), default=0)
    lines += [f"  {name:<{width}}  {size}" for name, size in plan.columns]
    lines += [
        f"  full domain: {plan.domain_cells:.3g} cells",
        "",
        *([(f"Workload: {plan.marginals} marginals, {plan.total_cells:,} cells in all, "
           f"largest {plan.largest_cells:,} cells")] if plan.marginals else []),
        f"Measured: {plan.alg.queries}",
        "",
        "Budget:",
    ]
    lines += [f"  {stage}: {text}" for stage, text in plan.alg.stages]
    lines += ["", f"Guarantee: {plan.guarantee}", ""]
    lines.append(f"Rows n: {plan.rows:,}, {plan.rows_source}; synthetic rows: {plan.output_rows:,}")
    if plan.alg.noise_sd is None:
        lines.append(f"Noise: {plan.alg.noise_note}")
    else:
        sd = plan.alg.noise_sd
        mean_cell = plan.rows / max(plan.total_cells / max(plan.marginals, 1), 1)
        ratio = sd / mean_cell if mean_cell else math.inf
        verdict = ("noise >> signal" if ratio > 10 else "noise larger than signal" if ratio > 1
                   else "noise comparable to signal" if ratio > 0.1 else "noise << signal")
        lines.append(
            f"Noise: standard deviation {sd:.4g} per measured cell ({sd / max(plan.rows, 1):.3g} of n); "
            f"an average cell holds {mean_cell:.4g} rows: {verdict}"
            + (f" ({plan.alg.noise_note})" if plan.alg.noise_note else "")
        )
    lines += ["", (f"Predicted peak memory: {format_bytes(plan.peak_memory)} "
                  f"(limit {format_bytes(plan.max_memory)}, {plan.max_memory_source})")]
    lines += [f"  {part}: {format_bytes(size)}" for part, size in plan.memory.items()]
    lines.append(f"Rough time: {_duration(plan.seconds)}")
    lines += [f"Note: {note}" for note in plan.alg.notes]
    if plan.peak_memory > plan.max_memory:
        lines.append("release would REFUSE this configuration: predicted memory exceeds the limit")
    return "\n".join(lines) + "\n"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"about {max(seconds, 1):.0f} s"
    if seconds < 3600:
        return f"about {seconds / 60:.0f} min"
    return f"about {seconds / 3600:.1f} h"
