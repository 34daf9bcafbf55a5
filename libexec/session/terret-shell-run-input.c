/* terret-shell-run-input.c: a run of a session whose command waits for input
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * When the command's output goes quiet, the run looks at its terminal
 * (terret-input-wait.c) and, when the command waits for input there,
 * hands it back as the request and the `on-input` setting say, tells
 * the request's `waiting-for-input` handlers, and answers a poll that
 * waits. "Quiet" is the session's QUIET timer: one deadline among the
 * run's timers, pushed back by every chunk of output and by input, so it
 * fires once the output has stopped for QUIET_SECONDS — a debounce of an
 * event, not a polling loop. A look that finds a process still running
 * looks again a bounded few times (_terret_input_watch_settle), and
 * after that only a new event looks again.
 *
 * A terminal of this host whose session is the shell's (the pty
 * backend) is looked at here; one a far side's launcher made (a
 * container's, flatpak-host's) is looked at there, by the launcher. A
 * shell behind a client (ssh without a far launcher, launcher=none)
 * cannot be: the run says unknown. An end of file (on-input eof) is
 * typed only for a wait of this host, whose readers it stops first; a
 * far side's wait is handed back instead, as on-input report does.
 */

#include "config.h"

#include <poll.h>
#include <termios.h>

#include "terret-process-private.h"
#include "terret-result-private.h"
#include "terret-shell-channel-private.h"
#include "terret-shell-run-parts-private.h"

/* How long the output stays quiet before the terminal is looked at: a
 * program prompts and reads at once, and a look costs a walk of /proc,
 * which a command printing every few hundredths of a second must not
 * pay for each line. */
#define QUIET_SECONDS 0.2

/* With on-input eof, a command that waits again after this many is
 * handed back instead: it does not take an end of file for an answer. */
#define EOF_MAX 3

/* How long a far side's launcher has to answer a look: a bound, not a
 * step (one record each way on a link already open, answered at once). */
#define FAR_LOOK_MSEC 1000

/* Whether the run's terminal can be looked at: a terminal of this host
 * that is the shell's own, or one a far side's launcher made and looks
 * at there; not a client's on the way to a far side. */
static gboolean
run_can_look (TerretShellRun *run)
{
  TerretShellChannel *channel = run->host.channel;

  return terret_shell_channel_get_process (channel) != NULL &&
         _terret_shell_channel_get_reach (channel) != TERRET_SHELL_BEHIND_CLIENT;
}

/* Whether the readers of a wait are this host's (to stop them for an end
 * of file). */
static gboolean
run_looks_here (TerretShellRun *run)
{
  return _terret_shell_channel_get_reach (run->host.channel) == TERRET_SHELL_HERE;
}

/*
 * _terret_shell_run_input_look:
 *
 * Looks at the run's terminal now, where it is. Returns TRUE when this
 * look found a wait that the one before did not.
 */
gboolean
_terret_shell_run_input_look (TerretShellRun *run)
{
  int terminal = terret_shell_channel_get_read_fd (run->host.channel);
  TerretWireInput found;
  unsigned flags = 0;

  if (run_looks_here (run))
    return _terret_input_watch_look (run->input, terminal, run->started);

  found = _terret_process_look_input (terret_shell_channel_get_process (run->host.channel),
                                      FAR_LOOK_MSEC, &flags);
  /* What the far side printed before it looked comes first on the link:
   * if it is here unread, the command was not quiet after all. */
  if (found == TERRET_WIRE_INPUT_WAITING)
    {
      struct pollfd pending = { terminal, POLLIN, 0 };

      if (poll (&pending, 1, 0) != 0)
        found = TERRET_WIRE_INPUT_BUSY;
    }
  return _terret_input_watch_note (run->input, found, flags, run->started);
}

static void
run_arm_quiet (TerretShellRun *run,
               double          seconds)
{
  _terret_timers_arm_in (run->host.timers, TERRET_SHELL_TIMER_QUIET, seconds);
}

/* The command's exchange started: from here its terminal is watched. */
void
_terret_shell_run_input_begin (TerretShellRun *run)
{
  if (run->input == NULL && run_can_look (run))
    run->input = _terret_input_watch_new ();
  if (run->input != NULL)
    run_arm_quiet (run, QUIET_SECONDS);
}

/* The command printed @data. */
void
_terret_shell_run_input_output (TerretShellRun *run,
                                const guint8   *data,
                                gsize           len)
{
  if (run->input == NULL || run->kind != EXCHANGE_COMMAND)
    return;
  _terret_input_watch_output (run->input, data, len);
  run_arm_quiet (run, QUIET_SECONDS);
}

/* Input went to the command. */
static void
run_input_sent (TerretShellRun *run)
{
  if (run->input == NULL || run->kind != EXCHANGE_COMMAND)
    return;
  _terret_input_watch_input (run->input);
  run_arm_quiet (run, QUIET_SECONDS);
}

/* Input for the command: noted first (the prompt it answers is no longer
 * waited at; the write may end the run), then queued for its terminal. */
void
_terret_shell_run_send_input (TerretShellRun *run,
                              const guint8   *data,
                              gsize           len)
{
  run_input_sent (run);
  _terret_shell_run_queue_input (run, data, len);
}

