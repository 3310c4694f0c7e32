/* The dtypes s8, s16, s64, u16, u32, u64, f16, bf16 (and token) through HLO
 * text, the evaluator and the runtime. Expected values are computed here
 * from first principles: integers exactly in 128 bits then reduced modulo
 * 2^bits, with XLA's rules for x/0 (-1) and MIN/-1 (MIN); halves decoded
 * from their fields, the op done in f32, and rounded to the nearest half
 * (ties to the even pattern) by searching the two neighbours. Inputs are
 * edge-heavy: each type's limits, -1/0/1, signed zeros, the smallest
 * subnormal, the largest finite, inf and NaNs, then pseudo-random bit
 * patterns. Sizes 1, 7, 256, 257 and 1000 cross the runtime's 256-element
 * chunks; every case runs at levels NONE and FULL on 1 and 2 threads. */
#include <math.h>

#include "tests/exec/exec_util.h"

typedef __int128 i128;

static const optic_dtype halves[] = {OPTIC_F16, OPTIC_BF16};
static const size_t sizes[] = {1, 7, 256, 257, 1000};

/* ------------------------------------------------------------ references */

static int bits_of(optic_dtype d) { return (int)optic_dtype_size(d) * 8; }
static bool is_signed(optic_dtype d) { return d == OPTIC_S8 || d == OPTIC_S16 || d == OPTIC_S32 || d == OPTIC_S64; }

static i128 int_min(optic_dtype d) { return is_signed(d) ? -((i128)1 << (bits_of(d) - 1)) : 0; }
static i128 int_max(optic_dtype d) {
  return is_signed(d) ? ((i128)1 << (bits_of(d) - 1)) - 1 : ((i128)1 << bits_of(d)) - 1;
}

/* v modulo 2^bits into the dtype's range. */
static i128 wrap(optic_dtype d, i128 v) {
  i128 m = (i128)1 << bits_of(d);
  i128 r = v % m;
  if (r < 0) r += m;
  if (is_signed(d) && r > int_max(d)) r -= m;
  return r;
}

static i128 get_int(optic_dtype d, const void *p, size_t i) {
  switch (d) {
    case OPTIC_S8: return ((const int8_t *)p)[i];
    case OPTIC_S16: return ((const int16_t *)p)[i];
    case OPTIC_S32: return ((const int32_t *)p)[i];
    case OPTIC_S64: return ((const int64_t *)p)[i];
    case OPTIC_U8: return ((const uint8_t *)p)[i];
    case OPTIC_U16: return ((const uint16_t *)p)[i];
    case OPTIC_U32: return ((const uint32_t *)p)[i];
    default: return ((const uint64_t *)p)[i];
  }
}

static void put_int(optic_dtype d, void *p, size_t i, i128 v) {
  switch (d) {
    case OPTIC_S8: ((int8_t *)p)[i] = (int8_t)v; break;
    case OPTIC_S16: ((int16_t *)p)[i] = (int16_t)v; break;
    case OPTIC_S32: ((int32_t *)p)[i] = (int32_t)v; break;
    case OPTIC_S64: ((int64_t *)p)[i] = (int64_t)v; break;
    case OPTIC_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case OPTIC_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case OPTIC_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    default: ((uint64_t *)p)[i] = (uint64_t)v; break;
  }
}

static double hdecode(optic_dtype d, uint16_t h) {
  bool f16 = d == OPTIC_F16;
  int mb = f16 ? 10 : 7, eb = f16 ? 5 : 8, bias = f16 ? 15 : 127;
  int e = (h >> mb) & ((1 << eb) - 1), m = h & ((1 << mb) - 1);
  double v;
  if (e == (1 << eb) - 1) v = m ? NAN : INFINITY;
  else if (e == 0) v = ldexp(m, 1 - bias - mb);
  else v = ldexp((1 << mb) + m, e - bias - mb);
  return (h & 0x8000) ? -v : v;
}

/* The half nearest x, ties to the even pattern (NaN: a quiet NaN). */
static uint16_t hround(optic_dtype d, double x) {
  bool f16 = d == OPTIC_F16;
  uint16_t inf = f16 ? 0x7C00 : 0x7F80, sign = signbit(x) ? 0x8000 : 0;
  if (isnan(x)) return f16 ? 0x7E00 : 0x7FC0;
  double a = fabs(x);
  if (isinf(a)) return sign | inf;
  uint16_t lo = 0, hi = (uint16_t)(inf - 1); /* largest pattern with value <= a */
  if (a >= hdecode(d, hi)) {
    lo = hi;
  } else {
    while (lo + 1 < hi) {
      uint16_t mid = (uint16_t)((lo + hi) / 2);
      if (hdecode(d, mid) <= a) lo = mid;
      else hi = mid;
    }
  }
  double vlo = hdecode(d, lo), vhi = lo == inf - 1 ? ldexp(1, f16 ? 16 : 128) : hdecode(d, (uint16_t)(lo + 1));
  double dl = a - vlo, dh = vhi - a;
  uint16_t r = dl < dh ? lo : dh < dl ? (uint16_t)(lo + 1) : (lo & 1) ? (uint16_t)(lo + 1) : lo;
  return sign | r;
}

/* ------------------------------------------------------------ inputs */

