"""Public schema: column specifications and the finite :class:`Domain` they induce.

Everything here comes from the configuration, never from the data: the bins of
a numeric column, the categories of a categorical one, whether null is its own
value.  So the domain (and everything derived from it: attribute sizes, the
binary-attribute view, the decoding tables) is public and may appear in a report.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from dpsynth.data.timestamps import default_format, instant_text
from dpsynth.errors import ConfigError

__all__ = [
    "OTHER_LABEL",
    "CategoricalColumn",
    "ColumnSpec",
    "DatetimeColumn",
    "Domain",
    "IntegerColumn",
    "NumericColumn",
    "bin_index",
    "lattice_gaps",
    "null_code",
    "point_values",
    "with_fill",
]

OTHER_LABEL = "__other__"
"""Label of the extra category that collects undeclared values under ``unknown: other``."""


@dataclass(frozen=True)
class NumericColumn:
    """A real-valued column cut into bins by public ``edges`` (non-decreasing, ≥ 2 edges).

    Bin i is [edges[i], edges[i+1]); the last bin also contains its upper edge.  An edge written twice,
    ``[..., a, v, v, b, ...]``, makes a *point bin* holding exactly the value v (it decodes to v): the bins beside
    it are [a, v) and (v, b) (issue 27: point masses such as 57% of a percentage at exactly 100).
    """

    name: str
    edges: tuple[float, ...]
    missing: bool = False  # null is its own value (the last code)
    integral: bool = False  # decode to integers (the input column held integers)
    step: float | None = None  # values lie on multiples of step (a lattice): decoded values are multiples too
    fill: float | None = None  # ``missing: fill``: a null is read as this value (see :func:`null_code`)

    kind = "numeric"

    @property
    def n_bins(self) -> int:
        return len(self.edges) - 1

    @property
    def size(self) -> int:
        return self.n_bins + int(self.missing)

    @property
    def points(self) -> tuple[float, ...]:
        """The values of the point bins (edges written twice)."""
        return tuple(float(x) for x in point_values(self.edges))

    def labels(self) -> list[str]:
        e = self.edges
        out = [f"[{_fmt(a)}, {_fmt(b)})" for a, b in itertools.pairwise(e)]
        out[-1] = out[-1][:-1] + "]"
        for i in range(1, len(out)):  # loop over (public) bins: the bin after a point bin is open on the left
            if e[i - 1] == e[i] and e[i] != e[i + 1]:
                out[i] = "(" + out[i][1:]
        for j in np.flatnonzero(np.diff(np.asarray(e, dtype=float)) == 0):
            out[int(j)] = f"[{_fmt(e[int(j)])}, {_fmt(e[int(j)])}]"
        if self.missing:
            out.append("null")
        return out

    @property
    def ordered(self) -> bool:
        return True


@dataclass(frozen=True)
class IntegerColumn:
    """An integer column with one value per integer in [lower, upper]."""

    name: str
    lower: int
    upper: int
    missing: bool = False
    fill: int | None = None  # ``missing: fill``: a null is read as this value (see :func:`null_code`)

    kind = "integer"

    @property
    def size(self) -> int:
        return self.upper - self.lower + 1 + int(self.missing)

    def labels(self) -> list[str]:
        out = [str(v) for v in range(self.lower, self.upper + 1)]
        if self.missing:
            out.append("null")
        return out

    @property
    def ordered(self) -> bool:
        return True


@dataclass(frozen=True)
class CategoricalColumn:
    """A column with a declared list of categories (labels compared as strings)."""

    name: str
    categories: tuple
    missing: bool = False
    other: bool = False  # an extra value collects undeclared categories
    fill: str | int | float | None = None  # ``missing: fill``: a null is read as this category (:func:`null_code`)

    kind = "categorical"

    @property
    def size(self) -> int:
        return len(self.categories) + int(self.other) + int(self.missing)

    def labels(self) -> list[str]:
        out = [str(c) for c in self.categories]
        if self.other:
            out.append(OTHER_LABEL)
        if self.missing:
            out.append("null")
        return out

    @property
    def ordered(self) -> bool:
        return False


@dataclass(frozen=True)
class DatetimeColumn(NumericColumn):
    """A column of instants, binned like a numeric column whose edges are seconds since the epoch (UTC).

    ``declared``: the schema keys as written (lower/upper with bins or unit, or edges), so a
    model file writes the declaration back rather than re-spelling float edges.  ``format``:
    the strftime format of decoded values (and the first one tried when parsing).
    """

    format: str | None = None
    declared: tuple = ()  # ((key, value), ...), values hashable (lists as tuples)

    kind = "datetime"

    @property
    def output_format(self) -> str:
        return self.format or default_format(self.edges)

    def labels(self) -> list[str]:
        text = [instant_text(e) for e in self.edges]
        out = [f"[{a}, {b})" for a, b in itertools.pairwise(text)]
        out[-1] = out[-1][:-1] + "]"
        if self.missing:
            out.append("null")
        return out

    def to_declaration(self) -> dict:
        """The column's schema mapping as it was declared (what :func:`dpsynth.config.parse_config` accepts)."""
        out = {"type": "datetime"}
        out.update({k: list(v) if isinstance(v, tuple) else v for k, v in self.declared})
        if self.missing:
            out["missing"] = "category"
        return out


