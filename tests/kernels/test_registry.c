/* The kernel registry (what optic info reports): every entry is named for its
 * ISA, every op has a scalar fallback, no (op, variant, ISA) is listed twice,
 * and the chosen entry is the ISA's own when it exists. */
#include "kernels/registry.h"
#include "tests/harness.h"

static bool same_key(const optic_kernel_desc *a, const optic_kernel_desc *b) {
  return strcmp(a->family, b->family) == 0 && strcmp(a->op, b->op) == 0 && strcmp(a->variant, b->variant) == 0;
}

static void entries_well_formed(void) {
  size_t count;
  const optic_kernel_desc *reg = optic_kernel_registry(&count);
  OT_CHECK(count > 0);
  for (size_t i = 0; i < count; i++) {
    char suffix[32];
    snprintf(suffix, sizeof suffix, "__%s", optic_isa_name(reg[i].isa));
    size_t fl = strlen(reg[i].function), sl = strlen(suffix);
    OT_CHECK(fl > sl && strcmp(reg[i].function + fl - sl, suffix) == 0, "%s is listed as %s", reg[i].function,
             optic_isa_name(reg[i].isa));
    bool has_scalar = false;
    for (size_t k = 0; k < count; k++) {
      if (!same_key(&reg[i], &reg[k])) continue;
      has_scalar |= reg[k].isa == OPTIC_ISA_SCALAR;
      OT_CHECK(k == i || reg[k].isa != reg[i].isa, "%s %s.%s listed twice for %s", reg[i].family, reg[i].op,
               reg[i].variant, optic_isa_name(reg[i].isa));
    }
    OT_CHECK(has_scalar, "%s %s.%s has no scalar fallback", reg[i].family, reg[i].op, reg[i].variant);
  }
}

static void chosen_prefers_the_isa(void) {
  size_t count;
  const optic_kernel_desc *reg = optic_kernel_registry(&count);
  for (size_t i = 0; i < count; i++) {
    const optic_kernel_desc *c = optic_kernel_chosen(reg[i].family, reg[i].op, reg[i].variant, reg[i].isa);
    OT_CHECK(c == &reg[i], "chosen for %s is %s", reg[i].function, c ? c->function : "NULL");
  }
  OT_CHECK(optic_kernel_chosen("binary", "NOPE", "vv", OPTIC_ISA_SCALAR) == NULL);
}

static const ot_case cases[] = {
    {"entries_well_formed", entries_well_formed},
    {"chosen_prefers_the_isa", chosen_prefers_the_isa},
};
OT_MAIN(cases)
