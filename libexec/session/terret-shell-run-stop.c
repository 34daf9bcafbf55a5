/* terret-shell-run-stop.c: a session's command stopped gracefully
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A timeout, a deadline, an idle timeout or a cancellation ends the
 * command as a terminal's user would: ^C on the terminal first, then the
 * shell's unit sends SIGTERM to the terminal's foreground group halfway
 * through the grace (an interactive bash ignores it, its command does
 * not), and at the grace's end the KILL sweep ends the session with it.
 * A command that ends before the sweep leaves bash at its prompt: its
 * marker ends the run with what the command printed meanwhile. After a
 * cancel the session, its cwd and variables, survive, and so do the jobs
 * started before the command; what the command started goes on hearing
 * the stop to its sweep, and the session's next run waits for its end. A
 * clock (timeout, deadline, idle) ends everything the command started,
 * background jobs too, so the session is ended then. The run answers
 * once bash is back.
 */

#include "config.h"

#include <signal.h>

#include "terret-error.h"
#include "terret-launcher-wire.h"
#include "terret-process-private.h"
#include "terret-shell-channel-private.h"
#include "terret-shell-run-parts-private.h"
#include "terret-util-private.h"

/* How long past the unit's sweep the run waits for the shell's end to be
 * seen before it ends the shell itself: a bound, not a step. */
#define SWEEP_BOUND_SECONDS 2.0

/*
 * _terret_shell_run_stop:
 *
 * Begins the graceful stop of the run's command for @why. Returns FALSE
 * when there is none to begin (no grace, not the command's exchange):
 * the caller then ends the shell as before. A second end while a stop
 * runs keeps the first's reason, but a cancellation, which says the
 * caller no longer waits for the output.
 */
gboolean
_terret_shell_run_stop (TerretShellRun *run,
                        ShellStop       why)
{
  TerretProcess *process = terret_shell_channel_get_process (run->host.channel);

  if (run->stop != SHELL_STOP_NONE)
    {
      if (why == SHELL_STOP_CANCELLED)
        run->stop = why;
      return TRUE;
    }
  if (run->kind != EXCHANGE_COMMAND || run->plan->stop_grace <= 0 || process == NULL ||
      terret_process_check_exited (process))
    return FALSE;

  run->stop = why;
  g_set_object (&run->stop_process, process);
  _terret_timers_disarm (run->host.timers, TERRET_SHELL_TIMER_DEADLINE);
  _terret_timers_disarm (run->host.timers, TERRET_SHELL_TIMER_HARD);
  _terret_timers_disarm (run->host.timers, TERRET_SHELL_TIMER_IDLE);
  _terret_shell_run_send_interrupt_now (run);
  _terret_process_stop_command (process, run->plan->stop_grace,
                                (g_get_monotonic_time () - run->began) / 1000);
  _terret_timers_arm_in (run->host.timers, TERRET_SHELL_TIMER_ESCALATE,
                         run->plan->stop_grace + SWEEP_BOUND_SECONDS);
  return TRUE;
}

/*
 * _terret_shell_run_stop_outcome:
 *
 * As a stopped run returns: the stop ends where bash came back (a later
 * one starts afresh), the result says how the command ended and which
 * clock ended it, and a cancelled run keeps its result on the request
 * and fails cancelled.
 */
