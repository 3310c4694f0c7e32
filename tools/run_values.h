/* Internal to `optic run`: the values that cross the command line. Inputs from
 * .npy files or a documented deterministic generator; outputs flattened to
 * array leaves and written as .npy files, the --json document or a summary.
 * Prints nothing itself except into the FILE it is given. */
#ifndef OPTIC_TOOLS_RUN_VALUES_H
#define OPTIC_TOOLS_RUN_VALUES_H

#include <stdio.h>

#include <optic/optic.h>

/* A literal of `type` whose array leaves (in tuple order, depth first) are
 * filled by the --random-inputs generator for parameter `index` (see
 * docs/hlo-text.md "optic run"; scripts reproduce it exactly). */
optic_status run_random_literal(const optic_type *type, uint64_t seed, int32_t index, optic_literal_t **out);

/* Reads a .npy file as a literal that must have exactly `type` (an array
 * type); SHAPE_MISMATCH names the parameter, the file and both types. */
optic_status run_npy_literal(const char *path, const optic_type *type, const char *param, optic_literal_t **out);

/* The array leaves of a literal, depth first: at most cap pointers into lit
 * written to leaves; returns how many exist. */
int32_t run_literal_leaves(const optic_literal_t *lit, const optic_literal_t **leaves, int32_t cap);

/* Writes one array literal as a .npy file. */
optic_status run_write_npy(const optic_literal_t *leaf, const char *path);

/* {"outputs":[{"shape":[...],"dtype":"f32","data":[...]},...]} and a newline:
 * data row-major and flat; f32 with %.9g, f64 with %.17g (both round-trip),
 * integers as integers, pred as true/false, NaN and infinities as the
 * strings "nan", "inf", "-inf". Returns false on a write error. */
bool run_print_json(FILE *out, const optic_literal_t *const *leaves, int32_t n);

/* One line per output: type, min, max, mean and the first values. */
void run_print_summary(FILE *out, const optic_literal_t *const *leaves, int32_t n);

#endif
