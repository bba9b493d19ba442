"""Reading input tables and writing outputs atomically.

Formats follow the file name: ``.csv``, ``.csv.gz``, ``.parquet``; ``-`` is CSV
on stdin/stdout.  Every output file is written to a hidden temporary file in the
target directory and renamed into place only when *all* outputs of a command
are ready (:class:`OutputSet`), so a failed or killed run leaves no partial
file.  Stdout is streamed after the files are in place, chunk by chunk, with no
temporary copy.  Errors never quote the content of the input.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Self

import numpy as np
import pandas as pd

from dpsynth.data.source import DEFAULT, InputOptions, first_ragged_row, ragged_message
from dpsynth.errors import DataError, InputMissingError, OutputError, UsageError

__all__ = ["OutputSet", "arrow_to_pandas", "check_output_path", "json_bytes", "prefetch", "read_table", "table_format"]

_FORMATS = {".csv": "csv", ".gz": "csv.gz", ".parquet": "parquet", ".pq": "parquet"}


def table_format(path: str | Path) -> str:
    """'csv', 'csv.gz' or 'parquet' from the file name; '-' is CSV."""
    name = str(path)
    if name == "-":
        return "csv"
    lower = name.lower()
    if lower.endswith(".csv.gz"):
        return "csv.gz"
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith((".parquet", ".pq")):
        return "parquet"
    raise UsageError(f"{name}: unknown table format (use .csv, .csv.gz, .parquet or '-')")


# ------------------------------------------------------------------------------ read
def read_table(path: str | Path, *, string_columns: Iterable[str] | bool = (),
               options: InputOptions = DEFAULT) -> pd.DataFrame:
    """Read a CSV/CSV.gz/Parquet table (or CSV from stdin for '-').

    Only empty CSV fields are nulls (``NA`` or ``None`` stay strings).  Columns
    in ``string_columns`` are read as text, so category labels such as ``01``
    keep their form; ``string_columns=True`` reads every CSV column as text.
    ``options`` (:mod:`dpsynth.data.source`): the CSV delimiter and encoding, and
    whether to strip the spaces around fields (``schema.strip``).
    """
    fmt = table_format(path)
    strings: set[str] | _All = _ALL if string_columns is True else set(string_columns or ())
    if str(path) == "-":
        raw = sys.stdin.buffer.read()
        return _parse_csv(raw, "stdin", strings, options)
    p = Path(path)
    if not p.is_file():
        raise InputMissingError(f"input file not found: {p}")
    if fmt == "parquet":
        df = _read_parquet(p, strings)
        return _strip(df) if options.strip else df
    raw = p.read_bytes()
    if fmt == "csv.gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError):
            raise DataError(f"{p}: not a valid gzip file") from None
    return _parse_csv(raw, str(p), strings, options)


class _All:
    def __contains__(self, name) -> bool:
        return True


_ALL = _All()


def _parse_csv(raw: bytes, name: str, string_columns, options: InputOptions = DEFAULT) -> pd.DataFrame:
    if not raw.strip():
        raise DataError(f"{name}: the input is empty")
    if b"\x00" in raw and not options.encoding.startswith(("utf-16", "utf-32")):
        raise DataError(f"{name}: the input contains a NUL byte (is it a binary file?)")
    try:
        text = raw.decode(options.encoding)
    except UnicodeDecodeError as exc:
        if options.utf8:
            raise DataError(f"{name}: the input is not valid UTF-8 (first bad byte at offset {exc.start}); "
                            "if it is in another encoding, pass --encoding (e.g. latin-1)") from None
        raise DataError(f"{name}: the input is not valid {options.encoding} (first bad byte at offset "
                        f"{exc.start})") from None
    data = raw if options.utf8 else text.encode("utf-8")
    names = _check_header(text, name, options.delimiter)
    ragged = first_ragged_row(data, names, options.delimiter)  # as the stream engine reports it
    if ragged is not None:
        raise DataError(ragged_message(name, *ragged))
    try:
        header = pd.read_csv(io.BytesIO(data), nrows=0, encoding="utf-8", sep=options.delimiter,
                             skipinitialspace=options.strip).columns
        dtype = {c: str for c in header if (str(c).strip() if options.strip else c) in string_columns}
        df = pd.read_csv(
            io.BytesIO(data),
            encoding="utf-8",
            sep=options.delimiter,
            keep_default_na=False,
            na_values=[""],
            dtype=dtype or None,
            skipinitialspace=options.strip,
        )
    except pd.errors.EmptyDataError:
        raise DataError(f"{name}: the input has no header row") from None
    except pd.errors.ParserError as exc:
        raise DataError(f"{name}: malformed CSV ({_ragged_reason(str(exc))})") from None
    if len(df) == 0:
        raise DataError(f"{name}: the input has a header but no data rows")
    if any(str(c).startswith("Unnamed: ") for c in df.columns):
        raise DataError(f"{name}: the header has an empty column name")
    return _strip(df) if options.strip else df


def _strip(df: pd.DataFrame) -> pd.DataFrame:
    """``schema.strip``: spaces around names and text fields removed; a field of spaces becomes null."""
    df = df.rename(columns=lambda c: str(c).strip())
    for c in df.columns:  # loop over columns; each is vectorized
        if df[c].dtype == object or isinstance(df[c].dtype, pd.StringDtype):  # pandas 3 reads text as str
            s = df[c].str.strip()
            df[c] = s.mask(s == "")
    return df


def _check_header(text: str, name: str, delimiter: str = ",") -> list[str]:
    """The header's names; refuse duplicates (pandas would silently rename the second 'x' to 'x.1')."""
    import csv

    try:
        header = next(csv.reader(io.StringIO(text), delimiter=delimiter), [])
    except csv.Error:
        return []  # pandas reports malformed CSV below
    if len(set(header)) != len(header):
        dup = next(h for h in header if header.count(h) > 1)
        raise DataError(f"{name}: the header repeats the column name '{dup}'")
    return header


