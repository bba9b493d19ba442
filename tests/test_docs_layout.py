"""docs/architecture.md's layout describes the tree as it is (it cannot drift)."""

from __future__ import annotations

import re

from tests.helpers import ROOT

PKG = ROOT / "dpsynth"
ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _tree() -> set[str]:
    """Every subpackage folder and every top-level module of dpsynth (but the package's own entry files)."""
    folders = {f"dpsynth/{p.relative_to(PKG).as_posix()}/" for p in PKG.rglob("__init__.py") if p.parent != PKG
               and "__pycache__" not in p.parts for p in [p.parent]}
    modules = {f"dpsynth/{p.name}" for p in PKG.glob("*.py") if p.name not in ("__init__.py", "__main__.py")}
    return folders | modules


def _layout() -> set[str]:
    section = ARCHITECTURE.read_text().split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\s+(dpsynth/\S+)", section, flags=re.MULTILINE))


def test_layout_lists_exactly_the_tree():
    listed, tree = _layout(), _tree()
    assert not tree - listed, f"in the tree but not in docs/architecture.md's Layout: {sorted(tree - listed)}"
    assert not listed - tree, f"in docs/architecture.md's Layout but not in the tree: {sorted(listed - tree)}"


def test_architecture_doc_names_every_folder_and_top_module():
    text = ARCHITECTURE.read_text()
    missing = [p for p in sorted(_tree()) if p.removeprefix("dpsynth/").rstrip("/") not in text]
    assert not missing, f"docs/architecture.md does not mention: {missing}"


def test_readme_links_the_layout():
    assert "(docs/architecture.md)" in (ROOT / "README.md").read_text()
