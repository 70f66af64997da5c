/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buildid.h"
#include "base/clock.h"
#include "log/note.h"
#include "base/units.h"

#include "attest_record.h"
#include "clock_discipline.h"
#include "link_record.h"
#include "log.h"
#include "recorder.h"
#include "sync_record.h"
#include "timing.h"

#define QUEUE_MAX 4096        /* windows held in memory while the disk is away */
/*
 * ... and at most this many bytes of them: a record of 16384 pods is about
 * 4 MiB, so 4096 of them would take the machine's memory. Past either bound
 * a window's record is dropped and its window counted in the next GAP.
 */
#define QUEUE_BYTES_MAX ((size_t)256 << 20)
#define QUEUE_SLACK 16        /* room kept for lifecycle records */
#define NOTE_MAX 4096

struct item {
	uint8_t *buf;
	size_t len;
	uint64_t close_ns;    /* WINDOW: CLOCK_MONOTONIC when its close began, else 0 */
	uint64_t queued_ns;
	bool attest;       /* a TPM quote is due once this record is in a checkpoint */
	bool quote_before; /* STOP: a last quote before it, of everything the run logged */
	struct pc_attest_due due;
};

static struct {
	struct pc_ledger *ledger;
	struct pc_signer *signer;
	char appliance_id[PC_ID_LEN];
	char origin[PC_KEY_NAME_LEN];
	uint8_t build_id[PC_BUILD_ID_LEN];
	uint8_t digest[PC_DIGEST_LEN];    /* pod map in force, for GAP records */
	uint64_t window_ns;
	/* appliance.attestation, set before the first record; windows since the last quote
	 * (control thread) */
	struct pc_attestation att;
	uint64_t windows_unquoted;
	/* what the next record pushed carries for the ledger thread (control thread) */
	struct {
		bool attest, quote_before;
		struct pc_attest_due due;
	} mark;

	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/*
	 * The ledger thread waits for records with nothing in hand (everything
	 * queued before is appended and its checkpoint published), or it has
	 * ended; drained is signalled when either becomes true.
	 */
	pthread_cond_t drained;
	bool idle, exited;
	struct item q[QUEUE_MAX + QUEUE_SLACK];
	unsigned head, n;
	size_t bytes;                     /* of the records in q */
	bool stopping;
	bool running;
	uint64_t lost_first;              /* first window that found the queue full */
	uint64_t lost_count;
	struct pc_recorder_stats st;      /* under lock */
} rec = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
	.drained = PTHREAD_COND_INITIALIZER,
};

/* The end of the time the ledger's last record accounts for. */
static uint64_t
covered_until(struct pc_ledger *l)
{
	uint64_t size = pc_ledger_size(l);
	struct pc_record r;
	uint64_t end = 0;

	if (size == 0)
		return 0;
	uint8_t *buf = malloc(PC_RECORD_MAX);
	if (buf == NULL)
		return 0;
	long len = pc_ledger_record(l, size - 1, buf, PC_RECORD_MAX);
	if (len > 0 && pc_record_decode(buf, (size_t)len, &r, NULL) == 0) {
		switch (r.type) {
		case PC_REC_WINDOW:
		case PC_REC_GAP:
			end = r.window_start_ns + r.window_count * r.window_len_ns;
			break;
		default:
			end = r.window_start_ns;
			break;
		}
		pc_record_free(&r);
	}
	free(buf);
	return end;
}

/* Set once by podcapd's wiring, read by the ledger thread. */
static void (*on_publish)(const char *note, size_t len);

void
pc_recorder_on_publish(void (*fn)(const char *note, size_t len))
{
	__atomic_store_n(&on_publish, fn, __ATOMIC_RELEASE);
}

