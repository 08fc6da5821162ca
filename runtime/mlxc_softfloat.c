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

_Float16 __truncsfbf2(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  uint16_t h;
  if ((u & 0x7fffffffu) > 0x7f800000u)
    h = (uint16_t)((u >> 16) | 0x40u);
  else
    h = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  _Float16 r;
  memcpy(&r, &h, sizeof r);
  return r;
}
#endif
