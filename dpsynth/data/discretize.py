"""Discretize a table to integer codes over the public domain, and decode codes back.

Encoding is vectorized per column (never per row).  Error messages name the
column and the rule broken, never a value from the data.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpsynth.data.fine import FineView, draw_in_bins
from dpsynth.data.schema import (
    CategoricalColumn,
    ColumnSpec,
    DatetimeColumn,
    Domain,
    IntegerColumn,
    NumericColumn,
    bin_index,
    null_code,
)
from dpsynth.data.timestamps import format_instants, instant_text, instants, resolution
from dpsynth.errors import DataError

__all__ = [
    "Decoded",
    "category_codes",
    "category_numbers",
    "cell_labels",
    "check_columns",
    "column_numbers",
    "decode",
    "decode_columns",
    "encode",
    "encode_column",
    "float_labels",
    "match_numbers",
    "number_label",
]


def check_columns(columns, domain: Domain) -> list[str]:
    """Check the table's columns against the schema; returns the names that will be dropped."""
    present = [str(c) for c in columns]
    if len(set(present)) != len(present):
        raise DataError("the input has duplicate column names")
    missing = [n for n in domain.names if n not in present]
    if missing:
        from dpsynth.data.source import header_hint

        raise DataError(
            f"column '{missing[0]}' is declared in the schema but missing from the input"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else "")
            + header_hint(present, domain.names)
        )
    return [c for c in present if c not in domain.names]


def encode(table: pd.DataFrame, domain: Domain, *, unknown: str = "error") -> np.ndarray:
    """Map every schema column of ``table`` to integer codes; returns an (n × d) int array."""
    check_columns(table.columns, domain)
    if len(table) == 0:
        raise DataError("the input has no data rows")
    codes = np.empty((len(table), len(domain)), dtype=np.int64)
    for j, spec in enumerate(domain.columns):  # loop over columns; each is vectorized
        codes[:, j] = encode_column(table[spec.name], spec, unknown)
    return codes


def _null_codes(col: pd.Series, spec: ColumnSpec) -> np.ndarray:
    isnull = col.isna().to_numpy()
    if isnull.any() and null_code(spec) is None:
        raise DataError(
            f"column '{spec.name}' has null values; declare 'missing: category' in its schema "
            "to keep them"
        )
    return isnull


def encode_column(col: pd.Series, spec: ColumnSpec, unknown: str) -> np.ndarray:
    isnull = _null_codes(col, spec)
    if isinstance(spec, CategoricalColumn):
        out = category_codes(col, spec)  # -1: unknown or null
        bad = (out < 0) & ~isnull
        if bad.any():
            if not spec.other:
                labels = cell_labels(col)
                index = pd.Index([str(c) for c in spec.categories], dtype=object)
                padded = pd.Series(labels[bad], dtype=object).str.strip()
                hint = ("; they match once spaces around fields are removed: set 'schema.strip: true'"
                        if index.get_indexer(padded).min() >= 0 else "")
                raise DataError(
                    f"column '{spec.name}' has values outside its declared categories; "
                    "add them to the schema or set 'schema.unknown: other'" + hint
                )
            out[bad] = len(spec.categories)
    else:
        values, isnull = column_numbers(col, spec, isnull, unknown)
        out = encode_numbers(values, isnull, spec, unknown)
    code = null_code(spec)  # the null category, or the fill value's code under missing: fill
    if code is not None:
        out[isnull] = code
    return out


def column_numbers(col: pd.Series, spec: ColumnSpec, isnull: np.ndarray, unknown: str) -> tuple[np.ndarray, np.ndarray]:
    """(float values, isnull) of a numeric, integer or datetime column (seconds for datetimes), as encoded."""
    if isinstance(spec, DatetimeColumn):
        return _datetime_values(col, spec, isnull, unknown)
    if unknown == "other" and null_code(spec) is not None:
        # a value the schema cannot place as a number (stray text, a boolean) is a missing value: a release
        # on a discovered schema never refuses because of one row's text (issue 27); under missing: fill it
        # is read as the fill value
        values = _lenient_numbers(col)
        return values, isnull | np.isnan(values)
    return _as_numbers(col, spec.name), isnull


def _datetime_values(col: pd.Series, spec: DatetimeColumn, isnull: np.ndarray, unknown: str):
    """(seconds, isnull) of a datetime column's cells; under ``unknown: other`` with ``missing: category`` a cell
    that does not parse joins the nulls, otherwise it is a DataError."""
    values = instants(col, spec.format)
    bad = np.isnan(values) & ~isnull
    if bad.any() and not (unknown == "other" and spec.missing):
        read = f"match neither its format '{spec.format}' nor ISO 8601" if spec.format else \
                "are not ISO 8601 dates or timestamps (give its 'format:')"
        raise DataError(f"column '{spec.name}' is declared datetime but has values that {read}; "
                        "set 'schema.unknown: other' and 'missing: category' to count them as missing")
    return values, isnull | bad