/* close_ns: when the close of the newest window it covers began, 0 if none. False if not published. */
static bool
publish_checkpoint(uint64_t close_ns)
{
	struct pc_checkpoint cp;
	char body[1024], note[NOTE_MAX];
	struct pc_error err;
	uint8_t sig[64];

	memset(&cp, 0, sizeof(cp));
	snprintf(cp.origin, sizeof(cp.origin), "%s", rec.origin);
	cp.size = pc_ledger_size(rec.ledger);
	pc_ledger_root(rec.ledger, cp.root);
	size_t blen = pc_checkpoint_body(&cp, body, sizeof(body));
	uint64_t t = pc_mono_ns();
	if (blen == 0 || pc_signer_sign(rec.signer, body, blen, sig, &err) != 0) {
		PC_LOG(ERR, "checkpoint of size %lu not signed: %s\n", (unsigned long)cp.size,
		       blen ? err.msg : "too long");
		return false;
	}
	t = pc_stage_since(PC_STAGE_SIGN, t);
	size_t nlen = pc_note_format(body, blen, rec.signer->vk.name, rec.signer->vk.id, sig, note,
				     sizeof(note));
	struct pc_error perr;
	if (nlen == 0 ? pc_error_set(&perr, "note too long") : pc_ledger_publish(rec.ledger, note, nlen, &perr)) {
		PC_LOG(ERR, "checkpoint of size %lu not published: %s\n", (unsigned long)cp.size,
		       perr.msg);
		return false;
	}
	t = pc_stage_since(PC_STAGE_PUBLISH, t);
	void (*hook)(const char *, size_t) = __atomic_load_n(&on_publish, __ATOMIC_ACQUIRE);
	if (hook != NULL)
		hook(note, nlen);
	if (close_ns != 0)
		pc_stage_add(PC_STAGE_TOTAL, t - close_ns);
	pthread_mutex_lock(&rec.lock);
	rec.st.last_checkpoint_ns = pc_now_ns();
	pthread_mutex_unlock(&rec.lock);
	return true;
}

/*
 * The TPM's quote of the checkpoint just published, as the next record,
 * and a checkpoint over it. A quote that cannot be had or written is
 * logged and not retried: the verifier sees the windows it would have
 * covered as unattested, and the next quote point asks again (the signer
 * opens the TPM afresh after a failure, signer_attest.h).
 */
static void
append_attest(const struct pc_attest_due *due)
{
	size_t len;
	uint8_t *buf = pc_attest_record(rec.signer, rec.appliance_id, rec.build_id, due,
					rec.att.ima_log, &len);

	bool appended = buf != NULL && pc_ledger_append(rec.ledger, buf, len) == 0;

	if (buf != NULL && !appended)
		PC_LOG(ERR, "ATTEST record not appended: %s\n", strerror(errno));
	pthread_mutex_lock(&rec.lock);
	if (appended) {
		rec.st.quotes_appended++;
		rec.st.last_quote_ns = pc_now_ns();
	} else {
		rec.st.quotes_failed++;
	}
	pthread_mutex_unlock(&rec.lock);
	if (appended)
		publish_checkpoint(0);
	free(buf);
}

/*
 * A quote is due once the record marked for it is in a checkpoint, and the
 * checkpoint comes at the end of the batch that record is in: records
 * appended after it in that batch move the log on, so the quote is labelled
 * with the cursor, window and pod map after the last of them (an ATTEST's
 * window_start_ns is the cursor, log-format.md). OBSERVE and DECLARE end
 * where their WINDOW and START do; a CLOCK's windows go on from its start.
 */
static void
follow(struct pc_attest_due *due, const uint8_t *buf, size_t len)
{
	struct pc_record r;

	if (pc_record_decode(buf, len, &r, NULL) != 0)
		return;
	due->cursor_ns = r.window_start_ns + r.window_count * r.window_len_ns;
	due->window_ns = r.window_len_ns;
	memcpy(due->digest, r.podmap_digest, PC_DIGEST_LEN);
	pc_record_free(&r);
}

