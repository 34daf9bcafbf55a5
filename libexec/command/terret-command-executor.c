/* terret-command-executor.c: a backend that runs one process per command
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "terret-command-executor.h"
#include "terret-command-run-private.h"
#include "terret-session-info-private.h"
#include "terret-sandbox-private.h"
#include "terret-error.h"
#include "terret-executor.h"
#include "terret-result.h"

/**
 * TerretCommandExecutor:
 *
 * The base of every backend that runs each command as a process of its
 * own, `bash -c COMMAND` by default: nothing persists from one run to the
 * next, so runs never wait for each other and any number of them may be
 * in flight on one main context.
 *
 * It implements [iface@Terret.Executor] and [iface@Gio.Initable] and owns
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

/* Past this, a command is not passed as an argument (the kernel caps one
 * at 128 KiB) but read by the shell from descriptor 3. */
#define LONG_COMMAND (64 * 1024)

typedef struct
{
  TerretSettingsStore settings;
  TerretLauncherLinkPool links; /* one launcher per sandbox policy */

  /* The ends of detached commands that no poll collected yet, by session
   * key; the next poll of the key returns it, the next run drops it. */
  GHashTable *parked;           /* (owned) (element-type utf8 TerretResult) */
  /* The same keys: how a list shows each (its command, start, output). */
  GHashTable *parked_infos;     /* (owned) (element-type utf8 TerretSessionInfo) */

  /* Runs in flight, each with its session key, so close_session() and
   * close_all() find them. A plain array: one-shot runs are few at a time
   * and a close scans them once. */
  GPtrArray *runs;              /* (owned) (element-type CommandRun) unowned runs */

  /* Full-output files by session key, removed when the key is closed,
   * but for those a caller took. */
  GHashTable *spools;           /* (owned) (element-type utf8 GPtrArray<TerretSpool>) */
} TerretCommandExecutorPrivate;

static void executor_iface_init (TerretExecutorInterface *iface);
static void initable_iface_init (GInitableIface *iface);

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (TerretCommandExecutor, terret_command_executor, G_TYPE_OBJECT,
                                  G_ADD_PRIVATE (TerretCommandExecutor)
                                  G_IMPLEMENT_INTERFACE (TERRET_TYPE_EXECUTOR, executor_iface_init)
                                  G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, initable_iface_init))

/* --- Runs ----------------------------------------------------------------- */

/* A run is over: it leaves the table, and a detached command's end nobody
 * waits for is parked for the next poll of its key. */
static void
run_ended (gpointer      owner,
           CommandRun   *run,
           TerretResult *parked)
{
  TerretCommandExecutor *self = owner;
  TerretCommandExecutorPrivate *priv = terret_command_executor_get_instance_private (self);

  g_ptr_array_remove_fast (priv->runs, run);
  if (parked != NULL)
    {
      g_hash_table_replace (priv->parked, g_strdup (run->session), g_object_ref (parked));
      g_hash_table_replace (priv->parked_infos, g_strdup (run->session),
                            _terret_command_run_describe (run, TERRET_SESSION_STATE_ENDED));
    }
}

/* Removes the files of a closed key, but for those a caller took. */
static void
spools_remove (gpointer data)
{
  GPtrArray *spools = data;

  for (guint i = 0; i < spools->len; i++)
    _terret_spool_remove (g_ptr_array_index (spools, i));
  g_ptr_array_unref (spools);
}

/* A run's full-output file, kept until its session key is closed. */
static void
keep_spool (TerretCommandExecutor *self,
            const char            *session,
            TerretSpool           *spool)
{
  TerretCommandExecutorPrivate *priv = terret_command_executor_get_instance_private (self);
  GPtrArray *spools = g_hash_table_lookup (priv->spools, session);

  if (spools == NULL)
    {
      spools = g_ptr_array_new_with_free_func ((GDestroyNotify) _terret_spool_unref);
      g_hash_table_insert (priv->spools, g_strdup (session), spools);
    }
  g_ptr_array_add (spools, _terret_spool_ref (spool));
}

