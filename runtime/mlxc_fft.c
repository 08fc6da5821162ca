/* XLA's CPU FFT (ducc0's radix passes), bit for bit: see mlxc_fft.h for the contract.
 *
 * The specification is python/mlxc/lowerings/fft_complex.py (complex passes 2, 3, 4,
 * 5, 7, 8, 11 and the generic odd pass), fft_real.py (real passes radf/radb 2, 3, 4,
 * 5 and generic, halfcomplex layout) and fft_roots.py (roots of unity). Every
 * expression keeps their operand pairing and left-to-right order: a different order,
 * or a multiply-add fused into one rounding, gives results that differ from XLA's in
 * the last bit. Hence no contraction: the pragmas below for clang and GCC (CMake, the
 * hand build and the artifact build (targets/cpu/link.py) pass no -march/-mfma
 * either, and GCC's ISO mode keeps -ffp-contract=off).
 *
 * The file includes itself twice to define the passes for float and for double (a
 * template in C); one source file, so the artifact build and its cache, which track
 * the runtime's .c files, see every change. Plans (factors, roots, twiddles) are made
 * per call: O(n) work and O(sqrt n) libm calls per axis, small beside the transform.
 */
#ifndef MLXC_FFT_T

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlxc_fft.h"
#include "mlxc_parallel.h"

/* ducc0 moves prime factors from these on to other plans (Bluestein). */
#define COMPLEX_PRIME_MAX 110
#define REAL_PRIME_MAX 135
#define MAX_FACTORS 64
/* Lines are split across threads above this much work (elements x passes). */
#define THREADED_WORK (1 << 16)

#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

/* ---- plans: factors and the roots of unity (fft_roots.py) ---- */

/* ducc0's complex factor order: 8s, 4s, a 2 swapped to the front, odd factors. */
static int complex_factors(int64_t n, int64_t *f) {
  int nf = 0;
  while (n % 8 == 0) {
    f[nf++] = 8;
    n /= 8;
  }
  while (n % 4 == 0) {
    f[nf++] = 4;
    n /= 4;
  }
  if (n % 2 == 0) {
    n /= 2;
    f[nf++] = 2;
    int64_t t = f[0];
    f[0] = f[nf - 1];
    f[nf - 1] = t;
  }
  for (int64_t d = 3; d * d <= n; d += 2)
    while (n % d == 0) {
      f[nf++] = d;
      n /= d;
    }
  if (n > 1)
    f[nf++] = n;
  return nf;
}

/* ducc0's real factor order: 4s, a 2 moved to the front, odd primes ascending. */
static int real_factors(int64_t n, int64_t *f) {
  int nf = 0;
  while (n % 4 == 0) {
    f[nf++] = 4;
    n /= 4;
  }
  if (n % 2 == 0) {
    n /= 2;
    f[nf++] = 2;
    int64_t t = f[0];
    f[0] = f[nf - 1];
    f[nf - 1] = t;
  }
  for (int64_t d = 3; d * d <= n; d += 2)
    while (n % d == 0) {
      f[nf++] = d;
      n /= d;
    }
  if (n > 1)
    f[nf++] = n;
  return nf;
}

MLXC_EXPORT int mlxc_fft_supported(int64_t n, int32_t real) {
  int64_t f[MAX_FACTORS];
  if (n < 1)
    return 0;
  if (real) {
    int nf = real_factors(n, f);
    int64_t top = 0;
    for (int i = 0; i < nf; ++i)
      top = f[i] > top ? f[i] : top;
    /* fft_real.uses_radix_passes: long even lengths go through a complex plan */
    if (n > 1000 && n % 2 == 0 && (n > 10000 || top > 5))
      return 0;
    return top < REAL_PRIME_MAX;
  }
  /* ducc0 transforms an axis longer than 300 whose length is a multiple of 4 as four
   * interleaved transforms (cfftp_vecpass), and one longer than 10000 as two halves:
   * not the pass sequence written here (against jax: 304, 512, 1000 and 1024 differ;
   * 330, 486, 945, 1001, 6006 and 9999 match, and 500 happens to). */
  if (n > 10000 || (n > 300 && n % 4 == 0))
    return 0;
  int nf = complex_factors(n, f);
  for (int i = 0; i < nf; ++i)
    if (f[i] >= COMPLEX_PRIME_MAX)
      return 0;
  return 1;
}

/* Called through volatile pointers: the compiler may not merge a cos and a sin of
 * one angle into sincos, whose rounding fft_roots.py (math.cos, math.sin) never saw. */
static double (*volatile cos_fn)(double) = cos;
static double (*volatile sin_fn)(double) = sin;

/* exp(2 pi i x / n) in double, from the cos and sin of an angle below pi / 4. */
static void octant_root(int64_t x, int64_t n, double ang, double *re, double *im) {
  x <<= 3;
  if (x < 4 * n) { /* upper half plane */
    if (x < 2 * n) {
      if (x < n) {
        *re = cos_fn((double)x * ang);
        *im = sin_fn((double)x * ang);
      } else {
        *re = sin_fn((double)(2 * n - x) * ang);
        *im = cos_fn((double)(2 * n - x) * ang);
      }
      return;
    }
    x -= 2 * n;
    if (x < n) {
      *re = -sin_fn((double)x * ang);
      *im = cos_fn((double)x * ang);
    } else {
      *re = -cos_fn((double)(2 * n - x) * ang);
      *im = sin_fn((double)(2 * n - x) * ang);
    }
    return;
  }
  x = 8 * n - x;
  if (x < 2 * n) {
    if (x < n) {
      *re = cos_fn((double)x * ang);
      *im = -sin_fn((double)x * ang);
    } else {
      *re = sin_fn((double)(2 * n - x) * ang);
      *im = -cos_fn((double)(2 * n - x) * ang);
    }
    return;
  }
  x -= 2 * n;
  if (x < n) {
    *re = -sin_fn((double)x * ang);
    *im = -cos_fn((double)x * ang);
  } else {
    *re = -cos_fn((double)(2 * n - x) * ang);
    *im = -sin_fn((double)(2 * n - x) * ang);
  }
}

/* out[2k], out[2k+1] = exp(2 pi i k / n) for 0 <= k < n, each the double product of
 * two table entries (fft_roots.UnityRoots); the element type rounds it once. */
static int unity_roots(int64_t n, double *out) {
  const long double pi = 3.141592653589793238462643383279502884197L;
  double ang = (double)(0.25L * pi / (long double)n);
  int64_t count = (n + 2) / 2;
  int shift = 1;
  while (((int64_t)1 << shift) * ((int64_t)1 << shift) < count)
    ++shift;
  int64_t mask = ((int64_t)1 << shift) - 1;
  int64_t high = (count + mask) / (mask + 1);
  double *low_t = malloc(sizeof(double) * 2 * (size_t)(mask + 1 + high));
  if (!low_t)
    return -1;
  double *high_t = low_t + 2 * (mask + 1);
  low_t[0] = 1.0;
  low_t[1] = 0.0;
  for (int64_t i = 1; i <= mask; ++i)
    octant_root(i, n, ang, &low_t[2 * i], &low_t[2 * i + 1]);
  high_t[0] = 1.0;
  high_t[1] = 0.0;
  for (int64_t i = 1; i < high; ++i)
    octant_root(i * (mask + 1), n, ang, &high_t[2 * i], &high_t[2 * i + 1]);
  for (int64_t k = 0; k < n; ++k) {
    int mirrored = 2 * k > n;
    int64_t m = mirrored ? n - k : k;
    const double *a = &low_t[2 * (m & mask)], *b = &high_t[2 * (m >> shift)];
    double re = a[0] * b[0] - a[1] * b[1];
    double im = a[0] * b[1] + a[1] * b[0];
    out[2 * k] = re;
    out[2 * k + 1] = mirrored ? -im : im;
  }
  free(low_t);
  return 0;
}

/* The constants of the hand-written passes, as ducc0 spells them (long double
 * literals, rounded to the element type). */
#define HALF_SQRT2 0.707106781186547524400844362104849L
#define SQRT2 1.414213562373095048801688724209698L
#define TAUI 0.8660254037844386467637231707529362L
#define TR11 0.3090169943749474241022934171828191L
#define TI11 0.9510565162951535721164393333793821L
#define TR12 -0.8090169943749474241022934171828191L
#define TI12 0.5877852522924731291687059546390728L

