"""What every command shares: the Typer app, one-line errors with exit codes, the RNG, progress.

Every command parses options, calls one library function and renders the
result.  Library errors (:class:`~dpsynth.errors.DpsynthError`) become one line
on stderr and their documented exit code; any other exception becomes a
one-line internal error (exit 70) without a traceback, because a traceback
could show values from the private table.  Set ``DPSYNTH_DEBUG=1`` to see it.
"""

from __future__ import annotations

import functools
import json
import math
import os
import signal
import sys
import threading
import time
from typing import Annotated

import numpy as np
import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

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
CLOSED_PIPE = 141  # 128 + SIGPIPE: what a Unix tool's shell status is when its reader went away


def _stderr(quiet: bool = False) -> Console:
    return Console(stderr=True, quiet=quiet, highlight=False, soft_wrap=True)


class _LogState(threading.local):
    json = False  # set by check_log_format (--log-format json): errors too become JSON lines


_LOG = _LogState()


def fail(message: str, code: int) -> None:
    """Print one line to stderr (a JSON object under --log-format json) and exit with ``code``."""
    try:
        sys.stdout.flush()  # what the command printed before failing (a closed pipe: the error matters more)
    except BrokenPipeError:
        _silence_stdout()
    if _LOG.json:
        sys.stderr.write(json.dumps({"event": "error", "exit_code": code, "message": message}) + "\n")
    else:
        sys.stderr.write(f"dpsynth: error: {message}\n")
    sys.stderr.flush()
    raise typer.Exit(code)


class Terminated(BaseException):
    """SIGTERM arrived: unwind like Ctrl-C so staged outputs are removed."""


