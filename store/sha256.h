/*
 * sha256.h - SHA-256 (FIPS 180-4), for content-addressing components.
 *
 * Contract: a context hashes any number of bytes fed in any split; the
 * digest is the same as for one contiguous buffer.  No allocation, no
 * global state.  The hex form is 64 lowercase characters, the spelling
 * components are stored and named under.
 */
#ifndef HOSTEL_STORE_SHA256_H
#define HOSTEL_STORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_DIGEST_SIZE 32
#define SHA256_BLOCK_SIZE  64
#define SHA256_HEX_SIZE	   (2 * SHA256_DIGEST_SIZE + 1) /* with the NUL */

struct sha256_ctx {
	uint32_t state[8];
	uint64_t length; /* bytes hashed so far */
	uint8_t block[SHA256_BLOCK_SIZE];
	size_t fill; /* bytes held in block */
};

void sha256_init(struct sha256_ctx *ctx);
void sha256_update(struct sha256_ctx *ctx, const void *data, size_t len);
/* Finish; the context must be initialised again before reuse. */
void sha256_final(struct sha256_ctx *ctx, uint8_t digest[SHA256_DIGEST_SIZE]);

/* One-shot digest of a buffer, as lowercase hex with its NUL. */
void sha256_hex(const void *data, size_t len, char hex[SHA256_HEX_SIZE]);

/* Whether s is 64 lowercase hex digits (a digest in stored form). */
int sha256_hex_valid(const char *s);

#endif