static uint64_t rng_state = 0x1234567;
static uint64_t next_u64(void) {
  uint64_t x = (rng_state += 0x9e3779b97f4a7c15ull);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static void fill_int(optic_dtype d, void *p, size_t n, int which) {
  const i128 lo = int_min(d), hi = int_max(d);
  const i128 edges[] = {lo, lo + 1, hi, hi - 1, 0, 1, 2, is_signed(d) ? -1 : hi / 2, is_signed(d) ? -2 : hi / 2 + 1};
  size_t ne = sizeof edges / sizeof edges[0];
  for (size_t i = 0; i < n; i++) {
    /* operand `which` walks the edge table at another speed, so edge meets edge */
    i128 v = i < ne * ne ? edges[(which ? i / ne : i) % ne] : wrap(d, (i128)next_u64());
    put_int(d, p, i, v);
  }
}

static void fill_half(optic_dtype d, uint16_t *p, size_t n, int which) {
  bool f16 = d == OPTIC_F16;
  const uint16_t edges[] = {0x0000,
                            0x8000,
                            0x0001,
                            0x8001,
                            (uint16_t)(f16 ? 0x0400 : 0x0080),
                            (uint16_t)(f16 ? 0x7BFF : 0x7F7F),
                            (uint16_t)(f16 ? 0xFBFF : 0xFF7F),
                            (uint16_t)(f16 ? 0x7C00 : 0x7F80),
                            (uint16_t)(f16 ? 0xFC00 : 0xFF80),
                            (uint16_t)(f16 ? 0x7E00 : 0x7FC0),
                            (uint16_t)(f16 ? 0x3C00 : 0x3F80),
                            (uint16_t)(f16 ? 0xBC00 : 0xBF80),
                            (uint16_t)(f16 ? 0x3801 : 0x3F01)};
  size_t ne = sizeof edges / sizeof edges[0];
  for (size_t i = 0; i < n; i++) p[i] = i < ne * ne ? edges[(which ? i / ne : i) % ne] : (uint16_t)next_u64();
}

static void fill_any(optic_dtype d, void *p, size_t n, int which) {
  if (d == OPTIC_F16 || d == OPTIC_BF16) {
    fill_half(d, p, n, which);
  } else if (d == OPTIC_F32 || d == OPTIC_F64) {
    for (size_t i = 0; i < n; i++) {
      double v = i % 11 == 0 ? NAN : i % 13 == 0 ? -INFINITY : ldexp((double)(int64_t)next_u64(), -(int)(i % 70));
      if (d == OPTIC_F32) ((float *)p)[i] = (float)v;
      else ((double *)p)[i] = v;
    }
  } else if (d == OPTIC_PRED) {
    for (size_t i = 0; i < n; i++) ((uint8_t *)p)[i] = (uint8_t)(next_u64() & 1);
  } else {
    fill_int(d, p, n, which);
  }
}

/* ------------------------------------------------------------ running */

static optic_literal_t *new_array(optic_dtype d, size_t n) {
  int64_t dim = (int64_t)n;
  optic_shape s;
  optic_literal_t *l = NULL;
  if (optic_shape_make(1, &dim, &s) || optic_literal_create_array(d, &s, NULL, 0, &l)) {
    fprintf(stderr, "setup: %s\n", optic_last_error());
    exit(2);
  }
  return l;
}

static void *data_of(optic_literal_t *l) { return optic_literal_mutable_data(l, NULL); }

/* Parses text, evaluates it and runs it (NONE and FULL, 1 and 2 threads),
 * both against expected (exact, NaN equal to NaN, -0 equal to +0). */
static void check_text(const char *text, optic_literal_t *const *args, int32_t nargs, const optic_literal_t *expected,
                       const char *label) {
  optic_module_t *m = NULL;
  optic_status st = optic_module_from_hlo_text(text, strlen(text), &m);
  OT_CHECK(st == OPTIC_OK, "%s: parse: %s\n%s", label, optic_last_error(), text);
  if (st != OPTIC_OK) return;
  optic_literal_t *got = NULL;
  st = optic_evaluate(m, optic_module_entry(m), (const optic_literal_t *const *)args, nargs, NULL, &got);
  OT_CHECK(st == OPTIC_OK, "%s: evaluate: %s", label, optic_last_error());
  char why[256] = "";
  if (st == OPTIC_OK) {
    OT_CHECK(optic_literal_match(expected, got, OPTIC_MATCH_TOLERANCE, 0, 0, why, sizeof why), "%s: evaluator: %s",
             label, why);
  }
  optic_literal_destroy(got);
  for (int level = 0; level <= 2; level += 2) {
    for (int32_t t = 1; t <= 2; t++) {
      ex_run_compare(m, (optic_opt_level)level, t, (const optic_literal_t *const *)args, nargs, expected, 0, 0, t == 2,
                     label);
    }
  }
  optic_module_destroy(m);
}

/* ------------------------------------------------------------ integers */

typedef enum { K_UN, K_BIN, K_CMP, K_CLAMP } kind;

static i128 int_op(const char *op, optic_dtype d, i128 a, i128 b) {
  if (!strcmp(op, "add")) return wrap(d, a + b);
  if (!strcmp(op, "subtract")) return wrap(d, a - b);
  if (!strcmp(op, "multiply")) return wrap(d, (i128)((unsigned __int128)a * (unsigned __int128)b));
  if (!strcmp(op, "divide")) {
    if (b == 0) return wrap(d, -1);
    if (is_signed(d) && a == int_min(d) && b == -1) return a;
    return wrap(d, a / b);
  }
  if (!strcmp(op, "maximum")) return a > b ? a : b;
  if (!strcmp(op, "minimum")) return a < b ? a : b;
  if (!strcmp(op, "and")) return wrap(d, a & b);
  if (!strcmp(op, "or")) return wrap(d, a | b);
  if (!strcmp(op, "negate")) return wrap(d, -a);
  if (!strcmp(op, "abs")) return wrap(d, a < 0 ? -a : a);
  if (!strcmp(op, "sign")) return (a > 0) - (a < 0);
  return wrap(d, ~a); /* not */
}

static bool cmp_ref(const char *dir, double order) {
  if (!strcmp(dir, "EQ")) return order == 0;
  if (!strcmp(dir, "NE")) return order != 0;
  if (!strcmp(dir, "LT")) return order < 0;
  if (!strcmp(dir, "LE")) return order <= 0;
  if (!strcmp(dir, "GT")) return order > 0;
  return order >= 0;
}

static const char *const dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};

