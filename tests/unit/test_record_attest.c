/* SPDX-License-Identifier: BSD-3-Clause */
/* ATTEST records (type 7): layout, round trip, and every malformed field refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/bytes.h"
#include "log/record.h"

static struct pc_record_attest att;
static char ima[] = "10 aa ima-ng sha256:bb /usr/sbin/podcapd\n";

static struct pc_record
attest_record(void)
{
	struct pc_record r = { .type = PC_REC_ATTEST,
			       .appliance_id = "app1",
			       .window_len_ns = 1000000000,
			       .window_start_ns = 5000000000 };
	memset(&att, 0, sizeof(att));
	att.ckpt_size = 12;
	memset(att.ckpt_root, 0xab, 32);
	att.key_kind = PC_KEY_SEALED;
	att.quote_len = 3;
	memcpy(att.quote, "\xff\x54\x43", 3);
	att.sig_len = 2;
	memcpy(att.sig, "\x00\x18", 2);
	att.pcr_alg = PC_TPM_ALG_SHA256;
	att.pcr_mask = (1u << 0) | (1u << 10);
	memset(att.pcr[0], 0x01, 32);
	memset(att.pcr[1], 0x0a, 32);
	att.ima_len = sizeof(ima) - 1;
	att.ima = (uint8_t *)ima;
	r.attest = &att;
	return r;
}

static void
test_layout(void **state)
{
	struct pc_record r = attest_record(), d;
	struct pc_error why;
	uint8_t out[1024], again[1024];

	(void)state;
	size_t n = pc_record_encode(&r, out, sizeof(out));
	/* the common 107 bytes + id, then 8 + 32 + 1 + 2+3 + 2+2 + 2+4 + 2x32 + 4 + ima */
	size_t tail = 8 + 32 + 1 + 2 + 3 + 2 + 2 + 2 + 4 + 64 + 4 + (sizeof(ima) - 1);
	assert_int_equal(n, 107 + 4 + tail);
	assert_int_equal(out[1], 7);
	const uint8_t *t = out + 107 + 4;
	assert_true(pc_load_be64(t) == 12);
	assert_int_equal(t[8], 0xab);
	assert_int_equal(t[40], PC_KEY_SEALED);
	t++;
	assert_int_equal(pc_load_be16(t + 40), 3);
	assert_memory_equal(t + 42, "\xff\x54\x43", 3);
	assert_int_equal(pc_load_be16(t + 45), 2);
	assert_int_equal(pc_load_be16(t + 49), PC_TPM_ALG_SHA256);
	assert_int_equal(pc_load_be32(t + 51), 0x401);
	assert_int_equal(t[55], 0x01);
	assert_int_equal(t[55 + 32], 0x0a);
	assert_int_equal(pc_load_be32(t + 55 + 64), sizeof(ima) - 1);
	assert_memory_equal(t + 55 + 68, ima, sizeof(ima) - 1);

	assert_int_equal(pc_record_decode(out, n, &d, &why), 0);
	assert_non_null(d.attest);
	assert_true(d.attest->ckpt_size == 12 && d.attest->pcr_mask == 0x401);
	assert_memory_equal(d.attest->ima, ima, sizeof(ima) - 1);
	assert_int_equal(pc_record_encode(&d, again, sizeof(again)), n);
	assert_memory_equal(again, out, n);
	pc_record_free(&d);
	assert_null(d.attest);

	/* every truncation, and a trailing byte */
	for (size_t k = 0; k < n; k++)
		assert_int_equal(pc_record_decode(out, k, &d, &why), -1);
	out[n] = 0;
	assert_int_equal(pc_record_decode(out, n + 1, &d, &why), -1);
	assert_string_equal(why.msg, "trailing bytes after the record");
}

static void
expect_field_refused(size_t off, uint8_t v, const char *want)
{
	struct pc_record r = attest_record(), d;
	struct pc_error why;
	uint8_t out[1024];

	size_t n = pc_record_encode(&r, out, sizeof(out));
	out[107 + 4 + off] = v;
	assert_int_equal(pc_record_decode(out, n, &d, &why), -1);
	assert_string_equal(why.msg, want);
}

static void
test_bad_fields(void **state)
{
	struct pc_record r, d;
	uint8_t out[1024];

	(void)state;
	expect_field_refused(40, 2, "attest key kind 2 is neither a key file nor a sealed key");
	expect_field_refused(41, 0x10, "attest quote is empty, too long or truncated");
	expect_field_refused(42, 0, "attest quote is empty, too long or truncated");
	expect_field_refused(47, 0, "attest signature is empty, too long or truncated");
	expect_field_refused(50, 0x01, "attest PCR bank 0x010b is not SHA-256");
	expect_field_refused(52, 0x01, "attest PCR selection past PCR 23");
	expect_field_refused(56 + 64 + 4, 0, "attest IMA list holds a NUL byte");

	/* what the decoder refuses is never encoded */
	r = attest_record();
	att.pcr_mask = 0;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	r = attest_record();
	att.quote_len = 0;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	r = attest_record();
	r.window_count = 1;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	/* attestation fields only in ATTEST (a STOP is its common fields), and always there */
	r = attest_record();
	r.type = PC_REC_STOP;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 107 + 4);
	r = attest_record();
	r.attest = NULL;
	assert_int_equal(pc_record_encode(&r, out, sizeof(out)), 0);
	/* an ATTEST without its fields does not decode */
	r = attest_record();
	size_t n = pc_record_encode(&r, out, sizeof(out));
	assert_true(n > 0);
	assert_int_equal(pc_record_decode(out, 107 + 4, &d, NULL), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_bad_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
