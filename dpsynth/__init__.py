"""dpsynth: differentially private synthetic data with an auditable privacy-budget report."""

from dpsynth._version import __version__
from dpsynth.config import Config, load_config, parse_config
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
from dpsynth.privacy.accountant import BudgetError, Ledger

__all__ = [
    "BudgetError",
    "Config",
    "ConfigError",
    "DataError",
    "Domain",
    "DpsynthError",
    "InputMissingError",
    "Ledger",
    "ModelFileError",
    "OutputError",
    "ReleaseResult",
    "ReleasedModel",
    "UsageError",
    "__version__",
    "load_config",
    "load_model",
    "parse_config",
    "release",
    "release_from_counts",
]
