"""mlxc-loop-annotations: loop hints on branches as the name llvm.br's own attribute has.

convert-scf-to-cf copies an scf.for's `llvm.loop_annotation` onto the cf.br of its back
edge, and the conversion to the LLVM dialect keeps it there as a discardable attribute
of llvm.br. The translation to LLVM IR reads only llvm.br's inherent `loop_annotation`
(the one `llvm.loop` metadata comes from), so the hint is lost on the way. This pass
renames it `loop_annotation`: on a cf.br, which the conversion to the LLVM dialect
copies every attribute of, it becomes llvm.br's inherent one. It runs on the cf level
(the lower stage, just after convert-scf-to-cf), where a walk meets a quarter of the
ops it meets once they are the LLVM dialect (60 ms of a training step's compile), and
on llvm.br as well.
"""

from __future__ import annotations

from .. import irutil
from . import PythonPass

DISCARDABLE = "llvm.loop_annotation"
INHERENT = "loop_annotation"


def run(module) -> None:
    for br in irutil.ops_named(module, "cf.br", "cf.cond_br", "llvm.br", "llvm.cond_br"):
        attrs = br.attributes
        if DISCARDABLE in attrs:
            if INHERENT not in attrs:
                attrs[INHERENT] = attrs[DISCARDABLE]
            del attrs[DISCARDABLE]


PASS = PythonPass(
    argument="mlxc-loop-annotations",
    summary="a branch's discardable llvm.loop_annotation (from convert-scf-to-cf) becomes "
            "loop_annotation, llvm.br's inherent attribute, which the translation to LLVM "
            "IR reads",
    run=run,
)
