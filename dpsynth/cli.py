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
from typing import Annotated

import numpy as np
import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from dpsynth._version import __version__
from dpsynth.errors import DpsynthError, UsageError

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
    report: Annotated[str | None, typer.Option("--report", "-r", help="Report JSON (default: <output>.report.json; required with -o -).")] = None,
    marginals: Annotated[str | None, typer.Option("--marginals", help="Also write the released noisy marginals (long format).")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Fixed seed (testing only; the report says so).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing outputs.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No summary or progress on stderr.")] = False,
    max_cells: Annotated[int | None, typer.Option("--max-cells", help="Refuse marginals larger than this many cells.")] = None,
    non_private_oracle: Annotated[bool, typer.Option("--non-private-oracle", help="NOT PRIVATE, benchmarking only: run iReduct's Oracle (true counts set the noise scales) on the workload, print its overall error as JSON and write no file.")] = False,
    engine: Annotated[str, typer.Option("--engine", help="Counts engine: numpy (in memory), stream (record batches; tables larger than memory) or spark (PySpark, the optional 'spark' extra of the package). stream and spark read a file, not -.")] = "numpy",
    spark_master: Annotated[str | None, typer.Option("--spark-master", help="Spark master URL for --engine spark (default: SPARK_REMOTE for Spark Connect, else local[*]).")] = None,
) -> None:
    """Release differentially private synthetic rows and a privacy-budget report."""
    from dpsynth.config import load_config
    from dpsynth.data.io import OutputSet, check_output_path, read_table, table_format
    from dpsynth.pipeline import preflight
    from dpsynth.pipeline import release as run_release

    t0 = time.perf_counter()
    console = _stderr(quiet)
    cfg = load_config(config)
    if max_cells is not None:
        if max_cells < 1:
            raise UsageError(f"--max-cells must be >= 1, got {max_cells}")
        cfg = _replace(cfg, max_cells=max_cells)
    preflight(cfg)
    _check_engine(engine, input, spark_master)
    if non_private_oracle:
        _oracle(cfg, input, seed if seed is not None else cfg.seed)
        return
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
    table = read_table(input, string_columns=string_cols) if engine == "numpy" else None
    t_read = time.perf_counter()
    with _Bar(console, enabled=not quiet and console.is_terminal) as bar:
        if table is None:  # the stream and spark engines read the file themselves
            from dpsynth.pipeline import release_from_source

            result = release_from_source(
                input, cfg, engine=engine, rng=make_rng(seed), seeded=seed is not None, progress=bar,
                notice=lambda msg: console.print(f"[yellow]notice:[/] {msg}"), spark_master=spark_master,
            )
        else:
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


def _oracle(cfg, input: str, seed: int | None) -> None:
    """--non-private-oracle: evaluation figures on stdout, a warning on stderr, no file written."""
    import json

    from dpsynth.data.io import read_table
    from dpsynth.pipeline import oracle_figures

    sys.stderr.write(
        "dpsynth: WARNING: --non-private-oracle is NOT differentially private: the true counts choose the\n"
        "dpsynth: WARNING: noise scales. Its figures describe the real data; no file is written.\n"
    )
    string_cols = [c.name for c in cfg.domain.columns if c.kind == "categorical"]
    figures = oracle_figures(read_table(input, string_columns=string_cols), cfg, rng=make_rng(seed))
    typer.echo(json.dumps(figures))


def _check_engine(engine: str, input: str, spark_master: str | None) -> None:
    from dpsynth.data.engines import ENGINES

    if engine not in ENGINES:
        raise UsageError(f"--engine must be one of {', '.join(ENGINES)}, got '{engine}'")
    if engine != "numpy" and input == "-":
        raise UsageError(f"--engine {engine} reads a file: give --input as a path, not - (stdin)")
    if spark_master and engine != "spark":
        raise UsageError("--spark-master needs --engine spark")


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


