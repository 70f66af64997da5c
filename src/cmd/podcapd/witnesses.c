/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One thread per witness: wait for a note newer than the last one it
 * submitted, submit the newest (older ones it missed are covered by the
 * newest's consistency proof), keep the cosignature. A witness that does
 * not answer is retried with the newest note after a back-off that grows
 * to 30 s; it never holds the lock while it talks.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "base/clock.h"
#include "log/cosig.h"
#include "log/note.h"

#include "witness/client.h"
#include "daemon/log.h"
#include "witnesses.h"

#define TIMEOUT_MS     5000
#define BACKOFF_MIN_MS 500
#define BACKOFF_MAX_MS 30000

struct witness {
	struct pc_wclient client;
	pthread_t thread;
	int started;
	/* under lock */
	struct pc_witness_stats st;
	char line[PC_COSIG_LINE_MAX]; /* its cosignature of body[0..body_len) */
	char body[PC_NOTE_MAX];
	size_t body_len;
	uint64_t done; /* the generation of the last note it is through with */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_cond_t done_cond; /* a witness is through with a note */
	struct pc_ledger *ledger;
	struct witness w[PC_MAX_WITNESSES];
	unsigned n;
	int stop; /* read by curl's progress callback too */
	/* the newest published note, under lock */
	char note[PC_NOTE_MAX];
	size_t note_len;
	uint64_t generation;
} ws = { .lock = PTHREAD_MUTEX_INITIALIZER,
	 .cond = PTHREAD_COND_INITIALIZER,
	 .done_cond = PTHREAD_COND_INITIALIZER };

static const char *const outcome_names[PC_WITNESS_OUTCOMES] = {
	"cosigned", "conflict", "refused", "down", "bad_answer",
};

const char *
pd_witness_outcome_name(enum pc_witness_outcome o)
{
	return outcome_names[o];
}

void
pd_witnesses_publish(const char *note, size_t len)
{
	if (len >= sizeof(ws.note))
		return;
	pthread_mutex_lock(&ws.lock);
	memcpy(ws.note, note, len);
	ws.note_len = len;
	ws.generation++;
	pthread_cond_broadcast(&ws.cond);
	pthread_mutex_unlock(&ws.lock);
}

/*
 * Waits for a note newer than *seen, for at most ms (0: no limit); then
 * copies the newest note, new or not. 0 when stopping.
 */
static int
wait_for_note(uint64_t *seen, long ms, char *note, size_t *len)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&ws.lock);
	while (!ws.stop && ws.generation == *seen) {
		int rc = ms == 0 ? pthread_cond_wait(&ws.cond, &ws.lock)
				 : pthread_cond_timedwait(&ws.cond, &ws.lock, &until);
		if (rc == ETIMEDOUT)
			break;
	}
	int go = !ws.stop && ws.note_len > 0;
	if (go) {
		memcpy(note, ws.note, ws.note_len);
		*len = ws.note_len;
		*seen = ws.generation;
	}
	pthread_mutex_unlock(&ws.lock);
	return go;
}

/* Whatever came of it: submitted, refused, unanswered or not a checkpoint at all. */
static void
through_with(struct witness *w, uint64_t generation)
{
	pthread_mutex_lock(&ws.lock);
	w->done = generation;
	pthread_cond_broadcast(&ws.done_cond);
	pthread_mutex_unlock(&ws.lock);
}

static void
record(struct witness *w, enum pc_wclient_result r, const char *note, size_t blen,
       const struct pc_checkpoint *cp, const char *line, uint64_t t)
{
	pthread_mutex_lock(&ws.lock);
	w->st.outcomes[r]++;
	if (r == PC_WCLIENT_COSIGNED) {
		memcpy(w->body, note, blen);
		w->body_len = blen;
		snprintf(w->line, sizeof(w->line), "%s", line);
		w->st.cosigned_size = cp->size;
		w->st.cosigned_time = t;
	}
	pthread_mutex_unlock(&ws.lock);
}

static size_t
body_of(const char *note, size_t len)
{
	for (size_t i = 1; i < len; i++)
		if (note[i - 1] == '\n' && note[i] == '\n')
			return i;
	return 0;
}

static void *
witness_thread(void *arg)
{
	static _Thread_local char note[PC_NOTE_MAX], line[PC_COSIG_LINE_MAX];
	struct witness *w = arg;
	struct pc_checkpoint cp;
	struct pc_error err;
	enum pc_wclient_result r, last = PC_WCLIENT_COSIGNED;
	uint64_t seen = 0, t;
	long backoff = 0, status;
	size_t len = 0, blen;

	while (wait_for_note(&seen, backoff, note, &len)) {
		blen = body_of(note, len);
		if (blen == 0 || pc_checkpoint_parse_body(note, blen, &cp, &err) != 0) {
			through_with(w, seen);
			continue;
		}
		r = pc_wclient_submit(&w->client, note, len, &cp, pc_ledger_leaf, ws.ledger, line,
				      sizeof(line), &t, &status, &err);
		if (__atomic_load_n(&ws.stop, __ATOMIC_RELAXED))
			break;
		record(w, r, note, blen, &cp, line, t);
		through_with(w, seen);
		if (r != PC_WCLIENT_COSIGNED && (r != last || backoff == 0))
			PC_LOG(WARNING, "witness %s: checkpoint of size %lu: %s\n", w->st.name,
			       (unsigned long)cp.size, err.msg);
		else if (r == PC_WCLIENT_COSIGNED && last != PC_WCLIENT_COSIGNED)
			PC_LOG(NOTICE, "witness %s: cosigned size %lu again\n", w->st.name,
			       (unsigned long)cp.size);
		last = r;
		if (r == PC_WCLIENT_COSIGNED) {
			backoff = 0;
		} else {
			/* Retry the newest note later, or as soon as a newer one comes. */
			backoff = backoff == 0 ? BACKOFF_MIN_MS : backoff * 2;
			if (backoff > BACKOFF_MAX_MS)
				backoff = BACKOFF_MAX_MS;
		}
	}
	return NULL;
}

