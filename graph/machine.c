/* Machine models for time estimates: the named presets (an uncalibrated
 * host and published TPU figures, each with its source), validation and the
 * roofline estimate. Never measures anything: `optic calibrate` does that and
 * writes the host file read by graph/machine_file.c. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <optic/compile.h>

#include "core/error.h"
#include "graph/internal.h"

/* None of the TPU sources gives an f32 matmul peak, only bf16 (and int8);
 * the MXU multiplies bf16 with f32 accumulation. ASSUMPTION (not sourced):
 * an f32 product at full f32 precision takes about three bf16 MXU passes
 * (each f32 split into bf16 parts), so the f32 peak is bf16 peak / 3. */
#define TPU_F32_FRACTION (1.0 / 3.0)
/* ASSUMPTION (not sourced): transcendentals run on the vector unit at 1/32 of
 * the f32 peak. */
#define TPU_TRANSCENDENTAL_FRACTION (1.0 / 32.0)

/* Model defaults for the figures beyond the roofline (docs/cost-model.md):
 * ASSUMPTIONS, used only when a machine does not carry the figure. A machine
 * without a GEMM figure keeps the plain roofline (what a format-1 file
 * meant); the uncalibrated host assumes OpenBLAS sgemm on mid-sized f32
 * products reaches about 80% of the FMA peak on x86-64. SHA-256 with the SHA extensions runs at about 2.5 cycles per byte
 * (about 1 GB/s at 2.5 GHz); a write + fsync of a new file on an SSD-backed
 * VM disk about 1 GB/s; an OpenMP barrier between cores costs about as much
 * as dispatching two ops. */
#define DEFAULT_GEMM_EFFICIENCY 1.0
#define HOST_DEFAULT_GEMM_EFFICIENCY 0.8
#define DEFAULT_HASH_BANDWIDTH 1e9
#define DEFAULT_DISK_WRITE_BANDWIDTH 1e9
#define DEFAULT_SYNC_OPS 2.0
#define MIN_DEFAULT_SYNC_NS 100.0

typedef struct preset {
  const char *name;
  double bf16_flops;    /* published peak, FLOP/s per chip */
  double hbm_bandwidth; /* bytes/s per chip, GBps read as 1e9 */
  int32_t tensor_cores; /* per chip; core_dram_bandwidth = HBM / TensorCores */
  const char *source;
} preset;

/* Figures per chip. Sources: Google Cloud TPU system-architecture pages
 * (cloud.google.com/tpu/docs/v2, /v3, /v4, /v5e, /v5p, /v6e), as collected in
 * ../shared/reference/tpu_specs.md, cross-checked with the JAX scaling book
 * (jax-ml/scaling-book, tpus.md). */
static const preset tpu_presets[] = {
    /* v2: 45 TFLOPS bf16 is not in the current Cloud docs (secondary sources);
     * HBM bandwidth is not in the Cloud docs either: 700 GB/s from Norrie et
     * al., "The Design Process for Google's Training Chips: TPUv2 and TPUv3"
     * (IEEE Micro 2021). Two TensorCores per chip (v2-8 = 4 chips, 8 cores). */
    {"tpu-v2", 45e12, 700e9, 2,
     "TPU v2 per chip: bf16 45 TFLOPS (secondary), HBM 700 GB/s (Norrie et al. 2021); f32 = bf16/3, per-core HBM = "
     "HBM/cores, assumed"},
    /* v3: Cloud doc 123 TFLOPS (the scaling book says 1.4e14), 900 GBps. */
    {"tpu-v3", 123e12, 900e9, 2,
     "cloud.google.com/tpu/docs/v3 per chip: bf16 123 TFLOPS, HBM 900 GBps; f32 = bf16/3, per-core HBM = HBM/cores, "
     "assumed"},
    /* v4: 275 TFLOPS bf16, 1200 GBps HBM2; two TensorCores (megacore). */
    {"tpu-v4", 275e12, 1200e9, 2,
     "docs.cloud.google.com/tpu/docs/v4 per chip: bf16 275 TFLOPS, HBM 1200 GBps; f32 = bf16/3, per-core HBM = "
     "HBM/cores, assumed"},
    /* v5e: 197 TFLOPS bf16, 819 GBps (another revision says 800 GiBps); one TensorCore. */
    {"tpu-v5e", 197e12, 819e9, 1,
     "docs.cloud.google.com/tpu/docs/v5e per chip: bf16 197 TFLOPS, HBM 819 GBps; f32 = bf16/3, per-core HBM = "
     "HBM/cores, assumed"},
    /* v5p: 459 TFLOPS bf16, 2765 GBps (newer revision 2575 GiBps); 2 TensorCores. */
    {"tpu-v5p", 459e12, 2765e9, 2,
     "docs.cloud.google.com/tpu/docs/v5p per chip: bf16 459 TFLOPS, HBM 2765 GBps; f32 = bf16/3, per-core HBM = "
     "HBM/cores, assumed"},
    /* v6e (Trillium): 918 TFLOPS bf16, 1638 GBps; 1 TensorCore per chip. */
    {"tpu-v6e", 918e12, 1638e9, 1,
     "docs.cloud.google.com/tpu/docs/v6e per chip: bf16 918 TFLOPS, HBM 1638 GBps; f32 = bf16/3, per-core HBM = "
     "HBM/cores, assumed"},
};
#define N_TPU ((int32_t)(sizeof tpu_presets / sizeof tpu_presets[0]))

