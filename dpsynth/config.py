"""The YAML configuration: parsing and validation with key paths in every message.

A configuration is public by construction: it must be written from public
knowledge (documentation, round bounds), never learned from the private table.
Validation happens before any data is read.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TypedDict

import numpy as np
import yaml

from dpsynth.algorithms import algorithm_names, get_algorithm
from dpsynth.data.fine import FineSettings
from dpsynth.data.schema import (
    CategoricalColumn,
    ColumnSpec,
    DatetimeColumn,
    Domain,
    IntegerColumn,
    NumericColumn,
    lattice_gaps,
    with_fill,
)
from dpsynth.data.timestamps import UNITS, calendar_edges, check_format, parse_instant
from dpsynth.errors import ConfigError
from dpsynth.params import as_choice as _choice
from dpsynth.params import as_int as _int
from dpsynth.params import as_mapping as _mapping
from dpsynth.params import as_number as _number
from dpsynth.params import load_yaml, params_from_mapping, yaml_error
from dpsynth.params import no_extra_keys as _no_extra
from dpsynth.privacy.neighbouring import Neighbouring
from dpsynth.workload.spec import KEYS, Workload, parse_workload

__all__ = [
    "DEFAULT_MAX_CELLS",
    "NOMINAL_EPSILON",
    "ColumnDocument",
    "Config",
    "OutputConfig",
    "PrivacyConfig",
    "large_epsilon_warning",
    "load_config",
    "params_from_mapping",
    "parse_bytes",
    "parse_config",
    "with_discovered_schema",
    "zero_config",
]

NOMINAL_EPSILON = 10.0
"""Above this ``privacy.epsilon`` the guarantee is nominal (e^10 ≈ 22,000: one row may change the odds of any
outcome 22,000-fold); a release warns (stderr and the report's warnings).  docs/privacy.md, "A large epsilon"."""


def large_epsilon_warning(epsilon: float) -> str | None:
    """The warning for a budget above :data:`NOMINAL_EPSILON`, or None."""
    if epsilon <= NOMINAL_EPSILON:
        return None
    return (f"privacy.epsilon is {epsilon:g}, above {NOMINAL_EPSILON:g}: the guarantee is then nominal (one row may "
            f"change the probability of any output by a factor up to e^{epsilon:g}); see docs/privacy.md, "
            "'A large epsilon'")


DEFAULT_MAX_CELLS = 10_000_000
"""Largest marginal (in cells) a release may materialise unless --max-cells says otherwise."""

_TOP_KEYS = {"schema", "privacy", "algorithm", "workload", "output", "seed", "limits", "decode"}


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
    workload: Workload
    output: OutputConfig = field(default_factory=OutputConfig)
    seed: int | None = None
    max_cells: int = DEFAULT_MAX_CELLS
    discover: Any = None  # a data.discover.DiscoverSpec when the schema is learned at release time
    raw: Mapping[str, Any] | None = None  # the document, kept to build the release config after discovery
    max_memory: int | None = None  # bytes; None: a fraction of the smallest of RAM, RLIMIT_AS, cgroup (dpsynth.plan)
    strip: bool = False  # schema.strip: remove spaces around every input field (UCI ", " files)
    schema_spend: Mapping[str, Any] | None = None  # schema.discovery: what a private discovery spent on the schema
    decode: FineSettings = field(default_factory=FineSettings)  # decode: the fine view of numbers (data.fine)

    @property
    def marginals(self) -> tuple[tuple[int, ...], ...]:
        """The workload's marginals (tuples of column indices)."""
        return self.workload.marginals

    @classmethod
    def build(
        cls,
        *,
        columns: Mapping[str, ColumnDocument],
        epsilon: float,
        delta: float = 0.0,
        neighbouring: Literal["add-remove", "replace-one"] = "add-remove",
        n_epsilon: float | None = None,
        algorithm: str | None = None,
        params: Mapping[str, Any] | None = None,
        marginals: int | Sequence[Sequence[str]] | None = None,
        workload: Mapping[str, Any] | None = None,
        unknown: Literal["error", "other"] = "error",
        rows: int | None = None,
        seed: int | None = None,
        max_cells: int | None = None,
    ) -> Config:
        """A configuration from keyword arguments, validated exactly as the YAML document they stand for.

        ``columns``: column name -> its ``schema.columns`` entry (:class:`ColumnDocument`: ``type`` and the keys
        of that type, docs/config.md); ``epsilon``, ``delta``, ``neighbouring``, ``n_epsilon`` (``None``: n is
        public) make ``privacy``; ``algorithm`` (``None``: ``auto``) and ``params`` make ``algorithm``;
        ``marginals`` (k for all k-way marginals, or lists of column names) is ``workload.marginals``, and
        ``workload`` any other workload sections; ``rows`` is ``output.rows`` (``None``: n).  A mistake is the
        :class:`ConfigError` the YAML would give, naming the key path (``privacy.epsilon: ...``).
        """
        privacy: dict[str, Any] = {"epsilon": epsilon, "delta": delta, "neighbouring": neighbouring}
        if n_epsilon is not None:
            privacy["n"] = {"epsilon": n_epsilon}
        sections = dict(workload or {})
        if marginals is not None:
            if "marginals" in sections:
                raise ConfigError("workload.marginals: given twice (the marginals argument and workload); keep one")
            sections["marginals"] = {"k": marginals} if isinstance(marginals, int) else [list(m) for m in marginals]
        raw: dict[str, Any] = {
            "schema": {"columns": {name: dict(spec) for name, spec in columns.items()}, "unknown": unknown},
            "privacy": privacy,
            "algorithm": {"params": dict(params or {}), **({"name": algorithm} if algorithm is not None else {})},
            "workload": sections,
        }
        if rows is not None:
            raw["output"] = {"rows": rows}
        if seed is not None:
            raw["seed"] = seed
        if max_cells is not None:
            raw["limits"] = {"max_cells": max_cells}
        return parse_config(raw)


class ColumnDocument(TypedDict, total=False):
    """One ``schema.columns`` entry as :meth:`Config.build` takes it (docs/config.md, "schema"): ``type`` is
    ``categorical`` (``categories``), ``numeric`` (``lower``/``upper``/``bins`` or ``edges``; ``integer``),
    ``integer`` (``lower``/``upper``) or ``datetime`` (``lower``/``upper`` with ``bins`` or ``unit``, or
    ``edges``; ``format``); ``missing`` is ``error`` (default), ``category`` or ``fill`` (with ``fill``: the value
    a null is read as)."""

    type: Literal["categorical", "numeric", "integer", "datetime"]
    categories: Sequence[str | int | float]
    lower: float | int | str
    upper: float | int | str
    bins: int
    edges: Sequence[float | str]
    integer: bool
    unit: str
    format: str
    missing: Literal["error", "category", "fill"]
    fill: str | int | float


# ----------------------------------------------------------------------------- schema
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
          "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}


def parse_bytes(value: Any, path: str = "limits.max_memory") -> int:
    """Bytes from an integer or a string such as ``4GB``, ``512 MiB``, ``2.5G`` (binary units)."""
    number, unit = math.nan, ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip().lower().replace(" ", "")
        digits = text.rstrip("kmgtib")
        unit = text[len(digits):]
        try:
            number = float(digits)
        except ValueError:
            number = math.nan
    if unit not in _UNITS or not math.isfinite(number) or number <= 0:
        raise ConfigError(f"{path}: expected a size such as 4GB or 512MB, got {value!r}")
    return int(number * _UNITS[unit])


def _step(value: Any, integral: bool, path: str) -> float:
    """A numeric column's ``step`` (its values are multiples of it): a number > 0, an integer when the column is
    ``integer: true``."""
    step = _number(value, path)
    if not math.isfinite(step) or step <= 0:
        raise ConfigError(f"{path}: expected a number > 0 (values are multiples of it), got {value!r}")
    if integral and not step.is_integer():
        raise ConfigError(f"{path}: an integer: true column needs a whole step, got {value!r}")
    return float(step)


def _column(name: str, spec: Any, unknown: str, path: str) -> ColumnSpec:
    spec = _mapping(spec, path)
    kind = _choice(spec.get("type"), ("numeric", "integer", "categorical", "datetime"), f"{path}.type")
    missing = _choice(spec.get("missing", "error"), ("error", "category", "fill"), f"{path}.missing")
    has_null = missing == "category"
    if kind == "datetime":
        return with_fill(_datetime_column(name, spec, has_null, path), spec, path)
    if kind == "numeric":
        _no_extra(spec, {"type", "lower", "upper", "bins", "edges", "missing", "fill", "integer", "step"}, path)
        integral = spec.get("integer", False)
        if not isinstance(integral, bool):
            raise ConfigError(f"{path}.integer: expected true or false, got {integral!r}")
        step = None if spec.get("step") is None else _step(spec["step"], integral, f"{path}.step")
        if "edges" in spec:
            if any(k in spec for k in ("lower", "upper", "bins")):
                raise ConfigError(f"{path}: give either edges or lower/upper/bins, not both")
            edges = spec["edges"]
            if not isinstance(edges, list) or len(edges) < 2:
                raise ConfigError(f"{path}.edges: expected a list of at least 2 numbers")
            edges = [_number(e, f"{path}.edges[{i}]") for i, e in enumerate(edges)]
            if any(b < a for a, b in itertools.pairwise(edges)):
                raise ConfigError(f"{path}.edges: must be increasing (an edge written twice is a bin holding "
                                  "that value alone)")
            if any(a == b == c for a, b, c in zip(edges, edges[1:], edges[2:])):
                raise ConfigError(f"{path}.edges: an edge may be written at most twice (twice: a point bin)")
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
        gaps = [] if step is None else lattice_gaps(edges, step)
        if gaps:
            i = gaps[0]
            raise ConfigError(f"{path}: bin {i} [{edges[i]:g}, {edges[i + 1]:g}] holds no multiple of step {step:g}; "
                              "move its edges or use fewer bins")
        return with_fill(NumericColumn(name, tuple(float(e) for e in edges), missing=has_null, integral=integral,
                                       step=step), spec, path)
    if kind == "integer":
        _no_extra(spec, {"type", "lower", "upper", "missing", "fill"}, path)
        for key in ("lower", "upper"):
            if key not in spec:
                raise ConfigError(f"{path}.{key}: required for an integer column")
        lo = _int(spec["lower"], f"{path}.lower")
        hi = _int(spec["upper"], f"{path}.upper")
        if hi < lo:
            raise ConfigError(f"{path}.upper: must be >= lower ({hi} < {lo})")
        return with_fill(IntegerColumn(name, lo, hi, missing=has_null), spec, path)
    _no_extra(spec, {"type", "categories", "missing", "fill"}, path)
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
    return with_fill(CategoricalColumn(name, tuple(cats), missing=has_null, other=unknown == "other"), spec, path)


def _datetime_column(name: str, spec: Mapping[str, Any], has_null: bool, path: str) -> DatetimeColumn:
    """A datetime column: ISO ``edges``, or ``lower``/``upper`` with equal-width ``bins`` or calendar ``unit`` bins."""
    _no_extra(spec, {"type", "lower", "upper", "bins", "unit", "edges", "format", "missing", "fill"}, path)
    fmt = check_format(spec["format"], f"{path}.format") if "format" in spec else None
    if "edges" in spec:
        if any(k in spec for k in ("lower", "upper", "bins", "unit")):
            raise ConfigError(f"{path}: give either edges or lower/upper with bins or unit, not both")
        raw = spec["edges"]
        if not isinstance(raw, list) or len(raw) < 2:
            raise ConfigError(f"{path}.edges: expected a list of at least 2 ISO 8601 dates or timestamps")
        edges = [parse_instant(e, f"{path}.edges[{i}]") for i, e in enumerate(raw)]
        if any(b <= a for a, b in itertools.pairwise(edges)):
            raise ConfigError(f"{path}.edges: must be strictly increasing (each edge later than the one before)")
        declared: list = [("edges", tuple(_text(e) for e in raw))]
    else:
        for key in ("lower", "upper"):
            if key not in spec:
                raise ConfigError(f"{path}.{key}: required for a datetime column without edges")
        lo = parse_instant(spec["lower"], f"{path}.lower")
        hi = parse_instant(spec["upper"], f"{path}.upper")
        if hi <= lo:
            raise ConfigError(f"{path}.upper: must be later than lower "
                              f"({_text(spec['upper'])} <= {_text(spec['lower'])})")
        if ("bins" in spec) == ("unit" in spec):
            raise ConfigError(f"{path}: give exactly one of bins (equal-width bins) or unit "
                              f"({', '.join(UNITS)}: calendar bins)")
        declared = [("lower", _text(spec["lower"])), ("upper", _text(spec["upper"]))]
        if "unit" in spec:
            unit = _choice(spec["unit"], UNITS, f"{path}.unit")
            edges = list(calendar_edges(lo, hi, unit, path))
            declared.append(("unit", unit))
        else:
            bins = _int(spec["bins"], f"{path}.bins", minimum=1)
            edges = list(np.linspace(lo, hi, bins + 1))
            declared.append(("bins", bins))
    if fmt is not None:
        declared.append(("format", fmt))
    return DatetimeColumn(name, tuple(float(e) for e in edges), missing=has_null, format=fmt,
                          declared=tuple(declared))


def _text(value: Any) -> str:
    """A schema instant as text (YAML may have read an unquoted date as a date object)."""
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _schema(raw: Any) -> tuple[Domain, str]:
    raw = _mapping(raw, "schema")
    _no_extra(raw, {"columns", "unknown", "strip"}, "schema")
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


def _output(raw: Any) -> OutputConfig:
    raw = _mapping(raw, "output")
    _no_extra(raw, {"rows", "numeric"}, "output")
    rows = raw.get("rows", "n")
    rows = None if rows == "n" else _int(rows, "output.rows", minimum=1)
    numeric = _choice(raw.get("numeric", "uniform"), ("uniform", "midpoint"), "output.numeric")
    return OutputConfig(rows, numeric)


def _decode(raw: Any) -> FineSettings:
    """``decode``: ``fine`` (auto, on, off), ``share`` of the budget, ``cells`` per bin (an integer or auto)."""
    raw = _mapping(raw, "decode")
    _no_extra(raw, {"fine", "share", "cells"}, "decode")
    fine = _choice(raw.get("fine", "auto"), ("auto", "on", "off"), "decode.fine")
    share = _number(raw.get("share", FineSettings.share), "decode.share", positive=True)
    if share >= 1:
        raise ConfigError(f"decode.share: must be in (0, 1), got {share!r}")
    cells = raw.get("cells", "auto")
    cells = None if cells == "auto" else _int(cells, "decode.cells", minimum=2)
    if cells is not None and cells > 1024:
        raise ConfigError(f"decode.cells: at most 1024 sub-cells per bin, got {cells}")
    return FineSettings(fine, float(share), cells)


def parse_config(raw: Any) -> Config:
    """Validate a parsed YAML document and build a :class:`Config`."""
    raw = _mapping(raw, "config")
    _no_extra(raw, _TOP_KEYS, "")
    if "schema" not in raw:
        raise ConfigError("schema: required")
    if isinstance(raw["schema"], Mapping) and "discover" in raw["schema"]:
        return _discover_config(raw)
    schema_raw = raw["schema"]
    spend = None
    if isinstance(schema_raw, Mapping) and "discovery" in schema_raw:
        spend = _schema_spend(schema_raw["discovery"])
        schema_raw = {k: v for k, v in schema_raw.items() if k != "discovery"}
    domain, unknown = _schema(schema_raw)
    strip = raw["schema"].get("strip", False)
    if not isinstance(strip, bool):
        raise ConfigError(f"schema.strip: expected true or false, got {strip!r}")
    privacy = _privacy(raw.get("privacy"))
    alg = _mapping(raw.get("algorithm"), "algorithm")
    _no_extra(alg, {"name", "params"}, "algorithm")
    name = _choice(alg.get("name", DEFAULT_ALGORITHM), algorithm_names(), "algorithm.name")
    raw_params = _mapping(alg.get("params"), "algorithm.params")
    spec = get_algorithm(name)
    params = spec.parse_params(raw_params)
    workload = parse_workload(raw.get("workload"), domain, accepted=spec.workload, algorithm=name)
    if workload.sanity_bounds.default is not None and getattr(params, "sanity_bound", None) is not None:
        raise ConfigError("workload.sanity_bounds.default: algorithm.params.sanity_bound gives the default "
                          "sanity bound too; keep one of them")
    if workload.queries is not None and getattr(params, "synthesis", "pgm") != "pgm":
        raise ConfigError("algorithm.params.synthesis: rows from a workload of counting queries come from the "
                          "graphical model only; use synthesis: pgm")
    output = _output(raw.get("output"))
    seed = raw.get("seed")
    if seed is not None:
        seed = _int(seed, "seed", minimum=0)
    limits = _mapping(raw.get("limits"), "limits")
    _no_extra(limits, {"max_cells", "max_memory"}, "limits")
    max_cells = _int(limits.get("max_cells", DEFAULT_MAX_CELLS), "limits.max_cells", minimum=1)
    max_memory = parse_bytes(limits["max_memory"]) if limits.get("max_memory") is not None else None
    return Config(
        domain=domain,
        unknown=unknown,
        privacy=privacy,
        algorithm=name,
        params=params,
        workload=workload,
        output=output,
        seed=seed,
        max_cells=max_cells,
        max_memory=max_memory,
        strip=strip,
        schema_spend=spend,
        decode=_decode(raw.get("decode")),
    )


def _schema_spend(raw: Any) -> dict[str, float | None]:
    """``schema.discovery``: what the private discovery of this schema spent (written by ``dpsynth schema discover``
    and by a release that discovered its schema): ``epsilon_spent`` and ``delta_spent`` (its (ε, δ) alone), and for
    a discovery run under zCDP ``rho_spent`` and ``approx_delta``.  A release that uses the schema enters it in
    its ledger (one charge), so every total of its report includes it."""
    raw = _mapping(raw, "schema.discovery")
    _no_extra(raw, {"epsilon_spent", "delta_spent", "rho_spent", "approx_delta", "note"}, "schema.discovery")
    if "epsilon_spent" not in raw:
        raise ConfigError("schema.discovery.epsilon_spent: required (the epsilon the discovery of this schema spent)")
    out: dict[str, float | None] = {
        "epsilon_spent": _number(raw["epsilon_spent"], "schema.discovery.epsilon_spent", minimum=0.0),
        "delta_spent": _number(raw.get("delta_spent", 0.0), "schema.discovery.delta_spent", minimum=0.0),
        "rho_spent": None,
        "approx_delta": _number(raw.get("approx_delta", 0.0), "schema.discovery.approx_delta", minimum=0.0),
    }
    if raw.get("rho_spent") is not None:
        out["rho_spent"] = _number(raw["rho_spent"], "schema.discovery.rho_spent", minimum=0.0)
    return out


DEFAULT_ALGORITHM = "auto"
"""The algorithm of a config without ``algorithm.name`` (and of a zero-config release)."""

DISCOVER_SHARE = 0.2
"""Share of ε (and half of δ) that a zero-config release spends on private schema discovery."""

ZERO_MAX_CATEGORIES = 250
"""``max_categories`` of a zero-config release's discovery (``schema discover`` keeps 100): held-out-10's
car_exports has 166 countries of 364 rows each on 60,424 rows, all found by partition selection, of which 100 were
kept and 40% of the rows went to ``__other__`` (2-way L1 0.131 / 0.170 → 0.090 / 0.137, hand schema 0.049 /
0.050); on every other seen table the discovered schema is the same at 100 and 250."""

DEFAULT_DELTA = 1e-6
"""δ of a zero-config release when none is given: partition selection of categories needs δ > 0."""


def zero_config(epsilon: float, delta: float | None = None, *, discover_share: float | None = None) -> Config:
    """The configuration of ``dpsynth release -i TABLE -o OUT --epsilon E`` (no ``-c``): the schema discovered
    privately with :data:`DISCOVER_SHARE` of the budget (half of δ), then ``auto`` on all 2-way marginals with
    the rest, in one ledger; n public (as in every config without ``privacy.n``)."""
    delta = DEFAULT_DELTA if delta is None else delta
    share = DISCOVER_SHARE if discover_share is None else discover_share
    for name, value in (("epsilon", epsilon), ("delta", delta), ("discover-share", share)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ConfigError(f"{name}: expected a finite number, got {value!r}")
    if epsilon <= 0:
        raise ConfigError(f"epsilon: must be > 0, got {epsilon!r}")
    if not 0 < share < 1:
        raise ConfigError(f"discover-share: must be in (0, 1), got {share!r}")
    if not 0 < delta < 1:
        raise ConfigError(f"delta: must be in (0, 1) for a release without a schema (the discovery of categories "
                          f"needs it), got {delta!r}")
    cfg = parse_config({
        "schema": {"discover": {"epsilon": share * epsilon, "delta": delta / 2, "max_categories": ZERO_MAX_CATEGORIES}},
        "privacy": {"epsilon": float(epsilon), "delta": float(delta)},
        "algorithm": {"name": DEFAULT_ALGORITHM},
        "workload": {"marginals": {"k": 2}},
    })
    if discover_share is None:  # sized from the public n when the table is read (data.discover.share_for)
        cfg = replace(cfg, discover=replace(cfg.discover, share_by_size=True))
    return cfg


def _discover_config(raw: Mapping[str, Any]) -> Config:
    """A config whose schema is learned from the data at release time (``schema: {discover: ...}``).

    Everything but the schema and the workload is validated now (with a placeholder schema); the
    workload is validated against the discovered schema by :func:`with_discovered_schema`.
    """
    from dpsynth.data.discover import parse_discover

    _no_extra(raw["schema"], {"discover"}, "schema")
    spec = parse_discover(raw["schema"]["discover"])
    privacy = _privacy(raw.get("privacy"))
    if spec.epsilon >= privacy.epsilon:
        raise ConfigError(f"schema.discover.epsilon: must be smaller than privacy.epsilon "
                          f"({spec.epsilon:g} >= {privacy.epsilon:g}); it is a share of the release's budget")
    if spec.delta > privacy.delta:
        raise ConfigError(f"schema.discover.delta: must be at most privacy.delta ({spec.delta:g} > "
                          f"{privacy.delta:g}); it is a share of the release's budget")
    workload = _mapping(raw.get("workload"), "workload")
    _no_extra(workload, set(KEYS), "workload")
    placeholder = {"columns": {"_": {"type": "integer", "lower": 0, "upper": 0}}}
    rest = {k: v for k, v in raw.items() if k not in ("schema", "workload")}
    cfg = parse_config({**rest, "schema": placeholder})
    return replace(cfg, domain=Domain(()), workload=Workload(marginals=()), discover=spec, raw=dict(raw))


def with_discovered_schema(config: Config, schema: Mapping[str, Any], *, epsilon: float, delta: float) -> Config:
    """The release config of a ``schema.discover`` config: the discovered ``schema`` and the budget
    (ε, δ) left after discovery (computed by the accountant); the CLI's overrides (max_cells) are kept."""
    raw = release_document(config, schema)
    raw["privacy"] = {**_mapping(raw.get("privacy"), "privacy"), "epsilon": epsilon, "delta": delta}
    return replace(parse_config(raw), max_cells=config.max_cells, max_memory=config.max_memory)


def release_document(config: Config, schema: Mapping[str, Any], *, spent: Mapping[str, Any] | None = None) -> dict:
    """The config document of a ``schema.discover`` config's release: its own sections (the whole budget) with the
    discovered ``schema``; with ``spent`` the schema records the discovery's spend (``schema.discovery``), as the
    file a release that discovered its schema writes beside its rows."""
    raw = {k: v for k, v in (config.raw or {}).items() if k != "schema"}
    schema = dict(schema)
    marginals = (raw.get("workload") or {}).get("marginals") or {}
    if config.discover is not None and config.discover.share_by_size and marginals.get("k", 0) > len(schema["columns"]):
        # zero-config's default 2-way workload on a table of one (kept) column: its 1-way marginal
        raw["workload"] = {**raw["workload"], "marginals": {**marginals, "k": len(schema["columns"])}}
    if spent is not None:
        schema["discovery"] = {**{k: v for k, v in spent.items() if v is not None},
                               "note": "this schema was learned from the data by private discovery: a release "
                                       "that uses it enters this spend in its ledger (its totals include it)"}
    return {"schema": schema, **raw}


def load_config(path: str | Path) -> Config:
    """Read and validate a YAML config file."""
    from dpsynth.errors import InputMissingError

    p = Path(path)
    if not p.is_file():
        raise InputMissingError(f"config file not found: {p}")
    try:
        raw = load_yaml(p.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{p}: not valid UTF-8") from None
    except ConfigError as exc:
        raise ConfigError(f"{p}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(yaml_error(p, exc)) from None
    return parse_config(_files_beside(raw, p.parent))


def _files_beside(raw: Any, folder: Path) -> Any:
    """``raw`` with the relative paths of ``workload.linear.file`` and ``workload.queries.file`` resolved
    against the config file's folder (as a user writes them next to the config: ``file: queries.csv``);
    absolute paths are kept."""
    workload = raw.get("workload") if isinstance(raw, Mapping) else None
    if not isinstance(workload, Mapping) or folder == Path("."):
        return raw
    out = dict(workload)
    for section in ("linear", "queries"):
        entry = workload.get(section)
        file = entry.get("file") if isinstance(entry, Mapping) else None
        if isinstance(file, str) and file and not Path(file).is_absolute():
            out[section] = {**entry, "file": str(folder / file)}
    return {**raw, "workload": out}
