/* terret-command-executor.c: the base of a backend that runs one process
 * per command: an engine in one-shot mode, with its class's hooks typed
 * for it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-command-executor.h"
#include "terret-engine-private.h"

/**
 * TerretCommandExecutor:
 *
 * The base of every backend that runs each command as a process of its
 * own, `bash -c COMMAND` by default: nothing persists from one run to the
 * next, so runs never wait for each other and any number of them may be
 * in flight on one main context.
 *
 * It is a [class@Terret.Engine] in %TERRET_ENGINE_MODE_ONESHOT, and owns
 * the engine: stdout and stderr read apart through pipes, kept as a
 * bounded, line-aligned tail each and streamed line by line to the
 * request's progress callback; stdin is `/dev/null`; a timeout, a
 * cancellation or a closed session kills everything the command started,
 * whichever session or process group it moved to, since every process
 * runs under the executor's launcher process (see
 * [class@Terret.Process]); a timeout that detaches leaves the command
 * running for polls of its session key, and an interrupt sends SIGINT to
 * its group, then kills it after `interrupt-grace`. Its settings are
 * [property@Terret.CommandExecutor:timeout],
 * [property@Terret.CommandExecutor:max-output],
 * [property@Terret.CommandExecutor:cwd],
 * [property@Terret.CommandExecutor:env],
 * [property@Terret.CommandExecutor:shell],
 * [property@Terret.CommandExecutor:interrupt-grace] and
 * [property@Terret.CommandExecutor:drain-grace].
 *
 * A subclass changes what a run starts with
 * [vfunc@Terret.CommandExecutor.prepare_run]: the `oneshot` backend is
 * the base as it is; a container backend wraps the command in its
 * engine's exec.
 *
 * A command whose timeout detaches needs its session key to itself,
 * which keeps "the command of a session" unambiguous for polls and
 * interrupts.
 *
 * Since: 0.2
 */

G_DEFINE_ABSTRACT_TYPE (TerretCommandExecutor, terret_command_executor, TERRET_TYPE_ENGINE)

#define KLASS(self) TERRET_COMMAND_EXECUTOR_GET_CLASS (self)

/* The engine's hooks, handed to this class's own. */

static TerretCapabilities
engine_get_capabilities (TerretEngine *engine)
{
  return KLASS (engine)->get_capabilities (TERRET_COMMAND_EXECUTOR (engine));
}

static gboolean
engine_check_available (TerretEngine  *engine,
                        GCancellable  *cancellable,
                        GError       **error)
{
  return KLASS (engine)->check_available (TERRET_COMMAND_EXECUTOR (engine), cancellable, error);
}

static gboolean
engine_prepare_run (TerretEngine    *engine,
                    TerretRequest   *request,
                    TerretLauncher  *launcher,
                    GPtrArray       *argv,
                    GError         **error)
{
  return KLASS (engine)->prepare_run (TERRET_COMMAND_EXECUTOR (engine), request, launcher, argv,
                                      error);
}

static char *
engine_describe_containment (TerretEngine *engine)
{
  return KLASS (engine)->describe_containment (TERRET_COMMAND_EXECUTOR (engine));
}

static TerretFarSide *
engine_get_far_side (TerretEngine  *engine,
                     GError       **error)
{
  if (KLASS (engine)->get_far_side == NULL)
    return NULL;
  return KLASS (engine)->get_far_side (TERRET_COMMAND_EXECUTOR (engine), error);
}

/* This class's defaults: the engine's. */

#define PARENT TERRET_ENGINE_CLASS (terret_command_executor_parent_class)

static TerretCapabilities
terret_command_executor_real_get_capabilities (TerretCommandExecutor *self)
{
  return PARENT->get_capabilities (TERRET_ENGINE (self));
}

static gboolean
terret_command_executor_real_check_available (TerretCommandExecutor  *self,
                                              GCancellable           *cancellable,
                                              GError                **error)
{
  return PARENT->check_available (TERRET_ENGINE (self), cancellable, error);
}

static gboolean
terret_command_executor_real_prepare_run (TerretCommandExecutor  *self,
                                          TerretRequest          *request,
                                          TerretLauncher         *launcher,
                                          GPtrArray              *argv,
                                          GError                **error)
{
  return PARENT->prepare_run (TERRET_ENGINE (self), request, launcher, argv, error);
}

