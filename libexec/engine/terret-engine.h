/* terret-engine.h: what every engine owns, whichever way it runs commands
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <gio/gio.h>

#include "terret-far-side.h"
#include "terret-launcher.h"
#include "terret-request.h"
#include "terret-result.h"
#include "terret-shell-channel.h"

G_BEGIN_DECLS

#define TERRET_TYPE_ENGINE (terret_engine_get_type ())

TERRET_AVAILABLE_IN_0_3
G_DECLARE_DERIVABLE_TYPE (TerretEngine, terret_engine, TERRET, ENGINE, GObject)

/**
 * TerretEngineClass:
 * @parent_class: the parent class
 * @get_capabilities: what the backend offers; the default is the mode's
 *   (see [vfunc@Terret.SessionExecutor.get_capabilities] and
 *   [vfunc@Terret.CommandExecutor.get_capabilities]).
 * @check_available: find out whether the backend can work on this host;
 *   called by g_initable_init() after the configuration was applied. The
 *   default checks, in %TERRET_ENGINE_MODE_ONESHOT, that the shell
 *   setting names a program in `PATH`.
 * @describe_containment: what [method@Terret.Executor.dup_containment]
 *   says; the default describes the local launcher and the sandbox
 *   settings.
 * @get_far_side: where the shells or commands run when not on this host,
 *   or %NULL for here (see [vfunc@Terret.SessionExecutor.get_far_side]).
 * @create_channel: in %TERRET_ENGINE_MODE_SESSION, the channel of a new
 *   session (see [vfunc@Terret.SessionExecutor.create_channel]).
 * @prepare_spawn: in %TERRET_ENGINE_MODE_SESSION, what a new shell starts
 *   with (see [vfunc@Terret.SessionExecutor.prepare_spawn]).
 * @explain_outcome: complete a run's or a poll's outcome, in either mode
 *   (see [vfunc@Terret.SessionExecutor.explain_outcome]; @channel is
 *   %NULL in %TERRET_ENGINE_MODE_ONESHOT). The default passes it on.
 * @prepare_run: in %TERRET_ENGINE_MODE_ONESHOT, what one run starts (see
 *   [vfunc@Terret.CommandExecutor.prepare_run]); the default appends
 *   the shell's words with [method@Terret.Engine.append_shell_command].
 * @run_again: a run of @request failed before anything ran, with @error:
 *   whether to start it again, the backend having changed what its runs
 *   start on (a far side found without the launcher, now reached another
 *   way). Asked twice at most per run; %NULL (the default) means never.
 *
 * The virtual methods of [class@Terret.Engine]. A backend derives from
 * [class@Terret.SessionExecutor] or [class@Terret.CommandExecutor]; one
 * that serves both modes under one name derives from this class and
 * chooses its mode with [method@Terret.Engine.set_mode].
 *
 * Since: 0.3
 */
struct _TerretEngineClass
{
  GObjectClass parent_class;

  TerretCapabilities  (*get_capabilities)     (TerretEngine        *self);
  gboolean            (*check_available)      (TerretEngine        *self,
                                               GCancellable        *cancellable,
                                               GError             **error);
  char               *(*describe_containment) (TerretEngine        *self);
  TerretFarSide      *(*get_far_side)         (TerretEngine        *self,
                                               GError             **error);
  TerretShellChannel *(*create_channel)       (TerretEngine        *self,
                                               const char          *session_key,
                                               GError             **error);
  gboolean            (*prepare_spawn)        (TerretEngine        *self,
                                               const char          *session_key,
                                               TerretShellChannel  *channel,
                                               TerretLauncher      *launcher,
                                               double              *handshake_timeout,
                                               GError             **error);
  TerretResult       *(*explain_outcome)      (TerretEngine        *self,
                                               const char          *session_key,
                                               TerretShellChannel  *channel,
                                               gboolean             polled,
                                               TerretResult        *result,
                                               GError              *failure,
                                               GError             **error);
  gboolean            (*prepare_run)          (TerretEngine        *self,
                                               TerretRequest       *request,
                                               TerretLauncher      *launcher,
                                               GPtrArray           *argv,
                                               GError             **error);
  gboolean            (*run_again)            (TerretEngine        *self,
                                               TerretRequest       *request,
                                               const GError        *error);

  /*< private >*/
  gpointer _reserved[7];
};

TERRET_AVAILABLE_IN_0_3
void             terret_engine_set_mode             (TerretEngine      *self,
                                                     TerretEngineMode   mode);
TERRET_AVAILABLE_IN_0_3
TerretEngineMode terret_engine_get_mode             (TerretEngine      *self);
TERRET_AVAILABLE_IN_0_3
void             terret_engine_get_shared_setting   (TerretEngine      *self,
                                                     const char        *name,
                                                     GValue            *value);
TERRET_AVAILABLE_IN_0_3
gboolean         terret_engine_set_shared_setting   (TerretEngine      *self,
                                                     const char        *name,
                                                     const GValue      *value);
TERRET_AVAILABLE_IN_0_3
char           **terret_engine_dup_environ          (TerretEngine      *self,
                                                     TerretRequest     *request,
                                                     gboolean           inherit,
                                                     GError           **error);
TERRET_AVAILABLE_IN_0_3
gboolean         terret_engine_append_shell_command (TerretEngine      *self,
                                                     TerretRequest     *request,
                                                     TerretLauncher    *launcher,
                                                     int                target_fd,
                                                     GPtrArray         *argv,
                                                     GError           **error);

G_END_DECLS
