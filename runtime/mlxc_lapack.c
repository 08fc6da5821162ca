/* LAPACK's dense routines for JAX's CPU linear algebra: see mlxc_lapack.h for the contract.
 *
 * The matrices arrive row-major (the custom calls' logical shapes), so each routine
 * works on the layout whose rows are what it streams: Householder reflectors and the
 * columns they transform are kept as rows (QR works on A^T, Q is built as Q^T), and
 * the rotations of the QL and bidiagonal QR iterations act on rows of V^T and U^T.
 * Inner loops are then dot products and axpys over contiguous rows, and the O(n^3)
 * updates of the blocked routines (Cholesky, LU, triangular solves, QR and forming Q)
 * are matrix products through one packed kernel (`gemm`: a 6 x 2-vector register tile).
 *
 * - potrf: blocked left-looking Cholesky, each block's rows solved by dot products.
 * - trsm: blocked substitution; op(A) = A^T and the right side by transposed copies.
 * - getrf: blocked right-looking LU; the panel by LAPACK's getf2 (first largest |x| as
 *   pivot, whole rows swapped, info at the first zero pivot, the rest still done).
 * - geqrf/orgqr: LAPACK's larfg reflectors, blocks of 32 applied as I - V T V^T (larft,
 *   larfb).
 * - syevd: Householder tridiagonalization (sytd2), Q formed as in orgqr, then implicit
 *   QL (tql2) with the rotations on Q^T's rows; eigenvalues sorted ascending.
 * - gesdd: Householder bidiagonalization (gebd2), U and V formed as in orgqr, then the
 *   Golub-Kahan implicit shifted QR (zero diagonals chased out first), values made
 *   non-negative and sorted descending. A wide A is done as its transpose.
 *
 * The file includes itself (a template in C): once per element type and instruction set
 * (AVX-512 where the CPU has it, the baseline otherwise; chosen once per process), so
 * the same plain C vectorizes for each. One source file: the artifact build and its
 * cache track the runtime's .c files.
 */
#if defined(MLXC_LAPACK_BODY) /* ---- the routines for element type T ---- */

#define VL ((int64_t)(64 / sizeof(T))) /* lanes of a 64-byte vector */
typedef T F(vec) __attribute__((vector_size(64)));

static inline F(vec) F(load)(const T *p) {
  F(vec) v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline void F(store)(T *p, const F(vec) *v) { memcpy(p, v, sizeof *v); }

static T F(dot)(int64_t n, const T *x, const T *y) {
  F(vec) s0 = {0}, s1 = {0};
  int64_t i = 0;
  for (; i + 2 * VL <= n; i += 2 * VL) {
    s0 += F(load)(x + i) * F(load)(y + i);
    s1 += F(load)(x + i + VL) * F(load)(y + i + VL);
  }
  for (; i + VL <= n; i += VL)
    s0 += F(load)(x + i) * F(load)(y + i);
  s0 += s1;
  T s = 0;
  for (int64_t j = 0; j < VL; ++j)
    s += s0[j];
  for (; i < n; ++i)
    s += x[i] * y[i];
  return s;
}

/* y += alpha x */
static void F(axpy)(int64_t n, T alpha, const T *restrict x, T *restrict y) {
  for (int64_t i = 0; i < n; ++i)
    y[i] += alpha * x[i];
}

static void F(scal)(int64_t n, T alpha, T *x) {
  for (int64_t i = 0; i < n; ++i)
    x[i] *= alpha;
}

/* (x, y) <- (c x + s y, c y - s x): the rows of a plane rotation. */
static void F(rot)(int64_t n, T *restrict x, T *restrict y, T c, T s) {
  for (int64_t i = 0; i < n; ++i) {
    T u = x[i], w = y[i];
    x[i] = c * u + s * w;
    y[i] = c * w - s * u;
  }
}

/* dst (cols x rows, ldd) = src (rows x cols, lds) transposed, in 32 x 32 blocks. */
static void F(transpose)(int64_t rows, int64_t cols, const T *src, int64_t lds, T *dst,
                         int64_t ldd) {
  for (int64_t i0 = 0; i0 < rows; i0 += 32)
    for (int64_t j0 = 0; j0 < cols; j0 += 32) {
      int64_t i1 = i0 + 32 < rows ? i0 + 32 : rows, j1 = j0 + 32 < cols ? j0 + 32 : cols;
      for (int64_t j = j0; j < j1; ++j)
        for (int64_t i = i0; i < i1; ++i)
          dst[j * ldd + i] = src[i * lds + j];
    }
}

/* ---- C = beta C + alpha A B, any strides (A[i, k] at a[i * ars + k * acs]) ---- */

#define MR 6
#define NR (2 * VL)
#define KC 256
#define MC 96
#define NC 1024

typedef struct {
  T *pa, *pb;
  size_t size;
} F(gemm_buffers);

static _Thread_local F(gemm_buffers) F(buffers);

/* A 6 x NR tile of C from packed panels: acc = A panel (kc x MR) times B panel (kc x NR);
 * C = (first ? beta C : C) + alpha acc over its rows x cols. */
static void F(tile)(int64_t kc, const T *pa, const T *pb, T *c, int64_t crs, int64_t ccs,
                    int rows, int cols, T alpha, T beta, int first) {
  F(vec) acc[MR][2];
  for (int r = 0; r < MR; ++r)
    acc[r][0] = acc[r][1] = (F(vec)){0};
  for (int64_t kk = 0; kk < kc; ++kk) {
    F(vec) b0 = F(load)(pb), b1 = F(load)(pb + VL);
    for (int r = 0; r < MR; ++r) {
      acc[r][0] += pa[r] * b0;
      acc[r][1] += pa[r] * b1;
    }
    pa += MR;
    pb += NR;
  }
  T out[MR][NR];
  for (int r = 0; r < MR; ++r) {
    F(store)(out[r], &acc[r][0]);
    F(store)(out[r] + VL, &acc[r][1]);
  }
  for (int r = 0; r < rows; ++r) {
    T *cr = c + r * crs;
    if (!first || beta == 1) {
      for (int j = 0; j < cols; ++j)
        cr[j * ccs] += alpha * out[r][j];
    } else if (beta == 0) {
      for (int j = 0; j < cols; ++j)
        cr[j * ccs] = alpha * out[r][j];
    } else {
      for (int j = 0; j < cols; ++j)
        cr[j * ccs] = beta * cr[j * ccs] + alpha * out[r][j];
    }
  }
}

/* The same sums without packing: small products, or no memory for the buffers. */
static void F(gemm_plain)(int64_t m, int64_t n, int64_t k, T alpha, const T *a, int64_t ars,
                          int64_t acs, const T *b, int64_t brs, int64_t bcs, T beta, T *c,
                          int64_t crs, int64_t ccs) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T s = 0;
      for (int64_t kk = 0; kk < k; ++kk)
        s += a[i * ars + kk * acs] * b[kk * brs + j * bcs];
      T *cij = c + i * crs + j * ccs;
      *cij = (beta == 0 ? 0 : beta * *cij) + alpha * s;
    }
}

