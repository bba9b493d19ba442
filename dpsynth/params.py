"""Validation of configuration values, shared by the config parser, workloads and algorithm parameters.

Every check names the key path of the bad value and the rule it breaks, so the
CLI can print it as one line (:class:`~dpsynth.errors.ConfigError`, exit 64).
This module sits below ``config``, ``workload`` and ``algorithms`` so that none of
them needs to import another to validate its own section.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from collections.abc import Mapping
from typing import Any

import yaml

from dpsynth.errors import ConfigError

__all__ = ["as_choice", "as_int", "as_mapping", "as_number", "no_extra_keys", "params_from_mapping", "params_to_mapping"]


def as_mapping(value: Any, path: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{path}: expected a mapping, got {type(value).__name__}")
    return value


def no_extra_keys(value: Mapping[str, Any], allowed: set[str], path: str) -> None:
    extra = sorted(set(map(str, value)) - allowed)
    if extra:
        where = f"{path}." if path else ""
        raise ConfigError(
            f"{where}{extra[0]}: unknown key (allowed: {', '.join(sorted(allowed))})"
        )


def as_number(value: Any, path: str, *, positive: bool = False, minimum: float | None = None) -> float:
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


def as_int(value: Any, path: str, *, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ConfigError(f"{path}: expected an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{path}: must be >= {minimum}, got {value!r}")
    return int(value)


def as_choice(value: Any, options: tuple[str, ...], path: str) -> str:
    if value not in options:
        raise ConfigError(f"{path}: must be one of {', '.join(options)}, got {value!r}")
    return value


def params_from_mapping(cls: type, raw: Any, path: str = "algorithm.params"):
    """Build a frozen dataclass of algorithm parameters from a config mapping.

    Checks unknown keys and the basic type of every field (int, float, bool,
    str, Literal choices, optional values, nested mappings), naming the key
    path; the dataclass's ``__post_init__`` does the finer checks and should
    raise :class:`ConfigError` (or ``ValueError``, which is wrapped here).  A class may
    name keys it no longer accepts in a ``REMOVED_KEYS`` mapping (key -> message):
    such a key is a one-line error saying what replaced it, not "unknown key".
    """
    raw = as_mapping(raw, path)
    removed = getattr(cls, "REMOVED_KEYS", {})  # key -> why it went and what replaces it (one line)
    for key in raw:
        if key in removed:
            raise ConfigError(f"{path}.{key}: {removed[key]}")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    no_extra_keys(raw, set(fields), path)
    kwargs = {}
    for key, value in raw.items():
        kwargs[key] = _coerce(value, hints[key], f"{path}.{key}")
    try:
        return cls(**kwargs)
    except ConfigError:
        raise
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{path}: {exc}") from None


def params_to_mapping(params: Any) -> dict[str, Any]:
    """Every parameter of a params dataclass as a plain mapping (nested dataclasses as mappings, tuples as
    lists): what the report and the model file record, and what :func:`params_from_mapping` parses back."""
    def plain(value: Any) -> Any:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        if isinstance(value, (tuple, list)):
            return [plain(v) for v in value]
        if isinstance(value, Mapping):
            return {k: plain(v) for k, v in value.items()}
        return value

    return plain(params)


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
        return as_choice(value, tuple(args), path)
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{path}: expected true or false, got {value!r}")
        return value
    if hint is int:
        return as_int(value, path)
    if hint is float:
        return as_number(value, path)
    if hint is str:
        if not isinstance(value, str):
            raise ConfigError(f"{path}: expected a string, got {value!r}")
        return value
    if dataclasses.is_dataclass(hint):
        return params_from_mapping(hint, value, path)
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        return dict(as_mapping(value, path))
    return value


# ------------------------------------------------------------------------- YAML
class _Loader(yaml.SafeLoader):
    """YAML as people write it: every ordinary number spelling, and no silent duplicate keys.

    PyYAML follows YAML 1.1, whose float needs a dot and a signed exponent, so
    ``1e-5``, ``1e6`` and ``1E+3`` would load as strings; YAML 1.2 (and every
    programming language) reads them as numbers, and so do we.  A mapping that
    repeats a key is an error (YAML 1.1 and 1.2 both forbid it; PyYAML keeps the
    last value silently).
    """


_Loader.yaml_implicit_resolvers = {k: list(v) for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def _construct_mapping(loader: _Loader, node: yaml.MappingNode, deep: bool = False):
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        try:
            if key in seen:
                raise ConfigError(f"duplicate key {key!r} at line {line} (first at line {seen[key]}); keep one of them")
            seen[key] = line
        except TypeError:  # an unhashable key: PyYAML reports it
            continue
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_Loader.add_constructor("tag:yaml.org,2002:map", lambda loader, node: _construct_yaml_map(loader, node))


def _construct_yaml_map(loader: _Loader, node: yaml.MappingNode):
    data: dict = {}
    yield data
    data.update(_construct_mapping(loader, node))


def yaml_error(p, exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    what = f": {problem}" if problem else ""
    if context and problem:
        what += f" ({context})"
    return f"{p}: invalid YAML{where}{what}"


def load_yaml(text: str) -> Any:
    """Parse YAML text as people write it (:class:`_Loader`): YAML 1.2 numbers (``1e-5``), no duplicate keys.

    Raises ``yaml.YAMLError`` (format it with :func:`yaml_error`) or :class:`ConfigError` (duplicate key)."""
    return yaml.load(text, Loader=_Loader)

