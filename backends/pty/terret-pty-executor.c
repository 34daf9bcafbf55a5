/* terret-pty-executor.c: one persistent bash on a pty per session key
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <gio/gio.h>
#include <terret-exec.h>

#include "terret-pty-channel.h"

/*
 * TerretPtyExecutor:
 *
 * The `pty` backend: one bash per session key, spawned on first use on a
 * local pseudo-terminal and kept for every later run of that key, so `cd`
 * and `export` persist as in a terminal. The protocol is the SDK's
 * TerretShellSession; this file maps keys to sessions and applies the
 * settings.
 *
 * There is deliberately no cap on the number of sessions: a key is
 * chosen by the host, not by the commands, so the count is bounded by the
 * callers the host chose to run.
 */
#define TERRET_TYPE_PTY_EXECUTOR (terret_pty_executor_get_type ())
G_DECLARE_FINAL_TYPE (TerretPtyExecutor, terret_pty_executor, TERRET, PTY_EXECUTOR, GObject)

#define DEFAULT_TIMEOUT 120.0
#define DEFAULT_SHELL "bash"

struct _TerretPtyExecutor
{
  GObject parent_instance;

  /* Guards the table and the settings: runs may start from any thread
   * (the sync wrapper), and settings may change under them. */
  GMutex mutex;
  GHashTable *sessions;         /* (owned) key → TerretShellSession */

  double timeout;
  guint64 max_output;
  char *cwd;                    /* (owned) (nullable) */
  GStrv env;                    /* (owned) */
  char *shell;                  /* (owned) */
  double handshake_timeout;
};

static void executor_iface_init (TerretExecutorInterface *iface);
static void initable_iface_init (GInitableIface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretPtyExecutor, terret_pty_executor, G_TYPE_OBJECT,
                                G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (TERRET_TYPE_EXECUTOR, executor_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_INITABLE, initable_iface_init))

enum {
  PROP_0,
  PROP_TIMEOUT,
  PROP_MAX_OUTPUT,
  PROP_CWD,
  PROP_ENV,
  PROP_SHELL,
  PROP_HANDSHAKE_TIMEOUT,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static TerretCapabilities
terret_pty_executor_get_capabilities (TerretExecutor *executor)
{
  return (TERRET_CAPABILITY_RUNS_COMMANDS |
          TERRET_CAPABILITY_PERSISTENT_SESSIONS |
          TERRET_CAPABILITY_PROGRESS |
          TERRET_CAPABILITY_REPORTS_CWD |
          TERRET_CAPABILITY_SESSION_PID);
}

static void
run_done (GObject      *object,
          GAsyncResult *result,
          gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  TerretResult *ret;

  ret = terret_shell_session_run_finish (TERRET_SHELL_SESSION (object), result, &error);
  if (ret == NULL)
    g_task_return_error (task, g_steal_pointer (&error));
  else
    g_task_return_pointer (task, ret, g_object_unref);
}

static void
terret_pty_executor_run_async (TerretExecutor      *executor,
                               TerretRequest       *request,
                               GCancellable        *cancellable,
                               GAsyncReadyCallback  callback,
                               gpointer             user_data)
{
  TerretPtyExecutor *self = TERRET_PTY_EXECUTOR (executor);
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_autoptr(TerretShellSession) session = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(GStrv) envp = NULL;
  g_auto(GStrv) env = NULL;
  g_autofree char *cwd = NULL;
  g_autofree char *shell = NULL;
  const char *key = terret_request_get_session (request);
  double timeout = terret_request_get_timeout (request);
  double handshake_timeout;
  guint64 max_output;

  g_task_set_source_tag (task, terret_pty_executor_run_async);

  g_mutex_lock (&self->mutex);
  session = g_hash_table_lookup (self->sessions, key);
  if (session == NULL)
    {
      g_autoptr(TerretShellChannel) channel = terret_pty_channel_new ();

      session = terret_shell_session_new (channel);
      g_hash_table_insert (self->sessions, g_strdup (key), session);
    }
  g_object_ref (session);
  if (timeout <= 0)
    timeout = self->timeout;
  max_output = self->max_output;
  cwd = g_strdup (self->cwd);
  env = g_strdupv (self->env);
  shell = g_strdup (self->shell);
  handshake_timeout = self->handshake_timeout;
  g_mutex_unlock (&self->mutex);

  envp = terret_shell_session_build_environ (NULL, (const char * const *)env, &error);
  if (envp == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  /* Read now, used when the session next starts a shell: a changed
   * setting governs the next session, never a running one. The cap
   * applies from this run on. */
  terret_shell_session_set_shell (session, shell);
  terret_shell_session_set_cwd (session, cwd);
  terret_shell_session_set_environ (session, (const char * const *)envp);
  terret_shell_session_set_handshake_timeout (session, handshake_timeout);
  terret_shell_session_set_max_output (session, max_output);

  terret_shell_session_run_async (session, request, timeout, cancellable,
                                  run_done, g_steal_pointer (&task));
}

static TerretResult *
terret_pty_executor_run_finish (TerretExecutor  *executor,
                                GAsyncResult    *result,
                                GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, executor), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
terret_pty_executor_close_session (TerretExecutor *executor,
                                   const char     *key)
{
  TerretPtyExecutor *self = TERRET_PTY_EXECUTOR (executor);
  g_autoptr(TerretShellSession) session = NULL;
  g_autofree char *stolen_key = NULL;

  g_mutex_lock (&self->mutex);
  g_hash_table_steal_extended (self->sessions, key,
                               (gpointer *)&stolen_key, (gpointer *)&session);
  g_mutex_unlock (&self->mutex);

  /* Outside the lock: the farewell takes up to a second. */
  if (session != NULL)
    terret_shell_session_close (session);
}

static void
terret_pty_executor_close_all (TerretExecutor *executor)
{
  TerretPtyExecutor *self = TERRET_PTY_EXECUTOR (executor);
  g_autoptr(GPtrArray) sessions = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  gpointer value;

  g_mutex_lock (&self->mutex);
  if (self->sessions != NULL)
    {
      g_hash_table_iter_init (&iter, self->sessions);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        {
          g_ptr_array_add (sessions, g_object_ref (value));
          g_hash_table_iter_remove (&iter);
        }
    }
  g_mutex_unlock (&self->mutex);

  for (guint i = 0; i < sessions->len; i++)
    terret_shell_session_close (g_ptr_array_index (sessions, i));
}

static GPid
terret_pty_executor_get_session_pid (TerretExecutor *executor,
                                     const char     *key)
{
  TerretPtyExecutor *self = TERRET_PTY_EXECUTOR (executor);
  TerretShellSession *session;
  GPid pid = 0;

  g_mutex_lock (&self->mutex);
  session = g_hash_table_lookup (self->sessions, key);
  if (session != NULL)
    pid = terret_shell_session_get_pid (session);
  g_mutex_unlock (&self->mutex);

  return pid;
}

static void
executor_iface_init (TerretExecutorInterface *iface)
{
  iface->get_capabilities = terret_pty_executor_get_capabilities;
  iface->run_async = terret_pty_executor_run_async;
  iface->run_finish = terret_pty_executor_run_finish;
  iface->close_session = terret_pty_executor_close_session;
  iface->close_all = terret_pty_executor_close_all;
  iface->get_session_pid = terret_pty_executor_get_session_pid;
}

static gboolean
terret_pty_executor_initable_init (GInitable     *initable,
                                   GCancellable  *cancellable,
                                   GError       **error)
{
  TerretPtyExecutor *self = TERRET_PTY_EXECUTOR (initable);
  g_autoptr(GError) local_error = NULL;
  g_autofree char *shell = NULL;
  g_autofree char *shell_path = NULL;

  g_mutex_lock (&self->mutex);
  shell = g_strdup (self->shell);
  g_mutex_unlock (&self->mutex);

  shell_path = g_find_program_in_path (shell);
  if (shell_path == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "The pty backend needs bash: “%s” was not found in PATH", shell);
      return FALSE;
    }

  if (!terret_pty_channel_check_host (&local_error))
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "The pty backend needs pseudo-terminals: %s", local_error->message);
      return FALSE;
    }

  return TRUE;
}