static void F(gemm)(int64_t m, int64_t n, int64_t k, T alpha, const T *a, int64_t ars,
                    int64_t acs, const T *b, int64_t brs, int64_t bcs, T beta, T *c,
                    int64_t crs, int64_t ccs) {
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0 || m * n * k < 4096) {
    F(gemm_plain)(m, n, k, alpha, a, ars, acs, b, brs, bcs, beta, c, crs, ccs);
    return;
  }
  F(gemm_buffers) *buf = &F(buffers);
  size_t need = (size_t)(KC * NC + KC * (MC + MR));
  if (buf->size < need) {
    free(buf->pa);
    buf->pa = malloc(need * sizeof(T));
    if (!buf->pa) {
      buf->size = 0;
      F(gemm_plain)(m, n, k, alpha, a, ars, acs, b, brs, bcs, beta, c, crs, ccs);
      return;
    }
    buf->pb = buf->pa + KC * (MC + MR);
    buf->size = need;
  }
  T *pa = buf->pa, *pb = buf->pb;
  for (int64_t j0 = 0; j0 < n; j0 += NC) {
    int64_t nc = n - j0 < NC ? n - j0 : NC;
    for (int64_t k0 = 0; k0 < k; k0 += KC) {
      int64_t kc = k - k0 < KC ? k - k0 : KC;
      int first = k0 == 0;
      /* B panels of NR columns: pb[panel][kk][j], zero-padded. */
      for (int64_t jp = 0; jp < nc; jp += NR) {
        int64_t w = nc - jp < NR ? nc - jp : NR;
        T *dst = pb + jp * kc;
        const T *src = b + k0 * brs + (j0 + jp) * bcs;
        for (int64_t kk = 0; kk < kc; ++kk) {
          T *d = dst + kk * NR;
          if (bcs == 1 && w == NR)
            memcpy(d, src + kk * brs, NR * sizeof(T));
          else {
            int64_t j = 0;
            for (; j < w; ++j)
              d[j] = src[kk * brs + j * bcs];
            for (; j < NR; ++j)
              d[j] = 0;
          }
        }
      }
      for (int64_t i0 = 0; i0 < m; i0 += MC) {
        int64_t mc = m - i0 < MC ? m - i0 : MC;
        /* A panels of MR rows: pa[panel][kk][r], zero-padded. */
        for (int64_t ip = 0; ip < mc; ip += MR) {
          int64_t h = mc - ip < MR ? mc - ip : MR;
          T *dst = pa + ip * kc;
          const T *src = a + (i0 + ip) * ars + k0 * acs;
          for (int64_t kk = 0; kk < kc; ++kk) {
            int64_t r = 0;
            for (; r < h; ++r)
              dst[kk * MR + r] = src[r * ars + kk * acs];
            for (; r < MR; ++r)
              dst[kk * MR + r] = 0;
          }
        }
        for (int64_t jp = 0; jp < nc; jp += NR) {
          int w = (int)(nc - jp < NR ? nc - jp : NR);
          for (int64_t ip = 0; ip < mc; ip += MR) {
            int h = (int)(mc - ip < MR ? mc - ip : MR);
            F(tile)(kc, pa + ip * kc, pb + jp * kc, c + (i0 + ip) * crs + (j0 + jp) * ccs, crs,
                    ccs, h, w, alpha, beta, first);
          }
        }
      }
    }
  }
}

#undef MR
#undef NR
#undef KC
#undef MC
#undef NC

/* ---- Cholesky ---- */

#define NB 64

/* A X = B in place, A (m x m, lda) lower or upper, B m x n (ldb). */
static void F(trsm_left)(int64_t m, int64_t n, const T *a, int64_t lda, T *b, int64_t ldb,
                         int lower, int unit) {
  if (lower) {
    for (int64_t k0 = 0; k0 < m; k0 += NB) {
      int64_t kb = m - k0 < NB ? m - k0 : NB;
      F(gemm)(kb, n, k0, -1, a + k0 * lda, lda, 1, b, ldb, 1, 1, b + k0 * ldb, ldb, 1);
      for (int64_t i = k0; i < k0 + kb; ++i) {
        for (int64_t j = k0; j < i; ++j)
          F(axpy)(n, -a[i * lda + j], b + j * ldb, b + i * ldb);
        if (!unit)
          F(scal)(n, 1 / a[i * lda + i], b + i * ldb);
      }
    }
  } else {
    for (int64_t k1 = m; k1 > 0; k1 -= NB) {
      int64_t kb = k1 < NB ? k1 : NB, k0 = k1 - kb;
      F(gemm)(kb, n, m - k1, -1, a + k0 * lda + k1, lda, 1, b + k1 * ldb, ldb, 1, 1,
              b + k0 * ldb, ldb, 1);
      for (int64_t i = k1 - 1; i >= k0; --i) {
        for (int64_t j = i + 1; j < k1; ++j)
          F(axpy)(n, -a[i * lda + j], b + j * ldb, b + i * ldb);
        if (!unit)
          F(scal)(n, 1 / a[i * lda + i], b + i * ldb);
      }
    }
  }
}

/* The unblocked Cholesky of a diagonal block d (n x n, lda), lower: its lower triangle
 * mirrored into the upper one, factored there as A = U^T U by rows (right-looking: each
 * row's update an axpy along the rows below, not a short dot per entry), and U^T
 * copied back. Returns 0 or the 1-based column whose pivot is not positive. */
static int32_t F(potf2)(int64_t n, T *d, int64_t lda) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < i; ++j)
      d[j * lda + i] = d[i * lda + j];
  for (int64_t j = 0; j < n; ++j) {
    T *u = d + j * lda;
    T p = u[j];
    if (!(p > 0))
      return (int32_t)(j + 1);
    u[j] = (T)sqrt((double)p);
    F(scal)(n - j - 1, 1 / u[j], u + j + 1);
    for (int64_t i = j + 1; i < n; ++i)
      F(axpy)(n - i, -u[i], u + i, d + i * lda + i);
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < i; ++j)
      d[i * lda + j] = d[j * lda + i];
  return 0;
}

/* A = L L^T in the lower triangle of a (n x n, lda); the upper triangle of each diagonal
 * block is overwritten. `work` holds NB (n + 1) values. Returns info. */
