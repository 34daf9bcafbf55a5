/* terret-command-run.c: one command's process, read to its end
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A run starts one process (`bash -c COMMAND` by default) through the
 * executor's launcher, with stdout and stderr on pipes read apart by fd
 * sources, each kept as a bounded tail and streamed line by line to the
 * request's progress callback; stdin is /dev/null. It ends when the
 * shell has ended and its pipes are closed, or a short grace after the
 * shell ended while something it left running still holds them; then
 * whatever is left is killed, and the result returned once nothing is.
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib-unix.h>
#include <glib/gstdio.h>

#include "terret-command-run-private.h"
#include "terret-error.h"
#include "terret-launcher-private.h"
#include "terret-launcher-wire.h"
#include "terret-process-private.h"
#include "terret-result-private.h"
#include "terret-utf8-private.h"
#include "terret-util-private.h"

/* Bytes taken from a pipe per dispatch. One read per dispatch, not a read
 * until EAGAIN: a command printing without pause (`yes`) must not keep
 * the loop inside this source while the timeout, the cancellable and the
 * other runs wait their turn. */
#define READ_CHUNK (64 * 1024)

/* Longest line the framer holds before handing it on in pieces. Without a
 * bound a command printing one endless line (`yes | tr -d '\n'`) would
 * grow the pending line until the timeout. */
#define LINE_LIMIT (64 * 1024)

/* Reads allowed when a run ends with its pipes still open, to collect
 * what already sits in them; the bound keeps a writer that is still
 * running from holding the run. */
#define FINAL_DRAIN_READS 16

static void run_check_done (CommandRun *run);
static void run_complete (CommandRun *run);

static const char *
stream_name (TerretStream stream)
{
  return stream == TERRET_STREAM_STDOUT ? "stdout" : "stderr";
}

/* --- Streams ------------------------------------------------------------ */

/* Hands complete lines, with their newline, to the progress callback as
 * they land; a line without its newline yet waits in rs->line. A line
 * longer than LINE_LIMIT goes out in pieces cut at a UTF-8 character
 * boundary, so the callback never sees half a character from a cut it did
 * not make and the pending bytes stay bounded. */
static void
stream_frame (RunStream    *rs,
              const guint8 *data,
              gsize         len)
{
  TerretRequest *request = rs->run->request;

  while (len > 0)
    {
      const guint8 *newline = memchr (data, '\n', len);
      gsize take;

      if (newline == NULL)
        break;

      take = (gsize)(newline - data) + 1;
      if (rs->line->len == 0)
        {
          /* The common case: a whole line inside one read, passed on
           * without a copy. */
          terret_request_report_progress (request, rs->stream, data, take);
        }
      else
        {
          g_byte_array_append (rs->line, data, take);
          terret_request_report_progress (request, rs->stream, rs->line->data, rs->line->len);
          g_byte_array_set_size (rs->line, 0);
        }
      data += take;
      len -= take;
    }

  if (len > 0)
    g_byte_array_append (rs->line, data, len);

  while (rs->line->len >= LINE_LIMIT)
    {
      /* Backs off at most three bytes, the start of an incomplete
       * character, which then leads the next piece. */
      gsize cut = _terret_utf8_whole_prefix (rs->line->data, LINE_LIMIT);

      terret_request_report_progress (request, rs->stream, rs->line->data, cut);
      g_byte_array_remove_range (rs->line, 0, cut);
    }
}

static void
stream_take (RunStream    *rs,
             const guint8 *data,
             gsize         len)
{
  _terret_stream_capture_append (rs->capture, data, len);
  if (rs->spool != NULL)
    _terret_spool_write (rs->spool, data, len);

  /* Output after a cancellation is reported to nobody: the caller already
   * asked to stop hearing about this run. */
  if (rs->line != NULL && rs->run->end != RUN_END_CANCELLED)
    stream_frame (rs, data, len);
}

/* Ends reading a stream: the last line is delivered as it is, without a
 * newline the command never wrote. */
