/* terret-error.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-error.h"

G_DEFINE_QUARK (terret-exec-error-quark, terret_exec_error)
