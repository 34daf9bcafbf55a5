/* terret-executor.c: the interface, its wrappers, and backend selection
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-error.h"
#include "terret-executor.h"
#include "terret-registry-private.h"
#include "terret-settings-private.h"

/**
 * TerretExecutor:
 *
 * Runs shell commands for a host program, through whichever backend the
 * configuration chose.
 *
 * Every outcome of a run is either a [class@Terret.Result] (the command
 * ran: its status, output and notice) or a #GError in the
 * %TERRET_EXEC_ERROR domain (nothing ran: busy, unavailable, no shell,
 * spawn failed) or %G_IO_ERROR_CANCELLED.
 *
 * Runs are asynchronous on the caller's thread-default main context, with
 * a synchronous wrapper. Backends are GIO modules implementing the
 * %TERRET_EXECUTOR_EXTENSION_POINT_NAME extension point; they also
 * implement [iface@Gio.Initable], fail its init when they cannot work on
 * this host, and close every session when disposed.
 *
 * Since: 0.1
 */

G_DEFINE_INTERFACE (TerretExecutor, terret_executor, G_TYPE_OBJECT)

static void
terret_executor_default_init (TerretExecutorInterface *iface)
{
}

/* The backend's own name when a registered extension carries its type. */
static const char *
backend_name (TerretExecutor *self)
{
  GIOExtension *ext = _terret_registry_lookup_type (G_OBJECT_TYPE (self));

  return ext != NULL ? g_io_extension_get_name (ext) : G_OBJECT_TYPE_NAME (self);
}

/* What a choice of backend is made with: the configuration file (if
 * any) and the caller's own settings, applied after the file's. */
typedef struct
{
  GKeyFile *config;             /* (nullable) */
  const char *config_path;      /* (nullable) */
  const char * const *settings; /* (nullable) KEY=VALUE */
} Choice;

static gboolean
apply_settings (TerretExecutor      *executor,
                const char * const  *settings,
                GError             **error)
{
  for (guint i = 0; settings != NULL && settings[i] != NULL; i++)
    {
      const char *eq = strchr (settings[i], '=');
      g_autofree char *key = NULL;
      g_autoptr(GError) local_error = NULL;

      if (eq == NULL || eq == settings[i])
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                       "setting “%s” is not KEY=VALUE", settings[i]);
          return FALSE;
        }

      key = g_strndup (settings[i], eq - settings[i]);
      if (!terret_executor_set_setting (executor, key, eq + 1, &local_error))
        {
          g_propagate_prefixed_error (error, g_steal_pointer (&local_error),
                                      "setting “%s”: ", settings[i]);
          return FALSE;
        }
    }

  return TRUE;
}

/*
 * create_backend:
 *
 * Instantiates @ext's type, applies its group of the configuration file
 * and then the caller's settings before init, so settings that decide
 * whether the backend can work (the shell's path, a host) are in place,
 * then initializes it.
 *
 * A configuration error is reported as such; a failed init is
 * TERRET_EXEC_ERROR_UNAVAILABLE, which selection by priority treats as
 * "try the next one".
 */
static TerretExecutor *
create_backend (GIOExtension  *ext,
                const Choice  *choice,
                GError       **error)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(GError) local_error = NULL;

  executor = g_object_new (g_io_extension_get_type (ext), NULL);

  if (choice->config != NULL &&
      !terret_executor_apply_key_file (executor, choice->config, choice->config_path, error))
    return NULL;

  if (!apply_settings (executor, choice->settings, error))
    return NULL;

  if (G_IS_INITABLE (executor) &&
      !g_initable_init (G_INITABLE (executor), NULL, &local_error))
    {
      if (local_error->domain == TERRET_EXEC_ERROR)
        g_propagate_prefixed_error (error, g_steal_pointer (&local_error),
                                    "backend “%s”: ", g_io_extension_get_name (ext));
      else
        g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                     "backend “%s”: %s", g_io_extension_get_name (ext),
                     local_error->message);
      return NULL;
    }

  return g_steal_pointer (&executor);
}

