/* terret-session-executor.h: a persistent-session backend minus its channel
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <gio/gio.h>

#include "terret-shell-channel.h"
#include "terret-shell-session.h"
#include "terret-types.h"
#include "terret-version-macros.h"

G_BEGIN_DECLS

/**
 * TERRET_SESSION_EXECUTOR_DEFAULT_TIMEOUT:
 *
 * Seconds a command may run by default when its request names no
 * timeout: two minutes.
 *
 * Since: 0.1
 */
#define TERRET_SESSION_EXECUTOR_DEFAULT_TIMEOUT 120.0

/**
 * TERRET_SESSION_EXECUTOR_DEFAULT_SHELL:
 *
 * The shell a session runs by default, looked up in `PATH` where it
 * starts.
 *
 * Since: 0.1
 */
#define TERRET_SESSION_EXECUTOR_DEFAULT_SHELL "bash"

#define TERRET_TYPE_SESSION_EXECUTOR (terret_session_executor_get_type ())

TERRET_AVAILABLE_IN_0_1
G_DECLARE_DERIVABLE_TYPE (TerretSessionExecutor, terret_session_executor, TERRET, SESSION_EXECUTOR, GObject)

/**
 * TerretSessionExecutorClass:
 * @parent_class: the parent class
 * @create_channel: create the (not yet spawned) channel that will carry
 *   the shell of the session @session_key. Called without any lock held,
 *   once per session key, when its first run arrives; the channel is
 *   spawned again whenever the session replaces a shell that ended.
 *   Required.
 * @get_capabilities: what the backend offers. The default returns
 *   %TERRET_CAPABILITY_RUNS_COMMANDS, %TERRET_CAPABILITY_PERSISTENT_SESSIONS,
 *   %TERRET_CAPABILITY_PROGRESS, %TERRET_CAPABILITY_REPORTS_CWD and
 *   %TERRET_CAPABILITY_SESSION_PID and the interactive ones
 *   (%TERRET_CAPABILITY_INPUT, %TERRET_CAPABILITY_INTERRUPT,
 *   %TERRET_CAPABILITY_POLL, %TERRET_CAPABILITY_DETACH), which the base
 *   implements over any channel; a subclass chains up and adds or
 *   removes flags.
 * @check_available: find out whether the backend can work on this host
 *   (a program in `PATH`, a device); called by g_initable_init() after
 *   the configuration was applied. A failure should be
 *   %TERRET_EXEC_ERROR_UNAVAILABLE saying what is missing. %NULL (the
 *   default) means always available.
 * @prepare_session: adjust @session before a run, after the common
 *   settings were applied to it (for instance replace its environment).
 *   Called without any lock held; an error fails the run. Optional.
 * @finish_run: complete the run of @session_key on @session: the default
 *   returns terret_shell_session_run_finish() of @result. A subclass that
 *   knows more about a failure than the session does (why a connection
 *   was lost) chains up, then rewrites the error or adds a notice to the
 *   result with terret_result_add_notice(). Called on the caller's
 *   context.
 * @finish_poll: complete a poll of @session_key on @session (the output
 *   of a command a timeout detached from, and in the end its outcome):
 *   the default returns terret_shell_session_poll_finish() of @result.
 *   A subclass that overrides @finish_run to explain how a command ended
 *   overrides this one the same way, for commands that end while
 *   detached. Called on the caller's context.
 *
 * The virtual methods of [class@Terret.SessionExecutor].
 *
 * Since: 0.1
 */
struct _TerretSessionExecutorClass
{
  GObjectClass parent_class;

  TerretShellChannel *(*create_channel)   (TerretSessionExecutor  *self,
                                           const char             *session_key,
                                           GError                **error);
  TerretCapabilities  (*get_capabilities) (TerretSessionExecutor  *self);
  gboolean            (*check_available)  (TerretSessionExecutor  *self,
                                           GCancellable           *cancellable,
                                           GError                **error);
  gboolean            (*prepare_session)  (TerretSessionExecutor  *self,
                                           const char             *session_key,
                                           TerretShellSession     *session,
                                           GError                **error);
  TerretResult       *(*finish_run)       (TerretSessionExecutor  *self,
                                           const char             *session_key,
                                           TerretShellSession     *session,
                                           GAsyncResult           *result,
                                           GError                **error);
  TerretResult       *(*finish_poll)      (TerretSessionExecutor  *self,
                                           const char             *session_key,
                                           TerretShellSession     *session,
                                           GAsyncResult           *result,
                                           GError                **error);

  /*< private >*/
  gpointer _reserved[7];
};

TERRET_AVAILABLE_IN_0_1
guint                terret_session_executor_get_n_sessions (TerretSessionExecutor *self);

G_END_DECLS
