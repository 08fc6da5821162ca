"""CPU lowering stages: bufferized linalg -> loops -> the LLVM dialect."""

from __future__ import annotations

from ... import settings
from ...pipelines.model import Pipeline, Pass, Stage
from ...pipelines.stages import common_stages, stage, verify
from ...pipelines.model import mlir_pass, only_with

# Conditions of the passes a stage skips on a module without the ops they rewrite
# (model.OnlyWith): only dialect conversions, walks and our own passes, never a pass
# that runs the greedy rewriter (it folds every op, whatever its patterns). Complex ops
# become math ops (convert-complex-to-standard, and mlxc-complex-mul-fma's math.fma),
# and math ops vector ops (libm calls on vectors are scalarized), so a condition also
# names what a pass before it in its stage could turn into its ops.
_FORALL = ("scf.forall",)
_PARALLEL = _FORALL + ("scf.parallel",)
_MATH = ("math.", "complex.")
# Floats of 16 bits or fewer, which the lower stage computes in f32; the fp8/fp6/fp4
# ones also need mlxc-expand-small-float-casts. Spelled as MLIR prints them.
_FP8_AND_SMALLER = ("f8E4M3FN", "f8E5M2", "f8E4M3", "f8E3M4", "f8E4M3FNUZ", "f8E5M2FNUZ",
                    "f8E4M3B11FNUZ", "f8E8M0FNU", "f6E2M3FN", "f6E3M2FN", "f4E2M1FN")
_SMALL_FLOATS = ("bf16", "f16") + _FP8_AND_SMALLER
# The dialects the llvm stage converts in one convert-to-llvm pass (their interfaces'
# default lowering is the one the separate convert-*-to-llvm passes do).
_TO_LLVM_DIALECTS = ("arith", "cf", "index", "ub", "omp")


def _kernel_calls() -> bool:
    """Whether ops go to the runtime's kernels: the schedules set them aside."""
    return bool(settings.get("library_calls") and settings.get("cpu_schedules"))


def schedule_passes() -> list[Pass]:
    if not settings.get("cpu_schedules"):
        return []
    # The common fuse stage has already dropped size-1 dimensions (mlxc-fold-unit-extent-
    # dims), which the schedules need; running it again here would undo
    # mlxc-elementwise-in-place (upstream's fold moves a read destination to an input).
    unpadded = [Pass("mlxc-unpadded-convolutions", (), (),
                     "a SAME-padded convolution split into unpadded ones over its interior, "
                     "edges and corners: the input is read in place, not through a padded copy "
                     "(MLXC_UNPADDED_CONVS; off by default, as nine bodies cost ~4x the compile "
                     "time)")] if settings.get("unpadded_convs") else []
    return unpadded + [
        Pass("mlxc-transposed-matmul-operands", (), (),
             "a matmul of a transposed left operand (a weight gradient's x^T @ dy) reads it "
             "in place: no transposed copy, which XLA does not make either"),
        Pass("mlxc-blocked-transposes", (), (),
             "a transpose that moves the contiguous dimension splits it into blocks of 8, so "
             "the schedule below writes 8 output rows at a time (whole rows thrash L1)"),
        Pass("mlxc-gather-loop-order", (), (),
             "a gather fused into a reduction (an embedding's mean) runs the reduction loop "
             "outside the row loop: the vectorizer then reads rows, not one gather per lane"),
        Pass("mlxc-extracts-through-reshapes", (), (),
             "a gather's ids read from their 1-D tensor, not its [N, 1] expansion: the "
             "vectorizer then loads them contiguously", only_with("tensor.extract")),
        Pass("mlxc-apply-cpu-schedules", (), (),
             "tile and vectorize each linalg op for the host CPU (schedules.py: per op kind "
             "and shape), on tensors so the matmul accumulator stays in registers"),
        mlir_pass("canonicalize", "fold the tiled loops and vector transfers"),
        mlir_pass("cse", "share the index arithmetic of the tiles"),
    ]


