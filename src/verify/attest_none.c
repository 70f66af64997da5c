/* SPDX-License-Identifier: BSD-3-Clause */
/* The verifier built without libcrypto or tpm2-tss's marshalling: no --attest. */
#include "attest.h"

#include "verify_impl.h"

int
pc_verify_attest_available(void)
{
	return 0;
}

int
pc_verify_set_attest(struct pc_verify *v, const struct pc_attest_policy *p, struct pc_error *err)
{
	(void)v, (void)p;
	return pc_error_set(err,
			    "this podcap-verify was built without attestation "
			    "(libcrypto and tpm2-tss's libtss2-mu)");
}

int
pc_verify_attest_summary(const struct pc_verify *v, struct pc_verify_attest_summary *s)
{
	(void)v, (void)s;
	return -1;
}

void
pcv_attest_run(struct pc_verify *v)
{
	(void)v;
}

void
pcv_attest_window(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	(void)v, (void)index, (void)r;
}

void
pcv_attest_record(struct pc_verify *v, uint64_t index, const struct pc_record *r)
{
	(void)v, (void)index, (void)r;
}

void
pcv_attest_after(struct pc_verify *v)
{
	(void)v;
}

void
pcv_attest_finish(struct pc_verify *v)
{
	(void)v;
}

void
pcv_attest_free(struct pc_verify *v)
{
	(void)v;
}
