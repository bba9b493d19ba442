"""One release of each tool in its own child process: wall time, peak RSS and the synthetic codes.

* dpsynth: ``benchmarks.worker.run_release`` (a forked child runs
  ``dpsynth.release`` on the original table with the public config; ``seconds``
  is the wall time of ``dpsynth.release``, encode → algorithm → decode), the
  synthetic rows re-encoded with the same schema.
* smartnoise-synth: ``snsynth_child.py`` under the PEER venv's interpreter, fed
  the codes; ``seconds`` is the wall time of ``fit`` plus that variant's
  sampling (not the imports).

``cpu_seconds`` is the user + system CPU time of the same span (a figure the
load of a shared machine disturbs less than wall time).  ``peak_mb`` is, for both, ``ru_maxrss`` of the ``struct rusage`` that
``os.wait4`` returns for that one child.  Every child runs with one BLAS /
OpenMP / XLA thread (:data:`THREAD_ENV`).
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from benchmarks.grid import ROOT, Cell, algorithm_preset
from benchmarks.worker import build_config, run_release

from .tables import TABLES

__all__ = ["CHILD", "PEER_PYTHON", "THREAD_ENV", "aim_progress", "chosen_algorithm", "dpsynth_cell", "dpsynth_release", "peer_available", "peer_release"]

HERE = Path(__file__).resolve().parent
CHILD = HERE / "snsynth_child.py"
PEER_PYTHON = HERE / ".venv" / "bin" / "python"
THREAD_ENV = {
    "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
    "JAX_PLATFORMS": "cpu", "TF_CPP_MIN_LOG_LEVEL": "2",
}
POLL = 0.05


# ------------------------------------------------------------------------ dpsynth
def _merge(base: dict, extra: dict) -> dict:
    out = dict(base)
    for key, value in extra.items():
        out[key] = _merge(out.get(key, {}), value) if isinstance(value, dict) else value
    return out


def dpsynth_cell(dataset: str, n_columns: int, algorithm: str, epsilon: float, seed: int, *,
                 params: dict | None = None, workload: dict | None = None) -> Cell:
    """The dpsynth release to compare: ``configs/<dataset>-<algorithm>.yaml``'s params and workload when
    that file exists, else the library's default params and the benchmark preset's workload
    (``benchmarks.grid.algorithm_preset``); ``params`` is merged in and ``workload`` replaces."""
    _, preset_workload, delta = algorithm_preset(algorithm, TABLES[dataset], "full", n_columns)
    base_params, base_workload = {}, preset_workload
    path = ROOT / "configs" / f"{dataset}-{algorithm}.yaml"
    if path.is_file():
        raw = yaml.safe_load(path.read_text())
        base_params = (raw.get("algorithm") or {}).get("params") or {}
        base_workload = raw.get("workload") or preset_workload
    return Cell(dataset=dataset, algorithm=algorithm, epsilon=epsilon, seed=seed, delta=delta,
                params=_merge(base_params, params or {}), workload=workload or base_workload)


def dpsynth_release(table, cell: Cell, *, timeout: float) -> dict:
    """Status, seconds, cpu_seconds, peak_mb, base_mb, epsilon/delta spent and ``codes`` of one dpsynth release.

    ``cpu_seconds`` is the child's user + system CPU time: the growth of this
    process's ``RUSAGE_CHILDREN`` times across the one child ``run_release`` waits for.
    """
    try:
        cfg = build_config(table.raw, cell)
    except Exception as exc:  # noqa: BLE001 - a bad --dpsynth/--params is reported as the row's error
        return {"status": "error", "error": f"{type(exc).__name__}: {exc}"[:300]}
    before = _children_cpu()
    with tempfile.TemporaryDirectory(prefix="dpsynth-peers-report-") as tmp:
        report_path = Path(tmp) / "report.json"
        with _keep_report(report_path):
            res = run_release(table.rows, cfg, cell, timeout=timeout)
        res |= {"cpu_seconds": round(_children_cpu() - before, 3)}
        if report_path.exists():
            res |= chosen_algorithm(json.loads(report_path.read_text()))
    return res


def chosen_algorithm(report: dict) -> dict:
    """``{"chosen": ..., "chosen_why": ...}`` from a release report: what ``auto`` resolved to (its
    ``details.auto``), else the algorithm's own name; ``delta_spent`` from the privacy section."""
    alg = report.get("algorithm") or {}
    auto = (alg.get("details") or {}).get("auto") or {}
    why = auto.get("why") or []
    return {"chosen": auto.get("chosen", alg.get("name")), "chosen_why": " | ".join(why[1:] if len(why) > 1 else why),
            "delta_spent": (report.get("privacy") or {}).get("delta_spent")}


