/* stablehlo.fft on the CPU, bit for bit as XLA's CPU FFT library (ducc0) computes it.
 *
 * mlxc-library-ffts calls these instead of unrolling the transform into thousands of
 * elementwise ops (seconds of compile time); XLA calls its library the same way. The
 * code is python/mlxc/lowerings/fft_complex.py, fft_real.py and fft_roots.py written
 * in C, operation for operation. It covers the lengths for which XLA's library runs
 * those passes (mlxc_fft_supported): complex lengths whose prime factors are below 110,
 * up to 300 or not a multiple of 4, at most 10000; real lengths for which
 * fft_real.uses_radix_passes holds.
 */
#ifndef MLXC_FFT_H
#define MLXC_FFT_H

#include <stdint.h>

#include "mlxc_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* stablehlo's fft_type values. */
enum { MLXC_FFT_FFT = 0, MLXC_FFT_IFFT = 1, MLXC_FFT_RFFT = 2, MLXC_FFT_IRFFT = 3 };

/* The whole stablehlo.fft of `batch` dense transforms over the last `rank` (1 to 3)
 * axes, of lengths n0 (outermost) .. n{rank-1} (unused ones ignored), with XLA's axis
 * order and scale: FFT/IFFT innermost axis first, an IFFT's 1/N (formed in double,
 * rounded to the element type) applied there; RFFT the real (last) axis, then the
 * others outermost first; IRFFT the leading axes outermost first, then the real axis
 * with the 1/N. `in` holds complex values (re, im pairs) except for RFFT, `out`
 * complex values except for IRFFT, whose last axis holds n/2 + 1 complex values on
 * the complex side. `in` is only read. Parallel over lines on up to `threads`
 * threads. Returns 0, or -1 when a length is not covered (nothing is written) or
 * memory ran out. */
MLXC_EXPORT int mlxc_fft_f32(const void *in, void *out, int64_t batch, int64_t n0,
                             int64_t n1, int64_t n2, int32_t rank, int32_t kind,
                             int32_t threads);
MLXC_EXPORT int mlxc_fft_f64(const void *in, void *out, int64_t batch, int64_t n0,
                             int64_t n1, int64_t n2, int32_t rank, int32_t kind,
                             int32_t threads);

/* Whether the kernel covers a transform of length n: complex (real = 0) or real. */
MLXC_EXPORT int mlxc_fft_supported(int64_t n, int32_t real);

/* The entry points generated code calls, one per operand and result element type
 * (an MLIR declaration has one signature): FFT/IFFT on complex64/complex128, RFFT
 * from f32/f64, IRFFT to f32/f64. Each calls mlxc_fft_f32/f64. */
MLXC_EXPORT void mlxc_fft_c64(const void *in, void *out, int64_t batch, int64_t n0,
                              int64_t n1, int64_t n2, int32_t rank, int32_t kind,
                              int32_t threads);
MLXC_EXPORT void mlxc_fft_c128(const void *in, void *out, int64_t batch, int64_t n0,
                               int64_t n1, int64_t n2, int32_t rank, int32_t kind,
                               int32_t threads);
MLXC_EXPORT void mlxc_rfft_f32(const void *in, void *out, int64_t batch, int64_t n0,
                               int64_t n1, int64_t n2, int32_t rank, int32_t kind,
                               int32_t threads);
MLXC_EXPORT void mlxc_rfft_f64(const void *in, void *out, int64_t batch, int64_t n0,
                               int64_t n1, int64_t n2, int32_t rank, int32_t kind,
                               int32_t threads);
MLXC_EXPORT void mlxc_irfft_f32(const void *in, void *out, int64_t batch, int64_t n0,
                                int64_t n1, int64_t n2, int32_t rank, int32_t kind,
                                int32_t threads);
MLXC_EXPORT void mlxc_irfft_f64(const void *in, void *out, int64_t batch, int64_t n0,
                                int64_t n1, int64_t n2, int32_t rank, int32_t kind,
                                int32_t threads);

#ifdef __cplusplus
}
#endif

#endif
