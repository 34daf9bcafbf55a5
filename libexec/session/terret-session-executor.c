/* terret-session-executor.c: one persistent shell per session key, over
 * whatever channel a subclass provides
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-common-settings-private.h"
#include "terret-error.h"
#include "terret-executor.h"
#include "terret-launcher-private.h"
#include "terret-sandbox-private.h"
#include "terret-session-info-private.h"
#include "terret-session-executor.h"
#include "terret-shell-protocol-private.h"
#include "terret-shell-session-private.h"

/**
 * TerretSessionExecutor:
 *
 * The base of every backend that keeps one persistent bash per session
 * key, so that `cd` and `export` persist from one run to the next as in a
 * terminal.
 *
 * It implements [iface@Terret.Executor] and [iface@Gio.Initable] and owns
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

typedef struct
{
  TerretSettingsStore settings;

  /* Guards the table and the links: runs may start from any thread
   * (the sync wrapper runs its own context). Never held while calling a
   * subclass or a session. */
  GMutex mutex;
  GHashTable *sessions;         /* (owned) key → TerretShellSession */
  TerretLauncherLinkPool links; /* one launcher per sandbox policy */
} TerretSessionExecutorPrivate;

static void executor_iface_init (TerretExecutorInterface *iface);
static void initable_iface_init (GInitableIface *iface);

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (TerretSessionExecutor, terret_session_executor, G_TYPE_OBJECT,
                                  G_ADD_PRIVATE (TerretSessionExecutor)
                                  G_IMPLEMENT_INTERFACE (TERRET_TYPE_EXECUTOR, executor_iface_init)
                                  G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, initable_iface_init))

/* --- Starting shells ------------------------------------------------------ */

/* The launcher a shell with @settings starts under: on the subclass's far
 * side, or inside the sandbox they ask for, if any. */
