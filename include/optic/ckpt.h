/* optic checkpoint layer: SHA-256 (OpenSSL EVP) integrity, atomic save,
 * verified restore, rollback and replicas. This header grows with that issue;
 * today it reports the crypto library the hashes come from. */
#ifndef OPTIC_CKPT_H
#define OPTIC_CKPT_H

#include <optic/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the OpenSSL libcrypto linked at run time, e.g. "OpenSSL 3.0.19
 * 27 Jan 2026". Static string. Thread-safe. */
OPTIC_API const char *optic_ckpt_crypto_version(void);

#ifdef __cplusplus
}
#endif
#endif /* OPTIC_CKPT_H */
