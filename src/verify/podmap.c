/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pod map (docs/verify.md, check 6): every START and RELOAD must name
 * the digest of a pod map the verifier declared (--pod-map), and list
 * exactly its pods, uplinks, limits and promises and its window length;
 * the windows after it then run under that map. The report lists every
 * digest put in force with the windows under it and the file declaring it.
 */
#include <inttypes.h>
#include <string.h>

#include "base/hex.h"
#include "podmap/config.h"
#include "log/record.h"
#include "verify.h"

#include "lines.h"
#include "podmap.h"
#include "print.h"
#include "uses.h"
#include "verify_impl.h"

struct podmap {
	int inforce_map; /* the declared map in force, -1 when none */
	struct pcv_uses mapuse;
};

static int
podmap_init(struct pc_verify *v, void *st)
{
	struct podmap *m = st;

	(void)v;
	m->inforce_map = -1;
	return pcv_uses_init(&m->mapuse);
}

static void
podmap_free(void *st)
{
	pcv_uses_free(&((struct podmap *)st)->mapuse);
}

const struct pc_config *
pcv_podmap_inforce(const struct pc_verify *v)
{
	const struct podmap *m = pcv_state(v, PCV_PODMAP);

	return m->inforce_map >= 0 ? v->maps[m->inforce_map] : NULL;
}

/* A START or RELOAD: the index of the declared map it names, or -1 (a failure when maps were declared). */
static int
declared_map(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	char a[2 * PC_DIGEST_LEN + 1], b[2 * PC_DIGEST_LEN + 1];

	if (v->nmaps == 0)
		return -1;
	for (size_t i = 0; i < v->nmaps; i++)
		if (memcmp(r->podmap_digest, v->map_digest[i], PC_DIGEST_LEN) == 0)
			return (int)i;
	pc_hex(r->podmap_digest, PC_DIGEST_LEN, a);
	pc_hex(v->map_digest[0], PC_DIGEST_LEN, b);
	pcv_fail(v, PC_VC_PODMAP, (int64_t)index, r,
		 "%s under pod map %s, none of the %zu "
		 "declared (%s%s)",
		 pc_record_type_name(r->type), a, v->nmaps, b, v->nmaps > 1 ? ", ..." : "");
	return -1;
}

/* START and RELOAD against the declared map they name: the limits the record claims are the file's. */
static void
check_pods(struct pc_verify *v, uint64_t index, const struct pc_record *r,
	   const struct pc_config *c)
{
	if (r->window_len_ns != c->window_ns)
		pcv_fail(v, PC_VC_PODMAP, (int64_t)index, r,
			 "window length %" PRIu64 " ns, the pod map says %" PRIu64 " ns",
			 r->window_len_ns, c->window_ns);
	if (r->npods != c->npods) {
		pcv_fail(v, PC_VC_PODMAP, (int64_t)index, r,
			 "%" PRIu32 " pods, the pod map "
			 "declares %u",
			 r->npods, c->npods);
		return;
	}
	for (uint32_t i = 0; i < r->npods; i++) {
		const struct pc_record_pod *p = &r->pods[i];
		int j = pc_config_find_pod(c, p->id);

		if (j < 0) {
			pcv_fail(v, PC_VC_PODMAP, (int64_t)index, r, "pod %s is not in the pod map",
				 p->id);
			continue;
		}
		const struct pc_pod *cp = &c->pods[j];
		uint8_t mode = pc_record_mode(&cp->limits);

		if (strcmp(c->uplinks[cp->uplink].name, p->uplink) != 0 ||
		    cp->limits.cap_bps != p->cap_bps || cp->limits.burst_bytes != p->burst_bytes ||
		    mode != p->mode)
			pcv_fail(v, PC_VC_PODMAP, (int64_t)index, r,
				 "pod %s: uplink %s cap %" PRIu64 " bit/s burst %" PRIu64
				 " bytes mode %u (%s promise), the pod "
				 "map says uplink %s cap %" PRIu64 " bit/s burst %" PRIu64 " bytes "
				 "mode %u (%s promise)",
				 p->id, p->uplink, p->cap_bps, p->burst_bytes, p->mode,
				 pcv_promise_name(p->mode), c->uplinks[cp->uplink].name,
				 cp->limits.cap_bps, cp->limits.burst_bytes, mode,
				 pcv_promise_name(mode));
	}
}

/*
 * A START or RELOAD in its place puts in force the declared pod map it
 * names (with --pod-map, it must be one), whose pods it must list.
 */
static void
podmap_declare(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct podmap *m = st;

	m->inforce_map = declared_map(v, index, r);
	if (m->inforce_map >= 0)
		check_pods(v, index, r, v->maps[m->inforce_map]);
	pcv_use_begin(&m->mapuse, r->podmap_digest, index, m->inforce_map);
}

static void
podmap_window(struct pc_verify *v, void *st, uint64_t index, const struct pc_record *r)
{
	struct podmap *m = st;

	(void)v, (void)index;
	pcv_use_window(&m->mapuse, r);
}

