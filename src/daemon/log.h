/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef PODCAPD_LOG_H
#define PODCAPD_LOG_H

#include <rte_log.h>

extern int podcapd_logtype;

#define PC_LOG(level, ...) \
	rte_log(RTE_LOG_ ## level, podcapd_logtype, "podcapd: " __VA_ARGS__)

#endif /* PODCAPD_LOG_H */
