/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The log's origin: the first line of every checkpoint and the name of the
 * key that signs them (C2SP tlog-checkpoint, signed-note). tlog-checkpoint
 * asks for a globally unique, schema-less URL; podcap builds one from a DNS
 * name the operator holds and the appliance's id, which is unique within
 * that operator's maps: <domain>[/<path>]/<appliance id>. Ledgers made
 * before origins were configurable keep podcap/<appliance id>, which is
 * unique only within one operator (docs/log-format.md, "Origins").
 */
#ifndef PODCAP_ORIGIN_H
#define PODCAP_ORIGIN_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/id.h"
#include "base/keys.h"

#define PC_ORIGIN_LEN    PC_KEY_NAME_LEN /* an origin is a key name: 1..127 bytes and a NUL */
#define PC_ORIGIN_LEGACY "podcap/"       /* podcap/<appliance id>, the origin by default */
#define PC_ORIGIN_RULE \
	"<domain>[/<path>]/<appliance id>, e.g. podcap.example.net/dc1/<appliance id>"

/*
 * An origin podcap accepts: podcap/<id>, or a DNS name with at least two
 * labels (each 1..63 of a-z 0-9 -, not starting or ending with -), then
 * path elements of [A-Za-z0-9._-], the last of which is an appliance id.
 * Writes that id to id (PC_ID_LEN bytes) when it is not NULL.
 */
int pc_origin_parse(const char *origin, char *id, struct pc_error *err);

/* The origin a pod map declares: appliance.origin, or podcap/<appliance id>. */
struct pc_config;
const char *pc_config_origin(const struct pc_config *cfg, char *buf, size_t len);

#endif /* PODCAP_ORIGIN_H */