static void *
ledger_thread(void *arg)
{
	unsigned errors = 0;
	uint64_t covered_close = 0;
	struct pc_attest_due due;
	bool attest = false;
	(void)arg;

	pthread_setname_np(pthread_self(), "podcap-ledger");
	for (;;) {
		pthread_mutex_lock(&rec.lock);
		while (rec.n == 0 && !rec.stopping) {
			rec.idle = true;
			pthread_cond_broadcast(&rec.drained);
			pthread_cond_wait(&rec.cond, &rec.lock);
		}
		rec.idle = false;
		if (rec.n == 0) {
			pthread_mutex_unlock(&rec.lock);
			break;
		}
		struct item it = rec.q[rec.head];
		pthread_mutex_unlock(&rec.lock);

		if (it.queued_ns != 0 && errors == 0)
			pc_stage_add(PC_STAGE_QUEUE, pc_mono_ns() - it.queued_ns);
		/* no quote may follow the STOP: the run's last one comes just before it */
		if (it.quote_before && errors == 0 && rec.att.enabled) {
			if (publish_checkpoint(covered_close))
				append_attest(&it.due);
			covered_close = 0;
			attest = false;
		}
		if (pc_ledger_append(rec.ledger, it.buf, it.len) != 0) {
			/* keep the record and retry: nothing durable is lost, the cap goes on */
			if (errors++ % 60 == 0)
				PC_LOG(ERR, "ledger append failed (%s); %u records waiting, retrying\n",
				       strerror(errno), rec.n);
			pthread_mutex_lock(&rec.lock);
			rec.st.append_errors++;
			bool stop = rec.stopping;
			pthread_mutex_unlock(&rec.lock);
			if (stop && errors > 10)
				break;
			sleep(1);
			continue;
		}
		errors = 0;
		if (it.attest) {
			due = it.due;
			attest = true;
		} else if (attest) {
			follow(&due, it.buf, it.len);
		}
		free(it.buf);
		if (it.close_ns != 0) {
			uint64_t write_ns, sync_ns;
			pc_ledger_append_times(rec.ledger, &write_ns, &sync_ns);
			pc_stage_add(PC_STAGE_APPEND, write_ns);
			pc_stage_add(PC_STAGE_FSYNC, sync_ns);
			covered_close = it.close_ns;
		}
		pthread_mutex_lock(&rec.lock);
		rec.head = (rec.head + 1) % (QUEUE_MAX + QUEUE_SLACK);
		rec.n--;
		rec.bytes -= it.len;
		rec.st.queued = rec.n;
		bool more = rec.n > 0;
		rec.st.records = pc_ledger_size(rec.ledger);
		rec.st.ledger_bytes = pc_ledger_bytes(rec.ledger);
		pthread_mutex_unlock(&rec.lock);
		/* one checkpoint per batch: the signer is not asked more often than needed */
		if (!more) {
			if (publish_checkpoint(covered_close) && attest)
				append_attest(&due);
			attest = false;
			covered_close = 0;
		}
	}
	pthread_mutex_lock(&rec.lock);
	rec.exited = true;
	pthread_cond_broadcast(&rec.drained);
	pthread_mutex_unlock(&rec.lock);
	return NULL;
}

int
pc_recorder_start(const char *ledger_dir, const char *appliance_id, const char *origin,
		  struct pc_signer *signer, uint64_t *covered_ns)
{
	snprintf(rec.appliance_id, sizeof(rec.appliance_id), "%s", appliance_id);
	snprintf(rec.origin, sizeof(rec.origin), "%s", origin);
	if (strcmp(signer->vk.name, rec.origin) != 0) {
		PC_LOG(ERR, "the signing key is named '%s' but this appliance's log is '%s': "
		       "make its key with podcap-keygen --name %s\n", signer->vk.name, rec.origin,
		       rec.origin);
		return -1;
	}
	rec.signer = signer;
	if (pc_build_id(rec.build_id) != 0) {
		PC_LOG(ERR, "cannot hash /proc/self/exe for the build id: %s\n", strerror(errno));
		return -1;
	}
	struct pc_error lerr;
	rec.ledger = pc_ledger_open(ledger_dir, rec.origin, &lerr);
	if (rec.ledger == NULL) {
		PC_LOG(ERR, "ledger %s: %s\n", ledger_dir, lerr.msg);
		return -1;
	}
	*covered_ns = covered_until(rec.ledger);
	rec.st.records = pc_ledger_size(rec.ledger);
	rec.st.ledger_bytes = pc_ledger_bytes(rec.ledger);
	if (pthread_create(&rec.thread, NULL, ledger_thread, NULL) != 0) {
		pc_ledger_close(rec.ledger);
		rec.ledger = NULL;
		return -1;
	}
	rec.running = true;
	PC_LOG(INFO, "ledger %s: %lu records, log %s, key id %08x\n", ledger_dir,
	       (unsigned long)rec.st.records, rec.origin, signer->vk.id);
	return 0;
}

void
pc_recorder_attestation(const struct pc_attestation *a)
{
	rec.att = *a;
	pthread_mutex_lock(&rec.lock);
	rec.st.attesting = a->enabled;
	rec.st.attest_every = a->every;
	pthread_mutex_unlock(&rec.lock);
}