static int32_t F(potrf_lower)(int64_t n, T *a, int64_t lda, T *work) {
  T *pt = work + NB;
  for (int64_t k0 = 0; k0 < n; k0 += NB) {
    int64_t kb = n - k0 < NB ? n - k0 : NB, k1 = k0 + kb;
    T *d = a + k0 * lda + k0;
    /* Left-looking: the block's rows minus their products with the columns done. */
    F(gemm)(kb, kb, k0, -1, a + k0 * lda, lda, 1, a + k0 * lda, 1, lda, 1, d, lda, 1);
    int32_t failed = F(potf2)(kb, d, lda);
    if (failed)
      return (int32_t)(k0 + failed);
    if (k1 < n) {
      int64_t rows = n - k1;
      T *panel = a + k1 * lda + k0;
      F(gemm)(rows, kb, k0, -1, a + k1 * lda, lda, 1, a + k0 * lda, 1, lda, 1, panel, lda, 1);
      /* X L_D^T = P is L_D X^T = P^T: a solve down long rows of the transposed panel. */
      F(transpose)(rows, kb, panel, lda, pt, rows);
      F(trsm_left)(kb, rows, d, lda, pt, rows, 1, 0);
      F(transpose)(kb, rows, pt, rows, panel, lda);
    }
  }
  return 0;
}

static void F(potrf)(const T *a, T *out, int32_t *info, int64_t batch, int64_t n, int32_t lower) {
  T *scratch = malloc((size_t)(NB * (n + 1) + (lower ? 0 : n * n)) * sizeof(T));
  T *work = scratch + NB * (n + 1);
  for (int64_t b = 0; b < batch; ++b) {
    const T *x = a + b * n * n;
    T *y = out + b * n * n;
    if (!scratch) {
      info[b] = -1;
      continue;
    }
    if (lower) {
      memcpy(y, x, (size_t)(n * n) * sizeof(T));
      info[b] = F(potrf_lower)(n, y, n, scratch);
      /* The strict upper triangle keeps A's entries, as LAPACK leaves them. */
      for (int64_t i = 0; i < n; ++i)
        memcpy(y + i * n + i + 1, x + i * n + i + 1, (size_t)(n - i - 1) * sizeof(T));
    } else {
      /* A = U^T U: U^T is the lower factor of A^T, whose lower triangle is A's upper. */
      F(transpose)(n, n, x, n, work, n);
      info[b] = F(potrf_lower)(n, work, n, scratch);
      F(transpose)(n, n, work, n, y, n);
      for (int64_t i = 0; i < n; ++i)
        memcpy(y + i * n, x + i * n, (size_t)i * sizeof(T));
    }
  }
  free(scratch);
}

/* ---- triangular solves ---- */

static void F(trsm)(const T *a, const T *b, T *out, int64_t batch, int64_t m, int64_t n, int32_t left,
             int32_t lower, int32_t trans, int32_t unit) {
  int64_t k = left ? m : n;
  /* X op(A) = B is op(A)^T X^T = B^T: the right side solves with the other transpose. */
  int flip = left ? trans : !trans;
  T *at = flip ? malloc((size_t)(k * k) * sizeof(T) + 1) : NULL;
  T *bt = left ? NULL : malloc((size_t)(m * n) * sizeof(T) + 1);
  for (int64_t i = 0; i < batch; ++i) {
    const T *ai = a + i * k * k;
    T *y = out + i * m * n;
    if ((flip && !at) || (!left && !bt)) {
      for (int64_t j = 0; j < m * n; ++j)
        y[j] = (T)NAN;
      continue;
    }
    if (flip)
      F(transpose)(k, k, ai, k, at, k);
    const T *op = flip ? at : ai;
    int op_lower = flip ? !lower : lower;
    if (left) {
      memcpy(y, b + i * m * n, (size_t)(m * n) * sizeof(T));
      F(trsm_left)(m, n, op, k, y, n, op_lower, unit);
    } else {
      F(transpose)(m, n, b + i * m * n, n, bt, m);
      F(trsm_left)(n, m, op, k, bt, m, op_lower, unit);
      F(transpose)(n, m, bt, m, y, n);
    }
  }
  free(at);
  free(bt);
}

/* ---- LU ---- */

static void F(swap_rows)(int64_t n, T *x, T *y) {
  for (int64_t i = 0; i < n; ++i) {
    T t = x[i];
    x[i] = y[i];
    y[i] = t;
  }
}

/* LAPACK's getf2 on the panel of columns k0..k1 (rows k0..m) of a, held transposed in
 * pt (k1 - k0 rows of m - k0: the columns are contiguous for the pivot search, the
 * scaling and the updates); the row swaps within the panel become column swaps there,
 * those of the other columns follow (the whole rows end up swapped, as LAPACK's laswp). */
static void F(getf2)(int64_t m, int64_t n, T *a, int64_t k0, int64_t k1, int32_t *ipiv,
                     int32_t *info, T *pt) {
  const T sfmin = MIN_NORMAL;
  int64_t kb = k1 - k0, rows = m - k0;
  F(transpose)(rows, kb, a + k0 * n + k0, n, pt, rows);
  for (int64_t jj = 0; jj < kb; ++jj) {
    T *col = pt + jj * rows;
    int64_t p = jj;
    T best = (T)fabs((double)col[jj]);
    for (int64_t i = jj + 1; i < rows; ++i) {
      T v = (T)fabs((double)col[i]);
      if (v > best) {
        best = v;
        p = i;
      }
    }
    ipiv[k0 + jj] = (int32_t)(k0 + p + 1);
    T pivot = col[p];
    if (pivot != 0) {
      if (p != jj)
        for (int64_t c = 0; c < kb; ++c) {
          T t = pt[c * rows + jj];
          pt[c * rows + jj] = pt[c * rows + p];
          pt[c * rows + p] = t;
        }
      if (fabs((double)pivot) >= sfmin)
        F(scal)(rows - jj - 1, 1 / pivot, col + jj + 1);
      else
        for (int64_t i = jj + 1; i < rows; ++i)
          col[i] /= pivot;
    } else if (*info == 0) {
      *info = (int32_t)(k0 + jj + 1);
    }
    /* The rest of the panel: rank-1 update, column by column. */
    for (int64_t c = jj + 1; c < kb; ++c)
      F(axpy)(rows - jj - 1, -pt[c * rows + jj], col + jj + 1, pt + c * rows + jj + 1);
  }
  F(transpose)(kb, rows, pt, rows, a + k0 * n + k0, n);
  for (int64_t j = k0; j < k1; ++j) {
    int64_t p = ipiv[j] - 1;
    if (p != j) {
      F(swap_rows)(k0, a + j * n, a + p * n);
      F(swap_rows)(n - k1, a + j * n + k1, a + p * n + k1);
    }
  }
}

