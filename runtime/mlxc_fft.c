/* XLA's CPU FFT (ducc0's radix passes), bit for bit: see mlxc_fft.h for the contract.
 *
 * The specification is python/mlxc/lowerings/fft_complex.py (complex passes 2, 3, 4,
 * 5, 7, 8, 11 and the generic odd pass), fft_real.py (real passes radf/radb 2, 3, 4,
 * 5 and generic, halfcomplex layout) and fft_roots.py (roots of unity). Every
 * expression keeps their operand pairing and left-to-right order: a different order,
 * or a multiply-add fused into one rounding, gives results that differ from XLA's in
 * the last bit. Hence no contraction: the pragmas below for clang and GCC (checked:
 * no FMA instruction even with -O3 -march=native). CMake, the hand build and the
 * artifact build (targets/cpu/link.py) pass no -march/-mfma either.
 *
 * The file includes itself (a template in C): once per precision (float, double) for
 * the plans and the driver, and within that once per data type for the passes:
 * scalars, one line at a time, and GCC/clang vectors whose lanes are adjacent lines
 * (as ducc0 vectorizes across lines): lane for lane the same IEEE operations, so the
 * same bits, 2-4 times faster. One source file, so the artifact build and its cache,
 * which track the runtime's .c files, see every change. Plans (factors, roots,
 * twiddles) are made per call: O(n) work and O(sqrt n) libm calls per axis, small
 * beside the transform.
 */
#if defined(MLXC_FFT_DATA) /* ---- the passes on data D: R, or vectors of R ---- */

typedef struct {
  D r, i;
} V(dcmplx);
#define DC V(dcmplx)

static inline DC V(add)(DC a, DC b) { return (DC){a.r + b.r, a.i + b.i}; }
static inline DC V(sub)(DC a, DC b) { return (DC){a.r - b.r, a.i - b.i}; }

/* ducc0's special_mul: v * conj(w) forward, v * w backward. */
static inline DC V(twiddle)(DC v, RC w, int fwd) {
  if (fwd)
    return (DC){v.r * w.r + v.i * w.i, v.i * w.r - v.r * w.i};
  return (DC){v.r * w.r - v.i * w.i, v.r * w.i + v.i * w.r};
}

/* Multiplication by -i (forward) or +i: exact. */
static inline DC V(rot90)(DC a, int fwd) {
  return fwd ? (DC){a.i, -a.r} : (DC){-a.i, a.r};
}

/* The butterfly of a radix-ip pass on c[0..ip) into o[0..ip); `cs` holds the generic
 * pass's roots (ip of them), `cosv`/`sinv` the odd passes' constants. */
