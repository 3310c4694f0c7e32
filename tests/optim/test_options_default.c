/* Every options struct of the public API has a _default() (14 of them), and
 * each returns what its header documents: size = sizeof, the documented
 * figure in every field that has one. Where a default is meant to equal
 * passing NULL, the call is made both ways and the observable result
 * compared (checkpoint chunk size, pod core count, clock sync result).
 *
 * Reproduce one case: ./build/release/tests/optim_options_default NAME */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <optic/optic.h>

#include "tests/harness.h"

static void graph_and_compile_defaults(void) {
  optic_optimize_options oo = optic_optimize_options_default();
  OT_CHECK(oo.size == sizeof oo && oo.level == OPTIC_OPT_FULL && oo.max_rounds == 0 &&
           oo.fold_max_bytes == ((int64_t)1 << 20) && oo.max_fusion_size == 0);
  for (int p = 0; p < OPTIC_MAX_PASSES; p++) OT_CHECK(oo.passes[p] == OPTIC_PASS_BY_LEVEL, "pass %d", p);
  optic_grad_options go = optic_grad_options_default();
  OT_CHECK(go.size == sizeof go && go.output == OPTIC_NO_NODE && !go.seeded && go.name == NULL);
  optic_evaluate_options eo = optic_evaluate_options_default();
  OT_CHECK(eo.size == sizeof eo && eo.max_while_iterations == 1000000);
  optic_compile_options co = optic_compile_options_default();
  OT_CHECK(co.size == sizeof co && co.level == OPTIC_OPT_FULL && co.machine == NULL && co.fusion == -1 &&
           co.fold_max_bytes == 0 && co.max_fusion_size == 0 && !co.verify_buffers && co.threads == 0);
}

static void exec_defaults(void) {
  optic_pool_options po = optic_pool_options_default();
  OT_CHECK(po.size == sizeof po && po.allocator == NULL && po.max_retries == 3 && po.backoff_ns == 1000000 &&
           po.max_backoff_ns == 100000000 && po.max_cached_bytes == 0 && po.alignment == 0);
  optic_profiler_options pr = optic_profiler_options_default();
  OT_CHECK(pr.size == sizeof pr && pr.capacity == 65536 && !pr.enabled);
  optic_exec_options eo = optic_exec_options_default();
  OT_CHECK(eo.size == sizeof eo && eo.threads == 0 && eo.device == 0 && eo.max_while_iterations == 1000000 &&
           eo.allocator == NULL && eo.pool == NULL && eo.profiler == NULL && !eo.profile && eo.split_min_elements == 0);
}

static void optim_defaults(void) {
  optic_optim_options o = optic_optim_options_default();
  OT_CHECK(o.size == sizeof o && o.threads == 0 && o.clip_global_norm == 0.0 && !o.skip_nonfinite &&
           o.allocator == NULL && !o.profile);
  optic_optim_t *opt = NULL;
  OT_EXPECT_OK(optic_optim_create(&o, &opt));
  optic_optim_destroy(opt);
  optic_step_engine_options se = optic_step_engine_options_default();
  OT_CHECK(se.size == sizeof se && se.cores == 0 && se.pod == NULL && se.mpi == NULL && se.average_gradients &&
           se.machine == NULL && se.level == OPTIC_OPT_FULL && se.profiler == NULL && !se.profile);
}

