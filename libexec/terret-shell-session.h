/* terret-shell-session.h: one persistent bash over a channel
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <gio/gio.h>

#include "terret-request.h"
#include "terret-result.h"
#include "terret-shell-channel.h"
#include "terret-version-macros.h"

G_BEGIN_DECLS

/**
 * TERRET_SHELL_SESSION_DEFAULT_MAX_OUTPUT:
 *
 * The bytes of one run's output a session keeps by default: 1 MiB.
 *
 * Since: 0.1
 */
#define TERRET_SHELL_SESSION_DEFAULT_MAX_OUTPUT (G_GUINT64_CONSTANT (1) << 20)

/**
 * TERRET_SHELL_SESSION_DEFAULT_HANDSHAKE_TIMEOUT:
 *
 * Seconds a new shell has by default to answer its start-up handshake.
 *
 * Since: 0.1
 */
#define TERRET_SHELL_SESSION_DEFAULT_HANDSHAKE_TIMEOUT 10.0

/**
 * TERRET_SHELL_SESSION_DEFAULT_INTERRUPT_GRACE:
 *
 * Seconds an interrupted command may by default stay silent and running
 * before it is killed with its shell.
 *
 * Since: 0.1
 */
#define TERRET_SHELL_SESSION_DEFAULT_INTERRUPT_GRACE 2.0

#define TERRET_TYPE_SHELL_SESSION (terret_shell_session_get_type ())

TERRET_AVAILABLE_IN_0_1
G_DECLARE_FINAL_TYPE (TerretShellSession, terret_shell_session, TERRET, SHELL_SESSION, GObject)

TERRET_AVAILABLE_IN_0_1
TerretShellSession  *terret_shell_session_new                   (TerretShellChannel   *channel);
TERRET_AVAILABLE_IN_0_1
TerretShellChannel  *terret_shell_session_get_channel           (TerretShellSession   *self);
TERRET_AVAILABLE_IN_0_1
const char          *terret_shell_session_get_shell             (TerretShellSession   *self);
TERRET_AVAILABLE_IN_0_1
void                 terret_shell_session_set_shell             (TerretShellSession   *self,
                                                                 const char           *shell);
TERRET_AVAILABLE_IN_0_1
const char * const  *terret_shell_session_get_environ           (TerretShellSession   *self);
TERRET_AVAILABLE_IN_0_1
void                 terret_shell_session_set_environ           (TerretShellSession   *self,
                                                                 const char * const   *envp);
TERRET_AVAILABLE_IN_0_1
const char          *terret_shell_session_get_cwd               (TerretShellSession   *self);
TERRET_AVAILABLE_IN_0_1
void                 terret_shell_session_set_cwd               (TerretShellSession   *self,
                                                                 const char           *cwd);
TERRET_AVAILABLE_IN_0_1
guint64              terret_shell_session_get_max_output        (TerretShellSession   *self);
TERRET_AVAILABLE_IN_0_1
void                 terret_shell_session_set_max_output        (TerretShellSession   *self,
                                                                 guint64               max_output);
TERRET_AVAILABLE_IN_0_1
double               terret_shell_session_get_handshake_timeout (TerretShellSession   *self);
TERRET_AVAILABLE_IN_0_1
void                 terret_shell_session_set_handshake_timeout (TerretShellSession   *self,
                                                                 double                seconds);
TERRET_AVAILABLE_IN_0_1
double               terret_shell_session_get_interrupt_grace   (TerretShellSession   *self);
TERRET_AVAILABLE_IN_0_1
void                 terret_shell_session_set_interrupt_grace   (TerretShellSession   *self,
                                                                 double                seconds);
TERRET_AVAILABLE_IN_0_1
gboolean             terret_shell_session_is_busy               (TerretShellSession   *self);
TERRET_AVAILABLE_IN_0_1
GPid                 terret_shell_session_get_pid               (TerretShellSession   *self);
TERRET_AVAILABLE_IN_0_1
void                 terret_shell_session_run_async             (TerretShellSession   *self,
                                                                 TerretRequest        *request,
                                                                 double                timeout,
                                                                 GCancellable         *cancellable,
                                                                 GAsyncReadyCallback   callback,
                                                                 gpointer              user_data);
TERRET_AVAILABLE_IN_0_1
TerretResult        *terret_shell_session_run_finish            (TerretShellSession   *self,
                                                                 GAsyncResult         *result,
                                                                 GError              **error);
TERRET_AVAILABLE_IN_0_1
gboolean             terret_shell_session_send_input            (TerretShellSession   *self,
                                                                 GBytes               *data,
                                                                 GError              **error);
TERRET_AVAILABLE_IN_0_1
gboolean             terret_shell_session_interrupt             (TerretShellSession   *self,
                                                                 GError              **error);
TERRET_AVAILABLE_IN_0_1
void                 terret_shell_session_poll_async            (TerretShellSession   *self,
                                                                 double                wait,
                                                                 GCancellable         *cancellable,
                                                                 GAsyncReadyCallback   callback,
                                                                 gpointer              user_data);
TERRET_AVAILABLE_IN_0_1
TerretResult        *terret_shell_session_poll_finish           (TerretShellSession   *self,
                                                                 GAsyncResult         *result,
                                                                 GError              **error);
TERRET_AVAILABLE_IN_0_1
void                 terret_shell_session_close                 (TerretShellSession   *self);

TERRET_AVAILABLE_IN_0_1
char               **terret_shell_session_build_environ         (const char * const   *base,
                                                                 const char * const   *overlay,
                                                                 GError              **error);

G_END_DECLS
