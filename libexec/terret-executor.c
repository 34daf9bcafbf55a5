/* terret-executor.c: the interface and its wrappers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-error.h"
#include "terret-executor.h"

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
  GIOExtensionPoint *ep;

  g_return_val_if_fail (TERRET_IS_EXECUTOR (self), NULL);

  /* The name its type was registered under. An executor of a module's
   * type exists only once the modules are loaded; a type no module
   * registered (a host's own) goes by its type name. */
  ep = g_io_extension_point_lookup (TERRET_EXECUTOR_EXTENSION_POINT_NAME);
  for (GList *l = ep != NULL ? g_io_extension_point_get_extensions (ep) : NULL;
       l != NULL; l = l->next)
    {
      if (g_io_extension_get_type (l->data) == G_OBJECT_TYPE (self))
        return g_io_extension_get_name (l->data);
    }

  return G_OBJECT_TYPE_NAME (self);
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
  TerretIdleAction idle_action;
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
  else if (terret_request_get_return_after (request) > 0 && !(caps & TERRET_CAPABILITY_DETACH))
    refused = "a return-after (it needs commands left running)";
  else if ((terret_request_get_deadline (request) > 0 ||
            terret_request_get_idle_timeout (request, NULL) > 0) && !(caps & TERRET_CAPABILITY_CLOCKS))
    refused = "a deadline or an idle timeout";
  else if (terret_request_get_idle_timeout (request, &idle_action) > 0 &&
           idle_action == TERRET_IDLE_ACTION_RETURN && !(caps & TERRET_CAPABILITY_DETACH))
    refused = "an idle timeout that returns (it needs commands left running)";

  if (refused == NULL && terret_request_get_return_after (request) > 0 &&
      terret_request_get_timeout (request) > 0)
    {
      g_task_report_new_error (self, callback, user_data, terret_executor_run_async,
                               TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                               "a request has one of timeout and return-after, which are one "
                               "clock (return-after is a timeout that detaches); a hard end "
                               "is a deadline");
      return;
    }

  if (refused != NULL)
    {
      g_task_report_new_error (self, callback, user_data, terret_executor_run_async,
                               TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED,
                               "the %s backend does not take %s; use its settings instead",
                               terret_executor_get_name (self), refused);
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
 * terret_executor_close_session_full:
 * @self: an executor
 * @session: a session key
 * @stopped: (out) (optional) (transfer container) (element-type TerretStoppedProcess):
 *   return location for what the close had to stop
 *
 * Ends the session @session as [method@Terret.Executor.close_session]
 * does, and says what it had to stop: each process still running there
 * (a background job, a dev server, a shell that did not leave), with the
 * last signal of the close's sequence it heard (SIGHUP, SIGTERM, or the
 * KILL at the grace's end). The close waits for their end, which its
 * grace bounds ([property@Terret.Request:stop-grace]'s setting), so that
 * the account is whole. Empty where nothing was left, or where the
 * backend cannot tell.
 *
 * Since: 0.3
 */
void
terret_executor_close_session_full (TerretExecutor  *self,
                                    const char      *session,
                                    GPtrArray      **stopped)
{
  TerretExecutorInterface *iface;
  g_autoptr(GPtrArray) list = NULL;

  g_return_if_fail (TERRET_IS_EXECUTOR (self));
  g_return_if_fail (session != NULL);

  list = g_ptr_array_new_with_free_func (g_object_unref);
  iface = TERRET_EXECUTOR_GET_IFACE (self);
  if (iface->close_session_full != NULL)
    iface->close_session_full (self, session, list);
  else if (iface->close_session != NULL)
    iface->close_session (self, session);
  if (stopped != NULL)
    *stopped = g_steal_pointer (&list);
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
 * terret_executor_dup_containment:
 * @self: an executor
 *
 * How @self keeps what commands start from outliving their session or
 * run, and which resource limits hold how, on this host, as a sentence
 * for a person (what `terret-exec --list-backends` prints), so nothing is
 * weaker than the documentation says without saying so.
 *
 * Returns: (transfer full) (nullable): the description, or %NULL when
 *   the backend gives none (it runs nothing, or does not say)
 *
 * Since: 0.2
 */
char *
terret_executor_dup_containment (TerretExecutor *self)
{
  TerretExecutorInterface *iface;

  g_return_val_if_fail (TERRET_IS_EXECUTOR (self), NULL);

  iface = TERRET_EXECUTOR_GET_IFACE (self);
  if (iface->dup_containment == NULL)
    return NULL;

  return iface->dup_containment (self);
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
               "the %s backend cannot %s", terret_executor_get_name (self), what);
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
                     "the %s backend cannot poll a running command",
                     terret_executor_get_name (self));
      g_task_report_error (self, callback, user_data, terret_executor_poll_async, error);
      return;
    }

  iface->poll_async (self, session, wait, cancellable, callback, user_data);
}

