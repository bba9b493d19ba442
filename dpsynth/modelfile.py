"""The released model as a file: fit once, sample many (format: docs/model-format.md).

A :class:`ReleasedModel` is everything needed to draw synthetic rows and
nothing else: the public configuration, the mechanism outputs the model was
fitted to (noisy marginals with their noise scales), the fitted model's
parameters (post-processing of those outputs), the release report's privacy
section and ledger, and hashes linking model and report.  Drawing rows from
it reads no data and spends no budget.

File: a zip archive (fixed timestamps, so the same model gives the same
bytes) holding JSON documents and NumPy ``.npy`` arrays.  Loading checks
every entry's SHA-256, reads arrays with ``allow_pickle=False`` and validates
the model's parameters; nothing in the file is ever executed.  Every failure
is one :class:`ModelFileError` line (exit code 65).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import zipfile
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from dpsynth._version import __version__
from dpsynth.algorithms.base import NoisyMarginal
from dpsynth.config import Config, parse_config
from dpsynth.data.discretize import Decoded, decode_columns
from dpsynth.data.fine import FineColumn, FineView
from dpsynth.data.io import json_bytes
from dpsynth.data.schema import DatetimeColumn, IntegerColumn, NumericColumn
from dpsynth.errors import ConfigError, DataError, InputMissingError, UsageError
from dpsynth.models.base import Model, ZeroProbability, model_from_arrays, model_to_arrays
from dpsynth.models.condition import Condition, parse_where
from dpsynth.params import params_to_mapping

__all__ = [
    "CHUNK_ROWS",
    "FORMAT",
    "SCHEMA_VERSION",
    "ModelFileError",
    "ReleasedModel",
    "config_document",
    "draw_chunks",
    "load_model",
]

FORMAT = "dpsynth-model"
SCHEMA_VERSION = 2
"""2: release.json may hold the fine view (``fine``); files of version 1 (without it) are read as before."""
CHUNK_ROWS = 1 << 17
"""Rows sampled, decoded and written at a time (fixed, so output does not depend on the format)."""

_MAX_ENTRY_BYTES = 1 << 31
_DATE = (1980, 1, 1, 0, 0, 0)


class ModelFileError(DataError):
    """A model file that is corrupt, truncated, foreign or from a newer dpsynth (exit 65)."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ------------------------------------------------------------------------ config document
def config_document(cfg: Config) -> dict:
    """The public configuration as a mapping :func:`dpsynth.config.parse_config` accepts."""
    cols = {}
    for c in cfg.domain.columns:
        if isinstance(c, DatetimeColumn):
            cols[c.name] = c.to_declaration()
            continue
        if isinstance(c, NumericColumn):
            spec = {"type": "numeric", "edges": list(c.edges), **({"integer": True} if c.integral else {}),
                    **({"step": c.step} if c.step is not None else {})}
        elif isinstance(c, IntegerColumn):
            spec = {"type": "integer", "lower": c.lower, "upper": c.upper}
        else:
            spec = {"type": "categorical", "categories": list(c.categories)}
        if c.missing:
            spec["missing"] = "category"
        elif c.fill is not None:
            spec.update({"missing": "fill", "fill": c.fill})
        cols[c.name] = spec
    p = cfg.privacy
    return {
        "schema": {"columns": cols, "unknown": cfg.unknown},
        "privacy": {"epsilon": p.epsilon, "delta": p.delta, "neighbouring": p.neighbouring.value,
                    "n": "public" if p.n_public else {"epsilon": p.n_epsilon}},
        "algorithm": {"name": cfg.algorithm, "params": params_to_mapping(cfg.params)},
        "workload": cfg.workload.to_raw(cfg.domain),
        "output": {"rows": "n" if cfg.output.rows is None else cfg.output.rows, "numeric": cfg.output.numeric},
        "limits": {"max_cells": cfg.max_cells},
        "decode": cfg.decode.to_raw(),
    }


