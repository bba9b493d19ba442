"""The interface of a released model: a distribution over the public domain's codes.

Everything a released model does is post-processing of mechanism outputs: it
is fitted to noisy measurements and only ever read by sampling, conditioning
and serialisation.  A model kind implements :class:`Model`:

``model.sizes``
    Number of codes of each attribute (the public domain).
``model.sample(rows, *, rng) -> codes``
    ``rows`` independent records as a (rows × d) array of the narrowest
    unsigned dtype that holds every code (:func:`code_dtype`).
``model.probability(weights) -> float``
    Σₓ p(x)·Πₐ wₐ(xₐ) for per-attribute weight vectors (``None``: all ones).
``model.condition(weights) -> Model``
    The model with p'(x) ∝ p(x)·Πₐ wₐ(xₐ), computed exactly (not by rejection);
    raises :class:`ZeroProbability` when the sum is 0.  With 0/1 weights this
    is the distribution conditioned on each attribute lying in a set of values.
``model.to_arrays() -> (meta, arrays)`` and ``Kind.from_arrays(meta, arrays)``
    Serialisation: ``meta`` is JSON-able (ints, floats, strings, lists),
    ``arrays`` maps names to numeric NumPy arrays (never object arrays).
    ``from_arrays`` validates what it reads and raises ``ValueError`` on
    anything inconsistent, so a damaged file never yields a silently wrong model.

A new kind (e.g. a junction-tree graphical model) is added by implementing
these methods and listing its class in ``_KINDS``; the file format
(:mod:`dpsynth.modelfile`) stores ``kind`` next to ``meta`` and ``arrays``.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

__all__ = [
    "Model",
    "Weights",
    "ZeroProbability",
    "code_dtype",
    "model_class",
    "model_from_arrays",
    "model_kinds",
    "model_to_arrays",
]

Weights = Sequence[np.ndarray | None]
"""Per attribute: a weight vector over its codes (values in [0, 1]), or None for no restriction."""


class ZeroProbability(ValueError):
    """Conditioning on an event of probability 0 under the model."""


@runtime_checkable
class Model(Protocol):
    kind: ClassVar[str]

    @property
    def sizes(self) -> tuple[int, ...]: ...

    def sample(self, rows: int, *, rng: np.random.Generator) -> np.ndarray: ...

    def probability(self, weights: Weights) -> float: ...

    def condition(self, weights: Weights) -> Model: ...

    def to_arrays(self) -> tuple[dict, dict[str, np.ndarray]]: ...

    @classmethod
    def from_arrays(cls, meta: Mapping, arrays: Mapping[str, np.ndarray]) -> Model: ...


_KINDS: dict[str, str] = {
    "factored": "dpsynth.models.factored:FactoredModel",
    "graphical": "dpsynth.models.graphical:GraphicalModel",
    "mixture": "dpsynth.models.mixture:MixtureModel",
    "records": "dpsynth.models.mixture:RecordsModel",
}


def model_kinds() -> tuple[str, ...]:
    return tuple(_KINDS)


def model_class(kind: str) -> type[Model]:
    """The class implementing model ``kind`` (``KeyError`` for an unknown kind)."""
    module, name = _KINDS[kind].split(":")
    return getattr(importlib.import_module(module), name)


def model_to_arrays(model: Model) -> tuple[dict, dict[str, np.ndarray]]:
    """``({"kind", "meta"}, arrays)`` of any model kind."""
    meta, arrays = model.to_arrays()
    return {"kind": model.kind, "meta": meta}, arrays


def model_from_arrays(header: Mapping, arrays: Mapping[str, np.ndarray]) -> Model:
    """Inverse of :func:`model_to_arrays`; ``ValueError`` on an unknown kind or bad content."""
    if not isinstance(header, Mapping) or set(header) != {"kind", "meta"}:
        raise ValueError("model header must have exactly the keys kind and meta")
    kind = header["kind"]
    if kind not in _KINDS:
        raise ValueError(f"unknown model kind {kind!r}")
    return model_class(kind).from_arrays(header["meta"], arrays)


def code_dtype(sizes: Sequence[int]) -> np.dtype:
    """The narrowest unsigned integer dtype holding every code of attributes of these sizes."""
    top = max((int(s) for s in sizes), default=1) - 1
    for dt in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(dt).max:
            return np.dtype(dt)
    return np.dtype(np.uint64)


def check_weights(weights: Weights, sizes: Sequence[int]) -> list[np.ndarray | None]:
    """Validate per-attribute weights against ``sizes``; returns float arrays (or None)."""
    if len(weights) != len(sizes):
        raise ValueError(f"weights for {len(weights)} attributes, the model has {len(sizes)}")
    out: list[np.ndarray | None] = []
    for a, (w, s) in enumerate(zip(weights, sizes)):
        if w is None:
            out.append(None)
            continue
        w = np.asarray(w, dtype=float)
        if w.shape != (int(s),) or not np.all((w >= 0) & (w <= 1)):
            raise ValueError(f"weights of attribute {a} must be {s} values in [0, 1]")
        out.append(w)
    return out


def check_finite_probs(arr: np.ndarray, what: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """A float64 probability array read from a file: right shape, finite, ≥ 0, sums to 1."""
    arr = np.asarray(arr)
    if arr.dtype != np.float64:
        raise ValueError(f"{what}: expected float64 values, got {arr.dtype}")
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{what}: expected shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{what}: probabilities must be finite and >= 0")
    if not abs(float(arr.sum()) - 1.0) <= 1e-6:
        raise ValueError(f"{what}: probabilities must sum to 1")
    return arr