static ALWAYS_INLINE void V(butterfly)(int64_t ip, const DC *c, DC *o, int fwd, const RC *cs,
                                       const R *cosv, const R *sinv, R hsqt2) {
  if (ip == 2) {
    o[0] = V(add)(c[0], c[1]);
    o[1] = V(sub)(c[0], c[1]);
  } else if (ip == 4) {
    DC t2 = V(add)(c[0], c[2]), t1 = V(sub)(c[0], c[2]);
    DC t3 = V(add)(c[1], c[3]), t4 = V(sub)(c[1], c[3]);
    t4 = V(rot90)(t4, fwd);
    o[0] = V(add)(t2, t3);
    o[1] = V(add)(t1, t4);
    o[2] = V(sub)(t2, t3);
    o[3] = V(sub)(t1, t4);
  } else if (ip == 8) {
    DC a1 = V(add)(c[1], c[5]), a5 = V(sub)(c[1], c[5]);
    DC a3 = V(add)(c[3], c[7]), a7 = V(sub)(c[3], c[7]);
    DC s13 = V(add)(a1, a3), d13 = V(sub)(a1, a3);
    a1 = s13;
    a3 = V(rot90)(d13, fwd);
    a7 = V(rot90)(a7, fwd);
    DC s57 = V(add)(a5, a7), d57 = V(sub)(a5, a7);
    if (fwd) { /* rot45, rot135 */
      a5 = (DC){hsqt2 * (s57.r + s57.i), hsqt2 * (s57.i - s57.r)};
      a7 = (DC){hsqt2 * (d57.i - d57.r), hsqt2 * (-d57.r - d57.i)};
    } else {
      a5 = (DC){hsqt2 * (s57.r - s57.i), hsqt2 * (s57.i + s57.r)};
      a7 = (DC){hsqt2 * (-d57.r - d57.i), hsqt2 * (d57.r - d57.i)};
    }
    DC a0 = V(add)(c[0], c[4]), a4 = V(sub)(c[0], c[4]);
    DC a2 = V(add)(c[2], c[6]), a6 = V(sub)(c[2], c[6]);
    DC s02 = V(add)(a0, a2), d02 = V(sub)(a0, a2);
    a0 = s02;
    a2 = d02;
    a6 = V(rot90)(a6, fwd);
    DC s46 = V(add)(a4, a6), d46 = V(sub)(a4, a6);
    a4 = s46;
    a6 = d46;
    o[0] = V(add)(a0, a1);
    o[1] = V(add)(a4, a5);
    o[2] = V(add)(a2, a3);
    o[3] = V(add)(a6, a7);
    o[4] = V(sub)(a0, a1);
    o[5] = V(sub)(a4, a5);
    o[6] = V(sub)(a2, a3);
    o[7] = V(sub)(a6, a7);
  } else if (ip == 3 || ip == 5 || ip == 7 || ip == 11) {
    int64_t h = (ip - 1) / 2;
    DC t0 = c[0], sums[5], diffs[5];
    for (int64_t j = 1; j <= h; ++j) {
      sums[j - 1] = V(add)(c[j], c[ip - j]);
      diffs[j - 1] = V(sub)(c[j], c[ip - j]);
    }
    DC first = t0;
    for (int64_t j = 0; j < h; ++j)
      first = V(add)(first, sums[j]);
    o[0] = first;
    for (int64_t u = 1; u <= h; ++u) {
      R x[5], y[5];
      for (int64_t j = 1; j <= h; ++j) {
        int64_t m = (u * j) % ip;
        x[j - 1] = cosv[(m < ip - m ? m : ip - m) - 1];
        y[j - 1] = m <= h ? sinv[m - 1] : -sinv[ip - m - 1];
      }
      D ca_r = t0.r, ca_i = t0.i;
      for (int64_t j = 0; j < h; ++j) {
        ca_r = ca_r + x[j] * sums[j].r;
        ca_i = ca_i + x[j] * sums[j].i;
      }
      D cb_i = y[0] * diffs[0].r;
      D cb_r = y[0] * diffs[0].i;
      for (int64_t j = 1; j < h; ++j) {
        cb_i = cb_i + y[j] * diffs[j].r;
        cb_r = cb_r + y[j] * diffs[j].i;
      }
      DC ca = {ca_r, ca_i}, cb = {-cb_r, cb_i};
      o[u] = V(add)(ca, cb);
      o[ip - u] = V(sub)(ca, cb);
    }
  } else { /* the generic odd pass */
    int64_t ipph = (ip + 1) / 2;
    DC ch[COMPLEX_PRIME_MAX];
    ch[0] = c[0];
    for (int64_t j = 1; j < ipph; ++j) {
      ch[j] = V(add)(c[j], c[ip - j]);
      ch[ip - j] = V(sub)(c[j], c[ip - j]);
    }
    DC tmp = ch[0];
    for (int64_t j = 1; j < ipph; ++j)
      tmp = V(add)(tmp, ch[j]);
    o[0] = tmp;
    for (int64_t l = 1; l < ipph; ++l) {
      int64_t lc = ip - l;
      RC wal = cs[l], wal2 = cs[2 * l];
      D lr = ch[0].r + wal.r * ch[1].r + wal2.r * ch[2].r;
      D li = ch[0].i + wal.r * ch[1].i + wal2.r * ch[2].i;
      D lcr = (-wal.i) * ch[ip - 1].i - wal2.i * ch[ip - 2].i;
      D lci = wal.i * ch[ip - 1].r + wal2.i * ch[ip - 2].r;
      int64_t iwal = 2 * l, j = 3, jc = ip - 3;
      for (; j < ipph - 1; j += 2, jc -= 2) {
        iwal += l;
        if (iwal > ip)
          iwal -= ip;
        RC w1 = cs[iwal];
        iwal += l;
        if (iwal > ip)
          iwal -= ip;
        RC w2 = cs[iwal];
        lr = lr + (ch[j].r * w1.r + ch[j + 1].r * w2.r);
        li = li + (ch[j].i * w1.r + ch[j + 1].i * w2.r);
        lcr = lcr - (ch[jc].i * w1.i + ch[jc - 1].i * w2.i);
        lci = lci + (ch[jc].r * w1.i + ch[jc - 1].r * w2.i);
      }
      for (; j < ipph; ++j, --jc) {
        iwal += l;
        if (iwal > ip)
          iwal -= ip;
        RC w1 = cs[iwal];
        lr = lr + ch[j].r * w1.r;
        li = li + ch[j].i * w1.r;
        lcr = lcr - ch[jc].i * w1.i;
        lci = lci + ch[jc].r * w1.i;
      }
      o[l] = (DC){lr, li};
      o[lc] = (DC){lcr, lci};
    }
    for (int64_t j = 1; j < ipph; ++j) {
      int64_t jc = ip - j;
      DC a = o[j], b = o[jc];
      o[j] = V(add)(a, b);
      o[jc] = V(sub)(a, b);
    }
  }
}

/* One radix-ip pass: reads cc[a + ido*(b + ip*c)], writes ch[a + ido*(b + l1*c)].
 * Inlined with constant ip and fwd (V(cpass) below), so the butterfly's dispatch and
 * loops over ip fold away. */
static ALWAYS_INLINE void V(cpass_body)(const S(cplan) *p, int64_t ip, int64_t l1,
                                        int64_t ido, const DC *cc, DC *ch, int fwd) {
  RC cs[COMPLEX_PRIME_MAX];
  DC c[COMPLEX_PRIME_MAX], o[COMPLEX_PRIME_MAX];
  R cosv[5] = {0}, sinv[5] = {0}; /* set for ip 3, 5, 7, 11 */
  R hsqt2 = (R)HALF_SQRT2;
  if (ip == 3 || ip == 5 || ip == 7 || ip == 11) {
    for (int64_t j = 0; j < (ip - 1) / 2; ++j) {
      cosv[j] = (R)odd_cos_sin[ip][j][0];
      sinv[j] = (R)(fwd ? -1 : 1) * (R)odd_cos_sin[ip][j][1];
    }
  } else if (ip != 2 && ip != 4 && ip != 8) {
    for (int64_t j = 0; j < ip; ++j) {
      RC r = p->roots[l1 * ido * j];
      cs[j] = fwd ? (RC){r.r, -r.i} : r;
    }
  }
  for (int64_t k = 0; k < l1; ++k)
    for (int64_t i = 0; i < ido; ++i) {
      for (int64_t m = 0; m < ip; ++m)
        c[m] = cc[i + ido * (m + ip * k)];
      V(butterfly)(ip, c, o, fwd, cs, cosv, sinv, hsqt2);
      ch[i + ido * k] = o[0];
      if (i == 0)
        for (int64_t m = 1; m < ip; ++m)
          ch[ido * (k + l1 * m)] = o[m];
      else
        for (int64_t m = 1; m < ip; ++m)
          ch[i + ido * (k + l1 * m)] = V(twiddle)(o[m], p->roots[m * l1 * i], fwd);
    }
}