# ----------------------------------------------------------------------------- the model
@dataclass
class ReleasedModel:
    """A released model (see the module docstring); ``sample`` draws rows, ``to_bytes`` saves it.

    ``measurements``: (attribute indices, noisy counts, noise scale) of each mechanism output
    the model was fitted to.  ``source``: what the model is post-processing of (a release, or a
    published marginals file).  ``privacy`` and ``ledger``: the release report's sections.  ``fine``: the
    fine view (:mod:`dpsynth.data.fine`) numbers are decoded with, when the release measured one.
    """

    config: Config
    model: Model
    measurements: Sequence = ()
    privacy: dict = field(default_factory=dict)
    ledger: list = field(default_factory=list)
    source: dict = field(default_factory=lambda: {"kind": "release"})
    report_sha256: str | None = None
    fine: FineView | None = None

    # -- sampling ---------------------------------------------------------------------
    def condition(self, where: str | Condition | None) -> tuple[Model, Condition | None]:
        """The model conditioned on ``where`` (exactly; :mod:`dpsynth.models.condition`)."""
        if where is None:
            return self.model, None
        cond = where if isinstance(where, Condition) else parse_where(
            where, self.config.domain, numeric=self.config.output.numeric)
        try:
            return self.model.condition(cond.weights), cond
        except ZeroProbability:
            raise UsageError(f"--where: '{cond.text}' has probability 0 under the model "
                             "(no synthetic row can satisfy it)") from None

    def chunks(self, rows: int, *, rng: np.random.Generator, where: str | Condition | None = None,
               chunk_rows: int = CHUNK_ROWS) -> Iterator[Decoded]:
        """``rows`` rows in chunks of ``chunk_rows`` (memory bounded by the chunk, not by ``rows``)."""
        _check_rows(rows)
        model, cond = self.condition(where)
        return draw_chunks(model, self.config, rows, rng=rng, bounds=cond.bounds if cond else None,
                           chunk_rows=chunk_rows, fine=self.fine)

    def sample(self, rows: int, *, rng: np.random.Generator, where: str | Condition | None = None) -> pd.DataFrame:
        """``rows`` synthetic rows as a DataFrame (post-processing: no data, no budget)."""
        frames = [c.to_pandas() for c in self.chunks(rows, rng=rng, where=where)]
        return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]

    # -- identity ---------------------------------------------------------------------
    def _payload(self) -> dict[str, bytes]:
        header, arrays = model_to_arrays(self.model)
        names = self.config.domain.names
        release = {
            "source": self.source,
            "model": header,
            "measurements": [{"attrs": [names[a] for a in m.attrs], "scale": float(m.scale),
                              "noise": getattr(m, "noise", "laplace")} for m in self.measurements],
            "privacy": self.privacy,
            "ledger": self.ledger,
        }
        if self.fine is not None:
            release["fine"] = {"columns": list(self.fine.columns), "noise": dict(self.fine.noise)}
        entries = {"config.json": json_bytes(config_document(self.config)), "release.json": json_bytes(release)}
        for name, arr in arrays.items():
            entries[f"arrays/model/{name}.npy"] = _npy(arr)
        for i, m in enumerate(self.measurements):
            entries[f"arrays/measurements/{i}.npy"] = _npy(np.asarray(m.values, dtype=np.float64))
        for i, col in enumerate(self.fine.columns.values() if self.fine is not None else ()):
            entries[f"arrays/fine/{i}.edges.npy"] = _npy(col.edges)
            entries[f"arrays/fine/{i}.weights.npy"] = _npy(col.weights)
        return entries

    @property
    def sha256(self) -> str:
        """The model's identity: a hash of everything in the file except the manifest."""
        return _content_hash({k: sha256(v) for k, v in self._payload().items()})

    def to_bytes(self) -> bytes:
        payload = self._payload()
        digests = {k: sha256(v) for k, v in payload.items()}
        manifest = {
            "format": FORMAT,
            "schema_version": SCHEMA_VERSION,
            "tool": {"name": "dpsynth", "version": __version__},
            "model_sha256": _content_hash(digests),
            "report_sha256": self.report_sha256,
            "entries": digests,
        }
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for name, data in [("manifest.json", json_bytes(manifest)), *payload.items()]:
                info = zipfile.ZipInfo(name, date_time=_DATE)
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, data)
        return buf.getvalue()

    def with_report(self, report_bytes: bytes) -> ReleasedModel:
        return replace(self, report_sha256=sha256(report_bytes))

    def save(self, path: str | Path, *, report: Mapping | None = None, force: bool = False) -> Path:
        """Write the model file (:meth:`to_bytes`) to ``path`` atomically, as ``dpsynth release --model`` does:
        into a temporary file beside it, then renamed into place, so a failure leaves no partial file.

        ``report``: the release's report (``result.report``): the file then records the hash of its JSON as
        dpsynth writes it (the link ``dpsynth sample`` and the report check); ``force``: overwrite an existing
        file (else :class:`~dpsynth.errors.OutputError`, as for the CLI without ``--force``)."""
        from dpsynth.data.io import OutputSet

        model = self if report is None else self.with_report(json_bytes(report))
        with OutputSet(force=force) as out:
            out.add_bytes(path, model.to_bytes())
            out.commit()
        return Path(path)