/*
 * Marks the next record pushed: a quote once it is in a checkpoint, or
 * (before) a last quote just before it is appended. push_item applies the
 * mark under the queue's lock, so the ledger thread never sees the record
 * without it. Control thread.
 */
static void
mark_next(bool before, const uint8_t digest[PC_DIGEST_LEN], uint64_t cursor_ns, uint64_t window_ns)
{
	if (!rec.att.enabled)
		return;
	rec.mark.attest = !before;
	rec.mark.quote_before = before;
	memcpy(rec.mark.due.digest, digest, PC_DIGEST_LEN);
	rec.mark.due.cursor_ns = cursor_ns;
	rec.mark.due.window_ns = window_ns;
}

struct pc_ledger *
pc_recorder_ledger(void)
{
	return rec.ledger;
}

/* Queues an encoded record; lifecycle records may use the slack. */
static bool
push_item(uint8_t *buf, size_t len, bool lifecycle, uint64_t close_ns)
{
	unsigned cap = QUEUE_MAX + (lifecycle ? QUEUE_SLACK : 0);
	bool ok = false;

	pthread_mutex_lock(&rec.lock);
	if (rec.n < cap && (lifecycle || rec.bytes + len <= QUEUE_BYTES_MAX)) {
		rec.q[(rec.head + rec.n) % (QUEUE_MAX + QUEUE_SLACK)] =
		    (struct item){ buf,
				   len,
				   close_ns,
				   close_ns != 0 ? pc_mono_ns() : 0,
				   rec.mark.attest,
				   rec.mark.quote_before,
				   rec.mark.due };
		/* a quote is due once: the next window's count starts again */
		if (rec.mark.attest)
			rec.windows_unquoted = 0;
		rec.n++;
		rec.bytes += len;
		ok = true;
		pthread_cond_signal(&rec.cond);
	}
	rec.st.queued = rec.n;
	rec.mark.attest = rec.mark.quote_before = false;
	pthread_mutex_unlock(&rec.lock);
	if (!ok)
		free(buf);
	return ok;
}

static bool
push(uint8_t *buf, size_t len, bool lifecycle)
{
	return push_item(buf, len, lifecycle, 0);
}

static uint8_t *
encode(const struct pc_record *r, size_t *len)
{
	static uint8_t scratch[PC_RECORD_MAX];
	*len = pc_record_encode(r, scratch, sizeof(scratch));
	if (*len == 0) {
		PC_LOG(ERR, "record of type %s does not encode\n", pc_record_type_name(r->type));
		return NULL;
	}
	uint8_t *buf = malloc(*len);
	if (buf != NULL)
		memcpy(buf, scratch, *len);
	return buf;
}

static void
base_record(struct pc_record *r, uint8_t type, uint64_t start_ns, uint64_t window_ns,
	    uint64_t count, const uint8_t digest[PC_DIGEST_LEN])
{
	memset(r, 0, sizeof(*r));
	r->type = type;
	snprintf(r->appliance_id, sizeof(r->appliance_id), "%s", rec.appliance_id);
	r->time_ns = pc_now_ns();
	r->window_start_ns = start_ns;
	r->window_len_ns = window_ns;
	r->window_count = count;
	memcpy(r->podmap_digest, digest, PC_DIGEST_LEN);
	memcpy(r->build_id, rec.build_id, sizeof(r->build_id));
}

static struct pc_record_pod rec_pods[PC_MAX_PODS];
static struct pc_record_link rec_links[PC_MAX_UPLINKS];

static void
fill_pods(struct pc_record *r, const struct pc_table *t, const struct pc_window *w)
{
	const struct pc_config *cfg = &t->cfg;
	for (unsigned p = 0; p < cfg->npods; p++) {
		struct pc_record_pod *rp = &rec_pods[p];
		memset(rp, 0, sizeof(*rp));
		snprintf(rp->id, sizeof(rp->id), "%s", cfg->pods[p].id);
		snprintf(rp->uplink, sizeof(rp->uplink), "%s", cfg->uplinks[cfg->pods[p].uplink].name);
		rp->cap_bps = cfg->pods[p].limits.cap_bps;
		rp->burst_bytes = cfg->pods[p].limits.burst_bytes;
		rp->mode = pc_record_mode(&cfg->pods[p].limits);
		if (w != NULL)
			memcpy(rp->dir, w->pod[p], sizeof(rp->dir));
	}
	r->npods = cfg->npods;
	r->pods = rec_pods;
	if (w == NULL)
		return;
	for (unsigned u = 0; u < cfg->nuplinks; u++) {
		snprintf(rec_links[u].name, sizeof(rec_links[u].name), "%s", cfg->uplinks[u].name);
		for (unsigned d = 0; d < PC_DIR_COUNT; d++)
			pc_link_ctr_recorded(&rec_links[u].dir[d], &w->link[u][d]);
	}
	r->nlinks = cfg->nuplinks;
	r->links = rec_links;
}

