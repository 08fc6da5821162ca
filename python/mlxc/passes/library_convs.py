"""mlxc-library-convs: f32 convolutions (on tensors) as calls to `mlxc_sconv` (or
`mlxc_sconv_depthwise`).

Which convolutions: targets/cpu/library_convs.py (and why). The rewrite runs on
tensors, before bufferization, so that the zero padding in front of a convolution
never becomes a buffer: the call reads the unpadded input (taps in the padding count
as zeros) and the padding op goes when nothing else reads it. The convolution's zero
fill goes too, since the kernel overwrites its output, and so does a transpose that
made the filter HWIO (an OIHW filter): the kernel reads the filter through strides
when it packs it, so the transposed copy is never made.

How the call takes its operands and makes its result: targets/cpu/kernel_calls.py.
"""

from __future__ import annotations

from .. import irutil, settings
from .._mlir import ir
from ..targets.cpu import kernel_calls, library_convs
from . import PythonPass

CALLEE = "mlxc_sconv"
DEPTHWISE_CALLEE = "mlxc_sconv_depthwise"


def _rewrite(op, conv: library_convs.Conv, threads: int) -> None:
    result_type = ir.RankedTensorType(op.results[0].type)
    fill = library_convs.zero_fill(op.operands[2])
    with ir.InsertionPoint(op), op.location:
        sizes = [conv.n, conv.h, conv.w, conv.c, conv.kh, conv.kw,
                 *([] if conv.depthwise else [conv.f]), conv.oh, conv.ow,
                 *conv.strides, *conv.dilations, *conv.low,
                 *([] if conv.depthwise else conv.filter_strides)]
        callee = DEPTHWISE_CALLEE if conv.depthwise else CALLEE
        result = kernel_calls.call(callee, [conv.source, conv.filter], result_type, sizes,
                                   [threads])
    op.results[0].replace_all_uses_with(result)
    op.erase()
    for dead in (*conv.padding, conv.transpose, fill):
        if dead is not None and not list(dead.results[0].uses):
            dead.erase()


def run(module) -> None:
    found = []
    for op in irutil.ops_named(module, *library_convs.CONVS):
        conv = library_convs.conv(op)
        if conv is not None:
            found.append((op, conv))
    if not found:
        return
    with irutil.as_operation(module).context:
        if any(not conv.depthwise for _, conv in found):
            kernel_calls.declare(module, CALLEE, 3, 19, 1)
        if any(conv.depthwise for _, conv in found):
            kernel_calls.declare(module, DEPTHWISE_CALLEE, 3, 14, 1)
        threads = settings.get("threads")
        for op, conv in found:
            _rewrite(op, conv, threads)


PASS = PythonPass(
    argument="mlxc-library-convs",
    summary="f32 NHWC convolutions call the runtime's kernel (mlxc_sconv), which reads the "
            "unpadded input: no padded copy",
    run=run,
)