static void F(getrf)(const T *a, T *out, int32_t *ipiv, int32_t *info, int64_t batch, int64_t m,
                     int64_t n) {
  int64_t steps = m < n ? m : n;
  T *pt = malloc((size_t)(NB * m) * sizeof(T) + 1);
  for (int64_t b = 0; b < batch; ++b) {
    T *x = out + b * m * n;
    int32_t *piv = ipiv + b * steps;
    memcpy(x, a + b * m * n, (size_t)(m * n) * sizeof(T));
    info[b] = 0;
    if (!pt) {
      info[b] = -1;
      continue;
    }
    for (int64_t k0 = 0; k0 < steps; k0 += NB) {
      int64_t k1 = k0 + NB < steps ? k0 + NB : steps;
      F(getf2)(m, n, x, k0, k1, piv, &info[b], pt);
      if (k1 < n) {
        /* U12 = L11^-1 A12, then A22 -= L21 U12. */
        for (int64_t i = k0 + 1; i < k1; ++i)
          for (int64_t j = k0; j < i; ++j)
            F(axpy)(n - k1, -x[i * n + j], x + j * n + k1, x + i * n + k1);
        F(gemm)(m - k1, n - k1, k1 - k0, -1, x + k1 * n + k0, n, 1, x + k0 * n + k1, n, 1, 1,
                x + k1 * n + k1, n, 1);
      }
    }
  }
  free(pt);
}

#undef NB

/* ---- Householder reflectors, kept as rows ---- */

#define QB 32

/* LAPACK's larfg on x[0..n): beta (returned in x[0]) and tau with
 * H (alpha, x[1:]) = (beta, 0), H = I - tau v v^T, v = (1, x[1:]) stored over x[1:]. */
static T F(larfg)(int64_t n, T *x) {
  if (n <= 1)
    return 0;
  T alpha = x[0];
  T xnorm2 = F(dot)(n - 1, x + 1, x + 1);
  if (xnorm2 == 0)
    return 0;
  T norm = (T)sqrt((double)alpha * alpha + (double)xnorm2);
  T beta = alpha < 0 ? norm : -norm;
  T tau = (beta - alpha) / beta;
  F(scal)(n - 1, 1 / (alpha - beta), x + 1);
  x[0] = beta;
  return tau;
}

/* T (kb x kb, upper, ldt = kb) of H_0 ... H_(kb-1) = I - V T V^T, V's columns the rows of
 * vt (kb x len, ldv; explicit zeros and ones). LAPACK's larft, forward, columnwise. */
static void F(larft)(int64_t kb, int64_t len, const T *vt, int64_t ldv, const T *tau, T *t) {
  for (int64_t i = 0; i < kb; ++i) {
    T *ti = t + i; /* column i: t[j * kb + i] */
    for (int64_t j = 0; j < kb; ++j)
      ti[j * kb] = 0;
    ti[i * kb] = tau[i];
    if (tau[i] == 0)
      continue;
    for (int64_t j = 0; j < i; ++j)
      ti[j * kb] = -tau[i] * F(dot)(len - i, vt + j * ldv + i, vt + i * ldv + i);
    /* t[0:i, i] = T[0:i, 0:i] t[0:i, i] (upper triangular, top down in place). */
    for (int64_t j = 0; j < i; ++j) {
      T s = 0;
      for (int64_t l = j; l < i; ++l)
        s += t[j * kb + l] * ti[l * kb];
      ti[j * kb] = s;
    }
  }
}

/* C^T (rows x len, ldc) <- C^T - (C^T V) T' V^T, T' = T (trans 0) or T^T: C <- H^T C
 * (geqrf's update) or H C (orgqr's), H = I - V T V^T. `w` holds rows x kb. */
static void F(larfb)(int64_t rows, int64_t len, int64_t kb, const T *vt, int64_t ldv,
                     const T *t, int trans, T *ct, int64_t ldc, T *w) {
  if (rows <= 0)
    return;
  F(gemm)(rows, kb, len, 1, ct, ldc, 1, vt, 1, ldv, 0, w, kb, 1);
  for (int64_t r = 0; r < rows; ++r) {
    T *x = w + r * kb;
    if (!trans) { /* x <- x T: x'[j] = sum_{i <= j} x[i] T[i, j], from the right */
      for (int64_t j = kb - 1; j >= 0; --j) {
        T s = 0;
        for (int64_t i = 0; i <= j; ++i)
          s += x[i] * t[i * kb + j];
        x[j] = s;
      }
    } else { /* x <- x T^T: x'[j] = sum_{i >= j} x[i] T[j, i], from the left */
      for (int64_t j = 0; j < kb; ++j) {
        T s = 0;
        for (int64_t i = j; i < kb; ++i)
          s += x[i] * t[j * kb + i];
        x[j] = s;
      }
    }
  }
  F(gemm)(rows, len, kb, -1, w, kb, 1, vt, ldv, 1, 1, ct, ldc, 1);
}

/* The reflectors of rows k0..k0+kb of `at` (row r: v = 1 at column r, at[r, r+1:len]
 * after it) as explicit rows of vt (kb x (len - k0)), from column k0. */
static void F(explicit_reflectors)(const T *at, int64_t lda, int64_t k0, int64_t kb,
                                   int64_t len, T *vt) {
  int64_t width = len - k0;
  for (int64_t i = 0; i < kb; ++i) {
    T *v = vt + i * width;
    memset(v, 0, (size_t)i * sizeof(T));
    v[i] = 1;
    memcpy(v + i + 1, at + (k0 + i) * lda + k0 + i + 1, (size_t)(width - i - 1) * sizeof(T));
  }
}

/* QR of A^T's transpose, in place on at (rows x len: row r is column r of A, len = m):
 * the reflectors as rows, R's rows as the leading part of each row. `work` holds
 * QB * (len + rows + QB) values. */
static void F(geqrf_rows)(int64_t rows, int64_t len, T *at, T *tau, T *work) {
  int64_t steps = rows < len ? rows : len;
  T *vt = work, *t = vt + QB * len, *w = t + QB * QB;
  for (int64_t k0 = 0; k0 < steps; k0 += QB) {
    int64_t kb = steps - k0 < QB ? steps - k0 : QB;
    for (int64_t k = k0; k < k0 + kb; ++k) {
      T *v = at + k * len + k;
      tau[k] = F(larfg)(len - k, v);
      if (tau[k] == 0)
        continue;
      T beta = v[0];
      v[0] = 1;
      for (int64_t j = k + 1; j < k0 + kb; ++j) {
        T *x = at + j * len + k;
        T s = tau[k] * F(dot)(len - k, v, x);
        F(axpy)(len - k, -s, v, x);
      }
      v[0] = beta;
    }
    int64_t k1 = k0 + kb;
    if (k1 < rows) {
      F(explicit_reflectors)(at, len, k0, kb, len, vt);
      F(larft)(kb, len - k0, vt, len - k0, tau + k0, t);
      F(larfb)(rows - k1, len - k0, kb, vt, len - k0, t, 0, at + k1 * len + k0, len, w);
    }
  }
}

/* Q^T (cols x len, ldq: row j is column j of Q) of Q = H_0 ... H_(k-1), its first
 * `cols` columns; the reflectors are the rows of vr (k rows, ldv: row r holds v from
 * column r on, v[r] = 1 implied). `work` as for geqrf_rows. */
