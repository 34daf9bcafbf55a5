/* terret-session-executor.h: a persistent-session backend minus its channel
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <gio/gio.h>

#include "terret-engine.h"
#include "terret-far-side.h"
#include "terret-launcher.h"
#include "terret-result.h"
#include "terret-shell-channel.h"

G_BEGIN_DECLS

#define TERRET_TYPE_SESSION_EXECUTOR (terret_session_executor_get_type ())

TERRET_AVAILABLE_IN_0_1
G_DECLARE_DERIVABLE_TYPE (TerretSessionExecutor, terret_session_executor, TERRET, SESSION_EXECUTOR, TerretEngine)

/**
 * TerretSessionExecutorClass:
 * @parent_class: the parent class (a [class@Terret.Engine] in
 *   %TERRET_ENGINE_MODE_SESSION since 0.3)
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
 * @prepare_spawn: adjust what a new shell of @session_key starts with,
 *   just before @channel spawns it: @launcher holds the shell's
 *   environment (the host's, the session defaults such as `TERM=dumb`,
 *   then the env setting) and the cwd setting, @handshake_timeout the
 *   seconds the new shell has to answer. A remote backend replaces the
 *   environment with [method@Terret.SessionExecutor.dup_environ] (the
 *   host's means nothing there) and adds its connection's time to the
 *   handshake. Called without any lock held; an error fails the run.
 *   Optional.
 * @explain_outcome: complete a run (or, with @polled, a poll of a command
 *   a timeout detached from) of @session_key: the engine's outcome is
 *   @result or @failure, exactly one of them, both transferred. The
 *   default passes it on. A subclass that knows more than the engine
 *   does about how a shell ended or failed to start (why a connection was
 *   lost) rewrites the error, or adds to the result with
 *   terret_result_add_notice(). Called on the caller's context.
 * @describe_containment: what [method@Terret.Executor.dup_containment] says;
 *   the default describes the local launcher, which holds for a shell
 *   spawned here. A subclass whose shell runs elsewhere says what holds
 *   there. Since: 0.2
 * @get_far_side: where the shells run when not on this host (in a
 *   container), or %NULL for here: called, without any lock held, each
 *   time a shell starts, with the settings of that moment; the shells of
 *   one far side share one connection to it. A shell there starts with
 *   the far side's environment plus the session defaults and the env
 *   setting (not the host's), in the cwd setting there; the sandbox
 *   settings, which hold on this host, are refused. An error fails the
 *   run. Since: 0.2
 *
 * The virtual methods of [class@Terret.SessionExecutor].
 *
 * Since: 0.1
 */
struct _TerretSessionExecutorClass
{
  TerretEngineClass parent_class;

  TerretShellChannel *(*create_channel)   (TerretSessionExecutor  *self,
                                           const char             *session_key,
                                           GError                **error);
  TerretCapabilities  (*get_capabilities) (TerretSessionExecutor  *self);
  gboolean            (*check_available)  (TerretSessionExecutor  *self,
                                           GCancellable           *cancellable,
                                           GError                **error);
  gboolean            (*prepare_spawn)    (TerretSessionExecutor  *self,
                                           const char             *session_key,
                                           TerretShellChannel     *channel,
                                           TerretLauncher         *launcher,
                                           double                 *handshake_timeout,
                                           GError                **error);
  TerretResult       *(*explain_outcome)  (TerretSessionExecutor  *self,
                                           const char             *session_key,
                                           TerretShellChannel     *channel,
                                           gboolean                polled,
                                           TerretResult           *result,
                                           GError                 *failure,
                                           GError                **error);
  char               *(*describe_containment) (TerretSessionExecutor *self);
  TerretFarSide      *(*get_far_side)     (TerretSessionExecutor  *self,
                                           GError                **error);

  /*< private >*/
  gpointer _reserved[6];
};

TERRET_AVAILABLE_IN_0_1
guint                terret_session_executor_get_n_sessions (TerretSessionExecutor  *self);
TERRET_AVAILABLE_IN_0_2
char               **terret_session_executor_dup_environ    (TerretSessionExecutor  *self,
                                                             gboolean                inherit,
                                                             GError                **error);

G_END_DECLS