static TerretLauncherLink *
get_link (TerretSessionExecutor  *self,
          TerretSettings         *settings,
          GError                **error)
{
  TerretSessionExecutorPrivate *priv = terret_session_executor_get_instance_private (self);
  g_autoptr(TerretFarSide) far = NULL;
  g_autoptr(GError) local_error = NULL;

  if (TERRET_SESSION_EXECUTOR_GET_CLASS (self)->get_far_side != NULL &&
      (far = TERRET_SESSION_EXECUTOR_GET_CLASS (self)->get_far_side (self, &local_error)) == NULL &&
      local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  return _terret_sandbox_get_link (settings, &priv->links, far, error);
}

/* A session found no shell: what its new one starts with, from the
 * settings the run started with, adjusted by the subclass. */
static TerretLauncher *
start_shell (TerretShellSession  *session,
             TerretSettings      *settings,
             double              *handshake_timeout,
             gpointer             user_data,
             GError             **error)
{
  TerretSessionExecutor *self = user_data;
  TerretSessionExecutorClass *klass = TERRET_SESSION_EXECUTOR_GET_CLASS (self);
  g_autoptr(TerretLauncherLink) launcher_link = NULL;
  g_autoptr(TerretLauncher) launcher = NULL;

  launcher_link = get_link (self, settings, error);
  if (launcher_link == NULL)
    return NULL;

  launcher = _terret_launcher_new_for (launcher_link);
  if (!_terret_settings_prepare_launcher (settings, launcher, settings->cwd, NULL, error))
    return NULL;

  if (klass->prepare_spawn != NULL &&
      !klass->prepare_spawn (self, _terret_shell_session_get_key (session),
                             _terret_shell_session_get_channel (session), launcher,
                             handshake_timeout, error))
    return NULL;

  return g_steal_pointer (&launcher);
}

/* --- TerretExecutor --------------------------------------------------- */

static TerretCapabilities
terret_session_executor_get_capabilities (TerretExecutor *executor)
{
  TerretSessionExecutor *self = TERRET_SESSION_EXECUTOR (executor);

  return TERRET_SESSION_EXECUTOR_GET_CLASS (self)->get_capabilities (self);
}

static TerretCapabilities
terret_session_executor_real_get_capabilities (TerretSessionExecutor *self)
{
  return (TERRET_CAPABILITY_RUNS_COMMANDS |
          TERRET_CAPABILITY_PERSISTENT_SESSIONS |
          TERRET_CAPABILITY_PROGRESS |
          TERRET_CAPABILITY_REQUEST_CWD |
          TERRET_CAPABILITY_REQUEST_ENV |
          TERRET_CAPABILITY_REPORTS_CWD |
          TERRET_CAPABILITY_SESSION_PID |
          TERRET_CAPABILITY_INPUT |
          TERRET_CAPABILITY_INTERRUPT |
          TERRET_CAPABILITY_POLL |
          TERRET_CAPABILITY_DETACH |
          TERRET_CAPABILITY_CLOCKS |
          TERRET_CAPABILITY_LIST);
}

/* The session of @key: an existing one when @create is FALSE (input,
 * interrupts and polls address a command that is there, and never create
 * a session), else created with a channel from the subclass, called
 * outside the lock. */
static TerretShellSession *
get_session (TerretSessionExecutor  *self,
             const char             *key,
             gboolean                create,
             GError                **error)
{
  TerretSessionExecutorPrivate *priv = terret_session_executor_get_instance_private (self);
  TerretSessionExecutorClass *klass = TERRET_SESSION_EXECUTOR_GET_CLASS (self);
  g_autoptr(TerretShellChannel) channel = NULL;
  TerretShellSession *session;

  g_mutex_lock (&priv->mutex);
  session = g_hash_table_lookup (priv->sessions, key);
  if (session != NULL)
    g_object_ref (session);
  g_mutex_unlock (&priv->mutex);

  if (session != NULL)
    return session;

  if (!create)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "Nothing is running in session “%s”: it has no shell", key);
      return NULL;
    }

  if (klass->create_channel == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "The %s backend does not implement create_channel", G_OBJECT_TYPE_NAME (self));
      return NULL;
    }

  channel = klass->create_channel (self, key, error);
  if (channel == NULL)
    return NULL;
  g_return_val_if_fail (TERRET_IS_SHELL_CHANNEL (channel), NULL);

  /* Another thread may have created the key's session meanwhile; the
   * first one in wins and this channel, never spawned, is dropped. */
  g_mutex_lock (&priv->mutex);
  session = g_hash_table_lookup (priv->sessions, key);
  if (session == NULL)
    {
      session = _terret_shell_session_new (channel, key, start_shell, self);
      g_hash_table_insert (priv->sessions, g_strdup (key), session);
    }
  g_object_ref (session);
  g_mutex_unlock (&priv->mutex);

  return session;
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
  if (failure != NULL)
    g_propagate_error (error, failure);
  return result;
}

static void terret_session_executor_poll_async (TerretExecutor      *executor,
                                                const char          *key,
                                                double               wait,
                                                GCancellable        *cancellable,
                                                GAsyncReadyCallback  callback,
                                                gpointer             user_data);

/* The session's outcome, through the subclass's explain_outcome; the
 * task's tag tells a poll from a run. A hook that fails must say why. */
static void
outcome_done (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  TerretSessionExecutor *self = g_task_get_source_object (task);
  TerretShellSession *session = TERRET_SHELL_SESSION (object);
  gboolean polled = g_task_get_source_tag (task) == terret_session_executor_poll_async;
  GError *failure = NULL;
  GError *error = NULL;
  TerretResult *outcome, *ret;

  outcome = polled ? _terret_shell_session_poll_finish (session, result, &failure)
                   : _terret_shell_session_run_finish (session, result, &failure);
  ret = TERRET_SESSION_EXECUTOR_GET_CLASS (self)->explain_outcome (self,
                                                                   _terret_shell_session_get_key (session),
                                                                   _terret_shell_session_get_channel (session),
                                                                   polled, outcome, failure, &error);
  if (ret != NULL)
    g_task_return_pointer (task, ret, g_object_unref);
  else
    {
      if (error == NULL)
        g_set_error (&error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                     "The %s backend failed the %s without an error", G_OBJECT_TYPE_NAME (self),
                     polled ? "poll" : "run");
      g_task_return_error (task, error);
    }
}