static void F(orgqr_rows)(int64_t cols, int64_t len, int64_t k, const T *vr, int64_t ldv,
                          const T *tau, T *qt, int64_t ldq, T *work) {
  for (int64_t j = 0; j < cols; ++j) {
    memset(qt + j * ldq, 0, (size_t)len * sizeof(T));
    if (j < len)
      qt[j * ldq + j] = 1;
  }
  T *vt = work, *t = vt + QB * len, *w = t + QB * QB;
  int64_t last = k == 0 ? 0 : (k - 1) / QB * QB;
  for (int64_t k0 = last; k0 >= 0 && k > 0; k0 -= QB) {
    int64_t kb = k - k0 < QB ? k - k0 : QB;
    F(explicit_reflectors)(vr, ldv, k0, kb, len, vt);
    F(larft)(kb, len - k0, vt, len - k0, tau + k0, t);
    /* Columns before k0 of Q are e_j there: only rows from k0 change. */
    F(larfb)(cols - k0, len - k0, kb, vt, len - k0, t, 1, qt + k0 * ldq + k0, ldq, w);
  }
}

static void F(geqrf)(const T *a, T *out, T *tau, int64_t batch, int64_t m, int64_t n) {
  int64_t steps = m < n ? m : n;
  T *at = malloc((size_t)(n * m + QB * (m + n + QB)) * sizeof(T) + 1);
  for (int64_t b = 0; b < batch; ++b) {
    T *y = out + b * m * n, *tb = tau + b * steps;
    if (!at) {
      for (int64_t i = 0; i < m * n; ++i)
        y[i] = (T)NAN;
      for (int64_t i = 0; i < steps; ++i)
        tb[i] = (T)NAN;
      continue;
    }
    F(transpose)(m, n, a + b * m * n, n, at, m);
    F(geqrf_rows)(n, m, at, tb, at + n * m);
    F(transpose)(n, m, at, m, y, n);
  }
  free(at);
}

static void F(orgqr)(const T *a, const T *tau, T *q, int64_t batch, int64_t m, int64_t n, int64_t k) {
  /* a^T holds the reflectors as rows; q^T is built, then transposed. */
  T *vr = malloc((size_t)(2 * n * m + QB * (m + n + QB)) * sizeof(T) + 1);
  for (int64_t b = 0; b < batch; ++b) {
    T *y = q + b * m * n;
    if (!vr) {
      for (int64_t i = 0; i < m * n; ++i)
        y[i] = (T)NAN;
      continue;
    }
    T *qt = vr + n * m;
    F(transpose)(m, n, a + b * m * n, n, vr, m);
    F(orgqr_rows)(n, m, k, vr, m, tau + b * k, qt, m, qt + n * m);
    F(transpose)(n, m, qt, m, y, n);
  }
  free(vr);
}

/* ---- symmetric eigendecomposition ---- */

/* Householder tridiagonalization of the full symmetric s (n x n) in place (sytd2, on
 * rows): d, e (e[i] = T[i, i+1]); reflector k in row k from column k+1 (v[0] = 1
 * implied), tau[k]. Each step's rank-2 update of a row is fused with the next step's
 * product S v on it: one pass over the trailing matrix per step, not three. `p` holds
 * 2 n values. */
static void F(sytrd)(int64_t n, T *s, T *d, T *e, T *tau, T *p) {
  T *next = p + n;
  int have_p = 0; /* p = tau[k] S22 v, computed by the previous step */
  for (int64_t k = 0; k + 2 < n; ++k) {
    int64_t len = n - k - 1;
    T *v = s + k * n + k + 1;
    T *s22 = s + (k + 1) * n + k + 1;
    if (!have_p) {
      tau[k] = F(larfg)(len, v);
      d[k] = s[k * n + k];
      e[k] = v[0];
      if (tau[k] != 0) {
        v[0] = 1;
        for (int64_t i = 0; i < len; ++i)
          p[i] = tau[k] * F(dot)(len, s22 + i * n, v);
      }
    }
    have_p = 0;
    T t = tau[k];
    if (t == 0)
      continue;
    v[0] = 1;
    /* w = p - (tau / 2)(p^T v) v; S22 -= v w^T + w v^T, row by row. */
    F(axpy)(len, -(T)0.5 * t * F(dot)(len, p, v), v, p);
    for (int64_t j = 0; j < len; ++j)
      s22[j] -= v[0] * p[j] + p[0] * v[j];
    int fuse = k + 3 < n;
    T t2 = 0;
    T *v2 = s22 + 1;
    if (fuse) { /* the next reflector, from the updated first row */
      t2 = tau[k + 1] = F(larfg)(len - 1, v2);
      d[k + 1] = s22[0];
      e[k + 1] = v2[0];
      if (t2 != 0)
        v2[0] = 1;
    }
    for (int64_t i = 1; i < len; ++i) {
      T *row = s22 + i * n;
      T vi = v[i], pi = p[i];
      for (int64_t j = 0; j < len; ++j)
        row[j] -= vi * p[j] + pi * v[j];
      if (fuse && t2 != 0)
        next[i - 1] = t2 * F(dot)(len - 1, row + 1, v2);
    }
    if (fuse) {
      have_p = 1;
      T *swap = p;
      p = next;
      next = swap;
    }
  }
  if (n >= 2) {
    d[n - 2] = s[(n - 2) * n + n - 2];
    e[n - 2] = s[(n - 2) * n + n - 1];
    tau[n - 2] = 0;
  }
  d[n - 1] = s[(n - 1) * n + n - 1];
  e[n - 1] = 0;
}

/* Implicit QL on the tridiagonal (d, e) (EISPACK's tql2), rotating the rows of zt
 * (n x n, ldz) when given. Returns 0, or l + 1 when eigenvalue l took over 30 steps. */