static TerretExecutor *
new_by_name (const char    *name,
             const Choice  *choice,
             GError       **error)
{
  GIOExtensionPoint *ep = _terret_registry_get_extension_point ();
  GIOExtension *ext = g_io_extension_point_get_extension_by_name (ep, name);

  if (ext == NULL)
    {
      g_autofree char *names = _terret_registry_list_names ();

      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNKNOWN_BACKEND,
                   "no backend named “%s”; available: %s", name, names);
      return NULL;
    }

  return create_backend (ext, choice, error);
}

/* Says where a failed choice came from; a configuration error already
 * names its file and group, so it is passed on as it is. */
static void
propagate_choice_error (GError     **dest,
                        GError      *src,
                        const char  *where,
                        const char  *name)
{
  if (g_error_matches (src, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG))
    g_propagate_error (dest, src);
  else
    g_propagate_prefixed_error (dest, src, "%s%s: ", where, name);
}

static void
print_help (void)
{
  GIOExtensionPoint *ep = _terret_registry_get_extension_point ();

  g_printerr ("Supported values for %s (highest priority first):\n", TERRET_EXECUTOR_ENV);
  for (GList *l = g_io_extension_point_get_extensions (ep); l != NULL; l = l->next)
    g_printerr ("  %-12s priority %d\n",
                g_io_extension_get_name (l->data),
                g_io_extension_get_priority (l->data));
}

/* Rules 1 to 3 of terret_executor_new_default(). */
static TerretExecutor *
new_configured (const Choice  *choice,
                GError       **error)
{
  GIOExtensionPoint *ep = _terret_registry_get_extension_point ();
  g_autoptr(GError) local_error = NULL;
  GKeyFile *config = choice->config;
  const char *env = g_getenv (TERRET_EXECUTOR_ENV);

  if (env != NULL && g_str_equal (env, "help"))
    print_help ();
  else if (env != NULL && *env != '\0')
    {
      TerretExecutor *executor = new_by_name (env, choice, &local_error);

      if (executor == NULL)
        propagate_choice_error (error, g_steal_pointer (&local_error),
                                TERRET_EXECUTOR_ENV "=", env);
      return executor;
    }

  if (config != NULL && g_key_file_has_group (config, TERRET_CONFIG_GROUP))
    {
      g_auto(GStrv) keys = g_key_file_get_keys (config, TERRET_CONFIG_GROUP, NULL, NULL);

      for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
        {
          if (!g_str_equal (keys[i], "backend"))
            {
              g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                           "%s: [%s] has no key “%s”; allowed: backend",
                           choice->config_path, TERRET_CONFIG_GROUP, keys[i]);
              return NULL;
            }
        }

      if (g_key_file_has_key (config, TERRET_CONFIG_GROUP, "backend", NULL))
        {
          g_autofree char *name = g_key_file_get_string (config, TERRET_CONFIG_GROUP, "backend", NULL);
          TerretExecutor *executor = new_by_name (name != NULL ? name : "", choice, &local_error);

          if (executor == NULL)
            {
              g_autofree char *where = g_strdup_printf ("%s: [%s] backend=",
                                                        choice->config_path, TERRET_CONFIG_GROUP);

              propagate_choice_error (error, g_steal_pointer (&local_error), where, name);
            }
          return executor;
        }
    }

  for (GList *l = g_io_extension_point_get_extensions (ep); l != NULL; l = l->next)
    {
      TerretExecutor *executor;

      g_clear_error (&local_error);
      executor = create_backend (l->data, choice, &local_error);
      if (executor != NULL)
        return executor;

      if (!g_error_matches (local_error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE))
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return NULL;
        }
      g_debug ("%s", local_error->message);
    }

  g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
               "no backend can work on this host%s%s",
               local_error != NULL ? "; the last one said: " : "",
               local_error != NULL ? local_error->message : "");
  return NULL;
}

