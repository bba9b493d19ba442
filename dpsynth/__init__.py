"""dpsynth: differentially private synthetic data with an auditable privacy-budget report."""

__version__ = "0.1.0"

from .accountant import BudgetError, Ledger
from .config import Config, load_config, parse_config
from .errors import (
    ConfigError,
    DataError,
    DpsynthError,
    InputMissingError,
    OutputError,
    UsageError,
)
from .pipeline import ReleaseResult, release, release_from_counts
from .schema import Domain

__all__ = [
    "BudgetError",
    "Config",
    "ConfigError",
    "DataError",
    "Domain",
    "DpsynthError",
    "InputMissingError",
    "Ledger",
    "OutputError",
    "ReleaseResult",
    "UsageError",
    "__version__",
    "load_config",
    "parse_config",
    "release",
    "release_from_counts",
]
