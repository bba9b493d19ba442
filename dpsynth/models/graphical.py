"""A discrete graphical model on a junction tree: exact inference and vectorised sampling.

The parameterisation (everything a model file needs; numpy only):

``sizes``
    Number of codes of every attribute of the domain (tuple of int).
``cliques``
    The junction tree's cliques, each a *sorted* tuple of attribute indices;
    every attribute is in at least one clique.
``log_potentials``
    One float64 array per clique, of shape ``[sizes[a] for a in clique]``
    (axes in the clique's sorted order).  The distribution is
    p(x) ∝ exp(Σ_C θ_C(x_C)); −inf marks impossible cells.
``edges``
    The tree: pairs (i, j) of clique indices (a spanning tree; separators may be empty).
``total``
    The mass n of the model: marginals are returned as counts summing to it.

Derived (not stored): the sampling order is a breadth-first walk from clique 0
(:meth:`GraphicalModel.order`, each clique with its parent), so
``GraphicalModel(sizes, cliques, log_potentials, edges, total)`` rebuilt from the
stored fields samples exactly as the original with the same generator.

Inference is sum-product belief propagation on the tree, in log space (Koller &
Friedman 2009, §10.2): one upward and one downward pass give calibrated
clique beliefs, from which every marginal inside a clique is a sum.  It is
exact, so overlapping marginals coexist without merging all their attributes
into one block (the limitation of :mod:`dpsynth.models.factored`).

Sampling (:meth:`GraphicalModel.sample`) walks the tree: the first clique's
attributes are drawn from its marginal, each later clique's new attributes
from their conditional distribution given its separator with the parent
(already drawn; running-intersection property).  Two methods, both vectorised:
``"iid"`` (independent rows, inverse-CDF on a flattened table of conditional
CDFs) and ``"systematic"`` (low variance: within every group of rows sharing a
separator value, how many rows take each new value is the model's expected count
rounded up or down by systematic sampling, so each clique's counts are within one
of the model's given the rows drawn before; the values are then dealt to the group's
rows sorted by their earlier codes in an evenly spread order, so every stratum of
earlier codes receives its proportional share and the rows' joint counts across
cliques follow the model's conditional independence instead of a random pairing's:
:func:`_allocate`).  COMPAS, all 3-way marginals, ε = 1 (6 seeds): the fitted
model's 3-way L1 is 0.127; its rows add 0.011 (i.i.d.), 0.0055 (groups shuffled
before allocation, the previous ``systematic``) and 0.002 with the strata
(docs/aim.md, "Issue 28: sampling error").
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dpsynth.models.base import ZeroProbability, check_weights, code_dtype
from dpsynth.models.junction import tree_edges

__all__ = ["GraphicalModel", "expand", "logsumexp_to"]

SAMPLING_METHODS = ("iid", "systematic")


def expand(values: np.ndarray, attrs: Sequence[int], target: Sequence[int]) -> np.ndarray:
    """``values`` over sorted ``attrs`` reshaped to broadcast against an array over sorted ``target``."""
    shape = [values.shape[attrs.index(a)] if a in attrs else 1 for a in target]
    return values.reshape(shape)


def logsumexp_to(values: np.ndarray, attrs: Sequence[int], keep: Sequence[int]) -> np.ndarray:
    """log Σ exp(values) over the axes of ``attrs`` not in ``keep`` (result over sorted ``keep``)."""
    axes = tuple(i for i, a in enumerate(attrs) if a not in keep)
    if not axes:
        return values
    top = np.max(values, axis=axes, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(values - top), axis=axes, keepdims=True)) + top
    return out.reshape([values.shape[i] for i, a in enumerate(attrs) if a in keep])


class GraphicalModel:
    """p(x) ∝ exp(Σ_C θ_C(x_C)) over a junction tree, scaled to mass ``total`` (see module docstring).

    Implements :class:`dpsynth.models.base.Model` (kind ``"graphical"``): ``sample``,
    ``probability``, ``condition``, ``to_arrays`` / ``from_arrays``.  ``sampling`` is the
    default sampling method (``"iid"`` or ``"systematic"``) of :meth:`sample`.
    """

    kind = "graphical"

    def __init__(self, sizes, cliques, log_potentials=None, edges=None, total: float = 1.0, *,
                 sampling: str = "iid"):
        self.sizes = tuple(int(s) for s in sizes)
        self.cliques = [tuple(sorted(int(a) for a in c)) for c in cliques]
        covered = {a for c in self.cliques for a in c}
        if covered != set(range(len(self.sizes))):
            raise ValueError("every attribute must be in at least one clique")
        if log_potentials is None:
            log_potentials = [np.zeros(self.shape(c)) for c in self.cliques]
        self.log_potentials = [np.asarray(t, dtype=float).reshape(self.shape(c))
                               for t, c in zip(log_potentials, self.cliques, strict=True)]
        self.edges = [tuple(e) for e in (tree_edges(self.cliques) if edges is None else edges)]
        if len(self.edges) != len(self.cliques) - 1:
            raise ValueError("edges must form a spanning tree of the cliques")
        if not (math.isfinite(total) and total > 0):
            raise ValueError(f"total must be a finite number > 0, got {total!r}")
        self.total = float(total)
        if sampling not in SAMPLING_METHODS:
            raise ValueError(f"sampling must be one of {SAMPLING_METHODS}, got {sampling!r}")
        self.sampling = sampling
        self._beliefs: list[np.ndarray] | None = None
        self._conditionals: dict[tuple[int, int], np.ndarray] = {}  # P(C_i | separator with C_p), see project
        self._order = self._bfs()

    # ------------------------------------------------------------------ structure
    def shape(self, attrs) -> tuple[int, ...]:
        return tuple(self.sizes[a] for a in attrs)

    @property
    def cells(self) -> int:
        return sum(math.prod(self.shape(c)) for c in self.cliques)

    def _bfs(self) -> list[tuple[int, int]]:
        adj: dict[int, list[int]] = {i: [] for i in range(len(self.cliques))}
        for i, j in self.edges:
            adj[i].append(j)
            adj[j].append(i)
        order, seen, frontier = [(0, -1)], {0}, [0]
        while frontier:
            nxt = []
            for i in frontier:
                for j in sorted(adj[i]):
                    if j not in seen:
                        seen.add(j)
                        order.append((j, i))
                        nxt.append(j)
            frontier = nxt
        if len(order) != len(self.cliques):
            raise ValueError("edges must connect every clique")
        return order

    def order(self) -> list[tuple[int, int]]:
        """(clique, parent) pairs in sampling order; the first clique's parent is −1."""
        return list(self._order)

    def clique_of(self, attrs) -> int:
        """Index of the smallest clique containing ``attrs`` (ValueError if none)."""
        want = set(attrs)
        best = [i for i, c in enumerate(self.cliques) if want <= set(c)]
        if not best:
            raise ValueError(f"attributes {tuple(attrs)} are not inside one clique of the model")
        return min(best, key=lambda i: math.prod(self.shape(self.cliques[i])))

    def set_potentials(self, log_potentials) -> None:
        self.log_potentials = [np.asarray(t, dtype=float) for t in log_potentials]
        self._beliefs = None
        self._conditionals = {}

    # ------------------------------------------------------------------ inference
    def log_partition(self) -> float:
        """log Σₓ exp(Σ_C θ_C(x_C)) by one upward pass."""
        cl = self.cliques
        incoming = [t for t in self.log_potentials]
        for i, parent in reversed(self._order):  # leaves first; loop over cliques
            if parent < 0:
                continue
            sep = [a for a in cl[i] if a in cl[parent]]
            incoming[parent] = incoming[parent] + expand(logsumexp_to(incoming[i], cl[i], sep), sep, cl[parent])
        return float(np.asarray(logsumexp_to(incoming[0], cl[0], [])).reshape(()))

    def _weighted_potentials(self, weights) -> list[np.ndarray]:
        """θ with log wₐ added to the first clique holding each attribute a (−inf where wₐ = 0)."""
        weights = check_weights(weights, self.sizes)
        theta = [t.copy() for t in self.log_potentials]
        for a, w in enumerate(weights):
            if w is None:
                continue
            i = next(k for k, c in enumerate(self.cliques) if a in c)
            with np.errstate(divide="ignore"):
                theta[i] = theta[i] + expand(np.log(w), [a], self.cliques[i])
        return theta

    def probability(self, weights) -> float:
        """Σₓ p(x)·Πₐ wₐ(xₐ) = exp(log Z(θ + log w) − log Z(θ))."""
        other = GraphicalModel(self.sizes, self.cliques, self._weighted_potentials(weights), self.edges,
                               self.total, sampling=self.sampling)
        diff = other.log_partition() - self.log_partition()
        return float(math.exp(diff)) if math.isfinite(diff) else 0.0

    def condition(self, weights) -> GraphicalModel:
        """p'(x) ∝ p(x)·Πₐ wₐ(xₐ), exactly (the weights become part of the potentials)."""
        other = GraphicalModel(self.sizes, self.cliques, self._weighted_potentials(weights), self.edges,
                               self.total, sampling=self.sampling)
        if not math.isfinite(other.log_partition()):
            raise ZeroProbability("the condition has probability 0 under the model")
        return other

    # ------------------------------------------------------------------ serialisation
    def to_arrays(self) -> tuple[dict, dict[str, np.ndarray]]:
        meta = {"sizes": list(self.sizes), "cliques": [list(c) for c in self.cliques],
                "edges": [list(e) for e in self.edges], "total": self.total, "sampling": self.sampling}
        arrays = {f"log_potential_{i}": np.ascontiguousarray(t, dtype=np.float64)
                  for i, t in enumerate(self.log_potentials)}
        return meta, arrays

    @classmethod
    def from_arrays(cls, meta, arrays) -> GraphicalModel:
        """Rebuild from :meth:`to_arrays`; ``ValueError`` on inconsistent content."""
        if not isinstance(meta, dict) or set(meta) != {"sizes", "cliques", "edges", "total", "sampling"}:
            raise ValueError("graphical model: unexpected metadata keys")
        sizes = _ints(meta["sizes"], "sizes")
        if not sizes or any(s < 1 for s in sizes):
            raise ValueError("graphical model: sizes must be positive integers")
        cliques = [tuple(_ints(c, "cliques")) for c in _seq(meta["cliques"], "cliques")]
        if any(list(c) != sorted(set(c)) or not c or c[-1] >= len(sizes) for c in cliques):
            raise ValueError("graphical model: every clique must be a sorted list of distinct attributes")
        edges = [tuple(_ints(e, "edges")) for e in _seq(meta["edges"], "edges")]
        if any(len(e) != 2 or max(e) >= len(cliques) for e in edges):
            raise ValueError("graphical model: edges must join two cliques")
        if set(arrays) != {f"log_potential_{i}" for i in range(len(cliques))}:
            raise ValueError("graphical model: the arrays do not match the cliques")
        theta = []
        for i, c in enumerate(cliques):
            t = np.asarray(arrays[f"log_potential_{i}"])
            if t.dtype != np.float64 or t.shape != tuple(sizes[a] for a in c) or np.any(np.isnan(t)) \
                    or np.any(t == np.inf):
                raise ValueError(f"graphical model: log_potential_{i} must be float64 of its clique's shape, "
                                 "without NaN or +inf")
            theta.append(t)
        total = meta["total"]
        if isinstance(total, bool) or not isinstance(total, (int, float)):
            raise TypeError("graphical model: total must be a number")
        model = cls(sizes, cliques, theta, edges, float(total), sampling=meta["sampling"])
        if not math.isfinite(model.log_partition()):
            raise ValueError("graphical model: the potentials give no mass anywhere")
        return model

    def probabilities(self) -> list[np.ndarray]:
        """Normalised marginal probabilities of every clique (cached until the potentials change)."""
        if self._beliefs is None:
            self._beliefs = self._calibrate()
        return self._beliefs

    def beliefs(self) -> list[np.ndarray]:
        """Log of :meth:`probabilities` (−inf for impossible cells)."""
        with np.errstate(divide="ignore"):
            return [np.log(p) for p in self.probabilities()]

    def _calibrate(self) -> list[np.ndarray]:
        """Sum-product on the tree with potentials exp(θ_C − max θ_C); messages are rescaled to
        sum 1 (a constant per message cancels when each belief is normalised), so nothing
        overflows.  Downward messages divide the parent's belief by the upward one; where that
        is 0 the child's belief is 0 whatever the quotient, so 0/0 is taken as 0."""
        cl = self.cliques
        belief = []
        for t in self.log_potentials:
            top = np.max(t)
            belief.append(np.exp(t - (top if np.isfinite(top) else 0.0)))
        up: dict[int, np.ndarray] = {}
        for i, parent in reversed(self._order):  # leaves first; loop over cliques
            if parent < 0:
                continue
            sep = [a for a in cl[i] if a in cl[parent]]
            msg = _sum_to(belief[i], cl[i], sep)
            msg = msg / max(float(msg.max()), 1e-300)
            up[i] = msg
            belief[parent] = belief[parent] * expand(msg, sep, cl[parent])
        for i, parent in self._order:  # root first: belief[parent] is final
            if parent < 0:
                continue
            sep = [a for a in cl[i] if a in cl[parent]]
            num = _sum_to(belief[parent], cl[parent], sep)
            with np.errstate(divide="ignore", invalid="ignore"):
                down = np.where(up[i] > 0, num / up[i], 0.0)
            down = down / max(float(down.max()), 1e-300)
            belief[i] = belief[i] * expand(down, sep, cl[i])
        out = []
        for b in belief:
            z = float(b.sum())
            out.append(b / z if z > 0 else b)
        return out

    def marginal(self, attrs: Sequence[int]) -> np.ndarray:
        """Counts (summing to ``total``) of the marginal over ``attrs`` in the given order.

        ``attrs`` must lie inside one clique (the model answers other marginals only by sampling).
        """
        attrs = tuple(int(a) for a in attrs)
        if not attrs:
            return np.array(self.total)
        i = self.clique_of(attrs)
        c = self.cliques[i]
        probs = self.probabilities()[i]
        keep = sorted(attrs)
        out = _sum_to(probs, c, keep)
        return self.total * out.transpose([keep.index(a) for a in attrs])

    def project(self, attrs: Sequence[int]) -> np.ndarray:
        """Counts of the marginal over any ``attrs`` (given order), exactly.

        Inside one clique: a sum of its belief.  Otherwise variable elimination over the
        smallest subtree joining cliques that hold the attributes: each clique contributes
        P(C | separator with its parent), messages keep only the wanted attributes and the
        separators (cost about the cells of one clique times the wanted attributes' cells).
        """
        attrs = tuple(int(a) for a in attrs)
        want = set(attrs)
        if not attrs or any(want <= set(c) for c in self.cliques):
            return self.marginal(attrs)
        root = max(range(len(self.cliques)), key=lambda i: (len(want & set(self.cliques[i])), -i))
        parent = self._rooted(root)
        keep_nodes = {root}
        for a in want - set(self.cliques[root]):
            node = min((i for i, c in enumerate(self.cliques) if a in c), key=lambda i: self._depth(i, parent))
            while node not in keep_nodes:
                keep_nodes.add(node)
                node = parent[node]
        probs = self.probabilities()
        order = sorted(keep_nodes, key=lambda i: -self._depth(i, parent))  # deepest first
        msgs: dict[int, tuple[list[int], np.ndarray]] = {}
        for i in order:  # loop over the subtree's cliques
            c = list(self.cliques[i])
            vars_, arr = c, probs[i]
            if i != root:
                arr = self._conditional(i, parent[i])
            children = [j for j in keep_nodes if parent.get(j) == i]
            out = sorted(want | set(self.cliques[parent[i]]) & set(c)) if i != root else sorted(want)
            needed = set(out).union(*(msgs[j][0] for j in children))
            if len(needed & set(c)) < len(c):  # sum out what no message and no output needs first
                vars_ = [a for a in c if a in needed]
                arr = _sum_to(arr, c, vars_)
            for j in children:
                vars_, arr = _multiply(vars_, arr, *msgs.pop(j))
            keep = [a for a in vars_ if a in out]
            msgs[i] = (keep, _sum_to(arr, vars_, keep))
        keep, arr = msgs[root]
        return self.total * arr.transpose([keep.index(a) for a in attrs])

    def _conditional(self, i: int, p: int) -> np.ndarray:
        """P(C_i | C_i ∩ C_p) over clique i's attributes (0 where the separator has no mass); cached until the
        potentials change (:meth:`project` of many marginals on one model reuses them)."""
        out = self._conditionals.get((i, p))
        if out is None:
            c, probs = list(self.cliques[i]), self.probabilities()[i]
            sep = [a for a in c if a in self.cliques[p]]
            denom = expand(_sum_to(probs, c, sep), sep, c)
            with np.errstate(divide="ignore", invalid="ignore"):
                out = self._conditionals[(i, p)] = np.where(denom > 0, probs / denom, 0.0)
        return out

    def _rooted(self, root: int) -> dict[int, int]:
        adj: dict[int, list[int]] = {i: [] for i in range(len(self.cliques))}
        for i, j in self.edges:
            adj[i].append(j)
            adj[j].append(i)
        parent, frontier = {root: -1}, [root]
        while frontier:
            i = frontier.pop()
            for j in adj[i]:
                if j not in parent:
                    parent[j] = i
                    frontier.append(j)
        return parent

    @staticmethod
    def _depth(i: int, parent: dict[int, int]) -> int:
        d = 0
        while parent[i] >= 0:
            i, d = parent[i], d + 1
        return d

    def clique_marginals(self) -> list[np.ndarray]:
        """Counts of every clique of the tree (each sums to ``total``)."""
        return [self.total * p for p in self.probabilities()]

    # ------------------------------------------------------------------ sampling
    def sample(self, rows: int, *, rng: np.random.Generator, method: str | None = None) -> np.ndarray:
        """``rows`` records as an (rows × d) array of :func:`~dpsynth.models.base.code_dtype` codes.

        ``method`` (default: the model's ``sampling``): ``"iid"``: independent draws from the model.  ``method="systematic"``:
        low-variance allocation (each clique's counts within one of the model's
        along the tree order, the new values spread evenly over the strata of earlier codes).  Calls are independent, so a large sample may be
        drawn in chunks (e.g. ``rows`` split into blocks, each call with the same ``rng``).
        """
        method = self.sampling if method is None else method
        if method not in SAMPLING_METHODS:
            raise ValueError(f"method must be one of {SAMPLING_METHODS}, got {method!r}")
        rows = int(rows)
        codes = np.zeros((rows, len(self.sizes)), dtype=code_dtype(self.sizes))
        if rows == 0:
            return codes
        probabilities = self.probabilities()
        systematic = method == "systematic"
        stratum = np.zeros(rows, dtype=np.int64)  # systematic: rank of each row's codes drawn so far
        done: set[int] = set()
        for i, parent in self._order:  # loop over cliques, vectorised over rows
            c = self.cliques[i]
            sep = [a for a in c if a in done]
            new = [a for a in c if a not in done]
            if not new:
                continue
            probs = probabilities[i].transpose([c.index(a) for a in sep + new])
            cond = probs.reshape(math.prod(self.shape(sep)), math.prod(self.shape(new)))
            group = (np.ravel_multi_index(tuple(codes[:, sep].T.astype(np.int64)), self.shape(sep)) if sep
                     else np.zeros(rows, dtype=np.int64))
            if systematic:
                drawn = _allocate(cond, group, stratum, rng=rng)
                # rows with the same codes so far share a stratum; strata in lexicographic order of the codes
                stratum = np.unique(stratum * cond.shape[1] + drawn, return_inverse=True)[1].reshape(-1)
            else:
                drawn = _draw(cond, group, rng=rng)
            codes[:, new] = np.stack(np.unravel_index(drawn, self.shape(new)), axis=1)
            done.update(new)
        return codes[rng.permutation(rows)]