/**
 * terret_executor_new_with_settings:
 * @name: (nullable): a backend's name, or %NULL for the one the
 *   configuration chooses (see [func@Terret.Executor.new_default])
 * @settings: (nullable) (array zero-terminated=1): `KEY=VALUE` settings
 * @error: return location for a #GError
 *
 * Creates an executor with @settings applied, in order, after the
 * configuration file's group for the backend and before the backend
 * initializes, so a setting the backend needs to work at all (the ssh
 * backend's `host`) can come from the caller. This is what the CLI's
 * `--set` does.
 *
 * Returns: (transfer full): a new executor, or %NULL with @error set as
 *   for [func@Terret.Executor.new]; a bad setting is
 *   %TERRET_EXEC_ERROR_INVALID_CONFIG naming it
 *
 * Since: 0.1
 */
TerretExecutor *
terret_executor_new_with_settings (const char          *name,
                                   const char * const  *settings,
                                   GError             **error)
{
  g_autoptr(GKeyFile) config = NULL;
  g_autofree char *config_path = NULL;
  g_autoptr(GError) local_error = NULL;
  Choice choice;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  config = _terret_registry_load_config (&config_path, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }

  choice.config = config;
  choice.config_path = config_path;
  choice.settings = settings;

  if (name != NULL)
    return new_by_name (name, &choice, error);

  return new_configured (&choice, error);
}

/**
 * terret_executor_new:
 * @name: a backend's name, such as `pty`, `oneshot` or `noshell`
 * @error: return location for a #GError
 *
 * Creates an executor on the backend called @name, with that backend's
 * group of the configuration file applied (see
 * [func@Terret.Executor.new_default] for where the file is looked up).
 *
 * Returns: (transfer full): a new executor, or %NULL with @error set:
 *   %TERRET_EXEC_ERROR_UNKNOWN_BACKEND (the message lists the available
 *   backends), %TERRET_EXEC_ERROR_INVALID_CONFIG, or
 *   %TERRET_EXEC_ERROR_UNAVAILABLE when the backend cannot work here
 *
 * Since: 0.1
 */
TerretExecutor *
terret_executor_new (const char  *name,
                     GError     **error)
{
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return terret_executor_new_with_settings (name, NULL, error);
}

/**
 * terret_executor_new_default:
 * @error: return location for a #GError
 *
 * Creates an executor on the backend the configuration chooses:
 *
 * 1. the `TERRET_EXECUTOR` environment variable, when set (the value
 *    `help` lists the backends on stderr and goes on to the next rule);
 * 2. `backend=` in the `[executor]` group of `terret-exec/executor.conf`,
 *    looked up under `$XDG_CONFIG_HOME`, then each of `$XDG_CONFIG_DIRS`
 *    (the first file found is used);
 * 3. the backend with the highest priority that initializes on this host.
 *
 * The chosen backend's own group of that file (`[pty]`, `[oneshot]`, ...)
 * sets its settings. A backend named by rule 1 or 2 that does not exist
 * or cannot work is an error, not a silent fallback.
 *
 * Returns: (transfer full): a new executor, or %NULL with @error set
 *
 * Since: 0.1
 */
TerretExecutor *
terret_executor_new_default (GError **error)
{
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return terret_executor_new_with_settings (NULL, NULL, error);
}

/**
 * terret_executor_get_name:
 * @self: an executor
 *
 * Gets the name of the backend behind @self.
 *
 * Returns: the name of the backend behind @self
 *
 * Since: 0.1
 */
const char *
terret_executor_get_name (TerretExecutor *self)
{
  g_return_val_if_fail (TERRET_IS_EXECUTOR (self), NULL);

  return backend_name (self);
}

/**
 * terret_executor_get_capabilities:
 * @self: an executor
 *
 * Gets what the backend behind @self offers; see
 * [flags@Terret.Capabilities].
 *
 * Returns: what the backend offers
 *
 * Since: 0.1
 */
TerretCapabilities
terret_executor_get_capabilities (TerretExecutor *self)
{
  TerretExecutorInterface *iface;

  g_return_val_if_fail (TERRET_IS_EXECUTOR (self), TERRET_CAPABILITY_NONE);

  iface = TERRET_EXECUTOR_GET_IFACE (self);
  if (iface->get_capabilities == NULL)
    return TERRET_CAPABILITY_NONE;

  return iface->get_capabilities (self);
}

