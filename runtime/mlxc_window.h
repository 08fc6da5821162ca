/* What the runtime's window kernels (mlxc_conv.c, mlxc_pool.c) share: 16-float vectors
 * read and written at any float's address, and which taps of a window lie inside the
 * input. Internal to the runtime; nothing here is exported. */
#ifndef MLXC_WINDOW_H
#define MLXC_WINDOW_H

#include <stdint.h>

/* 16 floats at any float's address (macros, not functions: a vector argument or result
 * would change the ABI of the code built without AVX-512). */
typedef float v16 __attribute__((vector_size(64)));
typedef float v16_unaligned __attribute__((vector_size(64), aligned(4), may_alias));
#define load16(p) (*(const v16_unaligned *)(p))
#define store16(p, v) (*(v16_unaligned *)(p) = (v))

/* The first and one past the last window index whose tap, at start + index * step,
 * lies in 0 .. size - 1 (lo == hi when none does). */
static inline void mlxc_taps_inside(int64_t start, int64_t step, int64_t taps, int64_t size,
                                    int64_t *lo, int64_t *hi) {
  /* (Without dividing by an undilated step: two divisions a pixel took as long as
   * reducing its taps.) */
  int64_t a = start >= 0 ? 0 : step == 1 ? -start : (-start + step - 1) / step;
  int64_t b = size - start <= 0 ? 0 : step == 1 ? size - start : (size - start + step - 1) / step;
  if (b > taps)
    b = taps;
  if (a > b)
    a = b;
  *lo = a;
  *hi = b;
}

#endif