def _seq(value, what: str) -> list:
    if not isinstance(value, list):
        raise TypeError(f"graphical model: {what} must be a list")
    return value


def _ints(value, what: str) -> list[int]:
    value = _seq(value, what)
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
        raise ValueError(f"graphical model: {what} must hold non-negative integers")
    return [int(v) for v in value]


def _multiply(va: list[int], a: np.ndarray, vb: list[int], b: np.ndarray) -> tuple[list[int], np.ndarray]:
    """Product of two factors over the sorted union of their attributes."""
    union = sorted(set(va) | set(vb))
    return union, expand(a, va, union) * expand(b, vb, union)


def _sum_to(probs: np.ndarray, attrs: Sequence[int], keep: Sequence[int]) -> np.ndarray:
    axes = tuple(i for i, a in enumerate(attrs) if a not in keep)
    return probs.sum(axis=axes) if axes else probs


def _normalised(cond: np.ndarray) -> np.ndarray:
    """Rows of ``cond`` (groups × values) scaled to sum 1; a row with no mass becomes uniform."""
    mass = cond.sum(axis=1, keepdims=True)
    return np.where(mass > 0, cond / np.where(mass > 0, mass, 1.0), 1.0 / cond.shape[1])


def _draw(cond: np.ndarray, group: np.ndarray, *, rng: np.random.Generator) -> np.ndarray:
    """One independent draw per row from row ``group[r]`` of ``cond`` (unnormalised, groups × values).

    The conditional CDFs of all groups are laid end to end (group g occupies [g, g+1)), so one
    ``searchsorted`` serves every row.  Groups with no mass fall back to the uniform distribution.
    """
    n_groups, n_values = cond.shape
    cdf = np.cumsum(_normalised(cond), axis=1)
    cdf[:, -1] = 1.0
    flat = (cdf + np.arange(n_groups)[:, None]).reshape(-1)
    target = group + np.minimum(rng.random(group.size), 1.0 - 1e-12)
    idx = np.searchsorted(flat, target, side="right") - group * n_values
    return np.clip(idx, 0, n_values - 1)