/**
 * terret_executor_run_async:
 * @self: an executor
 * @request: what to run
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async) (closure user_data): called when the run is over
 * @user_data: data for @callback
 *
 * Runs @request's command. The callback is invoked on the thread-default
 * main context of the caller; call [method@Terret.Executor.run_finish]
 * from it.
 *
 * Since: 0.1
 */
void
terret_executor_run_async (TerretExecutor      *self,
                           TerretRequest       *request,
                           GCancellable        *cancellable,
                           GAsyncReadyCallback  callback,
                           gpointer             user_data)
{
  TerretExecutorInterface *iface;
  TerretCapabilities caps;
  const char *refused = NULL;

  g_return_if_fail (TERRET_IS_EXECUTOR (self));
  g_return_if_fail (TERRET_IS_REQUEST (request));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  iface = TERRET_EXECUTOR_GET_IFACE (self);
  if (iface->run_async == NULL || iface->run_finish == NULL)
    g_error ("%s does not implement TerretExecutor.run_async/run_finish",
             G_OBJECT_TYPE_NAME (self));

  /* Silently running a command somewhere other than where the caller said
   * would be worse than refusing it. */
  caps = terret_executor_get_capabilities (self);
  if (terret_request_get_cwd (request) != NULL && !(caps & TERRET_CAPABILITY_REQUEST_CWD))
    refused = "a working directory per request";
  else if (terret_request_get_env (request)[0] != NULL && !(caps & TERRET_CAPABILITY_REQUEST_ENV))
    refused = "an environment per request";

  else if (terret_request_get_timeout_action (request) == TERRET_TIMEOUT_ACTION_DETACH &&
           !(caps & TERRET_CAPABILITY_DETACH))
    refused = "a timeout that detaches (on_timeout=detach)";

  if (refused != NULL)
    {
      g_task_report_new_error (self, callback, user_data, terret_executor_run_async,
                               TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED,
                               "the %s backend does not take %s; use its settings instead",
                               backend_name (self), refused);
      return;
    }

  iface->run_async (self, request, cancellable, callback, user_data);
}

/**
 * terret_executor_run_finish:
 * @self: an executor
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Completes [method@Terret.Executor.run_async].
 *
 * Returns: (transfer full): the result of a command that ran, or %NULL
 *   with @error set in the %TERRET_EXEC_ERROR domain, or to
 *   %G_IO_ERROR_CANCELLED
 *
 * Since: 0.1
 */
