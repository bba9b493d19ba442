"""Algorithm registry: one :class:`~dpsynth.algorithms.spec.AlgorithmSpec` per algorithm.

Each algorithm module ends with ``SPEC = AlgorithmSpec(...)`` declaring its
parameters (a frozen dataclass), ``run``, its composition rule, the workload
sections it measures, an optional ``preflight`` (size guards from public
information, run before any data is read) and the parameter variants the
privacy tests must audit.
The pipeline, the config parser, the docs tests and the privacy tests iterate
over :func:`algorithm_names` / :func:`get_algorithm`; to add an algorithm, write
its module and add one line to ``_MODULES``.
"""

from __future__ import annotations

import importlib

from dpsynth.algorithms.base import AlgorithmContext, AlgorithmOutput, NoisyMarginal
from dpsynth.algorithms.spec import AlgorithmSpec

__all__ = ["AlgorithmContext", "AlgorithmOutput", "AlgorithmSpec", "NoisyMarginal", "algorithm_names", "get_algorithm"]

_MODULES: dict[str, str] = {
    "laplace": "dpsynth.algorithms.laplace",
    "mwem": "dpsynth.algorithms.mwem",
    "dualquery": "dpsynth.algorithms.dualquery.core",
    "ireduct": "dpsynth.algorithms.ireduct.core",
    "twophase": "dpsynth.algorithms.ireduct.twophase",
    "iresamp": "dpsynth.algorithms.ireduct.iresamp",
    "fourier": "dpsynth.algorithms.fourier",
    "aim": "dpsynth.algorithms.aim",
    "auto": "dpsynth.algorithms.auto",
}
"""Name -> module defining ``SPEC`` (imported on first use: modules import this package's ``base``)."""


def algorithm_names() -> tuple[str, ...]:
    return tuple(_MODULES)


def get_algorithm(name: str) -> AlgorithmSpec:
    """The specification of algorithm ``name``."""
    spec = importlib.import_module(_MODULES[name]).SPEC
    if not isinstance(spec, AlgorithmSpec) or spec.name != name:
        raise TypeError(f"{_MODULES[name]}.SPEC must be the AlgorithmSpec named {name!r}")
    return spec
