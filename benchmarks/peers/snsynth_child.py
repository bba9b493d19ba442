"""One smartnoise-synth release on integer codes; runs inside the PEER venv (benchmarks/peers/.venv).

    benchmarks/peers/.venv/bin/python benchmarks/peers/snsynth_child.py < spec.json

This file imports only numpy, pandas, smartnoise-synth (``snsynth``) and its
``mbi`` (private-pgm) dependency: never dpsynth, whose venv it does not see.
``benchmarks.peers.run`` starts it once per fit and reads the peak RSS of this
process from ``os.wait4``.

``spec``: ``{"codes": "x.npy", "sizes": [k_0, ...], "synth": "mst" | "aim",
"epsilon": ε, "delta": δ, "seed": s, "params": {...}, "variants": [...],
"out": "dir", "progress": "x.jsonl"}`` (``progress``: optional, AIM only, see
:func:`watch_rounds`).  ``codes`` holds the integer codes (rows × columns) of the
table in dpsynth's public schema, ``sizes`` the public domain size of each
column.  Writes ``<out>/<variant>.npy`` (synthetic codes, as many rows as the
input) for each variant and ``<out>/meta.json``.

Variants, all drawn from the ONE fitted model (so they share ε and fit time):

* ``default``: smartnoise's own ``sample()`` (mbi's ``synthetic_data`` with
  ``method="round"``; for MST followed by the undo of its domain compression);
* ``iid``: i.i.d. rows from the same fitted graphical model
  (``synthetic_data(method="sample")``, then the same undo);
* ``rounded``: this file's randomized rounding (:func:`rounded_rows`), the
  idea of mbi's ``"round"`` but with the rows of each parent group in a fresh
  random order, so no correlation between unlinked columns is induced.

Domain: each column gets a smartnoise ``LabelTransformer`` fitted on the PUBLIC
list of codes ``0..k-1`` (not on the data), so smartnoise spends no
preprocessing budget, sees the full public domain even where a code is absent
from the data, and maps code i to its label i (checked below).

Randomness: ``np.random.seed(seed)`` seeds the legacy global generator that
smartnoise and mbi use for selection and sampling; the Gaussian noise comes
from OpenDP, which draws from the OS, so a seed does not reproduce a fit.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback
from pathlib import Path

import numpy as np
import pandas as pd


def rss_mb() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def public_transformer(sizes):
    """A fitted smartnoise TableTransformer whose categories are the public codes 0..k-1 of each column."""
    from snsynth.transform.label import LabelTransformer
    from snsynth.transform.table import TableTransformer

    cols = [f"c{i}" for i in range(len(sizes))]
    public = pd.DataFrame({c: np.arange(max(sizes)) % k for c, k in zip(cols, sizes, strict=True)})
    tt = TableTransformer([LabelTransformer(nullable=False) for _ in cols])
    tt.fit(public)
    if list(tt.cardinality) != list(sizes):
        raise RuntimeError(f"smartnoise domain {tt.cardinality} is not the public one {list(sizes)}")
    if not np.array_equal(np.asarray(tt.transform(public), dtype=np.int64), public.to_numpy()):
        raise RuntimeError("smartnoise's LabelTransformer does not map code i to label i")
    return tt, cols


def make_synth(name: str, epsilon: float, delta: float, params: dict):
    if name == "mst":
        from snsynth.mst.mst import MSTSynthesizer

        return MSTSynthesizer(epsilon=epsilon, delta=delta, **params)
    if name == "aim":
        from snsynth.aim.aim import AIMSynthesizer

        return AIMSynthesizer(epsilon=epsilon, delta=delta, **params)
    raise ValueError(f"synth {name!r} is not supported here; use 'mst' or 'aim'")


def _as_codes(frame, width: int) -> np.ndarray:
    arr = np.asarray(frame.to_numpy() if isinstance(frame, pd.DataFrame) else frame, dtype=np.int64)
    return arr.reshape(-1, width)


def _model_rows(synth, dataset) -> np.ndarray:
    """Codes of an mbi Dataset drawn from ``synth``'s model, in the input's column order, uncompressed."""
    undo = getattr(synth, "undo_compress_fn", None)  # MST compresses rare codes; AIM does not
    if undo is not None:
        dataset = undo(dataset)
    data = dataset.to_dict()
    names = [f"col{i}" for i in range(len(data))]
    return np.stack([np.asarray(data[c], dtype=np.int64) for c in names], axis=1)


def _round_counts(target: np.ndarray, total: int, rng: np.random.Generator) -> np.ndarray:
    """Integer counts summing to ``total`` that round ``target`` (also summing to ``total``) up or down."""
    base = np.floor(target).astype(np.int64)
    extra = total - int(base.sum())
    if extra > 0:
        frac = target - base
        p = frac / frac.sum() if frac.sum() > 0 else np.full(frac.size, 1.0 / frac.size)
        base[rng.choice(frac.size, size=extra, replace=False, p=p)] += 1
    return base


def rounded_rows(model, rows: int, rng: np.random.Generator):
    """``rows`` records from an mbi MarkovRandomField by randomized rounding, column by column.

    Columns follow the junction tree's elimination order reversed (each
    column's earlier neighbours in the model, its "parents", lie in one tree
    node).  Within each group of rows sharing the parents' values the
    conditional counts are rounded to integers and the resulting values are
    dealt to the group's rows in a random order.
    """
    from mbi import Dataset, junction_tree, marginal_oracles

    domain = model.domain
    cliques = [set(cl) for cl in model.cliques]
    tree, order = junction_tree.make_junction_tree(domain, cliques)
    marginals = marginal_oracles.message_passing_stable(model.potentials.expand(list(tree.nodes)))
    data: dict[str, np.ndarray] = {}
    for col in order[::-1]:
        near = set().union(*[cl for cl in cliques if col in cl]) if any(col in cl for cl in cliques) else set()
        parents = tuple(c for c in data if c in near)
        joint = np.asarray(marginals.project(parents + (col,)).datavector(flatten=False), dtype=float)
        joint = np.clip(joint, 0.0, None).reshape(-1, domain[col])
        values = np.empty(rows, dtype=np.int64)
        if parents:
            key = np.ravel_multi_index(tuple(data[c] for c in parents), tuple(domain[c] for c in parents))
        else:
            key = np.zeros(rows, dtype=np.int64)
        groups, inverse = np.unique(key, return_inverse=True)
        members = np.argsort(inverse, kind="stable")
        bounds = np.cumsum(np.bincount(inverse, minlength=groups.size))
        start = 0
        for g, stop in zip(groups, bounds, strict=True):  # loop over parent groups
            idx = members[start:stop]
            cond = joint[g]
            cond = cond / cond.sum() if cond.sum() > 0 else np.full(cond.size, 1.0 / cond.size)
            counts = _round_counts(cond * idx.size, idx.size, rng)
            values[idx] = rng.permutation(np.repeat(np.arange(cond.size), counts))
            start = stop
        data[col] = values
    return Dataset({c: data[c] for c in domain.attrs}, domain)


def watch_rounds(synth, path: Path) -> None:
    """Log every model fit of smartnoise's AIM to ``path``, one flushed JSON line each, as it happens.

    AIM refits its model (mbi's ``estimation.mirror_descent``) once after the 1-way measurements and once
    after each round's measurement (and once more at the end), so a fit's measurements beyond the first
    fit's tell the round reached; a run killed by the
    parent's timeout still leaves how far it got.  ``share``: the fraction of AIM's zCDP budget ρ used so
    far, recomputed from the measurements' noise: a 1-way measurement costs 1/(2σ²); a round costs
    1/(2σ²) for its measurement plus ε²/8 for its selection, and AIM ties the two so that the selection
    is 1/9 of the measurement (0.1 and 0.9 of each round's share, also after halving σ and in the last
    round), so a round costs (10/9)·1/(2σ²).  Each line: ``{"event": "start" | "end", "rounds", "share",
    "measurements", "seconds", "cpu_seconds"}`` (seconds since the fit began).
    """
    from mbi import estimation

    inner = estimation.mirror_descent
    t0, c0 = time.perf_counter(), time.process_time()
    sink = open(path, "a", buffering=1)  # noqa: SIM115 - line-buffered for the life of the child

    first: list[int] = []  # how many measurements the first fit had: the 1-way ones, selected by no round

    def log(event: str, measurements) -> None:
        if not first:
            first.append(len(measurements))
        one, more = measurements[:first[0]], measurements[first[0]:]  # a round may also select a 1-way marginal
        rho = sum(0.5 / m.stddev**2 for m in one) + sum(10 / 9 * 0.5 / m.stddev**2 for m in more)
        line = {"event": event, "rounds": len(more), "share": rho / synth.rho if synth.rho else None,
                "measurements": len(measurements), "seconds": round(time.perf_counter() - t0, 2),
                "cpu_seconds": round(time.process_time() - c0, 2)}
        sink.write(json.dumps(line) + "\n")
        os.fsync(sink.fileno())

    def mirror_descent(domain, measurements, *args, **kwargs):
        log("start", measurements)
        model = inner(domain, measurements, *args, **kwargs)
        log("end", measurements)
        return model

    estimation.mirror_descent = mirror_descent


def sample_variant(synth, variant: str, rows: int, width: int, rng: np.random.Generator) -> np.ndarray:
    if variant == "default":
        return _as_codes(synth.sample(rows), width)
    if variant == "iid":
        return _model_rows(synth, synth.synthesizer.synthetic_data(rows=rows, method="sample"))
    if variant == "rounded":
        return _model_rows(synth, rounded_rows(synth.synthesizer, rows, rng))
    raise ValueError(f"variant {variant!r} is not one of default, iid, rounded")


def run(spec: dict) -> dict:
    import snsynth  # noqa: F401 - imported before base_mb is read

    out = Path(spec["out"])
    codes = np.load(spec["codes"])
    sizes = [int(k) for k in spec["sizes"]]
    np.random.seed(int(spec["seed"]))
    rng = np.random.default_rng(int(spec["seed"]))
    tt, cols = public_transformer(sizes)
    synth = make_synth(spec["synth"], float(spec["epsilon"]), float(spec["delta"]), spec.get("params") or {})
    meta: dict = {"base_mb": round(rss_mb(), 1), "sample_seconds": {}, "sample_cpu_seconds": {}, "errors": {}}
    if spec.get("progress") and spec["synth"] == "aim":
        watch_rounds(synth, Path(spec["progress"]))
    t0, c0 = time.perf_counter(), time.process_time()
    synth.fit(pd.DataFrame(codes, columns=cols), transformer=tt, preprocessor_eps=0.0)
    meta["fit_seconds"], meta["fit_cpu_seconds"] = time.perf_counter() - t0, time.process_time() - c0
    for variant in spec["variants"]:  # loop over samplers of the one fitted model
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            rows = sample_variant(synth, variant, codes.shape[0], codes.shape[1], rng)
        except Exception as exc:  # noqa: BLE001 - one broken sampler does not void the fit
            meta["errors"][variant] = f"{type(exc).__name__}: {exc}"[:300]
            continue
        meta["sample_seconds"][variant] = time.perf_counter() - t0
        meta["sample_cpu_seconds"][variant] = time.process_time() - c0
        np.save(out / f"{variant}.npy", rows.astype(np.int32))
    return meta


def main() -> int:
    spec = json.loads(sys.stdin.read())
    out = Path(spec["out"])
    try:
        meta = run(spec)
        code = 0
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        traceback.print_exc()
        meta, code = {"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"[:300]}, 1
    (out / "meta.json").write_text(json.dumps(meta))
    return code


if __name__ == "__main__":
    sys.exit(main())
