"""The README's layout and docs/architecture.md describe the tree as it is (they cannot drift)."""

from __future__ import annotations

import re

from tests.helpers import ROOT

PKG = ROOT / "dpsynth"


def _tree() -> set[str]:
    """Every subpackage folder and every top-level module of dpsynth (but the package's own entry files)."""
    folders = {f"dpsynth/{p.relative_to(PKG).as_posix()}/" for p in PKG.rglob("__init__.py") if p.parent != PKG
               and "__pycache__" not in p.parts for p in [p.parent]}
    modules = {f"dpsynth/{p.name}" for p in PKG.glob("*.py") if p.name not in ("__init__.py", "__main__.py")}
    return folders | modules


def _readme_layout() -> set[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Layout", 1)[1]
    return set(re.findall(r"^\s+(dpsynth/\S+)", section, flags=re.MULTILINE))


def test_readme_layout_lists_exactly_the_tree():
    listed, tree = _readme_layout(), _tree()
    assert not tree - listed, f"in the tree but not in the README's Layout section: {sorted(tree - listed)}"
    assert not listed - tree, f"in the README's Layout section but not in the tree: {sorted(listed - tree)}"


def test_architecture_doc_names_every_folder_and_top_module():
    text = (ROOT / "docs" / "architecture.md").read_text()
    missing = [p for p in sorted(_tree()) if p.removeprefix("dpsynth/").rstrip("/") not in text]
    assert not missing, f"docs/architecture.md does not mention: {missing}"