/* cos, sin of 2 pi u / ip for the odd passes 3, 5, 7, 11 (fft_complex._COS_SIN). */
static const long double odd_cos_sin[12][5][2] = {
    [3] = {{-0.5L, 0.8660254037844386467637231707529362L}},
    [5] = {{0.3090169943749474241022934171828191L, 0.9510565162951535721164393333793821L},
           {-0.8090169943749474241022934171828191L, 0.5877852522924731291687059546390728L}},
    [7] = {{0.6234898018587335305250048840042398L, 0.7818314824680298087084445266740578L},
           {-0.2225209339563144042889025644967948L, 0.9749279121818236070181316829939312L},
           {-0.9009688679024191262361023195074451L, 0.433883739117558120475768332848359L}},
    [11] = {{0.8412535328311811688618116489193677L, 0.5406408174555975821076359543186917L},
            {0.4154150130018864255292741492296232L, 0.9096319953545183714117153830790285L},
            {-0.1423148382732851404437926686163697L, 0.9898214418809327323760920377767188L},
            {-0.6548607339452850640569250724662936L, 0.7557495743542582837740358439723444L},
            {-0.9594929736144973898903680570663277L, 0.2817325568414296977114179153466169L}},
};

static int64_t product(const int64_t *v, int from, int to) {
  int64_t p = 1;
  for (int i = from; i < to; ++i)
    p *= v[i];
  return p;
}

/* The order in which ducc0's c2c from one buffer into another runs the first `count`
 * axes of dense `dims` (fft.py's _ducc_c2c_order): outermost first, but the first axis
 * swapped with the first later one of unit stride (all later dims 1), which is the
 * innermost unless trailing dims are 1. The first axis run takes an inverse's scale. */
static void c2c_order(const int64_t *dims, int ndims, int count, int *order) {
  for (int i = 0; i < count; ++i)
    order[i] = i;
  for (int i = 1; i < count; ++i)
    if (product(dims, order[i] + 1, ndims) == 1) {
      order[i] = order[0];
      order[0] = i;
      break;
    }
}

static int32_t threads_for(int64_t lines, int64_t n, int32_t threads) {
  if (threads < 1 || lines < 2 || (double)lines * (double)n * 8 < THREADED_WORK)
    return 1;
  return threads;
}

#define MLXC_FFT_T float
#define S(name) name##_f32
#include "mlxc_fft.c"
#undef MLXC_FFT_T
#undef S

#define MLXC_FFT_T double
#define S(name) name##_f64
#include "mlxc_fft.c"
#undef MLXC_FFT_T
#undef S

/* Generated code calls only lengths it checked (mlxc-library-ffts), so a failure here
 * is memory running out: stop rather than return a result never written. */
static void checked(int rc, const char *name) {
  if (rc != 0) {
    fprintf(stderr, "mlxc: %s: out of memory (or a length the kernel does not cover)\n",
            name);
    abort();
  }
}

MLXC_EXPORT void mlxc_fft_c64(const void *in, void *out, int64_t batch, int64_t n0,
                              int64_t n1, int64_t n2, int32_t rank, int32_t kind,
                              int32_t threads) {
  checked(mlxc_fft_f32(in, out, batch, n0, n1, n2, rank, kind, threads), "mlxc_fft_c64");
}

MLXC_EXPORT void mlxc_fft_c128(const void *in, void *out, int64_t batch, int64_t n0,
                               int64_t n1, int64_t n2, int32_t rank, int32_t kind,
                               int32_t threads) {
  checked(mlxc_fft_f64(in, out, batch, n0, n1, n2, rank, kind, threads), "mlxc_fft_c128");
}

MLXC_EXPORT void mlxc_rfft_f32(const void *in, void *out, int64_t batch, int64_t n0,
                               int64_t n1, int64_t n2, int32_t rank, int32_t kind,
                               int32_t threads) {
  checked(mlxc_fft_f32(in, out, batch, n0, n1, n2, rank, kind, threads), "mlxc_rfft_f32");
}

MLXC_EXPORT void mlxc_rfft_f64(const void *in, void *out, int64_t batch, int64_t n0,
                               int64_t n1, int64_t n2, int32_t rank, int32_t kind,
                               int32_t threads) {
  checked(mlxc_fft_f64(in, out, batch, n0, n1, n2, rank, kind, threads), "mlxc_rfft_f64");
}

MLXC_EXPORT void mlxc_irfft_f32(const void *in, void *out, int64_t batch, int64_t n0,
                                int64_t n1, int64_t n2, int32_t rank, int32_t kind,
                                int32_t threads) {
  checked(mlxc_fft_f32(in, out, batch, n0, n1, n2, rank, kind, threads), "mlxc_irfft_f32");
}

MLXC_EXPORT void mlxc_irfft_f64(const void *in, void *out, int64_t batch, int64_t n0,
                                int64_t n1, int64_t n2, int32_t rank, int32_t kind,
                                int32_t threads) {
  checked(mlxc_fft_f64(in, out, batch, n0, n1, n2, rank, kind, threads), "mlxc_irfft_f64");
}

#else /* ---- the passes for one element type T ---- */

typedef MLXC_FFT_T S(real);
#define T S(real)
typedef struct {
  T r, i;
} S(cmplx);
#define CT S(cmplx)

static inline CT S(add)(CT a, CT b) { return (CT){a.r + b.r, a.i + b.i}; }
static inline CT S(sub)(CT a, CT b) { return (CT){a.r - b.r, a.i - b.i}; }

/* ducc0's special_mul: v * conj(w) forward, v * w backward. */
static inline CT S(twiddle)(CT v, CT w, int fwd) {
  if (fwd)
    return (CT){v.r * w.r + v.i * w.i, v.i * w.r - v.r * w.i};
  return (CT){v.r * w.r - v.i * w.i, v.r * w.i + v.i * w.r};
}

/* Multiplication by -i (forward) or +i: exact. */
static inline CT S(rot90)(CT a, int fwd) {
  return fwd ? (CT){a.i, -a.r} : (CT){-a.i, a.r};
}

/* The n roots of unity rounded to T (NULL when memory ran out). */
static CT *S(roots)(int64_t n) {
  double *d = malloc(sizeof(double) * 2 * (size_t)n);
  CT *r = malloc(sizeof(CT) * (size_t)n);
  if (!d || !r || unity_roots(n, d) != 0) {
    free(d);
    free(r);
    return NULL;
  }
  for (int64_t k = 0; k < n; ++k)
    r[k] = (CT){(T)d[2 * k], (T)d[2 * k + 1]};
  free(d);
  return r;
}

/* ---- complex transforms (fft_complex.py) ---- */

typedef struct {
  int64_t n;
  int nf;
  int64_t f[MAX_FACTORS];
  CT *roots;
} S(cplan);

static int S(cplan_make)(S(cplan) *p, int64_t n) {
  p->n = n;
  p->nf = n > 1 ? complex_factors(n, p->f) : 0;
  p->roots = S(roots)(n);
  return p->roots ? 0 : -1;
}

/* The butterfly of a radix-ip pass on c[0..ip) into o[0..ip); `cs` holds the generic
 * pass's roots (ip of them), `cosv`/`sinv` the odd passes' constants. */
