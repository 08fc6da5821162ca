/* f32 convolutions for generated code.
 *
 * A convolution with nothing fused into it calls this instead of being tiled,
 * vectorized and compiled through LLVM (XLA calls Eigen for the same reason). It reads
 * the unpadded input and treats taps that fall into the padding as zeros, so the
 * program never makes a padded copy of its input.
 */
#ifndef MLXC_CONV_H
#define MLXC_CONV_H

#include <stdint.h>

#include "mlxc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out[b, y, x, f] = sum over i < kh, j < kw, ch < c of
 *     in[b, y * stride_h + i * dil_h - pad_top, x * stride_w + j * dil_w - pad_left, ch]
 *     * filter[i, j, ch, f],
 * taps outside the input counting as zero. `in` is a dense n x h x w x c array (NHWC)
 * and `out` a dense n x oh x ow x f one, which is overwritten; filter[i, j, ch, f] is at
 * filter + i * filter_stride_h + j * filter_stride_w + ch * filter_stride_i +
 * f * filter_stride_o (kw * c * f, c * f, f and 1 for a dense HWIO array; a
 * transposed one is read in place). A 1-D convolution is the case h = kh = oh = 1.
 * Runs on up to `threads` threads of mlxc's pool (large convolutions only). Its buffers
 * (the packed filter, and per thread the copies of the patch rows that reach into the
 * padding) are kept for later calls, like mlxc_sgemm's; without memory for them it
 * computes the same sums with plain loops, slowly. */
MLXC_EXPORT void mlxc_sconv(const float *in, const float *filter, float *out, int64_t n,
                            int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw,
                            int64_t f, int64_t oh, int64_t ow, int64_t stride_h,
                            int64_t stride_w, int64_t dil_h, int64_t dil_w, int64_t pad_top,
                            int64_t pad_left, int64_t filter_stride_h,
                            int64_t filter_stride_w, int64_t filter_stride_i,
                            int64_t filter_stride_o, int32_t threads);

/* The depthwise case (a feature group per channel, one filter channel each):
 * out[b, y, x, ch] = sum over i < kh, j < kw of
 *     in[b, y * stride_h + i * dil_h - pad_top, x * stride_w + j * dil_w - pad_left, ch]
 *     * filter[i, j, ch],
 * with `filter` a dense kh x kw x c array (HWC) and `out` n x oh x ow x c; otherwise as
 * above. */
MLXC_EXPORT void mlxc_sconv_depthwise(const float *in, const float *filter, float *out,
                                      int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh,
                                      int64_t kw, int64_t oh, int64_t ow, int64_t stride_h,
                                      int64_t stride_w, int64_t dil_h, int64_t dil_w,
                                      int64_t pad_top, int64_t pad_left, int32_t threads);

#ifdef __cplusplus
}
#endif

#endif
