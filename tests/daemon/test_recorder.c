/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The recorder's queue (src/daemon/recorder.c) overflowing while the disk
 * is away: a window whose record finds the queue full, by count (4096
 * records) or by bytes (256 MiB), is counted as lost, and once there is
 * room again the ledger gets a GAP covering exactly the lost windows,
 * contiguous with the records around it. The ledger thread's appends are
 * held at will (pc_ledger_append is wrapped); the signer is a key in this
 * process (pc_signer_sign is wrapped). Everything else is the real ledger.
 * pc_recorder_drain, which a stop waits on before the witnesses get the
 * last checkpoint, says true only once that checkpoint is published. A
 * quote due in a batch of records is labelled with the log after the
 * batch (pc_attest_record is wrapped: the test sees what it is asked for).
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/clock.h"
#include "podmap/config.h"
#include "log/ledger.h"
#include "log/note.h"
#include "log/record.h"

#include "daemon/attest_record.h"
#include "daemon/control.h"
#include "daemon/recorder.h"
#include "daemon/signer.h"

#define NS 1000000000ull
#define W (60 * NS)
#define E0 28333333ull
#define QUEUE_MAX 4096                       /* docs/design.md: the queue's bounds */
#define QUEUE_BYTES_MAX ((size_t)256 << 20)
#define BIG_PODS 4096                        /* a WINDOW record of about 1 MiB */

int __wrap_pc_ledger_append(struct pc_ledger *l, const uint8_t *rec, size_t len);
int __real_pc_ledger_append(struct pc_ledger *l, const uint8_t *rec, size_t len);
int __wrap_pc_signer_sign(struct pc_signer *s, const char *body, size_t len, uint8_t sig[64],
			  struct pc_error *err);
uint8_t *__wrap_pc_attest_record(struct pc_signer *s, const char *appliance_id,
				 const uint8_t build_id[32], const struct pc_attest_due *due,
				 const char *ima_log, size_t *len);

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_cond = PTHREAD_COND_INITIALIZER;
static bool held;                             /* the disk is away */

static char dir[PC_PATH_LEN];
static struct pc_signer_key *key;
static struct pc_signer signer;
static struct pc_table small, big;
static struct pc_window win;
static uint64_t records_before;               /* in the ledger when a test began */

/* The ledger thread waits here while the test holds the disk away. */
int
__wrap_pc_ledger_append(struct pc_ledger *l, const uint8_t *rec, size_t len)
{
	pthread_mutex_lock(&hold_lock);
	while (held)
		pthread_cond_wait(&hold_cond, &hold_lock);
	pthread_mutex_unlock(&hold_lock);
	return __real_pc_ledger_append(l, rec, len);
}

int
__wrap_pc_signer_sign(struct pc_signer *s, const char *body, size_t len, uint8_t sig[64],
		      struct pc_error *err)
{
	(void)s;
	(void)err;
	pc_note_sign_body(key, body, len, sig);
	return 0;
}

/* What the ledger thread last asked a quote of, and how many it asked for. */
static struct pc_attest_due quoted;
static unsigned quotes;

/* No TPM here: the quote is refused (the recorder counts it as failed). */
uint8_t *
__wrap_pc_attest_record(struct pc_signer *s, const char *appliance_id, const uint8_t build_id[32],
			const struct pc_attest_due *due, const char *ima_log, size_t *len)
{
	(void)s;
	(void)appliance_id;
	(void)build_id;
	(void)ima_log;
	(void)len;
	quoted = *due;
	quotes++;
	return NULL;
}

static void
hold(bool on)
{
	pthread_mutex_lock(&hold_lock);
	held = on;
	pthread_cond_broadcast(&hold_cond);
	pthread_mutex_unlock(&hold_lock);
}

static struct pc_recorder_stats
stats(void)
{
	struct pc_recorder_stats st;

	pc_recorder_stats(&st);
	return st;
}