static void V(cpass)(const S(cplan) *p, int64_t ip, int64_t l1, int64_t ido, const DC *cc,
                     DC *ch, int fwd) {
#define CPASS_CASE(P)                                                                     \
  case P:                                                                                 \
    if (fwd)                                                                              \
      V(cpass_body)(p, P, l1, ido, cc, ch, 1);                                            \
    else                                                                                  \
      V(cpass_body)(p, P, l1, ido, cc, ch, 0);                                            \
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
    V(cpass_body)(p, ip, l1, ido, cc, ch, fwd);
  }
#undef CPASS_CASE
}

/* The transform of a[0..n) (b is scratch of n); returns the buffer holding it. */
static DC *V(c2c_line)(const S(cplan) *p, DC *a, DC *b, int fwd, R fct) {
  int64_t l1 = 1;
  for (int k = 0; k < p->nf; ++k) {
    int64_t ip = p->f[k], ido = p->n / (l1 * ip);
    V(cpass)(p, ip, l1, ido, a, b, fwd);
    DC *t = a;
    a = b;
    b = t;
    l1 *= ip;
  }
  if (fct != (R)1)
    for (int64_t k = 0; k < p->n; ++k)
      a[k] = (DC){a[k].r * fct, a[k].i * fct};
  return a;
}

#define PM(a, b, c, d)                                                                    \
  do {                                                                                    \
    D pm_c_ = (c), pm_d_ = (d);                                                           \
    a = pm_c_ + pm_d_;                                                                    \
    b = pm_c_ - pm_d_;                                                                    \
  } while (0)
/* (a + ib) = conj(c + id) * (e + if) */
#define MULPM(a, b, c, d, e, f)                                                           \
  do {                                                                                    \
    D mp_a_ = (c) * (e) + (d) * (f);                                                      \
    D mp_b_ = (c) * (f) - (d) * (e);                                                      \
    a = mp_a_;                                                                            \
    b = mp_b_;                                                                            \
  } while (0)
/* (x, y) -> (x + y, i (y - x)) */
#define REARRANGE(rx, ix, ry, iy)                                                         \
  do {                                                                                    \
    D ra_rx_ = rx, ra_ix_ = ix, ra_ry_ = ry, ra_iy_ = iy;                                 \
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
static void V(radf2)(int64_t l1, int64_t ido, const R *wa, const D *cc, D *ch) {
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
      D tr2, ti2;
      MULPM(tr2, ti2, WA(0, i - 2), WA(0, i - 1), FCC(i - 1, k, 1), FCC(i, k, 1));
      PM(FCH(i - 1, 0, k), FCH(ic - 1, 1, k), FCC(i - 1, k, 0), tr2);
      PM(FCH(i, 0, k), FCH(ic, 1, k), ti2, FCC(i, k, 0));
    }
}

static void V(radb2)(int64_t l1, int64_t ido, const R *wa, const D *cc, D *ch) {
  for (int64_t k = 0; k < l1; ++k)
    PM(BCH(0, k, 0), BCH(0, k, 1), BCC(0, 0, k), BCC(ido - 1, 1, k));
  if (ido % 2 == 0)
    for (int64_t k = 0; k < l1; ++k) {
      BCH(ido - 1, k, 0) = (R)2 * BCC(ido - 1, 0, k);
      BCH(ido - 1, k, 1) = (R)-2 * BCC(0, 1, k);
    }
  if (ido <= 2)
    return;
  for (int64_t k = 0; k < l1; ++k)
    for (int64_t i = 2; i < ido; i += 2) {
      int64_t ic = ido - i;
      D tr2, ti2;
      PM(BCH(i - 1, k, 0), tr2, BCC(i - 1, 0, k), BCC(ic - 1, 1, k));
      PM(ti2, BCH(i, k, 0), BCC(i, 0, k), BCC(ic, 1, k));
      MULPM(BCH(i, k, 1), BCH(i - 1, k, 1), WA(0, i - 2), WA(0, i - 1), ti2, tr2);
    }
}
#undef IP

#define IP 3
static void V(radf3)(int64_t l1, int64_t ido, const R *wa, const D *cc, D *ch) {
  const R taur = (R)-0.5, taui = (R)TAUI;
  for (int64_t k = 0; k < l1; ++k) {
    D cr2 = FCC(0, k, 1) + FCC(0, k, 2);
    FCH(0, 0, k) = FCC(0, k, 0) + cr2;
    FCH(0, 2, k) = taui * (FCC(0, k, 2) - FCC(0, k, 1));
    FCH(ido - 1, 1, k) = FCC(0, k, 0) + taur * cr2;
  }
  if (ido == 1)
    return;
  for (int64_t k = 0; k < l1; ++k)
    for (int64_t i = 2; i < ido; i += 2) {
      int64_t ic = ido - i;
      D dr2, di2, dr3, di3;
      MULPM(dr2, di2, WA(0, i - 2), WA(0, i - 1), FCC(i - 1, k, 1), FCC(i, k, 1));
      MULPM(dr3, di3, WA(1, i - 2), WA(1, i - 1), FCC(i - 1, k, 2), FCC(i, k, 2));
      REARRANGE(dr2, di2, dr3, di3);
      FCH(i - 1, 0, k) = FCC(i - 1, k, 0) + dr2;
      FCH(i, 0, k) = FCC(i, k, 0) + di2;
      D tr2 = FCC(i - 1, k, 0) + taur * dr2;
      D ti2 = FCC(i, k, 0) + taur * di2;
      D tr3 = taui * dr3;
      D ti3 = taui * di3;
      PM(FCH(i - 1, 2, k), FCH(ic - 1, 1, k), tr2, tr3);
      PM(FCH(i, 2, k), FCH(ic, 1, k), ti3, ti2);
    }
}