static void set_name(char *dst, size_t size, const char *src) { snprintf(dst, size, "%s", src); }

/* Conservative figures for a 2-core x86-64 with AVX2 and FMA at ~2.5 GHz that
 * was never calibrated: half the FMA peak (2 cores x 2 FMA units x 8 lanes x
 * 2 flops x 2.5 GHz = 160 GFLOP/s), a vectorized exp at ~1 element per ns
 * per core, one DDR4 channel (~10 GB/s sustained) and L2-resident streaming
 * at ~50 GB/s below 1 MiB, one core streaming ~7 GB/s of it (a single core
 * rarely reaches the channel's bandwidth alone), and a dispatch cost of
 * 200 ns per op. */
static void host_default(optic_machine *m) {
  memset(m, 0, sizeof *m);
  set_name(m->name, sizeof m->name, "host-default");
  m->peak_flops = 80e9;
  m->peak_transcendentals = 2e9;
  m->dram_bandwidth = 10e9;
  m->core_dram_bandwidth = 7e9;
  m->cache_bandwidth = 50e9;
  m->cache_bytes = 1 << 20;
  m->op_overhead_ns = 200;
  m->gemm_efficiency = HOST_DEFAULT_GEMM_EFFICIENCY;
  m->cores = 2;
  set_name(m->source, sizeof m->source,
           "uncalibrated defaults for a 2-core AVX2 x86-64 (run `optic calibrate` to measure this host)");
}

static void tpu(const preset *p, optic_machine *m) {
  memset(m, 0, sizeof *m);
  set_name(m->name, sizeof m->name, p->name);
  m->peak_flops = p->bf16_flops * TPU_F32_FRACTION;
  m->peak_transcendentals = m->peak_flops * TPU_TRANSCENDENTAL_FRACTION;
  m->dram_bandwidth = p->hbm_bandwidth;
  /* ASSUMPTION (not sourced): each TensorCore gets an equal share of HBM. */
  m->core_dram_bandwidth = p->hbm_bandwidth / p->tensor_cores;
  /* No on-chip memory figure is sourced: every op streams from HBM. */
  m->cache_bandwidth = p->hbm_bandwidth;
  m->cache_bytes = 0;
  /* The whole program runs on the device; per-op dispatch is not modelled. */
  m->op_overhead_ns = 0;
  /* The MXU peak already is the matmul peak: no further efficiency factor. */
  m->gemm_efficiency = 1;
  m->cores = p->tensor_cores;
  set_name(m->source, sizeof m->source, p->source);
}

const char *optic_conv_class_name(int32_t c) {
  static const char *const names[OPTIC_CONV_CLASS_COUNT] = {"gemm",    "im2col_mk",    "im2col_km", "direct",
                                                            "grouped", "grouped_rows", "bf16"};
  return c >= 0 && c < OPTIC_CONV_CLASS_COUNT ? names[c] : NULL;
}

int32_t optic_machine_preset_count(void) { return 1 + N_TPU; }

