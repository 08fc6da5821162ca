"""Known bugs: patterns of programs that fail for a reason already recorded.

The CI sample (`test/pytest/test_fuzz.py`) does not run programs matching these
(`FuzzCase.exclude_known`): the suite holds no test expected to fail. Each entry
names the bug and where it is being fixed; delete it once the fix is merged, and the
sample covers the pattern again.
"""

from __future__ import annotations

from typing import Optional

from .program import Program


# Both patterns once listed here (gathers on sliced operands, case values updated in
# place) were fixed on main (311f53d, 7fda281); the 74 programs of seeds 0-2999 that
# matched them pass, and the CI sample runs them again.
KNOWN: list = []


def known_bug(p: Program) -> Optional[str]:
    for name, matches in KNOWN:
        if matches(p):
            return name
    return None
