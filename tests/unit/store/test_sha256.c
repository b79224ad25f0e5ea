/*
 * test_sha256.c - store/sha256.h against the FIPS 180-2 / NIST example
 * vectors, the padding boundaries around 55/56/64 bytes (values from an
 * independent implementation), the million-'a' vector, and the same
 * digest whatever way the input is split across updates.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "store/sha256.h"
#include "testmain.h"

static void check_hex(const void *data, size_t len, const char *want)
{
	char hex[SHA256_HEX_SIZE];

	sha256_hex(data, len, hex);
	ck_assert_str_eq(hex, want);
}

START_TEST(nist_vectors)
{
	check_hex("", 0,
		  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852"
		  "b855");
	check_hex("abc", 3,
		  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f200"
		  "15ad");
	check_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  56,
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db"
		  "06c1");
	check_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijk"
		  "lmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
		  112,
		  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afe"
		  "e9d1");
}
END_TEST

/* Bytes (i * 7 + 3) mod 256 of each length; expected from Python's
 * hashlib. */
START_TEST(padding_boundaries)
{
	static const struct {
		size_t len;
		const char *hex;
	} v[] = {
		{55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa"
		     "4aac70b"},
		{56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52"
		     "abc6c27"},
		{57, "35df609437dcfea3279283ab79fd554e2bf78f8f7ae2de532d8ee300b"
		     "09e8f73"},
		{63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff2666"
		     "4625055"},
		{64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be"
		     "1882241"},
		{65, "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d"
		     "2fae95e"},
		{119, "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b192"
		      "79cc177e"},
		{127, "a8d23e75d936f303d248888d9b165ee543f4cbafcad3c9dd2a79bd84"
		      "faa11d07"},
		{128, "d2742f1f4ac6bb7ca2b239ee18402ba8b3f9f8e652d2a72973c2b9ba"
		      "11c08cf6"},
	};
	unsigned char buf[128];

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		check_hex(buf, v[i].len, v[i].hex);
}
END_TEST

START_TEST(million_a)
{
	struct sha256_ctx ctx;
	uint8_t digest[SHA256_DIGEST_SIZE];
	static const uint8_t want[SHA256_DIGEST_SIZE] = {
		0xcd, 0xc7, 0x6e, 0x5c, 0x99, 0x14, 0xfb, 0x92,
		0x81, 0xa1, 0xc7, 0xe2, 0x84, 0xd7, 0x3e, 0x67,
		0xf1, 0x80, 0x9a, 0x48, 0xa4, 0x97, 0x20, 0x0e,
		0x04, 0x6d, 0x39, 0xcc, 0xc7, 0x11, 0x2c, 0xd0,
	};
	char chunk[1000];

	memset(chunk, 'a', sizeof(chunk));
	sha256_init(&ctx);
	for (int i = 0; i < 1000; i++)
		sha256_update(&ctx, chunk, sizeof(chunk));
	sha256_final(&ctx, digest);
	ck_assert_mem_eq(digest, want, sizeof(want));
}
END_TEST

START_TEST(split_updates_agree)
{
	unsigned char buf[300];
	uint8_t one[SHA256_DIGEST_SIZE], split[SHA256_DIGEST_SIZE];
	struct sha256_ctx ctx;
	unsigned seed = 12345;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 31 + 17);
	for (size_t len = 0; len <= sizeof(buf); len += 13) {
		sha256_init(&ctx);
		sha256_update(&ctx, buf, len);
		sha256_final(&ctx, one);
		for (int round = 0; round < 8; round++) {
			size_t at = 0;

			sha256_init(&ctx);
			while (at < len) {
				size_t n;

				seed = seed * 1103515245 + 12345;
				n = (seed >> 16) % 70;
				if (n > len - at)
					n = len - at;
				/* Zero-length updates are fine too. */
				sha256_update(&ctx, buf + at, n);
				at += n;
			}
			sha256_final(&ctx, split);
			ck_assert_mem_eq(one, split, sizeof(one));
		}
	}
}
END_TEST

START_TEST(hex_form)
{
	char hex[SHA256_HEX_SIZE];

	sha256_hex("abc", 3, hex);
	ck_assert(sha256_hex_valid(hex));
	ck_assert_uint_eq(strlen(hex), 64);
	ck_assert(!sha256_hex_valid(""));
	ck_assert(!sha256_hex_valid("abc"));
	hex[10] = 'A'; /* uppercase is not the stored spelling */
	ck_assert(!sha256_hex_valid(hex));
	sha256_hex("abc", 3, hex);
	hex[63] = 'g';
	ck_assert(!sha256_hex_valid(hex));
	{
		char longer[SHA256_HEX_SIZE + 1];

		sha256_hex("abc", 3, longer);
		longer[64] = '0';
		longer[65] = '\0';
		ck_assert(!sha256_hex_valid(longer));
	}
}
END_TEST

Suite *make_suite(void)
{
	Suite *s = suite_create("sha256");
	TCase *tc = tcase_create("vectors");

	tcase_add_test(tc, nist_vectors);
	tcase_add_test(tc, padding_boundaries);
	tcase_add_test(tc, million_a);
	tcase_add_test(tc, split_updates_agree);
	tcase_add_test(tc, hex_form);
	suite_add_tcase(s, tc);
	return s;
}
