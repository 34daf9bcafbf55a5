/* terret-error.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-error.h"

/**
 * terret_exec_error_quark:
 *
 * Gets the quark of the %TERRET_EXEC_ERROR error domain; use the macro.
 *
 * Returns: the error domain
 *
 * Since: 0.1
 */
G_DEFINE_QUARK (terret-exec-error-quark, terret_exec_error)
