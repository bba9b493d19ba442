"""A distribution over the domain kept as a product of independent factors (MWEM paper §4).

The full joint distribution of a table with many columns is astronomically
large (Adult: about 10¹⁴ cells).  Hardt, Ligett & McSherry (2012, §4) observe
that multiplicative weights started from a product distribution stays a
product over groups of attributes that no measured query connects:
partition the attributes into disjoint parts D₁ … D_k such that every
measured query involves one part only, and the weights factor as
A(x) = n · Π_j A^j(x_j), each A^j a small distribution over its part.  A
linear query that factorizes over attributes (a marginal cell, a whole
marginal, a range) is then answered by summing each factor over its own part
(§4, the displayed product of per-part sums), never by enumerating D.

Public API (used by MWEM and by other algorithms that turn released noisy
marginals into rows, e.g. iReduct's synthesis):

``FactoredModel(sizes, total, max_factor_cells=...)``
    The product-of-factors model: ``sizes[i]`` is the number of codes of
    attribute i, ``total`` the mass n (a public or already-noised row count).
    Starts uniform; ``FactoredModel.independent(sizes, total, one_way)`` starts
    from per-attribute distributions instead.
``model.project(attrs) -> ndarray``
    The model's marginal counts over ``attrs`` (in that order; shape
    ``sizes[attrs]``; sums to ``total``), computed from the factors touched.
``model.would_exceed(attrs) -> bool``
    Whether measuring ``attrs`` would merge factors into one with more than
    ``max_factor_cells`` cells.  Depends only on public facts (the domain and
    which queries were measured), so it may steer selection for free.
``model.merge(attrs)``
    Merges (outer product) the factors touched by ``attrs`` into one;
    raises :class:`FactorTooLarge` beyond the cap.
``model.mw_update(measurement)``
    One multiplicative-weights step (paper Figure 1, step 3) for a
    :class:`Measurement`: a whole noisy marginal (cuboid, §3.3) or a set of
    linear queries over the marginal's cells (cell queries, ranges, §3.1).
``model.mw_passes(measurements, passes)``
    The §2.3.2 improvement: apply the update for every measurement, in order,
    ``passes`` times.
``model.sample(rows, rng=...) -> (rows × d) codes``
    Independent draws, factor by factor, each factor vectorized over rows
    (narrowest unsigned dtype, :func:`dpsynth.models.base.code_dtype`).
``model.probability(weights)``, ``model.condition(weights)``, ``model.to_arrays()``, ``FactoredModel.from_arrays``
    The released-model interface of :mod:`dpsynth.models.base` (kind ``factored``).
``fit_marginals(domain, measurements, total, *, passes, max_factor_cells, init, rng=None)``
    Fits a model to a fixed list of :class:`~dpsynth.algorithms.base.NoisyMarginal`
    by MW passes, starting from the noisy 1-way projections (``init="one-way"``,
    default) or uniform (``init="uniform"``).  A marginal whose merge would
    exceed the cap is not dropped: it is fitted through its projections onto
    each existing group (so its lower-order information still counts), and its
    index is listed in ``model.unmerged``.  Post-processing only: no privacy cost.

Example::

    from dpsynth.models.factored import fit_marginals
    model = fit_marginals(domain, noisy_marginals, total=n, passes=20, max_factor_cells=1_000_000)
    codes = model.sample(rows, rng=rng)      # feed to discretize.decode

All probabilities are float64 and each factor sums to 1; ``project`` scales by
``total``.  The MW step uses the paper's learning rate: for a measured count m
of query q, A(x) ∝ A(x)·exp(q(x)·(m − q(A))/(2n)).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from dpsynth.models.base import ZeroProbability, check_finite_probs, check_weights, code_dtype

__all__ = [
    "DEFAULT_MAX_FACTOR_CELLS",
    "FactorTooLarge",
    "FactoredModel",
    "Measurement",
    "alias_table",
    "fit_marginals",
    "one_way_from_marginals",
    "soft_threshold",
]

DEFAULT_MAX_FACTOR_CELLS = 1_000_000
"""Default cap on the cells of one factor (8 MB of float64)."""

_MIX = 1e-3
"""Weight of the uniform distribution mixed into noisy 1-way starting points, so no value has
probability 0 (multiplicative weights can never revive a zero)."""


_STAGE_MIN_ATTRS, _STAGE_MIN_CELLS = 6, 4096
"""Factors at least this wide and large answer projections in two stages (see ``_Factor``)."""


class FactorTooLarge(ValueError):
    """Merging would create a factor beyond ``max_factor_cells``."""


@dataclass(frozen=True)
class Measurement:
    """A noisy answer to be fitted by multiplicative weights.

    ``attrs``: attribute indices the queries depend on.  ``queries is None``:
    a whole marginal (cuboid) and ``values`` has shape ``sizes[attrs]`` (noisy
    counts of every cell).  Otherwise ``queries`` has shape
    ``(k, *sizes[attrs])`` (each query's weight q(x) ∈ [−1, 1] per cell, e.g.
    0/1 indicators of a cell or a range) and ``values`` has shape ``(k,)``.

    ``tolerance`` (≥ 0, counts): residuals m − q(A) within ±tolerance count as
    agreement and move nothing; larger ones are shrunk towards 0 by it (soft
    thresholding), the paper's "as long as any measurements do not agree with
    the approximating distribution (within error)" (§2.3.2).  0 = plain MW.
    """

    attrs: tuple[int, ...]
    values: np.ndarray
    queries: np.ndarray | None = None
    tolerance: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "attrs", tuple(int(a) for a in self.attrs))
        object.__setattr__(self, "values", np.asarray(self.values, dtype=float))
        if self.queries is not None:
            q = np.asarray(self.queries, dtype=float)
            object.__setattr__(self, "queries", q)
            if q.shape[0] != self.values.size or self.values.ndim != 1:
                raise ValueError("Measurement: queries must have shape (k, ...) and values shape (k,)")
        if len(set(self.attrs)) != len(self.attrs):
            raise ValueError("Measurement: attributes must be distinct")
        if not self.tolerance >= 0:
            raise ValueError("Measurement: tolerance must be >= 0")


class _Factor:
    """One factor: sorted attribute indices and a normalised probability array.

    Projections are cached until the factor changes.  A large factor answers
    ``marginal(sub, staged=True)`` in two stages: first onto (sub ∩ head) ∪ tail,
    where ``tail`` is a trailing block of attributes of about sqrt(cells) cells,
    then onto ``sub``.  Candidates that share their head part share the first,
    expensive stage (all 3-way marginals of a 16-attribute binary factor: 93
    full-factor reductions instead of 560).
    """

    __slots__ = ("_cache", "_sampler", "attrs", "probs", "tail")

    def __init__(self, attrs: tuple[int, ...], probs: np.ndarray):
        self.attrs = attrs
        self.probs = probs
        self._cache: dict[tuple[int, ...], np.ndarray] = {}
        self._sampler = None
        self.tail: tuple[int, ...] = ()
        if len(attrs) >= _STAGE_MIN_ATTRS and probs.size >= _STAGE_MIN_CELLS:
            cells, k = 1, len(attrs)
            while k > 1 and cells * probs.shape[k - 1] <= math.isqrt(probs.size):
                k -= 1
                cells *= probs.shape[k]
            self.tail = attrs[k:] if k < len(attrs) - 1 else ()

    def changed(self) -> None:
        self._cache.clear()
        self._sampler = None

    def sampler(self, dtype) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
        """(alias probabilities, aliases, per attribute the code of every cell), cached."""
        if self._sampler is None or self._sampler[2][0].dtype != dtype:
            prob, alias = alias_table(self.probs.reshape(-1))
            cells = np.unravel_index(np.arange(self.probs.size), self.probs.shape)
            self._sampler = (prob, alias, [c.astype(dtype) for c in cells])
        return self._sampler

    def marginal(self, sub: tuple[int, ...], *, staged: bool = False) -> np.ndarray:
        """Probabilities over ``sub`` (a subset of ``attrs`` in ``attrs`` order)."""
        if sub == self.attrs:
            return self.probs
        hit = self._cache.get(sub)
        if hit is not None:
            return hit
        source, source_attrs = self.probs, self.attrs
        if staged and self.tail:
            key = tuple(a for a in sub if a not in self.tail) + self.tail
            if len(key) > len(sub):
                source = self._cache.get(key)
                if source is None:
                    source = self._cache[key] = _reduce(self.probs, [self.attrs.index(a) for a in key])
                source_attrs = key
        out = _reduce(source, [source_attrs.index(a) for a in sub])
        if out.size * 4 <= self.probs.size:  # cache only projections much smaller than the factor
            self._cache[sub] = out
        return out


def alias_table(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walker's alias table of the distribution ``p`` (K cells), built without a loop over cells.

    Sampling: draw x uniform in [0, K), i = ⌊x⌋; return i if x − i < prob[i], else alias[i].
    Then P(c) = (prob[c] + Σ_{b: alias[b] = c} (1 − prob[b])) / K = p[c].

    Construction (Vose's sequential pairing written with prefix sums): with q = K·p, the
    "light" cells (q < 1) need 1 − q each, the "heavy" ones (q ≥ 1) can give q − 1.  Lay the
    lights' deficits end to end (cumulative D) and the heavies' surpluses likewise
    (cumulative E).  Processing lights in order, each takes its whole deficit from the heavy
    that is current when it starts: the first j with E_j ≥ D_{i−1}.  Heavy j is exhausted by
    the first light ending beyond E_j, at x_j = min{D_i > E_j}; it then needs x_j − E_j
    itself, which the next heavy gives (its alias).  Both are one ``searchsorted`` each.
    """
    p = np.asarray(p, dtype=float)
    K = p.size
    q = p * (K / p.sum())
    prob = np.ones(K)
    alias = np.arange(K)
    light = np.flatnonzero(q < 1.0)
    heavy = np.flatnonzero(q >= 1.0)
    if light.size == 0 or heavy.size == 0:
        return prob, alias
    D = np.cumsum(1.0 - q[light])
    E = np.cumsum(q[heavy] - 1.0)
    start = np.concatenate([[0.0], D[:-1]])
    prob[light] = q[light]
    alias[light] = heavy[np.minimum(np.searchsorted(E, start, side="left"), heavy.size - 1)]
    end = np.searchsorted(D, E, side="right")  # the light that exhausts each heavy (D.size: none)
    need = np.where(end < D.size, D[np.minimum(end, D.size - 1)] - E, 0.0)
    has_next = np.arange(heavy.size) < heavy.size - 1
    need = np.where(has_next, np.clip(need, 0.0, 1.0), 0.0)
    prob[heavy] = 1.0 - need
    alias[heavy[:-1]] = heavy[1:]
    return prob, alias