static ALWAYS_INLINE void S(butterfly)(int64_t ip, const CT *c, CT *o, int fwd, const CT *cs,
                                       const T *cosv, const T *sinv, T hsqt2) {
  if (ip == 2) {
    o[0] = S(add)(c[0], c[1]);
    o[1] = S(sub)(c[0], c[1]);
  } else if (ip == 4) {
    CT t2 = S(add)(c[0], c[2]), t1 = S(sub)(c[0], c[2]);
    CT t3 = S(add)(c[1], c[3]), t4 = S(sub)(c[1], c[3]);
    t4 = S(rot90)(t4, fwd);
    o[0] = S(add)(t2, t3);
    o[1] = S(add)(t1, t4);
    o[2] = S(sub)(t2, t3);
    o[3] = S(sub)(t1, t4);
  } else if (ip == 8) {
    CT a1 = S(add)(c[1], c[5]), a5 = S(sub)(c[1], c[5]);
    CT a3 = S(add)(c[3], c[7]), a7 = S(sub)(c[3], c[7]);
    CT s13 = S(add)(a1, a3), d13 = S(sub)(a1, a3);
    a1 = s13;
    a3 = S(rot90)(d13, fwd);
    a7 = S(rot90)(a7, fwd);
    CT s57 = S(add)(a5, a7), d57 = S(sub)(a5, a7);
    if (fwd) { /* rot45, rot135 */
      a5 = (CT){hsqt2 * (s57.r + s57.i), hsqt2 * (s57.i - s57.r)};
      a7 = (CT){hsqt2 * (d57.i - d57.r), hsqt2 * (-d57.r - d57.i)};
    } else {
      a5 = (CT){hsqt2 * (s57.r - s57.i), hsqt2 * (s57.i + s57.r)};
      a7 = (CT){hsqt2 * (-d57.r - d57.i), hsqt2 * (d57.r - d57.i)};
    }
    CT a0 = S(add)(c[0], c[4]), a4 = S(sub)(c[0], c[4]);
    CT a2 = S(add)(c[2], c[6]), a6 = S(sub)(c[2], c[6]);
    CT s02 = S(add)(a0, a2), d02 = S(sub)(a0, a2);
    a0 = s02;
    a2 = d02;
    a6 = S(rot90)(a6, fwd);
    CT s46 = S(add)(a4, a6), d46 = S(sub)(a4, a6);
    a4 = s46;
    a6 = d46;
    o[0] = S(add)(a0, a1);
    o[1] = S(add)(a4, a5);
    o[2] = S(add)(a2, a3);
    o[3] = S(add)(a6, a7);
    o[4] = S(sub)(a0, a1);
    o[5] = S(sub)(a4, a5);
    o[6] = S(sub)(a2, a3);
    o[7] = S(sub)(a6, a7);
  } else if (ip == 3 || ip == 5 || ip == 7 || ip == 11) {
    int64_t h = (ip - 1) / 2;
    CT t0 = c[0], sums[5], diffs[5];
    for (int64_t j = 1; j <= h; ++j) {
      sums[j - 1] = S(add)(c[j], c[ip - j]);
      diffs[j - 1] = S(sub)(c[j], c[ip - j]);
    }
    CT first = t0;
    for (int64_t j = 0; j < h; ++j)
      first = S(add)(first, sums[j]);
    o[0] = first;
    for (int64_t u = 1; u <= h; ++u) {
      T x[5], y[5];
      for (int64_t j = 1; j <= h; ++j) {
        int64_t m = (u * j) % ip;
        x[j - 1] = cosv[(m < ip - m ? m : ip - m) - 1];
        y[j - 1] = m <= h ? sinv[m - 1] : -sinv[ip - m - 1];
      }
      T ca_r = t0.r, ca_i = t0.i;
      for (int64_t j = 0; j < h; ++j) {
        ca_r = ca_r + x[j] * sums[j].r;
        ca_i = ca_i + x[j] * sums[j].i;
      }
      T cb_i = y[0] * diffs[0].r;
      T cb_r = y[0] * diffs[0].i;
      for (int64_t j = 1; j < h; ++j) {
        cb_i = cb_i + y[j] * diffs[j].r;
        cb_r = cb_r + y[j] * diffs[j].i;
      }
      CT ca = {ca_r, ca_i}, cb = {-cb_r, cb_i};
      o[u] = S(add)(ca, cb);
      o[ip - u] = S(sub)(ca, cb);
    }
  } else { /* the generic odd pass */
    int64_t ipph = (ip + 1) / 2;
    CT ch[COMPLEX_PRIME_MAX];
    ch[0] = c[0];
    for (int64_t j = 1; j < ipph; ++j) {
      ch[j] = S(add)(c[j], c[ip - j]);
      ch[ip - j] = S(sub)(c[j], c[ip - j]);
    }
    CT tmp = ch[0];
    for (int64_t j = 1; j < ipph; ++j)
      tmp = S(add)(tmp, ch[j]);
    o[0] = tmp;
    for (int64_t l = 1; l < ipph; ++l) {
      int64_t lc = ip - l;
      CT wal = cs[l], wal2 = cs[2 * l];
      T lr = ch[0].r + wal.r * ch[1].r + wal2.r * ch[2].r;
      T li = ch[0].i + wal.r * ch[1].i + wal2.r * ch[2].i;
      T lcr = (-wal.i) * ch[ip - 1].i - wal2.i * ch[ip - 2].i;
      T lci = wal.i * ch[ip - 1].r + wal2.i * ch[ip - 2].r;
      int64_t iwal = 2 * l, j = 3, jc = ip - 3;
      for (; j < ipph - 1; j += 2, jc -= 2) {
        iwal += l;
        if (iwal > ip)
          iwal -= ip;
        CT w1 = cs[iwal];
        iwal += l;
        if (iwal > ip)
          iwal -= ip;
        CT w2 = cs[iwal];
        lr = lr + (ch[j].r * w1.r + ch[j + 1].r * w2.r);
        li = li + (ch[j].i * w1.r + ch[j + 1].i * w2.r);
        lcr = lcr - (ch[jc].i * w1.i + ch[jc - 1].i * w2.i);
        lci = lci + (ch[jc].r * w1.i + ch[jc - 1].r * w2.i);
      }
      for (; j < ipph; ++j, --jc) {
        iwal += l;
        if (iwal > ip)
          iwal -= ip;
        CT w1 = cs[iwal];
        lr = lr + ch[j].r * w1.r;
        li = li + ch[j].i * w1.r;
        lcr = lcr - ch[jc].i * w1.i;
        lci = lci + ch[jc].r * w1.i;
      }
      o[l] = (CT){lr, li};
      o[lc] = (CT){lcr, lci};
    }
    for (int64_t j = 1; j < ipph; ++j) {
      int64_t jc = ip - j;
      CT a = o[j], b = o[jc];
      o[j] = S(add)(a, b);
      o[jc] = S(sub)(a, b);
    }
  }
}

/* One radix-ip pass: reads cc[a + ido*(b + ip*c)], writes ch[a + ido*(b + l1*c)].
 * Inlined with constant ip and fwd (S(cpass) below), so the butterfly's dispatch and
 * loops over ip fold away. */
static ALWAYS_INLINE void S(cpass_body)(const S(cplan) *p, int64_t ip, int64_t l1,
                                        int64_t ido, const CT *cc, CT *ch, int fwd) {
  CT cs[COMPLEX_PRIME_MAX], c[COMPLEX_PRIME_MAX], o[COMPLEX_PRIME_MAX];
  T cosv[5], sinv[5];
  T hsqt2 = (T)HALF_SQRT2;
  if (ip == 3 || ip == 5 || ip == 7 || ip == 11) {
    for (int64_t j = 0; j < (ip - 1) / 2; ++j) {
      cosv[j] = (T)odd_cos_sin[ip][j][0];
      sinv[j] = (T)(fwd ? -1 : 1) * (T)odd_cos_sin[ip][j][1];
    }
  } else if (ip != 2 && ip != 4 && ip != 8) {
    for (int64_t j = 0; j < ip; ++j) {
      CT r = p->roots[l1 * ido * j];
      cs[j] = fwd ? (CT){r.r, -r.i} : r;
    }
  }
  for (int64_t k = 0; k < l1; ++k)
    for (int64_t i = 0; i < ido; ++i) {
      for (int64_t m = 0; m < ip; ++m)
        c[m] = cc[i + ido * (m + ip * k)];
      S(butterfly)(ip, c, o, fwd, cs, cosv, sinv, hsqt2);
      ch[i + ido * k] = o[0];
      if (i == 0)
        for (int64_t m = 1; m < ip; ++m)
          ch[ido * (k + l1 * m)] = o[m];
      else
        for (int64_t m = 1; m < ip; ++m)
          ch[i + ido * (k + l1 * m)] = S(twiddle)(o[m], p->roots[m * l1 * i], fwd);
    }
}

static void S(cpass)(const S(cplan) *p, int64_t ip, int64_t l1, int64_t ido, const CT *cc,
                     CT *ch, int fwd) {
#define CPASS_CASE(P)                                                                     \
  case P:                                                                                 \
    if (fwd)                                                                              \
      S(cpass_body)(p, P, l1, ido, cc, ch, 1);                                            \
    else                                                                                  \
      S(cpass_body)(p, P, l1, ido, cc, ch, 0);                                            \
    break;
  switch (ip) {
    CPASS_CASE(2)
    CPASS_CASE(3)
    CPASS_CASE(4)
    CPASS_CASE(5)
    CPASS_CASE(7)
    CPASS_CASE(8)
    CPASS_CASE(11)
  default:
    S(cpass_body)(p, ip, l1, ido, cc, ch, fwd);
  }
#undef CPASS_CASE
}