static char *
terret_command_executor_real_describe_containment (TerretCommandExecutor *self)
{
  return PARENT->describe_containment (TERRET_ENGINE (self));
}

/**
 * terret_command_executor_append_shell_command:
 * @self: a command executor
 * @request: the run's request
 * @launcher: the run's launcher
 * @argv: (element-type filename): the argument vector being built; the
 *   shell's words are appended
 * @error: return location for a #GError
 *
 * Appends `SHELL -c COMMAND` for @request to @argv, the shell being the
 * shell setting. A command longer than one argument may be is read by the
 * shell from descriptor 3, given to @launcher, instead. What the default
 * [vfunc@Terret.CommandExecutor.prepare_run] does; a subclass that wraps
 * the shell in a client calls it after the client's own words. The same
 * as [method@Terret.Engine.append_shell_command] with descriptor 3.
 *
 * Returns: %TRUE on success
 *
 * Since: 0.2
 */
gboolean
terret_command_executor_append_shell_command (TerretCommandExecutor  *self,
                                              TerretRequest          *request,
                                              TerretLauncher         *launcher,
                                              GPtrArray              *argv,
                                              GError                **error)
{
  g_return_val_if_fail (TERRET_IS_COMMAND_EXECUTOR (self), FALSE);

  return terret_engine_append_shell_command (TERRET_ENGINE (self), request, launcher, 3, argv,
                                             error);
}

/**
 * terret_command_executor_dup_environ:
 * @self: a command executor
 * @request: the run's request
 * @inherit: whether to start from the host's environment
 * @error: return location for a #GError
 *
 * Builds the environment a run of @request starts with under the current
 * settings: the host's (with @inherit), then the env setting, then the
 * request's own entries. For a [vfunc@Terret.CommandExecutor.prepare_run]
 * that runs the command elsewhere through a client, without @inherit:
 * the host's environment means nothing there, and the client, which
 * runs here, keeps it. The same as [method@Terret.Engine.dup_environ].
 *
 * Returns: (transfer full) (array zero-terminated=1): the environment, or
 *   %NULL with %TERRET_EXEC_ERROR_INVALID_CONFIG (an entry of the env
 *   setting) or %TERRET_EXEC_ERROR_INVALID_REQUEST (the request's) when an
 *   entry is not `VARIABLE=value`
 *
 * Since: 0.2
 */
char **
terret_command_executor_dup_environ (TerretCommandExecutor  *self,
                                     TerretRequest          *request,
                                     gboolean                inherit,
                                     GError                **error)
{
  g_return_val_if_fail (TERRET_IS_COMMAND_EXECUTOR (self), NULL);
  g_return_val_if_fail (TERRET_IS_REQUEST (request), NULL);

  return terret_engine_dup_environ (TERRET_ENGINE (self), request, inherit, error);
}

static void
terret_command_executor_class_init (TerretCommandExecutorClass *klass)
{
  TerretEngineClass *engine_class = TERRET_ENGINE_CLASS (klass);

  engine_class->get_capabilities = engine_get_capabilities;
  engine_class->check_available = engine_check_available;
  engine_class->describe_containment = engine_describe_containment;
  engine_class->get_far_side = engine_get_far_side;
  engine_class->prepare_run = engine_prepare_run;

  klass->get_capabilities = terret_command_executor_real_get_capabilities;
  klass->check_available = terret_command_executor_real_check_available;
  klass->prepare_run = terret_command_executor_real_prepare_run;
  klass->describe_containment = terret_command_executor_real_describe_containment;

  /* The settings both engines share, and their docs, come from one table
   * (settings/terret-common-settings.c). */
  G_OBJECT_CLASS (klass)->get_property = _terret_engine_get_property;
  G_OBJECT_CLASS (klass)->set_property = _terret_engine_set_property;
  _terret_settings_install (G_OBJECT_CLASS (klass), TERRET_ENGINE_COMMAND);
}

static void
terret_command_executor_init (TerretCommandExecutor *self)
{
  terret_engine_set_mode (TERRET_ENGINE (self), TERRET_ENGINE_MODE_ONESHOT);
}
