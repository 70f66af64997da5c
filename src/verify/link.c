/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cables (docs/verify.md, check 16): the LINK records podcapd writes
 * at each START and RELOAD and after each window. A LINK stands at the
 * cursor, in a run, under the window length and pod map in force, and one
 * of windows answers the WINDOW just logged (only OBSERVE, ATTEST and
 * SYNC records between) with that WINDOW's span. Under a declared map that
 * declares neighbours or a silence (uplinks[].pod_neighbor,
 * fabric_neighbor, lldp_max_silence), every WINDOW has its LINK, each
 * declared port is in it, the neighbour it faced is the declared one and
 * no port was silent longer than declared. With --max-link-down, no
 * outage of a pod-side link was longer than that: its time down in the
 * LINKs it stayed down at the end of, and in the one it came up in. The
 * reports state each port's time down and the neighbour of its last LINK.
 * No saved state: a resumed run's times down and outages are those of the
 * records it read.
 */
#include <inttypes.h>
#include <string.h>

#include "base/clock.h"
#include "shape/classify.h"
#include "shape/lldp.h"
#include "verify.h"

#include "link.h"
#include "podmap.h"
#include "verify_impl.h"

/* Without lldp_max_silence, a port with a declared neighbour is silent 120 s at most (LLDP's hold). */
#define DEFAULT_SILENCE_NS (120 * PC_NS_PER_SEC)

struct port_total {
	char uplink[PC_ID_LEN];
	uint8_t side;
	uint64_t down_ns, changes, longest_down_ns;
	int64_t longest_record;
	/* the outage going on at the last LINK: its time down so far, the LINK it began in */
	uint64_t outage_ns;
	int64_t outage_from;
	bool outage_said;
	/* the last LINK's neighbour; as_declared -1: the map in force declares none */
	bool heard;
	struct pc_lldp_id chassis, port;
	int as_declared;
};

struct link {
	uint64_t records;
	unsigned nports;
	struct port_total port[PC_LINK_PORTS_MAX];
	/* a WINDOW awaiting its LINK: its record and span, -1 none */
	int64_t await;
	uint64_t await_span_ns;
};

static int
link_init(struct pc_verify *v, void *st)
{
	struct link *l = st;

	(void)v;
	l->await = -1;
	return 0;
}

static const char *
side_name(unsigned side)
{
	return side == PC_DIR_UP ? "pod" : "fabric";
}

/* The declared map in force, when it says what LINK records are for. */
static const struct pc_config *
declared(const struct pc_verify *v)
{
	const struct pc_config *cfg = pcv_podmap_inforce(v);

	return cfg != NULL && pc_config_links_declared(cfg) ? cfg : NULL;
}

/* A WINDOW left without its LINK, when the map in force wants one. */
static void
missing(struct pc_verify *v, struct link *l)
{
	if (l->await >= 0 && declared(v) != NULL)
		pcv_fail(v, PC_VC_LINK, l->await, NULL,
			 "window record without the link record that says what its ports showed, "
			 "under a pod map that declares the uplinks' neighbours");
	l->await = -1;
}

static void
link_window(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct link *l = st;

	missing(v, l);
	l->await = (int64_t)index;
	l->await_span_ns = r->window_count * r->window_len_ns;
}

static void
link_declare(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	(void)index, (void)r;
	missing(v, st);
}

/* Where a LINK may stand: at the cursor of a run, under what is in force. */
static bool
link_rules(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	char t1[PC_UTC_LEN], t2[PC_UTC_LEN];

	(void)st;
	if (r->type != PC_REC_LINK)
		return true;
	if (!v->started || v->stopped) {
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r, "link record %s",
			 v->started ? "after a stop" : "before the first start");
		return false;
	}
	if (r->window_start_ns != v->cursor_ns || r->window_len_ns != v->window_ns ||
	    memcmp(r->podmap_digest, v->digest, PC_DIGEST_LEN) != 0) {
		pc_utc_format(r->window_start_ns, t1, sizeof(t1));
		pc_utc_format(v->cursor_ns, t2, sizeof(t2));
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
			 "link record labelled %s, where the log's windows end at %s, or under "
			 "another window length or pod map than the one in force",
			 t1, t2);
		return false;
	}
	return true;
}

