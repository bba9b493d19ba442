"""``dpsynth schema discover``: a schema learned from the data with differential privacy, plus its report."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Annotated

import typer

from dpsynth.cli._common import (
    LogFormat,
    check_engine_input,
    check_log_format,
    emit,
    handle_errors,
    input_options,
    make_rng,
    schema_app,
    stderr_console,
)
from dpsynth.errors import UsageError


@schema_app.command("discover")
@handle_errors
def schema_discover(
    input: Annotated[str, typer.Option("--input", "-i", help="The private table (.csv, .csv.gz, .parquet, or - for CSV on stdin).")],
    epsilon: Annotated[float, typer.Option("--epsilon", help="Privacy budget of the discovery (> 0).")],
    output: Annotated[str, typer.Option("--output", "-o", help="The schema: a YAML config section (- for stdout).")],
    delta: Annotated[float, typer.Option("--delta", help="δ of the discovery: needed to release categories (partition selection), e.g. 1e-6.")] = 0.0,
    report: Annotated[str | None, typer.Option("--report", "-r", help="Report JSON (default: <output>.report.json; required with -o -).")] = None,
    max_categories: Annotated[int, typer.Option("--max-categories", help="Keep at most this many categories per column (the most frequent by noisy count).")] = 100,
    bins: Annotated[int, typer.Option("--bins", help="Bins per numeric column.")] = 10,
    edges: Annotated[str, typer.Option("--edges", help="Numeric bin edges: quantile (private quantiles) or equal (equal width between the private bounds).")] = "quantile",
    hints: Annotated[Path | None, typer.Option("--hints", help="YAML mapping of column name to public hints (type, categories, lower, upper, bins, integer, missing); columns not listed are discovered with no hint.")] = None,
    neighbouring: Annotated[str, typer.Option("--neighbouring", help="add-remove or replace-one (must match the release).")] = "add-remove",
    delimiter: Annotated[str, typer.Option("--delimiter", help="CSV field delimiter (one character, e.g. ';' or '\\t').")] = ",",
    encoding: Annotated[str, typer.Option("--encoding", help="CSV text encoding (e.g. utf-8, latin-1, cp1252).")] = "utf-8",
    engine: Annotated[str, typer.Option("--engine", help="How the table is read: numpy (in memory), stream (record batches, one pass per question; tables larger than memory) or spark (PySpark). The same seed gives the same schema on each. stream and spark read a file, not -.")] = "numpy",
    spark_master: Annotated[str | None, typer.Option("--spark-master", help="Spark master URL for --engine spark (default: SPARK_REMOTE for Spark Connect, else local[*]).")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Fixed seed (testing only; the report says so).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing outputs.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No summary on stderr.")] = False,
    log_format: LogFormat = "text",
) -> None:
    """Learn a schema FROM THE DATA with differential privacy (categories by partition selection, numeric
    bounds and bins by noisy histograms and quantiles), charged to a ledger; writes the schema and its report."""
    from dpsynth.data.discover import discover_schema, parse_discover, schema_yaml
    from dpsynth.data.engines import discovery_table
    from dpsynth.data.io import OutputSet, check_output_path, table_format
    from dpsynth.privacy.accountant import Ledger
    from dpsynth.privacy.neighbouring import Neighbouring
    from dpsynth.report import build_discovery_report

    check_log_format(log_format)
    if neighbouring not in ("add-remove", "replace-one"):
        raise UsageError(f"--neighbouring must be add-remove or replace-one, got '{neighbouring}'")
    if edges not in ("quantile", "equal"):
        raise UsageError(f"--edges must be quantile or equal, got '{edges}'")
    raw = {"epsilon": epsilon, "delta": delta, "max_categories": max_categories, "bins": bins, "edges": edges}
    if hints is not None:
        raw["columns"] = _read_hints(hints)
    spec = parse_discover(raw, path="discover")
    if report is None:
        if output == "-":
            raise UsageError("--report is required when the output is stdout (-o -)")
        report = f"{output}.report.json"
    if report == output:
        raise UsageError("--output and --report must be different paths")
    for path in (output, report):
        check_output_path(path, force=force)
    if input != "-" and input in (output, report):
        raise UsageError("an output path is the same as the input")
    table_format(input)
    check_engine_input(engine, input, spark_master)
    options = input_options(delimiter, encoding, engine=engine)
    table = discovery_table(input, engine=engine, spark_master=spark_master, options=options)
    nb = Neighbouring(neighbouring)
    ledger = Ledger(spec.epsilon, spec.delta)
    try:
        discovery = discover_schema(table, spec, ledger=ledger, neighbouring=nb, rng=make_rng(seed))
    finally:
        getattr(table, "close", lambda: None)()
    del table
    eps, dlt = ledger.spent()
    header = (
        "# Learned from the data by DP schema discovery (dpsynth schema discover), not from public knowledge.\n"
        f"# Budget: epsilon={spec.epsilon:g}, delta={spec.delta:g} (spent epsilon={eps:.6g}, delta={dlt:.3g}), "
        f"{nb.value} neighbours, {datetime.date.today().isoformat()}.\n"
        "# schema.discovery records that spend: a release with this schema adds it to its report's totals.\n"
        "# (schema: {discover: ...} in a release config does both in one run, in one ledger.)\n"
    )
    discovery.schema["discovery"] = {"epsilon_spent": eps, "delta_spent": dlt}
    settings = {"max_categories": max_categories, "bins": bins, "edges": edges}
    result = build_discovery_report(discovery, ledger, neighbouring=nb, seeded=seed is not None, settings=settings)
    with OutputSet(force=force) as out:
        out.add_text(output, schema_yaml(discovery, header))
        out.add_json(report, result)
        out.commit()
    console = stderr_console(quiet)
    learned = sum(1 for c in discovery.columns.values() if c["learned"])
    text = (f"schema discover: {len(discovery.columns)} columns ({learned} learned), epsilon spent {eps:.6g} "
            f"of {spec.epsilon:g}, delta spent {dlt:.3g} of {spec.delta:g}")
    if log_format == "json":
        for w in result["warnings"]:
            emit(console, "warning", message=w)
        emit(console, "summary", command="schema discover", columns=len(discovery.columns), learned=learned,
             epsilon_spent=eps, epsilon_requested=spec.epsilon, delta_spent=dlt, delta_requested=spec.delta)
        return
    console.print(text)
    for w in result["warnings"]:
        console.print(f"[yellow]warning:[/] {w}")


def _read_hints(path: Path) -> dict:
    import yaml

    from dpsynth.errors import ConfigError, InputMissingError
    from dpsynth.params import load_yaml

    if not path.is_file():
        raise InputMissingError(f"hints file not found: {path}")
    try:
        raw = load_yaml(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError):
        raise ConfigError(f"{path}: not a valid UTF-8 YAML file") from None
    if isinstance(raw, dict) and set(raw) == {"columns"}:
        raw = raw["columns"]
    if not isinstance(raw, dict) or not raw:
        raise ConfigError(f"{path}: expected a mapping of column name to hints")
    return raw
