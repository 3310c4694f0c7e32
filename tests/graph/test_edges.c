/* Operand/user edges (graph/module.c): the back indices that make adding and
 * removing an edge O(1) stay in sync through builds, replace_all_uses and
 * removals; user lists are unordered, so results must not depend on their
 * order (optimized HLO text and compiled programs are compared with every
 * user list shuffled); and stripping the users of one heavily shared
 * instruction, front first, is linear. */
#include <time.h>

#include "graph/internal.h"
#include "tests/graph/random_graph.h"
#include "tests/harness.h"
#include "tests/hlo_files.h"

/* Every invariant of graph/internal.h's edge comment; prints the first
 * broken one. */
static bool edges_in_sync(const optic_module_t *m) {
  for (optic_node_id id = 0; id < m->n_instrs; id++) {
    const optic_instr *in = graph_instr(m, id);
    if (in == NULL) continue;
    for (int32_t k = 0; k < in->n_operands; k++) {
      const optic_instr *o = graph_instr(m, in->operands[k]);
      if (o == NULL) {
        fprintf(stderr, "  %s: operand %d is not live\n", in->name, (int)k);
        return false;
      }
      int32_t owners = 0;
      for (int32_t j = 0; j < in->n_operands; j++) owners += in->operands[j] == in->operands[k] && in->user_pos[j] >= 0;
      if (owners != 1) {
        fprintf(stderr, "  %s: operand %s is listed by %d slots\n", in->name, o->name, (int)owners);
        return false;
      }
      int32_t at = in->user_pos[k];
      if (at >= 0 && (at >= o->n_users || o->users[at] != id || o->user_slot[at] != k)) {
        fprintf(stderr, "  %s: slot %d says entry %d of %s's users, which does not point back\n", in->name, (int)k,
                (int)at, o->name);
        return false;
      }
    }
    for (int32_t u = 0; u < in->n_users; u++) {
      const optic_instr *user = graph_instr(m, in->users[u]);
      int32_t s = in->user_slot[u];
      if (user == NULL || s < 0 || s >= user->n_operands || user->operands[s] != id || user->user_pos[s] != u) {
        fprintf(stderr, "  %s: user entry %d (%d, slot %d) does not point back\n", in->name, (int)u, (int)in->users[u],
                (int)s);
        return false;
      }
    }
  }
  return true;
}

/* Shuffles every user list (and fixes the back indices), as swap-removals
 * in some other order would have left them. */
static void shuffle_users(optic_module_t *m, rg_rng *r) {
  for (optic_node_id id = 0; id < m->n_instrs; id++) {
    optic_instr *in = &m->instrs[id];
    if (in->removed) continue;
    for (int32_t u = in->n_users - 1; u > 0; u--) {
      int32_t v = (int32_t)rg_int(r, 0, u);
      optic_node_id t = in->users[u];
      in->users[u] = in->users[v], in->users[v] = t;
      int32_t s = in->user_slot[u];
      in->user_slot[u] = in->user_slot[v], in->user_slot[v] = s;
    }
    for (int32_t u = 0; u < in->n_users; u++) m->instrs[in->users[u]].user_pos[in->user_slot[u]] = u;
  }
}

