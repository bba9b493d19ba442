"""The privacy boundary of schema discovery: per-column counts whose only consumers are mechanisms.

Schema discovery (:mod:`dpsynth.data.discover`) must learn a domain from a
table that has none yet, so it cannot use :class:`dpsynth.data.counts.Counts`
(which counts codes over a public domain).  :class:`ColumnProfile` is the
equivalent for one raw column.  It answers three questions, all *private*:

* :meth:`ColumnProfile.kind_counts`: how many rows are null, integral numbers,
  fractional numbers and text (each row in exactly one of the four cells);
* :meth:`ColumnProfile.value_counts`: the observed values (as the labels
  :func:`dpsynth.data.discretize.encode` compares with categories) and how many
  rows hold each;
* :meth:`ColumnProfile.rank_counts`: for public candidate points, how many
  numeric values lie strictly below each;
* :meth:`ColumnProfile.point_counts`: for public candidate values, how many
  numeric values equal each exactly;
* :meth:`ColumnProfile.step_counts`: for public candidate steps, how many nonzero integers have each as the
  largest candidate dividing them (values on a lattice: :mod:`dpsynth.data.discover.lattice`);
* :meth:`ColumnProfile.spelling_counts`: how many cells read as instants in each public spelling (a
  histogram over :data:`~dpsynth.data.timestamps.SPELLING_CELLS` cells);
* :meth:`ColumnProfile.datetime_seconds`: the cells read as instants (private
  values, for counts over a public calendar grid; never released as they are).

Their results may go only into :mod:`dpsynth.privacy.selection` or
:mod:`dpsynth.privacy.mechanisms`; the labels of :meth:`value_counts` are
released only for the candidates a partition-selection mechanism returns.
Every method is vectorised over rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpsynth.data.discretize import cell_labels, match_numbers
from dpsynth.data.timestamps import SPELLING_CELLS, instants, spelling_cells

__all__ = ["KINDS", "ColumnProfile"]

KINDS = ("null", "integral", "fractional", "text")
"""The cells of :meth:`ColumnProfile.kind_counts`, in order."""


class ColumnProfile:
    """Private per-column statistics of one raw column (see the module docstring)."""

    def __init__(self, column: pd.Series):
        self._col = column
        self._null = column.isna().to_numpy()
        if pd.api.types.is_bool_dtype(column):
            numbers = np.full(len(column), np.nan)
        else:
            numbers = pd.to_numeric(column, errors="coerce").to_numpy(dtype=float, na_value=np.nan, copy=True)
            if column.dtype == object:  # a boolean cell is never a number, whatever the other cells hold
                numbers[column.map(type).isin([bool, np.bool_]).to_numpy()] = np.nan
        self._finite = np.isfinite(numbers) & ~self._null
        self._numbers = numbers

    def kind_counts(self) -> np.ndarray:
        """Rows per kind in :data:`KINDS` order (int64, sums to the number of rows)."""
        integral = self._finite & (self._numbers == np.round(self._numbers))
        fractional = self._finite & ~integral
        text = ~self._null & ~self._finite
        return np.array([self._null.sum(), integral.sum(), fractional.sum(), text.sum()], dtype=np.int64)

    def value_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """(labels, counts) of the non-null values; labels as strings, sorted; counts ≥ 1."""
        labels = cell_labels(self._col)  # each cell by itself (issue 13)
        labels = labels[~self._null].astype(str)
        if labels.size == 0:
            return np.array([], dtype=object), np.array([], dtype=np.int64)
        uniq, counts = np.unique(labels, return_counts=True)
        return uniq.astype(object), counts.astype(np.int64)

    def rank_counts(self, candidates) -> tuple[np.ndarray, int]:
        """(#{finite numeric values < c} for each candidate c, number of finite numeric values)."""
        values = np.sort(self._numbers[self._finite])
        below = np.searchsorted(values, np.asarray(candidates, dtype=float), side="left")
        return below.astype(np.int64), int(values.size)

    def profile_counts(self, edges) -> np.ndarray:
        """One cell per row: [null, text, dates, integral numbers per bucket…, fractional numbers per bucket…].

        A cell that reads as a number is a number; other text that reads as a date or timestamp (ISO 8601, as a
        ``datetime`` column reads it) is a date.  Buckets are (−∞, e₀), [e₀, e₁), …, [e_last, ∞) for the public
        ``edges``; the vector has 3 + 2·(len(edges) + 1) cells and sums to the number of rows (each row in
        exactly one cell)."""
        edges = np.asarray(edges, dtype=float)
        nb = edges.size + 1
        finite = self._finite
        values = self._numbers[finite]
        bucket = np.searchsorted(edges, values, side="right")
        fractional = values != np.round(values)
        numbers = np.bincount(bucket + nb * fractional, minlength=2 * nb)
        other = ~self._null & ~finite
        dates = other & ~np.isnan(self._instants())
        head = [int(self._null.sum()), int((other & ~dates).sum()), int(dates.sum())]
        return np.concatenate([head, numbers]).astype(np.int64)

    def _instants(self) -> np.ndarray:
        if "_seconds" not in self.__dict__:  # numbers are numbers, not years: only the other cells are read
            text = self._col.where(~self._finite & ~self._null, None).astype(object)
            self.__dict__["_seconds"] = instants(text)
        return self.__dict__["_seconds"]

    def spelling_counts(self) -> np.ndarray:
        """Rows per spelling cell of :func:`~dpsynth.data.timestamps.spelling_cells` (which public spelling,
        zero-padded or not, midnight / whole hour / finer): int64, :data:`SPELLING_CELLS` cells; a row is in at
        most one cell (numbers, nulls and text that is not an instant in none)."""
        if pd.api.types.is_datetime64_any_dtype(self._col):  # typed timestamps (Parquet) have no spelling
            return np.zeros(SPELLING_CELLS, dtype=np.int64)
        text = self._col.where(~self._finite & ~self._null, None).astype(object)
        cell = spelling_cells(text)
        return np.bincount(cell[cell >= 0], minlength=SPELLING_CELLS).astype(np.int64)

    def as_instants(self) -> ColumnProfile:
        """The profile of this column's instants (seconds since the epoch; numbers and unparseable text are
        missing): what a ``datetime`` column counts."""
        seconds = np.where(self._finite, np.nan, self._instants())
        return ColumnProfile(pd.Series(seconds))

    def cell_counts(self, edges) -> np.ndarray:
        """Rows of finite numbers per cell (−∞, e₁), [e₁, e₂), …, [e_{G−1}, ∞) of the public ``edges`` e₀…e_G:
        G cells, the outer ones open-ended (values beyond the edges fall in the end cells)."""
        edges = np.asarray(edges, dtype=float)
        cell = np.clip(np.searchsorted(edges, self._numbers[self._finite], side="right") - 1, 0, edges.size - 2)
        return np.bincount(cell, minlength=edges.size - 1).astype(np.int64)

    def point_counts(self, values) -> np.ndarray:
        """Rows of finite numbers exactly equal to each of the public, distinct ``values`` (a row equals at most
        one of them: a histogram, int64, one cell per value)."""
        values = np.asarray(values, dtype=float)
        at = match_numbers(self._numbers[self._finite] + 0.0, values)  # -0.0 is 0.0
        return np.bincount(at[at >= 0], minlength=values.size).astype(np.int64)

    def step_counts(self, steps) -> np.ndarray:
        """Rows of nonzero integral numbers per public candidate step (ascending, 1 first, closed under least
        common multiples): each such row in the cell of the largest step dividing it, so a row is in at most one
        cell (a histogram, int64).  Zeros (multiples of every step) and other rows are in none."""
        steps = np.asarray(steps, dtype=float)
        v = np.abs(self._numbers[self._finite])
        v = v[(v == np.round(v)) & (v > 0) & (v < 2.0**53)]
        divides = np.fmod(v[:, None], steps[None, :]) == 0  # rows × candidates (a few dozen)
        largest = steps.size - 1 - np.argmax(divides[:, ::-1], axis=1)
        return np.bincount(largest, minlength=steps.size).astype(np.int64)

    def integer_counts(self) -> tuple[np.ndarray, np.ndarray]:
        """(values, counts) of the finite integral numbers: sorted distinct values (float) and rows per value."""
        values = self._numbers[self._finite]
        values = values[values == np.round(values)]
        if values.size == 0:
            return np.zeros(0), np.zeros(0, dtype=np.int64)
        uniq, counts = np.unique(values + 0.0, return_counts=True)  # -0.0 is 0.0
        return uniq, counts.astype(np.int64)

    def number_counts(self, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
        """(values, counts) of the finite numbers in the public range [lo, hi]: sorted distinct values (float)
        and rows per value (partition selection of heaped values: a row is in at most one count)."""
        values = self._numbers[self._finite]
        values = values[(values >= lo) & (values <= hi)]
        if values.size == 0:
            return np.zeros(0), np.zeros(0, dtype=np.int64)
        uniq, counts = np.unique(values + 0.0, return_counts=True)  # -0.0 is 0.0
        return uniq, counts.astype(np.int64)

    def datetime_seconds(self, fmt: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(seconds since the epoch, UTC, as float with NaN where a cell is null or does not parse; parse mask).

        Each cell is read by itself, as :func:`dpsynth.data.discretize.encode` reads a datetime column:
        with ``fmt`` (a strftime format) first when given, then as ISO 8601.  Private: only counts over
        public buckets of these values may reach a mechanism."""
        seconds = instants(self._col, fmt)
        return seconds, ~np.isnan(seconds)
