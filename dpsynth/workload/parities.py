"""Parity queries over the binary-attribute view (Gaboardi et al. 2014, §6, Definition 6.1).

Definition 6.1 works on X = {−1, +1}^d: the k-wise parity of a feature set S
is +1 when an *even* number of the features in S are +1, −1 otherwise, and the
negated parity is its opposite.  dpsynth's view of a row as bits:

* a **binary column** (two values) is one bit, on (+1) for its *second*
  category (code 1) and off (−1) for its first (code 0);
* a column with **m > 2 values** is m one-hot bits, bit v on when the column
  takes value v (the paper's binarisation, §7); a parity never uses two bits
  of one column (like the "sensible" conjunctions, and so that every record
  the best response returns is a row of the schema).

A parity query is therefore k (column, value) literals over *distinct* columns
(``attrs``, ``values``, as for conjunctions); it is "on" (+1 in Definition 6.1)
when an even number of its literals hold.  DualQuery's linear queries must
take values in [0, 1] (Algorithm 2's input; the proof of Theorem 4.2 uses
|q(D) − q(D′)| ≤ 1/n), so a parity is measured in its **0/1 form**
p_S(x) = (1 + q_S(x))/2: the fraction of rows with an even number of literals
on.  The ±1 answer of Definition 6.1 is 2·p_S − 1 (twice the error); the
negated query is 1 − p_S, exactly as for conjunctions, so the query set is
closed under negation without storing the negations.

Workload (``workload.parities``; public, never data-derived):

* ``{k: 3}``: every parity of every k-subset of the columns (a binary column
  contributes its one bit, an m-valued column each of its m bits);
* ``{k: 3, count: 500, seed: 0}``: ``count`` distinct parities drawn uniformly
  among all of those, with a public seed;
* ``{sets: [[a, b, c], [a, d, e]]}``: every parity of the listed column sets
  (all of one size; ``k``, if given too, must equal it).
"""

from __future__ import annotations

import itertools
import math
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpsynth.data.schema import Domain
from dpsynth.errors import ConfigError
from dpsynth.params import as_int
from dpsynth.workload.conjunctions import Clauses

__all__ = ["Parities", "ParityClauses", "parity_counts", "parity_workload"]

_MAX_QUERIES = 50_000_000
_MAX_K = 20  # parities of more literals: marginals of 2^20+ cells per set
_KEYS = ("k", "count", "seed", "sets")