static int32_t F(tql2)(int64_t n, T *d, T *e, T *zt, int64_t ldz) {
  const T eps = EPS;
  T f = 0, tst1 = 0, total = 0;
  for (int64_t i = 0; i < n; ++i)
    total += (T)(fabs((double)d[i]) + fabs((double)e[i]));
  if (!(total <= MAX_FINITE))
    return 1; /* NaN or infinity: no iteration would converge */
  for (int64_t l = 0; l < n; ++l) {
    T size = (T)(fabs((double)d[l]) + fabs((double)e[l]));
    if (size > tst1)
      tst1 = size;
    int64_t m = l;
    while (m < n - 1 && !(fabs((double)e[m]) <= eps * tst1))
      ++m;
    if (m > l) {
      int iter = 0;
      do {
        if (++iter > 30)
          return (int32_t)(l + 1);
        T g = d[l];
        T p = (d[l + 1] - g) / (2 * e[l]);
        T r = (T)hypot((double)p, 1.0);
        if (p < 0)
          r = -r;
        d[l] = e[l] / (p + r);
        d[l + 1] = e[l] * (p + r);
        T dl1 = d[l + 1];
        T h = g - d[l];
        for (int64_t i = l + 2; i < n; ++i)
          d[i] -= h;
        f += h;
        p = d[m];
        T c = 1, c2 = 1, c3 = 1, s = 0, s2 = 0;
        T el1 = e[l + 1];
        for (int64_t i = m - 1; i >= l; --i) {
          c3 = c2;
          c2 = c;
          s2 = s;
          g = c * e[i];
          h = c * p;
          r = (T)hypot((double)p, (double)e[i]);
          e[i + 1] = s * r;
          s = e[i] / r;
          c = p / r;
          p = c * d[i] - s * g;
          d[i + 1] = h + s * (c * g + s * d[i]);
          if (zt) /* columns (i, i+1) of Z: Z_i' = c Z_i - s Z_(i+1), Z_(i+1)' = s Z_i + c Z_(i+1) */
            F(rot)(n, zt + i * ldz, zt + (i + 1) * ldz, c, -s);
        }
        p = -s * s2 * c3 * el1 * e[l] / dl1;
        e[l] = s * p;
        d[l] = c * p;
      } while (!(fabs((double)e[l]) <= eps * tst1));
    }
    d[l] += f;
    e[l] = 0;
  }
  return 0;
}

/* Values (and the rows of zt) in ascending (descending) order: a selection sort, n row
 * swaps at most. */
static void F(sort_values)(int64_t n, T *d, T *zt, int64_t ldz, int64_t width, int descending) {
  for (int64_t i = 0; i + 1 < n; ++i) {
    int64_t k = i;
    for (int64_t j = i + 1; j < n; ++j)
      if (descending ? d[j] > d[k] : d[j] < d[k])
        k = j;
    if (k != i) {
      T t = d[i];
      d[i] = d[k];
      d[k] = t;
      if (zt)
        F(swap_rows)(width, zt + i * ldz, zt + k * ldz);
    }
  }
}

static void F(syevd)(const T *a, T *v, T *w, int32_t *info, int64_t batch, int64_t n, int32_t lower,
              int32_t vectors) {
  size_t count = (size_t)(2 * n * n + 5 * n + QB * (2 * n + QB) + 8);
  T *s = malloc(count * sizeof(T));
  for (int64_t b = 0; b < batch; ++b) {
    const T *x = a + b * n * n;
    T *y = v + b * n * n, *d = w + b * n;
    if (!s) {
      info[b] = -1;
      for (int64_t i = 0; i < n * n; ++i)
        y[i] = (T)NAN;
      for (int64_t i = 0; i < n; ++i)
        d[i] = (T)NAN;
      continue;
    }
    if (n == 0) {
      info[b] = 0;
      continue;
    }
    T *zt = s + n * n, *e = zt + n * n, *tau = e + n, *p = tau + n, *work = p + 2 * n;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j <= i; ++j) {
        T value = lower ? x[i * n + j] : x[j * n + i];
        s[i * n + j] = s[j * n + i] = value;
      }
    F(sytrd)(n, s, d, e, tau, p);
    if (vectors) {
      /* Q = diag(1, H_0 ... H_(n-3)) on indices 1..n-1; Z^T = Q^T, rotated by QL. */
      memset(zt, 0, (size_t)n * sizeof(T));
      zt[0] = 1;
      for (int64_t i = 1; i < n; ++i)
        zt[i * n] = 0;
      if (n > 1)
        F(orgqr_rows)(n - 1, n - 1, n > 2 ? n - 2 : 0, s + 1, n, tau, zt + n + 1, n, work);
    }
    info[b] = F(tql2)(n, d, e, vectors ? zt : NULL, n);
    if (vectors) {
      F(sort_values)(n, d, zt, n, n, 0);
      F(transpose)(n, n, zt, n, y, n);
    } else {
      F(sort_values)(n, d, NULL, 0, 0, 0);
      memcpy(y, x, (size_t)(n * n) * sizeof(T));
    }
  }
  free(s);
}

/* ---- singular value decomposition ---- */

/* Golub-Kahan implicit QR on the upper bidiagonal (d, e) (n values), rotating the rows
 * of ut (U's columns) and vt (V's columns), each `len_u` / `len_v` long, when given.
 * Returns 0, or 1 when it took more than 40 n sweeps. */
static int32_t F(bdsqr)(int64_t n, T *d, T *e, T *ut, int64_t len_u, T *vt, int64_t len_v) {
  T anorm = 0;
  for (int64_t i = 0; i < n; ++i) {
    T size = (T)(fabs((double)d[i]) + (i + 1 < n ? fabs((double)e[i]) : 0));
    if (!(size <= anorm))
      anorm = size;
  }
  if (!(anorm <= MAX_FINITE))
    return 1; /* NaN or infinity: no iteration would converge */
  const T tol = EPS * anorm;
  int64_t sweeps = 0, hi = n - 1;
  while (hi > 0) {
    if (sweeps > 40 * n)
      return 1;
    for (int64_t i = 0; i < hi; ++i)
      if (fabs((double)e[i]) <= tol)
        e[i] = 0;
    if (e[hi - 1] == 0) {
      --hi;
      continue;
    }
    int64_t lo = hi - 1;
    while (lo > 0 && e[lo - 1] != 0)
      --lo;
    int64_t zero = -1;
    for (int64_t k = lo; k <= hi; ++k)
      if (fabs((double)d[k]) <= tol) {
        zero = k;
        break;
      }
    if (zero >= 0 && zero < hi) {
      /* d[k] = 0: row k's e[k] chased out to the right by rotations of rows (j, k). */
      int64_t k = zero;
      d[k] = 0;
      T f = e[k];
      e[k] = 0;
      for (int64_t j = k + 1; j <= hi; ++j) {
        T r = (T)hypot((double)d[j], (double)f);
        T c = d[j] / r, s = f / r;
        d[j] = r;
        if (j < hi) {
          f = -s * e[j];
          e[j] = c * e[j];
        }
        if (ut)
          F(rot)(len_u, ut + j * len_u, ut + k * len_u, c, s);
      }
      ++sweeps;
      continue;
    }
    if (zero == hi) {
      /* d[hi] = 0: column hi's e[hi-1] chased up by rotations of columns (j, hi). */
      d[hi] = 0;
      T f = e[hi - 1];
      e[hi - 1] = 0;
      for (int64_t j = hi - 1; j >= lo; --j) {
        T r = (T)hypot((double)d[j], (double)f);
        T c = d[j] / r, s = f / r;
        d[j] = r;
        if (j > lo) {
          f = -s * e[j - 1];
          e[j - 1] = c * e[j - 1];
        }
        if (vt)
          F(rot)(len_v, vt + j * len_v, vt + hi * len_v, c, s);
      }
      ++sweeps;
      continue;
    }
    /* The shift: the eigenvalue of the trailing 2 x 2 of B^T B nearer its last entry. */
    T t11 = d[hi - 1] * d[hi - 1] + (hi - 1 > lo ? e[hi - 2] * e[hi - 2] : 0);
    T t12 = d[hi - 1] * e[hi - 1];
    T t22 = d[hi] * d[hi] + e[hi - 1] * e[hi - 1];
    T delta = (t11 - t22) / 2;
    T root = (T)hypot((double)delta, (double)t12);
    T mu = t22 - (t12 == 0 ? 0 : t12 * t12 / (delta + (delta < 0 ? -root : root)));
    T y = d[lo] * d[lo] - mu, z = d[lo] * e[lo];
    for (int64_t k = lo; k < hi; ++k) {
      /* Columns (k, k+1) so that (y, z) -> (r, 0). */
      T r = (T)hypot((double)y, (double)z);
      T c = r == 0 ? 1 : y / r, s = r == 0 ? 0 : z / r;
      if (k > lo)
        e[k - 1] = r;
      T dk = d[k], ek = e[k];
      d[k] = c * dk + s * ek;
      e[k] = c * ek - s * dk;
      z = s * d[k + 1];
      d[k + 1] = c * d[k + 1];
      if (vt)
        F(rot)(len_v, vt + k * len_v, vt + (k + 1) * len_v, c, s);
      /* Rows (k, k+1) so that (d[k], bulge) -> (r, 0). */
      y = d[k];
      r = (T)hypot((double)y, (double)z);
      c = r == 0 ? 1 : y / r;
      s = r == 0 ? 0 : z / r;
      d[k] = r;
      ek = e[k];
      T dk1 = d[k + 1];
      e[k] = c * ek + s * dk1;
      d[k + 1] = c * dk1 - s * ek;
      if (k + 1 < hi) {
        z = s * e[k + 1];
        e[k + 1] = c * e[k + 1];
      }
      y = e[k];
      if (ut)
        F(rot)(len_u, ut + k * len_u, ut + (k + 1) * len_u, c, s);
    }
    ++sweeps;
  }
  return 0;
}