def with_schedules(fuse: Stage) -> Stage:
    """The common fuse stage, then the CPU schedules, before its contract check."""
    passes = [p for p in fuse.passes if p.name != "mlxc-verify-stage"]
    return Stage(fuse.name, tuple(passes + schedule_passes() + verify(fuse.name)),
                 fuse.why + "; tiled and vectorized for the host CPU")


# Computed in f32 like bf16/f16 (mlxc-expand-small-float-casts converts them).
SMALL_FLOATS = ",".join(_FP8_AND_SMALLER)


def with_temp_memory(bufferize: Stage) -> Stage:
    """The common bufferize stage, then early frees and the peak temporary memory for
    memory_stats()."""
    pads = Pass("mlxc-pads-as-fills", (), (),
                "a padded tensor is a fill with its source inserted, so the source's producer "
                "writes into the padded buffer (a transposed input is not kept twice)")
    convs = [Pass("mlxc-library-convs", (), (),
                  "f32 convolutions call the runtime's kernel (runtime/mlxc_conv.c), which "
                  "reads the unpadded input: the padding never becomes a buffer",
                  only_with("linalg.conv_2d_nhwc_hwcf", "linalg.conv_1d_nwc_wcf",
                            "linalg.depthwise_conv_2d_nhwc_hwc",
                            "linalg.depthwise_conv_1d_nwc_wc")),
             Pass("mlxc-library-pools", (), (),
                  "f32 max and sum poolings call the runtime's kernel (runtime/mlxc_pool.c), "
                  "which skips the taps in the padding: the padding never becomes a buffer",
                  only_with("linalg.generic", "linalg.pooling_nhwc_max",
                            "linalg.pooling_nhwc_sum", "linalg.pooling_nwc_max",
                            "linalg.pooling_nwc_sum"))] if _kernel_calls() else []
    passes = convs + [pads] + [p for p in bufferize.passes if p.name != "mlxc-verify-stage"]
    fuse = Pass("mlxc-fuse-row-loops", (), (),
                "consecutive loops over the same rows (softmax's max, sum and output) as one, "
                "so a row is read while in L1; a temporary of one value per row becomes that "
                "value, one of a few values per row a stack row (before the frees below)")
    constant = Pass("mlxc-constant-buffers", (), (),
                    "a buffer only ever written with one constant (an argmax's running "
                    "maxima, which no result needs) is not allocated: its copies become fills")
    # CPU only: the cuda mapping sinks host loads into later launches, past such a free.
    early = Pass("mlxc-early-dealloc", (), (),
                 "free each temporary after its last use, not at the end of the function, so "
                 "malloc hands its memory to the next allocation (XLA reuses dead buffers)")
    results = Pass("mlxc-temps-in-results", (), (),
                   "a temporary freed before a result buffer is first written lives in that "
                   "buffer (attention's transposed k in its output), as XLA shares dead memory")
    record = Pass("mlxc-record-temp-memory", (), (),
                  "peak bytes of temporaries live at once (mlxc.temp_bytes), for memory_stats()")
    return Stage(bufferize.name,
                 tuple(passes + [fuse, constant, early, results, record] + verify(bufferize.name)),
                 bufferize.why)


def thread_passes() -> list[Pass]:
    """The outer tiles of large ops as OpenMP regions, run by the runtime's thread pool
    (runtime/mlxc_parallel.c implements the OpenMP calls LLVM emits for them)."""
    if settings.get("threads") < 2:
        return []
    return [
        Pass("mlxc-parallelize-tile-loops", (), (),
             "outermost scf.forall tiles of large ops become scf.parallel; small work and "
             "inner loops stay sequential (no wake-up cost)", only_with(*_FORALL)),
        mlir_pass("convert-scf-to-openmp",
                  "scf.parallel as omp.parallel + omp.wsloop, asking the pool for MLXC_THREADS "
                  "threads (the program carries its count: JIT and artifacts alike)",
                  when=only_with(*_PARALLEL), num_threads=settings.get("threads")),
        Pass("mlxc-inline-alloca-scopes", (), (),
             "drop the empty stack scopes convert-scf-to-openmp adds (scf-to-cf would fail "
             "on their multi-block bodies)", only_with(*_PARALLEL, "memref.alloca_scope")),
    ]


