/* Which OpenSSL the checkpoint hashes run on. */
#include <openssl/crypto.h>

#include <optic/ckpt.h>

const char *optic_ckpt_crypto_version(void) { return OpenSSL_version(OPENSSL_VERSION); }
