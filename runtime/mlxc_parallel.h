/* mlxc's thread pool: the parallel loops of generated code run on it.
 *
 * The CPU pipeline lowers the outer tile loops of large ops through MLIR's OpenMP
 * dialect (convert-scf-to-openmp); LLVM's OpenMP IR builder then outlines each loop
 * body and calls the small subset of the OpenMP runtime ABI (`__kmpc_*`) that
 * mlxc_parallel.c implements. So no OpenMP library is needed, in the JIT or in an
 * artifact, and every program shares one persistent pool.
 */
#ifndef MLXC_PARALLEL_H
#define MLXC_PARALLEL_H

#include <stdint.h>

#include "mlxc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Since the process started: counts[0] parallel loops run on the pool (not inline),
 * counts[1] blocks of their iterations run by workers (not the calling thread).
 * Tests check that large work really used the pool. */
MLXC_EXPORT void mlxc_parallel_stats(int64_t counts[2]);

/* ---- For the runtime's own kernels (mlxc_gemm.c, mlxc_conv.c, mlxc_pool.c) ---- */

/* The OpenMP entry points of the pool, as LLVM's generated code calls them. */
typedef struct ident ident_t;
typedef void (*microtask_t)(int32_t *gtid, int32_t *btid, ...);
void __kmpc_fork_call(ident_t *loc, int32_t argc, microtask_t fn, ...);
void __kmpc_push_num_threads(ident_t *loc, int32_t gtid, int32_t n);
int32_t __kmpc_global_thread_num(ident_t *loc);
void __kmpc_for_static_init_8(ident_t *loc, int32_t gtid, int32_t sched, int32_t *last,
                              int64_t *lower, int64_t *upper, int64_t *stride, int64_t incr,
                              int64_t chunk);

/* body(ctx, begin, end) over [0, count) in blocks, on up to `threads` threads of the
 * pool, the caller among them; on the caller alone when threads <= 1. */
void mlxc_parallel_range(int64_t count, int32_t threads,
                         void (*body)(const void *ctx, int64_t begin, int64_t end),
                         const void *ctx);

#ifdef __cplusplus
}
#endif

#endif