/* The transform of a[0..n) (b is scratch of n); returns the buffer holding it. */
static CT *S(c2c_line)(const S(cplan) *p, CT *a, CT *b, int fwd, T fct) {
  int64_t l1 = 1;
  for (int k = 0; k < p->nf; ++k) {
    int64_t ip = p->f[k], ido = p->n / (l1 * ip);
    S(cpass)(p, ip, l1, ido, a, b, fwd);
    CT *t = a;
    a = b;
    b = t;
    l1 *= ip;
  }
  if (fct != (T)1)
    for (int64_t k = 0; k < p->n; ++k)
      a[k] = (CT){a[k].r * fct, a[k].i * fct};
  return a;
}

/* ---- real transforms (fft_real.py) ---- */

typedef struct {
  int64_t l1, ido, ip;
  T *wa; /* (ip - 1) * (ido - 1): re, im of root j * l1 * i, as ducc0 lays them out */
} S(rpass);

typedef struct {
  int64_t n;
  int np;
  S(rpass) passes[MAX_FACTORS];
  CT *roots;
  T *wa;
} S(rplan);

static int S(rplan_make)(S(rplan) *p, int64_t n) {
  int64_t f[MAX_FACTORS];
  p->n = n;
  p->np = n > 1 ? real_factors(n, f) : 0;
  p->wa = NULL;
  p->roots = S(roots)(n);
  if (!p->roots)
    return -1;
  int64_t total = 1, l1 = 1;
  for (int k = 0; k < p->np; ++k) {
    total += (f[k] - 1) * (n / (f[k] * l1) - 1);
    l1 *= f[k];
  }
  p->wa = malloc(sizeof(T) * (size_t)total);
  if (!p->wa)
    return -1;
  T *wa = p->wa;
  l1 = 1;
  for (int k = 0; k < p->np; ++k) {
    int64_t ip = f[k], ido = n / (ip * l1);
    p->passes[k] = (S(rpass)){l1, ido, ip, wa};
    for (int64_t j = 1; j < ip; ++j)
      for (int64_t i = 1; i <= (ido - 1) / 2; ++i) {
        CT r = p->roots[j * l1 * i];
        wa[(j - 1) * (ido - 1) + 2 * i - 2] = r.r;
        wa[(j - 1) * (ido - 1) + 2 * i - 1] = r.i;
      }
    wa += (ip - 1) * (ido - 1);
    l1 *= ip;
  }
  return 0;
}

static void S(rplan_free)(S(rplan) *p) {
  free(p->roots);
  free(p->wa);
}

#define PM(a, b, c, d)                                                                    \
  do {                                                                                    \
    T pm_c_ = (c), pm_d_ = (d);                                                           \
    a = pm_c_ + pm_d_;                                                                    \
    b = pm_c_ - pm_d_;                                                                    \
  } while (0)
/* (a + ib) = conj(c + id) * (e + if) */
#define MULPM(a, b, c, d, e, f)                                                           \
  do {                                                                                    \
    T mp_c_ = (c), mp_d_ = (d), mp_e_ = (e), mp_f_ = (f);                                 \
    a = mp_c_ * mp_e_ + mp_d_ * mp_f_;                                                    \
    b = mp_c_ * mp_f_ - mp_d_ * mp_e_;                                                    \
  } while (0)
/* (x, y) -> (x + y, i (y - x)) */
#define REARRANGE(rx, ix, ry, iy)                                                         \
  do {                                                                                    \
    T ra_rx_ = rx, ra_ix_ = ix, ra_ry_ = ry, ra_iy_ = iy;                                 \
    rx = ra_rx_ + ra_ry_;                                                                 \
    ix = ra_ix_ + ra_iy_;                                                                 \
    ry = ra_ix_ - ra_iy_;                                                                 \
    iy = ra_ry_ - ra_rx_;                                                                 \
  } while (0)

/* Forward passes read CC(a, b, c) = cc[a + ido*(b + l1*c)] and write
 * CH(a, b, c) = ch[a + ido*(b + ip*c)]; backward passes the other way round. */
#define WA(x, i) wa[(i) + (x) * (ido - 1)]
#define FCC(a, b, c) cc[(a) + ido * ((b) + l1 * (c))]
#define FCH(a, b, c) ch[(a) + ido * ((b) + IP * (c))]
#define BCC(a, b, c) cc[(a) + ido * ((b) + IP * (c))]
#define BCH(a, b, c) ch[(a) + ido * ((b) + l1 * (c))]

#define IP 2
static void S(radf2)(int64_t l1, int64_t ido, const T *wa, const T *cc, T *ch) {
  for (int64_t k = 0; k < l1; ++k)
    PM(FCH(0, 0, k), FCH(ido - 1, 1, k), FCC(0, k, 0), FCC(0, k, 1));
  if (ido % 2 == 0)
    for (int64_t k = 0; k < l1; ++k) {
      FCH(0, 1, k) = -FCC(ido - 1, k, 1);
      FCH(ido - 1, 0, k) = FCC(ido - 1, k, 0);
    }
  if (ido <= 2)
    return;
  for (int64_t k = 0; k < l1; ++k)
    for (int64_t i = 2; i < ido; i += 2) {
      int64_t ic = ido - i;
      T tr2, ti2;
      MULPM(tr2, ti2, WA(0, i - 2), WA(0, i - 1), FCC(i - 1, k, 1), FCC(i, k, 1));
      PM(FCH(i - 1, 0, k), FCH(ic - 1, 1, k), FCC(i - 1, k, 0), tr2);
      PM(FCH(i, 0, k), FCH(ic, 1, k), ti2, FCC(i, k, 0));
    }
}

static void S(radb2)(int64_t l1, int64_t ido, const T *wa, const T *cc, T *ch) {
  for (int64_t k = 0; k < l1; ++k)
    PM(BCH(0, k, 0), BCH(0, k, 1), BCC(0, 0, k), BCC(ido - 1, 1, k));
  if (ido % 2 == 0)
    for (int64_t k = 0; k < l1; ++k) {
      BCH(ido - 1, k, 0) = (T)2 * BCC(ido - 1, 0, k);
      BCH(ido - 1, k, 1) = (T)-2 * BCC(0, 1, k);
    }
  if (ido <= 2)
    return;
  for (int64_t k = 0; k < l1; ++k)
    for (int64_t i = 2; i < ido; i += 2) {
      int64_t ic = ido - i;
      T tr2, ti2;
      PM(BCH(i - 1, k, 0), tr2, BCC(i - 1, 0, k), BCC(ic - 1, 1, k));
      PM(ti2, BCH(i, k, 0), BCC(i, 0, k), BCC(ic, 1, k));
      MULPM(BCH(i, k, 1), BCH(i - 1, k, 1), WA(0, i - 2), WA(0, i - 1), ti2, tr2);
    }
}
#undef IP

#define IP 3
static void S(radf3)(int64_t l1, int64_t ido, const T *wa, const T *cc, T *ch) {
  const T taur = (T)-0.5, taui = (T)TAUI;
  for (int64_t k = 0; k < l1; ++k) {
    T cr2 = FCC(0, k, 1) + FCC(0, k, 2);
    FCH(0, 0, k) = FCC(0, k, 0) + cr2;
    FCH(0, 2, k) = taui * (FCC(0, k, 2) - FCC(0, k, 1));
    FCH(ido - 1, 1, k) = FCC(0, k, 0) + taur * cr2;
  }
  if (ido == 1)
    return;
  for (int64_t k = 0; k < l1; ++k)
    for (int64_t i = 2; i < ido; i += 2) {
      int64_t ic = ido - i;
      T dr2, di2, dr3, di3;
      MULPM(dr2, di2, WA(0, i - 2), WA(0, i - 1), FCC(i - 1, k, 1), FCC(i, k, 1));
      MULPM(dr3, di3, WA(1, i - 2), WA(1, i - 1), FCC(i - 1, k, 2), FCC(i, k, 2));
      REARRANGE(dr2, di2, dr3, di3);
      FCH(i - 1, 0, k) = FCC(i - 1, k, 0) + dr2;
      FCH(i, 0, k) = FCC(i, k, 0) + di2;
      T tr2 = FCC(i - 1, k, 0) + taur * dr2;
      T ti2 = FCC(i, k, 0) + taur * di2;
      T tr3 = taui * dr3;
      T ti3 = taui * di3;
      PM(FCH(i - 1, 2, k), FCH(ic - 1, 1, k), tr2, tr3);
      PM(FCH(i, 2, k), FCH(ic, 1, k), ti3, ti2);
    }
}

