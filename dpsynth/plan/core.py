"""The plan of a release (:func:`make_plan`) and the memory guard (:func:`check_memory`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpsynth.config import Config
from dpsynth.errors import BudgetError, ConfigError
from dpsynth.plan import machine
from dpsynth.plan.budget import planned_stages, stage_lines
from dpsynth.plan.coefficients import (
    _BASE,
    _BASE_DUALQUERY,
    _INPUT_CELL,
    _LONG_CELL,
    _OUTPUT_CELL,
    _PAYLOAD_CELL,
    _STREAM_BATCH,
)
from dpsynth.plan.machine import format_bytes
from dpsynth.plan.predictors import PREDICTORS, AlgorithmPlan, Facts
from dpsynth.plan.rows import n_is_public, plan_rows
from dpsynth.plan.timing import common_work, seconds

__all__ = ["Plan", "check_memory", "make_plan"]


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
    engine: str = "numpy"

    @property
    def peak_memory(self) -> int:
        return int(sum(self.memory.values()))

    @property
    def work(self) -> dict[str, float]:
        """The time model's work terms (public quantities, :mod:`dpsynth.plan.timing`)."""
        common = common_work(self.rows, len(self.columns), self.output_rows, self.engine)
        return {**common, **{k: common.get(k, 0.0) + v for k, v in self.alg.work.items()}}

    @property
    def seconds(self) -> float:
        return self.alg.seconds + seconds(self.work)

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
            "time_work": self.work,
            "notes": list(self.alg.notes),
        }



def _guarantee(config: Config) -> str:
    p = config.privacy
    kind = f"({p.epsilon:g}, {p.delta:g})-differential privacy" if p.delta > 0 else f"{p.epsilon:g}-differential privacy"
    n = ("n (the row count) is public" if n_is_public(config)
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
    n, source = plan_rows(config, rows, input_path)
    out_rows = config.output.rows if config.output.rows is not None else n
    eps = config.privacy.epsilon - (config.privacy.n_epsilon or 0.0)
    if getattr(config, "discover", None) is None:
        eps = _after_fine(config, n, eps, engine == "numpy")
    full = math.prod(domain.sizes)
    facts = Facts(config=config, rows=n, marginal_cells=cells, total_cells=int(sum(cells)),
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
        try:
            stages = planned_stages(config, n, fine_available=engine == "numpy")  # the algorithm's own budget
        except (BudgetError, ConfigError) as exc:  # e.g. no DualQuery setting fits at this n
            stages, alg.stages = None, alg.stages or [(config.algorithm, f"infeasible at this n: {exc}")]
        if stages is not None:
            alg.stages = stage_lines(stages)
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
        limit, limit_source = machine.default_limit()  # the smallest of RAM, RLIMIT_AS, cgroup, and which
    return Plan(
        columns=list(zip(domain.names, domain.sizes)), domain_cells=full, marginals=len(cells),
        total_cells=facts.total_cells, largest_cells=facts.largest, rows=n, rows_source=source,
        output_rows=out_rows, algorithm=config.algorithm, guarantee=_guarantee(config), alg=alg,
        memory=memory, max_memory=limit, max_memory_source=limit_source, engine=engine,
    )


def _after_fine(config: Config, n: int, eps: float, available: bool) -> float:
    """ε left for the algorithm once the fine view (``decode.fine``) has taken its share (basic composition;
    under zCDP the share is of ρ and the predictors' ε stays the budget's)."""
    from dpsynth.plan.budget import plan_context
    from dpsynth.privacy.accountant import BasicComposition

    try:
        ctx, _ = plan_context(config, n, fine_available=available)
    except (BudgetError, ConfigError):
        return eps
    return ctx.ledger.remaining() if isinstance(ctx.ledger.composition, BasicComposition) else eps


def check_memory(plan: Plan) -> None:
    """Refuse (ConfigError, exit 64) when the predicted peak exceeds the memory limit."""
    if plan.peak_memory > plan.max_memory:
        biggest = max(plan.memory, key=lambda part: plan.memory[part])
        raise ConfigError(
            f"limits.max_memory: this release is predicted to need {format_bytes(plan.peak_memory)} "
            f"(largest part: {biggest}, {format_bytes(plan.memory[biggest])}), more than the limit of "
            f"{format_bytes(plan.max_memory)} ({plan.max_memory_source}); reduce the workload or raise "
            "limits.max_memory in the config or --max-memory (see dpsynth plan)"
        )

