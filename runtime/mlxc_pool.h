/* f32 window reductions (max and sum pooling) for generated code.
 *
 * A pooling whose input is padded with the reduction's identity (-inf for max, 0 for
 * a sum) calls this instead of reducing a padded copy: the kernel skips the taps that
 * fall into the padding, which is the same as reducing them, so the program never
 * makes the padded copy.
 */
#ifndef MLXC_POOL_H
#define MLXC_POOL_H

#include <stdint.h>

#include "mlxc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MLXC_POOL_MAX 0 /* out = maximum (NaN propagates, +0 above -0), from -inf */
#define MLXC_POOL_SUM 1 /* out = sum, from +0, taps added row by row */

/* out[b, y, x, ch] = the reduction, in the order i, j, of
 *     in[b, y * stride_h + i * dil_h - pad_top, x * stride_w + j * dil_w - pad_left, ch]
 * over i < kh and j < kw, skipping taps outside the input (a window wholly in the
 * padding gives the identity). `in` is a dense n x h x w x c array and `out` a dense
 * n x oh x ow x c one, which is overwritten; any layout whose reduced dimensions are
 * two neighbours fits, with the dimensions before them as n and those after as c.
 * Runs on up to `threads` threads of mlxc's pool (large poolings only). */
MLXC_EXPORT void mlxc_spool(const float *in, float *out, int64_t n, int64_t h, int64_t w,
                            int64_t c, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                            int64_t stride_h, int64_t stride_w, int64_t dil_h, int64_t dil_w,
                            int64_t pad_top, int64_t pad_left, int32_t kind, int32_t threads);

#ifdef __cplusplus
}
#endif

#endif