static gboolean
run_prepare (gpointer         owner,
             TerretRequest   *request,
             TerretLauncher  *launcher,
             GPtrArray       *argv,
             GError         **error)
{
  TerretCommandExecutor *self = owner;

  return TERRET_COMMAND_EXECUTOR_GET_CLASS (self)->prepare_run (self, request, launcher, argv,
                                                                error);
}

static const TerretCommandRunFuncs run_funcs = {
  run_prepare,
  run_ended,
};

/* Runs of one key are independent, except around a command that may
 * detach: it needs the key to itself, so that a poll or an interrupt of
 * the key can only mean that command. */
static gboolean
check_session_free (TerretCommandExecutor  *self,
                    TerretRequest          *request,
                    const TerretRunPlan    *plan,
                    GError                **error)
{
  TerretCommandExecutorPrivate *priv = terret_command_executor_get_instance_private (self);
  const char *session = terret_request_get_session (request);
  gboolean detaching = plan->may_detach;

  for (guint i = 0; i < priv->runs->len; i++)
    {
      CommandRun *run = g_ptr_array_index (priv->runs, i);

      if (!_terret_command_run_in_session (run, session))
        continue;

      if (run->detach.detached)
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY,
                       "Session “%s” has a command a timeout detached from; poll it or "
                       "interrupt it, and run again once it ended", session);
          return FALSE;
        }
      if (run->plan->may_detach)
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY,
                       "Session “%s” is running a command whose timeout detaches; it has the "
                       "session to itself until it ends", session);
          return FALSE;
        }
      if (detaching)
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY,
                       "Session “%s” is running other commands; a command whose timeout "
                       "detaches needs the session to itself", session);
          return FALSE;
        }
    }

  return TRUE;
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
 * the shell in a client calls it after the client's own words.
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
  TerretCommandExecutorPrivate *priv;
  g_autoptr(TerretSettings) settings = NULL;
  const char *command;
  gsize len;

  g_return_val_if_fail (TERRET_IS_COMMAND_EXECUTOR (self), FALSE);
  g_return_val_if_fail (TERRET_IS_REQUEST (request), FALSE);
  g_return_val_if_fail (TERRET_IS_LAUNCHER (launcher), FALSE);
  g_return_val_if_fail (argv != NULL, FALSE);

  priv = terret_command_executor_get_instance_private (self);
  settings = _terret_settings_store_snapshot (&priv->settings);
  command = terret_request_get_command (request);
  len = strlen (command);

  g_ptr_array_add (argv, g_strdup (settings->shell));
  g_ptr_array_add (argv, g_strdup ("-c"));
  if (len <= LONG_COMMAND)
    {
      g_ptr_array_add (argv, g_strdup (command));
      return TRUE;
    }

  {
    /* A memfd, seekable, so bash's read takes it in blocks; the variable
     * is gone before the command runs, and so is descriptor 3. */
    int fd = memfd_create ("terret-command", MFD_CLOEXEC);

    if (fd < 0 || write (fd, command, len) != (gssize)len || lseek (fd, 0, SEEK_SET) != 0)
      {
        if (fd >= 0)
          close (fd);
        g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                     "Could not hand the shell a command of %" G_GSIZE_FORMAT " bytes", len);
        return FALSE;
      }
    terret_launcher_take_fd (launcher, fd, 3);
    g_ptr_array_add (argv, g_strdup ("IFS= \\builtin read -r -d '' __terret_command <&3; "
                                     "\\exec 3<&-; "
                                     "\\builtin eval \"\\builtin unset __terret_command; "
                                     "$__terret_command\""));
  }

  return TRUE;
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
 * runs here, keeps it.
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
  TerretCommandExecutorPrivate *priv;
  g_autoptr(TerretSettings) settings = NULL;
  static const char * const nothing[] = { NULL };

  g_return_val_if_fail (TERRET_IS_COMMAND_EXECUTOR (self), NULL);
  g_return_val_if_fail (TERRET_IS_REQUEST (request), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  priv = terret_command_executor_get_instance_private (self);
  settings = _terret_settings_store_snapshot (&priv->settings);
  return _terret_settings_build_environ (settings, inherit ? NULL : nothing,
                                         terret_request_get_env (request), error);
}

