/* libFuzzer target for the .npy decoder: any input decodes or fails cleanly;
 * whatever decodes encodes back to a file that decodes to the same array.
 * Built by the fuzz preset and, elsewhere, as the replay test fuzz_npy_replay. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <optic/optic.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  optic_npy_info info;
  optic_status hs = optic_npy_parse_header(data, size, &info);
  optic_tensor t;
  if (optic_npy_decode(data, size, NULL, &t) != OPTIC_OK) return 0;
  if (hs != OPTIC_OK || info.data_offset + info.data_bytes != size) abort();
  void *enc = NULL;
  size_t len = 0;
  if (optic_npy_encode(&t, &enc, &len) != OPTIC_OK) abort();
  optic_tensor back;
  if (optic_npy_decode(enc, len, NULL, &back) != OPTIC_OK) abort();
  if (back.dtype != t.dtype || !optic_shape_equal(&back.shape, &t.shape) ||
      (info.data_bytes && memcmp(back.data, t.data, info.data_bytes) != 0)) {
    abort();
  }
  optic_string_free(enc);
  optic_npy_free(NULL, &back);
  optic_npy_free(NULL, &t);
  return 0;
}
