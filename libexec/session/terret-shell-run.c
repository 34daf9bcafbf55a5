/* terret-shell-run.c: one run of a session: its exchanges with the shell
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A run is one or more exchanges, each a line written and the marker that
 * ends it (terret-shell-protocol.c): the handshake of a new shell, the
 * recovery of one whose last line was abandoned, then the command. The
 * run reads the terminal, holds back what may be the start of a marker,
 * keeps the head of the command's output under the cap and reads on to
 * the marker past it, so the status is never lost. It ends at the marker,
 * at the timeout (killing the shell, or detaching), at a cancellation, or
 * when the shell ends under it.
 */

#include "config.h"

#include <string.h>
#include <sys/wait.h>

#include <glib-unix.h>

#include "terret-error.h"
#include "terret-process-private.h"
#include "terret-result-private.h"
#include "terret-shell-run-private.h"
#include "terret-utf8-private.h"
#include "terret-util-private.h"

/* What one read takes from the terminal. */
#define READ_CHUNK (64 * 1024)

/* What the handshake keeps of the shell's chatter, for the error message
 * of a shell that never answers. */
#define HANDSHAKE_OUTPUT_LIMIT 4096

/* Once the shell has ended, output it wrote just before may still be in
 * flight through the terminal; it is read until the terminal reports its
 * end, or for this long when a background job still holds the terminal
 * open (`sleep 100 & exit` must end the run at once, not in 100 s). */
#define EXIT_GRACE_SECONDS 0.1

/* How long the end of a shell whose terminal closed may take to be
 * reported, at most; it is on its way. */
#define SHELL_END_WAIT_MSEC 250

/* ETX: a human's ^C. The terminal turns it into SIGINT for its foreground
 * process group, which with job control off is the session's own, so it
 * reaches the command's children as well as bash. */
#define INTERRUPT_BYTE 0x03

/* `--noediting` is load-bearing: on a terminal bash is interactive, and
 * readline echoes what it reads whatever the terminal's echo flag says.
 * Without line editing the echo is the terminal's, which is off.
 * `--norc --noprofile` keep a user's dotfiles from deciding what the
 * session prints. `-s` reads commands from the terminal. */
static const char * const shell_flags[] = {
  "--norc", "--noprofile", "--noediting", "-s", NULL
};

static void run_on_marker (ShellRun *run);
static void run_complete_broken (ShellRun *run);
static const TerretDetachFuncs detach_funcs;
static gboolean run_flush (ShellRun *run);

/* --- Life --------------------------------------------------------------- */

ShellRun *
_terret_shell_run_new (TerretShellSession *session,
                       GTask              *task,
                       TerretRequest      *request,
                       TerretRunPlan      *plan,
                       GCancellable       *cancellable,
                       TerretSpool        *spool)
{
  ShellRun *run = g_new0 (ShellRun, 1);

  run->spool = spool;
  run->session = g_object_ref (session);
  run->task = task;
  run->request = g_object_ref (request);
  run->plan = plan;
  run->cancellable = cancellable != NULL ? g_object_ref (cancellable) : NULL;
  run->handshake_timeout = plan->settings->handshake_timeout;
  run->notices = g_string_new (NULL);
  run->out = g_byte_array_new ();
  run->hold = g_byte_array_new ();
  run->status = -1;
  _terret_detach_init (&run->detach, &detach_funcs, run, &session->timers, TIMER_POLL);
  return run;
}

static void run_detach_sources (ShellRun *run);

void
_terret_shell_run_free (ShellRun *run)
{
  run_detach_sources (run);
  _terret_detach_clear (&run->detach);
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
  g_clear_object (&run->session);
  g_free (run);
}

void
_terret_shell_run_add_notice (ShellRun   *run,
                              const char *notice)
{
  if (notice == NULL || *notice == '\0')
    return;
  if (run->notices->len > 0)
    g_string_append_c (run->notices, ' ');
  g_string_append (run->notices, notice);
}