def _check_rows(rows) -> None:
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
        raise UsageError(f"the number of rows must be an integer >= 1, got {rows}")


def draw_chunks(source, config: Config, rows: int, *, rng: np.random.Generator, bounds=None,
                chunk_rows: int = CHUNK_ROWS, fine: FineView | None = None) -> Iterator[Decoded]:
    """Sample (from a model) or slice (an array of codes), then decode, ``chunk_rows`` at a time (numbers from
    the ``fine`` view when there is one)."""
    for start in range(0, int(rows), int(chunk_rows)):
        k = min(int(chunk_rows), int(rows) - start)
        codes = source[start:start + k] if isinstance(source, np.ndarray) else source.sample(k, rng=rng)
        yield decode_columns(codes, config.domain, numeric=config.output.numeric, rng=rng, bounds=bounds, fine=fine)


def _npy(arr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
    return buf.getvalue()


def _content_hash(digests: Mapping[str, str]) -> str:
    return sha256("".join(f"{k}\0{digests[k]}\n" for k in sorted(digests)).encode("utf-8"))


# --------------------------------------------------------------------------------- load
def load_model(path: str | Path) -> ReleasedModel:
    """Read and validate a model file; :class:`ModelFileError` (one line) if it is not a sound
    dpsynth model of a supported ``schema_version``."""
    p = Path(path)
    if not p.is_file():
        raise InputMissingError(f"model file not found: {p}")
    data = p.read_bytes()
    return model_from_bytes(data, str(p))


def model_from_bytes(data: bytes, name: str = "model") -> ReleasedModel:
    if not data.startswith(b"PK\x03\x04"):
        raise ModelFileError(f"{name}: not a dpsynth model file (not a zip archive)")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            entries = _read_entries(zf, name)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, OSError, NotImplementedError, ValueError):
        raise ModelFileError(f"{name}: the model file is corrupt or truncated (unreadable zip archive)") from None
    manifest = _json(entries.pop("manifest.json", None), name, "manifest.json", foreign=True)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModelFileError(f"{name}: not a dpsynth model file (no '{FORMAT}' manifest)")
    version = manifest.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ModelFileError(f"{name}: the model file is corrupt (bad schema_version)")
    if version > SCHEMA_VERSION:
        raise ModelFileError(f"{name}: the model was written by a newer dpsynth (model schema_version {version}; "
                             f"this dpsynth {__version__} reads up to {SCHEMA_VERSION}): upgrade dpsynth")
    digests = manifest.get("entries")
    if not isinstance(digests, dict) or set(digests) != set(entries):
        raise ModelFileError(f"{name}: the model file is corrupt (its entries do not match the manifest)")
    for key, blob in entries.items():
        if sha256(blob) != digests[key]:
            raise ModelFileError(f"{name}: the model file is corrupt (checksum mismatch in {key})")
    if manifest.get("model_sha256") != _content_hash(digests):
        raise ModelFileError(f"{name}: the model file is corrupt (model_sha256 does not match its content)")
    try:
        return _build(entries, manifest, name)
    except ConfigError as exc:
        raise ModelFileError(f"{name}: the model file is corrupt (config.json: {exc})") from None
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise ModelFileError(f"{name}: the model file is corrupt ({_one_line(exc)})") from None


