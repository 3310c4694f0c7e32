/* Shared by the pass tests (tests/graph/test_pass_*.c): a module with a
 * "main" computation, terse builders that stop the test on a builder error
 * (that is a bug in the test, not in the pass), running chosen passes, and
 * structural checks (HLO text, operands before users, users mirror operands,
 * edge back indices). */
#ifndef OPTIC_TESTS_GRAPH_PASS_FIXTURE_H
#define OPTIC_TESTS_GRAPH_PASS_FIXTURE_H

#include <optic/optic.h>

#include "graph/internal.h"
#include "tests/harness.h"

typedef struct fixture {
  optic_module_t *m;
  optic_comp_id main;
} fixture;

#define BUILD(call)                                                                            \
  do {                                                                                         \
    if ((call) != OPTIC_OK) {                                                                  \
      fprintf(stderr, "%s:%d: building failed: %s\n", __FILE__, __LINE__, optic_last_error()); \
      exit(2);                                                                                 \
    }                                                                                          \
  } while (0)

static inline fixture fx_setup(void) {
  fixture f = {0};
  BUILD(optic_module_create("test", &f.m));
  BUILD(optic_module_add_computation(f.m, "main", &f.main));
  return f;
}

static inline optic_shape fx_shape(int32_t rank, const int64_t *dims) {
  optic_shape s;
  BUILD(optic_shape_make(rank, dims, &s));
  return s;
}

static inline optic_node_id fx_param(fixture *f, optic_comp_id c, int32_t n, optic_dtype dt, int32_t rank,
                                     const int64_t *dims) {
  optic_shape s = fx_shape(rank, dims);
  optic_type t = optic_type_array(dt, &s);
  optic_node_id id;
  BUILD(optic_graph_parameter(f->m, c, n, &t, NULL, &id));
  return id;
}

/* A scalar constant of dtype dt holding v (converted). */
static inline optic_node_id fx_scalar(fixture *f, optic_comp_id c, optic_dtype dt, double v) {
  optic_shape s = fx_shape(0, NULL);
  unsigned char buf[8];
  switch (dt) {
    case OPTIC_F32: {
      float f32 = (float)v;
      memcpy(buf, &f32, 4);
      break;
    }
    case OPTIC_F64: memcpy(buf, &v, 8); break;
    case OPTIC_S32: {
      int32_t s32 = (int32_t)v;
      memcpy(buf, &s32, 4);
      break;
    }
    default: buf[0] = (unsigned char)v; break;
  }
  optic_node_id id;
  BUILD(optic_graph_constant(f->m, c, dt, &s, buf, optic_dtype_size(dt), NULL, &id));
  return id;
}

/* broadcast of a scalar x to shape (rank, dims). */
static inline optic_node_id fx_splat(fixture *f, optic_comp_id c, optic_node_id x, int32_t rank, const int64_t *dims) {
  optic_shape s = fx_shape(rank, dims);
  optic_node_id id;
  BUILD(optic_graph_broadcast(f->m, c, x, &s, NULL, 0, NULL, &id));
  return id;
}

static inline optic_node_id fx_bin(fixture *f, optic_comp_id c, optic_opcode op, optic_node_id a, optic_node_id b) {
  optic_node_id id;
  BUILD(optic_graph_binary(f->m, c, op, a, b, NULL, &id));
  return id;
}

static inline optic_node_id fx_un(fixture *f, optic_comp_id c, optic_opcode op, optic_node_id a) {
  optic_node_id id;
  BUILD(optic_graph_unary(f->m, c, op, a, NULL, &id));
  return id;
}

static inline optic_node_id fx_reshape(fixture *f, optic_comp_id c, optic_node_id x, int32_t rank,
                                       const int64_t *dims) {
  optic_shape s = fx_shape(rank, dims);
  optic_node_id id;
  BUILD(optic_graph_reshape(f->m, c, x, &s, NULL, &id));
  return id;
}

static inline optic_node_id fx_transpose(fixture *f, optic_comp_id c, optic_node_id x, const int64_t *perm) {
  optic_node_id id;
  BUILD(optic_graph_transpose(f->m, c, x, perm, NULL, &id));
  return id;
}

/* Options running exactly the passes in `mask` (bit p = optic_pass p). */
static inline optic_optimize_options fx_only(unsigned mask) {
  optic_optimize_options o = optic_optimize_options_default();
  o.level = OPTIC_OPT_NONE;
  for (int p = 0; p < OPTIC_PASS_COUNT_; p++) {
    if (mask & (1u << p)) o.passes[p] = OPTIC_PASS_ENABLE;
  }
  return o;
}
#define ONLY(p) (1u << OPTIC_PASS_##p)

