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

# Time coefficients (seconds), as rough as the text says: measured on a 2-core machine shared by
# about 8 jobs (load ~10), so an idle machine is several times faster.
_T_ROW = 4e-6  # read and encode, per input cell
_T_MARGINAL = 0.04  # fitting the factored synthesis model, per released marginal and 10 passes
_T_PGM_MODEL = 3.5e-6  # the pgm estimator, per junction-tree cell and iteration
_T_PGM_CELL = 1e-8  # the pgm estimator, per measured cell and iteration
_T_CELL_LAPLACE = 1e-6  # count and noise, per workload cell
_T_CELL_MWEM = 4e-8  # scoring, per candidate cell and round
_T_CELL_IREDUCT = 2e-5  # per workload cell (several noise-down rounds and the fit)
_T_LOCAL_DUALQUERY = 8e-5  # DualQuery local search, per sampled clause and start (KDD99: 0.4 s a round)
_T_CBC_DUALQUERY = 4e-3  # DualQuery CBC start-up and root node, per sampled clause
_T_NODE_DUALQUERY = 4e-4  # DualQuery CBC, per branch-and-bound node and sampled clause (max_nodes is a cap)