static gboolean
terret_command_executor_real_prepare_run (TerretCommandExecutor  *self,
                                          TerretRequest          *request,
                                          TerretLauncher         *launcher,
                                          GPtrArray              *argv,
                                          GError                **error)
{
  return terret_command_executor_append_shell_command (self, request, launcher, argv, error);
}

static TerretCapabilities
terret_command_executor_real_get_capabilities (TerretCommandExecutor *self)
{
  return (TERRET_CAPABILITY_RUNS_COMMANDS |
          TERRET_CAPABILITY_SEPARATE_STDERR |
          TERRET_CAPABILITY_REQUEST_CWD |
          TERRET_CAPABILITY_REQUEST_ENV |
          TERRET_CAPABILITY_PROGRESS |
          TERRET_CAPABILITY_INTERRUPT |
          TERRET_CAPABILITY_POLL |
          TERRET_CAPABILITY_DETACH |
          TERRET_CAPABILITY_CLOCKS |
          TERRET_CAPABILITY_LIST);
}

/* --- TerretExecutor ---------------------------------------------------- */

static TerretCapabilities
terret_command_executor_get_capabilities (TerretExecutor *executor)
{
  TerretCommandExecutor *self = TERRET_COMMAND_EXECUTOR (executor);

  return TERRET_COMMAND_EXECUTOR_GET_CLASS (self)->get_capabilities (self);
}

/* The launcher a run with @settings starts under: on the subclass's far
 * side, or inside the sandbox they ask for, if any. */
