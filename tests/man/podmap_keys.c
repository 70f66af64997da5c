/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Prints every key of the pod map as its row says, one a line:
 * "PATH DIGEST RELOAD REQUIRED MAPPING LINE", for check.py to hold
 * podcap-podmap(5) to (DIGEST always, when or never; RELOAD fixed, applied
 * or at-start; REQUIRED and MAPPING yes or no; LINE the key of its lines in
 * the canonical form, - for none).
 */
#include <stdio.h>

#include "podmap/config.h"

static const char *const digest_words[] = {
	[PC_DIGEST_UNSAID] = "unsaid",
	[PC_DIGEST_ALWAYS] = "always",
	[PC_DIGEST_UNLESS_DEFAULT] = "when",
	[PC_DIGEST_NEVER] = "never",
};

static const char *const reload_words[] = {
	[PC_RELOAD_UNSAID] = "unsaid",
	[PC_RELOAD_FIXED] = "fixed",
	[PC_RELOAD_APPLIED] = "applied",
	[PC_RELOAD_AT_START] = "at-start",
};

static void
print_key(const struct pc_config_key *k, void *arg)
{
	(void)arg;
	printf("%s %s %s %s %s %s\n", k->path, digest_words[k->digest], reload_words[k->reload],
	       k->required ? "yes" : "no", k->mapping ? "yes" : "no",
	       k->line != NULL ? k->line : "-");
}

int
main(void)
{
	pc_config_each_key(print_key, NULL);
	return 0;
}
