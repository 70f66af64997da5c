/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * podcap-witness over TLS (--tls-cert, --tls-key, --client-ca): the
 * credential set of http/tls.h on every connection, and with a client
 * CA only logs holding one of its certificates may submit. Apart from
 * server.c, which only adds these options and asks before each request.
 */
#include <stdint.h>
#include <string.h>

#include <microhttpd.h>

#include "podmap/config.h"

#include "http/tls_session.h"
#include "witness.h"

#define OPT(o, v, p) ((struct MHD_OptionItem){ (o), (intptr_t)(v), (p) })

/* Before the handshake: the set's credentials, and a certificate asked of the client. */
static void
notify(void *cls, struct MHD_Connection *c, void **socket_context,
       enum MHD_ConnectionNotificationCode code)
{
	struct witness *w = cls;
	const union MHD_ConnectionInfo *i;

	(void)socket_context;
	if (code != MHD_CONNECTION_NOTIFY_STARTED)
		return;
	i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (i != NULL)
		pc_tls_session_setup(w->tls, (gnutls_session_t)i->tls_session);
}

size_t
witness_tls_options(struct witness *w, struct MHD_OptionItem *o, unsigned *flags)
{
	size_t n = 0;

	if (w->tls == NULL)
		return 0;
	*flags |= MHD_USE_TLS;
	o[n++] = OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)(uintptr_t)pc_tls_cert_pem(w->tls));
	o[n++] = OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)(uintptr_t)pc_tls_key_pem(w->tls));
	o[n++] = OPT(MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)(uintptr_t)pc_tls_priorities(w->tls));
	o[n++] = OPT(MHD_OPTION_NOTIFY_CONNECTION, (uintptr_t)notify, w);
	return n;
}

const char *
witness_tls_refused(struct witness *w, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *i;
	struct pc_http_peer p;
	char subject[PC_SUBJECT_LEN];

	if (w->tls == NULL)
		return NULL;
	i = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (i == NULL)
		return "forbidden: no_certificate\n";
	pc_tls_session_peer(w->tls, (gnutls_session_t)i->tls_session, &p, subject, sizeof(subject));
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
