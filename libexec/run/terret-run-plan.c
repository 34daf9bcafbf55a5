/* terret-run-plan.c: a request resolved against the settings, once
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * gio's GSubprocessLauncher holds its settings only until the process is
 * built; a run plan is that for a request: the session engine and the
 * command engine read a run's timeout, what it keeps of its output and
 * where the rest goes from here, and say here what a run dropped and
 * which limits it ran into, in the same words.
 */

#include "config.h"

#include <signal.h>
#include <sys/wait.h>

#include "terret-enum-types.h"
#include "terret-process-private.h"
#include "terret-run-plan-private.h"

/*
 * _terret_run_plan_new:
 *
 * The plan of a run of @request started under @settings: a request's
 * timeout of 0 and its default capture are the settings'.
 */
TerretRunPlan *
_terret_run_plan_new (TerretSettings *settings,
                      TerretRequest  *request)
{
  TerretRunPlan *plan = g_new0 (TerretRunPlan, 1);
  double timeout = terret_request_get_timeout (request);
  TerretCaptureMode capture = terret_request_get_capture (request);

  plan->settings = _terret_settings_ref (settings);
  plan->timeout = timeout > 0 ? timeout : settings->timeout;
  plan->timeout_action = terret_request_get_timeout_action (request);
  if (terret_request_get_return_after (request) > 0)
    {
      plan->timeout = terret_request_get_return_after (request);
      plan->timeout_action = TERRET_TIMEOUT_ACTION_DETACH;
    }
  plan->timeout_clock = plan->timeout_action == TERRET_TIMEOUT_ACTION_DETACH ? TERRET_CLOCK_RETURN_AFTER
                                                                             : TERRET_CLOCK_TIMEOUT;
  plan->deadline = terret_request_get_deadline (request);
  if (plan->deadline <= 0)
    plan->deadline = settings->deadline;
  plan->idle_timeout = terret_request_get_idle_timeout (request, &plan->idle_action);
  if (plan->idle_timeout <= 0)
    plan->idle_timeout = settings->idle_timeout;
  plan->may_detach = plan->timeout_action == TERRET_TIMEOUT_ACTION_DETACH ||
                     (plan->idle_timeout > 0 && plan->idle_action == TERRET_IDLE_ACTION_RETURN);
  plan->capture = capture != TERRET_CAPTURE_MODE_DEFAULT ? capture : settings->capture;
  /* Clamped so that a window plus its overshoot cannot overflow; memory
   * runs out long before. */
  plan->capture_limit = (gsize)MIN (settings->max_output, (guint64)G_MAXSIZE / 4);
  plan->keep_full_output = settings->keep_full_output ||
                           terret_request_get_keep_full_output (request);
  plan->stop_grace = terret_request_get_stop_grace (request);
  if (plan->stop_grace < 0)
    plan->stop_grace = settings->stop_grace;
  plan->cwd = g_strdup (terret_request_get_cwd (request) != NULL ? terret_request_get_cwd (request)
                                                                 : settings->cwd);

  return plan;
}

void
_terret_run_plan_free (TerretRunPlan *plan)
{
  g_clear_pointer (&plan->settings, _terret_settings_unref);
  g_free (plan->cwd);
  g_free (plan);
}

/* A capture of one stream, or of its next stretch, as the plan keeps it. */
TerretStreamCapture *
_terret_run_plan_new_capture (const TerretRunPlan *plan)
{
  return _terret_stream_capture_new (plan->capture, plan->capture_limit);
}

/*
 * _terret_run_plan_open_spool:
 *
 * The full-output file of one stream of a run, when the plan keeps one;
 * NULL without an error when it does not. A file that cannot be created
 * fails the run before anything is spawned.
 */
TerretSpool *
_terret_run_plan_open_spool (const TerretRunPlan  *plan,
                             const char           *suffix,
                             GError              **error)
{
  if (!plan->keep_full_output)
    return NULL;

  return _terret_spool_new (plan->settings->full_output_dir, suffix,
                            plan->settings->full_output_max, error);
}

/*
 * _terret_run_plan_describe_dropped:
 *
 * The notice for @dropped bytes a capture left out of @stream (NULL: a
 * session's one stream), which kept @kept bytes, @cut of them before the
 * omission, out of the @seen of the stretch; NULL when nothing was
 * dropped.
 */
