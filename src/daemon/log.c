/* SPDX-License-Identifier: BSD-3-Clause */
#include <rte_log.h>

#include "log.h"

RTE_LOG_REGISTER_DEFAULT(podcapd_logtype, INFO);
