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
import signal
import sys
import threading
from typing import Annotated

import numpy as np
import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from dpsynth._version import __version__
from dpsynth.errors import DpsynthError

_CONTEXT = {"help_option_names": ["-h", "--help"]}
app = typer.Typer(
    name="dpsynth",
    help="Differentially private synthetic data with an auditable privacy-budget report.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    context_settings=_CONTEXT,
)
schema_app = typer.Typer(help="Schema helpers.", no_args_is_help=True, pretty_exceptions_show_locals=False,
                         context_settings=_CONTEXT)
app.add_typer(schema_app, name="schema")
report_app = typer.Typer(help="Read a release's privacy-budget report.", no_args_is_help=True,
                         pretty_exceptions_show_locals=False, context_settings=_CONTEXT)
app.add_typer(report_app, name="report")


def _one_line_usage_error(exc) -> None:
    """Command-line mistakes (unknown option, missing value, extra argument) as one line, exit 2."""
    if type(exc).__name__ == "NoArgsIsHelpError":
        return
    ctx = getattr(exc, "ctx", None)
    hint = f" (see {ctx.command_path} --help)" if ctx is not None else ""
    message = " ".join(exc.format_message().split())
    sys.stderr.write(f"dpsynth: error: {message}{hint}\n")


def _flags_without_type(self, ctx):
    """Flags (--force, --quiet) take no value: show no '<bool>' type in the help."""
    return None if getattr(self, "is_flag", False) else _option_type(self, ctx)


# Typer renders usage errors as a multi-line box and flags with a '<bool>' type; batch logs want one
# line and the help should not suggest '--force true'.  Both are display hooks of typer 0.2x.
try:
    import typer.core
    import typer.rich_utils

    typer.rich_utils.rich_format_error = _one_line_usage_error
    _option_type = typer.core.TyperOption.display_type_rich
    typer.core.TyperOption.display_type_rich = _flags_without_type
except (ImportError, AttributeError):  # another typer: its own (multi-line) rendering
    pass

INTERNAL_ERROR = 70


def _stderr(quiet: bool = False) -> Console:
    return Console(stderr=True, quiet=quiet, highlight=False, soft_wrap=True)


def fail(message: str, code: int) -> None:
    """Print one line to stderr and exit with ``code``."""
    sys.stderr.write(f"dpsynth: error: {message}\n")
    sys.stderr.flush()
    raise typer.Exit(code)


class Terminated(BaseException):
    """SIGTERM arrived: unwind like Ctrl-C so staged outputs are removed."""


def _on_sigterm(signum, frame) -> None:
    raise Terminated


def handle_errors(func):
    """Turn library errors into one-line messages with their exit codes (130 Ctrl-C, 143 SIGTERM)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGTERM, _on_sigterm) if main else None
        try:
            return func(*args, **kwargs)
        except typer.Exit:
            raise
        except DpsynthError as exc:
            fail(str(exc), exc.exit_code)
        except KeyboardInterrupt:
            fail("interrupted; no output was written", 130)
        except Terminated:
            fail("terminated (SIGTERM); no output was written", 143)
        except Exception as exc:  # a bug, not a user mistake: no traceback, no locals
            if os.environ.get("DPSYNTH_DEBUG"):
                raise
            fail(
                f"internal error ({type(exc).__name__}); no output was written. "
                "Rerun with DPSYNTH_DEBUG=1 to see the traceback (it may show private values)",
                INTERNAL_ERROR,
            )
        finally:
            if main:
                signal.signal(signal.SIGTERM, previous)

    return wrapper


def _version(value: bool) -> None:
    if value:
        typer.echo(f"dpsynth {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool | None, typer.Option("--version", "-V", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = None,
) -> None:
    """Differentially private synthetic data with an auditable privacy-budget report."""


def check_seed(seed: int | None) -> None:
    """A seed is a non-negative integer (numpy's rule), checked before any work."""
    if seed is not None and seed < 0:
        from dpsynth.errors import UsageError

        raise UsageError(f"--seed must be a non-negative integer, got {seed}")


def make_rng(seed: int | None) -> np.random.Generator:
    """The only place a random generator is created: from a seed, or from OS entropy."""
    check_seed(seed)
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
