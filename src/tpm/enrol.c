/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The enrolment file (docs/attestation.md): what an auditor keeps of an
 * appliance's TPM. YAML, so that a person can read it and an attestation
 * policy can quote it; binary structures are base64 of the TPM's own
 * marshalled form.
 */
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "base/hex.h"
#include "enrol.h"

static size_t
put_b64(char *out, size_t max, const char *key, const uint8_t *bin, size_t len)
{
	size_t need =
	    strlen(key) + 2 + sodium_base64_ENCODED_LEN(len, sodium_base64_VARIANT_ORIGINAL);
	if (need + 1 > max)
		return 0;
	int n = snprintf(out, max, "%s: ", key);
	sodium_bin2base64(out + n, max - (size_t)n, bin, len, sodium_base64_VARIANT_ORIGINAL);
	n += (int)strlen(out + n);
	out[n++] = '\n';
	out[n] = '\0';
	return (size_t)n;
}

long
pc_enrol_format(const struct pc_enrolment *e, char *out, size_t max, struct pc_error *err)
{
	char name[2 * PC_TPM_NAME_MAX + 1], pem[PC_TPM_PEM_MAX];
	size_t off = 0, n;

	if (pc_tpm_ak_pem(&e->ak, pem, err) != 0)
		return -1;
	pc_hex(e->ak.name, e->ak.name_len, name);
	n = (size_t)snprintf(out, max,
			     "# podcap enrolment: this appliance's TPM attestation key\n"
			     "enrolment: 1\n"
			     "ak-name: %s\n",
			     name);
	if (n >= max)
		goto full;
	off = n;
	if ((n = put_b64(out + off, max - off, "ak-public", e->ak.pub, e->ak.pub_len)) == 0)
		goto full;
	off += n;
	n = (size_t)snprintf(out + off, max - off, "ak-pem: |\n");
	if (n >= max - off)
		goto full;
	off += n;
	for (const char *line = pem; *line != '\0';) {
		const char *nl = strchr(line, '\n');
		n = (size_t)snprintf(out + off, max - off, "  %.*s\n", (int)(nl - line), line);
		if (n >= max - off)
			goto full;
		off += n;
		line = nl + 1;
	}
	if ((n = put_b64(out + off, max - off, "ek-public", e->ek.pub, e->ek.pub_len)) == 0)
		goto full;
	off += n;
	if (e->ek_cert_len > 0) {
		n = put_b64(out + off, max - off, "ek-certificate", e->ek_cert, e->ek_cert_len);
		if (n == 0)
			goto full;
		off += n;
	}
	return (long)off;
full:
	return pc_error_set(err, "the enrolment does not fit in %zu bytes", max);
}

int
pc_enrol_read(struct pc_tpm *tpm, struct pc_enrolment *e, struct pc_error *err)
{
	ESYS_TR ak, ek;

	memset(e, 0, sizeof(*e));
	if (pc_tpm_ak_load(tpm, &ak, &e->ak, err) != 0)
		return -1;
	pc_tpm_flush(tpm, &ak);
	if (pc_tpm_ek_load(tpm, &ek, &e->ek, err) != 0)
		return -1;
	pc_tpm_flush(tpm, &ek);
	long n = pc_tpm_ek_cert(tpm, e->ek_cert, sizeof(e->ek_cert), err);
	if (n < 0)
		return -1;
	e->ek_cert_len = (size_t)n;
	return 0;
}
