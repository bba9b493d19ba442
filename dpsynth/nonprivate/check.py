"""NOT PRIVATE: which rows and columns of a table break its schema (``dpsynth check``).

For the data owner preparing an input: it reads the real table and reports,
per column and per rule, how many rows break it and the first few row numbers
(1 = the first data row).  It never prints a value.  Under ``unknown: other``
it also counts, per column, the values a release will fold away (into the extra
category, clamped to the range, rounded, read as missing).  The rules are those of
:func:`dpsynth.data.discretize.encode`, in the same order, so a clean report
means a release will not stop on the data (the numpy engine raises the first
of these problems as a one-line error).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpsynth.data.schema import CategoricalColumn, DatetimeColumn, Domain, IntegerColumn
from dpsynth.data.timestamps import instant_text, instants

__all__ = ["NOT_PRIVATE", "Fold", "Violation", "folded_values", "format_violations", "schema_violations"]

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


@dataclass(frozen=True)
class Fold:
    """Values that ``unknown: other`` accepts by changing them: how many, in one column, and how."""

    column: str
    what: str
    count: int

    def describe(self) -> str:
        return f"{self.column}: {self.count} value(s) {self.what}"


def schema_violations(table: pd.DataFrame, domain: Domain, *, unknown: str = "error") -> list[Violation]:
    """Every (column, rule) the table breaks, with the rows that break it (vectorized per column)."""
    return _check(table, domain, unknown)[0]


def folded_values(table: pd.DataFrame, domain: Domain, *, unknown: str = "error") -> list[Fold]:
    """Per column, the values ``unknown: other`` will fold away (none under ``unknown: error``)."""
    return _check(table, domain, unknown)[1]


def _check(table: pd.DataFrame, domain: Domain, unknown: str) -> tuple[list[Violation], list[Fold]]:
    out: list[Violation] = []
    folds: list[Fold] = []
    other = unknown == "other"
    present = {str(c) for c in table.columns}
    for spec in domain.columns:  # loop over columns; each check is vectorized over rows
        if spec.name not in present:
            out.append(Violation(spec.name, "declared in the schema but missing from the input", np.zeros(0, int)))
            continue
        col = table[spec.name]
        isnull = col.isna().to_numpy()
        problems: list[tuple[str, np.ndarray]] = []
        folded: list[tuple[str, np.ndarray]] = []
        if spec.fill is not None:
            folded.append((f"null (empty), read as the fill value {spec.fill!r}", isnull))
        elif not spec.missing:
            problems.append(("null (empty) value; declare 'missing: category' to keep them", isnull))
        if isinstance(spec, CategoricalColumn):
            labels = col.astype("string").to_numpy(dtype=object, na_value=None)
            if pd.api.types.is_float_dtype(col):
                nonnull = col.dropna()
                if len(nonnull) and np.all(nonnull == np.round(nonnull)):
                    labels = col.astype("Int64").astype("string").to_numpy(dtype=object, na_value=None)
            known = pd.Index([str(c) for c in spec.categories], dtype=object).get_indexer(labels) >= 0
            outside = ~known & ~isnull
            if spec.other:
                folded.append(("outside the declared categories, folded into the extra category", outside))
            else:
                problems.append(("value outside the declared categories", outside))
        elif isinstance(spec, DatetimeColumn):  # as encode_column: seconds; unparseable is missing or an error
            values = instants(col, spec.format)
            text = np.isnan(values) & ~isnull
            read = f"not a date in its format '{spec.format}' or ISO 8601" if spec.format else "not an ISO 8601 date"
            (folded if other and spec.missing else problems).append(
                (f"{read}, read as missing" if other and spec.missing else read, text))
            _range(spec, values, ~isnull & ~text, other, problems, folded)
        else:
            values = pd.to_numeric(col, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
            text = np.isnan(values) & ~isnull
            if other and (spec.missing or spec.fill is not None):  # as encode_column: text is a missing value
                folded.append(("not a number, read as missing" if spec.missing else
                               f"not a number, read as the fill value {spec.fill!r}", text))
            else:
                problems.append(("not a number", text))
            ok = ~isnull & ~text
            if isinstance(spec, IntegerColumn):
                with np.errstate(invalid="ignore"):
                    fractional = ok & np.isfinite(values) & (values != np.round(values))
                (folded if other else problems).append(
                    ("fractional, rounded to the nearest integer" if other else "fractional value in an integer "
                     "column", fractional))
                values = np.round(values) if other else values  # as encode_numbers: rounded, then clamped
            _range(spec, values, ok, other, problems, folded)
        for problem, mask in problems:
            if mask.any():
                out.append(Violation(spec.name, problem, np.flatnonzero(mask) + 1))
        folds += [Fold(spec.name, what, int(mask.sum())) for what, mask in folded if mask.any()]
    return out, folds


def _range(spec, values: np.ndarray, ok: np.ndarray, other: bool, problems: list, folded: list) -> None:
    """Rows of ``ok`` outside the column's declared range: clamped under ``unknown: other``, else a problem."""
    lo, hi = (spec.lower, spec.upper) if isinstance(spec, IntegerColumn) else (spec.edges[0], spec.edges[-1])
    with np.errstate(invalid="ignore"):
        outside = ok & ~((values >= lo) & (values <= hi))
    span = f"[{instant_text(lo)}, {instant_text(hi)}]" if isinstance(spec, DatetimeColumn) else f"[{lo:g}, {hi:g}]"
    if other:
        folded.append((f"outside the declared range {span} (or not finite), clamped to it", outside))
    else:
        problems.append((f"outside the declared range {span} (or not finite)", outside))


def format_violations(violations: list[Violation], rows: int, ignored: list[str], folds: list[Fold] = ()) -> str:
    lines = [f"{rows} data rows checked against the schema"]
    if ignored:
        lines.append(f"ignored (not in the schema): {', '.join(ignored)}")
    if not violations:
        lines.append("no problems: every row fits the schema")
    lines += [v.describe() for v in violations]
    if folds:
        lines.append("folded away by a release (schema.unknown: other), per column:")
        lines += [f"  {f.describe()}" for f in folds]
    return "\n".join(lines) + "\n"
