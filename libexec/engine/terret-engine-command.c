/* terret-engine-command.c: the one-shot strategy: one process per command,
 * the runs in flight by key
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-command-run-private.h"
#include "terret-engine-private.h"
#include "terret-error.h"
#include "terret-executor.h"
#include "terret-result.h"

typedef struct
{
  TerretEngine *engine;         /* (unowned) it owns the table */

  /* Runs in flight, each with its session key, so close_session() and
   * close_all() find them. A plain array: one-shot runs are few at a time
   * and a close scans them once. */
  GPtrArray *runs;              /* (owned) (element-type CommandRun) unowned runs */
} CommandTable;

/* --- Runs ----------------------------------------------------------------- */

/* A run is over: it leaves the table, and a detached command's end nobody
 * waits for is parked for the next poll of its key. */
static void
run_ended (gpointer      owner,
           CommandRun   *run,
           TerretResult *parked)
{
  CommandTable *table = owner;

  g_ptr_array_remove_fast (table->runs, run);
  if (parked != NULL)
    _terret_engine_park (table->engine, run->session, parked,
                         _terret_command_run_describe (run, TERRET_SESSION_STATE_ENDED));
}

static gboolean
run_prepare (gpointer         owner,
             TerretRequest   *request,
             TerretLauncher  *launcher,
             GPtrArray       *argv,
             GError         **error)
{
  CommandTable *table = owner;

  return TERRET_ENGINE_GET_CLASS (table->engine)->prepare_run (table->engine, request, launcher,
                                                               argv, error);
}

static void
run_stop (gpointer       owner,
          TerretProcess *process)
{
  CommandTable *table = owner;

  _terret_engine_stop_run (table->engine, process);
}

static const TerretCommandRunFuncs run_funcs = {
  run_prepare,
  run_ended,
  run_stop,
};

/* Runs of one key are independent, except around a command that may
 * detach: it needs the key to itself, so that a poll or an interrupt of
 * the key can only mean that command. */
