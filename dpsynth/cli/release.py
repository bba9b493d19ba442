"""``dpsynth release``: synthetic rows and a privacy-budget report from a private table."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from dpsynth.cli._common import (
    Bar,
    app,
    check_engine_input,
    check_log_format,
    check_seed,
    emit,
    handle_errors,
    input_options,
    make_rng,
    say,
    stderr_console,
)
from dpsynth.errors import UsageError


@app.command()
@handle_errors
def release(
    input: Annotated[str, typer.Option("--input", "-i", help="Input table: .csv, .csv.gz, .parquet, or - for CSV on stdin.")],
    output: Annotated[str, typer.Option("--output", "-o", help="Synthetic rows: .csv, .csv.gz, .parquet, or - for CSV on stdout.")],
    config: Annotated[Path | None, typer.Option("--config", "-c", help="YAML configuration (schema, privacy, algorithm). Without it: the zero-config release (give --epsilon): the schema is discovered privately in the same budget and 'auto' runs.")] = None,
    epsilon: Annotated[float | None, typer.Option("--epsilon", help="Total privacy budget of a release without -c (discovery included).")] = None,
    delta: Annotated[float | None, typer.Option("--delta", help="Total delta of a release without -c (default 1e-6; the discovery of categories needs delta > 0).")] = None,
    discover_share: Annotated[float | None, typer.Option("--discover-share", help="Share of the budget for the schema discovery of a release without -c (default: sized from the public row count, 0.1 to 0.5).")] = None,
    config_out: Annotated[str | None, typer.Option("--config-out", help="Where a release with a discovered schema writes its reusable configuration (default: <output>.config.yaml).")] = None,
    report: Annotated[str | None, typer.Option("--report", "-r", help="Report JSON (default: <output>.report.json; required with -o -).")] = None,
    marginals: Annotated[str | None, typer.Option("--marginals", help="Also write the released noisy marginals (long format).")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Also write the released model (docs/model-format.md): draw more rows later with 'dpsynth sample', no data, no budget.")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Fixed seed (testing only; the report says so).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing outputs.")] = False,
    delimiter: Annotated[str, typer.Option("--delimiter", help="CSV field delimiter (one character, e.g. ';' or '\\t').")] = ",",
    encoding: Annotated[str, typer.Option("--encoding", help="CSV text encoding (e.g. utf-8, latin-1, cp1252).")] = "utf-8",
    log_format: Annotated[str, typer.Option("--log-format", help="Progress when stderr is not a terminal: one line per stage and at most every 10 s, with ETA, as text or json (JSON lines).")] = "text",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No summary or progress on stderr; warnings and notices still go there.")] = False,
    silent: Annotated[bool, typer.Option("--silent", help="Nothing on stderr but errors (not even warnings; they stay in the report).")] = False,
    max_cells: Annotated[int | None, typer.Option("--max-cells", help="Refuse marginals larger than this many cells.")] = None,
    max_memory: Annotated[str | None, typer.Option("--max-memory", help="Refuse a release predicted to need more memory (e.g. 4GB; default: limits.max_memory, else half the smallest of RAM, ulimit -v and the cgroup limit). See dpsynth plan.")] = None,
    non_private_oracle: Annotated[bool, typer.Option("--non-private-oracle", hidden=True, help="Moved to: dpsynth oracle.")] = False,
    engine: Annotated[str, typer.Option("--engine", help="Counts engine: numpy (in memory), stream (record batches; tables larger than memory) or spark (PySpark, the optional 'spark' extra of the package). stream and spark read a file, not -.")] = "numpy",
    spark_master: Annotated[str | None, typer.Option("--spark-master", help="Spark master URL for --engine spark (default: SPARK_REMOTE for Spark Connect, else local[*]).")] = None,
) -> None:
    """Release differentially private synthetic rows and a privacy-budget report."""
    from dpsynth.config import load_config
    from dpsynth.data.io import OutputSet, check_output_path, json_bytes, table_format
    from dpsynth.pipeline import preflight, release_from_source

    check_seed(seed)
    check_log_format(log_format)
    if non_private_oracle:
        raise UsageError("--non-private-oracle moved to its own command: dpsynth oracle -c CONFIG -i INPUT")
    t0 = time.perf_counter()
    console = stderr_console(quiet or silent)
    warn = stderr_console(silent)  # warnings and notices: shown under --quiet, not under --silent
    if config is None:
        if epsilon is None:
            raise UsageError("give --config/-c, or --epsilon for a release without a configuration "
                             "(e.g. dpsynth release -i data.csv -o synth.csv --epsilon 1)")
        from dpsynth.config import zero_config
        from dpsynth.errors import ConfigError

        try:
            cfg = zero_config(epsilon, delta, discover_share=discover_share)
        except ConfigError as exc:
            raise UsageError(f"--{exc}") from None
    else:
        if epsilon is not None or delta is not None or discover_share is not None:
            raise UsageError("--epsilon/--delta/--discover-share are for a release without -c; set privacy.epsilon "
                             "and privacy.delta (and schema.discover) in the configuration")
        cfg = load_config(config)
    if max_cells is not None:
        if max_cells < 1:
            raise UsageError(f"--max-cells must be >= 1, got {max_cells}")
        cfg = _replace(cfg, max_cells=max_cells)
    memory_limit = None
    if max_memory is not None:
        from dpsynth.config import parse_bytes
        from dpsynth.errors import ConfigError

        try:
            memory_limit = parse_bytes(max_memory, "--max-memory")
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
    preflight(cfg)
    options = input_options(delimiter, encoding, cfg, engine)
    check_engine_input(engine, input, spark_master)
    if report is None:
        if output == "-":
            raise UsageError("--report is required when the output is stdout (-o -)")
        report = f"{output}.report.json"
    if report == "-" and output == "-":
        raise UsageError("--report and --output cannot both be stdout")
    if model == "-":
        raise UsageError("--model must be a file path, not - (stdout)")
    if cfg.discover is None and config_out is not None:
        raise UsageError("--config-out is for a release that discovers its schema (no -c, or schema.discover)")
    if cfg.discover is not None and config_out is None:
        if output == "-":
            raise UsageError("--config-out is required when the output is stdout (-o -) and the schema is discovered")
        config_out = f"{output}.config.yaml"
    outputs = [output, report] + ([marginals] if marginals else []) + ([model] if model else []) \
        + ([config_out] if config_out else [])
    if len(set(outputs)) != len(outputs):
        raise UsageError("--output, --report, --marginals, --model and --config-out must be different paths")
    if marginals and cfg.workload.queries is not None:  # known from the config: refuse before any data is read
        raise UsageError("workload.queries: the noisy answers are in the report (algorithm.details.queries), "
                         "not in --marginals (drop --marginals)")
    for path in outputs:
        check_output_path(path, force=force)
    if input != "-" and input in outputs:
        raise UsageError("an output path is the same as the input")
    for path in (input, output, marginals):
        if path:
            table_format(path)  # a bad extension is a usage error, before any work
    from dpsynth.plan import check_memory, make_plan

    check_memory(make_plan(cfg, input_path=input, engine=engine, write_marginals=bool(marginals),
                           write_model=bool(model), max_memory=memory_limit))
    seed = seed if seed is not None else cfg.seed
    t_read = time.perf_counter()  # the same library call as for Python users: one path from a file to counts
    with Bar(console, enabled=not (quiet or silent), log_format=log_format) as bar:
        result = release_from_source(
            input, cfg, engine=engine, rng=make_rng(seed), seeded=seed is not None, progress=bar,
            notice=lambda msg: say(warn, "notice", msg, log_format), spark_master=spark_master,
            options=options,
        )
    t_alg = time.perf_counter()
    with OutputSet(force=force) as out:
        if marginals and result.marginals is None:
            raise UsageError(f"algorithm '{cfg.algorithm}' releases no noisy marginals (drop --marginals)")
        out.add_table_chunks(output, result.chunks())  # sampled, decoded and written chunk by chunk
        if marginals:
            out.add_table(marginals, result.marginals)
        report_bytes = json_bytes(result.report)
        out.add_bytes(report, report_bytes)
        if model:
            out.add_bytes(model, result.model.with_report(report_bytes).to_bytes())
        if config_out and result.config_document is not None:
            out.add_bytes(config_out, _config_yaml(result.config_document, result.report).encode("utf-8"))
        out.commit()
    if config_out and not (quiet or silent):
        message = (f"discovered configuration written to {config_out} (reuse it with -c; it records the "
                   "discovery's spend)")
        if log_format == "json":
            emit(console, "info", message=message)
        else:
            console.print(message)
    timings = {"checks": t_read - t0, "read and release": t_alg - t_read, "write": time.perf_counter() - t_alg}
    if log_format == "json":
        _json_summary(console, warn, result.report, timings)
    else:
        _summary(console, warn, result.report, timings)


def _config_yaml(document: dict, report: dict) -> str:
    """The reusable configuration of a release whose schema was discovered (all of it DP output or public)."""
    import yaml

    p = report["privacy"]
    header = (f"# Written by dpsynth release: the schema below was discovered privately from the input "
              f"(epsilon {p['discovery']['epsilon_spent']:.6g}, delta {p['discovery']['delta_spent']:.3g}; the "
              f"whole release spent epsilon {p['epsilon_spent']:.6g}, delta {p['delta_spent']:.3g}).\n"
              "# privacy: is the budget the release used after discovery; schema.discovery records the discovery's\n"
              "# spend, which a release with this file adds to its report's totals. Edit it like any config.\n")
    return header + yaml.safe_dump(document, sort_keys=False, default_flow_style=None, width=110)


def _replace(cfg, **changes):
    import dataclasses

    return dataclasses.replace(cfg, **changes)


def _summary(console: Console, warn: Console, report: dict, timings: dict[str, float]) -> None:
    p = report["privacy"]
    table = Table(title="dpsynth release", show_header=False, title_justify="left")
    table.add_row("algorithm", report["algorithm"]["name"])
    table.add_row(f"epsilon spent / requested ({p['neighbouring']})", f"{p['epsilon_spent']:.4g} / {p['epsilon_requested']:.4g} (exact figures in the report)")
    basic = p["composition"]["epsilon_spent_basic"]
    if basic != p["epsilon_spent"]:
        table.add_row("epsilon by basic composition", f"{basic:.4g} (a loose upper bound, not the guarantee)")
    table.add_row("delta spent / requested", f"{p['delta_spent']:.3g} / {p['delta_requested']:.3g}")
    if p["neighbouring"] != "replace-one":
        table.add_row("same guarantee under replace-one (equal-size datasets)",
                      f"epsilon {p['replace_one']['epsilon']:.6g}, delta {p['replace_one']['delta']:.3g}")
    table.add_row("composition", p["composition"]["theorem"])
    table.add_row("n", "public (used without noise)" if p["n"]["mode"] == "public" else "private (noisy count)")
    table.add_row("noisy values and choices (ledger)", str(sum(c["count"] for c in report["ledger"])))
    table.add_row("synthetic rows", str(report["output"]["rows"]))
    table.add_row("randomness", report["randomness"]["source"])
    table.add_row("time (s)", ", ".join(f"{k} {v:.2f}" for k, v in timings.items()))
    console.print(table)
    for w in report["warnings"]:
        warn.print(f"[yellow]warning:[/] {w}")


def _json_summary(console: Console, warn: Console, report: dict, timings: dict[str, float]) -> None:
    """The summary as JSON events: one ``warning`` per warning, then ``summary`` (the run's last line)."""
    p = report["privacy"]
    for w in report["warnings"]:
        emit(warn, "warning", message=w)
    emit(console, "summary", command="release", algorithm=report["algorithm"]["name"],
         neighbouring=p["neighbouring"], epsilon_spent=p["epsilon_spent"], epsilon_requested=p["epsilon_requested"],
         epsilon_spent_basic=p["composition"]["epsilon_spent_basic"], delta_spent=p["delta_spent"],
         delta_requested=p["delta_requested"], composition=p["composition"]["theorem"], n=p["n"]["mode"],
         ledger_values=sum(c["count"] for c in report["ledger"]), rows=report["output"]["rows"],
         randomness=report["randomness"]["source"], warnings=len(report["warnings"]),
         time_s={k: round(v, 3) for k, v in timings.items()})