/* The run's own sources; the session's stay for the next run. */
static void
run_detach_sources (ShellRun *run)
{
  TerretShellSession *session = run->session;

  _terret_clear_source (&run->cancel_source);
  _terret_clear_source (&run->write_source);
  if (session != NULL && session->run == run)
    for (guint i = 0; i < TERRET_TIMERS_MAX; i++)
      _terret_timers_disarm (&session->timers, i);
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
_terret_shell_run_return (ShellRun     *run,
                          TerretResult *result,
                          GError       *error)
{
  g_autoptr(GTask) task = g_steal_pointer (&run->task);
  TerretShellSession *session = run->session;

  if (task == NULL)
    task = _terret_detach_steal_poll (&run->detach);

  run_detach_sources (run);

  g_mutex_lock (&session->mutex);
  session->busy = FALSE;
  session->close_requested = FALSE;
  if (session->run == run)
    session->run = NULL;
  if (task == NULL && result != NULL)
    g_set_object (&session->parked, result);
  g_mutex_unlock (&session->mutex);

  _terret_shell_run_free (run);

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

/* Kills the shell and everything it started, and waits until nothing of
 * it is left. */
static void
run_kill_shell (ShellRun *run)
{
  _terret_shell_session_drop_sources (run->session);
  terret_shell_channel_terminate (run->session->channel);
}

/* --- Output ------------------------------------------------------------- */

/* Output that is certainly the command's: kept under the cap and shown
 * to the progress callback. */
static void
run_confirm (ShellRun *run,
             gsize     n)
{
  if (n == 0)
    return;

  _terret_stream_capture_append (run->capture, run->hold->data, n);
  if (run->kind == EXCHANGE_COMMAND && run->spool != NULL)
    _terret_spool_write (run->spool, run->hold->data, n);
  /* Once detached, the run's caller has its result and nobody asked to
   * hear more through the request: polls carry the rest. */
  if (run->kind == EXCHANGE_COMMAND && !run->detach.detached)
    terret_request_report_progress (run->request, TERRET_STREAM_STDOUT, run->hold->data, n);
  g_byte_array_remove_range (run->hold, 0, n);

  /* A command that writes anything after the interrupt reached it has
   * reacted to it (a REPL back at its prompt, a trap that printed): it is
   * handled, not ignored, and is not killed for it. */
  if (run->interrupt_written && run->kind == EXCHANGE_COMMAND)
    _terret_timers_disarm (&run->session->timers, TIMER_ESCALATE);
}

/* Feeds terminal bytes through the marker scanner. Returns TRUE when the
 * marker that ends the exchange was found (or one that says the shell
 * never ran the line); bytes after it are not this run's and are dropped. */
static gboolean
run_feed (ShellRun     *run,
          const guint8 *data,
          gsize         len)
{
  const TerretProtocolKey *key = &run->session->protocol;

  g_byte_array_append (run->hold, data, len);

  for (;;)
    {
      const guint8 *found = memmem (run->hold->data, run->hold->len, key->lead,
                                    TERRET_PROTOCOL_LEAD_LEN);
      g_auto(TerretMarker) marker = { 0 };

      if (found == NULL)
        {
          /* Hold back the longest tail that could begin a marker, so no
           * part of one is ever reported or kept. */
          gsize keep = MIN (run->hold->len, TERRET_PROTOCOL_LEAD_LEN - 1);
          gsize n;

          while (keep > 0 &&
                 memcmp (run->hold->data + run->hold->len - keep, key->lead, keep) != 0)
            keep--;
          n = run->hold->len - keep;
          /* A run that may hand its output over in pieces (a detaching
           * timeout, then polls) must not cut a character between two of
           * them: the start of one still arriving waits here for its end.
           * Bytes never completed are released at the marker, or when the
           * run ends, as they were written. */
          if (keep == 0 && run->plan->timeout_action == TERRET_TIMEOUT_ACTION_DETACH)
            n = _terret_utf8_whole_prefix (run->hold->data, n);
          run_confirm (run, n);
          return FALSE;
        }

      run_confirm (run, found - run->hold->data);

      switch (_terret_protocol_parse_marker (key, run->hold->data, run->hold->len, &marker))
        {
        case TERRET_MARKER_INCOMPLETE:
          return FALSE;

        case TERRET_MARKER_FOUND:
          if (marker.exchange <= run->expected)
            {
              run->status = marker.exchange == run->expected ? marker.status : -2;
              _terret_marker_clear (&run->marker);
              run->marker = marker;
              marker = (TerretMarker) { 0 };
              g_byte_array_set_size (run->hold, 0);
              return TRUE;
            }
          /* A number from the future is nobody's marker. */
          G_GNUC_FALLTHROUGH;
        case TERRET_MARKER_INVALID:
        default:
          run_confirm (run, 1);
          break;
        }
    }
}

/* What a run that ended without its marker read: everything, including a
 * tail held back in case it was a marker's beginning (it was not: this
 * exchange is over). */
static GBytes *
run_take_partial (ShellRun *run,
                  guint64  *dropped,
                  gsize    *cut)
{
  run_confirm (run, run->hold->len);
  return _terret_stream_capture_finish (run->capture, TRUE, dropped, cut);
}

static void
run_add_capture_notice (ShellRun *run,
                        gsize     kept,
                        gsize     cut,
                        guint64   dropped,
                        guint64   seen)
{
  g_autofree char *notice = _terret_run_plan_describe_dropped (run->plan, NULL, kept, cut, dropped,
                                                               seen);

  _terret_shell_run_add_notice (run, notice);
}

/* The result of the command's output so far: @output, of which @dropped
 * bytes were left out at @cut, and, with keep-full-output, the file that
 * has them all. A @final result also says what the file lacks. */
static TerretResult *
run_build_result (ShellRun *run,
                  GBytes   *output,
                  guint64   dropped,
                  gsize     cut,
                  gboolean  final)
{
  TerretResult *result = terret_result_new ();

  terret_result_set_stdout (result, output);
  if (dropped > 0)
    {
      terret_result_set_dropped (result, TERRET_STREAM_STDOUT, dropped, cut);
      terret_result_set_omitted_at (result, TERRET_STREAM_STDOUT, run->stretch_start + cut);
    }
  if (run->spool != NULL)
    {
      if (final)
        {
          g_autofree char *lacks = NULL;

          _terret_spool_close (run->spool);
          lacks = _terret_spool_describe (run->spool, "output");
          _terret_shell_run_add_notice (run, lacks);
        }
      else
        _terret_spool_flush (run->spool);
      _terret_result_set_spool (result, TERRET_STREAM_STDOUT, run->spool);
    }
  if (run->notices->len > 0)
    terret_result_add_notice (result, run->notices->str);

  return result;
}

/* Everything read so far, and every notice, as a result. */
static TerretResult *
run_partial_result (ShellRun *run)
{
  g_autoptr(GBytes) output = NULL;
  guint64 seen = _terret_stream_capture_get_seen (run->capture) + run->hold->len;
  guint64 dropped = 0;
  gsize cut = 0;

  output = run_take_partial (run, &dropped, &cut);
  run_add_capture_notice (run, g_bytes_get_size (output), cut, dropped, seen);
  return run_build_result (run, output, dropped, cut, TRUE);
}

/* --- Detached commands --------------------------------------------------- */

static TerretResult *
run_take_stretch (gpointer data)
{
  ShellRun *run = data;
  g_autoptr(GBytes) output = NULL;
  TerretResult *result;
  guint64 seen = _terret_stream_capture_get_seen (run->capture);
  guint64 dropped = 0;
  gsize cut = 0;

  /* Every byte in the capture is whole characters (see run_feed), so the
   * stretch ends where the output does. Each stretch is captured under
   * the run's mode on its own, up to max-output. */
  output = _terret_stream_capture_finish (run->capture, FALSE, &dropped, &cut);
  run_add_capture_notice (run, g_bytes_get_size (output), cut, dropped, seen);
  result = run_build_result (run, output, dropped, cut, FALSE);
  terret_result_set_running (result, TRUE);

  g_string_truncate (run->notices, 0);
  _terret_stream_capture_free (run->capture);
  run->capture = _terret_run_plan_new_capture (run->plan);
  run->stretch_start += seen;

  return result;
}

static gboolean
run_has_news (gpointer data)
{
  ShellRun *run = data;

  return _terret_stream_capture_get_seen (run->capture) > 0 || run->notices->len > 0;
}

static gboolean run_read_once (ShellRun *run,
                               gboolean *would_block);

static gboolean
run_read_pending (gpointer data)
{
  ShellRun *run = data;
  gboolean would_block = TRUE;

  if (run->session->read_source == NULL)
    return TRUE;
  if (!run_read_once (run, &would_block))
    return FALSE;
  return !would_block || run->detach.poll_task != NULL;
}

static void
run_adopt (gpointer      data,
           GMainContext *context)
{
  ShellRun *run = data;

  _terret_shell_session_adopt (run->session, context);
  if (run->write_source != NULL)
    {
      _terret_clear_source (&run->write_source);
      run_flush (run);
    }
}

static const TerretDetachFuncs detach_funcs = {
  run_take_stretch,
  run_has_news,
  run_read_pending,
  run_adopt,
};

/* --- Endings ------------------------------------------------------------- */

/* The handshake failed: the half-started shell is ended here, since
 * nothing else holds it yet. */
static void
run_fail_handshake (ShellRun   *run,
                    const char *why)
{
  g_autoptr(GBytes) said = NULL;
  g_autoptr(GString) message = g_string_new (NULL);
  gsize len = 0;
  const char *data;

  run_kill_shell (run);
  said = run_take_partial (run, NULL, NULL);
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
describe_shell_end (ShellRun     *run,
                    TerretResult *result)
{
  int wait_status = 0;

  if (terret_shell_channel_get_shell_end (run->session->channel, &wait_status))
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
static TerretLimits
run_limits_hit (ShellRun *run)
{
  TerretProcess *process = terret_shell_channel_get_process (run->session->channel);

  if (run->plan->settings->limit_memory == 0 && run->plan->settings->limit_processes == 0)
    return TERRET_LIMIT_NONE;

  return process != NULL ? _terret_process_get_limits_hit (process) : TERRET_LIMIT_NONE;
}

/* The limits the command ran into, on its result and in a notice; a
 * session whose process limit was hit is ended, since what the command
 * forked (a fork bomb) would hold it at the limit for every later run. */
static gboolean
run_note_limits (ShellRun     *run,
                 TerretResult *result,
                 int           wait_status)
{
  TerretLimits hit = _terret_run_plan_note_limits (run->plan, result,
                                                   run_limits_hit (run) & ~run->limits_before,
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
strip_exit_echo (ShellRun     *run,
                 TerretResult *result)
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
_terret_shell_run_ended (ShellRun *run)
{
  TerretShellSession *session = run->session;
  g_autofree char *how = NULL;
  TerretResult *result;
  gboolean closed;

  if (run->kind == EXCHANGE_HANDSHAKE)
    {
      TerretProcess *process = terret_shell_channel_get_process (session->channel);
      g_autofree char *why = NULL;
      int wait_status = 0;

      if (process != NULL && terret_process_get_exited (process, &wait_status))
        why = g_strdup_printf ("it exited (wait status %d)", wait_status);
      else
        why = g_strdup ("its terminal closed");
      run_fail_handshake (run, why);
      return;
    }

  g_mutex_lock (&session->mutex);
  closed = session->close_requested;
  g_mutex_unlock (&session->mutex);

  result = run_partial_result (run);
  if (!closed && !run->escalated)
    {
      TerretProcess *process = terret_shell_channel_get_process (session->channel);

      /* The terminal closes as bash exits, a moment before its launcher
       * reports how: that report is what says whether it exited with a
       * status, so it is worth the short wait. */
      if (process != NULL)
        terret_process_wait_exited (process, SHELL_END_WAIT_MSEC);
      how = describe_shell_end (run, result);
      strip_exit_echo (run, result);
      run_note_limits (run, result, -1);
    }
  run_kill_shell (run);

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

/* What the exchange's marker says the next request must do. A careful
 * harness that could not turn off what would trace the next request
 * (flag F) leaves a shell the session cannot use. */
static gboolean
run_take_state (ShellRun *run)
{
  TerretShellSession *session = run->session;
  gboolean next_careful, recover;

  _terret_protocol_flags_state (&run->marker, run->careful, &next_careful, &recover);
  session->careful = next_careful;
  session->needs_recovery = recover;
  if (run->careful)
    session->verbose = strchr (run->marker.flags, 'v') != NULL;
  return strchr (run->marker.flags, 'F') == NULL;
}

static void
run_complete_command (ShellRun *run)
{
  g_autoptr(GBytes) output = NULL;
  g_autofree char *flags_notice = NULL;
  TerretResult *result;
  guint64 seen, dropped = 0;
  gsize cut = 0;
  gboolean usable;

  /* A prompt of an earlier exchange: bash did not run the line's harness
   * (^C, an expansion error, a function named `builtin`), or did and then
   * printed a prompt it had not expanded again. A recovery tells which,
   * and carries the line's status. */
  if (run->status == -2 && !run->recovering)
    {
      /* The output so far stays the command's: the recovery's own is not. */
      run->recovering = TRUE;
      run->command_capture = g_steal_pointer (&run->capture);
      _terret_shell_run_start (run, EXCHANGE_RECOVERY);
      return;
    }
  /* Stale again after a recovery (a shell that cannot even fork for
   * its own steps, as at a process limit): no status can be had. */
  if (run->status < 0)
    {
      if (run->command_capture == NULL)
        run->command_capture = g_steal_pointer (&run->capture);
      run_complete_broken (run);
      return;
    }
  if (run->command_capture != NULL)
    {
      _terret_stream_capture_free (run->capture);
      run->capture = g_steal_pointer (&run->command_capture);
    }
  seen = _terret_stream_capture_get_seen (run->capture);

  flags_notice = _terret_protocol_describe_flags (run->marker.flags);
  _terret_shell_run_add_notice (run, flags_notice);

  /* Nothing of the marker ever entered the capture, so the output ends at
   * everything it has seen. */
  output = _terret_stream_capture_finish (run->capture, FALSE, &dropped, &cut);
  run_add_capture_notice (run, g_bytes_get_size (output), cut, dropped, seen);

  usable = run_take_state (run);

  result = run_build_result (run, output, dropped, cut, TRUE);
  terret_result_set_exit_status (result, run->status);
  terret_result_set_cwd (result, run->marker.cwd);

  if (!run_note_limits (run, result, W_EXITCODE (run->status, 0)))
    run_kill_shell (run);
  else if (!usable)
    {
      terret_result_add_notice (result, "The shell's state could not be put back into a state "
                                        "the session can use, so the session was ended; the next "
                                        "run starts a fresh one, so the cwd and variables from "
                                        "earlier runs are gone.");
      run_kill_shell (run);
    }

  _terret_shell_run_return (run, result, NULL);
}

/* A command after which not even the harness alone ran: what it
 * printed, no status, and why; the shell is ended. */
static void
run_complete_broken (ShellRun *run)
{
  g_autoptr(GBytes) output = NULL;
  TerretResult *result;
  guint64 seen, dropped = 0;
  gsize cut = 0;

  _terret_stream_capture_free (run->capture);
  run->capture = g_steal_pointer (&run->command_capture);
  seen = _terret_stream_capture_get_seen (run->capture);
  output = _terret_stream_capture_finish (run->capture, FALSE, &dropped, &cut);
  run_add_capture_notice (run, g_bytes_get_size (output), cut, dropped, seen);
  result = run_build_result (run, output, dropped, cut, TRUE);
  run_note_limits (run, result, -1);
  run_kill_shell (run);
  terret_result_add_notice (result, "After this command the shell could no longer run the "
                                    "session's own steps (it left state, such as an alias over "
                                    "a reserved word, that breaks them), so its status is "
                                    "unknown and the session was ended; the next run starts a "
                                    "fresh one, so the cwd and variables from earlier runs are "
                                    "gone.");
  _terret_shell_run_return (run, result, NULL);
}

static void
run_on_marker (ShellRun *run)
{
  TerretShellSession *session = run->session;

  switch (run->kind)
    {
    case EXCHANGE_HANDSHAKE:
      session->careful = FALSE;
      session->always_careful = FALSE;
      session->needs_recovery = FALSE;
      session->verbose = FALSE;
      _terret_shell_run_start (run, EXCHANGE_COMMAND);
      break;

    case EXCHANGE_RECOVERY:
      if (run->status < 0 || strchr (run->marker.flags, 'b') != NULL || !run_take_state (run))
        {
          /* Not even the harness alone runs: nothing the session can say
           * to this shell is safe. */
          gboolean hijacked = run->status >= 0 && strchr (run->marker.flags, 'b') != NULL;

          if (run->recovering && !hijacked)
            {
              /* The command may have run, and must not run twice: it ends
               * here, with what it printed and no status. */
              run_complete_broken (run);
              return;
            }
          run_kill_shell (run);
          /* Before the command, or a line a function named `builtin`
           * took whole: the command did not run. A fresh shell runs it. */
          g_clear_pointer (&run->command_capture, _terret_stream_capture_free);
          if (run->spool != NULL)
            _terret_spool_truncate (run->spool, 0);
          run->recovering = FALSE;
          _terret_shell_run_add_notice (run, "The shell could no longer run the session's own "
                                             "steps (a function named like a builtin takes "
                                             "them), so a fresh session was started; the cwd "
                                             "and variables from earlier runs are gone.");
          _terret_shell_run_start (run, EXCHANGE_HANDSHAKE);
          return;
        }
      if (run->recovering)
        run_complete_command (run);
      else
        _terret_shell_run_start (run, EXCHANGE_COMMAND);
      break;

    case EXCHANGE_COMMAND:
    default:
      run_complete_command (run);
      break;
    }
}

/* --- Reading and writing ------------------------------------------------- */

/* Reads one chunk. Returns FALSE when the run has been completed. */
static gboolean
run_read_once (ShellRun *run,
               gboolean *would_block)
{
  TerretShellSession *session = run->session;
  g_autoptr(GError) error = NULL;
  gssize n;

  *would_block = FALSE;
  n = terret_shell_channel_read (session->channel, session->read_buffer, READ_CHUNK, &error);

  if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
    {
      *would_block = TRUE;
      return TRUE;
    }

  if (n <= 0)
    {
      _terret_shell_run_ended (run);
      return FALSE;
    }

  if (run_feed (run, session->read_buffer, n))
    {
      run_on_marker (run);
      return FALSE;
    }

  _terret_detach_news (&run->detach);
  return TRUE;
}

/* The session's read source, while this run is the session's. */
void _terret_shell_run_on_readable (ShellRun *run);

void
_terret_shell_run_on_readable (ShellRun *run)
{
  gboolean would_block;

  run_read_once (run, &would_block);
}

/* The session's exit source: read what the shell wrote before it went,
 * until the terminal reports its end; a background job may hold it open,
 * hence the grace. */
void _terret_shell_run_on_exited (ShellRun *run);

void
_terret_shell_run_on_exited (ShellRun *run)
{
  run->shell_ended = TRUE;
  if (!_terret_timers_is_armed (&run->session->timers, TIMER_EXIT_GRACE))
    _terret_timers_arm_in (&run->session->timers, TIMER_EXIT_GRACE, EXIT_GRACE_SECONDS);
}

static gboolean
run_on_writable (int          fd,
                 GIOCondition condition,
                 gpointer     user_data)
{
  run_flush (user_data);
  return G_SOURCE_CONTINUE;
}

/* Writes what it can of @out. Returns FALSE when the run has been
 * completed (the terminal is gone). */
static gboolean
run_flush (ShellRun *run)
{
  TerretShellChannel *channel = run->session->channel;

  while (run->out_pos < run->out->len)
    {
      g_autoptr(GError) error = NULL;
      gssize n = terret_shell_channel_write (channel, run->out->data + run->out_pos,
                                             run->out->len - run->out_pos, &error);

      if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        {
          if (run->write_source == NULL)
            {
              run->write_source = g_unix_fd_source_new (terret_shell_channel_get_write_fd (channel),
                                                        G_IO_OUT);
              g_source_set_static_name (run->write_source, "[terret] shell request");
              g_source_set_callback (run->write_source, G_SOURCE_FUNC (run_on_writable), run, NULL);
              g_source_attach (run->write_source, run->session->context);
            }
          return TRUE;
        }

      if (n < 0)
        {
          /* EIO or EPIPE: the shell is gone. That is how it is learned,
           * not a failure of ours. */
          _terret_shell_run_ended (run);
          return FALSE;
        }

      run->out_pos += n;
      if (run->interrupt_end > 0 && run->out_pos >= run->interrupt_end)
        {
          run->interrupt_end = 0;
          run->interrupt_written = TRUE;
        }
    }

  /* Input keeps arriving for a long-running command: what was written
   * is not kept. */
  g_byte_array_set_size (run->out, 0);
  run->out_pos = 0;
  _terret_clear_source (&run->write_source);
  return TRUE;
}

void
_terret_shell_run_queue_input (ShellRun     *run,
                               const guint8 *data,
                               gsize         len)
{
  if (run->kind != EXCHANGE_COMMAND)
    {
      if (run->early_input == NULL)
        run->early_input = g_byte_array_new ();
      g_byte_array_append (run->early_input, data, len);
      return;
    }

  g_byte_array_append (run->out, data, len);
  /* A terminal that is gone ends the run, which says so; the input had
   * nowhere to go, like keys typed at a closed terminal. */
  run_flush (run);
}

/* The gentler half of ending a run; the kill that follows guarantees the
 * rest. A failure means the terminal is already gone. */
static void
run_send_interrupt_now (ShellRun *run)
{
  static const guint8 interrupt = INTERRUPT_BYTE;

  terret_shell_channel_write (run->session->channel, &interrupt, 1, NULL);
}

/* Queues ^C behind any input already queued (the terminal sees them in
 * the order the caller sent them) and starts the grace after which a
 * command that did not react is killed. A later interrupt keeps the
 * grace that runs. */
void
_terret_shell_run_interrupt (ShellRun *run)
{
  static const guint8 interrupt = INTERRUPT_BYTE;

  if (run->kind != EXCHANGE_COMMAND)
    {
      run->interrupt_requested = TRUE;
      return;
    }

  g_byte_array_append (run->out, &interrupt, 1);
  run->interrupt_end = run->out->len;
  run->interrupt_written = FALSE;

  if (!_terret_timers_is_armed (&run->session->timers, TIMER_ESCALATE))
    _terret_timers_arm_in (&run->session->timers, TIMER_ESCALATE,
                           run->plan->settings->interrupt_grace);
  run_flush (run);
}

/* --- Deadlines and cancellation ------------------------------------------ */

static void
run_on_deadline (ShellRun *run)
{
  g_autofree char *seconds = NULL;
  g_autofree char *notice = NULL;
  TerretResult *result;

  if (run->kind != EXCHANGE_COMMAND)
    {
      g_autofree char *handshake = _terret_format_seconds (run->handshake_timeout);
      g_autofree char *why = g_strdup_printf ("no answer within %ss", handshake);

      if (run->kind == EXCHANGE_HANDSHAKE)
        run_fail_handshake (run, why);
      else
        {
          /* The harness step alone did not come back: a fresh shell. */
          run_kill_shell (run);
          _terret_shell_run_add_notice (run, "The shell did not come back from an interrupted "
                                             "command, so a fresh session was started; the cwd "
                                             "and variables from earlier runs are gone.");
          _terret_shell_run_start (run, EXCHANGE_HANDSHAKE);
        }
      return;
    }

  if (run->plan->timeout_action == TERRET_TIMEOUT_ACTION_DETACH)
    {
      g_autoptr(GTask) task = g_steal_pointer (&run->task);

      _terret_clear_source (&run->cancel_source);
      result = _terret_detach_begin (&run->detach, run->plan->timeout,
                                     _terret_shell_session_get_key (run->session), TRUE);
      g_task_return_pointer (task, result, g_object_unref);
      return;
    }

  /* Kill and respawn rather than try to recover: after an interrupt the
   * shell's input and the output still in flight are in a state nothing
   * can account for. The next run gets a shell that is known, and the
   * caller is told so rather than left to discover a lost `cd`. */
  run_send_interrupt_now (run);
  run_kill_shell (run);

  result = run_partial_result (run);
  seconds = _terret_format_seconds (run->plan->timeout);
  notice = g_strdup_printf ("Timed out after %ss; the command was interrupted and the shell "
                            "session killed, so the next run starts a fresh session.", seconds);
  terret_result_add_notice (result, notice);
  terret_result_set_timed_out (result, TRUE);
  _terret_shell_run_return (run, result, NULL);
}

/* The session's timers, while this run is the session's. */
void _terret_shell_run_on_timer (ShellRun *run,
                                 guint     which);

void
_terret_shell_run_on_timer (ShellRun *run,
                            guint     which)
{
  switch (which)
    {
    case TIMER_DEADLINE:
      run_on_deadline (run);
      break;
    case TIMER_EXIT_GRACE:
      _terret_shell_run_ended (run);
      break;
    case TIMER_ESCALATE:
      /* With job control off the command shares bash's process group, so
       * killing what ignored the interrupt ends the shell too: the run
       * ends as one whose shell ended, and says why. */
      run->escalated = TRUE;
      _terret_shell_run_ended (run);
      break;
    case TIMER_POLL:
    default:
      _terret_detach_poll_timed_out (&run->detach);
      break;
    }
}

static gboolean
run_on_cancelled (GCancellable *cancellable,
                  gpointer      user_data)
{
  ShellRun *run = user_data;
  TerretShellSession *session = run->session;
  GError *error = NULL;

  if (run->kind == EXCHANGE_COMMAND)
    run_send_interrupt_now (run);
  run_kill_shell (run);

  g_mutex_lock (&session->mutex);
  g_free (session->pending_notice);
  session->pending_notice =
    g_strdup ("The previous command was cancelled and its shell session killed; a fresh one was "
              "started, so the cwd and variables from earlier runs are gone.");
  g_mutex_unlock (&session->mutex);

  g_cancellable_set_error_if_cancelled (cancellable, &error);
  _terret_shell_run_return (run, NULL, error);
  return G_SOURCE_REMOVE;
}

/* --- Exchanges ------------------------------------------------------------ */

/* Starts a new shell for the run: the executor's launcher, the channel's
 * spawn. Returns FALSE when the run has been completed with the error. */
static gboolean
run_start_shell (ShellRun *run)
{
  TerretShellSession *session = run->session;
  g_autoptr(TerretLauncher) launcher = NULL;
  g_autoptr(GError) error = NULL;
  const char *argv[G_N_ELEMENTS (shell_flags) + 1];

  launcher = session->start (session, run->plan->settings, &run->handshake_timeout,
                             session->start_data, &error);
  argv[0] = run->plan->settings->shell;
  for (guint i = 0; shell_flags[i] != NULL; i++)
    argv[i + 1] = shell_flags[i];
  argv[G_N_ELEMENTS (argv) - 1] = NULL;

  if (launcher == NULL ||
      !terret_shell_channel_spawn (session->channel, launcher, argv, &error))
    {
      if (error->domain != TERRET_EXEC_ERROR || error->code != TERRET_EXEC_ERROR_INVALID_CONFIG)
        {
          g_autoptr(GError) failed = g_steal_pointer (&error);

          g_set_error (&error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                       "Could not start the shell: %s", failed->message);
        }
      _terret_shell_run_return (run, NULL, g_steal_pointer (&error));
      return FALSE;
    }

  session->exchange = 0;
  return TRUE;
}

/*
 * _terret_shell_run_start:
 *
 * Starts one exchange: the handshake of a new shell (starting it first),
 * the recovery, or the command. The terminal's modes are re-asserted, the
 * line written, and the session's sources set to end the exchange.
 */
void
_terret_shell_run_start (ShellRun     *run,
                         ExchangeKind  kind)
{
  TerretShellSession *session = run->session;
  TerretShellChannel *channel = session->channel;
  gboolean remote = !terret_shell_channel_can_prepare_run (channel);
  g_autoptr(GMainContext) context = g_main_context_ref_thread_default ();
  g_autoptr(GError) error = NULL;
  g_autoptr(GByteArray) line = NULL;
  double timeout;

  run->kind = kind;
  run->status = -1;
  g_byte_array_set_size (run->hold, 0);
  g_clear_pointer (&run->capture, _terret_stream_capture_free);
  _terret_marker_clear (&run->marker);

  if (kind == EXCHANGE_COMMAND)
    run->limits_before = run_limits_hit (run);

  if (kind == EXCHANGE_HANDSHAKE)
    {
      if (!run_start_shell (run))
        return;
      _terret_protocol_key_init (&session->protocol);
      line = _terret_protocol_handshake (&session->protocol, remote);
      run->expected = 0;
      timeout = run->handshake_timeout;
      run->capture = _terret_stream_capture_new (TERRET_CAPTURE_MODE_HEAD, HANDSHAKE_OUTPUT_LIMIT);
    }
  else if (kind == EXCHANGE_RECOVERY)
    {
      /* After a stale marker in this run, the command's exchange; else
       * the last one sent. */
      guint64 abandoned = session->exchange;

      run->careful = TRUE;
      run->expected = ++session->exchange;
      line = _terret_protocol_recovery (run->expected, abandoned, remote);
      timeout = run->handshake_timeout;
      run->capture = _terret_stream_capture_new (TERRET_CAPTURE_MODE_HEAD, HANDSHAKE_OUTPUT_LIMIT);
    }
  else
    {
      const char *command = terret_request_get_command (run->request);
      TerretCarry carry = _terret_protocol_choose_carry (command);

      /* The fast path is for a shell known clean running a command whose
       * text cannot make it otherwise; a remote shell also needs its
       * terminal's modes put back, which only the careful harness does. */
      if (_terret_protocol_may_persist (command))
        session->always_careful = TRUE;
      run->careful = session->careful || session->always_careful || remote ||
                     _terret_protocol_needs_care (command);
      /* Verbose echoes whatever the eval still parses once it is on: the
       * harness then runs after the eval, on the line bash already read. */
      if (carry == TERRET_CARRY_EVAL && run->careful &&
          (session->verbose || _terret_protocol_parse_apart (command)))
        carry = TERRET_CARRY_EVAL_APART;
      run->expected = ++session->exchange;
      line = _terret_protocol_request (command, run->expected, carry, run->careful, remote);
      timeout = run->plan->timeout;
      run->capture = _terret_run_plan_new_capture (run->plan);
    }

  _terret_shell_session_adopt (session, context);

  /* Whatever the previous command did to the terminal (`stty echo`,
   * `stty icanon`) is undone here, from the host side, so it cannot
   * corrupt this exchange. */
  if (!terret_shell_channel_prepare_run (channel, &error))
    g_debug ("Could not set the shell's terminal modes: %s", error->message);

  g_byte_array_set_size (run->out, 0);
  run->out_pos = 0;
  g_byte_array_append (run->out, line->data, line->len);

  /* Input and an interrupt that came while the shell was starting follow
   * the command, in the order they came. */
  if (kind == EXCHANGE_COMMAND && run->early_input != NULL)
    {
      g_byte_array_append (run->out, run->early_input->data, run->early_input->len);
      g_clear_pointer (&run->early_input, g_byte_array_unref);
    }

  if (run->cancel_source == NULL && run->cancellable != NULL)
    {
      run->cancel_source = g_cancellable_source_new (run->cancellable);
      g_source_set_static_name (run->cancel_source, "[terret] shell cancel");
      g_source_set_callback (run->cancel_source, G_SOURCE_FUNC (run_on_cancelled), run, NULL);
      g_source_attach (run->cancel_source, context);
    }

  _terret_timers_disarm (&session->timers, TIMER_DEADLINE);
  if (timeout > 0)
    _terret_timers_arm_in (&session->timers, TIMER_DEADLINE, timeout);

  if (kind == EXCHANGE_COMMAND && run->interrupt_requested)
    {
      run->interrupt_requested = FALSE;
      _terret_shell_run_interrupt (run);
      return;
    }

  run_flush (run);
}
