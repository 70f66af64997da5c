/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cables (verify/link.c, docs/verify.md check 16), on forged logs: a
 * START, its LINK, then WINDOWs each followed by its LINK. Each rule with
 * a log that passes it and one that fails it: --max-link-down (in one
 * window and across windows), the declared neighbour, the declared silence, a WINDOW without its LINK, a
 * LINK out of place; and the time down and the neighbours the reports
 * state.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "log/record.h"
#include "podmap/config.h"
#include "verify/verify.h"

#include "testutil.h"

#define APP     "l-app"
#define NS      1000000000ULL
#define WIN     (60 * NS)
#define T0      (1704067200ULL * NS)
#define NOW     (T0 + 1000 * WIN)
#define WINDOWS 4

#define MAP_HEAD                                                    \
	"appliance:\n  id: " APP "\nwindow: 60s\n"                  \
	"defaults:\n  cap: 1Gbps\n  burst: 100MB\n  mode: police\n" \
	"uplinks:\n"                                                \
	"  - name: up0\n    pod_port: 0000:3b:00.0\n    fabric_port: 0000:3b:00.1\n"
#define MAP_PODS "pods:\n  - id: pod-a\n    uplink: up0\n"

static const char plain_text[] = MAP_HEAD MAP_PODS;
static const char declared_text[] =
    MAP_HEAD "    pod_neighbor: {chassis_id: \"02:00:00:00:00:0a\", port_id: eth0}\n"
	     "    fabric_neighbor: {chassis_id: leaf-1, port_id: swp7}\n"
	     "    lldp_max_silence: 90s\n" MAP_PODS;

static struct pc_signer_key *key;
static struct pc_verifier_key vk;
static struct pc_config plain, declared;

static int
setup(void **state)
{
	(void)state;
	if (sodium_init() < 0)
		return -1;
	key = pc_test_key("podcap/" APP, &vk);
	pc_test_load_map(&plain, plain_text, "plain.yaml");
	pc_test_load_map(&declared, declared_text, "declared.yaml");
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	pc_signer_key_free(key);
	pc_config_free(&plain);
	pc_config_free(&declared);
	return 0;
}

/* What each window's LINK says of up0's two ports. */
struct ports {
	uint64_t pod_down_ns[WINDOWS]; /* down within window w, then up again */
	bool moved_from;               /* the fabric neighbour is another switch from window 2 */
	uint64_t silent_from_ns;       /* from window 2 the pod port heard nothing for this long */
	bool no_link_after;            /* window 1 has no LINK */
	/* outage_to > 0: the pod port goes down 10 s before window outage_from ends, up 10 s into window outage_to */
	int outage_from, outage_to;
};

/* The pod port's part of the outage in window w, which ends at end. */
static void
outage_part(struct pc_record_port *p, const struct ports *s, int w, uint64_t end)
{
	struct pc_record_link_change down = { end - 10 * NS, 0, 0, 0 },
				     up = { end - WIN + 10 * NS, 1, 1, 100000 };

	if (s->outage_to == 0 || w < s->outage_from || w > s->outage_to)
		return;
	p->down_ns = w == s->outage_from || w == s->outage_to ? 10 * NS : WIN;
	p->changes = w == s->outage_from || w == s->outage_to;
	p->nlisted = (uint8_t)p->changes;
	p->listed[0] = w == s->outage_from ? down : up;
	p->now = w == s->outage_to ? up : down;
}

static void
set_id(struct pc_lldp_id *id, uint8_t subtype, const char *s, size_t n)
{
	id->subtype = subtype;
	id->len = (uint8_t)n;
	memcpy(id->value, s, n);
}

static void
fill_port(struct pc_record_port *p, unsigned side, uint64_t at_ns)
{
	static const uint8_t mac[6] = { 2, 0, 0, 0, 0, 0x0a };

	memset(p, 0, sizeof(*p));
	snprintf(p->uplink, sizeof(p->uplink), "up0");
	p->side = (uint8_t)side;
	p->now = (struct pc_record_link_change){ T0, 1, 1, 100000 };
	p->neighbor = 1;
	p->heard_ns = at_ns - 5 * NS;
	p->silent_ns = 5 * NS;
	p->ttl = 120;
	if (side == PC_DIR_UP) {
		p->chassis.subtype = PC_LLDP_CHASSIS_MAC;
		p->chassis.len = 6;
		memcpy(p->chassis.value, mac, 6);
		set_id(&p->port, 5, "eth0", 4);
	} else {
		set_id(&p->chassis, 7, "leaf-1", 6);
		set_id(&p->port, 5, "swp7", 4);
	}
}