const char *optic_machine_preset_name(int32_t i) {
  if (i == 0) return "host-default";
  if (i >= 1 && i <= N_TPU) return tpu_presets[i - 1].name;
  return NULL;
}

optic_status optic_machine_preset(const char *name, optic_machine *out) {
  if (!name || !out) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_machine_preset: NULL argument");
  if (strcmp(name, "host-default") == 0) {
    host_default(out);
    return OPTIC_OK;
  }
  for (int32_t i = 0; i < N_TPU; i++) {
    if (strcmp(name, tpu_presets[i].name) == 0) {
      tpu(&tpu_presets[i], out);
      return OPTIC_OK;
    }
  }
  char known[256] = "";
  size_t len = 0;
  for (int32_t i = 0; i < optic_machine_preset_count(); i++) {
    int n = snprintf(known + len, sizeof known - len, "%s%s", i ? ", " : "", optic_machine_preset_name(i));
    if (n < 0 || (size_t)n >= sizeof known - len) break;
    len += (size_t)n;
  }
  return optic_fail(OPTIC_ERR_NOT_FOUND, "optic_machine_preset: unknown machine '%s' (known: %s)", name, known);
}

static bool positive(double v) { return isfinite(v) && v > 0; }

/* The figures that are fractions of peak_flops: (0, 1], or 0 (not known). */
static optic_status check_fractions(const optic_machine *m) {
  if (m->gemm_efficiency > 1)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "optic_machine_validate: machine '%s': gemm_efficiency is %g (a fraction of peak_flops: (0, 1], "
                      "0: not known)",
                      m->name, m->gemm_efficiency);
  if (m->dot_efficiency > 1)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "optic_machine_validate: machine '%s': dot_efficiency is %g (a fraction of peak_flops: (0, 1], "
                      "0: not known)",
                      m->name, m->dot_efficiency);
  for (int32_t c = 0; c < OPTIC_CONV_CLASS_COUNT; c++) {
    /* the bf16 GEMM (AMX tiles) may pass the f32 FMA peak */
    double most = c == OPTIC_CONV_CLASS_BF16 ? OPTIC_CONV_BF16_MAX_EFFICIENCY : 1;
    if (m->conv_efficiency[c] > most)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "optic_machine_validate: machine '%s': conv_%s_efficiency is %g (a fraction of peak_flops: "
                        "(0, %g], 0: not known)",
                        m->name, optic_conv_class_name(c), m->conv_efficiency[c], most);
  }
  return OPTIC_OK;
}

/* The dot grid (format 7): all 0 (none), or every entry a fraction of one
 * core's peak in (0, 1]; a partial grid would price some shapes from
 * nothing. */
static optic_status check_dot_grid(const optic_machine *m) {
  bool none = true;
  for (int i = 0; i < OPTIC_DOT_GRID_POINTS; i++) none = none && m->dot_grid_efficiency[i] == 0;
  if (none) return OPTIC_OK;
  for (int i = 0; i < OPTIC_DOT_GRID_POINTS; i++) {
    double v = m->dot_grid_efficiency[i];
    if (isfinite(v) && v > 0 && v <= 1) continue;
    int a = i / (OPTIC_DOT_GRID_AXIS * OPTIC_DOT_GRID_AXIS), b = i / OPTIC_DOT_GRID_AXIS % OPTIC_DOT_GRID_AXIS,
        c = i % OPTIC_DOT_GRID_AXIS;
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "optic_machine_validate: machine '%s': dot_grid_efficiency[%d] (M %lld N %lld K %lld) is %g "
                      "(a fraction of one core's peak: (0, 1], or every entry 0: no grid)",
                      m->name, i, (long long)OPTIC_DOT_GRID_SIZE(a), (long long)OPTIC_DOT_GRID_SIZE(b),
                      (long long)OPTIC_DOT_GRID_SIZE(c), v);
  }
  return OPTIC_OK;
}

/* The last-level-cache tier (format 13): all three figures known, or
 * llc_bytes 0 (no tier); one core cannot reach more than all of them. */