static void S(radb3)(int64_t l1, int64_t ido, const T *wa, const T *cc, T *ch) {
  const T taur = (T)-0.5, taui = (T)TAUI;
  for (int64_t k = 0; k < l1; ++k) {
    T tr2 = (T)2 * BCC(ido - 1, 1, k);
    T cr2 = BCC(0, 0, k) + taur * tr2;
    BCH(0, k, 0) = BCC(0, 0, k) + tr2;
    T ci3 = (T)2 * taui * BCC(0, 2, k);
    PM(BCH(0, k, 2), BCH(0, k, 1), cr2, ci3);
  }
  if (ido == 1)
    return;
  for (int64_t k = 0; k < l1; ++k)
    for (int64_t i = 2; i < ido; i += 2) {
      int64_t ic = ido - i;
      T tr2 = BCC(i - 1, 2, k) + BCC(ic - 1, 1, k);
      T ti2 = BCC(i, 2, k) - BCC(ic, 1, k);
      T cr2 = BCC(i - 1, 0, k) + taur * tr2;
      T ci2 = BCC(i, 0, k) + taur * ti2;
      BCH(i - 1, k, 0) = BCC(i - 1, 0, k) + tr2;
      BCH(i, k, 0) = BCC(i, 0, k) + ti2;
      T cr3 = taui * (BCC(i - 1, 2, k) - BCC(ic - 1, 1, k));
      T ci3 = taui * (BCC(i, 2, k) + BCC(ic, 1, k));
      T dr2, dr3, di2, di3;
      PM(dr3, dr2, cr2, ci3);
      PM(di2, di3, ci2, cr3);
      MULPM(BCH(i, k, 1), BCH(i - 1, k, 1), WA(0, i - 2), WA(0, i - 1), di2, dr2);
      MULPM(BCH(i, k, 2), BCH(i - 1, k, 2), WA(1, i - 2), WA(1, i - 1), di3, dr3);
    }
}
#undef IP

#define IP 4
static void S(radf4)(int64_t l1, int64_t ido, const T *wa, const T *cc, T *ch) {
  const T hsqt2 = (T)HALF_SQRT2;
  for (int64_t k = 0; k < l1; ++k) {
    T tr1, tr2;
    PM(tr1, FCH(0, 2, k), FCC(0, k, 3), FCC(0, k, 1));
    PM(tr2, FCH(ido - 1, 1, k), FCC(0, k, 0), FCC(0, k, 2));
    PM(FCH(0, 0, k), FCH(ido - 1, 3, k), tr2, tr1);
  }
  if (ido % 2 == 0)
    for (int64_t k = 0; k < l1; ++k) {
      T ti1 = -hsqt2 * (FCC(ido - 1, k, 1) + FCC(ido - 1, k, 3));
      T tr1 = hsqt2 * (FCC(ido - 1, k, 1) - FCC(ido - 1, k, 3));
      PM(FCH(ido - 1, 0, k), FCH(ido - 1, 2, k), FCC(ido - 1, k, 0), tr1);
      PM(FCH(0, 3, k), FCH(0, 1, k), ti1, FCC(ido - 1, k, 2));
    }
  if (ido <= 2)
    return;
  for (int64_t k = 0; k < l1; ++k)
    for (int64_t i = 2; i < ido; i += 2) {
      int64_t ic = ido - i;
      T cr2, ci2, cr3, ci3, cr4, ci4, tr1, tr2, tr3, tr4, ti1, ti2, ti3, ti4;
      MULPM(cr2, ci2, WA(0, i - 2), WA(0, i - 1), FCC(i - 1, k, 1), FCC(i, k, 1));
      MULPM(cr3, ci3, WA(1, i - 2), WA(1, i - 1), FCC(i - 1, k, 2), FCC(i, k, 2));
      MULPM(cr4, ci4, WA(2, i - 2), WA(2, i - 1), FCC(i - 1, k, 3), FCC(i, k, 3));
      PM(tr1, tr4, cr4, cr2);
      PM(ti1, ti4, ci2, ci4);
      PM(tr2, tr3, FCC(i - 1, k, 0), cr3);
      PM(ti2, ti3, FCC(i, k, 0), ci3);
      PM(FCH(i - 1, 0, k), FCH(ic - 1, 3, k), tr2, tr1);
      PM(FCH(i, 0, k), FCH(ic, 3, k), ti1, ti2);
      PM(FCH(i - 1, 2, k), FCH(ic - 1, 1, k), tr3, ti4);
      PM(FCH(i, 2, k), FCH(ic, 1, k), tr4, ti3);
    }
}

static void S(radb4)(int64_t l1, int64_t ido, const T *wa, const T *cc, T *ch) {
  const T sqrt2 = (T)SQRT2;
  for (int64_t k = 0; k < l1; ++k) {
    T tr1, tr2;
    PM(tr2, tr1, BCC(0, 0, k), BCC(ido - 1, 3, k));
    T tr3 = (T)2 * BCC(ido - 1, 1, k);
    T tr4 = (T)2 * BCC(0, 2, k);
    PM(BCH(0, k, 0), BCH(0, k, 2), tr2, tr3);
    PM(BCH(0, k, 3), BCH(0, k, 1), tr1, tr4);
  }
  if (ido % 2 == 0)
    for (int64_t k = 0; k < l1; ++k) {
      T ti1, ti2, tr1, tr2;
      PM(ti1, ti2, BCC(0, 3, k), BCC(0, 1, k));
      PM(tr2, tr1, BCC(ido - 1, 0, k), BCC(ido - 1, 2, k));
      BCH(ido - 1, k, 0) = tr2 + tr2;
      BCH(ido - 1, k, 1) = sqrt2 * (tr1 - ti1);
      BCH(ido - 1, k, 2) = ti2 + ti2;
      BCH(ido - 1, k, 3) = -sqrt2 * (tr1 + ti1);
    }
  if (ido <= 2)
    return;
  for (int64_t k = 0; k < l1; ++k)
    for (int64_t i = 2; i < ido; i += 2) {
      int64_t ic = ido - i;
      T tr1, tr2, tr3, tr4, ti1, ti2, ti3, ti4, cr2, cr3, cr4, ci2, ci3, ci4;
      PM(tr2, tr1, BCC(i - 1, 0, k), BCC(ic - 1, 3, k));
      PM(ti1, ti2, BCC(i, 0, k), BCC(ic, 3, k));
      PM(tr4, ti3, BCC(i, 2, k), BCC(ic, 1, k));
      PM(tr3, ti4, BCC(i - 1, 2, k), BCC(ic - 1, 1, k));
      PM(BCH(i - 1, k, 0), cr3, tr2, tr3);
      PM(BCH(i, k, 0), ci3, ti2, ti3);
      PM(cr4, cr2, tr1, tr4);
      PM(ci2, ci4, ti1, ti4);
      MULPM(BCH(i, k, 1), BCH(i - 1, k, 1), WA(0, i - 2), WA(0, i - 1), ci2, cr2);
      MULPM(BCH(i, k, 2), BCH(i - 1, k, 2), WA(1, i - 2), WA(1, i - 1), ci3, cr3);
      MULPM(BCH(i, k, 3), BCH(i - 1, k, 3), WA(2, i - 2), WA(2, i - 1), ci4, cr4);
    }
}
#undef IP

