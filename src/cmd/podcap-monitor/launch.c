/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pull launcher: the process every pull is forked from. The monitor
 * starts it once, before it listens, as a fresh image of podcap-monitor
 * (MON_LAUNCHER_ARG): it holds none of the monitor's memory (the
 * endpoint's TLS key, the appliances' findings), runs no thread, and loads
 * the fleet file once (again on the monitor's RELOAD). For each PULL the
 * monitor sends (the appliance's name, and the write end of the pipe its
 * outcome goes to, passed as SCM_RIGHTS), it forks a pull and answers its
 * pid; the pull runs podcap-verify's one-appliance verifier on the entry,
 * resuming from its state, writes what it found to the pipe and exits.
 * A fork of this small process costs what a fork costs, not an exec of
 * the program and its libraries, nor a read of the whole fleet file.
 *
 * The launcher reaps its pulls (so their CPU is counted in its own, and the
 * monitor's once it reaps the launcher). It and its pulls die with the
 * monitor (PR_SET_PDEATHSIG), and it with its pulls on SIGTERM.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../podcap-verify/fleet.h"
#include "monitor.h"

enum {
	LAUNCH_PULL = 1,
	LAUNCH_RELOAD = 2,
	LAUNCH_DROP = 3
};

struct launch_req {
	uint32_t op;
	int32_t pid; /* LAUNCH_DROP's */
	char name[PC_ID_LEN];
};

/* The pulls in flight, for SIGTERM; a pull past the last slot is not tracked, only reaped. */
#define LAUNCH_TRACKED 1024

static volatile sig_atomic_t launcher_stopping;

static void
on_term(int sig)
{
	(void)sig;
	launcher_stopping = 1;
}

/* ---- the monitor's side ---- */

int
mon_launcher_start(struct mon *m)
{
	int sv[2];
	pid_t parent = getpid();

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	char **args = calloc((size_t)m->argc + 2, sizeof(*args));
	if (args == NULL) {
		close(sv[0]);
		close(sv[1]);
		errno = ENOMEM;
		return -1;
	}
	args[0] = m->argv[0];
	args[1] = (char *)(uintptr_t)MON_LAUNCHER_ARG;
	for (int i = 1; i < m->argc; i++)
		args[i + 1] = m->argv[i];
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		free(args);
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		/* its socket is fd MON_LAUNCH_FD of the new image, open across exec */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent ||
		    dup2(sv[1], MON_LAUNCH_FD) < 0)
			_exit(2);
		execv("/proc/self/exe", args);
		_exit(2);
	}
	free(args);
	close(sv[1]);
	m->launcher_pid = pid;
	m->launcher_fd = sv[0];
	return 0;
}

/* One request, and the launcher's answer: a pid, 0 (done) or -1 (it failed or is gone). */
static pid_t
request(struct mon *m, uint32_t op, const char *name, int fd, pid_t pid)
{
	struct launch_req r = { .op = op, .pid = pid };
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &r, .iov_len = sizeof(r) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	int32_t answer;

	if (m->launcher_fd < 0)
		return -1;
	if (name != NULL)
		snprintf(r.name, sizeof(r.name), "%s", name);
	if (fd >= 0) {
		memset(ctl, 0, sizeof(ctl));
		msg.msg_control = ctl;
		msg.msg_controllen = sizeof(ctl);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	if (sendmsg(m->launcher_fd, &msg, MSG_NOSIGNAL) != (ssize_t)sizeof(r))
		return -1;
	ssize_t n;
	do
		n = recv(m->launcher_fd, &answer, sizeof(answer), 0);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)sizeof(answer) ? answer : -1;
}

pid_t
mon_launch_pull(struct mon *m, const char *name, int result_fd)
{
	return request(m, LAUNCH_PULL, name, result_fd, 0);
}

int
mon_launcher_reload(struct mon *m)
{
	return request(m, LAUNCH_RELOAD, NULL, -1, 0) == 0 ? 0 : -1;
}

/* The launcher kills it only while it is its child not yet reaped: never a pid used again. */
void
mon_launch_drop(struct mon *m, pid_t pid)
{
	request(m, LAUNCH_DROP, NULL, -1, pid);
}

void
mon_launcher_stop(struct mon *m)
{
	if (m->launcher_pid <= 0)
		return;
	kill(m->launcher_pid, SIGTERM);
	while (waitpid(m->launcher_pid, NULL, 0) < 0 && errno == EINTR)
		;
	close(m->launcher_fd);
	m->launcher_fd = -1;
	m->launcher_pid = 0;
}

