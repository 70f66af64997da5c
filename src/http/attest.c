/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * /v1/attest: the newest ATTEST record the published checkpoint covers.
 * The records are scanned forward from where the last request stopped, so
 * each record is read once however often the endpoint is asked.
 */
#include <pthread.h>
#include <stdlib.h>

#include "log/record.h"

#include "attest.h"

static struct {
	pthread_mutex_t lock;
	const struct pc_ledger *ledger; /* the scan below is of this ledger */
	uint64_t scanned;               /* records looked at */
	uint64_t latest;                /* index of the newest ATTEST + 1, 0 if none */
} scan = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Record i into *buf, grown once to the largest record if it does not fit. */
static long
read_record(struct pc_ledger *l, uint64_t i, uint8_t **buf, size_t *cap)
{
	long n = pc_ledger_record(l, i, *buf + 8, *cap - 8);
	if (n >= 0 || *cap >= 8 + (size_t)PC_RECORD_MAX)
		return n;
	uint8_t *nb = realloc(*buf, 8 + (size_t)PC_RECORD_MAX);
	if (nb == NULL)
		return -1;
	*buf = nb;
	*cap = 8 + (size_t)PC_RECORD_MAX;
	return pc_ledger_record(l, i, *buf + 8, *cap - 8);
}

long
pc_http_latest_attest(struct pc_ledger *l, uint8_t **buf, size_t *cap, uint64_t *index)
{
	uint64_t size = pc_ledger_published_size(l);
	long n = 0;

	pthread_mutex_lock(&scan.lock);
	if (scan.ledger != l || scan.scanned > size) {
		scan.ledger = l;
		scan.scanned = 0;
		scan.latest = 0;
	}
	for (; scan.scanned < size; scan.scanned++) {
		long got = read_record(l, scan.scanned, buf, cap);
		if (got < 2) {
			n = -1;
			break;
		}
		if ((*buf)[8 + 1] == PC_REC_ATTEST)
			scan.latest = scan.scanned + 1;
	}
	uint64_t latest = scan.latest;
	pthread_mutex_unlock(&scan.lock);
	if (n < 0 || latest == 0)
		return n;
	*index = latest - 1;
	return read_record(l, latest - 1, buf, cap);
}
