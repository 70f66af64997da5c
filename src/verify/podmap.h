/* SPDX-License-Identifier: BSD-3-Clause */
/* The declared pod maps (verify/podmap.c), as other checks read them. */
#ifndef PODCAP_VERIFY_PODMAP_H
#define PODCAP_VERIFY_PODMAP_H

#include "podmap/config.h"

struct pc_verify;

/* The declared map in force, or NULL when none is (none declared, or the log names another). */
const struct pc_config *pcv_podmap_inforce(const struct pc_verify *v);

#endif /* PODCAP_VERIFY_PODMAP_H */