static void V(radb3)(int64_t l1, int64_t ido, const R *wa, const D *cc, D *ch) {
  const R taur = (R)-0.5, taui = (R)TAUI;
  for (int64_t k = 0; k < l1; ++k) {
    D tr2 = (R)2 * BCC(ido - 1, 1, k);
    D cr2 = BCC(0, 0, k) + taur * tr2;
    BCH(0, k, 0) = BCC(0, 0, k) + tr2;
    D ci3 = (R)2 * taui * BCC(0, 2, k);
    PM(BCH(0, k, 2), BCH(0, k, 1), cr2, ci3);
  }
  if (ido == 1)
    return;
  for (int64_t k = 0; k < l1; ++k)
    for (int64_t i = 2; i < ido; i += 2) {
      int64_t ic = ido - i;
      D tr2 = BCC(i - 1, 2, k) + BCC(ic - 1, 1, k);
      D ti2 = BCC(i, 2, k) - BCC(ic, 1, k);
      D cr2 = BCC(i - 1, 0, k) + taur * tr2;
      D ci2 = BCC(i, 0, k) + taur * ti2;
      BCH(i - 1, k, 0) = BCC(i - 1, 0, k) + tr2;
      BCH(i, k, 0) = BCC(i, 0, k) + ti2;
      D cr3 = taui * (BCC(i - 1, 2, k) - BCC(ic - 1, 1, k));
      D ci3 = taui * (BCC(i, 2, k) + BCC(ic, 1, k));
      D dr2, dr3, di2, di3;
      PM(dr3, dr2, cr2, ci3);
      PM(di2, di3, ci2, cr3);
      MULPM(BCH(i, k, 1), BCH(i - 1, k, 1), WA(0, i - 2), WA(0, i - 1), di2, dr2);
      MULPM(BCH(i, k, 2), BCH(i - 1, k, 2), WA(1, i - 2), WA(1, i - 1), di3, dr3);
    }
}
#undef IP