def _outlining() -> bool:
    return settings.get("dedup_kernels") or settings.get("compile_threads") > 1


def lower_stage():
    return stage("lower", "loops over memrefs; no linalg, no tensors", [
        *([Pass("mlxc-library-matmuls", (), (),
                "f32 matrix products with nothing fused into them call the runtime's packed "
                "kernel (runtime/mlxc_gemm.c), which the schedules left alone",
                only_with("linalg.matmul", "linalg.batch_matmul", "linalg.generic"))]
          if _kernel_calls() else []),
        *([Pass("mlxc-kernel-segments", (), (),
                "the straight-line code between loop nests (hoisted accumulators, small "
                "tensors vectorized whole) in closed segments, which the two passes below "
                "outline like loop nests")]
          if _outlining() else []),
        *([Pass("mlxc-dedup-kernels", (), (),
                "loop nests identical up to their buffers (a model's repeated layers) as one "
                "function called for each, so the passes below and LLVM compile it once")]
          if settings.get("dedup_kernels") else []),
        *([Pass("mlxc-outline-kernels", (), (),
                "a large entry's loop nests as functions, which the JIT compiles on "
                "MLXC_COMPILE_THREADS threads (parallel_jit.py); before the passes below, "
                "which then work on each kernel")]
          if settings.get("compile_threads") > 1 else []),
        *([Pass("mlxc-kernel-segments", (("unwrap", "true"),), (),
                "the segments neither pass outlined inlined again")]
          if _outlining() else []),
        *thread_passes(),
        mlir_pass("scf-forall-to-for", "the schedules' other parallel tiles run one after another",
                  anchor="func.func", when=only_with(*_FORALL)),
        mlir_pass("convert-linalg-to-loops",
                  "each linalg op the schedules left alone becomes a loop nest",
                  anchor="func.func"),
        mlir_pass("lower-vector-multi-reduction",
                  "vector reductions as elementwise vector ops plus one horizontal reduction",
                  anchor="func.func"),
        mlir_pass("convert-vector-to-scf",
                  "multi-dimensional vector transfers unrolled to 1-D ones, which LLVM loads "
                  "and stores directly", full_unroll=True),
        mlir_pass("expand-strided-metadata",
                  "subview/reshape metadata as plain arithmetic (emits affine.apply)"),
        mlir_pass("lower-affine", "affine loops and maps to scf and arith"),
        Pass("mlxc-rolled-loops", (), (),
             "LLVM is asked not to unroll the loops around vector code that carry no value "
             "(the schedules unrolled what pays; LLVM unrolling the rest cost compile time)",
             only_with("scf.for")),
        mlir_pass("convert-scf-to-cf", "structured control flow to branches"),
        Pass("mlxc-loop-annotations", (), (),
             "the loop hints convert-scf-to-cf put on back edges under the name of "
             "llvm.br's own loop_annotation, the one LLVM IR's llvm.loop metadata is made "
             "from (the conversion to the LLVM dialect copies cf.br's attributes)",
             only_with("scf.for")),
        Pass("mlxc-complex-mul-fma", (), (),
             "complex products with XLA's fused multiply-adds; before the lowering below",
             only_with("complex.")),
        mlir_pass("convert-complex-to-standard",
                  "complex math as arith/math on (re, im); before the f32 extension below",
                  anchor="func.func", when=only_with("complex.")),
        Pass("mlxc-small-float-fma", (), (),
             "f16 products feeding one sum contract to an FMA where the host computes f16 "
             "(AVX512-FP16), as XLA's do there; before the f32 extension below",
             only_with(types=("f16",))),
        mlir_pass("math-extend-to-supported-types",
                  "math functions on bf16/f16 are computed in f32", anchor="func.func",
                  when=only_with(*_MATH), target_type="f32"),
        Pass("mlxc-precise-expm1-log1p", (), (),
             "expm1/log1p exact near zero (convert-math-to-llvm would use exp(x)-1, log(1+x))",
             only_with(*_MATH)),
        *([Pass("mlxc-approximate-math", (), (),
                "f32 exp/log/tanh/erf and f64 exp as XLA's polynomials, which vectorize "
                "(libm calls would be one per element); after the expm1/log1p expansions, "
                "which use exp, tanh and log", only_with(*_MATH))]
          if settings.get("approx_math") else []),
        mlir_pass("arith-emulate-unsupported-floats",
                  "bf16/f16 arithmetic runs in f32 and rounds after each op, as XLA does",
                  anchor="func.func", when=only_with(types=_SMALL_FLOATS), target_type="f32",
                  source_types="bf16,f16," + SMALL_FLOATS),
        Pass("mlxc-keep-small-float-roundings", (), (),
             "so canonicalization keeps those roundings (it folds extf(truncf(x)) marked "
             "contract into x)", only_with(types=_SMALL_FLOATS)),
        Pass("mlxc-small-float-selects", (), (),
             "selects of bf16/f16/fp8 values (left on their type by the emulation) choose "
             "integer bit patterns: LLVM aborts on a select of 9 bf16 lanes",
             only_with(types=_SMALL_FLOATS)),
        mlir_pass("arith-expand",
                  "bf16 conversions as integer ops: no compiler-rt __truncsfbf2 at run time",
                  anchor="func.func", include_bf16=True),
        Pass("mlxc-expand-small-float-casts", (), (),
             "conversions to and from fp8/fp6/fp4, which LLVM lacks, as integer code and tables",
             only_with(types=_FP8_AND_SMALLER)),
    ])