static struct port_total *
total_of(struct link *l, const struct pc_record_port *p)
{
	for (unsigned i = 0; i < l->nports; i++)
		if (l->port[i].side == p->side && strcmp(l->port[i].uplink, p->uplink) == 0)
			return &l->port[i];
	if (l->nports == PC_LINK_PORTS_MAX)
		return NULL;
	struct port_total *t = &l->port[l->nports++];
	snprintf(t->uplink, sizeof(t->uplink), "%s", p->uplink);
	t->side = p->side;
	t->longest_record = -1;
	return t;
}

static void
add_total(struct port_total *t, uint64_t index, const struct pc_record_port *p)
{
	t->down_ns += p->down_ns;
	t->changes += p->changes;
	if (p->down_ns > t->longest_down_ns) {
		t->longest_down_ns = p->down_ns;
		t->longest_record = (int64_t)index;
	}
}

/*
 * An outage longer than --max-link-down, refused once, at the LINK that
 * takes it over: a cable moved for an hour is down in every window of
 * the hour, each shorter than the limit.
 */
static void
max_down(struct pc_verify *v, struct port_total *t, uint64_t index, const struct pc_record *r,
	 const struct pc_record_port *p)
{
	char d[DURATION_LEN], m[DURATION_LEN];
	uint64_t most = v->policy.max_link_down_ns;

	if (t->outage_ns == 0) {
		t->outage_from = (int64_t)index;
		t->outage_said = false;
	}
	t->outage_ns += p->down_ns;
	if (p->side == PC_DIR_UP && most != PC_VERIFY_UNLIMITED && t->outage_ns > most &&
	    !t->outage_said) {
		t->outage_said = true;
		pcv_format_duration(t->outage_ns, d, sizeof(d));
		pcv_format_duration(most, m, sizeof(m));
		if (t->outage_from == (int64_t)index)
			pcv_fail(v, PC_VC_LINK, (int64_t)index, r,
				 "uplink %s pod side: link down %s in the windows, more than the "
				 "%s --max-link-down accepts",
				 p->uplink, d, m);
		else
			pcv_fail(v, PC_VC_LINK, (int64_t)index, r,
				 "uplink %s pod side: link down %s in the windows of records "
				 "%" PRId64 " to %" PRIu64 ", more than the %s --max-link-down "
				 "accepts",
				 p->uplink, d, t->outage_from, index, m);
	}
	if (p->now.up)
		t->outage_ns = 0;
}

static const struct pc_record_port *
port_of(const struct pc_record *r, const char *uplink, unsigned side)
{
	for (uint32_t i = 0; i < r->linkstate.nports; i++) {
		const struct pc_record_port *p = &r->linkstate.ports[i];
		if (p->side == side && strcmp(p->uplink, uplink) == 0)
			return p;
	}
	return NULL;
}

static bool
same_neighbor(const struct pc_lldp_id *chassis_id, const struct pc_lldp_id *port_id,
	      const struct pc_neighbor *n)
{
	char chassis[PC_LLDP_TEXT_LEN], port[PC_LLDP_TEXT_LEN];

	pc_lldp_render_id(chassis_id, false, chassis);
	pc_lldp_render_id(port_id, true, port);
	return strcmp(chassis, n->chassis_id) == 0 && strcmp(port, n->port_id) == 0;
}

/* What the map in force declares port (uplink, side) faces, or NULL. */
static const struct pc_neighbor *
declared_neighbor(const struct pc_config *cfg, const char *uplink, unsigned side)
{
	for (unsigned u = 0; cfg != NULL && u < cfg->nuplinks; u++) {
		const struct pc_uplink *up = &cfg->uplinks[u];
		const struct pc_neighbor *n =
		    side == PC_DIR_UP ? &up->pod_neighbor : &up->fabric_neighbor;
		if (strcmp(up->name, uplink) == 0)
			return n->set ? n : NULL;
	}
	return NULL;
}

/* The declared neighbour against the one the port faced. */
static void
neighbor_check(struct pc_verify *v, uint64_t index, const struct pc_record *r,
	       const struct pc_record_port *p, const struct pc_neighbor *n)
{
	char chassis[PC_LLDP_TEXT_LEN], port[PC_LLDP_TEXT_LEN];

	if (!n->set || !p->neighbor || same_neighbor(&p->chassis, &p->port, n))
		return;
	pc_lldp_render_id(&p->chassis, false, chassis);
	pc_lldp_render_id(&p->port, true, port);
	pcv_fail(v, PC_VC_LINK, (int64_t)index, r,
		 "uplink %s %s side: declared neighbour chassis %s port %s, seen chassis %s "
		 "port %s: the cable is not where the auditor saw it",
		 p->uplink, side_name(p->side), n->chassis_id, n->port_id, chassis, port);
}

