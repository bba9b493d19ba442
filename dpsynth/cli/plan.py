"""``dpsynth plan``: what a release will cost, from the configuration alone (reads no data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from dpsynth.cli._common import LogFormat, app, check_log_format, handle_errors, log_summary
from dpsynth.errors import UsageError


@app.command()
@handle_errors
def plan(
    config: Annotated[Path, typer.Option("--config", "-c", help="YAML configuration (schema, privacy, algorithm).")],
    input: Annotated[str | None, typer.Option("--input", "-i", help="Input table: only its size is read, to estimate the row count (n public only; with n private the size is not used).")] = None,
    rows: Annotated[int | None, typer.Option("--rows", help="Assume this many input rows (n) instead of estimating it.")] = None,
    engine: Annotated[str, typer.Option("--engine", help="Counts engine the release will use: numpy, stream or spark.")] = "numpy",
    marginals: Annotated[bool, typer.Option("--marginals", help="Include the memory of release --marginals (the long table).")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
    log_format: LogFormat = "text",
) -> None:
    """Predict a release: domain sizes, workload, budget split, guarantee, noise, peak memory and time."""
    from dpsynth.config import load_config
    from dpsynth.data.engines import ENGINES
    from dpsynth.pipeline import preflight
    from dpsynth.plan import format_plan, make_plan

    check_log_format(log_format)
    if rows is not None and rows < 1:
        raise UsageError(f"--rows must be >= 1, got {rows}")
    if engine not in ENGINES:
        raise UsageError(f"--engine must be one of {', '.join(ENGINES)}, got '{engine}'")
    if input is not None and input != "-" and not Path(input).is_file():
        from dpsynth.errors import InputMissingError

        raise InputMissingError(f"input file not found: {input}")
    cfg = load_config(config)
    preflight(cfg)
    p = make_plan(cfg, rows=rows, input_path=input, engine=engine, write_marginals=marginals)
    if json_out:
        typer.echo(json.dumps(p.to_dict(), indent=2))
    else:
        typer.echo(format_plan(p), nl=False)
    log_summary("plan", None, peak_memory_bytes=p.peak_memory, seconds=round(p.seconds, 1))
