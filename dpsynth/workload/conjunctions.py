"""Conjunction queries over the binary-attribute view (Gaboardi et al. 2014, §5, §7).

A conjunction is k literals over *distinct* columns, literal j meaning
"column ``attrs[j]`` takes value ``values[j]``", i.e. bit (attrs[j], values[j])
of the binary-attribute view is 1.  The paper's "sensible" k-way marginal
queries are exactly these (§7: a query never asks one original attribute to
take two values).  Its answer on a table is the fraction of rows satisfying
it; the negated query is 1 minus that (§3), so the query set is closed under
negation without storing the negations.

Workload (``workload.conjunctions`` in the config; public, never data-derived):

* ``{k: 3}``: every cell of every k-way marginal (all column k-subsets);
* ``{k: 3, count: 100000, seed: 0}``: ``count`` distinct conjunctions drawn
  uniformly among all sets of k bits from distinct columns, with public seed;
* absent: every cell of the ``workload.marginals`` marginals.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpsynth.data.schema import Domain
from dpsynth.errors import ConfigError
from dpsynth.params import as_int

__all__ = [
    "Clauses",
    "Conjunctions",
    "all_cells",
    "conjunction_counts",
    "conjunction_workload",
    "random_conjunctions",
]

_MAX_QUERIES = 50_000_000


@dataclass(frozen=True)
class Conjunctions:
    """Q conjunctions of k literals: ``attrs`` and ``values`` are (Q × k) int arrays."""

    attrs: np.ndarray
    values: np.ndarray

    def __len__(self) -> int:
        return int(self.attrs.shape[0])

    @property
    def k(self) -> int:
        return int(self.attrs.shape[1])

    def satisfied(self, record: np.ndarray) -> np.ndarray:
        """Bool (Q,): which conjunctions the single row ``record`` (codes) satisfies."""
        record = np.asarray(record)
        return np.all(record[self.attrs] == self.values, axis=1)

    def answers(self, codes: np.ndarray, *, chunk: int = 4096) -> np.ndarray:
        """Fraction of the rows of ``codes`` (m × d) satisfying each conjunction, shape (Q,).

        Vectorized over queries; rows go in chunks to bound memory (Q·chunk·k).
        """
        codes = np.asarray(codes)
        if codes.shape[0] == 0:
            return np.zeros(len(self))
        total = np.zeros(len(self), dtype=np.int64)
        step = max(1, min(chunk, 20_000_000 // max(1, len(self) * self.k)))
        for lo in range(0, codes.shape[0], step):  # chunks of rows, each vectorized
            block = codes[lo : lo + step]
            hit = np.ones((block.shape[0], len(self)), dtype=bool)
            for j in range(self.k):  # loop over the k literal positions
                hit &= block[:, self.attrs[:, j]] == self.values[None, :, j]
            total += hit.sum(axis=0)
        return total / codes.shape[0]


@dataclass(frozen=True)
class Clauses:
    """The best-response instance of one round (§5): sampled queries and their negations.

    Distinct sampled (query, sign) pairs with multiplicities: ``positive[j]``
    is True for a conjunction, False for its negation; ``weights[j]`` counts
    how often it was sampled.
    """

    attrs: np.ndarray
    values: np.ndarray
    positive: np.ndarray
    weights: np.ndarray

    def __len__(self) -> int:
        return int(self.attrs.shape[0])

    def satisfied(self, record: np.ndarray) -> np.ndarray:
        full = np.all(np.asarray(record)[self.attrs] == self.values, axis=1)
        return np.where(self.positive, full, ~full)

    def objective(self, record: np.ndarray) -> int:
        """Weighted number of satisfied clauses: Σᵢ q̂ᵢ(x) over the s samples (§5)."""
        return int(self.weights[self.satisfied(record)].sum())

    @classmethod
    def from_samples(cls, queries: Conjunctions, sample: np.ndarray) -> Clauses:
        """``sample`` indexes the 2Q queries: i < Q is query i, i ≥ Q the negation of i − Q."""
        ids, weights = np.unique(np.asarray(sample), return_counts=True)
        q = len(queries)
        base = ids % q
        return cls(queries.attrs[base], queries.values[base], ids < q, weights.astype(np.int64))


def _sorted_literals(attrs: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(attrs, axis=1, kind="stable")
    return np.take_along_axis(attrs, order, 1), np.take_along_axis(values, order, 1)


def all_cells(domain: Domain, attr_sets: Sequence[Sequence[int]]) -> Conjunctions:
    """Every cell of every marginal in ``attr_sets`` (all of the same size k) as a conjunction."""
    sets = [tuple(int(a) for a in s) for s in attr_sets]
    if not sets or len({len(s) for s in sets}) != 1:
        raise ValueError("attr_sets must be non-empty and all of the same size")
    total = sum(domain.cells(s) for s in sets)
    if total > _MAX_QUERIES:
        raise ConfigError(f"workload.conjunctions: {total} queries, more than the limit of {_MAX_QUERIES}")
    attrs, values = [], []
    for s in sets:  # loop over marginals; the cells of one marginal are enumerated by numpy
        cells = np.indices(domain.shape(s)).reshape(len(s), -1).T
        attrs.append(np.broadcast_to(np.array(s), cells.shape))
        values.append(cells)
    a, v = _sorted_literals(np.concatenate(attrs).astype(np.int64), np.concatenate(values).astype(np.int64))
    return Conjunctions(a, v)


def random_conjunctions(domain: Domain, k: int, count: int, *, rng: np.random.Generator) -> Conjunctions:
    """``count`` distinct conjunctions, uniform over sets of k bits from distinct columns.

    Rejection sampling, vectorized: draw k bits uniformly, keep draws whose
    columns are distinct, drop duplicates (as sets), repeat until enough.
    """
    nbits = domain.n_bits
    owner, value = domain.bit_owner()
    possible = _count_bit_sets(domain.sizes, k)
    if count > possible:
        raise ConfigError(
            f"workload.conjunctions.count: {count} exceeds the {possible} distinct {k}-way conjunctions "
            "of this schema"
        )
    keys = np.zeros((0, k), dtype=np.int64)
    while keys.shape[0] < count:
        need = count - keys.shape[0]
        draw = np.sort(rng.integers(0, nbits, size=(2 * need + 64, k)), axis=1)
        cols = owner[draw]
        ok = np.all(np.diff(np.sort(cols, axis=1), axis=1) > 0, axis=1) if k > 1 else np.ones(len(draw), bool)
        draw = draw[ok]
        merged = np.concatenate([keys, draw])
        _, first = np.unique(merged, axis=0, return_index=True)
        keys = merged[np.sort(first)][:count]  # keep draw order: the first `count` distinct sets
    attrs, values = owner[keys], value[keys]
    return Conjunctions(*_sorted_literals(attrs.astype(np.int64), values.astype(np.int64)))


def _count_bit_sets(sizes: Sequence[int], k: int) -> int:
    """Number of k-sets of bits from distinct columns: e_k(sizes) (elementary symmetric poly)."""
    e = [1] + [0] * k
    for size in sizes:
        for j in range(k, 0, -1):
            e[j] += e[j - 1] * size
    return e[k]


def conjunction_workload(
    raw: Any, domain: Domain, marginals: Sequence[Sequence[int]], path: str = "workload.conjunctions"
) -> Conjunctions:
    """Build the query set from the config section (see the module docstring)."""
    if raw is None:
        sizes = {len(m) for m in marginals}
        if len(sizes) != 1:
            raise ConfigError(f"{path}: required when workload.marginals mixes sizes or is empty")
        return all_cells(domain, marginals)
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{path}: expected a mapping like {{k: 3, count: 100000, seed: 0}}")
    extra = sorted(set(map(str, raw)) - {"k", "count", "seed"})
    if extra:
        raise ConfigError(f"{path}.{extra[0]}: unknown key (allowed: count, k, seed)")
    k = as_int(raw.get("k", 3), f"{path}.k", minimum=1)
    if k > len(domain):
        raise ConfigError(f"{path}.k: must be <= the number of columns ({len(domain)}), got {k}")
    if "count" not in raw:
        if "seed" in raw:
            raise ConfigError(f"{path}.seed: only meaningful with count")
        n_sets = math.comb(len(domain), k)
        if n_sets > _MAX_QUERIES:
            raise ConfigError(f"{path}: {n_sets} {k}-way marginals; give count to sample conjunctions")
        return all_cells(domain, list(itertools.combinations(range(len(domain)), k)))
    count = as_int(raw["count"], f"{path}.count", minimum=1)
    if count > _MAX_QUERIES:
        raise ConfigError(f"{path}.count: must be <= {_MAX_QUERIES}, got {count}")
    seed = as_int(raw.get("seed", 0), f"{path}.seed", minimum=0)
    # Public randomness fixed by the config (like workload.marginals.sample): the
    # query set never depends on the data, and evaluation can rebuild it.
    return random_conjunctions(domain, k, count, rng=np.random.default_rng(seed))


def conjunction_counts(counts, queries: Conjunctions) -> np.ndarray:
    """Exact number of private rows satisfying each conjunction (int64, shape (Q,)).

    Uses the engine's vectorized ``conjunction_counts`` when it has one,
    otherwise one ``marginal()`` per distinct column set (any engine).
    """
    fast = getattr(counts, "conjunction_counts", None)
    if fast is not None:
        return np.asarray(fast(queries.attrs, queries.values), dtype=np.int64)
    sets, inverse = np.unique(queries.attrs, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    out = np.zeros(len(queries), dtype=np.int64)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(sets) + 1))
    for g, cols in enumerate(sets.tolist()):  # loop over distinct marginals
        idx = order[bounds[g] : bounds[g + 1]]
        table = counts.marginal(tuple(cols))
        out[idx] = table[tuple(queries.values[idx].T)]
    return out