static void
wait_drained(void)
{
	struct timespec nap = { .tv_sec = 0, .tv_nsec = 1000 * 1000 };

	for (unsigned i = 0; i < 60000 && stats().queued != 0; i++)
		nanosleep(&nap, NULL);
	assert_int_equal(stats().queued, 0);
}

/* What the recorder needs of a table: its pod map and digest. */
static void
make_table(struct pc_table *t, unsigned npods)
{
	size_t cap = 256 + (size_t)npods * 80, n;
	char *text = malloc(cap);
	struct pc_error err;

	assert_non_null(text);
	n = (size_t)snprintf(text, cap, "appliance: {id: queue}\nwindow: 60s\n"
			     "defaults: {cap: 1Gbps, burst: 1MB, mode: police}\n"
			     "uplinks: [{name: up0, pod_port: net_null0, fabric_port: net_null1}]\n"
			     "pods:\n");
	for (unsigned p = 0; p < npods; p++)
		n += (size_t)snprintf(text + n, cap - n, "  - {id: pod-%05u, uplink: up0, "
				      "prefixes: [10.%u.%u.0/24]}\n", p, p / 256, p % 256);
	memset(t, 0, sizeof(*t));
	if (pc_config_load_buffer("queue", text, n, &t->cfg, &err) != 0) {
		pc_error_print(&err, stderr);
		fail();
	}
	free(text);
	pc_config_digest(&t->cfg, t->digest);
}

/* The control thread closes window `epoch` of table t (count windows). */
static void
window(const struct pc_table *t, uint64_t epoch, uint64_t count)
{
	win.epoch = epoch;
	win.start_ns = epoch * W;
	win.len_ns = W;
	win.count = count;
	win.close_mono_ns = pc_mono_ns();
	win.table = t;
	win.pod[0][PC_DIR_UP].pass_frames = epoch;
	pc_recorder_window(&win);
}

struct rec {
	uint8_t type;
	uint64_t start_ns;
	uint64_t count;
	uint8_t digest[PC_DIGEST_LEN];
	long len;
};

static struct pc_ledger *
open_ro(void)
{
	struct pc_error err;
	struct pc_ledger *l = pc_ledger_open_ro(dir, &err);

	if (l == NULL)
		fail_msg("%s", err.msg);
	return l;
}

/* Record i of the ledger, read back as a verifier would. */
static struct rec
record(struct pc_ledger *l, uint64_t i)
{
	static uint8_t buf[PC_RECORD_MAX];
	struct pc_record r;
	struct rec out;

	out.len = pc_ledger_record(l, i, buf, sizeof(buf));
	assert_true(out.len > 0);
	assert_int_equal(pc_record_decode(buf, (size_t)out.len, &r, NULL), 0);
	out.type = r.type;
	out.start_ns = r.window_start_ns;
	out.count = r.window_count;
	memcpy(out.digest, r.podmap_digest, PC_DIGEST_LEN);
	pc_record_free(&r);
	return out;
}

static void
assert_record(struct pc_ledger *l, uint64_t i, uint8_t type, uint64_t epoch, uint64_t count,
	      const struct pc_table *t)
{
	struct rec r = record(l, i);

	if (r.type != type || r.start_ns != epoch * W || r.count != count)
		fail_msg("record %lu: %s of window %lu x %lu, expected %s of %lu x %lu",
			 (unsigned long)i, pc_record_type_name(r.type),
			 (unsigned long)(r.start_ns / W), (unsigned long)r.count,
			 pc_record_type_name(type), (unsigned long)epoch, (unsigned long)count);
	assert_memory_equal(r.digest, t->digest, PC_DIGEST_LEN);
}

static int
group_setup(void **state)
{
	const char *tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
	uint64_t covered;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/podcapd-queue-XXXXXX", tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		return -1;
	key = pc_signer_key_generate("podcap/queue");
	if (key == NULL)
		return -1;
	memset(&signer, 0, sizeof(signer));
	signer.fd = -1;
	pc_signer_key_public(key, &signer.vk);
	make_table(&small, 2);
	make_table(&big, BIG_PODS);
	if (pc_recorder_start(dir, "queue", "podcap/queue", &signer, &covered) != 0 || covered != 0)
		return -1;
	/* the disk is away from the start: START is the record the ledger thread holds */
	hold(true);
	pc_recorder_start_record(&small, E0, W, 0);
	return 0;
}

