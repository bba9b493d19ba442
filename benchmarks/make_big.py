"""Generate Adult-like tables of 10⁴ … 10⁷ rows by resampling ``sample_data/adult.csv`` (for the engine benchmarks).

Rows are drawn uniformly with replacement (seeded), so every value is a real
Adult value and the schema ``configs/adult.yaml`` accepts them all.  Files go to
``/tmp/dpsynth-big/`` (override with ``--out`` or ``DPSYNTH_BIG_DIR``), never to
the repository::

    nice python -m benchmarks.make_big --rows 1e4 1e5 1e6 1e7 --format csv parquet

A file that already exists with the right row count is kept.  Writing is
chunked (10⁶ rows at a time) so generating 10⁷ rows needs well under 1 GB.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "sample_data" / "adult.csv"
BIG_DIR = Path(os.environ.get("DPSYNTH_BIG_DIR", "/tmp/dpsynth-big"))
CHUNK = 1_000_000


def big_path(rows: int, fmt: str, out: Path = BIG_DIR) -> Path:
    return out / f"adult_{rows}.{fmt}"


def _source() -> pa.Table:
    # Read every column as text: resampling must not change how values are written.
    names = pacsv.read_csv(SOURCE, read_options=pacsv.ReadOptions(block_size=1 << 16)).column_names
    convert = pacsv.ConvertOptions(column_types={c: pa.string() for c in names}, strings_can_be_null=True,
                                   null_values=[""])
    return pacsv.read_csv(SOURCE, convert_options=convert)


def make(rows: int, fmt: str, *, out: Path = BIG_DIR, seed: int = 0) -> Path:
    """Write (or reuse) an ``rows``-row resample of Adult as ``fmt`` ('csv' or 'parquet'); returns its path."""
    path = big_path(rows, fmt, out)
    if path.exists() and _rows_of(path, fmt) == rows:
        return path
    out.mkdir(parents=True, exist_ok=True)
    src = _source()
    rng = np.random.default_rng(seed)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    writer = None
    try:
        for start in range(0, rows, CHUNK):  # loop over chunks of rows; each is vectorized
            idx = rng.integers(0, src.num_rows, size=min(CHUNK, rows - start))
            chunk = _typed(src.take(pa.array(idx)))
            if writer is None:
                plain = pacsv.WriteOptions(quoting_style="none")
                writer = (pq.ParquetWriter(tmp, chunk.schema) if fmt == "parquet"
                          else pacsv.CSVWriter(tmp, chunk.schema, write_options=plain))
            writer.write_table(chunk)
    finally:
        if writer is not None:
            writer.close()
    os.replace(tmp, path)
    return path


def _typed(chunk: pa.Table) -> pa.Table:
    """Numeric-looking columns as int64 (Parquet keeps real types; CSV text is unchanged)."""
    cols = []
    for name in chunk.column_names:
        col = chunk[name]
        try:
            col = col.cast(pa.int64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
        cols.append(col)
    return pa.table(cols, names=chunk.column_names)


def _rows_of(path: Path, fmt: str) -> int:
    if fmt == "parquet":
        return pq.ParquetFile(path).metadata.num_rows
    with open(path, "rb") as fh:  # count lines in 16 MB blocks (not per row)
        lines = sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 24), b""))
    return lines - 1


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", nargs="+", default=["1e4", "1e5", "1e6", "1e7"])
    ap.add_argument("--format", nargs="+", default=["csv", "parquet"], choices=["csv", "parquet"])
    ap.add_argument("--out", type=Path, default=BIG_DIR)
    args = ap.parse_args(argv)
    for r in args.rows:
        for fmt in args.format:
            p = make(int(float(r)), fmt, out=args.out)
            print(f"{p}  {p.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
