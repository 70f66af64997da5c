/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-bench-sigrate: the peer of the verify-speed benchmark. How many
 * Ed25519 signatures libsodium's crypto_sign_verify_detached checks per
 * second on this machine, over a message the size of a checkpoint body,
 * and how fast its SHA-256 hashes (the leaf hash of every record); built
 * with libcrypto, how fast libcrypto's does too (what podcap-verify hashes
 * with, src/log/sha256_libcrypto.c).
 *
 *   podcap-bench-sigrate [--seconds S] [--record-bytes N]
 *
 * Prints one JSON object. Each loop runs for S seconds (default 2) of wall
 * time; the rates are per second of wall time and per second of this
 * process's CPU time (which leaves out the time it waited for a core on a
 * shared machine).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double
cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Signature checks per second of wall time, and per CPU second in *cpu_rate;
 * every check must succeed, or exit 1.
 */
static double
verify_rate(double seconds, unsigned long *n_out, double *cpu_rate)
{
	uint8_t pk[crypto_sign_PUBLICKEYBYTES], sk[crypto_sign_SECRETKEYBYTES];
	uint8_t sig[crypto_sign_BYTES];
	/* a checkpoint body: origin, size, root, as docs/log-format.md has it */
	static const char body[] = "podcap/bench-appliance-01\n525601\n"
	    "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n";
	unsigned long n = 0;

	crypto_sign_keypair(pk, sk);
	crypto_sign_detached(sig, NULL, (const uint8_t *)body, sizeof(body) - 1, sk);
	double t0 = now(), c0 = cpu_now(), t;
	do {
		for (int i = 0; i < 64; i++, n++)
			if (crypto_sign_verify_detached(sig, (const uint8_t *)body, sizeof(body) - 1,
							pk) != 0) {
				fprintf(stderr, "podcap-bench-sigrate: a good signature failed\n");
				exit(1);
			}
		t = now() - t0;
	} while (t < seconds);
	*cpu_rate = (double)n / (cpu_now() - c0);
	*n_out = n;
	return (double)n / t;
}

/* Bytes per second (and per CPU second) through crypto_hash_sha256 in messages of len bytes. */
static double
sha256_rate(double seconds, size_t len, double *cpu_rate)
{
	uint8_t *buf = calloc(1, len), h[crypto_hash_sha256_BYTES];
	unsigned long n = 0;

	if (buf == NULL)
		exit(1);
	randombytes_buf(buf, len);
	double t0 = now(), c0 = cpu_now(), t;
	do {
		for (int i = 0; i < 16; i++, n++) {
			crypto_hash_sha256(h, buf, len);
			buf[0] ^= h[0];
		}
		t = now() - t0;
	} while (t < seconds);
	*cpu_rate = (double)n * (double)len / (cpu_now() - c0);
	free(buf);
	return (double)n * (double)len / t;
}

#ifdef PC_HAVE_LIBCRYPTO
#include <openssl/evp.h>

/* The same through libcrypto's EVP interface, as podcap-verify calls it. */
static double
sha256_rate_libcrypto(double seconds, size_t len, double *cpu_rate)
{
	uint8_t *buf = calloc(1, len), h[32];
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	unsigned long n = 0;
	unsigned int hl;

	if (buf == NULL || ctx == NULL)
		exit(1);
	randombytes_buf(buf, len);
	double t0 = now(), c0 = cpu_now(), t;
	do {
		for (int i = 0; i < 16; i++, n++) {
			if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1 ||
			    EVP_DigestUpdate(ctx, buf, len) != 1 ||
			    EVP_DigestFinal_ex(ctx, h, &hl) != 1)
				exit(1);
			buf[0] ^= h[0];
		}
		t = now() - t0;
	} while (t < seconds);
	*cpu_rate = (double)n * (double)len / (cpu_now() - c0);
	EVP_MD_CTX_free(ctx);
	free(buf);
	return (double)n * (double)len / t;
}
#endif

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "record-bytes", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	double seconds = 2;
	size_t record = 16384;
	unsigned long n;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			seconds = atof(optarg);
			break;
		case 'r':
			record = strtoul(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: podcap-bench-sigrate [--seconds S] [--record-bytes N]\n");
			return 2;
		}
	}
	if (seconds <= 0 || record == 0 || sodium_init() < 0)
		return 2;
	double vc, hc;
	double v = verify_rate(seconds, &n, &vc);
	double h = sha256_rate(seconds, record, &hc);
	printf("{\"verify_per_s\": %.1f, \"verify_per_cpu_s\": %.1f, \"verifies\": %lu, "
	       "\"sha256_bytes_per_s\": %.0f, \"sha256_bytes_per_cpu_s\": %.0f, "
	       "\"sha256_message_bytes\": %zu, \"libsodium\": \"%s\"",
	       v, vc, n, h, hc, record, sodium_version_string());
#ifdef PC_HAVE_LIBCRYPTO
	double oc, o = sha256_rate_libcrypto(seconds, record, &oc);
	printf(
	    ", \"sha256_libcrypto_bytes_per_s\": %.0f, \"sha256_libcrypto_bytes_per_cpu_s\": %.0f",
	    o, oc);
#endif
	printf("}\n");
	return 0;
}
