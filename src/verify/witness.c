/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The verifier's witness policy: a quorum of cosignatures, and their time
 * as the bound of the log's windows (src/verify/witness.h).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "log/cosig.h"
#include "witness.h"

#define NS UINT64_C(1000000000)

static void finding(struct pc_witness_report *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
finding(struct pc_witness_report *r, const char *fmt, ...)
{
	va_list ap;

	if (r->nfail == sizeof(r->fail) / sizeof(r->fail[0]))
		return;
	va_start(ap, fmt);
	vsnprintf(r->fail[r->nfail++], sizeof(r->fail[0]), fmt, ap);
	va_end(ap);
}

int
pc_witness_judge(const struct pc_witness_policy *p, const char *note, size_t len,
		 uint64_t newest_end_ns, struct pc_witness_report *r)
{
	char end[PC_UTC_LEN], at[PC_UTC_LEN];
	struct pc_error why;
	uint64_t first_ns;

	memset(r, 0, sizeof(*r));
	r->first = -1;
	r->quorum = p->quorum != 0 ? p->quorum : (unsigned)p->nkeys;
	for (size_t i = 0; i < p->nkeys; i++) {
		struct pc_witness_seen *s = &r->seen[i];

		if (pc_cosig_verify(note, len, &p->keys[i], &s->t, &why) != 0) {
			snprintf(s->why, sizeof(s->why), "%s", why.msg);
			continue;
		}
		s->valid = 1;
		r->nvalid++;
		if (r->first < 0 || s->t < r->seen[r->first].t)
			r->first = (int)i;
	}
	if (r->nvalid < r->quorum)
		finding(r, "the checkpoint carries %u valid cosignatures of the %u required",
			r->nvalid, r->quorum);
	if (r->first < 0 || newest_end_ns == 0)
		return r->nfail == 0 ? 0 : -1;
	first_ns = r->seen[r->first].t * NS;
	pc_utc_format(newest_end_ns, end, sizeof(end));
	pc_utc_format(first_ns, at, sizeof(at));
	if (newest_end_ns > first_ns + NS + p->skew_ns)
		finding(r,
			"the newest window ends at %s, after %s first cosigned it at %s: its label "
			"ran ahead of the witnesses' time",
			end, p->keys[r->first].name, at);
	else if (first_ns > newest_end_ns && first_ns - newest_end_ns > p->max_delay_ns)
		finding(r,
			"the newest window, ending at %s, was first cosigned at %s by %s, %" PRIu64
			" s after it ended (more than --max-witness-delay, %" PRIu64
			" s): written or "
			"shown to witnesses after the fact",
			end, at, p->keys[r->first].name, (first_ns - newest_end_ns) / NS,
			p->max_delay_ns / NS);
	return r->nfail == 0 ? 0 : -1;
}

void
pc_witness_report_print(const struct pc_witness_policy *p, const struct pc_witness_report *r,
			FILE *f)
{
	char at[PC_UTC_LEN];

	fprintf(f, "witnesses: %u of %zu cosigned the checkpoint, %u required\n", r->nvalid,
		p->nkeys, r->quorum);
	for (size_t i = 0; i < p->nkeys; i++) {
		if (r->seen[i].valid) {
			pc_utc_format(r->seen[i].t * NS, at, sizeof(at));
			fprintf(f, "  %s+%08x: cosigned at %s\n", p->keys[i].name,
				(unsigned)p->keys[i].id, at);
		} else {
			fprintf(f, "  %s+%08x: %s\n", p->keys[i].name, (unsigned)p->keys[i].id,
				r->seen[i].why);
		}
	}
	for (unsigned i = 0; i < r->nfail; i++)
		fprintf(f, "  FAIL %s\n", r->fail[i]);
}
