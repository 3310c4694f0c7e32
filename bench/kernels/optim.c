/* Benchmarks of the optimizer family, generated from its X-macro list
 * (kernels/list/optim.inc): each kernel updates n parameters in place from a
 * gradient, with its state arrays, split across threads by contiguous
 * 64-byte-aligned pieces (as the executor splits a tensor). Hyperparameters
 * are PyTorch's defaults or common training values (below), at step 10 for
 * the bias corrections. Bytes are the real traffic of one step: every array
 * the kernel reads plus every array it writes, 4 B each per element:
 *   SGD momentum (default): read θ, g, b; write θ, b        = 20 B
 *   SGD plain ("plain"):    read θ, g; write θ              = 12 B
 *   Adam, AdamW ("adamw"):  read θ, g, m, v; write θ, m, v  = 28 B
 *   Adam AMSGrad ("amsgrad"): + read and write vmax         = 36 B
 *   RMSprop: read θ, g, s; write θ, s                       = 20 B
 *   Adagrad: read θ, g, S; write θ, S                       = 20 B
 *   Lion:    read θ, g, m; write θ, m                       = 20 B
 *   LAMB pass 1 (moments): read θ, g, m, v; write m, v      = 24 B
 *   LAMB pass 2 (apply):   read θ, m, v; write θ            = 16 B
 * State arrays are refilled (untimed) before each run, so no run inherits
 * another benchmark's values: θ in [1, 2), m in [-0.01, 0.01), second moments
 * and accumulators positive. Calls kernels only through their declared types. */
#include "bench/kernels/kernel_families.h"
#include "bench/parallel.h"
#include "kernels/optim.h"

enum { MAX_THREADS = 2, MAX_STATES = 3, PARAM_SLOT = BENCH_OUTPUT_SLOT0, GRAD_SLOT = BENCH_INPUT_SLOT0 };

static optic_sgd_params sgd_momentum, sgd_plain;
static optic_adam_params adam, adamw, adam_amsgrad;
static optic_rmsprop_params rmsprop;
static optic_adagrad_params adagrad;
static optic_lion_params lion;
static optic_lamb_params lamb;
/* LAMB's pass 2 takes the ratio pass 1's norms give; a typical value. */
static const float lamb_trust_ratio = 0.8f;

static void init_params(void) {
  const uint64_t step = 10;
  /* torch.optim.SGD(lr=0.1, momentum=0.9, weight_decay=1e-4): ResNet training. */
  sgd_momentum = (optic_sgd_params){.lr = 0.1f, .momentum = 0.9f, .weight_decay = 1e-4f, .decay = OPTIC_OPTIM_DECAY_L2};
  sgd_plain = (optic_sgd_params){.lr = 0.1f, .decay = OPTIC_OPTIM_DECAY_L2};
  /* torch.optim.Adam / AdamW defaults (AdamW's weight_decay default 1e-2). */
  adam = (optic_adam_params){.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .decay = OPTIC_OPTIM_DECAY_L2};
  adam.bias_correction1 = optic_optim_bias_correction(adam.beta1, step);
  adam.bias_correction2 = optic_optim_bias_correction(adam.beta2, step);
  adamw = adam;
  adamw.weight_decay = 1e-2f;
  adamw.decay = OPTIC_OPTIM_DECAY_DECOUPLED;
  adam_amsgrad = adam;
  adam_amsgrad.amsgrad = true;
  /* torch.optim.RMSprop and Adagrad defaults. */
  rmsprop = (optic_rmsprop_params){.lr = 1e-2f, .alpha = 0.99f, .eps = 1e-8f, .decay = OPTIC_OPTIM_DECAY_L2};
  adagrad = (optic_adagrad_params){.lr = 1e-2f, .eps = 1e-10f, .decay = OPTIC_OPTIM_DECAY_L2};
  /* optax.lion defaults with a weight decay. */
  lion = (optic_lion_params){.lr = 1e-4f, .beta1 = 0.9f, .beta2 = 0.99f, .weight_decay = 1e-2f};
  /* optax.lamb defaults with a weight decay. */
  lamb = (optic_lamb_params){.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-6f, .weight_decay = 1e-2f};
  lamb.bias_correction1 = optic_optim_bias_correction(lamb.beta1, step);
  lamb.bias_correction2 = optic_optim_bias_correction(lamb.beta2, step);
}

