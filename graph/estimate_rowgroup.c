/* The runtime's row groups (exec/rowgroup.c) priced as the runtime runs
 * them. A run of consecutive scheduled instructions that all work row by row
 * on the same R rows (f32 kernel-path reduces of the trailing dims of
 * [R, ...], input fusions of R rows, loop fusions whose result is [R, ...]),
 * with at least one reduction among two or more members and each value an
 * earlier member wrote read only row by row, runs as one step: a tile of
 * rows at a time through every member, its intermediates in cache. So the
 * group costs the larger of its members' estimates with their bytes in cache
 * and its own traffic (what it reads from outside and writes for outside) at
 * the roofline, one dispatch, and one barrier when it is split. The members'
 * estimates are scaled to that sum, so the per-instruction figures still add
 * up to the program's. The runtime also refuses a step whose buffer overlaps
 * another member's other than exactly; the buffer plan is not looked at here
 * (docs/cost-model.md). */
#include <optic/attrs.h>

#include "graph/internal.h"
#include "graph/program_internal.h"

enum { RG_NONE, RG_NOOP, RG_REDUCE, RG_INPUT, RG_LOOP };
#define RG_MAX_MEMBERS 64

static bool array_rows(const optic_type *t, double *rows) {
  if (optic_type_is_tuple(t) || t->shape.rank < 1 || t->shape.dims[0] <= 0) return false;
  *rows = (double)t->shape.dims[0];
  return true;
}

/* Whether reduce r reduces exactly the trailing dims 1..rank-1 of its input. */
static bool trailing_reduce(const optic_module_t *m, optic_node_id r, bool leading_rows_only) {
  optic_node_attrs_t a;
  if (optic_node_attrs(m, r, &a) != OPTIC_OK) return false;
  const int32_t rank = optic_node_type(m, optic_node_operand(m, r, 0))->shape.rank;
  bool reduced[OPTIC_MAX_RANK] = {false};
  for (int32_t i = 0; i < a.reduce.count; i++) {
    if (a.reduce.dims[i] < 0 || a.reduce.dims[i] >= rank) return false;
    reduced[a.reduce.dims[i]] = true;
  }
  if (leading_rows_only) return rank >= 2 && !reduced[0] && a.reduce.count == rank - 1;
  for (int32_t d = 1; d < rank; d++)
    if (!reduced[d] && reduced[d - 1]) return false;
  return a.reduce.count >= 1;
}

/* What instruction id is to a row group, and its rows (exec/rowgroup.c,
 * member_kind). */
static int member_kind(const optic_program_t *p, optic_node_id id, double *rows) {
  const optic_module_t *m = p->module;
  const optic_opcode op = optic_node_opcode(m, id);
  *rows = 0;
  if (p->nodes[id].est.est_ns == 0) return RG_NOOP; /* runs no code */
  if (op == OPTIC_OP_REDUCE) {
    if (!program_reduce_is_fast(m, id) || optic_node_operand_count(m, id) != 2 || !trailing_reduce(m, id, true))
      return RG_NONE;
    return array_rows(optic_node_type(m, optic_node_operand(m, id, 0)), rows) ? RG_REDUCE : RG_NONE;
  }
  optic_node_attrs_t a;
  if (op != OPTIC_OP_FUSION || optic_node_attrs(m, id, &a) != OPTIC_OK || program_fusion_runs_as_sequence(m, id) ||
      optic_type_is_tuple(optic_node_type(m, id)))
    return RG_NONE;
  if (a.fusion.kind == OPTIC_FUSION_INPUT) {
    const optic_node_id r = optic_computation_root(m, optic_node_called(m, id, 0));
    if (!trailing_reduce(m, r, false)) return RG_NONE;
    const optic_type *out = optic_node_type(m, r);
    *rows = 1;
    for (int32_t d = 0; d < out->shape.rank; d++) *rows *= (double)out->shape.dims[d];
    return *rows > 0 ? RG_INPUT : RG_NONE;
  }
  if (a.fusion.kind != OPTIC_FUSION_LOOP) return RG_NONE;
  return array_rows(optic_node_type(m, id), rows) ? RG_LOOP : RG_NONE;
}

/* Whether use u (inside a fused computation) reads its operand v, of R rows,
 * row by row: elementwise over the same shape, a broadcast that keeps dim 0
 * as dim 0, or the root reduce of an input fusion. */
static bool use_row_local(const optic_module_t *m, optic_node_id u, optic_node_id v, double R) {
  const optic_type *tv = optic_node_type(m, v), *tu = optic_node_type(m, u);
  const optic_opcode op = optic_node_opcode(m, u);
  optic_node_attrs_t a;
  if (op == OPTIC_OP_BROADCAST)
    return optic_node_attrs(m, u, &a) == OPTIC_OK && a.broadcast.count >= 1 && a.broadcast.dims[0] == 0 &&
           (double)tu->shape.dims[0] == R;
  if (op == OPTIC_OP_REDUCE) return optic_node_operand(m, u, 0) == v && (double)tv->shape.dims[0] == R;
  if (!graph_opcode_is_elementwise(op) || optic_type_is_tuple(tu) || tu->shape.rank != tv->shape.rank) return false;
  for (int32_t d = 0; d < tv->shape.rank; d++)
    if (tu->shape.dims[d] != tv->shape.dims[d]) return false;
  return true;
}

