"""Counts engines: interchangeable implementations of :class:`dpsynth.data.counts.Counts`.

* ``numpy``  (default): the whole table in memory (:class:`dpsynth.data.counts.ArrayCounts`);
* ``stream``: record batches with pyarrow, codes spilled to disk (:mod:`.stream`);
* ``spark``:  Apache Spark through PySpark, an optional extra (:mod:`.spark`).

Every engine gives the same exact counts, so a seeded release is byte-identical
under each of them.  Algorithms never know which engine ran.
"""

from __future__ import annotations

from pathlib import Path

from dpsynth.data.counts import ArrayCounts
from dpsynth.data.discretize import encode
from dpsynth.data.schema import Domain
from dpsynth.data.source import DEFAULT, InputOptions
from dpsynth.errors import ConfigError, UsageError
from dpsynth.progress import Progress, no_progress

__all__ = ["ENGINES", "check_engine", "discovery_table", "open_counts", "read_header"]

ENGINES = ("numpy", "stream", "spark")


def read_header(path: str | Path, domain: Domain, options: InputOptions = DEFAULT) -> list[str]:
    """Check a file's columns against the schema, reading only its start; returns the ignored columns."""
    from dpsynth.data.engines.stream import read_header as header

    return header(path, domain, options)


def check_engine(domain: Domain, engine: str, unknown: str = "error") -> None:
    """Refuse, from the schema alone, what an engine cannot count (before any data is read).

    Spark counts a datetime column with the numpy encoder on its executors, which it can do only for a column
    that no row can break (``unknown: other`` and ``missing: category``, as every discovered schema has)."""
    if engine == "spark":
        dated = [c.name for c in domain.columns if c.kind == "datetime" and not (unknown == "other" and c.missing)]
        if dated:
            raise ConfigError(f"schema.columns.{dated[0]}: datetime columns are counted by the numpy and stream "
                              "engines only, or by spark under 'unknown: other' with 'missing: category'; use "
                              "--engine stream (or numpy), not spark")


def open_counts(
    path: str | Path,
    domain: Domain,
    *,
    engine: str,
    unknown: str = "error",
    spark_master: str | None = None,
    spill_dir: str | None = None,
    progress: Progress = no_progress,
    options: InputOptions = DEFAULT,
):
    """A counts engine over the table at ``path``; call its ``close()`` (if it has one) when done.

    ``options`` (delimiter, encoding, strip) are honoured by the numpy and stream engines; the spark
    engine reads UTF-8 comma-separated files only (a :class:`UsageError` otherwise).
    """
    if engine == "stream":
        from dpsynth.data.engines.stream import StreamCounts

        return StreamCounts(path, domain, unknown=unknown, spill_dir=spill_dir, progress=progress, options=options)
    check_engine(domain, engine, unknown)
    if engine == "spark":
        if not options.default:
            raise UsageError("--delimiter, --encoding and schema.strip are supported by the numpy and stream "
                             "engines; convert the file to UTF-8 comma-separated CSV for --engine spark")
        from dpsynth.data.engines.spark import SparkCounts

        return SparkCounts(path, domain, unknown=unknown, master=spark_master)
    if engine == "numpy":
        from dpsynth.data.io import read_table

        strings = domain.text_columns
        table = read_table(path, string_columns=strings, options=options)
        return ArrayCounts(encode(table, domain, unknown=unknown), domain)
    raise UsageError(f"unknown engine '{engine}' (choose one of: {', '.join(ENGINES)})")


def discovery_table(
    path: str | Path,
    *,
    engine: str,
    spark_master: str | None = None,
    progress: Progress = no_progress,
    options: InputOptions = DEFAULT,
    spark=None,
):
    """The table at ``path`` as private schema discovery reads it (:mod:`dpsynth.data.discover.tables`).

    ``numpy``: the whole table in memory, every CSV column as text (a :class:`FrameTable`); ``stream``: one pass
    over one column per question, in record batches; ``spark``: the same per-batch answers computed by Spark's
    executors and added up with a group-by.  The same seed gives the same schema on every engine.  Close the
    result (``close()``) when done if it has that method (Spark)."""
    if engine == "numpy":
        from dpsynth.data.discover.tables import FrameTable
        from dpsynth.data.io import read_table

        return FrameTable(read_table(path, string_columns=True, options=options))
    if engine == "stream":
        from dpsynth.data.engines.stream import discovery_table as stream_table

        return stream_table(path, progress=progress, options=options)
    if engine == "spark":
        if not options.default:
            raise UsageError("--delimiter, --encoding and schema.strip are supported by the numpy and stream "
                             "engines; convert the file to UTF-8 comma-separated CSV for --engine spark")
        from dpsynth.data.engines.spark import SparkDiscoveryTable

        return SparkDiscoveryTable(path, master=spark_master, spark=spark)
    raise UsageError(f"unknown engine '{engine}' (choose one of: {', '.join(ENGINES)})")
