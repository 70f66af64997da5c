/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A reload coming into force at a window boundary (src/daemon/reload.c,
 * control.c, timeline.c and the worker's pc_worker_boundary): attached
 * before any worker passes the boundary, every worker takes it there;
 * attached after one did, the attach fails and it comes with the next
 * boundary; a detach succeeds until a worker has taken the table; and the
 * table it replaces is freed only once every worker has taken the new one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "daemon/control.h"
#include "daemon/dataplane.h"
#include "fixture.h"
#include "daemon/reload.h"

#include "../config/key_edits.h"

#define E0 28333333ull
#define MS 1000000ull

#define MAP_HEAD \
	"appliance: {id: reload}\n" \
	"window: 60s\n" \
	"uplinks:\n" \
	"  - {name: up0, pod_port: net_null0, fabric_port: net_null1}\n" \
	"  - {name: up1, pod_port: net_null2, fabric_port: net_null3}\n" \
	"pods:\n" \
	"  - {id: pod-a, uplink: up0, prefixes: [10.0.0.0/24], cap: 1Gbps, burst: 1MB, mode: police}\n" \
	"  - {id: pod-b, uplink: up1, prefixes: [10.0.1.0/24], cap: 1Gbps, burst: 1MB, mode: police}\n"

static const char map[] = MAP_HEAD;
/* the reloads: a pod more, on uplink 0 (pod-c) or on uplink 1 (pod-d) */
static const char map_c[] = MAP_HEAD
	"  - {id: pod-c, uplink: up0, prefixes: [10.0.2.0/24], cap: 1Gbps, burst: 1MB, mode: police}\n";
static const char map_d[] = MAP_HEAD
	"  - {id: pod-d, uplink: up1, prefixes: [10.0.3.0/24], cap: 1Gbps, burst: 1MB, mode: police}\n";

static unsigned generation;

static int
setup(void **state)
{
	(void)state;
	fx_start(2, map);
	generation = 1;
	return 0;
}

/* What the control thread does on SIGHUP (run.c): the table of `yaml` into fx_tl.pending. */
static unsigned
prepare(const char *yaml)
{
	unsigned g = generation++;

	struct pc_tls *tls = (struct pc_tls *)&tls; /* a map without TLS sets it to NULL */

	pc_reload_prepare(fx_map_file(yaml), pc_dp.table, fx_ports(), g, &fx_tl.pending, &tls);
	assert_null(tls);
	assert_non_null(fx_tl.pending);
	assert_int_equal(fx_tl.pending->generation, g);
	return g;
}

static const struct fx_record *
last_record(void)
{
	assert_true(fx_nrecords > 0);
	return &fx_records[fx_nrecords - 1];
}

static void
test_attach_before_the_boundary(void **state)
{
	struct pc_table *t0 = pc_dp.table;
	uint64_t t1 = fx_boundary(E0 + 1);

	(void)state;
	unsigned g = prepare(map_c);
	struct pc_table *t = fx_tl.pending;
	assert_true(pc_control_attach(t));

	fx_burst(0, t1 - 1, "pod-a", 2);
	assert_ptr_equal(pc_dp.workers[0]->table, t0);
	fx_burst(0, t1, NULL, 0);
	assert_ptr_equal(pc_dp.workers[0]->table, t);
	fx_burst(0, t1, "pod-c", 3);
	fx_burst(1, t1 + 5, "pod-b", 1);
	assert_ptr_equal(pc_dp.workers[1]->table, t);
	/* in force for the control plane once closed, not before */
	assert_ptr_equal(pc_dp.table, t0);
	assert_false(fx_freed(0));

	fx_clock_at(t1 + 20 * MS);
	pc_timeline_close(&fx_tl);
	assert_int_equal(fx_nrecords, 2);
	assert_int_equal(fx_records[0].type, FX_WINDOW_REC);
	assert_int_equal(fx_records[0].generation, 0);
	assert_int_equal(fx_frames(&fx_records[0], "pod-a"), 2);
	assert_int_equal(fx_records[1].type, FX_RELOAD_REC);
	assert_int_equal(fx_records[1].generation, g);
	assert_int_equal(fx_records[1].start_ns, (E0 + 1) * FX_WINDOW);
	assert_ptr_equal(pc_dp.table, t);
	assert_true(fx_freed(0));
	assert_null(fx_tl.pending);

	/* the next window is counted under the new table */
	fx_pass_and_close();
	assert_int_equal(last_record()->generation, g);
	assert_int_equal(fx_frames(last_record(), "pod-c"), 3);
	assert_int_equal(fx_frames(last_record(), "pod-b"), 1);
}

static void
test_attach_after_a_worker_passed(void **state)
{
	struct pc_table *t0 = pc_dp.table;
	uint64_t t1 = fx_boundary(E0 + 1);

	(void)state;
	/* worker 0 passes first and seals the boundary: it comes with no table */
	fx_burst(0, t1, NULL, 0);
	assert_true(pc_control_passed());
	unsigned g = prepare(map_c);
	struct pc_table *t = fx_tl.pending;
	assert_false(pc_control_attach(t));
	fx_burst(1, t1 + 1, NULL, 0);
	/* every worker stays on the same table */
	assert_ptr_equal(pc_dp.workers[0]->table, t0);
	assert_ptr_equal(pc_dp.workers[1]->table, t0);

	fx_clock_at(t1 + 20 * MS);
	pc_timeline_close(&fx_tl);
	assert_int_equal(fx_nrecords, 1);
	assert_ptr_equal(pc_dp.table, t0);
	assert_ptr_equal(fx_tl.pending, t);
	/* armed with the next boundary instead */
	assert_int_equal(pc_dp.switch_epoch, E0 + 2);
	assert_int_equal(pc_dp.switch_table, (uintptr_t)t);

	fx_pass_and_close();
	assert_ptr_equal(pc_dp.workers[0]->table, t);
	assert_ptr_equal(pc_dp.workers[1]->table, t);
	assert_int_equal(last_record()->type, FX_RELOAD_REC);
	assert_int_equal(last_record()->generation, g);
	assert_int_equal(last_record()->start_ns, (E0 + 2) * FX_WINDOW);
	assert_ptr_equal(pc_dp.table, t);
	assert_true(fx_freed(0));
}

static void
test_detach(void **state)
{
	uint64_t t1 = fx_boundary(E0 + 1);

	(void)state;
	/* before any worker passed: a second SIGHUP replaces the pending table */
	unsigned gc = prepare(map_c);
	assert_true(pc_control_attach(fx_tl.pending));
	assert_true(pc_control_detach(fx_tl.pending));
	assert_int_equal(pc_dp.switch_table, 0);
	unsigned gd = prepare(map_d);
	assert_true(fx_freed(gc));
	struct pc_table *t = fx_tl.pending;
	assert_true(pc_control_attach(t));

	/* once a worker took it, a detach fails: it comes with this boundary */
	fx_burst(1, t1, NULL, 0);
	assert_ptr_equal(pc_dp.workers[1]->table, t);
	assert_false(pc_control_detach(t));
	assert_int_equal(pc_dp.switch_table, (uintptr_t)t | PC_SWITCH_TAKEN);
	fx_burst(0, t1 + 1, NULL, 0);
	assert_ptr_equal(pc_dp.workers[0]->table, t);

	fx_clock_at(t1 + 20 * MS);
	pc_timeline_close(&fx_tl);
	assert_int_equal(last_record()->type, FX_RELOAD_REC);
	assert_int_equal(last_record()->generation, gd);
	assert_ptr_equal(pc_dp.table, t);
}

static bool closed;        /* the close has returned */

static void *
close_thread(void *arg)
{
	(void)arg;
	pc_timeline_close(&fx_tl);
	__atomic_store_n(&closed, true, __ATOMIC_RELEASE);
	return NULL;
}

static void
test_old_table_freed_after_every_ack(void **state)
{
	struct pc_table *t0 = pc_dp.table;
	uint64_t t1 = fx_boundary(E0 + 1);
	struct timespec nap = { .tv_sec = 0, .tv_nsec = 100 * 1000 * 1000 };
	pthread_t th;

	(void)state;
	prepare(map_c);
	struct pc_table *t = fx_tl.pending;
	assert_true(pc_control_attach(t));
	fx_burst(0, t1, NULL, 0);
	fx_clock_at(t1 + 20 * MS);

	/* the control thread closes while worker 1 has not passed the boundary */
	__atomic_store_n(&closed, false, __ATOMIC_RELAXED);
	assert_int_equal(pthread_create(&th, NULL, close_thread, NULL), 0);
	nanosleep(&nap, NULL);
	assert_false(fx_freed(0));
	assert_ptr_equal(__atomic_load_n(&pc_dp.table, __ATOMIC_ACQUIRE), t0);
	assert_false(__atomic_load_n(&closed, __ATOMIC_ACQUIRE));
	assert_ptr_equal(pc_dp.workers[1]->table, t0);

	fx_burst(1, t1 + 30 * MS, NULL, 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(__atomic_load_n(&closed, __ATOMIC_ACQUIRE));
	assert_true(fx_freed(0));
	assert_ptr_equal(pc_dp.table, t);
	assert_ptr_equal(pc_dp.workers[1]->table, t);
}

/* pc_reload_incompatible of MAP_HEAD and of `yaml`, both loaded as podcapd loads them. */
static const char *
incompatible(const char *yaml)
{
	static char why[128];
	struct pc_config a, b;
	const char *r;

	assert_int_equal(pc_config_load_buffer("a", map, strlen(map), &a, NULL), 0);
	assert_int_equal(pc_config_load_buffer("b", yaml, strlen(yaml), &b, NULL), 0);
	r = pc_reload_incompatible(&a, &b, why, sizeof(why));
	pc_config_free(&a);
	pc_config_free(&b);
	return r != NULL ? why : NULL;
}

/* The origin names the log: a map that renames it is another log's, refused as the id is. */
static void
test_origin_is_fixed(void **state)
{
	const char *head = "appliance: {id: reload}\n";
	char renamed[sizeof(map) + 64];
	const char *why;

	(void)state;
	assert_int_equal(strncmp(map, head, strlen(head)), 0);
	snprintf(renamed, sizeof(renamed),
		 "appliance: {id: reload, origin: podcap.example/reload}\n%s", map + strlen(head));
	why = incompatible(renamed);
	assert_non_null(why);
	assert_string_equal(why, "appliance.origin changed");
	assert_null(incompatible(map_c));
}

/* Loads text, failing the test with the loader's error. */
static void
load_text(const char *text, struct pc_config *cfg)
{
	struct pc_error err;

	if (pc_config_load_buffer("edit", text, strlen(text), cfg, &err) != 0)
		fail_msg("%u:%u: %s\n%s", err.mark.line, err.mark.col, err.msg, text);
}

static unsigned nchecked;

/*
 * A reload that changes key k (its edit in tests/config/key_edits.h) is
 * refused, naming it, exactly when k is fixed for a run; of an item of a
 * sequence, the refusal names the sequence.
 */
static void
check_reload(const struct pc_config_key *k, void *arg)
{
	static char text[8192];
	const struct ke_edit *e = ke_edit_of(k->path);
	struct pc_config a, b;
	char why[128], name[sizeof(k->path)];
	const char *r;

	(void)arg;
	if (e == NULL)
		return; /* the appliance mapping: test_config.c holds every other key to an edit */
	load_text(ke_bases[e->base], &a);
	if (ke_apply(e, text, sizeof(text)) != 0)
		fail_msg("the edit of %s does not apply", k->path);
	load_text(text, &b);
	r = pc_reload_incompatible(&a, &b, why, sizeof(why));
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(k->path, "["), k->path);
	print_message("%-32s %s\n", k->path, r != NULL ? r : "accepted");
	if (k->reload == PC_RELOAD_FIXED && (r == NULL || strstr(r, name) == NULL))
		fail_msg("%s is fixed for a run, but a reload changing it gives '%s'", k->path,
			 r != NULL ? r : "(accepted)");
	if (k->reload != PC_RELOAD_FIXED && r != NULL)
		fail_msg("%s may be reloaded, but a reload changing it is refused: %s", k->path, r);
	pc_config_free(&a);
	pc_config_free(&b);
	nchecked++;
}

/* What a reload refuses is what the keys' rows say is fixed for a run. */
static void
test_each_key(void **state)
{
	(void)state;
	nchecked = 0;
	pc_config_each_key(check_reload, NULL);
	assert_true(nchecked >= 50);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_attach_before_the_boundary, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_attach_after_a_worker_passed, setup,
						fx_teardown),
		cmocka_unit_test_setup_teardown(test_detach, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_old_table_freed_after_every_ack, setup,
						fx_teardown),
		cmocka_unit_test(test_origin_is_fixed),
		cmocka_unit_test(test_each_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
