/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The id rule shared by the pod map, the records and the log's origin:
 * appliance ids, pod ids and uplink names are 1 to 63 bytes of
 * [A-Za-z0-9._-]. One rule, so that what the loader accepts is exactly
 * what a record may carry and what the verifier expects in an origin.
 */
#ifndef PODCAP_ID_H
#define PODCAP_ID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PC_ID_LEN 64   /* ids and names: [A-Za-z0-9._-], 1..63 chars, and a NUL */
#define PC_ID_RULE "1 to 63 characters of A-Z a-z 0-9 . _ -"

/* The n bytes at s (not NUL-terminated) follow the rule. */
bool pc_id_valid_bytes(const uint8_t *s, size_t n);
/* The NUL-terminated s follows the rule (a string of PC_ID_LEN bytes or more does not). */
bool pc_id_valid(const char *s);

#endif /* PODCAP_ID_H */
