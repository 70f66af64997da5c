/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"

#include "ptp4l.h"

/* What one poll has gathered besides the reading: TIME_STATUS_NP's grandmaster, the ports seen. */
struct poll_state {
	struct pc_clock_reading *r;
	uint8_t ts_gm[8];
	bool ts_present;
	uint32_t ports_seen; /* bit p-1 for port p */
};

static int
set_path(struct sockaddr_un *sa, const char *path, struct pc_error *err)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (path[0] == '\0' || strlen(path) >= sizeof(sa->sun_path))
		return pc_error_set(err, "%s: not a unix socket path (1 to %zu bytes)", path,
				    sizeof(sa->sun_path) - 1);
	memcpy(sa->sun_path, path, strlen(path));
	return 0;
}

/*
 * A fresh non-blocking socket at a path no socket had before,
 * "<dir>/podcap.<pid>.<n>", replacing any before it.
 */
static int
bind_self(struct pc_ptp4l *c, struct pc_error *err)
{
	static unsigned bound;
	unsigned n = __atomic_fetch_add(&bound, 1, __ATOMIC_RELAXED);
	char self[sizeof(c->self.sun_path) + 32];

	pc_ptp4l_close(c);
	snprintf(self, sizeof(self), "%s/podcap.%ld.%u", c->dir, (long)getpid(), n);
	if (set_path(&c->self, self, err) != 0)
		return pc_error_prefix(err, "the client's socket beside %s", c->server.sun_path);
	c->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return pc_error_errno(err, "a unix datagram socket");
	unlink(c->self.sun_path);
	if (bind(c->fd, (const struct sockaddr *)&c->self, sizeof(c->self)) != 0) {
		pc_error_errno(err, "binding %s", c->self.sun_path);
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	/* as pmc's: a ptp4l that runs as another user of the group can answer */
	chmod(c->self.sun_path, 0660);
	return 0;
}

int
pc_ptp4l_open(struct pc_ptp4l *c, const char *path, uint8_t domain, struct pc_error *err)
{
	const char *slash = strrchr(path, '/');

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if (set_path(&c->server, path, err) != 0)
		return -1;
	if (slash == NULL)
		snprintf(c->dir, sizeof(c->dir), ".");
	else
		snprintf(c->dir, sizeof(c->dir), "%.*s", (int)(slash - path), path);
	c->asker.domain = domain;
	/* as pmc's: no clock identity, a port number of its own (ptp4l answers to it) */
	c->asker.self.port = (uint16_t)getpid();
	return bind_self(c, err);
}

void
pc_ptp4l_close(struct pc_ptp4l *c)
{
	if (c->fd < 0)
		return;
	close(c->fd);
	c->fd = -1;
	unlink(c->self.sun_path);
}

/* A socket call failed with errno e: is ptp4l gone, stopped, or is it podcap's side? */
static enum pc_clock_result
failed(int e, struct pc_error *err, const char *what, const struct pc_ptp4l *c)
{
	errno = e;
	pc_error_errno(err, "%s %s", what, c->server.sun_path);
	switch (e) {
	case ENOENT:
	case ECONNREFUSED:
	case ECONNRESET:
	case ENOTCONN:
		return PC_CLOCK_DOWN;
	case EAGAIN:
	case ENOBUFS:
		pc_error_set(err, "%s does not read its socket (its queue is full)",
			     c->server.sun_path);
		return PC_CLOCK_TIMEOUT;
	default:
		return PC_CLOCK_ERROR;
	}
}

/* The next datagram, decoded, by the deadline. */
static enum pc_clock_result
receive(struct pc_ptp4l *c, uint64_t deadline, struct pc_ptp_answer *a, struct pc_error *err)
{
	uint8_t buf[PC_PTP_MSG_MAX];

	for (;;) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_TRUNC | MSG_DONTWAIT);
		if (n > (ssize_t)sizeof(buf)) {
			pc_error_set(err, "an answer of %zd bytes, longer than any read (%zu)", n,
				     sizeof(buf));
			return PC_CLOCK_MALFORMED;
		}
		if (n >= 0 && pc_ptp_decode(buf, (size_t)n, &c->asker, a, err) != 0)
			return PC_CLOCK_MALFORMED;
		if (n >= 0)
			return PC_CLOCK_OK;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return failed(errno, err, "reading the answer of", c);
		uint64_t now = pc_mono_ns();
		if (now >= deadline) {
			pc_error_set(err, "no answer in time");
			return PC_CLOCK_TIMEOUT;
		}
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		struct timespec ts = { .tv_sec = (time_t)((deadline - now) / 1000000000u),
				       .tv_nsec = (long)((deadline - now) % 1000000000u) };
		ppoll(&p, 1, &ts, NULL);
	}
}