def _range_text(spec: ColumnSpec) -> str:
    if isinstance(spec, DatetimeColumn):
        return f"[{instant_text(spec.edges[0])}, {instant_text(spec.edges[-1])}]"
    if isinstance(spec, IntegerColumn):
        return f"[{spec.lower:g}, {spec.upper:g}]"
    assert isinstance(spec, NumericColumn), "categorical columns have no range"
    return f"[{spec.edges[0]:g}, {spec.edges[-1]:g}]"


def encode_numbers(values: np.ndarray, isnull: np.ndarray, spec: ColumnSpec, unknown: str) -> np.ndarray:
    """Codes of a numeric or integer column from its float values (NaN where ``isnull``).

    Null rows get code 0 here; the caller puts them in the missing category (or the fill value's code).
    Shared with the streaming engine, which parses numbers with Arrow.
    """
    if isinstance(spec, IntegerColumn):
        finite = np.isfinite(values)
        if unknown != "other" and np.any(finite & (values != np.round(values))):
            raise DataError(f"column '{spec.name}' is declared integer but has fractional values")
        values = np.round(values)  # under unknown: other a fractional value goes to the nearest integer
        lo, hi = float(spec.lower), float(spec.upper)
        out = np.zeros(len(values), dtype=np.int64)
        ok = ~isnull
        clipped = np.clip(np.nan_to_num(values[ok], nan=lo, posinf=hi, neginf=lo), lo, hi)
        out[ok] = (clipped - lo).astype(np.int64)
    else:
        assert isinstance(spec, NumericColumn), spec.name  # a numeric or integer column, by contract
        lo, hi = spec.edges[0], spec.edges[-1]
        edges = np.asarray(spec.edges)
        out = np.zeros(len(values), dtype=np.int64)
        ok = ~isnull
        v = np.clip(np.nan_to_num(values[ok], nan=lo, posinf=hi, neginf=lo), lo, hi)
        out[ok] = bin_index(v, edges)  # a value equal to a point (an edge written twice) is in its point bin
    with np.errstate(invalid="ignore"):
        outside = ~isnull & ~((values >= lo) & (values <= hi))
    if outside.any() and unknown != "other":
        raise DataError(
            f"column '{spec.name}' has values outside its declared range {_range_text(spec)} "
            "(or not finite); widen the schema or set 'schema.unknown: other' to clamp them"
        )
    return out


_EXACT = 2.0**53
"""Below this magnitude every integer is a float; integral floats there are labelled as integers."""


def number_label(x: float) -> str:
    """The label of one number: decimal integer text when integral and below 2⁵³ (``1.0`` → ``"1"``),
    else ``repr`` (``2.5``, ``1e+20``, ``inf``).

    It depends on the value alone, never on the rest of its column, so a float
    column labels each row by itself (issue 13: deciding "integral or not" for
    the whole column let one row relabel every other).  It is injective on
    floats (up to ±0), so matching labels is matching values: see
    :func:`category_numbers`.
    """
    x = float(x)
    return str(int(x)) if math.isfinite(x) and x == math.floor(x) and abs(x) < _EXACT else repr(x)


def float_labels(values: np.ndarray) -> np.ndarray:
    """:func:`number_label` of every float (None for NaN), vectorized."""
    values = np.asarray(values, dtype=float)
    out = np.full(values.shape, None, dtype=object)
    with np.errstate(invalid="ignore"):
        small = np.isfinite(values) & (values == np.floor(values)) & (np.abs(values) < _EXACT)
    other = ~np.isnan(values) & ~small
    out[small] = values[small].astype(np.int64).astype(str)
    out[other] = pd.Series(values[other]).astype(str).to_numpy(dtype=object)  # repr of each double
    return out


def cell_labels(col: pd.Series) -> np.ndarray:
    """The text label of every cell from that cell alone (None for null): floats by :func:`number_label`
    (also inside object columns), everything else by ``str`` (booleans ``True``/``False``)."""
    if pd.api.types.is_float_dtype(col):
        return float_labels(col.to_numpy(dtype=float, na_value=np.nan))
    out = col.astype("string").to_numpy(dtype=object, na_value=None)
    floats = _float_cells(col)
    if floats is not None:
        out[floats] = float_labels(col[floats].to_numpy(dtype=float, na_value=np.nan))
    return out