/* STOP goes through, nothing is left unwritten, and the ledger directory goes. */
static int
group_teardown(void **state)
{
	struct dirent *e;

	(void)state;
	hold(false);
	pc_recorder_stop_record(&small, E0 + 9000, W);
	int lost = (int)pc_recorder_finish();
	DIR *d = opendir(dir);
	/* the ledger directory is flat */
	while (d != NULL && (e = readdir(d)) != NULL) {
		char path[2 * PC_PATH_LEN];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_name[0] != '.')
			unlink(path);
	}
	if (d != NULL)
		closedir(d);
	rmdir(dir);
	pc_config_free(&small.cfg);
	pc_config_free(&big.cfg);
	pc_signer_key_free(key);
	return lost == 0 ? 0 : -1;
}

static void
test_queue_full_by_count(void **state)
{
	(void)state;
	/* START is in the queue: QUEUE_MAX - 1 windows fit */
	for (uint64_t i = 0; i < QUEUE_MAX - 1; i++)
		window(&small, E0 + i, 1);
	assert_int_equal(stats().queued, QUEUE_MAX);
	assert_int_equal(stats().lost_windows, 0);

	/* the next finds the queue full */
	window(&small, E0 + QUEUE_MAX - 1, 1);
	assert_int_equal(stats().lost_windows, 1);
	/* and so do the GAP for it and a record of three windows (the control thread was late) */
	window(&small, E0 + QUEUE_MAX, 3);
	assert_int_equal(stats().lost_windows, 4);
	assert_int_equal(stats().queued, QUEUE_MAX);

	/* the disk is back: the next window comes after a GAP of exactly the four lost */
	hold(false);
	wait_drained();
	window(&small, E0 + QUEUE_MAX + 3, 1);
	wait_drained();

	struct pc_ledger *l = open_ro();
	assert_int_equal(pc_ledger_size(l), 1 + (QUEUE_MAX - 1) + 2);
	assert_record(l, 0, PC_REC_START, E0, 0, &small);
	for (uint64_t i = 0; i < QUEUE_MAX - 1; i++)
		assert_record(l, 1 + i, PC_REC_WINDOW, E0 + i, 1, &small);
	assert_record(l, QUEUE_MAX, PC_REC_GAP, E0 + QUEUE_MAX - 1, 4, &small);
	assert_record(l, QUEUE_MAX + 1, PC_REC_WINDOW, E0 + QUEUE_MAX + 3, 1, &small);
	records_before = pc_ledger_size(l);
	pc_ledger_close(l);
}

static void
test_queue_full_by_bytes(void **state)
{
	uint64_t e = E0 + QUEUE_MAX + 4, fit = 0, lost = stats().lost_windows;

	(void)state;
	/* a reload to a map of BIG_PODS pods, held with the disk away */
	hold(true);
	pc_recorder_reload(&big, e, W);
	/* by its bytes, one finds the queue full long before QUEUE_MAX records */
	while (stats().lost_windows == lost) {
		assert_true(fit < QUEUE_MAX / 4);
		window(&big, e + fit++, 1);
	}
	fit--;
	assert_int_equal(stats().queued, 1 + fit);
	/* the GAP for it is small enough to get in; the window after it is not */
	window(&big, e + fit + 1, 1);
	assert_int_equal(stats().lost_windows, lost + 2);
	assert_int_equal(stats().queued, 1 + fit + 1);

	hold(false);
	wait_drained();
	window(&big, e + fit + 2, 1);
	wait_drained();

	struct pc_ledger *l = open_ro();
	uint64_t r = records_before;
	assert_int_equal(pc_ledger_size(l), r + 1 + fit + 3);
	assert_record(l, r, PC_REC_RELOAD, e, 0, &big);
	for (uint64_t i = 0; i < fit; i++)
		assert_record(l, r + 1 + i, PC_REC_WINDOW, e + i, 1, &big);
	assert_record(l, r + 1 + fit, PC_REC_GAP, e + fit, 1, &big);
	assert_record(l, r + 2 + fit, PC_REC_GAP, e + fit + 1, 1, &big);
	assert_record(l, r + 3 + fit, PC_REC_WINDOW, e + fit + 2, 1, &big);

	/* it was the bytes: the reload and the windows that fit are within 256 MiB, one more is not */
	size_t reload_len = (size_t)record(l, r).len, window_len = (size_t)record(l, r + 1).len;
	assert_true(reload_len + fit * window_len <= QUEUE_BYTES_MAX);
	assert_true(reload_len + (fit + 1) * window_len > QUEUE_BYTES_MAX);
	pc_ledger_close(l);
}

