/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The window promise (docs/verify.md, check 14), a check of each pod of
 * each WINDOW in its place. Stateless: a pod's counts of the window are
 * all it needs.
 */
#include <inttypes.h>

#include "shape/classify.h"
#include "shape/window_budget.h"
#include "log/record.h"
#include "verify.h"

#include "verify_impl.h"

/*
 * The window promise (docs/bucket.md, "The two promises"): at most
 * cap x window in every interval of one window. Of those intervals the
 * log shows the windows themselves, so each WINDOW record of a pod held
 * to it may carry at most window_count x the budget of one; the intervals
 * across a boundary between windows are podcapd's claim. The same budget,
 * rounded down to whole bytes, as podcapd's limiter.
 */
static void
window_pod(struct pc_verify *v, void *st, void *podst, uint64_t index, const struct pc_record *r,
	   const struct pc_record_pod *p, uint32_t pod, int d)
{
	uint64_t one = pc_wb_budget_bytes(p->cap_bps, r->window_len_ns);
	u128 most = (u128)one * r->window_count;
	uint64_t bytes = p->dir[d].pass_bytes;
	char len[DURATION_LEN], over[U128_LEN], all[U128_LEN];

	(void)st, (void)podst, (void)pod;
	if (!(p->mode & PC_POD_MODE_WINDOW) || bytes <= most)
		return;
	pcv_format_duration(r->window_len_ns, len, sizeof(len));
	pcv_format_u128(most, all, sizeof(all));
	pcv_format_u128(bytes - most, over, sizeof(over));
	pcv_fail(v, PC_VC_WINDOW, (int64_t)index, r,
		 "pod %s %s: %" PRIu64 " bytes passed in %" PRIu64 " window%s of %s exceed the "
		 "window promise, cap %" PRIu64 " bit/s x %s = %" PRIu64 " bytes a window (%s in "
		 "all), by %s bytes",
		 p->id, pc_dir_name((enum pc_dir)d), bytes, r->window_count,
		 r->window_count == 1 ? "" : "s", len, p->cap_bps, len, one, all, over);
}

const struct pcv_check pcv_window_check = {
	.name = "window",
	.pod = window_pod,
};