static void duplicate_operands_are_listed_once(void) {
  optic_module_t *m = NULL;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("dup", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  optic_type t = optic_type_array(OPTIC_F32, &(optic_shape){.rank = 1, .dims = {4}});
  optic_node_id x, y, xx, xy, e;
  OT_EXPECT_OK(optic_graph_parameter(m, c, 0, &t, NULL, &x));
  OT_EXPECT_OK(optic_graph_parameter(m, c, 1, &t, NULL, &y));
  OT_EXPECT_OK(optic_graph_binary(m, c, OPTIC_OP_ADD, x, x, NULL, &xx));
  OT_EXPECT_OK(optic_graph_binary(m, c, OPTIC_OP_MULTIPLY, x, y, NULL, &xy));
  OT_EXPECT_OK(optic_graph_unary(m, c, OPTIC_OP_EXPONENTIAL, x, NULL, &e));
  OT_CHECK(optic_node_user_count(m, x) == 3 && edges_in_sync(m));
  /* xy takes y already: x's slot stops being listed, y lists xy once */
  OT_EXPECT_OK(optic_node_replace_all_uses(m, x, y));
  OT_CHECK(optic_node_user_count(m, x) == 0 && optic_node_user_count(m, y) == 3 && edges_in_sync(m));
  optic_node_id n2;
  OT_EXPECT_OK(optic_graph_unary(m, c, OPTIC_OP_NEGATE, xx, NULL, &n2));
  /* the user that is `new` itself keeps its operand */
  OT_EXPECT_OK(optic_node_replace_all_uses(m, xx, n2));
  OT_CHECK(optic_node_user_count(m, xx) == 1 && optic_node_user(m, xx, 0) == n2 && edges_in_sync(m));
  OT_EXPECT_OK(optic_computation_set_root(m, c, n2));
  OT_EXPECT_OK(optic_node_remove(m, xy));
  OT_CHECK(optic_node_user_count(m, y) == 2 && edges_in_sync(m));
  optic_module_destroy(m);
}

/* Random edits on random graphs: replace_all_uses by an older instruction
 * of the same type, or by old's user with the smallest id if it has old's type
 * (which keeps its own operand), and removal of dead instructions in random
 * order; edges are checked after every edit. Both replacements keep every
 * operand's id below its user's, so no edit makes a cycle. */
static void random_edits_keep_edges_in_sync(void) {
  uint64_t seed = rg_seed(0xed9e5);
  const long n = 150;
  long edits = 0, removals = 0, failures = 0;
  for (long gi = 0; gi < n && failures == 0; gi++) {
    rg_graph g;
    uint64_t gseed = seed + (uint64_t)gi;
    if (!rg_build(gseed, 20 + (int32_t)(gi % 80), &g)) {
      ot_fail_(__FILE__, __LINE__, "graph seed %#llx did not build", (unsigned long long)gseed);
      optic_module_destroy(g.m);
      return;
    }
    optic_module_t *m = g.m;
    rg_rng r = {gseed ^ 0xabcdefull};
    if (!edges_in_sync(m)) failures++;
    for (int step = 0; step < 60 && failures == 0; step++) {
      optic_node_id old = (optic_node_id)rg_int(&r, 0, m->n_instrs - 1);
      const optic_instr *o = graph_instr(m, old);
      if (o == NULL || o->comp != g.main) continue;
      int64_t what = rg_int(&r, 0, 2);
      optic_node_id nw = OPTIC_NO_NODE;
      if (what == 0) {
        for (optic_node_id c = old - 1; c >= 0 && nw == OPTIC_NO_NODE; c--) {
          const optic_instr *ci = graph_instr(m, c);
          if (ci && ci->comp == g.main && optic_type_equal(&ci->type, &o->type) && rg_int(&r, 0, 2) == 0) nw = c;
        }
      } else if (what == 1 && o->n_users > 0) {
        optic_node_id first = o->users[0];
        for (int32_t u = 1; u < o->n_users; u++) first = o->users[u] < first ? o->users[u] : first;
        if (optic_type_equal(&m->instrs[first].type, &o->type)) nw = first;
      } else if (o->n_users == 0 && m->comps[g.main].root != old && o->op != OPTIC_OP_PARAMETER) {
        OT_EXPECT_OK(optic_node_remove(m, old));
        removals++;
      }
      if (nw != OPTIC_NO_NODE) {
        OT_EXPECT_OK(optic_node_replace_all_uses(m, old, nw));
        edits++;
      }
      if (!edges_in_sync(m)) {
        ot_fail_(__FILE__, __LINE__, "graph seed %#llx: edges out of sync after step %d (edit %lld of %d -> %d)",
                 (unsigned long long)gseed, step, (long long)what, (int)old, (int)nw);
        failures++;
      }
    }
    optic_module_destroy(m);
  }
  printf("random_edits_keep_edges_in_sync: seed %#llx, %ld graphs, %ld replacements, %ld removals\n",
         (unsigned long long)seed, n, edits, removals);
  OT_CHECK(edits > n && removals > n);
}

/* Optimized HLO text at every level and the compiled program's text. */
static char *results_text(const optic_module_t *m) {
  size_t cap = 1 << 16, len = 0;
  char *all = malloc(cap);
  if (all == NULL) exit(2);
  all[0] = '\0';
  optic_machine mc;
  if (optic_machine_preset("tpu-v4", &mc) != OPTIC_OK) exit(2);
  for (int level = OPTIC_OPT_NONE; level <= OPTIC_OPT_FULL; level++) {
    char *parts[2] = {NULL, NULL};
    optic_module_t *c = NULL;
    optic_optimize_options o = optic_optimize_options_default();
    o.level = (optic_opt_level)level;
    if (optic_module_clone(m, &c) == OPTIC_OK && optic_graph_optimize(c, &o, NULL) == OPTIC_OK) {
      optic_module_to_hlo_text(c, &parts[0]);
    }
    optic_module_destroy(c);
    optic_compile_options co = optic_compile_options_default();
    co.level = (optic_opt_level)level;
    co.machine = &mc;
    co.verify_buffers = true;
    optic_program_t *p = NULL;
    if (optic_compile(m, &co, &p) == OPTIC_OK) {
      optic_program_to_text(p, &parts[1]);
      /* the compile time varies: cut lines naming it */
      char *w = parts[1], *rd = parts[1];
      while (w && *rd) {
        char *nl = strchr(rd, '\n');
        size_t n = nl ? (size_t)(nl - rd) + 1 : strlen(rd);
        bool timing = false;
        for (size_t i = 0; i + 7 <= n; i++) timing |= memcmp(rd + i, "compile", 7) == 0;
        if (!timing) memmove(w, rd, n), w += n;
        rd += n;
      }
      if (w) *w = '\0';
    }
    optic_program_destroy(p);
    for (int k = 0; k < 2; k++) {
      const char *s = parts[k] ? parts[k] : "(failed)\n";
      size_t n = strlen(s);
      while (len + n + 1 > cap) {
        cap *= 2;
        if ((all = realloc(all, cap)) == NULL) exit(2);
      }
      memcpy(all + len, s, n + 1);
      len += n;
      optic_string_free(parts[k]);
    }
  }
  return all;
}

static bool same_results_shuffled(optic_module_t *m, uint64_t seed, const char *what) {
  char *before = results_text(m);
  rg_rng r = {seed};
  bool same = true;
  for (int t = 0; t < 2 && same; t++) {
    shuffle_users(m, &r);
    char *after = results_text(m);
    same = strcmp(before, after) == 0;
    if (!same) ot_fail_(__FILE__, __LINE__, "%s: results change when user lists are shuffled", what);
    free(after);
  }
  free(before);
  return same;
}

static optic_module_t *load_hlo(const char *name) {
  size_t len = 0;
  char *text = ot_hlo_read(name, &len);
  optic_module_t *m = NULL;
  if (text) OT_EXPECT_OK(optic_module_from_hlo_text(text, len, &m));
  free(text);
  return m;
}

static void user_order_does_not_change_results(void) {
  uint64_t seed = rg_seed(0x05de7);
  long graphs = 0;
  for (size_t i = 0; i < OT_REFERENCE_HLO_COUNT; i++) {
    optic_module_t *m = load_hlo(ot_reference_hlo[i]);
    if (m == NULL) continue;
    same_results_shuffled(m, seed + i, ot_reference_hlo[i]);
    optic_module_destroy(m);
    graphs++;
  }
  const long n = 200;
  for (long gi = 0; gi < n; gi++) {
    rg_graph g;
    uint64_t gseed = seed + 1000 + (uint64_t)gi;
    if (!rg_build_with(gseed, 10 + (int32_t)(gi % 120), (int32_t)(gi % 3), &g)) {
      ot_fail_(__FILE__, __LINE__, "graph seed %#llx did not build", (unsigned long long)gseed);
      optic_module_destroy(g.m);
      return;
    }
    char what[64];
    snprintf(what, sizeof what, "random graph seed %#llx", (unsigned long long)gseed);
    same_results_shuffled(g.m, gseed, what);
    optic_module_destroy(g.m);
    graphs++;
  }
  printf("user_order_does_not_change_results: seed %#llx, %ld modules, each compared at 3 levels under 2 shuffles\n",
         (unsigned long long)seed, graphs);
}

static double thread_cpu_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* 100k users of one broadcast removed oldest first (the order that cost a
 * search and a shift of the whole list per removal before the back
 * indices): must take far less CPU than building them did. Checked in
 * optimized unsanitized builds (NDEBUG), printed always. */
static void removing_users_of_a_shared_instruction_is_linear(void) {
  const int32_t n = 100000;
  optic_module_t *m = NULL;
  optic_comp_id c;
  OT_EXPECT_OK(optic_module_create("fan", &m));
  OT_EXPECT_OK(optic_module_add_computation(m, "main", &c));
  optic_type s = optic_type_array(OPTIC_F32, &(optic_shape){.rank = 1, .dims = {8}});
  optic_node_id x, b;
  OT_EXPECT_OK(optic_graph_parameter(m, c, 0, &s, NULL, &x));
  OT_EXPECT_OK(optic_graph_unary(m, c, OPTIC_OP_NEGATE, x, NULL, &b));
  OT_EXPECT_OK(optic_computation_set_root(m, c, b));
  optic_node_id *users = malloc((size_t)n * sizeof *users);
  if (users == NULL) exit(2);
  double t0 = thread_cpu_seconds();
  for (int32_t i = 0; i < n; i++) {
    if (optic_graph_unary(m, c, OPTIC_OP_EXPONENTIAL, b, NULL, &users[i]) != OPTIC_OK) exit(2);
  }
  double t1 = thread_cpu_seconds();
  for (int32_t i = 0; i < n; i++) {
    if (optic_node_remove(m, users[i]) != OPTIC_OK) exit(2);
    if (i == n / 2) OT_CHECK(edges_in_sync(m));
  }
  double t2 = thread_cpu_seconds();
  OT_CHECK(optic_node_user_count(m, b) == 0 && edges_in_sync(m));
  printf("removing_users_of_a_shared_instruction_is_linear: %d users built in %.1f ms CPU, removed in %.1f ms\n",
         (int)n, 1e3 * (t1 - t0), 1e3 * (t2 - t1));
#ifdef NDEBUG
  OT_CHECK(t2 - t1 < 0.1 + (t1 - t0), "removing %d users took %.3f s CPU (building them %.3f s)", (int)n, t2 - t1,
           t1 - t0);
#endif
  free(users);
  optic_module_destroy(m);
}

static const ot_case cases[] = {
    {"duplicate_operands_are_listed_once", duplicate_operands_are_listed_once},
    {"random_edits_keep_edges_in_sync", random_edits_keep_edges_in_sync},
    {"user_order_does_not_change_results", user_order_does_not_change_results},
    {"removing_users_of_a_shared_instruction_is_linear", removing_users_of_a_shared_instruction_is_linear},
};
OT_MAIN(cases)
