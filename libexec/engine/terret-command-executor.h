/* terret-command-executor.h: a backend that runs one process per command
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
#include "terret-request.h"

G_BEGIN_DECLS

#define TERRET_TYPE_COMMAND_EXECUTOR (terret_command_executor_get_type ())

TERRET_AVAILABLE_IN_0_2
G_DECLARE_DERIVABLE_TYPE (TerretCommandExecutor, terret_command_executor, TERRET, COMMAND_EXECUTOR, TerretEngine)

/**
 * TerretCommandExecutorClass:
 * @parent_class: the parent class (a [class@Terret.Engine] in
 *   %TERRET_ENGINE_MODE_ONESHOT since 0.3)
 * @get_capabilities: what the backend offers. The default returns
 *   %TERRET_CAPABILITY_RUNS_COMMANDS, %TERRET_CAPABILITY_SEPARATE_STDERR,
 *   %TERRET_CAPABILITY_REQUEST_CWD, %TERRET_CAPABILITY_REQUEST_ENV,
 *   %TERRET_CAPABILITY_PROGRESS, %TERRET_CAPABILITY_INTERRUPT,
 *   %TERRET_CAPABILITY_POLL and %TERRET_CAPABILITY_DETACH.
 * @check_available: find out whether the backend can work on this host;
 *   called by g_initable_init() after the configuration was applied. The
 *   default checks that the shell setting names a program in `PATH`.
 * @prepare_run: fill in what one run of @request starts: @argv (empty on
 *   entry) and @launcher, whose standard output and error the engine has
 *   already taken and whose environment and working directory it has set
 *   from the settings and the request. The default appends
 *   `SHELL -c COMMAND`; a long command, past what one argument may hold,
 *   is read by the shell from descriptor 3 instead. A backend that runs
 *   the command elsewhere (in a container) wraps that in its client's
 *   command line, moving the environment and directory into it. Called on
 *   the caller's thread; an error fails the run.
 * @get_far_side: where the commands run when not on this host (in a
 *   container), or %NULL for here: called on the caller's thread for each
 *   run, with the settings of that moment; the runs of one far side share
 *   one connection to it. A command there starts with the far side's
 *   environment plus the env setting and the request's (not the host's),
 *   in a working directory that must exist there; the sandbox settings,
 *   which hold on this host, are refused. An error fails the run.
 * @describe_containment: what [method@Terret.Executor.dup_containment] says;
 *   the default describes the local launcher and the sandbox settings. A
 *   subclass whose commands run elsewhere says what holds there.
 *
 * The virtual methods of [class@Terret.CommandExecutor].
 *
 * Since: 0.2
 */
struct _TerretCommandExecutorClass
{
  TerretEngineClass parent_class;

  TerretCapabilities  (*get_capabilities) (TerretCommandExecutor  *self);
  gboolean            (*check_available)  (TerretCommandExecutor  *self,
                                           GCancellable           *cancellable,
                                           GError                **error);
  gboolean            (*prepare_run)      (TerretCommandExecutor  *self,
                                           TerretRequest          *request,
                                           TerretLauncher         *launcher,
                                           GPtrArray              *argv,
                                           GError                **error);
  TerretFarSide      *(*get_far_side)     (TerretCommandExecutor  *self,
                                           GError                **error);
  char               *(*describe_containment) (TerretCommandExecutor *self);

  /*< private >*/
  gpointer _reserved[6];
};

TERRET_AVAILABLE_IN_0_2
gboolean terret_command_executor_append_shell_command (TerretCommandExecutor  *self,
                                                       TerretRequest          *request,
                                                       TerretLauncher         *launcher,
                                                       GPtrArray              *argv,
                                                       GError                **error);

TERRET_AVAILABLE_IN_0_2
char   **terret_command_executor_dup_environ          (TerretCommandExecutor  *self,
                                                       TerretRequest          *request,
                                                       gboolean                inherit,
                                                       GError                **error);

G_END_DECLS
