/* terret-shell-run-output.c: what a run reads, as output and results
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Terminal bytes go through the marker scanner: what may be the start of
 * a marker is held back until the next read decides, what certainly is
 * not is the command's output, kept under the cap (and in the full-output
 * file) and shown to the progress callback. No byte of a marker is ever
 * output.
 */

#include "config.h"

#include <string.h>
#include <sys/wait.h>

#include "terret-process-private.h"
#include "terret-result-private.h"
#include "terret-shell-run-parts-private.h"
#include "terret-utf8-private.h"
#include "terret-util-private.h"

/* Output that is certainly the command's: kept under the cap and shown
 * to the progress callback. */
static void
run_confirm (TerretShellRun *run,
             gsize           n)
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
    _terret_timers_disarm (run->host.timers, TERRET_SHELL_TIMER_ESCALATE);
}

/* Feeds terminal bytes through the marker scanner. Returns TRUE when the
 * marker that ends the exchange was found (or one that says the shell
 * never ran the line, or printed its prompt unexpanded or mangled, or was
 * replaced); bytes after it are not this run's and are dropped. */
gboolean
_terret_shell_run_feed (TerretShellRun *run,
                        const guint8   *data,
                        gsize           len)
{
  const TerretProtocolKey *key = &run->host.state->key;

  g_byte_array_append (run->hold, data, len);

  for (;;)
    {
      g_auto(TerretMarker) marker = { 0 };
      gsize start = 0;
      TerretLeadScan scan = _terret_protocol_scan (key, run->hold->data, run->hold->len, &start);

      if (scan == TERRET_LEAD_NONE)
        {
          /* A run that may hand its output over in pieces (a detaching
           * timeout, then polls) must not cut a character between two of
           * them: the start of one still arriving waits here for its end.
           * Bytes never completed are released at the marker, or when the
           * run ends, as they were written. */
          if (run->plan->may_detach)
            start = _terret_utf8_whole_prefix (run->hold->data, start);
          run_confirm (run, start);
          return FALSE;
        }

      /* What precedes it is output; from it on, it is held back until
       * it is known. */
      run_confirm (run, start);
      if (scan == TERRET_LEAD_PARTIAL)
        return FALSE;

      switch (_terret_protocol_parse_marker (key, run->hold->data, run->hold->len, &marker))
        {
        case TERRET_MARKER_INCOMPLETE:
          return FALSE;

        case TERRET_MARKER_FOUND:
          if (marker.kind == TERRET_MARKER_KIND_CONTINUATION)
            {
              /* bash asks for more of a command left open: the reader
               * takes it back with ^C (the prompt that follows ends the
               * exchange), and it is sent again in an eval, which says
               * what is wrong. */
              g_byte_array_remove_range (run->hold, 0, marker.len);
              if (run->kind == EXCHANGE_COMMAND && !run->left_open)
                run->left_open = run->take_back = TRUE;
              break;
            }
          if (marker.kind == TERRET_MARKER_KIND_NORMAL && marker.exchange > run->expected)
            {
              /* A number from the future is nobody's marker. */
              run_confirm (run, 1);
              break;
            }
          if (marker.kind == TERRET_MARKER_KIND_REPLACED)
            run->status = -3;
          else if (marker.kind == TERRET_MARKER_KIND_NORMAL && marker.exchange == run->expected)
            run->status = marker.status;
          else
            run->status = -2;
          _terret_marker_clear (&run->marker);
          run->marker = marker;
          marker = (TerretMarker) { 0 };
          g_byte_array_set_size (run->hold, 0);
          return TRUE;

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
GBytes *
_terret_shell_run_take_partial (TerretShellRun *run,
                                guint64        *dropped,
                                gsize          *cut)
{
  run_confirm (run, run->hold->len);
  return _terret_stream_capture_finish (run->capture, TRUE, dropped, cut);
}

static void
run_add_capture_notice (TerretShellRun *run,
                        gsize           kept,
                        gsize           cut,
                        guint64         dropped,
                        guint64         seen)
{
  g_autofree char *notice = _terret_run_plan_describe_dropped (run->plan, NULL, kept, cut, dropped,
                                                               seen);

  _terret_shell_run_add_notice (run, notice);
}

/* The result of the command's output so far: @output, of which @dropped
 * bytes were left out at @cut, and, with keep-full-output, the file that
 * has them all. A @final result also says what the file lacks. */
static TerretResult *
run_build_result (TerretShellRun *run,
                  GBytes         *output,
                  guint64         dropped,
                  gsize           cut,
                  gboolean        final)
{
  TerretResult *result = terret_result_new ();

  _terret_shell_run_input_note (run, result, !final);
  terret_result_set_stdout (result, output);
  if (dropped > 0)
    {
      terret_result_set_dropped (result, TERRET_STREAM_STDOUT, dropped, cut);
      terret_result_set_omitted_at (result, TERRET_STREAM_STDOUT, run->stretch_start + cut);
      _terret_result_report_omitted (result, TERRET_STREAM_STDOUT, run->capture,
                                     run->stretch_start);
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

/* The result of a command whose exchange ended at its marker: nothing of
 * the marker ever entered the capture, so the output ends at everything
 * it has seen. */
TerretResult *
_terret_shell_run_finish_capture (TerretShellRun *run)
{
  g_autoptr(GBytes) output = NULL;
  guint64 seen = _terret_stream_capture_get_seen (run->capture);
  guint64 dropped = 0;
  gsize cut = 0;

  output = _terret_stream_capture_finish (run->capture, FALSE, &dropped, &cut);
  run_add_capture_notice (run, g_bytes_get_size (output), cut, dropped, seen);
  return run_build_result (run, output, dropped, cut, TRUE);
}

/* Everything read so far, and every notice, as a result. */
TerretResult *
_terret_shell_run_partial_result (TerretShellRun *run)
{
  g_autoptr(GBytes) output = NULL;
  guint64 seen = _terret_stream_capture_get_seen (run->capture) + run->hold->len;
  guint64 dropped = 0;
  gsize cut = 0;

  output = _terret_shell_run_take_partial (run, &dropped, &cut);
  run_add_capture_notice (run, g_bytes_get_size (output), cut, dropped, seen);
  return run_build_result (run, output, dropped, cut, TRUE);
}

/* --- Detached commands: the detach's view of the output ----------------- */

TerretResult *
_terret_shell_run_take_stretch (gpointer data)
{
  TerretShellRun *run = data;
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

gboolean
_terret_shell_run_has_news (gpointer data)
{
  TerretShellRun *run = data;

  return _terret_stream_capture_get_seen (run->capture) > 0 || run->notices->len > 0 ||
         _terret_shell_run_input_news (run);
}

/* --- What a result says of the shell and its limits --------------------- */

/* How the shell ended, for the notice; sets the status it ended with,
 * when the channel can tell (a remote one may not). */
char *
_terret_shell_run_describe_end (TerretShellRun *run,
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
gboolean
_terret_shell_run_note_limits (TerretShellRun *run,
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
void
_terret_shell_run_strip_exit_echo (TerretShellRun *run,
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

/* What @result says of a wait for input: for a command that goes on, as
 * the terminal is now (a poll is an event too); for one that ended, that
 * it does not wait. */
void
_terret_shell_run_input_note (TerretShellRun *run,
                              TerretResult   *result,
                              gboolean        running)
{
  TerretInputWait ended = { TERRET_INPUT_STATE_NOT_WAITING, NULL, -1, FALSE, FALSE };

  if (run->input == NULL)
    return;
  if (!running)
    {
      _terret_result_set_input_wait (result, &ended);
      return;
    }
  if (run->kind == EXCHANGE_COMMAND && run->out_pos >= run->out->len)
    _terret_shell_run_input_look (run);
  _terret_result_set_input_wait (result, _terret_input_watch_get (run->input));
  _terret_input_watch_told (run->input);
}

/* Whether a wait began that no result told yet. */
gboolean
_terret_shell_run_input_news (TerretShellRun *run)
{
  return run->input != NULL && _terret_input_watch_is_news (run->input);
}
