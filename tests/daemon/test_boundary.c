/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Window boundaries (src/daemon/timeline.c, control.c and the worker's
 * pc_worker_boundary): the workers switch banks at the armed boundary's
 * TSC by themselves, so a window record holds exactly the frames of the
 * bursts read before its boundary, however late the control thread closes
 * it; the next record covers the windows the control thread fell behind.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <time.h>

#include <cmocka.h>

#include "daemon/control.h"
#include "daemon/dataplane.h"
#include "fixture.h"

#define E0 28333333ull                  /* the window in progress at FX_WALL0 */
#define MS 1000000ull

static const char map[] =
	"appliance: {id: boundary}\n"
	"window: 60s\n"
	"uplinks:\n"
	"  - {name: up0, pod_port: net_null0, fabric_port: net_null1}\n"
	"  - {name: up1, pod_port: net_null2, fabric_port: net_null3}\n"
	"pods:\n"
	"  - {id: pod-a, uplink: up0, cap: 1Gbps, burst: 1MB, mode: police}\n"
	"  - {id: pod-b, uplink: up1, cap: 1Gbps, burst: 1MB, mode: police}\n";

/* Two workers (pod-a's uplink on worker 0, pod-b's on 1) and the boundary of E0 + 1 armed. */
static int
setup(void **state)
{
	(void)state;
	fx_start(2, map);
	return 0;
}

static void
assert_window(const struct fx_record *r, uint64_t epoch, uint64_t count, uint64_t a, uint64_t b)
{
	assert_int_equal(r->type, FX_WINDOW_REC);
	assert_int_equal(r->start_ns, epoch * FX_WINDOW);
	assert_int_equal(r->count, count);
	assert_int_equal(fx_frames(r, "pod-a"), a);
	assert_int_equal(fx_frames(r, "pod-b"), b);
}

static void
test_switch_at_the_boundary_tsc(void **state)
{
	uint64_t t1 = fx_boundary(E0 + 1);
	struct pc_worker *w0 = pc_dp.workers[0];

	(void)state;
	assert_int_equal(fx_tl.epoch, E0);
	assert_int_equal(pc_dp.switch_epoch, E0 + 1);
	/* the armed TSC is the boundary's: 35 s after a start 25 s into the window */
	assert_int_equal(pc_dp.switch_tsc, t1);
	assert_int_equal(t1, FX_MONO0 + 35 * FX_NS);

	fx_burst(0, t1 - 1, "pod-a", 1);
	assert_ptr_equal(w0->bank, w0->banks[0]);
	assert_int_not_equal(w0->acked_epoch, E0 + 1);
	assert_false(pc_control_passed());

	fx_burst(0, t1, "pod-a", 1);
	assert_ptr_equal(w0->bank, w0->banks[1]);
	assert_int_equal(w0->acked_epoch, E0 + 1);
	assert_true(pc_control_passed());
	/* worker 1 has not read a TSC past it yet: it has not switched */
	assert_ptr_equal(pc_dp.workers[1]->bank, pc_dp.workers[1]->banks[0]);

	/* later bursts stay in the new bank until the control thread arms the next boundary */
	fx_burst(0, t1 + 3 * FX_WINDOW, "pod-a", 1);
	assert_ptr_equal(w0->bank, w0->banks[1]);
	assert_int_equal(w0->acked_epoch, E0 + 1);
}

/*
 * The control thread is held up for three and a half windows after the
 * boundary of E0 + 1 while both workers go on forwarding.
 */
