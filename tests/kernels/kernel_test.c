/* Helpers for the kernel family tests (see kernel_test.h). */
#include "tests/kernels/kernel_test.h"

#include <float.h>

const size_t kt_offsets[] = {0, 1, 3};
const size_t kt_noffsets = sizeof kt_offsets / sizeof kt_offsets[0];

#define KT_GUARD 16
static const uint32_t kt_sentinel = 0x7fc0dead; /* a NaN no kernel produces */

static void add_size(size_t *out, size_t *count, size_t max, size_t v) {
  for (size_t i = 0; i < *count; i++) {
    if (out[i] == v) return;
  }
  if (*count < max) out[(*count)++] = v;
}

size_t kt_sizes(optic_isa isa, size_t *out, size_t max) {
  size_t w = optic_isa_vector_floats(isa), count = 0;
  add_size(out, &count, max, 0);
  add_size(out, &count, max, 1);
  for (size_t k = 1; k <= 4; k *= 2) {
    size_t t = w * k;
    add_size(out, &count, max, t - 1 > 0 ? t - 1 : 1);
    add_size(out, &count, max, t);
    add_size(out, &count, max, t + 1);
  }
  add_size(out, &count, max, 1000);
  add_size(out, &count, max, 4097);
  return count;
}

kt_buf kt_buf_make(size_t n, size_t offset) {
  kt_buf b = {0};
  size_t total = offset + n + KT_GUARD;
  if (posix_memalign((void **)&b.base, 64, total * sizeof(float)) != 0) {
    fprintf(stderr, "kt_buf_make: out of memory\n");
    exit(2);
  }
  for (size_t i = 0; i < total; i++) memcpy(&b.base[i], &kt_sentinel, 4);
  b.p = b.base + offset;
  b.n = n;
  return b;
}

bool kt_buf_guard_ok(const kt_buf *b) {
  for (size_t i = 0; i < KT_GUARD; i++) {
    uint32_t u;
    memcpy(&u, &b->p[b->n + i], 4);
    if (u != kt_sentinel) return false;
  }
  return true;
}

void kt_buf_free(kt_buf *b) {
  free(b->base);
  b->base = b->p = NULL;
}

uint64_t kt_next(kt_rng *r) {
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * 0x2545F4914F6CDD1DULL;
}

float kt_uniform(kt_rng *r, float lo, float hi) {
  double u = (double)(kt_next(r) >> 11) / 9007199254740992.0;
  return (float)(lo + (hi - lo) * u);
}

void kt_fill(kt_rng *r, float *x, size_t n, float lo, float hi, int special) {
  static const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f, FLT_MAX, FLT_MIN, -FLT_MAX};
  for (size_t i = 0; i < n; i++) {
    if (special && (kt_next(r) & 15) == 0) {
      x[i] = specials[kt_next(r) % (sizeof specials / sizeof specials[0])];
    } else {
      x[i] = kt_uniform(r, lo, hi);
    }
  }
}

static int64_t ordered(float f) {
  int32_t i;
  memcpy(&i, &f, 4);
  return i < 0 ? (int64_t)INT32_MIN - i : i;
}

uint32_t kt_ulp_distance(float a, float b) {
  if (isnan(a) || isnan(b)) return (isnan(a) && isnan(b)) ? 0 : UINT32_MAX;
  int64_t d = ordered(a) - ordered(b);
  if (d < 0) d = -d;
  return d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}

bool kt_same(float a, float b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return memcmp(&a, &b, 4) == 0;
}

bool kt_skip_isa(optic_isa isa) {
  if (optic_isa_supported(isa)) return false;
  printf("  skipped: this CPU cannot run %s kernels\n", optic_isa_name(isa));
  return true;
}

static const unsigned char kt_mem_sentinel = 0xA5; /* neither 0 nor 1, and no float a test uses */

kt_mem kt_mem_make(size_t n, size_t elem_size, size_t offset) {
  kt_mem m = {0};
  size_t total = (offset + n) * elem_size + KT_MEM_GUARD;
  if (posix_memalign((void **)&m.base, 64, total) != 0) {
    fprintf(stderr, "kt_mem_make: out of memory\n");
    exit(2);
  }
  memset(m.base, kt_mem_sentinel, total);
  m.p = m.base + offset * elem_size;
  m.n = n, m.elem = elem_size, m.offset = offset;
  return m;
}

bool kt_mem_guard_ok(const kt_mem *m) {
  size_t before = m->offset * m->elem, after_start = before + m->n * m->elem;
  for (size_t i = 0; i < before; i++) {
    if (m->base[i] != kt_mem_sentinel) return false;
  }
  for (size_t i = 0; i < KT_MEM_GUARD; i++) {
    if (m->base[after_start + i] != kt_mem_sentinel) return false;
  }
  return true;
}

void kt_mem_free(kt_mem *m) {
  free(m->base);
  m->base = NULL;
  m->p = NULL;
}

size_t kt_elements(const optic_shape *s) {
  size_t n = 0;
  optic_shape_elements(s, &n);
  return n;
}
