"""What every command shares: the Typer app, one-line errors with exit codes, the RNG, progress.

Every command parses options, calls one library function and renders the
result.  Library errors (:class:`~dpsynth.errors.DpsynthError`) become one line
on stderr and their documented exit code; any other exception becomes a
one-line internal error (exit 70) without a traceback, because a traceback
could show values from the private table.  Set ``DPSYNTH_DEBUG=1`` to see it.
"""

from __future__ import annotations

import functools
import os
import sys
from typing import Annotated

import numpy as np
import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from dpsynth._version import __version__
from dpsynth.errors import DpsynthError

app = typer.Typer(
    name="dpsynth",
    help="Differentially private synthetic data with an auditable privacy-budget report.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
schema_app = typer.Typer(help="Schema helpers.", no_args_is_help=True, pretty_exceptions_show_locals=False)
app.add_typer(schema_app, name="schema")

INTERNAL_ERROR = 70


def _stderr(quiet: bool = False) -> Console:
    return Console(stderr=True, quiet=quiet, highlight=False, soft_wrap=True)


def fail(message: str, code: int) -> None:
    """Print one line to stderr and exit with ``code``."""
    sys.stderr.write(f"dpsynth: error: {message}\n")
    sys.stderr.flush()
    raise typer.Exit(code)


def handle_errors(func):
    """Turn library errors into one-line messages with their exit codes."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except typer.Exit:
            raise
        except DpsynthError as exc:
            fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            fail("interrupted; no output was written", 130)
        except Exception as exc:  # a bug, not a user mistake: no traceback, no locals
            if os.environ.get("DPSYNTH_DEBUG"):
                raise
            fail(
                f"internal error ({type(exc).__name__}); no output was written. "
                "Rerun with DPSYNTH_DEBUG=1 to see the traceback (it may show private values)",
                INTERNAL_ERROR,
            )

    return wrapper


def _version(value: bool) -> None:
    if value:
        typer.echo(f"dpsynth {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool | None, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = None,
) -> None:
    """Differentially private synthetic data with an auditable privacy-budget report."""


def make_rng(seed: int | None) -> np.random.Generator:
    """The only place a random generator is created: from a seed, or from OS entropy."""
    return np.random.default_rng(seed)


class Bar:
    """A rich progress bar on stderr fed by the library's progress callback."""

    def __init__(self, console: Console, enabled: bool):
        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(), console=console, transient=True, disable=not enabled,
        )
        self.tasks: dict[str, int] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage not in self.tasks:
            self.tasks[stage] = self.progress.add_task(stage, total=total)
        self.progress.update(self.tasks[stage], completed=done, total=total)

    def __enter__(self):
        self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        self.progress.__exit__(*exc)


def stderr_console(quiet: bool = False) -> Console:
    return _stderr(quiet)


def string_columns(cfg) -> list[str]:
    """Columns read as text: the categorical ones (their labels are strings in the schema)."""
    return cfg.domain.text_columns
def main() -> None:
    app()
