"""Where discovery's per-column counts come from: a table in memory, or a file scanned by an engine.

Discovery (:class:`~dpsynth.data.discover.column.ColumnDiscovery`) asks each column eight questions, all answered
by :class:`~dpsynth.data.profile.ColumnProfile` on a pandas column: ``profile_counts(edges)``,
``cell_counts(edges)``, ``point_counts(values)``, ``value_counts()``, ``integer_counts()``, ``step_counts(steps)``,
``spelling_counts()`` and ``as_instants()``.  Every answer is a sum
over rows of a function of one row (issue 13: a row's cell, label and number depend on that row alone), so the
answer for a table is the merge of the answers for any partition of its rows into batches:

* a fixed-size count vector (profile, fine-cell and point-mass histograms): the sum of the batches' vectors;
* observed values with counts (categories, integers): the union of the batches' sorted values, counts added,
  in sorted order again, so the mechanisms see the same candidates in the same order and draw the same noise.

:class:`FrameTable` answers on a DataFrame (the ``numpy`` engine and the Python API); :class:`ScannedTable`
answers by scanning a file one record batch at a time (the ``stream`` engine reads the batches with pyarrow,
the ``spark`` engine runs the same per-batch function on its executors and adds up with a group-by).  The
noise and every decision stay in :mod:`dpsynth.data.discover.column`, identical for all engines.

Memory of a scan: one batch, plus the merged answer: a count vector of public size, or one column's distinct
values (Arrow strings, merged by doubling, so at most about twice the column's distinct values in bytes plus 8
bytes a value).  The integer values of :meth:`ColumnProfile.integer_counts` are asked only for a column whose
support fits in a few fine cells.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from dpsynth.data.profile import ColumnProfile

__all__ = [
    "ColumnCounts",
    "DiscoveryTable",
    "FrameTable",
    "KeyedSum",
    "Labels",
    "ScannedColumn",
    "ScannedTable",
    "as_discovery_table",
    "batch_answer",
    "keyed_part",
]


class ColumnCounts(Protocol):
    """What discovery asks of one column (see :class:`~dpsynth.data.profile.ColumnProfile`)."""

    def profile_counts(self, edges) -> np.ndarray: ...
    def cell_counts(self, edges) -> np.ndarray: ...
    def point_counts(self, values) -> np.ndarray: ...
    def value_counts(self) -> tuple: ...
    def integer_counts(self) -> tuple[np.ndarray, np.ndarray]: ...
    def number_counts(self, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]: ...
    def step_counts(self, steps) -> np.ndarray: ...
    def spelling_counts(self) -> np.ndarray: ...
    def as_instants(self) -> ColumnCounts: ...


class DiscoveryTable(Protocol):
    """A private table discovery reads: its column names (public: the header), its row count, its columns."""

    names: list[str]

    def n_rows(self) -> int: ...
    def column(self, name: str) -> ColumnCounts: ...


class FrameTable:
    """A DataFrame in memory: each column's :class:`ColumnProfile` (cached, so a column is parsed once)."""

    def __init__(self, frame: pd.DataFrame):
        self.frame = frame
        self.names = [str(c) for c in frame.columns]

    def n_rows(self) -> int:
        return len(self.frame)

    def column(self, name: str) -> ColumnCounts:
        return ColumnProfile(self.frame[name])


def as_discovery_table(table) -> DiscoveryTable:
    """A DataFrame wrapped as a :class:`FrameTable`; a :class:`DiscoveryTable` as it is."""
    return FrameTable(table) if isinstance(table, pd.DataFrame) else table


# ------------------------------------------------------------------------ batches
# A question is a name and its public arguments; its answer on one batch column is either a count vector
# ("sum") or sorted keys with counts ("keyed").  The same function runs on the driver (stream) and on Spark's
# executors (spark), so it is a plain module-level function of picklable arguments.
QUESTIONS = {"profile_counts": "sum", "cell_counts": "sum", "point_counts": "sum", "value_counts": "keyed",
             "integer_counts": "keyed", "number_counts": "keyed", "spelling_counts": "sum", "step_counts": "sum"}

def batch_answer(series: pd.Series, question: str, args: tuple, instants: bool):
    """The answer to ``question`` on one batch of a column (a pandas Series as ``io.read_table`` gives it)."""
    profile = ColumnProfile(series.reset_index(drop=True))
    if instants:
        profile = profile.as_instants()
    return getattr(profile, question)(*args)