ColumnSpec = NumericColumn | IntegerColumn | CategoricalColumn | DatetimeColumn


def null_code(spec: ColumnSpec) -> int | None:
    """The code a null cell (and whatever the encoders read as null) gets: the null category's (the last code)
    under ``missing: category``, the fill value's under ``missing: fill``, None when a null is a refusal.

    From the schema alone, so a row's code depends on that row and the public schema only, and every engine
    (numpy, stream, spark) reads it here.  ``missing: fill`` exists for columns that hold no null: a null
    category there costs a cell the data never fills (a binary column becomes 3 values) and the model puts
    noisy mass on it; dropping it where the column had no null measured 2-way L1 x0.84 on german_health, x0.90
    on infant_pneumonia, x0.92 on wilms_tumor and health_insurance (issue 27, seeds 2 / 3)."""
    if spec.missing:
        return spec.size - 1
    if spec.fill is None:
        return None
    if isinstance(spec, CategoricalColumn):
        return [str(c) for c in spec.categories].index(str(spec.fill))
    if isinstance(spec, IntegerColumn):
        return int(spec.fill) - spec.lower
    return int(bin_index(np.array([float(spec.fill)]), spec.edges)[0])


def with_fill(column: ColumnSpec, spec, path: str) -> ColumnSpec:
    """``column`` with the ``fill`` of its schema mapping ``spec`` (``missing: fill``), checked: a declared
    category's label, an integer in [lower, upper], a number inside a numeric column's edges; datetime columns
    take none.  Raises ConfigError (a schema mistake) otherwise."""
    mode = spec.get("missing", "error")
    if mode != "fill":
        if "fill" in spec:
            raise ConfigError(f"{path}.fill: only with 'missing: fill' (a null is read as the fill value)")
        return column
    if "fill" not in spec or spec["fill"] is None or isinstance(spec["fill"], (bool, list, dict)):
        raise ConfigError(f"{path}.fill: 'missing: fill' needs a fill value (a null is read as it)")
    value = spec["fill"]
    if isinstance(column, DatetimeColumn):
        raise ConfigError(f"{path}.missing: 'fill' is not available for datetime columns; use 'category'")
    if isinstance(column, CategoricalColumn):
        labels = [str(c) for c in column.categories]
        if str(value) not in labels:
            raise ConfigError(f"{path}.fill: {value!r} is not one of the declared categories")
        return replace(column, fill=column.categories[labels.index(str(value))])
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ConfigError(f"{path}.fill: expected a number, got {value!r}")
    if isinstance(column, IntegerColumn):
        if float(value) != int(value) or not column.lower <= value <= column.upper:
            raise ConfigError(f"{path}.fill: expected an integer in [{column.lower}, {column.upper}], got {value!r}")
        return replace(column, fill=int(value))
    if not column.edges[0] <= value <= column.edges[-1]:
        raise ConfigError(f"{path}.fill: {value!r} is outside the column's range "
                          f"[{_fmt(column.edges[0])}, {_fmt(column.edges[-1])}]")
    return replace(column, fill=float(value))


def lattice_gaps(edges, step: float) -> list[int]:
    """The bins of ``edges`` (a numeric column's, the last bin closed) that hold no multiple of ``step``: a
    point bin whose value is not one, or an interval bin [a, b) (after a point bin (a, b)) with none inside."""
    e = np.asarray(edges, dtype=float)
    a, b = np.round(e[:-1] / step, 9), np.round(e[1:] / step, 9)  # (a step such as 0.1 is not exact in binary)
    after = np.concatenate([[False], (np.diff(e) == 0)[:-1]])
    first = np.where(after, np.floor(a) + 1, np.ceil(a))
    last = np.where(np.arange(a.size) == a.size - 1, np.floor(b), np.ceil(b) - 1)
    last = np.where(a == b, np.where(np.floor(a) == a, a, a - 1), last)  # a point bin holds its value alone
    return [int(i) for i in np.flatnonzero(last < first)]