#define IP 5
static void S(radf5)(int64_t l1, int64_t ido, const T *wa, const T *cc, T *ch) {
  const T tr11 = (T)TR11, ti11 = (T)TI11, tr12 = (T)TR12, ti12 = (T)TI12;
  for (int64_t k = 0; k < l1; ++k) {
    T cr2, ci5, cr3, ci4;
    PM(cr2, ci5, FCC(0, k, 4), FCC(0, k, 1));
    PM(cr3, ci4, FCC(0, k, 3), FCC(0, k, 2));
    FCH(0, 0, k) = FCC(0, k, 0) + cr2 + cr3;
    FCH(ido - 1, 1, k) = FCC(0, k, 0) + tr11 * cr2 + tr12 * cr3;
    FCH(0, 2, k) = ti11 * ci5 + ti12 * ci4;
    FCH(ido - 1, 3, k) = FCC(0, k, 0) + tr12 * cr2 + tr11 * cr3;
    FCH(0, 4, k) = ti12 * ci5 - ti11 * ci4;
  }
  if (ido == 1)
    return;
  for (int64_t k = 0; k < l1; ++k)
    for (int64_t i = 2; i < ido; i += 2) {
      int64_t ic = ido - i;
      T dr2, di2, dr3, di3, dr4, di4, dr5, di5;
      MULPM(dr2, di2, WA(0, i - 2), WA(0, i - 1), FCC(i - 1, k, 1), FCC(i, k, 1));
      MULPM(dr3, di3, WA(1, i - 2), WA(1, i - 1), FCC(i - 1, k, 2), FCC(i, k, 2));
      MULPM(dr4, di4, WA(2, i - 2), WA(2, i - 1), FCC(i - 1, k, 3), FCC(i, k, 3));
      MULPM(dr5, di5, WA(3, i - 2), WA(3, i - 1), FCC(i - 1, k, 4), FCC(i, k, 4));
      REARRANGE(dr2, di2, dr5, di5);
      REARRANGE(dr3, di3, dr4, di4);
      FCH(i - 1, 0, k) = FCC(i - 1, k, 0) + dr2 + dr3;
      FCH(i, 0, k) = FCC(i, k, 0) + di2 + di3;
      T tr2 = FCC(i - 1, k, 0) + tr11 * dr2 + tr12 * dr3;
      T ti2 = FCC(i, k, 0) + tr11 * di2 + tr12 * di3;
      T tr3 = FCC(i - 1, k, 0) + tr12 * dr2 + tr11 * dr3;
      T ti3 = FCC(i, k, 0) + tr12 * di2 + tr11 * di3;
      T tr5 = ti11 * dr5 + ti12 * dr4;
      T ti5 = ti11 * di5 + ti12 * di4;
      T tr4 = ti12 * dr5 - ti11 * dr4;
      T ti4 = ti12 * di5 - ti11 * di4;
      PM(FCH(i - 1, 2, k), FCH(ic - 1, 1, k), tr2, tr5);
      PM(FCH(i, 2, k), FCH(ic, 1, k), ti5, ti2);
      PM(FCH(i - 1, 4, k), FCH(ic - 1, 3, k), tr3, tr4);
      PM(FCH(i, 4, k), FCH(ic, 3, k), ti4, ti3);
    }
}

static void S(radb5)(int64_t l1, int64_t ido, const T *wa, const T *cc, T *ch) {
  const T tr11 = (T)TR11, ti11 = (T)TI11, tr12 = (T)TR12, ti12 = (T)TI12;
  for (int64_t k = 0; k < l1; ++k) {
    T ti5 = BCC(0, 2, k) + BCC(0, 2, k);
    T ti4 = BCC(0, 4, k) + BCC(0, 4, k);
    T tr2 = BCC(ido - 1, 1, k) + BCC(ido - 1, 1, k);
    T tr3 = BCC(ido - 1, 3, k) + BCC(ido - 1, 3, k);
    BCH(0, k, 0) = BCC(0, 0, k) + tr2 + tr3;
    T cr2 = BCC(0, 0, k) + tr11 * tr2 + tr12 * tr3;
    T cr3 = BCC(0, 0, k) + tr12 * tr2 + tr11 * tr3;
    T ci5, ci4;
    MULPM(ci5, ci4, ti5, ti4, ti11, ti12);
    PM(BCH(0, k, 4), BCH(0, k, 1), cr2, ci5);
    PM(BCH(0, k, 3), BCH(0, k, 2), cr3, ci4);
  }
  if (ido == 1)
    return;
  for (int64_t k = 0; k < l1; ++k)
    for (int64_t i = 2; i < ido; i += 2) {
      int64_t ic = ido - i;
      T tr2, tr3, tr4, tr5, ti2, ti3, ti4, ti5;
      PM(tr2, tr5, BCC(i - 1, 2, k), BCC(ic - 1, 1, k));
      PM(ti5, ti2, BCC(i, 2, k), BCC(ic, 1, k));
      PM(tr3, tr4, BCC(i - 1, 4, k), BCC(ic - 1, 3, k));
      PM(ti4, ti3, BCC(i, 4, k), BCC(ic, 3, k));
      BCH(i - 1, k, 0) = BCC(i - 1, 0, k) + tr2 + tr3;
      BCH(i, k, 0) = BCC(i, 0, k) + ti2 + ti3;
      T cr2 = BCC(i - 1, 0, k) + tr11 * tr2 + tr12 * tr3;
      T ci2 = BCC(i, 0, k) + tr11 * ti2 + tr12 * ti3;
      T cr3 = BCC(i - 1, 0, k) + tr12 * tr2 + tr11 * tr3;
      T ci3 = BCC(i, 0, k) + tr12 * ti2 + tr11 * ti3;
      T cr4, cr5, ci4, ci5, dr2, dr3, dr4, dr5, di2, di3, di4, di5;
      MULPM(cr5, cr4, tr5, tr4, ti11, ti12);
      MULPM(ci5, ci4, ti5, ti4, ti11, ti12);
      PM(dr4, dr3, cr3, ci4);
      PM(di3, di4, ci3, cr4);
      PM(dr5, dr2, cr2, ci5);
      PM(di2, di5, ci2, cr5);
      MULPM(BCH(i, k, 1), BCH(i - 1, k, 1), WA(0, i - 2), WA(0, i - 1), di2, dr2);
      MULPM(BCH(i, k, 2), BCH(i - 1, k, 2), WA(1, i - 2), WA(1, i - 1), di3, dr3);
      MULPM(BCH(i, k, 3), BCH(i - 1, k, 3), WA(2, i - 2), WA(2, i - 1), di4, dr4);
      MULPM(BCH(i, k, 4), BCH(i - 1, k, 4), WA(3, i - 2), WA(3, i - 1), di5, dr5);
    }
}
#undef IP

/* csarr[2m], csarr[2m+1] = re, im of exp(2 pi i m / ip), mirrored for m > ip/2. */
static void S(cos_sin_table)(const CT *roots, int64_t l1, int64_t ido, int64_t ip, T *cs) {
  cs[0] = (T)1;
  cs[1] = (T)0;
  for (int64_t i = 2, ic = 2 * ip - 2; i <= ic; i += 2, ic -= 2) {
    CT r = roots[(i / 2) * l1 * ido];
    cs[i] = r.r;
    cs[i + 1] = r.i;
    cs[ic] = r.r;
    cs[ic + 1] = -r.i;
  }
}

/* dst[l] and dst[ip-l] += the rest of the sums over j, in ducc0's groups of four,
 * two and one terms; `wrap_at_ip` is radfg's iang >= ip (radbg's is iang > ip). */
static void S(accumulate)(const T *cs, T *dst, const T *src, int64_t l, int64_t ip,
                          int64_t ipph, int64_t idl1, int wrap_at_ip) {
  int64_t lc = ip - l, iang = 2 * l, j = 3, jc = ip - 3;
  static const int groups[3] = {4, 2, 1};
  for (int g = 0; g < 3; ++g) {
    int group = groups[g];
    while (j < ipph - (group - 1)) {
      T ar[4], ai[4];
      for (int m = 0; m < group; ++m) {
        iang += l;
        if (wrap_at_ip ? iang >= ip : iang > ip)
          iang -= ip;
        ar[m] = cs[2 * iang];
        ai[m] = cs[2 * iang + 1];
      }
      for (int64_t ik = 0; ik < idl1; ++ik) {
        T sr = ar[0] * src[ik + idl1 * j];
        T si = ai[0] * src[ik + idl1 * jc];
        for (int m = 1; m < group; ++m) {
          sr = sr + ar[m] * src[ik + idl1 * (j + m)];
          si = si + ai[m] * src[ik + idl1 * (jc - m)];
        }
        dst[ik + idl1 * l] = dst[ik + idl1 * l] + sr;
        dst[ik + idl1 * lc] = dst[ik + idl1 * lc] + si;
      }
      j += group;
      jc -= group;
    }
  }
}

