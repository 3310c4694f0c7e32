/* optic core layer. Depends on nothing but libc; never prints, never aborts.
 *
 * Contents, in order:
 *   1. status codes and the thread's last error message
 *   2. dtypes: sizes, classes, names, XLA's convert semantics, f16/bf16
 *   3. shapes: validated row-major dims, element and byte counts
 *   4. tensor views (optic_tensor)
 *   5. allocation: the pluggable allocator, optic_alloc / optic_free
 *   6. NumPy .npy files: read, write, encode, decode
 *   7. CPU features and the kernels' ISA choice
 *   8. time, version and build information */
#ifndef OPTIC_CORE_H
#define OPTIC_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <optic/version.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(OPTIC_BUILDING)
#define OPTIC_API __attribute__((visibility("default")))
#else
#define OPTIC_API
#endif

/* ---------------------------------------------------------------- status */

/* X(NAME, description). OPTIC_OK is 0; every other code is an error. Codes are
 * stable: new ones are only ever appended. */
#define OPTIC_STATUS_LIST(X)                  \
  X(OK, "ok")                                 \
  X(ERR_INVALID_ARGUMENT, "invalid argument") \
  X(ERR_SHAPE_MISMATCH, "shape mismatch")     \
  X(ERR_OUT_OF_MEMORY, "out of memory")       \
  X(ERR_OVERFLOW, "size overflow")            \
  X(ERR_IO, "i/o error")                      \
  X(ERR_CORRUPT, "corrupt data")              \
  X(ERR_NOT_FOUND, "not found")               \
  X(ERR_UNSUPPORTED, "unsupported")           \
  X(ERR_PEER_FAILED, "peer failed")           \
  X(ERR_TIMEOUT, "timed out")                 \
  X(ERR_INTERNAL, "internal error")

typedef enum optic_status {
#define OPTIC_STATUS_ENUM_(name, desc) OPTIC_##name,
  OPTIC_STATUS_LIST(OPTIC_STATUS_ENUM_)
#undef OPTIC_STATUS_ENUM_
      OPTIC_STATUS_COUNT_ /* not a status: the number of codes */
} optic_status;

/* Short name of a code ("OPTIC_ERR_IO"); "OPTIC_STATUS_UNKNOWN" for values
 * outside the enum. The string is static. Thread-safe. */
OPTIC_API const char *optic_status_name(optic_status code);
/* Human description of a code ("i/o error"); "unknown status" outside the enum. */
OPTIC_API const char *optic_status_str(optic_status code);

/* The message the last failing optic call on this thread left, with context
 * ("shape: dim 2 is -3; dims must be >= 0"). Like errno it is only written on
 * failure: read it right after a call returned an error. Never NULL; "" when no
 * call on this thread has failed since the last optic_clear_error(). The string
 * belongs to the thread and stays valid until its next failing optic call. */
OPTIC_API const char *optic_last_error(void);
/* Status code of that last failure (OPTIC_OK if none). */
OPTIC_API optic_status optic_last_error_status(void);
OPTIC_API void optic_clear_error(void);

/* ----------------------------------------------------------------- dtype */

/* X(NAME, xla_name, size_in_bytes). pred is one byte holding 0 or 1. s/u are
 * two's-complement signed and unsigned integers; f16 is IEEE binary16; bf16 is
 * bfloat16 (the top 16 bits of an f32). token is XLA's ordering token: zero
 * bytes, no values (shape token[]). Enum values are stable (new ones are
 * appended). */
#define OPTIC_DTYPE_LIST(X) \
  X(F32, "f32", 4)          \
  X(F64, "f64", 8)          \
  X(S32, "s32", 4)          \
  X(U8, "u8", 1)            \
  X(PRED, "pred", 1)        \
  X(S8, "s8", 1)            \
  X(S16, "s16", 2)          \
  X(S64, "s64", 8)          \
  X(U16, "u16", 2)          \
  X(U32, "u32", 4)          \
  X(U64, "u64", 8)          \
  X(F16, "f16", 2)          \
  X(BF16, "bf16", 2)        \
  X(TOKEN, "token", 0)

