"""Typed errors with documented exit codes.

Library code raises these; only :mod:`dpsynth.cli` turns them into a one-line
message on stderr and a process exit code.  Messages never contain values read
from the private table (column names come from the public schema, so they may).

==========  ====================================================
exit code   meaning
==========  ====================================================
2           usage error (bad command-line options)
3           privacy budget exceeded or infeasible budget setting
64          bad configuration or schema
65          bad input data
66          input file missing
69          an optional part is unavailable: a counts engine (PySpark or Java missing), an extra (matplotlib)
70          internal error (a bug; no traceback, see cli.py)
73          output cannot be created
==========  ====================================================
"""

from __future__ import annotations

__all__ = [
    "BudgetError",
    "ConfigError",
    "DataError",
    "DpsynthError",
    "EngineError",
    "InputMissingError",
    "OutputError",
    "UnavailableError",
    "UsageError",
]


class DpsynthError(Exception):
    """Base class: a user-facing error with an exit code."""

    exit_code = 1


class UsageError(DpsynthError):
    """The command line is inconsistent (e.g. ``-o -`` without ``-r``)."""

    exit_code = 2


class BudgetError(DpsynthError):
    """A charge would exceed the privacy budget, or a budget setting is infeasible."""

    exit_code = 3


class ConfigError(DpsynthError):
    """The YAML configuration or schema is invalid.  Messages name the key path."""

    exit_code = 64


class DataError(DpsynthError):
    """The input table does not match the schema or cannot be parsed."""

    exit_code = 65


class InputMissingError(DpsynthError):
    """An input file does not exist."""

    exit_code = 66


class UnavailableError(DpsynthError):
    """An optional part is not installed or cannot run (an extra of the package, a counts engine)."""

    exit_code = 69


class EngineError(UnavailableError):
    """A counts engine cannot run (PySpark or Java missing, Spark failed to start)."""


class OutputError(DpsynthError):
    """An output file cannot be created (exists without --force, unwritable, ...)."""

    exit_code = 73
