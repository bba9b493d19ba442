"""Junction trees over measured cliques, and their memory bound (public information only).

A graphical model whose factors are the measured cliques (attribute sets of
noisy marginals) supports exact inference on a *junction tree*: a tree of
larger cliques that cover every measured clique and satisfy the running
intersection property.  McKenna, Sheldon & Miklau (2019, §4.2, "Graphical-
model based estimation and inference for differential privacy") build it by
triangulating the graph whose edges join attributes measured together; the
cost of inference is the total number of cells of the tree's cliques.

This module only looks at the domain sizes and at *which* attribute sets are
measured, so everything it computes is public and may be done before any
work (and before any data is read):

``triangulate(sizes, cliques) -> list[tuple]``
    Maximal cliques of a chordal graph containing every clique (greedy
    elimination, each step removing the attribute whose elimination clique
    has the fewest cells).  Each returned clique is a sorted tuple; every
    attribute of the domain is in at least one.
``tree_edges(cliques) -> list[(i, j)]``
    A junction tree over maximal cliques: a maximum-weight spanning tree of
    the clique graph weighted by the number of shared attributes (a
    disconnected graph is joined by empty separators, so one tree always covers all).
``model_cells(sizes, cliques)`` / ``model_bytes(cells)``
    The size of the tree and the memory inference needs for it
    (``BYTES_PER_CELL`` per cell: log-potential, belief, messages, gradient, temporaries).
``plan(sizes, cliques, *, max_cells, priority=None, coarsen=True) -> Plan``
    The cliques a model can afford: measured cliques are added in priority
    order and kept when the tree stays within ``max_cells``; a clique that
    would exceed it is replaced by its subsets of one attribute fewer (tried in
    turn, recursively), or, with ``coarsen=False``, :class:`ModelTooLarge` is raised.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from dpsynth.errors import ConfigError

__all__ = [
    "BYTES_PER_CELL",
    "DEFAULT_MAX_CELLS",
    "ModelTooLarge",
    "Plan",
    "model_bytes",
    "model_cells",
    "plan",
    "tree_edges",
    "triangulate",
]

BYTES_PER_CELL = 48
"""Memory of inference per cell of the junction tree: six float64 arrays of the tree's size
(log-potentials, beliefs, messages and their temporaries, the gradient, the previous iterate)."""

DEFAULT_MAX_CELLS = 1_000_000
"""Default bound on the junction tree's cells: about 48 MB of inference memory."""


class ModelTooLarge(ConfigError):
    """The junction tree of the requested cliques exceeds the memory bound (raised before any work)."""


def _cells(sizes: Sequence[int], attrs) -> int:
    return math.prod(int(sizes[a]) for a in attrs)


def triangulate(sizes: Sequence[int], cliques) -> list[tuple[int, ...]]:
    """Maximal cliques of a chordal supergraph of the cliques' interaction graph (greedy min-cells)."""
    d = len(sizes)
    nbrs: list[set[int]] = [set() for _ in range(d)]
    for c in cliques:
        for a, b in itertools.combinations(c, 2):
            nbrs[a].add(b)
            nbrs[b].add(a)
    left = set(range(d))
    found: list[frozenset[int]] = []
    while left:  # loop over attributes (public structure only)
        v = min(left, key=lambda u: (_cells(sizes, nbrs[u]) * sizes[u], u))
        clique = frozenset(nbrs[v] | {v})
        found.append(clique)
        for a, b in itertools.combinations(nbrs[v], 2):
            nbrs[a].add(b)
            nbrs[b].add(a)
        for u in nbrs[v]:
            nbrs[u].discard(v)
        left.discard(v)
    maximal = [c for c in found if not any(c < o for o in found)]
    unique = sorted({tuple(sorted(c)) for c in maximal})
    return unique


def tree_edges(cliques: Sequence[tuple[int, ...]]) -> list[tuple[int, int]]:
    """Edges of a maximum-weight spanning tree (weight = |C_i ∩ C_j|) over ``cliques`` (Prim)."""
    k = len(cliques)
    if k <= 1:
        return []
    sets = [set(c) for c in cliques]
    best = {j: (len(sets[0] & sets[j]), 0) for j in range(1, k)}
    edges = []
    while best:
        j = max(best, key=lambda u: (best[u][0], -u))
        edges.append((best.pop(j)[1], j))
        for u in best:
            w = len(sets[j] & sets[u])
            if w > best[u][0]:
                best[u] = (w, j)
    return edges


def model_cells(sizes: Sequence[int], cliques) -> int:
    """Total cells of the junction tree of ``cliques`` (its maximal cliques after triangulation)."""
    return sum(_cells(sizes, c) for c in triangulate(sizes, cliques))