TerretResult *
terret_executor_run_finish (TerretExecutor  *self,
                            GAsyncResult    *result,
                            GError         **error)
{
  g_return_val_if_fail (TERRET_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (g_async_result_is_tagged (result, terret_executor_run_async))
    return g_task_propagate_pointer (G_TASK (result), error);

  return TERRET_EXECUTOR_GET_IFACE (self)->run_finish (self, result, error);
}

/* Dispatches a sync call gives the sources left on its private context
 * after the call is over. */
#define SYNC_DRAIN_ITERATIONS 64

static void
run_sync_done (GObject      *object,
               GAsyncResult *result,
               gpointer      user_data)
{
  GAsyncResult **out = user_data;

  *out = g_object_ref (result);
}

/**
 * terret_executor_run:
 * @self: an executor
 * @request: what to run
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Runs @request's command and waits for it. Usable from any thread: the
 * run happens on a private main context, so it neither needs nor blocks
 * the caller's main loop.
 *
 * Returns: (transfer full): as [method@Terret.Executor.run_finish]
 *
 * Since: 0.1
 */
TerretResult *
terret_executor_run (TerretExecutor  *self,
                     TerretRequest   *request,
                     GCancellable    *cancellable,
                     GError         **error)
{
  g_autoptr(GMainContext) context = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  TerretResult *ret;

  g_return_val_if_fail (TERRET_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (TERRET_IS_REQUEST (request), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  context = g_main_context_new ();
  g_main_context_push_thread_default (context);

  terret_executor_run_async (self, request, cancellable, run_sync_done, &result);
  while (result == NULL)
    g_main_context_iteration (context, TRUE);

  ret = terret_executor_run_finish (self, result, error);

  /* Sources a backend left behind on the private context (a completed
   * run's, destroyed but not yet freed) must go before the context does.
   * Bounded: a command a timeout detached from stays attached here, and
   * one printing without pause would keep the context busy forever. */
  for (guint i = 0; i < SYNC_DRAIN_ITERATIONS && g_main_context_pending (context); i++)
    g_main_context_iteration (context, FALSE);
  g_main_context_pop_thread_default (context);

  return ret;
}

/**
 * terret_executor_close_session:
 * @self: an executor
 * @session: a session key
 *
 * Ends the session @session and everything still running in it. Closing
 * a key that has no session is not an error, so a host can close every
 * key it ever used.
 *
 * Since: 0.1
 */
void
terret_executor_close_session (TerretExecutor *self,
                               const char     *session)
{
  TerretExecutorInterface *iface;

  g_return_if_fail (TERRET_IS_EXECUTOR (self));
  g_return_if_fail (session != NULL);

  iface = TERRET_EXECUTOR_GET_IFACE (self);
  if (iface->close_session != NULL)
    iface->close_session (self, session);
}

/**
 * terret_executor_close_all:
 * @self: an executor
 *
 * Ends every session of @self. Disposing an executor does this too.
 *
 * Since: 0.1
 */
void
terret_executor_close_all (TerretExecutor *self)
{
  TerretExecutorInterface *iface;

  g_return_if_fail (TERRET_IS_EXECUTOR (self));

  iface = TERRET_EXECUTOR_GET_IFACE (self);
  if (iface->close_all != NULL)
    iface->close_all (self);
}

/**
 * terret_executor_get_session_pid:
 * @self: an executor
 * @session: a session key
 *
 * The local process that carries @session (for the pty backend, its
 * bash), so an owner can see whether a session is live without running
 * anything in it.
 *
 * Returns: the pid, or 0 when there is no such session or process
 *
 * Since: 0.1
 */
GPid
terret_executor_get_session_pid (TerretExecutor *self,
                                 const char     *session)
{
  TerretExecutorInterface *iface;

  g_return_val_if_fail (TERRET_IS_EXECUTOR (self), 0);
  g_return_val_if_fail (session != NULL, 0);

  iface = TERRET_EXECUTOR_GET_IFACE (self);
  if (iface->get_session_pid == NULL)
    return 0;

  return iface->get_session_pid (self, session);
}

/* The interactive operations are optional: a backend offers one when it
 * both sets the capability flag and implements the vfunc. Refusing here,
 * from the flags, keeps the error and its wording the same everywhere. */
static gboolean
check_supported (TerretExecutor      *self,
                 TerretCapabilities   flag,
                 gpointer             vfunc,
                 const char          *what,
                 GError             **error)
{
  if (vfunc != NULL && (terret_executor_get_capabilities (self) & flag) != 0)
    return TRUE;

  g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED,
               "the %s backend cannot %s", backend_name (self), what);
  return FALSE;
}

/**
 * terret_executor_send_input:
 * @self: an executor
 * @session: a session key
 * @data: the bytes to write, exactly as given
 * @error: return location for a #GError
 *
 * Writes @data to the standard input of the command running in the
 * session @session, either a run still in flight or a command left
 * running by a timeout that detaches (see [enum@Terret.TimeoutAction]). For a backend
 * on a terminal the bytes are typed into it, so a newline ends a line
 * and a `^D` (0x04) at the start of a line is end of input. The bytes are
 * queued without blocking and written in order as the command reads
 * them.
 *
 * Returns: %TRUE when the bytes were queued; %FALSE with
 *   %TERRET_EXEC_ERROR_NOT_SUPPORTED when the backend lacks
 *   %TERRET_CAPABILITY_INPUT, or %TERRET_EXEC_ERROR_INVALID_REQUEST when
 *   nothing is running in @session
 *
 * Since: 0.1
 */
gboolean
terret_executor_send_input (TerretExecutor  *self,
                            const char      *session,
                            GBytes          *data,
                            GError         **error)
{
  TerretExecutorInterface *iface;

  g_return_val_if_fail (TERRET_IS_EXECUTOR (self), FALSE);
  g_return_val_if_fail (session != NULL, FALSE);
  g_return_val_if_fail (data != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  iface = TERRET_EXECUTOR_GET_IFACE (self);
  if (!check_supported (self, TERRET_CAPABILITY_INPUT, iface->send_input,
                        "send input to a running command", error))
    return FALSE;

  return iface->send_input (self, session, data, error);
}

/**
 * terret_executor_interrupt:
 * @self: an executor
 * @session: a session key
 * @error: return location for a #GError
 *
 * Interrupts the command running in @session, a run in flight or a
 * detached command, as ^C does at a terminal: SIGINT to its foreground
 * process group. A command that handles the interrupt goes on (a REPL, a
 * loop trapping SIGINT). One that is still running after the backend's
 * interrupt grace is killed with its whole process group; for a
 * persistent session that ends the session's shell, the command's result
 * says so and the next run starts a fresh one.
 *
 * The command's end is reported where it would have been anyway: by the
 * run in flight, or by the next [method@Terret.Executor.poll_async].
 *
 * Returns: %TRUE when the interrupt was sent; %FALSE with
 *   %TERRET_EXEC_ERROR_NOT_SUPPORTED when the backend lacks
 *   %TERRET_CAPABILITY_INTERRUPT, or %TERRET_EXEC_ERROR_INVALID_REQUEST
 *   when nothing is running in @session
 *
 * Since: 0.1
 */
gboolean
terret_executor_interrupt (TerretExecutor  *self,
                           const char      *session,
                           GError         **error)
{
  TerretExecutorInterface *iface;

  g_return_val_if_fail (TERRET_IS_EXECUTOR (self), FALSE);
  g_return_val_if_fail (session != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  iface = TERRET_EXECUTOR_GET_IFACE (self);
  if (!check_supported (self, TERRET_CAPABILITY_INTERRUPT, iface->interrupt,
                        "interrupt a running command", error))
    return FALSE;

  return iface->interrupt (self, session, error);
}

/**
 * terret_executor_poll_async:
 * @self: an executor
 * @session: a session key
 * @wait: seconds to wait for new output at most; 0 returns at once
 * @cancellable: (nullable): a #GCancellable; cancelling ends the poll,
 *   not the command
 * @callback: (scope async) (closure user_data): called when the poll is over
 * @user_data: data for @callback
 *
 * Collects the output of the command a timeout detached from in
 * @session (see [enum@Terret.TimeoutAction]). The poll returns as soon as
 * there is output the caller has not seen, or the command ended, or
 * @wait seconds passed.
 *
 * The result holds only the output since the previous result of the same
 * command (the detaching run's, or the previous poll's), kept under the
 * backend's output cap for each such stretch. While the command goes on,
 * [method@Terret.Result.get_running] is %TRUE and there is no status.
 * Once it ended, the result has its status and cwd, and the session is
 * idle again: the next poll fails, the next run starts.
 *
 * A poll while a run is still waiting for the command fails with
 * %TERRET_EXEC_ERROR_BUSY (that run's result will carry the output), and
 * so does a second poll while one is waiting. A poll of a session with
 * nothing detached fails with %TERRET_EXEC_ERROR_INVALID_REQUEST.
 *
 * Since: 0.1
 */
void
terret_executor_poll_async (TerretExecutor      *self,
                            const char          *session,
                            double               wait,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  TerretExecutorInterface *iface;
  GError *error = NULL;

  g_return_if_fail (TERRET_IS_EXECUTOR (self));
  g_return_if_fail (session != NULL);
  g_return_if_fail (wait >= 0);
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  iface = TERRET_EXECUTOR_GET_IFACE (self);
  if (iface->poll_finish == NULL ||
      !check_supported (self, TERRET_CAPABILITY_POLL, iface->poll_async,
                        "poll a running command", &error))
    {
      if (error == NULL)
        g_set_error (&error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED,
                     "the %s backend cannot poll a running command", backend_name (self));
      g_task_report_error (self, callback, user_data, terret_executor_poll_async, error);
      return;
    }

  iface->poll_async (self, session, wait, cancellable, callback, user_data);
}

/**
 * terret_executor_poll_finish:
 * @self: an executor
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Completes [method@Terret.Executor.poll_async].
 *
 * Returns: (transfer full): the new output, with
 *   [method@Terret.Result.get_running] telling whether the command goes
 *   on, or %NULL with @error set in the %TERRET_EXEC_ERROR domain or to
 *   %G_IO_ERROR_CANCELLED
 *
 * Since: 0.1
 */
TerretResult *
terret_executor_poll_finish (TerretExecutor  *self,
                             GAsyncResult    *result,
                             GError         **error)
{
  g_return_val_if_fail (TERRET_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (g_async_result_is_tagged (result, terret_executor_poll_async))
    return g_task_propagate_pointer (G_TASK (result), error);

  return TERRET_EXECUTOR_GET_IFACE (self)->poll_finish (self, result, error);
}

/**
 * terret_executor_poll:
 * @self: an executor
 * @session: a session key
 * @wait: seconds to wait for new output at most
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * The synchronous form of [method@Terret.Executor.poll_async], usable
 * from any thread: it waits on a private main context. The command's
 * output is read while the poll waits (and, between polls, while the
 * main context the command was started or last polled from runs).
 *
 * Returns: (transfer full): as [method@Terret.Executor.poll_finish]
 *
 * Since: 0.1
 */
TerretResult *
terret_executor_poll (TerretExecutor  *self,
                      const char      *session,
                      double           wait,
                      GCancellable    *cancellable,
                      GError         **error)
{
  g_autoptr(GMainContext) context = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  TerretResult *ret;

  g_return_val_if_fail (TERRET_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (session != NULL, NULL);
  g_return_val_if_fail (wait >= 0, NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  context = g_main_context_new ();
  g_main_context_push_thread_default (context);

  terret_executor_poll_async (self, session, wait, cancellable, run_sync_done, &result);
  while (result == NULL)
    g_main_context_iteration (context, TRUE);

  ret = terret_executor_poll_finish (self, result, error);

  for (guint i = 0; i < SYNC_DRAIN_ITERATIONS && g_main_context_pending (context); i++)
    g_main_context_iteration (context, FALSE);
  g_main_context_pop_thread_default (context);

  return ret;
}

static gboolean
is_setting (GParamSpec *pspec)
{
  return (pspec->flags & G_PARAM_WRITABLE) != 0 &&
         (pspec->flags & G_PARAM_CONSTRUCT_ONLY) == 0;
}

static char *
list_settings (TerretExecutor *self)
{
  g_autofree GParamSpec **pspecs = NULL;
  g_autoptr(GString) names = g_string_new (NULL);
  guint n = 0;

  pspecs = g_object_class_list_properties (G_OBJECT_GET_CLASS (self), &n);
  for (guint i = 0; i < n; i++)
    {
      if (!is_setting (pspecs[i]))
        continue;
      if (names->len > 0)
        g_string_append (names, ", ");
      g_string_append (names, g_param_spec_get_name (pspecs[i]));
    }

  if (names->len == 0)
    g_string_append (names, "none");

  return g_string_free (g_steal_pointer (&names), FALSE);
}

static GParamSpec *
find_setting (TerretExecutor  *self,
              const char      *key,
              GError         **error)
{
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (self), key);

  if (pspec == NULL || !is_setting (pspec))
    {
      g_autofree char *names = list_settings (self);

      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                   "the %s backend has no setting “%s”; its settings: %s",
                   backend_name (self), key, names);
      return NULL;
    }

  return pspec;
}

static gboolean
set_value (TerretExecutor  *self,
           GParamSpec      *pspec,
           GValue          *value,
           const char      *text,
           GError         **error)
{
  /* validate() clamps an out-of-range value and says it did; a setting
   * that silently became something else would be worse than an error. */
  if (g_param_value_validate (pspec, value))
    {
      g_autofree char *expected = _terret_settings_describe_type (pspec);

      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                   "invalid value “%s” for %s: expected %s",
                   text, g_param_spec_get_name (pspec), expected);
      return FALSE;
    }

  g_object_set_property (G_OBJECT (self), g_param_spec_get_name (pspec), value);
  return TRUE;
}

/**
 * terret_executor_set_setting:
 * @self: an executor
 * @key: a setting's name (a writable property of the backend)
 * @value: its value as text
 *
 * Sets one backend setting from text, converted by the setting's type:
 * numbers within the setting's range, `true`/`false`, an enumeration's
 * nick, a list separated by `;`. An empty value puts a setting whose
 * default is unset back to unset. A live executor applies the new value
 * from its next session on.
 *
 * Returns: %TRUE on success; %FALSE with %TERRET_EXEC_ERROR_INVALID_CONFIG
 *   naming the key and what is allowed
 *
 * Since: 0.1
 */
gboolean
terret_executor_set_setting (TerretExecutor  *self,
                             const char      *key,
                             const char      *value,
                             GError         **error)
{
  g_auto(GValue) gvalue = G_VALUE_INIT;
  GParamSpec *pspec;

  g_return_val_if_fail (TERRET_IS_EXECUTOR (self), FALSE);
  g_return_val_if_fail (key != NULL, FALSE);
  g_return_val_if_fail (value != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if ((pspec = find_setting (self, key, error)) == NULL)
    return FALSE;

  if (!_terret_settings_value_from_string (pspec, value, &gvalue, error))
    return FALSE;

  return set_value (self, pspec, &gvalue, value, error);
}

/**
 * terret_executor_apply_key_file:
 * @self: an executor
 * @key_file: a key file
 * @origin: (nullable): where @key_file came from, for error messages
 *
 * Applies the group of @key_file named after @self's backend (`[pty]`,
 * `[oneshot]`, ...) as settings, in the file's order. A missing group is
 * not an error.
 *
 * Returns: %TRUE on success; %FALSE with %TERRET_EXEC_ERROR_INVALID_CONFIG
 *   naming @origin, the group and the key
 *
 * Since: 0.1
 */
gboolean
terret_executor_apply_key_file (TerretExecutor  *self,
                                GKeyFile        *key_file,
                                const char      *origin,
                                GError         **error)
{
  const char *group;
  g_auto(GStrv) keys = NULL;

  g_return_val_if_fail (TERRET_IS_EXECUTOR (self), FALSE);
  g_return_val_if_fail (key_file != NULL, FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  if (origin == NULL)
    origin = "configuration";

  group = backend_name (self);
  if (!g_key_file_has_group (key_file, group))
    return TRUE;

  keys = g_key_file_get_keys (key_file, group, NULL, NULL);
  for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
    {
      g_autoptr(GError) local_error = NULL;
      g_auto(GValue) gvalue = G_VALUE_INIT;
      g_autofree char *text = NULL;
      GParamSpec *pspec;
      gboolean ok;

      /* GKeyFile unescapes strings itself; lists keep their raw syntax so
       * the settings parser reads them as it reads `--set`. */
      pspec = find_setting (self, keys[i], &local_error);
      if (pspec != NULL && G_PARAM_SPEC_VALUE_TYPE (pspec) == G_TYPE_STRV)
        text = g_key_file_get_value (key_file, group, keys[i], &local_error);
      else if (pspec != NULL)
        text = g_key_file_get_string (key_file, group, keys[i], &local_error);

      ok = text != NULL &&
           _terret_settings_value_from_string (pspec, text, &gvalue, &local_error) &&
           set_value (self, pspec, &gvalue, text, &local_error);

      if (!ok)
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                       "%s: [%s] %s: %s", origin, group, keys[i], local_error->message);
          return FALSE;
        }
    }

  return TRUE;
}