static void
stream_close (RunStream *rs)
{
  _terret_clear_source (&rs->source);

  if (rs->fd >= 0)
    {
      g_close (rs->fd, NULL);
      rs->fd = -1;
    }

  if (rs->line != NULL && rs->line->len > 0 && rs->run->end != RUN_END_CANCELLED)
    terret_request_report_progress (rs->run->request, rs->stream, rs->line->data, rs->line->len);
  if (rs->line != NULL)
    g_byte_array_set_size (rs->line, 0);
}

/* Reads what a pipe holds right now, at most FINAL_DRAIN_READS chunks,
 * then closes it. */
static void
stream_drain (RunStream *rs)
{
  for (guint i = 0; rs->fd >= 0 && i < FINAL_DRAIN_READS; i++)
    {
      gssize n = read (rs->fd, rs->run->buffer, READ_CHUNK);

      if (n > 0)
        stream_take (rs, rs->run->buffer, n);
      else if (n < 0 && errno == EINTR)
        continue;
      else
        break;
    }

  stream_close (rs);
}

/* Reads one chunk. Returns FALSE once the stream is closed; @would_block
 * says the pipe is empty for now. Never completes the run. */
static gboolean
stream_read_once (RunStream *rs,
                  gboolean  *would_block)
{
  gssize n;

  *would_block = FALSE;
  n = read (rs->fd, rs->run->buffer, READ_CHUNK);
  if (n > 0)
    {
      if (rs->run->plan->idle_timeout > 0)
        rs->run->last_output = g_get_monotonic_time ();
      stream_take (rs, rs->run->buffer, n);
      return TRUE;
    }
  if (n < 0 && errno == EINTR)
    return TRUE;
  if (n < 0 && errno == EAGAIN)
    {
      *would_block = TRUE;
      return TRUE;
    }

  stream_close (rs);
  return FALSE;
}

static gboolean
stream_ready_cb (int          fd,
                 GIOCondition condition,
                 gpointer     user_data)
{
  RunStream *rs = user_data;
  CommandRun *run = rs->run;
  gboolean would_block;

  if (!stream_read_once (rs, &would_block))
    {
      run_check_done (run);   /* may complete and free the run */
      return G_SOURCE_REMOVE;
    }

  /* Last: answering the poll may run its callback, which may close the
   * session and free the run. */
  _terret_detach_news (&run->detach);
  return G_SOURCE_CONTINUE;
}

static void
stream_watch (RunStream *rs)
{
  _terret_clear_source (&rs->source);
  rs->source = g_unix_fd_source_new (rs->fd, G_IO_IN | G_IO_HUP | G_IO_ERR);
  g_source_set_static_name (rs->source, "[terret] command output");
  g_source_set_callback (rs->source, G_SOURCE_FUNC (stream_ready_cb), rs, NULL);
  g_source_attach (rs->source, rs->run->context);
}

/* --- Life ----------------------------------------------------------------- */

static void run_on_timer (gpointer owner,
                          guint    which);
static const TerretDetachFuncs detach_funcs;

/*
 * _terret_command_run_describe:
 *
 * The run as a list shows it in @state: its command, start, process (its
 * bash, where it runs on this host) and the bytes of both streams so far.
 */
TerretSessionInfo *
_terret_command_run_describe (CommandRun         *run,
                              TerretSessionState  state)
{
  g_autoptr(GDateTime) started = _terret_date_time_from_usec (run->started);
  guint64 bytes = 0;
  GPid pid = 0;

  /* A finished run's captures are gone, and its offsets count it all. */
  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    bytes += run->streams[i].offset + (run->streams[i].capture != NULL
                                       ? _terret_stream_capture_get_seen (run->streams[i].capture)
                                       : 0);
  if (run->process != NULL && !run->exited && !run->far)
    pid = terret_process_get_pid (run->process);
  return terret_session_info_new (run->session, state, terret_request_get_command (run->request),
                                  started, pid, bytes);
}

