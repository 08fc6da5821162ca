/* f32 max and sum pooling that generated code calls: see mlxc_pool.h for why and for
 * the contract.
 *
 * Each output pixel reduces its window's taps, 16 channels at a time in registers
 * (channels are innermost in NHWC, so a tap is a contiguous run of them); the taps in
 * the padding are skipped by clamping the window's rows and columns to the input.
 * The taps are reduced in the order the generated loops reduce them, so a sum is the
 * same to the bit. Threads take rows of output pixels (over batch x height) from
 * mlxc's pool through the OpenMP entry points generated code uses.
 */
#include <string.h>

#include "mlxc_pool.h"
#include "mlxc_parallel.h"
#include "mlxc_window.h"

/* Below this many taps x channels a pooling runs on its caller alone. */
#define THREADED_WORK (1 << 20)

typedef struct {
  const float *in;
  float *out;
  int64_t n, h, w, c, kh, kw, oh, ow, sh, sw, dh, dw, pt, pl;
} pool_args;

typedef int32_t v16i __attribute__((vector_size(64)));

/* arith.maximumf (llvm.maximum) on bits: NaN propagates, and of two equal values the
 * AND of their bits, which is +0 for -0 and +0 and the value otherwise. In quarters:
 * GCC 12 splits the compares of wider vectors into scalar ones on SSE. */
typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef union {
  v16 v;
  v4f q[4];
} v16q;

#define MAX16_PORTABLE(A, V)                                                            \
  ({                                                                                    \
    v16q a_ = {(A)}, v_ = {(V)};                                                        \
    for (int q_ = 0; q_ < 4; ++q_) {                                                    \
      const v4f x_ = a_.q[q_], y_ = v_.q[q_];                                           \
      const v4i take_ = (y_ > x_) | (y_ != y_), equal_ = y_ == x_;                      \
      a_.q[q_] = (v4f)((((take_ & (v4i)y_) | (~take_ & (v4i)x_)) & (~equal_ | (v4i)y_))); \
    }                                                                                   \
    a_.v;                                                                               \
  })

static inline float max1(float a, float v) {
  uint32_t ab, vb, r;
  memcpy(&ab, &a, 4);
  memcpy(&vb, &v, 4);
  r = (v > a || v != v) ? vb : ab;
  if (v == a)
    r &= vb;
  float out;
  memcpy(&out, &r, 4);
  return out;
}

/* Output rows r0 .. r1 (flat over batch x height) of a max (max = 1) or a sum; the
 * window of 16 channels reduced by MAX16 or +. (A macro, so that the AVX-512 build
 * reduces with mask registers: GCC 12 scalarizes the vector compares of the portable
 * MAX16 when it targets AVX-512, ten times slower.) From 16 channels, a last part
 * block is a whole one that ends at the last channel, computing some channels twice;
 * fewer channels go one at a time. A max reduces the taps of a row in two chains (max
 * is the same in any order), halving the latency a pixel waits on; a sum adds them
 * in order. */
#define POOL_ROWS(g, r0, r1, max, MAX16)                                                \
  do {                                                                                  \
    const int64_t c = (g)->c, c16 = c < 16 ? 0 : c;                                     \
    const float init = (max) ? -__builtin_inff() : 0.0f;                                \
    for (int64_t row = (r0); row < (r1); ++row) {                                       \
      const int64_t b = row / (g)->oh, y0 = row % (g)->oh * (g)->sh - (g)->pt;          \
      const float *image = (g)->in + b * (g)->h * (g)->w * c;                           \
      float *out = (g)->out + row * (g)->ow * c;                                        \
      int64_t i_lo, i_hi;                                                               \
      mlxc_taps_inside(y0, (g)->dh, (g)->kh, (g)->h, &i_lo, &i_hi);                     \
      for (int64_t x = 0; x < (g)->ow; ++x, out += c) {                                 \
        const int64_t x0 = x * (g)->sw - (g)->pl, step = (g)->dw * c;                   \
        int64_t j_lo, j_hi;                                                             \
        mlxc_taps_inside(x0, (g)->dw, (g)->kw, (g)->w, &j_lo, &j_hi);                   \
        for (int64_t c0 = 0; c0 < c16; c0 += 16) {                                      \
          if (c0 + 16 > c16)                                                            \
            c0 = c16 - 16;                                                              \
          v16 acc = (v16){0} + init, odd = acc;                                       \
          for (int64_t i = i_lo; i < i_hi; ++i) {                                       \
            const float *src = image + ((y0 + i * (g)->dh) * (g)->w + x0) * c + c0;     \
            if (max) {                                                                  \
              int64_t j = j_lo;                                                         \
              for (; j + 1 < j_hi; j += 2) {                                            \
                acc = MAX16(acc, load16(src + j * step));                               \
                odd = MAX16(odd, load16(src + (j + 1) * step));                         \
              }                                                                         \
              if (j < j_hi)                                                             \
                acc = MAX16(acc, load16(src + j * step));                               \
            } else {                                                                    \
              for (int64_t j = j_lo; j < j_hi; ++j)                                     \
                acc += load16(src + j * step);                                          \
            }                                                                           \
          }                                                                             \
          if (max)                                                                      \
            acc = MAX16(acc, odd);                                                      \
          store16(out + c0, acc);                                                       \
        }                                                                               \
        for (int64_t ch = c16 ? c : 0; ch < c; ++ch) {                                          \
          float acc = init;                                                             \
          for (int64_t i = i_lo; i < i_hi; ++i) {                                       \
            const float *src = image + ((y0 + i * (g)->dh) * (g)->w + x0) * c + ch;     \
            for (int64_t j = j_lo; j < j_hi; ++j)                                       \
              acc = (max) ? max1(acc, src[j * step]) : acc + src[j * step];             \
          }                                                                             \
          out[ch] = acc;                                                                \
        }                                                                               \
      }                                                                                 \
    }                                                                                   \
  } while (0)

