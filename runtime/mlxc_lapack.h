/* Dense linear algebra for generated code: the LAPACK routines JAX's CPU programs call.
 *
 * `jax.export` of jnp.linalg on the CPU emits `stablehlo.custom_call @lapack_?xxx_ffi`;
 * XLA answers them with LAPACK. mlxc-library-lapack makes the f32/f64 ones calls to
 * these kernels, which follow LAPACK's conventions (reflectors and tau, 1-based pivots,
 * info) on the custom calls' logical, row-major matrices. Each takes `batch` dense
 * matrices one after another; inputs are only read, outputs written in full.
 * Iterations are bounded: NaN input gives NaN or a non-zero info, never a hang.
 */
#ifndef MLXC_LAPACK_H
#define MLXC_LAPACK_H

#include <stdint.h>

#include "mlxc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MLXC_LAPACK_DECLARE(T, S)                                                              \
  /* Cholesky: the factor in the `lower` (else upper) triangle, the other triangle A's;      \
   * info 0, or the 1-based column whose pivot is not positive. */                           \
  MLXC_EXPORT void mlxc_potrf_##S(const T *a, T *out, int32_t *info, int64_t batch,          \
                                  int64_t n, int32_t lower);                                 \
  /* op(A) X = B (left) or X op(A) = B, A triangular (m x m or n x n), B m x n; trans 0      \
   * op(A) = A, else A^T. */                                                                 \
  MLXC_EXPORT void mlxc_trsm_##S(const T *a, const T *b, T *out, int64_t batch, int64_t m,   \
                                 int64_t n, int32_t left, int32_t lower, int32_t trans,      \
                                 int32_t unit);                                              \
  /* P A = L U with partial pivoting: L unit lower and U in `out`, ipiv 1-based rows,        \
   * info 0 or the first 1-based k with U[k, k] == 0 (the factorization still completes). */ \
  MLXC_EXPORT void mlxc_getrf_##S(const T *a, T *out, int32_t *ipiv, int32_t *info,           \
                                  int64_t batch, int64_t m, int64_t n);                      \
  /* Householder QR: R on and above the diagonal, reflectors below, tau (min(m, n)). */     \
  MLXC_EXPORT void mlxc_geqrf_##S(const T *a, T *out, T *tau, int64_t batch, int64_t m,      \
                                  int64_t n);                                                \
  /* The first n columns of Q = H_0 ... H_(k-1), from geqrf's reflectors in `a` (m x n). */  \
  MLXC_EXPORT void mlxc_orgqr_##S(const T *a, const T *tau, T *q, int64_t batch, int64_t m,  \
                                  int64_t n, int64_t k);                                     \
  /* Symmetric eigendecomposition of the `lower` (else upper) triangle: eigenvalues w       \
   * ascending, eigenvectors the columns of v (with `vectors`; else v is A); info 0 or       \
   * > 0 when the QL iteration did not converge. */                                          \
  MLXC_EXPORT void mlxc_syevd_##S(const T *a, T *v, T *w, int32_t *info, int64_t batch,      \
                                  int64_t n, int32_t lower, int32_t vectors);                \
  /* A = U S V^T: s descending, u m x u_cols and vt vt_rows x n (u_cols = m or min(m, n),    \
   * vt_rows = n or min(m, n)), zeros without `vectors`; a_out is A; info 0 or > 0 when      \
   * the bidiagonal QR iteration did not converge. */                                        \
  MLXC_EXPORT void mlxc_gesdd_##S(const T *a, T *a_out, T *s, T *u, T *vt, int32_t *info,    \
                                  int64_t batch, int64_t m, int64_t n, int64_t u_cols,       \
                                  int64_t vt_rows, int32_t vectors);

MLXC_LAPACK_DECLARE(float, f32)
MLXC_LAPACK_DECLARE(double, f64)
#undef MLXC_LAPACK_DECLARE

#ifdef __cplusplus
}
#endif

#endif