/* Takes @plan. */
CommandRun *
_terret_command_run_new (const TerretCommandRunFuncs *funcs,
                         gpointer                     owner,
                         GTask                       *task,
                         TerretRequest               *request,
                         TerretRunPlan               *plan)
{
  CommandRun *run = g_new0 (CommandRun, 1);

  run->funcs = funcs;
  run->owner = owner;
  run->task = task;
  run->request = g_object_ref (request);
  run->plan = plan;
  run->session = g_strdup (terret_request_get_session (request));
  run->started = g_get_real_time ();
  run->context = g_main_context_ref_thread_default ();
  run->notices = g_string_new (NULL);
  run->buffer = g_malloc (READ_CHUNK);
  _terret_timers_init (&run->timers, run_on_timer, run, "[terret] command deadlines");
  _terret_detach_init (&run->detach, &detach_funcs, run, &run->timers, COMMAND_TIMER_POLL);

  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    {
      RunStream *rs = &run->streams[i];

      rs->run = run;
      rs->stream = i == 0 ? TERRET_STREAM_STDOUT : TERRET_STREAM_STDERR;
      rs->fd = -1;
      rs->capture = _terret_run_plan_new_capture (run->plan);
      /* Framing lines nobody reads is wasted work. */
      if (terret_request_has_progress_func (request))
        rs->line = g_byte_array_new ();
    }

  return run;
}

void
_terret_command_run_free (CommandRun *run)
{
  _terret_clear_source (&run->exit_source);
  _terret_clear_source (&run->gone_source);
  _terret_clear_source (&run->cancel_source);
  _terret_timers_clear (&run->timers);
  _terret_detach_clear (&run->detach);

  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    {
      RunStream *rs = &run->streams[i];

      _terret_clear_source (&rs->source);
      if (rs->fd >= 0)
        g_close (rs->fd, NULL);
      g_clear_pointer (&rs->capture, _terret_stream_capture_free);
      g_clear_pointer (&rs->spool, _terret_spool_unref);
      if (rs->line != NULL)
        g_byte_array_unref (rs->line);
    }

  /* Disposing the process ends what is left of it, and waits for that. */
  g_clear_object (&run->process);
  g_clear_object (&run->task);
  g_clear_object (&run->request);
  g_clear_pointer (&run->plan, _terret_run_plan_free);
  g_clear_pointer (&run->session, g_free);
  g_clear_pointer (&run->context, g_main_context_unref);
  g_clear_pointer (&run->buffer, g_free);
  g_string_free (run->notices, TRUE);
  g_free (run);
}

/* Whether @run still holds its session key: a closed run is on its way
 * out and no longer reachable by key. */
gboolean
_terret_command_run_in_session (CommandRun *run,
                                const char *session)
{
  return run->end != RUN_END_CLOSED && g_strcmp0 (run->session, session) == 0;
}

/* --- Ending --------------------------------------------------------------- */

static gboolean
run_on_gone (gpointer user_data)
{
  CommandRun *run = user_data;

  g_clear_pointer (&run->gone_source, g_source_unref);
  run_complete (run);
  return G_SOURCE_REMOVE;
}

/* The shell has ended and its pipes are done with: whatever it left is
 * killed, and the run completes once nothing of it is left. A unit with
 * nothing left says so on its own, so the usual run waits for nothing. */
static gboolean
run_finish (CommandRun *run)
{
  _terret_timers_disarm (&run->timers, COMMAND_TIMER_DRAIN);

  /* Nothing left: the unit said so when it reported the shell's end (it
   * leaves right after), or it is gone already. */
  if (_terret_process_is_gone (run->process) ||
      (run->exited && !run->kill_sent && !_terret_process_left_others (run->process)))
    {
      run_complete (run);
      return TRUE;
    }

  /* A stop runs its course: what the command left hears its signals,
   * and the sweep at the grace's end is the bound. */
  if (!run->kill_sent && !run->stop_sent)
    {
      run->kill_sent = TRUE;
      run->anyone_left = run->end == RUN_END_NONE;
      run->funcs->stop (run->owner, run->process);
    }
  if (run->gone_source == NULL)
    {
      run->gone_source = _terret_process_create_gone_source (run->process);
      g_source_set_callback (run->gone_source, run_on_gone, run, NULL);
      g_source_attach (run->gone_source, run->context);
    }
  return FALSE;
}