def _ragged_reason(msg: str) -> str:
    # pandas says "Expected 3 fields in line 5, saw 4": keep only the counts and line number.
    import re

    m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", msg)
    if m:
        return f"line {m.group(2)} has {m.group(3)} fields, expected {m.group(1)}"
    return "rows do not parse as CSV"


def _read_parquet(p: Path, string_columns: set[str] | _All) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(p)
    except (pa.ArrowException, OSError):
        raise DataError(f"{p}: not a readable Parquet file") from None
    df = table.to_pandas()
    if len(df) == 0:
        raise DataError(f"{p}: the input has no data rows")
    for name in [c for c in table.column_names if c in string_columns]:  # integer categories stay exact integers
        if pa.types.is_integer(table.schema.field(name).type):
            df[name] = arrow_to_pandas(table.column(name))
    return df


def arrow_to_pandas(arr) -> pd.Series:
    """An Arrow (chunked) array as a pandas Series; integers stay integers even with nulls.

    Plain ``to_pandas`` turns an integer column with a null into float64, which
    cannot hold integers above 2**53 exactly: a category label must not depend
    on whether *another* row is null.
    """
    import pyarrow as pa

    if pa.types.is_integer(arr.type):
        return pd.Series(arr.to_pandas(types_mapper=_nullable_int_dtype))
    return pd.Series(arr.to_pandas())


def _nullable_int_dtype(arrow_type):
    import pyarrow as pa

    if not pa.types.is_integer(arrow_type):
        return None
    return pd.api.types.pandas_dtype(str(arrow_type).capitalize().replace("Uint", "UInt"))