static bool
submit(const struct pc_record *r, bool lifecycle)
{
	size_t len;
	uint8_t *buf = encode(r, &len);
	return buf != NULL && push(buf, len, lifecycle);
}

/* Two records at once (lifecycle ones): the ledger thread finds both, so no checkpoint parts them. */
static void
push_pair(uint8_t *a, size_t alen, uint8_t *b, size_t blen)
{
	unsigned cap = QUEUE_MAX + QUEUE_SLACK;

	pthread_mutex_lock(&rec.lock);
	if (rec.n + 2 <= cap) {
		rec.q[(rec.head + rec.n) % cap] = (struct item){ a, alen, 0, 0 };
		/* a quote, when one is due, once the DECLARE too is in a checkpoint */
		rec.q[(rec.head + rec.n + 1) % cap] =
		    (struct item){ b,           blen, 0, 0, rec.mark.attest, rec.mark.quote_before,
				   rec.mark.due };
		if (rec.mark.attest)
			rec.windows_unquoted = 0;
		rec.n += 2;
		rec.bytes += alen + blen;
		a = b = NULL;
		pthread_cond_signal(&rec.cond);
	}
	rec.st.queued = rec.n;
	rec.mark.attest = rec.mark.quote_before = false;
	pthread_mutex_unlock(&rec.lock);
	free(a);
	free(b);
}

/*
 * A START or RELOAD, and after it, when t runs under an auditor's
 * declaration, the DECLARE that binds the declaration to it.
 */
static void
submit_declared(const struct pc_record *r, const struct pc_table *t)
{
	struct pc_record d;
	size_t len, dlen;
	uint8_t *buf, *dbuf;

	if (!t->decl.on) {
		submit(r, true);
		return;
	}
	buf = encode(r, &len);
	if (buf == NULL)
		return;
	base_record(&d, PC_REC_DECLARE, r->window_start_ns, r->window_len_ns, 0, t->digest);
	memcpy(d.declare.hash, t->decl.hash, PC_DIGEST_LEN);
	d.declare.not_before_ns = t->decl.d.not_before_ns;
	d.declare.not_after_ns = t->decl.d.not_after_ns;
	dbuf = encode(&d, &dlen);
	if (dbuf == NULL) {
		free(buf);
		return;
	}
	push_pair(buf, len, dbuf, dlen);
}

static struct pc_record_port rec_ports[PC_LINK_PORTS_MAX];

/*
 * A LINK at the cursor: what each port showed at a START or RELOAD, or
 * over the span_ns of the windows just queued. None when the links are not
 * observed (no ports). A lifecycle record: it follows a record that was
 * queued, so it takes at most one slot of the slack per window.
 */
static void
submit_link(uint8_t kind, uint64_t cursor_ns, uint64_t window_ns, uint64_t span_ns,
	    const uint8_t digest[PC_DIGEST_LEN])
{
	struct pc_record r;

	base_record(&r, PC_REC_LINK, cursor_ns, window_ns, 0, digest);
	if (pc_link_record_fill(&r.linkstate, kind, span_ns, rec_ports) == 0)
		submit(&r, true);
}

/* A GAP for the windows that found the queue full, once there is room. */
static void
flush_lost(bool lifecycle)
{
	struct pc_record r;

	if (rec.lost_count == 0)
		return;
	base_record(&r, PC_REC_GAP, rec.lost_first * rec.window_ns, rec.window_ns, rec.lost_count,
		    rec.digest);
	size_t len;
	uint8_t *buf = encode(&r, &len);
	if (buf != NULL && push(buf, len, lifecycle)) {
		PC_LOG(WARNING, "%lu windows were lost while the ledger was away: recorded as a gap\n",
		       (unsigned long)rec.lost_count);
		rec.lost_count = 0;
	}
}

