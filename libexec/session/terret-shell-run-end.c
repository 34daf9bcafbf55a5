/* terret-shell-run-end.c: how a run of a session ends
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * At its marker, with the status the harness saved (or, when the marker
 * says the harness never ran, after a recovery that learns it); when the
 * shell ends under it, with bash's own status when the launcher reports
 * one; and with no status and a notice where not even the harness alone
 * runs. Every ending says what the next run will find.
 */

#include "config.h"

#include <string.h>
#include <sys/wait.h>

#include "terret-error.h"
#include "terret-process-private.h"
#include "terret-result-private.h"
#include "terret-shell-run-parts-private.h"

/* How long the end of a shell whose terminal closed may take to be
 * reported, at most; it is on its way. */
#define SHELL_END_WAIT_MSEC 250

/* Why a shell cannot run the session's steps at a low `ulimit -n`. */
#define NO_DESCRIPTORS "it could not open a file descriptor: the open-files limit (ulimit -n) " \
                       "is below what the shell needs"

static void run_complete_broken (TerretShellRun *run,
                                 const char     *why);

/* The handshake failed: the half-started shell is ended here, since
 * nothing else holds it yet. */
void
_terret_shell_run_fail_handshake (TerretShellRun *run,
                                  const char     *why)
{
  g_autoptr(GBytes) said = NULL;
  g_autoptr(GString) message = g_string_new (NULL);
  gsize len = 0;
  const char *data;

  _terret_shell_run_kill_shell (run);
  said = _terret_shell_run_take_partial (run, NULL, NULL);
  data = g_bytes_get_data (said, &len);

  g_string_append_printf (message, "The shell did not answer its start-up handshake: %s", why);
  if (len > 0)
    {
      g_autofree char *text = g_utf8_make_valid (data, len);

      g_strstrip (text);
      if (*text != '\0')
        g_string_append_printf (message, "; it said: %s", text);
    }

  _terret_shell_run_return (run, NULL, g_error_new_literal (TERRET_EXEC_ERROR,
                                                            TERRET_EXEC_ERROR_UNAVAILABLE,
                                                            message->str));
}

/* How the shell ended, for the notice; sets the status it ended with,
 * when the channel can tell (a remote one may not). */
static char *
describe_shell_end (TerretShellRun *run,
                    TerretResult   *result)
{
  int wait_status = 0;

  if (terret_shell_channel_get_shell_end (run->host.channel, &wait_status))
    {
      terret_result_set_wait_status (result, wait_status);
      if (WIFEXITED (wait_status))
        return g_strdup_printf ("The shell exited with status %d while this command ran (an "
                                "`exit`, or a failing command under set -e)",
                                WEXITSTATUS (wait_status));
      if (WIFSIGNALED (wait_status))
        return g_strdup_printf ("The shell was killed by signal %d (%s) while this command ran",
                                WTERMSIG (wait_status), g_strsignal (WTERMSIG (wait_status)));
    }

  return g_strdup ("The shell session ended while this command ran");
}

/* What the shell's cgroup has refused so far (counts only grow). Only
 * memory and processes are a cgroup's; without them there is nothing to
 * read, and every run would pay for /proc reads. */
TerretLimits
_terret_shell_run_limits_hit (TerretShellRun *run)
{
  TerretProcess *process = terret_shell_channel_get_process (run->host.channel);

  if (run->plan->settings->limit_memory == 0 && run->plan->settings->limit_processes == 0)
    return TERRET_LIMIT_NONE;

  return process != NULL ? _terret_process_get_limits_hit (process) : TERRET_LIMIT_NONE;
}

/* The limits the command ran into, on its result and in a notice; a
 * session whose process limit was hit is ended, since what the command
 * forked (a fork bomb) would hold it at the limit for every later run. */
static gboolean
run_note_limits (TerretShellRun *run,
                 TerretResult   *result,
                 int             wait_status)
{
  TerretLimits hit = _terret_run_plan_note_limits (run->plan, result,
                                                   _terret_shell_run_limits_hit (run) &
                                                   ~run->limits_before,
                                                   wait_status);

  if ((hit & TERRET_LIMIT_PROCESSES) == 0)
    return TRUE;
  terret_result_add_notice (result, "What it started was ended with its session, so that "
                                    "nothing it forked holds the next run at the limit; the next "
                                    "run starts a fresh session, so the cwd and variables from "
                                    "earlier runs are gone.");
  return FALSE;
}

