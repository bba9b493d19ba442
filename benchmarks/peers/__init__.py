"""A peer benchmark: dpsynth beside smartnoise-synth (MST, AIM) on the same integer-coded tables.

The peer lives in its own venv (``benchmarks/peers/.venv``, made by
``install.sh``; never a dependency of dpsynth) and runs in a child process
(``snsynth_child.py``).  ``run.py`` is the entry point: ``python -m benchmarks.peers.run --help``.

Importing this package pins BLAS/OpenMP to one thread (unless already set) so
that dpsynth's forked release children compute on one core, as the peer's do.
"""

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
