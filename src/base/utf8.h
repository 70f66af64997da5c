/* SPDX-License-Identifier: BSD-3-Clause */
/* UTF-8 decoding for the C2SP text formats (key names, notes). Internal. */
#ifndef PODCAP_UTF8_H
#define PODCAP_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* One UTF-8 sequence at s (n > 0 bytes left): its length and code point, or 0 if malformed. */
size_t pc_utf8_next(const unsigned char *s, size_t n, uint32_t *cp);

/* Unicode White_Space (what C2SP's "no Unicode spaces" excludes), or a control character. */
int pc_utf8_space_or_control(uint32_t c);

#endif /* PODCAP_UTF8_H */
