"""PNG plots of an evaluation result (``dpsynth evaluate --plot``).

Uses matplotlib's object API with the Agg canvas (no pyplot, no global backend
state, no display needed).  The figure is returned as PNG bytes so the CLI can
write it atomically together with the JSON.
"""

from __future__ import annotations

import io
import math

__all__ = ["PLOT_FORMATS", "evaluation_plot", "evaluation_png", "plot_available", "plot_format"]

PLOT_FORMATS = ("png", "svg", "pdf")

_PER_ROW = 4
_COLORS = {"synthetic": "#1f77b4", "uniform": "#7f7f7f", "zeros": "#d62728", "independent": "#2ca02c"}


def plot_format(path: str) -> str:
    """The plot format chosen by the file extension (png, svg or pdf); ValueError otherwise."""
    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if ext not in PLOT_FORMATS:
        raise ValueError(f"--plot must end in .png, .svg or .pdf, got '{path}'")
    return ext


def plot_available() -> bool:
    """matplotlib is the optional 'plot' extra of the package (pip install 'dpsynth[plot]')."""
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def evaluation_png(result: dict, *, dpi: int = 100) -> bytes:
    """:func:`evaluation_plot` as PNG."""
    return evaluation_plot(result, fmt="png", dpi=dpi)


def evaluation_plot(result: dict, *, fmt: str = "png", title: str | None = None, dpi: int = 100) -> bytes:
    """One panel per k: the per-marginal L1 distances (box plots) of the synthetic rows and the baselines.

    With a classifier result, a last panel shows the Naive Bayes accuracies
    next to the real-table and majority-class references.  ``title`` (e.g. the
    synthetic file, algorithm and ε) heads the figure; ``fmt`` is png, svg or pdf.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    blocks = [b for b in result["marginals"] if b.get("per_marginal")]
    clf = result.get("classifier")
    panels = max(1, len(blocks) + (1 if clf else 0))
    columns = (result.get("neutral") or {}).get("columns") or []
    rows = math.ceil(len(columns) / _PER_ROW)
    width = 4.2 * max(panels, min(len(columns), _PER_ROW))
    fig = Figure(figsize=(width, 4.2 + 3.2 * rows), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    top, bottom = fig.subfigures(2, 1, height_ratios=[4.2, 3.2 * rows]) if rows else (fig, None)
    axes = top.subplots(1, panels, squeeze=False)[0]
    if bottom is not None:
        grid = bottom.subplots(rows, _PER_ROW, squeeze=False).ravel()
        for ax, col in zip(grid, columns):
            _column_panel(ax, col)
        for ax in grid[len(columns):]:
            ax.set_axis_off()
        bottom.suptitle("each column, real vs synthetic (numbers: raw values; text: its most frequent real values)",
                        fontsize=9)
    methods = result["methods"]
    for ax, block in zip(axes, blocks):
        _marginal_panel(ax, block, methods, ", release's bins" if columns else "")
    if clf:
        _classifier_panel(axes[len(blocks)], clf)
    if not blocks and not clf:
        axes[0].text(0.5, 0.5, "no marginals evaluated", ha="center", va="center")
        axes[0].set_axis_off()
    heading = "NOT PRIVATE: computed from the real table"
    fig.suptitle(f"{title}\n{heading}" if title else heading, fontsize=9, color="#d62728")
    if blocks:
        from matplotlib.lines import Line2D

        handles = [Line2D([], [], color="#ff7f0e", label="median"),
                   Line2D([], [], marker="^", linestyle="", color="#2ca02c", label="mean")]
        axes[0].legend(handles=handles, loc="upper right", fontsize=8)
    import matplotlib

    buf = io.BytesIO()
    with matplotlib.rc_context({"svg.fonttype": "none"}):  # SVG text stays text (searchable, selectable)
        fig.savefig(buf, format=fmt)
    return buf.getvalue()


def _marginal_panel(ax, block: dict, methods, where: str = "") -> None:
    data = [block["per_marginal"]["l1"][m] for m in methods]
    box = ax.boxplot(data, patch_artist=True, showmeans=True, widths=0.6)
    for patch, m in zip(box["boxes"], methods):
        patch.set_facecolor(_COLORS.get(m, "#bcbd22"))
        patch.set_alpha(0.6)
    ax.set_xticks(range(1, len(methods) + 1), methods, rotation=20)
    ax.set_ylim(0, 2.05)
    ax.set_ylabel("L1 distance per marginal (0 = equal, 2 = disjoint)")
    ax.set_title(f"{block['k']}-way marginals ({block['marginals_evaluated']}){where}", fontsize=10)
    ax.grid(axis="y", alpha=0.3)


def _classifier_panel(ax, clf: dict) -> None:
    labels = ["majority", "real (CV)", "synthetic"]
    values = [clf["majority_class_rate"], clf["real_cross_validated"], clf["synthetic"]]
    if clf.get("released_marginals"):
        labels.append("released")
        values.append(clf["released_marginals"]["accuracy"])
    ax.bar(labels, values, color=["#7f7f7f", "#2ca02c", "#1f77b4", "#9467bd"][: len(values)])
    ax.set_ylim(0, 1)
    ax.set_ylabel("accuracy on the real table")
    ax.set_title(f"Naive Bayes predicting '{clf['target']}'", fontsize=10)
    for i, v in enumerate(values):
        ax.text(i, v + 0.01, f"{v:.3f}", ha="center", fontsize=8)


def _column_panel(ax, col: dict) -> None:
    """Real vs synthetic for one column: a histogram overlay of raw numbers, or bars of its neutral bins."""
    hist = col.get("histogram")
    if hist:
        edges = hist["edges"]
        for side, color in (("real", "#2ca02c"), ("synthetic", "#1f77b4")):
            ax.stairs(hist[side], edges, label=side, color=color, fill=side == "real", alpha=0.4 if side == "real" else 1.0)
        ax.set_xlabel(f"W1/std {col['w1_over_std']:.3g}, KS {col['ks']:.3g}" if col.get("w1_over_std") is not None
                      else "", fontsize=8)
    else:
        bars = col.get("bars") or {}
        labels, real, syn = bars.get("labels", []), bars.get("real", []), bars.get("synthetic", [])
        keep = [i for i in range(len(labels)) if real[i] > 0 or syn[i] > 0][:12]
        x = list(range(len(keep)))
        ax.bar([i - 0.2 for i in x], [real[i] for i in keep], width=0.4, color="#2ca02c", alpha=0.6, label="real")
        ax.bar([i + 0.2 for i in x], [syn[i] for i in keep], width=0.4, color="#1f77b4", label="synthetic")
        ax.set_xticks(x, [str(labels[i])[:12] for i in keep], rotation=60, fontsize=7)
        ax.set_xlabel(f"TV {col['tv']:.3g}", fontsize=8)
    ax.set_title(col["name"], fontsize=9)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7)