static void int_case(optic_dtype d, const char *op, kind k, const char *dir, size_t n) {
  const char *dn = optic_dtype_name(d);
  int nin = k == K_UN ? 1 : k == K_CLAMP ? 3 : 2;
  optic_literal_t *in[3] = {NULL};
  for (int j = 0; j < nin; j++) {
    in[j] = new_array(d, n);
    fill_int(d, data_of(in[j]), n, j);
  }
  optic_literal_t *want = new_array(k == K_CMP ? OPTIC_PRED : d, n);
  for (size_t i = 0; i < n; i++) {
    i128 a = get_int(d, data_of(in[0]), i), b = nin > 1 ? get_int(d, data_of(in[1]), i) : 0;
    if (k == K_CMP) {
      ((uint8_t *)data_of(want))[i] = cmp_ref(dir, (double)((a > b) - (a < b)));
    } else if (k == K_CLAMP) {
      i128 hi = get_int(d, data_of(in[2]), i), t = b > a ? b : a;
      put_int(d, data_of(want), i, t < hi ? t : hi);
    } else {
      put_int(d, data_of(want), i, int_op(op, d, a, b));
    }
  }
  char text[1024], label[128];
  int len = snprintf(text, sizeof text, "HloModule t\nENTRY e {\n");
  for (int j = 0; j < nin; j++)
    len += snprintf(text + len, sizeof text - (size_t)len, "  p%d = %s[%zu] parameter(%d)\n", j, dn, n, j);
  if (k == K_CMP) {
    snprintf(text + len, sizeof text - (size_t)len, "  ROOT r = pred[%zu] compare(p0, p1), direction=%s\n}\n", n, dir);
  } else {
    snprintf(text + len, sizeof text - (size_t)len, "  ROOT r = %s[%zu] %s(%s)\n}\n", dn, n, op,
             nin == 1   ? "p0"
             : nin == 2 ? "p0, p1"
                        : "p0, p1, p2");
  }
  snprintf(label, sizeof label, "%s %s %s n=%zu", dn, op, dir ? dir : "", n);
  check_text(text, in, nin, want, label);
  for (int j = 0; j < nin; j++) optic_literal_destroy(in[j]);
  optic_literal_destroy(want);
}

static void integer_ops(void) {
  static const char *const un[] = {"negate", "abs", "not", "sign"};
  static const char *const bin[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "and", "or"};
  /* s32 and u8 too: their own loops against the same reference */
  static const optic_dtype ds[] = {OPTIC_S8, OPTIC_S16, OPTIC_S32, OPTIC_S64,
                                   OPTIC_U8, OPTIC_U16, OPTIC_U32, OPTIC_U64};
  for (size_t di = 0; di < sizeof ds / sizeof ds[0]; di++) {
    optic_dtype d = ds[di];
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si += 2) {
      size_t n = sizes[si];
      for (size_t o = 0; o < 4; o++) {
        if (!strcmp(un[o], "sign") && !is_signed(d)) continue;
        int_case(d, un[o], K_UN, NULL, n);
      }
      for (size_t o = 0; o < sizeof bin / sizeof bin[0]; o++) int_case(d, bin[o], K_BIN, NULL, n);
      for (size_t c = 0; c < 6; c++) int_case(d, "compare", K_CMP, dirs[c], n);
      int_case(d, "clamp", K_CLAMP, NULL, n);
    }
  }
}

/* ------------------------------------------------------------ halves */

static double f32_op(const char *op, float a, float b) {
  if (!strcmp(op, "add")) return a + b;
  if (!strcmp(op, "subtract")) return a - b;
  if (!strcmp(op, "multiply")) return a * b;
  if (!strcmp(op, "divide")) return a / b;
  if (!strcmp(op, "maximum")) return isnan(a) ? a : isnan(b) ? b : a > b ? a : b;
  if (!strcmp(op, "minimum")) return isnan(a) ? a : isnan(b) ? b : a < b ? a : b;
  if (!strcmp(op, "negate")) return -a;
  if (!strcmp(op, "abs")) return fabsf(a);
  if (!strcmp(op, "floor")) return floorf(a);
  if (!strcmp(op, "ceil")) return ceilf(a);
  if (!strcmp(op, "sqrt")) return sqrtf(a);
  return isnan(a) || a == 0 ? a : a > 0 ? 1.0f : -1.0f; /* sign */
}