def _allocate(cond: np.ndarray, group: np.ndarray, stratum: np.ndarray, *, rng: np.random.Generator) -> np.ndarray:
    """Systematic allocation: values for the rows, group by group, in two steps (vectorised).

    1. *How many*: group g's N_g rows get value v floor(N_g·F_v + u_g) − floor(N_g·F_{v−1} + u_g) times
       (F the group's conditional CDF, u_g uniform on [0, 1)): the model's expected count N_g·p_v rounded
       up or down, the expected count exactly on average, the group's total N_g exactly.
    2. *Which rows*: the group's rows sorted by ``stratum`` (the codes drawn so far, random order within
       a stratum) take the values in an evenly spread sequence: the c_v copies of value v at positions
       (j + s_v)/c_v, j = 0 … c_v − 1 (s_v uniform on [0, 1)), all values' copies merged by position.  Any
       run of consecutive rows, hence every stratum of earlier codes, receives each value in proportion
       to its count (within about one), so the rows' joint counts of new and earlier columns are close
       to the model's (independent given the group) rather than a random pairing's.
    """
    n_groups, n_values = cond.shape
    rows = group.size
    size = np.bincount(group, minlength=n_groups).astype(float)
    cdf = np.cumsum(_normalised(cond), axis=1)
    cdf[:, -1] = 1.0
    offset = rng.random(n_groups)[:, None]
    edges = np.floor(np.concatenate([offset, size[:, None] * cdf + offset], axis=1))
    counts = np.diff(edges, axis=1).astype(np.int64).reshape(-1)  # (group, value) cells, flattened
    cell = np.repeat(np.arange(counts.size), counts)  # one entry per row, grouped by cell
    within = np.arange(rows) - np.repeat(np.cumsum(counts) - counts, counts)
    position = (within + rng.random(counts.size)[cell]) / counts[cell]
    values = cell[np.lexsort((position, cell // n_values))] % n_values
    out = np.empty(rows, dtype=np.int64)
    out[np.lexsort((rng.random(rows), stratum, group))] = values
    return out
