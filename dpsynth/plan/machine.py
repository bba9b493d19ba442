"""The machine's memory and the default memory limit; sizes in words."""

from __future__ import annotations

import os

from dpsynth.plan.coefficients import MB

__all__ = ["DEFAULT_MEMORY_FRACTION", "default_max_memory", "format_bytes", "machine_memory"]

DEFAULT_MEMORY_FRACTION = 0.5
"""``limits.max_memory`` defaults to this fraction of the machine's physical RAM."""


def machine_memory() -> int:
    """Physical RAM in bytes (``/proc/meminfo`` MemTotal, else ``os.sysconf``)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        return 8 << 30  # unknown platform: assume a small machine


def default_max_memory() -> int:
    return int(DEFAULT_MEMORY_FRACTION * machine_memory())


def format_bytes(n: float) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", MB), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"

