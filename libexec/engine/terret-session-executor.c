/* terret-session-executor.c: the base of a persistent-session backend: an
 * engine in session mode, with its class's hooks typed for it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-engine-private.h"
#include "terret-error.h"
#include "terret-session-executor.h"

/**
 * TerretSessionExecutor:
 *
 * The base of every backend that keeps one persistent bash per session
 * key, so that `cd` and `export` persist from one run to the next as in a
 * terminal.
 *
 * It is a [class@Terret.Engine] in %TERRET_ENGINE_MODE_SESSION, and owns
 * everything but the transport: the table of sessions and the engine of
 * each (framing, end marker, output caps, timeouts, restart after the
 * shell ended, detached commands), the common settings
 * ([property@Terret.SessionExecutor:timeout],
 * [property@Terret.SessionExecutor:max-output],
 * [property@Terret.SessionExecutor:cwd],
 * [property@Terret.SessionExecutor:env],
 * [property@Terret.SessionExecutor:shell],
 * [property@Terret.SessionExecutor:handshake-timeout],
 * [property@Terret.SessionExecutor:interrupt-grace]), busy sessions,
 * closing and disposal. A subclass supplies only
 * [vfunc@Terret.SessionExecutor.create_channel], the
 * [class@Terret.ShellChannel] that carries one shell (a local
 * pseudo-terminal, an `ssh -tt` client), and adds its own settings as
 * properties.
 *
 * Settings are taken when they are used: a shell starts with the settings
 * of that moment (its shell, working directory and environment), a run
 * with those of its start (its default timeout, its output cap); a
 * changed setting never reaches a running command.
 *
 * Every process of the executor runs under a launcher process of its own
 * (see [class@Terret.Process]): disposing the executor closes every
 * session, so no shell, and nothing a shell started, outlives it.
 *
 * There is deliberately no cap on the number of sessions: a key is chosen
 * by the host, not by the commands, so the count is bounded by the
 * callers the host chose to run.
 *
 * A subclass in a backend module is an ordinary dynamic type:
 *
 * ```c
 * G_DEFINE_DYNAMIC_TYPE_EXTENDED (MyExecutor, my_executor,
 *                                 TERRET_TYPE_SESSION_EXECUTOR,
 *                                 G_TYPE_FLAG_FINAL, {})
 * ```
 *
 * It customizes the base through the class's virtual methods, never by
 * implementing [iface@Terret.Executor] or [iface@Gio.Initable] again: a
 * module is loaded more than once in a process (scanned, then used), and
 * an interface added a second time to a registered type is refused.
 *
 * Since: 0.1
 */

G_DEFINE_ABSTRACT_TYPE (TerretSessionExecutor, terret_session_executor, TERRET_TYPE_ENGINE)

#define KLASS(self) TERRET_SESSION_EXECUTOR_GET_CLASS (self)

/* The engine's hooks, handed to this class's own. */

static TerretShellChannel *
engine_create_channel (TerretEngine  *engine,
                       const char    *session_key,
                       GError       **error)
{
  TerretSessionExecutor *self = TERRET_SESSION_EXECUTOR (engine);

  if (KLASS (self)->create_channel == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "The %s backend does not implement create_channel", G_OBJECT_TYPE_NAME (self));
      return NULL;
    }
  return KLASS (self)->create_channel (self, session_key, error);
}

static TerretCapabilities
engine_get_capabilities (TerretEngine *engine)
{
  return KLASS (engine)->get_capabilities (TERRET_SESSION_EXECUTOR (engine));
}

static gboolean
engine_check_available (TerretEngine  *engine,
                        GCancellable  *cancellable,
                        GError       **error)
{
  if (KLASS (engine)->check_available == NULL)
    return TRUE;
  return KLASS (engine)->check_available (TERRET_SESSION_EXECUTOR (engine), cancellable, error);
}

static gboolean
engine_prepare_spawn (TerretEngine        *engine,
                      const char          *session_key,
                      TerretShellChannel  *channel,
                      TerretLauncher      *launcher,
                      double              *handshake_timeout,
                      GError             **error)
{
  if (KLASS (engine)->prepare_spawn == NULL)
    return TRUE;
  return KLASS (engine)->prepare_spawn (TERRET_SESSION_EXECUTOR (engine), session_key, channel,
                                        launcher, handshake_timeout, error);
}

static TerretResult *
engine_explain_outcome (TerretEngine        *engine,
                        const char          *session_key,
                        TerretShellChannel  *channel,
                        gboolean             polled,
                        TerretResult        *result,
                        GError              *failure,
                        GError             **error)
{
  return KLASS (engine)->explain_outcome (TERRET_SESSION_EXECUTOR (engine), session_key, channel,
                                          polled, result, failure, error);
}

