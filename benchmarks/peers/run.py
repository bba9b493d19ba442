"""dpsynth beside a peer, smartnoise-synth (MST, AIM), on the same integer-coded tables.

    benchmarks/peers/install.sh                        # once: the peer's own venv (benchmarks/peers/.venv)
    nice .venv/bin/python -m benchmarks.peers.run      # Adult + NLTCS, ε ∈ {0.3, 1, 3}, 3 seeds, mwem vs MST
    nice .venv/bin/python -m benchmarks.peers.run --datasets adult --epsilons 1 --seeds 0 \\
        --peers aim --dpsynth none --append            # add AIM rows to results/peers.csv
    nice .venv/bin/python -m benchmarks.peers.run --dpsynth auto --params '{...}' --peers none --append
    nice .venv/bin/python -m benchmarks.peers.run --from-csv benchmarks/results/peers.csv --markdown

Every table is encoded once with dpsynth's public schema (configs/<name>.yaml).
dpsynth releases from the original table with that config (its encoding is
deterministic, so it sees the same codes); smartnoise-synth gets the codes as
categorical columns whose categories are the public codes (no preprocessing
budget).  Both outputs are scored on the codes (scoring.py) with 2-way and
3-way average L1.  smartnoise is shown as shipped (``default``) and at its best:
rows drawn from the same fitted private-pgm model i.i.d. (``iid``) or by a
correctly randomized rounding (``rounded``); see snsynth_child.py.
NOT PRIVATE: the scores read the real tables.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.grid import ROOT

from . import releases
from .scoring import KWayScorer, TabBenchScorer, load_table
from .tables import TABLES

RESULTS = ROOT / "benchmarks" / "results"


@dataclasses.dataclass(frozen=True)
class Scorers:
    """Every score of one release: the k-way L1 of :class:`KWayScorer` and the tab_bench metrics."""

    kway: KWayScorer
    tab_bench: TabBenchScorer

    def score(self, codes) -> dict[str, float]:
        return self.kway.score(codes) | self.tab_bench.score(codes)

COLUMNS = [
    "dataset", "n", "columns", "tool", "method", "algorithm", "variant", "epsilon", "delta", "seed", "status",
    "l1_2way", "l1_3way", "tb_tvd_1way", "tb_tvd_2way", "tb_query_3way", "seconds", "cpu_seconds", "fit_seconds", "sample_seconds", "child_seconds", "peak_mb", "base_mb",
    "epsilon_spent", "delta_spent", "chosen", "chosen_why", "rounds", "budget_share", "marginals_2way", "marginals_3way", "params", "workload",
    "error",
]
KEY = ["dataset", "method", "epsilon", "seed"]
VARIANTS = ("default", "iid", "rounded")
PEER_DELTA = 1e-9  # smartnoise-synth's default δ for MST and AIM


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _csv_list(cast):
    return lambda s: [cast(x) for x in s.split(",") if x]


def _none(names: list[str]) -> list[str]:
    return [] if names == ["none"] else names


def _progress(row: dict) -> None:
    score = (f"2-way {row['l1_2way']:.3f}  3-way {row['l1_3way']:.3f}" if pd.notna(row.get("l1_3way"))
             else row.get("error", ""))
    secs = (f"{row['seconds']:8.2f} s ({row['cpu_seconds']:.1f} CPU s)" if pd.notna(row.get("seconds"))
            else " " * 10)
    _log(f"  {row['dataset']:9s} {row['method']:14s} eps={row['epsilon']:<5g} seed={row['seed']} "
         f"{row['status']:7s} {secs} {row.get('peak_mb') or 0:7.0f} MB  {score}")


class Runner:
    """Runs the releases of one invocation and keeps the result rows (written after every release)."""

    def __init__(self, args, previous: pd.DataFrame | None = None):
        self.args = args
        self.rows: list[dict] = []
        self.previous = previous

    def table(self) -> pd.DataFrame:
        df = pd.DataFrame(self.rows).reindex(columns=COLUMNS)
        if self.previous is not None and len(self.previous):
            df = pd.concat([self.previous.reindex(columns=COLUMNS), df], ignore_index=True)
            df = df.drop_duplicates(subset=KEY, keep="last")  # a re-run replaces its earlier rows
        return df

    def emit(self, row: dict) -> None:
        self.rows.append(row)
        _progress(row)
        if self.args.csv is not None:
            write_csv(self.table(), self.args.csv, quiet=True)

    def dataset(self, name: str, peer_python: Path | None) -> None:
        a = self.args
        t0 = time.perf_counter()
        table = load_table(name, shared=a.shared_data)
        ds = TABLES[name]
        scorer = Scorers(KWayScorer(table.codes, table.sizes, sample=ds.eval_sample, seed=0),
                         TabBenchScorer(table.codes, table.sizes, [c.ordered for c in table.config.domain.columns]))
        common = {"dataset": name, "n": int(table.codes.shape[0]), "columns": len(table.sizes)}
        _log(f"{name}: {common['n']} rows x {common['columns']} columns, domain {table.sizes} "
             f"({time.perf_counter() - t0:.1f} s to load and encode)")
        with tempfile.TemporaryDirectory(prefix="dpsynth-peers-") as tmp:
            codes_path = Path(tmp) / "codes.npy"
            np.save(codes_path, table.codes.astype(np.int32))
            for eps in a.epsilons:
                for seed in a.seeds:  # seed innermost: a partial run has whole ε blocks
                    for alg in a.dpsynth:
                        self.one_dpsynth(table, scorer, common, alg, eps, seed)
                    for synth in (a.peers if peer_python else []):
                        self.one_peer(codes_path, table.sizes, scorer, common, synth, eps, seed, peer_python)

    def one_dpsynth(self, table, scorer, common, alg, eps, seed) -> None:
        a = self.args
        cell = releases.dpsynth_cell(table.name, len(table.sizes), alg, eps, seed, params=a.params,
                                     workload=a.workload)
        method = f"dpsynth-{alg}"
        if a.dpsynth_delta is not None:
            cell = dataclasses.replace(cell, delta=a.dpsynth_delta)
            method += f"-d{a.dpsynth_delta:g}" if a.dpsynth_delta > 0 else "-d0"
        res = releases.dpsynth_release(table, cell, timeout=a.timeout)
        codes = res.pop("codes", None)
        row = common | {"tool": "dpsynth", "method": method, "algorithm": alg, "variant": "",
                        "epsilon": eps, "delta": cell.delta, "seed": seed,
                        "params": json.dumps(cell.params, sort_keys=True),
                        "workload": json.dumps(cell.workload, sort_keys=True)}
        row |= {k: res.get(k) for k in ("status", "seconds", "cpu_seconds", "child_seconds", "peak_mb", "base_mb",
                                          "epsilon_spent", "delta_spent", "chosen", "chosen_why", "error")}
        if codes is not None:
            row |= scorer.score(codes)
        self.emit(row)

    def one_peer(self, codes_path, sizes, scorer, common, synth, eps, seed, python) -> None:
        a = self.args
        params = a.peer_params.get(synth, {})
        progress = (a.out / f"{a.name}_progress" / f"{common['dataset']}-{synth}-eps{eps:g}-seed{seed}.jsonl"
                    if synth == "aim" else None)
        res = releases.peer_release(codes_path, sizes, synth=synth, epsilon=eps, delta=a.peer_delta, seed=seed,
                                    variants=a.variants, params=params, timeout=a.timeout, python=python,
                                    progress=progress)
        base = common | {"tool": "smartnoise-synth", "algorithm": synth, "epsilon": eps, "delta": a.peer_delta,
                         "seed": seed, "params": json.dumps(params, sort_keys=True), "workload": "",
                         "peak_mb": res["peak_mb"], "child_seconds": res["child_seconds"],
                         "base_mb": res.get("base_mb"), "fit_seconds": res.get("fit_seconds"),
                         "rounds": res.get("rounds"), "budget_share": res.get("budget_share")}
        for v in a.variants:  # one row per sampler of the one fit
            row = base | {"method": f"{synth}-{v}", "variant": v, "status": res["status"], "error": res.get("error"),
                          "cpu_seconds": res["child_cpu_seconds"]}  # the whole child's, until a sampler's own
            got = res["variants"].get(v)
            if got is not None and "codes" in got:
                row |= {"sample_seconds": got["sample_seconds"], "seconds": res["fit_seconds"] + got["sample_seconds"],
                        "cpu_seconds": res["fit_cpu_seconds"] + got["sample_cpu_seconds"]}
                row |= scorer.score(got["codes"])
            elif got is not None:
                row |= {"status": "error", "error": got["error"]}
            self.emit(row)


# ------------------------------------------------------------------------ output
def write_csv(df: pd.DataFrame, path: Path, *, quiet: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, index=False, float_format="%.6g")
    if not quiet:
        _log(f"wrote {path} ({len(df)} rows)")


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per table, ε and method: runs, mean and sd of the 2- and 3-way L1 over seeds, median seconds, max peak MB."""
    ok = df[df["status"] == "ok"]
    g = ok.groupby(["dataset", "epsilon", "method"], sort=False)
    out = pd.DataFrame({
        "runs": g.size(),
        "l1_2way_mean": g["l1_2way"].mean(), "l1_2way_sd": g["l1_2way"].std(ddof=1),
        "l1_3way_mean": g["l1_3way"].mean(), "l1_3way_sd": g["l1_3way"].std(ddof=1),
        "seconds_median": g["seconds"].median(), "cpu_seconds_median": g["cpu_seconds"].median(),
        "peak_mb_max": g["peak_mb"].max(),
    })
    return out.sort_index(level=[0, 1], sort_remaining=False)


