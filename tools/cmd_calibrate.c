/* `optic calibrate [--out FILE] [--quick]`: measures this host (FMA peak per
 * ISA, exp throughput, bandwidth in L1, L2 and DRAM, the runtime's per-op
 * overhead, each on 1 and all threads; tools/calibrate_measure.c,
 * tools/calibrate_overhead.c), writes the machine model the
 * cost model reads (optic_machine_save) and prints the figures and the model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "tools/calibrate_measure.h"
#include "tools/cli.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: optic calibrate [--out FILE] [--quick]\n"
          "       optic calibrate --help\n\n"
          "Measures this host in a few seconds (--quick: about one) and writes the\n"
          "machine model the compiler's time estimates use: FILE, else $OPTIC_MACHINE,\n"
          "else $XDG_CONFIG_HOME/optic/machine.json (~/.config/optic/machine.json).\n"
          "Prints every figure on 1 and on all OpenMP threads (OMP_NUM_THREADS sets\n"
          "\"all\"), then the model. Rates are the best of a few trials each; the per-op\n"
          "overhead is the median ns per op of optic_program_run on a chain of 100 tiny\n"
          "ops (fusion off, default split policy). The model keeps the 1-thread DRAM\n"
          "figure as core_dram_bandwidth (a run on fewer threads than cores is estimated\n"
          "with min(dram_bandwidth, threads x core_dram_bandwidth)) and the smaller of\n"
          "the two overhead figures as op_overhead_ns. Shared sets from 4 MiB up to the\n"
          "last-level cache that run faster than DRAM make a third tier (llc_bytes,\n"
          "llc_bandwidth, core_llc_bandwidth). Beyond the roofline it measures\n"
          "an sgemm's fraction of the FMA peak (gemm_efficiency), SHA-256 on one core\n"
          "(hash_bandwidth), write + fsync of a new file in $TMPDIR (disk_write_bandwidth)\n"
          "and the runtime's barrier after a split op (sync_ns: the chain with every op\n"
          "split over all threads, per op beyond the unsplit chain; one OpenMP barrier\n"
          "when that is not positive); docs/cost-model.md says how each is used.\n"
          "Exit codes: 0 ok, 1 runtime error (message on stderr), 2 usage error.\n");
}

static void print_pair(FILE *out, const char *what, calib_pair p, double scale, const char *unit) {
  fprintf(out, "  %-34s %10.2f %10.2f  %s\n", what, p.one / scale, p.all / scale, unit);
}

/* The grid in one line: its range and three points on the diagonal. */
static void print_grid_range(FILE *out, const char *what, const double *grid) {
  double lo = grid[0], hi = grid[0];
  for (int i = 1; i < OPTIC_DOT_GRID_POINTS; i++) {
    lo = grid[i] < lo ? grid[i] : lo;
    hi = grid[i] > hi ? grid[i] : hi;
  }
  fprintf(out, "  %-21s %.3g..%.3g of one core's peak; 4^3 %.3g, 64^3 %.3g, 1024^3 %.3g (%d points)\n", what, lo, hi,
          grid[OPTIC_DOT_GRID_INDEX(0, 0, 0)], grid[OPTIC_DOT_GRID_INDEX(2, 2, 2)], grid[OPTIC_DOT_GRID_INDEX(4, 4, 4)],
          OPTIC_DOT_GRID_POINTS);
}

/* One line: each optimizer kind's ns per element (indexed by optic_optim_kind). */
static void print_optim(FILE *out, const char *label, const double *element_ns) {
  fprintf(out, "  %-34s", label);
  for (int k = 0; k < OPTIC_OPTIM_KIND_COUNT_; k++)
    fprintf(out, " %s %.3g", optic_optim_kind_name((optic_optim_kind)k), element_ns[k]);
  fprintf(out, "\n");
}

/* The x += y bandwidths: L1, L2, DRAM, then the shared sets of the LLC ladder. */
static void print_bandwidths(FILE *out, const calib_result *r) {
  char label[64];
  snprintf(label, sizeof label, "x += y, L1 (%zu KiB/thread)", r->l1_set >> 10);
  print_pair(out, label, r->l1_bw, 1e9, "GB/s");
  snprintf(label, sizeof label, "x += y, L2 (%zu KiB/thread)", r->l2_set >> 10);
  print_pair(out, label, r->l2_bw, 1e9, "GB/s");
  snprintf(label, sizeof label, "x += y, DRAM (%zu MiB/thread)", r->dram_set >> 20);
  print_pair(out, label, r->dram_bw, 1e9, "GB/s");
  for (int i = 0; i < r->n_llc; i++) {
    snprintf(label, sizeof label, "x += y, %zu MiB shared%s", r->llc_sets[i] >> 20,
             r->llc_sets[i] <= r->llc_bytes ? " (LLC tier)" : "");
    print_pair(out, label, r->llc_ladder[i], 1e9, "GB/s");
  }
}