typedef enum optic_dtype {
  OPTIC_DTYPE_INVALID = 0,
#define OPTIC_DTYPE_ENUM_(name, str, size) OPTIC_##name,
  OPTIC_DTYPE_LIST(OPTIC_DTYPE_ENUM_)
#undef OPTIC_DTYPE_ENUM_
      OPTIC_DTYPE_COUNT_
} optic_dtype;

/* Bytes per element; 0 for token, OPTIC_DTYPE_INVALID and values outside the enum. */
OPTIC_API size_t optic_dtype_size(optic_dtype dtype);
/* True for a member of OPTIC_DTYPE_LIST (token included). */
OPTIC_API bool optic_dtype_valid(optic_dtype dtype);
/* f16, bf16, f32, f64. */
OPTIC_API bool optic_dtype_is_float(optic_dtype dtype);
/* s8..s64 and u8..u64 (not pred). */
OPTIC_API bool optic_dtype_is_int(optic_dtype dtype);
/* s8, s16, s32, s64. */
OPTIC_API bool optic_dtype_is_signed_int(optic_dtype dtype);
/* Bits of an integer dtype (8..64), 0 for any other. */
OPTIC_API int optic_dtype_int_bits(optic_dtype dtype);
/* True for a dtype that holds values (every valid one but token). */
OPTIC_API bool optic_dtype_has_values(optic_dtype dtype);

/* Element conversion with XLA's `convert` semantics (docs/dtypes.md):
 * integer -> integer keeps the low bits (sign- or zero-extended by the source's
 * signedness); float -> float and integer -> float round to nearest, ties to
 * even, in one step (overflow gives inf); float -> integer truncates toward zero
 * and saturates at the target's limits, NaN -> 0; anything -> pred is x != 0
 * (NaN -> true); pred -> anything is 0 or 1. A NaN converted between float
 * types stays a NaN of the same sign (quiet, high payload bits kept). n
 * elements from src (dtype from) to dst (dtype to); src and dst must not
 * overlap unless they are the same pointer and the sizes are equal.
 * INVALID_ARGUMENT for token or an invalid dtype, or NULL with n > 0. */
OPTIC_API optic_status optic_convert_elements(optic_dtype from, const void *src, optic_dtype to, void *dst, size_t n);
/* One value each, round to nearest even (NaN stays NaN; overflow -> inf). */
OPTIC_API uint16_t optic_f32_to_bf16(float x);
OPTIC_API float optic_bf16_to_f32(uint16_t h);
OPTIC_API uint16_t optic_f32_to_f16(float x);
OPTIC_API float optic_f16_to_f32(uint16_t h);
OPTIC_API uint16_t optic_f64_to_bf16(double x);
OPTIC_API uint16_t optic_f64_to_f16(double x);
/* XLA's spelling ("f32", "pred"); "invalid" for anything else. */
OPTIC_API const char *optic_dtype_name(optic_dtype dtype);
/* Parses XLA's spelling. OPTIC_ERR_INVALID_ARGUMENT for an unknown name. */
OPTIC_API optic_status optic_dtype_from_name(const char *name, optic_dtype *out);

/* ----------------------------------------------------------------- shape */

#define OPTIC_MAX_RANK 8

/* A dense row-major array shape. Plain value type: copy it freely. rank 0 is a
 * scalar (one element). Build it with optic_shape_make so it is validated. */
typedef struct optic_shape {
  int32_t rank;
  int64_t dims[OPTIC_MAX_RANK];
} optic_shape;

/* Validates and fills *out: 0 <= rank <= OPTIC_MAX_RANK, every dim >= 0, and the
 * element count times 8 bytes fits in size_t and in int64_t (so byte sizes of
 * every dtype and all strides are representable). Errors: INVALID_ARGUMENT for
 * a bad rank, negative dim or NULL; OVERFLOW when the size does not fit. */
OPTIC_API optic_status optic_shape_make(int32_t rank, const int64_t *dims, optic_shape *out);
/* Number of elements (1 for a scalar, 0 if any dim is 0). OVERFLOW if it does
 * not fit in size_t; INVALID_ARGUMENT for an invalid shape. */