# ----------------------------------------------------------------------------- write
def check_output_path(path: str | Path, *, force: bool) -> None:
    """Fail early (before reading data) if ``path`` cannot be written."""
    if str(path) == "-":
        return
    p = Path(path)
    if p.exists() and not force:
        raise OutputError(f"output exists: {p} (use --force to overwrite)")
    if p.is_dir():
        raise OutputError(f"output is a directory: {p}")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise OutputError(f"cannot create output {p}: directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise OutputError(f"cannot create output {p}: directory {parent} is not writable")


def json_bytes(obj) -> bytes:
    """The exact bytes dpsynth writes for a JSON document (reports; hashed to link a model and its report)."""
    return (json.dumps(obj, indent=2, sort_keys=False, allow_nan=False) + "\n").encode("utf-8")


def prefetch(items: Iterable, depth: int = 2):
    """Iterate ``items`` computed by a background thread, up to ``depth`` ahead (same order, same values).

    Producing a chunk (sampling, decoding: NumPy) and writing the previous one (Arrow, zlib) both
    release the GIL for most of their work, so the two overlap on a multi-core machine.  An
    exception in the producer is re-raised here; memory grows by ``depth`` chunks at most.
    """
    import queue
    import threading

    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def put(entry) -> bool:
        while not stop.is_set():
            try:
                q.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((True, item)):
                    return
            put((True, done))
        except BaseException as exc:  # noqa: BLE001  (handed to the consumer, which re-raises it)
            put((False, exc))

    worker = threading.Thread(target=produce, name="dpsynth-prefetch", daemon=True)
    worker.start()
    try:
        while True:
            ok, item = q.get()
            if not ok:
                raise item
            if item is done:
                return
            yield item
    finally:
        stop.set()
        worker.join()


def _chunked_writer(chunks: Iterable, fmt: str) -> Callable[[io.BufferedIOBase], None]:
    """Write decoded chunks (objects with ``to_pandas()`` and ``to_arrow()``, e.g.
    :class:`dpsynth.data.discretize.Decoded`) one at a time: memory bounded by a chunk.

    CSV: the header as pandas writes it, the rows by Arrow's CSV writer (4x
    faster than pandas; integers and labels are written identically, floats in
    shortest round-trip form, e.g. ``3`` where pandas writes ``3.0``), or by
    pandas when a label or column name would need quoting.  Parquet: Arrow, one
    row group per chunk, categorical columns dictionary-encoded from their codes
    (read back as plain strings: the Arrow schema is not stored).
    """

    def write(fh) -> None:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            writer = None
            try:
                for table in prefetch(chunk.to_arrow() for chunk in chunks):
                    if writer is None:
                        dict_cols = [f.name for f in table.schema if str(f.type).startswith("dictionary")]
                        writer = pq.ParquetWriter(fh, table.schema, store_schema=False, use_dictionary=dict_cols)
                    writer.write_table(table)
            finally:
                if writer is not None:
                    writer.close()
            return
        sink = gzip.GzipFile(fileobj=fh, mode="wb", mtime=0, compresslevel=6) if fmt == "csv.gz" else fh
        try:
            for data in prefetch(_csv_chunk(chunk, header=i == 0) for i, chunk in enumerate(chunks)):
                sink.write(data)
        finally:
            if sink is not fh:
                sink.close()

    return write


_CSV_SPECIAL = re.compile(r'[,"\r\n]')


def _csv_chunk(chunk, *, header: bool) -> bytes:
    """One chunk as CSV bytes (see :func:`_chunked_writer`)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    table = chunk.to_arrow()
    labels = [c.dictionary.to_pylist() for c in (col.chunk(0) for col in table.columns if col.num_chunks)
              if pa.types.is_dictionary(c.type)]
    words = [*table.column_names, *(x for ls in labels for x in ls)]
    if any(not w or _CSV_SPECIAL.search(w) for w in words) or any(pa.types.is_string(t) for t in table.schema.types) \
            or (table.num_columns == 1 and table.column(0).null_count):
        # (pandas quotes a one-column null as "": arrow's unquoted empty field is a blank line, which readers skip)
        df = chunk.to_pandas()
        for i in np.flatnonzero((df.dtypes == "float64").to_numpy()):  # floats as Arrow writes them (3, not 3.0):
            df.isetitem(int(i), pa.array(df.iloc[:, i].to_numpy(), from_pandas=True).cast(pa.string()).to_pandas())
        return df.to_csv(index=False, header=header).encode("utf-8")  # (a code "75" comes back as 75, not 75.0)
    plain = pa.Table.from_arrays([c.cast(pa.string()) if pa.types.is_dictionary(c.type) else c for c in table.columns],
                                 names=table.column_names)
    buf = io.BytesIO()
    if header:
        buf.write(pd.DataFrame(columns=table.column_names).to_csv(index=False).encode("utf-8"))
    pcsv.write_csv(plain, buf, pcsv.WriteOptions(include_header=False, quoting_style="none"))
    return buf.getvalue()


def _table_writer(df: pd.DataFrame, fmt: str) -> Callable[[io.BufferedIOBase], None]:
    def write(fh) -> None:
        if fmt == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pandas(df, preserve_index=False), fh)
        elif fmt == "csv.gz":
            with gzip.GzipFile(fileobj=fh, mode="wb", mtime=0) as gz:
                gz.write(df.to_csv(index=False).encode("utf-8"))
        else:
            fh.write(df.to_csv(index=False).encode("utf-8"))

    return write


def _umask() -> int:
    """The process umask (reading it means setting it; set it straight back)."""
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


class OutputSet:
    """Stage several outputs in temporary files; rename them all into place on :meth:`commit`.

    Final files get the mode any program's new file gets: 0666 minus the umask
    (``umask 077`` for private outputs).

    If anything fails before :meth:`commit` (or during it), every temporary file
    is removed and no final file has been touched, except ones already renamed
    when a later rename fails (renames within one directory are atomic and
    essentially never fail once the temporary files exist).

    An output ``-`` (stdout) is not staged: its writer runs in :meth:`commit`,
    after every file is in place, and writes straight to stdout chunk by chunk
    (first rows out as soon as they are sampled; no temporary disk).  Everything
    that can fail for a reason of the data has happened by then; a reader that
    closes the pipe early stops the stream (``BrokenPipeError``, which the CLI
    turns into a quiet exit).
    """

    def __init__(self, *, force: bool = False):
        self.force = force
        self._staged: list[tuple[str, Path]] = []
        self._stdout: list[Callable] = []  # writers run on commit, straight to stdout

    def add_table(self, path: str | Path, df: pd.DataFrame) -> None:
        self._add(path, _table_writer(df, table_format(path)))

    def add_table_chunks(self, path: str | Path, chunks: Iterable) -> None:
        """A table written chunk by chunk (see :func:`_chunked_writer`); any number of rows."""
        self._add(path, _chunked_writer(chunks, table_format(path)))

    def add_json(self, path: str | Path, obj) -> None:
        self.add_bytes(path, json_bytes(obj))

    def add_bytes(self, path: str | Path, data: bytes) -> None:
        self._add(path, lambda fh: fh.write(data))

    def add_text(self, path: str | Path, text: str) -> None:
        self._add(path, lambda fh: fh.write(text.encode("utf-8")))

    def _add(self, path: str | Path, writer: Callable) -> None:
        if str(path) == "-":  # streamed on commit, after the files are in place
            self._stdout.append(writer)
            return
        check_output_path(path, force=self.force)
        p = Path(path)
        try:
            fd, tmp = tempfile.mkstemp(dir=p.parent if str(p.parent) else ".", prefix=f".{p.name}.", suffix=".tmp")
        except OSError as exc:
            raise OutputError(f"cannot create output {p}: {exc.strerror}") from None
        try:
            os.fchmod(fd, 0o666 & ~_umask())  # as open() would create it (mkstemp makes 0600)
            with os.fdopen(fd, "wb") as fh:
                writer(fh)
        except OSError as exc:
            self._remove(Path(tmp))
            self.discard()
            raise OutputError(f"cannot write output {p}: {exc.strerror}") from None
        except BaseException:
            self._remove(Path(tmp))
            self.discard()
            raise
        self._staged.append((tmp, p))

    def commit(self) -> None:
        try:
            for tmp, final in self._staged:
                os.replace(tmp, final)
        except OSError as exc:
            self.discard()
            raise OutputError(f"cannot create output: {exc.strerror}") from None
        self._staged = []
        writers, self._stdout = self._stdout, []
        for writer in writers:
            writer(sys.stdout.buffer)
        sys.stdout.buffer.flush()

    def discard(self) -> None:
        for tmp, _ in self._staged:
            self._remove(Path(tmp))
        self._staged = []
        self._stdout = []

    @staticmethod
    def _remove(p: Path) -> None:
        try:
            p.unlink()
        except FileNotFoundError:
            pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self.discard()
