"""MWEM's candidate query classes (the set Q of Figure 1): cuboids, cells, ranges and linear queries."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

from dpsynth.algorithms.base import AlgorithmContext
from dpsynth.algorithms.mwem.params import _NOTHING_TO_QUERY, Params
from dpsynth.errors import ConfigError
from dpsynth.models.factored import FactoredModel

Query = tuple[tuple[int, ...], np.ndarray, "np.ndarray | None", str]
"""What measuring a selected candidate needs: (attributes, true answers, query weights over the attributes'
domain with a leading axis of 1 or ``None`` for a whole marginal, name in the ledger and report)."""


class QueryFamily(ABC):
    """One class of candidate queries, the interface the rounds use (:func:`~dpsynth.algorithms.mwem.core.fit`).

    Candidates are numbered 0 … ``len(family)`` − 1 and grouped by the attributes they read: a group's
    scores come from one projection of the model.  ``kind`` names the class in the report; ``l1`` and
    ``l2`` are the sensitivities of the class's scores and measurements (the exponential mechanism uses
    the largest ``l1`` of the classes present).  The defaults of :meth:`value_range`,
    :meth:`sensitivities` and :meth:`integral` are those of counting queries; a class whose queries
    differ overrides them.
    """

    kind: ClassVar[str]
    l1: float
    l2: float

    @abstractmethod
    def __len__(self) -> int:
        """Number of candidate queries."""

    @abstractmethod
    def group_attrs(self) -> list[tuple[int, ...]]:
        """The attributes of each group."""

    @abstractmethod
    def group_of(self) -> np.ndarray:
        """The group of each candidate."""

    @abstractmethod
    def scores(self, model: FactoredModel, groups: np.ndarray) -> np.ndarray:
        """|q(A) − q(B)| per candidate (Figure 1, step 1), computed for the groups where ``groups`` is true."""

    @abstractmethod
    def query(self, i: int) -> Query:
        """Candidate ``i`` as measured: see :data:`Query`."""

    def value_range(self, i: int) -> tuple[float, float]:
        """Bounds (low, high) of query i's q(x): its answer lies in [n·low, n·high]; [0, 1] for counts."""
        return 0.0, 1.0

    def sensitivities(self, i: int) -> tuple[float, float]:
        """(L1, L2) sensitivity of measuring query i: the class's."""
        return self.l1, self.l2

    def integral(self, i: int) -> bool:
        """Whether query i's answer on counts is an integer (it is for counting queries)."""
        return True


class _Cuboids(QueryFamily):
    """One candidate per workload marginal (§3.3)."""

    kind = "cuboid"

    def __init__(self, ctx: AlgorithmContext, bias: bool):
        self.attrs = list(ctx.workload)
        self.true = ctx.counts.marginals(self.attrs)
        self.cells = np.array([t.size for t in self.true], dtype=float)
        self.bias = bias
        self.names = ["marginal(" + ", ".join(ctx.domain.names[a] for a in m) + ")" for m in self.attrs]
        self.l1 = ctx.neighbouring.histogram_l1
        self.l2 = ctx.neighbouring.histogram_l2

    def __len__(self) -> int:
        return len(self.attrs)

    def group_attrs(self) -> list[tuple[int, ...]]:
        return self.attrs

    def group_of(self) -> np.ndarray:
        return np.arange(len(self.attrs))

    def scores(self, model: FactoredModel, groups: np.ndarray) -> np.ndarray:
        out = np.zeros(len(self.attrs))
        for g in np.flatnonzero(groups):  # loop over marginals, vectorized over cells
            out[g] = np.abs(model.project(self.attrs[g]) - self.true[g]).sum()
        return out - self.cells if self.bias else out

    def query(self, i: int):
        return self.attrs[i], self.true[i], None, self.names[i]


class _Cells(QueryFamily):
    """Every cell of every workload marginal is a counting query."""

    kind = "cell"

    def __init__(self, ctx: AlgorithmContext):
        self.attrs = list(ctx.workload)
        self.true = ctx.counts.marginals(self.attrs)
        sizes = np.array([t.size for t in self.true])
        self.offsets = np.concatenate([[0], np.cumsum(sizes)])
        self.domain = ctx.domain
        self.l1 = self.l2 = ctx.neighbouring.count_sensitivity

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def group_attrs(self) -> list[tuple[int, ...]]:
        return self.attrs

    def group_of(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.attrs)), np.diff(self.offsets))

    def scores(self, model: FactoredModel, groups: np.ndarray) -> np.ndarray:
        out = np.zeros(len(self))
        for g in np.flatnonzero(groups):
            lo, hi = self.offsets[g], self.offsets[g + 1]
            out[lo:hi] = np.abs(model.project(self.attrs[g]) - self.true[g]).reshape(-1)
        return out

    def query(self, i: int):
        g = int(np.searchsorted(self.offsets, i, side="right") - 1)
        attrs, true = self.attrs[g], self.true[g]
        cell = np.unravel_index(i - self.offsets[g], true.shape)
        q = np.zeros((1, *true.shape))
        q[(0, *cell)] = 1.0
        labels = [self.domain.columns[a].labels()[c] for a, c in zip(attrs, cell)]
        name = "cell(" + ", ".join(f"{self.domain.names[a]}={v}" for a, v in zip(attrs, labels)) + ")"
        return attrs, np.array([float(true[cell])]), q, name


