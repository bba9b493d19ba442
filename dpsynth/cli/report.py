"""``dpsynth report show``: a release report as a plain-text (Markdown) summary for people."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from dpsynth.cli._common import LogFormat, check_log_format, handle_errors, log_summary, report_app


@report_app.command("show")
@handle_errors
def report_show(
    report: Annotated[Path, typer.Argument(help="The report JSON written by dpsynth release.")],
    log_format: LogFormat = "text",
) -> None:
    """Summarise a report: what was released, the guarantee (both neighbouring relations), budget per stage, error bounds, what is public, warnings."""
    import jsonschema

    from dpsynth.errors import ConfigError, InputMissingError
    from dpsynth.report import summarize, validate_report

    check_log_format(log_format)
    if not report.is_file():
        raise InputMissingError(f"report file not found: {report}")
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
        validate_report(data)
    except (ValueError, UnicodeDecodeError):
        raise ConfigError(f"{report}: not a dpsynth report (invalid JSON)") from None
    except jsonschema.ValidationError as exc:  # name the field, not the value
        path = "/".join(str(x) for x in exc.absolute_path) or "the top level"
        raise ConfigError(f"{report}: not a valid dpsynth report (schema check failed at {path})") from None
    typer.echo(summarize(data), nl=False)
    log_summary("report show", None)
