/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A client of ptp4l's management socket (linuxptp; `pmc -u` is another):
 * a unix datagram socket bound to a path of its own beside ptp4l's, from
 * which one poll GETs DEFAULT_DATA_SET, TIME_STATUS_NP, CURRENT_DATA_SET,
 * PARENT_DATA_SET and PORT_DATA_SET (one answer per port) and makes them a
 * reading (reading.h).
 *
 * A poll never waits past its deadline: the socket is non-blocking, a
 * ptp4l that is stopped or whose queue is full is a timeout, one that is
 * gone is down. After a poll that failed the client binds a new socket at
 * a new path, so that answers ptp4l still owes go nowhere and never fill a
 * queue that ptp4l, whose sends block, would wait on; an answer to an earlier GET on
 * the same socket is told apart by its sequence id and dropped. Not
 * thread-safe: one thread polls a client.
 */
#ifndef PODCAP_PTP4L_H
#define PODCAP_PTP4L_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/un.h>

#include "base/error.h"

#include "ptp_mgmt.h"
#include "reading.h"

struct pc_ptp4l {
	int fd;
	struct sockaddr_un server; /* ptp4l's socket (its uds_address) */
	struct sockaddr_un self;   /* this client's, removed by close */
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* where it binds: ptp4l's */
	struct pc_ptp_asker asker;
	uint16_t seq;
	bool rebind; /* the last poll failed: a new socket before the next */
};

/*
 * Binds a client of the ptp4l socket at path, in PTP domain `domain`:
 * its own socket is "<path's directory>/podcap.<pid>.<n>", as pmc's is
 * /var/run/pmc.<pid>, n new at each bind. The socket at path need not exist yet. 0, or -1
 * with err (a path too long for a unix socket, a directory it cannot
 * bind in).
 */
int pc_ptp4l_open(struct pc_ptp4l *c, const char *path, uint8_t domain, struct pc_error *err);
void pc_ptp4l_close(struct pc_ptp4l *c);

/*
 * One poll, for at most timeout_ns: PC_CLOCK_OK and *r (bound and all),
 * or another result with why in err.
 */
enum pc_clock_result pc_ptp4l_poll(struct pc_ptp4l *c, uint64_t timeout_ns,
				   struct pc_clock_reading *r, struct pc_error *err);

#endif /* PODCAP_PTP4L_H */