def _float_cells(col: pd.Series) -> np.ndarray | None:
    """Mask of the float cells of an object column (None when there are none)."""
    if col.dtype != object:
        return None
    kinds = col.map(type)
    floats = kinds.isin([t for t in pd.unique(kinds) if issubclass(t, float | np.floating)]).to_numpy()
    return floats if floats.any() else None


def category_numbers(spec: CategoricalColumn) -> np.ndarray:
    """For each declared category, the float value whose :func:`number_label` is its label (NaN: none).

    Public (from the schema only).  A float cell with value v gets category i
    exactly when ``v == category_numbers(spec)[i]``; every engine uses this.
    """
    out = np.full(len(spec.categories), np.nan)
    for i, c in enumerate(spec.categories):  # loop over the (public) categories
        label = str(c)
        try:
            x = float(label)
        except (ValueError, OverflowError):
            continue
        if not math.isnan(x) and number_label(x) == label:
            out[i] = x
    return out


def category_codes(col: pd.Series, spec: CategoricalColumn) -> np.ndarray:
    """Index of each row's category (-1: null or undeclared), from that row's value alone.

    Float columns (a Parquet integer column with nulls arrives as float) are
    matched by value against :func:`category_numbers`; NaN is null.  Every
    other column is matched by text: ``str`` of the value (booleans ``True``/
    ``False``, integers in decimal, strings as they are).
    """
    if pd.api.types.is_float_dtype(col):
        return match_numbers(col.to_numpy(dtype=float, na_value=np.nan), category_numbers(spec))
    labels = col.astype("string").to_numpy(dtype=object, na_value=None)
    index = pd.Index([str(c) for c in spec.categories], dtype=object)
    out = np.asarray(index.get_indexer(labels), dtype=np.int64)
    floats = _float_cells(col)  # a float cell among others is labelled as in a float column
    if floats is not None:
        out[floats] = match_numbers(col[floats].to_numpy(dtype=float, na_value=np.nan), category_numbers(spec))
    return out