/* The size of the last note the ledger thread handed on (pc_recorder_on_publish). */
static uint64_t published;

static void
on_publish(const char *note, size_t len)
{
	struct pc_checkpoint cp;
	size_t blen = len;

	for (size_t i = 1; i < len; i++)
		if (note[i - 1] == '\n' && note[i] == '\n') {
			blen = i;
			break;
		}
	assert_int_equal(pc_checkpoint_parse_body(note, blen, &cp, NULL), 0);
	__atomic_store_n(&published, cp.size, __ATOMIC_RELEASE);
}

/*
 * A stop hands its last checkpoint to the witnesses once pc_recorder_drain
 * says so: by then every record queued is in the ledger and the note over
 * all of them was published, not merely taken off the queue.
 */
static void
test_drain(void **state)
{
	struct pc_ledger *l = open_ro();
	uint64_t before = pc_ledger_size(l), e = E0 + 2 * QUEUE_MAX;

	(void)state;
	pc_ledger_close(l);
	pc_recorder_on_publish(on_publish);
	/* the disk away: not drained, and the wait is bounded */
	hold(true);
	window(&small, e, 1);
	uint64_t t0 = pc_mono_ns();
	assert_false(pc_recorder_drain(200 * 1000 * 1000ull));
	assert_true(pc_mono_ns() - t0 < 5 * NS);
	/* back: drained with the checkpoint over both windows published */
	window(&small, e + 1, 1);
	hold(false);
	assert_true(pc_recorder_drain(30 * NS));
	assert_int_equal(__atomic_load_n(&published, __ATOMIC_ACQUIRE), before + 2);
	l = open_ro();
	assert_int_equal(pc_ledger_size(l), before + 2);
	assert_int_equal(pc_ledger_published_size(l), before + 2);
	pc_ledger_close(l);
	/* and with nothing queued it says so at once */
	assert_true(pc_recorder_drain(0));
	pc_recorder_on_publish(NULL);
}

/*
 * Every 2 windows a quote: the first window is marked for it, the second is
 * queued behind it before the disk comes back, and both are appended in one
 * batch under one checkpoint. The quote comes after the second, so it is
 * labelled with the cursor after the second, not where the first ended.
 */
static void
test_quote_after_batch(void **state)
{
	struct pc_attestation att = { .enabled = true, .every = 2 };
	uint64_t e = E0 + 3 * QUEUE_MAX;

	(void)state;
	hold(true);
	pc_recorder_attestation(&att);
	window(&small, e, 1);
	window(&small, e + 1, 1);
	hold(false);
	assert_true(pc_recorder_drain(30 * NS));
	att.enabled = false;
	pc_recorder_attestation(&att);
	assert_int_equal(quotes, 1);
	assert_int_equal(quoted.cursor_ns, (e + 2) * W);
	assert_int_equal(quoted.window_ns, W);
	assert_memory_equal(quoted.digest, small.digest, PC_DIGEST_LEN);
	assert_int_equal(stats().quotes_failed, 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_full_by_count),
		cmocka_unit_test(test_queue_full_by_bytes),
		cmocka_unit_test(test_drain),
		cmocka_unit_test(test_quote_after_batch),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