void
pc_recorder_start_record(const struct pc_table *t, uint64_t epoch, uint64_t window_ns,
			 uint64_t covered_ns)
{
	struct pc_record r;
	uint64_t start = epoch * window_ns;

	rec.window_ns = window_ns;
	memcpy(rec.digest, t->digest, PC_DIGEST_LEN);
	if (covered_ns != 0 && covered_ns < start) {
		uint64_t from = covered_ns - covered_ns % window_ns;
		base_record(&r, PC_REC_GAP, from, window_ns, (start - from) / window_ns, t->digest);
		submit(&r, true);
	}
	base_record(&r, PC_REC_START, start, window_ns, 0, t->digest);
	fill_pods(&r, t, NULL);
	mark_next(false, t->digest, start, window_ns);
	submit_declared(&r, t);
	submit_link(PC_LINK_AT_START, start, window_ns, 0, t->digest);
}

static struct pc_record_seen rec_seen[PC_MAX_UPLINKS];
static struct pc_record_slice rec_slices[PC_MAX_PODS];

/* A tap's slices (appliance.slice): a block for each pod it counted any frame of in one. */
static void
fill_slices(struct pc_record *r, const struct pc_window *w)
{
	const struct pc_config *cfg = &w->table->cfg;
	uint32_t n = 0;

	r->type = PC_REC_OBSERVE_SLICES;
	r->observe.slice_ns = cfg->slice_ns;
	r->observe.slice_flags = w->last_short ? PC_SLICE_LAST_SHORT : 0;
	for (unsigned p = 0; p < cfg->npods; p++) {
		const struct pc_slice_ctr *c = w->slice[p];
		uint64_t any = 0;
		for (unsigned d = 0; d < PC_DIR_COUNT; d++)
			any |= c[d].first_frames | c[d].last_frames;
		if (any == 0)
			continue;
		struct pc_record_slice *s = &rec_slices[n++];
		snprintf(s->pod, sizeof(s->pod), "%s", cfg->pods[p].id);
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			s->first_bytes[d] = c[d].first_bytes;
			s->first_frames[d] = c[d].first_frames;
			s->last_bytes[d] = c[d].last_bytes;
			s->last_frames[d] = c[d].last_frames;
		}
	}
	r->observe.nslices = n;
	r->observe.slices = rec_slices;
}

/*
 * A tap's OBSERVE, right after the WINDOW it completes: what its ports
 * could not deliver in those windows. Lost with its WINDOW, never alone.
 */
static void
submit_observe(const struct pc_window *w)
{
	const struct pc_config *cfg = &w->table->cfg;
	struct pc_record r;

	base_record(&r, PC_REC_OBSERVE, w->start_ns, w->len_ns, w->count, w->table->digest);
	r.observe.side = (uint8_t)cfg->role;
	for (unsigned u = 0; u < cfg->nuplinks; u++) {
		struct pc_record_seen *s = &rec_seen[u];
		snprintf(s->name, sizeof(s->name), "%s", cfg->uplinks[u].name);
		for (unsigned d = 0; d < PC_DIR_COUNT; d++) {
			s->missed[d] = w->seen[u][d].missed;
			s->nombuf[d] = w->seen[u][d].nombuf;
			s->errors[d] = w->seen[u][d].errors;
		}
	}
	r.observe.nseen = cfg->nuplinks;
	r.observe.seen = rec_seen;
	if (cfg->slice_ns != 0)
		fill_slices(&r, w);
	submit(&r, false);
}

/* With appliance.clock, a SYNC right after the WINDOW (and a tap's OBSERVE), before its LINK
 * (the clock check wants none between): the discipline's polls until the window closed. */
static void
submit_sync(const struct pc_window *w)
{
	struct pc_record r;
	struct pc_clock_window cw;

	base_record(&r, PC_REC_SYNC, w->start_ns, w->len_ns, w->count, w->table->digest);
	pc_clock_discipline_snapshot(w->close_mono_ns, &cw);
	pc_sync_fill(&r.sync, &cw);
	submit(&r, false);
}

