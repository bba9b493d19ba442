"""``dpsynth schema …``: schema helpers."""

from __future__ import annotations

from typing import Annotated

import typer

from dpsynth.cli._common import (
    LogFormat,
    check_log_format,
    handle_errors,
    input_options,
    log_line,
    log_summary,
    schema_app,
)


@schema_app.command("draft")
@handle_errors
def schema_draft(
    input: Annotated[str, typer.Argument(help="Table to draft a schema from (.csv, .csv.gz, .parquet, -).")],
    max_categories: Annotated[int, typer.Option("--max-categories", help="Columns with more distinct values are drafted as numeric or flagged.")] = 100,
    delimiter: Annotated[str, typer.Option("--delimiter", help="CSV field delimiter (one character, e.g. ';' or '\\t').")] = ",",
    encoding: Annotated[str, typer.Option("--encoding", help="CSV text encoding (e.g. utf-8, latin-1, cp1252).")] = "utf-8",
    log_format: LogFormat = "text",
) -> None:
    """Print a YAML schema drafted FROM THE DATA for a person to edit (NOT private: see stderr; use 'schema discover' for a private one)."""
    from dpsynth.data.io import read_table
    from dpsynth.data.source import one_column_hint
    from dpsynth.errors import DataError
    from dpsynth.nonprivate.draft import draft_schema

    check_log_format(log_format)
    options = input_options(delimiter, encoding)
    log_line("warning",
             "WARNING: this schema is learned from the data and is NOT differentially private.\n"
             "WARNING: its categories and bounds reveal values of the input. Replace them with\n"
             "WARNING: public knowledge (documentation, round bounds) before any release.\n"
             "WARNING: To learn a schema with differential privacy, charged to a budget, use\n"
             "WARNING: 'dpsynth schema discover' (or schema: {discover: ...} in a release config).")
    table = read_table(input, options=options)
    hint = one_column_hint(list(table.columns), options.delimiter)
    if hint:  # its "categories" would be whole raw rows
        raise DataError(f"{input}: {hint}")
    typer.echo(draft_schema(table, max_categories=max_categories), nl=False)
    log_summary("schema draft", None, rows=len(table), columns=len(table.columns))
