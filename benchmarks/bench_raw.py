"""Raw tables in, judged under a neutral binning: zero-config (discovered schema) vs hand-written schema.

Run (nice, it is CPU-bound)::

    nice -n 10 python -m benchmarks.bench_raw --tables wage cps1988 star --seeds 3
    nice -n 10 python -m benchmarks.bench_raw --tables nasscds gss_wages mplsstops loans fertility --seeds 1

Per table and seed, at the same total ε (default 1) and δ (default 1e-6), each in a child process
(``python -m dpsynth release``, this checkout):

* **(a) zero-config**: ``dpsynth release -i T -o O --epsilon E --delta D`` when ``release --help`` offers
  ``--epsilon``; otherwise a config with only ``schema: {discover: {epsilon: 0.2·E, delta: D}}``, the
  privacy block, ``algorithm: auto`` and all 2-way marginals (the discovery spend comes out of the total);
* **(b) hand-written public schema**: ``benchmarks/raw_configs/<table>.yaml`` (bounds and categories a data
  steward writes from the columns' documented meaning), the same privacy block, algorithm and workload;
* **(c) baselines from the REAL data**: independence (the product of the true 1-way marginals under the
  neutral binning) and uniform (over the bins the real table occupies).

Rows are judged on their RAW values in the neutral binning of ``benchmarks/neutral.py``, chosen from the real
table only (never from either release's schema), on the columns the hand-written schema keeps (what a steward
leaves out, identifiers, generated names, free text, is judged in neither arm): 1-way TV, mean 2-way marginal L1 over all pairs, mean 3-way
L1 over 200 triples drawn with a fixed seed. Identifier and free-text columns (text that is mostly unique, or
whose 20 most frequent values hold under 10 % of the rows) are left out of the judging for both releases and
listed. These figures read the
private data and are NOT differentially private.

Tables are read-only and live outside the repository (``/work/shared/data``; ``/work/rawdata`` written by
``benchmarks/fetch_raw.py``); absent ones are skipped. Writes ``benchmarks/results/raw_<date>.json`` and
prints a markdown table.
"""

from __future__ import annotations

import argparse
import copy
import datetime as dt
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from benchmarks.fetch_raw import TABLES as FETCHED
from benchmarks.neutral import Judge

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("DPSYNTH_SHARED_DATA", "/work/shared/data"))
RAW = Path(os.environ.get("DPSYNTH_RAW_DATA", "/work/rawdata"))
CONFIGS = ROOT / "benchmarks" / "raw_configs"
DISCOVER_SHARE = 0.2  # of the total ε, for (a) when it runs through a schema.discover config
IDENTIFIER_TOP_SHARE = 0.10
MOSTLY_UNIQUE = 0.5


@dataclass(frozen=True)
class Table:
    name: str
    path: Path
    role: str  # dev | held-out | shared
    sample: int | None = None  # a fixed random subsample of this many rows (seed 0)


TABLES = {t.name: t for t in [
    Table("adult", SHARED / "adult" / "adult_train.csv", "shared"),
    Table("adult_test", SHARED / "adult" / "adult_test.csv", "shared"),
    Table("pums", SHARED / "pums" / "PUMS.csv", "shared"),
    Table("pums_null", SHARED / "pums" / "PUMS_null.csv", "shared"),
    Table("kddcup99", SHARED / "kddcup99" / "kddcup99_10pct.csv.gz", "shared", sample=50_000),
    Table("wage", RAW / "wage.csv", "dev"),
    Table("cps1988", RAW / "cps1988.csv", "dev"),
    Table("star", RAW / "star.csv", "dev"),
    Table("nasscds", RAW / "nasscds.csv", "held-out"),
    Table("gss_wages", RAW / "gss_wages.csv", "held-out"),
    Table("mplsstops", RAW / "mplsstops.csv", "held-out"),
    Table("loans", RAW / "loans.csv", "held-out"),
    Table("fertility", RAW / "fertility.csv", "held-out"),
]}
# the fresh held-out tables of fetch_raw.py (roles held-out-3a, -3b, -4 ... -21), same names
TABLES |= {name: Table(name, RAW / f"{name}.csv", role) for name, (_, _, role, _) in FETCHED.items()
           if name not in TABLES}