/**
 * terret_executor_list_async:
 * @self: an executor
 * @cancellable: (nullable): a #GCancellable
 * @callback: (scope async) (closure user_data): called with the list
 * @user_data: data for @callback
 *
 * Lists the sessions @self keeps and the commands it left running: each
 * with its key, its state, the command and when it started, the process
 * on this host behind it where the backend knows one, and the bytes it
 * printed so far. A host that lost track of a key (after its own restart
 * of a conversation, say) finds it here, and reaches the command with
 * poll, input, interrupt or close. A backend without
 * %TERRET_CAPABILITY_LIST fails with %TERRET_EXEC_ERROR_NOT_SUPPORTED.
 *
 * Since: 0.2
 */
void
terret_executor_list_async (TerretExecutor      *self,
                            GCancellable        *cancellable,
                            GAsyncReadyCallback  callback,
                            gpointer             user_data)
{
  TerretExecutorInterface *iface;

  g_return_if_fail (TERRET_IS_EXECUTOR (self));
  g_return_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable));

  iface = TERRET_EXECUTOR_GET_IFACE (self);
  if (iface->list_async == NULL || iface->list_finish == NULL ||
      !(terret_executor_get_capabilities (self) & TERRET_CAPABILITY_LIST))
    {
      g_task_report_new_error (self, callback, user_data, terret_executor_list_async,
                               TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED,
                               "the %s backend cannot list its sessions",
                               terret_executor_get_name (self));
      return;
    }

  iface->list_async (self, cancellable, callback, user_data);
}

/**
 * terret_executor_list_finish:
 * @self: an executor
 * @result: the #GAsyncResult given to the callback
 * @error: return location for a #GError
 *
 * Completes [method@Terret.Executor.list_async].
 *
 * Returns: (transfer container) (element-type Terret.SessionInfo): the
 *   entries, sorted by key, or %NULL with @error set
 *
 * Since: 0.2
 */
GPtrArray *
terret_executor_list_finish (TerretExecutor  *self,
                             GAsyncResult    *result,
                             GError         **error)
{
  g_return_val_if_fail (TERRET_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (G_IS_ASYNC_RESULT (result), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (g_async_result_is_tagged (result, terret_executor_list_async))
    return g_task_propagate_pointer (G_TASK (result), error);

  return TERRET_EXECUTOR_GET_IFACE (self)->list_finish (self, result, error);
}

/**
 * terret_executor_list:
 * @self: an executor
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * The synchronous form of [method@Terret.Executor.list_async].
 *
 * Returns: (transfer container) (element-type Terret.SessionInfo): the
 *   entries, sorted by key, or %NULL with @error set
 *
 * Since: 0.2
 */
GPtrArray *
terret_executor_list (TerretExecutor  *self,
                      GCancellable    *cancellable,
                      GError         **error)
{
  g_autoptr(GMainContext) context = NULL;
  g_autoptr(GAsyncResult) result = NULL;
  GPtrArray *ret;

  g_return_val_if_fail (TERRET_IS_EXECUTOR (self), NULL);
  g_return_val_if_fail (cancellable == NULL || G_IS_CANCELLABLE (cancellable), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  context = g_main_context_new ();
  g_main_context_push_thread_default (context);

  terret_executor_list_async (self, cancellable, run_sync_done, &result);
  while (result == NULL)
    g_main_context_iteration (context, TRUE);

  ret = terret_executor_list_finish (self, result, error);

  for (guint i = 0; i < SYNC_DRAIN_ITERATIONS && g_main_context_pending (context); i++)
    g_main_context_iteration (context, FALSE);
  g_main_context_pop_thread_default (context);

  return ret;
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