static void
silence_check(struct pc_verify *v, uint64_t index, const struct pc_record *r,
	      const struct pc_record_port *p, const struct pc_uplink *up,
	      const struct pc_neighbor *n)
{
	char s[DURATION_LEN], m[DURATION_LEN];
	uint64_t most = up->lldp_max_silence_ns;

	if (most == 0 && n->set)
		most = DEFAULT_SILENCE_NS;
	if (most == 0 || p->silent_ns <= most)
		return;
	pcv_format_duration(p->silent_ns, s, sizeof(s));
	pcv_format_duration(most, m, sizeof(m));
	if (n->set)
		pcv_fail(v, PC_VC_LINK, (int64_t)index, r,
			 "uplink %s %s side: declared neighbour chassis %s port %s, seen none "
			 "for %s, longer than the %s declared",
			 p->uplink, side_name(p->side), n->chassis_id, n->port_id, s, m);
	else
		pcv_fail(v, PC_VC_LINK, (int64_t)index, r,
			 "uplink %s %s side: no LLDP neighbour heard for %s, longer than the %s "
			 "declared",
			 p->uplink, side_name(p->side), s, m);
}

/* Each port the map in force declares something of, against the record. */
static void
declared_check(struct pc_verify *v, uint64_t index, const struct pc_record *r,
	       const struct pc_config *cfg)
{
	for (unsigned u = 0; u < cfg->nuplinks; u++) {
		const struct pc_uplink *up = &cfg->uplinks[u];
		for (unsigned side = 0; side < PC_DIR_COUNT; side++) {
			const struct pc_neighbor *n =
			    side == PC_DIR_UP ? &up->pod_neighbor : &up->fabric_neighbor;
			if (!n->set && up->lldp_max_silence_ns == 0)
				continue;
			const struct pc_record_port *p = port_of(r, up->name, side);
			if (p == NULL) {
				pcv_fail(v, PC_VC_LINK, (int64_t)index, r,
					 "uplink %s %s side: the declared port is not in the link "
					 "record",
					 up->name, side_name(side));
				continue;
			}
			neighbor_check(v, index, r, p, n);
			silence_check(v, index, r, p, up, n);
		}
	}
}

static void
seen_neighbor(struct port_total *t, const struct pc_record_port *p, const struct pc_neighbor *n)
{
	t->heard = p->neighbor;
	if (t->heard) {
		t->chassis = p->chassis;
		t->port = p->port;
	}
	t->as_declared = n == NULL ? -1 : t->heard && same_neighbor(&t->chassis, &t->port, n);
}

static void
link_link(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct link *l = st;
	const struct pc_record_linkstate *ls = &r->linkstate;
	const struct pc_config *cfg = declared(v);

	l->records++;
	if (ls->kind == PC_LINK_WINDOW && (l->await < 0 || ls->span_ns != l->await_span_ns)) {
		pcv_fail(v, PC_VC_SEQUENCE, (int64_t)index, r,
			 "link record of windows other than the ones just logged");
		return;
	}
	if (ls->kind == PC_LINK_WINDOW)
		l->await = -1;
	for (uint32_t i = 0; i < ls->nports; i++) {
		const struct pc_record_port *p = &ls->ports[i];
		struct port_total spare = { .longest_record = -1 }, *t = total_of(l, p);
		/* past PC_LINK_PORTS_MAX ports, each LINK's outage on its own */
		if (t == NULL)
			t = &spare;
		add_total(t, index, p);
		max_down(v, t, index, r, p);
		seen_neighbor(t, p, declared_neighbor(cfg, p->uplink, p->side));
	}
	if (cfg != NULL)
		declared_check(v, index, r, cfg);
}

/* A quote or a tap's account may come between a WINDOW and its LINK; anything else ends the wait. */
static void
link_record(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct link *l = st;

	(void)index;
	if (r->type == PC_REC_STOP || r->type == PC_REC_GAP || r->type == PC_REC_CLOCK)
		missing(v, l);
}

static void
link_finish(struct pc_verify *v, void *st)
{
	missing(v, st);
}

