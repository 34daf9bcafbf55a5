/* terret-version-macros.h: symbol visibility and availability
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <glib.h>

/* The library is built with hidden visibility; only symbols marked here
 * are exported, so everything else can change without an ABI break. */
#ifndef _TERRET_EXTERN
#define _TERRET_EXTERN __attribute__((visibility ("default"))) extern
#endif

#define TERRET_AVAILABLE_IN_ALL _TERRET_EXTERN
#define TERRET_AVAILABLE_IN_0_1 _TERRET_EXTERN
#define TERRET_AVAILABLE_IN_0_2 _TERRET_EXTERN
#define TERRET_AVAILABLE_IN_0_3 _TERRET_EXTERN
