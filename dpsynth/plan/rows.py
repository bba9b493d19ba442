"""The row count n a plan uses: given (``--rows``), estimated from the input file size, or assumed."""

from __future__ import annotations

from pathlib import Path

from dpsynth.config import Config
from dpsynth.plan.machine import format_bytes

__all__ = ["ASSUMED_ROWS", "plan_rows"]

ASSUMED_ROWS = 100_000
"""Row count assumed when neither ``--rows`` nor an input file is given."""


def _estimated_row_bytes(config: Config) -> float:
    """Bytes of one CSV row, guessed from the schema: mean label length per column plus a delimiter."""
    total = 0.0
    for col in config.domain.columns:
        labels = [str(x) for x in col.labels()]
        if col.kind == "categorical":
            total += sum(map(len, labels)) / max(len(labels), 1)
        else:
            total += max(len(labels[-1].split(",")[0].strip("[(")), 2)
        total += 1
    return total


def plan_rows(config: Config, rows: int | None, input_path: str | None) -> tuple[int, str]:
    if rows is not None:
        return int(rows), "as given (--rows)"
    if input_path and input_path != "-" and Path(input_path).is_file() and len(config.domain):
        size = Path(input_path).stat().st_size
        per_row = _estimated_row_bytes(config)
        name = input_path.lower()
        factor = 4.0 if name.endswith(".gz") else 3.0 if name.endswith(".parquet") else 1.0
        est = max(1, int(size * factor / per_row))
        return est, f"estimated from the input file size ({format_bytes(size)}, ~{per_row:.0f} bytes per row); give --rows N for a better figure"
    return ASSUMED_ROWS, f"assumed ({ASSUMED_ROWS:,}; give --rows N or -i INPUT)"

