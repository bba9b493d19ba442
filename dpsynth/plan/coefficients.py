"""The memory and time model's coefficients (see the package docstring).

Fitted by ``benchmarks/bench_plan.py``, which prints predicted against measured peaks: update them here when an
algorithm, the engine or the synthesis model changes.
"""

from __future__ import annotations

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

# DualQuery (not in the fitted model: its time is its work budget)
_T_LOCAL_DUALQUERY = 8e-5  # DualQuery local search, per sampled clause and start (KDD99: 0.4 s a round)
_T_CBC_DUALQUERY = 4e-3  # DualQuery CBC start-up and root node, per sampled clause
_T_NODE_DUALQUERY = 4e-4  # DualQuery CBC, per branch-and-bound node and sampled clause (max_nodes is a cap)

# The time model (dpsynth.plan.timing): seconds per unit of each work term, fitted by
# ``nice python -m benchmarks.bench_plan time`` (least squares on log CPU time; docs/cli.md, "Plan before you run").
TIME: dict[str, float] = {
    "startup": 1.93,
    "read": 2.96e-07,
    "write": 1.89e-07,
    "count": 3.92e-08,
    "noise": 1.37e-05,
    "pgm": 9.86e-08,
    "pgm_measured": 3.56e-09,
    "mw_synthesis": 1.07e-05,
    "ireduct": 9.83e-07,
    "mwem_score": 1.84e-08,
    "mwem_update": 2.52e-07,
    "mwem_candidates": 0.0003,
    "mwem_pgm": 1.65e-08,
    "fourier_build": 1e-08,  # not exercised by the grid (prior)
    "fourier_lp": 1.75e-05,
    "fourier_mw": 5e-09,  # not exercised by the grid (prior)
}
TIME_ERROR = {"median": 1.2, "p90": 2.1, "configs": 28}
"""max(predicted/actual, actual/predicted) over held-out configurations of the benchmark grid."""
