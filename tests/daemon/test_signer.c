/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The signer's liveness probe (src/daemon/signer.c, pc_signer_answers), on
 * a real signer process with a key of the test's own: it answers while it
 * runs, also between signatures; once stopped (SIGSTOP) it is silent from
 * the first probe it leaves unanswered until it runs again; once dead it
 * never answers. Probes never disturb a signature.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sodium.h>

#include "base/error.h"
#include "base/keys.h"
#include "log/note.h"

#include "daemon/signer.h"

#define NAME "podcap/probe"

static char dir[PC_PATH_LEN];
static char key_path[PC_PATH_LEN + 16];
static struct pc_signer signer;

/* Long enough for a running signer to answer on a loaded machine. */
static void
nap(void)
{
	struct timespec ts = { .tv_sec = 0, .tv_nsec = 200 * 1000 * 1000 };
	nanosleep(&ts, NULL);
}

static int
setup(void **state)
{
	struct pc_error err;

	(void)state;
	if (sodium_init() < 0)
		return -1;
	snprintf(dir, sizeof(dir), "%s/podcapd-signer-XXXXXX",
		 getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(key_path, sizeof(key_path), "%s/key", dir);
	struct pc_signer_key *k = pc_signer_key_generate(NAME);
	if (k == NULL || pc_signer_key_save(k, key_path, &err) != 0)
		return -1;
	pc_signer_key_free(k);
	if (pc_signer_spawn(key_path, &signer, &err) != 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

static int
teardown(void **state)
{
	char pub[PC_PATH_LEN + 32];

	(void)state;
	/* a test that failed with the signer stopped: it must read its EOF to exit */
	if (signer.pid > 0)
		kill(signer.pid, SIGCONT);
	pc_signer_stop(&signer);
	snprintf(pub, sizeof(pub), "%s.pub", key_path);
	unlink(key_path);
	unlink(pub);
	rmdir(dir);
	return 0;
}

/* Signs a checkpoint of `size`: what the ledger thread asks between two probes. */
static void
assert_signs(uint64_t size)
{
	struct pc_checkpoint cp = { .origin = NAME, .size = size };
	char body[512];
	uint8_t sig[64];
	struct pc_error err;

	size_t len = pc_checkpoint_body(&cp, body, sizeof(body));
	assert_true(len > 0);
	if (pc_signer_sign(&signer, body, len, sig, &err) != 0)
		fail_msg("%s", err.msg);
	assert_int_equal(crypto_sign_verify_detached(sig, (const uint8_t *)body, len, signer.vk.pk),
			 0);
}

static void
test_answers_while_running(void **state)
{
	(void)state;
	/* the first probe has nothing to answer yet: alive is enough */
	assert_true(pc_signer_answers(&signer));
	for (uint64_t i = 1; i <= 5; i++) {
		nap();
		assert_true(pc_signer_answers(&signer));
		assert_signs(i);
	}
}

static void
test_silent_while_stopped(void **state)
{
	(void)state;
	assert_true(pc_signer_answers(&signer));
	nap();
	assert_int_equal(kill(signer.pid, SIGSTOP), 0);
	nap();
	/* the last probe was answered before the stop; this one will not be */
	assert_true(pc_signer_answers(&signer));
	nap();
	assert_false(pc_signer_answers(&signer));
	nap();
	assert_false(pc_signer_answers(&signer));
	/* silent, yet not lost: a signer that runs again is the same signer */
	assert_true(pc_signer_alive(&signer));
	assert_int_equal(kill(signer.pid, SIGCONT), 0);
	nap();
	assert_true(pc_signer_answers(&signer));
	nap();
	assert_true(pc_signer_answers(&signer));
	assert_signs(1);
}

static void
test_silent_once_dead(void **state)
{
	(void)state;
	assert_true(pc_signer_answers(&signer));
	nap();
	assert_int_equal(kill(signer.pid, SIGKILL), 0);
	nap();
	assert_false(pc_signer_answers(&signer));
	assert_false(pc_signer_alive(&signer));
	assert_false(pc_signer_answers(&signer));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_answers_while_running, setup, teardown),
		cmocka_unit_test_setup_teardown(test_silent_while_stopped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_silent_once_dead, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
