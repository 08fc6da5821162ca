"""The target-independent stages: StableHLO in, bufferized linalg out.

Each stage is a list of passes with the reason each is there, ending with the
stage's contract check. Targets (mlxc.targets.*) append their own lowering stages.
"""

from __future__ import annotations

from .. import settings
from .model import Pass, Stage, mlir_pass, only_with


def verify(stage: str) -> list[Pass]:
    """The contract check that ends `stage` (omitted when MLXC_CHECK_CONTRACTS=0)."""
    if not settings.get("check_contracts"):
        return []
    return [Pass("mlxc-verify-stage", (("stage", stage),), (),
                 f"contract: what may remain after '{stage}'")]


def stage(name: str, why: str, passes: list[Pass]) -> Stage:
    return Stage(name, tuple(passes) + tuple(verify(name)), why)


def import_stage(entry: str = "main") -> Stage:
    return stage("import", "one verified StableHLO function with static shapes", [
        mlir_pass("vhlo-legalize-to-stablehlo",
                  "bytecode may carry versioned VHLO ops; make them StableHLO"),
        Pass("mlxc-select-entry", (("entry", entry),), (),
             "make @entry the only public function"),
        Pass("mlxc-tensor-constants", (), (),
             "tensor arith.constant (torch-mlir's scalars: eps, alpha) as stablehlo.constant",
             only_with("arith.constant")),
        Pass("mlxc-small-top-k", (), (),
             "top_k with small k as one pass over each row (custom_call @mlxc.top_k), not a "
             "sort of the whole row; before its composite becomes a call to that sort"),
        mlir_pass("stablehlo-legalize-composite-to-call",
                  "a stablehlo.composite (e.g. chlo.erf from jax.export) becomes a call to its "
                  "decomposition", anchor="func.func"),
        # Without the inliner's default canonicalize of every function, which cost a
        # quarter of a millisecond even with nothing to inline: the simplify stage folds
        # the program anyway (the same IR for the bench programs; 20 conformance programs
        # with helper functions get the same LLVM ops, their constants in another order).
        mlir_pass("inline", "JAX emits private helper functions; inline every call",
                  default_pipeline=""),
        # Quantized types go before shape refinement, which crashes on them (bitcast_convert).
        Pass("mlxc-quantized-entry", (), (),
             "keep the entry's quantized types for the signature"),
        Pass("mlxc-signed-quantized-storage", (), (),
             "unsigned quantized storage (u8) as signed storage shifted by half its range, "
             "which the legalization reads right; storage bits flipped where they cross"),
        mlir_pass("stablehlo-legalize-quant-to-math",
                  "quantized ops become integer and float math on the storage type, as in the "
                  "StableHLO interpreter; must precede chlo-legalize (it emits chlo.broadcast_*)",
                  anchor="func.func"),
        Pass("mlxc-static-chlo-broadcasts", (), (),
             "per-axis quantization broadcasts along any axis; chlo-legalize only does trailing"),
        Pass("mlxc-precise-chlo-math", (), (),
             "asinh, atanh and sinh through log1p/expm1, as XLA does (upstream's expansion "
             "cancels near zero)"),
        mlir_pass("chlo-legalize-to-stablehlo",
                  "CHLO ops (jax.jit(...).lower().as_text() prints chlo.erf, chlo.top_k, ...) "
                  "become StableHLO", anchor="func.func"),
        mlir_pass("symbol-dce", "drop the private functions nothing calls any more"),
        Pass("mlxc-bool-add-to-or", (), (),
             "add on i1 is OR in the spec; the constant folders from here on compute XOR"),
        Pass("mlxc-finite-without-infinity", (), (),
             "is_finite on fp8/fp6/fp4 types without infinities is x == x (upstream compares "
             "with +inf, which such types cannot hold: every element came out false)"),
        # torch-mlir's dynamic programs compute shapes with the shape dialect; mlxc
        # compiles them per call's shapes, where that arithmetic folds away.
        Pass("mlxc-shape-assumptions", (), (),
             "shape.assuming regions inlined, their broadcast witnesses dropped (shapes are "
             "constants once the arguments' are)", only_with("shape.assuming")),
        mlir_pass("shape-legalize-to-stablehlo",
                  "shape_of, shape.broadcast, tensor.dim, from_elements as StableHLO, which "
                  "the refinement below folds", anchor="func.func",
                  when=only_with("shape.", "tensor.dim", "tensor.from_elements")),
        mlir_pass("stablehlo-refine-shapes", "propagate static shapes through the program"),
        mlir_pass("stablehlo-canonicalize-dynamism",
                  "dynamic ops whose shapes are now constants become their static forms",
                  anchor="func.func"),
        Pass("mlxc-shape-assertions", (), (),
             "jax.export's @shape_assertion checks (b >= 1, arguments sharing b), constant "
             "once the shapes are: dropped when they hold, a ValueError when not",
             only_with("stablehlo.custom_call")),
        Pass("mlxc-static-real-dynamic-slice", (), (),
             "x[i:i+n] with a data-dependent i (real_dynamic_slice) as a dynamic_slice of "
             "size n; nothing to do in most programs"),
        Pass("mlxc-record-signature", (), (),
             "keep the entry's types and argument names for the runtime (mlxc.signature)"),
    ])


