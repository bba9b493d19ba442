"""PNG plots of benchmark results (matplotlib, Agg backend).

* ``<stem>_error.png``: 3-way average L1 versus ε, one panel per dataset, one
  line per algorithm (mean over seeds, shaded ±1 sd), baselines as horizontal
  lines (uniform; zeros on binary data) and ``laplace`` dashed;
* ``<stem>_time.png``: median release time and peak memory per algorithm and dataset;
* ``<stem>.png`` for scaling runs: time and peak memory versus rows (log-log),
  with the fitted slope of log time on log rows in the legend.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["STYLE", "error_plot", "fit_slopes", "make_plots", "scaling_plot", "time_plot"]

STYLE = {
    "laplace": {"color": "black", "linestyle": "--", "marker": "s"},
    "mwem": {"color": "tab:blue", "marker": "o"},
    "dualquery": {"color": "tab:orange", "marker": "^"},
    "ireduct": {"color": "tab:green", "marker": "D"},
    "twophase": {"color": "tab:purple", "marker": "v"},
    "iresamp": {"color": "tab:brown", "marker": "x"},
}
BASELINES = {"uniform": {"color": "gray", "linestyle": ":"}, "zeros": {"color": "tab:red", "linestyle": "-."}}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _grid(n: int, plt, width: float = 4.2, height: float = 3.3):
    cols = min(3, n)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes.ravel()


def error_plot(df: pd.DataFrame, path: Path, metric: str = "l1_3way") -> Path:
    plt = _plt()
    datasets = list(dict.fromkeys(df["dataset"]))
    fig, axes = _grid(len(datasets), plt)
    for ax, name in zip(axes, datasets):
        sub = df[df["dataset"] == name]
        ok = sub[sub["status"] == "ok"]
        for alg, g in ok.groupby("algorithm", sort=False):
            stats = g.groupby("epsilon")[metric].agg(["mean", "std", "count"]).sort_index()
            sd = stats["std"].fillna(0.0)
            style = STYLE.get(alg, {})
            ax.plot(stats.index, stats["mean"], label=alg, markersize=4, **style)
            ax.fill_between(stats.index, stats["mean"] - sd, stats["mean"] + sd, color=style.get("color"), alpha=0.15)
        for _, b in sub[sub["status"] == "baseline"].iterrows():
            ax.axhline(b[metric], label=b["algorithm"], **BASELINES.get(b["algorithm"], {}))
        n, d = sub["n"].iloc[0], sub["columns"].iloc[0]
        ax.set_title(f"{name} (n={int(n):,}, {int(d)} columns)", fontsize=10)
        ax.set_xscale("log")
        eps = sorted(ok["epsilon"].unique())
        if eps:
            ax.set_xticks(eps, [f"{e:g}" for e in eps])
            ax.minorticks_off()
        ax.set_xlabel("ε")
        ax.set_ylabel("3-way avg L1 (0 best, 2 worst)" if metric == "l1_3way" else metric)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("Accuracy vs ε (mean ± 1 sd over seeds)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=64)  # keeps the committed PNGs small
    plt.close(fig)
    return path


def time_plot(df: pd.DataFrame, path: Path) -> Path:
    plt = _plt()
    ok = df[df["status"] == "ok"]
    datasets = list(dict.fromkeys(ok["dataset"]))
    algs = list(dict.fromkeys(ok["algorithm"]))
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(13, 3.8))
    width = 0.8 / max(1, len(algs))
    x = np.arange(len(datasets))
    for i, alg in enumerate(algs):
        g = ok[ok["algorithm"] == alg].groupby("dataset")
        secs = g["seconds"].median().reindex(datasets)
        mem = g["peak_mb"].max().reindex(datasets)
        color = STYLE.get(alg, {}).get("color")
        ax_t.bar(x + i * width, secs.to_numpy(), width, label=alg, color=color)
        ax_m.bar(x + i * width, mem.to_numpy(), width, label=alg, color=color)
    for ax, label in ((ax_t, "median release time (s, log)"), (ax_m, "peak RSS of the release process (MB)")):
        ax.set_xticks(x + 0.4 - width / 2, datasets, fontsize=8)
        ax.set_ylabel(label)
        ax.grid(axis="y", alpha=0.3)
    ax_t.set_yscale("log")
    ax_t.legend(fontsize=7, ncol=2)
    fig.suptitle("Speed and memory (all ε and seeds; 2 shared cores: absolute times are noisy, compare ratios)",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def fit_slopes(df: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm: slope of log(seconds) and log(peak MB) on log(size), and the linear cost per unit.

    A fixed cost (imports excluded, but the algorithm's own work on marginals)
    flattens the log-log slope at small sizes; ``loglog_time_slope_top3`` fits
    the three largest sizes only, where the per-row (per-column) cost dominates.

    ``size`` is rows or columns (``scale_by``).  ``seconds_per_unit`` is the
    slope of an ordinary least-squares line seconds = a + b·size, with b given
    per 10⁶ rows or per 1,000 columns: the "small constant" of a linear cost.
    """
    ok = df[(df["status"] == "ok") & df["scale"].notna()]
    unit = 1e6 if (ok["scale_by"] == "rows").all() else 1e3
    out = {}
    for alg, g in ok.groupby("algorithm", sort=False):
        n = g["scale"].astype(float).to_numpy()
        if len(np.unique(n)) < 2:
            continue
        t, m = g["seconds"].to_numpy(float), g["peak_mb"].to_numpy(float)
        top = n >= np.sort(np.unique(n))[-3] if len(np.unique(n)) >= 3 else np.ones_like(n, dtype=bool)
        out[alg] = {
            "loglog_time_slope": np.polyfit(np.log(n), np.log(t), 1)[0],
            "loglog_time_slope_top3": np.polyfit(np.log(n[top]), np.log(t[top]), 1)[0],
            "loglog_memory_slope": np.polyfit(np.log(n), np.log(m), 1)[0],
            "seconds_per_unit": np.polyfit(n, t, 1)[0] * unit,
            "mb_per_unit": np.polyfit(n, m, 1)[0] * unit,
            "unit": f"{unit:.0e} {g['scale_by'].iloc[0]}",
            "largest": int(n.max()),
        }
    return pd.DataFrame(out).T