@dataclass(frozen=True)
class Parities:
    """Q parities of k literals over distinct columns: ``attrs`` and ``values`` are (Q × k) int arrays."""

    attrs: np.ndarray
    values: np.ndarray

    kind = "parity"

    def __len__(self) -> int:
        return int(self.attrs.shape[0])

    @property
    def k(self) -> int:
        return int(self.attrs.shape[1])

    def satisfied(self, record: np.ndarray) -> np.ndarray:
        """Bool (Q,): p_S(record), i.e. an even number of the literals hold (+1 in Definition 6.1)."""
        on = np.asarray(record)[self.attrs] == self.values
        return np.logical_not(np.logical_xor.reduce(on, axis=1))

    def answers(self, codes: np.ndarray, weights: np.ndarray | None = None, *, chunk: int = 4096) -> np.ndarray:
        """p_S on the rows of ``codes`` (m × d), optionally weighted (row multiplicities), shape (Q,).

        The ±1 product over the literals (−1 where a literal holds) is +1 exactly for an even count;
        vectorized over queries, rows in chunks (memory Q·chunk).
        """
        codes = np.asarray(codes)
        w = np.ones(codes.shape[0]) if weights is None else np.asarray(weights, dtype=float)
        total_w = float(w.sum())
        if codes.shape[0] == 0 or total_w == 0:
            return np.zeros(len(self))
        signed = np.zeros(len(self))
        step = max(1, min(chunk, 20_000_000 // max(1, len(self))))
        for lo in range(0, codes.shape[0], step):  # chunks of rows, each vectorized
            block = codes[lo : lo + step]
            sign = np.ones((block.shape[0], len(self)), dtype=np.int8)
            for j in range(self.k):  # loop over the k literal positions
                sign *= np.where(block[:, self.attrs[:, j]] == self.values[None, :, j], -1, 1).astype(np.int8)
            signed += w[lo : lo + step] @ sign
        return (1.0 + signed / total_w) / 2.0


@dataclass(frozen=True)
class ParityClauses(Clauses):
    """One round's best-response instance for parities (§6): distinct sampled (query, sign) pairs.

    ``positive[j]`` is True for a parity p_S (even), False for its negation (odd); ``weights[j]``
    counts how often it was sampled.  Only :meth:`satisfied` differs from the conjunctions'
    :class:`~dpsynth.workload.conjunctions.Clauses` (its ``objective`` counts the sampled queries the
    record answers 1: §6, "takes value 1 on as many of these queries as possible").
    """

    kind = "parity"

    def satisfied(self, record: np.ndarray) -> np.ndarray:
        on = np.asarray(record)[self.attrs] == self.values
        even = np.logical_not(np.logical_xor.reduce(on, axis=1))
        return np.where(self.positive, even, ~even)


def _widths(domain: Domain) -> np.ndarray:
    """Bits per column in the parity view: 1 for a binary column, m for an m-valued one."""
    sizes = np.asarray(domain.sizes, dtype=np.int64)
    return np.where(sizes <= 2, 1, sizes)


def _bit_values(size: int) -> np.ndarray:
    """The codes whose bits a parity may use: the second category of a binary column, every value else."""
    return np.array([size - 1]) if size <= 2 else np.arange(size)


def _of_sets(domain: Domain, sets: Sequence[Sequence[int]]) -> Parities:
    """Every parity of every column set in ``sets`` (all of size k)."""
    attrs, values = [], []
    for s in sets:  # loop over column sets; each set's parities are enumerated by numpy
        grids = np.meshgrid(*[_bit_values(domain.sizes[a]) for a in s], indexing="ij")
        cells = np.stack([g.ravel() for g in grids], axis=1)
        attrs.append(np.broadcast_to(np.array(s), cells.shape))
        values.append(cells)
    a = np.concatenate(attrs).astype(np.int64)
    v = np.concatenate(values).astype(np.int64)
    order = np.argsort(a, axis=1, kind="stable")
    return Parities(np.take_along_axis(a, order, 1), np.take_along_axis(v, order, 1))


def _count_sets(widths: Sequence[int], k: int) -> int:
    """Number of parities of k distinct columns: the elementary symmetric polynomial e_k(widths)."""
    e = [1] + [0] * k
    for w in widths:
        for j in range(k, 0, -1):
            e[j] += e[j - 1] * int(w)
    return e[k]


def _sampled(domain: Domain, k: int, count: int, rng: np.random.Generator) -> Parities:
    """``count`` distinct parities, uniform over sets of k parity bits from distinct columns (rejection)."""
    widths = _widths(domain)
    owner = np.repeat(np.arange(len(domain)), widths)
    value = np.concatenate([_bit_values(int(sz)) for sz in domain.sizes])
    keys = np.zeros((0, k), dtype=np.int64)
    while keys.shape[0] < count:
        need = count - keys.shape[0]
        draw = np.sort(rng.integers(0, len(owner), size=(2 * need + 64, k)), axis=1)
        ok = np.all(np.diff(np.sort(owner[draw], axis=1), axis=1) > 0, axis=1)
        merged = np.concatenate([keys, draw[ok]])
        _, first = np.unique(merged, axis=0, return_index=True)
        keys = merged[np.sort(first)][:count]  # keep draw order: the first `count` distinct sets
    a, v = owner[keys].astype(np.int64), value[keys].astype(np.int64)
    order = np.argsort(a, axis=1, kind="stable")
    return Parities(np.take_along_axis(a, order, 1), np.take_along_axis(v, order, 1))


def parity_workload(raw: Any, domain: Domain, path: str = "workload.parities") -> Parities:
    """Build the parity queries from the config section (see the module docstring)."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{path}: expected a mapping like {{k: 3, count: 500, seed: 0}} or {{sets: [[a, b, c]]}}")
    extra = sorted(set(map(str, raw)) - set(_KEYS))
    if extra:
        raise ConfigError(f"{path}.{extra[0]}: unknown key (allowed: count, k, seed, sets)")
    if "sets" in raw:
        return _listed(raw, domain, path)
    k = as_int(raw.get("k", 3), f"{path}.k", minimum=1)
    if k > min(len(domain), _MAX_K):
        raise ConfigError(f"{path}.k: must be <= the number of columns ({len(domain)}) and <= {_MAX_K}, got {k}")
    possible = _count_sets(_widths(domain), k)
    if "count" not in raw:
        if "seed" in raw:
            raise ConfigError(f"{path}.seed: only meaningful with count")
        if possible > _MAX_QUERIES:
            raise ConfigError(f"{path}: {possible} {k}-wise parities; give count to sample some")
        return _of_sets(domain, list(itertools.combinations(range(len(domain)), k)))
    count = as_int(raw["count"], f"{path}.count", minimum=1)
    if count > min(possible, _MAX_QUERIES):
        raise ConfigError(f"{path}.count: {count} exceeds the {min(possible, _MAX_QUERIES)} distinct {k}-wise "
                          "parities of this schema (or the limit)")
    seed = as_int(raw.get("seed", 0), f"{path}.seed", minimum=0)
    # Public randomness fixed by the config: the query set never depends on the data.
    return _sampled(domain, k, count, np.random.default_rng(seed))


def _listed(raw: Mapping, domain: Domain, path: str) -> Parities:
    if "count" in raw or "seed" in raw:
        raise ConfigError(f"{path}.sets: lists the column sets itself; remove count and seed")
    sets = raw["sets"]
    if not isinstance(sets, list) or not sets or not all(isinstance(s, list) and s for s in sets):
        raise ConfigError(f"{path}.sets: expected a non-empty list of column lists like [[a, b, c]]")
    out = []
    for i, s in enumerate(sets):
        for name in s:
            if str(name) not in domain.names:
                raise ConfigError(f"{path}.sets[{i}]: '{name}' is not a column of the schema")
        cols = tuple(sorted(domain.index(str(name)) for name in s))
        if len(set(cols)) != len(cols):
            raise ConfigError(f"{path}.sets[{i}]: a column appears twice")
        out.append(cols)
    sizes = {len(s) for s in out}
    k = len(out[0])
    if len(sizes) != 1:
        raise ConfigError(f"{path}.sets: all sets must have the same size (k), got sizes {sorted(sizes)}")
    if k > _MAX_K:
        raise ConfigError(f"{path}.sets: at most {_MAX_K} columns per set, got {k}")
    if "k" in raw and as_int(raw["k"], f"{path}.k", minimum=1) != k:
        raise ConfigError(f"{path}.k: the sets have {k} columns, got k={raw['k']}")
    total = sum(math.prod(int(w) for w in _widths(domain)[list(s)]) for s in out)
    if total > _MAX_QUERIES:
        raise ConfigError(f"{path}: {total} parities, more than the limit of {_MAX_QUERIES}")
    return _of_sets(domain, list(dict.fromkeys(out)))


def parity_counts(counts, queries: Parities) -> np.ndarray:
    """Exact number of private rows on which each parity is on (even), int64 of shape (Q,).

    One ``marginal()`` per distinct column set (any engine), then the ±1 contraction
    Σ_cells table·Πⱼ sⱼ with sⱼ = −1 on literal j's value: even − odd rows, exact in int64.
    """
    sets, inverse = np.unique(queries.attrs, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    out = np.zeros(len(queries), dtype=np.int64)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(sets) + 1))
    k = queries.k
    letters = string.ascii_lowercase[:k]
    spec = letters + "," + ",".join("z" + c for c in letters) + "->z"
    for g, cols in enumerate(sets.tolist()):  # loop over distinct column sets
        idx = order[bounds[g] : bounds[g + 1]]
        table = np.asarray(counts.marginal(tuple(cols)), dtype=np.int64)
        signs = [np.where(np.arange(table.shape[j])[None, :] == queries.values[idx, j][:, None], -1, 1)
                 .astype(np.int64) for j in range(k)]
        signed = np.einsum(spec, table, *signs)
        out[idx] = (int(table.sum()) + signed) // 2
    return out