/* The LINK after window w (w < 0: the START's). */
static void
push_link(struct pc_test_log *lg, const struct pc_config *cfg, const struct ports *s, int w)
{
	struct pc_record_port ports[2];
	uint64_t end = T0 + (uint64_t)(w + 1) * WIN;
	struct pc_record r = { .type = PC_REC_LINK,
			       .appliance_id = APP,
			       .window_len_ns = WIN,
			       .window_start_ns = end,
			       .time_ns = end + NS,
			       .linkstate.kind = w < 0 ? PC_LINK_AT_START : PC_LINK_WINDOW,
			       .linkstate.span_ns = w < 0 ? 0 : WIN,
			       .linkstate.nports = 2,
			       .linkstate.ports = ports };

	pc_config_digest(cfg, r.podmap_digest);
	fill_port(&ports[0], PC_DIR_UP, end);
	fill_port(&ports[1], PC_DIR_DOWN, end);
	if (w >= 0 && s->pod_down_ns[w] != 0) {
		struct pc_record_port *p = &ports[0];
		uint64_t at = end - WIN + NS;
		p->down_ns = s->pod_down_ns[w];
		p->changes = 2;
		p->nlisted = 2;
		p->listed[0] = (struct pc_record_link_change){ at, 0, 0, 0 };
		p->listed[1] = (struct pc_record_link_change){ at + p->down_ns, 1, 1, 100000 };
		p->now = p->listed[1];
	}
	if (w >= 0)
		outage_part(&ports[0], s, w, end);
	if (w >= 2 && s->moved_from)
		set_id(&ports[1].chassis, 7, "leaf-9", 6);
	if (w >= 2 && s->silent_from_ns != 0) {
		ports[0].neighbor = 0;
		ports[0].silent_ns = s->silent_from_ns;
	}
	pc_test_log_push(lg, &r);
}

/* START, its LINK, then WINDOWS windows each with its LINK, under cfg. */
static void
build(struct pc_test_log *lg, const struct pc_config *cfg, const struct ports *s)
{
	struct pc_record_pod pod = { .id = "pod-a",
				     .uplink = "up0",
				     .cap_bps = cfg->pods[0].limits.cap_bps,
				     .burst_bytes = cfg->pods[0].limits.burst_bytes,
				     .mode = pc_record_mode(&cfg->pods[0].limits) };
	struct pc_record_link lk = { .name = "up0" };
	struct pc_record r = { .type = PC_REC_START,
			       .appliance_id = APP,
			       .window_len_ns = WIN,
			       .window_start_ns = T0,
			       .time_ns = T0,
			       .npods = 1,
			       .pods = &pod };

	memset(lg, 0, sizeof(*lg));
	pc_config_digest(cfg, r.podmap_digest);
	pc_test_log_push(lg, &r);
	push_link(lg, cfg, s, -1);
	for (int w = 0; w < WINDOWS; w++) {
		r.type = PC_REC_WINDOW;
		r.window_start_ns = T0 + (uint64_t)w * WIN;
		r.window_count = 1;
		r.time_ns = r.window_start_ns + WIN;
		r.nlinks = 1;
		r.links = &lk;
		pod.dir[PC_DIR_UP].pass_frames = 10;
		pod.dir[PC_DIR_UP].pass_bytes = 10000;
		pc_test_log_push(lg, &r);
		if (!(s->no_link_after && w == 1))
			push_link(lg, cfg, s, w);
	}
}

static struct pc_verify *
verify(const struct pc_config *map, const struct pc_test_log *lg, uint64_t max_down_ns)
{
	struct pc_verify_policy p;
	pc_verify_policy_init(&p);
	p.now_ns = NOW;
	p.max_link_down_ns = max_down_ns;
	struct pc_test_run o = { .vk = &vk, .podmap = map, .policy = &p };

	return pc_test_verify_signed(&o, key, lg);
}

