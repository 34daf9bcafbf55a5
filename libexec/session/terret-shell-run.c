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
#include "terret-shell-run-parts-private.h"
#include "terret-util-private.h"

/* What the handshake keeps of the shell's chatter, for the error message
 * of a shell that never answers. */
#define HANDSHAKE_OUTPUT_LIMIT 4096

/* Once the shell has ended, output it wrote just before may still be in
 * flight through the terminal; it is read until the terminal reports its
 * end, or for this long when a background job still holds the terminal
 * open (`sleep 100 & exit` must end the run at once, not in 100 s). */
#define EXIT_GRACE_SECONDS 0.1


/* `--noediting` is load-bearing: on a terminal bash is interactive, and
 * readline echoes what it reads whatever the terminal's echo flag says.
 * Without line editing the echo is the terminal's, which is off.
 * `--norc --noprofile` keep a user's dotfiles from deciding what the
 * session prints. `-s` reads commands from the terminal. */
static const char * const shell_flags[] = {
  "--norc", "--noprofile", "--noediting", "-s", NULL
};

/* How long the end of a shell whose terminal closed may take to be
 * reported, at most; it is on its way. */
#define SHELL_END_WAIT_MSEC 250

/* Why a shell cannot run the session's steps at a low `ulimit -n`. */
#define NO_DESCRIPTORS "it could not open a file descriptor: the open-files limit (ulimit -n) " \
                       "is below what the shell needs"

static const TerretDetachFuncs detach_funcs;
static void run_complete_broken (TerretShellRun *run,
                                 const char     *why);
static void run_on_marker (TerretShellRun *run);

/* --- Life --------------------------------------------------------------- */

/*
 * _terret_shell_run_new:
 *
 * A run of @request by @plan in the session @host describes, returning
 * to @task; it takes @task, @plan and @spool. Nothing happens until
 * _terret_shell_run_begin().
 */
TerretShellRun *
_terret_shell_run_new (const TerretShellRunHost *host,
                       GTask                    *task,
                       TerretRequest            *request,
                       TerretRunPlan            *plan,
                       GCancellable             *cancellable,
                       TerretSpool              *spool)
{
  TerretShellRun *run = g_new0 (TerretShellRun, 1);

  run->host = *host;
  g_object_ref (run->host.session);
  run->spool = spool;
  run->task = task;
  run->request = g_object_ref (request);
  run->plan = plan;
  run->cancellable = cancellable != NULL ? g_object_ref (cancellable) : NULL;
  run->handshake_timeout = plan->settings->handshake_timeout;
  run->started = g_get_real_time ();
  run->notices = g_string_new (NULL);
  run->out = g_byte_array_new ();
  run->hold = g_byte_array_new ();
  run->status = -1;
  run->on_gone = _terret_shell_run_ended;
  _terret_detach_init (&run->detach, &detach_funcs, run, host->timers, TERRET_SHELL_TIMER_POLL);
  return run;
}

/*
 * _terret_shell_run_describe:
 *
 * For a list: the run's command, its start (wall clock, microseconds),
 * the bytes of output it carried so far and, into @input (nullable),
 * what a look at its terminal finds (unknown where none can look), read while
 * the run goes on, on the thread that runs it (as input, interrupts and
 * polls are).
 */
void
_terret_shell_run_describe (TerretShellRun  *run,
                            const char     **command,
                            gint64          *started,
                            guint64         *output_bytes,
                            TerretInputWait *input)
{
  TerretStreamCapture *capture = run->command_capture != NULL ? run->command_capture : run->capture;

  *command = terret_request_get_command (run->request);
  *started = run->started;
  *output_bytes = run->stretch_start;
  if (run->kind == EXCHANGE_COMMAND && capture != NULL)
    *output_bytes += _terret_stream_capture_get_seen (capture);
  if (input != NULL && run->input != NULL && run->kind == EXCHANGE_COMMAND)
    {
      /* A list is an event too: the terminal is looked at. */
      if (run->out_pos >= run->out->len)
        _terret_shell_run_input_look (run);
      _terret_input_wait_copy (input, _terret_input_watch_get (run->input));
    }
}

/* Puts the session's sources, and the run's, on @context. */
static void
run_adopt_context (TerretShellRun *run,
                   GMainContext   *context)
{
  run->host.funcs->adopt (run->host.session, context);
  if (run->context != context)
    {
      g_clear_pointer (&run->context, g_main_context_unref);
      run->context = g_main_context_ref (context);
    }
}