OPTIC_API optic_status optic_shape_elements(const optic_shape *shape, size_t *out);
/* Bytes of a dense array of that shape and dtype, overflow-checked. */
OPTIC_API optic_status optic_shape_bytes(const optic_shape *shape, optic_dtype dtype, size_t *out);
/* Row-major strides in elements: strides[rank-1] = 1. Writes rank entries. */
OPTIC_API optic_status optic_shape_strides(const optic_shape *shape, int64_t *strides);
OPTIC_API bool optic_shape_equal(const optic_shape *a, const optic_shape *b);
/* Formats "f32[2,3]" (XLA style) into buf; returns the length it needed, like
 * snprintf. dtype may be OPTIC_DTYPE_INVALID to print just "[2,3]". */
OPTIC_API int optic_shape_format(const optic_shape *shape, optic_dtype dtype, char *buf, size_t size);

/* ---------------------------------------------------------------- tensor */

/* A view of a dense row-major array in memory the caller owns: it never
 * allocates or frees. The shared currency of the runtime's inputs and
 * outputs, checkpoint entries and optimizer state. Plain value. */
typedef struct optic_tensor {
  optic_dtype dtype;
  optic_shape shape;
  void *data; /* may be NULL only when the tensor has 0 bytes */
} optic_tensor;

/* A tensor view with a name: a checkpoint entry (optic_ckpt_entry is this
 * type), a piece of optimizer state (optic_optim_state), a named input. The
 * name is borrowed, like the data. */
typedef struct optic_named_tensor {
  const char *name;
  optic_tensor tensor;
} optic_named_tensor;

/* Builds a view; validates dtype and shape (INVALID_ARGUMENT), and that data
 * is non-NULL unless the array is empty. */
OPTIC_API optic_status optic_tensor_make(optic_dtype dtype, const optic_shape *shape, void *data, optic_tensor *out);
/* Bytes of the viewed array (overflow-checked, as optic_shape_bytes). */
OPTIC_API optic_status optic_tensor_bytes(const optic_tensor *t, size_t *out);

/* ------------------------------------------------------------ allocation */

#define OPTIC_DEFAULT_ALIGNMENT 64

/* A pluggable allocator. alloc returns memory aligned to `alignment` (a power of
 * two >= sizeof(void*)) or NULL; free receives the size and alignment that
 * alloc was given. Both must be thread-safe if the allocator is shared between
 * threads. user is passed back unchanged. */
typedef struct optic_allocator {
  void *(*alloc)(void *user, size_t size, size_t alignment);
  void (*free)(void *user, void *ptr, size_t size, size_t alignment);
  void *user;
} optic_allocator;

/* The built-in allocator: posix_memalign for small blocks; for blocks of
 * OPTIC_HUGE_ALLOC_THRESHOLD bytes or more, an anonymous mapping aligned to 2 MiB
 * with madvise(MADV_HUGEPAGE), so first touch faults once per 2 MiB instead of
 * once per 4 KiB. Thread-safe. The returned pointer is static. */
#define OPTIC_HUGE_ALLOC_THRESHOLD ((size_t)4 << 20)
OPTIC_API const optic_allocator *optic_default_allocator(void);

/* Allocates size bytes aligned to alignment (0 means OPTIC_DEFAULT_ALIGNMENT)
 * from allocator (NULL means the default). size 0 yields *out = NULL and OK.
 * The caller owns the block and frees it with optic_free and the same
 * allocator, size and alignment. Errors: INVALID_ARGUMENT (bad alignment, NULL
 * out), OUT_OF_MEMORY (with the size in the message). */
OPTIC_API optic_status optic_alloc(const optic_allocator *allocator, size_t size, size_t alignment, void **out);
/* NULL-safe. */
OPTIC_API void optic_free(const optic_allocator *allocator, void *ptr, size_t size, size_t alignment);

/* Frees a string or byte buffer that an optic call returned for the caller
 * to free (optic_module_to_hlo_text, optic_program_to_text,
 * optic_profiler_trace_json, optic_profile_summary_to_text,
 * optic_npy_encode). Such a buffer comes from optic_default_allocator() and
 * records its own size and allocator just before the bytes, so this hands it
 * back to that allocator's free. NULL-safe. Only for those buffers: never
 * for memory from malloc or optic_alloc, and never free() them. */
OPTIC_API void optic_string_free(void *s);

/* ------------------------------------------------------------------- npy */