def scaling_plot(df: pd.DataFrame, path: Path) -> Path:
    plt = _plt()
    ok = df[df["status"] == "ok"]
    slopes = fit_slopes(df)
    by = "rows (Adult resampled)" if (ok["scale_by"] == "rows").all() else "independent binary columns (20,000 rows)"
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(11, 3.8))
    for alg, g in ok.groupby("algorithm", sort=False):
        s = g.groupby("scale")[["seconds", "peak_mb"]].median().sort_index()
        style = STYLE.get(alg, {})
        slope = slopes.loc[alg] if alg in slopes.index else None
        lt = f"{alg} (slope {slope['loglog_time_slope']:.2f})" if slope is not None else alg
        lm = f"{alg} (slope {slope['loglog_memory_slope']:.2f})" if slope is not None else alg
        ax_t.plot(s.index, s["seconds"], label=lt, **style)
        ax_m.plot(s.index, s["peak_mb"], label=lm, **style)
    for ax, label in ((ax_t, "release time (s)"), (ax_m, "peak RSS (MB)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(by)
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(f"Scaling with {by} (ε = 1; log-log slope 1 = linear)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def make_plots(df: pd.DataFrame, outdir: Path, stem: str) -> list[Path]:
    outdir.mkdir(parents=True, exist_ok=True)
    if df["scale"].notna().any():
        return [scaling_plot(df, outdir / f"{stem}.png")]
    out = []
    if (df["status"] == "ok").any() or (df["status"] == "baseline").any():
        out.append(error_plot(df, outdir / f"{stem}_error.png"))
    if (df["status"] == "ok").any():
        out.append(time_plot(df, outdir / f"{stem}_time.png"))
    return out