int
pd_witnesses_start(const struct pc_witnesses *cfg, struct pc_ledger *ledger)
{
	struct pc_error err;
	long len;

	if (cfg->n == 0)
		return 0;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0) {
		PC_LOG(ERR, "witnesses: libcurl failed to initialise\n");
		return -1;
	}
	ws.ledger = ledger;
	ws.stop = 0;
	len = pc_ledger_checkpoint(ledger, ws.note, sizeof(ws.note));
	if (len > 0) {
		ws.note_len = (size_t)len;
		ws.generation = 1;
	}
	for (unsigned i = 0; i < cfg->n; i++) {
		struct witness *w = &ws.w[i];

		memset(w, 0, sizeof(*w));
		snprintf(w->st.name, sizeof(w->st.name), "%s", cfg->w[i].key.name);
		if (pc_wclient_init(&w->client, cfg->w[i].url, &cfg->w[i].key, TIMEOUT_MS, &err) !=
		    0) {
			PC_LOG(ERR, "witness %s: %s\n", w->st.name, err.msg);
			pd_witnesses_stop();
			return -1;
		}
		w->client.stop = &ws.stop;
		snprintf(w->client.ca, sizeof(w->client.ca), "%s", cfg->w[i].ca);
		ws.n = i + 1;
		if (pthread_create(&w->thread, NULL, witness_thread, w) != 0) {
			PC_LOG(ERR, "witness %s: cannot start its thread\n", w->st.name);
			pd_witnesses_stop();
			return -1;
		}
		w->started = 1;
		PC_LOG(INFO, "witness %s at %s\n", w->st.name, cfg->w[i].url);
	}
	return 0;
}

/* The witnesses not through with the newest note yet; under ws.lock. */
static unsigned
behind(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < ws.n; i++)
		n += ws.w[i].started && ws.w[i].done < ws.generation;
	return n;
}

void
pd_witnesses_flush(uint64_t timeout_ns)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	timeout_ns += (uint64_t)until.tv_nsec;
	until.tv_sec += (time_t)(timeout_ns / 1000000000u);
	until.tv_nsec = (long)(timeout_ns % 1000000000u);
	bool late[PC_MAX_WITNESSES];

	pthread_mutex_lock(&ws.lock);
	while (behind() > 0)
		if (pthread_cond_timedwait(&ws.done_cond, &ws.lock, &until) == ETIMEDOUT)
			break;
	for (unsigned i = 0; i < ws.n; i++)
		late[i] = ws.w[i].started && ws.w[i].done < ws.generation;
	pthread_mutex_unlock(&ws.lock);
	for (unsigned i = 0; i < ws.n; i++)
		if (late[i])
			PC_LOG(WARNING,
			       "witness %s: no answer about the last checkpoint in time: it "
			       "sees this stop only after the next start\n",
			       ws.w[i].st.name);
}

void
pd_witnesses_stop(void)
{
	pthread_mutex_lock(&ws.lock);
	__atomic_store_n(&ws.stop, 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&ws.cond);
	pthread_mutex_unlock(&ws.lock);
	for (unsigned i = 0; i < ws.n; i++) {
		if (ws.w[i].started)
			pthread_join(ws.w[i].thread, NULL);
		ws.w[i].started = 0;
		pc_wclient_free(&ws.w[i].client);
	}
	ws.n = 0;
}

size_t
pd_witnesses_cosigned(const char *note, size_t len, char *out, size_t outlen)
{
	size_t blen = body_of(note, len), pos = len, n;

	if (len >= outlen)
		return 0;
	memcpy(out, note, len);
	pthread_mutex_lock(&ws.lock);
	for (unsigned i = 0; i < ws.n; i++) {
		const struct witness *w = &ws.w[i];

		if (w->body_len == 0 || w->body_len != blen || memcmp(w->body, note, blen) != 0)
			continue;
		n = strlen(w->line);
		if (pos + n >= outlen)
			break;
		memcpy(out + pos, w->line, n);
		pos += n;
	}
	pthread_mutex_unlock(&ws.lock);
	out[pos] = '\0';
	return pos;
}

unsigned
pd_witnesses_stats(struct pc_witness_stats *out, unsigned max)
{
	unsigned n;

	pthread_mutex_lock(&ws.lock);
	for (n = 0; n < ws.n && n < max; n++)
		out[n] = ws.w[n].st;
	pthread_mutex_unlock(&ws.lock);
	return n;
}