def match_numbers(values: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Position of each value in ``keys`` (NaN keys never match, nor NaN values); -1 where absent."""
    order = np.argsort(keys, kind="stable")
    order = order[~np.isnan(keys[order])]
    if len(order) == 0:
        return np.full(len(values), -1, dtype=np.int64)
    sorted_keys = keys[order]
    pos = np.minimum(np.searchsorted(sorted_keys, values, side="left"), len(order) - 1)
    return np.where(sorted_keys[pos] == values, order[pos], -1).astype(np.int64)


def _as_numbers(col: pd.Series, name: str) -> np.ndarray:
    if pd.api.types.is_bool_dtype(col) or not (pd.api.types.is_numeric_dtype(col) or _numbers_or_text(col)):
        raise DataError(f"column '{name}' is declared numeric but its values are not numbers")
    values = pd.to_numeric(col, errors="coerce")
    if (values.isna() & col.notna()).any():
        raise DataError(f"column '{name}' is declared numeric but has non-numeric values")
    return values.to_numpy(dtype=float, na_value=np.nan)


def _lenient_numbers(col: pd.Series) -> np.ndarray:
    """Float values of a column, NaN for every cell that is not a finite-or-infinite number (text, booleans)."""
    if pd.api.types.is_bool_dtype(col):
        return np.full(len(col), np.nan)
    num = pd.to_numeric(col, errors="coerce")
    if num.dtype.kind in "cO":  # complex numbers (Python API only): a real one is a number, others are not
        with np.errstate(invalid="ignore"):
            z = np.asarray(num.to_numpy(dtype=complex, na_value=np.nan), dtype=complex)
        return np.where(z.imag == 0, z.real, np.nan)
    return num.to_numpy(dtype=float, na_value=np.nan)


def _numbers_or_text(col: pd.Series) -> bool:
    """A text or object column whose cells are each a number (not a boolean) or text (parsed per cell)."""
    if not (col.dtype == object or isinstance(col.dtype, pd.StringDtype)):
        return False
    kinds = col.dropna().map(type)
    allowed = [t for t in pd.unique(kinds)
               if issubclass(t, str | int | float | np.integer | np.floating) and not issubclass(t, bool | np.bool_)]
    return bool(kinds.isin(allowed).all())


# --------------------------------------------------------------------------- decoding
class Decoded:
    """Decoded values of a chunk of rows, column by column, before they become a table.

    Per column: ``(spec, values, isnull)``.  A categorical column keeps its
    codes (an index into the label table; nulls are masked), so each output
    format can map them cheaply: :meth:`to_pandas` through an object array of
    labels, :meth:`to_arrow` as a dictionary array (no Python strings).
    """

    def __init__(self, columns: list[tuple[ColumnSpec, np.ndarray, np.ndarray]]):
        self.columns = columns

    def __len__(self) -> int:
        return len(self.columns[0][1]) if self.columns else 0

    def to_pandas(self) -> pd.DataFrame:
        data = {}
        for spec, vals, isnull in self.columns:
            if isinstance(spec, CategoricalColumn):
                table = np.array(list(_category_values(spec)) + [None], dtype=object)
                out = table[np.where(isnull, len(table) - 1, vals)]
                data[spec.name] = pd.Series(out, dtype=_int_dtype(spec) if _all_int(spec) else object)
            elif isinstance(spec, DatetimeColumn):
                data[spec.name] = pd.Series(format_instants(vals, isnull, spec.output_format), dtype=object)
            elif np.issubdtype(vals.dtype, np.integer):
                if spec.missing:
                    data[spec.name] = pd.Series(pd.array(np.where(isnull, 0, vals), dtype="Int64")).mask(isnull)
                else:
                    data[spec.name] = pd.Series(vals)
            else:
                data[spec.name] = pd.Series(np.where(isnull, np.nan, vals))
        return pd.DataFrame(data)

    def to_arrow(self):
        """A ``pyarrow.Table`` with the types of :func:`arrow_schema` (categories as dictionaries)."""
        import pyarrow as pa

        arrays = []
        for spec, vals, isnull in self.columns:
            mask = isnull if spec.missing else None
            if isinstance(spec, CategoricalColumn):
                values = list(_category_values(spec))
                if _all_int(spec):
                    arrays.append(pa.array(np.asarray(values, dtype=np.int64)[vals], mask=mask))
                else:
                    labels = pa.array([str(v) for v in values], type=pa.string())
                    indices = pa.array(vals.astype(np.int32, copy=False), mask=mask)
                    arrays.append(pa.DictionaryArray.from_arrays(indices, labels))
            elif isinstance(spec, DatetimeColumn):
                arrays.append(pa.array(format_instants(vals, isnull, spec.output_format), type=pa.string()))
            else:
                arrays.append(pa.array(vals, mask=mask))
        return pa.Table.from_arrays(arrays, names=[spec.name for spec, _, _ in self.columns])


def _category_values(spec: CategoricalColumn) -> tuple:
    return tuple(spec.categories) + (("__other__",) if spec.other else ())


def _all_int(spec: CategoricalColumn) -> bool:
    return all(isinstance(x, int) and not isinstance(x, bool) for x in spec.categories) and not spec.other


def _int_dtype(spec: ColumnSpec) -> str:
    return "Int64" if spec.missing else "int64"


def decode(
    codes: np.ndarray,
    domain: Domain,
    *,
    numeric: str = "uniform",
    rng: np.random.Generator,
    bounds=None,
    fine: FineView | None = None,
) -> pd.DataFrame:
    """Map (rows × d) codes back to a DataFrame with the schema's column types.

    Categories decode to their configured labels (integers stay integers);
    integer columns decode exactly; a numeric bin decodes to a uniform draw
    inside it (``numeric='uniform'``) or its midpoint, rounded to an integer
    in the bin when the column is declared ``integer: true``.  Null codes
    decode to missing values.  ``bounds`` (see :func:`decode_columns`)
    restricts the uniform draws of numeric columns; ``fine`` (a released :class:`~dpsynth.data.fine.FineView`)
    replaces them, for its columns, by draws from its P(value | bin).
    """
    return decode_columns(codes, domain, numeric=numeric, rng=rng, bounds=bounds, fine=fine).to_pandas()


def decode_columns(
    codes: np.ndarray,
    domain: Domain,
    *,
    numeric: str = "uniform",
    rng: np.random.Generator,
    bounds=None,
    fine: FineView | None = None,
) -> Decoded:
    """Decode column by column (the randomness is drawn in column order, as by :func:`decode`).

    ``bounds``: per column ``None`` or ``(low, high)``, a closed interval the
    decoded value of a numeric (binned) column must lie in; uniform draws are
    taken inside bin ∩ interval (for ``integer: true`` columns the bounds are
    integers).  Used by conditional sampling, whose weights make sure only
    bins meeting the interval are drawn.  ``fine``: see :func:`decode` (used with ``numeric='uniform'``).
    """
    codes = np.asarray(codes)
    if codes.ndim != 2 or codes.shape[1] != len(domain):
        raise ValueError("codes must be an (rows × d) array matching the domain")
    out = []
    for j, spec in enumerate(domain.columns):
        c = codes[:, j].astype(np.int64)
        limit = None if bounds is None else bounds[j]
        within = fine.columns.get(spec.name) if fine is not None and numeric == "uniform" else None
        out.append((spec, *_decode_column(c, spec, numeric, rng, limit, within)))
    return Decoded(out)


def _whole_draws(lo, hi, closed: np.ndarray, numeric: str, rng: np.random.Generator, limit) -> np.ndarray:
    """An integer in each [lo, hi) (also hi where ``closed``), uniform or the one nearest the midpoint;
    the rounded midpoint where the interval holds none.  ``limit``: integer bounds to stay within."""
    ilo = np.ceil(lo)
    ihi = np.where(closed, np.floor(hi), np.ceil(hi) - 1)
    empty = ihi < ilo
    if limit is not None:
        ilo, ihi = np.maximum(ilo, limit[0]), np.minimum(ihi, limit[1])
    if numeric == "uniform":
        draw = ilo + np.floor(rng.random(len(lo)) * (ihi - ilo + 1))
    else:
        draw = np.round((lo + hi) / 2.0)
    return np.where(empty, np.round((lo + hi) / 2.0), np.minimum(draw, ihi))


def _units(x, r: float):
    """Values in units of a step r (1: unchanged); a ratio within 1e-9 of a whole number is that number."""
    if r == 1.0:
        return x
    q = np.asarray(x, dtype=float) / r
    return np.where(np.abs(q - np.round(q)) < 1e-9, np.round(q), q)


def _decode_column(c: np.ndarray, spec: ColumnSpec, numeric: str, rng: np.random.Generator, limit, within=None):
    """(values, isnull) of one column; categorical values are indices into its label table."""
    isnull = (c == spec.size - 1) if spec.missing else np.zeros(len(c), dtype=bool)
    if isinstance(spec, CategoricalColumn):
        return np.where(isnull, 0, np.minimum(c, len(_category_values(spec)) - 1)), isnull
    if isinstance(spec, IntegerColumn):
        return np.where(isnull, 0, spec.lower + c).astype(np.int64), isnull
    # numeric bins
    edges = np.asarray(spec.edges)
    b = np.minimum(c, spec.n_bins - 1)
    if within is not None:  # the fine view's P(value | bin), in whole units for integral and datetime columns
        vals = draw_in_bins(np.where(isnull, 0, b), spec, within, rng, limit)
        if spec.integral and not isinstance(spec, DatetimeColumn):
            return np.where(isnull, 0, vals).astype(np.int64), isnull
        if spec.step is not None and not isinstance(spec, DatetimeColumn):
            vals = np.round(vals, 10)  # multiples of a decimal step, spelled exactly (184 × 0.05 is 9.200000000000001)
        return np.where(isnull, np.nan, vals), isnull
    lo, hi = edges[b], edges[b + 1]
    if isinstance(spec, DatetimeColumn):  # whole seconds or whole days (as the format writes), inside the bin
        r = resolution(spec.output_format)
        scaled = None if limit is None else (math.ceil(limit[0] / r), math.floor(limit[1] / r))
        vals = _whole_draws(lo / r, hi / r, np.zeros(len(c), dtype=bool), numeric, rng, scaled) * r
        return np.where(isnull, np.nan, vals), isnull
    if spec.integral or spec.step is not None:  # whole multiples of the step (1 for integers) inside the bin
        r = spec.step or 1.0
        after = (b > 0) & (edges[np.maximum(b - 1, 0)] == lo) & (lo < hi)  # after a point bin: open on the left
        scaled = None if limit is None else (np.ceil(limit[0] / r - 1e-9), np.floor(limit[1] / r + 1e-9))
        ulo = _units(lo, r)
        vals = _whole_draws(np.where(after, np.nextafter(ulo, np.inf), ulo), _units(hi, r),
                            b == spec.n_bins - 1, numeric, rng, scaled) * r
        if spec.integral:
            return np.where(isnull, 0, vals).astype(np.int64), isnull
        return np.where(isnull, np.nan, np.round(vals, 10)), isnull  # (3 × 0.1 is 0.30000000000000004)
    if numeric == "uniform":
        if limit is not None:
            lo, hi = np.maximum(lo, limit[0]), np.minimum(hi, limit[1])
        vals = lo + rng.random(len(c)) * (hi - lo)
    else:
        vals = (lo + hi) / 2.0
    return np.where(isnull, np.nan, vals), isnull