static gboolean
check_session_free (CommandTable         *table,
                    TerretRequest        *request,
                    const TerretRunPlan  *plan,
                    GError              **error)
{
  const char *session = terret_request_get_session (request);
  gboolean detaching = plan->may_detach;

  for (guint i = 0; i < table->runs->len; i++)
    {
      CommandRun *run = g_ptr_array_index (table->runs, i);

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

/* --- The strategy ------------------------------------------------------- */

static gpointer
command_table_new (TerretEngine *engine)
{
  CommandTable *table = g_new0 (CommandTable, 1);

  table->engine = engine;
  table->runs = g_ptr_array_new ();
  return table;
}

static void
command_table_free (gpointer data)
{
  CommandTable *table = data;

  g_assert (table->runs->len == 0);
  g_clear_pointer (&table->runs, g_ptr_array_unref);
  g_free (table);
}

static void
command_run_async (gpointer        state,
                   TerretRequest  *request,
                   TerretRunPlan  *plan_in,
                   GCancellable   *cancellable,
                   GTask          *task_in)
{
  CommandTable *table = state;
  g_autoptr(GTask) task = task_in;
  g_autoptr(TerretRunPlan) plan = plan_in;
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretLauncherLink) launcher_link = NULL;
  g_autoptr(TerretResult) parked = NULL;
  CommandRun *run;

  /* A command that finished is reported as it finished, even if the
   * cancellable fires between its end and the caller's callback: only a
   * run this backend killed for the cancellation reports it. */
  g_task_set_check_cancellable (task, FALSE);

  if (g_task_return_error_if_cancelled (task))
    return;

  if (!check_session_free (table, request, plan, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  launcher_link = _terret_engine_get_link (table->engine, plan->settings, &error);
  if (launcher_link == NULL)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  run = _terret_command_run_new (&run_funcs, table, g_object_ref (task), request,
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
      _terret_engine_keep_spool (table->engine, run->session, run->streams[i].spool);

  /* The end of a command detached earlier in this key, never polled: its
   * caller chose to run something else instead of collecting it. */
  parked = _terret_engine_take_parked (table->engine, run->session);
  if (parked != NULL)
    {
      g_autofree char *notice = _terret_detach_describe_parked (parked);

      g_string_append (run->notices, notice);
    }

  g_ptr_array_add (table->runs, run);
}

/* Every run of @session (NULL: all) stops. Backwards: a detached command
 * nobody waits for is freed here, and a removal moves the last run,
 * already seen, into its slot. A stopped run in flight completes from its
 * own dispatch. */
static void
command_close (gpointer    state,
               const char *session,
               GPtrArray  *stopped)
{
  /* A command's run answers for its own stop, in its result. */
  CommandTable *table = state;

  for (guint i = table->runs->len; i > 0; i--)
    {
      CommandRun *run = g_ptr_array_index (table->runs, i - 1);

      if (session != NULL && g_strcmp0 (run->session, session) != 0)
        continue;

      if (run->task == NULL && run->detach.poll_task == NULL)
        _terret_command_run_end_now (run);
      else
        _terret_command_run_stop (run, RUN_END_CLOSED);
    }
}

static GPid
command_get_pid (gpointer    state,
                 const char *session)
{
  /* No process carries a session between runs. */
  return 0;
}

static gboolean
command_interrupt (gpointer     state,
                   const char  *session,
                   GError     **error)
{
  CommandTable *table = state;
  gboolean found = FALSE;

  /* Every command of the key: among runs in flight together none is the
   * foreground one, and a close ends them all alike. */
  for (guint i = 0; i < table->runs->len; i++)
    {
      CommandRun *run = g_ptr_array_index (table->runs, i);

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
command_poll_async (gpointer       state,
                    const char    *session,
                    double         wait,
                    GCancellable  *cancellable,
                    GTask         *task_in)
{
  CommandTable *table = state;
  g_autoptr(GTask) task = task_in;
  TerretResult *parked;
  CommandRun *run = NULL;
  gboolean in_flight = FALSE;

  if (g_task_return_error_if_cancelled (task))
    return;

  if ((parked = _terret_engine_take_parked (table->engine, session)) != NULL)
    {
      g_task_return_pointer (task, parked, g_object_unref);
      return;
    }

  for (guint i = 0; i < table->runs->len && run == NULL; i++)
    {
      CommandRun *r = g_ptr_array_index (table->runs, i);

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

/* Runs in flight (a run waits for it, or it was handed back); the ends
 * waiting for a poll are the core's. One-shot commands have no idle
 * sessions to show. */
static void
command_list (gpointer   state,
              GPtrArray *infos)
{
  CommandTable *table = state;

  for (guint i = 0; i < table->runs->len; i++)
    {
      CommandRun *run = g_ptr_array_index (table->runs, i);

      g_ptr_array_add (infos, _terret_command_run_describe (run, run->detach.detached
                                                                 ? TERRET_SESSION_STATE_DETACHED
                                                                 : TERRET_SESSION_STATE_RUNNING));
    }
}

static guint
command_count (gpointer state)
{
  return ((CommandTable *)state)->runs->len;
}

const TerretEngineStrategy _terret_engine_command_strategy = {
  .capabilities = (TERRET_CAPABILITY_RUNS_COMMANDS |
                   TERRET_CAPABILITY_SEPARATE_STDERR |
                   TERRET_CAPABILITY_REQUEST_CWD |
                   TERRET_CAPABILITY_REQUEST_ENV |
                   TERRET_CAPABILITY_PROGRESS |
                   TERRET_CAPABILITY_INTERRUPT |
                   TERRET_CAPABILITY_POLL |
                   TERRET_CAPABILITY_DETACH |
                   TERRET_CAPABILITY_CLOCKS |
                   TERRET_CAPABILITY_LIST),
  .new = command_table_new,
  .free = command_table_free,
  .run_async = command_run_async,
  .poll_async = command_poll_async,
  .send_input = NULL,
  .interrupt = command_interrupt,
  .get_pid = command_get_pid,
  .close = command_close,
  .list = command_list,
  .count = command_count,
};
