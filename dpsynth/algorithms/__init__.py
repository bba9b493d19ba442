"""Algorithm registry.

Each algorithm lives in its own module, which defines:

* ``parse_params(raw: Mapping) -> Params``: validate ``algorithm.params``
  (raise :class:`~dpsynth.errors.ConfigError` naming the key path; use
  :func:`dpsynth.config.params_from_mapping` on a frozen dataclass);
* ``composition(params, privacy) -> Composition`` (optional): the composition
  theorem the ledger must use (default: basic composition);
* ``preflight(domain, workload, params)`` (optional): refuse a configuration
  from public information alone, before any data is read;
* ``run(ctx, params, *, rng) -> AlgorithmOutput``.

To add an algorithm, add its module to ``_MODULES``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from dpsynth.algorithms.base import AlgorithmContext, AlgorithmOutput, NoisyMarginal

__all__ = ["AlgorithmContext", "AlgorithmOutput", "NoisyMarginal", "algorithm_names", "get_algorithm"]

_MODULES: dict[str, str] = {
    "laplace": "dpsynth.algorithms.laplace",
    "mwem": "dpsynth.algorithms.mwem",
    "dualquery": "dpsynth.algorithms.dualquery.core",
    "ireduct": "dpsynth.algorithms.ireduct",
    "twophase": "dpsynth.algorithms.twophase",
    "iresamp": "dpsynth.algorithms.iresamp",
    "fourier": "dpsynth.algorithms.fourier",
}


def algorithm_names() -> tuple[str, ...]:
    return tuple(_MODULES)


def get_algorithm(name: str) -> ModuleType:
    """The module implementing algorithm ``name``."""
    return importlib.import_module(_MODULES[name])