/* Called when something that blocks completion goes away. */
static void
run_check_done (CommandRun *run)
{
  if (!run->exited)
    return;

  if (run->streams[0].fd < 0 && run->streams[1].fd < 0)
    {
      run_finish (run);
      return;
    }

  /* The shell is gone but something still holds its pipes: a background
   * process (`sleep 30 & echo done`). Its output is not worth holding the
   * run for; read for a short grace, then kill it and return. */
  if (!_terret_timers_is_armed (&run->timers, COMMAND_TIMER_DRAIN))
    _terret_timers_arm_in (&run->timers, COMMAND_TIMER_DRAIN, run->plan->settings->drain_grace);
}

/* Stops a run for @end: the stop sequence (SIGINT to the command's
 * group, or SIGHUP to everything for a close; SIGTERM halfway through
 * the grace; the sweep at its end), or with no grace, or after an
 * interrupt's own grace, the kill now. Output is read on meanwhile; the
 * run completes once nothing of the command is left. */
void
_terret_command_run_stop (CommandRun *run,
                          RunEnd      end)
{
  if (run->end == RUN_END_NONE)
    run->end = end;

  _terret_timers_disarm (&run->timers, COMMAND_TIMER_TIMEOUT);
  _terret_timers_disarm (&run->timers, COMMAND_TIMER_ESCALATE);
  _terret_timers_disarm (&run->timers, COMMAND_TIMER_DEADLINE);
  _terret_timers_disarm (&run->timers, COMMAND_TIMER_IDLE);
  if (end != RUN_END_INTERRUPTED && run->plan->stop_grace > 0 && !run->kill_sent &&
      !run->stop_sent && !run->exited)
    {
      run->stop_sent = TRUE;
      _terret_process_stop (run->process, run->plan->stop_grace, SIGINT,
                            end == RUN_END_CLOSED ? TERRET_WIRE_STOP_CLOSE : 0);
    }
  else if (!run->kill_sent)
    {
      run->kill_sent = TRUE;
      run->funcs->stop (run->owner, run->process);
    }

  if (run->exited)
    run_finish (run);
}

/* Records the shell's end, without completing the run. */
static void
run_set_exited (CommandRun *run)
{
  int wait_status = 0;

  terret_process_get_exited (run->process, &wait_status);
  run->exited = TRUE;
  run->wait_status = wait_status;
  run->exited_on_its_own = (run->end == RUN_END_NONE);

  /* The clocks and the interrupt's grace are for the command; what is
   * left is a bounded drain. */
  _terret_timers_disarm (&run->timers, COMMAND_TIMER_TIMEOUT);
  _terret_timers_disarm (&run->timers, COMMAND_TIMER_ESCALATE);
  _terret_timers_disarm (&run->timers, COMMAND_TIMER_DEADLINE);
  _terret_timers_disarm (&run->timers, COMMAND_TIMER_IDLE);
}

static gboolean
run_on_exited (gpointer user_data)
{
  CommandRun *run = user_data;

  g_clear_pointer (&run->exit_source, g_source_unref);
  run_set_exited (run);
  if (run->end != RUN_END_NONE)
    run_finish (run);
  else
    run_check_done (run);
  return G_SOURCE_REMOVE;
}

/* The output since the last result (the detaching run's, or the last
 * poll's) as a result of its own; unless @final, the next stretch starts
 * empty under the same cap. A stretch never ends inside a character: an
 * incomplete one at its end (at most three bytes) leads the next, so the
 * stretches joined are the stream exactly. */
