/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A fixed credential set on a libmicrohttpd server of its own (mhd_tls.h):
 * what podcap-witness and podcap-monitor both do with theirs.
 */
#include <stdint.h>

#include <microhttpd.h>

#include "podmap/config.h"

#include "mhd_tls.h"
#include "tls_session.h"

#define OPT(o, v, p) ((struct MHD_OptionItem){ (o), (intptr_t)(v), (p) })

/* Before the handshake: the set's credentials, and a certificate asked of the client. */
static void
notify(void *cls, struct MHD_Connection *c, void **socket_context,
       enum MHD_ConnectionNotificationCode code)
{
	const struct pc_tls *t = cls;
	const union MHD_ConnectionInfo *i;

	(void)socket_context;
	if (code != MHD_CONNECTION_NOTIFY_STARTED)
		return;
	i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (i != NULL)
		pc_tls_session_setup(t, (gnutls_session_t)i->tls_session);
}

size_t
pc_mhd_tls_options(struct pc_tls *t, struct MHD_OptionItem *o, unsigned *flags)
{
	size_t n = 0;

	if (t == NULL)
		return 0;
	*flags |= MHD_USE_TLS;
	o[n++] = OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)(uintptr_t)pc_tls_cert_pem(t));
	o[n++] = OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)(uintptr_t)pc_tls_key_pem(t));
	o[n++] = OPT(MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)(uintptr_t)pc_tls_priorities(t));
	o[n++] = OPT(MHD_OPTION_NOTIFY_CONNECTION, (uintptr_t)notify, t);
	return n;
}

const char *
pc_mhd_tls_refused(struct pc_tls *t, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i;
	struct pc_http_peer p;
	char subject[PC_SUBJECT_LEN];

	if (t == NULL)
		return NULL;
	i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (i == NULL)
		return "forbidden: no_certificate\n";
	pc_tls_session_peer(t, (gnutls_session_t)i->tls_session, &p, subject, sizeof(subject));
	switch (p.state) {
	case PC_PEER_ANYONE:
	case PC_PEER_TRUSTED:
		return NULL;
	case PC_PEER_EXPIRED:
		return "forbidden: expired_certificate\n";
	case PC_PEER_UNTRUSTED:
		return "forbidden: untrusted_certificate\n";
	case PC_PEER_NONE:
	default:
		return "forbidden: no_certificate\n";
	}
}
