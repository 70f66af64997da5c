/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Why a TLS handshake with the endpoint did not finish (src/http/handshake.c),
 * without a server: the versions a ClientHello offers, read from bytes the
 * client chose, and the reason each state of a watch is counted under.
 * tests/integration/test_tls.py holds a running podcapd to the same with
 * real clients.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "http/handshake.h"

#define TLS12 PC_TLS_VERSION_BIT(3)
#define TLS13 PC_TLS_VERSION_BIT(4)

/*
 * A ClientHello body: legacy_version 3.`legacy`, a zero random, no session
 * id, one cipher suite, null compression, then `ext` (its length first)
 * unless ext_len is (size_t)-1: no extensions at all.
 */
static size_t
hello(uint8_t *out, uint8_t legacy, const uint8_t *ext, size_t ext_len)
{
	size_t n = 0;

	out[n++] = 3;
	out[n++] = legacy;
	memset(out + n, 0, 32);
	n += 32;
	out[n++] = 0;                     /* session id */
	out[n++] = 0, out[n++] = 2;       /* cipher suites */
	out[n++] = 0x13, out[n++] = 0x01; /* TLS_AES_128_GCM_SHA256 */
	out[n++] = 1, out[n++] = 0;       /* compression: null */
	if (ext_len == (size_t)-1)
		return n;
	out[n++] = (uint8_t)(ext_len >> 8), out[n++] = (uint8_t)ext_len;
	memcpy(out + n, ext, ext_len);
	return n + ext_len;
}

static void
test_supported_versions(void **state)
{
	/* server_name first, then supported_versions with a GREASE value, 1.3 and 1.2 */
	static const uint8_t ext[] = { 0x00, 0x00, 0x00, 0x00, 0x00, 0x2b, 0x00, 0x07,
				       0x06, 0x7a, 0x7a, 0x03, 0x04, 0x03, 0x03 };
	static const uint8_t only13[] = { 0x00, 0x2b, 0x00, 0x03, 0x02, 0x03, 0x04 };
	uint8_t b[128];

	(void)state;
	assert_int_equal(pc_tls_hello_versions(b, hello(b, 3, ext, sizeof(ext))), TLS12 | TLS13);
	assert_int_equal(pc_tls_hello_versions(b, hello(b, 3, only13, sizeof(only13))), TLS13);
}

/* Without supported_versions a client speaks every version up to its legacy_version. */
static void
test_legacy_version(void **state)
{
	static const uint8_t sni[] = { 0x00, 0x00, 0x00, 0x00 };
	uint8_t b[128];
	int up_to_12 =
	    (int)(PC_TLS_VERSION_BIT(0) | PC_TLS_VERSION_BIT(1) | PC_TLS_VERSION_BIT(2) | TLS12);

	(void)state;
	assert_int_equal(pc_tls_hello_versions(b, hello(b, 3, sni, sizeof(sni))), up_to_12);
	assert_int_equal(pc_tls_hello_versions(b, hello(b, 3, NULL, (size_t)-1)), up_to_12);
	assert_int_equal(pc_tls_hello_versions(b, hello(b, 1, sni, sizeof(sni))),
			 (int)(PC_TLS_VERSION_BIT(0) | PC_TLS_VERSION_BIT(1)));
}

/* Bytes that are no ClientHello say nothing of the versions: -1, never a guess. */
static void
test_unreadable_hellos(void **state)
{
	static const uint8_t odd[] = { 0x00, 0x2b, 0x00, 0x04, 0x03, 0x03, 0x04, 0x03 };
	static const uint8_t long_list[] = { 0x00, 0x2b, 0x00, 0x03, 0x04, 0x03, 0x04 };
	static const uint8_t cut_ext[] = { 0x00, 0x2b, 0x00, 0x09, 0x02, 0x03, 0x04 };
	uint8_t b[128];
	size_t n = hello(b, 3, NULL, (size_t)-1);

	(void)state;
	assert_int_equal(pc_tls_hello_versions(b, hello(b, 3, odd, sizeof(odd))), -1);
	assert_int_equal(pc_tls_hello_versions(b, hello(b, 3, long_list, sizeof(long_list))), -1);
	assert_int_equal(pc_tls_hello_versions(b, hello(b, 3, cut_ext, sizeof(cut_ext))), -1);
	for (size_t cut = 0; cut < n; cut++) /* every truncation of the fixed part */
		assert_int_equal(pc_tls_hello_versions(b, cut), -1);
	b[0] = 2; /* SSL 2 */
	assert_int_equal(pc_tls_hello_versions(b, n), -1);
}