/* SVD of the tall x (m x n, m >= n, destroyed): s, and when ut/vt are given U^T's first
 * u_rows rows (u_rows x m) and V^T (n x n). `work` holds SVD_WORK(m, n) values. */
#define SVD_WORK(m, n) ((n) * (m) + 3 * (n) + (m) + (n) + QB * (2 * (m) + QB))
static int32_t F(gesvd_tall)(int64_t m, int64_t n, T *x, T *s, T *ut, int64_t u_rows, T *vt,
                             T *work) {
  T *lt = work, *e = lt + n * m, *tauq = e + n, *taup = tauq + n, *scratch = taup + n;
  /* Bidiagonalization (gebd2): left reflectors from columns (kept as rows of lt), right
   * reflectors from rows (kept in x's rows), both applied row by row. */
  T *v = scratch; /* a column of x, then w = v^T X */
  T *wrow = scratch + m;
  for (int64_t k = 0; k < n; ++k) {
    int64_t len = m - k;
    for (int64_t i = 0; i < len; ++i)
      v[i] = x[(k + i) * n + k];
    tauq[k] = F(larfg)(len, v);
    s[k] = v[0];
    v[0] = 1;
    T *lk = lt + k * m;
    memset(lk, 0, (size_t)k * sizeof(T));
    memcpy(lk + k, v, (size_t)len * sizeof(T));
    int64_t rest = n - k - 1;
    if (tauq[k] != 0 && rest > 0) {
      memset(wrow, 0, (size_t)rest * sizeof(T));
      for (int64_t i = 0; i < len; ++i)
        F(axpy)(rest, v[i], x + (k + i) * n + k + 1, wrow);
      for (int64_t i = 0; i < len; ++i)
        F(axpy)(rest, -tauq[k] * v[i], wrow, x + (k + i) * n + k + 1);
    }
    if (rest > 0) {
      T *u = x + k * n + k + 1;
      taup[k] = F(larfg)(rest, u);
      e[k] = u[0];
      if (taup[k] != 0) {
        u[0] = 1;
        for (int64_t i = k + 1; i < m; ++i) {
          T *row = x + i * n + k + 1;
          F(axpy)(rest, -taup[k] * F(dot)(rest, row, u), u, row);
        }
        u[0] = e[k];
      }
    } else {
      e[k] = 0;
      taup[k] = 0;
    }
  }
  T *qwork = scratch; /* orgqr_rows' QB (2 m + QB) values */
  if (ut) {
    F(orgqr_rows)(u_rows, m, n, lt, m, tauq, ut, m, qwork);
    /* V = diag(1, G_0 ... G_(n-2)) on indices 1..n-1. */
    memset(vt, 0, (size_t)n * sizeof(T));
    vt[0] = 1;
    for (int64_t i = 1; i < n; ++i)
      vt[i * n] = 0;
    if (n > 1)
      F(orgqr_rows)(n - 1, n - 1, n - 1, x + 1, n, taup, vt + n + 1, n, qwork);
  }
  int32_t status = F(bdsqr)(n, s, e, ut, m, vt, n);
  for (int64_t i = 0; i < n; ++i)
    if (s[i] < 0) {
      s[i] = -s[i];
      if (vt)
        F(scal)(n, -1, vt + i * n);
    }
  if (ut) {
    /* Sort U^T's first n rows and V^T's rows with the values. */
    for (int64_t i = 0; i + 1 < n; ++i) {
      int64_t k = i;
      for (int64_t j = i + 1; j < n; ++j)
        if (s[j] > s[k])
          k = j;
      if (k != i) {
        T t = s[i];
        s[i] = s[k];
        s[k] = t;
        F(swap_rows)(m, ut + i * m, ut + k * m);
        F(swap_rows)(n, vt + i * n, vt + k * n);
      }
    }
  } else {
    F(sort_values)(n, s, NULL, 0, 0, 1);
  }
  return status;
}