static void print_result(FILE *out, const calib_result *r) {
  char label[64];
  fprintf(out, "measured (best of trials)              1 thread %3d threads\n", r->threads);
  for (int isa = 0; isa < OPTIC_ISA_COUNT_; isa++) {
    if (r->fma[isa].one <= 0) continue;
    snprintf(label, sizeof label, "FMA peak, %s", optic_isa_name((optic_isa)isa));
    print_pair(out, label, r->fma[isa], 1e9, "GFLOP/s");
  }
  snprintf(label, sizeof label, "exp (vexp, %s)", optic_isa_name(optic_isa_selected()));
  print_pair(out, label, r->exp_rate, 1e9, "Gexp/s");
  print_bandwidths(out, r);
  print_pair(out, "per-op overhead (runtime, tiny ops)", r->op_overhead_ns, 1, "ns");
  if (r->pin.n_probed > 0) {
    if (r->pin.pinned)
      fprintf(out, "  %-34s %10d %10s  (tiny-op chain per op:", "one-thread figures on CPU", r->pin.cpu, "-");
    else fprintf(out, "  %-34s %10s %10s  (CPUs alike; tiny-op chain per op:", "one-thread figures", "unpinned", "-");
    for (int i = 0; i < r->pin.n_probed; i++) fprintf(out, " CPU %d %.1f ns", r->pin.probe_cpu[i], r->pin.probe_ns[i]);
    fprintf(out, ")\n");
  }
  print_pair(out, "sgemm 256x512x512 per thread", r->beyond.gemm, 1e9, "GFLOP/s");
  fprintf(out, "  %-34s %10.2f %10s  GB/s\n", "SHA-256", r->beyond.hash_bw / 1e9, "-");
  fprintf(out, "  %-34s %10.2f %10s  GB/s\n", "write + fsync (new file, $TMPDIR)", r->beyond.disk_bw / 1e9, "-");
  fprintf(out, "  %-34s %10s %10.0f  ns\n", "OpenMP barrier", "-", r->beyond.barrier_ns);
  fprintf(out, "  %-34s %10s %10.0f  ns\n", "runtime barrier (split op)", "-", r->split_barrier_ns);
  fprintf(out, "  %-34s %10.0f %10s  ns\n", "program run overhead (1 tiny op)", r->classes.run_overhead_ns, "-");
  fprintf(out, "  %-34s %10.2f %10s  GB/s\n", "reduce f32[256,256] dim 1", r->classes.reduce_bandwidth / 1e9, "-");
  fprintf(out, "  %-34s %10.2f %10s  GB/s\n", "reduce f32[256,256] dim 0", r->classes.reduce_strided_bandwidth / 1e9,
          "-");
  fprintf(out, "  %-34s %10.2f %10s  GB/s\n", "reduce f32[512,1024] dim 0 (wide)",
          r->classes.reduce_cols_stream_bandwidth / 1e9, "-");
  fprintf(out, "  %-34s %10.2f %10s  GB/s\n", "fused loop exp(x-y)*y+x", r->classes.loop_bandwidth / 1e9, "-");
  fprintf(out, "  %-34s %10.2f %10s  GB/s, %.3g ns per flop, %.3g ns per exp\n", "fused loop streams (2 vs 8 ops)",
          r->classes.loop_stream_bandwidth / 1e9, "-", r->classes.loop_flop_ns, r->classes.loop_transcendental_ns);
  const calib_classes *c = &r->classes;
  fprintf(out, "  %-34s %10.2f %10s  ns\n", "gather, per element", c->gather_element_ns, "-");
  fprintf(out, "  %-34s %10.2f %10s  ns\n", "scatter, per update element", c->scatter_element_ns, "-");
  fprintf(out, "  %-34s %10.2f %10s  ns\n", "sort, per comparison", c->sort_compare_ns, "-");
  fprintf(out, "  %-34s %10.2f %10s  ns\n", "topk, per comparison", c->topk_compare_ns, "-");
  fprintf(out, "  %-34s %10.2f %10s  ns\n", "bf16 element, per instruction", c->bf16_element_ns, "-");
  fprintf(out, "  %-34s %10.2f %10s  ns\n", "f16 element, per instruction", c->f16_element_ns, "-");
  fprintf(out, "  %-34s %10.2f %10s  GB/s\n", "reduce f32[32,64,32] dims {0,2}", c->reduce_multi_bandwidth / 1e9, "-");
  fprintf(out, "  %-34s %10.2f %10s  ns\n", "reduce via reducer program, step", c->reduce_step_ns, "-");
  fprintf(out, "  %-34s %10.2f %10s  ns\n", "while trip beyond its ops", c->while_iteration_ns, "-");
  fprintf(out, "  %-34s %10.3f %10s  ns, %.3g ns per run\n", "loop leaf (broadcast), per element",
          c->loop_leaf_element_ns, "-", c->loop_leaf_run_ns);
  fprintf(out, "  %-34s %10.2f %10s  ns (and %.3g ns per element)\n", "gather, per run", c->gather_run_ns, "-",
          c->gather_element_ns);
  fprintf(out, "  %-34s %10.3f %10s  ns\n", "topk k <= 64, per row element", c->topk_select_element_ns, "-");
  fprintf(out, "  %-34s %10.3f %10s  ns: from bf16, f16 %.3g; to bf16 %.3g, f16 %.3g\n", "convert, per element",
          c->convert_ns[0], "-", c->convert_ns[1], c->convert_ns[2], c->convert_ns[3]);
  fprintf(out, "  %-34s %10.3f %10s  ns: add bf16, f16 %.3g; max bf16 %.3g, f16 %.3g\n",
          "half reduce fold, per element", c->fold_ns[0], "-", c->fold_ns[1], c->fold_ns[2], c->fold_ns[3]);
  fprintf(out, "  %-34s %10.2f %10s  ns (gathered: %.3g per output; rows: %.3g per row)\n",
          "strided reduce, per column call", c->reduce_cols_call_ns, "-", c->reduce_gather_output_ns, c->reduce_row_ns);
  fprintf(out, "  %-34s %10.3f %10s  ns: inference %.3g, grad %.3g; %.3g ns per op\n",
          "batch norm training, per element", c->batch_norm_element_ns[0], "-", c->batch_norm_element_ns[1],
          c->batch_norm_element_ns[2], c->batch_norm_run_ns);
  for (int k = 0; k < OPTIC_CONV_CLASS_COUNT; k++) {
    snprintf(label, sizeof label, "conv %s (%d shapes)", optic_conv_class_name(k), r->conv.shapes[k]);
    fprintf(out, "  %-34s %10.3f %10s  of peak, %.3g ns/element\n", label, r->conv.efficiency[k], "-",
            r->conv.element_ns[k]);
  }
  fprintf(out, "  %-34s %10.3f %10s  of peak, %.3g ns/element, %.3g ns/call, %.3g ns/packed\n", "dot (8 shapes)",
          r->conv.dot_efficiency, "-", r->conv.dot_element_ns, r->conv.dot_call_ns, r->conv.dot_pack_element_ns);
  print_grid_range(out, "dot grid (format 7)", r->conv.dot_grid);
  print_optim(out, "optimizer step, ns/element (1 core)", r->optim.element_ns);
  fprintf(out, "  %-34s %10.0f %10s  ns, clock read inside it %.0f ns (back to back %.0f)\n",
          "optimizer step beyond its elements", r->optim.step_ns, "-", r->optim.clock_ns, r->beyond.clock_ns);
  if (r->mpi_bandwidth > 0)
    fprintf(out, "  %-34s %10.3g %10s  ns, %.3g GB/s each way (2 ranks)\n", "MPI link (format 10)", r->mpi_latency_ns,
            "-", r->mpi_bandwidth * 1e-9);
  else fprintf(out, "  %-34s not measured: %s\n", "MPI link (format 10)", r->mpi_why);
  fprintf(out, "  %-34s %10.2f %10s  s\n", "dot grid time", r->conv.dot_grid_seconds, "-");
  fprintf(out, "  (%.1f s)\n", r->seconds);
}

