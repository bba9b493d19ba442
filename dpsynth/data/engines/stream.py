"""The ``stream`` engine: count a CSV/Parquet table larger than memory, one record batch at a time.

Design (measured in docs/engines.md):

1. **One pass over the input.**  pyarrow reads the schema columns in record
   batches (``pyarrow.csv.open_csv`` with every column as text, or
   ``ParquetFile.iter_batches``).  Each batch is discretized with the same rules
   as :func:`dpsynth.data.discretize.encode`: a fast Arrow path for clean batches
   (``index_in`` for categories, an Arrow number cast followed by
   :func:`dpsynth.data.discretize.encode_numbers` for numbers) and, for any batch
   column with nulls, unknown labels or text Arrow cannot parse, pandas and
   the numpy engine's own per-column encoder.  So codes and error messages are
   the numpy engine's.
2. **Codes spill to disk, column by column**, as uint8/uint16 in anonymous
   temporary files (unlinked at once, so nothing is left behind even after a
   crash): 15 bytes per Adult row, 150 MB for 10⁷ rows, none of it in memory.
3. **Marginals are answered adaptively** (MWEM chooses its queries round by
   round): ``marginal(attrs)`` reads only the columns in ``attrs``, 4 M rows at
   a time, and accumulates a bincount; results are cached.

Memory is bounded by the batch, the chunk and the counts, not by the rows.

Errors are the numpy engine's one-line :class:`~dpsynth.errors.DataError`
messages.  A column's first error is collected per batch and the pass goes on,
so that the message raised is the one the numpy engine gives for the whole
table (the first column in schema order, its first failing rule).
"""

from __future__ import annotations

import codecs
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Self

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from dpsynth.data.counts import CachedCounts
from dpsynth.data.discover.tables import ScannedTable
from dpsynth.data.discretize import check_columns, encode_column, encode_numbers
from dpsynth.data.io import arrow_to_pandas, table_format
from dpsynth.data.schema import CategoricalColumn, ColumnSpec, DatetimeColumn, Domain, null_code
from dpsynth.data.source import DEFAULT, InputOptions, ragged_message
from dpsynth.errors import DataError, InputMissingError
from dpsynth.progress import Progress, no_progress

__all__ = ["StreamCounts", "discovery_table", "read_header"]

CHUNK_ROWS = 1 << 22  # rows per read when answering a marginal (≈ 32 MB of int64 keys)
CSV_BLOCK = 1 << 22  # bytes per CSV record batch
PARQUET_BATCH = 1 << 17  # rows per Parquet record batch

# The order in which discretize.encode_column checks a column: for one column,
# the numpy engine raises the first of these that any row breaks.
_RULES = (
    "has null values",
    "outside its declared categories",
    "values are not numbers",
    "has non-numeric values",
    "declared datetime but has values",
    "fractional values",
    "outside its declared range",
)


def _rule(message: str) -> int:
    return next((i for i, r in enumerate(_RULES) if r in message), len(_RULES))


# ------------------------------------------------------------------------ CSV input
class _CheckedStream:
    """A binary file wrapper that applies io.py's whole-input checks while Arrow reads it.

    It refuses a NUL byte and invalid UTF-8 (with the absolute offset of the
    first bad byte, as the numpy engine reports it) and notes whether any
    non-blank byte was seen (an all-blank input is "empty").
    """

    def __init__(self, raw, name: str, progress: Progress, total: int, options: InputOptions = DEFAULT):
        self._raw, self.name, self._options = raw, name, options
        self._decoder = codecs.getincrementaldecoder("utf-8")()
        self.offset = 0
        self.content = False
        self.error: str | None = None
        self._utf8_bad: int | None = None
        self._progress, self._total = progress, total
        self.closed = False

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        try:
            chunk = self._raw.read(size)
        except (OSError, EOFError, pa.ArrowException):
            self.error = f"{self.name}: not a valid gzip file"
            raise
        self._check(chunk, final=not chunk)
        self.offset += len(chunk)
        if self._total:
            self._progress("reading input", min(self.offset, self._total), self._total)
        if self.error:
            raise DataError(self.error)
        return chunk

    def _check(self, chunk: bytes, *, final: bool) -> None:
        if not self.content and chunk.strip():
            self.content = True
        if b"\x00" in chunk and not self._options.encoding.startswith(("utf-16", "utf-32")):
            self.error = f"{self.name}: the input contains a NUL byte (is it a binary file?)"
            return
        if self._utf8_bad is None and self._options.utf8:  # other encodings: Arrow transcodes
            pending = len(self._decoder.getstate()[0])
            try:
                self._decoder.decode(chunk, final=final)
            except UnicodeDecodeError as exc:
                self._utf8_bad = self.offset - pending + exc.start
                if self.error is None:  # a NUL byte seen earlier wins, as in io.read_table
                    self.error = (f"{self.name}: the input is not valid UTF-8 "
                                  f"(first bad byte at offset {self._utf8_bad}); if it is in another "
                                  "encoding, pass --encoding (e.g. latin-1)")

    def diagnose(self) -> str | None:
        """After Arrow failed: scan the rest of the input; the numpy engine's message, if any applies."""
        try:
            while True:
                chunk = self._raw.read(1 << 24)
                self._check(chunk, final=not chunk)
                self.offset += len(chunk)
                if not chunk or (self.error and "NUL" in self.error):
                    break
        except (OSError, EOFError, pa.ArrowException):
            return f"{self.name}: not a valid gzip file"
        if not self.content:
            return f"{self.name}: the input is empty"
        return self.error

    def close(self) -> None:
        self.closed = True
        self._raw.close()


