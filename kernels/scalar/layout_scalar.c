/* Scalar production fallback for the layout family: memcpy copies, strided
 * row copies with inlined small-row moves, cache-blocked transposes and plain
 * fill loops (no -m flags: the compiler may vectorize for the baseline ISA).
 * Elements move through memcpy so no type is punned; never reads or writes
 * outside the elements named (contract in kernels/layout.h). */
#include <string.h>

#include "kernels/layout.h"

void optic_copy__scalar(size_t nbytes, const void *x, void *y) {
  if (nbytes > 0) memcpy(y, x, nbytes);
}

/* Copies n <= SMALL_ROW bytes as a head and a tail of fixed size (they may
 * overlap): fixed-size moves compile to plain loads and stores, and a memcpy
 * call per short row costs more than the row (measured on 4096 rows: 4-24
 * bytes take 1.5-2.5 us this way against 7 us with memcpy). Longer rows go
 * to memcpy: with 16-byte moves the head/tail trick stopped winning there. */
#define SMALL_ROW 32
static inline void copy_small(unsigned char *d, const unsigned char *s, size_t n) {
  if (n >= 16) {
    memcpy(d, s, 16);
    memcpy(d + n - 16, s + n - 16, 16);
  } else if (n >= 8) {
    memcpy(d, s, 8);
    memcpy(d + n - 8, s + n - 8, 8);
  } else if (n >= 4) {
    memcpy(d, s, 4);
    memcpy(d + n - 4, s + n - 4, 4);
  } else if (n > 0) {
    d[0] = s[0];
    d[n / 2] = s[n / 2];
    d[n - 1] = s[n - 1];
  }
}

void optic_copy2d__scalar(size_t rows, size_t row_bytes, const void *x, size_t ldx, void *y, size_t ldy) {
  const unsigned char *xb = x;
  unsigned char *yb = y;
  if (row_bytes <= SMALL_ROW) {
    for (size_t r = 0; r < rows; r++) copy_small(yb + r * ldy, xb + r * ldx, row_bytes);
  } else {
    for (size_t r = 0; r < rows; r++) memcpy(yb + r * ldy, xb + r * ldx, row_bytes);
  }
}

/* Blocked transpose: BLOCK x BLOCK element blocks keep the BLOCK source rows'
 * cache lines in L1 while each destination row segment is written in order.
 * BLOCK * sizeof(T) is 128 bytes (two cache lines) for every width. */
#define SCALAR_TRANSPOSE(fn, T, BLOCK)                                                  \
  void fn(size_t rows, size_t cols, const void *xv, size_t ldx, void *yv, size_t ldy) { \
    const unsigned char *x = xv;                                                        \
    unsigned char *y = yv;                                                              \
    for (size_t i0 = 0; i0 < rows; i0 += (BLOCK)) {                                     \
      size_t i1 = rows - i0 < (BLOCK) ? rows : i0 + (BLOCK);                            \
      for (size_t j0 = 0; j0 < cols; j0 += (BLOCK)) {                                   \
        size_t j1 = cols - j0 < (BLOCK) ? cols : j0 + (BLOCK);                          \
        for (size_t j = j0; j < j1; j++) {                                              \
          unsigned char *yrow = y + j * ldy * sizeof(T);                                \
          for (size_t i = i0; i < i1; i++) {                                            \
            T v;                                                                        \
            memcpy(&v, x + (i * ldx + j) * sizeof(T), sizeof(T));                       \
            memcpy(yrow + i * sizeof(T), &v, sizeof(T));                                \
          }                                                                             \
        }                                                                               \
      }                                                                                 \
    }                                                                                   \
  }

SCALAR_TRANSPOSE(optic_x8_transpose__scalar, uint8_t, 128)
SCALAR_TRANSPOSE(optic_x32_transpose__scalar, uint32_t, 32)
SCALAR_TRANSPOSE(optic_x64_transpose__scalar, uint64_t, 16)

void optic_x8_fill__scalar(size_t n, const void *value, void *y) {
  if (n > 0) memset(y, *(const unsigned char *)value, n);
}

#define SCALAR_FILL(fn, T)                                                   \
  void fn(size_t n, const void *value, void *yv) {                           \
    T v;                                                                     \
    memcpy(&v, value, sizeof(T));                                            \
    unsigned char *y = yv;                                                   \
    for (size_t i = 0; i < n; i++) memcpy(y + i * sizeof(T), &v, sizeof(T)); \
  }

SCALAR_FILL(optic_x32_fill__scalar, uint32_t)
SCALAR_FILL(optic_x64_fill__scalar, uint64_t)
