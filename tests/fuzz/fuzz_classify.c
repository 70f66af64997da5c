/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target for the frame classifier (src/shape/classify.h):
 * any bytes as a frame, in both directions. tools/fuzz classify SECONDS
 * runs it; the unit suite replays tests/fuzz/classify/.
 *
 * Besides memory errors under the sanitizers, it aborts on results that
 * break the classify.h contract.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shape/classify.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The tag stack of a frame whose headers were read: the tags between the MACs and l3_offset. */
static void
check_vlan(const uint8_t *data, const struct pc_frame_key *key)
{
	unsigned tags = (key->l3_offset - 14u) / 4;
	uint16_t tci0 = 0, tci1 = 0;

	/* the first tag's TCI is at 14, the second's at 18: there only when those tags are */
	if (tags >= 1)
		tci0 = (uint16_t)(data[14] << 8 | data[15]);
	if (tags >= 2)
		tci1 = (uint16_t)(data[18] << 8 | data[19]);
	if (tags == 0 && key->vlan != PC_VLAN_NONE)
		abort();
	if (tags > 2 && key->vlan != PC_VLAN_OTHER)
		abort();
	if (tags == 1 && key->vlan != PC_VLAN_OTHER && key->vlan != pc_vlan_one(tci0))
		abort();
	if (tags == 2 && key->vlan != PC_VLAN_OTHER && key->vlan != pc_vlan_two(tci0, tci1))
		abort();
	/* an inner tag is 802.1Q's, always */
	if (tags >= 1 && key->vlan != PC_VLAN_OTHER &&
	    (data[key->l3_offset - 6] != 0x81 || data[key->l3_offset - 5] != 0x00))
		abort();
}

static void
check(const uint8_t *data, size_t size, const struct pc_frame_key *key,
    enum pc_class cls)
{
	static const uint8_t zero[16];

	switch (cls) {
	case PC_CLASS_IPV4:
		if (memcmp(key->addr + 4, zero, 12) != 0)
			abort();
		/* fall through */
	case PC_CLASS_IPV6:
	case PC_CLASS_OTHER:
	case PC_CLASS_LLDP:
		if (size < 14 || key->l3_offset < 14 || key->l3_offset > size ||
		    (key->l3_offset - 14) % 4 != 0 || key->l3_offset > 30)
			abort();
		if (key->ethertype != (data[key->l3_offset - 2] << 8 |
		    data[key->l3_offset - 1]))
			abort();
		if ((cls == PC_CLASS_OTHER || cls == PC_CLASS_LLDP) &&
		    memcmp(key->addr, zero, 16) != 0)
			abort();
		if ((cls == PC_CLASS_LLDP) != (key->ethertype == 0x88cc))
			abort();
		break;
	case PC_CLASS_MALFORMED:
		if (memcmp(key->addr, zero, 16) != 0)
			abort();
		return;
	default:
		abort();
	}
	check_vlan(data, key);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pc_frame_key key;
	enum pc_class cls;

	if (size > UINT32_MAX)
		return 0;
	memset(&key, 0xa5, sizeof(key));
	cls = pc_classify(data, (uint32_t)size, PC_DIR_UP, &key);
	check(data, size, &key, cls);
	memset(&key, 0xa5, sizeof(key));
	cls = pc_classify(data, (uint32_t)size, PC_DIR_DOWN, &key);
	check(data, size, &key, cls);
	return 0;
}