static void half_case(optic_dtype d, const char *op, kind k, const char *dir, size_t n) {
  const char *dn = optic_dtype_name(d);
  int nin = k == K_UN ? 1 : k == K_CLAMP ? 3 : 2;
  optic_literal_t *in[3] = {NULL};
  for (int j = 0; j < nin; j++) {
    in[j] = new_array(d, n);
    fill_half(d, data_of(in[j]), n, j);
  }
  optic_literal_t *want = new_array(k == K_CMP ? OPTIC_PRED : d, n);
  for (size_t i = 0; i < n; i++) {
    float a = (float)hdecode(d, ((uint16_t *)data_of(in[0]))[i]);
    float b = nin > 1 ? (float)hdecode(d, ((uint16_t *)data_of(in[1]))[i]) : 0;
    if (k == K_CMP) {
      bool unordered = isnan(a) || isnan(b);
      ((uint8_t *)data_of(want))[i] = unordered ? !strcmp(dir, "NE") : cmp_ref(dir, (double)((a > b) - (a < b)));
    } else if (k == K_CLAMP) { /* clamp(lo, x, hi) = min(max(x, lo), hi), NaN-propagating */
      float hi = (float)hdecode(d, ((uint16_t *)data_of(in[2]))[i]);
      float t = (float)f32_op("maximum", b, a);
      ((uint16_t *)data_of(want))[i] = hround(d, f32_op("minimum", t, hi));
    } else {
      ((uint16_t *)data_of(want))[i] = hround(d, f32_op(op, a, b));
    }
  }
  char text[1024], label[128];
  int len = snprintf(text, sizeof text, "HloModule t\nENTRY e {\n");
  for (int j = 0; j < nin; j++)
    len += snprintf(text + len, sizeof text - (size_t)len, "  p%d = %s[%zu] parameter(%d)\n", j, dn, n, j);
  if (k == K_CMP) {
    snprintf(text + len, sizeof text - (size_t)len, "  ROOT r = pred[%zu] compare(p0, p1), direction=%s\n}\n", n, dir);
  } else {
    snprintf(text + len, sizeof text - (size_t)len, "  ROOT r = %s[%zu] %s(%s)\n}\n", dn, n, op,
             nin == 1   ? "p0"
             : nin == 2 ? "p0, p1"
                        : "p0, p1, p2");
  }
  snprintf(label, sizeof label, "%s %s %s n=%zu", dn, op, dir ? dir : "", n);
  check_text(text, in, nin, want, label);
  for (int j = 0; j < nin; j++) optic_literal_destroy(in[j]);
  optic_literal_destroy(want);
}

static void half_ops(void) {
  static const char *const un[] = {"negate", "abs", "floor", "ceil", "sqrt", "sign"};
  static const char *const bin[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum"};
  for (size_t di = 0; di < 2; di++) {
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
      size_t n = sizes[si];
      for (size_t o = 0; o < sizeof un / sizeof un[0]; o++) half_case(halves[di], un[o], K_UN, NULL, n);
      for (size_t o = 0; o < sizeof bin / sizeof bin[0]; o++) half_case(halves[di], bin[o], K_BIN, NULL, n);
      if (si % 2 == 0) {
        for (size_t c = 0; c < 6; c++) half_case(halves[di], "compare", K_CMP, dirs[c], n);
        half_case(halves[di], "clamp", K_CLAMP, NULL, n);
      }
    }
  }
}

/* ------------------------------------------------------------ convert */

/* Every pair of value dtypes: the evaluator and the runtime give what
 * optic_convert_elements gives (itself checked from first principles in
 * tests/core/test_dtype_convert.c). */
static void convert_pairs(void) {
  static const optic_dtype all[] = {OPTIC_PRED, OPTIC_S8,  OPTIC_S16, OPTIC_S32,  OPTIC_S64, OPTIC_U8, OPTIC_U16,
                                    OPTIC_U32,  OPTIC_U64, OPTIC_F16, OPTIC_BF16, OPTIC_F32, OPTIC_F64};
  size_t nd = sizeof all / sizeof all[0], n = 300;
  for (size_t a = 0; a < nd; a++) {
    for (size_t b = 0; b < nd; b++) {
      optic_dtype from = all[a], to = all[b];
      bool legacy =
          (from == OPTIC_F32 || from == OPTIC_F64 || from == OPTIC_S32 || from == OPTIC_U8 || from == OPTIC_PRED) &&
          (to == OPTIC_F32 || to == OPTIC_F64 || to == OPTIC_S32 || to == OPTIC_U8 || to == OPTIC_PRED);
      if (legacy) continue; /* tests/graph and tests/kernels cover those */
      optic_literal_t *x = new_array(from, n), *want = new_array(to, n);
      fill_any(from, data_of(x), n, 0);
      OT_EXPECT_OK(optic_convert_elements(from, data_of(x), to, data_of(want), n));
      char text[512], label[64];
      snprintf(text, sizeof text,
               "HloModule t\nENTRY e {\n  p0 = %s[%zu] parameter(0)\n  ROOT r = %s[%zu] convert(p0)\n}\n",
               optic_dtype_name(from), n, optic_dtype_name(to), n);
      snprintf(label, sizeof label, "convert %s -> %s", optic_dtype_name(from), optic_dtype_name(to));
      check_text(text, &x, 1, want, label);
      optic_literal_destroy(x);
      optic_literal_destroy(want);
    }
  }
}

/* ------------------------------------------------------------ layout, reduce, iota, select */

/* Layout ops and select on 2-byte and 8-byte types: the runtime against the
 * evaluator, whose layout ops copy bytes. */