def _reduce(arr: np.ndarray, keep: list[int]) -> np.ndarray:
    """Sum ``arr`` over every axis not in ``keep`` (ascending).

    ``np.einsum`` with integer labels is 2-4x faster than ``ndarray.sum`` over
    many interleaved axes of a high-dimensional array (measured on 16-d binary
    and 7-d Adult factors); it accepts at most 52 labels.
    """
    if arr.ndim <= 52:
        return np.einsum(arr, list(range(arr.ndim)), keep)
    return arr.sum(axis=tuple(i for i in range(arr.ndim) if i not in keep))


class FactoredModel:
    """n times a product of independent distributions over disjoint attribute groups (§4)."""

    kind = "factored"

    def __init__(self, sizes: Sequence[int], total: float, *, max_factor_cells: int = DEFAULT_MAX_FACTOR_CELLS):
        self.sizes = tuple(int(s) for s in sizes)
        if any(s < 1 for s in self.sizes):
            raise ValueError("every attribute needs at least one value")
        if not (math.isfinite(total) and total > 0):
            raise ValueError(f"total must be a finite number > 0, got {total!r}")
        if int(max_factor_cells) < 1:
            raise ValueError(f"max_factor_cells must be >= 1, got {max_factor_cells!r}")
        self.total = float(total)
        self.max_factor_cells = int(max_factor_cells)
        self.factors: list[_Factor] = [
            _Factor((a,), np.full(s, 1.0 / s)) for a, s in enumerate(self.sizes)
        ]
        self._owner = list(range(len(self.sizes)))  # attribute -> index in self.factors
        self.unmerged: list[int] = []  # filled by fit_marginals

    # -- construction ---------------------------------------------------------
    @classmethod
    def independent(
        cls,
        sizes: Sequence[int],
        total: float,
        one_way: Sequence[np.ndarray | None],
        *,
        max_factor_cells: int = DEFAULT_MAX_FACTOR_CELLS,
    ) -> FactoredModel:
        """Product of per-attribute distributions (``None``: uniform).

        Each vector is clipped at 0, normalised and mixed with weight 10⁻³ with
        the uniform distribution, so that no value starts at probability 0.
        """
        model = cls(sizes, total, max_factor_cells=max_factor_cells)
        for a, est in enumerate(one_way):
            if est is not None:
                model.factors[model._owner[a]].probs = _starting_point(est, model.sizes[a])
        return model

    def copy(self) -> FactoredModel:
        other = FactoredModel.__new__(FactoredModel)
        other.sizes, other.total, other.max_factor_cells = self.sizes, self.total, self.max_factor_cells
        other.factors = [_Factor(f.attrs, f.probs.copy()) for f in self.factors]
        other._owner = list(self._owner)
        other.unmerged = list(self.unmerged)
        return other

    # -- structure --------------------------------------------------------------
    @property
    def groups(self) -> list[tuple[int, ...]]:
        """Attribute groups of the factors (each sorted)."""
        return [f.attrs for f in self.factors]

    def cells_after_merge(self, attrs: Iterable[int]) -> int:
        """Cells of the factor that measuring ``attrs`` would leave them in."""
        touched = {self._owner[a] for a in attrs}
        return math.prod(self.factors[i].probs.size for i in touched)

    def would_exceed(self, attrs: Iterable[int]) -> bool:
        """True when measuring ``attrs`` would need a factor above ``max_factor_cells``."""
        return self.cells_after_merge(attrs) > self.max_factor_cells

    def merge(self, attrs: Iterable[int]) -> int:
        """Merge the factors touched by ``attrs`` (outer product); returns the factor's index."""
        attrs = tuple(attrs)
        touched = sorted({self._owner[a] for a in attrs})
        if len(touched) == 1:
            return touched[0]
        cells = self.cells_after_merge(attrs)
        if cells > self.max_factor_cells:
            raise FactorTooLarge(
                f"merging attributes {attrs} needs a factor of {cells} cells, "
                f"more than max_factor_cells={self.max_factor_cells}"
            )
        parts = [self.factors[i] for i in touched]
        joint_attrs = tuple(a for f in parts for a in f.attrs)
        probs = functools.reduce(np.multiply.outer, [f.probs for f in parts])
        order = np.argsort(joint_attrs, kind="stable")
        merged = _Factor(tuple(sorted(joint_attrs)), np.ascontiguousarray(probs.transpose(order)))
        keep = [f for i, f in enumerate(self.factors) if i not in set(touched)]
        self.factors = keep + [merged]
        self._reindex()
        return len(self.factors) - 1

    def _reindex(self) -> None:
        for i, f in enumerate(self.factors):
            for a in f.attrs:
                self._owner[a] = i

    # -- answers ----------------------------------------------------------------
    def project(self, attrs: Sequence[int]) -> np.ndarray:
        """Model counts of the marginal over ``attrs`` (given order), by projecting factors."""
        attrs = tuple(int(a) for a in attrs)
        if not attrs:
            return np.array(self.total)
        if len(set(attrs)) != len(attrs):
            raise ValueError("attributes of a marginal must be distinct")
        want = set(attrs)
        pieces, order = [], []
        for i in dict.fromkeys(self._owner[a] for a in attrs):  # touched factors, first-seen order
            f = self.factors[i]
            sub = tuple(a for a in f.attrs if a in want)
            pieces.append(f.marginal(sub, staged=True))
            order.extend(sub)
        joint = functools.reduce(np.multiply.outer, pieces)
        perm = [order.index(a) for a in attrs]
        return self.total * joint.transpose(perm)

    def answer(self, m: Measurement) -> np.ndarray:
        """The model's answers to a measurement's queries (same shape as ``m.values``)."""
        marg = self.project(m.attrs)
        if m.queries is None:
            return marg
        return m.queries.reshape(m.queries.shape[0], -1) @ marg.reshape(-1)

    # -- multiplicative weights ---------------------------------------------------
    def mw_update(self, m: Measurement) -> None:
        """One MW step (Figure 1 step 3; §3.3 for cuboids), all queries of ``m`` at once.

        A(x) ∝ A(x) · exp(Σ_j q_j(x) (m_j − q_j(A)) / (2n)); for a cuboid the
        queries are the cells' indicators, so the exponent of x is
        (m_c − A_c)/(2n) for the cell c containing x.  Merges factors first.
        """
        fi = self.merge(m.attrs)
        f = self.factors[fi]
        local = tuple(a for a in f.attrs if a in set(m.attrs))  # m.attrs in factor order
        p = f.marginal(local)
        perm = [m.attrs.index(a) for a in local]
        if m.queries is None:
            err = soft_threshold(m.values.transpose(perm) - self.total * p, m.tolerance)
            expo = err / (2.0 * self.total)
        else:
            q = m.queries.transpose([0, *[1 + j for j in perm]])
            err = soft_threshold(m.values - self.total * (q.reshape(q.shape[0], -1) @ p.reshape(-1)), m.tolerance)
            expo = np.tensordot(err, q, axes=(0, 0)) / (2.0 * self.total)
        w = np.exp(expo - expo.max())
        w /= float(np.sum(p * w))  # normalise without another pass over the factor
        shape = [self.sizes[a] if a in set(local) else 1 for a in f.attrs]
        f.probs *= w.reshape(shape)
        f.changed()

    def mw_passes(self, measurements: Sequence[Measurement], passes: int) -> None:
        """Apply :meth:`mw_update` for every measurement, in order, ``passes`` times (§2.3.2)."""
        for _ in range(int(passes)):
            for m in measurements:
                self.mw_update(m)
        self.renormalise()

    def renormalise(self) -> None:
        """Rescale every factor to sum to 1 exactly (removes floating-point drift)."""
        for f in self.factors:
            f.probs /= f.probs.sum()
            f.changed()

    # -- sampling ----------------------------------------------------------------
    def sample(self, rows: int, *, rng: np.random.Generator) -> np.ndarray:
        """``rows`` independent records drawn from the model, as a (rows × d) array of
        :func:`~dpsynth.models.base.code_dtype` codes (column-major: each column contiguous).

        Each factor draws its cells by Walker's alias method (:func:`alias_table`; O(1) per
        row after an O(cells) table kept until the factor changes) and maps them to the
        codes of its attributes through a per-cell lookup table.
        """
        rows = int(rows)
        codes = np.empty((rows, len(self.sizes)), dtype=code_dtype(self.sizes), order="F")
        for f in self.factors:  # loop over factors; vectorized over rows
            prob, alias, cell_codes = f.sampler(codes.dtype)
            x = rng.random(rows) * prob.size
            cell = np.minimum(x.astype(np.int64), prob.size - 1)
            cell = np.where(x - cell < prob[cell], cell, alias[cell])
            for pos, a in enumerate(f.attrs):
                codes[:, a] = cell_codes[pos][cell]
        return codes

    # -- the released-model interface (dpsynth.models.base.Model) ----------------
    def _factor_weights(self, f: _Factor, weights) -> np.ndarray | None:
        """The weights of ``f``'s attributes as one array broadcastable against ``f.probs``."""
        out = None
        for pos, a in enumerate(f.attrs):
            if weights[a] is None:
                continue
            shape = [1] * len(f.attrs)
            shape[pos] = self.sizes[a]
            w = weights[a].reshape(shape)
            out = w if out is None else out * w
        return out

    def probability(self, weights) -> float:
        """Σₓ p(x)·Πₐ wₐ(xₐ): a product over factors of each factor's weighted sum."""
        weights = check_weights(weights, self.sizes)
        prob = 1.0
        for f in self.factors:
            w = self._factor_weights(f, weights)
            if w is not None:
                prob *= float(np.sum(f.probs * w))
        return prob

    def condition(self, weights) -> FactoredModel:
        """p'(x) ∝ p(x)·Πₐ wₐ(xₐ), exactly: the weights of attributes in one factor
        multiply that factor only, because the factors are independent (§4)."""
        weights = check_weights(weights, self.sizes)
        other = self.copy()
        mass = 1.0
        for f in other.factors:
            w = self._factor_weights(f, weights)
            if w is None:
                continue
            probs = f.probs * w
            z = float(probs.sum())
            if not z > 0:
                raise ZeroProbability("the condition has probability 0 under the model")
            f.probs = probs / z
            f.changed()
            mass *= z
        other.total = self.total * mass
        return other

    def to_arrays(self) -> tuple[dict, dict[str, np.ndarray]]:
        meta = {
            "sizes": list(self.sizes),
            "total": self.total,
            "max_factor_cells": self.max_factor_cells,
            "factors": [list(f.attrs) for f in self.factors],
            "unmerged": list(self.unmerged),
        }
        return meta, {f"factor_{i}": np.ascontiguousarray(f.probs, dtype=np.float64)
                      for i, f in enumerate(self.factors)}

    @classmethod
    def from_arrays(cls, meta, arrays) -> FactoredModel:
        """Rebuild from :meth:`to_arrays`; ``ValueError`` unless the factors partition the
        attributes and every factor is a probability array of the right shape."""
        if not isinstance(meta, dict) or set(meta) != {"sizes", "total", "max_factor_cells", "factors", "unmerged"}:
            raise ValueError("factored model: unexpected metadata keys")
        sizes = _int_list(meta["sizes"], "sizes")
        groups = [tuple(_int_list(g, "factors")) for g in _list(meta["factors"], "factors")]
        if sorted(a for g in groups for a in g) != list(range(len(sizes))) or any(list(g) != sorted(g) for g in groups):
            raise ValueError("factored model: the factors must partition the attributes (each sorted)")
        if set(arrays) != {f"factor_{i}" for i in range(len(groups))}:
            raise ValueError("factored model: the arrays do not match the factors")
        total, cap = meta["total"], meta["max_factor_cells"]
        if isinstance(total, bool) or not isinstance(total, (int, float)) or isinstance(cap, bool) or not isinstance(cap, int):
            raise TypeError("factored model: total must be a number and max_factor_cells an integer")
        model = cls(sizes, float(total), max_factor_cells=cap)
        model.factors = [
            _Factor(g, check_finite_probs(arrays[f"factor_{i}"], f"factor {i}", tuple(sizes[a] for a in g)))
            for i, g in enumerate(groups)
        ]
        model._reindex()
        model.unmerged = _int_list(meta["unmerged"], "unmerged")
        return model

    def largest_factor_cells(self) -> int:
        return max(f.probs.size for f in self.factors)


