/* The optimizer kernels against optax's published doctest numbers
 * (tests/data/optax_doctest_expectations.json, copied from the optax @
 * 2edbcbe2 docstrings of alias.py): f(x) = Σx², params [1, 2, 3], five steps
 * with grad = 2·params, f printed as "%.2E" after each step, compared as
 * strings with the file's values. optax's hyperparameters (the file's
 * "_defaults") are mapped onto the kernels' params here, as the optimizer
 * layer will map them; every built ISA the CPU runs is checked. The numbers
 * have 3 significant digits: a smoke test of the conventions, not of accuracy. */
#include "kernels/optim.h"
#include "tests/kernels/kernel_test.h"

#define NCASE_STEPS 5
#define NP 3

/* --------------------------------------------- reading the expectations */

/* tests/data/<name> (OPTIC_TEST_SOURCE_DIR: tests/CMakeLists.txt; the NEON
 * build runs under qemu on the same file system). */
static char *read_data_file(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/data/%s", OPTIC_TEST_SOURCE_DIR, name);
  FILE *f = fopen(path, "rb");
  OT_CHECK(f != NULL, "cannot open %s", path);
  if (!f) return NULL;
  char *text = calloc(1, 1 << 16);
  size_t len = text ? fread(text, 1, (1 << 16) - 1, f) : 0;
  fclose(f);
  OT_CHECK(len > 0 && len < (1 << 16) - 1, "%s: empty or larger than 64 KiB", path);
  return text;
}

/* The NCASE_STEPS strings of "cases" → "<key>" (the file's only arrays of
 * strings); false if the key or the array is not there. */
static bool expected_values(const char *json, const char *key, char out[NCASE_STEPS][16]) {
  const char *cases = strstr(json, "\"cases\"");
  if (!cases) return false;
  char quoted[128];
  snprintf(quoted, sizeof quoted, "\"%s\"", key);
  const char *p = strstr(cases, quoted);
  if (!p || !(p = strchr(p + strlen(quoted), '['))) return false;
  for (int i = 0; i < NCASE_STEPS; i++) {
    const char *open = strchr(p, '"'), *close = open ? strchr(open + 1, '"') : NULL;
    const char *end = strchr(p, ']');
    if (!open || !close || (end && end < open) || close - open - 1 >= 16) return false;
    snprintf(out[i], 16, "%.*s", (int)(close - open - 1), open + 1);
    p = close + 1;
  }
  return true;
}

/* ------------------------------------------------------- the protocol */

typedef enum which { ADAM, ADAMW, SGD, RMSPROP, ADAGRAD, LAMB } which;

typedef struct optax_case {
  const char *key; /* as in the file */
  which opt;
} optax_case;

static const optax_case optax_cases[] = {
    {"adam(learning_rate=0.003)", ADAM},     {"adamw(learning_rate=0.003)", ADAMW},
    {"sgd(learning_rate=0.003)", SGD},       {"rmsprop(learning_rate=0.003)", RMSPROP},
    {"adagrad(learning_rate=1.0)", ADAGRAD}, {"lamb(learning_rate=0.003)", LAMB},
};

/* One optax update of params x with grad g at step t (1-based), through the
 * kernels of table k; s0, s1 are the optimizer's state. optax's defaults (the
 * file's "_defaults") become kernel params as documented in
 * docs/kernels-optim.md: Δ = −γ·u is θ ← θ − γ·u, eps_root and ε-in-the-root
 * are eps_root, adamw's λθ inside −γ(·) is decay DECOUPLED. */
static void optax_step(const optic_optim_kernels *k, which opt, int t, float *x, const float *g, float *s0, float *s1) {
  switch (opt) {
    case ADAM:
    case ADAMW: { /* b1 .9, b2 .999, eps 1e-8, eps_root 0; adamw weight_decay 1e-4 */
      optic_adam_params p = {.lr = 0.003f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f};
      if (opt == ADAMW) p.weight_decay = 1e-4f, p.decay = OPTIC_OPTIM_DECAY_DECOUPLED;
      p.bias_correction1 = optic_optim_bias_correction(p.beta1, (uint64_t)t);
      p.bias_correction2 = optic_optim_bias_correction(p.beta2, (uint64_t)t);
      k->adam(NP, x, g, s0, s1, NULL, &p);
      break;
    }
    case SGD: { /* momentum None */
      optic_sgd_params p = {.lr = 0.003f};
      k->sgd(NP, x, g, NULL, &p);
      break;
    }
    case RMSPROP: { /* decay .9, eps 1e-8 in the root (eps_in_sqrt), initial_scale 0, no momentum */
      optic_rmsprop_params p = {.lr = 0.003f, .alpha = 0.9f, .eps_root = 1e-8f};
      k->rmsprop(NP, x, g, s0, NULL, NULL, &p);
      break;
    }
    case ADAGRAD: { /* eps 1e-7 in the root (g·rsqrt(S + eps)); S starts at 0.1 */
      optic_adagrad_params p = {.lr = 1.0f, .eps_root = 1e-7f};
      k->adagrad(NP, x, g, s0, &p);
      break;
    }
    case LAMB: { /* b1 .9, b2 .999, eps 1e-6, eps_root 0, weight_decay 0 */
      optic_lamb_params p = {.lr = 0.003f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-6f};
      p.bias_correction1 = optic_optim_bias_correction(p.beta1, (uint64_t)t);
      p.bias_correction2 = optic_optim_bias_correction(p.beta2, (uint64_t)t);
      optic_lamb_norms norms;
      k->lamb_moments(NP, x, g, s0, s1, &p, &norms);
      k->lamb_apply(NP, x, s0, s1, &p, optic_lamb_trust_ratio(&norms, 1));
      break;
    }
  }
}

static void optax_doctests(void) {
  char *json = read_data_file("optax_doctest_expectations.json");
  if (!json) return;
  for (int isa = 0; isa < OPTIC_ISA_COUNT_; isa++) {
    const optic_optim_kernels *k = optic_optim_kernels_for((optic_isa)isa);
    if (!k || !optic_isa_supported((optic_isa)isa)) continue;
    for (size_t c = 0; c < sizeof optax_cases / sizeof optax_cases[0]; c++) {
      const optax_case *oc = &optax_cases[c];
      char want[NCASE_STEPS][16];
      if (!expected_values(json, oc->key, want)) {
        OT_CHECK(false, "no values for %s in the expectations file", oc->key);
        continue;
      }
      float x[NP] = {1.0f, 2.0f, 3.0f}, g[NP], s0[NP] = {0}, s1[NP] = {0};
      if (oc->opt == ADAGRAD) s0[0] = s0[1] = s0[2] = 0.1f; /* optax initial_accumulator_value */
      for (int t = 1; t <= NCASE_STEPS; t++) {
        for (int i = 0; i < NP; i++) g[i] = 2.0f * x[i];
        optax_step(k, oc->opt, t, x, g, s0, s1);
        double f = 0.0;
        for (int i = 0; i < NP; i++) f += (double)x[i] * (double)x[i];
        char got[32];
        snprintf(got, sizeof got, "%.2E", f);
        OT_CHECK(strcmp(got, want[t - 1]) == 0, "%s on %s, step %d: f = %s (%.6g), optax prints %s", oc->key,
                 optic_isa_name((optic_isa)isa), t, got, f, want[t - 1]);
      }
    }
  }
  free(json);
}

static const ot_case cases[] = {
    {"optax_doctests", optax_doctests},
};
OT_MAIN(cases)