/* How a state array starts: a first moment / momentum buffer, or a positive
 * second moment / accumulator. */
typedef enum state_kind { STATE_SIGNED, STATE_POSITIVE } state_kind;

typedef struct optim_case {
  const char *function;
  const char *config; /* NULL: the default configuration (plain benchmark name) */
  optic_isa isa;
  optic_optim_op op;
  void (*fn)(void);
  const void *params;
  int states;
  state_kind kinds[MAX_STATES];
  double bytes_per_element;
} optim_case;

/* Every list entry once in its default configuration, and the extra
 * configurations issues 3 and 6 name (AdamW, AMSGrad, plain SGD). */
#define CASE(op_, isa_, fn_, config_, params_, states_, bytes_, ...)                                                  \
  {                                                                                                                   \
    .function = #fn_, .config = config_, .isa = OPTIC_ISA_##isa_, .op = OPTIC_OPTIM_##op_, .fn = (void (*)(void))fn_, \
    .params = params_, .states = states_, .kinds = {__VA_ARGS__}, .bytes_per_element = bytes_                         \
  }
static const optim_case cases[] = {
#define X_SGD(op_, isa_, fn_)                                       \
  CASE(SGD, isa_, fn_, NULL, &sgd_momentum, 1, 20.0, STATE_SIGNED), \
      CASE(SGD, isa_, fn_, "plain", &sgd_plain, 0, 12.0, STATE_SIGNED),
#define X_ADAM(op_, isa_, fn_)                                                       \
  CASE(ADAM, isa_, fn_, NULL, &adam, 2, 28.0, STATE_SIGNED, STATE_POSITIVE),         \
      CASE(ADAM, isa_, fn_, "adamw", &adamw, 2, 28.0, STATE_SIGNED, STATE_POSITIVE), \
      CASE(ADAM, isa_, fn_, "amsgrad", &adam_amsgrad, 3, 36.0, STATE_SIGNED, STATE_POSITIVE, STATE_POSITIVE),
#define X_RMSPROP(op_, isa_, fn_) CASE(RMSPROP, isa_, fn_, NULL, &rmsprop, 1, 20.0, STATE_POSITIVE),
#define X_ADAGRAD(op_, isa_, fn_) CASE(ADAGRAD, isa_, fn_, NULL, &adagrad, 1, 20.0, STATE_POSITIVE),
#define X_LION(op_, isa_, fn_) CASE(LION, isa_, fn_, NULL, &lion, 1, 20.0, STATE_SIGNED),
#define X_LAMB_MOMENTS(op_, isa_, fn_) \
  CASE(LAMB_MOMENTS, isa_, fn_, NULL, &lamb, 2, 24.0, STATE_SIGNED, STATE_POSITIVE),
#define X_LAMB_APPLY(op_, isa_, fn_) CASE(LAMB_APPLY, isa_, fn_, NULL, &lamb, 2, 16.0, STATE_SIGNED, STATE_POSITIVE),
#include "kernels/list/optim.inc"
#include "core/unconst.h"
#undef X_SGD
#undef X_ADAM
#undef X_RMSPROP
#undef X_ADAGRAD
#undef X_LION
#undef X_LAMB_MOMENTS
#undef X_LAMB_APPLY
};
#undef CASE

typedef struct optim_job {
  const optim_case *c;
  size_t n;
  float *param;
  const float *grad;
  float *state[MAX_STATES];
  /* LAMB pass 1's per-thread norms, a cache line apart. */
  struct {
    optic_lamb_norms norms;
    char pad[64 - sizeof(optic_lamb_norms)];
  } norms[MAX_THREADS];
} optim_job;

/* State array k at element lo, or NULL where the configuration has none. */
static float *state_at(const optim_job *j, int k, size_t lo) { return k < j->c->states ? j->state[k] + lo : NULL; }