static optic_status check_llc(const optic_machine *m) {
  if (m->llc_bytes == 0) return OPTIC_OK;
  if (!(m->llc_bandwidth > 0) || !(m->core_llc_bandwidth > 0))
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "optic_machine_validate: machine '%s': llc_bytes is %g but llc_bandwidth is %g and "
                      "core_llc_bandwidth %g (a last-level-cache tier needs both > 0; llc_bytes 0: no tier)",
                      m->name, m->llc_bytes, m->llc_bandwidth, m->core_llc_bandwidth);
  if (m->core_llc_bandwidth > m->llc_bandwidth)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "optic_machine_validate: machine '%s': core_llc_bandwidth %g exceeds llc_bandwidth %g (one "
                      "core cannot reach more than all of them)",
                      m->name, m->core_llc_bandwidth, m->llc_bandwidth);
  return OPTIC_OK;
}

/* The figures optic_machine_validate checks: finite and > 0, or >= 0 (0: not known). */
static const struct {
  const char *field;
  size_t offset;
  bool zero_ok;
} figures[] = {
    {"peak_flops", offsetof(optic_machine, peak_flops), false},
    {"peak_transcendentals", offsetof(optic_machine, peak_transcendentals), false},
    {"dram_bandwidth", offsetof(optic_machine, dram_bandwidth), false},
    {"cache_bandwidth", offsetof(optic_machine, cache_bandwidth), false},
    {"cache_bytes", offsetof(optic_machine, cache_bytes), true},
    {"op_overhead_ns", offsetof(optic_machine, op_overhead_ns), true},
    {"gemm_efficiency", offsetof(optic_machine, gemm_efficiency), true},
    {"hash_bandwidth", offsetof(optic_machine, hash_bandwidth), true},
    {"disk_write_bandwidth", offsetof(optic_machine, disk_write_bandwidth), true},
    {"sync_ns", offsetof(optic_machine, sync_ns), true},
    {"run_overhead_ns", offsetof(optic_machine, run_overhead_ns), true},
    {"reduce_bandwidth", offsetof(optic_machine, reduce_bandwidth), true},
    {"reduce_strided_bandwidth", offsetof(optic_machine, reduce_strided_bandwidth), true},
    {"loop_bandwidth", offsetof(optic_machine, loop_bandwidth), true},
    {"gather_element_ns", offsetof(optic_machine, gather_element_ns), true},
    {"scatter_element_ns", offsetof(optic_machine, scatter_element_ns), true},
    {"sort_compare_ns", offsetof(optic_machine, sort_compare_ns), true},
    {"topk_compare_ns", offsetof(optic_machine, topk_compare_ns), true},
    {"bf16_element_ns", offsetof(optic_machine, bf16_element_ns), true},
    {"f16_element_ns", offsetof(optic_machine, f16_element_ns), true},
    {"reduce_multi_bandwidth", offsetof(optic_machine, reduce_multi_bandwidth), true},
    {"while_iteration_ns", offsetof(optic_machine, while_iteration_ns), true},
    {"reduce_step_ns", offsetof(optic_machine, reduce_step_ns), true},
#define CONV_FIGURES(C, NAME)                                                        \
  {"conv_" NAME "_efficiency", offsetof(optic_machine, conv_efficiency[C]), true}, { \
    "conv_" NAME "_element_ns", offsetof(optic_machine, conv_element_ns[C]), true    \
  }
    CONV_FIGURES(OPTIC_CONV_CLASS_GEMM, "gemm"),
    CONV_FIGURES(OPTIC_CONV_CLASS_IM2COL_MK, "im2col_mk"),
    CONV_FIGURES(OPTIC_CONV_CLASS_IM2COL_KM, "im2col_km"),
    CONV_FIGURES(OPTIC_CONV_CLASS_DIRECT, "direct"),
    CONV_FIGURES(OPTIC_CONV_CLASS_GROUPED, "grouped"),
    CONV_FIGURES(OPTIC_CONV_CLASS_GROUPED_ROWS, "grouped_rows"),
    CONV_FIGURES(OPTIC_CONV_CLASS_BF16, "bf16"),
    {"dot_efficiency", offsetof(optic_machine, dot_efficiency), true},
    {"dot_element_ns", offsetof(optic_machine, dot_element_ns), true},
    {"dot_call_ns", offsetof(optic_machine, dot_call_ns), true},
    {"dot_pack_element_ns", offsetof(optic_machine, dot_pack_element_ns), true},
    {"loop_leaf_element_ns", offsetof(optic_machine, loop_leaf_element_ns), true},
    {"loop_leaf_run_ns", offsetof(optic_machine, loop_leaf_run_ns), true},
    {"gather_run_ns", offsetof(optic_machine, gather_run_ns), true},
    {"topk_select_element_ns", offsetof(optic_machine, topk_select_element_ns), true},
    {"convert_from_bf16_ns", offsetof(optic_machine, convert_from_bf16_ns), true},
    {"convert_from_f16_ns", offsetof(optic_machine, convert_from_f16_ns), true},
    {"convert_to_bf16_ns", offsetof(optic_machine, convert_to_bf16_ns), true},
    {"convert_to_f16_ns", offsetof(optic_machine, convert_to_f16_ns), true},
    {"reduce_fold_bf16_ns", offsetof(optic_machine, reduce_fold_bf16_ns), true},
    {"reduce_fold_f16_ns", offsetof(optic_machine, reduce_fold_f16_ns), true},
    {"reduce_fold_bf16_minmax_ns", offsetof(optic_machine, reduce_fold_bf16_minmax_ns), true},
    {"reduce_fold_f16_minmax_ns", offsetof(optic_machine, reduce_fold_f16_minmax_ns), true},
    {"cpu_clock_ns", offsetof(optic_machine, cpu_clock_ns), true},
    {"reduce_cols_call_ns", offsetof(optic_machine, reduce_cols_call_ns), true},
    {"reduce_gather_output_ns", offsetof(optic_machine, reduce_gather_output_ns), true},
    {"reduce_row_ns", offsetof(optic_machine, reduce_row_ns), true},
    {"batch_norm_run_ns", offsetof(optic_machine, batch_norm_run_ns), true},
    {"batch_norm_training_element_ns", offsetof(optic_machine, batch_norm_training_element_ns), true},
    {"batch_norm_inference_element_ns", offsetof(optic_machine, batch_norm_inference_element_ns), true},
    {"batch_norm_grad_element_ns", offsetof(optic_machine, batch_norm_grad_element_ns), true},
    {"optim_sgd_element_ns", offsetof(optic_machine, optim_sgd_element_ns), true},
    {"optim_adam_element_ns", offsetof(optic_machine, optim_adam_element_ns), true},
    {"optim_adamw_element_ns", offsetof(optic_machine, optim_adamw_element_ns), true},
    {"optim_rmsprop_element_ns", offsetof(optic_machine, optim_rmsprop_element_ns), true},
    {"optim_adagrad_element_ns", offsetof(optic_machine, optim_adagrad_element_ns), true},
    {"optim_lamb_element_ns", offsetof(optic_machine, optim_lamb_element_ns), true},
    {"optim_lion_element_ns", offsetof(optic_machine, optim_lion_element_ns), true},
    {"mpi_link_latency_ns", offsetof(optic_machine, mpi_link_latency_ns), true},
    {"mpi_link_bandwidth", offsetof(optic_machine, mpi_link_bandwidth), true},
    {"loop_stream_bandwidth", offsetof(optic_machine, loop_stream_bandwidth), true},
    {"loop_flop_ns", offsetof(optic_machine, loop_flop_ns), true},
    {"loop_transcendental_ns", offsetof(optic_machine, loop_transcendental_ns), true},
    {"optim_step_ns", offsetof(optic_machine, optim_step_ns), true},
    {"llc_bytes", offsetof(optic_machine, llc_bytes), true},
    {"llc_bandwidth", offsetof(optic_machine, llc_bandwidth), true},
    {"core_llc_bandwidth", offsetof(optic_machine, core_llc_bandwidth), true},
    {"reduce_cols_stream_bandwidth", offsetof(optic_machine, reduce_cols_stream_bandwidth), true},
    {"pad_element_ns", offsetof(optic_machine, pad_element_ns), true},
    {"pad_run_ns", offsetof(optic_machine, pad_run_ns), true},
    {"reduce_window_element_ns", offsetof(optic_machine, reduce_window_element_ns), true},
    {"reduce_window_run_ns", offsetof(optic_machine, reduce_window_run_ns), true},
    {"clock_read_ns", offsetof(optic_machine, clock_read_ns), true},
    {"profile_record_ns", offsetof(optic_machine, profile_record_ns), true},
    {"page_touch_ns", offsetof(optic_machine, page_touch_ns), true},
    {"compile_instruction_ns", offsetof(optic_machine, compile_instruction_ns), true},
    {"compile_instruction_10k_ns", offsetof(optic_machine, compile_instruction_10k_ns), true},
    {"compile_instruction_100k_ns", offsetof(optic_machine, compile_instruction_100k_ns), true},
    {"conv_call_ns", offsetof(optic_machine, conv_call_ns), true},
};
optic_status optic_machine_validate(const optic_machine *m) {
  if (!m) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_machine_validate: NULL machine");
  if (memchr(m->name, 0, sizeof m->name) == NULL || m->name[0] == 0)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_machine_validate: name is empty or not terminated");
  if (memchr(m->source, 0, sizeof m->source) == NULL)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_machine_validate: source is not terminated");

  for (size_t i = 0; i < sizeof figures / sizeof figures[0]; i++) {
    double v;
    memcpy(&v, (const char *)m + figures[i].offset, sizeof v);
    bool ok = figures[i].zero_ok ? isfinite(v) && v >= 0 : positive(v);
    if (!ok)
      return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                        "optic_machine_validate: machine '%s': %s is %g (must be finite and %s)", m->name,
                        figures[i].field, v, figures[i].zero_ok ? ">= 0" : "> 0");
  }
  if (!(isfinite(m->core_dram_bandwidth) && m->core_dram_bandwidth >= 0))
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "optic_machine_validate: machine '%s': core_dram_bandwidth is %g (must be finite and >= 0; "
                      "0: dram_bandwidth / cores)",
                      m->name, m->core_dram_bandwidth);
  if (m->core_dram_bandwidth > m->dram_bandwidth)
    return optic_fail(
        OPTIC_ERR_INVALID_ARGUMENT,
        "optic_machine_validate: machine '%s': core_dram_bandwidth %g exceeds dram_bandwidth %g (one core "
        "cannot reach more than all of them)",
        m->name, m->core_dram_bandwidth, m->dram_bandwidth);
  optic_status st = check_llc(m);
  if (st == OPTIC_OK) st = check_fractions(m);
  if (st == OPTIC_OK) st = check_dot_grid(m);
  if (st != OPTIC_OK) return st;
  if (m->cores < 1)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_machine_validate: machine '%s': cores is %d (must be >= 1)",
                      m->name, (int)m->cores);
  return OPTIC_OK;
}