uint64_t
pc_verify_nmaps_used(const struct pc_verify *v)
{
	const struct podmap *m = pcv_state(v, PCV_PODMAP);

	return m->mapuse.n;
}

const struct pc_verify_use *
pc_verify_map_used_at(const struct pc_verify *v, size_t i)
{
	const struct podmap *m = pcv_state(v, PCV_PODMAP);

	return pcv_use_at(&m->mapuse, i);
}

/* ---- the saved state: the declared map in force, the maps seen ---- */

static void
save_inforce(const struct pc_verify *v, const void *st, FILE *f)
{
	(void)v;
	fputs("inforce-map", f);
	pcv_put_i128(f, ((const struct podmap *)st)->inforce_map);
	fputc('\n', f);
}

static int
load_inforce(struct pc_verify *v, void *st, struct pcv_lines *ls, struct pc_error *err)
{
	char *s;
	int64_t map;

	if (!pcv_line_is(ls, "inforce-map", &s) ||
	    !pcv_get_i64(&s, &map, -1, (int64_t)v->nmaps - 1) || *s != '\0')
		return pcv_lines_bad(ls, err);
	((struct podmap *)st)->inforce_map = (int)map;
	return 0;
}

static void
save_uses(const struct pc_verify *v, const void *st, FILE *f)
{
	(void)v;
	pcv_uses_save(f, "maps", &((const struct podmap *)st)->mapuse);
}

static int
load_uses(struct pc_verify *v, void *st, struct pcv_lines *ls, struct pc_error *err)
{
	return pcv_uses_load(ls, "maps", &((struct podmap *)st)->mapuse, v->trusted.size, v->nmaps,
			     err);
}

/* ---- the reports ---- */

/* The file of the declared map a use is of, or NULL when the log's digest is no declared one. */
static const char *
map_path(const struct pc_verify *v, const struct pc_verify_use *u)
{
	const struct pc_config *c =
	    u->map >= 0 && (size_t)u->map < v->nmaps ? v->maps[u->map] : NULL;

	return c != NULL ? c->path : NULL;
}

/* The file of the map in row r (0: the header), uncut: it is a path. */
static const char *
map_tail(size_t row, const void *ctx)
{
	const struct pc_verify *v = ctx;
	const struct pc_verify_use *u;

	if (row == 0)
		return "map";
	u = pc_verify_map_used_at(v, row - 1);
	return map_path(v, u) != NULL ? map_path(v, u) : "-";
}

static void
podmap_text(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct podmap *m = st;
	struct pcv_table t = { .ncols = 5, .tail = map_tail, .ctx = v };
	uint64_t n = m->mapuse.n;
	char d[2 * PC_DIGEST_LEN + 1];

	if (n == 0)
		return;
	fprintf(f, "\npod maps:\n");
	pcv_table_cell(&t, 0, 0, "digest");
	pcv_use_header(&t, 1);
	for (uint64_t i = 0; i < pcv_kept(n); i++) {
		const struct pc_verify_use *u = pcv_use_at(&m->mapuse, i);

		pc_hex(u->id, PC_DIGEST_LEN, d);
		pcv_table_cell(&t, i + 1, 0, "%s", d);
		pcv_use_cells(&t, i + 1, 1, u);
	}
	pcv_table_print(&t, "  ", f);
	pcv_uses_left_out(f, n, "pod maps");
	if (v->nmaps == 0)
		fprintf(f, "(map -: no --pod-map was given, the digests are the log's own)\n");
}

static void
json_map_used(FILE *f, const struct pc_verify *v, uint64_t i)
{
	const struct pc_verify_use *u = pc_verify_map_used_at(v, i);

	fprintf(f, "{\"digest\": ");
	pcv_json_hex(f, u->id, PC_DIGEST_LEN);
	fprintf(f, ", \"path\": ");
	if (map_path(v, u) != NULL)
		pc_json_string(f, map_path(v, u));
	else
		fputs("null", f);
	pcv_json_use_fields(f, u);
	fputc('}', f);
}

static void
podmap_json(const struct pc_verify *v, const void *st, FILE *f)
{
	const struct podmap *m = st;

	pcv_json_counts(f, "pod_maps", m->mapuse.n);
	pcv_json_list(f, "pod_maps", v, pcv_kept(m->mapuse.n), json_map_used);
}

const struct pcv_check pcv_podmap_check = {
	.name = "podmap",
	.size = sizeof(struct podmap),
	.init = podmap_init,
	.free = podmap_free,
	.on[PC_REC_START] = podmap_declare,
	.on[PC_REC_RELOAD] = podmap_declare,
	.on[PC_REC_WINDOW] = podmap_window,
	.sections = (const struct pcv_section[]){ { "inforce-map", save_inforce, load_inforce },
						  { "uses maps", save_uses, load_uses },
						  { NULL } },
	.report[PCV_TEXT] = podmap_text,
	.report[PCV_JSON] = podmap_json,
};
