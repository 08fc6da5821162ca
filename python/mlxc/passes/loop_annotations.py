"""mlxc-loop-annotations: loop hints on LLVM branches as the branch's own attribute.

convert-scf-to-cf copies an scf.for's `llvm.loop_annotation` onto the cf.br of its back
edge, and the conversion to the LLVM dialect keeps it there as a discardable attribute
of llvm.br. The translation to LLVM IR reads only llvm.br's inherent `loop_annotation`
(the one `llvm.loop` metadata comes from), so the hint is lost on the way. This pass
moves it to the inherent attribute.
"""

from __future__ import annotations

from .. import irutil
from . import PythonPass

DISCARDABLE = "llvm.loop_annotation"
INHERENT = "loop_annotation"


def run(module) -> None:
    for br in irutil.ops_named(module, "llvm.br", "llvm.cond_br"):
        attrs = br.attributes
        if DISCARDABLE in attrs:
            if INHERENT not in attrs:
                attrs[INHERENT] = attrs[DISCARDABLE]
            del attrs[DISCARDABLE]


PASS = PythonPass(
    argument="mlxc-loop-annotations",
    summary="llvm.br's discardable llvm.loop_annotation (from convert-scf-to-cf) becomes its "
            "inherent loop_annotation, which the translation to LLVM IR reads",
    run=run,
)