static void layout_and_select(void) {
  static const optic_dtype ds[] = {OPTIC_BF16, OPTIC_F16, OPTIC_S16, OPTIC_U16,
                                   OPTIC_S8,   OPTIC_S64, OPTIC_U64, OPTIC_U32};
  for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
    const char *dn = optic_dtype_name(ds[i]);
    char text[2048];
    snprintf(text, sizeof text,
             "HloModule t\nENTRY e {\n"
             "  p0 = %s[5,7] parameter(0)\n  p1 = %s[] parameter(1)\n  s = pred[7,5] parameter(2)\n"
             "  t = %s[7,5] transpose(p0), dimensions={1,0}\n"
             "  b = %s[7,5] broadcast(p1), dimensions={}\n"
             "  sel = %s[7,5] select(s, t, b)\n"
             "  sl = %s[3,5] slice(sel), slice={[1:7:2], [0:5]}\n"
             "  rv = %s[3,5] reverse(sl), dimensions={0,1}\n"
             "  c = %s[6,5] concatenate(sl, rv), dimensions={0}\n"
             "  pd = %s[8,7] pad(c, p1), padding=1_1x0_2\n"
             "  rs = %s[56] reshape(pd)\n"
             "  ROOT cp = %s[56] copy(rs)\n}\n",
             dn, dn, dn, dn, dn, dn, dn, dn, dn, dn, dn);
    optic_module_t *m = NULL;
    OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
    if (m == NULL) continue;
    OT_CHECK(ex_check_module(m, 11 + i, 0, 0, dn), "%s", dn);
    optic_module_destroy(m);
  }
}

/* Control flow and windows on the new dtypes: a while loop counting in s64
 * that accumulates bf16, reduce-window max over f16 and a map over u32; the
 * runtime against the evaluator. */
static void control_and_windows(void) {
  const char *text =
      "HloModule t\n"
      "cond {\n  p = (s64[], bf16[8]) parameter(0)\n  i = s64[] get-tuple-element(p), index=0\n"
      "  n = s64[] constant(5000000000)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
      "body {\n  p = (s64[], bf16[8]) parameter(0)\n  i = s64[] get-tuple-element(p), index=0\n"
      "  v = bf16[8] get-tuple-element(p), index=1\n  step = s64[] constant(1000000000)\n"
      "  j = s64[] add(i, step)\n  w = bf16[8] add(v, v)\n  ROOT t = (s64[], bf16[8]) tuple(j, w)\n}\n"
      "mx {\n  a = f16[] parameter(0)\n  b = f16[] parameter(1)\n  ROOT m = f16[] maximum(a, b)\n}\n"
      "inc {\n  a = u32[] parameter(0)\n  one = u32[] constant(4294967295)\n  ROOT s = u32[] add(a, one)\n}\n"
      "ENTRY e {\n  v = bf16[8] parameter(0)\n  h = f16[6,10] parameter(1)\n  u = u32[33] parameter(2)\n"
      "  z = s64[] constant(0)\n  t0 = (s64[], bf16[8]) tuple(z, v)\n"
      "  wl = (s64[], bf16[8]) while(t0), condition=cond, body=body\n"
      "  ninf = f16[] constant(-inf)\n"
      "  rw = f16[3,4] reduce-window(h, ninf), window={size=2x3 stride=2x2}, to_apply=mx\n"
      "  mp = u32[33] map(u), dimensions={0}, to_apply=inc\n"
      "  ROOT r = ((s64[], bf16[8]), f16[3,4], u32[33]) tuple(wl, rw, mp)\n}\n";
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
  if (m == NULL) return;
  OT_CHECK(ex_check_module(m, 5, 0, 0, "control_and_windows"));
  optic_module_destroy(m);
}

/* Reductions with a combiner of the element type: integer sums wrap (any
 * order gives the same), half max/min and small exact sums. Expected values
 * computed here. */