def _list(value, what: str) -> list:
    if not isinstance(value, list):
        raise TypeError(f"factored model: {what} must be a list")
    return value


def _int_list(value, what: str) -> list[int]:
    value = _list(value, what)
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
        raise ValueError(f"factored model: {what} must hold non-negative integers")
    return [int(v) for v in value]


def soft_threshold(err, tol: float) -> np.ndarray:
    """Soft thresholding: sign(e)·max(|e| − tol, 0)."""
    return err if tol == 0 else np.sign(err) * np.maximum(np.abs(err) - tol, 0.0)


def _starting_point(est: np.ndarray, size: int) -> np.ndarray:
    p = np.clip(np.asarray(est, dtype=float).reshape(-1), 0.0, None)
    if p.shape != (size,):
        raise ValueError(f"1-way estimate has {p.size} values, expected {size}")
    p = p / p.sum() if p.sum() > 0 else np.full(size, 1.0 / size)
    return (1.0 - _MIX) * p + _MIX / size


def one_way_from_marginals(n_attrs: int, marginals) -> list[np.ndarray | None]:
    """Per attribute, the average 1-way projection of the noisy marginals containing it (or None)."""
    sums: list[np.ndarray | None] = [None] * n_attrs
    counts = [0] * n_attrs
    for m in marginals:
        values = np.asarray(m.values, dtype=float)
        for pos, a in enumerate(m.attrs):
            other = tuple(i for i in range(len(m.attrs)) if i != pos)
            proj = values.sum(axis=other) if other else values
            sums[a] = proj if sums[a] is None else sums[a] + proj
            counts[a] += 1
    return [None if s is None else s / c for s, c in zip(sums, counts)]


