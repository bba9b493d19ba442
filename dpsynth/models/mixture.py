"""Two more released-model kinds (:mod:`dpsynth.models.base`): mixtures and record sets.

``MixtureModel(components, weights)`` (kind ``mixture``)
    Σᵢ πᵢ·pᵢ(x): MWEM's ``output: average`` (Hardt, Ligett & McSherry 2012,
    Figure 1 outputs the average of A₁ … A_T; §2.3.2 discusses final vs
    average) is the uniform mixture of the models of all rounds.
    Conditioning is exact: component i's weight becomes πᵢ·Zᵢ / Σⱼ πⱼ·Zⱼ with
    Zᵢ its probability of the condition, and each component is conditioned.
``RecordsModel(records, weights)`` (kind ``records``)
    A distribution on finitely many records: DualQuery's output (Gaboardi et
    al. 2014, Algorithm 2: the synthetic database is the multiset of the T
    best responses); sampling draws records i.i.d. with the given weights.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from dpsynth.models.base import (
    Model,
    ZeroProbability,
    check_finite_probs,
    check_weights,
    code_dtype,
    model_from_arrays,
    model_to_arrays,
)

__all__ = ["MixtureModel", "RecordsModel"]


def _draw_index(probs: np.ndarray, rows: int, rng: np.random.Generator) -> np.ndarray:
    cdf = np.cumsum(probs)
    return np.minimum(np.searchsorted(cdf, rng.random(int(rows)) * cdf[-1], side="right"), cdf.size - 1)


class MixtureModel:
    """A finite mixture of models over the same domain."""

    kind = "mixture"

    def __init__(self, components: Sequence[Model], weights: Sequence[float] | np.ndarray | None = None):
        self.components = list(components)
        if not self.components:
            raise ValueError("a mixture needs at least one component")
        self.sizes = tuple(self.components[0].sizes)
        if any(tuple(c.sizes) != self.sizes for c in self.components):
            raise ValueError("mixture components must share the domain")
        k = len(self.components)
        w = np.full(k, 1.0 / k) if weights is None else np.asarray(weights, dtype=float)
        if w.shape != (k,) or not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
            raise ValueError("mixture weights must be one finite value >= 0 per component, not all 0")
        self.weights = w / w.sum()

    def sample(self, rows: int, *, rng: np.random.Generator) -> np.ndarray:
        """Each row picks a component (by weight), then the component draws it."""
        rows = int(rows)
        which = _draw_index(self.weights, rows, rng)
        codes = np.empty((rows, len(self.sizes)), dtype=code_dtype(self.sizes))
        for i, comp in enumerate(self.components):  # loop over components; vectorized over rows
            at = np.flatnonzero(which == i)
            if at.size:
                codes[at] = comp.sample(at.size, rng=rng)
        return codes

    def probability(self, weights) -> float:
        weights = check_weights(weights, self.sizes)
        return float(sum(w * c.probability(weights) for w, c in zip(self.weights, self.components)))

    def condition(self, weights) -> MixtureModel:
        weights = check_weights(weights, self.sizes)
        mass = np.array([c.probability(weights) for c in self.components]) * self.weights
        if not mass.sum() > 0:
            raise ZeroProbability("the condition has probability 0 under the model")
        keep = np.flatnonzero(mass > 0)
        return MixtureModel([self.components[i].condition(weights) for i in keep], mass[keep])

    def to_arrays(self) -> tuple[dict, dict[str, np.ndarray]]:
        headers, arrays = [], {"weights": self.weights.astype(np.float64)}
        for i, comp in enumerate(self.components):
            header, sub = model_to_arrays(comp)
            headers.append(header)
            arrays.update({f"c{i}.{name}": arr for name, arr in sub.items()})
        return {"components": headers}, arrays

    @classmethod
    def from_arrays(cls, meta: Mapping, arrays: Mapping[str, np.ndarray]) -> MixtureModel:
        if not isinstance(meta, dict) or set(meta) != {"components"} or not isinstance(meta["components"], list):
            raise ValueError("mixture model: unexpected metadata")
        headers = meta["components"]
        if not headers or "weights" not in arrays:
            raise ValueError("mixture model: no components or no weights")
        weights = check_finite_probs(arrays["weights"], "mixture weights", (len(headers),))
        comps = []
        for i, header in enumerate(headers):
            prefix = f"c{i}."
            sub = {name[len(prefix):]: arr for name, arr in arrays.items() if name.startswith(prefix)}
            comps.append(model_from_arrays(header, sub))
        expected = 1 + sum(len(c.to_arrays()[1]) for c in comps)
        if len(arrays) != expected:
            raise ValueError("mixture model: unexpected arrays")
        model = cls(comps, weights)
        model.weights = weights  # as stored: renormalising could change the last bit (and the hash)
        return model


class RecordsModel:
    """A distribution on a finite set of records (rows of codes)."""

    kind = "records"

    def __init__(self, records: np.ndarray, sizes: Sequence[int], weights: np.ndarray | None = None):
        self.sizes = tuple(int(s) for s in sizes)
        rec = np.asarray(records)
        if rec.ndim != 2 or rec.shape[1] != len(self.sizes) or rec.shape[0] < 1:
            raise ValueError("records must be a non-empty (T × d) array matching the domain")
        if not np.issubdtype(rec.dtype, np.integer) or np.any(rec < 0) or np.any(rec >= np.asarray(self.sizes)):
            raise ValueError("records must hold integer codes inside the domain")
        self.records = rec.astype(code_dtype(self.sizes))
        t = rec.shape[0]
        w = np.full(t, 1.0 / t) if weights is None else np.asarray(weights, dtype=float)
        if w.shape != (t,) or not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
            raise ValueError("record weights must be one finite value >= 0 per record, not all 0")
        self.weights = w / w.sum()

    def sample(self, rows: int, *, rng: np.random.Generator) -> np.ndarray:
        return self.records[_draw_index(self.weights, rows, rng)]

    def _record_weights(self, weights) -> np.ndarray:
        w = np.ones(self.records.shape[0])
        for a, wa in enumerate(check_weights(weights, self.sizes)):  # loop over columns
            if wa is not None:
                w *= wa[self.records[:, a]]
        return w

    def probability(self, weights) -> float:
        return float(np.sum(self.weights * self._record_weights(weights)))

    def condition(self, weights) -> RecordsModel:
        mass = self.weights * self._record_weights(weights)
        if not mass.sum() > 0:
            raise ZeroProbability("the condition has probability 0 under the model")
        keep = np.flatnonzero(mass > 0)
        return RecordsModel(self.records[keep], self.sizes, mass[keep])

    def to_arrays(self) -> tuple[dict, dict[str, np.ndarray]]:
        return {"sizes": list(self.sizes)}, {"records": self.records, "weights": self.weights.astype(np.float64)}

    @classmethod
    def from_arrays(cls, meta: Mapping, arrays: Mapping[str, np.ndarray]) -> RecordsModel:
        if not isinstance(meta, dict) or set(meta) != {"sizes"} or set(arrays) != {"records", "weights"}:
            raise ValueError("records model: unexpected metadata or arrays")
        sizes = meta["sizes"]
        if not isinstance(sizes, list) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 1
                                                  for s in sizes):
            raise ValueError("records model: sizes must be positive integers")
        records = arrays["records"]
        weights = check_finite_probs(arrays["weights"], "record weights", (np.shape(records)[0],))
        model = cls(records, sizes, weights)
        model.weights = weights  # as stored: renormalising could change the last bit (and the hash)
        return model