double optic_machine_core_dram_bandwidth(const optic_machine *m) {
  if (!m) return 0;
  if (m->core_dram_bandwidth > 0) return m->core_dram_bandwidth;
  return m->cores >= 1 ? m->dram_bandwidth / m->cores : m->dram_bandwidth;
}

void optic_machine_resolve(const optic_machine *m, optic_machine *out) {
  if (!m || !out) return;
  optic_machine r = *m;
  r.core_dram_bandwidth = optic_machine_core_dram_bandwidth(m);
  if (!(r.gemm_efficiency > 0)) r.gemm_efficiency = DEFAULT_GEMM_EFFICIENCY;
  if (!(r.hash_bandwidth > 0)) r.hash_bandwidth = DEFAULT_HASH_BANDWIDTH;
  if (!(r.disk_write_bandwidth > 0)) r.disk_write_bandwidth = DEFAULT_DISK_WRITE_BANDWIDTH;
  if (!(r.sync_ns > 0) && r.cores > 1) {
    r.sync_ns = DEFAULT_SYNC_OPS * r.op_overhead_ns;
    if (r.sync_ns < MIN_DEFAULT_SYNC_NS) r.sync_ns = MIN_DEFAULT_SYNC_NS;
  }
  *out = r;
}

optic_status optic_machine_for_threads(const optic_machine *m, int32_t threads, optic_machine *out) {
  if (!m || !out) return optic_fail(OPTIC_ERR_INVALID_ARGUMENT, "optic_machine_for_threads: NULL argument");
  optic_status st = optic_machine_validate(m);
  if (st != OPTIC_OK) return st;
  if (threads < 0)
    return optic_fail(OPTIC_ERR_INVALID_ARGUMENT,
                      "optic_machine_for_threads: machine '%s': threads is %d (0: all %d cores, else >= 1)", m->name,
                      (int)threads, (int)m->cores);
  int32_t t = threads == 0 || threads > m->cores ? m->cores : threads;
  optic_machine r;
  optic_machine_resolve(m, &r);
  if (t != m->cores) {
    r.sync_ns = m->cores > 1 ? r.sync_ns * (double)(t - 1) / (double)(m->cores - 1) : r.sync_ns;
    const double f = (double)t / (double)m->cores;
    r.peak_flops *= f;
    r.peak_transcendentals *= f;
    r.cache_bandwidth *= f;
    r.cache_bytes *= f;
    r.reduce_bandwidth *= f;
    r.reduce_strided_bandwidth *= f;
    r.loop_bandwidth *= f;
    r.loop_stream_bandwidth *= f;
    r.reduce_multi_bandwidth *= f;
    r.reduce_cols_stream_bandwidth *= f;
  }
  const double dram = r.core_dram_bandwidth * t, llc = r.core_llc_bandwidth * t;
  if (dram < r.dram_bandwidth) r.dram_bandwidth = dram;
  if (llc < r.llc_bandwidth) r.llc_bandwidth = llc;
  r.cores = t;
  *out = r;
  return OPTIC_OK;
}