void
pc_recorder_window(const struct pc_window *w)
{
	struct pc_record r;
	uint64_t t0 = pc_mono_ns();

	flush_lost(false);
	base_record(&r, PC_REC_WINDOW, w->start_ns, w->len_ns, w->count, w->table->digest);
	fill_pods(&r, w->table, w);
	size_t len;
	uint8_t *buf = encode(&r, &len);
	pc_stage_since(PC_STAGE_ENCODE, t0);
	rec.windows_unquoted += w->count;
	if (rec.windows_unquoted >= rec.att.every)
		mark_next(false, w->table->digest, w->start_ns + w->count * w->len_ns, w->len_ns);
	bool queued = buf != NULL && push_item(buf, len, false, w->close_mono_ns);
	if (!queued) {
		if (rec.lost_count == 0)
			rec.lost_first = w->start_ns / w->len_ns;
		/* a record of several windows lost is as many windows missing */
		rec.lost_count += w->count;
		pthread_mutex_lock(&rec.lock);
		rec.st.lost_windows += w->count;
		pthread_mutex_unlock(&rec.lock);
		return;
	}
	if (w->table->cfg.role != PC_ROLE_SHAPER)
		submit_observe(w);
	if (w->table->cfg.clock.enabled)
		submit_sync(w);
	submit_link(PC_LINK_WINDOW, w->start_ns + w->count * w->len_ns, w->len_ns,
		    w->count * w->len_ns, w->table->digest);
}

void
pc_recorder_reload(const struct pc_table *t, uint64_t epoch, uint64_t window_ns)
{
	struct pc_record r;

	memcpy(rec.digest, t->digest, PC_DIGEST_LEN);
	base_record(&r, PC_REC_RELOAD, epoch * window_ns, window_ns, 0, t->digest);
	fill_pods(&r, t, NULL);
	mark_next(false, t->digest, epoch * window_ns, window_ns);
	submit_declared(&r, t);
	submit_link(PC_LINK_AT_RELOAD, epoch * window_ns, window_ns, 0, t->digest);
}

void
pc_recorder_clock(const struct pc_table *t, uint64_t epoch, uint64_t window_ns, int64_t step_ns)
{
	struct pc_record r;

	/* the windows lost before the step are contiguous with the cursor: a GAP first */
	flush_lost(true);
	base_record(&r, PC_REC_CLOCK, epoch * window_ns, window_ns, 0, t->digest);
	/* windows are paced by the monotonic clock: the next one starts where the last ended */
	r.clock.elapsed_ns = 0;
	r.clock.step_ns = step_ns;
	submit(&r, true);
}

void
pc_recorder_stop_record(const struct pc_table *t, uint64_t epoch, uint64_t window_ns)
{
	struct pc_record r;

	flush_lost(true);
	base_record(&r, PC_REC_STOP, epoch * window_ns, window_ns, 0, t->digest);
	mark_next(true, t->digest, epoch * window_ns, window_ns);
	submit(&r, true);
}

bool
pc_recorder_drain(uint64_t timeout_ns)
{
	struct timespec until;

	if (!rec.running)
		return false;
	clock_gettime(CLOCK_REALTIME, &until);
	timeout_ns += (uint64_t)until.tv_nsec;
	until.tv_sec += (time_t)(timeout_ns / PC_NS_PER_SEC);
	until.tv_nsec = (long)(timeout_ns % PC_NS_PER_SEC);
	pthread_mutex_lock(&rec.lock);
	while (!(rec.n == 0 && rec.idle) && !rec.exited)
		if (pthread_cond_timedwait(&rec.drained, &rec.lock, &until) == ETIMEDOUT)
			break;
	bool done = rec.n == 0 && (rec.idle || rec.exited);
	pthread_mutex_unlock(&rec.lock);
	return done;
}

unsigned
pc_recorder_finish(void)
{
	if (!rec.running)
		return 0;
	pthread_mutex_lock(&rec.lock);
	rec.stopping = true;
	pthread_cond_signal(&rec.cond);
	pthread_mutex_unlock(&rec.lock);

	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 30;
	if (pthread_timedjoin_np(rec.thread, NULL, &deadline) != 0) {
		PC_LOG(ERR, "the ledger did not drain in 30 s; %u records not written\n", rec.n);
		return rec.n;
	}
	rec.running = false;
	pc_ledger_close(rec.ledger);
	rec.ledger = NULL;
	if (rec.n > 0)
		PC_LOG(ERR, "%u records could not be written to the ledger: the next start "
		       "records the windows they held as a gap\n", rec.n);
	return rec.n;
}

void
pc_recorder_stats(struct pc_recorder_stats *st)
{
	pthread_mutex_lock(&rec.lock);
	*st = rec.st;
	pthread_mutex_unlock(&rec.lock);
}