bool
mon_launcher_reaped(struct mon *m, pid_t pid, int status)
{
	if (pid != m->launcher_pid)
		return false;
	mon_log("the pull launcher (pid %d) %s %d: its pulls in flight are lost; starting another",
		(int)pid, WIFSIGNALED(status) ? "was killed by signal" : "exited with status",
		WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	close(m->launcher_fd);
	m->launcher_fd = -1;
	m->launcher_pid = 0;
	if (mon_launcher_start(m) < 0)
		mon_log("cannot start the pull launcher: %s; no pulls until it starts",
			strerror(errno));
	return true;
}

/* ---- the launcher's side ---- */

/* The forked pull: its files, then the verifier on the appliance's entry. */
static void __attribute__((noreturn))
pull(struct mon *m, const struct pc_fleet_appliance *a, int fd, pid_t parent)
{
	static struct vf_options o;
	static struct vf_outcome out;
	struct mon_app app = { .a = a };
	char opath[PC_PATH_LEN], epath[PC_PATH_LEN], state[PC_PATH_LEN], html[PC_PATH_LEN];

	/* a launcher killed -9 takes its pulls with it */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(2);
	signal(SIGTERM, SIG_DFL);
	close(MON_LAUNCH_FD);
	mon_path(m, &app, ".out", opath, sizeof(opath));
	mon_path(m, &app, ".err", epath, sizeof(epath));
	int ofd = open(opath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int efd = open(epath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (ofd < 0 || efd < 0 || dup2(ofd, 1) < 0 || dup2(efd, 2) < 0)
		_exit(2);
	mon_path(m, &app, ".state", state, sizeof(state));
	mon_path(m, &app, ".html.tmp", html, sizeof(html));
	o = m->common;
	vf_fleet_appliance_options(&o, a, html);
	/* the monitor keeps every appliance's state in its own directory */
	o.state = state;
	int rc = vf_run(&o, &out);
	fflush(NULL);
	if (write(fd, &out, sizeof(out)) != (ssize_t)sizeof(out))
		_exit(2);
	_exit(rc);
}

static const struct pc_fleet_appliance *
entry(const struct pc_fleet *fl, const char *name)
{
	for (size_t i = 0; i < fl->n; i++)
		if (strcmp(fl->a[i].name, name) == 0)
			return &fl->a[i];
	return NULL;
}

/* The next request: 1, 0 when the monitor is gone, -1 on nothing yet. fd: the pipe passed. */
static int
receive(struct launch_req *r, int *fd)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = r, .iov_len = sizeof(*r) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl)
	};

	*fd = -1;
	ssize_t n = recvmsg(MON_LAUNCH_FD, &msg, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? -1 : 0;
	if (n == 0)
		return 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(c), sizeof(int));
	if (n != (ssize_t)sizeof(*r)) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -1;
	}
	r->name[sizeof(r->name) - 1] = '\0';
	return 1;
}

static void
answer(int32_t v)
{
	if (send(MON_LAUNCH_FD, &v, sizeof(v), MSG_NOSIGNAL) < 0)
		_exit(2);
}

static pid_t tracked[LAUNCH_TRACKED];

static void
reap(bool block)
{
	pid_t pid;

	while ((pid = waitpid(-1, NULL, block ? 0 : WNOHANG)) > 0)
		for (size_t i = 0; i < LAUNCH_TRACKED; i++)
			if (tracked[i] == pid) {
				tracked[i] = 0;
				break;
			}
}

/* Kills pid if it is a pull in flight; 0, or -1 when it is none. */
static int
drop(pid_t pid)
{
	for (size_t i = 0; i < LAUNCH_TRACKED; i++)
		if (pid > 0 && tracked[i] == pid)
			return kill(pid, SIGKILL);
	return -1;
}

static void
track(pid_t pid)
{
	for (size_t i = 0; i < LAUNCH_TRACKED; i++)
		if (tracked[i] == 0) {
			tracked[i] = pid;
			return;
		}
}

static void
launch(struct mon *m, const char *name, int fd, pid_t self)
{
	const struct pc_fleet_appliance *a = entry(&m->fleet, name);

	if (a == NULL || fd < 0) {
		/* the pipe closes with nothing written: the monitor takes it as a pull that failed */
		if (fd >= 0)
			close(fd);
		answer(-1);
		return;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		pull(m, a, fd, self);
	close(fd);
	if (pid > 0)
		track(pid);
	answer(pid > 0 ? pid : -1);
}

int
mon_launcher_main(struct mon *m)
{
	struct sigaction sa = { .sa_handler = on_term };
	struct pc_error err;
	pid_t self = getpid();

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return 2;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (pc_fleet_load(m->fleet_file, &m->fleet, &err) < 0) {
		pc_error_print(&err, stderr);
		return 2;
	}
	while (!launcher_stopping) {
		struct pollfd p = { .fd = MON_LAUNCH_FD, .events = POLLIN };
		struct launch_req r;
		int fd;

		reap(false);
		if (poll(&p, 1, 200) <= 0)
			continue;
		int got = receive(&r, &fd);
		if (got == 0)
			break; /* the monitor is gone */
		if (got < 0)
			continue;
		if (r.op == LAUNCH_PULL) {
			launch(m, r.name, fd, self);
		} else if (r.op == LAUNCH_RELOAD) {
			struct pc_fleet fl;

			if (fd >= 0)
				close(fd);
			if (pc_fleet_load(m->fleet_file, &fl, &err) < 0) {
				mon_log("the pull launcher cannot read %s again: %s", m->fleet_file,
					err.msg);
				answer(-1);
				continue;
			}
			pc_fleet_free(&m->fleet);
			m->fleet = fl;
			answer(0);
		} else {
			if (fd >= 0)
				close(fd);
			answer(r.op == LAUNCH_DROP ? drop(r.pid) : -1);
		}
	}
	for (size_t i = 0; i < LAUNCH_TRACKED; i++)
		if (tracked[i] > 0)
			kill(tracked[i], SIGKILL);
	reap(true);
	pc_fleet_free(&m->fleet);
	return 0;
}