class Labels:
    """Sorted distinct values held as one Arrow array (compact); indexing gives a numpy object array."""

    def __init__(self, values: pa.Array):
        self._values = values

    @property
    def size(self) -> int:
        return len(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __getitem__(self, idx) -> np.ndarray:
        picked = self._values.take(pa.array(np.asarray(idx, dtype=np.int64)))
        return np.array(picked.to_pylist(), dtype=object)

    def to_numpy(self) -> np.ndarray:
        return np.array(self._values.to_pylist(), dtype=object)


class KeyedSum:
    """Sorted distinct keys with their counts added, from (keys, counts) parts given one at a time.

    Merged by doubling: pending parts are folded into the total whenever they hold as many keys as it, so the
    work is O(keys · log batches) and the memory about twice the distinct keys.  ``text``: string keys, returned
    as :class:`Labels` (Arrow's byte-wise sort of UTF-8 is the code-point order of ``np.unique``); else float
    keys, returned as a numpy array."""

    def __init__(self, *, text: bool):
        self.text = text
        self._total: pa.Table | None = None
        self._pending: list[pa.Table] = []
        self._held = 0

    def add(self, keys: pa.Array, counts: np.ndarray) -> None:
        part = pa.table({"key": keys, "count": pa.array(np.asarray(counts, dtype=np.int64))})
        self._pending.append(part)
        self._held += part.num_rows
        if self._total is None or self._held >= self._total.num_rows:
            self._fold()

    def _fold(self) -> None:
        t = pa.concat_tables(([self._total] if self._total is not None else []) + self._pending)
        self._total = t.group_by("key", use_threads=False).aggregate([("count", "sum")]) \
            .rename_columns(["key", "count"])
        self._pending, self._held = [], 0

    def result(self) -> tuple:
        if self._pending:
            self._fold()
        total = self._total
        if total is None:  # no rows
            total = pa.table({"key": pa.array([], type=pa.string() if self.text else pa.float64()),
                              "count": pa.array([], type=pa.int64())})
        total = total.take(pc.sort_indices(total, sort_keys=[("key", "ascending")]))
        counts = total.column("count").to_numpy().astype(np.int64)
        keys = total.column("key").combine_chunks()
        if self.text:
            return Labels(keys), counts
        return keys.to_numpy(zero_copy_only=False).astype(float), counts


def keyed_part(answer: tuple, *, text: bool) -> tuple[pa.Array, np.ndarray]:
    """One batch's (keys, counts) as an Arrow key array."""
    keys, counts = answer
    if text:
        arr = pa.array(np.asarray(keys, dtype=object), type=pa.string())
    else:  # -0.0 and 0.0 are one value (as in np.unique)
        arr = pa.array(np.asarray(keys, dtype=float) + 0.0, type=pa.float64())
    return arr, np.asarray(counts, dtype=np.int64)


class ScannedColumn:
    """One column of a :class:`ScannedTable`: each question is one scan of the column."""

    def __init__(self, table: ScannedTable, name: str, instants: bool = False):
        self._table, self._name, self._instants = table, name, instants

    def _ask(self, question: str, *args):
        return self._table.scan(self._name, question, args, self._instants)

    def profile_counts(self, edges) -> np.ndarray:
        return self._ask("profile_counts", tuple(np.asarray(edges, dtype=float).tolist()))

    def cell_counts(self, edges) -> np.ndarray:
        return self._ask("cell_counts", tuple(np.asarray(edges, dtype=float).tolist()))

    def point_counts(self, values) -> np.ndarray:
        return self._ask("point_counts", tuple(np.asarray(values, dtype=float).tolist()))

    def value_counts(self) -> tuple:
        return self._ask("value_counts")

    def integer_counts(self) -> tuple[np.ndarray, np.ndarray]:
        return self._ask("integer_counts")

    def number_counts(self, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
        return self._ask("number_counts", float(lo), float(hi))

    def step_counts(self, steps) -> np.ndarray:
        return self._ask("step_counts", tuple(np.asarray(steps, dtype=float).tolist()))

    def spelling_counts(self) -> np.ndarray:
        return self._ask("spelling_counts")

    def as_instants(self) -> ScannedColumn:
        return ScannedColumn(self._table, self._name, instants=True)


class ScannedTable:
    """A table in a file, read one record batch at a time by an engine (see the module docstring).

    ``batches(columns, consume)`` calls ``consume`` on each record batch of ``columns``, given as a list of pandas
    Series (as ``io.read_table`` would give the columns); ``rows()`` is the number of data rows.  The profile
    histogram (the same public buckets for every column) is computed for every column in the first scan that
    asks for one, so a table costs one pass for all profiles and then one per later question.  An engine that
    aggregates elsewhere (Spark) overrides :meth:`scan`."""

    def __init__(self, names: Sequence[str], batches: Callable[[list[str], Callable[[list[pd.Series]], None]], None],
                 rows: Callable[[], int]):
        self.names = list(names)
        self._batches, self._rows = batches, rows
        self._n: int | None = None
        self._profiles: dict[tuple[str, tuple], np.ndarray] = {}
        self.scans = 0  # how many passes over the file discovery made (tests and benchmarks read it)

    def n_rows(self) -> int:
        if self._n is None:
            self._n = int(self._rows())
        return self._n

    def column(self, name: str) -> ScannedColumn:
        return ScannedColumn(self, name)

    def scan(self, name: str, question: str, args: tuple, instants: bool):
        """The answer to ``question`` about one column: batch answers merged."""
        if question == "profile_counts" and not instants:
            if (name, args) not in self._profiles:
                self._profiles.update(zip([(n, args) for n in self.names],
                                          self._sums(self.names, question, args, instants)))
            return self._profiles.pop((name, args))
        if QUESTIONS[question] == "sum":
            return self._sums([name], question, args, instants)[0]
        self.scans += 1
        text = question == "value_counts"
        acc = KeyedSum(text=text)
        self._batches([name], lambda cols: acc.add(*keyed_part(batch_answer(cols[0], question, args, instants),
                                                                text=text)))
        return acc.result()

    def _sums(self, names: list[str], question: str, args: tuple, instants: bool) -> list[np.ndarray]:
        """One pass: a count vector per column, the batches' vectors added."""
        self.scans += 1
        empty = batch_answer(pd.Series([], dtype=object), question, args, instants)
        totals = [empty.copy() for _ in names]

        def add(cols: list[pd.Series]) -> None:
            for total, col in zip(totals, cols):  # loop over columns; each is vectorised over the batch's rows
                total += batch_answer(col, question, args, instants)

        self._batches(names, add)
        return totals