def simplify_stage() -> Stage:
    return stage("simplify", "StableHLO folded and deduplicated", [
        # Layout rewrites first, so that the transposes they add fold below.
        Pass("mlxc-conv-nhwc-layout", (), (),
             "convolutions in other layouts (NCHW/OIHW) as NHWC/HWIO between transposes: "
             "only that layout becomes linalg.conv_2d_nhwc_hwcf, which the CPU schedules tile"),
        Pass("mlxc-reduce-window-scans", (), (),
             "cumsum/cumprod/cummax/cummin (a reduce_window over a whole dimension) in "
             "log2(n) shifted steps, not n * n (XLA does the same)"),
        Pass("mlxc-canonical-dot-general", (), (),
             "every dot_general with at most one batch, free and contracting dimension "
             "(the others collapsed by reshapes): one that is not becomes a generic "
             "contraction that no matmul schedule or kernel takes"),
        Pass("mlxc-dot-general-layout", (), (),
             "dot_general operands transposed into [batch, m, k] x [batch, k, n] when the copy "
             "is small next to the product (the CPU schedule reads rows of the rhs), and "
             "transposed results computed by swapping the operands"),
        # No canonicalize after it: its rewriter folds every op too (a canonicalize here
        # changed no program of the bench or the conformance suites).
        mlir_pass("stablehlo-aggressive-simplification",
                  "StableHLO-level folding and algebraic simplification", anchor="func.func"),
        mlir_pass("cse", "share identical subexpressions"),
    ])


def linalg_stage() -> Stage:
    return stage("linalg", "linalg on tensors; no StableHLO left", [
        Pass("mlxc-upcast-low-precision-dots", (), (),
             "bf16/f16/fp8 contractions accumulate in f32, as XLA does (upstream would use bf16)"),
        Pass("mlxc-saturate-float-to-int", (), (),
             "float-to-integer converts clamp and send NaN to 0, as XLA does (upstream wraps)"),
        Pass("mlxc-lower-extra-ops", (), (),
             "mlxc's own lowerings (mlxc.lowerings) for the ops upstream leaves alone"),
        mlir_pass("stablehlo-legalize-to-linalg", "StableHLO ops to linalg/tensor/arith/math",
                  anchor="func.func"),
        mlir_pass("stablehlo-convert-to-signless",
                  "unsigned StableHLO integers become signless, removing the casts left above"),
        mlir_pass("canonicalize", "clean up the legalized IR"),
    ])


def fuse_stage() -> Stage:
    return stage("fuse", "producers fused into consumers, on tensors", [
        Pass("mlxc-extracts-as-inputs", (), (),
             "a gather body's read at its own loop indices (take_along_axis's label of row "
             "i) becomes an input, so the producer of what it reads fuses too"),
        Pass("mlxc-inits-as-inputs", (), (),
             "an elementwise op that reads its destination (an outer product's zero-filled "
             "accumulator) takes it as an input: fused into a consumer with more loops, "
             "the destination would be added to again on each pass of those loops"),
        Pass("mlxc-contraction-reshape-barriers", (), (),
             "the reshapes at a contraction's edges hidden from the fusion below, which "
             "would fold them into the product and make it a rank-n generic contraction"),
        mlir_pass("linalg-fuse-elementwise-ops",
                  "merge elementwise producers into their consumers: no intermediate tensors",
                  anchor="func.func"),
        mlir_pass("canonicalize", "fold the fused bodies"),
        mlir_pass("cse", "share duplicated computations"),
        # The fusion above leaves producers with several consumers unfused (its control
        # function, one consumer only, is C++): copy the cheap ones and fuse again.
        Pass("mlxc-fold-unit-extent-dims", (), (),
             "drop the size-1 (keepdims) dimensions the fusion reshaped reductions into, "
             "so that a producer's consumers read it directly, not through reshapes"),
        Pass("mlxc-recompute-elementwise", (), (),
             "a copy of each cheap elementwise producer per consumer, so the fusion below "
             "recomputes it in all (softmax keeps only its row vectors, as XLA does)"),
        # No canonicalize here: the fusion's own rewriter folds what it fuses, and the
        # canonicalize after the schedules (cpu) or the bufferize stage does the rest.
        Pass("mlxc-contraction-reshape-barriers", (), (),
             "hide the reshapes the fold above put at a contraction's edges too"),
        mlir_pass("linalg-fuse-elementwise-ops", "fuse those copies", anchor="func.func"),
        mlir_pass("cse", "merge the copies the fusion declined back into one"),
        Pass("mlxc-fold-unit-extent-dims", (), (),
             "drop size-1 dimensions again: a broadcast of a (n, 1) tensor then reads one "
             "scalar per row instead of a gather (the CPU schedules need it)"),
        Pass("mlxc-contraction-reshape-barriers", (("remove", "1"),), (),
             "fusion is over: the hidden reshapes back as views (bufferized in place)"),
        Pass("mlxc-fuse-siblings", (), (),
             "elementwise ops over the same loops that read a common input as one op with "
             "several results (an optimizer's m, v and parameter updates read g once)"),
        # After the last fold: upstream's fold moves a destination that is read to an input.
        Pass("mlxc-accumulate-into-contraction", (), (),
             "c + a @ b: the product starts from c instead of zeros (an RNN step's "
             "h @ wh + x @ wx needs one buffer, not three)"),
        Pass("mlxc-elementwise-in-place", (), (),
             "an elementwise op whose input dies there (a matmul's bias + relu epilogue) "
             "takes that input as its destination, so bufferization writes it in place"),
    ])