def _on_sigterm(signum, frame) -> None:
    raise Terminated


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's final flush of what is still buffered
    does not fail again on a closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file descriptor (e.g. a test runner's buffer)
        pass


def _closed_pipe() -> None:
    """The reader of stdout went away (``| head``): stop quietly with status 141, as ``yes | head`` does."""
    _silence_stdout()
    raise typer.Exit(CLOSED_PIPE)


def handle_errors(func):
    """Turn library errors into one-line messages with their exit codes (130 Ctrl-C, 141 closed pipe, 143 SIGTERM)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        main = threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGTERM, _on_sigterm) if main else None
        _LOG.json = False
        try:
            result = func(*args, **kwargs)
            sys.stdout.flush()  # here, not at exit: a closed pipe is then handled below
            return result
        except typer.Exit:
            raise
        except DpsynthError as exc:
            fail(str(exc), exc.exit_code)
        except BrokenPipeError:
            _closed_pipe()
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
            _LOG.json = False
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
    """Progress on stderr fed by the library's progress callback ``(stage, done, total)``.

    On a terminal: rich bars with elapsed time and ETA.  Otherwise (a batch log):
    one line when a stage starts, then at most one line every ``interval``
    seconds, and one when it ends, each with done/total, elapsed and ETA; plain
    text (``log_format="text"``) or JSON lines (``"json"``).  A stage that ends
    short of its total (MWEM stopping early) gets its final line on exit, so the
    last line of each stage is where it ended.  ``clock`` is injectable for tests.
    """

    def __init__(self, console: Console, enabled: bool, *, log_format: str = "text", interval: float = 10.0,
                 clock=time.monotonic):
        self.terminal = enabled and console.is_terminal
        self.log = enabled and not console.is_terminal
        self.console, self.log_format, self.interval, self.clock = console, log_format, interval, clock
        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=True,
            disable=not self.terminal,
        )
        self.tasks: dict[str, int] = {}
        self.started: dict[str, tuple[float, int]] = {}  # stage -> (time, done) of its first call
        self.last: dict[str, float] = {}
        self.seen: dict[str, tuple[int, int]] = {}  # stage -> (done, total) of its last call
        self.logged: dict[str, tuple[int, int]] = {}  # ... and of its last line

    def __call__(self, stage: str, done: int, total: int) -> None:
        if self.terminal:
            if stage not in self.tasks:
                self.tasks[stage] = self.progress.add_task(stage, total=total)
            self.progress.update(self.tasks[stage], completed=done, total=total)
        if not self.log:
            return
        now = self.clock()
        self.seen[stage] = (done, total)
        first = stage not in self.started
        if first:
            self.started[stage] = (now, done)
        finished = total > 0 and done >= total
        if first or finished or now - self.last.get(stage, -math.inf) >= self.interval:
            self.last[stage] = now
            t0, d0 = self.started[stage]
            # ETA from the rate since the stage's first report (unknown until a second report)
            eta = (now - t0) * (total - done) / (done - d0) if done > d0 and done <= total else None
            self.logged[stage] = (done, total)
            self._line(stage, done, total, now - t0, 0.0 if finished else eta)

    def _line(self, stage: str, done: int, total: int, elapsed: float, eta: float | None) -> None:
        if self.log_format == "json":
            text = json.dumps({"event": "progress", "stage": stage, "done": done, "total": total,
                               "elapsed_s": round(elapsed, 1), "eta_s": None if eta is None else round(eta, 1)})
        else:
            pct = f" ({100 * done / total:.0f}%)" if total else ""
            text = (f"dpsynth: progress: {stage} {done}/{total}{pct}, elapsed {_clock(elapsed)}, "
                    f"ETA {'unknown' if eta is None else _clock(eta)}")
        self.console.file.write(text + "\n")
        self.console.file.flush()

    def __enter__(self):
        self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        self.progress.__exit__(*exc)
        if self.log and exc[0] is None:
            now = self.clock()
            for stage, (done, total) in self.seen.items():
                if self.logged.get(stage) != (done, total):
                    self.logged[stage] = (done, total)
                    self._line(stage, done, total, now - self.started[stage][0], 0.0)


def _clock(seconds: float) -> str:
    s = round(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def input_options(delimiter: str, encoding: str, cfg=None, engine: str = "numpy"):
    """How to read the input (--delimiter, --encoding, schema.strip): one place for every command."""
    from dpsynth.data.source import InputOptions
    from dpsynth.errors import UsageError

    delimiter = "\t" if delimiter in ("\\t", "tab", "TAB") else delimiter
    options = InputOptions(delimiter=delimiter, encoding=encoding, strip=bool(getattr(cfg, "strip", False)))
    if engine == "spark" and not options.default:
        raise UsageError("--delimiter, --encoding and schema.strip are supported by the numpy and stream engines; "
                         "convert the file to UTF-8 comma-separated CSV for --engine spark")
    return options


def check_engine_input(engine: str, input: str, spark_master: str | None) -> None:
    """--engine and --spark-master against the input (release, schema discover)."""
    from dpsynth.data.engines import ENGINES
    from dpsynth.errors import UsageError

    if engine not in ENGINES:
        raise UsageError(f"--engine must be one of {', '.join(ENGINES)}, got '{engine}'")
    if engine != "numpy" and input == "-":
        raise UsageError(f"--engine {engine} reads a file: give --input as a path, not - (stdin)")
    if spark_master and engine != "spark":
        raise UsageError("--spark-master needs --engine spark")


LOG_FORMATS = ("text", "json")

LogFormat = Annotated[str, typer.Option(
    "--log-format", help="stderr as text or json (JSON lines: every stderr line one object, the last a summary or "
    "an error event).")]
"""The --log-format option of the commands without progress bars (release and evaluate describe their progress)."""


def check_log_format(value: str) -> str:
    """Check --log-format; under ``json`` every later stderr line of the command is a JSON object."""
    if value not in LOG_FORMATS:
        from dpsynth.errors import UsageError

        raise UsageError(f"--log-format must be text or json, got '{value}'")
    _LOG.json = value == "json"
    return value


def emit(console: Console, event: str, **fields) -> None:
    """One JSON line ``{"event": ..., **fields}`` on the console's stream (nothing when it is quiet)."""
    if not console.quiet:
        console.file.write(json.dumps({"event": event, **fields}) + "\n")
        console.file.flush()


def log_line(kind: str, message: str, **fields) -> None:
    """One stderr line of a command: ``dpsynth: message`` as text, or ``{"event": kind, "message": ...}`` under
    --log-format json (a multi-line text message becomes one event)."""
    if _LOG.json:
        text = " ".join(part.removeprefix("dpsynth: ").strip() for part in message.splitlines())
        sys.stderr.write(json.dumps({"event": kind, "message": text, **fields}) + "\n")
    else:
        sys.stderr.write("".join(f"dpsynth: {part.removeprefix('dpsynth: ')}\n" for part in message.splitlines()))
    sys.stderr.flush()


def log_summary(command: str, text: str | None, **fields) -> None:
    """A command's last stderr line on success: ``text`` (None: none) or a ``summary`` JSON event."""
    if _LOG.json:
        sys.stderr.write(json.dumps({"event": "summary", "command": command, **fields}) + "\n")
        sys.stderr.flush()
    elif text is not None:
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


def say(console: Console, kind: str, message: str, log_format: str) -> None:
    """A notice or warning line: ``kind: message`` (coloured on a terminal) or a JSON event."""
    if log_format == "json":
        emit(console, kind, message=message)
    else:
        console.print(f"[yellow]{kind}:[/] {message}")


def stderr_console(quiet: bool = False) -> Console:
    return _stderr(quiet)


def string_columns(cfg) -> list[str]:
    """Columns read as text: the categorical ones (their labels are strings in the schema)."""
    return cfg.domain.text_columns
def main() -> None:
    """The console script: the app, then an exit without interpreter teardown (:func:`_leave`)."""
    try:
        app()
        code = 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = int(exc.code or 0)
        else:  # sys.exit("text"): Python would print it and exit 1
            sys.stderr.write(f"{exc.code}\n")
            code = 1
    _leave(code)


def _leave(code: int) -> None:
    """Flush stdout and stderr and exit with ``code`` at once (``os._exit``): every output file is closed by then
    (OutputSet commits before a command returns).  Interpreter teardown with Arrow's worker threads still alive
    can abort the process ("terminate called without an active exception", exit 134: the class of
    apache/arrow#34314): `dpsynth check` on a CSV missing the schema's columns aborted in 24 of 240 runs under
    load (4 at once on 2 cores) where it should exit 65, and once in docs/batch.md's walkthrough under CI."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (BrokenPipeError, OSError, ValueError):  # (a closed pipe: the exit status says so already)
            pass
    os._exit(code)
