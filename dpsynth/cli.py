"""Command-line interface: thin Typer commands over the library.

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
import time
from pathlib import Path
from typing import Annotated, Optional

import numpy as np
import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import __version__
from .errors import DpsynthError, UsageError

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
        Optional[bool], typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = None,
) -> None:
    """Differentially private synthetic data with an auditable privacy-budget report."""


def make_rng(seed: int | None) -> np.random.Generator:
    """The only place a random generator is created: from a seed, or from OS entropy."""
    return np.random.default_rng(seed)


class _Bar:
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


@app.command()
@handle_errors
def release(
    config: Annotated[Path, typer.Option("--config", "-c", help="YAML configuration (schema, privacy, algorithm).")],
    input: Annotated[str, typer.Option("--input", "-i", help="Input table: .csv, .csv.gz, .parquet, or - for CSV on stdin.")],
    output: Annotated[str, typer.Option("--output", "-o", help="Synthetic rows: .csv, .csv.gz, .parquet, or - for CSV on stdout.")],
    report: Annotated[Optional[str], typer.Option("--report", "-r", help="Report JSON (default: <output>.report.json; required with -o -).")] = None,
    marginals: Annotated[Optional[str], typer.Option("--marginals", help="Also write the released noisy marginals (long format).")] = None,
    seed: Annotated[Optional[int], typer.Option("--seed", help="Fixed seed (testing only; the report says so).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing outputs.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No summary or progress on stderr.")] = False,
    max_cells: Annotated[Optional[int], typer.Option("--max-cells", help="Refuse marginals larger than this many cells.")] = None,
) -> None:
    """Release differentially private synthetic rows and a privacy-budget report."""
    from .config import load_config
    from .io import OutputSet, check_output_path, read_table, table_format
    from .pipeline import preflight
    from .pipeline import release as run_release

    t0 = time.perf_counter()
    console = _stderr(quiet)
    cfg = load_config(config)
    if max_cells is not None:
        if max_cells < 1:
            raise UsageError(f"--max-cells must be >= 1, got {max_cells}")
        cfg = _replace(cfg, max_cells=max_cells)
    preflight(cfg)
    if report is None:
        if output == "-":
            raise UsageError("--report is required when the output is stdout (-o -)")
        report = f"{output}.report.json"
    if report == "-" and output == "-":
        raise UsageError("--report and --output cannot both be stdout")
    outputs = [output, report] + ([marginals] if marginals else [])
    if len(set(outputs)) != len(outputs):
        raise UsageError("--output, --report and --marginals must be different paths")
    for path in outputs:
        check_output_path(path, force=force)
    if input != "-" and input in outputs:
        raise UsageError("an output path is the same as the input")
    for path in (input, output, marginals):
        if path:
            table_format(path)  # a bad extension is a usage error, before any work
    seed = seed if seed is not None else cfg.seed
    string_cols = [c.name for c in cfg.domain.columns if c.kind == "categorical"]
    table = read_table(input, string_columns=string_cols)
    t_read = time.perf_counter()
    with _Bar(console, enabled=not quiet) as bar:
        result = run_release(
            table, cfg, rng=make_rng(seed), seeded=seed is not None, progress=bar,
            notice=lambda msg: console.print(f"[yellow]notice:[/] {msg}"),
        )
    del table
    t_alg = time.perf_counter()
    with OutputSet(force=force) as out:
        out.add_table(output, result.synthetic)
        if marginals:
            if result.marginals is None:
                raise UsageError(f"algorithm '{cfg.algorithm}' releases no noisy marginals (drop --marginals)")
            out.add_table(marginals, result.marginals)
        out.add_json(report, result.report)
        out.commit()
    _summary(console, result.report, {"read": t_read - t0, "release": t_alg - t_read, "write": time.perf_counter() - t_alg})


def _replace(cfg, **changes):
    import dataclasses

    return dataclasses.replace(cfg, **changes)


def _summary(console: Console, report: dict, timings: dict[str, float]) -> None:
    p = report["privacy"]
    table = Table(title="dpsynth release", show_header=False, title_justify="left")
    table.add_row("algorithm", report["algorithm"]["name"])
    table.add_row("epsilon spent / requested", f"{p['epsilon_spent']:.6g} / {p['epsilon_requested']:.6g}")
    table.add_row("delta spent / requested", f"{p['delta_spent']:.3g} / {p['delta_requested']:.3g}")
    table.add_row("composition", p["composition"]["theorem"])
    table.add_row("neighbouring", p["neighbouring"])
    table.add_row("n", p["n"]["mode"])
    table.add_row("noisy values and choices (ledger)", str(sum(c["count"] for c in report["ledger"])))
    table.add_row("synthetic rows", str(report["output"]["rows"]))
    table.add_row("randomness", report["randomness"]["source"])
    table.add_row("time (s)", ", ".join(f"{k} {v:.2f}" for k, v in timings.items()))
    console.print(table)
    for w in report["warnings"]:
        console.print(f"[yellow]warning:[/] {w}")


@schema_app.command("draft")
@handle_errors
def schema_draft(
    input: Annotated[str, typer.Argument(help="Table to draft a schema from (.csv, .csv.gz, .parquet, -).")],
    max_categories: Annotated[int, typer.Option("--max-categories", help="Columns with more distinct values are drafted as numeric or flagged.")] = 100,
) -> None:
    """Print a YAML schema drafted FROM THE DATA for a person to edit (NOT private: see stderr)."""
    from .draft import draft_schema
    from .io import read_table

    sys.stderr.write(
        "dpsynth: WARNING: this schema is learned from the data and is NOT differentially private.\n"
        "dpsynth: WARNING: its categories and bounds reveal values of the input. Replace them with\n"
        "dpsynth: WARNING: public knowledge (documentation, round bounds) before any release.\n"
    )
    table = read_table(input)
    typer.echo(draft_schema(table, max_categories=max_categories), nl=False)


def main() -> None:
    app()