void
_terret_shell_run_stop_outcome (TerretShellRun  *run,
                                TerretResult   **result,
                                GError         **error)
{
  /* The shell the stop was for, even once the channel let it go. */
  g_autoptr(TerretProcess) stopped = g_steal_pointer (&run->stop_process);
  TerretProcess *process = stopped;
  gboolean survives = process != NULL && !terret_process_check_exited (process) &&
                      terret_shell_channel_get_process (run->host.channel) == process;
  gboolean noted = FALSE;

  if (run->stop == SHELL_STOP_NONE || *result == NULL)
    return;

  /* An interactive bash writes a newline when SIGINT ends its foreground
   * command (status 130), as a terminal shows after ^C: not the
   * command's byte. */
  if (run->status == 128 + SIGINT && survives)
    {
      GBytes *out = terret_result_get_stdout (*result);
      gsize len = 0;
      const char *data = g_bytes_get_data (out, &len);

      if (len > 0 && data[len - 1] == '\n')
        {
          g_autoptr(GBytes) kept = g_bytes_new_from_bytes (out, 0, len - 1);

          terret_result_set_stdout (*result, kept);
        }
    }

  /* No status, as for a command that was killed: its status answered our
   * signals, and ended-by says which. */
  terret_result_set_exit_status (*result, -1);
  terret_result_set_term_signal (*result, 0);
  terret_result_set_pipestatus (*result, NULL, 0);

  switch (run->stop)
    {
    case SHELL_STOP_TIMEOUT:
      {
        g_autofree char *seconds = _terret_format_seconds (run->plan->timeout);
        g_autofree char *notice = g_strdup_printf ("Timed out after %ss; the command was "
                                                   "stopped.", seconds);

        terret_result_set_timed_out (*result, TRUE);
        terret_result_set_clock (*result, TERRET_CLOCK_TIMEOUT);
        terret_result_add_notice (*result, notice);
      }
      G_GNUC_FALLTHROUGH;
    case SHELL_STOP_DEADLINE:
    case SHELL_STOP_IDLE:
      if (run->stop != SHELL_STOP_TIMEOUT)
        _terret_run_plan_note_clock (run->plan, *result, run->stop == SHELL_STOP_IDLE
                                                         ? TERRET_CLOCK_IDLE
                                                         : TERRET_CLOCK_DEADLINE);
      /* A clock ends everything the command started, its background
       * jobs too, which bash at its prompt would keep: the session goes
       * with them, once the command had its say. A cancel keeps it. */
      _terret_run_plan_note_stop (run->plan, *result, process);
      noted = TRUE;
      if (survives)
        {
          _terret_process_stop_cancel (process);
          _terret_shell_run_kill_shell (run);
          survives = FALSE;
          terret_result_add_notice (*result, "The shell session was ended with it, so the next "
                                             "run starts a fresh session.");
        }
      break;
    case SHELL_STOP_CANCELLED:
      _terret_run_plan_note_stop (run->plan, *result, process);
      /* Where the shell's unit holds a client (ssh, podman exec) and not
       * the shell, nothing tells what the command started from the
       * session's own jobs: the session goes with them, as after a clock. */
      if (survives &&
          _terret_shell_channel_get_reach (run->host.channel) == TERRET_SHELL_BEHIND_CLIENT)
        {
          _terret_process_stop_cancel (process);
          _terret_shell_run_kill_shell (run);
          survives = FALSE;
          terret_result_add_notice (*result, "The shell session was ended with it, so the next "
                                             "run starts a fresh session.");
        }
      terret_request_set_cancelled_result (run->request, *result);
      g_clear_object (result);
      if (*error == NULL)
        *error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                      "The command was cancelled and stopped");
      break;
    case SHELL_STOP_NONE:
    default:
      g_assert_not_reached ();
    }
  if (*result != NULL && !noted)
    _terret_run_plan_note_stop (run->plan, *result, process);
  /* Cancelled, bash back at its prompt: the session stays, with the jobs
   * it had before this command; what the command started (its
   * background jobs, a `setsid` or `nohup` one) hears the rest of the
   * stop, and the session's next run waits for its end. */
  if (survives)
    _terret_process_stop_spare (process);
}

/* Whether the run's command is being stopped for a caller that no
 * longer waits for it: a run that arrives meanwhile waits for the stop. */
gboolean
_terret_shell_run_is_cancelled_stop (TerretShellRun *run)
{
  /* Cancelled already, its cancel source not yet dispatched: the same. */
  return run->stop == SHELL_STOP_CANCELLED ||
         (run->task != NULL && run->cancellable != NULL &&
          g_cancellable_is_cancelled (run->cancellable));
}
