"""The privacy mutant catalogue stays applicable: every entry's ``old`` text occurs exactly once in its file, ids
are unique and every named test file exists.  (Session 5: a merge rewrote the line of
``aim-anneal-reads-true-marginal`` and the fast suite still passed; only the full harness would have said
"stale".)"""

from __future__ import annotations

from collections import Counter

from tests.helpers import ROOT
from tests.mutants.catalogue import MUTANTS


def test_every_mutant_applies_exactly_once_and_names_existing_tests():
    ids = Counter(m["id"] for m in MUTANTS)
    assert not [i for i, k in ids.items() if k > 1], "duplicate mutant ids"
    stale = [m["id"] for m in MUTANTS if (ROOT / m["file"]).read_text(encoding="utf-8").count(m["old"]) != 1]
    assert not stale, f"stale mutants (their old text does not occur exactly once): {stale}"
    missing = [(m["id"], t) for m in MUTANTS for t in m["tests"] if not (ROOT / t.split("::")[0]).exists()]
    assert not missing, f"mutants naming absent test files: {missing}"
    assert all(m["old"] != m["new"] and m["why"] for m in MUTANTS)
