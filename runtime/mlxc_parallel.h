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

#ifdef __cplusplus
}
#endif

#endif