static void pod_defaults(void) {
  optic_pod_options po = optic_pod_options_default();
  OT_CHECK(po.size == sizeof po && po.cores == 0 && po.topology == NULL && po.heartbeat_timeout_ns == 2000000000ull &&
           po.timeout_ns == 60000000000ull && po.chunk_bytes == ((size_t)64 << 10) && po.allocator == NULL);
  optic_pod_t *a = NULL, *b = NULL;
  OT_EXPECT_OK(optic_pod_create(&po, &a));
  OT_EXPECT_OK(optic_pod_create(NULL, &b));
  OT_CHECK(a && b && optic_pod_cores(a) == 1 && optic_pod_cores(b) == 1);
  optic_pod_destroy(a);
  optic_pod_destroy(b);
  optic_pod_clock_options co = optic_pod_clock_options_default();
  OT_CHECK(co.size == sizeof co && co.root == 0 && co.rounds == 8 && co.clock_ns == NULL && co.delay_ns == NULL &&
           co.user == NULL);
  optic_pod_mpi_options mo = optic_pod_mpi_options_default();
  OT_CHECK(mo.size == sizeof mo && mo.comm == NULL && mo.timeout_ns == 60000000000ull &&
           mo.chunk_bytes == ((size_t)4 << 20) && mo.max_bytes == 0 && mo.shm_bytes == 0);
}

/* One core syncs with itself: root 0 gets offset 0 and delay 0, with the
 * defaults and with NULL alike. */
static optic_status clock_fn(optic_pod_core_t *core, void *user) {
  optic_clock_filter *f = user;
  optic_pod_clock_options co = optic_pod_clock_options_default();
  optic_status st = optic_pod_clock_sync(core, &co, &f[0]);
  if (st == OPTIC_OK) st = optic_pod_clock_sync(core, NULL, &f[1]);
  return st;
}

static void clock_default_is_null(void) {
  optic_pod_t *pod = NULL;
  OT_EXPECT_OK(optic_pod_create(NULL, &pod));
  optic_clock_filter f[2];
  memset(f, 0xff, sizeof f);
  if (pod) OT_EXPECT_OK(optic_pod_run(pod, clock_fn, f, NULL));
  OT_CHECK(f[0].offset_ns == 0 && f[0].delay_ns == 0 && f[1].offset_ns == 0 && f[1].delay_ns == 0);
  optic_pod_destroy(pod);
}

/* A save with the default options writes 1 MiB hash chunks, as one with
 * NULL options does; both read back with the default read options. */
static void ckpt_defaults(void) {
  optic_ckpt_save_options so = optic_ckpt_save_options_default();
  OT_CHECK(so.size == sizeof so && so.threads == 0 && so.chunk_log2 == 20 && so.keep == 0 && so.io == NULL &&
           !so.record_step && so.step == 0);
  optic_ckpt_read_options ro = optic_ckpt_read_options_default();
  OT_CHECK(ro.size == sizeof ro && ro.threads == 0 && ro.io == NULL);
  char dir[] = "/tmp/optic_options_default_XXXXXX";
  if (mkdtemp(dir) == NULL) {
    OT_CHECK(false, "mkdtemp failed");
    return;
  }
  float data[3] = {1, 2, 3};
  optic_shape sh;
  OT_EXPECT_OK(optic_shape_make(1, (int64_t[]){3}, &sh));
  optic_ckpt_entry e = {"w", {OPTIC_F32, sh, data}};
  for (int k = 0; k < 2; k++) {
    char path[128];
    snprintf(path, sizeof path, "%s/%d.optic", dir, k);
    OT_EXPECT_OK(optic_ckpt_save_file(path, &e, 1, NULL, 0, k ? NULL : &so));
    optic_ckpt_reader_t *r = NULL;
    OT_EXPECT_OK(optic_ckpt_reader_create(path, &ro, &r));
    OT_CHECK(r && optic_ckpt_chunk_bytes(r) == (1u << 20), "%s: chunk %u", path, r ? optic_ckpt_chunk_bytes(r) : 0);
    if (r) OT_EXPECT_OK(optic_ckpt_verify(r));
    optic_ckpt_reader_destroy(r);
    unlink(path);
  }
  rmdir(dir);
}

static const ot_case cases[] = {
    {"graph_and_compile_defaults", graph_and_compile_defaults},
    {"exec_defaults", exec_defaults},
    {"optim_defaults", optim_defaults},
    {"pod_defaults", pod_defaults},
    {"clock_default_is_null", clock_default_is_null},
    {"ckpt_defaults", ckpt_defaults},
};
OT_MAIN(cases)