static bool optim_slice(void *job, int t, int nt) {
  optim_job *j = job;
  const optim_case *c = j->c;
  size_t lo, hi;
  bench_split(j->n, t, nt, &lo, &hi);
  size_t len = hi - lo;
  float *p = j->param + lo;
  const float *g = j->grad + lo;
  switch (c->op) {
    case OPTIC_OPTIM_SGD: ((optic_f32_sgd_fn)c->fn)(len, p, g, state_at(j, 0, lo), c->params); break;
    case OPTIC_OPTIM_ADAM:
      ((optic_f32_adam_fn)c->fn)(len, p, g, state_at(j, 0, lo), state_at(j, 1, lo), state_at(j, 2, lo), c->params);
      break;
    case OPTIC_OPTIM_RMSPROP:
      ((optic_f32_rmsprop_fn)c->fn)(len, p, g, state_at(j, 0, lo), NULL, NULL, c->params);
      break;
    case OPTIC_OPTIM_ADAGRAD: ((optic_f32_adagrad_fn)c->fn)(len, p, g, state_at(j, 0, lo), c->params); break;
    case OPTIC_OPTIM_LION: ((optic_f32_lion_fn)c->fn)(len, p, g, state_at(j, 0, lo), c->params); break;
    case OPTIC_OPTIM_LAMB_MOMENTS:
      ((optic_f32_lamb_moments_fn)c->fn)(len, p, g, state_at(j, 0, lo), state_at(j, 1, lo), c->params,
                                         &j->norms[t < MAX_THREADS ? t : 0].norms);
      break;
    case OPTIC_OPTIM_LAMB_APPLY:
      ((optic_f32_lamb_apply_fn)c->fn)(len, p, state_at(j, 0, lo), state_at(j, 1, lo), c->params, lamb_trust_ratio);
      break;
    default: return false;
  }
  return true;
}

static void run_optim(optic_bench_state *st, void *user) {
  const optim_case *c = user;
  size_t n = (size_t)optic_bench_range(st, 0);
  int threads = (int)optic_bench_range(st, 1);
  if (threads < 1 || threads > MAX_THREADS) {
    optic_bench_skip_with_error(st, "optim: threads must be 1 or 2");
    return;
  }
  optim_job j = {.c = c, .n = n, .param = bench_f32_array(PARAM_SLOT, n), .grad = bench_f32_array(GRAD_SLOT, n)};
  bool ok = j.param != NULL && j.grad != NULL;
  for (int k = 0; k < c->states && ok; k++) {
    j.state[k] = bench_f32_array(PARAM_SLOT + 1 + k, n);
    ok = j.state[k] != NULL;
  }
  if (!ok) {
    optic_bench_skip_with_error(st, optic_last_error());
    return;
  }
  bench_fill_f32(j.param, n, 1.0f, 2.0f);
  for (int k = 0; k < c->states; k++) {
    if (c->kinds[k] == STATE_SIGNED) {
      bench_fill_f32(j.state[k], n, -0.01f, 0.01f);
    } else {
      bench_fill_f32(j.state[k], n, 1e-4f, 1e-3f);
    }
  }
  bench_parallel p = {.slice = optim_slice,
                      .job = &j,
                      .repeats = bench_repeats(n),
                      .bytes_per_iteration = c->bytes_per_element * (double)n,
                      .items_per_iteration = (int64_t)n};
  bench_run_parallel(st, threads, &p, c->function);
}

void bench_register_optim_kernels(void) {
  init_params();
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const optim_case *c = &cases[i];
    if (!optic_isa_supported(c->isa)) continue;
    const char *name = c->config == NULL ? bench_name("kernel/optim/%s", c->function)
                                         : bench_name("kernel/optim/%s/%s", c->function, c->config);
    bench_register_n_threads(name, run_optim, OPTIC_UNCONST(void *, c), (int64_t)BENCH_N_IN_CACHE,
                             (int64_t)BENCH_N_DRAM);
  }
}