static void F(gesdd)(const T *a, T *a_out, T *s, T *u, T *vt, int32_t *info, int64_t batch, int64_t m,
              int64_t n, int64_t u_cols, int64_t vt_rows, int32_t vectors) {
  int wide = m < n;
  int64_t tm = wide ? n : m, tn = wide ? m : n, k = tn;
  /* The tall problem X = A (A^T when wide): U_X^T's rows needed, and V_X^T. */
  int64_t x_rows = wide ? vt_rows : u_cols;
  size_t count = (size_t)(tm * tn + SVD_WORK(tm, tn) + (vectors ? x_rows * tm + tn * tn : 0) + 8);
  T *x = malloc(count * sizeof(T));
  for (int64_t b = 0; b < batch; ++b) {
    const T *ab = a + b * m * n;
    T *sb = s + b * k, *ub = u + b * m * u_cols, *vb = vt + b * vt_rows * n;
    memcpy(a_out + b * m * n, ab, (size_t)(m * n) * sizeof(T));
    if (!vectors) {
      memset(ub, 0, (size_t)(m * u_cols) * sizeof(T));
      memset(vb, 0, (size_t)(vt_rows * n) * sizeof(T));
    }
    if (!x) {
      info[b] = -1;
      for (int64_t i = 0; i < k; ++i)
        sb[i] = (T)NAN;
      continue;
    }
    if (k == 0) {
      info[b] = 0;
      /* Only an empty product: U (V^T) square is the identity. */
      if (vectors) {
        memset(ub, 0, (size_t)(m * u_cols) * sizeof(T));
        memset(vb, 0, (size_t)(vt_rows * n) * sizeof(T));
        for (int64_t i = 0; i < m && i < u_cols; ++i)
          ub[i * u_cols + i] = 1;
        for (int64_t i = 0; i < vt_rows && i < n; ++i)
          vb[i * n + i] = 1;
      }
      continue;
    }
    T *work = x + tm * tn;
    T *xu = vectors ? work + SVD_WORK(tm, tn) : NULL;
    T *xv = vectors ? xu + x_rows * tm : NULL;
    if (wide)
      F(transpose)(m, n, ab, n, x, m);
    else
      memcpy(x, ab, (size_t)(m * n) * sizeof(T));
    info[b] = F(gesvd_tall)(tm, tn, x, sb, xu, x_rows, xv, work);
    if (!vectors)
      continue;
    if (wide) { /* A = V_X S U_X^T: U = V_X = (V_X^T)^T, V^T = U_X^T */
      F(transpose)(tn, tn, xv, tn, ub, u_cols);
      memcpy(vb, xu, (size_t)(vt_rows * n) * sizeof(T));
    } else {
      F(transpose)(x_rows, tm, xu, tm, ub, u_cols);
      memcpy(vb, xv, (size_t)(tn * tn) * sizeof(T));
    }
  }
  free(x);
}

#undef SVD_WORK
#undef QB
#undef VL

#elif defined(MLXC_LAPACK_TYPES) /* ---- the routines per element type, suffixed ISA ---- */

#define MLXC_LAPACK_BODY
#define T float
#define F(x) PASTE(x##_f32, ISA)
#include "mlxc_lapack.c"
#undef T
#undef F
#define T double
#define F(x) PASTE(x##_f64, ISA)
#include "mlxc_lapack.c"
#undef T
#undef F
#undef MLXC_LAPACK_BODY

#else /* ---- instances and dispatch ---- */

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mlxc_lapack.h"

#define PASTE_(a, b) a##b
#define PASTE(a, b) PASTE_(a, b)
/* Constants of T, folded at compile time. */
#define EPS (sizeof(T) == 4 ? FLT_EPSILON : DBL_EPSILON)
#define MIN_NORMAL (sizeof(T) == 4 ? FLT_MIN : DBL_MIN)
#define MAX_FINITE (sizeof(T) == 4 ? FLT_MAX : DBL_MAX)

/* The baseline instance, then (x86-64 with GCC or clang) one for AVX-512. Both with
 * multiply-adds contracted and loops vectorized (the artifact build compiles at -O2). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O3", "fp-contract=fast")
/* 64-byte vectors pass between the file's own inlined helpers only. */
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

#define MLXC_LAPACK_TYPES
#define ISA
#include "mlxc_lapack.c"
#undef ISA

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MLXC_LAPACK_AVX512 1
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512dq,fma"))), apply_to = function)
#else
#pragma GCC target("avx512f,avx512dq,fma")
#endif
#define ISA _avx512
#include "mlxc_lapack.c"
#undef ISA
#if defined(__clang__)
#pragma clang attribute pop
#endif
#endif
#undef MLXC_LAPACK_TYPES

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

static int use_avx512(void) {
#ifdef MLXC_LAPACK_AVX512
  static int known = -1;
  if (known < 0) {
    __builtin_cpu_init();
    known = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  }
  return known;
#else
  return 0;
#endif
}

#ifdef MLXC_LAPACK_AVX512
#define DISPATCH(name, S, ...) (use_avx512() ? name##_##S##_avx512(__VA_ARGS__) : name##_##S(__VA_ARGS__))
#else
#define DISPATCH(name, S, ...) name##_##S(__VA_ARGS__)
#endif

#define MLXC_LAPACK_ENTRIES(T, S)                                                               \
  MLXC_EXPORT void mlxc_potrf_##S(const T *a, T *out, int32_t *info, int64_t batch, int64_t n, \
                                  int32_t lower) {                                             \
    DISPATCH(potrf, S, a, out, info, batch, n, lower);                                          \
  }                                                                                            \
  MLXC_EXPORT void mlxc_trsm_##S(const T *a, const T *b, T *out, int64_t batch, int64_t m,     \
                                 int64_t n, int32_t left, int32_t lower, int32_t trans,        \
                                 int32_t unit) {                                               \
    DISPATCH(trsm, S, a, b, out, batch, m, n, left, lower, trans, unit);                        \
  }                                                                                            \
  MLXC_EXPORT void mlxc_getrf_##S(const T *a, T *out, int32_t *ipiv, int32_t *info,             \
                                  int64_t batch, int64_t m, int64_t n) {                       \
    DISPATCH(getrf, S, a, out, ipiv, info, batch, m, n);                                        \
  }                                                                                            \
  MLXC_EXPORT void mlxc_geqrf_##S(const T *a, T *out, T *tau, int64_t batch, int64_t m,        \
                                  int64_t n) {                                                 \
    DISPATCH(geqrf, S, a, out, tau, batch, m, n);                                               \
  }                                                                                            \
  MLXC_EXPORT void mlxc_orgqr_##S(const T *a, const T *tau, T *q, int64_t batch, int64_t m,    \
                                  int64_t n, int64_t k) {                                      \
    DISPATCH(orgqr, S, a, tau, q, batch, m, n, k);                                              \
  }                                                                                            \
  MLXC_EXPORT void mlxc_syevd_##S(const T *a, T *v, T *w, int32_t *info, int64_t batch,        \
                                  int64_t n, int32_t lower, int32_t vectors) {                 \
    DISPATCH(syevd, S, a, v, w, info, batch, n, lower, vectors);                                \
  }                                                                                            \
  MLXC_EXPORT void mlxc_gesdd_##S(const T *a, T *a_out, T *s, T *u, T *vt, int32_t *info,      \
                                  int64_t batch, int64_t m, int64_t n, int64_t u_cols,         \
                                  int64_t vt_rows, int32_t vectors) {                          \
    DISPATCH(gesdd, S, a, a_out, s, u, vt, info, batch, m, n, u_cols, vt_rows, vectors);        \
  }

MLXC_LAPACK_ENTRIES(float, f32)
MLXC_LAPACK_ENTRIES(double, f64)

#endif