#define IP 4
static void V(radf4)(int64_t l1, int64_t ido, const R *wa, const D *cc, D *ch) {
  const R hsqt2 = (R)HALF_SQRT2;
  for (int64_t k = 0; k < l1; ++k) {
    D tr1, tr2;
    PM(tr1, FCH(0, 2, k), FCC(0, k, 3), FCC(0, k, 1));
    PM(tr2, FCH(ido - 1, 1, k), FCC(0, k, 0), FCC(0, k, 2));
    PM(FCH(0, 0, k), FCH(ido - 1, 3, k), tr2, tr1);
  }
  if (ido % 2 == 0)
    for (int64_t k = 0; k < l1; ++k) {
      D ti1 = -hsqt2 * (FCC(ido - 1, k, 1) + FCC(ido - 1, k, 3));
      D tr1 = hsqt2 * (FCC(ido - 1, k, 1) - FCC(ido - 1, k, 3));
      PM(FCH(ido - 1, 0, k), FCH(ido - 1, 2, k), FCC(ido - 1, k, 0), tr1);
      PM(FCH(0, 3, k), FCH(0, 1, k), ti1, FCC(ido - 1, k, 2));
    }
  if (ido <= 2)
    return;
  for (int64_t k = 0; k < l1; ++k)
    for (int64_t i = 2; i < ido; i += 2) {
      int64_t ic = ido - i;
      D cr2, ci2, cr3, ci3, cr4, ci4, tr1, tr2, tr3, tr4, ti1, ti2, ti3, ti4;
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

static void V(radb4)(int64_t l1, int64_t ido, const R *wa, const D *cc, D *ch) {
  const R sqrt2 = (R)SQRT2;
  for (int64_t k = 0; k < l1; ++k) {
    D tr1, tr2;
    PM(tr2, tr1, BCC(0, 0, k), BCC(ido - 1, 3, k));
    D tr3 = (R)2 * BCC(ido - 1, 1, k);
    D tr4 = (R)2 * BCC(0, 2, k);
    PM(BCH(0, k, 0), BCH(0, k, 2), tr2, tr3);
    PM(BCH(0, k, 3), BCH(0, k, 1), tr1, tr4);
  }
  if (ido % 2 == 0)
    for (int64_t k = 0; k < l1; ++k) {
      D ti1, ti2, tr1, tr2;
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
      D tr1, tr2, tr3, tr4, ti1, ti2, ti3, ti4, cr2, cr3, cr4, ci2, ci3, ci4;
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
static void V(radf5)(int64_t l1, int64_t ido, const R *wa, const D *cc, D *ch) {
  const R tr11 = (R)TR11, ti11 = (R)TI11, tr12 = (R)TR12, ti12 = (R)TI12;
  for (int64_t k = 0; k < l1; ++k) {
    D cr2, ci5, cr3, ci4;
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
      D dr2, di2, dr3, di3, dr4, di4, dr5, di5;
      MULPM(dr2, di2, WA(0, i - 2), WA(0, i - 1), FCC(i - 1, k, 1), FCC(i, k, 1));
      MULPM(dr3, di3, WA(1, i - 2), WA(1, i - 1), FCC(i - 1, k, 2), FCC(i, k, 2));
      MULPM(dr4, di4, WA(2, i - 2), WA(2, i - 1), FCC(i - 1, k, 3), FCC(i, k, 3));
      MULPM(dr5, di5, WA(3, i - 2), WA(3, i - 1), FCC(i - 1, k, 4), FCC(i, k, 4));
      REARRANGE(dr2, di2, dr5, di5);
      REARRANGE(dr3, di3, dr4, di4);
      FCH(i - 1, 0, k) = FCC(i - 1, k, 0) + dr2 + dr3;
      FCH(i, 0, k) = FCC(i, k, 0) + di2 + di3;
      D tr2 = FCC(i - 1, k, 0) + tr11 * dr2 + tr12 * dr3;
      D ti2 = FCC(i, k, 0) + tr11 * di2 + tr12 * di3;
      D tr3 = FCC(i - 1, k, 0) + tr12 * dr2 + tr11 * dr3;
      D ti3 = FCC(i, k, 0) + tr12 * di2 + tr11 * di3;
      D tr5 = ti11 * dr5 + ti12 * dr4;
      D ti5 = ti11 * di5 + ti12 * di4;
      D tr4 = ti12 * dr5 - ti11 * dr4;
      D ti4 = ti12 * di5 - ti11 * di4;
      PM(FCH(i - 1, 2, k), FCH(ic - 1, 1, k), tr2, tr5);
      PM(FCH(i, 2, k), FCH(ic, 1, k), ti5, ti2);
      PM(FCH(i - 1, 4, k), FCH(ic - 1, 3, k), tr3, tr4);
      PM(FCH(i, 4, k), FCH(ic, 3, k), ti4, ti3);
    }
}

static void V(radb5)(int64_t l1, int64_t ido, const R *wa, const D *cc, D *ch) {
  const R tr11 = (R)TR11, ti11 = (R)TI11, tr12 = (R)TR12, ti12 = (R)TI12;
  for (int64_t k = 0; k < l1; ++k) {
    D ti5 = BCC(0, 2, k) + BCC(0, 2, k);
    D ti4 = BCC(0, 4, k) + BCC(0, 4, k);
    D tr2 = BCC(ido - 1, 1, k) + BCC(ido - 1, 1, k);
    D tr3 = BCC(ido - 1, 3, k) + BCC(ido - 1, 3, k);
    BCH(0, k, 0) = BCC(0, 0, k) + tr2 + tr3;
    D cr2 = BCC(0, 0, k) + tr11 * tr2 + tr12 * tr3;
    D cr3 = BCC(0, 0, k) + tr12 * tr2 + tr11 * tr3;
    D ci5, ci4;
    MULPM(ci5, ci4, ti5, ti4, ti11, ti12);
    PM(BCH(0, k, 4), BCH(0, k, 1), cr2, ci5);
    PM(BCH(0, k, 3), BCH(0, k, 2), cr3, ci4);
  }
  if (ido == 1)
    return;
  for (int64_t k = 0; k < l1; ++k)
    for (int64_t i = 2; i < ido; i += 2) {
      int64_t ic = ido - i;
      D tr2, tr3, tr4, tr5, ti2, ti3, ti4, ti5;
      PM(tr2, tr5, BCC(i - 1, 2, k), BCC(ic - 1, 1, k));
      PM(ti5, ti2, BCC(i, 2, k), BCC(ic, 1, k));
      PM(tr3, tr4, BCC(i - 1, 4, k), BCC(ic - 1, 3, k));
      PM(ti4, ti3, BCC(i, 4, k), BCC(ic, 3, k));
      BCH(i - 1, k, 0) = BCC(i - 1, 0, k) + tr2 + tr3;
      BCH(i, k, 0) = BCC(i, 0, k) + ti2 + ti3;
      D cr2 = BCC(i - 1, 0, k) + tr11 * tr2 + tr12 * tr3;
      D ci2 = BCC(i, 0, k) + tr11 * ti2 + tr12 * ti3;
      D cr3 = BCC(i - 1, 0, k) + tr12 * tr2 + tr11 * tr3;
      D ci3 = BCC(i, 0, k) + tr12 * ti2 + tr11 * ti3;
      D cr4, cr5, ci4, ci5, dr2, dr3, dr4, dr5, di2, di3, di4, di5;
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

/* dst[l] and dst[ip-l] += the rest of the sums over j, in ducc0's groups of four,
 * two and one terms; `wrap_at_ip` is radfg's iang >= ip (radbg's is iang > ip). */
static void V(accumulate)(const R *cs, D *dst, const D *src, int64_t l, int64_t ip,
                          int64_t ipph, int64_t idl1, int wrap_at_ip) {
  int64_t lc = ip - l, iang = 2 * l, j = 3, jc = ip - 3;
  static const int groups[3] = {4, 2, 1};
  for (int g = 0; g < 3; ++g) {
    int group = groups[g];
    while (j < ipph - (group - 1)) {
      R ar[4], ai[4];
      for (int m = 0; m < group; ++m) {
        iang += l;
        if (wrap_at_ip ? iang >= ip : iang > ip)
          iang -= ip;
        ar[m] = cs[2 * iang];
        ai[m] = cs[2 * iang + 1];
      }
      for (int64_t ik = 0; ik < idl1; ++ik) {
        D sr = ar[0] * src[ik + idl1 * j];
        D si = ai[0] * src[ik + idl1 * jc];
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
static D *V(radfg)(const RC *roots, int64_t l1, int64_t ido, int64_t ip, const R *wa,
                   D *cc, D *ch) {
  R cs[2 * REAL_PRIME_MAX];
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
          D t1 = C1(i, k, j), t2 = C1(i + 1, k, j);
          D t3 = C1(i, k, jc), t4 = C1(i + 1, k, jc);
          D x1 = wa[idij] * t1 + wa[idij + 1] * t2;
          D x2 = wa[idij] * t2 - wa[idij + 1] * t1;
          D x3 = wa[idij2] * t3 + wa[idij2 + 1] * t4;
          D x4 = wa[idij2] * t4 - wa[idij2 + 1] * t3;
          PM(C1(i, k, j), C1(i + 1, k, jc), x3, x1);
          PM(C1(i + 1, k, j), C1(i, k, jc), x2, x4);
        }
      }
    }
  for (int64_t j = 1; j < ipph; ++j) {
    int64_t jc = ip - j;
    for (int64_t k = 0; k < l1; ++k) {
      D a = C1(0, k, jc), b = C1(0, k, j);
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
    V(accumulate)(cs, ch, cc, l, ip, ipph, idl1, 1);
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
static D *V(radbg)(const RC *roots, int64_t l1, int64_t ido, int64_t ip, const R *wa,
                   D *cc, D *ch) {
  R cs[2 * REAL_PRIME_MAX];
  S(cos_sin_table)(roots, l1, ido, ip, cs);
  int64_t ipph = (ip + 1) / 2, idl1 = ido * l1;
#define CH2(a, b) ch[(a) + idl1 * (b)]
  for (int64_t k = 0; k < l1; ++k)
    for (int64_t i = 0; i < ido; ++i)
      GCH(i, k, 0) = GCC_(i, 0, k);
  for (int64_t j = 1; j < ipph; ++j) {
    int64_t jc = ip - j, j2 = 2 * j - 1;
    for (int64_t k = 0; k < l1; ++k) {
      GCH(0, k, j) = (R)2 * GCC_(ido - 1, j2, k);
      GCH(0, k, jc) = (R)2 * GCC_(0, j2 + 1, k);
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
    V(accumulate)(cs, cc, ch, l, ip, ipph, idl1, 0);
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
        D t1 = GCH(i, k, j), t2 = GCH(i + 1, k, j);
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
static D *V(r2c_line)(const S(rplan) *p, D *a, D *b, R fct) {
  for (int k = p->np - 1; k >= 0; --k) {
    const S(rpass) *q = &p->passes[k];
    D *res;
    switch (q->ip) {
    case 2: V(radf2)(q->l1, q->ido, q->wa, a, b); res = b; break;
    case 3: V(radf3)(q->l1, q->ido, q->wa, a, b); res = b; break;
    case 4: V(radf4)(q->l1, q->ido, q->wa, a, b); res = b; break;
    case 5: V(radf5)(q->l1, q->ido, q->wa, a, b); res = b; break;
    default: res = V(radfg)(p->roots, q->l1, q->ido, q->ip, q->wa, a, b);
    }
    if (res == b) {
      b = a;
      a = res;
    }
  }
  if (fct != (R)1)
    for (int64_t k = 0; k < p->n; ++k)
      a[k] = a[k] * fct;
  return a;
}

/* Backward real transform of the halfcomplex a[0..n) (b is scratch), times fct. */
static D *V(c2r_line)(const S(rplan) *p, D *a, D *b, R fct) {
  for (int k = 0; k < p->np; ++k) {
    const S(rpass) *q = &p->passes[k];
    switch (q->ip) {
    case 2: V(radb2)(q->l1, q->ido, q->wa, a, b); break;
    case 3: V(radb3)(q->l1, q->ido, q->wa, a, b); break;
    case 4: V(radb4)(q->l1, q->ido, q->wa, a, b); break;
    case 5: V(radb5)(q->l1, q->ido, q->wa, a, b); break;
    default: V(radbg)(p->roots, q->l1, q->ido, q->ip, q->wa, a, b);
    }
    D *t = a;
    a = b;
    b = t;
  }
  if (fct != (R)1)
    for (int64_t k = 0; k < p->n; ++k)
      a[k] = a[k] * fct;
  return a;
}

/* LANES lines from `line` on through one axis (job->kind: 0 c2c, 1 r2c, 2 c2r): each
 * lane of the data type holds one line; buf holds 2n DC. */
static void V(lines)(const S(axis_job) *job, int64_t line, DC *buf) {
  int64_t n = job->n, inner = job->inner, h = n / 2 + 1;
  if (job->kind == 0) {
    const RC *src = (const RC *)job->src;
    RC *dst = (RC *)job->dst;
    int64_t base[LANES]; /* line (o, j) starts at o * n * inner + j */
    for (int v = 0; v < LANES; ++v)
      base[v] = (line + v) / inner * n * inner + (line + v) % inner;
    for (int64_t t = 0; t < n; ++t)
      for (int v = 0; v < LANES; ++v) {
        RC x = src[base[v] + t * inner];
        LANE(buf[t].r, v) = x.r;
        LANE(buf[t].i, v) = x.i;
      }
    DC *res = V(c2c_line)(job->cp, buf, buf + n, job->fwd, job->fct);
    for (int64_t t = 0; t < n; ++t)
      for (int v = 0; v < LANES; ++v)
        dst[base[v] + t * inner] = (RC){LANE(res[t].r, v), LANE(res[t].i, v)};
  } else if (job->kind == 1) { /* the last axis: inner == 1 */
    const R *src = (const R *)job->src + line * n;
    D *a = (D *)buf;
    for (int64_t t = 0; t < n; ++t)
      for (int v = 0; v < LANES; ++v)
        LANE(a[t], v) = src[v * n + t];
    D *res = V(r2c_line)(job->rp, a, a + n, job->fct);
    for (int v = 0; v < LANES; ++v) {
      RC *dst = (RC *)job->dst + (line + v) * h;
      dst[0] = (RC){LANE(res[0], v), (R)0};
      int64_t i = 1, k = 1;
      for (; i < n - 1; i += 2)
        dst[k++] = (RC){LANE(res[i], v), LANE(res[i + 1], v)};
      if (i < n)
        dst[k] = (RC){LANE(res[i], v), (R)0};
    }
  } else { /* c2r on the last axis: the imaginary parts of X[0] (X[n/2]) unread */
    D *a = (D *)buf;
    for (int v = 0; v < LANES; ++v) {
      const RC *src = (const RC *)job->src + (line + v) * h;
      LANE(a[0], v) = src[0].r;
      int64_t i = 1;
      for (int64_t k = 1; k <= (n - 1) / 2; ++k) {
        LANE(a[i], v) = src[k].r;
        LANE(a[i + 1], v) = src[k].i;
        i += 2;
      }
      if (n % 2 == 0 && n > 1)
        LANE(a[i], v) = src[n / 2].r;
    }
    D *res = V(c2r_line)(job->rp, a, a + n, job->fct);
    R *dst = (R *)job->dst + line * n;
    for (int v = 0; v < LANES; ++v)
      for (int64_t t = 0; t < n; ++t)
        dst[v * n + t] = LANE(res[t], v);
  }
}

#undef PM
#undef MULPM
#undef REARRANGE
#undef WA
#undef FCC
#undef FCH
#undef BCC
#undef BCH
#undef DC

#elif defined(MLXC_FFT_T) /* ---- plans and the driver for one precision R ---- */

typedef MLXC_FFT_T S(real);
#define R S(real)
typedef struct {
  R r, i;
} S(cmplx);
#define RC S(cmplx)

/* The n roots of unity rounded to R (NULL when memory ran out). */
static RC *S(roots)(int64_t n) {
  double *d = malloc(sizeof(double) * 2 * (size_t)n);
  RC *r = malloc(sizeof(RC) * (size_t)n);
  if (!d || !r || unity_roots(n, d) != 0) {
    free(d);
    free(r);
    return NULL;
  }
  for (int64_t k = 0; k < n; ++k)
    r[k] = (RC){(R)d[2 * k], (R)d[2 * k + 1]};
  free(d);
  return r;
}

/* ---- complex plans ---- */

typedef struct {
  int64_t n;
  int nf;
  int64_t f[MAX_FACTORS];
  RC *roots;
} S(cplan);

static int S(cplan_make)(S(cplan) *p, int64_t n) {
  p->n = n;
  p->nf = n > 1 ? complex_factors(n, p->f) : 0;
  p->roots = S(roots)(n);
  return p->roots ? 0 : -1;
}

/* ---- real plans ---- */

typedef struct {
  int64_t l1, ido, ip;
  R *wa; /* (ip - 1) * (ido - 1): re, im of root j * l1 * i, as ducc0 lays them out */
} S(rpass);

typedef struct {
  int64_t n;
  int np;
  S(rpass) passes[MAX_FACTORS];
  RC *roots;
  R *wa;
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
  p->wa = malloc(sizeof(R) * (size_t)total);
  if (!p->wa)
    return -1;
  R *wa = p->wa;
  l1 = 1;
  for (int k = 0; k < p->np; ++k) {
    int64_t ip = f[k], ido = n / (ip * l1);
    p->passes[k] = (S(rpass)){l1, ido, ip, wa};
    for (int64_t j = 1; j < ip; ++j)
      for (int64_t i = 1; i <= (ido - 1) / 2; ++i) {
        RC r = p->roots[j * l1 * i];
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

/* csarr[2m], csarr[2m+1] = re, im of exp(2 pi i m / ip), mirrored for m > ip/2. */
static void S(cos_sin_table)(const RC *roots, int64_t l1, int64_t ido, int64_t ip, R *cs) {
  cs[0] = (R)1;
  cs[1] = (R)0;
  for (int64_t i = 2, ic = 2 * ip - 2; i <= ic; i += 2, ic -= 2) {
    RC r = roots[(i / 2) * l1 * ido];
    cs[i] = r.r;
    cs[i + 1] = r.i;
    cs[ic] = r.r;
    cs[ic + 1] = -r.i;
  }
}

/* ---- one axis over all lines, on the pool ---- */

typedef struct {
  int kind; /* 0: c2c, 1: r2c, 2: c2r */
  const void *src;
  void *dst;
  int64_t n, inner; /* line t-th element at (o * n + t) * inner + j */
  int fwd;
  R fct;
  const S(cplan) *cp;
  const S(rplan) *rp;
  int failed;
} S(axis_job);

/* The passes, once on scalars (one line at a time) and once on vectors whose lanes are
 * lines: each lane does exactly the scalar operations, so the bits are the same. */
#define MLXC_FFT_DATA
#define D R
#define V(name) S(name##_1)
#define LANES 1
#define LANE(x, v) (x)
#include "mlxc_fft.c"
#undef D
#undef V
#undef LANES
#undef LANE
#ifdef MLXC_FFT_VECTORS
typedef R S(vec) __attribute__((vector_size(16)));
enum { S(lanes) = (int)(sizeof(S(vec)) / sizeof(R)) };
#define D S(vec)
#define V(name) S(name##_v)
#define LANES S(lanes)
#define LANE(x, v) (x)[v]
#include "mlxc_fft.c"
#undef D
#undef V
#undef LANES
#undef LANE
typedef S(vec) S(widest);
#else
typedef R S(widest);
#endif
#undef MLXC_FFT_DATA

static void S(axis_lines)(const void *ctx, int64_t begin, int64_t end) {
  S(axis_job) *job = (S(axis_job) *)ctx;
  size_t bytes = (2 * sizeof(S(widest)) * 2 * (size_t)job->n + 63) / 64 * 64;
#if defined(MLXC_FFT_VECTORS) && !defined(_WIN32)
  void *buf = aligned_alloc(64, bytes); /* vectors want their own alignment */
#else
  void *buf = malloc(bytes);
#endif
  if (!buf) {
    job->failed = 1;
    return;
  }
  int64_t line = begin;
#ifdef MLXC_FFT_VECTORS
  for (; line + S(lanes) <= end; line += S(lanes))
    S(lines_v)(job, line, buf);
#endif
  for (; line < end; ++line)
    S(lines_1)(job, line, buf);
  free(buf);
}

static int S(run_axis)(S(axis_job) *job, int64_t lines, int32_t threads) {
  job->failed = 0;
  mlxc_parallel_range(lines, threads_for(lines, job->n, threads), S(axis_lines), job);
  return job->failed ? -1 : 0;
}

static int S(c2c_axis)(const void *src, void *dst, int64_t outer, int64_t n, int64_t inner,
                       int fwd, R fct, int32_t threads) {
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

static int S(real_axis)(int kind, const void *src, void *dst, int64_t lines, int64_t n, R fct,
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
  R inv = (R)(1.0 / scale), one = (R)1;
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
  RC *tmp = malloc(sizeof(RC) * (size_t)(lines * half));
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

#undef R
#undef RC

#else /* ---- common: factors, roots, entry points ---- */

/* No fused multiply-adds (see the top): clang honours the standard pragma; GCC needs
 * fp-contract=off, and its auto-vectorizers off too, since with -mfma they make
 * vfmaddsub of complex products even then (GCC 12). The explicit vectors below are
 * unaffected. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off", "no-tree-vectorize", "no-tree-slp-vectorize")
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
/* GCC's and clang's vector types: elementwise IEEE operations, one line per lane */
#define MLXC_FFT_VECTORS 1
#else
#define ALWAYS_INLINE inline
#endif

/* ---- plans: factors and the roots of unity (fft_roots.py) ---- */

/* ducc0's factor order: 8s (complex transforms only), 4s, a 2 swapped to the front,
   odd factors ascending. */
static int factors_from(int64_t n, int64_t first_radix, int64_t *f) {
  int nf = 0;
  for (int64_t radix = first_radix; radix >= 4; radix /= 2)
    while (n % radix == 0) {
      f[nf++] = radix;
      n /= radix;
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

static int complex_factors(int64_t n, int64_t *f) { return factors_from(n, 8, f); }

static int real_factors(int64_t n, int64_t *f) { return factors_from(n, 4, f); }

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

/* exp(2 pi i x / n) in double, from the cos and sin of an angle below pi / 4; the
 * lower half plane is the conjugate of the upper (x -> n - x). */
static void octant_root(int64_t x, int64_t n, double ang, double *re, double *im) {
  x <<= 3;
  int lower = x >= 4 * n;
  if (lower)
    x = 8 * n - x;
  if (x < 2 * n) {
    if (x < n) {
      *re = cos_fn((double)x * ang);
      *im = sin_fn((double)x * ang);
    } else {
      *re = sin_fn((double)(2 * n - x) * ang);
      *im = cos_fn((double)(2 * n - x) * ang);
    }
  } else {
    x -= 2 * n;
    if (x < n) {
      *re = -sin_fn((double)x * ang);
      *im = cos_fn((double)x * ang);
    } else {
      *re = -cos_fn((double)(2 * n - x) * ang);
      *im = sin_fn((double)(2 * n - x) * ang);
    }
  }
  if (lower)
    *im = -*im;
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

/* One entry point per operand/result element-type pair (an MLIR declaration has one
 * signature); each runs the whole transform of its precision. */
#define MLXC_FFT_ENTRY(name, impl)                                                     \
  MLXC_EXPORT void name(const void *in, void *out, int64_t batch, int64_t n0, int64_t n1, \
                        int64_t n2, int32_t rank, int32_t kind, int32_t threads) {      \
    checked(impl(in, out, batch, n0, n1, n2, rank, kind, threads), #name);            \
  }

MLXC_FFT_ENTRY(mlxc_fft_c64, mlxc_fft_f32)
MLXC_FFT_ENTRY(mlxc_fft_c128, mlxc_fft_f64)
MLXC_FFT_ENTRY(mlxc_rfft_f32, mlxc_fft_f32)
MLXC_FFT_ENTRY(mlxc_rfft_f64, mlxc_fft_f64)
MLXC_FFT_ENTRY(mlxc_irfft_f32, mlxc_fft_f32)
MLXC_FFT_ENTRY(mlxc_irfft_f64, mlxc_fft_f64)

#endif