/* Whether member id (kind) reads its operand k only row by row. */
static bool operand_row_local(const optic_module_t *m, optic_node_id id, int kind, int32_t k, double R) {
  if (kind == RG_REDUCE) return k == 0;
  const optic_comp_id f = optic_node_called(m, id, 0);
  if (k >= optic_computation_parameter_count(m, f)) return false;
  const optic_node_id param = optic_computation_parameter(m, f, k);
  const optic_type *t = optic_node_type(m, param);
  if (optic_type_is_tuple(t) || t->shape.rank < 1 || (double)t->shape.dims[0] != R) return false;
  for (int32_t i = 0; i < optic_node_user_count(m, param); i++)
    if (!use_row_local(m, optic_node_user(m, param, i), param, R)) return false;
  return true;
}

static bool in_list(const optic_node_id *ids, int32_t n, optic_node_id id) {
  for (int32_t i = 0; i < n; i++)
    if (ids[i] == id) return true;
  return false;
}

/* Whether id may join the members so far: what they wrote it reads row by row. */
static bool may_join(const optic_module_t *m, optic_node_id id, int kind, double R, const optic_node_id *members,
                     int32_t n) {
  if (n >= RG_MAX_MEMBERS) return false;
  for (int32_t k = 0; k < optic_node_operand_count(m, id); k++) {
    if (in_list(members, n, optic_node_operand(m, id, k)) && !operand_row_local(m, id, kind, k, R)) return false;
  }
  return true;
}

/* Bytes the group moves from and to outside it: operands none of its members
 * wrote (each once), and results an instruction outside it (or the root)
 * reads. */
static double group_traffic(const optic_module_t *m, optic_comp_id c, const optic_node_id *members, int32_t n) {
  double bytes = 0;
  const optic_node_id root = optic_computation_root(m, c);
  optic_node_id read[RG_MAX_MEMBERS * 8];
  int32_t n_read = 0;
  for (int32_t i = 0; i < n; i++) {
    const optic_node_id id = members[i];
    for (int32_t k = 0; k < optic_node_operand_count(m, id); k++) {
      const optic_node_id o = optic_node_operand(m, id, k);
      if (in_list(members, n, o) || in_list(read, n_read, o)) continue;
      bytes += graph_array_bytes(optic_node_type(m, o));
      if (n_read < RG_MAX_MEMBERS * 8) read[n_read++] = o;
    }
    bool outside = id == root;
    for (int32_t u = 0; u < optic_node_user_count(m, id) && !outside; u++)
      outside = !in_list(members, n, optic_node_user(m, id, u));
    if (outside) bytes += graph_array_bytes(optic_node_type(m, id));
  }
  return bytes;
}

/* Whether the runtime splits the group over its threads: always on more
 * than one, unless a by-size split rule finds it touches fewer elements
 * (results and operands of its members) than the rule's minimum. */
static bool group_splits(const optic_program_t *p, const optic_node_id *members, int32_t n) {
  if (p->machine.cores <= 1) return false;
  if (p->options.split_min_elements <= 0) return true;
  const optic_module_t *m = p->module;
  double touched = 0;
  for (int32_t i = 0; i < n; i++) {
    touched += graph_array_elements(optic_node_type(m, members[i]));
    for (int32_t k = 0; k < optic_node_operand_count(m, members[i]); k++)
      touched += graph_array_elements(optic_node_type(m, optic_node_operand(m, members[i], k)));
  }
  return touched >= (double)p->options.split_min_elements;
}

/* Prices group members[0, n) of computation c and rescales their estimates. */
static void price_group(optic_program_t *p, optic_comp_id c, const optic_node_id *members, int32_t n) {
  const optic_module_t *m = p->module;
  const bool split = group_splits(p, members, n);
  optic_machine mc = split ? p->machine : p->machine1;
  const double traffic = group_traffic(m, c, members, n);
  const optic_cost moved = {0, 0, traffic};
  const double stream = graph_machine_estimate_at_ns(&mc, &moved, traffic) - mc.op_overhead_ns;
  mc.cache_bytes = 1e300; /* a tile's values are in cache */
  double now = 0, in_cache = 0;
  for (int32_t i = 0; i < n; i++) {
    program_node *pn = &p->nodes[members[i]];
    now += pn->est.est_ns;
    in_cache += program_node_estimate_on_ns(p, &mc, members[i], optic_node_opcode(m, members[i]), &pn->est.cost) -
                mc.op_overhead_ns;
  }
  const double group = (in_cache > stream ? in_cache : stream) + mc.op_overhead_ns + (split ? mc.sync_ns : 0);
  if (!(now > 0) || !(group > 0)) return;
  for (int32_t i = 0; i < n; i++) p->nodes[members[i]].est.est_ns *= group / now;
}

void program_price_row_groups(optic_program_t *p, optic_comp_id c, const optic_node_id *order, int32_t n) {
  const optic_module_t *m = p->module;
  optic_node_id members[RG_MAX_MEMBERS];
  for (int32_t a = 0; a < n; a++) {
    double R;
    const int first = member_kind(p, order[a], &R);
    if (first == RG_NONE || first == RG_NOOP) continue;
    int32_t count = 0, reduces = 0, last = a;
    for (int32_t b = a; b < n; b++) {
      double Rb = R;
      const int kb = b == a ? first : member_kind(p, order[b], &Rb);
      if (kb == RG_NOOP) continue;
      if (kb == RG_NONE || Rb != R || !may_join(m, order[b], kb, R, members, count)) break;
      members[count++] = order[b];
      reduces += kb == RG_REDUCE || kb == RG_INPUT;
      last = b;
    }
    if (count >= 2 && reduces >= 1) {
      price_group(p, c, members, count);
      a = last;
    }
  }
}