static TerretResult *
run_take_stretch_final (CommandRun *run,
                        gboolean    final)
{
  TerretResult *result = terret_result_new ();

  if (run->notices->len > 0)
    {
      terret_result_add_notice (result, run->notices->str);
      g_string_truncate (run->notices, 0);
    }

  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    {
      RunStream *rs = &run->streams[i];
      g_autoptr(GBytes) bytes = NULL;
      g_autoptr(GBytes) kept = NULL;
      guint64 dropped = 0;
      guint64 seen = _terret_stream_capture_get_seen (rs->capture);
      gsize len = 0;
      gsize cut = 0;
      const guint8 *data;
      gsize whole;

      bytes = _terret_stream_capture_finish (rs->capture, FALSE, &dropped, &cut);
      if (dropped > 0)
        _terret_result_report_omitted (result, rs->stream, rs->capture, rs->offset);
      g_clear_pointer (&rs->capture, _terret_stream_capture_free);
      data = g_bytes_get_data (bytes, &len);
      /* The kept bytes end where the stretch does, unless a head dropped
       * its end (a head already ends on a whole character). */
      whole = final || (dropped > 0 && cut == len) ? len : _terret_utf8_whole_prefix (data, len);
      kept = whole == len ? g_bytes_ref (bytes) : g_bytes_new_from_bytes (bytes, 0, whole);

      if (rs->stream == TERRET_STREAM_STDOUT)
        terret_result_set_stdout (result, kept);
      else
        terret_result_set_stderr (result, kept);

      if (dropped > 0)
        {
          g_autofree char *notice = _terret_run_plan_describe_dropped (run->plan,
                                                                       stream_name (rs->stream),
                                                                       whole, cut, dropped, seen);

          terret_result_set_dropped (result, rs->stream, dropped, cut);
          terret_result_set_omitted_at (result, rs->stream, rs->offset + cut);
          terret_result_add_notice (result, notice);
        }

      if (rs->spool != NULL)
        {
          if (final)
            {
              g_autofree char *lacks = NULL;

              _terret_spool_close (rs->spool);
              lacks = _terret_spool_describe (rs->spool, stream_name (rs->stream));
              if (lacks != NULL)
                terret_result_add_notice (result, lacks);
            }
          else
            _terret_spool_flush (rs->spool);
          _terret_result_set_spool (result, rs->stream, rs->spool);
        }

      if (!final)
        {
          rs->capture = _terret_run_plan_new_capture (run->plan);
          rs->carry = len - whole;
          rs->offset += seen - rs->carry;
          _terret_stream_capture_append (rs->capture, data + whole, rs->carry);
        }
    }

  terret_result_set_running (result, !final);
  return result;
}

/* Ends the run: the shell has ended and nothing of it is left. Returns
 * the result or the cancellation to the run, or, for a detached command,
 * to the poll in flight, or parks it for the next poll. Frees @run. */
static void
run_complete (CommandRun *run)
{
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GTask) task = NULL;

  _terret_clear_source (&run->cancel_source);
  _terret_clear_source (&run->gone_source);
  for (guint i = 0; i < TERRET_TIMERS_MAX; i++)
    _terret_timers_disarm (&run->timers, i);

  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    if (run->streams[i].fd >= 0)
      stream_drain (&run->streams[i]);

  task = g_steal_pointer (&run->task);
  if (task == NULL)
    task = _terret_detach_steal_poll (&run->detach);

  result = run_take_stretch_final (run, TRUE);

  /* A status is reported only when the shell ended on its own: one read
   * from a process that was stopped is its answer to our signals, which
   * the result's ended-by says. */
  if (run->exited_on_its_own)
    terret_result_set_wait_status (result, run->wait_status);

  if (run->end == RUN_END_CANCELLED)
    {
      if (run->stop_sent)
        _terret_run_plan_note_stop (run->plan, result, run->process);
      /* The call fails as a cancelled GIO call does; what the command
       * printed until it ended is the request's to give. */
      terret_request_set_cancelled_result (run->request, result);
      run->funcs->ended (run->owner, run, NULL);
      _terret_command_run_free (run);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                               "The command was cancelled and stopped");
      return;
    }

  _terret_run_plan_note_limits (run->plan, result, _terret_process_get_limits_hit (run->process),
                                run->exited_on_its_own ? run->wait_status : -1);

  switch (run->end)
    {
    case RUN_END_TIMEOUT:
      {
        g_autofree char *seconds = _terret_format_seconds (run->plan->timeout);
        g_autofree char *notice = g_strdup_printf (run->stop_sent
                                                   ? "Timed out after %ss; the command was stopped."
                                                   : "Timed out after %ss; the command was killed.",
                                                   seconds);

        terret_result_set_timed_out (result, TRUE);
        terret_result_set_clock (result, TERRET_CLOCK_TIMEOUT);
        terret_result_add_notice (result, notice);
      }
      break;

    case RUN_END_DEADLINE:
      _terret_run_plan_note_clock (run->plan, result, TERRET_CLOCK_DEADLINE);
      break;

    case RUN_END_IDLE:
      _terret_run_plan_note_clock (run->plan, result, TERRET_CLOCK_IDLE);
      break;

    case RUN_END_CLOSED:
      if (run->exited_on_its_own)
        terret_result_add_notice (result, "The session was closed; processes the command left "
                                          "running were killed.");
      else
        terret_result_add_notice (result, "The session was closed; the command was killed.");
      break;

    case RUN_END_INTERRUPTED:
      {
        g_autofree char *seconds = _terret_format_seconds (run->plan->settings->interrupt_grace);
        g_autofree char *notice = NULL;

        if (run->exited_on_its_own)
          notice = g_strdup_printf ("Processes the command left running were still there %ss "
                                    "after the interrupt and were killed.", seconds);
        else
          notice = g_strdup_printf ("The command was still running %ss after it was interrupted, "
                                    "so it was killed with everything it started.", seconds);
        terret_result_add_notice (result, notice);
      }
      break;

    case RUN_END_NONE:
      if (run->anyone_left)
        terret_result_add_notice (result, "Processes the command left running were killed when "
                                          "it ended.");
      break;

    case RUN_END_CANCELLED:
    default:
      g_assert_not_reached ();
    }

  if (run->stop_sent)
    _terret_run_plan_note_stop (run->plan, result, run->process);

  /* A detached command's end that nobody waits for: the next poll of its
   * key collects it, unless the key was closed. */
  run->funcs->ended (run->owner, run, task == NULL && run->end != RUN_END_CLOSED ? result : NULL);
  _terret_command_run_free (run);
  if (task != NULL)
    g_task_return_pointer (task, g_steal_pointer (&result), g_object_unref);
}

