/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PODCAP_VERIFY_ASSIGN_H
#define PODCAP_VERIFY_ASSIGN_H

#include "podcap/keys.h"
#include "podcap/verify.h"

/* --assignment DIR: gives v the maps the revealed seeds produce; exits 2 on bad input. */
void pcv_load_assignment(struct pc_verify *v, const char *dir, const struct pc_verifier_key *key);

#endif