def _pm(mean: float, sd: float) -> str:
    return f"{mean:.3f}" if not np.isfinite(sd) else f"{mean:.3f} ± {sd:.3f}"


def markdown(table: pd.DataFrame, failed: pd.DataFrame | None = None) -> str:
    """The summary as a Markdown table (failed cells listed after it)."""
    lines = ["| table | ε | tool / variant | 2-way avg L1 | 3-way avg L1 | median s | median CPU s | peak MB | runs |",
             "|---|---|---|---|---|---|---|---|---|"]
    for (ds, eps, method), r in table.iterrows():
        lines.append(f"| {ds} | {eps:g} | {method} | {_pm(r.l1_2way_mean, r.l1_2way_sd)} | "
                     f"{_pm(r.l1_3way_mean, r.l1_3way_sd)} | {r.seconds_median:.1f} | {r.cpu_seconds_median:.1f} | "
                     f"{r.peak_mb_max:.0f} | "
                     f"{int(r.runs)} |")
    if failed is not None and len(failed):
        for (ds, eps, method, status), g in failed.groupby(["dataset", "epsilon", "method", "status"]):
            lines.append(f"\n{ds} ε={eps:g} {method}: {len(g)} × {status} ({g['error'].iloc[0]})")
    return "\n".join(lines)