/* Ends a detached command nobody waits for at once, with no result: for
 * a close or a disposal, where no main loop may ever run its context
 * again. Disposing the process waits until nothing of it is left. */
void
_terret_command_run_end_now (CommandRun *run)
{
  g_assert (run->task == NULL && run->detach.poll_task == NULL);

  run->funcs->ended (run->owner, run, NULL);
  _terret_command_run_free (run);
}

/* --- Timers and interrupts ----------------------------------------------- */

/* The run hands its command back to its caller as @clock says, and the
 * command goes on for polls. */
static void
run_detach (CommandRun  *run,
            TerretClock  clock,
            double       seconds)
{
  g_autoptr(GTask) task = g_steal_pointer (&run->task);

  _terret_clear_source (&run->cancel_source);
  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    {
      RunStream *rs = &run->streams[i];

      if (rs->line == NULL)
        continue;
      /* The line so far, up to a character still arriving: the
       * callback hears of everything the detaching result holds;
       * polls carry the rest. */
      if (rs->line->len > 0)
        terret_request_report_progress (run->request, rs->stream, rs->line->data,
                                        _terret_utf8_whole_prefix (rs->line->data,
                                                                   rs->line->len));
      g_clear_pointer (&rs->line, g_byte_array_unref);
    }
  /* Last: the run's callback may free the run. */
  g_task_return_pointer (task, _terret_detach_begin (&run->detach, clock, seconds,
                                                     run->session, FALSE),
                         g_object_unref);
}

static void
run_on_timer (gpointer owner,
              guint    which)
{
  CommandRun *run = owner;

  switch (which)
    {
    case COMMAND_TIMER_TIMEOUT:
      if (run->plan->timeout_action == TERRET_TIMEOUT_ACTION_DETACH)
        run_detach (run, run->plan->timeout_clock, run->plan->timeout);
      else
        _terret_command_run_stop (run, RUN_END_TIMEOUT);
      break;
    case COMMAND_TIMER_DEADLINE:
      _terret_command_run_stop (run, RUN_END_DEADLINE);
      break;
    case COMMAND_TIMER_IDLE:
      if (!_terret_run_plan_idle_check (run->plan, run->last_output, &run->timers, COMMAND_TIMER_IDLE))
        break;
      if (run->plan->idle_action == TERRET_IDLE_ACTION_KILL)
        _terret_command_run_stop (run, RUN_END_IDLE);
      /* Handed back once; a command already handed back goes on. */
      else if (run->task != NULL)
        {
          _terret_timers_disarm (&run->timers, COMMAND_TIMER_TIMEOUT);
          run_detach (run, TERRET_CLOCK_IDLE, run->plan->idle_timeout);
        }
      break;
    case COMMAND_TIMER_DRAIN:
      run_finish (run);
      break;
    case COMMAND_TIMER_ESCALATE:
      _terret_command_run_stop (run, RUN_END_INTERRUPTED);
      break;
    case COMMAND_TIMER_POLL:
    default:
      _terret_detach_poll_timed_out (&run->detach);
      break;
    }
}

