"""What a release will cost before it runs: domain, workload, budget split, noise, memory, time.

``dpsynth plan`` prints a :class:`Plan`; ``dpsynth release`` computes the same
plan first and refuses (exit 64, before reading any data) when the predicted
peak memory exceeds ``limits.max_memory`` (default: :data:`DEFAULT_MEMORY_FRACTION`
of the smallest of the machine's RAM, RLIMIT_AS and the cgroup limit: :mod:`dpsynth.plan.machine`).

A plan reads the configuration and, at most, the size of the input file (never
its contents): everything in it is public.  The row count n matters for memory
(the numpy engine holds the table) and for noise relative to the counts; it is
the ``rows`` argument when given, otherwise (n public only) an estimate from the
input file size and the schema (stated as such), otherwise an assumption of
:data:`ASSUMED_ROWS` rows (stated as such).  With n private the file size is never
used: the plan's text and the memory guard's exit status would then depend on n.

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

Time model (:mod:`dpsynth.plan.timing`).  Seconds are a sum of work terms, each a
coefficient times a public quantity (cells read and written, n × marginals counted,
mirror-descent steps × junction-tree cells, MWEM rounds × candidate cells, Fourier
entries, ...); the predictors state the work, ``benchmarks/bench_plan.py time`` fits
the coefficients (least squares on log CPU time over a grid of rows, columns, values
per column, workload order, algorithm and rounds) and measures the error on held-out
configurations, which ``dpsynth plan`` prints with the estimate.  DualQuery's time is
its own estimate from its work budget (not fitted).
"""

from __future__ import annotations

from dpsynth.config import parse_bytes  # noqa: F401  (re-exported)
from dpsynth.plan.core import Plan, check_memory, make_plan
from dpsynth.plan.machine import DEFAULT_MEMORY_FRACTION, default_max_memory, format_bytes, machine_memory
from dpsynth.plan.predictors import PREDICTORS, AlgorithmPlan
from dpsynth.plan.rows import ASSUMED_ROWS
from dpsynth.plan.text import format_plan

__all__ = [
    "ASSUMED_ROWS",
    "DEFAULT_MEMORY_FRACTION",
    "PREDICTORS",
    "AlgorithmPlan",
    "Plan",
    "check_memory",
    "default_max_memory",
    "format_bytes",
    "format_plan",
    "machine_memory",
    "make_plan",
]