static gboolean run_read_once (TerretShellRun *run,
                               gboolean       *would_block);

static gboolean
run_read_pending (gpointer data)
{
  TerretShellRun *run = data;
  gboolean would_block = TRUE;

  if (!terret_shell_channel_is_open (run->host.channel))
    return TRUE;
  if (!run_read_once (run, &would_block))
    return FALSE;
  return !would_block || run->detach.poll_task != NULL;
}

static void
run_adopt (gpointer      data,
           GMainContext *context)
{
  TerretShellRun *run = data;

  run_adopt_context (run, context);
  if (run->write_source != NULL)
    {
      _terret_clear_source (&run->write_source);
      _terret_shell_run_flush (run);
    }
}

static const TerretDetachFuncs detach_funcs = {
  _terret_shell_run_take_stretch,
  _terret_shell_run_has_news,
  run_read_pending,
  run_adopt,
};

/* --- Reading and writing ------------------------------------------------- */

/* Reads one chunk. Returns FALSE when the run has been completed. */
static gboolean
run_read_once (TerretShellRun *run,
               gboolean       *would_block)
{
  g_autoptr(GError) error = NULL;
  gboolean found;
  gssize n;

  *would_block = FALSE;
  n = terret_shell_channel_read (run->host.channel, run->host.read_buffer,
                                 TERRET_SHELL_READ_CHUNK, &error);

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

  if (run->plan->idle_timeout > 0 && run->kind == EXCHANGE_COMMAND)
    run->last_output = g_get_monotonic_time ();
  _terret_shell_run_input_output (run, run->host.read_buffer, n);
  found = _terret_shell_run_feed (run, run->host.read_buffer, n);
  if (run->take_back)
    {
      run->take_back = FALSE;
      _terret_shell_run_send_interrupt_now (run);
    }
  if (found)
    {
      run_on_marker (run);
      return FALSE;
    }

  _terret_detach_news (&run->detach);
  return TRUE;
}

/* The session's read source, while this run is the session's. */
void
_terret_shell_run_on_readable (TerretShellRun *run)
{
  gboolean would_block;

  run_read_once (run, &would_block);
}

/* The session's exit source: read what the shell wrote before it went,
 * until the terminal reports its end; a background job may hold it open,
 * hence the grace. */
void
_terret_shell_run_on_exited (TerretShellRun *run)
{
  run->shell_ended = TRUE;
  if (!_terret_timers_is_armed (run->host.timers, TERRET_SHELL_TIMER_EXIT_GRACE))
    _terret_timers_arm_in (run->host.timers, TERRET_SHELL_TIMER_EXIT_GRACE, EXIT_GRACE_SECONDS);
}

/* --- Cancellation --------------------------------------------------------- */

static gboolean
run_on_cancelled (GCancellable *cancellable,
                  gpointer      user_data)
{
  TerretShellRun *run = user_data;
  GError *error = NULL;

  g_clear_pointer (&run->cancel_source, g_source_unref);
  /* Stopped gracefully, the run answers when bash is back at its prompt
   * (or the sweep ended it), with what the command printed. */
  if (_terret_shell_run_stop (run, SHELL_STOP_CANCELLED))
    return G_SOURCE_REMOVE;

  if (run->kind == EXCHANGE_COMMAND)
    _terret_shell_run_send_interrupt_now (run);
  _terret_shell_run_kill_shell (run);
  run->host.funcs->owe_notice (run->host.session,
                               "The previous command was cancelled and its shell session killed; "
                               "a fresh one was started, so the cwd and variables from earlier "
                               "runs are gone.");

  g_cancellable_set_error_if_cancelled (cancellable, &error);
  _terret_shell_run_return (run, NULL, error);
  return G_SOURCE_REMOVE;
}

/* --- Exchanges ------------------------------------------------------------ */

/* Starts a new shell for the run: the executor's launcher, the channel's
 * spawn. Returns FALSE when the run has been completed with the error. */