@contextlib.contextmanager
def _keep_report(path: Path):
    """While active, ``dpsynth.release`` in a forked child also writes its report's JSON to ``path``.

    ``benchmarks.worker`` keeps only ε spent; the peer table also states what ``auto`` chose.  The child
    is a fork of this process, so wrapping ``dpsynth.release`` here reaches it; the wrapper only copies
    the report the release returns (it changes neither the release nor its timing beyond one small write).
    """
    import dpsynth

    inner = dpsynth.release

    def release(*args, **kwargs):
        res = inner(*args, **kwargs)
        path.write_text(json.dumps(res.report, default=str))
        return res

    dpsynth.release = release
    try:
        yield
    finally:
        dpsynth.release = inner


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# ---------------------------------------------------------------------- the peer
def peer_available(python: Path = PEER_PYTHON) -> str | None:
    """None when the peer venv can import smartnoise-synth, else why not (one line)."""
    if not Path(python).exists():
        return f"{python} not found: run benchmarks/peers/install.sh first"
    probe = subprocess.run([str(python), "-c", "import snsynth, mbi"], check=False, capture_output=True, text=True,
                           env=os.environ | THREAD_ENV, timeout=300)
    if probe.returncode != 0:
        tail = (probe.stderr.strip().splitlines() or ["?"])[-1]
        return f"{python} cannot import smartnoise-synth: {tail}"
    return None


def _wait(pid: int, timeout: float) -> tuple[int, object, bool]:
    t0 = time.perf_counter()
    while True:
        wpid, status, usage = os.wait4(pid, os.WNOHANG)
        if wpid == pid:
            return status, usage, False
        if time.perf_counter() - t0 > timeout:
            try:
                os.killpg(pid, signal.SIGKILL)  # the child leads its own session
            except ProcessLookupError:
                pass
            _, status, usage = os.wait4(pid, 0)
            return status, usage, True
        time.sleep(POLL)


def aim_progress(path: Path) -> dict:
    """``rounds`` and ``budget_share`` of the last model fit logged in ``path`` (empty when nothing was)."""
    lines = path.read_text().splitlines() if path.exists() else []
    if not lines:
        return {}
    last = json.loads(lines[-1])
    return {"rounds": last["rounds"], "budget_share": last["share"]}


def peer_release(codes_path: Path, sizes, *, synth: str, epsilon: float, delta: float, seed: int,
                 variants, params: dict | None = None, timeout: float,
                 python: Path = PEER_PYTHON, progress: Path | None = None) -> dict:
    """Fit smartnoise ``synth`` once in a child process of the peer venv; sample every variant.

    Returns ``status``, ``peak_mb``, ``child_seconds``, ``child_cpu_seconds`` (the whole child, imports
    included), ``fit_seconds``, ``fit_cpu_seconds``, ``base_mb``, ``error``
    and ``variants``: ``{name: {"codes": array, "sample_seconds": s, "sample_cpu_seconds": s} | {"error": msg}}``.
    With ``progress`` (AIM), the child logs each model fit there as it happens (``snsynth_child.watch_rounds``);
    ``rounds`` and ``budget_share`` are then the last fit's, also after a timeout.
    """
    with tempfile.TemporaryDirectory(prefix="dpsynth-peer-") as tmp:
        out = Path(tmp)
        spec = {"codes": str(codes_path), "sizes": [int(k) for k in sizes], "synth": synth, "epsilon": epsilon,
                "delta": delta, "seed": seed, "params": params or {}, "variants": list(variants), "out": tmp,
                "progress": str(progress) if progress else None}
        if progress:
            Path(progress).parent.mkdir(parents=True, exist_ok=True)
            Path(progress).unlink(missing_ok=True)
        log = out / "child.log"
        t0 = time.perf_counter()
        with open(log, "w") as sink:
            proc = subprocess.Popen([str(python), str(CHILD)], stdin=subprocess.PIPE, stdout=sink,
                                    stderr=subprocess.STDOUT, env=os.environ | THREAD_ENV, text=True,
                                    start_new_session=True)
            proc.stdin.write(json.dumps(spec))
            proc.stdin.close()
            status, usage, timed_out = _wait(proc.pid, timeout)
            proc.returncode = status  # reaped above by os.wait4
        result = {"peak_mb": round(usage.ru_maxrss / 1024, 1), "child_seconds": round(time.perf_counter() - t0, 3),
                  "child_cpu_seconds": round(usage.ru_utime + usage.ru_stime, 3)}
        if progress:
            result |= aim_progress(Path(progress))
        meta_path = out / "meta.json"
        meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        if timed_out:
            return result | {"status": "timeout", "error": f"killed after {timeout:g} s", "variants": {}}
        if "error" in meta or not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            tail = " | ".join(log.read_text(errors="replace").strip().splitlines()[-3:])
            return result | {"status": "error", "error": meta.get("error", tail)[:300], "variants": {}}
        found = {}
        for v in variants:
            if v in meta["errors"]:
                found[v] = {"error": meta["errors"][v]}
            else:
                found[v] = {"codes": np.load(out / f"{v}.npy"), "sample_seconds": meta["sample_seconds"][v],
                            "sample_cpu_seconds": meta["sample_cpu_seconds"][v]}
        return result | {"status": "ok", "fit_seconds": meta["fit_seconds"], "fit_cpu_seconds": meta["fit_cpu_seconds"],
                         "base_mb": meta["base_mb"], "variants": found}