/* NumPy .npy files (docs/npy.md): format versions 1.0, 2.0 and 3.0, C order,
 * little-endian, dtypes '<f2' (f16), '<f4' (f32), '<f8' (f64), '|i1' (s8),
 * '<i2' (s16), '<i4' (s32), '<i8' (s64), '|u1' (u8), '<u2' (u16), '<u4' (u32),
 * '<u8' (u64) and '|b1' (pred). NumPy has no bfloat16: a bf16 tensor is written
 * as its 16-bit patterns ('<u2', read back as u16), and optic_npy_read_into
 * fills a bf16 tensor from a '<u2' file; writing a token is UNSUPPORTED.
 * Anything else is refused with a message naming it:
 * UNSUPPORTED for valid files optic cannot hold (big-endian, Fortran order of
 * a non-vector, other dtypes, structured dtypes, rank > OPTIC_MAX_RANK);
 * CORRUPT for a bad magic or header, a truncated file, data longer or shorter
 * than the header's shape, a pred byte other than 0 or 1; OVERFLOW when the
 * shape's byte size does not fit; IO for file system errors (with the path).
 * All functions are thread-safe; they hold no state between calls. */

/* What a .npy header says. */
typedef struct optic_npy_info {
  optic_dtype dtype;
  optic_shape shape;
  size_t data_offset; /* bytes from the start of the file to the first element */
  size_t data_bytes;  /* bytes of the array (dtype size times elements) */
  int version_major;  /* 1, 2 or 3 */
} optic_npy_info;

/* Parses the header at the start of bytes[0..size) (the whole file, or at
 * least its header). Does not look at the data. */
OPTIC_API optic_status optic_npy_parse_header(const void *bytes, size_t size, optic_npy_info *out);

/* Decodes a whole .npy file held in memory: *out gets the dtype, shape and a
 * new buffer from optic_alloc(allocator, data_bytes, 0) (allocator NULL means
 * the default) that the caller releases with optic_npy_free. size must be
 * exactly data_offset + data_bytes. On error *out is zeroed. */
OPTIC_API optic_status optic_npy_decode(const void *bytes, size_t size, const optic_allocator *allocator,
                                        optic_tensor *out);
/* Reads a .npy file into a new buffer, as optic_npy_decode. */
OPTIC_API optic_status optic_npy_read(const char *path, const optic_allocator *allocator, optic_tensor *out);
/* Reads a .npy file into the caller's tensor: the file's dtype and shape must
 * equal dst's (SHAPE_MISMATCH naming both otherwise). dst->data is written
 * only when the whole file is valid. */
OPTIC_API optic_status optic_npy_read_into(const char *path, const optic_tensor *dst);
/* Releases a tensor from optic_npy_read/optic_npy_decode (same allocator) and
 * zeroes it. NULL-safe; a zeroed tensor is fine. */
OPTIC_API void optic_npy_free(const optic_allocator *allocator, optic_tensor *t);

/* Writes t as a .npy file (version 1.0, or 2.0 when the header needs it;
 * header padded so the data starts at a multiple of 64 bytes, as NumPy does).
 * Replaces an existing file. */
OPTIC_API optic_status optic_npy_write(const char *path, const optic_tensor *t);
/* The same bytes into a new buffer (*out, *size); the caller frees it with
 * optic_string_free. */
OPTIC_API optic_status optic_npy_encode(const optic_tensor *t, void **out, size_t *size);

/* --------------------------------------------------------- CPU and ISA */

/* X(NAME, name as /proc/cpuinfo spells it). Bits of optic_cpu_info.features. A
 * feature is reported only if the CPU has it AND the OS saves its register
 * state (XGETBV), so a set bit means the instructions can run. */
#define OPTIC_CPU_FEATURE_LIST(X) \
  X(SSE2, "sse2")                 \
  X(SSE4_1, "sse4_1")             \
  X(SSE4_2, "sse4_2")             \
  X(AVX, "avx")                   \
  X(F16C, "f16c")                 \
  X(FMA, "fma")                   \
  X(AVX2, "avx2")                 \
  X(BMI2, "bmi2")                 \
  X(AVX512F, "avx512f")           \
  X(AVX512BW, "avx512bw")         \
  X(AVX512VL, "avx512vl")         \
  X(AVX512DQ, "avx512dq")         \
  X(AVX512CD, "avx512cd")         \
  X(AVX512VNNI, "avx512_vnni")    \
  X(AVX512BF16, "avx512_bf16")    \
  X(AMX_TILE, "amx_tile")         \
  X(AMX_BF16, "amx_bf16")         \
  X(SHA, "sha_ni")                \
  X(NEON, "asimd")

