/* A program outside the optic tree: uses only the installed umbrella header and
 * library, and checks that what it links works (version, shapes, CPU, BLAS). */
#include <optic/optic.h>
#include <stdio.h>
#include <string.h>

int main(void) {
  if (strcmp(optic_version(), OPTIC_VERSION_STRING) != 0) {
    fprintf(stderr, "consumer: header version %s, library %s\n", OPTIC_VERSION_STRING, optic_version());
    return 1;
  }
  int64_t dims[] = {3, 4};
  optic_shape s;
  size_t bytes = 0;
  if (optic_shape_make(2, dims, &s) != OPTIC_OK || optic_shape_bytes(&s, OPTIC_F32, &bytes) != OPTIC_OK ||
      bytes != 48) {
    fprintf(stderr, "consumer: shape bytes %zu: %s\n", bytes, optic_last_error());
    return 1;
  }
  int64_t neg[] = {-1};
  if (optic_shape_make(1, neg, &s) != OPTIC_ERR_INVALID_ARGUMENT || optic_last_error()[0] == '\0') {
    fprintf(stderr, "consumer: invalid shape not reported\n");
    return 1;
  }
  optic_blas_info blas;
  if (optic_blas_get_info(&blas) != OPTIC_OK || blas.corename == NULL) {
    fprintf(stderr, "consumer: no BLAS info\n");
    return 1;
  }
  printf("consumer ok: optic %s, isa %s, openblas core %s, %s\n", optic_version(),
         optic_isa_name(optic_isa_selected()), blas.corename, optic_ckpt_crypto_version());
  return 0;
}