/* The run's only failure, of check c at record `index`, says `what`. */
static void
expect_one(struct pc_verify *v, enum pc_verify_check c, int64_t index, const char *what)
{
	if (pc_verify_nfailures(v) != 1)
		pc_test_print_failures(v);
	assert_int_equal(pc_verify_nfailures(v), 1);
	const struct pc_verify_failure *f = pc_verify_failure_at(v, 0);
	assert_int_equal(f->check, c);
	assert_int_equal(f->record, index);
	if (strstr(f->msg, what) == NULL)
		fail_msg("'%s' does not say '%s'", f->msg, what);
	pc_verify_free(v);
}

static void
expect_clean(struct pc_verify *v)
{
	if (pc_verify_nfailures(v) != 0)
		pc_test_print_failures(v);
	assert_int_equal(pc_verify_nfailures(v), 0);
	pc_verify_free(v);
}

/* Record of window w's LINK: START 0, its LINK 1, then WINDOW and LINK in turn. */
#define LINK_OF(w) (3 + 2 * (w))

static void
test_link_down(void **state)
{
	struct ports s = { .pod_down_ns = { 0, 0, 30 * NS, 0 } };
	struct pc_test_log lg;

	(void)state;
	build(&lg, &plain, &s);
	/* no limit, or a longer one: the time down is stated, not refused */
	expect_clean(verify(&plain, &lg, PC_VERIFY_UNLIMITED));
	expect_clean(verify(&plain, &lg, 30 * NS));
	expect_one(verify(&plain, &lg, 29 * NS), PC_VC_LINK, LINK_OF(2),
		   "uplink up0 pod side: link down 30s in the windows, more than the 29s "
		   "--max-link-down accepts");
	/* the report states it */
	struct pc_verify *v = verify(&plain, &lg, PC_VERIFY_UNLIMITED);
	char *text = pc_test_report(v, false), *json = pc_test_report(v, true);
	assert_non_null(strstr(text, "cables: 5 link records\n"));
	assert_non_null(strstr(text,
			       "uplink up0 pod side: down 30s, 2 changes; longest 30s at "
			       "record 7\n"));
	assert_non_null(strstr(text, "uplink up0 fabric side: down 0s, 0 changes\n"));
	assert_non_null(strstr(json,
			       "\"uplink\": \"up0\", \"side\": \"pod\", \"down_ns\": "
			       "30000000000, \"changes\": 2"));
	free(text);
	free(json);
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

/* A cable out for 140 s across four windows, never 60 s in one of them. */
static void
test_outage_across_windows(void **state)
{
	struct ports s = { .outage_from = 0, .outage_to = 3 };
	struct pc_test_log lg;

	(void)state;
	build(&lg, &plain, &s);
	expect_clean(verify(&plain, &lg, 140 * NS));
	/* refused once, at the LINK that takes it over, naming where it began */
	expect_one(verify(&plain, &lg, 139 * NS), PC_VC_LINK, LINK_OF(3),
		   "uplink up0 pod side: link down 140s in the windows of records 3 to 9, more "
		   "than the 139s --max-link-down accepts");
	expect_one(verify(&plain, &lg, 71 * NS), PC_VC_LINK, LINK_OF(2),
		   "uplink up0 pod side: link down 130s in the windows of records 3 to 7, more "
		   "than the 71s --max-link-down accepts");
	struct pc_verify *v = verify(&plain, &lg, PC_VERIFY_UNLIMITED);
	char *text = pc_test_report(v, false);
	assert_non_null(strstr(text,
			       "uplink up0 pod side: down 140s, 2 changes; longest 60s at "
			       "record 5\n"));
	free(text);
	pc_verify_free(v);
	pc_test_log_free(&lg);
	/* up again at a record's end and down again: two outages, neither too long */
	s.outage_to = 1;
	build(&lg, &plain, &s);
	expect_clean(verify(&plain, &lg, 20 * NS));
	pc_test_log_free(&lg);
}

static void
test_declared_neighbour(void **state)
{
	struct ports s = { 0 };
	struct pc_test_log lg;

	(void)state;
	build(&lg, &declared, &s);
	expect_clean(verify(&declared, &lg, PC_VERIFY_UNLIMITED));
	pc_test_log_free(&lg);
	/* the fabric cable went into another switch from window 2 on */
	s.moved_from = true;
	build(&lg, &declared, &s);
	struct pc_verify *v = verify(&declared, &lg, PC_VERIFY_UNLIMITED);
	assert_int_equal(pc_verify_nfailures(v), 2);
	const struct pc_verify_failure *f = pc_verify_failure_at(v, 0);
	assert_int_equal(f->check, PC_VC_LINK);
	assert_int_equal(f->record, LINK_OF(2));
	assert_string_equal(f->msg,
			    "uplink up0 fabric side: declared neighbour chassis leaf-1 "
			    "port swp7, seen chassis leaf-9 port swp7: the cable is not "
			    "where the auditor saw it");
	assert_int_equal(pc_verify_failure_at(v, 1)->record, LINK_OF(3));
	/* the reports: each port's last neighbour, and whether it is the declared one */
	char *text = pc_test_report(v, false), *json = pc_test_report(v, true);
	assert_non_null(strstr(text,
			       "uplink up0 pod side: down 0s, 0 changes\n"
			       "    last link record: neighbour chassis 02:00:00:00:00:0a port "
			       "eth0, as declared\n"));
	assert_non_null(strstr(text,
			       "    last link record: neighbour chassis leaf-9 port swp7, "
			       "not the declared one\n"));
	assert_non_null(strstr(json,
			       "\"neighbor\": {\"chassis_id\": \"02:00:00:00:00:0a\", "
			       "\"port_id\": \"eth0\"}, \"as_declared\": true}"));
	assert_non_null(strstr(json,
			       "\"neighbor\": {\"chassis_id\": \"leaf-9\", "
			       "\"port_id\": \"swp7\"}, \"as_declared\": false}"));
	free(text);
	free(json);
	pc_verify_free(v);
	/* the same log without the declaration: nothing to hold it to */
	pc_test_log_free(&lg);
	build(&lg, &plain, &s);
	v = verify(&plain, &lg, PC_VERIFY_UNLIMITED);
	json = pc_test_report(v, true);
	assert_non_null(strstr(json, "\"port_id\": \"swp7\"}, \"as_declared\": null}"));
	free(json);
	expect_clean(v);
	pc_test_log_free(&lg);
}

static void
test_declared_silence(void **state)
{
	struct ports s = { .silent_from_ns = 90 * NS };
	struct pc_test_log lg;

	(void)state;
	build(&lg, &declared, &s);
	expect_clean(verify(&declared, &lg, PC_VERIFY_UNLIMITED));
	pc_test_log_free(&lg);
	s.silent_from_ns = 91 * NS;
	build(&lg, &declared, &s);
	struct pc_verify *v = verify(&declared, &lg, PC_VERIFY_UNLIMITED);
	assert_int_equal(pc_verify_nfailures(v), 2);
	const struct pc_verify_failure *f = pc_verify_failure_at(v, 0);
	assert_int_equal(f->record, LINK_OF(2));
	assert_string_equal(f->msg,
			    "uplink up0 pod side: declared neighbour chassis "
			    "02:00:00:00:00:0a port eth0, seen none for 91s, longer than "
			    "the 90s declared");
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

static void
test_window_without_link(void **state)
{
	struct ports s = { .no_link_after = true };
	struct pc_test_log lg;

	(void)state;
	build(&lg, &declared, &s);
	expect_one(verify(&declared, &lg, PC_VERIFY_UNLIMITED), PC_VC_LINK, LINK_OF(1) - 1,
		   "window record without the link record");
	/* a map that declares nothing of the cables does not ask for them */
	pc_test_log_free(&lg);
	build(&lg, &plain, &s);
	expect_clean(verify(&plain, &lg, PC_VERIFY_UNLIMITED));
	pc_test_log_free(&lg);
}

static void
test_link_out_of_place(void **state)
{
	struct ports s = { 0 };
	struct pc_test_log lg;

	(void)state;
	build(&lg, &plain, &s);
	/* window 1's LINK after window 2: labelled before the cursor */
	pc_test_log_move(&lg, LINK_OF(1), LINK_OF(2));
	struct pc_verify *v = verify(&plain, &lg, PC_VERIFY_UNLIMITED);
	const struct pc_verify_failure *f = pc_verify_find(v, PC_VC_SEQUENCE);
	assert_non_null(f);
	assert_int_equal(f->record, LINK_OF(2));
	assert_non_null(strstr(f->msg, "link record labelled"));
	pc_verify_free(v);
	pc_test_log_free(&lg);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_link_down),
		cmocka_unit_test(test_outage_across_windows),
		cmocka_unit_test(test_declared_neighbour),
		cmocka_unit_test(test_declared_silence),
		cmocka_unit_test(test_window_without_link),
		cmocka_unit_test(test_link_out_of_place),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
