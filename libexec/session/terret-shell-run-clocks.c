/* terret-shell-run-clocks.c: the clocks that end a run of a session, or hand it back
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The session's timers as they reach a run (the timeout, the deadline,
 * the idle timeout, the exit grace and the escalation after an
 * interrupt): each ends the run, detaches it for polls, or starts a
 * fresh shell under it.
 */

#include "config.h"

#include "terret-shell-run-parts-private.h"
#include "terret-util-private.h"

static void
run_on_deadline (TerretShellRun *run)
{
  g_autofree char *seconds = NULL;
  g_autofree char *notice = NULL;
  TerretResult *result;

  if (run->kind != EXCHANGE_COMMAND)
    {
      g_autofree char *handshake = _terret_format_seconds (run->handshake_timeout);
      g_autofree char *why = g_strdup_printf ("no answer within %ss", handshake);

      if (run->kind == EXCHANGE_HANDSHAKE || run->kind == EXCHANGE_SETUP)
        _terret_shell_run_fail_handshake (run, why);
      else
        {
          /* The harness step alone did not come back: a fresh shell. */
          _terret_shell_run_kill_shell (run);
          _terret_shell_run_add_notice (run, "The shell did not come back from an interrupted "
                                             "command, so a fresh session was started; the cwd "
                                             "and variables from earlier runs are gone.");
          _terret_shell_run_start (run, EXCHANGE_HANDSHAKE);
        }
      return;
    }

  if (run->plan->timeout_action == TERRET_TIMEOUT_ACTION_DETACH)
    {
      /* Handed back already: a fresh shell under a detached run starts
       * its clocks again, and there is no caller left to hand it to. */
      if (run->task != NULL)
        _terret_shell_run_detach (run, run->plan->timeout_clock, run->plan->timeout);
      return;
    }

  if (_terret_shell_run_stop (run, SHELL_STOP_TIMEOUT))
    return;

  /* Kill and respawn rather than try to recover: after an interrupt the
   * shell's input and the output still in flight are in a state nothing
   * can account for. The next run gets a shell that is known, and the
   * caller is told so rather than left to discover a lost `cd`. */
  _terret_shell_run_send_interrupt_now (run);
  _terret_shell_run_kill_shell (run);

  result = _terret_shell_run_partial_result (run);
  seconds = _terret_format_seconds (run->plan->timeout);
  notice = g_strdup_printf ("Timed out after %ss; the command was interrupted and the shell "
                            "session killed, so the next run starts a fresh session.", seconds);
  terret_result_add_notice (result, notice);
  terret_result_set_timed_out (result, TRUE);
  terret_result_set_clock (result, TERRET_CLOCK_TIMEOUT);
  _terret_shell_run_return (run, result, NULL);
}

/* The deadline or the idle timeout ends the command, whether its run
 * still waits for it or handed it back: as a timeout does, the shell
 * goes with it, and the outcome goes to whoever waits (the run, a poll)
 * or is parked for the next poll. */
static void
run_end_by_clock (TerretShellRun *run,
                  TerretClock     clock)
{
  TerretResult *result;

  if (_terret_shell_run_stop (run, clock == TERRET_CLOCK_IDLE ? SHELL_STOP_IDLE
                                                              : SHELL_STOP_DEADLINE))
    return;

  _terret_shell_run_send_interrupt_now (run);
  _terret_shell_run_kill_shell (run);

  result = _terret_shell_run_partial_result (run);
  _terret_run_plan_note_clock (run->plan, result, clock);
  terret_result_add_notice (result, "The shell session was killed with it, so the next run "
                                    "starts a fresh session.");
  _terret_shell_run_return (run, result, NULL);
}

static void
run_on_idle (TerretShellRun *run)
{
  if (!_terret_run_plan_idle_check (run->plan, run->last_output, run->host.timers,
                                    TERRET_SHELL_TIMER_IDLE))
    return;
  if (run->plan->idle_action == TERRET_IDLE_ACTION_KILL)
    run_end_by_clock (run, TERRET_CLOCK_IDLE);
  /* Handed back once; a command already handed back goes on. */
  else if (run->task != NULL)
    {
      _terret_timers_disarm (run->host.timers, TERRET_SHELL_TIMER_DEADLINE);
      _terret_shell_run_detach (run, TERRET_CLOCK_IDLE, run->plan->idle_timeout);
    }
}

/* The session's timers, while this run is the session's. */
void
_terret_shell_run_on_timer (TerretShellRun *run,
                            guint           which)
{
  switch (which)
    {
    case TERRET_SHELL_TIMER_DEADLINE:
      run_on_deadline (run);
      break;
    case TERRET_SHELL_TIMER_EXIT_GRACE:
      _terret_shell_run_ended (run);
      break;
    case TERRET_SHELL_TIMER_ESCALATE:
      /* With job control off the command shares bash's process group, so
       * killing what ignored the interrupt ends the shell too: the run
       * ends as one whose shell ended, and says why. */
      run->escalated = run->stop == SHELL_STOP_NONE;
      _terret_shell_run_ended (run);
      break;
    case TERRET_SHELL_TIMER_HARD:
      run_end_by_clock (run, TERRET_CLOCK_DEADLINE);
      break;
    case TERRET_SHELL_TIMER_IDLE:
      run_on_idle (run);
      break;
    case TERRET_SHELL_TIMER_QUIET:
      _terret_shell_run_on_quiet (run);
      break;
    case TERRET_SHELL_TIMER_POLL:
    default:
      _terret_detach_poll_timed_out (&run->detach);
      break;
    }
}