static void print_machine(FILE *out, const optic_machine *m, const char *path) {
  fprintf(out, "machine model %s -> %s\n", m->name, path);
  fprintf(out, "  peak_flops            %.4g FLOP/s\n", m->peak_flops);
  fprintf(out, "  peak_transcendentals  %.4g /s\n", m->peak_transcendentals);
  fprintf(out, "  cache_bandwidth       %.4g B/s (up to cache_bytes %.4g B)\n", m->cache_bandwidth, m->cache_bytes);
  fprintf(out, "  dram_bandwidth        %.4g B/s\n", m->dram_bandwidth);
  fprintf(out, "  core_dram_bandwidth   %.4g B/s (one core)\n", m->core_dram_bandwidth);
  if (m->llc_bytes > 0)
    fprintf(out, "  llc_bandwidth         %.4g B/s (up to llc_bytes %.4g B; one core %.4g B/s)\n", m->llc_bandwidth,
            m->llc_bytes, m->core_llc_bandwidth);
  else fprintf(out, "  llc_bandwidth         - (no last-level-cache tier: no shared set ran faster than DRAM)\n");
  fprintf(out, "  op_overhead_ns        %.4g\n", m->op_overhead_ns);
  fprintf(out, "  gemm_efficiency       %.3g (of peak_flops: dot, convolution)\n", m->gemm_efficiency);
  fprintf(out, "  hash_bandwidth        %.4g B/s (SHA-256, one core)\n", m->hash_bandwidth);
  fprintf(out, "  disk_write_bandwidth  %.4g B/s (write + fsync)\n", m->disk_write_bandwidth);
  fprintf(out, "  sync_ns               %.4g (one barrier, all cores)\n", m->sync_ns);
  fprintf(out, "  run_overhead_ns       %.4g (per program run)\n", m->run_overhead_ns);
  fprintf(out, "  reduce_bandwidth      %.4g B/s (reduce over the minor dim)\n", m->reduce_bandwidth);
  fprintf(out, "  reduce_strided_bw     %.4g B/s (reduce over other dims)\n", m->reduce_strided_bandwidth);
  fprintf(out, "  reduce_cols_stream_bw %.4g B/s (column reduce reading > 1 MiB of rows)\n",
          m->reduce_cols_stream_bandwidth);
  fprintf(out, "  pad_element_ns        %.4g, run %.4g; reduce_window_element_ns %.4g, run %.4g (one core)\n",
          m->pad_element_ns, m->pad_run_ns, m->reduce_window_element_ns, m->reduce_window_run_ns);
  fprintf(out, "  clock_read_ns         %.4g, profile_record_ns %.4g, page_touch_ns %.4g (one core)\n",
          m->clock_read_ns, m->profile_record_ns, m->page_touch_ns);
  fprintf(out, "  compile_instruction_ns %.4g, 10k %.4g, 100k %.4g (per instruction at 1k/10k/100k, one core)\n",
          m->compile_instruction_ns, m->compile_instruction_10k_ns, m->compile_instruction_100k_ns);
  fprintf(out, "  conv_call_ns          %.4g (a planned convolution beyond its class, one core)\n", m->conv_call_ns);
  fprintf(out, "  loop_bandwidth        %.4g B/s (loop fusions, format 11)\n", m->loop_bandwidth);
  fprintf(out, "  loop_stream_bw        %.4g B/s (all cores); flop %.3g ns, transcendental %.3g ns (one core)\n",
          m->loop_stream_bandwidth, m->loop_flop_ns, m->loop_transcendental_ns);
  fprintf(out, "  gather_element_ns     %.4g (one core)\n", m->gather_element_ns);
  fprintf(out, "  scatter_element_ns    %.4g (one core)\n", m->scatter_element_ns);
  fprintf(out, "  sort_compare_ns       %.4g (one core)\n", m->sort_compare_ns);
  fprintf(out, "  topk_compare_ns       %.4g (one core)\n", m->topk_compare_ns);
  fprintf(out, "  bf16_element_ns       %.4g (one core)\n", m->bf16_element_ns);
  fprintf(out, "  f16_element_ns        %.4g (one core)\n", m->f16_element_ns);
  fprintf(out, "  reduce_multi_bw       %.4g B/s (reduce over 2+ dims)\n", m->reduce_multi_bandwidth);
  fprintf(out, "  reduce_step_ns        %.4g (reducer program, one core)\n", m->reduce_step_ns);
  fprintf(out, "  while_iteration_ns    %.4g\n", m->while_iteration_ns);
  fprintf(out, "  cpu_clock_ns          %.4g (one read of the thread CPU-time clock in a profiled step)\n",
          m->cpu_clock_ns);
  fprintf(out, "  optim_step_ns         %.4g (an optimizer step beyond its elements, one core)\n", m->optim_step_ns);
  fprintf(out, "  loop_leaf_element_ns  %.4g, run %.4g (one core)\n", m->loop_leaf_element_ns, m->loop_leaf_run_ns);
  fprintf(out, "  gather_run_ns         %.4g (one core)\n", m->gather_run_ns);
  fprintf(out, "  topk_select_element_ns %.4g (k <= 64, one core)\n", m->topk_select_element_ns);
  fprintf(out, "  convert_*_ns          from bf16 %.3g, from f16 %.3g, to bf16 %.3g, to f16 %.3g (one core)\n",
          m->convert_from_bf16_ns, m->convert_from_f16_ns, m->convert_to_bf16_ns, m->convert_to_f16_ns);
  fprintf(out, "  reduce_fold_*_ns      bf16 %.3g, f16 %.3g, minmax bf16 %.3g, f16 %.3g (one core)\n",
          m->reduce_fold_bf16_ns, m->reduce_fold_f16_ns, m->reduce_fold_bf16_minmax_ns, m->reduce_fold_f16_minmax_ns);
  fprintf(out, "  reduce_cols_call_ns   %.4g, reduce_gather_output_ns %.4g (one core)\n", m->reduce_cols_call_ns,
          m->reduce_gather_output_ns);
  fprintf(out, "  batch_norm_*_ns       per op %.3g; per element training %.3g, inference %.3g, grad %.3g (one core)\n",
          m->batch_norm_run_ns, m->batch_norm_training_element_ns, m->batch_norm_inference_element_ns,
          m->batch_norm_grad_element_ns);
  for (int k = 0; k < OPTIC_CONV_CLASS_COUNT; k++)
    fprintf(out, "  conv_%-16s %.3g of peak_flops, %.3g ns/element (one core)\n", optic_conv_class_name(k),
            m->conv_efficiency[k], m->conv_element_ns[k]);
  fprintf(out, "  dot_efficiency        %.3g of peak_flops, %.3g ns/element, %.3g ns/call, %.3g ns/packed element\n",
          m->dot_efficiency, m->dot_element_ns, m->dot_call_ns, m->dot_pack_element_ns);
  print_grid_range(out, "dot_grid_efficiency", m->dot_grid_efficiency);
  const double e[OPTIC_OPTIM_KIND_COUNT_] = {
      m->optim_sgd_element_ns,     m->optim_adam_element_ns, m->optim_adamw_element_ns, m->optim_rmsprop_element_ns,
      m->optim_adagrad_element_ns, m->optim_lamb_element_ns, m->optim_lion_element_ns};
  print_optim(out, "optim_<kind>_element_ns", e);
  if (m->mpi_link_bandwidth > 0)
    fprintf(out, "  mpi_link              %.3g ns + bytes / %.3g GB/s\n", m->mpi_link_latency_ns,
            m->mpi_link_bandwidth * 1e-9);
  else fprintf(out, "  mpi_link              not measured (assumed: docs/cost-model.md)\n");
  fprintf(out, "  cores                 %d\n", (int)m->cores);
  fprintf(out, "  source                %s\n", m->source);
}

