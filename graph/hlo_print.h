/* Internal: the HLO printer with hooks, so a caller (the compiled program's
 * dump) can print computations in its own order and append comments after
 * instructions, computations and the module. The hooks only append text;
 * they never change what the printer writes itself. Never include from
 * outside graph/. */
#ifndef OPTIC_GRAPH_HLO_PRINT_H
#define OPTIC_GRAPH_HLO_PRINT_H

#include <optic/graph.h>

#include "core/strbuf.h"

typedef struct graph_print_hooks {
  void *ctx;
  /* The order to print comp's instructions in (each live instruction once,
   * operands first), or NULL for creation order. */
  const optic_node_id *(*order)(void *ctx, optic_comp_id comp, int32_t *n);
  /* Appended after an instruction's text, before its newline. */
  void (*after_instruction)(void *ctx, optic_strbuf *s, optic_node_id id);
  /* Appended after a computation's closing brace. */
  void (*after_computation)(void *ctx, optic_strbuf *s, optic_comp_id comp);
  /* Appended after the "HloModule" line, and at the very end. */
  void (*after_header)(void *ctx, optic_strbuf *s);
  void (*after_module)(void *ctx, optic_strbuf *s);
} graph_print_hooks;

/* optic_module_to_hlo_text with hooks (h may be NULL). */
optic_status graph_module_print(const optic_module_t *m, const graph_print_hooks *h, char **out);

#endif