@app.command()
@handle_errors
def evaluate(
    config: Annotated[Path, typer.Option("--config", "-c", help="YAML configuration whose schema discretizes both tables.")],
    real: Annotated[str, typer.Option("--real", help="The REAL table (.csv, .csv.gz, .parquet).")],
    synthetic: Annotated[str, typer.Option("--synthetic", help="The synthetic table to evaluate.")],
    marginals: Annotated[str | None, typer.Option("--marginals", help="Released noisy marginals (release --marginals) to score too.")] = None,
    k: Annotated[str, typer.Option("--k", help="Marginal orders to evaluate, comma-separated.")] = "1,2,3",
    sample_marginals: Annotated[int | None, typer.Option("--sample-marginals", help="Evaluate this many random k-way marginals per k instead of all.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed for sampled marginals, range queries and CV folds (no privacy role).")] = 0,
    json_out: Annotated[str | None, typer.Option("--json", help="Write the full result as JSON (- for stdout).")] = None,
    plot: Annotated[str | None, typer.Option("--plot", help="Write a PNG of per-marginal errors and baselines.")] = None,
    sanity_bound: Annotated[float | None, typer.Option("--sanity-bound", help="iReduct sanity bound δ for relative errors (default 1e-4·n).")] = None,
    ranges: Annotated[int, typer.Option("--ranges", help="Random range queries over the ordered columns (0: none).")] = 1000,
    target: Annotated[str | None, typer.Option("--target", help="Column to predict with Naive Bayes (downstream utility).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing outputs.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress or timings on stderr.")] = False,
) -> None:
    """Compare synthetic data with the REAL table. NOT PRIVATE: reads the real data; never publish its output."""
    from dpsynth.config import load_config
    from dpsynth.data.io import OutputSet, check_output_path, read_table, table_format
    from dpsynth.nonprivate.evaluate import NOT_PRIVATE, EvalOptions, summary_tables
    from dpsynth.nonprivate.evaluate import evaluate as run_evaluate
    from dpsynth.nonprivate.plot import evaluation_png

    t0 = time.perf_counter()
    console = _stderr(quiet)
    try:
        ks = tuple(int(x) for x in k.split(","))
    except ValueError:
        raise UsageError(f"--k must be comma-separated integers such as 1,2,3, got '{k}'") from None
    options = EvalOptions(ks=ks, sample_marginals=sample_marginals, sanity_bound=sanity_bound, ranges=ranges, target=target)
    cfg = load_config(config)
    if plot == "-":
        raise UsageError("--plot cannot be stdout; give a .png path")
    if json_out and plot and json_out == plot:
        raise UsageError("--json and --plot must be different paths")
    for path in (json_out, plot):
        if path:
            check_output_path(path, force=force)
    for path in (real, synthetic, marginals):
        if path:
            table_format(path)
    string_cols = [c.name for c in cfg.domain.columns if c.kind == "categorical"]
    real_table = read_table(real, string_columns=string_cols)
    synth_table = read_table(synthetic, string_columns=string_cols)
    released = read_table(marginals, string_columns=list(cfg.domain.names) + ["marginal"]) if marginals else None
    t_read = time.perf_counter()
    with _Bar(console, enabled=not quiet and console.is_terminal) as bar:
        result = run_evaluate(real_table, synth_table, cfg, rng=make_rng(seed), options=options, released=released, progress=bar)
    t_eval = time.perf_counter()
    with OutputSet(force=force) as out:
        if json_out:
            out.add_json(json_out, result)
        if plot:
            png = evaluation_png(result)
            out._add(plot, lambda fh: fh.write(png))  # io.OutputSet has no public add for raw bytes yet
        out.commit()
    screen = Console(stderr=json_out == "-", highlight=False, width=max(100, Console().width))
    if json_out == "-":
        sys.stderr.write(f"dpsynth: {NOT_PRIVATE}\n")
    else:
        typer.echo(NOT_PRIVATE)
    if json_out != "-" or not quiet:
        for table in summary_tables(result):
            screen.print(table)
    console.print(f"time (s): read {t_read - t0:.2f}, evaluate {t_eval - t_read:.2f}, write {time.perf_counter() - t_eval:.2f}")


@schema_app.command("draft")
@handle_errors
def schema_draft(
    input: Annotated[str, typer.Argument(help="Table to draft a schema from (.csv, .csv.gz, .parquet, -).")],
    max_categories: Annotated[int, typer.Option("--max-categories", help="Columns with more distinct values are drafted as numeric or flagged.")] = 100,
) -> None:
    """Print a YAML schema drafted FROM THE DATA for a person to edit (NOT private: see stderr)."""
    from dpsynth.data.io import read_table
    from dpsynth.nonprivate.draft import draft_schema

    sys.stderr.write(
        "dpsynth: WARNING: this schema is learned from the data and is NOT differentially private.\n"
        "dpsynth: WARNING: its categories and bounds reveal values of the input. Replace them with\n"
        "dpsynth: WARNING: public knowledge (documentation, round bounds) before any release.\n"
    )
    table = read_table(input)
    typer.echo(draft_schema(table, max_categories=max_categories), nl=False)


def main() -> None:
    app()
