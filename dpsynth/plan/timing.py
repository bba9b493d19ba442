"""The time model: seconds = Σ coefficient × work, each work term a public quantity.

Every predictor (:mod:`dpsynth.plan.predictors`) states the work of its algorithm as named terms
(:data:`TERMS`: cells read, marginals counted over n rows, mirror-descent steps × junction-tree cells,
...); :func:`seconds` multiplies each by its coefficient (:data:`dpsynth.plan.coefficients.TIME`,
fitted by ``benchmarks/bench_plan.py time``: least squares on log time over a grid of public
quantities) and adds them.  The model's measured error on held-out configurations
(:data:`dpsynth.plan.coefficients.TIME_ERROR`) is printed with the estimate.  Nothing here reads data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from dpsynth.plan.coefficients import TIME, TIME_ERROR

__all__ = ["TERMS", "common_work", "seconds", "time_error", "tree_cells"]

TERMS: dict[str, str] = {
    "startup": "interpreter, imports, configuration (once)",
    "read": "read and encode the input, per input cell (rows × columns)",
    "write": "sample, decode and write the synthetic rows, per output cell",
    "count": "count a marginal over the rows, per row and marginal counted",
    "noise": "noise and bookkeeping, per measured cell",
    "pgm": "the pgm estimator, per mirror-descent step and junction-tree cell",
    "pgm_measured": "the pgm estimator, per mirror-descent step and measured cell",
    "mw_synthesis": "the factored synthesis model (mw/ipf), per pass and measured cell",
    "ireduct": "noise-down rounds (iReduct, TwoPhase, iResamp), per measured cell",
    "mwem_score": "MWEM selection, per round and candidate cell",
    "mwem_update": "MWEM multiplicative-weights update, per round and model cell",
    "mwem_candidates": "MWEM pgm variant: scoring a candidate on the model, per round and candidate",
    "mwem_pgm": "MWEM pgm variant: estimator refits, per mirror-descent step and junction-tree cell",
    "fourier_build": "Fourier character matrix, per entry (cells × coefficients)",
    "fourier_lp": "Fourier LP (PuLP/CBC), per entry",
    "fourier_mw": "Fourier MW fit, per pass and entry",
}
"""The work terms and what each counts (the keys of :data:`~dpsynth.plan.coefficients.TIME`)."""


def seconds(work: Mapping[str, float]) -> float:
    """Σ TIME[term] × work[term] (an unknown term is a programming error: KeyError)."""
    return float(sum(TIME[term] * float(amount) for term, amount in work.items()))


def common_work(rows: int, columns: int, output_rows: int, engine: str = "numpy") -> dict[str, float]:
    """What every release does: start, read the input (numpy or stream engine), write the rows."""
    return {"startup": 1.0, "read": float(rows) * columns, "write": float(output_rows) * columns}


def tree_cells(sizes: Sequence[int], cliques: Sequence[Sequence[int]], cap: int) -> int:
    """Cells of the junction tree of the 1-way marginals and ``cliques``, at most ``cap`` (the model's bound:
    beyond it the estimator coarsens the cliques).  Public: the domain and the workload."""
    from dpsynth.models.junction import model_cells

    base = [(a,) for a in range(len(sizes))]
    if not cliques:
        return min(int(sum(sizes)), cap)
    return min(model_cells(list(sizes), base + [tuple(c) for c in cliques]), cap)


def time_error() -> tuple[float, float]:
    """(median, 90th percentile) of max(predicted/actual, actual/predicted) on held-out configurations."""
    return float(TIME_ERROR["median"]), float(TIME_ERROR["p90"])


def duration(value: float) -> str:
    """``about 3 s``, ``about 4 min``, ``about 1.5 h``."""
    if not math.isfinite(value):
        return "unknown"
    if value < 60:
        return f"about {max(value, 1):.0f} s"
    if value < 3600:
        return f"about {value / 60:.0f} min"
    return f"about {value / 3600:.1f} h"