static void
test_late_control_thread(void **state)
{
	uint64_t t1 = fx_boundary(E0 + 1);

	(void)state;
	fx_burst(0, t1 - 1000, "pod-a", 3);
	fx_burst(1, t1 - 1, "pod-b", 2);
	fx_burst(0, t1, "pod-a", 5);
	fx_burst(1, t1 + 3 * FX_WINDOW, "pod-b", 7);
	fx_burst(0, t1 + 3 * FX_WINDOW + 30 * FX_NS, "pod-a", 4);
	fx_burst(1, t1 + 3 * FX_WINDOW + 30 * FX_NS, "pod-b", 1);

	/* the close, three and a half windows late: only what came before the boundary */
	fx_clock_at(t1 + 3 * FX_WINDOW + 30 * FX_NS);
	pc_timeline_close(&fx_tl);
	assert_int_equal(fx_nrecords, 1);
	assert_window(&fx_records[0], E0, 1, 3, 2);

	/* the next boundary armed is the first still ahead */
	assert_int_equal(fx_tl.epoch, E0 + 1);
	assert_int_equal(fx_tl.next, E0 + 5);
	uint64_t t5 = fx_boundary(E0 + 5);
	assert_int_equal(pc_dp.switch_tsc, t5);
	assert_int_equal(t5, t1 + 4 * FX_WINDOW);

	fx_burst(0, t5 - 1, "pod-a", 6);
	fx_burst(1, t5 - 1, NULL, 0);
	fx_burst(0, t5, "pod-a", 1);
	fx_burst(1, t5 + 10, "pod-b", 1);

	/* on time now: one record covers the four windows since the boundary of E0 + 1 */
	fx_clock_at(t5 + 20 * MS);
	pc_timeline_close(&fx_tl);
	assert_int_equal(fx_nrecords, 2);
	assert_window(&fx_records[1], E0 + 1, 4, 5 + 4 + 6, 7 + 1);
	assert_int_equal(fx_tl.next, E0 + 6);

	/* and the one after holds the frames from that boundary on */
	fx_pass_and_close();
	assert_window(&fx_records[2], E0 + 5, 1, 1, 1);
}

/*
 * At stop, worker 0 had passed the boundary of E0 + 1 and worker 1 had not
 * (it stopped first): the window before is closed as any other, then the
 * window in progress, then STOP.
 */
static void
test_stop_after_a_boundary(void **state)
{
	uint64_t t1 = fx_boundary(E0 + 1);

	(void)state;
	fx_burst(0, t1 - 1, "pod-a", 2);
	fx_burst(1, t1 - 1, "pod-b", 3);
	fx_burst(0, t1, "pod-a", 4);
	fx_clock_at(t1 + 10 * FX_NS);
	pc_timeline_stop(&fx_tl);

	assert_int_equal(fx_nrecords, 3);
	assert_window(&fx_records[0], E0, 1, 2, 3);
	/* the partial window, up to the end of the one in progress */
	assert_window(&fx_records[1], E0 + 1, 1, 4, 0);
	assert_int_equal(fx_records[2].type, FX_STOP_REC);
	assert_int_equal(fx_records[2].start_ns, (E0 + 2) * FX_WINDOW);
}

static void *
close_thread(void *arg)
{
	(void)arg;
	pc_timeline_close(&fx_tl);
	return NULL;
}

/*
 * Worker 1 reaches the boundary two seconds late, while the control thread
 * waits for it. Both clocks move on together: the wall clock did not step,
 * and no CLOCK record may say it did.
 */
static void
test_late_worker_is_no_clock_step(void **state)
{
	uint64_t t1 = fx_boundary(E0 + 1);
	struct timespec nap = { .tv_sec = 0, .tv_nsec = 50 * 1000 * 1000 };
	pthread_t th;

	(void)state;
	fx_burst(0, t1, "pod-a", 1);
	fx_clock_at(t1 + 20 * MS);
	assert_int_equal(pthread_create(&th, NULL, close_thread, NULL), 0);
	nanosleep(&nap, NULL);
	fx_clock_at(t1 + 2 * FX_NS);
	fx_burst(1, t1 + 2 * FX_NS, "pod-b", 1);
	assert_int_equal(pthread_join(th, NULL), 0);

	assert_int_equal(fx_nrecords, 1);
	assert_int_equal(fx_records[0].type, FX_WINDOW_REC);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_switch_at_the_boundary_tsc, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_late_control_thread, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_stop_after_a_boundary, setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_late_worker_is_no_clock_step, setup, fx_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
