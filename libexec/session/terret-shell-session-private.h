/* terret-shell-session-private.h: one persistent bash over a channel
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

#include "terret-run-plan-private.h"
#include "terret-session-info.h"
#include "terret-shell-channel.h"

G_BEGIN_DECLS

#define TERRET_TYPE_SHELL_SESSION (terret_shell_session_get_type ())

G_DECLARE_FINAL_TYPE (TerretShellSession, terret_shell_session, TERRET, SHELL_SESSION, GObject)

/* How a session gets its shell started: the executor fills in a launcher
 * from @settings (the shell's environment, working directory, limits)
 * and may adjust the handshake's budget. Called without locks held, on
 * the thread starting the run. */
typedef TerretLauncher *(*TerretShellStartFunc) (TerretShellSession  *session,
                                                 TerretSettings      *settings,
                                                 double              *handshake_timeout,
                                                 gpointer             user_data,
                                                 GError             **error);

TerretShellSession *_terret_shell_session_new         (TerretShellChannel   *channel,
                                                       const char           *key,
                                                       TerretShellStartFunc  start,
                                                       gpointer              start_data);
TerretShellChannel *_terret_shell_session_get_channel (TerretShellSession   *self);
const char         *_terret_shell_session_get_key     (TerretShellSession   *self);
GPid                _terret_shell_session_get_pid     (TerretShellSession   *self);
TerretSessionInfo  *_terret_shell_session_describe    (TerretShellSession   *self,
                                                       gboolean              with_pid);
void                _terret_shell_session_run_async   (TerretShellSession   *self,
                                                       TerretRequest        *request,
                                                       TerretRunPlan        *plan,
                                                       GCancellable         *cancellable,
                                                       GAsyncReadyCallback   callback,
                                                       gpointer              user_data);
TerretResult       *_terret_shell_session_run_finish  (TerretShellSession   *self,
                                                       GAsyncResult         *result,
                                                       GError              **error);
gboolean            _terret_shell_session_send_input  (TerretShellSession   *self,
                                                       GBytes               *data,
                                                       GError              **error);
gboolean            _terret_shell_session_interrupt   (TerretShellSession   *self,
                                                       GError              **error);
void                _terret_shell_session_poll_async  (TerretShellSession   *self,
                                                       double                wait,
                                                       GCancellable         *cancellable,
                                                       GAsyncReadyCallback   callback,
                                                       gpointer              user_data);
TerretResult       *_terret_shell_session_poll_finish (TerretShellSession   *self,
                                                       GAsyncResult         *result,
                                                       GError              **error);
void                _terret_shell_session_close       (TerretShellSession   *self,
                                                       GPtrArray            *stopped);

/* terret-shell-farewell.c */
void                _terret_shell_farewell            (TerretShellChannel   *channel,
                                                       double                stop_grace);

G_END_DECLS