static gboolean
run_start_shell (TerretShellRun *run)
{
  g_autoptr(TerretLauncher) launcher = NULL;
  g_autoptr(GError) error = NULL;
  const char *argv[G_N_ELEMENTS (shell_flags) + 1];

  launcher = run->host.funcs->start_shell (run->host.session, run->plan->settings,
                                           &run->handshake_timeout, &error);
  argv[0] = run->plan->settings->shell;
  for (guint i = 0; shell_flags[i] != NULL; i++)
    argv[i + 1] = shell_flags[i];
  argv[G_N_ELEMENTS (argv) - 1] = NULL;

  if (launcher == NULL ||
      !terret_shell_channel_spawn (run->host.channel, launcher, argv, &error))
    {
      if (error->domain != TERRET_EXEC_ERROR || error->code != TERRET_EXEC_ERROR_INVALID_CONFIG)
        {
          g_autoptr(GError) failed = g_steal_pointer (&error);
          /* A far side without its launcher stays that, for the backend
           * that asked (terret_far_side_set_probe()). */
          gboolean no_launcher = g_error_matches (failed, TERRET_EXEC_ERROR,
                                                  TERRET_EXEC_ERROR_NO_LAUNCHER);

          g_set_error (&error, TERRET_EXEC_ERROR,
                       no_launcher ? TERRET_EXEC_ERROR_NO_LAUNCHER : TERRET_EXEC_ERROR_UNAVAILABLE,
                       "Could not start the shell: %s", failed->message);
        }
      _terret_shell_run_return (run, NULL, g_steal_pointer (&error));
      return FALSE;
    }
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
_terret_shell_run_start (TerretShellRun *run,
                         ExchangeKind    kind)
{
  TerretShellChannel *channel = run->host.channel;
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
    run->limits_before = _terret_shell_run_limits_hit (run);

  if (kind == EXCHANGE_HANDSHAKE || kind == EXCHANGE_SETUP)
    {
      if (kind == EXCHANGE_SETUP)
        line = _terret_shell_state_handshake (run->host.state);
      else if (!run_start_shell (run))
        return;
      else
        {
          /* Asked again: whether a far launcher sets the modes is known
           * only once the shell's process is there. */
          remote = !terret_shell_channel_can_prepare_run (channel);
          line = _terret_shell_state_new_shell (run->host.state, remote);
        }
      run->expected = 0;
      timeout = run->handshake_timeout;
      run->capture = _terret_stream_capture_new (TERRET_CAPTURE_MODE_HEAD, HANDSHAKE_OUTPUT_LIMIT);
    }
  else if (kind == EXCHANGE_RECOVERY)
    {
      /* After a stale marker in this run, the command's exchange; else
       * the last one sent. */
      run->careful = TRUE;
      line = _terret_shell_state_recovery (run->host.state, remote, &run->expected);
      timeout = run->handshake_timeout;
      run->capture = _terret_stream_capture_new (TERRET_CAPTURE_MODE_HEAD, HANDSHAKE_OUTPUT_LIMIT);
    }
  else
    {
      gboolean careful;

      line = _terret_shell_state_request (run->host.state, terret_request_get_command (run->request),
                                          terret_request_get_cwd (run->request),
                                          terret_request_get_env (run->request),
                                          remote, run->left_open, &careful, &run->expected);
      run->careful = careful;
      timeout = run->plan->timeout;
      run->capture = _terret_run_plan_new_capture (run->plan);
    }

  run_adopt_context (run, context);

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

  _terret_timers_disarm (run->host.timers, TERRET_SHELL_TIMER_DEADLINE);
  if (timeout > 0)
    _terret_timers_arm_in (run->host.timers, TERRET_SHELL_TIMER_DEADLINE, timeout);

  /* From the command's first exchange, across a resend or a recovery. */
  if (kind == EXCHANGE_COMMAND && !run->clocks_armed)
    {
      run->clocks_armed = TRUE;
      run->began = g_get_monotonic_time ();
      if (run->plan->deadline > 0)
        _terret_timers_arm_in (run->host.timers, TERRET_SHELL_TIMER_HARD, run->plan->deadline);
      if (run->plan->idle_timeout > 0)
        {
          run->last_output = g_get_monotonic_time ();
          _terret_timers_arm_in (run->host.timers, TERRET_SHELL_TIMER_IDLE, run->plan->idle_timeout);
        }
    }
  if (kind == EXCHANGE_COMMAND)
    _terret_shell_run_input_begin (run);

  if (kind == EXCHANGE_COMMAND && run->interrupt_requested)
    {
      run->interrupt_requested = FALSE;
      _terret_shell_run_interrupt (run);
      return;
    }

  _terret_shell_run_flush (run);
}

/*
 * _terret_shell_run_begin:
 *
 * Starts the run with the exchange the session's shell needs first: a
 * handshake when there is no shell, a recovery when the last one left
 * its harness unrun, else the command.
 */
void
_terret_shell_run_begin (TerretShellRun *run)
{
  if (!terret_shell_channel_is_open (run->host.channel))
    _terret_shell_run_start (run, EXCHANGE_HANDSHAKE);
  else if (run->host.state->needs_recovery)
    _terret_shell_run_start (run, EXCHANGE_RECOVERY);
  else
    _terret_shell_run_start (run, EXCHANGE_COMMAND);
}

/* --- Endings ------------------------------------------------------------- */

/* The handshake failed: the half-started shell is ended here, since
 * nothing else holds it yet. */
void
_terret_shell_run_fail_handshake (TerretShellRun *run,
                                  const char     *why)
{
  g_autoptr(GBytes) said = NULL;
  g_autoptr(GString) message = g_string_new (NULL);
  g_autofree char *stuck = NULL;
  gsize len = 0;
  const char *data;

  /* Before it is ended: what it was still running says why. */
  stuck = _terret_shell_run_describe_stuck (run->host.channel);
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
  if (stuck != NULL)
    g_string_append_printf (message, "; it was still running, before its first prompt (its "
                                     "start-up, such as ~/.bashrc or /etc/profile, or the shell "
                                     "setting's own): %s", stuck);

  _terret_shell_run_return (run, NULL, g_error_new_literal (TERRET_EXEC_ERROR,
                                                            TERRET_EXEC_ERROR_UNAVAILABLE,
                                                            message->str));
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

      /* Closed while it started: not a shell that failed. */
      if (run->host.funcs->close_requested (run->host.session))
        {
          _terret_shell_run_kill_shell (run);
          _terret_shell_run_return (run, NULL,
                                    g_error_new (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                                 "Session “%s” was closed while its shell "
                                                 "started; nothing ran", run->host.key));
          return;
        }
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
      how = _terret_shell_run_describe_end (run, result);
      _terret_shell_run_strip_exit_echo (run, result);
      _terret_shell_run_note_limits (run, result, -1);
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

/* The statuses the harness saved, "0 1 0". */
static void
set_pipestatus (TerretResult *result,
                const char   *saved)
{
  g_autoptr(GArray) statuses = g_array_new (FALSE, FALSE, sizeof (int));
  g_auto(GStrv) words = NULL;

  if (saved == NULL || saved[0] == '\0')
    return;
  words = g_strsplit (saved, " ", -1);
  for (guint i = 0; words[i] != NULL; i++)
    {
      guint64 value;

      if (!g_ascii_string_to_unsigned (words[i], 10, 0, 255, &value, NULL))
        return;
      g_array_append_vals (statuses, &(int){ (int)value }, 1);
    }
  terret_result_set_pipestatus (result, (const int *)(gpointer)statuses->data, statuses->len);
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

  /* The request's own cwd could not be entered: nothing of it ran. */
  if (!run->recovering && strchr (run->marker.flags, TERRET_FLAG_NO_CWD) != NULL)
    {
      GError *error = g_error_new (TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                                   "The working directory “%s” does not exist or cannot be "
                                   "entered in session “%s”; nothing ran",
                                   terret_request_get_cwd (run->request), run->host.key);

      _terret_shell_state_take_marker (run->host.state, &run->marker, run->careful);
      _terret_shell_run_return (run, NULL, error);
      return;
    }

  flags_notice = _terret_protocol_describe_flags (run->marker.flags);
  _terret_shell_run_add_notice (run, flags_notice);
  _terret_shell_state_take_marker (run->host.state, &run->marker, run->careful);
  unusable = _terret_protocol_unusable (run->marker.flags);

  result = _terret_shell_run_finish_capture (run);
  terret_result_set_exit_status (result, run->status);
  terret_result_set_cwd (result, run->marker.cwd);
  set_pipestatus (result, run->marker.pipestatus);

  if (!_terret_shell_run_note_limits (run, result, W_EXITCODE (run->status, 0)))
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
  _terret_shell_run_note_limits (run, result, -1);
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

/* The exchange's marker was read (or one numbered before it: the line's
 * harness did not run). A handshake or a recovery goes on to the
 * command; a command ends, or first needs a recovery to learn its status.
 */
static void
run_on_marker (TerretShellRun *run)
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