/* An interactive bash's `exit` builtin says "exit" on stderr, that is on
 * the terminal, as it goes: bash's words, not the command's, so the
 * result leaves them out when the shell exited with a status and they
 * are the last bytes read. (A command's own last line "exit" followed by
 * an exit other than the builtin's, as under set -e, is the one output
 * this mistakes.) */
static void
strip_exit_echo (TerretShellRun *run,
                 TerretResult   *result)
{
  static const char echo[] = "exit\n";
  GBytes *output = terret_result_get_stdout (result);
  gsize len;
  const char *data;

  if (output == NULL || terret_result_get_dropped (result, TERRET_STREAM_STDOUT) > 0 ||
      !terret_result_get_exited (result))
    return;
  data = g_bytes_get_data (output, &len);
  if (len >= sizeof echo - 1 && memcmp (data + len - (sizeof echo - 1), echo, sizeof echo - 1) == 0)
    {
      g_autoptr(GBytes) kept = g_bytes_new_from_bytes (output, 0, len - (sizeof echo - 1));

      terret_result_set_stdout (result, kept);
      if (run->spool != NULL)
        _terret_spool_truncate (run->spool, _terret_spool_get_seen (run->spool) - (sizeof echo - 1));
    }
}

/*
 * _terret_shell_run_ended:
 *
 * The shell ended (or the terminal closed) under the run, or the run
 * killed it. The result carries what it said, how it ended (bash's own
 * status when it exited) and that the next run starts afresh.
 */
void
_terret_shell_run_ended (TerretShellRun *run)
{
  g_autofree char *how = NULL;
  TerretResult *result;
  gboolean closed;

  if (run->kind == EXCHANGE_HANDSHAKE || run->kind == EXCHANGE_SETUP)
    {
      TerretProcess *process = terret_shell_channel_get_process (run->host.channel);
      g_autofree char *why = NULL;
      int wait_status = 0;

      if (process != NULL && terret_process_get_exited (process, &wait_status))
        why = g_strdup_printf ("it exited (wait status %d)", wait_status);
      else
        why = g_strdup ("its terminal closed");
      _terret_shell_run_fail_handshake (run, why);
      return;
    }

  closed = run->host.funcs->close_requested (run->host.session);
  result = _terret_shell_run_partial_result (run);
  if (!closed && !run->escalated)
    {
      TerretProcess *process = terret_shell_channel_get_process (run->host.channel);

      /* The terminal closes as bash exits, a moment before its launcher
       * reports how: that report is what says whether it exited with a
       * status, so it is worth the short wait. */
      if (process != NULL)
        terret_process_wait_exited (process, SHELL_END_WAIT_MSEC);
      how = describe_shell_end (run, result);
      strip_exit_echo (run, result);
      run_note_limits (run, result, -1);
    }
  _terret_shell_run_kill_shell (run);

  if (closed)
    terret_result_add_notice (result, "The shell session was closed while this command ran; the "
                                      "next run starts a fresh session, so the cwd and variables "
                                      "from earlier runs are gone.");
  else if (run->escalated)
    {
      g_autofree char *seconds = _terret_format_seconds (run->plan->settings->interrupt_grace);
      g_autofree char *notice = NULL;

      notice = g_strdup_printf ("The command was still running %ss after it was interrupted, so "
                                "it was killed with its shell session; the next run starts a fresh "
                                "session, so the cwd and variables from earlier runs are gone.",
                                seconds);
      terret_result_add_notice (result, notice);
    }
  else
    {
      g_autofree char *notice = g_strdup_printf ("%s; the next run starts a fresh session, so the "
                                                 "cwd and variables from earlier runs are gone.",
                                                 how);

      terret_result_add_notice (result, notice);
    }

  _terret_shell_run_return (run, result, NULL);
}