static char *
engine_describe_containment (TerretEngine *engine)
{
  return KLASS (engine)->describe_containment (TERRET_SESSION_EXECUTOR (engine));
}

static TerretFarSide *
engine_get_far_side (TerretEngine  *engine,
                     GError       **error)
{
  if (KLASS (engine)->get_far_side == NULL)
    return NULL;
  return KLASS (engine)->get_far_side (TERRET_SESSION_EXECUTOR (engine), error);
}

/* This class's defaults: the engine's. */

static TerretCapabilities
terret_session_executor_real_get_capabilities (TerretSessionExecutor *self)
{
  return TERRET_ENGINE_CLASS (terret_session_executor_parent_class)->get_capabilities (TERRET_ENGINE (self));
}

static char *
terret_session_executor_real_describe_containment (TerretSessionExecutor *self)
{
  return TERRET_ENGINE_CLASS (terret_session_executor_parent_class)->describe_containment (TERRET_ENGINE (self));
}

static TerretResult *
terret_session_executor_real_explain_outcome (TerretSessionExecutor  *self,
                                              const char             *session_key,
                                              TerretShellChannel     *channel,
                                              gboolean                polled,
                                              TerretResult           *result,
                                              GError                 *failure,
                                              GError                **error)
{
  return TERRET_ENGINE_CLASS (terret_session_executor_parent_class)->explain_outcome (TERRET_ENGINE (self), session_key, channel, polled, result, failure, error);
}

/**
 * terret_session_executor_get_n_sessions:
 * @self: a session executor
 *
 * Counts the sessions the executor holds: one per key that has run and
 * was not closed since, whether or not its shell is running now.
 *
 * Returns: the number of sessions
 *
 * Since: 0.1
 */
guint
terret_session_executor_get_n_sessions (TerretSessionExecutor *self)
{
  g_return_val_if_fail (TERRET_IS_SESSION_EXECUTOR (self), 0);

  return _terret_engine_session_strategy.count (_terret_engine_get_strategy (TERRET_ENGINE (self)));
}

/**
 * terret_session_executor_dup_environ:
 * @self: a session executor
 * @inherit: whether to start from the host's environment
 * @error: return location for a #GError
 *
 * Builds the environment a new session's shell starts with under the
 * current settings: the host's (with @inherit), then the defaults for a
 * host with nobody at the terminal (`TERM=dumb`, `PAGER=cat`,
 * `GIT_PAGER=cat`, `MANPAGER=cat`, `SYSTEMD_PAGER=cat`, `GH_PAGER=cat`,
 * `NO_COLOR=1`), then the env setting, which can change any of them.
 * `HISTFILE` is always set empty, so the shell never reads or writes the
 * user's history file. For a remote backend's
 * [vfunc@Terret.SessionExecutor.prepare_spawn], without @inherit. The
 * same as [method@Terret.Engine.dup_environ] without a request.
 *
 * Returns: (transfer full) (array zero-terminated=1): the environment, or
 *   %NULL with %TERRET_EXEC_ERROR_INVALID_CONFIG when an entry of the env
 *   setting is not `VARIABLE=value`
 *
 * Since: 0.2
 */
char **
terret_session_executor_dup_environ (TerretSessionExecutor  *self,
                                     gboolean                inherit,
                                     GError                **error)
{
  g_return_val_if_fail (TERRET_IS_SESSION_EXECUTOR (self), NULL);

  return terret_engine_dup_environ (TERRET_ENGINE (self), NULL, inherit, error);
}

static void
terret_session_executor_class_init (TerretSessionExecutorClass *klass)
{
  TerretEngineClass *engine_class = TERRET_ENGINE_CLASS (klass);

  engine_class->get_capabilities = engine_get_capabilities;
  engine_class->check_available = engine_check_available;
  engine_class->describe_containment = engine_describe_containment;
  engine_class->get_far_side = engine_get_far_side;
  engine_class->create_channel = engine_create_channel;
  engine_class->prepare_spawn = engine_prepare_spawn;
  engine_class->explain_outcome = engine_explain_outcome;

  klass->get_capabilities = terret_session_executor_real_get_capabilities;
  klass->describe_containment = terret_session_executor_real_describe_containment;
  klass->explain_outcome = terret_session_executor_real_explain_outcome;

  /* The settings both engines share, and their docs, come from one table
   * (settings/terret-common-settings.c). */
  G_OBJECT_CLASS (klass)->get_property = _terret_engine_get_property;
  G_OBJECT_CLASS (klass)->set_property = _terret_engine_set_property;
  _terret_settings_install (G_OBJECT_CLASS (klass), TERRET_ENGINE_SESSION);
}

static void
terret_session_executor_init (TerretSessionExecutor *self)
{
  terret_engine_set_mode (TERRET_ENGINE (self), TERRET_ENGINE_MODE_SESSION);
}