def bufferize_stage() -> Stage:
    return stage("bufferize", "memrefs only; results written to caller-provided buffers", [
        Pass("mlxc-mark-inputs-readonly", (), (),
             "never write into the caller's input arrays"),
        Pass("mlxc-unshare-fills", (), (),
             "a fill several ops start from (cse merged their zero accumulators) is done once "
             "per op: no filled buffer kept alive to be copied for each"),
        Pass("mlxc-buffers-at-calls", (), (),
             "each kernel call reads its tensors through its own to_buffer, just before it "
             "(cse shared them; bufferization sees a to_buffer as one read, at that point)",
             only_with("bufferization.to_buffer")),
        Pass("mlxc-feasible-materializations", (), (),
             "loop values materialized where they cannot be (into two iteration arguments "
             "once cse merged a + b and b + a; into an argument once a one-trip loop folded) "
             "are yielded plainly",
             only_with("bufferization.materialize_in_destination")),
        mlir_pass("eliminate-empty-tensors",
                  "let tensor.empty destinations reuse the buffer they are inserted into"),
        mlir_pass("one-shot-bufferize", "tensors to memrefs, in place where it is safe; a loop "
                  "may carry a value computed out of place (copied into a new buffer)",
                  allow_return_allocs_from_loops=True,
                  bufferize_function_boundaries=True,
                  function_boundary_type_conversion="identity-layout-map"),
        Pass("mlxc-strided-gathers", (), (),
             "a vectorized gather whose tensor became a strided view (a slice's buffer) "
             "reads by the view's strides: its offsets were linearized for a dense tensor",
             only_with("vector.gather")),
        mlir_pass("cse", "merge identical subviews, so copies of a tile onto itself fold away"),
        mlir_pass("canonicalize",
                  "drop those copies, and fold loops that carry a buffer unchanged, so a result "
                  "is its allocation again (and becomes the output buffer below, with no copy)"),
        Pass("mlxc-uncopied-loop-inputs", (), (),
             "a loop that only reads its initial state (lax.scan's h0) starts from the input "
             "itself: one-shot copies it, counting every iter_arg as written"),
        Pass("mlxc-hoist-loop-buffers", (), (),
             "the small buffers a loop step computes in (a fori_loop's index arithmetic) are "
             "allocated once before the loop, not malloc'd and freed every step"),
        Pass("mlxc-distinct-result-buffers", (), (),
             "a value returned twice gets a copy, so each result has its own buffer"),
        mlir_pass("buffer-results-to-out-params",
                  "results become output arguments (the caller allocates them); a result's "
                  "allocation is replaced by the output buffer itself",
                  hoist_static_allocs=True, modify_public_functions=True),
        # Upstream's buffer-deallocation-pipeline, less its expand-realloc (nothing here
        # makes a memref.realloc) and its three canonicalize runs and cse: the
        # simplification below folds the dealloc ops itself and the canonicalize at the
        # end of the stage does the rest (same IR on the 31 bench programs and the
        # conformance cases, a third less time in this stage).
        mlir_pass("ownership-based-buffer-deallocation",
                  "a bufferization.dealloc of every buffer at the end of its block, with the "
                  "ownership conditions that make freeing it safe"),
        mlir_pass("buffer-deallocation-simplification",
                  "drop the conditions and deallocs that provably do nothing (statically "
                  "known ownership, aliasing results); what is left is plain frees"),
        mlir_pass("bufferization-lower-deallocations",
                  "the remaining dealloc ops as memref.dealloc under their conditions"),
        # A dealloc whose ownership is only known at run time (a loop-carried buffer that
        # one branch of an if returns unchanged) becomes a call to a generated
        # @dealloc_helper taking dynamically shaped memrefs, which the bare-pointer
        # calling convention of the llvm stage cannot express: inline it, drop it.
        mlir_pass("inline", "inline the generated @dealloc_helper into its callers",
                  default_pipeline=""),
        mlir_pass("symbol-dce", "drop @dealloc_helper once inlined"),
        mlir_pass("convert-bufferization-to-memref",
                  "lower the remaining bufferization ops; must follow the deallocation passes"),
        mlir_pass("canonicalize", "drop copies and casts made redundant"),
    ])


def common_stages(entry: str = "main") -> list[Stage]:
    return [import_stage(entry), simplify_stage(), linalg_stage(), fuse_stage(), bufferize_stage()]
