"""The YAML configuration: parsing and validation with key paths in every message.

A configuration is public by construction: it must be written from public
knowledge (documentation, round bounds), never learned from the private table.
Validation happens before any data is read.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from dpsynth.data.schema import CategoricalColumn, ColumnSpec, Domain, IntegerColumn, NumericColumn
from dpsynth.errors import ConfigError
from dpsynth.privacy.neighbouring import Neighbouring

__all__ = [
    "DEFAULT_MAX_CELLS",
    "Config",
    "OutputConfig",
    "PrivacyConfig",
    "load_config",
    "params_from_mapping",
    "parse_config",
]

DEFAULT_MAX_CELLS = 10_000_000
"""Largest marginal (in cells) a release may materialise unless --max-cells says otherwise."""

_TOP_KEYS = {"schema", "privacy", "algorithm", "workload", "output", "seed", "limits"}


@dataclass(frozen=True)
class PrivacyConfig:
    epsilon: float
    delta: float = 0.0
    neighbouring: Neighbouring = Neighbouring.ADD_REMOVE
    n_epsilon: float | None = None  # None: n is public

    @property
    def n_public(self) -> bool:
        return self.n_epsilon is None


@dataclass(frozen=True)
class OutputConfig:
    rows: int | None = None  # None: as many as n
    numeric: str = "uniform"  # or "midpoint"


@dataclass(frozen=True)
class Config:
    domain: Domain
    unknown: str
    privacy: PrivacyConfig
    algorithm: str
    params: Any  # the algorithm's own validated params object
    raw_params: Mapping[str, Any]
    marginals: tuple[tuple[int, ...], ...]
    workload_extra: Mapping[str, Any]
    output: OutputConfig = field(default_factory=OutputConfig)
    seed: int | None = None
    max_cells: int = DEFAULT_MAX_CELLS


# --------------------------------------------------------------------------- helpers
def _mapping(value: Any, path: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{path}: expected a mapping, got {type(value).__name__}")
    return value


def _no_extra(value: Mapping[str, Any], allowed: set[str], path: str) -> None:
    extra = sorted(set(map(str, value)) - allowed)
    if extra:
        where = f"{path}." if path else ""
        raise ConfigError(
            f"{where}{extra[0]}: unknown key (allowed: {', '.join(sorted(allowed))})"
        )


def _number(value: Any, path: str, *, positive: bool = False, minimum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{path}: expected a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ConfigError(f"{path}: must be finite, got {value!r}")
    if positive and value <= 0:
        raise ConfigError(f"{path}: must be > 0, got {value!r}")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{path}: must be >= {minimum:g}, got {value!r}")
    return value


def _int(value: Any, path: str, *, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ConfigError(f"{path}: expected an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{path}: must be >= {minimum}, got {value!r}")
    return int(value)


def _choice(value: Any, options: tuple[str, ...], path: str) -> str:
    if value not in options:
        raise ConfigError(f"{path}: must be one of {', '.join(options)}, got {value!r}")
    return value


def params_from_mapping(cls: type, raw: Any, path: str = "algorithm.params"):
    """Build a frozen dataclass of algorithm parameters from a config mapping.

    Checks unknown keys and the basic type of every field (int, float, bool,
    str, Literal choices, optional values, nested mappings), naming the key
    path; the dataclass's ``__post_init__`` does the finer checks and should
    raise :class:`ConfigError` (or ``ValueError``, which is wrapped here).
    """
    raw = _mapping(raw, path)
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    _no_extra(raw, set(fields), path)
    kwargs = {}
    for key, value in raw.items():
        kwargs[key] = _coerce(value, hints[key], f"{path}.{key}")
    try:
        return cls(**kwargs)
    except ConfigError:
        raise
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None


def _coerce(value: Any, hint: Any, path: str) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(value, arg, path)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if len(errors) == 1 else f"{path}: invalid value {value!r}")
    if origin is typing.Literal:
        return _choice(value, tuple(args), path)
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{path}: expected true or false, got {value!r}")
        return value
    if hint is int:
        return _int(value, path)
    if hint is float:
        return _number(value, path)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{path}: expected a string, got {value!r}")
        return value
    if dataclasses.is_dataclass(hint):
        return params_from_mapping(hint, value, path)
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        return dict(_mapping(value, path))
    return value


# ----------------------------------------------------------------------------- schema
def _column(name: str, spec: Any, unknown: str, path: str) -> ColumnSpec:
    spec = _mapping(spec, path)
    kind = _choice(spec.get("type"), ("numeric", "integer", "categorical"), f"{path}.type")
    missing = _choice(spec.get("missing", "error"), ("error", "category"), f"{path}.missing")
    has_null = missing == "category"
    if kind == "numeric":
        _no_extra(spec, {"type", "lower", "upper", "bins", "edges", "missing", "integer"}, path)
        integral = spec.get("integer", False)
        if not isinstance(integral, bool):
            raise ConfigError(f"{path}.integer: expected true or false, got {integral!r}")
        if "edges" in spec:
            if any(k in spec for k in ("lower", "upper", "bins")):
                raise ConfigError(f"{path}: give either edges or lower/upper/bins, not both")
            edges = spec["edges"]
            if not isinstance(edges, list) or len(edges) < 2:
                raise ConfigError(f"{path}.edges: expected a list of at least 2 numbers")
            edges = [_number(e, f"{path}.edges[{i}]") for i, e in enumerate(edges)]
            if any(b <= a for a, b in itertools.pairwise(edges)):
                raise ConfigError(f"{path}.edges: must be strictly increasing")
        else:
            for key in ("lower", "upper", "bins"):
                if key not in spec:
                    raise ConfigError(f"{path}.{key}: required for a numeric column without edges")
            lo = _number(spec["lower"], f"{path}.lower")
            hi = _number(spec["upper"], f"{path}.upper")
            bins = _int(spec["bins"], f"{path}.bins", minimum=1)
            if hi <= lo:
                raise ConfigError(f"{path}.upper: must be greater than lower ({hi:g} <= {lo:g})")
            edges = list(np.linspace(lo, hi, bins + 1))
        return NumericColumn(name, tuple(float(e) for e in edges), missing=has_null, integral=integral)
    if kind == "integer":
        _no_extra(spec, {"type", "lower", "upper", "missing"}, path)
        for key in ("lower", "upper"):
            if key not in spec:
                raise ConfigError(f"{path}.{key}: required for an integer column")
        lo = _int(spec["lower"], f"{path}.lower")
        hi = _int(spec["upper"], f"{path}.upper")
        if hi < lo:
            raise ConfigError(f"{path}.upper: must be >= lower ({hi} < {lo})")
        return IntegerColumn(name, lo, hi, missing=has_null)
    _no_extra(spec, {"type", "categories", "missing"}, path)
    cats = spec.get("categories")
    if not isinstance(cats, list) or not cats:
        raise ConfigError(f"{path}.categories: expected a non-empty list")
    for i, c in enumerate(cats):
        if c is None or isinstance(c, (list, dict)):
            raise ConfigError(f"{path}.categories[{i}]: expected a string or number, got {c!r}")
    labels = [str(c) for c in cats]
    if len(set(labels)) != len(labels):
        dup = next(x for x in labels if labels.count(x) > 1)
        raise ConfigError(f"{path}.categories: duplicate category {dup!r}")
    return CategoricalColumn(name, tuple(cats), missing=has_null, other=unknown == "other")


def _schema(raw: Any) -> tuple[Domain, str]:
    raw = _mapping(raw, "schema")
    _no_extra(raw, {"columns", "unknown"}, "schema")
    unknown = _choice(raw.get("unknown", "error"), ("error", "other"), "schema.unknown")
    cols = raw.get("columns")
    if not isinstance(cols, Mapping) or not cols:
        raise ConfigError("schema.columns: expected a non-empty mapping of column name to spec")
    specs = [_column(str(name), spec, unknown, f"schema.columns.{name}") for name, spec in cols.items()]
    return Domain(tuple(specs)), unknown


# ------------------------------------------------------------------------ other parts
def _privacy(raw: Any) -> PrivacyConfig:
    raw = _mapping(raw, "privacy")
    _no_extra(raw, {"epsilon", "delta", "neighboring", "neighbouring", "n"}, "privacy")
    if "epsilon" not in raw:
        raise ConfigError("privacy.epsilon: required")
    eps = _number(raw["epsilon"], "privacy.epsilon", positive=True)
    delta = _number(raw.get("delta", 0.0), "privacy.delta", minimum=0.0)
    if delta >= 1:
        raise ConfigError(f"privacy.delta: must be < 1, got {delta!r}")
    key = "neighbouring" if "neighbouring" in raw else "neighboring"
    nb = _choice(raw.get(key, "add-remove"), ("add-remove", "replace-one"), f"privacy.{key}")
    n_raw = raw.get("n", "public")
    n_eps = None
    if n_raw != "public":
        if not isinstance(n_raw, Mapping) or set(n_raw) != {"epsilon"}:
            raise ConfigError("privacy.n: must be 'public' or {epsilon: <number>}")
        n_eps = _number(n_raw["epsilon"], "privacy.n.epsilon", positive=True)
        if n_eps >= eps:
            raise ConfigError(
                f"privacy.n.epsilon: must be smaller than privacy.epsilon ({n_eps:g} >= {eps:g})"
            )
    return PrivacyConfig(eps, delta, Neighbouring(nb), n_eps)


def _marginal_workload(raw: Any, domain: Domain) -> tuple[tuple[int, ...], ...]:
    path = "workload.marginals"
    d = len(domain)
    if raw is None:
        raw = {"k": min(2, d)}
    if isinstance(raw, list):
        if not raw:
            raise ConfigError(f"{path}: the list of marginals is empty")
        out = []
        for i, m in enumerate(raw):
            if not isinstance(m, list) or not m:
                raise ConfigError(f"{path}[{i}]: expected a non-empty list of column names")
            for j, name in enumerate(m):
                if name not in domain.names:
                    raise ConfigError(f"{path}[{i}][{j}]: unknown column {name!r}")
            if len(set(m)) != len(m):
                raise ConfigError(f"{path}[{i}]: a column appears twice")
            out.append(domain.indices(m))
        return tuple(out)
    raw = _mapping(raw, path)
    _no_extra(raw, {"k", "sample", "seed"}, path)
    k = _int(raw.get("k", 2), f"{path}.k", minimum=1)
    if k > d:
        raise ConfigError(f"{path}.k: must be <= the number of columns ({d}), got {k}")
    combos = list(itertools.combinations(range(d), k))
    if "sample" in raw:
        m = _int(raw["sample"], f"{path}.sample", minimum=1)
        seed = _int(raw.get("seed", 0), f"{path}.seed", minimum=0)
        if m < len(combos):
            # Public randomness: the choice of marginals does not look at the data.
            pick = np.sort(np.random.default_rng(seed).choice(len(combos), size=m, replace=False))
            combos = [combos[i] for i in pick]
    elif "seed" in raw:
        raise ConfigError(f"{path}.seed: only meaningful with sample")
    return tuple(combos)


def _output(raw: Any) -> OutputConfig:
    raw = _mapping(raw, "output")
    _no_extra(raw, {"rows", "numeric"}, "output")
    rows = raw.get("rows", "n")
    rows = None if rows == "n" else _int(rows, "output.rows", minimum=1)
    numeric = _choice(raw.get("numeric", "uniform"), ("uniform", "midpoint"), "output.numeric")
    return OutputConfig(rows, numeric)


def parse_config(raw: Any) -> Config:
    """Validate a parsed YAML document and build a :class:`Config`."""
    from dpsynth.algorithms import algorithm_names, get_algorithm

    raw = _mapping(raw, "config")
    _no_extra(raw, _TOP_KEYS, "")
    if "schema" not in raw:
        raise ConfigError("schema: required")
    domain, unknown = _schema(raw["schema"])
    privacy = _privacy(raw.get("privacy"))
    alg = _mapping(raw.get("algorithm"), "algorithm")
    _no_extra(alg, {"name", "params"}, "algorithm")
    name = _choice(alg.get("name", "laplace"), algorithm_names(), "algorithm.name")
    raw_params = _mapping(alg.get("params"), "algorithm.params")
    params = get_algorithm(name).parse_params(raw_params)
    workload = _mapping(raw.get("workload"), "workload")
    _no_extra(workload, {"marginals", "ranges", "conjunctions"}, "workload")
    marginals = _marginal_workload(workload.get("marginals"), domain)
    extra = {k: v for k, v in workload.items() if k != "marginals"}
    output = _output(raw.get("output"))
    seed = raw.get("seed")
    if seed is not None:
        seed = _int(seed, "seed", minimum=0)
    limits = _mapping(raw.get("limits"), "limits")
    _no_extra(limits, {"max_cells"}, "limits")
    max_cells = _int(limits.get("max_cells", DEFAULT_MAX_CELLS), "limits.max_cells", minimum=1)
    return Config(
        domain=domain,
        unknown=unknown,
        privacy=privacy,
        algorithm=name,
        params=params,
        raw_params=dict(raw_params),
        marginals=marginals,
        workload_extra=extra,
        output=output,
        seed=seed,
        max_cells=max_cells,
    )


def load_config(path: str | Path) -> Config:
    """Read and validate a YAML config file."""
    from dpsynth.errors import InputMissingError

    p = Path(path)
    if not p.is_file():
        raise InputMissingError(f"config file not found: {p}")
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{p}: not valid UTF-8") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{p}: invalid YAML{where}") from None
    return parse_config(raw)
