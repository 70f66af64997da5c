/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GET /metrics: Prometheus text exposition (format 0.0.4) of the counters,
 * bucket levels, queue depths and the state of the ledger.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "base/clock.h"
#include "base/units.h"
#include "discipline/ptp_mgmt.h"

#include "daemon/clock_discipline.h"
#include "daemon/control.h"
#include "daemon/declared.h"
#include "daemon/links.h"
#include "daemon/lldp_tx.h"
#include "metrics.h"
#include "daemon/recorder.h"
#include "daemon/timing.h"
#include "witnesses.h"

static uint64_t started_ns;
static bool watchdog_stopped;

void
pd_metrics_started(uint64_t realtime_ns)
{
	__atomic_store_n(&started_ns, realtime_ns, __ATOMIC_RELAXED);
}

void
pd_metrics_watchdog(bool pings_stopped)
{
	__atomic_store_n(&watchdog_stopped, pings_stopped, __ATOMIC_RELAXED);
}

struct text {
	char *buf;
	size_t len, cap;
	int failed;
};

static void
emit(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
emit(struct text *t, const char *fmt, ...)
{
	va_list ap;

	for (;;) {
		if (t->failed)
			return;
		va_start(ap, fmt);
		int n = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = 1;
			return;
		}
		if ((size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = (t->cap + (size_t)n) * 2;
		char *nb = realloc(t->buf, cap);
		if (nb == NULL) {
			t->failed = 1;
			return;
		}
		t->buf = nb;
		t->cap = cap;
	}
}

static void
family(struct text *t, const char *name, const char *type, const char *help)
{
	emit(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/*
 * s as a label value: backslash, double quote and line feed escaped. Pod
 * ids and uplink names (PC_ID_RULE) have none today; out holds
 * LABEL_LEN, twice any id.
 */
#define LABEL_LEN (2 * PC_ID_LEN)

static const char *
label_value(char *out, const char *s)
{
	size_t o = 0;

	for (; *s != '\0' && o + 2 < LABEL_LEN; s++) {
		char e = *s == '\\' ? '\\' : *s == '"' ? '"' : *s == '\n' ? 'n' : '\0';

		if (e != '\0') {
			out[o++] = '\\';
			out[o++] = e;
		} else {
			out[o++] = *s;
		}
	}
	out[o] = '\0';
	return out;
}

/* What one gauge or counter per pod and direction reads. */
typedef uint64_t (*pod_value)(const struct pc_table *t, unsigned p, unsigned d,
			      const struct pc_pod_ctr *c);

static uint64_t
v_pass_bytes(const struct pc_table *t, unsigned p, unsigned d, const struct pc_pod_ctr *c)
{
	(void)t;
	(void)p;
	(void)d;
	return c->pass_bytes;
}

static uint64_t
v_pass_frames(const struct pc_table *t, unsigned p, unsigned d, const struct pc_pod_ctr *c)
{
	(void)t;
	(void)p;
	(void)d;
	return c->pass_frames;
}

static uint64_t
v_level(const struct pc_table *t, unsigned p, unsigned d, const struct pc_pod_ctr *c)
{
	(void)c;
	return __atomic_load_n(&t->shapers[p * PC_DIR_COUNT + d].pub_level_bytes, __ATOMIC_RELAXED);
}

static uint64_t
v_queue_frames(const struct pc_table *t, unsigned p, unsigned d, const struct pc_pod_ctr *c)
{
	(void)c;
	return __atomic_load_n(&t->shapers[p * PC_DIR_COUNT + d].pub_queue_frames, __ATOMIC_RELAXED);
}

static uint64_t
v_queue_bytes(const struct pc_table *t, unsigned p, unsigned d, const struct pc_pod_ctr *c)
{
	(void)c;
	return __atomic_load_n(&t->shapers[p * PC_DIR_COUNT + d].pub_queue_bytes, __ATOMIC_RELAXED);
}

static uint64_t
v_last_window(const struct pc_table *t, unsigned p, unsigned d, const struct pc_pod_ctr *c)
{
	(void)t;
	(void)c;
	return pc_control_last_window_bytes(p, d);
}

static uint64_t
v_cap(const struct pc_table *t, unsigned p, unsigned d, const struct pc_pod_ctr *c)
{
	(void)d;
	(void)c;
	return t->cfg.pods[p].limits.cap_bps;
}

static uint64_t
v_burst(const struct pc_table *t, unsigned p, unsigned d, const struct pc_pod_ctr *c)
{
	(void)d;
	(void)c;
	return t->cfg.pods[p].limits.burst_bytes;
}

static const struct {
	const char *name, *type, *help;
	pod_value value;
	int bits;       /* value() is in bits, shown in bytes */
} pod_metrics[] = {
	{ "podcap_passed_bytes_total", "counter",
	  "L2 frame bytes (no FCS) forwarded, per pod and direction.", v_pass_bytes },
	{ "podcap_passed_frames_total", "counter", "Frames forwarded, per pod and direction.",
	  v_pass_frames },
	{ "podcap_bucket_level_bytes", "gauge",
	  "Tokens in the bucket, in bytes, per pod and direction.", v_level },
	{ "podcap_queue_frames", "gauge",
	  "Frames waiting in the shaping queue, per pod and direction.", v_queue_frames },
	{ "podcap_queue_bytes", "gauge",
	  "Frame bytes waiting in the shaping queue, per pod and direction.", v_queue_bytes },
	{ "podcap_last_window_passed_bytes", "gauge",
	  "Bytes passed in the last closed window, per pod and direction.", v_last_window },
	{ "podcap_cap_bytes_per_second", "gauge",
	  "The cap in force, in L2 frame bytes (no FCS) per second, per pod and direction.", v_cap, 1 },
	{ "podcap_burst_bytes", "gauge",
	  "The bucket depth in force, in bytes, per pod and direction.", v_burst },
};

/* " V\n": bits in bytes, exactly (caps are whole bits/s: at most three decimals). */
static void
value_of_bits(struct text *t, uint64_t bits)
{
	if (bits % 8 == 0)
		emit(t, " %lu\n", (unsigned long)(bits / 8));
	else
		emit(t, " %lu.%03u\n", (unsigned long)(bits / 8), (unsigned)(bits % 8) * 125);
}

static void
pod_families(struct text *t, const struct pc_table *tb, struct pc_pod_ctr (*pod)[PC_DIR_COUNT])
{
	const struct pc_config *cfg = &tb->cfg;
	char id[LABEL_LEN];

	for (size_t m = 0; m < RTE_DIM(pod_metrics); m++) {
		family(t, pod_metrics[m].name, pod_metrics[m].type, pod_metrics[m].help);
		for (unsigned p = 0; p < cfg->npods; p++)
			for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
				uint64_t v = pod_metrics[m].value(tb, p, d, &pod[p][d]);

				emit(t, "%s{pod=\"%s\",direction=\"%s\"}", pod_metrics[m].name,
				     label_value(id, cfg->pods[p].id), pc_dir_name(d));
				if (pod_metrics[m].bits)
					value_of_bits(t, v);
				else
					emit(t, " %lu\n", (unsigned long)v);
			}
	}
	for (int bytes = 1; bytes >= 0; bytes--) {
		const char *name = bytes ? "podcap_dropped_bytes_total" : "podcap_dropped_frames_total";
		family(t, name, "counter", bytes ? "Frame bytes dropped, per pod, direction and reason." :
		       "Frames dropped, per pod, direction and reason.");
		for (unsigned p = 0; p < cfg->npods; p++)
			for (unsigned d = 0; d < PC_DIR_COUNT; d++)
				for (unsigned r = 0; r < PC_POD_DROP_COUNT; r++)
					emit(t, "%s{pod=\"%s\",direction=\"%s\",reason=\"%s\"} %lu\n", name,
					     label_value(id, cfg->pods[p].id), pc_dir_name(d),
					     pc_pod_drop_name(r),
					     (unsigned long)(bytes ? pod[p][d].drop_bytes[r] :
								     pod[p][d].drop_frames[r]));
	}
}

/* One uplink's and direction's samples: the spoofed frames apart (records count them as unmapped). */
static void
link_samples(struct text *t, const char *name, const char *uplink, const char *dir,
	     const struct pc_link_ctr *c, int bytes)
{
	for (unsigned r = 0; r < PC_LINK_DROP_COUNT; r++) {
		emit(t, "%s{uplink=\"%s\",direction=\"%s\",reason=\"%s\"} %lu\n", name, uplink, dir,
		     pc_link_drop_name(r),
		     (unsigned long)(bytes ? c->drop_bytes[r] : c->drop_frames[r]));
	}
	emit(t, "%s{uplink=\"%s\",direction=\"%s\",reason=\"%s\"} %lu\n", name, uplink, dir,
	     PC_DROP_SPOOFED_NAME, (unsigned long)(bytes ? c->spoofed_bytes : c->spoofed_frames));
}

static void
link_families(struct text *t, const struct pc_config *cfg, struct pc_link_ctr (*link)[PC_DIR_COUNT])
{
	char uplink[LABEL_LEN];

	for (int bytes = 1; bytes >= 0; bytes--) {
		const char *name = bytes ? "podcap_uplink_dropped_bytes_total" :
				   "podcap_uplink_dropped_frames_total";
		family(t, name, "counter",
		       bytes ? "Frame bytes of no pod dropped, per uplink, direction and reason "
			       "(unmapped, malformed, spoofed)."
			     : "Frames of no pod dropped, per uplink, direction and reason "
			       "(unmapped, malformed, spoofed).");
		for (unsigned u = 0; u < cfg->nuplinks; u++)
			for (unsigned d = 0; d < PC_DIR_COUNT; d++)
				link_samples(t, name, label_value(uplink, cfg->uplinks[u].name),
					     pc_dir_name(d), &link[u][d], bytes);
	}
}

static void
window_close_families(struct text *t)
{
	struct pc_stage_stats st[PC_STAGE_COUNT];

	for (unsigned s = 0; s < PC_STAGE_COUNT; s++)
		pc_stage_read((enum pc_stage)s, &st[s]);
	family(t, "podcap_window_close_last_seconds", "gauge",
	       "Seconds the stage took in the last window close, per stage.");
	for (unsigned s = 0; s < PC_STAGE_COUNT; s++)
		emit(t, "podcap_window_close_last_seconds{stage=\"%s\"} %.9f\n",
		     pc_stage_name((enum pc_stage)s), (double)st[s].last_ns / 1e9);
	family(t, "podcap_window_close_max_seconds", "gauge",
	       "The longest the stage of a window close took since podcapd started, in seconds, "
	       "per stage.");
	for (unsigned s = 0; s < PC_STAGE_COUNT; s++)
		emit(t, "podcap_window_close_max_seconds{stage=\"%s\"} %.9f\n",
		     pc_stage_name((enum pc_stage)s), (double)st[s].max_ns / 1e9);
	family(t, "podcap_window_close_seconds", "summary",
	       "Seconds spent in each stage of closing windows, per stage (count: closes timed).");
	for (unsigned s = 0; s < PC_STAGE_COUNT; s++) {
		emit(t, "podcap_window_close_seconds_sum{stage=\"%s\"} %.9f\n",
		     pc_stage_name((enum pc_stage)s), (double)st[s].sum_ns / 1e9);
		emit(t, "podcap_window_close_seconds_count{stage=\"%s\"} %lu\n",
		     pc_stage_name((enum pc_stage)s), (unsigned long)st[s].count);
	}
}

/* Reloads refused, by reason; the declaration in force and its end. */
static void
declaration_families(struct text *t, const struct pc_table *tb)
{
	family(t, "podcap_reload_refused_total", "counter",
	       "SIGHUP reloads refused, the pod map in force kept, by reason.");
	for (unsigned r = 0; r < PC_RELOAD_REFUSALS; r++)
		emit(t, "podcap_reload_refused_total{reason=\"%s\"} %lu\n",
		     pc_declared_refusal_name(r), (unsigned long)pc_declared_refusals(r));
	family(t, "podcap_declaration_not_after_seconds", "gauge",
	       "End of the auditor's declaration of the pod map in force, Unix seconds: "
	       "forwarding stops before it (no sample: the map needs none).");
	if (tb == NULL || !tb->decl.on)
		return;
	emit(t, "podcap_declaration_not_after_seconds %lu\n",
	     (unsigned long)(tb->decl.d.not_after_ns / 1000000000ULL));
}

/* Per witness of appliance.witnesses: what each submission came to, and what it cosigned. */
static void
witness_families(struct text *t)
{
	static struct pc_witness_stats st[PC_MAX_WITNESSES];
	unsigned n = pd_witnesses_stats(st, PC_MAX_WITNESSES);
	char lv[LABEL_LEN];

	family(t, "podcap_witness_submissions_total", "counter",
	       "Checkpoints submitted to each witness, by result.");
	for (unsigned i = 0; i < n; i++)
		for (unsigned o = 0; o < PC_WITNESS_OUTCOMES; o++)
			emit(t,
			     "podcap_witness_submissions_total{witness=\"%s\",result=\"%s\"} %lu\n",
			     label_value(lv, st[i].name),
			     pd_witness_outcome_name((enum pc_witness_outcome)o),
			     (unsigned long)st[i].outcomes[o]);
	family(t, "podcap_witness_cosigned_size", "gauge",
	       "Tree size of the latest checkpoint each witness cosigned (0: none yet).");
	for (unsigned i = 0; i < n; i++)
		emit(t, "podcap_witness_cosigned_size{witness=\"%s\"} %lu\n",
		     label_value(lv, st[i].name), (unsigned long)st[i].cosigned_size);
	family(t, "podcap_witness_cosigned_timestamp_seconds", "gauge",
	       "The time in that cosignature, as the witness signed it (0: none yet).");
	for (unsigned i = 0; i < n; i++)
		emit(t, "podcap_witness_cosigned_timestamp_seconds{witness=\"%s\"} %lu\n",
		     label_value(lv, st[i].name), (unsigned long)st[i].cosigned_time);
}

/* appliance.attestation: the quotes this run put in the ledger, and those it could not. */
static void
attest_families(struct text *t, const struct pc_recorder_stats *rs)
{
	family(t, "podcap_attest_quotes_total", "counter",
	       "TPM quotes due since podcapd started, by result: appended as an ATTEST record, "
	       "or failed (their windows stay unattested).");
	family(t, "podcap_attest_last_quote_timestamp_seconds", "gauge",
	       "When the last ATTEST record was appended, Unix seconds (0: none in this run).");
	family(t, "podcap_attest_every_windows", "gauge",
	       "appliance.attestation.every: a quote is due every this many windows.");
	if (!rs->attesting)
		return;
	emit(t, "podcap_attest_quotes_total{result=\"appended\"} %lu\n",
	     (unsigned long)rs->quotes_appended);
	emit(t, "podcap_attest_quotes_total{result=\"failed\"} %lu\n",
	     (unsigned long)rs->quotes_failed);
	emit(t, "podcap_attest_last_quote_timestamp_seconds %.3f\n",
	     (double)rs->last_quote_ns / 1e9);
	emit(t, "podcap_attest_every_windows %u\n", (unsigned)rs->attest_every);
}

/* The clock discipline's last reading (values only while it is read), and the polls. */
static void
clock_reading_families(struct text *t, const struct pc_clock_stats *st)
{
	const struct pc_clock_reading *r = &st->latest;
	bool now = st->on && st->up && st->have;
	char gm[PC_PTP_ID_TEXT];

	family(t, "podcap_clock_offset_seconds", "gauge",
	       "This clock minus its PTP master, as the clock discipline last measured it "
	       "(CURRENT_DATA_SET offsetFromMaster).");
	if (now)
		emit(t, "podcap_clock_offset_seconds %.17g\n", (double)r->offset / 65536e9);
	family(t, "podcap_clock_mean_path_delay_seconds", "gauge",
	       "The mean path delay to the PTP master the clock discipline last measured "
	       "(CURRENT_DATA_SET meanPathDelay).");
	if (now)
		emit(t, "podcap_clock_mean_path_delay_seconds %.17g\n",
		     (double)r->path_delay / 65536e9);
	family(t, "podcap_clock_offset_bound_seconds", "gauge",
	       "The bound on |this clock minus the grandmaster| the last reading supports: "
	       "|offsetFromMaster| + |meanPathDelay| (no sample: it supports none).");
	if (now && r->bounded)
		emit(t, "podcap_clock_offset_bound_seconds %.9f\n", (double)r->bound_ns / 1e9);
	family(t, "podcap_clock_port_state", "gauge",
	       "Each PTP port's portState (IEEE 1588: 6 MASTER, 8 UNCALIBRATED, 9 SLAVE, ...).");
	for (unsigned p = 0; now && p < r->nports; p++)
		emit(t, "podcap_clock_port_state{port=\"%u\"} %u\n", p + 1, r->port_states[p]);
	family(t, "podcap_clock_grandmaster_info", "gauge",
	       "The grandmaster of the last reading, and whether one other than this clock is "
	       "present; always 1.");
	if (now)
		emit(t, "podcap_clock_grandmaster_info{grandmaster=\"%s\",present=\"%s\"} 1\n",
		     pc_ptp_identity_text(r->gm, gm), r->gm_present ? "true" : "false");
	family(t, "podcap_clock_read_timestamp_seconds", "gauge",
	       "When the clock discipline was last read, Unix seconds.");
	if (st->on && st->have)
		emit(t, "podcap_clock_read_timestamp_seconds %.3f\n", (double)r->read_ns / 1e9);
}

static void
clock_families(struct text *t)
{
	struct pc_clock_stats st;

	pc_clock_discipline_stats(&st);
	family(t, "podcap_clock_discipline_up", "gauge",
	       "1 when the last poll of the clock discipline (ptp4l) read it, 0 when not.");
	if (st.on)
		emit(t, "podcap_clock_discipline_up{discipline=\"ptp4l\"} %d\n", st.up ? 1 : 0);
	family(t, "podcap_clock_polls_total", "counter",
	       "Polls of the clock discipline since podcapd started, by result.");
	for (unsigned r = 0; st.on && r < PC_CLOCK_RESULTS; r++)
		emit(t, "podcap_clock_polls_total{result=\"%s\"} %lu\n",
		     pc_clock_result_name((enum pc_clock_result)r), (unsigned long)st.polls[r]);
	clock_reading_families(t, &st);
}

static void
process_families(struct text *t)
{
	family(t, "podcap_start_time_seconds", "gauge", "When podcapd started, Unix seconds.");
	emit(t, "podcap_start_time_seconds %.3f\n",
	     (double)__atomic_load_n(&started_ns, __ATOMIC_RELAXED) / 1e9);
	family(t, "podcap_watchdog_pings_stopped", "gauge",
	       "1 while systemd's watchdog is not pinged (a worker stopped looping or the signer "
	       "stopped answering): systemd is about to restart podcapd.");
	emit(t, "podcap_watchdog_pings_stopped %d\n",
	     __atomic_load_n(&watchdog_stopped, __ATOMIC_RELAXED) ? 1 : 0);
}

/*
 * An LLDP text (shape/lldp.h: printable, backslashes doubled, \xNN) as a
 * label value: backslash and double quote escaped once more; it has no
 * line feed. out holds twice PC_LLDP_TEXT_LEN.
 */
static const char *
lldp_label(char *out, const char *s)
{
	size_t o = 0;

	for (; *s != '\0'; s++) {
		if (*s == '\\' || *s == '"')
			out[o++] = '\\';
		out[o++] = *s;
	}
	out[o] = '\0';
	return out;
}

/* The link of each port (links.h): up, speed, changes. */
static void
link_state_families(struct text *t, const struct pc_links_snapshot *s)
{
	char uplink[LABEL_LEN];

	family(t, "podcap_link_up", "gauge",
	       "1 while the port's link is up, per uplink and side (pod, fabric); read once a "
	       "second and at a link-change interrupt.");
	/* bytes, not bits: Prometheus's base unit, as podcap_cap_bytes_per_second */
	family(t, "podcap_link_speed_bytes_per_second", "gauge",
	       "The port's link speed as the driver reports it, in bytes per second (Mbit/s "
	       "x 125000); 0 when down or unknown.");
	family(t, "podcap_link_changes_total", "counter",
	       "Changes of the port's link (up, down, speed, duplex) since podcapd started.");
	for (unsigned u = 0; u < s->nuplinks; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			const struct pc_link_state *l = &s->port[u][d].link;
			const char *side = pc_links_side_name((enum pc_dir)d);
			label_value(uplink, s->uplink[u]);
			if (!l->known)
				continue;
			emit(t, "podcap_link_up{uplink=\"%s\",side=\"%s\"} %d\n", uplink, side,
			     l->now.up ? 1 : 0);
			emit(t,
			     "podcap_link_speed_bytes_per_second{uplink=\"%s\",side=\"%s\"} %lu\n",
			     uplink, side, (unsigned long)l->now.speed_mbps * 125000ul);
			emit(t, "podcap_link_changes_total{uplink=\"%s\",side=\"%s\"} %lu\n",
			     uplink, side, (unsigned long)l->changes);
		}
}

/* Each port's LLDP neighbour and frames (links.h). */
static void
lldp_families(struct text *t, const struct pc_links_snapshot *s)
{
	char chassis[2 * PC_LLDP_TEXT_LEN], port[2 * PC_LLDP_TEXT_LEN], name[2 * PC_LLDP_TEXT_LEN],
	    text[PC_LLDP_TEXT_LEN];
	char uplink[LABEL_LEN];

	family(t, "podcap_lldp_neighbor_info", "gauge",
	       "The LLDP neighbour a port faces, while its TTL holds: the switch's chassis id, "
	       "port id and system name as podcap renders them.");
	for (unsigned u = 0; u < s->nuplinks; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			const struct pc_lldp_neighbor *n = &s->port[u][d].neighbor;
			if (!n->present)
				continue;
			lldp_label(chassis, pc_lldp_render_id(&n->lldp.chassis, false, text));
			lldp_label(port, pc_lldp_render_id(&n->lldp.port, true, text));
			lldp_label(name,
				   pc_lldp_render_bytes(n->lldp.name, n->lldp.name_len, text));
			emit(
			    t,
			    "podcap_lldp_neighbor_info{uplink=\"%s\",side=\"%s\",chassis_id=\"%s\","
			    "port_id=\"%s\",system_name=\"%s\"} 1\n",
			    label_value(uplink, s->uplink[u]), pc_links_side_name((enum pc_dir)d),
			    chassis, port, name);
		}
	family(t, "podcap_lldp_frames_total", "counter",
	       "LLDP frames a port received, by result: ok, malformed, rate_limited (beyond what "
	       "is parsed a second), queue_full (more than the control thread's ring holds).");
	for (unsigned u = 0; u < s->nuplinks; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++)
			for (unsigned r = 0; r < PC_LLDP_RESULT_COUNT; r++)
				emit(t,
				     "podcap_lldp_frames_total{uplink=\"%s\",side=\"%s\",result=\"%"
				     "s\"} %lu\n",
				     label_value(uplink, s->uplink[u]),
				     pc_links_side_name((enum pc_dir)d),
				     pc_lldp_result_name((enum pc_lldp_result)r),
				     (unsigned long)s->port[u][d].lldp[r]);
}

/* podcapd's own LLDPDUs (lldp_tx.h): samples only with --lldp-tx. */
static void
lldp_tx_families(struct text *t)
{
	struct pc_lldp_tx_counts *c = calloc(1, sizeof(*c));
	char uplink[LABEL_LEN];

	if (c == NULL) {
		t->failed = 1;
		return;
	}
	pc_lldp_tx_counts(c);
	family(t, "podcap_lldp_tx_frames_total", "counter",
	       "LLDP frames podcapd sent of itself (--lldp-tx), per uplink, side and result: "
	       "sent, failed (no buffer, or the port took none); shutdown LLDPDUs included.");
	for (unsigned u = 0; u < c->nuplinks; u++)
		for (unsigned d = 0; d < PC_DIR_COUNT; d++)
			for (unsigned r = 0; r < PC_LLDP_TX_RESULT_COUNT; r++)
				emit(t,
				     "podcap_lldp_tx_frames_total{uplink=\"%s\",side=\"%s\","
				     "result=\"%s\"} %lu\n",
				     label_value(uplink, c->uplink[u]),
				     pc_links_side_name((enum pc_dir)d),
				     pc_lldp_tx_result_name((enum pc_lldp_tx_result)r),
				     (unsigned long)c->n[u][d][r]);
	free(c);
}

/* The links and neighbours: every family declared, with samples once podcapd observes. */
static void
links_families(struct text *t)
{
	struct pc_links_snapshot *s = calloc(1, sizeof(*s));

	if (s == NULL) {
		t->failed = 1;
		return;
	}
	if (pc_links_snapshot(s) != 0)
		s->nuplinks = 0;
	link_state_families(t, s);
	lldp_families(t, s);
	lldp_tx_families(t);
	free(s);
}

char *
pd_metrics_text(void *ctx, size_t *len)
{
	static struct pc_pod_ctr pod[PC_MAX_PODS][PC_DIR_COUNT];
	static struct pc_link_ctr link[PC_MAX_UPLINKS][PC_DIR_COUNT];
	struct text t = { .cap = 16384 };
	struct pc_recorder_stats rs;

	(void)ctx;
	t.buf = malloc(t.cap);
	if (t.buf == NULL)
		return NULL;
	t.buf[0] = '\0';

	pthread_mutex_lock(&pc_dp.lock);
	const struct pc_table *tb = pc_dp.table;
	if (tb != NULL) {
		family(&t, "podcap_window_seconds", "gauge",
		       "The window length in force, in seconds.");
		emit(&t, "podcap_window_seconds %.9f\n", (double)tb->cfg.window_ns / 1e9);
		pc_control_read_totals(tb, pod, link);
		pod_families(&t, tb, pod);
		link_families(&t, &tb->cfg, link);
	}
	declaration_families(&t, tb);
	pthread_mutex_unlock(&pc_dp.lock);

	pc_recorder_stats(&rs);
	family(&t, "podcap_ledger_records", "gauge", "Durable records in the ledger.");
	emit(&t, "podcap_ledger_records %lu\n", (unsigned long)rs.records);
	family(&t, "podcap_ledger_bytes", "gauge", "Size of the ledger on disk, in bytes.");
	emit(&t, "podcap_ledger_bytes %lu\n", (unsigned long)rs.ledger_bytes);
	family(&t, "podcap_ledger_queued_records", "gauge", "Records waiting for the disk.");
	emit(&t, "podcap_ledger_queued_records %lu\n", (unsigned long)rs.queued);
	family(&t, "podcap_ledger_append_errors_total", "counter", "Failed ledger appends (retried).");
	emit(&t, "podcap_ledger_append_errors_total %lu\n", (unsigned long)rs.append_errors);
	family(&t, "podcap_ledger_lost_windows_total", "counter",
	       "Windows recorded only as a gap because the ledger queue overflowed.");
	emit(&t, "podcap_ledger_lost_windows_total %lu\n", (unsigned long)rs.lost_windows);
	family(&t, "podcap_last_checkpoint_age_seconds", "gauge",
	       "Seconds since the last signed checkpoint was published (-1: none yet).");
	if (rs.last_checkpoint_ns == 0)
		emit(&t, "podcap_last_checkpoint_age_seconds -1\n");
	else
		emit(&t, "podcap_last_checkpoint_age_seconds %.3f\n",
		     (double)(pc_now_ns() - rs.last_checkpoint_ns) / 1e9);
	window_close_families(&t);
	witness_families(&t);
	attest_families(&t, &rs);
	clock_families(&t);
	links_families(&t);
	process_families(&t);

	if (t.failed) {
		free(t.buf);
		return NULL;
	}
	*len = t.len;
	return t.buf;
}
