/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Merkle tree over the records (verify/tree.c), as other checks read
 * it: its root so far.
 */
#ifndef PODCAP_VERIFY_TREE_H
#define PODCAP_VERIFY_TREE_H

#include <stdint.h>

#include "log/merkle.h"

struct pc_verify;

/* The root of the records fed so far (of the saved edge's and those after it when resumed). */
void pcv_tree_root(const struct pc_verify *v, uint8_t root[PC_HASH_LEN]);

#endif /* PODCAP_VERIFY_TREE_H */