DEV = ["wage", "cps1988", "star"]


def read_raw(path: Path) -> pd.DataFrame:
    """A raw CSV as text; only an empty field is null (as dpsynth reads it)."""
    return pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])


def _cli() -> list[str]:
    return [sys.executable, "-m", "dpsynth"]


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))


def release_has_epsilon() -> bool:
    """True when this checkout's ``dpsynth release`` takes ``--epsilon`` (the zero-config release)."""
    out = subprocess.run(_cli() + ["release", "--help"], capture_output=True, text=True, env=_env(),
                         cwd=ROOT, check=False)
    return "--epsilon" in out.stdout


def privacy_block(epsilon: float, delta: float) -> dict:
    return {"epsilon": float(epsilon), "delta": float(delta)}


COMMON = {"workload": {"marginals": {"k": 2}}}


def zero_config_command(table: Path, out: Path, *, epsilon: float, delta: float, seed: int, workdir: Path,
                        native: bool) -> list[str]:
    """The command of (a): the one place to switch once ``dpsynth release --epsilon`` lands on main."""
    if native:
        return _cli() + ["release", "-i", str(table), "-o", str(out), "--epsilon", repr(epsilon),
                         "--delta", repr(delta), "--seed", str(seed), "--force"]
    cfg = {"schema": {"discover": {"epsilon": DISCOVER_SHARE * epsilon, "delta": delta}},
           "privacy": privacy_block(epsilon, delta), "algorithm": {"name": "auto"}} | copy.deepcopy(COMMON)
    path = workdir / "zero_config.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return _cli() + ["release", "-c", str(path), "-i", str(table), "-o", str(out), "--seed", str(seed), "--force"]


def nulls_hint_command(table: Path, out: Path, columns: list[str], *, epsilon: float, delta: float, seed: int,
                       workdir: Path) -> list[str]:
    """Arm a+ (diagnostic): (a) through a schema.discover config whose only hint is ``missing: category`` on
    every column (the header is public; "any column may hold nulls" is not a fact about the rows), so the
    rows of a discovered schema can be judged where (a) refuses a column's nulls (exit 65)."""
    cfg = {"schema": {"discover": {"epsilon": DISCOVER_SHARE * epsilon, "delta": delta,
                                   "columns": {c: {"missing": "category"} for c in columns}}},
           "privacy": privacy_block(epsilon, delta), "algorithm": {"name": "auto"}} | copy.deepcopy(COMMON)
    path = workdir / "nulls_hint.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return _cli() + ["release", "-c", str(path), "-i", str(table), "-o", str(out), "--seed", str(seed), "--force"]


def hand_command(table: Path, out: Path, config: Path, *, epsilon: float, delta: float, seed: int,
                 workdir: Path) -> list[str]:
    """The command of (b): the hand-written schema with the same privacy block, algorithm and workload as (a)."""
    raw = yaml.safe_load(config.read_text())
    cfg = {"schema": raw["schema"], "privacy": privacy_block(epsilon, delta),
           "algorithm": raw.get("algorithm", {"name": "auto"})} | copy.deepcopy(COMMON)
    path = workdir / "hand.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return _cli() + ["release", "-c", str(path), "-i", str(table), "-o", str(out), "--seed", str(seed), "--force"]


