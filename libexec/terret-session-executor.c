/* terret-session-executor.c: one persistent shell per session key, over
 * whatever channel a subclass provides
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-error.h"
#include "terret-executor.h"
#include "terret-session-executor.h"

/**
 * TerretSessionExecutor:
 *
 * The base of every backend that keeps one persistent bash per session
 * key, so that `cd` and `export` persist from one run to the next as in a
 * terminal.
 *
 * It implements [iface@Terret.Executor] and [iface@Gio.Initable] and owns
 * everything but the transport: the table of sessions, one
 * [class@Terret.ShellSession] per key (framing, end marker, output caps,
 * timeouts, restart after the shell ended), the common settings
 * ([property@Terret.SessionExecutor:timeout],
 * [property@Terret.SessionExecutor:max-output],
 * [property@Terret.SessionExecutor:cwd],
 * [property@Terret.SessionExecutor:env],
 * [property@Terret.SessionExecutor:shell],
 * [property@Terret.SessionExecutor:handshake-timeout]), busy sessions,
 * closing and disposal. A subclass supplies only
 * [vfunc@Terret.SessionExecutor.create_channel], the
 * [class@Terret.ShellChannel] that carries one shell (a local
 * pseudo-terminal, an `ssh -tt` client), and adds its own settings as
 * properties.
 *
 * Settings are read when a run starts: a changed setting governs the next
 * session (the shell, its working directory and environment) or the next
 * run (the default timeout, the output cap), never a running command.
 *
 * There is deliberately no cap on the number of sessions: a key is chosen
 * by the host, not by the commands, so the count is bounded by the
 * callers the host chose to run. Disposing the executor closes every
 * session, so no shell outlives it.
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
  /* Guards the table and the settings: runs may start from any thread
   * (the sync wrapper runs its own context), and settings may change
   * under them. Never held while calling a subclass or a session. */
  GMutex mutex;
  GHashTable *sessions;         /* (owned) key → TerretShellSession */

  double timeout;
  guint64 max_output;
  char *cwd;                    /* (owned) (nullable) */
  GStrv env;                    /* (owned) */
  char *shell;                  /* (owned) */
  double handshake_timeout;
  double interrupt_grace;

  /* Bumped whenever a setting a session is handed changes, so a run
   * passes them on (and rebuilds the environment) only when they did,
   * not on every round trip. */
  guint generation;
} TerretSessionExecutorPrivate;

/* The settings generation a session was last handed. */
static GQuark session_generation_quark;

static void executor_iface_init (TerretExecutorInterface *iface);
static void initable_iface_init (GInitableIface *iface);

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (TerretSessionExecutor, terret_session_executor, G_TYPE_OBJECT,
                                  G_ADD_PRIVATE (TerretSessionExecutor)
                                  G_IMPLEMENT_INTERFACE (TERRET_TYPE_EXECUTOR, executor_iface_init)
                                  G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, initable_iface_init))

enum {
  PROP_0,
  PROP_TIMEOUT,
  PROP_MAX_OUTPUT,
  PROP_CWD,
  PROP_ENV,
  PROP_SHELL,
  PROP_HANDSHAKE_TIMEOUT,
  PROP_INTERRUPT_GRACE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

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
          TERRET_CAPABILITY_REPORTS_CWD |
          TERRET_CAPABILITY_SESSION_PID |
          TERRET_CAPABILITY_INPUT |
          TERRET_CAPABILITY_INTERRUPT |
          TERRET_CAPABILITY_POLL |
          TERRET_CAPABILITY_DETACH);
}

/* The session of @key, created (with a channel from the subclass) when
 * there is none. The subclass is called outside the lock: it may well
 * read this object's properties, which take the lock. */
static TerretShellSession *
ensure_session (TerretSessionExecutor  *self,
                const char             *key,
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

  if (klass->create_channel == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "The %s backend does not implement create_channel",
                   G_OBJECT_TYPE_NAME (self));
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
      session = terret_shell_session_new (channel);
      g_hash_table_insert (priv->sessions, g_strdup (key), session);
    }
  g_object_ref (session);
  g_mutex_unlock (&priv->mutex);

  return session;
}

