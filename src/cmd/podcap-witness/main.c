/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-witness: a C2SP tlog-witness. It cosigns a checkpoint of a log it
 * is configured with only when the log's key signed it and it is proven to
 * extend the last one it cosigned, which it keeps on disk and serves to
 * monitors.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sodium.h>

#include "base/buildid.h"
#include "log/cosig.h"
#include "base/keys.h"

#include "witness.h"

#define EXIT_USAGE     2
#define DEFAULT_LISTEN "127.0.0.1:7380"

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: podcap-witness --key FILE --state DIR --log [ORIGIN=]VKEY-FILE... "
		"[--listen ADDR:PORT]\n"
		"                      [--tls-cert FILE --tls-key FILE [--client-ca FILE]]\n"
		"       podcap-witness --key FILE --print-key\n"
		"\n"
		"A C2SP tlog-witness: answers POST /add-checkpoint for the logs given, and\n"
		"cosigns (cosignature/v1) each checkpoint their key signed that is proven\n"
		"consistent with the last one it cosigned. GET /<origin hash>/checkpoint\n"
		"serves the latest checkpoint it cosigned for a log (origin hash: the hex\n"
		"SHA-256 of the log's origin).\n"
		"\n"
		"  -k, --key FILE        the witness's secret key, made by podcap-keygen; its\n"
		"                        name, the witness's name, is in every cosignature\n"
		"  -s, --state DIR       where it keeps each log's latest cosigned size and\n"
		"                        root (created 0700; one witness per directory)\n"
		"  -l, --log [ORIGIN=]FILE\n"
		"                        a log to witness: its verifier key file, and its\n"
		"                        origin (default: the key's name, as podcap's logs\n"
		"                        have it). Repeatable, up to %d logs.\n"
		"  -L, --listen ADDR:PORT  where to listen (default " DEFAULT_LISTEN "; port 0:\n"
		"                        any free port, printed at start)\n"
		"  --tls-cert FILE, --tls-key FILE\n"
		"                        serve over TLS (1.3 only) with this certificate and\n"
		"                        key (PEM)\n"
		"  --client-ca FILE      with TLS: only clients with a certificate of this CA\n"
		"                        may submit; others get 403\n"
		"  -p, --print-key       print the witness's cosigner verifier key (type 0x04),\n"
		"                        which logs and verifiers configure, and exit\n"
		"  --version             print the version and the build id (BLAKE2b-256 of\n"
		"                        this executable)\n"
		"  -h, --help            this text\n"
		"\n"
		"Exit status: 0 stopped by SIGTERM or SIGINT, 1 error, 2 usage.\n",
		WITNESS_MAX_LOGS);
}

struct options {
	const char *key, *state, *listen;
	const char *tls_cert, *tls_key, *client_ca;
	const char *logs[WITNESS_MAX_LOGS];
	size_t nlogs;
	int print_key;
};