def fit_marginals(
    domain,
    measurements,
    total: float,
    *,
    passes: int = 20,
    max_factor_cells: int = DEFAULT_MAX_FACTOR_CELLS,
    init: str = "one-way",
    rng: np.random.Generator | None = None,
) -> FactoredModel:
    """Fit a :class:`FactoredModel` to fixed noisy marginals by ``passes`` MW passes.

    ``domain``: a :class:`~dpsynth.data.schema.Domain` (or a sequence of attribute
    sizes).  ``measurements``: objects with ``attrs`` and ``values`` (e.g.
    :class:`~dpsynth.algorithms.base.NoisyMarginal`; values are noisy counts of
    the marginal's cells, summing to about ``total``).  ``init="one-way"``
    starts from the average noisy 1-way projections, ``"uniform"`` from the
    uniform distribution.  Marginals are merged in the given order; one that
    would exceed ``max_factor_cells`` is replaced by its projections onto the
    existing groups it touches, and its index is recorded in ``model.unmerged``.
    Deterministic: ``rng`` is accepted for interface symmetry and not used.
    """
    sizes = tuple(domain.sizes) if hasattr(domain, "sizes") else tuple(int(s) for s in domain)
    measurements = list(measurements)
    if init not in ("one-way", "uniform"):
        raise ValueError(f"init must be 'one-way' or 'uniform', got {init!r}")
    if int(passes) < 1:
        raise ValueError(f"passes must be >= 1, got {passes!r}")
    if init == "one-way":
        model = FactoredModel.independent(
            sizes, total, one_way_from_marginals(len(sizes), measurements), max_factor_cells=max_factor_cells
        )
    else:
        model = FactoredModel(sizes, total, max_factor_cells=max_factor_cells)
    fitted: list[Measurement] = []
    for idx, nm in enumerate(measurements):
        attrs = tuple(int(a) for a in nm.attrs)
        values = np.asarray(nm.values, dtype=float).reshape(tuple(sizes[a] for a in attrs))
        if not model.would_exceed(attrs):
            model.merge(attrs)
            fitted.append(Measurement(attrs, values))
            continue
        model.unmerged.append(idx)
        groups: dict[int, list[int]] = {}
        for pos, a in enumerate(attrs):
            groups.setdefault(model._owner[a], []).append(pos)
        for positions in groups.values():
            other = tuple(i for i in range(len(attrs)) if i not in positions)
            fitted.append(Measurement(tuple(attrs[i] for i in positions), values.sum(axis=other)))
    model.mw_passes(fitted, passes)
    return model
