/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-attest: the appliance's side of TPM attestation (docs/attestation.md).
 *   enroll    write the enrolment file an auditor keeps: AK, EK, EK certificate
 *   activate  recover a secret a verifier wrapped to the EK for the AK's name
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "base/buildid.h"
#include "base/bytes.h"
#include "base/fileio.h"
#include "base/hex.h"
#include "tpm/enrol.h"
#include "tpm/seal.h"
#include "tpm/tpm.h"

#define EXIT_USAGE 2
/* tpm2-tools' credential file: magic, version, TPM2B_ID_OBJECT, TPM2B_ENCRYPTED_SECRET */
#define CRED_MAGIC   0xbadcc0deu
#define CRED_VERSION 1u
#define CRED_MAX     4096

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: podcap-attest enroll --out FILE [--tcti TCTI]\n"
		"       podcap-attest activate --credential FILE --out FILE [--tcti TCTI]\n"
		"       podcap-attest seal --key KEY --pcrs LIST --out FILE [--tcti TCTI]\n"
		"\n"
		"The appliance's side of TPM 2.0 attestation.\n"
		"  enroll    creates the attestation key (AK) in the TPM and writes the\n"
		"            enrolment file the auditor keeps: the AK's TPM2B_PUBLIC, name and\n"
		"            PEM public key, the EK's TPM2B_PUBLIC and, when the TPM has one,\n"
		"            the EK certificate. The file is never overwritten.\n"
		"  activate  TPM2_ActivateCredential: recovers the secret an auditor wrapped\n"
		"            to this TPM's EK for the AK's name (tpm2_makecredential's file)\n"
		"            and writes it to --out (mode 0600), proving AK and EK share a TPM\n"
		"  seal      seals the Ed25519 secret key of podcap-keygen's KEY to the current\n"
		"            values of the SHA-256 PCRs in LIST (0,7,10): --out is the\n"
		"            sealed-key file to name in appliance.signing_key; only this TPM,\n"
		"            with those PCR values again, can unseal it\n"
		"\n"
		"  -t, --tcti TCTI        the TPM, as tpm2-tss names it (device:/dev/tpmrm0,\n"
		"                         swtpm:host=127.0.0.1,port=2321; default: tpm2-tss's)\n"
		"  -o, --out FILE         where to write\n"
		"  -c, --credential FILE  the wrapped credential (activate)\n"
		"  -k, --key FILE         the secret key to seal (seal)\n"
		"  -p, --pcrs LIST        the PCRs to seal to, 0 to 23 (seal)\n"
		"  --version              print the version and the build id (BLAKE2b-256 of\n"
		"                         this executable)\n"
		"  -h, --help             this text\n"
		"\n"
		"Exit status: 0 ok, 1 error, 2 usage.\n");
}

static int
write_new(const char *path, const void *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return -1;
	if (pc_pwrite_all(fd, data, len, 0) != 0 || fsync(fd) != 0) {
		int saved = errno;
		close(fd);
		unlink(path);
		errno = saved;
		return -1;
	}
	return close(fd);
}

static int
enroll(struct pc_tpm *tpm, const char *out)
{
	static struct pc_enrolment e;
	static char text[4 * PC_TPM_CERT_MAX];
	struct pc_error err;

	if (pc_enrol_read(tpm, &e, &err) != 0)
		goto fail;
	long n = pc_enrol_format(&e, text, sizeof(text), &err);
	if (n < 0)
		goto fail;
	if (write_new(out, text, (size_t)n, 0644) != 0) {
		fprintf(stderr, "podcap-attest: cannot write %s: %s\n", out, strerror(errno));
		return EXIT_FAILURE;
	}
	char name[2 * PC_TPM_NAME_MAX + 1];
	pc_hex(e.ak.name, e.ak.name_len, name);
	printf("ak-name %s\nek-certificate %s\n", name, e.ek_cert_len > 0 ? "present" : "absent");
	return 0;
fail:
	fprintf(stderr, "podcap-attest: %s\n", err.msg);
	return EXIT_FAILURE;
}

/* tpm2_makecredential's file, split into its two TPM2B structures. */
static int
split_credential(const uint8_t *buf, size_t len, size_t *blob_len, struct pc_error *err)
{
	if (len < 10 || pc_load_be32(buf) != CRED_MAGIC || pc_load_be32(buf + 4) != CRED_VERSION)
		return pc_error_set(err, "not a credential file (magic 0x%08x, version 1)",
				    CRED_MAGIC);
	*blob_len = 2 + (size_t)pc_load_be16(buf + 8);
	if (8 + *blob_len + 2 > len)
		return pc_error_set(err, "the credential file ends inside its TPM2B_ID_OBJECT");
	return 0;
}

