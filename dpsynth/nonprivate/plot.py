"""PNG plots of an evaluation result (``dpsynth evaluate --plot``).

Uses matplotlib's object API with the Agg canvas (no pyplot, no global backend
state, no display needed).  The figure is returned as PNG bytes so the CLI can
write it atomically together with the JSON.
"""

from __future__ import annotations

import io

__all__ = ["PLOT_FORMATS", "evaluation_plot", "evaluation_png", "plot_format"]

PLOT_FORMATS = ("png", "svg", "pdf")

_COLORS = {"synthetic": "#1f77b4", "uniform": "#7f7f7f", "zeros": "#d62728", "independent": "#2ca02c"}


def plot_format(path: str) -> str:
    """The plot format chosen by the file extension (png, svg or pdf); ValueError otherwise."""
    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    if ext not in PLOT_FORMATS:
        raise ValueError(f"--plot must end in .png, .svg or .pdf, got '{path}'")
    return ext


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
    fig = Figure(figsize=(4.2 * panels, 4.2), dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, panels, squeeze=False)[0]
    methods = result["methods"]
    for ax, block in zip(axes, blocks):
        _marginal_panel(ax, block, methods)
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


def _marginal_panel(ax, block: dict, methods) -> None:
    data = [block["per_marginal"]["l1"][m] for m in methods]
    box = ax.boxplot(data, patch_artist=True, showmeans=True, widths=0.6)
    for patch, m in zip(box["boxes"], methods):
        patch.set_facecolor(_COLORS.get(m, "#bcbd22"))
        patch.set_alpha(0.6)
    ax.set_xticks(range(1, len(methods) + 1), methods, rotation=20)
    ax.set_ylim(0, 2.05)
    ax.set_ylabel("L1 distance per marginal (0 = equal, 2 = disjoint)")
    ax.set_title(f"{block['k']}-way marginals ({block['marginals_evaluated']})", fontsize=10)
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
