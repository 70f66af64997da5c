/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-bench-serve: the verifier pull endpoint (src/http, the code
 * podcapd serves its ledger with) over several ledger directories at once,
 * each on a loopback port of its own, for the fleet benchmark: an
 * appliance per directory, as a verifier of a facility sees them.
 *
 *   podcap-bench-serve [--tls CERT KEY] --ports FILE DIR...
 *
 * Writes "PORT DIR" per directory to FILE once every server listens, then
 * serves until SIGTERM or SIGINT. With --tls every server is HTTPS with
 * that certificate and key (TLS 1.3, no client certificate asked), for
 * the endpoint-tls benchmark.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "http/http.h"
#include "http/tls.h"
#include "log/ledger.h"

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int
main(int argc, char **argv)
{
	struct pc_error err;
	struct sigaction sa = { .sa_handler = on_signal };
	struct pc_tls *tls = NULL;

	if (argc > 3 && strcmp(argv[1], "--tls") == 0) {
		if ((tls = pc_tls_load_files(argv[2], argv[3], NULL, &err)) == NULL) {
			fprintf(stderr, "podcap-bench-serve: %s\n", err.msg);
			return 1;
		}
		argv += 3;
		argc -= 3;
	}
	if (argc < 4 || strcmp(argv[1], "--ports") != 0) {
		fprintf(stderr, "usage: podcap-bench-serve [--tls CERT KEY] --ports FILE DIR...\n");
		return 2;
	}
	int n = argc - 3;
	struct pc_ledger **l = calloc((size_t)n, sizeof(*l));
	struct pc_http **h = calloc((size_t)n, sizeof(*h));
	struct pc_http_ops *ops = calloc((size_t)n, sizeof(*ops));
	if (l == NULL || h == NULL || ops == NULL)
		return 2;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[2]);
	FILE *f = fopen(tmp, "w");
	if (f == NULL) {
		perror(tmp);
		return 2;
	}
	for (int i = 0; i < n; i++) {
		if ((l[i] = pc_ledger_open_ro(argv[3 + i], &err)) == NULL) {
			fprintf(stderr, "podcap-bench-serve: %s\n", err.msg);
			return 1;
		}
		ops[i].ledger = l[i];
		ops[i].pubkey = "";
		ops[i].tls = tls;
		if ((h[i] = pc_http_start("127.0.0.1:0", &ops[i], &err)) == NULL) {
			fprintf(stderr, "podcap-bench-serve: %s\n", err.msg);
			return 1;
		}
		fprintf(f, "%u %s\n", pc_http_port(h[i]), argv[3 + i]);
	}
	pc_tls_put(tls); /* each server holds its own reference */
	if (fclose(f) != 0 || rename(tmp, argv[2]) != 0) {
		perror(argv[2]);
		return 2;
	}
	while (!stop)
		pause();
	for (int i = 0; i < n; i++) {
		pc_http_stop(h[i]);
		pc_ledger_close(l[i]);
	}
	free(ops);
	free(h);
	free(l);
	return 0;
}
