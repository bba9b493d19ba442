"""No dpsynth module over 600 lines (issue 23: modules that do one thing; STYLE.md aims at about 500)."""

from __future__ import annotations

from tests.helpers import ROOT

LIMIT = 600


def test_no_module_over_the_limit():
    sizes = {p.relative_to(ROOT).as_posix(): len(p.read_text(encoding="utf-8").splitlines())
             for p in (ROOT / "dpsynth").rglob("*.py")}
    assert len(sizes) > 50 and sizes["dpsynth/privacy/accountant.py"] > 100  # the walk found the package
    over = {path: n for path, n in sorted(sizes.items()) if n > LIMIT}
    assert not over, f"modules over {LIMIT} lines (split them by what they do): {over}"