/* The bandwidth of an op moving `bytes`: its cache's, else the last-level
 * cache's when the machine has that tier and the bytes fit, else memory's. */
static double tier_bandwidth(const optic_machine *m, double bytes) {
  if (bytes <= m->cache_bytes) return m->cache_bandwidth;
  if (m->llc_bytes > 0 && bytes <= m->llc_bytes && m->llc_bandwidth > m->dram_bandwidth) return m->llc_bandwidth;
  return m->dram_bandwidth;
}

double optic_machine_estimate_ns(const optic_machine *m, const optic_cost *cost) {
  return cost ? graph_machine_estimate_at_ns(m, cost, cost->bytes_accessed) : 0;
}

double optic_machine_estimate_compile_ns(const optic_machine *m, double instructions) {
  if (!m || !(m->compile_instruction_ns > 0) || !(instructions > 0)) return 0;
  double at[3] = {m->compile_instruction_ns, m->compile_instruction_10k_ns, m->compile_instruction_100k_ns};
  for (int i = 1; i < 3; i++)
    if (!(at[i] > 0)) at[i] = at[i - 1];
  const double decade = log10(instructions) - 3; /* 0 at 1000 instructions, 2 at 100000 */
  if (decade <= 0) return instructions * at[0];
  if (decade >= 2) return instructions * at[2];
  const int i = decade < 1 ? 0 : 1;
  return instructions * (at[i] + (at[i + 1] - at[i]) * (decade - i));
}