static void
initable_iface_init (GInitableIface *iface)
{
  iface->init = terret_pty_executor_initable_init;
}

static void
terret_pty_executor_dispose (GObject *object)
{
  TerretPtyExecutor *self = TERRET_PTY_EXECUTOR (object);

  /* A persistent shell is a process the host owns: dropping it without
   * reaping it would leak a bash per key for the life of the host. */
  terret_pty_executor_close_all (TERRET_EXECUTOR (self));

  G_OBJECT_CLASS (terret_pty_executor_parent_class)->dispose (object);
}

static void
terret_pty_executor_finalize (GObject *object)
{
  TerretPtyExecutor *self = TERRET_PTY_EXECUTOR (object);

  g_clear_pointer (&self->sessions, g_hash_table_unref);
  g_clear_pointer (&self->cwd, g_free);
  g_clear_pointer (&self->env, g_strfreev);
  g_clear_pointer (&self->shell, g_free);
  g_mutex_clear (&self->mutex);

  G_OBJECT_CLASS (terret_pty_executor_parent_class)->finalize (object);
}

static void
terret_pty_executor_get_property (GObject    *object,
                                  guint       prop_id,
                                  GValue     *value,
                                  GParamSpec *pspec)
{
  TerretPtyExecutor *self = TERRET_PTY_EXECUTOR (object);

  g_mutex_lock (&self->mutex);
  switch (prop_id)
    {
    case PROP_TIMEOUT:
      g_value_set_double (value, self->timeout);
      break;
    case PROP_MAX_OUTPUT:
      g_value_set_uint64 (value, self->max_output);
      break;
    case PROP_CWD:
      g_value_set_string (value, self->cwd);
      break;
    case PROP_ENV:
      g_value_set_boxed (value, self->env);
      break;
    case PROP_SHELL:
      g_value_set_string (value, self->shell);
      break;
    case PROP_HANDSHAKE_TIMEOUT:
      g_value_set_double (value, self->handshake_timeout);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
  g_mutex_unlock (&self->mutex);
}

static void
terret_pty_executor_set_property (GObject      *object,
                                  guint         prop_id,
                                  const GValue *value,
                                  GParamSpec   *pspec)
{
  TerretPtyExecutor *self = TERRET_PTY_EXECUTOR (object);
  gboolean changed = TRUE;

  g_mutex_lock (&self->mutex);
  switch (prop_id)
    {
    case PROP_TIMEOUT:
      changed = self->timeout != g_value_get_double (value);
      self->timeout = g_value_get_double (value);
      break;
    case PROP_MAX_OUTPUT:
      changed = self->max_output != g_value_get_uint64 (value);
      self->max_output = g_value_get_uint64 (value);
      break;
    case PROP_CWD:
      changed = g_strcmp0 (self->cwd, g_value_get_string (value)) != 0;
      g_free (self->cwd);
      self->cwd = g_value_dup_string (value);
      break;
    case PROP_ENV:
      g_strfreev (self->env);
      self->env = g_value_dup_boxed (value);
      if (self->env == NULL)
        self->env = g_new0 (char *, 1);
      break;
    case PROP_SHELL:
      {
        const char *shell = g_value_get_string (value);

        if (shell == NULL || *shell == '\0')
          shell = DEFAULT_SHELL;
        changed = g_strcmp0 (self->shell, shell) != 0;
        g_free (self->shell);
        self->shell = g_strdup (shell);
      }
      break;
    case PROP_HANDSHAKE_TIMEOUT:
      changed = self->handshake_timeout != g_value_get_double (value);
      self->handshake_timeout = g_value_get_double (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      changed = FALSE;
    }
  g_mutex_unlock (&self->mutex);

  if (changed)
    g_object_notify_by_pspec (object, pspec);
}

static void
terret_pty_executor_class_init (TerretPtyExecutorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = terret_pty_executor_dispose;
  object_class->finalize = terret_pty_executor_finalize;
  object_class->get_property = terret_pty_executor_get_property;
  object_class->set_property = terret_pty_executor_set_property;

  properties[PROP_TIMEOUT] =
    g_param_spec_double ("timeout", NULL,
                         "Seconds a command may run when its request names no timeout; "
                         "then it is interrupted and its session killed",
                         0.001, G_MAXDOUBLE, DEFAULT_TIMEOUT,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  properties[PROP_MAX_OUTPUT] =
    g_param_spec_uint64 ("max-output", NULL,
                         "Bytes of a run's output kept; past it the first bytes are kept "
                         "and the rest counted and dropped",
                         0, G_MAXUINT64, TERRET_SHELL_SESSION_DEFAULT_MAX_OUTPUT,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  properties[PROP_CWD] =
    g_param_spec_string ("cwd", NULL,
                         "Working directory a new session's shell starts in "
                         "(unset: the host's own)",
                         NULL,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  properties[PROP_ENV] =
    g_param_spec_boxed ("env", NULL,
                        "VARIABLE=value entries layered over the inherited environment and "
                        "the defaults (TERM=dumb, PAGER=cat, ...) of a new session's shell",
                        G_TYPE_STRV,
                        (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  properties[PROP_SHELL] =
    g_param_spec_string ("shell", NULL,
                         "The bash a new session runs: a path, or a name looked up in PATH",
                         DEFAULT_SHELL,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  properties[PROP_HANDSHAKE_TIMEOUT] =
    g_param_spec_double ("handshake-timeout", NULL,
                         "Seconds a new session's shell has to answer its start-up handshake",
                         0.001, G_MAXDOUBLE, TERRET_SHELL_SESSION_DEFAULT_HANDSHAKE_TIMEOUT,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
terret_pty_executor_class_finalize (TerretPtyExecutorClass *klass)
{
}

static void
terret_pty_executor_init (TerretPtyExecutor *self)
{
  g_mutex_init (&self->mutex);
  self->sessions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  self->timeout = DEFAULT_TIMEOUT;
  self->max_output = TERRET_SHELL_SESSION_DEFAULT_MAX_OUTPUT;
  self->env = g_new0 (char *, 1);
  self->shell = g_strdup (DEFAULT_SHELL);
  self->handshake_timeout = TERRET_SHELL_SESSION_DEFAULT_HANDSHAKE_TIMEOUT;
}

/* --- Module ------------------------------------------------------------ */

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  terret_pty_channel_register (G_TYPE_MODULE (module));
  terret_pty_executor_register_type (G_TYPE_MODULE (module));
  /* Highest of all: on a host with bash, a persistent session is what a
   * caller expects of a shell. */
  g_io_extension_point_implement (TERRET_EXECUTOR_EXTENSION_POINT_NAME,
                                  terret_pty_executor_get_type (), "pty", 100);
}

G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
}

G_MODULE_EXPORT char **
g_io_module_query (void)
{
  char *extension_points[] = { (char *)TERRET_EXECUTOR_EXTENSION_POINT_NAME, NULL };

  return g_strdupv (extension_points);
}
