/* Conversions LLVM's code generator calls by name: compiler-rt's, for hosts whose
 * libgcc lacks them.
 *
 * On an x86 CPU without AVX512-BF16, LLVM holds bf16 vector lanes it moves (an
 * insertelement into a vector of 64 bf16) in f32 and rounds them back with a call to
 * __truncsfbf2. libgcc has that function only from GCC 13 on, so on such a CPU the JIT
 * found no symbol and a program with bf16 results did not compile. The contract is
 * compiler-rt's: round to nearest even, NaN stays NaN with its quiet bit set. The
 * result travels in an XMM register, as _Float16 does (the bits are bf16's); compilers
 * without _Float16 on x86 are too old to know __bf16 either, and get no definition. */

#include <stdint.h>
#include <string.h>

#include "mlxc_runtime.h"

#if defined(__x86_64__) && defined(__FLT16_MAX__)
MLXC_EXPORT _Float16 __truncsfbf2(float x);
MLXC_EXPORT _Float16 __truncdfbf2(double x);
MLXC_EXPORT _Float16 __truncdfhf2(double x);

static _Float16 from_bits(uint16_t h) {
  _Float16 r;
  memcpy(&r, &h, sizeof r);
  return r;
}

static uint16_t bf16_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((u >> 16) | 0x40u);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

_Float16 __truncsfbf2(float x) { return from_bits(bf16_bits(x)); }

/* f64 to f16 and bf16 (LLVM calls these for any fptrunc from double on a CPU without
 * a direct instruction; libgcc lacks the bf16 one before GCC 13, the f16 one before 12).
 * Rounding to float first and then to the narrow type would round twice (wrong in the
 * last bit for values just past a tie); rounding to float *to odd* first keeps the
 * result exact, as float carries more than two bits beyond either narrow type. */
static float to_float_odd(double x) {
  float f = (float)x;
  if (x == x && (double)f != x) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if (x > 0 ? (double)f > x : (double)f < x)
      u -= 1; /* rounded away from zero (to inf too): step back toward it */
    u |= 1;
    memcpy(&f, &u, sizeof u);
  }
  return f;
}

static uint16_t f16_bits(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) /* NaN: quiet, keeping the top of its payload */
    return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
  if (a >= 0x477ff000u) /* 65520 and up round to infinity */
    return (uint16_t)(sign | 0x7c00u);
  if (a < 0x38800000u) { /* below 2^-14: a subnormal f16 (or zero) */
    int e = (int)(a >> 23);
    int shift = 126 - e; /* value / 2^-24 = significand >> shift */
    if (e == 0 || shift > 24)
      return sign;
    uint32_t m = (a & 0x7fffffu) | 0x800000u;
    uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u)))
      q++;
    return (uint16_t)(sign | q);
  }
  uint32_t r = a - 0x38000000u; /* rebias the exponent from 127 to 15 */
  r += 0xfffu + ((r >> 13) & 1u);
  return (uint16_t)(sign | (r >> 13));
}

_Float16 __truncdfbf2(double x) { return from_bits(bf16_bits(to_float_odd(x))); }

_Float16 __truncdfhf2(double x) { return from_bits(f16_bits(to_float_odd(x))); }
#endif
