"""dpsynth: differentially private synthetic data with an auditable privacy-budget report."""

from dpsynth._version import __version__
from dpsynth.algorithms import AlgorithmSpec, algorithm_names, get_algorithm
from dpsynth.config import ColumnDocument, Config, load_config, parse_config
from dpsynth.data.schema import Domain
from dpsynth.errors import (
    ConfigError,
    DataError,
    DpsynthError,
    InputMissingError,
    OutputError,
    UsageError,
)
from dpsynth.modelfile import ModelFileError, ReleasedModel, load_model
from dpsynth.pipeline import ReleaseResult, release, release_from_counts
from dpsynth.plan import Plan, format_plan, make_plan
from dpsynth.privacy.accountant import BudgetError, Ledger

ALGORITHMS: tuple[str, ...] = algorithm_names()
"""The names ``algorithm.name`` (and :meth:`Config.build`'s ``algorithm``) accepts, in the registry's order;
:func:`get_algorithm` gives each one's :class:`AlgorithmSpec` (``summary``, ``params`` dataclass)."""

__all__ = [
    "ALGORITHMS",
    "AlgorithmSpec",
    "BudgetError",
    "ColumnDocument",
    "Config",
    "ConfigError",
    "DataError",
    "Domain",
    "DpsynthError",
    "InputMissingError",
    "Ledger",
    "ModelFileError",
    "OutputError",
    "Plan",
    "ReleaseResult",
    "ReleasedModel",
    "UsageError",
    "__version__",
    "format_plan",
    "get_algorithm",
    "load_config",
    "load_model",
    "make_plan",
    "parse_config",
    "release",
    "release_from_counts",
]
