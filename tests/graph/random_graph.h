/* Seeded random graphs for the schedule, buffer and optimization tests:
 * parameters and constants (zeros, or random values with rg_build_with) of
 * random small shapes, then elementwise ops (unary, binary,
 * compare + select), broadcast, reshape, transpose, reduce (a scalar add
 * computation), slice, tuple and get-tuple-element, and a random root (an
 * array or a tuple). Unreached instructions are kept on purpose (dead code).
 * Builder failures are test failures (the generator only asks for legal ops). */
#ifndef OPTIC_TESTS_GRAPH_RANDOM_GRAPH_H
#define OPTIC_TESTS_GRAPH_RANDOM_GRAPH_H

#include <optic/optic.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct rg_rng {
  uint64_t s;
} rg_rng;

static inline uint64_t rg_next(rg_rng *r) {
  uint64_t x = (r->s += 0x9e3779b97f4a7c15ull);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Uniform in [lo, hi]. */
static inline int64_t rg_int(rg_rng *r, int64_t lo, int64_t hi) {
  return lo + (int64_t)(rg_next(r) % (uint64_t)(hi - lo + 1));
}

/* The seed a test uses: OPTIC_TEST_SEED if set, else a fixed one. */
static inline uint64_t rg_seed(uint64_t fallback) {
  const char *e = getenv("OPTIC_TEST_SEED");
  return (e && *e) ? strtoull(e, NULL, 0) : fallback;
}

typedef struct rg_graph {
  optic_module_t *m;
  optic_comp_id main, add;
} rg_graph;

#define RG_POOL 512

typedef struct rg_pool {
  optic_node_id arr[RG_POOL], tup[RG_POOL];
  int na, nt;
} rg_pool;

static inline optic_node_id rg_pick(rg_rng *r, const rg_pool *p) {
  int lo = (rg_int(r, 0, 1) && p->na > 4) ? p->na - 4 : 0;
  return p->arr[rg_int(r, lo, p->na - 1)];
}

static inline optic_shape rg_shape(rg_rng *r, int32_t max_rank) {
  optic_shape s = {.rank = (int32_t)rg_int(r, 0, max_rank)};
  for (int32_t i = 0; i < s.rank; i++) s.dims[i] = rg_int(r, 0, 19) == 0 ? 0 : rg_int(r, 1, 5);
  return s;
}

static inline size_t rg_elements(const optic_shape *s) {
  size_t n = 0;
  optic_shape_elements(s, &n);
  return n;
}

/* Adds one random op; false on a builder failure (message on stderr). */
static inline bool rg_step(rg_rng *r, rg_graph *g, rg_pool *p, optic_node_id zero) {
  optic_module_t *m = g->m;
  optic_comp_id c = g->main;
  optic_node_id x = rg_pick(r, p), out = OPTIC_NO_NODE;
  const optic_type *t = optic_node_type(m, x);
  optic_shape s = t->shape;
  optic_status st = OPTIC_OK;
  bool to_tuples = false;
  switch (rg_int(r, 0, 11)) {
    case 0:
    case 1: {
      static const optic_opcode un[] = {OPTIC_OP_EXPONENTIAL, OPTIC_OP_NEGATE, OPTIC_OP_TANH,
                                        OPTIC_OP_ABS,         OPTIC_OP_COPY,   OPTIC_OP_LOGISTIC};
      st = optic_graph_unary(m, c, un[rg_int(r, 0, 5)], x, NULL, &out);
      break;
    }
    case 2:
    case 3:
    case 4: {
      static const optic_opcode bin[] = {OPTIC_OP_ADD, OPTIC_OP_SUBTRACT, OPTIC_OP_MULTIPLY, OPTIC_OP_MAXIMUM,
                                         OPTIC_OP_MINIMUM};
      optic_node_id same[RG_POOL];
      int ns = 0;
      for (int i = 0; i < p->na; i++) {
        if (optic_type_equal(optic_node_type(m, p->arr[i]), t)) same[ns++] = p->arr[i];
      }
      optic_node_id y = same[rg_int(r, 0, ns - 1)];
      if (rg_int(r, 0, 3) == 0) {
        optic_node_id pr;
        st = optic_graph_compare(m, c, OPTIC_CMP_LT, x, y, NULL, &pr);
        if (st == OPTIC_OK) st = optic_graph_select(m, c, pr, x, y, NULL, &out);
      } else {
        st = optic_graph_binary(m, c, bin[rg_int(r, 0, 4)], x, y, NULL, &out);
      }
      break;
    }
    case 5: {
      if (s.rank >= 4) return true;
      int32_t at = (int32_t)rg_int(r, 0, s.rank);
      optic_shape o = {.rank = s.rank + 1};
      int64_t dims[OPTIC_MAX_RANK];
      for (int32_t i = 0, k = 0; i < o.rank; i++) {
        if (i == at) {
          o.dims[i] = rg_int(r, 1, 4);
        } else {
          o.dims[i] = s.dims[k];
          dims[k++] = i;
        }
      }
      st = optic_graph_broadcast(m, c, x, &o, dims, s.rank, NULL, &out);
      break;
    }
    case 6: {
      size_t n = rg_elements(&s);
      optic_shape o = {.rank = 1, .dims = {(int64_t)n}};
      if (n == 1 && rg_int(r, 0, 1)) o.rank = 0;
      if (n > 1 && rg_int(r, 0, 1)) {
        int64_t k;
        do k = rg_int(r, 1, (int64_t)n);
        while (n % (size_t)k != 0);
        o = (optic_shape){.rank = 2, .dims = {(int64_t)n / k, k}};
      }
      st = optic_graph_reshape(m, c, x, &o, NULL, &out);
      break;
    }
    case 7: {
      int64_t perm[OPTIC_MAX_RANK];
      for (int32_t i = 0; i < s.rank; i++) perm[i] = i;
      for (int32_t i = s.rank - 1; i > 0; i--) {
        int32_t j = (int32_t)rg_int(r, 0, i);
        int64_t tmp = perm[i];
        perm[i] = perm[j], perm[j] = tmp;
      }
      st = optic_graph_transpose(m, c, x, perm, NULL, &out);
      break;
    }
    case 8: {
      if (s.rank == 0) return true;
      int64_t dims[OPTIC_MAX_RANK];
      int32_t nd = 0;
      for (int32_t i = 0; i < s.rank; i++) {
        if (rg_int(r, 0, 1)) dims[nd++] = i;
      }
      if (nd == 0) dims[nd++] = rg_int(r, 0, s.rank - 1);
      st = optic_graph_reduce(m, c, &x, &zero, 1, dims, nd, g->add, NULL, &out);
      break;
    }
    case 9: {
      int64_t start[OPTIC_MAX_RANK], limit[OPTIC_MAX_RANK], stride[OPTIC_MAX_RANK];
      for (int32_t i = 0; i < s.rank; i++) {
        start[i] = rg_int(r, 0, s.dims[i]);
        limit[i] = rg_int(r, start[i], s.dims[i]);
        stride[i] = rg_int(r, 1, 3);
      }
      st = optic_graph_slice(m, c, x, start, limit, stride, NULL, &out);
      break;
    }
    case 10: {
      optic_node_id els[3];
      int32_t n = (int32_t)rg_int(r, 1, 3);
      for (int32_t i = 0; i < n; i++)
        els[i] = (p->nt > 0 && rg_int(r, 0, 4) == 0) ? p->tup[rg_int(r, 0, p->nt - 1)] : rg_pick(r, p);
      st = optic_graph_tuple(m, c, els, n, NULL, &out);
      to_tuples = true;
      break;
    }
    default: {
      if (p->nt == 0) return true;
      optic_node_id tu = p->tup[rg_int(r, 0, p->nt - 1)];
      const optic_type *tt = optic_node_type(m, tu);
      int64_t i = rg_int(r, 0, tt->tuple_size - 1);
      to_tuples = optic_type_is_tuple(&tt->elements[i]); /* tt dies when the module grows */
      st = optic_graph_get_tuple_element(m, c, tu, i, NULL, &out);
      break;
    }
  }
  if (st != OPTIC_OK) {
    fprintf(stderr, "  random graph builder failed: %s\n", optic_last_error());
    return false;
  }
  if (to_tuples) p->tup[p->nt++] = out;
  else p->arr[p->na++] = out;
  return true;
}

/* A random f32: mostly small values in [-4, 4] on a 1/8 grid, sometimes a
 * special one (±0, ±1, ±inf, NaN, a large or tiny value). */
static inline float rg_float(rg_rng *r) {
  static const float special[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 3e38f, 1e-40f, 0.5f};
  if (rg_int(r, 0, 9) == 0) return special[rg_int(r, 0, 9)];
  return (float)rg_int(r, -32, 32) / 8.0f;
}

/* Adds n_consts f32 constants to the pool: each of a random shape or of a
 * parameter's shape, holding random values or one repeated value (0, -0, 1
 * or 0.5: what the simplifier recognises). */
static inline void rg_add_constants(rg_rng *r, rg_graph *g, rg_pool *p, int32_t n_consts, int32_t n_params) {
  static const float splat[] = {0.0f, -0.0f, 1.0f, 0.5f};
  for (int32_t i = 0; i < n_consts && p->na < RG_POOL; i++) {
    optic_shape sh =
        rg_int(r, 0, 1) ? optic_node_type(g->m, p->arr[rg_int(r, 0, n_params - 1)])->shape : rg_shape(r, 3);
    size_t n = rg_elements(&sh);
    float *v = malloc((n ? n : 1) * sizeof *v);
    if (v == NULL) exit(2);
    bool same = rg_int(r, 0, 3) == 0;
    float one = splat[rg_int(r, 0, 3)];
    for (size_t k = 0; k < n; k++) v[k] = same ? one : rg_float(r);
    if (optic_graph_constant(g->m, g->main, OPTIC_F32, &sh, v, n * sizeof *v, NULL, &p->arr[p->na]) == OPTIC_OK)
      p->na++;
    free(v);
  }
}

/* Builds a random graph of about n_ops ops (n_ops <= 200). */
static inline bool rg_build_with(uint64_t seed, int32_t n_ops, int32_t n_consts, rg_graph *g);
static inline bool rg_build(uint64_t seed, int32_t n_ops, rg_graph *g) { return rg_build_with(seed, n_ops, 0, g); }

/* rg_build plus n_consts extra constants with random values in the pool
 * (n_consts = 0 builds exactly rg_build's graph). */
static inline bool rg_build_with(uint64_t seed, int32_t n_ops, int32_t n_consts, rg_graph *g) {
  rg_rng r = {seed};
  rg_pool *p = calloc(1, sizeof *p);
  optic_node_id x, y, s;
  if (p == NULL || optic_module_create("random", &g->m) != OPTIC_OK) exit(2);
  optic_module_add_computation(g->m, "main", &g->main);
  optic_module_add_computation(g->m, "add", &g->add);
  optic_type sc = optic_type_array(OPTIC_F32, &(optic_shape){.rank = 0});
  optic_graph_parameter(g->m, g->add, 0, &sc, NULL, &x);
  optic_graph_parameter(g->m, g->add, 1, &sc, NULL, &y);
  optic_graph_binary(g->m, g->add, OPTIC_OP_ADD, x, y, NULL, &s);
  optic_computation_set_root(g->m, g->add, s);
  int32_t n_params = (int32_t)rg_int(&r, 1, 3);
  for (int32_t i = 0; i < n_params; i++) {
    optic_shape sh = rg_shape(&r, 3);
    optic_type t = optic_type_array(OPTIC_F32, &sh);
    optic_graph_parameter(g->m, g->main, i, &t, NULL, &p->arr[p->na++]);
  }
  float zeros[64] = {0};
  optic_node_id zero;
  optic_graph_constant(g->m, g->main, OPTIC_F32, &(optic_shape){.rank = 0}, zeros, 4, NULL, &zero);
  if (rg_int(&r, 0, 1)) {
    optic_shape sh = {.rank = 1, .dims = {rg_int(&r, 1, 16)}};
    optic_graph_constant(g->m, g->main, OPTIC_F32, &sh, zeros, (size_t)sh.dims[0] * 4, NULL, &p->arr[p->na++]);
  }
  if (n_consts > 0) rg_add_constants(&r, g, p, n_consts, n_params);
  bool ok = true;
  for (int32_t i = 0; i < n_ops && ok; i++) ok = rg_step(&r, g, p, zero);
  optic_node_id root = rg_pick(&r, p);
  int64_t how = rg_int(&r, 0, 9);
  if (ok && how >= 5 && how < 8) {
    optic_node_id els[3];
    int32_t n = (int32_t)rg_int(&r, 1, 3);
    for (int32_t i = 0; i < n; i++)
      els[i] = (p->nt > 0 && rg_int(&r, 0, 3) == 0) ? p->tup[rg_int(&r, 0, p->nt - 1)] : rg_pick(&r, p);
    ok = optic_graph_tuple(g->m, g->main, els, n, NULL, &root) == OPTIC_OK;
  } else if (how >= 8 && p->nt > 0) {
    root = p->tup[rg_int(&r, 0, p->nt - 1)];
  }
  if (ok) ok = optic_computation_set_root(g->m, g->main, root) == OPTIC_OK;
  free(p);
  return ok;
}

#endif