def run_release(cmd: list[str], out: Path, timeout: float) -> dict:
    """Runs one release in a child; its exit code, wall time, last stderr lines, the rows and report."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=timeout,
                              check=False)
        code, err = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired as e:
        code, err = "timeout", (e.stderr or b"").decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
    seconds = time.perf_counter() - t0
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("dpsynth: progress")
             and "fixed seed" not in ln]
    notable = [ln for ln in lines if any(w in ln.lower() for w in ("error", "warning", "notice", "refus"))]
    rec = {"exit": code, "seconds": round(seconds, 2), "stderr": (notable or ([] if code == 0 else lines[-3:]))[:8]}
    report = Path(str(out) + ".report.json")
    if code == 0 and out.exists():
        rec["rows"] = read_raw(out)
        if report.exists():
            rep = json.loads(report.read_text())
            priv = rep.get("privacy", {})
            rec["epsilon_spent"] = priv.get("epsilon_spent")
            rec["delta_spent"] = priv.get("delta_spent")
            rec["algorithm"] = rep.get("algorithm", {}).get("name") if isinstance(rep.get("algorithm"), dict) \
                else rep.get("algorithm")
            rec["report_warnings"] = len(rep.get("warnings", []))
    return rec


def evaluate_verdict(table: Path, out: Path, timeout: float) -> dict:
    """``dpsynth evaluate`` on a zero-config release, as its user would run it (the written config, the real
    table, 2-way only): its verdict against the independence baseline, to check against the neutral judge's
    (issue 27: evaluate must never call rows better than independence that a neutral binning finds worse)."""
    config = Path(str(out) + ".config.yaml")
    if not config.exists():
        return {"evaluate_exit": "no config written"}
    js = out.with_suffix(".evaluate.json")
    cmd = _cli() + ["evaluate", "-c", str(config), "--real", str(table), "--synthetic", str(out), "--k", "2",
                    "--ranges", "0", "--json", str(js)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired:
        return {"evaluate_exit": "timeout"}
    if proc.returncode != 0 or not js.exists():
        return {"evaluate_exit": proc.returncode, "evaluate_stderr": proc.stderr.strip().splitlines()[-1:]}
    verdict = json.loads(js.read_text()).get("verdict") or {}
    return {"evaluate_exit": 0, "evaluate_ratio": verdict.get("ratio"),
            "evaluate_better": verdict.get("better_than_baseline")}


def judged_columns(real: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Columns judged, and identifier / free-text columns left out.

    Left out: text (not numbers, not dates) that is mostly unique (distinct values > half the non-null
    rows) or whose 20 most frequent values hold under 10 % of the non-null rows.
    """
    keep, skip = [], []
    for c in real.columns:
        s = real[c].dropna()
        numeric = len(s) and not pd.to_numeric(s, errors="coerce").isna().any()
        counts = s.value_counts()
        top = counts.iloc[:20].sum() / len(s) if len(s) else 1.0
        unique = len(counts) / len(s) if len(s) else 0.0
        text_id = not numeric and (top < IDENTIFIER_TOP_SHARE or unique > MOSTLY_UNIQUE)
        (skip if text_id and not _is_datetime(s) else keep).append(c)
    return keep, skip


def _is_datetime(s: pd.Series) -> bool:
    if not s.str.contains(r"\d").all():
        return False
    return not pd.to_datetime(s, errors="coerce", utc=True, format="mixed").isna().any()


def _prepare(table: Table, workdir: Path) -> tuple[Path, pd.DataFrame]:
    real = read_raw(table.path)
    if table.sample is None or len(real) <= table.sample:
        return table.path, real
    real = real.sample(n=table.sample, random_state=0).reset_index(drop=True)
    path = workdir / f"{table.name}.csv"
    real.to_csv(path, index=False)
    return path, real


ARMS = ("a", "b", "a+")


