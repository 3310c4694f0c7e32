/* `optic info [--json]`: the facts a user needs to read a benchmark report —
 * library and compiler, CPU and ISA choice, OpenMP, OpenBLAS (and whether its
 * core is weaker than the CPU), OpenSSL, MPI. */
#include <getopt.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

#include "core/json.h"
#include "kernels/registry.h"
#include "kernels/stream.h"
#include "tools/cli.h"

typedef struct info {
  const optic_cpu_info *cpu;
  optic_isa best, selected;
  const char *isa_note;
  int omp_threads, omp_procs;
  optic_blas_info blas;
  const char *coretype_env;
  const char *crypto;
  bool mpi_built;
  char mpi_version[256];
  size_t stream_min_bytes; /* SIZE_MAX = never */
  const char *stream_source;
} info;

static void gather(info *in) {
  in->cpu = optic_cpu_info_get();
  in->best = optic_isa_best();
  in->selected = optic_isa_selected();
  in->isa_note = optic_isa_selection_note();
  in->omp_threads = omp_get_max_threads();
  in->omp_procs = omp_get_num_procs();
  optic_blas_get_info(&in->blas);
  in->coretype_env = getenv("OPENBLAS_CORETYPE");
  in->crypto = optic_ckpt_crypto_version();
  in->stream_min_bytes = optic_stream_threshold(&in->stream_source);
  in->mpi_built = optic_pod_mpi_built();
  if (optic_pod_mpi_library_version(in->mpi_version, sizeof in->mpi_version) != OPTIC_OK) {
    in->mpi_version[0] = '\0';
  }
}

static void blas_warning(const info *in, char *buf, size_t n) {
  buf[0] = '\0';
  if (!in->blas.core_weaker_than_cpu) return;
  snprintf(buf, n, "OpenBLAS runs its %s core (%s kernels) although this CPU supports %s%s%s%s", in->blas.corename,
           optic_isa_name(in->blas.core_isa), optic_isa_name(in->best), in->coretype_env ? "; OPENBLAS_CORETYPE=" : "",
           in->coretype_env ? in->coretype_env : "", in->coretype_env ? " is set" : "");
}

/* Each (family, op, variant) appears once with a scalar entry: those are the keys. */
static bool is_key(const optic_kernel_desc *d) { return d->isa == OPTIC_ISA_SCALAR; }

/* One line per family: how many ops run the selected ISA's own kernel, and
 * which fall back to scalar. */
static void print_kernels_text(optic_isa isa) {
  size_t count;
  const optic_kernel_desc *reg = optic_kernel_registry(&count);
  for (size_t i = 0; i < count; i++) {
    if (!is_key(&reg[i])) continue;
    bool first_of_family = true;
    for (size_t k = 0; k < i; k++) first_of_family &= strcmp(reg[k].family, reg[i].family) != 0;
    if (!first_of_family) continue;
    int native = 0, fallback = 0;
    char fallbacks[512] = "";
    for (size_t k = i; k < count; k++) {
      if (!is_key(&reg[k]) || strcmp(reg[k].family, reg[i].family) != 0) continue;
      const optic_kernel_desc *c = optic_kernel_chosen(reg[k].family, reg[k].op, reg[k].variant, isa);
      if (c->isa == isa) {
        native++;
      } else {
        fallback++;
        size_t used = strlen(fallbacks);
        snprintf(fallbacks + used, sizeof fallbacks - used, "%s%s%s%s", used ? " " : "", reg[k].op,
                 reg[k].variant[0] ? "." : "", reg[k].variant);
      }
    }
    printf("%-11s %s: %d %s", i == 0 ? "kernels" : "", reg[i].family, native, optic_isa_name(isa));
    if (fallback) printf(", %d scalar (%s)", fallback, fallbacks);
    printf("\n");
  }
  /* Convolution is planned per shape (docs/kernels-conv.md): name what this ISA can plan. */
  printf("%-11s conv: %s\n", "",
         isa == OPTIC_ISA_AVX512 ? "direct avx512 forward (feature-contiguous layouts), else im2col + OpenBLAS"
                                 : "im2col + OpenBLAS (1x1: plain GEMM)");
}

