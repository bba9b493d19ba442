"""Reading input tables and writing outputs atomically.

Formats follow the file name: ``.csv``, ``.csv.gz``, ``.parquet``; ``-`` is CSV
on stdin/stdout.  Every output is written to a hidden temporary file in the
target directory and renamed into place only when *all* outputs of a command
are ready (:class:`OutputSet`), so a failed or killed run leaves no partial
file.  Errors never quote the content of the input.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Self

import pandas as pd

from dpsynth.errors import DataError, InputMissingError, OutputError, UsageError

__all__ = ["OutputSet", "check_output_path", "read_table", "table_format"]

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
def read_table(path: str | Path, *, string_columns: Iterable[str] = ()) -> pd.DataFrame:
    """Read a CSV/CSV.gz/Parquet table (or CSV from stdin for '-').

    Only empty CSV fields are nulls (``NA`` or ``None`` stay strings).  Columns
    in ``string_columns`` are read as text, so category labels such as ``01``
    keep their form.
    """
    fmt = table_format(path)
    string_columns = set(string_columns)
    if str(path) == "-":
        raw = sys.stdin.buffer.read()
        return _parse_csv(raw, "stdin", string_columns)
    p = Path(path)
    if not p.is_file():
        raise InputMissingError(f"input file not found: {p}")
    if fmt == "parquet":
        return _read_parquet(p)
    raw = p.read_bytes()
    if fmt == "csv.gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError):
            raise DataError(f"{p}: not a valid gzip file") from None
    return _parse_csv(raw, str(p), string_columns)


def _parse_csv(raw: bytes, name: str, string_columns: set[str]) -> pd.DataFrame:
    if not raw.strip():
        raise DataError(f"{name}: the input is empty")
    if b"\x00" in raw:
        raise DataError(f"{name}: the input contains a NUL byte (is it a binary file?)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{name}: the input is not valid UTF-8 (first bad byte at offset {exc.start})") from None
    _check_header(text, name)
    try:
        header = pd.read_csv(io.BytesIO(raw), nrows=0, encoding="utf-8").columns
        dtype = {c: str for c in header if c in string_columns}
        df = pd.read_csv(
            io.BytesIO(raw),
            encoding="utf-8",
            keep_default_na=False,
            na_values=[""],
            dtype=dtype or None,
            skipinitialspace=False,
        )
    except pd.errors.EmptyDataError:
        raise DataError(f"{name}: the input has no header row") from None
    except pd.errors.ParserError as exc:
        raise DataError(f"{name}: malformed CSV ({_ragged_reason(str(exc))})") from None
    if len(df) == 0:
        raise DataError(f"{name}: the input has a header but no data rows")
    if any(str(c).startswith("Unnamed: ") for c in df.columns):
        raise DataError(f"{name}: the header has an empty column name")
    return df


def _check_header(text: str, name: str) -> None:
    """Refuse duplicate column names (pandas would silently rename the second 'x' to 'x.1')."""
    import csv

    try:
        header = next(csv.reader(io.StringIO(text)), [])
    except csv.Error:
        return  # pandas reports malformed CSV below
    if len(set(header)) != len(header):
        dup = next(h for h in header if header.count(h) > 1)
        raise DataError(f"{name}: the header repeats the column name '{dup}'")


def _ragged_reason(msg: str) -> str:
    # pandas says "Expected 3 fields in line 5, saw 4": keep only the counts and line number.
    import re

    m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", msg)
    if m:
        return f"line {m.group(2)} has {m.group(3)} fields, expected {m.group(1)}"
    return "rows do not parse as CSV"


def _read_parquet(p: Path) -> pd.DataFrame:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(p)
    except (pa.ArrowException, OSError):
        raise DataError(f"{p}: not a readable Parquet file") from None
    df = table.to_pandas()
    if len(df) == 0:
        raise DataError(f"{p}: the input has no data rows")
    return df


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


class OutputSet:
    """Stage several outputs in temporary files; rename them all into place on :meth:`commit`.

    If anything fails before :meth:`commit` (or during it), every temporary file
    is removed and no final file has been touched, except ones already renamed
    when a later rename fails (renames within one directory are atomic and
    essentially never fail once the temporary files exist).
    """

    def __init__(self, *, force: bool = False):
        self.force = force
        self._staged: list[tuple[str, Path]] = []
        self._stdout: list[bytes] = []

    def add_table(self, path: str | Path, df: pd.DataFrame) -> None:
        self._add(path, _table_writer(df, table_format(path)))

    def add_json(self, path: str | Path, obj) -> None:
        text = json.dumps(obj, indent=2, sort_keys=False, allow_nan=False) + "\n"
        self._add(path, lambda fh: fh.write(text.encode("utf-8")))

    def _add(self, path: str | Path, writer: Callable) -> None:
        if str(path) == "-":
            buf = io.BytesIO()
            writer(buf)
            self._stdout.append(buf.getvalue())
            return
        check_output_path(path, force=self.force)
        p = Path(path)
        try:
            fd, tmp = tempfile.mkstemp(dir=p.parent if str(p.parent) else ".", prefix=f".{p.name}.", suffix=".tmp")
        except OSError as exc:
            raise OutputError(f"cannot create output {p}: {exc.strerror}") from None
        try:
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
        for chunk in self._stdout:
            sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
        self._stdout = []

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