optic_status calib_calibrate_and_save(bool quick, const char *path, FILE *out, optic_machine *m, char *path_out,
                                      size_t path_size) {
  char def[4096];
  const char *env = getenv("OPTIC_MACHINE");
  if (!path && env && env[0]) path = env;
  if (!path) {
    optic_status st = optic_machine_default_path(def, sizeof def);
    if (st != OPTIC_OK) return st;
    path = def;
  }
  calib_result r;
  optic_status st = calib_measure(quick, &r);
  if (st != OPTIC_OK) return st;
  calib_to_machine(&r, m);
  if ((st = optic_machine_save(m, path)) != OPTIC_OK) return st;
  if (out) {
    print_result(out, &r);
    print_machine(out, m, path);
  }
  if (path_out && path_out != path) snprintf(path_out, path_size, "%s", path);
  return OPTIC_OK;
}

int optic_cmd_calibrate(int argc, char **argv) {
  const char *path = NULL;
  bool quick = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return OPTIC_EXIT_OK;
    }
    if (strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
      path = argv[++i];
    } else {
      fprintf(stderr, "optic calibrate: unknown or incomplete option '%s'\n", argv[i]);
      usage(stderr);
      return OPTIC_EXIT_USAGE;
    }
  }
  optic_machine m;
  optic_status st = calib_calibrate_and_save(quick, path, stdout, &m, NULL, 0);
  if (st != OPTIC_OK) {
    fprintf(stderr, "optic calibrate: %s: %s\n", optic_status_str(st), optic_last_error());
    return OPTIC_EXIT_ERROR;
  }
  return OPTIC_EXIT_OK;
}
