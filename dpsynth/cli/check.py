"""``dpsynth check``: NOT PRIVATE: which rows and columns of the input break the schema."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dpsynth.cli._common import (
    LogFormat,
    app,
    check_log_format,
    handle_errors,
    input_options,
    log_line,
    log_summary,
    string_columns,
)


@app.command()
@handle_errors
def check(
    config: Annotated[Path, typer.Option("--config", "-c", help="YAML configuration whose schema the input must fit.")],
    input: Annotated[str, typer.Option("--input", "-i", help="The REAL table (.csv, .csv.gz, .parquet, or -).")],
    delimiter: Annotated[str, typer.Option("--delimiter", help="CSV field delimiter (one character).")] = ",",
    encoding: Annotated[str, typer.Option("--encoding", help="CSV text encoding (e.g. utf-8, latin-1).")] = "utf-8",
    log_format: LogFormat = "text",
) -> None:
    """List the rows and columns that break the schema. NOT PRIVATE: reads the real data; for the data owner only.

    Exit 0 when every row fits, 65 when some do not (the list is on stdout, a one-line summary on stderr).
    """
    from dpsynth.config import load_config
    from dpsynth.data.discretize import check_columns
    from dpsynth.data.io import read_table
    from dpsynth.errors import ConfigError, DataError
    from dpsynth.nonprivate.check import NOT_PRIVATE, folded_values, format_violations, schema_violations

    check_log_format(log_format)
    cfg = load_config(config)
    if cfg.discover is not None:
        raise ConfigError("schema.discover: dpsynth check needs a written schema (run dpsynth schema discover first)")
    options = input_options(delimiter, encoding, cfg)
    log_line("notice", NOT_PRIVATE)
    table = read_table(input, string_columns=string_columns(cfg), options=options)
    present = [str(c) for c in table.columns]
    ignored = [c for c in present if c not in cfg.domain.names]
    violations = schema_violations(table, cfg.domain, unknown=cfg.unknown)
    folds = folded_values(table, cfg.domain, unknown=cfg.unknown)
    typer.echo(format_violations(violations, len(table), ignored, folds), nl=False)
    if violations:
        try:
            check_columns(present, cfg.domain)  # the header problem first, with its hint
        except DataError as exc:
            raise DataError(f"{input}: {exc}") from None
        raise DataError(f"{input}: {len(violations)} schema problem(s) in {len(table)} rows (listed on stdout)")
    log_summary("check", None, rows=len(table), problems=0)