double graph_machine_estimate_at_ns(const optic_machine *m, const optic_cost *cost, double footprint_bytes) {
  if (!m || !cost) return 0;
  double bw = tier_bandwidth(m, footprint_bytes);
  double t = cost->flops / m->peak_flops;
  double tt = cost->transcendentals / m->peak_transcendentals;
  double tb = cost->bytes_accessed / bw;
  if (tt > t) t = tt;
  if (tb > t) t = tb;
  return t * 1e9 + m->op_overhead_ns;
}

double optic_machine_estimate_gemm_ns(const optic_machine *m, const optic_cost *cost) {
  if (!m || !cost) return 0;
  optic_machine g = *m;
  const double eff = m->gemm_efficiency > 0 ? m->gemm_efficiency : DEFAULT_GEMM_EFFICIENCY;
  g.peak_flops = m->peak_flops * eff;
  return optic_machine_estimate_ns(&g, cost);
}

double optic_machine_estimate_class_ns(const optic_machine *m, const optic_cost *cost, double class_bandwidth) {
  if (!m || !cost) return 0;
  double t = optic_machine_estimate_ns(m, cost);
  if (class_bandwidth > 0) {
    double c = cost->bytes_accessed / class_bandwidth * 1e9 + m->op_overhead_ns;
    if (c > t) t = c;
  }
  return t;
}

bool optic_split_op(int32_t threads, int64_t split_min_elements, double touched_elements, double t1_ns,
                    double barrier_ns) {
  if (split_min_elements > 0) return touched_elements >= (double)split_min_elements;
  return threads > 1 && t1_ns * (1.0 - 1.0 / threads) > barrier_ns;
}