/* SIGINT to the command's group, as ^C does to a terminal's foreground
 * group, and the grace after which it is killed. A later interrupt keeps
 * the grace that runs. */
void
_terret_command_run_interrupt (CommandRun *run)
{
  /* The shell gone, its group draining: the drain grace bounds it. */
  if (run->exited)
    return;

  terret_process_signal_group (run->process, SIGINT);
  if (!_terret_timers_is_armed (&run->timers, COMMAND_TIMER_ESCALATE))
    _terret_timers_arm_in (&run->timers, COMMAND_TIMER_ESCALATE, run->plan->settings->interrupt_grace);
}

static gboolean
run_on_cancelled (GCancellable *cancellable,
                  gpointer      user_data)
{
  CommandRun *run = user_data;

  g_clear_pointer (&run->cancel_source, g_source_unref);
  _terret_command_run_stop (run, RUN_END_CANCELLED);
  return G_SOURCE_REMOVE;
}

/* --- Detached commands ----------------------------------------------------- */

static TerretResult *
run_take_stretch (gpointer data)
{
  return run_take_stretch_final (data, FALSE);
}

/* Whether a poll has anything to return: bytes beyond an incomplete
 * character carried over from the last stretch. */
static gboolean
run_has_news (gpointer data)
{
  CommandRun *run = data;

  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    if (_terret_stream_capture_get_seen (run->streams[i].capture) > run->streams[i].carry)
      return TRUE;

  return run->notices->len > 0;
}

/* What already sits in the pipes, and whether the shell has ended, before
 * a poll decides to wait. Returns FALSE once the run completed (which
 * answered the poll). */
static gboolean
run_read_pending (gpointer data)
{
  CommandRun *run = data;

  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    {
      RunStream *rs = &run->streams[i];
      gboolean would_block;

      if (rs->fd >= 0)
        stream_read_once (rs, &would_block);
    }

  if (!run->exited && terret_process_check_exited (run->process))
    {
      _terret_clear_source (&run->exit_source);
      run_set_exited (run);
    }

  if (run->exited && (run->end != RUN_END_NONE ||
                      (run->streams[0].fd < 0 && run->streams[1].fd < 0)))
    return !run_finish (run);
  if (run->exited && !_terret_timers_is_armed (&run->timers, COMMAND_TIMER_DRAIN))
    _terret_timers_arm_in (&run->timers, COMMAND_TIMER_DRAIN, run->plan->settings->drain_grace);

  return TRUE;
}

/* A detached command is read on the main context of whoever last asked
 * for it (the run, then each poll): the one its caller iterates. */
static void
run_adopt (gpointer      data,
           GMainContext *context)
{
  CommandRun *run = data;

  if (context == run->context)
    return;

  g_main_context_unref (run->context);
  run->context = g_main_context_ref (context);

  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    if (run->streams[i].source != NULL)
      stream_watch (&run->streams[i]);

  if (run->exit_source != NULL)
    {
      _terret_clear_source (&run->exit_source);
      run->exit_source = terret_process_create_exit_source (run->process);
      g_source_set_callback (run->exit_source, run_on_exited, run, NULL);
      g_source_attach (run->exit_source, run->context);
    }
  if (run->gone_source != NULL)
    {
      _terret_clear_source (&run->gone_source);
      run->gone_source = _terret_process_create_gone_source (run->process);
      g_source_set_callback (run->gone_source, run_on_gone, run, NULL);
      g_source_attach (run->gone_source, run->context);
    }
  _terret_timers_attach (&run->timers, run->context);
}

static const TerretDetachFuncs detach_funcs = {
  run_take_stretch,
  run_has_news,
  run_read_pending,
  run_adopt,
};

/* --- Spawning -------------------------------------------------------------- */