/* Returns -1 to exit 0, 0 to go on, or an exit status. */
static int
parse_options(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "state", required_argument, NULL, 's' },
		{ "log", required_argument, NULL, 'l' },
		{ "listen", required_argument, NULL, 'L' },
		{ "print-key", no_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "tls-cert", required_argument, NULL, 'C' },
		{ "tls-key", required_argument, NULL, 'K' },
		{ "client-ca", required_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 },
	};
	struct pc_error err;
	int c;

	o->listen = DEFAULT_LISTEN;
	while ((c = getopt_long(argc, argv, "k:s:l:L:ph", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			o->key = optarg;
			break;
		case 's':
			o->state = optarg;
			break;
		case 'l':
			if (o->nlogs == WITNESS_MAX_LOGS) {
				fprintf(stderr, "podcap-witness: more than %d logs\n",
					WITNESS_MAX_LOGS);
				return EXIT_USAGE;
			}
			o->logs[o->nlogs++] = optarg;
			break;
		case 'L':
			o->listen = optarg;
			break;
		case 'p':
			o->print_key = 1;
			break;
		case 'C':
			o->tls_cert = optarg;
			break;
		case 'K':
			o->tls_key = optarg;
			break;
		case 'A':
			o->client_ca = optarg;
			break;
		case 'h':
			usage(stdout);
			return -1;
		case 'V':
			if (pc_version_print(stdout, "podcap-witness", PODCAP_VERSION, &err) == 0)
				return -1;
			fprintf(stderr, "podcap-witness: %s\n", err.msg);
			return EXIT_FAILURE;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc || o->key == NULL ||
	    (!o->print_key && (o->state == NULL || o->nlogs == 0)) ||
	    (o->tls_cert == NULL) != (o->tls_key == NULL) ||
	    (o->client_ca != NULL && o->tls_cert == NULL)) {
		usage(stderr);
		return EXIT_USAGE;
	}
	return 0;
}

/* "[ORIGIN=]FILE" into l: the key, the origin, the state on disk. */
static int
add_log(struct witness *w, const char *arg, struct pc_error *err)
{
	struct pc_witness_log *l = &w->logs[w->nlogs];
	const char *eq = strchr(arg, '='), *path = eq != NULL ? eq + 1 : arg;
	size_t i;

	memset(l, 0, sizeof(*l));
	if (pc_verifier_key_load(path, &l->key, err) != 0)
		return -1;
	if (eq == NULL) {
		strcpy(l->origin, l->key.name);
	} else {
		if (eq == arg || (size_t)(eq - arg) >= sizeof(l->origin) ||
		    memchr(arg, '\n', (size_t)(eq - arg)) != NULL)
			return pc_error_set(err, "--log %s: bad origin", arg);
		memcpy(l->origin, arg, (size_t)(eq - arg));
	}
	for (i = 0; i < w->nlogs; i++)
		if (strcmp(w->logs[i].origin, l->origin) == 0)
			return pc_error_set(err, "--log %s: origin \"%s\" given twice", arg,
					    l->origin);
	if (witness_state_load(w, l, &w->served[w->nlogs], err) != 0)
		return -1;
	w->nlogs++;
	return 0;
}

static int
print_key(const struct pc_signer_key *k)
{
	struct pc_verifier_key vk;
	char line[512];

	pc_cosig_vkey_of(k, &vk);
	if (pc_cosig_vkey_format(&vk, line, sizeof(line)) != 0)
		return EXIT_FAILURE;
	printf("%s\n", line);
	return 0;
}

/* Serves until SIGTERM or SIGINT. */
static int
run(struct witness *w, const char *listen)
{
	struct witness_server *s;
	struct pc_verifier_key vk;
	struct pc_error err;
	char line[512];
	sigset_t set;
	size_t i;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	s = witness_serve(w, listen, &err);
	if (s == NULL) {
		fprintf(stderr, "podcap-witness: %s\n", err.msg);
		return EXIT_FAILURE;
	}
	pc_cosig_vkey_of(w->key, &vk);
	pc_cosig_vkey_format(&vk, line, sizeof(line));
	for (i = 0; i < w->nlogs; i++)
		fprintf(stderr, "podcap-witness: log %s at size %llu\n", w->logs[i].origin,
			(unsigned long long)w->logs[i].size);
	fprintf(stderr, "podcap-witness: listening on port %u as %s\n",
		(unsigned)witness_server_port(s), line);
	sigwait(&set, &sig);
	fprintf(stderr, "podcap-witness: stopping on signal %d\n", sig);
	witness_server_stop(s);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct witness w;
	struct options o = { 0 };
	struct pc_error err;
	size_t i;
	int rc;

	rc = parse_options(argc, argv, &o);
	if (rc != 0)
		return rc < 0 ? 0 : rc;
	if (sodium_init() < 0) {
		fprintf(stderr, "podcap-witness: libsodium failed to initialise\n");
		return EXIT_FAILURE;
	}
	w.key = pc_signer_key_load(o.key, &err);
	if (w.key == NULL) {
		fprintf(stderr, "podcap-witness: %s\n", err.msg);
		return EXIT_FAILURE;
	}
	if (o.print_key) {
		rc = print_key(w.key);
		goto out;
	}
	if (o.tls_cert != NULL) {
		w.tls = pc_tls_load_files(o.tls_cert, o.tls_key, o.client_ca, &err);
		if (w.tls == NULL) {
			fprintf(stderr, "podcap-witness: %s\n", err.msg);
			rc = EXIT_USAGE;
			goto out;
		}
	}
	rc = EXIT_FAILURE;
	pthread_mutex_init(&w.lock, NULL);
	if (witness_state_open(&w, o.state, &err) != 0)
		goto fail;
	for (i = 0; i < o.nlogs; i++)
		if (add_log(&w, o.logs[i], &err) != 0)
			goto fail;
	rc = run(&w, o.listen);
	goto out;
fail:
	fprintf(stderr, "podcap-witness: %s\n", err.msg);
out:
	pc_tls_put(w.tls);
	pc_signer_key_free(w.key);
	return rc;
}