static void reductions(void) {
  static const struct {
    optic_dtype d;
    const char *op;
  } cases[] = {{OPTIC_S8, "add"},      {OPTIC_U16, "add"},     {OPTIC_S64, "add"},
               {OPTIC_U64, "maximum"}, {OPTIC_S16, "minimum"}, {OPTIC_BF16, "maximum"},
               {OPTIC_F16, "minimum"}, {OPTIC_BF16, "add"},    {OPTIC_F16, "add"}};
  const size_t rows = 3, cols = 300;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    optic_dtype d = cases[c].d;
    const char *dn = optic_dtype_name(d), *op = cases[c].op;
    bool half = d == OPTIC_F16 || d == OPTIC_BF16, sum = !strcmp(op, "add");
    optic_literal_t *x = NULL, *want = new_array(d, rows);
    int64_t dims[2] = {(int64_t)rows, (int64_t)cols};
    optic_shape s;
    optic_shape_make(2, dims, &s);
    optic_literal_create_array(d, &s, NULL, 0, &x);
    void *xd = data_of(x);
    for (size_t i = 0; i < rows * cols; i++) {
      if (half) { /* sums: small integers, exact in any order; max/min: any finite pattern */
        uint16_t h = sum ? hround(d, (double)(int)(next_u64() % 5) - 2) : (uint16_t)(next_u64() & 0xBFFF);
        ((uint16_t *)xd)[i] = h;
      } else {
        put_int(d, xd, i, wrap(d, (i128)next_u64()));
      }
    }
    for (size_t r = 0; r < rows; r++) {
      i128 acc = sum ? 0 : !strcmp(op, "maximum") ? int_min(d) : int_max(d);
      double hacc = sum ? 0 : !strcmp(op, "maximum") ? -INFINITY : INFINITY;
      for (size_t j = 0; j < cols; j++) {
        if (half) {
          double v = hdecode(d, ((uint16_t *)xd)[r * cols + j]);
          hacc = sum ? hacc + v : !strcmp(op, "maximum") ? fmax(hacc, v) : fmin(hacc, v);
        } else {
          i128 v = get_int(d, xd, r * cols + j);
          acc = sum ? wrap(d, acc + v) : !strcmp(op, "maximum") ? (v > acc ? v : acc) : (v < acc ? v : acc);
        }
      }
      if (half) ((uint16_t *)data_of(want))[r] = hround(d, hacc);
      else put_int(d, data_of(want), r, acc);
    }
    const char *init = half ? (sum ? "0" : !strcmp(op, "maximum") ? "-inf" : "inf") : NULL;
    char initbuf[64];
    if (!half) {
      i128 iv = sum ? 0 : !strcmp(op, "maximum") ? int_min(d) : int_max(d);
      if (is_signed(d)) snprintf(initbuf, sizeof initbuf, "%lld", (long long)iv);
      else snprintf(initbuf, sizeof initbuf, "%llu", (unsigned long long)iv);
      init = initbuf;
    }
    char text[1024];
    snprintf(text, sizeof text,
             "HloModule t\ncomb {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT r = %s[] %s(a, b)\n}\n"
             "ENTRY e {\n  x = %s[%zu,%zu] parameter(0)\n  z = %s[] constant(%s)\n"
             "  ROOT r = %s[%zu] reduce(x, z), dimensions={1}, to_apply=comb\n}\n",
             dn, dn, dn, op, dn, rows, cols, dn, init, dn, rows);
    char label[64];
    snprintf(label, sizeof label, "reduce %s %s", dn, op);
    check_text(text, &x, 1, want, label);
    optic_literal_destroy(x);
    optic_literal_destroy(want);
  }
}

/* iota converts the index (unsigned) to the element type: s8 wraps past
 * 127, f16 rounds to nearest even past 2048, bf16 past 256. */
static void iotas(void) {
  static const optic_dtype ds[] = {OPTIC_S8, OPTIC_U16, OPTIC_S64, OPTIC_F16, OPTIC_BF16};
  const size_t n = 3000;
  for (size_t i = 0; i < sizeof ds / sizeof ds[0]; i++) {
    optic_dtype d = ds[i];
    optic_literal_t *want = new_array(d, n);
    for (size_t k = 0; k < n; k++) {
      if (d == OPTIC_F16 || d == OPTIC_BF16) ((uint16_t *)data_of(want))[k] = hround(d, (double)k);
      else put_int(d, data_of(want), k, wrap(d, (i128)k));
    }
    char text[256], label[32];
    snprintf(text, sizeof text, "HloModule t\nENTRY e {\n  ROOT r = %s[%zu] iota(), iota_dimension=0\n}\n",
             optic_dtype_name(d), n);
    snprintf(label, sizeof label, "iota %s", optic_dtype_name(d));
    check_text(text, NULL, 0, want, label);
    optic_literal_destroy(want);
  }
}

/* ------------------------------------------------------------ contractions */

/* dot and convolution on f16/bf16 operands with an f16/bf16/f32 result:
 * operands widened exactly, the contraction in f32, one rounding to the
 * result type. Integer inputs up to 16 keep every partial sum exact in f32,
 * so the only rounding is the final one (sums past 256 and 2048 round in
 * bf16 and f16). */
static uint16_t rand_small_half(optic_dtype d) { return hround(d, (double)((int)(next_u64() % 33) - 16)); }

static void put_result(optic_dtype d, void *p, size_t i, double v) {
  if (d == OPTIC_F32) ((float *)p)[i] = (float)v;
  else ((uint16_t *)p)[i] = hround(d, (double)(float)v);
}