/* Sends the command again, in the same run: it did not run (its request
 * was taken before it could start), and what was read meanwhile is not
 * its output. Once only; after that the run ends without a status. */
static gboolean
run_resend (TerretShellRun *run,
            ExchangeKind    kind)
{
  if (run->resent)
    return FALSE;
  run->resent = TRUE;
  run->recovering = FALSE;
  g_clear_pointer (&run->command_capture, _terret_stream_capture_free);
  if (run->spool != NULL)
    _terret_spool_truncate (run->spool, 0);
  _terret_shell_run_start (run, kind);
  return TRUE;
}

static void
run_complete_replaced (TerretShellRun *run)
{
  TerretResult *result;

  if (run->command_capture != NULL)
    {
      _terret_stream_capture_free (run->capture);
      run->capture = g_steal_pointer (&run->command_capture);
    }
  result = _terret_shell_run_finish_capture (run);
  _terret_shell_run_kill_shell (run);
  terret_result_add_notice (result, "The command replaced the shell with another (exec), which "
                                    "has no status to report here; that shell was ended, and the "
                                    "next run starts a fresh session, so the cwd and variables "
                                    "from earlier runs are gone.");
  _terret_shell_run_return (run, result, NULL);
}

static void
run_complete_command (TerretShellRun *run)
{
  g_autofree char *flags_notice = NULL;
  TerretResult *result;
  const char *unusable;

  if (run->status == -3)
    {
      run_complete_replaced (run);
      return;
    }
  /* The command was left open and taken back: nothing of it ran. */
  if (run->left_open && !run->resent && run->status == -2 && !run->recovering)
    {
      run_resend (run, EXCHANGE_COMMAND);
      return;
    }
  /* A prompt of an earlier exchange: bash did not run the line's harness
   * (^C, an expansion error, a function named `builtin`), or printed its
   * prompt mangled or unexpanded. A recovery tells which, and carries the
   * line's status. */
  if (run->status == -2 && !run->recovering)
    {
      /* The output so far stays the command's: the recovery's own is not. */
      run->recovering = TRUE;
      run->command_capture = g_steal_pointer (&run->capture);
      _terret_shell_run_start (run, EXCHANGE_RECOVERY);
      return;
    }
  /* Stale again after a recovery (a shell that cannot even fork for
   * its own steps, as at a process limit), or a harness that could not
   * open its group: no status can be had. */
  if (run->status >= 0 && strchr (run->marker.flags, 'r') != NULL)
    {
      if (run->command_capture == NULL)
        run->command_capture = g_steal_pointer (&run->capture);
      run_complete_broken (run, NO_DESCRIPTORS);
      return;
    }
  if (run->status < 0)
    {
      if (run->command_capture == NULL)
        run->command_capture = g_steal_pointer (&run->capture);
      run_complete_broken (run, NULL);
      return;
    }
  /* The request's alias did not expand (aliases are off): the command did
   * not run, and goes into an eval from now on. */
  if (!run->recovering && strpbrk (run->marker.flags, TERRET_FLAG_NOT_RUN) != NULL)
    {
      _terret_shell_state_take_marker (run->host.state, &run->marker, run->careful);
      if (run_resend (run, EXCHANGE_COMMAND))
        return;
      run->command_capture = _terret_run_plan_new_capture (run->plan);
      run_complete_broken (run, NULL);
      return;
    }
  if (run->command_capture != NULL)
    {
      _terret_stream_capture_free (run->capture);
      run->capture = g_steal_pointer (&run->command_capture);
    }

  flags_notice = _terret_protocol_describe_flags (run->marker.flags);
  _terret_shell_run_add_notice (run, flags_notice);
  _terret_shell_state_take_marker (run->host.state, &run->marker, run->careful);
  unusable = _terret_protocol_unusable (run->marker.flags);

  result = _terret_shell_run_finish_capture (run);
  terret_result_set_exit_status (result, run->status);
  terret_result_set_cwd (result, run->marker.cwd);

  if (!run_note_limits (run, result, W_EXITCODE (run->status, 0)))
    _terret_shell_run_kill_shell (run);
  else if (unusable != NULL)
    {
      g_autofree char *notice = g_strdup_printf ("After this command %s, so the session was "
                                                 "ended; the next run starts a fresh one, so the "
                                                 "cwd and variables from earlier runs are gone.",
                                                 unusable);

      terret_result_add_notice (result, notice);
      _terret_shell_run_kill_shell (run);
    }

  _terret_shell_run_return (run, result, NULL);
}

