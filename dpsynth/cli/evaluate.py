"""``dpsynth evaluate``: NOT PRIVATE comparison of a synthetic table with the real one."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from dpsynth.cli._common import (
    Bar,
    app,
    check_log_format,
    check_seed,
    emit,
    handle_errors,
    input_options,
    make_rng,
    stderr_console,
    string_columns,
)
from dpsynth.errors import UsageError


@app.command()
@handle_errors
def evaluate(
    config: Annotated[Path, typer.Option("--config", "-c", help="YAML configuration whose schema discretizes both tables.")],
    real: Annotated[str, typer.Option("--real", help="The REAL table (.csv, .csv.gz, .parquet).")],
    synthetic: Annotated[str, typer.Option("--synthetic", help="The synthetic table to evaluate.")],
    marginals: Annotated[str | None, typer.Option("--marginals", help="Released noisy marginals (release --marginals) to score too.")] = None,
    k: Annotated[str | None, typer.Option("--k", help="Marginal orders to evaluate, comma-separated (default 1,2,3).")] = None,
    sample_marginals: Annotated[int | None, typer.Option("--sample-marginals", help="Evaluate this many random k-way marginals per k instead of all.")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed for sampled marginals, range queries and CV folds (no privacy role).")] = 0,
    json_out: Annotated[str | None, typer.Option("--json", help="Write the full result as JSON (- for stdout).")] = None,
    plot: Annotated[str | None, typer.Option("--plot", help="Write a plot of per-marginal errors and baselines (.png, .svg or .pdf, by extension).")] = None,
    sanity_bound: Annotated[float | None, typer.Option("--sanity-bound", help="iReduct sanity bound δ for relative errors of marginals without their own (workload.sanity_bounds); default: the config's, else 1e-4·n.")] = None,
    ranges: Annotated[int | None, typer.Option("--ranges", help="Random range queries over the ordered columns (0: none; default 1000).")] = None,
    workload: Annotated[bool, typer.Option("--workload", help="Score the config's own workload (its marginals, ranges, conjunctions, parities and linear queries, as released) instead of all k-way marginals and random ranges.")] = False,
    target: Annotated[str | None, typer.Option("--target", help="Column to predict with Naive Bayes (downstream utility).")] = None,
    release_per_fold: Annotated[bool, typer.Option("--release-per-fold", help="With --target: iReduct §6.5 protocol, one release of the Naive Bayes marginals per training fold (10 releases with the config's algorithm and budget).")] = False,
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing outputs.")] = False,
    delimiter: Annotated[str, typer.Option("--delimiter", help="CSV field delimiter of the REAL table (one character).")] = ",",
    encoding: Annotated[str, typer.Option("--encoding", help="Text encoding of the REAL table (e.g. latin-1).")] = "utf-8",
    log_format: Annotated[str, typer.Option("--log-format", help="Progress when stderr is not a terminal: one line per stage and at most every 10 s, with ETA, as text or json (JSON lines).")] = "text",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress or timings on stderr.")] = False,
) -> None:
    """Compare synthetic data with the REAL table. NOT PRIVATE: reads the real data; never publish its output."""
    from dpsynth.config import load_config
    from dpsynth.data.io import OutputSet, check_output_path, read_table, table_format
    from dpsynth.nonprivate.evaluate import NOT_PRIVATE, EvalOptions, summary_tables
    from dpsynth.nonprivate.evaluate import evaluate as run_evaluate
    from dpsynth.nonprivate.plot import evaluation_plot, plot_available, plot_format

    check_seed(seed)
    check_log_format(log_format)
    t0 = time.perf_counter()
    console = stderr_console(quiet)
    if workload and (k is not None or ranges is not None):
        raise UsageError("--workload scores the configuration's own marginals and ranges; drop --k and --ranges")
    try:
        ks = tuple(int(x) for x in (k or "1,2,3").split(","))
    except ValueError:
        raise UsageError(f"--k must be comma-separated integers such as 1,2,3, got '{k}'") from None
    options = EvalOptions(ks=ks, sample_marginals=sample_marginals, sanity_bound=sanity_bound,
                          ranges=1000 if ranges is None else ranges, target=target, workload=workload,
                          release_per_fold=release_per_fold)
    cfg = load_config(config)
    if cfg.discover is not None:
        raise UsageError(f"{config} discovers its schema at release time (schema.discover), so it cannot bin the "
                         "tables; evaluate with the configuration that release wrote (<output>.config.yaml)")
    if plot == "-":
        raise UsageError("--plot cannot be stdout; give a .png, .svg or .pdf path")
    if plot:
        try:
            plot_fmt = plot_format(plot)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if not plot_available():
            from dpsynth.errors import UnavailableError

            raise UnavailableError("--plot needs matplotlib, which is not installed: pip install 'dpsynth[plot]' "
                              "(or drop --plot)")
    if json_out and plot and json_out == plot:
        raise UsageError("--json and --plot must be different paths")
    for path in (json_out, plot):
        if path:
            check_output_path(path, force=force)
    for path in (real, synthetic, marginals):
        if path:
            table_format(path)
    string_cols = string_columns(cfg)
    real_table = read_table(real, string_columns=string_cols, options=input_options(delimiter, encoding, cfg))
    synth_table = read_table(synthetic, string_columns=string_cols)
    released = read_table(marginals, string_columns=list(cfg.domain.names) + ["marginal"]) if marginals else None
    t_read = time.perf_counter()
    answers = _released_answers(synthetic, cfg) if workload else None
    with Bar(console, enabled=not quiet, log_format=log_format) as bar:
        result = run_evaluate(real_table, synth_table, cfg, rng=make_rng(seed), options=options, released=released,
                              released_queries=answers, progress=bar)
    t_eval = time.perf_counter()
    with OutputSet(force=force) as out:
        if json_out:
            out.add_json(json_out, result)
        if plot:
            out.add_bytes(plot, evaluation_plot(result, fmt=plot_fmt, title=_plot_title(synthetic, cfg)))
        out.commit()
    screen = Console(stderr=json_out == "-", highlight=False, width=max(100, Console().width))
    timings = {"read": t_read - t0, "evaluate": t_eval - t_read, "write": time.perf_counter() - t_eval}
    if log_format == "json" and json_out == "-":  # stderr holds JSON lines only; the numbers are on stdout
        emit(stderr_console(), "notice", message=NOT_PRIVATE)
    elif json_out == "-":
        sys.stderr.write(f"dpsynth: {NOT_PRIVATE}\n")
    else:
        typer.echo(NOT_PRIVATE)
    if json_out != "-" or not (quiet or log_format == "json"):
        for table in summary_tables(result):
            screen.print(table)
    if log_format == "json":
        emit(console, "summary", command="evaluate", time_s={k: round(v, 3) for k, v in timings.items()})
    else:
        console.print("time (s): " + ", ".join(f"{k} {v:.2f}" for k, v in timings.items()))


def _released_answers(synthetic: str, cfg) -> list | None:
    """The noisy query answers in the report release wrote next to the synthetic rows (workload.queries)."""
    import json

    from dpsynth.nonprivate.evaluate import released_query_answers

    report = Path(f"{synthetic}.report.json")
    if cfg.workload.queries is None or not report.is_file():
        return None
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise UsageError(f"{report}: not a readable dpsynth report") from None
    return released_query_answers(data, cfg)


def _plot_title(synthetic: str, cfg) -> str:
    """The synthetic file, and its algorithm and ε from the report next to it (else from the config)."""
    import json

    report = Path(f"{synthetic}.report.json")
    try:
        r = json.loads(report.read_text(encoding="utf-8"))
        name, eps = r["algorithm"]["name"], r["privacy"]["epsilon_spent"]
        source = ""
    except (OSError, ValueError, KeyError, TypeError):
        name, eps, source = cfg.algorithm, cfg.privacy.epsilon, " (from the config)"
    return f"{Path(synthetic).name}: {name}, epsilon {eps:.3g}{source}"