def _open_raw(path: Path, fmt: str):
    if fmt == "csv.gz":
        return pa.CompressedInputStream(pa.OSFile(str(path)), "gzip")
    return open(path, "rb")


class _CsvSource:
    """Record batches of the schema columns of a CSV (or CSV.gz) file, every column as text."""

    def __init__(self, path: Path, fmt: str, progress: Progress, options: InputOptions = DEFAULT):
        self.path, self.fmt, self.progress, self.options = path, fmt, progress, options
        self.name = str(path)
        self.raw_names = self._read(self._header, block=1 << 16)
        self.names = [n.strip() for n in self.raw_names] if options.strip else list(self.raw_names)

    @staticmethod
    def _header(reader, stream: _CheckedStream) -> list[str]:
        names = reader.schema.names
        if all(not n.strip() for n in names):  # a blank first line: maybe an all-blank input
            message = stream.diagnose()
            if message:
                raise DataError(message)
        return names

    def _read(self, use, *, block: int, columns: Sequence[str] | None = None):
        total = self.path.stat().st_size if self.fmt == "csv" and columns else 0  # progress of the data pass only
        stream = _CheckedStream(_open_raw(self.path, self.fmt), self.name, self.progress, total, self.options)
        bad_row: list[tuple[int, int, int | None]] = []

        def on_bad_row(row) -> str:
            bad_row.append((row.expected_columns, row.actual_columns, row.number))
            return "error"

        if columns and self.options.strip:  # the file's own (padded) names
            raw = dict(zip(self.names, self.raw_names))
            columns = [raw[c] for c in columns]
        convert = pacsv.ConvertOptions(
            column_types={c: pa.string() for c in (columns or [])},
            include_columns=list(columns or []),
            null_values=[""],
            strings_can_be_null=True,
            quoted_strings_can_be_null=True,
        )
        try:
            reader = pacsv.open_csv(
                stream,
                read_options=pacsv.ReadOptions(block_size=block, use_threads=False, encoding=self.options.encoding),
                parse_options=pacsv.ParseOptions(delimiter=self.options.delimiter, invalid_row_handler=on_bad_row),
                convert_options=convert,
            )
            return use(reader, stream)
        except (pa.ArrowException, DataError, OSError, EOFError):
            message = stream.diagnose() or _parse_message(self.name, bad_row)
            raise DataError(message) from None
        finally:
            stream.close()

    def batches(self, columns: Sequence[str], consume) -> None:
        """Feed every record batch of ``columns`` to ``consume`` (errors become DataError)."""

        def run(reader, stream) -> None:
            for batch in reader:
                consume(_stripped(batch, columns) if self.options.strip else batch)

        self._read(run, block=CSV_BLOCK, columns=columns)


def _parse_message(name: str, bad_row: list) -> str:
    if bad_row and bad_row[0][2] is not None:
        expected, actual, line = bad_row[0]
        return ragged_message(name, line, actual, expected)
    return f"{name}: malformed CSV (rows do not parse as CSV)"


def _stripped(batch: pa.RecordBatch, names: Sequence[str]) -> pa.RecordBatch:
    """``schema.strip``: spaces around every text field removed, a field of spaces null, schema names."""
    arrays = []
    for arr in batch.columns:  # loop over the schema's columns; each is vectorized
        if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
            arr = pc.utf8_trim_whitespace(arr)
            arr = pc.if_else(pc.equal(arr, ""), pa.scalar(None, type=arr.type), arr)
        arrays.append(arr)
    return pa.RecordBatch.from_arrays(arrays, names=list(names))