static void contractions(void) {
  static const struct {
    optic_dtype in, out;
  } pairs[] = {{OPTIC_BF16, OPTIC_BF16}, {OPTIC_F16, OPTIC_F16}, {OPTIC_BF16, OPTIC_F32}, {OPTIC_F16, OPTIC_F32}};
  enum { M = 5, K = 17, N = 3, H = 6, W = 6, CI = 2, CO = 4 };
  for (size_t c = 0; c < sizeof pairs / sizeof pairs[0]; c++) {
    optic_dtype d = pairs[c].in, o = pairs[c].out;
    const char *dn = optic_dtype_name(d), *on = optic_dtype_name(o);
    /* dot: [M,K] x [K,N] */
    optic_literal_t *a = NULL, *b = NULL, *want = NULL;
    optic_literal_create_array(d, &(optic_shape){2, {M, K}}, NULL, 0, &a);
    optic_literal_create_array(d, &(optic_shape){2, {K, N}}, NULL, 0, &b);
    optic_literal_create_array(o, &(optic_shape){2, {M, N}}, NULL, 0, &want);
    uint16_t *ad = data_of(a), *bd = data_of(b);
    for (int i = 0; i < M * K; i++) ad[i] = rand_small_half(d);
    for (int i = 0; i < K * N; i++) bd[i] = rand_small_half(d);
    for (int i = 0; i < M; i++) {
      for (int j = 0; j < N; j++) {
        double acc = 0;
        for (int k = 0; k < K; k++) acc += hdecode(d, ad[i * K + k]) * hdecode(d, bd[k * N + j]);
        put_result(o, data_of(want), (size_t)(i * N + j), acc);
      }
    }
    char text[1024], label[64];
    snprintf(text, sizeof text,
             "HloModule t\nENTRY e {\n  a = %s[%d,%d] parameter(0)\n  b = %s[%d,%d] parameter(1)\n"
             "  ROOT d = %s[%d,%d] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
             dn, M, K, dn, K, N, on, M, N);
    snprintf(label, sizeof label, "dot %s -> %s", dn, on);
    optic_literal_t *args[2] = {a, b};
    check_text(text, args, 2, want, label);
    optic_literal_destroy(a);
    optic_literal_destroy(b);
    optic_literal_destroy(want);
    /* convolution: NHWC [1,H,W,CI] with HWIO [3,3,CI,CO], pad 1 */
    optic_literal_create_array(d, &(optic_shape){4, {1, H, W, CI}}, NULL, 0, &a);
    optic_literal_create_array(d, &(optic_shape){4, {3, 3, CI, CO}}, NULL, 0, &b);
    optic_literal_create_array(o, &(optic_shape){4, {1, H, W, CO}}, NULL, 0, &want);
    ad = data_of(a), bd = data_of(b);
    for (int i = 0; i < H * W * CI; i++) ad[i] = rand_small_half(d);
    for (int i = 0; i < 9 * CI * CO; i++) bd[i] = rand_small_half(d);
    for (int y = 0; y < H; y++) {
      for (int x = 0; x < W; x++) {
        for (int oc = 0; oc < CO; oc++) {
          double acc = 0;
          for (int ky = 0; ky < 3; ky++) {
            for (int kx = 0; kx < 3; kx++) {
              int iy = y + ky - 1, ix = x + kx - 1;
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              for (int ic = 0; ic < CI; ic++) {
                acc += hdecode(d, ad[(iy * W + ix) * CI + ic]) * hdecode(d, bd[((ky * 3 + kx) * CI + ic) * CO + oc]);
              }
            }
          }
          put_result(o, data_of(want), (size_t)((y * W + x) * CO + oc), acc);
        }
      }
    }
    snprintf(
        text, sizeof text,
        "HloModule t\nENTRY e {\n  a = %s[1,%d,%d,%d] parameter(0)\n  k = %s[3,3,%d,%d] parameter(1)\n"
        "  ROOT c = %s[1,%d,%d,%d] convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}\n",
        dn, H, W, CI, dn, CI, CO, on, H, W, CO);
    snprintf(label, sizeof label, "convolution %s -> %s", dn, on);
    args[0] = a, args[1] = b;
    check_text(text, args, 2, want, label);
    optic_literal_destroy(a);
    optic_literal_destroy(b);
    optic_literal_destroy(want);
  }
  /* an integer dot is refused with the op and the dtypes named */
  const char *bad =
      "HloModule t\nENTRY e {\n  a = s8[2,2] parameter(0)\n  ROOT d = s8[2,2] dot(a, a), "
      "lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n";
  optic_module_t *m = NULL;
  OT_EXPECT_STATUS(optic_module_from_hlo_text(bad, strlen(bad), &m), OPTIC_ERR_UNSUPPORTED);
  OT_CHECK(strstr(optic_last_error(), "dot: operands are s8 and s8") != NULL, "%s", optic_last_error());
}

/* ------------------------------------------------------------ cost */

/* Bytes by element size, as XLA's HloCostAnalysis counts: the bf16 add
 * reads 2 x 2048 and writes 2048 bytes (6144), the s64 multiply 3 x 800
 * (2400), the f32 -> f16 convert 1024 + 512 (1536), the 4-element tuple 4
 * pointers (32), a token nothing: 10112 bytes; flops 1024 + 100 + 256. */
static void costs(void) {
  const char *text =
      "HloModule t\nENTRY e {\n  tok = token[] parameter(0)\n  a = bf16[1024] parameter(1)\n"
      "  b = s64[100] parameter(2)\n  c = f32[256] parameter(3)\n  x = bf16[1024] add(a, a)\n"
      "  y = s64[100] multiply(b, b)\n  z = f16[256] convert(c)\n"
      "  ROOT t = (token[], bf16[1024], s64[100], f16[256]) tuple(tok, x, y, z)\n}\n";
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
  if (m == NULL) return;
  optic_cost c = {0};
  OT_EXPECT_OK(optic_computation_cost(m, optic_module_entry(m), &c));
  OT_CHECK(c.bytes_accessed == 10112 && c.flops == 1380 && c.transcendentals == 0, "bytes %g flops %g",
           c.bytes_accessed, c.flops);
  optic_module_destroy(m);
}

/* ------------------------------------------------------------ text */

/* Constants of every new dtype at their limits print and parse back to the
 * same bits; halves print in the fewest digits that read back exactly;
 * token parameters and tuples holding tokens load, print and run. */
