# RUN: %PYTHON %s | FileCheck %s
# The printed pipeline is the exact pass-pipeline string, parses back to the same
# passes, and MLIR accepts it; stage slicing and descriptions print as expected.

import mlxc
from mlxc._mlir import new_context
from mlxc.pipelines import parse_pipeline
from mlxc.pipelines.runner import build_pass_manager


def test(fn):
    print(f"TEST: {fn.__name__}")
    fn()
    return fn


@test
def printed_pipeline_round_trips():
    p = mlxc.pipeline("cpu")
    text = str(p)
    print(text)
    assert parse_pipeline(text) == p.passes, "parse(str(p)) != p.passes"
    assert mlxc.pipelines.render(parse_pipeline(text)) == text
    # MLIR accepts every segment: building the pass manager checks names, options
    # and nesting; the pass manager prints our Python passes by their names.
    with new_context():
        pm = build_pass_manager(parse_pipeline(text), None)
        printed = str(pm)
    assert "mlxc-select-entry" in printed and "one-shot-bufferize{" in printed
    print("round trip ok")

# CHECK-LABEL: TEST: printed_pipeline_round_trips
# CHECK: builtin.module(vhlo-legalize-to-stablehlo,mlxc-select-entry{entry=main},mlxc-tensor-constants,mlxc-small-top-k,
# CHECK-SAME: one-shot-bufferize{allow-return-allocs-from-loops bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}
# CHECK-SAME: mlxc-emit-entry-wrapper,mlxc-verify-stage{stage=llvm})
# CHECK: round trip ok


@test
def slice_and_describe():
    p = mlxc.pipeline("cpu", entry="forward").slice(start_after="fuse", stop_after="bufferize")
    print(p.stage_names)
    print(p.describe())

# CHECK-LABEL: TEST: slice_and_describe
# CHECK: ['bufferize']
# CHECK: pipeline 'cpu':
# CHECK-NEXT: stage bufferize: memrefs only; results written to caller-provided buffers
# CHECK-NEXT: (a pass marked [only with ...] is skipped when the module holds none of those ops as the stage starts)
# CHECK-NEXT: mlxc-library-convs [only with linalg.conv_2d_nhwc_hwcf or
# CHECK-NEXT: # f32 convolutions call the runtime's kernel
# CHECK-NEXT: mlxc-library-pools [only with linalg.generic or
# CHECK-NEXT: # f32 max and sum poolings call the runtime's kernel
# CHECK-NEXT: mlxc-pads-as-fills
# CHECK-NEXT: # a padded tensor is a fill with its source inserted
# CHECK-NEXT: mlxc-mark-inputs-readonly
# CHECK-NEXT: # never write into the caller's input arrays
# CHECK: as a pass pipeline: builtin.module(mlxc-library-convs,mlxc-library-pools,mlxc-pads-as-fills,mlxc-mark-inputs-readonly,mlxc-unshare-fills,mlxc-buffers-at-calls,mlxc-feasible-materializations,eliminate-empty-tensors,


@test
def entry_option_flows_into_the_pipeline():
    print(str(mlxc.pipeline("cpu", entry="forward")).split(",")[1])

# CHECK-LABEL: TEST: entry_option_flows_into_the_pipeline
# CHECK-NEXT: mlxc-select-entry{entry=forward}


@test
def nested_anchors_group_and_parse():
    text = "builtin.module(func.func(cse,canonicalize{max-iterations=2}),inline,gpu.module(llvm.func(cse)))"
    passes = parse_pipeline(text)
    print([(p.name, p.anchor, p.options) for p in passes])
    print(mlxc.pipelines.render(passes))

# CHECK-LABEL: TEST: nested_anchors_group_and_parse
# CHECK: [('cse', ('func.func',), ()), ('canonicalize', ('func.func',), (('max-iterations', '2'),)), ('inline', (), ()), ('cse', ('gpu.module', 'llvm.func'), ())]
# CHECK: builtin.module(func.func(cse,canonicalize{max-iterations=2}),inline,gpu.module(llvm.func(cse)))
