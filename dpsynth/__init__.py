"""dpsynth: differentially private synthetic data with an auditable privacy-budget report."""

__version__ = "0.1.0"

from .accountant import BudgetError, Ledger  # noqa: E402
from .config import Config, load_config, parse_config  # noqa: E402
from .errors import (  # noqa: E402
    ConfigError,
    DataError,
    DpsynthError,
    InputMissingError,
    OutputError,
    UsageError,
)
from .pipeline import ReleaseResult, release, release_from_counts  # noqa: E402
from .schema import Domain  # noqa: E402

__all__ = [
    "__version__",
    "release",
    "release_from_counts",
    "ReleaseResult",
    "load_config",
    "parse_config",
    "Config",
    "Domain",
    "Ledger",
    "BudgetError",
    "ConfigError",
    "DataError",
    "DpsynthError",
    "InputMissingError",
    "OutputError",
    "UsageError",
]
