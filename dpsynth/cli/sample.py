"""``dpsynth sample``: synthetic rows from a released model (or published marginals); no data, no budget."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from dpsynth.cli._common import LogFormat, app, check_log_format, handle_errors, log_summary, make_rng
from dpsynth.errors import UsageError


@app.command()
@handle_errors
def sample(
    rows: Annotated[int, typer.Option("--rows", "-n", help="Number of rows to draw (any size: written in chunks).")],
    output: Annotated[str, typer.Option("--output", "-o", help="Rows: .csv, .csv.gz, .parquet, or - for CSV on stdout.")],
    model: Annotated[Path | None, typer.Option("--model", "-m", help="Model file written by 'dpsynth release --model'.")] = None,
    marginals: Annotated[Path | None, typer.Option("--marginals", help="Instead of --model: fit a model to a noisy marginals file written by 'dpsynth release --marginals' (needs --config).")] = None,
    config: Annotated[Path | None, typer.Option("--config", "-c", help="With --marginals: the release's YAML configuration (its public schema).")] = None,
    report: Annotated[str | None, typer.Option("--report", "-r", help="Companion report JSON (default: <output>.report.json; required with -o -).")] = None,
    where: Annotated[str | None, typer.Option("--where", help="Draw from the model conditioned on public predicates, e.g. 'sex=Female,age>=40' (=, !=, <, <=, >, >=; a|b for one of).")] = None,
    seed: Annotated[int | None, typer.Option("--seed", help="Fixed seed: the same seed gives byte-identical output.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite existing outputs.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No summary on stderr.")] = False,
    log_format: LogFormat = "text",
) -> None:
    """Draw synthetic rows from a released model: post-processing, no data read, no budget spent."""
    from dpsynth.data.io import OutputSet, check_output_path, json_bytes, table_format

    t0 = time.perf_counter()
    check_log_format(log_format)
    if rows < 1:
        raise UsageError(f"--rows must be >= 1, got {rows}")
    if (model is None) == (marginals is None):
        raise UsageError("give exactly one of --model or --marginals")
    if marginals is not None and config is None:
        raise UsageError("--marginals needs --config (the release's configuration)")
    if model is not None and config is not None:
        raise UsageError("--config is only used with --marginals (a model file holds its configuration)")
    if report is None:
        if output == "-":
            raise UsageError("--report is required when the output is stdout (-o -)")
        report = f"{output}.report.json"
    if report == output:
        raise UsageError("--output and --report must be different paths")
    table_format(output)
    for path in (output, report):
        check_output_path(path, force=force)
    released = _load(model, marginals, config)
    chunks = released.chunks(rows, rng=make_rng(seed), where=where)  # conditions now: errors before any output
    companion = sample_report(released, rows=rows, where=where, seeded=seed is not None,
                              input_name=(model or marginals).name)
    with OutputSet(force=force) as out:
        out.add_table_chunks(output, chunks)
        out.add_bytes(report, json_bytes(companion))
        out.commit()
    if not quiet:
        elapsed = time.perf_counter() - t0
        rate = rows / max(elapsed, 1e-9)
        log_summary("sample", f"dpsynth sample: {rows} rows in {elapsed:.2f} s ({rate / 1e6:.2f} M rows/s); "
                    "post-processing, no budget spent", rows=rows, output=output, report=report,
                    time_s=round(elapsed, 3), privacy="post-processing of the release, no budget spent")


def _load(model, marginals, config):
    if model is not None:
        from dpsynth.modelfile import load_model

        return load_model(model)
    from dpsynth.config import load_config
    from dpsynth.errors import InputMissingError
    from dpsynth.resynth import model_from_marginals

    cfg = load_config(config)
    if not Path(marginals).is_file():
        raise InputMissingError(f"marginals file not found: {marginals}")
    return model_from_marginals(marginals, cfg)


def sample_report(released, *, rows: int, where: str | None, seeded: bool, input_name: str) -> dict:
    """The companion report of ``dpsynth sample``: what the rows are post-processing of."""
    from dpsynth._version import __version__

    source = released.source
    if source.get("kind") == "release":
        statement = (f"post-processing of the release whose model has sha256 {released.sha256} (file "
                     f"{input_name}): drawn from the released model without reading any data, at no "
                     "additional privacy cost; the privacy guarantee is that release's, stated below")
        privacy = released.privacy
    else:
        statement = (f"post-processing of the published noisy marginals in {source.get('file')} (sha256 "
                     f"{source.get('file_sha256')}): a model was fitted to them and sampled without reading "
                     "any data, at no additional privacy cost; the guarantee is the one stated by the "
                     "release that published those marginals")
        privacy = None
    warnings = []
    if seeded:
        warnings.append("these rows were drawn with a fixed seed: anyone with the model and the seed can "
                        "reproduce them (this does not weaken the release's privacy guarantee)")
    return {
        "schema_version": 1,
        "kind": "sample",
        "tool": {"name": "dpsynth", "version": __version__},
        "post_processing": {
            "statement": statement,
            "model_sha256": released.sha256,
            "release_report_sha256": released.report_sha256,
            "source": source,
        },
        "privacy": privacy,
        "output": {
            "rows": int(rows),
            "columns": list(released.config.domain.names),
            "numeric_decoding": released.config.output.numeric,
            "where": where,
            "conditioning": None if where is None else "exact: the model conditioned on the predicates "
            "(Bayes' rule over codes, decoding restricted to the predicates), not rejection",
        },
        "randomness": {"source": "seeded" if seeded else "os-entropy"},
        "warnings": warnings,
    }
