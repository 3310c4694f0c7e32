/* optic graph layer, HLO text: XLA's textual module format, read into a
 * module (<optic/graph.h>) and printed back.
 *
 * Contents, in order:
 *   1. import: what the parser accepts and how it maps layouts and names;
 *      optic_module_from_hlo_text, optic_module_from_hlo_file
 *   2. printing: optic_module_to_hlo_text */
#ifndef OPTIC_HLO_H
#define OPTIC_HLO_H

#include <optic/graph.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================ HLO text import
 * (graph/hlo_parse*.c; docs/hlo-text.md). Reads XLA HLO text as printed by
 * XLA (`jax.jit(f).lower(...).as_text(dialect="hlo")`, XLA_FLAGS=--xla_dump_to)
 * or by optic_module_to_hlo_text, into a new module built through the
 * builders (<optic/graph_build.h>): every shape is inferred and must equal the written one.
 *
 * - The entry is the computation marked ENTRY, else the last one; a
 *   computation's root is its ROOT instruction, else its last. Computations
 *   and instructions may be referenced before their definition.
 * - Instruction names are kept ('%' dropped); a name written again in another
 *   computation becomes name.1, name.2, ... (names are module-unique here).
 * - The header's input_output_alias={ {out}: (param, {index}, may-alias) }
 *   is kept (checked against the entry: leaves of equal type), printed back,
 *   and described by optic_program_output; other header attributes except
 *   entry_computation_layout are skipped.
 * - Layouts: values inside the module are logical and row-major. An entry
 *   parameter whose layout (or entry_computation_layout entry) is not the
 *   default {rank-1,...,0} becomes a parameter of its *physical* shape, the
 *   dims listed major to minor (dims[m2m[rank-1]], ..., dims[m2m[0]]), so the
 *   caller feeds the bytes exactly as XLA would store them; a transpose named
 *   "<param>.logical" recovers the logical value. Likewise a root with such a
 *   layout is followed by a transpose "<root>.physical" that becomes the root,
 *   so the caller receives XLA's byte order. A convolution reads and writes
 *   those physical orders directly (its dim labels are rewritten) instead.
 *   Layouts of every other instruction do not change values and are dropped.
 * - Errors carry "line L:C: " and the offending token or instruction:
 *   INVALID_ARGUMENT (syntax, unknown opcode/computation/operand, bad or
 *   missing attribute), UNSUPPORTED (valid XLA that optic cannot represent:
 *   opcodes such as rng, sort, gather, custom-call; element types other than
 *   f32, f64, s32, u8, pred; dynamic dims; tuple constants), SHAPE_MISMATCH
 *   (a written shape that differs from the inferred one), OVERFLOW (numbers or
 *   shapes too large), OUT_OF_MEMORY. On error *out is NULL.
 * Thread safety: reentrant; distinct calls share nothing. */

/* Parses len bytes of text (not necessarily NUL-terminated). The caller
 * owns *out and frees it with optic_module_destroy. */
OPTIC_API optic_status optic_module_from_hlo_text(const char *text, size_t len, optic_module_t **out);
/* Reads and parses a file; messages start with the path ("m.hlo: line 3:7: ..."),
 * IO for a file that cannot be read. */
OPTIC_API optic_status optic_module_from_hlo_file(const char *path, optic_module_t **out);

/* ============================================================ HLO text printing */

/* Prints the module as XLA HLO text into a newly allocated string (the
 * caller frees it with optic_string_free). */
OPTIC_API optic_status optic_module_to_hlo_text(const optic_module_t *m, char **out);

#ifdef __cplusplus
}
#endif
#endif /* OPTIC_HLO_H */
