/* f32 matrix products for generated code.
 *
 * mlxc compiles most ops to loops of its own, but a plain f32 matrix product (nothing
 * fused into it) calls this instead: one precompiled kernel is as fast as the best
 * generated one, and the program skips tiling, vectorizing and LLVM code generation
 * for it (XLA calls Eigen for the same reason).
 */
#ifndef MLXC_GEMM_H
#define MLXC_GEMM_H

#include <stdint.h>

#include "mlxc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* For each of `batch` products: C[i, j] (+)= sum_k A[i, k] * B[k, j], with A[i, k] at
 * a + bi * a_bs + i * a_rs + k * a_cs (element strides: any, transposes and broadcasts
 * included), and B and C likewise. `accumulate` 0 overwrites C, 1 adds to it. Runs on
 * up to `threads` threads of mlxc's pool (products of 2^19 multiply-adds or more), with
 * the same bits on any number. Without memory for its packing buffers (256 KiB a
 * thread, kept for later calls) it computes the same sums with a plain loop, slowly. */
MLXC_EXPORT void mlxc_sgemm(int64_t batch, int64_t m, int64_t n, int64_t k, const float *a,
                            int64_t a_bs, int64_t a_rs, int64_t a_cs, const float *b,
                            int64_t b_bs, int64_t b_rs, int64_t b_cs, float *c, int64_t c_bs,
                            int64_t c_rs, int64_t c_cs, int32_t threads, int32_t accumulate);

#ifdef __cplusplus
}
#endif

#endif