class _ParquetSource:
    def __init__(self, path: Path, progress: Progress, options: InputOptions = DEFAULT):
        self.name, self.progress, self.options = str(path), progress, options
        try:
            self._file = pq.ParquetFile(path)
            self.names = self._file.schema_arrow.names
        except (pa.ArrowException, OSError):
            raise DataError(f"{path}: not a readable Parquet file") from None

    def batches(self, columns: Sequence[str], consume) -> None:
        total, done = self._file.metadata.num_rows, 0
        try:
            for batch in self._file.iter_batches(batch_size=PARQUET_BATCH, columns=list(columns)):
                consume(_stripped(batch, columns) if self.options.strip else batch)
                done += batch.num_rows
                self.progress("reading input", done, total)
        except (pa.ArrowException, OSError):
            raise DataError(f"{self.name}: not a readable Parquet file") from None


def _source(path: str | Path, progress: Progress, options: InputOptions = DEFAULT):
    fmt = table_format(path)
    if str(path) == "-":
        raise DataError("the stream engine reads a file, not stdin; give the input as a path")
    p = Path(path)
    if not p.is_file():
        raise InputMissingError(f"input file not found: {p}")
    return _ParquetSource(p, progress, options) if fmt == "parquet" else _CsvSource(p, fmt, progress, options)


def read_header(path: str | Path, domain: Domain, options: InputOptions = DEFAULT) -> list[str]:
    """Column names of the input, checked against the schema; returns the ones that will be ignored.

    Reads only the start of the file: the schema check happens before any engine work.
    """
    return _check_header(_source(path, no_progress, options).names, str(path), domain)


def _check_header(names: list[str], name: str, domain: Domain) -> list[str]:
    _check_names(names, name)
    return check_columns(names, domain)


