/* Benchmark table of the convert family, generated from its X-macro list
 * (kernels/list/convert.inc): y[i] = T(x[i]) with arrays in each op's source
 * and destination types; bytes per element = source size + destination size.
 * Calls kernels only through their declared types. */
#include "bench/kernels/kernel_families.h"
#include "kernels/convert.h"

static void call_f32_f64(void (*fn)(void), size_t n, void *const *a, float s) {
  (void)s;
  ((optic_convert_f32_f64_fn *)fn)(n, a[0], a[1]);
}
static void call_f64_f32(void (*fn)(void), size_t n, void *const *a, float s) {
  (void)s;
  ((optic_convert_f64_f32_fn *)fn)(n, a[0], a[1]);
}
static void call_f32_s32(void (*fn)(void), size_t n, void *const *a, float s) {
  (void)s;
  ((optic_convert_f32_s32_fn *)fn)(n, a[0], a[1]);
}
static void call_s32_f32(void (*fn)(void), size_t n, void *const *a, float s) {
  (void)s;
  ((optic_convert_s32_f32_fn *)fn)(n, a[0], a[1]);
}
static void call_f64_s32(void (*fn)(void), size_t n, void *const *a, float s) {
  (void)s;
  ((optic_convert_f64_s32_fn *)fn)(n, a[0], a[1]);
}
static void call_s32_f64(void (*fn)(void), size_t n, void *const *a, float s) {
  (void)s;
  ((optic_convert_s32_f64_fn *)fn)(n, a[0], a[1]);
}
static void call_f32_pred(void (*fn)(void), size_t n, void *const *a, float s) {
  (void)s;
  ((optic_convert_f32_pred_fn *)fn)(n, a[0], a[1]);
}
static void call_u8_f32(void (*fn)(void), size_t n, void *const *a, float s) {
  (void)s;
  ((optic_convert_u8_f32_fn *)fn)(n, a[0], a[1]);
}

static void call_f32_bf16(void (*fn)(void), size_t n, void *const *a, float s) {
  (void)s;
  ((optic_convert_f32_bf16_fn *)fn)(n, a[0], a[1]);
}
static void call_bf16_f32(void (*fn)(void), size_t n, void *const *a, float s) {
  (void)s;
  ((optic_convert_bf16_f32_fn *)fn)(n, a[0], a[1]);
}
static void call_f32_f16(void (*fn)(void), size_t n, void *const *a, float s) {
  (void)s;
  ((optic_convert_f32_f16_fn *)fn)(n, a[0], a[1]);
}
static void call_f16_f32(void (*fn)(void), size_t n, void *const *a, float s) {
  (void)s;
  ((optic_convert_f16_f32_fn *)fn)(n, a[0], a[1]);
}

/* Per op: the adapter, the (source, destination) array types, and bytes per element. */
#define CVT_f32_f64 .call = call_f32_f64, .types = {BENCH_F32, BENCH_F64}, .bytes_per_element = 12.0
#define CVT_f64_f32 .call = call_f64_f32, .types = {BENCH_F64, BENCH_F32}, .bytes_per_element = 12.0
#define CVT_f32_s32 .call = call_f32_s32, .types = {BENCH_F32, BENCH_S32}, .bytes_per_element = 8.0
#define CVT_s32_f32 .call = call_s32_f32, .types = {BENCH_S32, BENCH_F32}, .bytes_per_element = 8.0
#define CVT_f64_s32 .call = call_f64_s32, .types = {BENCH_F64, BENCH_S32}, .bytes_per_element = 12.0
#define CVT_s32_f64 .call = call_s32_f64, .types = {BENCH_S32, BENCH_F64}, .bytes_per_element = 12.0
#define CVT_f32_pred .call = call_f32_pred, .types = {BENCH_F32, BENCH_U8}, .bytes_per_element = 5.0
#define CVT_u8_f32 .call = call_u8_f32, .types = {BENCH_U8, BENCH_F32}, .bytes_per_element = 5.0
#define CVT_f32_bf16 .call = call_f32_bf16, .types = {BENCH_F32, BENCH_U16}, .bytes_per_element = 6.0
#define CVT_bf16_f32 .call = call_bf16_f32, .types = {BENCH_U16, BENCH_F32}, .bytes_per_element = 6.0
#define CVT_f32_f16 .call = call_f32_f16, .types = {BENCH_F32, BENCH_U16}, .bytes_per_element = 6.0
#define CVT_f16_f32 .call = call_f16_f32, .types = {BENCH_U16, BENCH_F32}, .bytes_per_element = 6.0

static const bench_elementwise entries[] = {
#define X_CVT(op_, isa_, fn_) \
  {.function = #fn_, .isa = OPTIC_ISA_##isa_, .fn = (void (*)(void))fn_, .inputs = 1, .outputs = 1, CVT_##op_},
#include "kernels/list/convert.inc"
#undef X_CVT
};

void bench_register_convert_kernels(void) {
  bench_register_elementwise_table("convert", entries, sizeof entries / sizeof *entries);
}