typedef void (*pool_fn)(const pool_args *, int64_t, int64_t);

static void max_portable(const pool_args *g, int64_t r0, int64_t r1) {
  POOL_ROWS(g, r0, r1, 1, MAX16_PORTABLE);
}

static void sum_portable(const pool_args *g, int64_t r0, int64_t r1) {
  POOL_ROWS(g, r0, r1, 0, MAX16_PORTABLE);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_AVX512_KERNEL 1

#define MAX16_AVX512(a, v)                                                              \
  ({                                                                                    \
    const __m512 a_ = (__m512)(a), v_ = (__m512)(v);                                    \
    const __mmask16 take_ = _mm512_cmp_ps_mask(v_, a_, _CMP_GT_OQ) |                    \
                            _mm512_cmp_ps_mask(v_, v_, _CMP_UNORD_Q);                   \
    const __m512i r_ = _mm512_mask_blend_epi32(take_, _mm512_castps_si512(a_),          \
                                               _mm512_castps_si512(v_));                \
    (v16)_mm512_mask_and_epi32(r_, _mm512_cmp_ps_mask(v_, a_, _CMP_EQ_OQ), r_,         \
                                _mm512_castps_si512(v_));                               \
  })

__attribute__((target("avx512f"))) static void max_avx512(const pool_args *g, int64_t r0,
                                                          int64_t r1) {
  POOL_ROWS(g, r0, r1, 1, MAX16_AVX512);
}

__attribute__((target("avx512f"))) static void sum_avx512(const pool_args *g, int64_t r0,
                                                          int64_t r1) {
  POOL_ROWS(g, r0, r1, 0, MAX16_AVX512);
}
#endif

static pool_fn pools[2]; /* by kind */

/* ---- threads: mlxc_parallel.c's pool ---- */

typedef struct {
  const pool_args *g;
  int64_t rows;
  pool_fn fn;
} pool_region_args;

static void pool_rows(const void *ctx, int64_t begin, int64_t end) {
  const pool_region_args *r = ctx;
  r->fn(r->g, begin, end);
}

MLXC_EXPORT void mlxc_spool(const float *in, float *out, int64_t n, int64_t h, int64_t w,
                            int64_t c, int64_t kh, int64_t kw, int64_t oh, int64_t ow,
                            int64_t stride_h, int64_t stride_w, int64_t dil_h, int64_t dil_w,
                            int64_t pad_top, int64_t pad_left, int32_t kind, int32_t threads) {
  if (!pools[0]) {
    pool_fn max = max_portable, sum = sum_portable;
#ifdef HAVE_AVX512_KERNEL
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) {
      max = max_avx512;
      sum = sum_avx512;
    }
#endif
    pools[MLXC_POOL_SUM] = sum;
    pools[MLXC_POOL_MAX] = max;
  }
  const pool_args g = {in, out, n, h, w, c, kh, kw, oh, ow, stride_h, stride_w,
                       dil_h, dil_w, pad_top, pad_left};
  pool_region_args r = {&g, n * oh, pools[kind == MLXC_POOL_SUM]};
  if (r.rows <= 0 || ow <= 0 || c <= 0)
    return;
  if (threads < 1 || (double)r.rows * ow * c * kh * kw < THREADED_WORK || r.rows < 2)
    threads = 1;
  mlxc_parallel_range(r.rows, threads, pool_rows, &r);
}
