"""``dpsynth oracle``: NOT PRIVATE, benchmarking only: iReduct's Oracle on the workload (figures, no file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from dpsynth.cli._common import (
    LogFormat,
    app,
    check_log_format,
    check_seed,
    handle_errors,
    log_line,
    log_summary,
    make_rng,
    string_columns,
)


@app.command()
@handle_errors
def oracle(
    config: Annotated[Path, typer.Option("--config", "-c", help="YAML configuration (schema, privacy, workload).")],
    input: Annotated[str, typer.Option("--input", "-i", help="The REAL table (.csv, .csv.gz, .parquet, or -).")],
    seed: Annotated[int | None, typer.Option("--seed", help="Seed of the Oracle's noise (default: the config's seed, else OS entropy).")] = None,
    log_format: LogFormat = "text",
) -> None:
    """NOT PRIVATE, benchmarking only: iReduct's Oracle (true counts set the noise scales); prints its error as JSON, writes no file."""
    from dpsynth.config import load_config
    from dpsynth.data.io import read_table
    from dpsynth.nonprivate.oracle import oracle_table_figures
    from dpsynth.pipeline import preflight

    check_log_format(log_format)
    check_seed(seed)
    cfg = load_config(config)
    if cfg.discover is not None:
        from dpsynth.errors import UsageError

        raise UsageError("dpsynth oracle needs a public schema, not schema.discover")
    preflight(cfg)
    log_line("warning", "WARNING: dpsynth oracle is NOT differentially private: the true counts choose the\n"
             "WARNING: noise scales. Its figures describe the real data; no file is written.")
    table = read_table(input, string_columns=string_columns(cfg))
    figures = oracle_table_figures(table, cfg, rng=make_rng(seed if seed is not None else cfg.seed))
    typer.echo(json.dumps(figures))
    log_summary("oracle", None)
