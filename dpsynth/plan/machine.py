"""The memory this process may use, the default memory limit; sizes in words.

Three limits bound a process: the machine's physical RAM, its address-space limit ``RLIMIT_AS``
(``ulimit -v``; it counts virtual memory, so it is the strictest for the same figure) and its
container's cgroup limit (``/sys/fs/cgroup/memory.max`` in cgroup v2, ``memory.limit_in_bytes`` in
v1).  The default ``limits.max_memory`` is a fraction of the smallest, and says which one it is.
"""

from __future__ import annotations

import os

from dpsynth.plan.coefficients import MB

__all__ = ["DEFAULT_MEMORY_FRACTION", "address_space_limit", "cgroup_memory_limit", "default_limit",
           "default_max_memory", "format_bytes", "machine_memory", "memory_limits"]

DEFAULT_MEMORY_FRACTION = 0.5
"""``limits.max_memory`` defaults to this fraction of the smallest memory limit (RAM, RLIMIT_AS, cgroup)."""

CGROUP_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
"""cgroup v2, then v1: the limit of the container the process runs in (as seen from inside it)."""
_UNLIMITED = 1 << 60  # cgroup v1 writes "no limit" as 2**63 rounded down to a page
RAM = "this machine's RAM"


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


def address_space_limit() -> int | None:
    """The soft ``RLIMIT_AS`` (``ulimit -v``) in bytes, or None when unlimited or unknown."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError, AttributeError):  # no resource module (Windows)
        return None
    return None if soft == resource.RLIM_INFINITY or soft <= 0 else int(soft)


def cgroup_memory_limit(files: tuple[str, ...] = CGROUP_FILES) -> tuple[int, str] | None:
    """The container's memory limit and the file it was read from; None when there is none ("max")."""
    for path in files:
        try:
            with open(path, encoding="ascii") as fh:
                text = fh.read().strip()
        except OSError:
            continue
        if text == "max":
            return None
        try:
            value = int(text)
        except ValueError:
            continue
        return (value, path) if 0 < value < _UNLIMITED else None
    return None


def memory_limits() -> dict[str, int]:
    """Every memory limit of this process, by name (physical RAM always; the others when set)."""
    limits = {RAM: machine_memory()}
    rlimit = address_space_limit()
    if rlimit is not None:
        limits["the address-space limit RLIMIT_AS (ulimit -v)"] = rlimit
    cgroup = cgroup_memory_limit()
    if cgroup is not None:
        limits[f"the cgroup memory limit ({cgroup[1]})"] = cgroup[0]
    return limits


def default_limit() -> tuple[int, str]:
    """The default ``limits.max_memory`` and where it comes from (the smallest limit governs)."""
    limits = memory_limits()
    name = min(limits, key=lambda k: limits[k])
    size = limits[name]
    ram = format_bytes(limits[RAM])
    if name == RAM:
        text = f"default: {DEFAULT_MEMORY_FRACTION:.0%} of this machine's {ram} RAM"
    else:
        text = f"default: {DEFAULT_MEMORY_FRACTION:.0%} of {name}, {format_bytes(size)}, below this machine's {ram} RAM"
    return int(DEFAULT_MEMORY_FRACTION * size), text


def default_max_memory() -> int:
    return default_limit()[0]


def format_bytes(n: float) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", MB), ("KB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"