def bench_table(table: Table, *, seeds: list[int], epsilon: float, delta: float, timeout: float,
                native: bool, config: Path | None = None, triples: int = 200,
                arms: tuple[str, ...] = ("a", "b"), evaluate: bool = True) -> dict:
    config = config or CONFIGS / f"{table.name}.yaml"
    with tempfile.TemporaryDirectory(prefix=f"bench_raw_{table.name}_") as tmp:
        work = Path(tmp)
        path, real = _prepare(table, work)
        keep, skip = judged_columns(real)
        if config.exists():  # what the steward's schema leaves out (ids, names, free text) is judged in neither arm
            steward = set((yaml.safe_load(config.read_text()).get("schema") or {}).get("columns") or {})
            skip += [c for c in keep if c not in steward]
            keep = [c for c in keep if c in steward]
        judge = Judge.from_real(real[keep], triples=triples, seed=0)
        result = {"table": table.name, "role": table.role, "rows": len(real), "columns": real.shape[1],
                  "judged_columns": len(keep), "left_out": skip, "epsilon": epsilon, "delta": delta,
                  "zero_config": "release --epsilon" if native else f"schema.discover ({DISCOVER_SHARE}·ε)",
                  "independence": judge.independence(), "uniform": judge.uniform(), "runs": []}
        for seed in seeds:
            for arm in arms:
                out = work / f"{arm}_{seed}.csv"
                if arm == "a":
                    cmd = zero_config_command(path, out, epsilon=epsilon, delta=delta, seed=seed, workdir=work,
                                              native=native)
                elif arm == "a+":
                    cmd = nulls_hint_command(path, out, list(real.columns), epsilon=epsilon, delta=delta,
                                             seed=seed, workdir=work)
                elif config.exists():
                    cmd = hand_command(path, out, config, epsilon=epsilon, delta=delta, seed=seed, workdir=work)
                else:
                    continue
                rec = run_release(cmd, out, timeout)
                rows = rec.pop("rows", None)
                if rows is not None:
                    rec |= judge.score(rows)
                    if arm == "a" and evaluate:
                        rec |= evaluate_verdict(path, out, timeout)
                        ind = result["independence"]["l1_2way"]
                        # misleading: evaluate says better than independence, the neutral judge finds worse
                        rec["evaluate_misleads"] = bool(rec.get("evaluate_better")) and rec["l1_2way"] > ind
                result["runs"].append({"arm": arm, "seed": seed} | rec)
                print(f"  {table.name} seed {seed} ({arm}): exit {rec['exit']}, {rec['seconds']} s, "
                      f"2-way L1 {rec.get('l1_2way', float('nan')):.4f}", file=sys.stderr, flush=True)
    return result


def _mean(runs: list[dict], arm: str, key: str) -> float:
    vals = [r[key] for r in runs if r["arm"] == arm and isinstance(r.get(key), (int, float))]
    return float(np.mean(vals)) if vals else float("nan")


def summarise(result: dict) -> dict:
    """Means over seeds per arm, and the ratios (a)/(b) and (a)/independence."""
    runs, ind = result["runs"], result["independence"]
    row = {"table": result["table"], "role": result["role"], "n": result["rows"], "d": result["judged_columns"]}
    for arm in ARMS:
        if not any(r["arm"] == arm for r in runs):
            continue
        for key in ("tv_1way", "l1_2way", "l1_3way", "seconds", "invalid_share"):
            row[f"{arm}_{key}"] = _mean(runs, arm, key)
        codes = [r["exit"] for r in runs if r["arm"] == arm]
        row[f"{arm}_exit"] = ",".join(str(c) for c in codes)
    judged = [r for r in runs if r["arm"] == "a" and "evaluate_misleads" in r]
    if judged:
        row["evaluate_ratio"] = _mean(runs, "a", "evaluate_ratio")
        row["evaluate_misleads"] = sum(r["evaluate_misleads"] for r in judged)
        row["evaluate_runs"] = len(judged)
    for key in ("tv_1way", "l1_2way", "l1_3way"):
        row[f"ind_{key}"] = ind[key]
        row[f"unif_{key}"] = result["uniform"][key]
    nan = float("nan")
    for key in ("l1_2way", "l1_3way"):
        b = row.get(f"b_{key}", nan)
        for arm in ("a", "a+"):
            if f"{arm}_{key}" in row:
                row[f"{arm}/b_{key}"] = row[f"{arm}_{key}"] / b if b else nan
                row[f"{arm}/ind_{key}"] = row[f"{arm}_{key}"] / ind[key] if ind[key] else nan
    return row


def _f(v, digits=3) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


_KEYS = [f"{arm}_{k}" for arm in ("a", "b") for k in ("exit", "seconds", "tv_1way", "l1_2way", "l1_3way")] + [
    f"a/{x}_{k}" for x in ("b", "ind") for k in ("l1_2way", "l1_3way")]