/* The generic forward pass: works in place on cc (ch is scratch); returns cc. */
static T *S(radfg)(const CT *roots, int64_t l1, int64_t ido, int64_t ip, const T *wa,
                   T *cc, T *ch) {
  T cs[2 * REAL_PRIME_MAX];
  S(cos_sin_table)(roots, l1, ido, ip, cs);
  int64_t ipph = (ip + 1) / 2, idl1 = ido * l1;
#define C1(a, b, c) cc[(a) + ido * ((b) + l1 * (c))]
#define C2(a, b) cc[(a) + idl1 * (b)]
#define GCC_(a, b, c) cc[(a) + ido * ((b) + ip * (c))]
#define GCH(a, b, c) ch[(a) + ido * ((b) + l1 * (c))]
  if (ido > 1)
    for (int64_t j = 1; j < ipph; ++j) {
      int64_t jc = ip - j, is1 = (j - 1) * (ido - 1), is2 = (jc - 1) * (ido - 1);
      for (int64_t k = 0; k < l1; ++k) {
        int64_t idij = is1, idij2 = is2;
        for (int64_t i = 1; i < ido - 1; i += 2, idij += 2, idij2 += 2) {
          T t1 = C1(i, k, j), t2 = C1(i + 1, k, j);
          T t3 = C1(i, k, jc), t4 = C1(i + 1, k, jc);
          T x1 = wa[idij] * t1 + wa[idij + 1] * t2;
          T x2 = wa[idij] * t2 - wa[idij + 1] * t1;
          T x3 = wa[idij2] * t3 + wa[idij2 + 1] * t4;
          T x4 = wa[idij2] * t4 - wa[idij2 + 1] * t3;
          PM(C1(i, k, j), C1(i + 1, k, jc), x3, x1);
          PM(C1(i + 1, k, j), C1(i, k, jc), x2, x4);
        }
      }
    }
  for (int64_t j = 1; j < ipph; ++j) {
    int64_t jc = ip - j;
    for (int64_t k = 0; k < l1; ++k) {
      T a = C1(0, k, jc), b = C1(0, k, j);
      C1(0, k, jc) = a - b;
      C1(0, k, j) = a + b;
    }
  }
  for (int64_t l = 1; l < ipph; ++l) {
    int64_t lc = ip - l;
    for (int64_t ik = 0; ik < idl1; ++ik) {
      ch[ik + idl1 * l] = C2(ik, 0) + cs[2 * l] * C2(ik, 1) + cs[4 * l] * C2(ik, 2);
      ch[ik + idl1 * lc] = cs[2 * l + 1] * C2(ik, ip - 1) + cs[4 * l + 1] * C2(ik, ip - 2);
    }
    S(accumulate)(cs, ch, cc, l, ip, ipph, idl1, 1);
  }
  for (int64_t ik = 0; ik < idl1; ++ik)
    ch[ik] = C2(ik, 0);
  for (int64_t j = 1; j < ipph; ++j)
    for (int64_t ik = 0; ik < idl1; ++ik)
      ch[ik] = ch[ik] + C2(ik, j);
  for (int64_t k = 0; k < l1; ++k)
    for (int64_t i = 0; i < ido; ++i)
      GCC_(i, 0, k) = GCH(i, k, 0);
  for (int64_t j = 1; j < ipph; ++j) {
    int64_t jc = ip - j, j2 = 2 * j - 1;
    for (int64_t k = 0; k < l1; ++k) {
      GCC_(ido - 1, j2, k) = GCH(0, k, j);
      GCC_(0, j2 + 1, k) = GCH(0, k, jc);
    }
  }
  if (ido == 1)
    return cc;
  for (int64_t j = 1; j < ipph; ++j) {
    int64_t jc = ip - j, j2 = 2 * j - 1;
    for (int64_t k = 0; k < l1; ++k)
      for (int64_t i = 1; i < ido - 1; i += 2) {
        int64_t ic = ido - i - 2;
        GCC_(i, j2 + 1, k) = GCH(i, k, j) + GCH(i, k, jc);
        GCC_(ic, j2, k) = GCH(i, k, j) - GCH(i, k, jc);
        GCC_(i + 1, j2 + 1, k) = GCH(i + 1, k, j) + GCH(i + 1, k, jc);
        GCC_(ic + 1, j2, k) = GCH(i + 1, k, jc) - GCH(i + 1, k, j);
      }
  }
  return cc;
}

/* The generic backward pass: uses cc as scratch; returns ch. */
static T *S(radbg)(const CT *roots, int64_t l1, int64_t ido, int64_t ip, const T *wa,
                   T *cc, T *ch) {
  T cs[2 * REAL_PRIME_MAX];
  S(cos_sin_table)(roots, l1, ido, ip, cs);
  int64_t ipph = (ip + 1) / 2, idl1 = ido * l1;
#define CH2(a, b) ch[(a) + idl1 * (b)]
  for (int64_t k = 0; k < l1; ++k)
    for (int64_t i = 0; i < ido; ++i)
      GCH(i, k, 0) = GCC_(i, 0, k);
  for (int64_t j = 1; j < ipph; ++j) {
    int64_t jc = ip - j, j2 = 2 * j - 1;
    for (int64_t k = 0; k < l1; ++k) {
      GCH(0, k, j) = (T)2 * GCC_(ido - 1, j2, k);
      GCH(0, k, jc) = (T)2 * GCC_(0, j2 + 1, k);
    }
  }
  if (ido != 1)
    for (int64_t j = 1; j < ipph; ++j) {
      int64_t jc = ip - j, j2 = 2 * j - 1;
      for (int64_t k = 0; k < l1; ++k)
        for (int64_t i = 1; i < ido - 1; i += 2) {
          int64_t ic = ido - i - 2;
          GCH(i, k, j) = GCC_(i, j2 + 1, k) + GCC_(ic, j2, k);
          GCH(i, k, jc) = GCC_(i, j2 + 1, k) - GCC_(ic, j2, k);
          GCH(i + 1, k, j) = GCC_(i + 1, j2 + 1, k) - GCC_(ic + 1, j2, k);
          GCH(i + 1, k, jc) = GCC_(i + 1, j2 + 1, k) + GCC_(ic + 1, j2, k);
        }
    }
  for (int64_t l = 1; l < ipph; ++l) {
    int64_t lc = ip - l;
    for (int64_t ik = 0; ik < idl1; ++ik) {
      cc[ik + idl1 * l] = CH2(ik, 0) + cs[2 * l] * CH2(ik, 1) + cs[4 * l] * CH2(ik, 2);
      cc[ik + idl1 * lc] = cs[2 * l + 1] * CH2(ik, ip - 1) + cs[4 * l + 1] * CH2(ik, ip - 2);
    }
    S(accumulate)(cs, cc, ch, l, ip, ipph, idl1, 0);
  }
  for (int64_t j = 1; j < ipph; ++j)
    for (int64_t ik = 0; ik < idl1; ++ik)
      ch[ik] = ch[ik] + CH2(ik, j);
  for (int64_t j = 1; j < ipph; ++j) {
    int64_t jc = ip - j;
    for (int64_t k = 0; k < l1; ++k)
      PM(GCH(0, k, jc), GCH(0, k, j), C1(0, k, j), C1(0, k, jc));
  }
  if (ido == 1)
    return ch;
  for (int64_t j = 1; j < ipph; ++j) {
    int64_t jc = ip - j;
    for (int64_t k = 0; k < l1; ++k)
      for (int64_t i = 1; i < ido - 1; i += 2) {
        GCH(i, k, j) = C1(i, k, j) - C1(i + 1, k, jc);
        GCH(i, k, jc) = C1(i, k, j) + C1(i + 1, k, jc);
        GCH(i + 1, k, j) = C1(i + 1, k, j) + C1(i, k, jc);
        GCH(i + 1, k, jc) = C1(i + 1, k, j) - C1(i, k, jc);
      }
  }
  for (int64_t j = 1; j < ip; ++j)
    for (int64_t k = 0; k < l1; ++k) {
      int64_t idij = (j - 1) * (ido - 1);
      for (int64_t i = 1; i < ido - 1; i += 2, idij += 2) {
        T t1 = GCH(i, k, j), t2 = GCH(i + 1, k, j);
        GCH(i, k, j) = wa[idij] * t1 - wa[idij + 1] * t2;
        GCH(i + 1, k, j) = wa[idij] * t2 + wa[idij + 1] * t1;
      }
    }
  return ch;
#undef CH2
#undef C1
#undef C2
#undef GCC_
#undef GCH
}

/* Forward real transform of a[0..n) (b is scratch): the halfcomplex result, times fct. */
static T *S(r2c_line)(const S(rplan) *p, T *a, T *b, T fct) {
  for (int k = p->np - 1; k >= 0; --k) {
    const S(rpass) *q = &p->passes[k];
    T *res;
    switch (q->ip) {
    case 2: S(radf2)(q->l1, q->ido, q->wa, a, b); res = b; break;
    case 3: S(radf3)(q->l1, q->ido, q->wa, a, b); res = b; break;
    case 4: S(radf4)(q->l1, q->ido, q->wa, a, b); res = b; break;
    case 5: S(radf5)(q->l1, q->ido, q->wa, a, b); res = b; break;
    default: res = S(radfg)(p->roots, q->l1, q->ido, q->ip, q->wa, a, b);
    }
    if (res == b) {
      b = a;
      a = res;
    }
  }
  if (fct != (T)1)
    for (int64_t k = 0; k < p->n; ++k)
      a[k] = a[k] * fct;
  return a;
}

