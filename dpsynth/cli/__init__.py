"""Command-line interface: thin Typer commands over the library, one module per command.

Every command parses options, calls one library function and renders the
result.  Library errors (:class:`~dpsynth.errors.DpsynthError`) become one line
on stderr and their documented exit code; any other exception becomes a
one-line internal error (exit 70) without a traceback, because a traceback
could show values from the private table.  Set ``DPSYNTH_DEBUG=1`` to see it.

To add a command, write ``dpsynth/cli/<name>.py`` registering on ``app`` (or a
sub-app) from :mod:`dpsynth.cli._common` and import it below.
"""

from dpsynth.cli import check, discover, evaluate, oracle, plan, release, report, sample, schema  # noqa: F401  (registers the commands)
from dpsynth.cli._common import app, main, make_rng

__all__ = ["app", "main", "make_rng"]