/* How soon to look whether readers stopped for an end of file have. */
#define STOP_LOOK_SECONDS 0.02

/* on-input eof, its first step: a pager gets `q`; a reader is stopped
 * (terret-input-wait.c says why), and the QUIET timer takes the next
 * step once it is. */
static void
run_begin_eof (TerretShellRun *run,
               gboolean        pager)
{
  static const guint8 quit = 'q';

  if (pager)
    _terret_shell_run_send_input (run, &quit, 1);
  else if (_terret_input_watch_stop (run->input))
    run_arm_quiet (run, STOP_LOOK_SECONDS);
}

/* The readers are stopped: ^D at the start of a line, on a terminal made
 * canonical for it (the next exchange restores the modes), then they
 * read again and find the end of file. */
static void
run_finish_eof (TerretShellRun *run)
{
  int fd = terret_shell_channel_get_write_fd (run->host.channel);
  struct termios modes;
  guint8 eof = 0x04;

  if (tcgetattr (fd, &modes) == 0)
    {
      if (modes.c_cc[VEOF] != 0)
        eof = modes.c_cc[VEOF];
      modes.c_lflag |= ICANON;
      tcsetattr (fd, TCSANOW, &modes);
    }
  _terret_shell_run_send_input (run, &eof, 1);
  _terret_input_watch_continue (run->input);
}

/* on-input fail: as a timeout that kills, the shell goes with it. */
static void
run_fail_on_input (TerretShellRun *run,
                   const char     *prompt)
{
  g_autofree char *notice = NULL;
  TerretResult *result;

  _terret_shell_run_send_interrupt_now (run);
  _terret_shell_run_kill_shell (run);

  result = _terret_shell_run_partial_result (run);
  if (prompt != NULL)
    notice = g_strdup_printf ("The command waited for input (its prompt: “%s”) and on-input is "
                              "fail: it was interrupted and its shell session killed, so the next "
                              "run starts a fresh session.", prompt);
  else
    notice = g_strdup ("The command waited for input and on-input is fail: it was interrupted "
                       "and its shell session killed, so the next run starts a fresh session.");
  terret_result_add_notice (result, notice);
  terret_result_set_clock (result, TERRET_CLOCK_INPUT);
  _terret_shell_run_return (run, result, NULL);
}

/* The QUIET timer: the output has been quiet for a while. */
void
_terret_shell_run_on_quiet (TerretShellRun *run)
{
  g_autoptr(TerretRequest) request = NULL;
  g_autofree char *prompt = NULL;
  const TerretInputWait *wait;
  gboolean secret, pager;
  double settle;

  if (run->input == NULL || run->kind != EXCHANGE_COMMAND)
    return;

  if (_terret_input_watch_is_stopping (run->input))
    {
      if (_terret_input_watch_is_stopped (run->input))
        run_finish_eof (run);
      else
        run_arm_quiet (run, STOP_LOOK_SECONDS);
      return;
    }

  /* The request or the caller's input is still on its way: the
   * command has more to read. */
  if (run->out_pos < run->out->len)
    {
      run_arm_quiet (run, QUIET_SECONDS);
      return;
    }

  if (!_terret_shell_run_input_look (run))
    {
      settle = _terret_input_watch_settle (run->input);
      if (settle > 0)
        run_arm_quiet (run, settle);
      return;
    }

  /* From here the run may be handed over and even freed (a caller's
   * callback may close the session): what is told after is copied. */
  wait = _terret_input_watch_get (run->input);
  request = g_object_ref (run->request);
  prompt = g_strdup (wait->prompt);
  secret = wait->secret;
  pager = wait->pager;

  if (run->task == NULL)
    /* Handed back already: a poll that waits answers now. */
    _terret_detach_news (&run->detach);
  else if (run->plan->timeout_action == TERRET_TIMEOUT_ACTION_DETACH || run->plan->may_detach ||
           run->plan->settings->on_input == TERRET_INPUT_ACTION_REPORT ||
           (run->plan->settings->on_input == TERRET_INPUT_ACTION_EOF &&
            (_terret_input_watch_count_answer (run->input) > EOF_MAX ||
             (!pager && !run_looks_here (run)))))
    {
      /* Handed back once; the caller polls it from here, as after an
       * idle return. */
      if (run->plan->settings->on_input == TERRET_INPUT_ACTION_EOF && !pager &&
          !run_looks_here (run))
        _terret_shell_run_add_notice (run, "The command waits for input on a far side's "
                                           "terminal, where on-input eof cannot type an end of "
                                           "file (its readers are not this host's to stop): it "
                                           "was handed back running, as on-input report does.");
      _terret_timers_disarm (run->host.timers, TERRET_SHELL_TIMER_DEADLINE);
      _terret_shell_run_detach (run, TERRET_CLOCK_INPUT, 0);
    }
  else if (run->plan->settings->on_input == TERRET_INPUT_ACTION_EOF)
    run_begin_eof (run, pager);
  else if (run->plan->settings->on_input == TERRET_INPUT_ACTION_WAIT)
    ;
  else
    {
      run_fail_on_input (run, prompt);
      return;
    }

  /* The request's public signal, by name: a request is told nothing
   * else by the engines. */
  g_signal_emit_by_name (request, "waiting-for-input", prompt, secret, pager);
}