/* A command after which not even the harness alone ran: what it
 * printed, no status, and why (@why, or the general case); the shell is
 * ended. */
static void
run_complete_broken (TerretShellRun *run,
                     const char     *why)
{
  g_autofree char *notice = NULL;
  TerretResult *result;

  _terret_stream_capture_free (run->capture);
  run->capture = g_steal_pointer (&run->command_capture);
  result = _terret_shell_run_finish_capture (run);
  run_note_limits (run, result, -1);
  _terret_shell_run_kill_shell (run);
  notice = g_strdup_printf ("After this command the shell could no longer run the session's own "
                            "steps (%s), so its status is unknown and the session was ended; the "
                            "next run starts a fresh one, so the cwd and variables from earlier "
                            "runs are gone.",
                            why != NULL ? why : "it left state, such as an alias over a reserved "
                                                "word or a DEBUG trap that skips commands, that "
                                                "breaks them");
  terret_result_add_notice (result, notice);
  _terret_shell_run_return (run, result, NULL);
}

/*
 * _terret_shell_run_on_marker:
 *
 * The exchange's marker was read (or one numbered before it: the line's
 * harness did not run). A handshake or a recovery goes on to the
 * command; a command ends, or first needs a recovery to learn its status.
 */
void
_terret_shell_run_on_marker (TerretShellRun *run)
{
  switch (run->kind)
    {
    case EXCHANGE_HANDSHAKE:
      /* A remote terminal's modes are set: now the set-up itself. */
      if (!terret_shell_channel_can_prepare_run (run->host.channel))
        {
          _terret_shell_run_start (run, EXCHANGE_SETUP);
          break;
        }
      _terret_shell_run_start (run, EXCHANGE_COMMAND);
      break;

    case EXCHANGE_SETUP:
      _terret_shell_run_start (run, EXCHANGE_COMMAND);
      break;

    case EXCHANGE_RECOVERY:
      if (run->status < 0 || strpbrk (run->marker.flags, "br") != NULL)
        {
          /* Not even the harness alone runs: nothing the session can say
           * to this shell is safe. */
          gboolean hijacked = run->status >= 0 && strchr (run->marker.flags, 'b') != NULL;
          gboolean no_fds = run->status >= 0 && strchr (run->marker.flags, 'r') != NULL;

          if (run->recovering && !hijacked)
            {
              /* The command may have run, and must not run twice: it ends
               * here, with what it printed and no status. */
              run_complete_broken (run, no_fds ? NO_DESCRIPTORS : NULL);
              return;
            }
          _terret_shell_run_kill_shell (run);
          /* Before the command, or a line a function named `builtin`
           * took whole: the command did not run. A fresh shell runs it,
           * once. */
          _terret_shell_run_add_notice (run, "The shell could no longer run the session's own "
                                             "steps (a function named like a builtin, or a "
                                             "builtin disabled, takes them), so a fresh session "
                                             "was started; the cwd and variables from earlier "
                                             "runs are gone.");
          if (!run_resend (run, EXCHANGE_HANDSHAKE))
            {
              run->command_capture = _terret_run_plan_new_capture (run->plan);
              run_complete_broken (run, NULL);
            }
          return;
        }
      _terret_shell_state_take_marker (run->host.state, &run->marker, run->careful);
      if (run->recovering)
        run_complete_command (run);
      else if (_terret_protocol_unusable (run->marker.flags) != NULL)
        {
          /* The command has not run yet, and this shell cannot run it. */
          _terret_shell_run_kill_shell (run);
          _terret_shell_run_start (run, EXCHANGE_HANDSHAKE);
        }
      else
        _terret_shell_run_start (run, EXCHANGE_COMMAND);
      break;

    case EXCHANGE_COMMAND:
    default:
      run_complete_command (run);
      break;
    }
}