static void print_kernels_json(optic_json *j, optic_isa isa) {
  size_t count;
  const optic_kernel_desc *reg = optic_kernel_registry(&count);
  optic_json_begin_array(j);
  for (size_t i = 0; i < count; i++) {
    if (!is_key(&reg[i])) continue;
    const optic_kernel_desc *c = optic_kernel_chosen(reg[i].family, reg[i].op, reg[i].variant, isa);
    optic_json_begin_object(j);
    optic_json_key(j, "family"), optic_json_string(j, c->family);
    optic_json_key(j, "op"), optic_json_string(j, c->op);
    optic_json_key(j, "variant"), optic_json_string(j, c->variant);
    optic_json_key(j, "isa"), optic_json_string(j, optic_isa_name(c->isa));
    optic_json_key(j, "function"), optic_json_string(j, c->function);
    optic_json_end_object(j);
  }
  optic_json_end_array(j);
}

static void print_text(const info *in) {
  char warn[256];
  blas_warning(in, warn, sizeof warn);
  printf("optic %s (%s, %s build)\n", optic_version(), optic_build_compiler(), optic_build_type());
  printf("cpu         %s %s, %d logical CPUs\n", in->cpu->arch, in->cpu->model[0] ? in->cpu->model : "(unknown)",
         in->cpu->logical_cpus);
  printf("features   ");
  for (int b = 0; b < OPTIC_CPU_FEATURE_COUNT_; b++) {
    if ((in->cpu->features >> b) & 1) printf(" %s", optic_cpu_feature_name(b));
  }
  printf("\n");
  printf("caches      L2 %lld KiB, last level %lld KiB (0 = unknown)\n", (long long)(in->cpu->l2_bytes / 1024),
         (long long)(in->cpu->llc_bytes / 1024));
  printf("isa         %s (%s)\n", optic_isa_name(in->selected), in->isa_note);
  print_kernels_text(in->selected);
  if (in->stream_min_bytes == SIZE_MAX) {
    printf("streaming   never (%s)\n", in->stream_source);
  } else {
    printf("streaming   stores when a kernel call touches >= %zu bytes (%s)\n", in->stream_min_bytes,
           in->stream_source);
  }
  printf("openmp      %d threads, %d processors\n", in->omp_threads, in->omp_procs);
  printf("openblas    %s\n", in->blas.config);
  printf("            core %s (%s), %s, %d threads\n", in->blas.corename, optic_isa_name(in->blas.core_isa),
         in->blas.parallel, in->blas.threads);
  if (warn[0]) printf("warning     %s\n", warn);
  printf("openssl     %s\n", in->crypto);
  printf("mpi         %s\n", in->mpi_built ? in->mpi_version : "not built (optic was configured without MPI)");
}