/* err is set: the answer could not be used */
static enum pc_clock_result
malformed(int set)
{
	(void)set;
	return PC_CLOCK_MALFORMED;
}

static enum pc_clock_result
take_port(struct poll_state *ps, const struct pc_ptp_port_ds *p, struct pc_error *err)
{
	char a[PC_PTP_ID_TEXT], b[PC_PTP_ID_TEXT];

	if (memcmp(p->port.clock, ps->r->clock, 8) != 0)
		return malformed(pc_error_set(err, "PORT_DATA_SET of a port of clock %s, not of %s",
					      pc_ptp_identity_text(p->port.clock, a),
					      pc_ptp_identity_text(ps->r->clock, b)));
	if (p->port.port > ps->r->nports || (ps->ports_seen >> (p->port.port - 1) & 1))
		return malformed(
		    pc_error_set(err, "PORT_DATA_SET of port %u twice or of a clock of %u ports",
				 p->port.port, ps->r->nports));
	ps->ports_seen |= 1u << (p->port.port - 1);
	ps->r->port_states[p->port.port - 1] = p->state;
	return PC_CLOCK_OK;
}

static enum pc_clock_result
take_clock(struct poll_state *ps, const struct pc_ptp_default_ds *d, uint8_t domain,
	   struct pc_error *err)
{
	if (d->nports > PC_CLOCK_MAX_PORTS)
		return malformed(pc_error_set(err, "a clock of %u ports: podcap reads at most %d",
					      d->nports, PC_CLOCK_MAX_PORTS));
	if (d->domain != domain)
		return malformed(pc_error_set(err, "DEFAULT_DATA_SET of domain %u, asked in %u",
					      d->domain, domain));
	memcpy(ps->r->clock, d->clock, 8);
	ps->r->nports = d->nports;
	return PC_CLOCK_OK;
}

/* One answer, to the GET it answers, into the reading. */
static enum pc_clock_result
take(struct poll_state *ps, const struct pc_ptp_answer *a, uint8_t domain, struct pc_error *err)
{
	struct pc_clock_reading *r = ps->r;
	char x[PC_PTP_ID_TEXT], y[PC_PTP_ID_TEXT];

	if (a->id != PC_PTP_DEFAULT_DATA_SET && memcmp(a->source.clock, r->clock, 8) != 0)
		return malformed(pc_error_set(err, "an answer of clock %s in a poll of %s",
					      pc_ptp_identity_text(a->source.clock, x),
					      pc_ptp_identity_text(r->clock, y)));
	switch (a->id) {
	case PC_PTP_DEFAULT_DATA_SET:
		return take_clock(ps, &a->u.dds, domain, err);
	case PC_PTP_PORT_DATA_SET:
		return take_port(ps, &a->u.port, err);
	case PC_PTP_CURRENT_DATA_SET:
		r->offset = a->u.cds.offset;
		r->path_delay = a->u.cds.path_delay;
		r->steps_removed = a->u.cds.steps_removed;
		return PC_CLOCK_OK;
	case PC_PTP_PARENT_DATA_SET:
		memcpy(r->gm, a->u.pds.gm, 8);
		return PC_CLOCK_OK;
	case PC_PTP_TIME_STATUS_NP:
		r->ingress_ns = a->u.ts.ingress_ns;
		ps->ts_present = a->u.ts.gm_present;
		memcpy(ps->ts_gm, a->u.ts.gm, 8);
		return PC_CLOCK_OK;
	default:
		return malformed(pc_error_set(err, "an answer of %s", pc_ptp_id_name(a->id)));
	}
}