/*
 * _terret_command_run_spawn:
 *
 * Starts the run's process: pipes for stdout and stderr, the settings'
 * and the request's environment and directory, then the executor's
 * prepare_run for the rest. Everything is checked before anything runs.
 */
gboolean
_terret_command_run_spawn (CommandRun        *run,
                           TerretLauncherLink  *launcher_link,
                           GCancellable      *cancellable,
                           GError           **error)
{
  g_autoptr(TerretLauncher) launcher = _terret_launcher_new_for (launcher_link);
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  const char *cwd;
  int fds[2][2] = { { -1, -1 }, { -1, -1 } };

  run->far = _terret_launcher_link_is_far (launcher_link);

  /* The full-output files, one per stream, before anything runs. */
  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    {
      GError *local_error = NULL;

      run->streams[i].spool = _terret_run_plan_open_spool (run->plan,
                                                           i == 0 ? ".stdout" : ".stderr",
                                                           &local_error);
      if (local_error != NULL)
        {
          g_propagate_error (error, local_error);
          return FALSE;
        }
    }

  if (!_terret_settings_prepare_launcher (run->plan->settings, launcher,
                                          terret_request_get_env (run->request), error))
    return FALSE;
  terret_launcher_set_cwd (launcher, run->plan->cwd);

  for (guint i = 0; i < 2; i++)
    {
      GError *local_error = NULL;

      if (!g_unix_open_pipe (fds[i], FD_CLOEXEC, &local_error))
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                       "Could not create the %s pipe: %s", stream_name (i), local_error->message);
          g_error_free (local_error);
          for (guint j = 0; j < i; j++)
            {
              g_close (fds[j][0], NULL);
              g_close (fds[j][1], NULL);
            }
          return FALSE;
        }
      terret_launcher_take_fd (launcher, fds[i][1], i + 1);
      run->streams[i].fd = fds[i][0];
    }

  if (!run->funcs->prepare (run->owner, run->request, launcher, argv, error))
    return FALSE;
  g_ptr_array_add (argv, NULL);

  /* The directory the process starts in here, once prepare_run has
   * moved it into a client's command line if the command runs elsewhere;
   * a far side's directories are not this host's: one that is not there
   * fails the spawn, naming it. */
  cwd = terret_launcher_get_cwd (launcher);
  if (cwd != NULL && !run->far &&
      !g_file_test (cwd, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "The working directory “%s” is not a directory", cwd);
      return FALSE;
    }

  run->process = terret_launcher_spawn (launcher, (const char * const *)argv->pdata, error);
  if (run->process == NULL)
    return FALSE;

  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    {
      /* The sources read once per wakeup and must never block the loop. */
      if (!g_unix_set_fd_nonblocking (run->streams[i].fd, TRUE, NULL))
        g_warning ("Could not make the %s pipe non-blocking", stream_name (i));
      stream_watch (&run->streams[i]);
    }

  run->exit_source = terret_process_create_exit_source (run->process);
  g_source_set_callback (run->exit_source, run_on_exited, run, NULL);
  g_source_attach (run->exit_source, run->context);

  _terret_timers_attach (&run->timers, run->context);
  _terret_timers_arm_in (&run->timers, COMMAND_TIMER_TIMEOUT, run->plan->timeout);
  if (run->plan->deadline > 0)
    _terret_timers_arm_in (&run->timers, COMMAND_TIMER_DEADLINE, run->plan->deadline);
  if (run->plan->idle_timeout > 0)
    {
      run->last_output = g_get_monotonic_time ();
      _terret_timers_arm_in (&run->timers, COMMAND_TIMER_IDLE, run->plan->idle_timeout);
    }

  /* A cancellable source, not a signal handler: g_cancellable_cancel()
   * may come from any thread, and the source brings the stop to the
   * run's own context at once, with no tick. */
  if (cancellable != NULL)
    {
      run->cancel_source = g_cancellable_source_new (cancellable);
      g_source_set_static_name (run->cancel_source, "[terret] command cancel");
      g_source_set_callback (run->cancel_source, G_SOURCE_FUNC (run_on_cancelled), run, NULL);
      g_source_attach (run->cancel_source, run->context);
    }

  return TRUE;
}