static int print_json(const info *in) {
  char warn[256];
  blas_warning(in, warn, sizeof warn);
  optic_json j;
  optic_json_init(&j, true);
  optic_json_begin_object(&j);
  optic_json_key(&j, "version"), optic_json_string(&j, optic_version());
  optic_json_key(&j, "compiler"), optic_json_string(&j, optic_build_compiler());
  optic_json_key(&j, "build_type"), optic_json_string(&j, optic_build_type());
  optic_json_key(&j, "cpu");
  optic_json_begin_object(&j);
  optic_json_key(&j, "arch"), optic_json_string(&j, in->cpu->arch);
  optic_json_key(&j, "vendor"), optic_json_string(&j, in->cpu->vendor);
  optic_json_key(&j, "model"), optic_json_string(&j, in->cpu->model);
  optic_json_key(&j, "logical_cpus"), optic_json_int(&j, in->cpu->logical_cpus);
  optic_json_key(&j, "l2_bytes"), optic_json_int(&j, in->cpu->l2_bytes);
  optic_json_key(&j, "llc_bytes"), optic_json_int(&j, in->cpu->llc_bytes);
  optic_json_key(&j, "features");
  optic_json_begin_array(&j);
  for (int b = 0; b < OPTIC_CPU_FEATURE_COUNT_; b++) {
    if ((in->cpu->features >> b) & 1) optic_json_string(&j, optic_cpu_feature_name(b));
  }
  optic_json_end_array(&j);
  optic_json_end_object(&j);
  optic_json_key(&j, "isa");
  optic_json_begin_object(&j);
  optic_json_key(&j, "best"), optic_json_string(&j, optic_isa_name(in->best));
  optic_json_key(&j, "selected"), optic_json_string(&j, optic_isa_name(in->selected));
  optic_json_key(&j, "note"), optic_json_string(&j, in->isa_note);
  optic_json_end_object(&j);
  optic_json_key(&j, "kernels");
  print_kernels_json(&j, in->selected);
  optic_json_key(&j, "stream_stores");
  optic_json_begin_object(&j);
  optic_json_key(&j, "min_footprint_bytes");
  if (in->stream_min_bytes == SIZE_MAX) {
    optic_json_null(&j);
  } else {
    optic_json_int(&j, (int64_t)in->stream_min_bytes);
  }
  optic_json_key(&j, "source"), optic_json_string(&j, in->stream_source);
  optic_json_end_object(&j);
  optic_json_key(&j, "openmp");
  optic_json_begin_object(&j);
  optic_json_key(&j, "max_threads"), optic_json_int(&j, in->omp_threads);
  optic_json_key(&j, "num_procs"), optic_json_int(&j, in->omp_procs);
  optic_json_end_object(&j);
  optic_json_key(&j, "openblas");
  optic_json_begin_object(&j);
  optic_json_key(&j, "config"), optic_json_string(&j, in->blas.config);
  optic_json_key(&j, "corename"), optic_json_string(&j, in->blas.corename);
  optic_json_key(&j, "core_isa"), optic_json_string(&j, optic_isa_name(in->blas.core_isa));
  optic_json_key(&j, "parallel"), optic_json_string(&j, in->blas.parallel);
  optic_json_key(&j, "threads"), optic_json_int(&j, in->blas.threads);
  optic_json_key(&j, "coretype_env"), optic_json_string(&j, in->coretype_env);
  optic_json_key(&j, "warning"), warn[0] ? optic_json_string(&j, warn) : optic_json_null(&j);
  optic_json_end_object(&j);
  optic_json_key(&j, "openssl"), optic_json_string(&j, in->crypto);
  optic_json_key(&j, "mpi");
  optic_json_begin_object(&j);
  optic_json_key(&j, "built"), optic_json_bool(&j, in->mpi_built);
  optic_json_key(&j, "version"), in->mpi_built ? optic_json_string(&j, in->mpi_version) : optic_json_null(&j);
  optic_json_end_object(&j);
  optic_json_end_object(&j);
  const char *text;
  optic_status st = optic_json_finish(&j, &text, NULL);
  if (st != OPTIC_OK) {
    fprintf(stderr, "optic info: %s\n", optic_last_error());
    optic_json_free(&j);
    return OPTIC_EXIT_ERROR;
  }
  printf("%s\n", text);
  optic_json_free(&j);
  return OPTIC_EXIT_OK;
}

static void usage(FILE *out) {
  fprintf(out,
          "usage: optic info [--json]\n\n"
          "Prints the library version and compiler, the CPU model and features, the kernels'\n"
          "ISA (OPTIC_ISA=scalar|avx2|avx512|neon caps it), OpenMP threads, the OpenBLAS build\n"
          "and the core it chose (warning if weaker than the CPU), OpenSSL and MPI.\n\n"
          "  --json    print the same facts as one JSON object\n"
          "  --help    this text\n");
}

int optic_cmd_info(int argc, char **argv) {
  static const struct option opts[] = {{"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
  bool json = false;
  int c;
  opterr = 0;
  optind = 1;
  while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
    switch (c) {
      case 'j': json = true; break;
      case 'h': usage(stdout); return OPTIC_EXIT_OK;
      default:
        fprintf(stderr, "optic info: unknown option '%s'\n", argv[optind - 1]);
        usage(stderr);
        return OPTIC_EXIT_USAGE;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "optic info: unexpected argument '%s'\n", argv[optind]);
    usage(stderr);
    return OPTIC_EXIT_USAGE;
  }
  info in;
  gather(&in);
  if (json) return print_json(&in);
  print_text(&in);
  return OPTIC_EXIT_OK;
}