char *
_terret_run_plan_describe_dropped (const TerretRunPlan *plan,
                                   const char          *stream,
                                   gsize                kept,
                                   gsize                cut,
                                   guint64              dropped,
                                   guint64              seen)
{
  const char *what = stream != NULL ? stream : "output truncated at max-output";

  if (dropped == 0)
    return NULL;

  /* Under the cap only a head that stopped inside a character drops
   * anything: that character's first bytes. */
  if (seen <= plan->settings->max_output)
    return g_strdup_printf ("%s%sthe output was cut off inside a UTF-8 character; its first %"
                            G_GUINT64_FORMAT " bytes were dropped.",
                            stream != NULL ? stream : "", stream != NULL ? ": " : "", dropped);
  /* Nothing kept is the first or the last nothing, as the mode keeps. */
  if (cut == kept && !(kept == 0 && plan->capture == TERRET_CAPTURE_MODE_TAIL))
    return g_strdup_printf ("%s: kept the first %" G_GSIZE_FORMAT " bytes and dropped %"
                            G_GUINT64_FORMAT " more.", what, kept, dropped);
  if (cut == 0)
    return g_strdup_printf ("%s: kept the last %" G_GSIZE_FORMAT " bytes and dropped %"
                            G_GUINT64_FORMAT " earlier ones.", what, kept, dropped);
  return g_strdup_printf ("%s: kept the first %" G_GSIZE_FORMAT " and the last %" G_GSIZE_FORMAT
                          " bytes and dropped the %" G_GUINT64_FORMAT " between them.",
                          what, cut, kept - cut, dropped);
}

/*
 * _terret_run_plan_idle_check:
 *
 * The idle timer in @which fired: whether the command printed nothing for
 * the plan's idle timeout since @last_output (monotonic time). When it
 * did print, the timer is armed again for the rest: output costs a
 * stored time, never a timer moved per read.
 */
gboolean
_terret_run_plan_idle_check (const TerretRunPlan *plan,
                             gint64               last_output,
                             TerretTimers        *timers,
                             guint                which)
{
  gint64 due = last_output + _terret_seconds_to_usec (plan->idle_timeout);

  if (g_get_monotonic_time () >= due)
    return TRUE;
  _terret_timers_arm (timers, which, due);
  return FALSE;
}

/*
 * _terret_run_plan_note_clock:
 *
 * A clock ended the command (the timeout, the deadline, the idle
 * timeout): on @result, with a notice saying which and after how long.
 */
void
_terret_run_plan_note_clock (const TerretRunPlan *plan,
                             TerretResult        *result,
                             TerretClock          clock)
{
  g_autofree char *seconds = NULL;
  g_autofree char *notice = NULL;

  switch (clock)
    {
    case TERRET_CLOCK_DEADLINE:
      seconds = _terret_format_seconds (plan->deadline);
      notice = g_strdup_printf ("Its deadline of %ss passed; the command was ended with "
                                "everything it started.", seconds);
      break;
    case TERRET_CLOCK_IDLE:
      seconds = _terret_format_seconds (plan->idle_timeout);
      notice = g_strdup_printf ("It printed nothing for %ss (idle_timeout); the command was "
                                "ended with everything it started.", seconds);
      break;
    case TERRET_CLOCK_TIMEOUT:
    case TERRET_CLOCK_RETURN_AFTER:
    case TERRET_CLOCK_NONE:
    default:
      break;
    }

  terret_result_set_clock (result, clock);
  terret_result_set_timed_out (result, TRUE);
  if (notice != NULL)
    terret_result_add_notice (result, notice);
}

/* The limits a command's end shows it hit, by its wait status: SIGXCPU
 * and SIGXFSZ are sent for the CPU-time and file-size limits alone, and a
 * shell reports a child they ended as 128 + the signal. Only limits that
 * are set count, so a command's own `exit 152` is not taken for one. */
static TerretLimits
limits_from_status (const TerretSettings *settings,
                    int                   wait_status)
{
  TerretLimits hit = TERRET_LIMIT_NONE;
  int sig = 0;

  if (WIFSIGNALED (wait_status))
    sig = WTERMSIG (wait_status);
  else if (WIFEXITED (wait_status) && WEXITSTATUS (wait_status) > 128)
    sig = WEXITSTATUS (wait_status) - 128;

  if (sig == SIGXCPU && settings->limit_cpu != 0)
    hit |= TERRET_LIMIT_CPU;
  if (sig == SIGXFSZ && settings->limit_file_size != 0)
    hit |= TERRET_LIMIT_FILE_SIZE;
  return hit;
}

