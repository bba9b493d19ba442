"""The held-out peer table: dpsynth ``auto`` (δ = 0 and δ = the peer's) against MST at its best, and AIM.

    python -m benchmarks.peers.versus benchmarks/results/peers_heldout.csv     # Markdown to stdout

Reads the rows ``benchmarks.peers.run`` wrote and prints, per table and ε, the 3-way average L1 (mean ± sd
over seeds) of ``dpsynth-auto-d0``, ``dpsynth-auto-d<δ>`` and MST at its best — of the samplers ``iid`` and
``rounded`` of the same fit, the one with the lower mean on that table and ε (``default``, smartnoise's own
sampler, is shown apart) — the ratio auto / MST (the mean and range of the per-seed ratios, seed i of each),
median CPU seconds and largest peak MB of both tools, what ``auto`` chose, and AIM where it ran: its L1
if it finished, else the rounds it reached and the share of its budget spent when it was stopped.
NOT PRIVATE: the scores read the real tables.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["best_peer", "markdown", "versus"]

BEST_OF = ("iid", "rounded")


def _stats(g: pd.DataFrame) -> dict:
    ok = g[g["status"] == "ok"]
    return {"mean": ok["l1_3way"].mean(), "sd": ok["l1_3way"].std(ddof=1), "runs": len(ok),
            "cpu": ok["cpu_seconds"].median(), "mb": ok["peak_mb"].max(),
            "by_seed": ok.set_index("seed")["l1_3way"]}


def best_peer(rows: pd.DataFrame, synth: str = "mst") -> tuple[str | None, dict | None]:
    """(variant, stats) of the peer's best sampler on these rows (one table and ε): lowest mean 3-way L1."""
    best = None
    for v in BEST_OF:  # loop over the two samplers
        g = rows[(rows["method"] == f"{synth}-{v}") & (rows["status"] == "ok")]
        if len(g):
            s = _stats(g)
            if best is None or s["mean"] < best[1]["mean"]:
                best = (v, s)
    return best if best is not None else (None, None)


def _pm(s: dict | None) -> str:
    if s is None or not s["runs"]:
        return "—"
    return f"{s['mean']:.3f}" + (f" ± {s['sd']:.3f}" if s["runs"] > 1 else "") + ("" if s["runs"] == 3 else f" ({s['runs']} runs)")


def _ratio(mine: dict | None, peer: dict | None) -> str:
    if mine is None or peer is None or not mine["runs"] or not peer["runs"]:
        return "—"
    r = (mine["by_seed"] / peer["by_seed"]).dropna()  # seed i of each
    if not len(r):
        return "—"
    return f"{r.mean():.2f} ({r.min():.2f}–{r.max():.2f})" if len(r) > 1 else f"{r.mean():.2f}"


def _aim(rows: pd.DataFrame) -> str:
    g = rows[rows["algorithm"] == "aim"]
    if not len(g):
        return "not run"
    ok = g[(g["status"] == "ok") & g["method"].isin([f"aim-{v}" for v in BEST_OF])]
    if len(ok):
        _, s = best_peer(ok, "aim")
        return f"{_pm(s)}, {s['cpu']:.0f} CPU s, {s['mb']:.0f} MB"
    r = g.iloc[0]
    rounds = "?" if pd.isna(r.get("rounds")) else f"{int(r['rounds'])}"
    share = "?" if pd.isna(r.get("budget_share")) else f"{100 * r['budget_share']:.0f} %"
    return f"{r['status']} ({r['error']}): round {rounds}, {share} of ρ spent, {r['cpu_seconds']:.0f} CPU s, {r['peak_mb']:.0f} MB"


def versus(df: pd.DataFrame) -> list[dict]:
    """One dict per (table, ε) with every cell of the Markdown table."""
    out = []
    for (ds, eps), rows in df.groupby(["dataset", "epsilon"], sort=False):  # loop over table × ε
        pure = rows[rows["method"] == "dpsynth-auto-d0"]
        approx = rows[rows["method"].str.startswith("dpsynth-auto-d") & (rows["method"] != "dpsynth-auto-d0")]
        s0 = _stats(pure) if len(pure) else None
        s1 = _stats(approx) if len(approx) else None
        variant, mst = best_peer(rows, "mst")
        default = rows[rows["method"] == "mst-default"]
        chosen = {m: ", ".join(sorted(set(g["chosen"].dropna().astype(str))))
                  for m, g in (("d0", pure), ("d", approx))}
        out.append({
            "table": ds, "n": int(rows["n"].iloc[0]), "epsilon": eps, "auto_d0": _pm(s0), "auto_d": _pm(s1),
            "delta": approx["delta"].iloc[0] if len(approx) else np.nan,
            "mst_best": _pm(mst) + (f" `{variant}`" if variant else ""),
            "mst_default": _pm(_stats(default)) if len(default) else "—",
            "ratio_d0": _ratio(s0, mst), "ratio_d": _ratio(s1, mst),
            "cpu": " / ".join("—" if s is None or not s["runs"] else f"{s['cpu']:.1f}" for s in (s0, s1, mst)),
            "mb": " / ".join("—" if s is None or not s["runs"] else f"{s['mb']:.0f}" for s in (s0, s1, mst)),
            "chosen": f"{chosen['d0'] or '—'} / {chosen['d'] or '—'}", "aim": _aim(rows),
        })
    return out


def markdown(df: pd.DataFrame) -> str:
    head = ["table (n)", "ε", "auto δ=0", "auto δ=peer's", "MST best", "MST as shipped", "auto/MST δ=0",
            "auto/MST δ=peer's", "median CPU s (auto δ=0 / δ / MST)", "peak MB (same)", "auto chose (δ=0 / δ)", "AIM"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in versus(df):
        lines.append(f"| {r['table']} ({r['n']:,}) | {r['epsilon']:g} | {r['auto_d0']} | {r['auto_d']} | "
                     f"{r['mst_best']} | {r['mst_default']} | {r['ratio_d0']} | {r['ratio_d']} | {r['cpu']} | "
                     f"{r['mb']} | {r['chosen']} | {r['aim']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    path = Path(argv[0]) if argv else Path(__file__).resolve().parents[1] / "results" / "peers_heldout.csv"
    print(markdown(pd.read_csv(path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