/* A GET of id, and its `want` answers taken, by the deadline. */
static enum pc_clock_result
ask(struct pc_ptp4l *c, uint16_t id, unsigned want, uint64_t deadline, struct poll_state *ps,
    struct pc_error *err)
{
	uint8_t req[PC_PTP_GET_LEN];
	uint16_t seq = c->seq++;

	pc_ptp_encode_get(&c->asker, id, seq, req, sizeof(req));
	if (send(c->fd, req, sizeof(req), MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)sizeof(req))
		return failed(errno, err, "sending to", c);
	for (unsigned got = 0; got < want;) {
		struct pc_ptp_answer a;
		enum pc_clock_result res = receive(c, deadline, &a, err);

		if (res != PC_CLOCK_OK)
			return res;
		/* a late answer to an earlier GET */
		if (a.seq != seq)
			continue;
		if (a.id != id)
			return malformed(pc_error_set(err, "an answer of %s to a GET of %s",
						      pc_ptp_id_name(a.id), pc_ptp_id_name(id)));
		if (a.refused) {
			pc_error_set(err, "ptp4l refused GET %s: %s%s%s", pc_ptp_id_name(id),
				     pc_ptp_error_name(a.error), a.error_text[0] ? ", " : "",
				     a.error_text);
			return PC_CLOCK_REFUSED;
		}
		res = take(ps, &a, c->asker.domain, err);
		if (res != PC_CLOCK_OK)
			return res;
		got++;
	}
	return PC_CLOCK_OK;
}

static enum pc_clock_result
poll_all(struct pc_ptp4l *c, uint64_t deadline, struct poll_state *ps, struct pc_error *err)
{
	static const uint16_t clock_ids[] = { PC_PTP_DEFAULT_DATA_SET, PC_PTP_TIME_STATUS_NP,
					      PC_PTP_CURRENT_DATA_SET, PC_PTP_PARENT_DATA_SET };
	enum pc_clock_result res = PC_CLOCK_OK;

	if (connect(c->fd, (const struct sockaddr *)&c->server, sizeof(c->server)) != 0)
		return failed(errno, err, "connecting to", c);
	for (unsigned i = 0; i < sizeof(clock_ids) / sizeof(clock_ids[0]) && res == PC_CLOCK_OK;
	     i++)
		res = ask(c, clock_ids[i], 1, deadline, ps, err);
	/* the wildcard target: each of the clock's ports answers */
	if (res == PC_CLOCK_OK)
		res = ask(c, PC_PTP_PORT_DATA_SET, ps->r->nports, deadline, ps, err);
	return res;
}

enum pc_clock_result
pc_ptp4l_poll(struct pc_ptp4l *c, uint64_t timeout_ns, struct pc_clock_reading *r,
	      struct pc_error *err)
{
	uint64_t deadline = pc_mono_ns() + timeout_ns;
	struct poll_state ps = { .r = r };

	memset(r, 0, sizeof(*r));
	if ((c->rebind || c->fd < 0) && bind_self(c, err) != 0)
		return PC_CLOCK_ERROR;
	enum pc_clock_result res = poll_all(c, deadline, &ps, err);
	c->rebind = res != PC_CLOCK_OK;
	if (res != PC_CLOCK_OK)
		return res;
	r->read_ns = pc_now_ns();
	r->read_mono_ns = pc_mono_ns();
	/* the grandmaster of both data sets, or no grandmaster to speak of */
	r->gm_present = ps.ts_present && memcmp(ps.ts_gm, r->gm, 8) == 0;
	pc_clock_bound(r);
	return PC_CLOCK_OK;
}