static int
activate(struct pc_tpm *tpm, const char *in, const char *out)
{
	uint8_t buf[CRED_MAX], secret[sizeof(TPMU_HA)];
	struct pc_error err;
	size_t blob_len = 0;

	int fd = open(in, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "podcap-attest: cannot open %s: %s\n", in, strerror(errno));
		return EXIT_FAILURE;
	}
	ssize_t len = read(fd, buf, sizeof(buf));
	close(fd);
	if (len < 0 || (size_t)len == sizeof(buf)) {
		fprintf(stderr, "podcap-attest: cannot read %s (at most %zu bytes)\n", in,
			sizeof(buf) - 1);
		return EXIT_FAILURE;
	}
	if (split_credential(buf, (size_t)len, &blob_len, &err) != 0)
		goto fail;
	long n = pc_tpm_activate(tpm, buf + 8, blob_len, buf + 8 + blob_len,
				 (size_t)len - 8 - blob_len, secret, sizeof(secret), &err);
	if (n < 0)
		goto fail;
	int r = write_new(out, secret, (size_t)n, 0600);
	sodium_memzero(secret, sizeof(secret));
	if (r != 0) {
		fprintf(stderr, "podcap-attest: cannot write %s: %s\n", out, strerror(errno));
		return EXIT_FAILURE;
	}
	return 0;
fail:
	fprintf(stderr, "podcap-attest: %s: %s\n", in, err.msg);
	return EXIT_FAILURE;
}

/* "0,7,10" as a mask of PCRs 0..23; 0 when it is not one. */
static uint32_t
pcr_list(const char *s)
{
	uint32_t mask = 0;

	while (*s != '\0') {
		char *end;
		unsigned long i = strtoul(s, &end, 10);
		if (end == s || i > 23 || (mask & (1u << i)) || (*end != ',' && *end != '\0'))
			return 0;
		mask |= 1u << i;
		s = *end == ',' ? end + 1 : end;
	}
	return mask;
}

static int
seal_key(struct pc_tpm *tpm, const char *key, uint32_t mask, const char *out)
{
	struct pc_error err;
	struct pc_signer_key *k = pc_signer_key_load(key, &err);

	if (k == NULL || pc_sealed_key_write(tpm, k, mask, out, &err) != 0) {
		fprintf(stderr, "podcap-attest: %s\n", err.msg);
		if (k != NULL)
			pc_signer_key_free(k);
		return EXIT_FAILURE;
	}
	printf("sealed %s (key id %08x)\n", k->name, k->id);
	pc_signer_key_free(k);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tcti", required_argument, NULL, 't' },
		{ "out", required_argument, NULL, 'o' },
		{ "credential", required_argument, NULL, 'c' },
		{ "key", required_argument, NULL, 'k' },
		{ "pcrs", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *tcti = NULL, *out = NULL, *cred = NULL, *key = NULL, *pcrs = NULL;
	struct pc_error err;
	struct pc_tpm tpm;
	int c;

	while ((c = getopt_long(argc, argv, "t:o:c:k:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			tcti = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'c':
			cred = optarg;
			break;
		case 'k':
			key = optarg;
			break;
		case 'p':
			pcrs = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			if (pc_version_print(stdout, "podcap-attest", PODCAP_VERSION, &err) == 0)
				return 0;
			fprintf(stderr, "podcap-attest: %s\n", err.msg);
			return EXIT_FAILURE;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc || out == NULL || out[0] == '\0')
		goto bad;
	const char *cmd = argv[optind];
	int is_enroll = strcmp(cmd, "enroll") == 0, is_seal = strcmp(cmd, "seal") == 0;
	int is_activate = strcmp(cmd, "activate") == 0;
	uint32_t mask = pcrs != NULL ? pcr_list(pcrs) : 0;
	if ((is_enroll && (cred || key || pcrs)) || (is_activate && (!cred || key || pcrs)) ||
	    (is_seal && (cred || !key || mask == 0)) || !(is_enroll || is_seal || is_activate))
		goto bad;
	if (sodium_init() < 0) {
		fprintf(stderr, "podcap-attest: libsodium failed to initialise\n");
		return EXIT_FAILURE;
	}
	if (pc_tpm_open(&tpm, tcti, &err) != 0) {
		fprintf(stderr, "podcap-attest: %s\n", err.msg);
		return EXIT_FAILURE;
	}
	int r = is_enroll ? enroll(&tpm, out)
	    : is_seal     ? seal_key(&tpm, key, mask, out)
			  : activate(&tpm, cred, out);
	pc_tpm_close(&tpm);
	return r;
bad:
	usage(stderr);
	return EXIT_USAGE;
}