static void hlo_round_trip(void) {
  const char *text =
      "HloModule t\n"
      "ENTRY e {\n"
      "  tok = token[] parameter(0)\n"
      "  a = s8[3] constant({-128, 0, 127})\n"
      "  b = s16[2] constant({-32768, 32767})\n"
      "  c = s64[2] constant({-9223372036854775808, 9223372036854775807})\n"
      "  d = u16[2] constant({0, 65535})\n"
      "  e = u32[1] constant({4294967295})\n"
      "  f = u64[2] constant({0, 18446744073709551615})\n"
      "  g = f16[7] constant({65504, -0, 5.96e-08, inf, -inf, nan, 1.00048828125})\n"
      "  h = bf16[6] constant({3.39e+38, -0, 9.2e-41, 1.00390625, 1.01171875, nan})\n"
      "  ROOT t = (token[], s8[3], s16[2], s64[2], u16[2], u32[1], u64[2], f16[7], bf16[6]) tuple(tok, a, b, c, d, e, "
      "f, g, h)\n"
      "}\n";
  optic_module_t *m = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(text, strlen(text), &m));
  if (m == NULL) return;
  char *printed = NULL, *again = NULL;
  OT_EXPECT_OK(optic_module_to_hlo_text(m, &printed));
  optic_module_t *m2 = NULL;
  OT_EXPECT_OK(optic_module_from_hlo_text(printed, strlen(printed), &m2));
  if (m2) OT_EXPECT_OK(optic_module_to_hlo_text(m2, &again));
  OT_CHECK(printed && again && strcmp(printed, again) == 0, "print(parse(print)) differs:\n%s\n---\n%s", printed,
           again);
  /* halves in the fewest digits: 65504, 6e-08 (the smallest f16 subnormal), 1.0005 (f16 1+2^-11 is a tie -> 1) */
  OT_CHECK(printed && strstr(printed, "{65504, -0, 6e-08, inf, -inf, nan, 1}") != NULL, "%s", printed);
  /* bf16: 3.39e38 -> 0x7F7F prints 3.39e+38; 1.00390625 = 1+2^-8 ties to 1; 1.01171875 = 1+3*2^-8 ties up to 1.016 */
  OT_CHECK(printed && strstr(printed, "{3.39e+38, -0, 9e-41, 1, 1.016, nan}") != NULL, "%s", printed);
  OT_CHECK(printed && strstr(printed, "{-9223372036854775808, 9223372036854775807}") &&
               strstr(printed, "{0, 18446744073709551615}") && strstr(printed, "token[] parameter(0)"),
           "%s", printed);
  /* Bits of the parsed constants, worked by hand. */
  optic_literal_t *tokarg = NULL, *res = NULL;
  optic_type tt = optic_type_array(OPTIC_TOKEN, &(optic_shape){0});
  OT_EXPECT_OK(optic_literal_create(&tt, &tokarg));
  OT_EXPECT_OK(optic_evaluate(m, optic_module_entry(m), (const optic_literal_t *const *)&tokarg, 1, NULL, &res));
  if (res) {
    const uint16_t *g = optic_literal_data(optic_literal_element(res, 7), NULL);
    const uint16_t *h = optic_literal_data(optic_literal_element(res, 8), NULL);
    const uint64_t *f = optic_literal_data(optic_literal_element(res, 6), NULL);
    OT_CHECK(g[0] == 0x7BFF && g[1] == 0x8000 && g[2] == 0x0001 && g[3] == 0x7C00 && g[4] == 0xFC00 &&
                 (g[5] & 0x7C00) == 0x7C00 && (g[5] & 0x3FF) && g[6] == 0x3C00,
             "f16 bits %04x %04x %04x %04x %04x %04x %04x", g[0], g[1], g[2], g[3], g[4], g[5], g[6]);
    OT_CHECK(h[0] == 0x7F7F && h[1] == 0x8000 && h[2] == 0x0001 && h[3] == 0x3F80 && h[4] == 0x3F82,
             "bf16 bits %04x %04x %04x %04x %04x", h[0], h[1], h[2], h[3], h[4]);
    OT_CHECK(f[1] == UINT64_MAX);
    OT_CHECK(optic_literal_type(optic_literal_element(res, 0))->dtype == OPTIC_TOKEN);
  }
  /* the runtime runs it too (a token input and output hold no bytes) */
  optic_compile_options co = optic_compile_options_default();
  optic_program_t *p = NULL;
  OT_EXPECT_OK(optic_compile(m, &co, &p));
  if (p && res) {
    optic_exec_ctx_t *ctx = NULL;
    optic_exec_options eo = optic_exec_options_default();
    OT_EXPECT_OK(optic_exec_ctx_create(&eo, &ctx));
    optic_tensor in = {OPTIC_TOKEN, {0}, NULL}, out[9];
    unsigned char buf[9][64];
    for (int i = 0; i < 9; i++) {
      const optic_type *t = optic_literal_type(optic_literal_element(res, i));
      out[i] = (optic_tensor){t->dtype, t->shape, t->dtype == OPTIC_TOKEN ? NULL : buf[i]};
    }
    OT_EXPECT_OK(optic_program_run(p, ctx, &in, 1, out, 9));
    for (int i = 1; i < 9; i++) {
      size_t bytes;
      const void *e = optic_literal_data(optic_literal_element(res, i), &bytes);
      OT_CHECK(memcmp(buf[i], e, bytes) == 0, "runtime output %d", i);
    }
    optic_exec_ctx_destroy(ctx);
  }
  optic_program_destroy(p);
  optic_literal_destroy(res);
  optic_literal_destroy(tokarg);
  optic_string_free(printed);
  optic_string_free(again);
  optic_module_destroy(m);
  optic_module_destroy(m2);
}

static const ot_case cases[] = {
    {"hlo_round_trip", hlo_round_trip},
    {"integer_ops", integer_ops},
    {"half_ops", half_ops},
    {"convert_pairs", convert_pairs},
    {"layout_and_select", layout_and_select},
    {"reductions", reductions},
    {"iotas", iotas},
    {"contractions", contractions},
    {"costs", costs},
    {"control_and_windows", control_and_windows},
};
OT_MAIN(cases)