def llvm_stage():
    return stage("llvm", "the LLVM dialect, with the mlxc_entry(void **buffers) wrapper", [
        Pass("mlxc-empty-buffer-arguments", (), (),
             "zero-size memref arguments as memref<0xT>: the bare-pointer call lowering "
             "below rejects shapes like 2x0x3"),
        mlir_pass("finalize-memref-to-llvm",
                  "memrefs to pointers; alloc/dealloc to the runtime's allocator "
                  "(runtime/mlxc_alloc.c), which keeps freed large temporaries for the "
                  "next call instead of page-faulting them in again",
                  use_generic_functions=True),
        mlir_pass("convert-complex-to-llvm",
                  "complex values as {re, im} structs, numpy's complex64/complex128 layout",
                  when=only_with("complex.")),
        mlir_pass("convert-math-to-llvm", "math ops with LLVM intrinsics", when=only_with(*_MATH)),
        mlir_pass("convert-math-to-libm", "the remaining math ops become libm calls",
                  when=only_with(*_MATH)),
        mlir_pass("convert-vector-to-llvm",
                  "vectors to LLVM vectors, after math-to-libm (which scalarizes vector calls "
                  "into extracts and inserts); contractions as outer products (broadcast + "
                  "FMA); float reductions may be reassociated, as XLA does",
                  vector_contract_lowering="outerproduct", reassociate_fp_reductions=True),
        # One conversion for the dialects whose lowering takes no option: each separate
        # conversion pass walks the whole module (arith, cf, index, ub and omp took 4 ms
        # apart on transformer_block, 2 ms together). func, memref and vector need their
        # options; complex stays before the vector pass, which folds its constants.
        mlir_pass("convert-to-llvm",
                  "scalar arithmetic (arith), branches (cf), index ops left by the lowerings "
                  "above, poison values left by vectorization (ub), and the parallel regions' "
                  "types (omp; LLVM outlines them into __kmpc_fork_call)",
                  filter_dialects=_TO_LLVM_DIALECTS),
        mlir_pass("convert-func-to-llvm",
                  "functions; the entry takes one bare pointer per buffer",
                  use_bare_ptr_memref_call_conv=True),
        mlir_pass("reconcile-unrealized-casts", "remove the casts between the conversions"),
        Pass("mlxc-small-float-moves", (), (),
             "bf16/f16 values that are only moved (loads, stores, element moves, shuffles) "
             "move as i16 (x86's backend aborts on a vector<9xbf16> load)",
             only_with(types=("bf16", "f16"))),
        *([Pass("mlxc-clone-into-parallel-regions", (), (),
                "constants and memref descriptors recomputed inside each parallel region: "
                "LLVM's outlining then passes only pointers, and folds sizes and strides",
                only_with("omp.parallel"))]
          if settings.get("threads") > 1 else []),
        Pass("mlxc-emit-entry-wrapper", (), (),
             "one C signature for every program: void mlxc_entry(void **buffers)"),
    ])


