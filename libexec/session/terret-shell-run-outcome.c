/* terret-shell-run-outcome.c: how a run of a session hands its outcome over
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * To the run's own task, or once a timeout detached it, to the poll in
 * flight, or parked for the next one; with the session told first that
 * it is free. Also the command handed back to its caller while it goes
 * on (detached), and the notices a result gathers on the way. Nothing
 * here starts an exchange.
 */

#include "config.h"

#include "terret-shell-run-parts-private.h"
#include "terret-util-private.h"

static void
run_free (TerretShellRun *run)
{
  /* The timers are the session's, and were disarmed as the run returned:
   * by now a next run may have armed them. */
  _terret_clear_source (&run->cancel_source);
  _terret_clear_source (&run->write_source);
  _terret_detach_clear (&run->detach);
  g_clear_pointer (&run->input, _terret_input_watch_free);
  g_clear_object (&run->task);
  g_clear_object (&run->request);
  g_clear_pointer (&run->plan, _terret_run_plan_free);
  g_clear_object (&run->cancellable);
  g_string_free (run->notices, TRUE);
  g_clear_pointer (&run->out, g_byte_array_unref);
  g_clear_pointer (&run->early_input, g_byte_array_unref);
  g_clear_pointer (&run->hold, g_byte_array_unref);
  g_clear_pointer (&run->capture, _terret_stream_capture_free);
  g_clear_pointer (&run->command_capture, _terret_stream_capture_free);
  g_clear_pointer (&run->spool, _terret_spool_unref);
  _terret_marker_clear (&run->marker);
  g_clear_pointer (&run->context, g_main_context_unref);
  g_clear_object (&run->host.session);
  g_free (run);
}

void
_terret_shell_run_add_notice (TerretShellRun *run,
                              const char     *notice)
{
  if (notice == NULL || *notice == '\0')
    return;
  if (run->notices->len > 0)
    g_string_append_c (run->notices, ' ');
  g_string_append (run->notices, notice);
}

/* The run's own sources, and its deadlines; the session's sources stay
 * for the next run. */
static void
run_detach_sources (TerretShellRun *run)
{
  _terret_clear_source (&run->cancel_source);
  _terret_clear_source (&run->write_source);
  for (guint i = 0; i < TERRET_TIMERS_MAX; i++)
    _terret_timers_disarm (run->host.timers, i);
}

/*
 * _terret_shell_run_return:
 *
 * Ends the run. The session is free again before the task returns,
 * because the caller's callback may start the next run on it at once.
 * The outcome goes to whoever waits for it: the run's own task, or once
 * the run detached, the poll in flight; with neither, the end of a
 * detached command is parked for the next poll. Frees @run.
 */
void
_terret_shell_run_return (TerretShellRun *run,
                          TerretResult   *result,
                          GError         *error)
{
  g_autoptr(GTask) task = g_steal_pointer (&run->task);

  if (task == NULL)
    task = _terret_detach_steal_poll (&run->detach);

  _terret_shell_run_stop_outcome (run, &result, &error);
  run_detach_sources (run);
  run->host.funcs->finished (run->host.session, run, task == NULL ? result : NULL);
  run_free (run);

  if (task == NULL)
    {
      g_clear_object (&result);
      g_clear_error (&error);
    }
  else if (error != NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, result, g_object_unref);
}

/* The run hands its command back to its caller as @clock says; the
 * command goes on for polls. */
void
_terret_shell_run_detach (TerretShellRun *run,
                          TerretClock     clock,
                          double          seconds)
{
  g_autoptr(GTask) task = g_steal_pointer (&run->task);

  _terret_clear_source (&run->cancel_source);
  g_task_return_pointer (task, _terret_detach_begin (&run->detach, clock, seconds, run->host.key, TRUE),
                         g_object_unref);
}

/* Whether a timeout detached the run from its caller. */
gboolean
_terret_shell_run_is_detached (TerretShellRun *run)
{
  return run->task == NULL;
}

/*
 * _terret_shell_run_poll:
 *
 * Collects the output of the run a timeout detached from, for @task.
 */
void
_terret_shell_run_poll (TerretShellRun *run,
                        GTask          *task,
                        double          wait,
                        GCancellable   *cancellable)
{
  if (run->task != NULL)
    _terret_detach_return_not_detached (task, run->host.key);
  else if (run->detach.poll_task != NULL)
    _terret_detach_return_poll_busy (task, run->host.key);
  else
    _terret_detach_poll (&run->detach, g_object_ref (task), wait, cancellable);
}