/* A sentence naming the limits in @hit, each as its setting with its
 * value: "limit-memory (64 MiB)", "limit-cpu (1 s)". */
static char *
describe_limits_hit (const TerretSettings *settings,
                     TerretLimits          hit)
{
  g_autoptr(GFlagsClass) klass = g_type_class_ref (TERRET_TYPE_LIMITS);
  g_autoptr(GString) names = g_string_new (NULL);

  for (guint i = 0; i < klass->n_values; i++)
    {
      TerretLimits limit = klass->values[i].value;
      guint64 value;

      if (limit == TERRET_LIMIT_NONE || (hit & limit) == 0)
        continue;
      value = _terret_settings_get_limit (settings, limit);
      if (names->len > 0)
        g_string_append (names, " and ");
      if (limit == TERRET_LIMIT_MEMORY || limit == TERRET_LIMIT_FILE_SIZE)
        {
          /* Exact, and the same in every locale: 64 MiB, 1536 KiB, 1000 bytes. */
          static const char * const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
          guint unit = 0;

          while (unit + 1 < G_N_ELEMENTS (units) && value >= 1024 && value % 1024 == 0)
            value /= 1024, unit++;
          g_string_append_printf (names, "limit-%s (%" G_GUINT64_FORMAT " %s)",
                                  klass->values[i].value_nick, value, units[unit]);
        }
      else
        g_string_append_printf (names, "limit-%s (%" G_GUINT64_FORMAT "%s)",
                                klass->values[i].value_nick, value,
                                limit == TERRET_LIMIT_CPU ? " s" : "");
    }

  return g_strdup_printf ("The command ran into %s, so what it asked for was refused or it was "
                          "ended.", names->str);
}

/*
 * _terret_run_plan_note_limits:
 *
 * The limits a command ran into, on @result and in its notice: @hit, as
 * its process's counters say, and those its @wait_status shows (-1: it
 * did not end on its own). Returns them all.
 */
TerretLimits
_terret_run_plan_note_limits (const TerretRunPlan *plan,
                              TerretResult        *result,
                              TerretLimits         hit,
                              int                  wait_status)
{
  g_autofree char *notice = NULL;

  if (wait_status >= 0)
    hit |= limits_from_status (plan->settings, wait_status);
  if (hit == TERRET_LIMIT_NONE)
    return hit;

  notice = describe_limits_hit (plan->settings, hit);
  terret_result_set_limits_hit (result, hit);
  terret_result_add_notice (result, notice);
  return hit;
}

/*
 * _terret_run_plan_note_stop:
 *
 * When the run asked @process's unit for the stop sequence: which of its
 * signals the command heard last before it ended, and how long the stop
 * took, in @result, with a notice. Returns whether a stop was asked for.
 */
gboolean
_terret_run_plan_note_stop (const TerretRunPlan *plan,
                            TerretResult        *result,
                            TerretProcess       *process)
{
  g_autofree char *seconds = NULL;
  g_autofree char *notice = NULL;
  TerretStopSignal by;
  const char *how;
  guint msec = 0;
  int signum = 0;

  if (process == NULL || !_terret_process_get_stop (process, &signum, &msec))
    return FALSE;

  /* The stop's first stage, 0 when the library's own ^C was all it
   * sent so far, is the interrupt. */
  by = _terret_stop_signal_from_signum (signum);
  if (by == TERRET_STOP_SIGNAL_NONE)
    by = TERRET_STOP_SIGNAL_INTERRUPT;
  how = by == TERRET_STOP_SIGNAL_HANGUP ? "after SIGHUP"
      : by == TERRET_STOP_SIGNAL_TERMINATE ? "after SIGTERM"
      : by == TERRET_STOP_SIGNAL_KILL ? "by SIGKILL at the end of its grace"
      : "after the interrupt";
  terret_result_set_stop (result, by, msec / 1000.0);
  seconds = _terret_format_seconds (msec / 1000.0);
  notice = g_strdup_printf ("It was stopped: it ended %s, %ss into the stop.", how, seconds);
  terret_result_add_notice (result, notice);
  (void)plan;
  return TRUE;
}