# ----------------------------------------------------------------------- discretize
class _BatchEncoder:
    """Discretize record batches column by column, remembering each column's first error."""

    def __init__(self, domain: Domain, unknown: str):
        self.domain, self.unknown = domain, unknown
        self.labels = {
            j: pa.array([str(c) for c in spec.categories], type=pa.string())
            for j, spec in enumerate(domain.columns)
            if isinstance(spec, CategoricalColumn)
        }
        self.errors: dict[int, tuple[int, str]] = {}  # column -> (rule rank, message)

    def encode(self, batch: pa.RecordBatch) -> list[np.ndarray | None]:
        out: list[np.ndarray | None] = []
        for j, spec in enumerate(self.domain.columns):  # loop over columns; each is vectorized
            arr = batch.column(spec.name)
            try:
                codes = self._fast(arr, j, spec)
                if codes is None:
                    col = arrow_to_pandas(arr) if isinstance(spec, CategoricalColumn) else arr.to_pandas()
                    codes = encode_column(col, spec, self.unknown)
            except DataError as exc:
                rank = _rule(str(exc))
                if j not in self.errors or rank < self.errors[j][0]:
                    self.errors[j] = (rank, str(exc))
                codes = None
            out.append(codes)
        return out

    def _fast(self, arr: pa.Array, j: int, spec: ColumnSpec) -> np.ndarray | None:
        """Arrow encoding of a clean batch column, or None to use the numpy engine's encoder."""
        t = arr.type
        if isinstance(spec, DatetimeColumn):  # instants are parsed per cell by the numpy engine's encoder
            return None
        if isinstance(spec, CategoricalColumn):
            if pa.types.is_integer(t):
                arr = pc.cast(arr, pa.string())  # "1", as pandas' astype("string") writes it
            elif not (pa.types.is_string(t) or pa.types.is_large_string(t)):
                return None
            code = null_code(spec)  # the null category's, or the fill value's under missing: fill
            if arr.null_count and code is None:
                return None
            idx = pc.index_in(arr, value_set=self.labels[j])
            if idx.null_count != arr.null_count:  # undeclared labels: the full rules decide
                return None
            idx = idx.fill_null(code) if arr.null_count else idx
            return idx.to_numpy(zero_copy_only=False).astype(np.int64)
        if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t)
                or pa.types.is_floating(t)):
            return None
        code = null_code(spec)
        if arr.null_count and code is None:
            return None
        try:
            values = pc.cast(arr, pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None
        isnull = values.is_null().to_numpy(zero_copy_only=False)
        values = values.to_numpy(zero_copy_only=False)  # NaN where null
        if not np.isfinite(values[~isnull]).all():
            return None
        out = encode_numbers(values, isnull, spec, self.unknown)
        if code is not None:
            out[isnull] = code
        return out

    def raise_first(self) -> None:
        if self.errors:
            raise DataError(self.errors[min(self.errors)][1])


# ---------------------------------------------------------------------------- spill
class _Spill:
    """Codes of each column appended to its own anonymous temporary file (uint8/uint16/uint32)."""

    def __init__(self, domain: Domain, directory: str | None):
        self.dtypes = [np.dtype(np.min_scalar_type(max(s - 1, 0))) for s in domain.sizes]
        self.files = [tempfile.TemporaryFile(dir=directory, prefix="dpsynth-codes-") for _ in domain.sizes]  # noqa: SIM115 - owned and closed by _Spill
        self.rows = 0

    def append(self, codes: list[np.ndarray]) -> None:
        for fh, dt, c in zip(self.files, self.dtypes, codes):
            fh.write(np.ascontiguousarray(c, dtype=dt).data)
        self.rows += len(codes[0])

    def finish(self) -> None:
        for fh in self.files:
            fh.flush()

    def read(self, j: int, start: int, count: int) -> np.ndarray:
        dt = self.dtypes[j]
        buf = os.pread(self.files[j].fileno(), count * dt.itemsize, start * dt.itemsize)
        return np.frombuffer(buf, dtype=dt)

    def close(self) -> None:
        for fh in self.files:
            fh.close()


# --------------------------------------------------------------------------- engine
class StreamCounts(CachedCounts):
    """Counts of a CSV/Parquet table read in record batches, with codes spilled to disk.

    Use as a context manager (or call :meth:`close`) to release the spill files.
    ``spill_dir`` defaults to the system temporary directory.
    """

    def __init__(
        self,
        path: str | Path,
        domain: Domain,
        *,
        unknown: str = "error",
        spill_dir: str | None = None,
        progress: Progress = no_progress,
        options: InputOptions = DEFAULT,
    ):
        self.domain = domain
        self._cache: dict[tuple[int, ...], np.ndarray] = {}
        source = _source(path, progress, options)
        _check_header(source.names, str(path), domain)
        encoder = _BatchEncoder(domain, unknown)
        self._spill = _Spill(domain, spill_dir)
        try:
            self._pass(source, encoder)
        except BaseException:
            self.close()
            raise

    def _pass(self, source, encoder: _BatchEncoder) -> None:
        def consume(batch: pa.RecordBatch) -> None:
            if batch.num_rows == 0:
                return
            codes = encoder.encode(batch)
            if not encoder.errors:
                self._spill.append(codes)

        source.batches(self.domain.names, consume)
        encoder.raise_first()
        if self._spill.rows == 0:
            if isinstance(source, _CsvSource):
                raise DataError(f"{source.name}: the input has a header but no data rows")
            raise DataError(f"{source.name}: the input has no data rows")
        self._spill.finish()

    @property
    def n(self) -> int:
        return int(self._spill.rows)

    def _count(self, attrs: tuple[int, ...], shape: tuple[int, ...]) -> np.ndarray:
        cells = int(np.prod(shape))
        out = np.zeros(cells, dtype=np.int64)
        for start, count in self._chunks():  # loop over row chunks; each is vectorized
            flat = np.zeros(count, dtype=np.int64)
            for a, size in zip(attrs, shape):
                flat *= size
                flat += self._spill.read(a, start, count)
            out += np.bincount(flat, minlength=cells)
        return out.reshape(shape)

    def _chunks(self) -> Iterator[tuple[int, int]]:
        for start in range(0, self.n, CHUNK_ROWS):
            yield start, min(CHUNK_ROWS, self.n - start)

    def close(self) -> None:
        self._spill.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ------------------------------------------------------------------------ discovery
def discovery_table(path: str | Path, *, progress: Progress = no_progress,
                    options: InputOptions = DEFAULT) -> ScannedTable:
    """The table at ``path`` for private schema discovery, read in record batches (never whole): each question
    of :class:`~dpsynth.data.discover.column.ColumnDiscovery` is one pass over one column
    (:class:`~dpsynth.data.discover.tables.ScannedTable`).  A batch column becomes the pandas column
    ``io.read_table(path, string_columns=True)`` would hold (CSV: text; Parquet: its types, integers exact), so
    the answers, hence the schema for a seed, are the numpy engine's."""
    source = _source(path, progress, options)
    names = list(source.names)
    _check_names(names, str(path))

    def batches(columns: list[str], consume) -> None:
        source.batches(columns, lambda batch: consume([arrow_to_pandas(batch.column(c)) for c in columns]))

    def rows() -> int:
        if isinstance(source, _ParquetSource):
            n = source._file.metadata.num_rows
            if n == 0:
                raise DataError(f"{path}: the input has no data rows")
            return n
        seen = [0]
        source.batches([names[0]], lambda batch: seen.__setitem__(0, seen[0] + batch.num_rows))
        if seen[0] == 0:
            raise DataError(f"{path}: the input has a header but no data rows")
        return seen[0]

    return ScannedTable(names, batches, rows)


def _check_names(names: list[str], name: str) -> None:
    if any(n == "" for n in names):
        raise DataError(f"{name}: the header has an empty column name")
    if len(set(names)) != len(names):  # as io.read_table says it
        dup = next(h for h in names if names.count(h) > 1)
        raise DataError(f"{name}: the header repeats the column name '{dup}'")