def model_bytes(cells: int) -> int:
    """Inference memory for a tree of ``cells`` cells (``BYTES_PER_CELL`` per cell)."""
    return int(cells) * BYTES_PER_CELL


@dataclass
class Plan:
    """The cliques a model keeps.

    ``kept``: measured cliques (as given, in priority order) that the model represents;
    ``replaced``: original clique -> the subsets that stand in for it (coarsening);
    ``tree``: the junction tree's maximal cliques; ``cells``: their total.
    """

    kept: list[tuple[int, ...]]
    replaced: dict[tuple[int, ...], list[tuple[int, ...]]] = field(default_factory=dict)
    tree: list[tuple[int, ...]] = field(default_factory=list)
    cells: int = 0

    @property
    def dropped(self) -> int:
        return len(self.replaced)


def _inside(attrs, tree_sets) -> bool:
    s = set(attrs)
    return any(s <= t for t in tree_sets)


def plan(
    sizes: Sequence[int],
    cliques: Sequence[Sequence[int]],
    *,
    max_cells: int = DEFAULT_MAX_CELLS,
    priority: Sequence[float] | None = None,
    coarsen: bool = True,
) -> Plan:
    """Choose the cliques of a model whose junction tree has at most ``max_cells`` cells.

    Cliques are considered by ``priority`` (higher first; default: given order); one of
    priority ≤ 0 (no signal above its noise) is replaced by its subsets unless it is already
    inside the tree.  A clique already inside the tree is free; otherwise the tree is re-triangulated
    with it and it is kept when the total stays within the bound.  A clique that
    does not fit raises :class:`ModelTooLarge` (``coarsen=False``) or is replaced
    by those of its subsets with one attribute fewer that fit (recursively down to
    single attributes, which always fit when the 1-way tree does).
    """
    sizes = [int(s) for s in sizes]
    base = [(a,) for a in range(len(sizes))]
    floor = sum(sizes)
    if floor > max_cells:
        raise ModelTooLarge(
            f"the model needs at least {floor} cells (one per value of every column), "
            f"more than its bound of {max_cells} cells; raise the bound or coarsen the schema"
        )
    if not coarsen:
        full = model_cells(sizes, base + [tuple(c) for c in cliques])
        if full > max_cells:
            raise ModelTooLarge(
                f"a model of the measured marginals needs {full} cells (about "
                f"{model_bytes(full) / 1e6:.0f} MB), more than its bound of {max_cells} cells; "
                "measure fewer or smaller marginals, or raise the bound"
            )
        unique = list(dict.fromkeys(tuple(int(a) for a in c) for c in cliques))
        tree = triangulate(sizes, base + unique)
        return Plan(kept=unique, tree=tree, cells=sum(_cells(sizes, t) for t in tree))
    order = list(range(len(cliques)))
    if priority is not None:
        order.sort(key=lambda i: -float(priority[i]))
    weak = set() if priority is None else {i for i in order if float(priority[i]) <= 0}
    kept: list[tuple[int, ...]] = []
    replaced: dict[tuple[int, ...], list[tuple[int, ...]]] = {}
    tree = triangulate(sizes, base)
    tree_sets = [set(t) for t in tree]
    for i in order:  # loop over cliques (public structure only)
        clique = tuple(int(a) for a in cliques[i])
        queue: list[tuple[int, ...]] = [clique]
        stand_ins: list[tuple[int, ...]] = []
        while queue:
            c = queue.pop(0)
            if c == clique and i in weak and len(c) > 1 and not _inside(c, tree_sets):
                queue.extend(tuple(x for x in c if x != a) for a in c)
                continue
            if _inside(c, tree_sets):
                (kept if c == clique else stand_ins).append(c)
                continue
            trial = triangulate(sizes, base + kept + stand_ins + [c])
            cells = sum(_cells(sizes, t) for t in trial)
            if cells <= max_cells:
                (kept if c == clique else stand_ins).append(c)
                tree, tree_sets = trial, [set(t) for t in trial]
                continue
            subs = [tuple(x for x in c if x != a) for a in c] if len(c) > 1 else []
            queue.extend(s for s in subs if s not in queue and not any(set(s) <= set(q) for q in stand_ins))
        if stand_ins or clique not in kept:
            replaced[clique] = _maximal(stand_ins)
            kept.extend(s for s in replaced[clique] if s not in kept)
    tree = triangulate(sizes, base + kept)
    return Plan(kept=kept, replaced=replaced, tree=tree, cells=sum(_cells(sizes, t) for t in tree))


def _maximal(sets: list[tuple[int, ...]]) -> list[tuple[int, ...]]:
    out = []
    for s in sets:
        if not any(set(s) < set(o) for o in sets) and s not in out:
            out.append(s)
    return out
