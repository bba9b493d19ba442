"""The one place that chooses and configures the LP/IP solver, for every algorithm that solves one.

The solver is CBC as PuLP ships it: ``pulp.PULP_CBC_CMD`` (PuLP < 4 bundles the CBC binary; 4.x drops
it, hence the pin ``pulp>=2.8,<4``).  :func:`cbc` decides and configures it; :func:`mip_solver` (DualQuery's
best response) and :func:`lp_solver` (``algorithm: fourier``'s consistent table) are its two uses, each
with the one-line error that names its own setting when the binary is missing.  :func:`cbc_command` is
CBC's command line for a configured solver, for callers that run CBC on a model file of their own.
"""

from __future__ import annotations

import warnings

from dpsynth.errors import ConfigError

__all__ = ["cbc", "cbc_available", "cbc_command", "lp_solver", "mip_solver"]


def cbc(*, time_limit: float | None, gap: float, threads: int, warm_start: bool, max_nodes: int | None = None,
        log_path: str | None = None):
    """PuLP's bundled CBC, quiet: relative gap, threads, warm start, and the limits that stop it.

    ``max_nodes`` is CBC's ``maxNodes``, a limit on branch-and-bound nodes: a repeatable amount of work,
    so the result does not depend on the machine.  ``time_limit`` (s, wall clock) is CBC's ``sec``: the
    result then depends on the machine's speed and load; DualQuery never sets it.  More than one thread is
    run in CBC's repeatable parallel mode (``threads 100+n``).  Does not check that the binary exists
    (see :func:`cbc_available`).
    """
    import pulp

    options = [] if max_nodes is None else [f"maxNodes {int(max_nodes)}"]
    with warnings.catch_warnings():
        # PuLP 3.x announces PULP_CBC_CMD's removal in 4.0; we pin pulp<4 for its bundled CBC.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        return pulp.PULP_CBC_CMD(
            msg=False,
            timeLimit=None if time_limit is None else float(time_limit),
            gapRel=float(gap),
            threads=int(threads) if threads <= 1 else 100 + int(threads),
            warmStart=bool(warm_start),
            logPath=log_path,
            timeMode="elapsed",
            options=options,
        )


def cbc_available() -> bool:
    """Is the CBC binary PuLP would run present and executable?"""
    return bool(cbc(time_limit=None, gap=0.0, threads=1, warm_start=False).available())


def _checked(solver, *, setting: str, fallback: str):
    if not solver.available():
        raise ConfigError(
            f"{setting}: the CBC solver binary is not available; install 'pulp<4' (its wheel ships CBC) "
            f"or set {fallback}"
        )
    return solver


def mip_solver(*, max_nodes: int, gap: float, threads: int, warm_start: bool, log_path: str | None = None):
    """CBC for DualQuery's integer program: a node limit (deterministic work), relative gap, threads, warm start.

    No wall-clock limit: a caller that needs a safety stop kills the process (and must say so).
    Raises ConfigError (one line, naming ``best_response``) if the CBC binary is missing.
    """
    solver = cbc(time_limit=None, gap=gap, threads=threads, warm_start=warm_start, max_nodes=max_nodes,
                 log_path=log_path)
    return _checked(solver, setting="algorithm.params.best_response", fallback="best_response: local")


def lp_solver(*, time_limit: float):
    """CBC for a pure linear program (``algorithm: fourier``): one thread, a time limit (s), quiet.

    Raises ConfigError (one line, naming ``fit``) if the CBC binary is missing.
    """
    solver = cbc(time_limit=time_limit, gap=0.0, threads=1, warm_start=False)
    return _checked(solver, setting="algorithm.params.fit", fallback="fit: mw")


def cbc_command(solver, model_path: str, solution_path: str, start_path: str | None) -> list[str]:
    """CBC's command line for ``solver`` (as configured by :func:`cbc`) on an MPS file, like PuLP's own."""
    args = [solver.path, model_path]
    if start_path is not None:
        args += ["-mips", start_path]
    if solver.timeLimit is not None:
        args += ["-sec", repr(float(solver.timeLimit))]
    for option in [*solver.options, *solver.getOptions()]:  # maxNodes, ratio, threads, timeMode as PuLP spells them
        args += ["-" + option.split()[0], *option.split()[1:]]
    return [*args, "-solve", "-printingOptions", "normal", "-solution", solution_path]