def plot(df: pd.DataFrame, path: Path) -> Path:
    """2-way and 3-way average L1 versus ε: one column per table, mean ± sd over seeds per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    ok = df[df["status"] == "ok"]
    names = list(dict.fromkeys(ok["dataset"]))
    fig, axes = plt.subplots(2, len(names), figsize=(4.6 * len(names), 7.0), squeeze=False)
    styles = {"default": ":", "iid": "--", "rounded": "-."}
    for j, name in enumerate(names):
        part = ok[ok["dataset"] == name]
        for i, k in enumerate((2, 3)):
            ax = axes[i][j]
            for method, g in part.groupby("method", sort=False):
                s = g.groupby("epsilon")[f"l1_{k}way"].agg(["mean", "std"]).sort_index()
                variant = g["variant"].iloc[0] if isinstance(g["variant"].iloc[0], str) else ""
                ax.errorbar(s.index, s["mean"], yerr=s["std"].fillna(0), label=method, capsize=3,
                            linestyle=styles.get(variant, "-"), marker="o" if variant in ("", None) else "^")
            ax.set_xscale("log")
            eps = sorted(part["epsilon"].unique())
            ax.set_xticks(eps, [f"{e:g}" for e in eps])
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.set_ylim(bottom=0)
            ax.set_xlabel("ε")
            ax.set_ylabel(f"{k}-way avg L1 (lower is better)")
            ax.set_title(f"{name} (n = {int(part['n'].iloc[0]):,})")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7)
    fig.suptitle("dpsynth vs smartnoise-synth, same codes\n(NOT private: scored on the real data)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# -------------------------------------------------------------------------- main
def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m benchmarks.peers.run", description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", type=_csv_list(str), default=["adult", "nltcs"],
                   help=f"comma-separated, of: {', '.join(n for n in TABLES if n != 'indep')}")
    p.add_argument("--epsilons", type=_csv_list(float), default=[0.3, 1.0, 3.0])
    p.add_argument("--seeds", type=_csv_list(int), default=[0, 1, 2])
    p.add_argument("--dpsynth", type=_csv_list(str), default=["mwem"],
                   help="dpsynth algorithm(s), comma-separated, or 'none' (default mwem)")
    p.add_argument("--dpsynth-delta", type=float, help="δ of the dpsynth release (default: the preset's, 0 but for "
                   "dualquery); the method is then named dpsynth-<alg>-d<δ> (-d0 for 0), so both δ keep their rows")
    p.add_argument("--params", type=json.loads, default={}, help="JSON merged into the dpsynth algorithm's params")
    p.add_argument("--workload", type=json.loads, help="JSON replacing the dpsynth workload, e.g. "
                   '\'{"marginals": {"k": 3}}\' (default: configs/<table>-<alg>.yaml or the benchmark preset)')
    p.add_argument("--peers", type=_csv_list(str), default=["mst"], help="mst, aim, or 'none' (default mst)")
    p.add_argument("--variants", type=_csv_list(str), default=list(VARIANTS),
                   help="smartnoise samplers: default, iid, rounded (default: all three)")
    p.add_argument("--peer-params", type=json.loads, default={},
                   help='JSON per peer for its constructor, e.g. \'{"aim": {"rounds": 50}}\'')
    p.add_argument("--peer-delta", type=float, default=PEER_DELTA, help="δ of the peer (default 1e-9, its own)")
    p.add_argument("--peer-python", type=Path, default=releases.PEER_PYTHON)
    p.add_argument("--timeout", type=float, default=600.0, help="seconds before one release is killed")
    p.add_argument("--shared-data", type=Path, help="where ../shared/data is (default: beside the repository)")
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--name", default="peers", help="output file stem (default peers: peers.csv, peers.png)")
    p.add_argument("--append", action="store_true", help="keep the rows already in <out>/<name>.csv "
                   "(a re-run of the same table, method, ε and seed replaces its row)")
    p.add_argument("--from-csv", type=Path, help="re-plot and summarise an existing CSV (runs nothing)")
    p.add_argument("--markdown", action="store_true", help="print the summary as a Markdown table")
    p.add_argument("--no-plot", action="store_true")
    args = p.parse_args(argv)
    args.dpsynth, args.peers = _none(args.dpsynth), _none(args.peers)
    bad = [v for v in args.variants if v not in VARIANTS] + [s for s in args.peers if s not in ("mst", "aim")]
    unknown = [d for d in args.datasets if d not in TABLES or d == "indep"]
    if bad or unknown:
        p.error(f"unknown {', '.join(bad + unknown)}: peers are mst/aim, variants {'/'.join(VARIANTS)}, "
                f"datasets as in --help")
    return args


def run(args) -> pd.DataFrame:
    csv = args.out / f"{args.name}.csv"
    previous = pd.read_csv(csv) if args.append and csv.exists() else None
    args.csv = csv
    peer_python = None
    if args.peers:
        why = releases.peer_available(args.peer_python)
        if why:
            _log(f"skipping the peer: {why}")
        else:
            peer_python = args.peer_python
    runner = Runner(args, previous)
    for name in args.datasets:
        path = TABLES[name].data
        if args.shared_data is not None:
            from .scoring import data_path

            path = data_path(name, args.shared_data)
        if not path.is_file():
            _log(f"skipping {name}: {path} not found")
            continue
        runner.dataset(name, peer_python)
    df = runner.table()
    if len(runner.rows):
        write_csv(df, csv)
    return df


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    t0 = time.perf_counter()
    df = pd.read_csv(args.from_csv).reindex(columns=COLUMNS) if args.from_csv else run(args)
    if not len(df):
        _log("nothing to report (no table found, or nothing selected)")
        return 0
    stem = args.from_csv.stem if args.from_csv else args.name
    if not args.no_plot and (df["status"] == "ok").any():
        _log(f"wrote {plot(df, args.out / f'{stem}.png')}")
    table = summary(df)
    failed = df[~df["status"].isin(["ok"])]
    if args.markdown:
        print(markdown(table, failed))
    else:
        with pd.option_context("display.width", 160, "display.max_rows", 500):
            print(table.round(4).to_string())
        for _, r in failed.iterrows():
            _log(f"  {r['status']}: {r['dataset']} {r['method']} eps={r['epsilon']:g} seed={int(r['seed'])}: "
                 f"{r['error']}")
    _log(f"total {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