/* Backward real transform of the halfcomplex a[0..n) (b is scratch), times fct. */
static T *S(c2r_line)(const S(rplan) *p, T *a, T *b, T fct) {
  for (int k = 0; k < p->np; ++k) {
    const S(rpass) *q = &p->passes[k];
    switch (q->ip) {
    case 2: S(radb2)(q->l1, q->ido, q->wa, a, b); break;
    case 3: S(radb3)(q->l1, q->ido, q->wa, a, b); break;
    case 4: S(radb4)(q->l1, q->ido, q->wa, a, b); break;
    case 5: S(radb5)(q->l1, q->ido, q->wa, a, b); break;
    default: S(radbg)(p->roots, q->l1, q->ido, q->ip, q->wa, a, b);
    }
    T *t = a;
    a = b;
    b = t;
  }
  if (fct != (T)1)
    for (int64_t k = 0; k < p->n; ++k)
      a[k] = a[k] * fct;
  return a;
}

/* ---- one axis over all lines, on the pool ---- */

typedef struct {
  int kind; /* 0: c2c, 1: r2c, 2: c2r */
  const void *src;
  void *dst;
  int64_t n, inner; /* line t-th element at (o * n + t) * inner + j */
  int fwd;
  T fct;
  const S(cplan) *cp;
  const S(rplan) *rp;
  int failed;
} S(axis_job);

static void S(axis_lines)(const void *ctx, int64_t begin, int64_t end) {
  S(axis_job) *job = (S(axis_job) *)ctx;
  int64_t n = job->n, inner = job->inner, h = n / 2 + 1;
  CT *buf = malloc(sizeof(CT) * 2 * (size_t)n);
  if (!buf) {
    job->failed = 1;
    return;
  }
  for (int64_t line = begin; line < end; ++line) {
    int64_t o = line / inner, j = line % inner;
    if (job->kind == 0) {
      const CT *src = (const CT *)job->src + o * n * inner + j;
      CT *dst = (CT *)job->dst + o * n * inner + j;
      for (int64_t t = 0; t < n; ++t)
        buf[t] = src[t * inner];
      CT *res = S(c2c_line)(job->cp, buf, buf + n, job->fwd, job->fct);
      for (int64_t t = 0; t < n; ++t)
        dst[t * inner] = res[t];
    } else if (job->kind == 1) { /* the last axis: inner == 1 */
      const T *src = (const T *)job->src + o * n;
      CT *dst = (CT *)job->dst + o * h;
      T *a = (T *)buf;
      memcpy(a, src, sizeof(T) * (size_t)n);
      T *res = S(r2c_line)(job->rp, a, a + n, job->fct);
      dst[0] = (CT){res[0], (T)0};
      int64_t i = 1, k = 1;
      for (; i < n - 1; i += 2)
        dst[k++] = (CT){res[i], res[i + 1]};
      if (i < n)
        dst[k] = (CT){res[i], (T)0};
    } else { /* c2r on the last axis: the imaginary parts of X[0] (X[n/2]) unread */
      const CT *src = (const CT *)job->src + o * h;
      T *dst = (T *)job->dst + o * n;
      T *a = (T *)buf;
      a[0] = src[0].r;
      int64_t i = 1;
      for (int64_t k = 1; k <= (n - 1) / 2; ++k) {
        a[i++] = src[k].r;
        a[i++] = src[k].i;
      }
      if (n % 2 == 0 && n > 1)
        a[i] = src[n / 2].r;
      T *res = S(c2r_line)(job->rp, a, a + n, job->fct);
      memcpy(dst, res, sizeof(T) * (size_t)n);
    }
  }
  free(buf);
}

static int S(run_axis)(S(axis_job) *job, int64_t lines, int32_t threads) {
  job->failed = 0;
  mlxc_parallel_range(lines, threads_for(lines, job->n, threads), S(axis_lines), job);
  return job->failed ? -1 : 0;
}

static int S(c2c_axis)(const void *src, void *dst, int64_t outer, int64_t n, int64_t inner,
                       int fwd, T fct, int32_t threads) {
  S(cplan) p;
  if (S(cplan_make)(&p, n) != 0) {
    free(p.roots);
    return -1;
  }
  S(axis_job) job = {0, src, dst, n, inner, fwd, fct, &p, NULL, 0};
  int rc = S(run_axis)(&job, outer * inner, threads);
  free(p.roots);
  return rc;
}

static int S(real_axis)(int kind, const void *src, void *dst, int64_t lines, int64_t n, T fct,
                        int32_t threads) {
  S(rplan) p;
  int rc = S(rplan_make)(&p, n);
  if (rc == 0) {
    S(axis_job) job = {kind, src, dst, n, 1, kind == 1, fct, NULL, &p, 0};
    rc = S(run_axis)(&job, lines, threads);
  }
  S(rplan_free)(&p);
  return rc;
}

MLXC_EXPORT int S(mlxc_fft)(const void *in, void *out, int64_t batch, int64_t n0, int64_t n1,
                            int64_t n2, int32_t rank, int32_t kind, int32_t threads) {
  int64_t len[3] = {n0, n1, n2};
  if (rank < 1 || rank > 3 || kind < MLXC_FFT_FFT || kind > MLXC_FFT_IRFFT || batch < 0)
    return -1;
  int real = kind == MLXC_FFT_RFFT || kind == MLXC_FFT_IRFFT;
  for (int a = 0; a < rank; ++a)
    if (!mlxc_fft_supported(len[a], real && a == rank - 1))
      return -1;
  if (batch == 0)
    return 0;
  double scale = 1.0; /* XLA forms 1/N in double and rounds it once */
  for (int a = 0; a < rank; ++a)
    scale *= (double)len[a];
  T inv = (T)(1.0 / scale), one = (T)1;
  int64_t last = len[rank - 1], half = last / 2 + 1;
  if (kind == MLXC_FFT_FFT || kind == MLXC_FFT_IFFT) {
    /* in ducc0's order, from `in` into `out`, then in place; the first takes the scale */
    int order[3];
    c2c_order(len, rank, rank, order);
    int fwd = kind == MLXC_FFT_FFT, rc = 0;
    for (int i = 0; i < rank && rc == 0; ++i) {
      int a = order[i];
      rc = S(c2c_axis)(i == 0 ? in : out, out, batch * product(len, 0, a), len[a],
                       product(len, a + 1, rank), fwd, i == 0 && !fwd ? inv : one, threads);
    }
    return rc;
  }
  int64_t dims[3] = {len[0], len[1], len[2]}; /* the complex side's */
  dims[rank - 1] = half;
  if (kind == MLXC_FFT_RFFT) {
    /* the real axis, then the others in place, outermost first */
    int rc = S(real_axis)(1, in, out, batch * product(len, 0, rank - 1), last, one, threads);
    for (int a = 0; a < rank - 1 && rc == 0; ++a)
      rc = S(c2c_axis)(out, out, batch * product(dims, 0, a), dims[a],
                       product(dims, a + 1, rank), 1, one, threads);
    return rc;
  }
  /* IRFFT: the leading axes in ducc0's c2c order (into a copy: `in` is only read),
   * then the real axis, which takes the scale */
  int64_t lines = batch * product(len, 0, rank - 1);
  if (rank == 1)
    return S(real_axis)(2, in, out, lines, last, inv, threads);
  CT *tmp = malloc(sizeof(CT) * (size_t)(lines * half));
  if (!tmp)
    return -1;
  int order[3], rc = 0;
  c2c_order(dims, rank, rank - 1, order);
  for (int i = 0; i < rank - 1 && rc == 0; ++i) {
    int a = order[i];
    rc = S(c2c_axis)(i == 0 ? in : (const void *)tmp, tmp, batch * product(dims, 0, a),
                     dims[a], product(dims, a + 1, rank), 0, one, threads);
  }
  if (rc == 0)
    rc = S(real_axis)(2, tmp, out, lines, last, inv, threads);
  free(tmp);
  return rc;
}

#undef PM
#undef MULPM
#undef REARRANGE
#undef WA
#undef FCC
#undef FCH
#undef BCC
#undef BCH
#undef T
#undef CT

#endif