class _Ranges(QueryFamily):
    """Range queries from ``workload.ranges`` (§3.1)."""

    kind = "range"

    def __init__(self, ctx: AlgorithmContext, sets):
        self.sets = sets
        self.true = [rq.answers(ctx.counts.marginal(rq.attrs)) for rq in sets]
        self.offsets = np.concatenate([[0], np.cumsum([len(rq) for rq in sets])])
        self.domain = ctx.domain
        self.l1 = self.l2 = ctx.neighbouring.count_sensitivity

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def group_attrs(self) -> list[tuple[int, ...]]:
        return [rq.attrs for rq in self.sets]

    def group_of(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.sets)), np.diff(self.offsets))

    def scores(self, model: FactoredModel, groups: np.ndarray) -> np.ndarray:
        out = np.zeros(len(self))
        for g in np.flatnonzero(groups):
            rq = self.sets[g]
            out[self.offsets[g] : self.offsets[g + 1]] = np.abs(rq.answers(model.project(rq.attrs)) - self.true[g])
        return out

    def query(self, i: int):
        g = int(np.searchsorted(self.offsets, i, side="right") - 1)
        rq, j = self.sets[g], i - self.offsets[g]
        q = rq.indicator(j, self.domain.shape(rq.attrs))[None]
        return rq.attrs, np.array([self.true[g][j]]), q, rq.describe(j, self.domain)


class _Linear(QueryFamily):
    """General linear queries q: D → [−1, 1] from ``workload.linear`` (§2), grouped by support.

    Score |q(A) − q(B)| (Figure 1 step 1) at the largest sensitivity over the queries
    (:meth:`~dpsynth.privacy.neighbouring.Neighbouring.linear_sensitivity`), one Laplace (or Gaussian)
    draw per selected query at that query's own sensitivity (step 2), and the MW update with the query's weights q(x) (step 3).  Answers
    on a table of counts are integers only when every weight is −1, 0 or 1: otherwise the measurement
    uses continuous noise (integer noise on a non-integer answer would not hide it).
    """

    kind = "linear"

    def __init__(self, ctx: AlgorithmContext, linear):
        self.sets = linear.sets
        self.true = [s.answers(ctx.counts.marginal(s.attrs)) for s in self.sets]
        self.offsets = np.concatenate([[0], np.cumsum([len(s) for s in self.sets])])
        self.domain = ctx.domain
        self.low = np.concatenate([s.low for s in self.sets])
        self.high = np.concatenate([s.high for s in self.sets])
        nb = ctx.neighbouring
        self.sens = np.array([nb.linear_sensitivity(lo, hi) for lo, hi in zip(self.low, self.high)])
        self.l1 = self.l2 = float(self.sens.max())  # the score's sensitivity: the largest over the queries
        self.integer_weights = np.concatenate([np.all(s.weights == np.rint(s.weights), axis=1) for s in self.sets])

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def group_attrs(self) -> list[tuple[int, ...]]:
        return [s.attrs for s in self.sets]

    def group_of(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.sets)), np.diff(self.offsets))

    def scores(self, model: FactoredModel, groups: np.ndarray) -> np.ndarray:
        out = np.zeros(len(self))
        for g in np.flatnonzero(groups):  # loop over supports, vectorized over their queries
            s = self.sets[g]
            out[self.offsets[g] : self.offsets[g + 1]] = np.abs(s.answers(model.project(s.attrs)) - self.true[g])
        return out

    def query(self, i: int):
        g = int(np.searchsorted(self.offsets, i, side="right") - 1)
        s, j = self.sets[g], i - self.offsets[g]
        q = s.weights[j].reshape((1, *self.domain.shape(s.attrs)))
        return s.attrs, np.array([self.true[g][j]]), q, f"linear({s.names[j]})"

    def value_range(self, i: int) -> tuple[float, float]:
        """Bounds of q(x) for query i: its answer lies in [n·low, n·high]."""
        return float(self.low[i]), float(self.high[i])

    def sensitivities(self, i: int) -> tuple[float, float]:
        """Query i's own sensitivity, L1 and L2 alike: once it is selected, which query is measured is public,
        so its own bound applies (the selection uses the largest, ``l1``)."""
        own = float(self.sens[i])
        return own, own

    def integral(self, i: int) -> bool:
        """Query i has integer weights (e.g. −1, 0, 1): its answer on counts is an integer."""
        return bool(self.integer_weights[i])


def _families(ctx: AlgorithmContext, params: Params) -> list[QueryFamily]:
    """The candidate classes of this run: the marginals' (``marginal_queries``), ranges, linear queries."""
    fams: list[QueryFamily] = []
    if params.marginal_queries == "cuboids":
        fams.append(_Cuboids(ctx, params.bias_cells))
    elif params.marginal_queries == "cells":
        fams.append(_Cells(ctx))
    sets = list(ctx.queries.ranges) if ctx.queries is not None else []
    if sets:
        fams.append(_Ranges(ctx, sets))
    if ctx.queries is not None and ctx.queries.linear is not None:
        fams.append(_Linear(ctx, ctx.queries.linear))
    if not fams:
        raise ConfigError(_NOTHING_TO_QUERY)
    return fams

