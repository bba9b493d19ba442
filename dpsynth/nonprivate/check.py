"""NOT PRIVATE: which rows and columns of a table break its schema (``dpsynth check``).

For the data owner preparing an input: it reads the real table and reports,
per column and per rule, how many rows break it and the first few row numbers
(1 = the first data row).  It never prints a value.  The rules are those of
:func:`dpsynth.data.discretize.encode`, in the same order, so a clean report
means a release will not stop on the data (the numpy engine raises the first
of these problems as a one-line error).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpsynth.data.schema import CategoricalColumn, Domain, IntegerColumn

__all__ = ["NOT_PRIVATE", "Violation", "format_violations", "schema_violations"]

NOT_PRIVATE = "NOT PRIVATE: this check reads the real table; its row numbers describe the data"
_SHOWN = 5


@dataclass(frozen=True)
class Violation:
    column: str
    problem: str
    rows: np.ndarray  # 1-based data row numbers

    def describe(self) -> str:
        if not len(self.rows):
            return f"{self.column}: {self.problem}"
        first = ", ".join(str(int(r)) for r in self.rows[:_SHOWN])
        more = f", ... ({len(self.rows) - _SHOWN} more)" if len(self.rows) > _SHOWN else ""
        return f"{self.column}: {self.problem}: {len(self.rows)} row(s): {first}{more}"


def schema_violations(table: pd.DataFrame, domain: Domain, *, unknown: str = "error") -> list[Violation]:
    """Every (column, rule) the table breaks, with the rows that break it (vectorized per column)."""
    out: list[Violation] = []
    present = {str(c) for c in table.columns}
    for spec in domain.columns:  # loop over columns; each check is vectorized over rows
        if spec.name not in present:
            out.append(Violation(spec.name, "declared in the schema but missing from the input", np.zeros(0, int)))
            continue
        col = table[spec.name]
        isnull = col.isna().to_numpy()
        problems: list[tuple[str, np.ndarray]] = []
        if not spec.missing:
            problems.append(("null (empty) value; declare 'missing: category' to keep them", isnull))
        if isinstance(spec, CategoricalColumn):
            labels = col.astype("string").to_numpy(dtype=object, na_value=None)
            if pd.api.types.is_float_dtype(col):
                nonnull = col.dropna()
                if len(nonnull) and np.all(nonnull == np.round(nonnull)):
                    labels = col.astype("Int64").astype("string").to_numpy(dtype=object, na_value=None)
            known = pd.Index([str(c) for c in spec.categories], dtype=object).get_indexer(labels) >= 0
            if not spec.other:
                problems.append(("value outside the declared categories", ~known & ~isnull))
        else:
            values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
            text = np.isnan(values) & ~isnull
            problems.append(("not a number", text))
            ok = ~isnull & ~text
            if isinstance(spec, IntegerColumn):
                lo, hi = spec.lower, spec.upper
                with np.errstate(invalid="ignore"):
                    problems.append(("fractional value in an integer column",
                                     ok & np.isfinite(values) & (values != np.round(values))))
            else:
                lo, hi = spec.edges[0], spec.edges[-1]
            if unknown != "other":
                with np.errstate(invalid="ignore"):
                    problems.append((f"outside the declared range [{lo:g}, {hi:g}] (or not finite)",
                                     ok & ~((values >= lo) & (values <= hi))))
        for problem, mask in problems:
            if mask.any():
                out.append(Violation(spec.name, problem, np.flatnonzero(mask) + 1))
    return out


def format_violations(violations: list[Violation], rows: int, ignored: list[str]) -> str:
    lines = [f"{rows} data rows checked against the schema"]
    if ignored:
        lines.append(f"ignored (not in the schema): {', '.join(ignored)}")
    if not violations:
        lines.append("no problems: every row fits the schema")
    lines += [v.describe() for v in violations]
    return "\n".join(lines) + "\n"