static inline optic_status fx_run(fixture *f, unsigned mask, optic_pass_stats *stats) {
  optic_optimize_options o = fx_only(mask);
  optic_pass_stats local;
  if (stats == NULL) stats = &local;
  memset(stats, 0, sizeof *stats);
  stats->size = sizeof *stats;
  return optic_graph_optimize(f->m, &o, stats);
}

/* The module as HLO text (caller frees with optic_string_free). */
static inline char *fx_hlo(const optic_module_t *m) {
  char *s = NULL;
  BUILD(optic_module_to_hlo_text(m, &s));
  return s;
}

static inline int32_t fx_count(optic_module_t *m, optic_comp_id c) {
  int32_t n;
  optic_computation_instructions(m, c, &n);
  return n;
}

static inline bool fx_exists(const optic_module_t *m, optic_node_id id) { return optic_node_name(m, id) != NULL; }

/* Every computation lists operands before users, every operand edge has its
 * user edge, and user lists hold real users once each. Quadratic in fan-out:
 * for small graphs. */
static inline bool fx_well_formed(optic_module_t *m) {
  bool ok = true;
  for (optic_comp_id c = 0; c < optic_module_computation_count(m); c++) {
    int32_t n;
    const optic_node_id *ids = optic_computation_instructions(m, c, &n);
    optic_node_id max_id = 0;
    for (int32_t i = 0; i < n; i++) max_id = ids[i] > max_id ? ids[i] : max_id;
    int32_t *pos = malloc(((size_t)max_id + 1) * sizeof *pos);
    if (pos == NULL) exit(2);
    for (optic_node_id i = 0; i <= max_id; i++) pos[i] = -1;
    for (int32_t i = 0; i < n; i++) pos[ids[i]] = i;
    for (int32_t i = 0; i < n; i++) {
      for (int32_t k = 0; k < optic_node_operand_count(m, ids[i]); k++) {
        optic_node_id o = optic_node_operand(m, ids[i], k);
        int32_t at = (o >= 0 && o <= max_id) ? pos[o] : -1;
        if (at < 0 || at >= i) {
          fprintf(stderr, "  %s uses %s, which %s\n", optic_node_name(m, ids[i]), optic_node_name(m, o),
                  at < 0 ? "is not in the computation" : "comes later");
          ok = false;
        }
        bool mirrored = false;
        for (int32_t u = 0; u < optic_node_user_count(m, o); u++) mirrored |= optic_node_user(m, o, u) == ids[i];
        if (!mirrored) {
          fprintf(stderr, "  %s is missing from the users of %s\n", optic_node_name(m, ids[i]), optic_node_name(m, o));
          ok = false;
        }
      }
    }
    /* the O(1)-removal back indices (graph/internal.h) point both ways */
    for (int32_t i = 0; i < n; i++) {
      const optic_instr *in = &m->instrs[ids[i]];
      for (int32_t k = 0; k < in->n_operands; k++) {
        const optic_instr *o = &m->instrs[in->operands[k]];
        int32_t at = in->user_pos[k];
        if (at >= 0 && (at >= o->n_users || o->users[at] != ids[i] || o->user_slot[at] != k)) {
          fprintf(stderr, "  %s: operand slot %d's user-list index %d does not point back\n", in->name, (int)k,
                  (int)at);
          ok = false;
        }
      }
      for (int32_t u = 0; u < in->n_users; u++) {
        const optic_instr *user = &m->instrs[in->users[u]];
        int32_t s = in->user_slot[u];
        if (s < 0 || s >= user->n_operands || user->operands[s] != ids[i] || user->user_pos[s] != u) {
          fprintf(stderr, "  %s: user entry %d (%s, slot %d) does not point back\n", in->name, (int)u, user->name,
                  (int)s);
          ok = false;
        }
      }
    }
    /* each user listed once, and only if it does use the instruction */
    for (int32_t i = 0; i < n; i++) {
      int32_t nu = optic_node_user_count(m, ids[i]);
      for (int32_t u = 0; u < nu; u++) {
        optic_node_id user = optic_node_user(m, ids[i], u);
        bool uses = false;
        for (int32_t k = 0; k < optic_node_operand_count(m, user); k++)
          uses |= optic_node_operand(m, user, k) == ids[i];
        for (int32_t v = 0; v < u; v++) {
          if (optic_node_user(m, ids[i], v) == user) uses = false;
        }
        if (!uses) {
          fprintf(stderr, "  %s lists %s as a user wrongly or twice\n", optic_node_name(m, ids[i]),
                  optic_node_name(m, user));
          ok = false;
        }
      }
    }
    free(pos);
  }
  return ok;
}

#endif