def _one_line(exc: Exception) -> str:
    if isinstance(exc, KeyError):
        return f"missing key {exc}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _read_entries(zf: zipfile.ZipFile, name: str) -> dict[str, bytes]:
    out = {}
    for info in zf.infolist():
        if info.file_size > _MAX_ENTRY_BYTES or info.filename in out:
            raise ModelFileError(f"{name}: the model file is corrupt (oversized or duplicate entry)")
        out[info.filename] = zf.read(info)  # checks each entry's CRC-32
    return out


def _json(blob: bytes | None, name: str, entry: str, *, foreign: bool = False):
    if blob is None:
        raise ModelFileError(f"{name}: not a dpsynth model file (no {entry})" if foreign
                             else f"{name}: the model file is corrupt (no {entry})")
    try:
        return json.loads(blob.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError):
        what = "not a dpsynth model file" if foreign else "the model file is corrupt"
        raise ModelFileError(f"{name}: {what} ({entry} is not valid JSON)") from None


def _reject_constant(value: str):
    raise ValueError(f"non-finite number {value}")


def _build(entries: dict[str, bytes], manifest: dict, name: str) -> ReleasedModel:
    config = parse_config(_json(entries.get("config.json"), name, "config.json"))
    release = _json(entries.get("release.json"), name, "release.json")
    keys = {"source", "model", "measurements", "privacy", "ledger"}
    if not isinstance(release, dict) or not keys <= set(release) <= keys | {"fine"}:
        raise ValueError("release.json has unexpected keys")
    arrays = {k[len("arrays/model/"):-4]: _read_npy(v) for k, v in entries.items() if k.startswith("arrays/model/")}
    model = model_from_arrays(release["model"], arrays)
    if tuple(model.sizes) != tuple(config.domain.sizes):
        raise ValueError("the model's domain does not match config.json")
    measurements = []
    for i, m in enumerate(release["measurements"]):
        attrs = config.domain.indices(m["attrs"])
        values = _read_npy(entries[f"arrays/measurements/{i}.npy"])
        scale, noise = m["scale"], m.get("noise", "laplace")  # files before the noise field: Laplace
        if values.shape != config.domain.shape(attrs) or not (isinstance(scale, (int, float)) and math.isfinite(scale)):
            raise ValueError(f"measurement {i} does not match its marginal")
        if noise not in ("laplace", "gaussian"):
            raise ValueError(f"measurement {i} has an unknown noise distribution")
        measurements.append(NoisyMarginal(tuple(attrs), values, float(scale), noise))
    n_arrays = sum(k.startswith("arrays/measurements/") for k in entries)
    if n_arrays != len(measurements):
        raise ValueError("unexpected measurement arrays")
    fine = _fine_view(release.get("fine"), entries, config)
    report_sha = manifest.get("report_sha256")
    if report_sha is not None and not isinstance(report_sha, str):
        raise ValueError("report_sha256 must be a string or null")
    return ReleasedModel(config, model, measurements, release["privacy"], release["ledger"], release["source"],
                         report_sha, fine)


def _fine_view(doc, entries: dict[str, bytes], config: Config) -> FineView | None:
    """The fine view of release.json's ``fine`` and its arrays (each a numeric column of the schema)."""
    count = sum(k.startswith("arrays/fine/") for k in entries)
    if doc is None:
        if count:
            raise ValueError("unexpected fine-view arrays")
        return None
    names, noise = doc["columns"], doc["noise"]
    if not isinstance(names, list) or not isinstance(noise, dict) or count != 2 * len(names):
        raise ValueError("the fine view does not match its arrays")
    columns = {}
    for i, name in enumerate(names):
        spec = config.domain.columns[config.domain.index(name)]
        if not isinstance(spec, NumericColumn):
            raise TypeError(f"the fine view's column '{name}' is not numeric")
        columns[name] = FineColumn(_read_npy(entries[f"arrays/fine/{i}.edges.npy"]),
                                   _read_npy(entries[f"arrays/fine/{i}.weights.npy"]))
    return FineView(columns, noise)


def _read_npy(blob: bytes) -> np.ndarray:
    arr = np.lib.format.read_array(io.BytesIO(blob), allow_pickle=False)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"array of dtype {arr.dtype} (only numbers are allowed)")
    return arr