static void
terret_session_executor_run_async (TerretExecutor      *executor,
                                   TerretRequest       *request,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  TerretSessionExecutor *self = TERRET_SESSION_EXECUTOR (executor);
  TerretSessionExecutorPrivate *priv = terret_session_executor_get_instance_private (self);
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_autoptr(TerretShellSession) session = NULL;
  g_autoptr(TerretSettings) settings = NULL;
  GError *error = NULL;

  g_task_set_source_tag (task, terret_session_executor_run_async);

  if (!_terret_protocol_check_env (terret_request_get_env (request), &error))
    {
      g_task_return_error (task, error);
      return;
    }

  session = get_session (self, terret_request_get_session (request), TRUE, &error);
  if (session == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  settings = _terret_settings_store_snapshot (&priv->settings);
  _terret_shell_session_run_async (session, request, _terret_run_plan_new (settings, request),
                                   cancellable, outcome_done, g_steal_pointer (&task));
}

static TerretResult *
terret_session_executor_run_finish (TerretExecutor  *executor,
                                    GAsyncResult    *result,
                                    GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, executor), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
terret_session_executor_close_session (TerretExecutor *executor,
                                       const char     *key)
{
  TerretSessionExecutor *self = TERRET_SESSION_EXECUTOR (executor);
  TerretSessionExecutorPrivate *priv = terret_session_executor_get_instance_private (self);
  g_autoptr(TerretShellSession) session = NULL;
  g_autofree char *stolen_key = NULL;

  g_mutex_lock (&priv->mutex);
  g_hash_table_steal_extended (priv->sessions, key, (gpointer *)&stolen_key, (gpointer *)&session);
  g_mutex_unlock (&priv->mutex);

  /* Outside the lock: the farewell takes up to a second. */
  if (session != NULL)
    _terret_shell_session_close (session);
}

static void
terret_session_executor_close_all (TerretExecutor *executor)
{
  TerretSessionExecutor *self = TERRET_SESSION_EXECUTOR (executor);
  TerretSessionExecutorPrivate *priv = terret_session_executor_get_instance_private (self);
  g_autoptr(GPtrArray) sessions = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  gpointer value;

  g_mutex_lock (&priv->mutex);
  if (priv->sessions != NULL)
    {
      g_hash_table_iter_init (&iter, priv->sessions);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        {
          g_ptr_array_add (sessions, g_object_ref (value));
          g_hash_table_iter_remove (&iter);
        }
    }
  g_mutex_unlock (&priv->mutex);

  for (guint i = 0; i < sessions->len; i++)
    _terret_shell_session_close (g_ptr_array_index (sessions, i));
}

static GPid
terret_session_executor_get_session_pid (TerretExecutor *executor,
                                         const char     *key)
{
  g_autoptr(TerretShellSession) session = get_session (TERRET_SESSION_EXECUTOR (executor), key,
                                                       FALSE, NULL);

  return session != NULL ? _terret_shell_session_get_pid (session) : 0;
}

static gboolean
terret_session_executor_send_input (TerretExecutor  *executor,
                                    const char      *key,
                                    GBytes          *data,
                                    GError         **error)
{
  g_autoptr(TerretShellSession) session = get_session (TERRET_SESSION_EXECUTOR (executor), key,
                                                       FALSE, error);

  return session != NULL && _terret_shell_session_send_input (session, data, error);
}

static gboolean
terret_session_executor_interrupt (TerretExecutor  *executor,
                                   const char      *key,
                                   GError         **error)
{
  g_autoptr(TerretShellSession) session = get_session (TERRET_SESSION_EXECUTOR (executor), key,
                                                       FALSE, error);

  return session != NULL && _terret_shell_session_interrupt (session, error);
}

static void
terret_session_executor_poll_async (TerretExecutor      *executor,
                                    const char          *key,
                                    double               wait,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  TerretSessionExecutor *self = TERRET_SESSION_EXECUTOR (executor);
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_autoptr(TerretShellSession) session = NULL;
  GError *error = NULL;

  g_task_set_source_tag (task, terret_session_executor_poll_async);

  if ((session = get_session (self, key, FALSE, &error)) == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  _terret_shell_session_poll_async (session, wait, cancellable, outcome_done,
                                    g_steal_pointer (&task));
}

/* Every session of the table, described outside the lock. */
static void
terret_session_executor_list_async (TerretExecutor      *executor,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  TerretSessionExecutor *self = TERRET_SESSION_EXECUTOR (executor);
  TerretSessionExecutorPrivate *priv = terret_session_executor_get_instance_private (self);
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_autoptr(GPtrArray) sessions = g_ptr_array_new_with_free_func (g_object_unref);
  GPtrArray *infos = g_ptr_array_new_with_free_func (g_object_unref);
  /* A subclass without session pids has none that name a process here. */
  gboolean named_pids = (terret_session_executor_get_capabilities (executor) &
                         TERRET_CAPABILITY_SESSION_PID) != 0;
  GHashTableIter iter;
  gpointer value;

  g_task_set_source_tag (task, terret_session_executor_list_async);

  g_mutex_lock (&priv->mutex);
  g_hash_table_iter_init (&iter, priv->sessions);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (sessions, g_object_ref (value));
  g_mutex_unlock (&priv->mutex);

  for (guint i = 0; i < sessions->len; i++)
    g_ptr_array_add (infos, _terret_shell_session_describe (g_ptr_array_index (sessions, i),
                                                            named_pids));
  _terret_session_infos_return (task, infos);
}

static GPtrArray *
terret_session_executor_list_finish (TerretExecutor  *executor,
                                     GAsyncResult    *result,
                                     GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, executor), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static TerretResult *
terret_session_executor_poll_finish (TerretExecutor  *executor,
                                     GAsyncResult    *result,
                                     GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, executor), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static char *
terret_session_executor_dup_containment (TerretExecutor *executor)
{
  TerretSessionExecutor *self = TERRET_SESSION_EXECUTOR (executor);

  return TERRET_SESSION_EXECUTOR_GET_CLASS (self)->describe_containment (self);
}

static char *
terret_session_executor_real_describe_containment (TerretSessionExecutor *self)
{
  TerretSessionExecutorPrivate *priv = terret_session_executor_get_instance_private (self);
  g_autoptr(TerretSettings) settings = _terret_settings_store_snapshot (&priv->settings);

  return _terret_sandbox_describe (settings);
}

static void
executor_iface_init (TerretExecutorInterface *iface)
{
  iface->dup_containment = terret_session_executor_dup_containment;
  iface->get_capabilities = terret_session_executor_get_capabilities;
  iface->run_async = terret_session_executor_run_async;
  iface->run_finish = terret_session_executor_run_finish;
  iface->close_session = terret_session_executor_close_session;
  iface->close_all = terret_session_executor_close_all;
  iface->get_session_pid = terret_session_executor_get_session_pid;
  iface->send_input = terret_session_executor_send_input;
  iface->interrupt = terret_session_executor_interrupt;
  iface->poll_async = terret_session_executor_poll_async;
  iface->poll_finish = terret_session_executor_poll_finish;
  iface->list_async = terret_session_executor_list_async;
  iface->list_finish = terret_session_executor_list_finish;
}

/* --- GInitable -------------------------------------------------------- */

static gboolean
terret_session_executor_initable_init (GInitable     *initable,
                                       GCancellable  *cancellable,
                                       GError       **error)
{
  TerretSessionExecutor *self = TERRET_SESSION_EXECUTOR (initable);
  TerretSessionExecutorClass *klass = TERRET_SESSION_EXECUTOR_GET_CLASS (self);

  if (klass->check_available == NULL)
    return TRUE;

  return klass->check_available (self, cancellable, error);
}

static void
initable_iface_init (GInitableIface *iface)
{
  iface->init = terret_session_executor_initable_init;
}

/* --- Public ----------------------------------------------------------- */

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
  TerretSessionExecutorPrivate *priv;
  guint n;

  g_return_val_if_fail (TERRET_IS_SESSION_EXECUTOR (self), 0);

  priv = terret_session_executor_get_instance_private (self);
  g_mutex_lock (&priv->mutex);
  n = g_hash_table_size (priv->sessions);
  g_mutex_unlock (&priv->mutex);

  return n;
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
 * [vfunc@Terret.SessionExecutor.prepare_spawn], without @inherit.
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
  TerretSessionExecutorPrivate *priv;
  g_autoptr(TerretSettings) settings = NULL;
  static const char * const nothing[] = { NULL };

  g_return_val_if_fail (TERRET_IS_SESSION_EXECUTOR (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  priv = terret_session_executor_get_instance_private (self);
  settings = _terret_settings_store_snapshot (&priv->settings);
  return _terret_settings_build_environ (settings, inherit ? NULL : nothing, NULL, error);
}

/* --- GObject ---------------------------------------------------------- */

static void
terret_session_executor_dispose (GObject *object)
{
  /* A persistent shell is a process the host owns: dropping it without
   * ending it would leak a shell per key for the life of the host. */
  terret_session_executor_close_all (TERRET_EXECUTOR (object));

  G_OBJECT_CLASS (terret_session_executor_parent_class)->dispose (object);
}

static void
terret_session_executor_finalize (GObject *object)
{
  TerretSessionExecutor *self = TERRET_SESSION_EXECUTOR (object);
  TerretSessionExecutorPrivate *priv = terret_session_executor_get_instance_private (self);

  g_clear_pointer (&priv->sessions, g_hash_table_unref);
  _terret_launcher_link_pool_clear (&priv->links);
  _terret_settings_store_clear (&priv->settings);
  g_mutex_clear (&priv->mutex);

  G_OBJECT_CLASS (terret_session_executor_parent_class)->finalize (object);
}

static void
terret_session_executor_get_property (GObject    *object,
                                      guint       prop_id,
                                      GValue     *value,
                                      GParamSpec *pspec)
{
  TerretSessionExecutor *self = TERRET_SESSION_EXECUTOR (object);
  TerretSessionExecutorPrivate *priv = terret_session_executor_get_instance_private (self);

  _terret_settings_store_get (&priv->settings, prop_id, value);
}

static void
terret_session_executor_set_property (GObject      *object,
                                      guint         prop_id,
                                      const GValue *value,
                                      GParamSpec   *pspec)
{
  TerretSessionExecutor *self = TERRET_SESSION_EXECUTOR (object);
  TerretSessionExecutorPrivate *priv = terret_session_executor_get_instance_private (self);

  if (_terret_settings_store_set (&priv->settings, prop_id, value))
    g_object_notify_by_pspec (object, pspec);
}

static void
terret_session_executor_class_init (TerretSessionExecutorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = terret_session_executor_dispose;
  object_class->finalize = terret_session_executor_finalize;
  object_class->get_property = terret_session_executor_get_property;
  object_class->set_property = terret_session_executor_set_property;

  klass->get_capabilities = terret_session_executor_real_get_capabilities;
  klass->describe_containment = terret_session_executor_real_describe_containment;
  klass->explain_outcome = terret_session_executor_real_explain_outcome;

  /* The settings both engines share, and their docs, come from one table
   * (settings/terret-common-settings.c). */
  _terret_settings_install (object_class, TERRET_ENGINE_SESSION);
}

static void
terret_session_executor_init (TerretSessionExecutor *self)
{
  TerretSessionExecutorPrivate *priv = terret_session_executor_get_instance_private (self);

  g_mutex_init (&priv->mutex);
  priv->sessions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  _terret_launcher_link_pool_init (&priv->links);
  _terret_settings_store_init (&priv->settings, TERRET_ENGINE_SESSION);
}
