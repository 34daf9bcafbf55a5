/* terret-detach.c: a command a timeout detached from, and its polls
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-detach-private.h"
#include "terret-error.h"
#include "terret-util-private.h"

/* How many reads a poll makes of what is already there before it
 * decides whether to wait: enough for what a terminal or a pipe holds,
 * bounded so a command printing without pause cannot keep it here. */
#define POLL_READS 16

void
_terret_detach_init (TerretDetach            *detach,
                     const TerretDetachFuncs *funcs,
                     gpointer                 run,
                     TerretTimers            *timers,
                     guint                    poll_timer)
{
  detach->funcs = funcs;
  detach->run = run;
  detach->timers = timers;
  detach->poll_timer = poll_timer;
  detach->poll_task = NULL;
  detach->poll_cancel = NULL;
  detach->detached = FALSE;
}

void
_terret_detach_clear (TerretDetach *detach)
{
  _terret_clear_source (&detach->poll_cancel);
  g_clear_object (&detach->poll_task);
}

/*
 * _terret_detach_begin:
 *
 * @clock detaches after @seconds: a return-after (or a timeout that
 * detaches), or an idle timeout that returns. Returns the result the
 * run's caller gets (the output so far, running; timed out, or stalled),
 * and from here on the command's output waits for polls.
 */
TerretResult *
_terret_detach_begin (TerretDetach *detach,
                      TerretClock   clock,
                      double        seconds,
                      const char   *session_key,
                      gboolean      takes_input)
{
  g_autofree char *text = _terret_format_seconds (seconds);
  g_autofree char *notice = NULL;
  TerretResult *result;

  detach->detached = TRUE;
  result = detach->funcs->take_stretch (detach->run);
  if (clock == TERRET_CLOCK_INPUT)
    notice = g_strdup_printf ("The command waits for input on its terminal, and goes on. Send it "
                              "input, poll session “%s” for its further output and final status, "
                              "or interrupt it; new runs in that session are refused until it "
                              "ends.", session_key);
  else if (clock == TERRET_CLOCK_IDLE)
    notice = g_strdup_printf ("No output for %ss: the command may be waiting for input, and goes "
                              "on. Poll session “%s” for its further output and final status, "
                              "%sor interrupt it; new runs in that session are refused until it "
                              "ends.", text, session_key, takes_input ? "send it input, " : "");
  else
    notice = g_strdup_printf ("Still running after %ss; the command goes on. Poll session “%s” for "
                              "its further output and final status, %sor interrupt it; new runs in "
                              "that session are refused until it ends.",
                              text, session_key, takes_input ? "send it input, " : "");
  terret_result_add_notice (result, notice);
  terret_result_set_clock (result, clock);
  if (clock == TERRET_CLOCK_IDLE)
    terret_result_set_stalled (result, TRUE);
  else if (clock != TERRET_CLOCK_INPUT)
    terret_result_set_timed_out (result, TRUE);

  return result;
}

/* Answers the poll in flight with the stretch so far. Callers touch
 * nothing of the run afterwards: the poll's callback may close the
 * session and free it. */
static void
detach_answer (TerretDetach *detach)
{
  g_autoptr(GTask) task = _terret_detach_steal_poll (detach);

  if (task != NULL)
    g_task_return_pointer (task, detach->funcs->take_stretch (detach->run), g_object_unref);
}

static gboolean
detach_on_poll_cancelled (GCancellable *cancellable,
                          gpointer      user_data)
{
  TerretDetach *detach = user_data;
  g_autoptr(GTask) task = _terret_detach_steal_poll (detach);
  GError *error = NULL;

  /* Only the poll ends: the command and its output are still there for
   * the next one. */
  g_cancellable_set_error_if_cancelled (cancellable, &error);
  g_task_return_error (task, error);
  return G_SOURCE_REMOVE;
}

/*
 * _terret_detach_poll:
 *
 * Serves a poll of a detached command, taking @task: it returns as soon
 * as there is output since the previous result, or the command ended,
 * or @wait passed. What already sits there is read first, so a caller
 * that polls without iterating a main context in between still gets
 * every byte, and the end. From here on the command is read on the
 * caller's thread-default main context.
 */
void
_terret_detach_poll (TerretDetach *detach,
                     GTask        *task,
                     double        wait,
                     GCancellable *cancellable)
{
  g_autoptr(GMainContext) context = g_main_context_ref_thread_default ();

  g_assert (detach->detached && detach->poll_task == NULL);

  detach->funcs->adopt (detach->run, context);
  detach->poll_task = task;

  for (guint i = 0; i < POLL_READS; i++)
    {
      /* The run ended, and the poll was answered. */
      if (!detach->funcs->read_pending (detach->run))
        return;
      /* Answered with news; the command goes on. */
      if (detach->poll_task == NULL)
        return;
    }

  if (wait <= 0 || detach->funcs->has_news (detach->run))
    {
      detach_answer (detach);
      return;
    }

  _terret_timers_arm_in (detach->timers, detach->poll_timer, wait);
  if (cancellable != NULL)
    {
      detach->poll_cancel = g_cancellable_source_new (cancellable);
      g_source_set_static_name (detach->poll_cancel, "[terret] poll cancel");
      g_source_set_callback (detach->poll_cancel, G_SOURCE_FUNC (detach_on_poll_cancelled),
                             detach, NULL);
      g_source_attach (detach->poll_cancel, context);
    }
}

/* The engine read something: a waiting poll returns it. */
void
_terret_detach_news (TerretDetach *detach)
{
  if (detach->poll_task != NULL && detach->funcs->has_news (detach->run))
    detach_answer (detach);
}

/* The poll's wait is over: it returns what there is, maybe nothing. */
void
_terret_detach_poll_timed_out (TerretDetach *detach)
{
  detach_answer (detach);
}

/* The poll in flight, for the run's final outcome; its wait and
 * cancellation end with it. */
GTask *
_terret_detach_steal_poll (TerretDetach *detach)
{
  _terret_timers_disarm (detach->timers, detach->poll_timer);
  _terret_clear_source (&detach->poll_cancel);
  return g_steal_pointer (&detach->poll_task);
}

/* The notice of a run that starts while the end of a command detached
 * earlier in its session was never polled: its caller chose to run
 * something else instead of collecting it. */
char *
_terret_detach_describe_parked (TerretResult *parked)
{
  g_autofree char *status = terret_result_get_exited (parked)
    ? g_strdup_printf ("with status %d", terret_result_get_exit_status (parked))
    : g_strdup ("without a status");
  const char *notice = terret_result_get_notice (parked);

  return g_strdup_printf ("The command left running earlier in this session ended %s before its "
                          "last output was polled; that output was discarded.%s%s",
                          status, notice != NULL ? " It said: " : "", notice != NULL ? notice : "");
}

void
_terret_detach_return_no_command (GTask      *task,
                                  const char *session_key)
{
  g_task_return_new_error (task, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                           "Nothing is running in session “%s” to poll; only a command a timeout "
                           "detached from can be polled", session_key);
}

void
_terret_detach_return_not_detached (GTask      *task,
                                    const char *session_key)
{
  g_task_return_new_error (task, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY,
                           "A run is still waiting for the command in session “%s”; its result "
                           "will carry the output", session_key);
}

void
_terret_detach_return_poll_busy (GTask      *task,
                                 const char *session_key)
{
  g_task_return_new_error (task, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY,
                           "Another poll of session “%s” is waiting", session_key);
}