static TerretResult *
terret_session_executor_real_finish_run (TerretSessionExecutor  *self,
                                         const char             *session_key,
                                         TerretShellSession     *session,
                                         GAsyncResult           *result,
                                         GError                **error)
{
  return terret_shell_session_run_finish (session, result, error);
}

/*
 * return_hook_outcome:
 *
 * Completes @task with what a finish_run or finish_poll hook gave back.
 * A hook that fails must say why; with @key set, an error of ours names
 * the session it is about.
 */
static void
return_hook_outcome (GTask        *task,
                     TerretResult *ret,
                     GError       *error,
                     const char   *what,
                     const char   *key)
{
  if (ret != NULL)
    {
      g_task_return_pointer (task, ret, g_object_unref);
      return;
    }

  if (error == NULL)
    g_set_error (&error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                 "The %s backend failed the %s without an error",
                 G_OBJECT_TYPE_NAME (g_task_get_source_object (task)), what);
  if (key != NULL && error->domain == TERRET_EXEC_ERROR)
    g_prefix_error (&error, "Session “%s”: ", key);
  g_task_return_error (task, error);
}

/* The session's outcome, through the subclass's finish_run. The task's
 * data is the run's session key. */
static void
run_done (GObject      *object,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  TerretSessionExecutor *self = g_task_get_source_object (task);
  const char *key = g_task_get_task_data (task);
  GError *error = NULL;
  TerretResult *ret;

  ret = TERRET_SESSION_EXECUTOR_GET_CLASS (self)->finish_run (self, key, TERRET_SHELL_SESSION (object),
                                                               result, &error);
  return_hook_outcome (task, ret, error, "run", NULL);
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
  TerretSessionExecutorClass *klass = TERRET_SESSION_EXECUTOR_GET_CLASS (self);
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_autoptr(TerretShellSession) session = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) envp = NULL;
  g_auto(GStrv) env = NULL;
  g_autofree char *cwd = NULL;
  g_autofree char *shell = NULL;
  const char *key = terret_request_get_session (request);
  double timeout = terret_request_get_timeout (request);
  double handshake_timeout = 0;
  double interrupt_grace = 0;
  guint64 max_output = 0;
  guint generation, handed;

  g_task_set_source_tag (task, terret_session_executor_run_async);
  g_task_set_task_data (task, g_strdup (key), g_free);

  session = ensure_session (self, key, &error);
  if (session == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  g_mutex_lock (&priv->mutex);
  if (timeout <= 0)
    timeout = priv->timeout;
  generation = priv->generation;
  handed = GPOINTER_TO_UINT (g_object_get_qdata (G_OBJECT (session), session_generation_quark));
  if (handed != generation)
    {
      max_output = priv->max_output;
      cwd = g_strdup (priv->cwd);
      env = g_strdupv (priv->env);
      shell = g_strdup (priv->shell);
      handshake_timeout = priv->handshake_timeout;
      interrupt_grace = priv->interrupt_grace;
    }
  g_mutex_unlock (&priv->mutex);

  /* Handed over now, used when the session next starts a shell: a changed
   * setting governs the next session, never a running one. The cap
   * applies from this run on. */
  if (handed != generation)
    {
      envp = terret_shell_session_build_environ (NULL, (const char * const *)env, &error);
      if (envp == NULL)
        {
          g_task_return_error (task, g_steal_pointer (&error));
          return;
        }

      terret_shell_session_set_shell (session, shell);
      terret_shell_session_set_cwd (session, cwd);
      terret_shell_session_set_environ (session, (const char * const *)envp);
      terret_shell_session_set_handshake_timeout (session, handshake_timeout);
      terret_shell_session_set_max_output (session, max_output);
      terret_shell_session_set_interrupt_grace (session, interrupt_grace);
      g_object_set_qdata (G_OBJECT (session), session_generation_quark,
                          GUINT_TO_POINTER (generation));
    }

  if (klass->prepare_session != NULL &&
      !klass->prepare_session (self, key, session, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  terret_shell_session_run_async (session, request, timeout, cancellable,
                                  run_done, g_steal_pointer (&task));
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
  g_hash_table_steal_extended (priv->sessions, key,
                               (gpointer *)&stolen_key, (gpointer *)&session);
  g_mutex_unlock (&priv->mutex);

  /* Outside the lock: the farewell takes up to a second. */
  if (session != NULL)
    terret_shell_session_close (session);
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
    terret_shell_session_close (g_ptr_array_index (sessions, i));
}

static GPid
terret_session_executor_get_session_pid (TerretExecutor *executor,
                                         const char     *key)
{
  TerretSessionExecutor *self = TERRET_SESSION_EXECUTOR (executor);
  TerretSessionExecutorPrivate *priv = terret_session_executor_get_instance_private (self);
  TerretShellSession *session;
  GPid pid = 0;

  g_mutex_lock (&priv->mutex);
  session = g_hash_table_lookup (priv->sessions, key);
  if (session != NULL)
    pid = terret_shell_session_get_pid (session);
  g_mutex_unlock (&priv->mutex);

  return pid;
}

/* The session of @key if there is one: input, interrupts and polls
 * address a command that is there, and never create a session. */
static TerretShellSession *
lookup_session (TerretSessionExecutor  *self,
                const char             *key,
                GError                **error)
{
  TerretSessionExecutorPrivate *priv = terret_session_executor_get_instance_private (self);
  TerretShellSession *session;

  g_mutex_lock (&priv->mutex);
  session = g_hash_table_lookup (priv->sessions, key);
  if (session != NULL)
    g_object_ref (session);
  g_mutex_unlock (&priv->mutex);

  if (session == NULL)
    g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                 "Nothing is running in session “%s”: it has no shell", key);
  return session;
}

/* The session's errors speak of "the shell session"; a host juggling
 * several wants to know which. */
static gboolean
name_session (gboolean     ok,
              const char  *key,
              GError     **error)
{
  if (!ok && error != NULL && *error != NULL)
    g_prefix_error (error, "Session “%s”: ", key);
  return ok;
}

static gboolean
terret_session_executor_send_input (TerretExecutor  *executor,
                                    const char      *key,
                                    GBytes          *data,
                                    GError         **error)
{
  g_autoptr(TerretShellSession) session = NULL;

  if ((session = lookup_session (TERRET_SESSION_EXECUTOR (executor), key, error)) == NULL)
    return FALSE;

  return name_session (terret_shell_session_send_input (session, data, error), key, error);
}

static gboolean
terret_session_executor_interrupt (TerretExecutor  *executor,
                                   const char      *key,
                                   GError         **error)
{
  g_autoptr(TerretShellSession) session = NULL;

  if ((session = lookup_session (TERRET_SESSION_EXECUTOR (executor), key, error)) == NULL)
    return FALSE;

  return name_session (terret_shell_session_interrupt (session, error), key, error);
}

static TerretResult *
terret_session_executor_real_finish_poll (TerretSessionExecutor  *self,
                                          const char             *session_key,
                                          TerretShellSession     *session,
                                          GAsyncResult           *result,
                                          GError                **error)
{
  return terret_shell_session_poll_finish (session, result, error);
}

/* The session's answer, through the subclass's finish_poll. The task's
 * data is the poll's session key. */
static void
poll_done (GObject      *object,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  TerretSessionExecutor *self = g_task_get_source_object (task);
  const char *key = g_task_get_task_data (task);
  GError *error = NULL;
  TerretResult *ret;

  ret = TERRET_SESSION_EXECUTOR_GET_CLASS (self)->finish_poll (self, key, TERRET_SHELL_SESSION (object),
                                                                result, &error);
  return_hook_outcome (task, ret, error, "poll", key);
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
  g_task_set_task_data (task, g_strdup (key), g_free);

  if ((session = lookup_session (self, key, &error)) == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  terret_shell_session_poll_async (session, wait, cancellable, poll_done, g_steal_pointer (&task));
}

static TerretResult *
terret_session_executor_poll_finish (TerretExecutor  *executor,
                                     GAsyncResult    *result,
                                     GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, executor), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
executor_iface_init (TerretExecutorInterface *iface)
{
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

/* --- GObject ---------------------------------------------------------- */

static void
terret_session_executor_dispose (GObject *object)
{
  /* A persistent shell is a process the host owns: dropping it without
   * reaping it would leak a shell per key for the life of the host. */
  terret_session_executor_close_all (TERRET_EXECUTOR (object));

  G_OBJECT_CLASS (terret_session_executor_parent_class)->dispose (object);
}

static void
terret_session_executor_finalize (GObject *object)
{
  TerretSessionExecutor *self = TERRET_SESSION_EXECUTOR (object);
  TerretSessionExecutorPrivate *priv = terret_session_executor_get_instance_private (self);

  g_clear_pointer (&priv->sessions, g_hash_table_unref);
  g_clear_pointer (&priv->cwd, g_free);
  g_clear_pointer (&priv->env, g_strfreev);
  g_clear_pointer (&priv->shell, g_free);
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

  g_mutex_lock (&priv->mutex);
  switch (prop_id)
    {
    case PROP_TIMEOUT:
      g_value_set_double (value, priv->timeout);
      break;
    case PROP_MAX_OUTPUT:
      g_value_set_uint64 (value, priv->max_output);
      break;
    case PROP_CWD:
      g_value_set_string (value, priv->cwd);
      break;
    case PROP_ENV:
      g_value_set_boxed (value, priv->env);
      break;
    case PROP_SHELL:
      g_value_set_string (value, priv->shell);
      break;
    case PROP_HANDSHAKE_TIMEOUT:
      g_value_set_double (value, priv->handshake_timeout);
      break;
    case PROP_INTERRUPT_GRACE:
      g_value_set_double (value, priv->interrupt_grace);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
  g_mutex_unlock (&priv->mutex);
}

static void
terret_session_executor_set_property (GObject      *object,
                                      guint         prop_id,
                                      const GValue *value,
                                      GParamSpec   *pspec)
{
  TerretSessionExecutor *self = TERRET_SESSION_EXECUTOR (object);
  TerretSessionExecutorPrivate *priv = terret_session_executor_get_instance_private (self);
  gboolean changed = TRUE;

  g_mutex_lock (&priv->mutex);
  switch (prop_id)
    {
    case PROP_TIMEOUT:
      changed = priv->timeout != g_value_get_double (value);
      priv->timeout = g_value_get_double (value);
      break;
    case PROP_MAX_OUTPUT:
      changed = priv->max_output != g_value_get_uint64 (value);
      priv->max_output = g_value_get_uint64 (value);
      break;
    case PROP_CWD:
      changed = g_strcmp0 (priv->cwd, g_value_get_string (value)) != 0;
      g_free (priv->cwd);
      priv->cwd = g_value_dup_string (value);
      break;
    case PROP_ENV:
      g_strfreev (priv->env);
      priv->env = g_value_dup_boxed (value);
      if (priv->env == NULL)
        priv->env = g_new0 (char *, 1);
      break;
    case PROP_SHELL:
      {
        const char *shell = g_value_get_string (value);

        if (shell == NULL || *shell == '\0')
          shell = TERRET_SESSION_EXECUTOR_DEFAULT_SHELL;
        changed = g_strcmp0 (priv->shell, shell) != 0;
        g_free (priv->shell);
        priv->shell = g_strdup (shell);
      }
      break;
    case PROP_HANDSHAKE_TIMEOUT:
      changed = priv->handshake_timeout != g_value_get_double (value);
      priv->handshake_timeout = g_value_get_double (value);
      break;
    case PROP_INTERRUPT_GRACE:
      changed = priv->interrupt_grace != g_value_get_double (value);
      priv->interrupt_grace = g_value_get_double (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      changed = FALSE;
    }
  /* Generation 0 is what a new session has been handed: never reuse it. */
  if (changed && prop_id != PROP_TIMEOUT && ++priv->generation == 0)
    priv->generation = 1;
  g_mutex_unlock (&priv->mutex);

  if (changed)
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
  klass->finish_run = terret_session_executor_real_finish_run;
  klass->finish_poll = terret_session_executor_real_finish_poll;

  session_generation_quark = g_quark_from_static_string ("terret-session-executor-generation");

  /**
   * TerretSessionExecutor:timeout:
   *
   * Seconds a command may run when its request names no timeout; then it
   * is interrupted and its session's shell killed (the next run starts a
   * new one).
   *
   * Since: 0.1
   */
  properties[PROP_TIMEOUT] =
    g_param_spec_double ("timeout", NULL,
                         "Seconds a command may run when its request names no timeout; "
                         "then it is interrupted and its session killed",
                         0.001, G_MAXDOUBLE, TERRET_SESSION_EXECUTOR_DEFAULT_TIMEOUT,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretSessionExecutor:max-output:
   *
   * Bytes of a run's output kept; past it the first bytes are kept and
   * the rest counted and dropped, never splitting a UTF-8 character.
   *
   * Since: 0.1
   */
  properties[PROP_MAX_OUTPUT] =
    g_param_spec_uint64 ("max-output", NULL,
                         "Bytes of a run's output kept; past it the first bytes are kept "
                         "and the rest counted and dropped",
                         0, G_MAXUINT64, TERRET_SHELL_SESSION_DEFAULT_MAX_OUTPUT,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretSessionExecutor:cwd:
   *
   * The working directory a new session's shell starts in, or %NULL for
   * the host process's own (a remote backend: the remote default).
   *
   * Since: 0.1
   */
  properties[PROP_CWD] =
    g_param_spec_string ("cwd", NULL,
                         "Working directory a new session's shell starts in "
                         "(unset: the host's own)",
                         NULL,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretSessionExecutor:env:
   *
   * `VARIABLE=value` entries layered over the inherited environment and
   * the defaults of [func@Terret.ShellSession.build_environ] for a new
   * session's shell.
   *
   * Since: 0.1
   */
  properties[PROP_ENV] =
    g_param_spec_boxed ("env", NULL,
                        "VARIABLE=value entries layered over the inherited environment and "
                        "the defaults (TERM=dumb, PAGER=cat, ...) of a new session's shell",
                        G_TYPE_STRV,
                        (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretSessionExecutor:shell:
   *
   * The bash a new session runs: a path, or a name looked up in `PATH`.
   * Setting %NULL or an empty string restores the default,
   * %TERRET_SESSION_EXECUTOR_DEFAULT_SHELL.
   *
   * Since: 0.1
   */
  properties[PROP_SHELL] =
    g_param_spec_string ("shell", NULL,
                         "The bash a new session runs: a path, or a name looked up in PATH",
                         TERRET_SESSION_EXECUTOR_DEFAULT_SHELL,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretSessionExecutor:handshake-timeout:
   *
   * Seconds a new session's shell has to answer its start-up handshake
   * before the run fails as unavailable.
   *
   * Since: 0.1
   */
  properties[PROP_HANDSHAKE_TIMEOUT] =
    g_param_spec_double ("handshake-timeout", NULL,
                         "Seconds a new session's shell has to answer its start-up handshake",
                         0.001, G_MAXDOUBLE, TERRET_SHELL_SESSION_DEFAULT_HANDSHAKE_TIMEOUT,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretSessionExecutor:interrupt-grace:
   *
   * Seconds a command interrupted with [method@Terret.Executor.interrupt]
   * may stay silent and running before it is killed with its session's
   * shell (the next run then starts a new one).
   *
   * Since: 0.1
   */
  properties[PROP_INTERRUPT_GRACE] =
    g_param_spec_double ("interrupt-grace", NULL,
                         "Seconds an interrupted command may stay silent and running before "
                         "it is killed with its session",
                         0.001, G_MAXDOUBLE, TERRET_SHELL_SESSION_DEFAULT_INTERRUPT_GRACE,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
terret_session_executor_init (TerretSessionExecutor *self)
{
  TerretSessionExecutorPrivate *priv = terret_session_executor_get_instance_private (self);

  g_mutex_init (&priv->mutex);
  priv->sessions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  priv->timeout = TERRET_SESSION_EXECUTOR_DEFAULT_TIMEOUT;
  priv->max_output = TERRET_SHELL_SESSION_DEFAULT_MAX_OUTPUT;
  priv->env = g_new0 (char *, 1);
  priv->shell = g_strdup (TERRET_SESSION_EXECUTOR_DEFAULT_SHELL);
  priv->handshake_timeout = TERRET_SHELL_SESSION_DEFAULT_HANDSHAKE_TIMEOUT;
  priv->interrupt_grace = TERRET_SHELL_SESSION_DEFAULT_INTERRUPT_GRACE;
  priv->generation = 1;
}