static TerretLauncherLink *
get_link (TerretCommandExecutor  *self,
          TerretSettings         *settings,
          GError                **error)
{
  TerretCommandExecutorPrivate *priv = terret_command_executor_get_instance_private (self);
  g_autoptr(TerretFarSide) far = NULL;
  g_autoptr(GError) local_error = NULL;

  if (TERRET_COMMAND_EXECUTOR_GET_CLASS (self)->get_far_side != NULL &&
      (far = TERRET_COMMAND_EXECUTOR_GET_CLASS (self)->get_far_side (self, &local_error)) == NULL &&
      local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  return _terret_sandbox_get_link (settings, &priv->links, far, error);
}

static void
terret_command_executor_run_async (TerretExecutor      *executor,
                                   TerretRequest       *request,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  TerretCommandExecutor *self = TERRET_COMMAND_EXECUTOR (executor);
  TerretCommandExecutorPrivate *priv = terret_command_executor_get_instance_private (self);
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_autoptr(TerretSettings) settings = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretLauncherLink) launcher_link = NULL;
  g_autoptr(TerretRunPlan) plan = NULL;
  TerretResult *parked;
  CommandRun *run;

  g_task_set_source_tag (task, terret_command_executor_run_async);
  /* A command that finished is reported as it finished, even if the
   * cancellable fires between its end and the caller's callback: only a
   * run this backend killed for the cancellation reports it. */
  g_task_set_check_cancellable (task, FALSE);

  if (g_task_return_error_if_cancelled (task))
    return;

  settings = _terret_settings_store_snapshot (&priv->settings);
  plan = _terret_run_plan_new (settings, request);
  if (!check_session_free (self, request, plan, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  launcher_link = get_link (self, settings, &error);
  if (launcher_link == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  run = _terret_command_run_new (&run_funcs, self, g_object_ref (task), request,
                                 g_steal_pointer (&plan));
  if (!_terret_command_run_spawn (run, launcher_link, cancellable, &error))
    {
      /* Nothing ran: nothing to keep. */
      for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
        if (run->streams[i].spool != NULL)
          _terret_spool_remove (run->streams[i].spool);
      _terret_command_run_free (run);
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  /* Its full-output files stay until its key is closed. */
  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    if (run->streams[i].spool != NULL)
      keep_spool (self, run->session, run->streams[i].spool);

  /* The end of a command detached earlier in this key, never polled: its
   * caller chose to run something else instead of collecting it. */
  parked = g_hash_table_lookup (priv->parked, run->session);
  if (parked != NULL)
    {
      g_autofree char *notice = _terret_detach_describe_parked (parked);

      g_string_append (run->notices, notice);
      g_hash_table_remove (priv->parked, run->session);
      g_hash_table_remove (priv->parked_infos, run->session);
    }

  g_ptr_array_add (priv->runs, run);
}

static TerretResult *
terret_command_executor_run_finish (TerretExecutor  *executor,
                                    GAsyncResult    *result,
                                    GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, executor), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
terret_command_executor_close_session (TerretExecutor *executor,
                                       const char     *session)
{
  TerretCommandExecutor *self = TERRET_COMMAND_EXECUTOR (executor);
  TerretCommandExecutorPrivate *priv = terret_command_executor_get_instance_private (self);

  /* Backwards: a detached command nobody waits for is freed here, and a
   * removal moves the last run, already seen, into its slot. A stopped run
   * in flight completes from its own dispatch. */
  for (guint i = priv->runs->len; i > 0; i--)
    {
      CommandRun *run = g_ptr_array_index (priv->runs, i - 1);

      if (session != NULL && g_strcmp0 (run->session, session) != 0)
        continue;

      if (run->task == NULL && run->detach.poll_task == NULL)
        _terret_command_run_end_now (run);
      else
        _terret_command_run_stop (run, RUN_END_CLOSED);
    }

  /* A closed key starts afresh: an end nobody polled goes too, and so do
   * its full-output files. */
  if (session == NULL)
    {
      g_hash_table_remove_all (priv->parked);
      g_hash_table_remove_all (priv->parked_infos);
      g_hash_table_remove_all (priv->spools);
    }
  else
    {
      g_hash_table_remove (priv->parked, session);
      g_hash_table_remove (priv->parked_infos, session);
      g_hash_table_remove (priv->spools, session);
    }
}

static void
terret_command_executor_close_all (TerretExecutor *executor)
{
  terret_command_executor_close_session (executor, NULL);
}

static GPid
terret_command_executor_get_session_pid (TerretExecutor *executor,
                                         const char     *session)
{
  /* No process carries a session between runs. */
  return 0;
}

static gboolean
terret_command_executor_interrupt (TerretExecutor  *executor,
                                   const char      *session,
                                   GError         **error)
{
  TerretCommandExecutor *self = TERRET_COMMAND_EXECUTOR (executor);
  TerretCommandExecutorPrivate *priv = terret_command_executor_get_instance_private (self);
  gboolean found = FALSE;

  /* Every command of the key: among runs in flight together none is the
   * foreground one, and a close ends them all alike. */
  for (guint i = 0; i < priv->runs->len; i++)
    {
      CommandRun *run = g_ptr_array_index (priv->runs, i);

      if (!_terret_command_run_in_session (run, session) || run->end != RUN_END_NONE)
        continue;

      found = TRUE;
      _terret_command_run_interrupt (run);
    }

  if (!found)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "Nothing is running in session “%s” to interrupt", session);
      return FALSE;
    }

  return TRUE;
}

static void
terret_command_executor_poll_async (TerretExecutor      *executor,
                                    const char          *session,
                                    double               wait,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  TerretCommandExecutor *self = TERRET_COMMAND_EXECUTOR (executor);
  TerretCommandExecutorPrivate *priv = terret_command_executor_get_instance_private (self);
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  g_autofree char *parked_key = NULL;
  gpointer parked = NULL;
  CommandRun *run = NULL;
  gboolean in_flight = FALSE;

  g_task_set_source_tag (task, terret_command_executor_poll_async);

  if (g_task_return_error_if_cancelled (task))
    return;

  if (g_hash_table_steal_extended (priv->parked, session, (gpointer *)&parked_key, &parked))
    {
      g_hash_table_remove (priv->parked_infos, session);
      g_task_return_pointer (task, parked, g_object_unref);
      return;
    }

  for (guint i = 0; i < priv->runs->len && run == NULL; i++)
    {
      CommandRun *r = g_ptr_array_index (priv->runs, i);

      if (!_terret_command_run_in_session (r, session))
        continue;
      if (r->detach.detached)
        run = r;
      else if (r->plan->may_detach)
        in_flight = TRUE;
    }

  if (run == NULL && in_flight)
    _terret_detach_return_not_detached (task, session);
  else if (run == NULL)
    _terret_detach_return_no_command (task, session);
  else if (run->detach.poll_task != NULL)
    _terret_detach_return_poll_busy (task, session);
  else
    _terret_detach_poll (&run->detach, g_steal_pointer (&task), wait, cancellable);
}

/* Runs in flight (a run waits for it, or it was handed back) and ends
 * waiting for a poll. One-shot commands have no idle sessions to show. */
static void
terret_command_executor_list_async (TerretExecutor      *executor,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  TerretCommandExecutor *self = TERRET_COMMAND_EXECUTOR (executor);
  TerretCommandExecutorPrivate *priv = terret_command_executor_get_instance_private (self);
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  GPtrArray *infos = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  gpointer value;

  g_task_set_source_tag (task, terret_command_executor_list_async);

  for (guint i = 0; i < priv->runs->len; i++)
    {
      CommandRun *run = g_ptr_array_index (priv->runs, i);

      g_ptr_array_add (infos, _terret_command_run_describe (run, run->detach.detached
                                                                 ? TERRET_SESSION_STATE_DETACHED
                                                                 : TERRET_SESSION_STATE_RUNNING));
    }
  g_hash_table_iter_init (&iter, priv->parked_infos);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (infos, g_object_ref (value));
  _terret_session_infos_return (task, infos);
}

static GPtrArray *
terret_command_executor_list_finish (TerretExecutor  *executor,
                                     GAsyncResult    *result,
                                     GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, executor), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static TerretResult *
terret_command_executor_poll_finish (TerretExecutor  *executor,
                                     GAsyncResult    *result,
                                     GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, executor), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static char *
terret_command_executor_dup_containment (TerretExecutor *executor)
{
  TerretCommandExecutor *self = TERRET_COMMAND_EXECUTOR (executor);

  return TERRET_COMMAND_EXECUTOR_GET_CLASS (self)->describe_containment (self);
}

static char *
terret_command_executor_real_describe_containment (TerretCommandExecutor *self)
{
  TerretCommandExecutorPrivate *priv = terret_command_executor_get_instance_private (self);
  g_autoptr(TerretSettings) settings = _terret_settings_store_snapshot (&priv->settings);

  return _terret_sandbox_describe (settings);
}

static void
executor_iface_init (TerretExecutorInterface *iface)
{
  iface->dup_containment = terret_command_executor_dup_containment;
  iface->get_capabilities = terret_command_executor_get_capabilities;
  iface->run_async = terret_command_executor_run_async;
  iface->run_finish = terret_command_executor_run_finish;
  iface->close_session = terret_command_executor_close_session;
  iface->close_all = terret_command_executor_close_all;
  iface->get_session_pid = terret_command_executor_get_session_pid;
  iface->interrupt = terret_command_executor_interrupt;
  iface->poll_async = terret_command_executor_poll_async;
  iface->poll_finish = terret_command_executor_poll_finish;
  iface->list_async = terret_command_executor_list_async;
  iface->list_finish = terret_command_executor_list_finish;
}

/* --- GInitable --------------------------------------------------------- */

static gboolean
terret_command_executor_real_check_available (TerretCommandExecutor  *self,
                                              GCancellable           *cancellable,
                                              GError                **error)
{
  TerretCommandExecutorPrivate *priv = terret_command_executor_get_instance_private (self);
  g_autoptr(TerretSettings) settings = _terret_settings_store_snapshot (&priv->settings);
  g_autofree char *shell_path = g_find_program_in_path (settings->shell);

  if (shell_path == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "The shell “%s” was not found in PATH", settings->shell);
      return FALSE;
    }

  return TRUE;
}

static gboolean
terret_command_executor_initable_init (GInitable     *initable,
                                       GCancellable  *cancellable,
                                       GError       **error)
{
  TerretCommandExecutor *self = TERRET_COMMAND_EXECUTOR (initable);

  return TERRET_COMMAND_EXECUTOR_GET_CLASS (self)->check_available (self, cancellable, error);
}

static void
initable_iface_init (GInitableIface *iface)
{
  iface->init = terret_command_executor_initable_init;
}

/* --- GObject ------------------------------------------------------------- */

static void
terret_command_executor_dispose (GObject *object)
{
  TerretCommandExecutor *self = TERRET_COMMAND_EXECUTOR (object);
  TerretCommandExecutorPrivate *priv = terret_command_executor_get_instance_private (self);

  /* Runs in flight and polls hold the executor through their tasks; a
   * detached command nobody polls does not, and is ended here. */
  if (priv->runs != NULL)
    terret_command_executor_close_all (TERRET_EXECUTOR (self));
  if (priv->spools != NULL)
    g_hash_table_remove_all (priv->spools);

  G_OBJECT_CLASS (terret_command_executor_parent_class)->dispose (object);
}

static void
terret_command_executor_finalize (GObject *object)
{
  TerretCommandExecutor *self = TERRET_COMMAND_EXECUTOR (object);
  TerretCommandExecutorPrivate *priv = terret_command_executor_get_instance_private (self);

  g_assert (priv->runs->len == 0);

  g_clear_pointer (&priv->runs, g_ptr_array_unref);
  g_clear_pointer (&priv->parked, g_hash_table_unref);
  g_clear_pointer (&priv->parked_infos, g_hash_table_unref);
  g_clear_pointer (&priv->spools, g_hash_table_unref);
  _terret_launcher_link_pool_clear (&priv->links);
  _terret_settings_store_clear (&priv->settings);

  G_OBJECT_CLASS (terret_command_executor_parent_class)->finalize (object);
}

static void
terret_command_executor_get_property (GObject    *object,
                                      guint       prop_id,
                                      GValue     *value,
                                      GParamSpec *pspec)
{
  TerretCommandExecutor *self = TERRET_COMMAND_EXECUTOR (object);
  TerretCommandExecutorPrivate *priv = terret_command_executor_get_instance_private (self);

  _terret_settings_store_get (&priv->settings, prop_id, value);
}

static void
terret_command_executor_set_property (GObject      *object,
                                      guint         prop_id,
                                      const GValue *value,
                                      GParamSpec   *pspec)
{
  TerretCommandExecutor *self = TERRET_COMMAND_EXECUTOR (object);
  TerretCommandExecutorPrivate *priv = terret_command_executor_get_instance_private (self);

  if (_terret_settings_store_set (&priv->settings, prop_id, value))
    g_object_notify_by_pspec (object, pspec);
}

static void
terret_command_executor_class_init (TerretCommandExecutorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = terret_command_executor_dispose;
  object_class->finalize = terret_command_executor_finalize;
  object_class->get_property = terret_command_executor_get_property;
  object_class->set_property = terret_command_executor_set_property;

  klass->get_capabilities = terret_command_executor_real_get_capabilities;
  klass->check_available = terret_command_executor_real_check_available;
  klass->prepare_run = terret_command_executor_real_prepare_run;
  klass->describe_containment = terret_command_executor_real_describe_containment;

  /* The settings both engines share, and their docs, come from one table
   * (settings/terret-common-settings.c). */
  _terret_settings_install (object_class, TERRET_ENGINE_COMMAND);
}

static void
terret_command_executor_init (TerretCommandExecutor *self)
{
  TerretCommandExecutorPrivate *priv = terret_command_executor_get_instance_private (self);

  _terret_settings_store_init (&priv->settings, TERRET_ENGINE_COMMAND);
  priv->runs = g_ptr_array_new ();
  priv->parked = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  priv->parked_infos = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  priv->spools = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, spools_remove);
  _terret_launcher_link_pool_init (&priv->links);
}
