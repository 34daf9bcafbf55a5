/* terret-error.h: the error domain for "nothing ran"
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <glib.h>

#include "terret-version-macros.h"

G_BEGIN_DECLS

/**
 * TERRET_EXEC_ERROR:
 *
 * The error domain of terret-exec. An error in this domain means no
 * command ran; a command that ran, whatever its outcome, is a
 * [class@Terret.Result].
 *
 * Since: 0.1
 */
#define TERRET_EXEC_ERROR (terret_exec_error_quark ())

/**
 * TerretExecError:
 * @TERRET_EXEC_ERROR_BUSY: the session is already running a command; the
 *   new one was refused, not queued
 * @TERRET_EXEC_ERROR_UNAVAILABLE: no shell could be started, or it did not
 *   answer its start-up handshake
 * @TERRET_EXEC_ERROR_NO_SHELL: this executor has no shell to run anything
 *   in; the message says what setup is missing
 * @TERRET_EXEC_ERROR_FAILED: the command could not be spawned
 * @TERRET_EXEC_ERROR_UNKNOWN_BACKEND: no backend has the requested name
 * @TERRET_EXEC_ERROR_INVALID_CONFIG: a setting or configuration value is
 *   wrong; the message names where it came from and what is allowed
 * @TERRET_EXEC_ERROR_INVALID_REQUEST: the request itself is malformed (no
 *   command, a cwd that does not exist, ...)
 * @TERRET_EXEC_ERROR_NOT_SUPPORTED: the backend does not offer the
 *   operation; see [method@Terret.Executor.get_capabilities]
 * @TERRET_EXEC_ERROR_NO_LAUNCHER: the far side runs commands, but the
 *   launcher could not be put in place there or could not run there (a
 *   read-only filesystem, a `noexec` mount); only for a far side given a
 *   probe ([method@Terret.FarSide.set_probe]), whose backend handles it
 *   (since 0.2)
 *
 * Error codes in the %TERRET_EXEC_ERROR domain. Cancellation is reported
 * as %G_IO_ERROR_CANCELLED, as everywhere in GIO.
 *
 * Since: 0.1
 */
typedef enum {
  TERRET_EXEC_ERROR_BUSY,
  TERRET_EXEC_ERROR_UNAVAILABLE,
  TERRET_EXEC_ERROR_NO_SHELL,
  TERRET_EXEC_ERROR_FAILED,
  TERRET_EXEC_ERROR_UNKNOWN_BACKEND,
  TERRET_EXEC_ERROR_INVALID_CONFIG,
  TERRET_EXEC_ERROR_INVALID_REQUEST,
  TERRET_EXEC_ERROR_NOT_SUPPORTED,
  TERRET_EXEC_ERROR_NO_LAUNCHER,
} TerretExecError;

TERRET_AVAILABLE_IN_0_1
GQuark terret_exec_error_quark (void);

TERRET_AVAILABLE_IN_0_3
gboolean terret_exec_error_set_invalid_setting (GError     **error,
                                                const char  *setting,
                                                const char  *value,
                                                const char  *why);

G_END_DECLS
