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

/**
 * terret_exec_error_set_invalid_setting: (skip)
 * @error: return location for a #GError
 * @setting: the setting's name
 * @value: the value it was given
 * @why: what is wrong with it, such as `not a host name`
 *
 * Sets %TERRET_EXEC_ERROR_INVALID_CONFIG in the words every backend
 * uses for a setting whose value cannot be right: `invalid value “VALUE”
 * for SETTING: WHY`. For a backend's own checks of its settings.
 *
 * Returns: %FALSE, for a check to return
 *
 * Since: 0.3
 */
gboolean
terret_exec_error_set_invalid_setting (GError     **error,
                                       const char  *setting,
                                       const char  *value,
                                       const char  *why)
{
  g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
               "invalid value “%s” for %s: %s", value, setting, why);
  return FALSE;
}