static void
text_neighbor(FILE *f, const struct port_total *t)
{
	static const char *const verdict[] = { "", ", not the declared one", ", as declared" };
	char chassis[PC_LLDP_TEXT_LEN], port[PC_LLDP_TEXT_LEN];

	if (!t->heard) {
		fprintf(f, "    last link record: no neighbour%s\n",
			t->as_declared == 0 ? ", one declared" : "");
		return;
	}
	fprintf(f, "    last link record: neighbour chassis %s port %s%s\n",
		pc_lldp_render_id(&t->chassis, false, chassis),
		pc_lldp_render_id(&t->port, true, port), verdict[t->as_declared + 1]);
}

static void
link_text(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct link *l = st;
	char d[DURATION_LEN], m[DURATION_LEN];

	(void)v;
	if (l->records == 0)
		return;
	fprintf(f, "cables: %" PRIu64 " link record%s\n", l->records, l->records == 1 ? "" : "s");
	for (unsigned i = 0; i < l->nports; i++) {
		const struct port_total *t = &l->port[i];
		pcv_format_duration(t->down_ns, d, sizeof(d));
		fprintf(f, "  uplink %s %s side: down %s, %" PRIu64 " change%s", t->uplink,
			side_name(t->side), d, t->changes, t->changes == 1 ? "" : "s");
		if (t->longest_record >= 0) {
			pcv_format_duration(t->longest_down_ns, m, sizeof(m));
			fprintf(f, "; longest %s at record %" PRId64, m, t->longest_record);
		}
		fputc('\n', f);
		text_neighbor(f, t);
	}
}

bool
pcv_link_reported(const struct pc_verify *v)
{
	const struct link *l = pcv_state(v, PCV_LINK);

	return l->records > 0 || v->found.failsum[PC_VC_LINK].count > 0 ||
	    v->policy.max_link_down_ns != PC_VERIFY_UNLIMITED;
}

/* The last LINK's neighbour, and whether it is the declared one (null: none declared). */
static void
json_neighbor(FILE *f, const struct port_total *t)
{
	char chassis[PC_LLDP_TEXT_LEN], port[PC_LLDP_TEXT_LEN];

	fputs(", \"neighbor\": ", f);
	if (t->heard) {
		fputs("{\"chassis_id\": ", f);
		pc_json_string(f, pc_lldp_render_id(&t->chassis, false, chassis));
		fputs(", \"port_id\": ", f);
		pc_json_string(f, pc_lldp_render_id(&t->port, true, port));
		fputc('}', f);
	} else {
		fputs("null", f);
	}
	fprintf(f, ", \"as_declared\": %s",
		t->as_declared < 0   ? "null"
		    : t->as_declared ? "true"
				     : "false");
}

static void
json_port(FILE *f, const struct port_total *t)
{
	fprintf(f,
		"{\"uplink\": \"%s\", \"side\": \"%s\", \"down_ns\": %" PRIu64
		", \"changes\": %" PRIu64 ", \"longest_down_ns\": %" PRIu64
		", \"longest_record\": ",
		t->uplink, side_name(t->side), t->down_ns, t->changes, t->longest_down_ns);
	if (t->longest_record >= 0)
		fprintf(f, "%" PRId64, t->longest_record);
	else
		fputs("null", f);
	json_neighbor(f, t);
	fputc('}', f);
}

/* Only in a report that has links to speak of: reports of logs without them stay as they were. */
static void
link_json(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct link *l = st;

	if (!pcv_link_reported(v))
		return;
	fprintf(f, "  \"cables\": {\"records\": %" PRIu64 ", \"ports\": [", l->records);
	for (unsigned i = 0; i < l->nports; i++) {
		fputs(i ? ",\n    " : "\n    ", f);
		json_port(f, &l->port[i]);
	}
	fprintf(f, "%s]},\n", l->nports ? "\n  " : "");
}

const struct pcv_check pcv_link_check = {
	.name = "link",
	.size = sizeof(struct link),
	.init = link_init,
	.record = link_record,
	.rules = link_rules,
	.on[PC_REC_WINDOW] = link_window,
	.on[PC_REC_START] = link_declare,
	.on[PC_REC_RELOAD] = link_declare,
	.on[PC_REC_LINK] = link_link,
	.finish = link_finish,
	.report[PCV_TEXT] = link_text,
	.report[PCV_JSON] = link_json,
};
