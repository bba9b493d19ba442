"""A plan as plain text for people."""

from __future__ import annotations

import math

from dpsynth.plan.core import Plan
from dpsynth.plan.machine import format_bytes
from dpsynth.plan.timing import duration, time_error

__all__ = ["format_plan"]


def format_plan(plan: Plan) -> str:
    """The plan as plain text for people."""
    lines = [f"dpsynth plan: {plan.algorithm}", "", "Columns (domain size):"]
    width = max((len(n) for n, _ in plan.columns), default=0)
    lines += [f"  {name:<{width}}  {size}" for name, size in plan.columns]
    lines += [
        f"  full domain: {plan.domain_cells:.3g} cells" if plan.columns else
        "  (learned from the data by the schema discovery: unknown until the release)",
        "",
        *([(f"Workload: {plan.marginals} marginals, {plan.total_cells:,} cells in all, "
           f"largest {plan.largest_cells:,} cells")] if plan.marginals else []),
        f"Measured: {plan.alg.queries}",
        "",
        "Budget:",
    ]
    lines += [f"  {stage}: {text}" for stage, text in plan.alg.stages]
    lines += ["", f"Guarantee: {plan.guarantee}", ""]
    lines.append(f"Rows n: {plan.rows:,}, {plan.rows_source}; synthetic rows: {plan.output_rows:,}")
    if plan.alg.noise_sd is None:
        lines.append(f"Noise: {plan.alg.noise_note}")
    else:
        sd = plan.alg.noise_sd
        mean_cell = plan.rows / max(plan.total_cells / max(plan.marginals, 1), 1)
        ratio = sd / mean_cell if mean_cell else math.inf
        verdict = ("noise >> signal" if ratio > 10 else "noise larger than signal" if ratio > 1
                   else "noise comparable to signal" if ratio > 0.1 else "noise << signal")
        lines.append(
            f"Noise: standard deviation {sd:.4g} per measured cell ({sd / max(plan.rows, 1):.3g} of n); "
            f"an average cell holds {mean_cell:.4g} rows: {verdict}"
            + (f" ({plan.alg.noise_note})" if plan.alg.noise_note else "")
        )
    lines += ["", (f"Predicted peak memory: {format_bytes(plan.peak_memory)} "
                  f"(limit {format_bytes(plan.max_memory)}, {plan.max_memory_source})")]
    lines += [f"  {part}: {format_bytes(size)}" for part, size in plan.memory.items()]
    median, p90 = time_error()
    lines.append(f"Rough time: {duration(plan.seconds)} (typically within x{median:.1f}; 9 in 10 within "
                 f"x{p90:.1f} on the benchmark grid)")
    lines += [f"Note: {note}" for note in plan.alg.notes]
    if plan.peak_memory > plan.max_memory:
        lines.append("release would REFUSE this configuration: predicted memory exceeds the limit")
    return "\n".join(lines) + "\n"