static struct pc_tls_watch
watch(int first_byte)
{
	return (struct pc_tls_watch){
		.fd = -1, .versions = TLS13, .started_ms = 1000, .first_byte = first_byte
	};
}

static enum pc_tls_failure
end_at(const struct pc_tls_watch *w, uint64_t after_ms)
{
	return pc_tls_watch_end(w, w->started_ms + after_ms, 10000);
}

/* Each state a closed connection can leave its watch in, and its reason. */
static void
test_reasons(void **state)
{
	struct pc_tls_watch w = watch(-1);

	(void)state;
	assert_int_equal(end_at(&w, 5), PC_TLS_FAILED_NOTHING); /* a port check */
	w.eof = true;
	assert_int_equal(end_at(&w, 10001), PC_TLS_FAILED_NOTHING);
	w = watch(-1);
	assert_int_equal(end_at(&w, 10001), PC_TLS_FAILED_TIMEOUT); /* silent until dropped */
	w = watch('G');
	assert_int_equal(end_at(&w, 5), PC_TLS_FAILED_NOT_TLS);
	w = watch(0x16);
	w.bad_versions = true;
	assert_int_equal(end_at(&w, 5), PC_TLS_FAILED_PROTOCOL_VERSION);
	w = watch(0x16);
	w.eof = true;
	assert_int_equal(end_at(&w, 5), PC_TLS_FAILED_CLOSED);
	w = watch(0x16);
	assert_int_equal(end_at(&w, 10001), PC_TLS_FAILED_TIMEOUT);
	w.flight_sent = true;
	assert_int_equal(end_at(&w, 10001), PC_TLS_FAILED_TIMEOUT); /* the client never answered */
	assert_int_equal(end_at(&w, 5), PC_TLS_FAILED_REFUSED_BY_CLIENT);
	w.client_answered = true;
	assert_int_equal(end_at(&w, 5), PC_TLS_FAILED_OTHER); /* its answer was refused */
	w = watch(0x16);
	assert_int_equal(end_at(&w, 5), PC_TLS_FAILED_OTHER); /* its hello was refused */
	w.finished = true;
	w.eof = true;
	assert_int_equal(end_at(&w, 60000), PC_TLS_FAILED_NOTHING);
}

/* libmicrohttpd's clock starts at the accept, a little before the watch's. */
static void
test_timeout_slack(void **state)
{
	struct pc_tls_watch w = watch(0x16);

	(void)state;
	assert_int_equal(end_at(&w, 9700), PC_TLS_FAILED_OTHER);
	assert_int_equal(end_at(&w, 9800), PC_TLS_FAILED_TIMEOUT);
}

static void
test_names(void **state)
{
	(void)state;
	assert_string_equal(pc_tls_failure_name(PC_TLS_FAILED_TIMEOUT), "timeout");
	assert_string_equal(pc_tls_failure_name(PC_TLS_FAILED_NOT_TLS), "not_tls");
	assert_string_equal(pc_tls_failure_name(PC_TLS_FAILED_PROTOCOL_VERSION),
			    "protocol_version");
	assert_string_equal(pc_tls_failure_name(PC_TLS_FAILED_REFUSED_BY_CLIENT),
			    "refused_by_client");
	assert_string_equal(pc_tls_failure_name(PC_TLS_FAILED_CLOSED), "closed");
	assert_string_equal(pc_tls_failure_name(PC_TLS_FAILED_OTHER), "other");
	assert_string_equal(pc_tls_failure_name(PC_TLS_FAILED_COUNT), "other");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_supported_versions), cmocka_unit_test(test_legacy_version),
		cmocka_unit_test(test_unreadable_hellos),  cmocka_unit_test(test_reasons),
		cmocka_unit_test(test_timeout_slack),      cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