def with_kernel_products(simplify: Stage) -> Stage:
    """The common simplify stage; when products call the runtime's kernel, the layout pass
    leaves the operands of those it will compute in place (the kernel reads any strides)."""
    if not _kernel_calls():
        return simplify
    passes = tuple(Pass(p.name, (("kernel-products", "1"),), p.anchor,
                        p.why + "; not for products the runtime's kernel computes, which "
                        "reads any strides", p.when)
                   if p.name == "mlxc-dot-general-layout" else p for p in simplify.passes)
    return Stage(simplify.name, passes, simplify.why)


def with_layers(simplify: Stage) -> Stage:
    """The simplify stage, first outlining the layers a program repeats. CPU only: the
    cuda mapping plans the launches of one function."""
    if not settings.get("outline_layers"):
        return simplify
    outline = Pass("mlxc-outline-layers", (), (),
                   "ops that repeat (a model's layers) as one function called for each: "
                   "the stages below compile one layer; first, before folding moves or "
                   "merges their constants")
    return Stage(simplify.name, (outline,) + simplify.passes, simplify.why)


def with_library_sorts(linalg: Stage) -> Stage:
    """The common linalg stage; with library calls, FFTs call the runtime's FFT, JAX's
    float sorts its radix sort and LAPACK calls its LAPACK kernels before
    mlxc-lower-extra-ops would expand them."""
    if not settings.get("library_calls"):
        return linalg
    sorts = Pass("mlxc-library-sorts", (), (),
                 "a sort of one f32 operand by JAX's comparator calls the runtime's stable "
                 "radix sort (runtime/mlxc_sort.c): O(n), no permutation buffer",
                 only_with("stablehlo.sort"))
    ffts = Pass("mlxc-library-ffts", (), (),
                "FFTs call the runtime's port of XLA's FFT library (runtime/mlxc_fft.c): "
                "XLA's results bit for bit, compiled in milliseconds, not unrolled",
                only_with("stablehlo.fft"))
    lapack = Pass("mlxc-library-lapack", (), (),
                  "JAX's f32/f64 LAPACK custom calls (cholesky, lu, qr, eigh, svd, triangular "
                  "solves) call the runtime's blocked kernels (runtime/mlxc_lapack.c), as XLA "
                  "calls LAPACK: not loops over whole tensors per step",
                  only_with("stablehlo.custom_call"))
    passes = []
    for p in linalg.passes:
        if p.name == "mlxc-lower-extra-ops":
            passes.extend([ffts, sorts, lapack])
        passes.append(p)
    return Stage(linalg.name, tuple(passes), linalg.why)


def cpu_pipeline(entry: str = "main") -> Pipeline:
    wrap = {"simplify": lambda s: with_layers(with_kernel_products(s)),
            "linalg": with_library_sorts,
            "fuse": with_schedules, "bufferize": with_temp_memory}
    stages = [wrap[s.name](s) if s.name in wrap else s for s in common_stages(entry)]
    return Pipeline("cpu", tuple(stages + [lower_stage(), llvm_stage()]))