enum {
#define OPTIC_CPU_FEATURE_BIT_(name, str) OPTIC_CPU_BIT_##name,
  OPTIC_CPU_FEATURE_LIST(OPTIC_CPU_FEATURE_BIT_)
#undef OPTIC_CPU_FEATURE_BIT_
      OPTIC_CPU_FEATURE_COUNT_
};
#define OPTIC_CPU_HAS(info, name) ((((info)->features) >> OPTIC_CPU_BIT_##name) & 1u)

typedef struct optic_cpu_info {
  char arch[16];        /* "x86_64" or "aarch64" */
  char vendor[16];      /* "AuthenticAMD", "GenuineIntel", "" on aarch64 */
  char model[64];       /* brand string, e.g. "AMD EPYC 9B45" ("" if unknown) */
  uint64_t features;    /* OPTIC_CPU_BIT_* */
  int32_t logical_cpus; /* online logical CPUs */
  /* Per-core L2 and last-level (largest) data or unified cache of CPU 0, in
   * bytes, from /sys/devices/system/cpu/cpu0/cache (Linux); 0 when unknown. */
  int64_t l2_bytes, llc_bytes;
} optic_cpu_info;

/* Detected once (thread-safe) and cached; the pointer is static. */
OPTIC_API const optic_cpu_info *optic_cpu_info_get(void);
/* /proc/cpuinfo-style name of feature bit `bit`, NULL past the end. */
OPTIC_API const char *optic_cpu_feature_name(int bit);

/* Instruction sets the kernels are built for, in increasing order per
 * architecture (scalar < avx2 < avx512 on x86-64; scalar < neon on aarch64). */
typedef enum optic_isa {
  OPTIC_ISA_SCALAR = 0,
  OPTIC_ISA_AVX2,   /* AVX2 + FMA */
  OPTIC_ISA_AVX512, /* AVX-512 F/BW/VL/DQ (+ AVX2, FMA) */
  OPTIC_ISA_NEON,   /* AArch64 Advanced SIMD */
  OPTIC_ISA_COUNT_
} optic_isa;

OPTIC_API const char *optic_isa_name(optic_isa isa);
OPTIC_API optic_status optic_isa_from_name(const char *name, optic_isa *out);
/* True if this CPU (and OS) can run kernels built for isa. */
OPTIC_API bool optic_isa_supported(optic_isa isa);
/* The best supported ISA, before any cap. */
OPTIC_API optic_isa optic_isa_best(void);

/* The ISA the kernels use: the best supported one, capped by the environment
 * variable OPTIC_ISA=scalar|avx2|avx512|neon when set. Chosen on first call
 * (thread-safe), then fixed until optic_isa_reselect(). An OPTIC_ISA value
 * that is not a known name is ignored; one naming an ISA of another
 * architecture caps to scalar. optic_isa_selection_note() says which. */
OPTIC_API optic_isa optic_isa_selected(void);
/* Why the selection is what it is, e.g. "best supported: avx512" or
 * "OPTIC_ISA=avx2 caps avx512 to avx2". Static storage, valid until reselect. */
OPTIC_API const char *optic_isa_selection_note(void);
/* Re-reads OPTIC_ISA and chooses again (for tests and tools). Must not run
 * concurrently with kernel calls that depend on the choice. */
OPTIC_API void optic_isa_reselect(void);

/* ------------------------------------------------------------------ time */

/* CLOCK_MONOTONIC in nanoseconds. Thread-safe. */
OPTIC_API uint64_t optic_now_ns(void);

/* Version of the library actually linked ("0.1.0"); compare with
 * OPTIC_VERSION_STRING from the headers the caller compiled against. */
OPTIC_API const char *optic_version(void);
/* Compiler that built the library ("gcc 12.2.0", "clang 14.0.6"). Static. */
OPTIC_API const char *optic_build_compiler(void);
/* CMake build type and sanitizers of the library ("Release", "Debug+address,undefined"). */
OPTIC_API const char *optic_build_type(void);

#ifdef __cplusplus
}
#endif
#endif /* OPTIC_CORE_H */