def point_values(edges) -> np.ndarray:
    """The values written twice in non-decreasing ``edges``: the point bins of a numeric column."""
    e = np.asarray(edges, dtype=float)
    return e[:-1][np.diff(e) == 0]


def bin_index(values: np.ndarray, edges) -> np.ndarray:
    """The bin of each value (already clamped into [edges[0], edges[-1]]) of a numeric column: the last edge ≤ v
    starts its bin, except that a value equal to a point (an edge written twice) is in the point bin, and the
    upper edge is in the last bin.  Vectorised; the Spark engine computes the same with column expressions."""
    e = np.asarray(edges, dtype=float)
    v = np.asarray(values, dtype=float)
    code = np.searchsorted(e, v, side="right") - 1
    points = point_values(e)
    if points.size:
        code = code - np.isin(v, points)
    return np.clip(code, 0, e.size - 2)


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


@dataclass(frozen=True)
class Domain:
    """The finite domain of the discretized table: one attribute per schema column.

    ``sizes[i]`` is the number of codes of attribute i.  The *binary-attribute
    view* has one bit per (attribute, value): bit ``offsets[i] + v`` is 1 when
    attribute i takes value v, so every valid record has exactly one bit set
    per attribute.
    """

    columns: tuple[ColumnSpec, ...]
    names: tuple[str, ...] = field(init=False)
    sizes: tuple[int, ...] = field(init=False)
    offsets: tuple[int, ...] = field(init=False)

    def __post_init__(self) -> None:
        names = tuple(c.name for c in self.columns)
        sizes = tuple(int(c.size) for c in self.columns)
        offsets = tuple(int(x) for x in np.concatenate([[0], np.cumsum(sizes)[:-1]])) if sizes else ()
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "offsets", offsets)

    # -- basic facts ---------------------------------------------------------
    def __len__(self) -> int:
        return len(self.columns)

    def index(self, name: str) -> int:
        return self.names.index(name)

    @property
    def text_columns(self) -> list[str]:
        """The categorical and datetime columns, read as text (labels, and instants parsed per cell)."""
        return [c.name for c in self.columns if c.kind in ("categorical", "datetime")]

    def indices(self, names: Sequence[str]) -> tuple[int, ...]:
        return tuple(self.index(n) for n in names)

    def shape(self, attrs: Sequence[int]) -> tuple[int, ...]:
        return tuple(self.sizes[a] for a in attrs)

    def cells(self, attrs: Sequence[int] | None = None) -> int:
        """Number of cells of the marginal over ``attrs`` (all attributes if None)."""
        attrs = range(len(self)) if attrs is None else attrs
        return math.prod(self.sizes[a] for a in attrs)

    # -- binary-attribute view -------------------------------------------------
    @property
    def n_bits(self) -> int:
        return int(sum(self.sizes))

    def bit(self, attr: int, value: int) -> int:
        """Index of the bit for (attribute, value)."""
        if not 0 <= value < self.sizes[attr]:
            raise ValueError(f"value {value} out of range for attribute {self.names[attr]}")
        return self.offsets[attr] + value

    def bit_owner(self) -> tuple[np.ndarray, np.ndarray]:
        """For every bit: (attribute index, value).  Inverse of :meth:`bit`."""
        attr = np.repeat(np.arange(len(self)), self.sizes)
        value = np.arange(self.n_bits) - np.asarray(self.offsets)[attr]
        return attr, value

    def to_bits(self, codes: np.ndarray) -> np.ndarray:
        """Rows of codes (n × d) → rows of bits (n × n_bits, uint8), one-hot per attribute."""
        codes = np.asarray(codes)
        bits = np.zeros((codes.shape[0], self.n_bits), dtype=np.uint8)
        rows = np.arange(codes.shape[0])[:, None]
        bits[rows, codes + np.asarray(self.offsets)[None, :]] = 1
        return bits

    def from_bits(self, bits: np.ndarray) -> np.ndarray:
        """Rows of one-hot bits → rows of codes; raises if a row is not exactly one-hot."""
        bits = np.asarray(bits)
        per_attr = np.add.reduceat(bits.astype(np.int64), np.asarray(self.offsets), axis=1)
        if not np.all(per_attr == 1):
            raise ValueError("bit rows must have exactly one bit set per attribute")
        codes = np.empty((bits.shape[0], len(self)), dtype=np.int64)
        for i, (off, size) in enumerate(zip(self.offsets, self.sizes)):  # loop over columns, not rows
            codes[:, i] = np.argmax(bits[:, off : off + size], axis=1)
        return codes

    def to_dict(self) -> list[dict]:
        """Public description of the domain, for the report."""
        return [
            {"name": c.name, "kind": c.kind, "size": c.size, "values": c.labels()}
            for c in self.columns
        ]