def markdown(rows: list[dict]) -> str:
    head = ("| table (n × d) | exit a / b | time a / b (s) | 1-way TV a / b | 2-way L1 a / b / indep | "
            "3-way L1 a / b / indep | a/b 2-way | a/indep 2-way | a/b 3-way | a/indep 3-way |")
    lines = [head, "|" + "---|" * 10]
    for r in rows:
        r = {k: r.get(k, float("nan")) for k in _KEYS} | r
        lines.append(
            f"| {r['table']} ({r['n']:,} × {r['d']}) | {r['a_exit']} / {r['b_exit']} | "
            f"{_f(r['a_seconds'], 1)} / {_f(r['b_seconds'], 1)} | {_f(r['a_tv_1way'])} / {_f(r['b_tv_1way'])} | "
            f"{_f(r['a_l1_2way'])} / {_f(r['b_l1_2way'])} / {_f(r['ind_l1_2way'])} | "
            f"{_f(r['a_l1_3way'])} / {_f(r['b_l1_3way'])} / {_f(r['ind_l1_3way'])} | "
            f"{_f(r['a/b_l1_2way'], 2)} | {_f(r['a/ind_l1_2way'], 2)} | {_f(r['a/b_l1_3way'], 2)} | "
            f"{_f(r['a/ind_l1_3way'], 2)} |")
    judged = [r for r in rows if "evaluate_runs" in r]
    if judged:
        lines += ["", ("| table | `evaluate` synthetic/independence 2-way (its own neutral bins) | "
                       "judge a/indep 2-way | runs where evaluate said better and the judge found worse |"),
                  "|" + "---|" * 4]
        for r in judged:
            lines.append(f"| {r['table']} | {_f(r['evaluate_ratio'], 2)} | {_f(r.get('a/ind_l1_2way'), 2)} | "
                         f"{r['evaluate_misleads']} of {r['evaluate_runs']} |")
    plus = [r for r in rows if "a+_l1_2way" in r]
    if plus:
        lines += ["", ("| table | exit a+ | time a+ (s) | 1-way TV a+ | 2-way L1 a+ (a+/b, a+/indep) | "
                  "3-way L1 a+ (a+/b, a+/indep) |"), "|" + "---|" * 6]
        for r in plus:
            lines.append(
                f"| {r['table']} | {r['a+_exit']} | {_f(r['a+_seconds'], 1)} | {_f(r['a+_tv_1way'])} | "
                f"{_f(r['a+_l1_2way'])} ({_f(r['a+/b_l1_2way'], 2)}, {_f(r['a+/ind_l1_2way'], 2)}) | "
                f"{_f(r['a+_l1_3way'])} ({_f(r['a+/b_l1_3way'], 2)}, {_f(r['a+/ind_l1_3way'], 2)}) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", nargs="+", default=DEV, help=f"of {', '.join(TABLES)} (default: dev tables)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--arms", nargs="+", default=["a", "b"], choices=ARMS,
                        help="a: zero-config; b: hand-written schema; a+: a with missing: category hinted on "
                             "every column (diagnostic)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per release")
    parser.add_argument("--no-evaluate", action="store_true",
                        help="skip running `dpsynth evaluate` on each zero-config release (its verdict vs the judge's)")
    parser.add_argument("--out", default=None, help="JSON path (default benchmarks/results/raw_<date>.json)")
    args = parser.parse_args(argv)
    unknown = [t for t in args.tables if t not in TABLES]
    if unknown:
        parser.error(f"unknown table(s) {unknown}; choose from {list(TABLES)}")
    native = release_has_epsilon()
    results = []
    for name in args.tables:
        table = TABLES[name]
        if not table.path.exists():
            print(f"bench_raw: skipping {name}: {table.path} is absent", file=sys.stderr)
            continue
        results.append(bench_table(table, seeds=list(range(args.seeds)), epsilon=args.epsilon, delta=args.delta,
                                   timeout=args.timeout, native=native, arms=tuple(args.arms),
                                   evaluate=not args.no_evaluate))
    rows = [summarise(r) for r in results]
    print(markdown(rows))
    out = Path(args.out) if args.out else ROOT / "benchmarks" / "results" / f"raw_{dt.date.today():%Y%m%d}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT,
                            check=False).stdout.strip()
    out.write_text(json.dumps({"commit": commit, "argv": sys.argv[1:] if argv is None else argv,
                               "summary": rows, "tables": results}, indent=1, default=str) + "\n")
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
