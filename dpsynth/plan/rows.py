"""The row count n a plan uses: given (``--rows``), estimated from the input file size, or assumed."""

from __future__ import annotations

from pathlib import Path

from dpsynth.config import Config
from dpsynth.plan.machine import format_bytes

__all__ = ["ASSUMED_ROWS", "n_is_public", "plan_rows"]

ASSUMED_ROWS = 100_000
"""Row count assumed when ``--rows`` is not given and the input file's size may not (n private) or cannot be used."""


def n_is_public(config: Config) -> bool:
    """Whether the row count n is public: ``privacy.n: public``, or replace-one neighbours (n fixed)."""
    return config.privacy.n_public or config.privacy.neighbouring.value == "replace-one"


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
    """(n, where it came from).  With n private only public figures decide: ``--rows`` or the assumption;
    the input file's size grows with n, so a decision taken on it (the memory guard's exit status, the
    printed plan) would publish n without a mechanism."""
    if rows is not None:
        return int(rows), "as given (--rows)"
    if not n_is_public(config):
        return ASSUMED_ROWS, (f"assumed ({ASSUMED_ROWS:,}; n is private, so the input file's size is not used; "
                              "give --rows N, a public figure)")
    if input_path and input_path != "-" and Path(input_path).is_file() and len(config.domain):
        size = Path(input_path).stat().st_size
        per_row = _estimated_row_bytes(config)
        name = input_path.lower()
        factor = 4.0 if name.endswith(".gz") else 3.0 if name.endswith(".parquet") else 1.0
        est = max(1, int(size * factor / per_row))
        return est, f"estimated from the input file size ({format_bytes(size)}, ~{per_row:.0f} bytes per row); give --rows N for a better figure"
    return ASSUMED_ROWS, f"assumed ({ASSUMED_ROWS:,}; give --rows N or -i INPUT)"

