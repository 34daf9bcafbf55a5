/* terret-oneshot-executor.c: one `bash -c` process per command
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <math.h>
#include <string.h>
#include <signal.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib-unix.h>
#include <glib/gstdio.h>

#include <terret-exec.h>

#include "terret-util-private.h"

/*
 * TerretOneshotExecutor:
 *
 * Runs every command as its own `bash -c COMMAND` process: nothing
 * persists from one run to the next, so runs never wait for each other
 * and any number of them may be in flight on one main context.
 *
 * Each run gets its own session and process group, so a timeout, a
 * cancellation or a closed session kills everything the command started,
 * not only bash. stdout and stderr are read apart through non-blocking
 * pipes watched by fd sources, kept as a bounded tail per stream and
 * streamed line by line to the request's progress callback.
 *
 * A request whose timeout detaches leaves its command running: the run
 * returns the output so far, polls of its session key collect the rest
 * in stretches and finally its status, and an interrupt sends SIGINT to
 * its group, then SIGKILL after `interrupt-grace`. stdin stays
 * /dev/null, so there is no input. Such a command needs its session key
 * to itself, which keeps "the command of a session" unambiguous.
 */

#define TERRET_TYPE_ONESHOT_EXECUTOR (terret_oneshot_executor_get_type ())
G_DECLARE_FINAL_TYPE (TerretOneshotExecutor, terret_oneshot_executor, TERRET, ONESHOT_EXECUTOR, GObject)

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
 * what already sits in them. The group is dead by then, but a process that
 * left the group (`setsid`) may still write: the bound keeps that from
 * holding the run. */
#define FINAL_DRAIN_READS 16

#define DEFAULT_TIMEOUT 120.0
#define DEFAULT_DRAIN_GRACE 0.25
#define DEFAULT_SHELL "bash"

/* How many chunks a poll reads from each pipe before it decides whether
 * to wait: what a pipe holds, bounded so a command printing without
 * pause cannot keep the poll here. */
#define POLL_READS 16

struct _TerretOneshotExecutor
{
  GObject parent_instance;

  double timeout;
  guint64 max_output;
  char *cwd;                    /* (owned) (nullable) */
  GStrv env;                    /* (owned) */
  double drain_grace;
  char *shell;                  /* (owned) */
  double interrupt_grace;

  /* The ends of detached commands that no poll collected yet, by session
   * key; the next poll of the key returns it, the next run drops it. */
  GHashTable *parked;           /* (owned) (element-type utf8 TerretResult) */

  /* Runs in flight, each with its session key, so close_session() and
   * close_all() find the process groups to kill. A plain array: one-shot
   * runs are few at a time and a close scans them once. */
  GPtrArray *runs;              /* (owned) (element-type Run) unowned runs */
};

static void executor_iface_init (TerretExecutorInterface *iface);
static void initable_iface_init (GInitableIface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretOneshotExecutor, terret_oneshot_executor, G_TYPE_OBJECT,
                                G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (TERRET_TYPE_EXECUTOR, executor_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_INITABLE, initable_iface_init))

enum {
  PROP_0,
  PROP_TIMEOUT,
  PROP_MAX_OUTPUT,
  PROP_CWD,
  PROP_ENV,
  PROP_DRAIN_GRACE,
  PROP_SHELL,
  PROP_INTERRUPT_GRACE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

/* Why a run stopped before its command ended on its own. The first reason
 * wins: a run that timed out and is then closed still timed out. */
typedef enum {
  RUN_END_NONE,
  RUN_END_TIMEOUT,
  RUN_END_CANCELLED,
  RUN_END_CLOSED,
  RUN_END_INTERRUPTED,          /* still running when the interrupt grace ran out */
} RunEnd;

typedef struct _Run Run;

typedef struct
{
  Run *run;                     /* (unowned) the run this stream belongs to */
  TerretStream stream;
  int fd;                       /* -1 once closed */
  GSource *source;              /* (owned) (nullable) */
  TerretTailCapture *capture;   /* (owned) */
  GByteArray *line;             /* (owned) (nullable) partial line, when framing */
  gsize carry;                  /* bytes of the capture carried over from the last stretch */
} RunStream;

struct _Run
{
  TerretOneshotExecutor *executor;  /* (unowned) the task holds a reference */
  GTask *task;                      /* (owned) */
  TerretRequest *request;           /* (owned) */
  char *session;                    /* (owned) */
  GMainContext *context;            /* (owned) */

  GPid pid;                         /* bash, leader of its own process group */
  int exit_fd;                      /* (owned) a pidfd; -1 without: a child watch then */
  double timeout;
  double drain_grace;
  double interrupt_grace;
  gint64 escalate_at;               /* monotonic time of the interrupt's kill */
  gsize window;
  TerretTimeoutAction timeout_action;
  int wait_status;
  RunEnd end;
  guint exited : 1;                 /* bash has been reaped */
  guint exited_on_its_own : 1;      /* ... before anything stopped the run */
  guint status_lost : 1;            /* ... by someone else, status unknown */
  guint detached : 1;               /* the run returned; polls take the rest */

  GSource *child_source;            /* (owned) (nullable) pidfd source or child watch */
  GSource *timeout_source;          /* (owned) (nullable) */
  GSource *cancel_source;           /* (owned) (nullable) */
  GSource *grace_source;            /* (owned) (nullable) */
  GSource *escalate_source;         /* (owned) (nullable) */

  GTask *poll_task;                 /* (owned) (nullable) */
  GSource *poll_timeout_source;     /* (owned) (nullable) */
  GSource *poll_cancel_source;      /* (owned) (nullable) */

  /* Said at the start of the next result, e.g. a dropped parked end. */
  GString *notices;                 /* (owned) */

  RunStream streams[2];
  guint8 *buffer;                   /* (owned) READ_CHUNK bytes */
};

static void run_check_done (Run *run);
static void run_complete (Run *run);
static void run_detach (Run *run);

/* Seconds as a timeout source's milliseconds, rounded up so a deadline
 * never comes early, and clamped to what a guint holds (~49 days). */
static guint
seconds_to_ms (double seconds)
{
  double ms = ceil (seconds * 1000.0);

  if (ms <= 0)
    return 0;
  if (ms >= G_MAXUINT)
    return G_MAXUINT;
  return (guint)ms;
}

/* Seconds in the C locale: a notice must not read "0,5s" in a German one. */
static char *
format_seconds (double seconds)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  return g_strdup (g_ascii_formatd (buf, sizeof buf, "%g", seconds));
}

/* --- Streams ----------------------------------------------------------- */

static const char *
stream_name (TerretStream stream)
{
  return stream == TERRET_STREAM_STDOUT ? "stdout" : "stderr";
}

/* Hands complete lines, with their newline, to the progress callback as
 * they land; a line without its newline yet waits in rs->line. A line
 * longer than LINE_LIMIT goes out in pieces cut at a UTF-8 character
 * boundary, so the callback never sees half a character from a cut it did
 * not make and the pending bytes stay bounded. */
static void
run_stream_frame (RunStream    *rs,
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
          terret_request_report_progress (request, rs->stream,
                                          rs->line->data, rs->line->len);
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
      gsize cut = terret_utf8_whole_prefix (rs->line->data, LINE_LIMIT);

      terret_request_report_progress (request, rs->stream, rs->line->data, cut);
      g_byte_array_remove_range (rs->line, 0, cut);
    }
}

static void
run_stream_take (RunStream    *rs,
                 const guint8 *data,
                 gsize         len)
{
  terret_tail_capture_append (rs->capture, data, len);

  /* Output after a cancellation is captured for nobody and reported to
   * nobody: the caller already asked to stop hearing about this run. */
  if (rs->line != NULL && rs->run->end != RUN_END_CANCELLED)
    run_stream_frame (rs, data, len);
}

/* Ends reading a stream: the last line is delivered as it is, without a
 * newline the command never wrote. */
static void
run_stream_close (RunStream *rs)
{
  _terret_clear_source (&rs->source);

  if (rs->fd >= 0)
    {
      g_close (rs->fd, NULL);
      rs->fd = -1;
    }

  if (rs->line != NULL && rs->line->len > 0 && rs->run->end != RUN_END_CANCELLED)
    terret_request_report_progress (rs->run->request, rs->stream,
                                    rs->line->data, rs->line->len);
  if (rs->line != NULL)
    g_byte_array_set_size (rs->line, 0);
}

/* Reads what a pipe holds right now, at most FINAL_DRAIN_READS chunks,
 * then closes it. Used when the run ends with a pipe still open. */
static void
run_stream_drain (RunStream *rs)
{
  for (guint i = 0; rs->fd >= 0 && i < FINAL_DRAIN_READS; i++)
    {
      gssize n = read (rs->fd, rs->run->buffer, READ_CHUNK);

      if (n > 0)
        run_stream_take (rs, rs->run->buffer, n);
      else if (n < 0 && errno == EINTR)
        continue;
      else
        break;
    }

  run_stream_close (rs);
}

/* Reads one chunk into the stream. Returns FALSE once the stream is
 * closed (end of file, or an error that leaves nothing to read);
 * @would_block says the pipe is empty for now. Never completes the run. */
static gboolean
run_stream_read_once (RunStream *rs,
                      gboolean  *would_block)
{
  gssize n;

  *would_block = FALSE;
  n = read (rs->fd, rs->run->buffer, READ_CHUNK);
  if (n > 0)
    {
      run_stream_take (rs, rs->run->buffer, n);
      return TRUE;
    }
  if (n < 0 && errno == EINTR)
    return TRUE;
  if (n < 0 && errno == EAGAIN)
    {
      *would_block = TRUE;
      return TRUE;
    }

  run_stream_close (rs);
  return FALSE;
}

static gboolean run_has_news (Run *run);
static void run_poll_return (Run *run);

static gboolean
run_stream_ready_cb (int          fd,
                     GIOCondition condition,
                     gpointer     user_data)
{
  RunStream *rs = user_data;
  Run *run = rs->run;
  gboolean would_block;

  if (!run_stream_read_once (rs, &would_block))
    {
      run_check_done (run);   /* may complete and free the run */
      return G_SOURCE_REMOVE;
    }

  /* Last: answering the poll may run its callback, which may close the
   * session and free the run. */
  if (run->poll_task != NULL && run_has_news (run))
    run_poll_return (run);
  return G_SOURCE_CONTINUE;
}

/* --- Run lifetime -------------------------------------------------------- */

static void
run_free (Run *run)
{
  _terret_clear_source (&run->child_source);
  _terret_clear_source (&run->timeout_source);
  _terret_clear_source (&run->cancel_source);
  _terret_clear_source (&run->grace_source);
  _terret_clear_source (&run->escalate_source);
  _terret_clear_source (&run->poll_timeout_source);
  _terret_clear_source (&run->poll_cancel_source);

  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    {
      RunStream *rs = &run->streams[i];

      _terret_clear_source (&rs->source);
      if (rs->fd >= 0)
        g_close (rs->fd, NULL);
      g_clear_pointer (&rs->capture, terret_tail_capture_free);
      if (rs->line != NULL)
        g_byte_array_unref (rs->line);
    }

  if (run->exit_fd >= 0)
    g_close (run->exit_fd, NULL);

  g_clear_object (&run->task);
  g_clear_object (&run->poll_task);
  g_clear_object (&run->request);
  g_clear_pointer (&run->session, g_free);
  g_clear_pointer (&run->context, g_main_context_unref);
  g_clear_pointer (&run->buffer, g_free);
  if (run->notices != NULL)
    g_string_free (run->notices, TRUE);
  g_free (run);
}

/* Kills the run's whole process group: bash and everything it started
 * that did not leave the group. Returns whether anyone was there.
 *
 * Once bash has been reaped its pid could in principle be reused; the
 * group id stays reserved while any member lives, so a reused id would
 * need every member gone and the pid space wrapped within the drain
 * grace. */
static gboolean
run_kill_group (Run *run)
{
  if (run->pid <= 1)
    return FALSE;

  return kill (-run->pid, SIGKILL) == 0;
}

static gboolean
run_grace_cb (gpointer user_data)
{
  Run *run = user_data;

  run_complete (run);
  return G_SOURCE_REMOVE;
}

/* Completes the run from its own main-loop dispatch, never from inside
 * the caller's stack (close_all() iterating the runs, a progress callback
 * calling close_session()). */
static void
run_schedule_complete (Run   *run,
                       guint  delay_ms)
{
  _terret_clear_source (&run->grace_source);
  run->grace_source = g_timeout_source_new (delay_ms);
  g_source_set_static_name (run->grace_source, "[terret-oneshot] drain grace");
  g_source_set_callback (run->grace_source, run_grace_cb, run, NULL);
  g_source_attach (run->grace_source, run->context);
}

/* Stops a run for @end: kill the group now; the run completes when bash
 * has been reaped (or at once, from the loop, if it already has). */
static void
run_stop (Run    *run,
          RunEnd  end)
{
  if (run->end == RUN_END_NONE)
    run->end = end;

  _terret_clear_source (&run->timeout_source);
  _terret_clear_source (&run->escalate_source);
  run_kill_group (run);

  if (run->exited)
    run_schedule_complete (run, 0);
}

/* Called when something that blocks completion goes away. */
static void
run_check_done (Run *run)
{
  if (!run->exited)
    return;

  if (run->streams[0].fd < 0 && run->streams[1].fd < 0)
    {
      run_complete (run);
      return;
    }

  /* bash is gone but something still holds its pipes: a background
   * process (`sleep 30 & echo done`). Its output is not worth holding the
   * run for; read for a short grace, then kill the group and return. */
  if (run->grace_source == NULL)
    run_schedule_complete (run, seconds_to_ms (run->drain_grace));
}

/* Records that bash has been reaped, without completing the run. */
static void
run_set_exited (Run      *run,
                int       wait_status,
                gboolean  status_lost)
{
  run->exited = TRUE;
  run->wait_status = wait_status;
  run->status_lost = status_lost;
  run->exited_on_its_own = (run->end == RUN_END_NONE);

  /* The deadline and the interrupt's grace are for the command; what is
   * left is a bounded drain. */
  _terret_clear_source (&run->timeout_source);
  _terret_clear_source (&run->escalate_source);
}

static void
run_after_exit (Run *run)
{
  if (run->end != RUN_END_NONE)
    run_complete (run);
  else
    run_check_done (run);
}

static void
run_child_exited_cb (GPid     pid,
                     int      wait_status,
                     gpointer user_data)
{
  Run *run = user_data;

  g_clear_pointer (&run->child_source, g_source_unref);
  run_set_exited (run, wait_status, FALSE);
  run_after_exit (run);
}

/* Reaps bash if it has ended. Returns whether bash is gone. With a child
 * watch (no pidfd) this may race GLib's own reaping, which then keeps
 * the status in the old source: the command's status is lost. */
static gboolean
run_reap (Run *run)
{
  int wait_status = 0;
  pid_t ret;

  if (run->exited)
    return TRUE;

  do
    ret = waitpid (run->pid, &wait_status, WNOHANG);
  while (ret < 0 && errno == EINTR);

  if (ret == 0)
    return FALSE;

  _terret_clear_source (&run->child_source);
  /* ECHILD: someone else reaped it; it is gone, its status unknown. */
  run_set_exited (run, wait_status, ret < 0);
  return TRUE;
}

static gboolean
run_pidfd_ready_cb (int          fd,
                    GIOCondition condition,
                    gpointer     user_data)
{
  Run *run = user_data;

  if (!run_reap (run))
    return G_SOURCE_CONTINUE;

  run_after_exit (run);   /* may complete and free the run */
  return G_SOURCE_REMOVE;
}

/* Watches for bash's end on the run's context. A pidfd where the kernel
 * has them: the run reaps bash itself, so a detached command can move to
 * another context (as each sync poll moves it) without losing its
 * status. Otherwise a child watch, which keeps the status it reaped
 * inside the source (see run_adopt_context()). */
static void
run_watch_child (Run *run)
{
  if (run->exit_fd >= 0)
    {
      run->child_source = g_unix_fd_source_new (run->exit_fd, G_IO_IN);
      g_source_set_callback (run->child_source, G_SOURCE_FUNC (run_pidfd_ready_cb), run, NULL);
    }
  else
    {
      run->child_source = g_child_watch_source_new (run->pid);
      g_source_set_callback (run->child_source, G_SOURCE_FUNC (run_child_exited_cb), run, NULL);
    }
  g_source_set_static_name (run->child_source, "[terret-oneshot] child watch");
  g_source_attach (run->child_source, run->context);
}

static gboolean
run_timeout_cb (gpointer user_data)
{
  Run *run = user_data;

  g_clear_pointer (&run->timeout_source, g_source_unref);
  if (run->timeout_action == TERRET_TIMEOUT_ACTION_DETACH)
    run_detach (run);   /* last: the run's callback may free the run */
  else
    run_stop (run, RUN_END_TIMEOUT);
  return G_SOURCE_REMOVE;
}

static gboolean
run_cancelled_cb (GCancellable *cancellable,
                  gpointer      user_data)
{
  Run *run = user_data;

  g_clear_pointer (&run->cancel_source, g_source_unref);
  run_stop (run, RUN_END_CANCELLED);
  return G_SOURCE_REMOVE;
}

static gboolean
run_escalate_cb (gpointer user_data)
{
  Run *run = user_data;

  g_clear_pointer (&run->escalate_source, g_source_unref);
  run_stop (run, RUN_END_INTERRUPTED);
  return G_SOURCE_REMOVE;
}

static void
run_attach_escalation (Run *run)
{
  gint64 left = MAX (run->escalate_at - g_get_monotonic_time (), 0);

  _terret_clear_source (&run->escalate_source);
  run->escalate_source = g_timeout_source_new ((guint)MIN ((left + 999) / 1000, (gint64)G_MAXUINT));
  g_source_set_static_name (run->escalate_source, "[terret-oneshot] interrupt grace");
  g_source_set_callback (run->escalate_source, run_escalate_cb, run, NULL);
  g_source_attach (run->escalate_source, run->context);
}

static void
add_dropped_notice (TerretResult *result,
                    TerretStream  stream,
                    gsize         kept,
                    guint64       dropped)
{
  g_autofree char *notice = NULL;

  notice = g_strdup_printf ("%s: kept the last %" G_GSIZE_FORMAT " bytes and dropped %"
                            G_GUINT64_FORMAT " earlier ones.",
                            stream_name (stream), kept, dropped);
  terret_result_add_notice (result, notice);
}

static TerretTailCapture *
run_new_capture (Run *run)
{
  /* The overshoot a quarter of the window, and at most the default:
   * each eviction then moves at most the window after at least a
   * quarter of it arrived (amortized-linear), and a small max-output
   * keeps a small peak (window + overshoot) instead of a fixed 256 KiB
   * of slack. */
  return terret_tail_capture_new (run->window,
                                  CLAMP (run->window / 4, 4096,
                                         TERRET_TAIL_CAPTURE_DEFAULT_OVERSHOOT));
}

/* The output since the last result (the detaching run's, or the last
 * poll's) as a result of its own; unless @final, the next stretch starts
 * empty under the same cap. A stretch never ends inside a character: an
 * incomplete one at its end (at most three bytes) leads the next, so the
 * stretches joined are the stream exactly. */
static TerretResult *
run_take_stretch (Run      *run,
                  gboolean  final)
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
      gsize len = 0;
      const guint8 *data;
      gsize whole;

      bytes = terret_tail_capture_finish (rs->capture, &dropped);
      g_clear_pointer (&rs->capture, terret_tail_capture_free);
      data = g_bytes_get_data (bytes, &len);
      whole = final ? len : terret_utf8_whole_prefix (data, len);
      kept = whole == len ? g_bytes_ref (bytes) : g_bytes_new_from_bytes (bytes, 0, whole);

      if (rs->stream == TERRET_STREAM_STDOUT)
        terret_result_set_stdout (result, kept);
      else
        terret_result_set_stderr (result, kept);

      /* The tail is kept, so the omitted bytes sit before all of it. */
      terret_result_set_dropped (result, rs->stream, dropped, 0);
      if (dropped > 0)
        add_dropped_notice (result, rs->stream, whole, dropped);

      if (!final)
        {
          rs->capture = run_new_capture (run);
          rs->carry = len - whole;
          terret_tail_capture_append (rs->capture, data + whole, rs->carry);
        }
    }

  terret_result_set_running (result, !final);
  return result;
}

/* Whether a poll has anything to return: bytes beyond an incomplete
 * character carried over from the last stretch. */
static gboolean
run_has_news (Run *run)
{
  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    if (terret_tail_capture_get_seen (run->streams[i].capture) > run->streams[i].carry)
      return TRUE;

  return run->notices->len > 0;
}

/* Answers the poll in flight with the stretch so far. Callers touch
 * nothing of the run afterwards: the poll's callback may free it. */
static void
run_poll_return (Run *run)
{
  g_autoptr(GTask) task = g_steal_pointer (&run->poll_task);

  _terret_clear_source (&run->poll_timeout_source);
  _terret_clear_source (&run->poll_cancel_source);
  if (task != NULL)
    g_task_return_pointer (task, run_take_stretch (run, FALSE), g_object_unref);
}

/* The timeout detaches: the run returns the output so far and the
 * command goes on, read as before, its output kept (under the same cap)
 * for the next poll. The run's cancellable was for the run call, which
 * is over; so is the progress callback, whose owner has its result. */
static void
run_detach (Run *run)
{
  g_autoptr(GTask) task = g_steal_pointer (&run->task);
  g_autofree char *seconds = format_seconds (run->timeout);
  g_autofree char *notice = NULL;
  TerretResult *result;

  _terret_clear_source (&run->cancel_source);
  run->detached = TRUE;

  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    {
      RunStream *rs = &run->streams[i];

      if (rs->line == NULL)
        continue;
      /* The line so far, up to a character still arriving: the callback
       * hears of everything the detaching result holds. */
      if (rs->line->len > 0)
        terret_request_report_progress (run->request, rs->stream, rs->line->data,
                                        terret_utf8_whole_prefix (rs->line->data,
                                                                  rs->line->len));
      g_clear_pointer (&rs->line, g_byte_array_unref);
    }

  result = run_take_stretch (run, FALSE);
  notice = g_strdup_printf ("Still running after %ss; the command goes on. Poll session "
                            "“%s” for its further output and final status, or interrupt it; "
                            "new runs in that session are refused until it ends.",
                            seconds, run->session);
  terret_result_add_notice (result, notice);
  terret_result_set_timed_out (result, TRUE);
  g_task_return_pointer (task, result, g_object_unref);
}

/* Ends the run: bash has been reaped (or, for a grace that ran out, was
 * reaped earlier). Kills what is left of the group, collects what the
 * pipes still hold, and returns the result or the cancellation to the
 * run, or, for a detached command, to the poll in flight, or parks it for
 * the next poll. Frees @run: callers must not touch it afterwards. */
static void
run_complete (Run *run)
{
  TerretOneshotExecutor *self = run->executor;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GTask) task = NULL;
  gboolean anyone_left;

  g_assert (run->exited);

  _terret_clear_source (&run->timeout_source);
  _terret_clear_source (&run->cancel_source);
  _terret_clear_source (&run->grace_source);
  _terret_clear_source (&run->escalate_source);
  _terret_clear_source (&run->poll_timeout_source);
  _terret_clear_source (&run->poll_cancel_source);

  /* Whatever the command started goes with it: a run leaves nothing
   * behind. A process that must outlive the run has to leave the group
   * itself (`setsid`). */
  anyone_left = run_kill_group (run);

  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    if (run->streams[i].fd >= 0)
      run_stream_drain (&run->streams[i]);

  g_ptr_array_remove_fast (self->runs, run);
  task = g_steal_pointer (&run->task);
  if (task == NULL)
    task = g_steal_pointer (&run->poll_task);

  if (run->end == RUN_END_CANCELLED)
    {
      run_free (run);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                               "The command was cancelled and killed");
      return;
    }

  result = run_take_stretch (run, TRUE);

  /* A status is reported only when bash ended on its own: a status read
   * from a process we killed would be ours, not the command's. */
  if (run->exited_on_its_own && !run->status_lost)
    terret_result_set_wait_status (result, run->wait_status);

  switch (run->end)
    {
    case RUN_END_TIMEOUT:
      {
        g_autofree char *seconds = format_seconds (run->timeout);
        g_autofree char *notice = g_strdup_printf ("Timed out after %ss; the command was killed.",
                                                   seconds);

        terret_result_set_timed_out (result, TRUE);
        terret_result_add_notice (result, notice);
      }
      break;

    case RUN_END_CLOSED:
      if (run->exited_on_its_own)
        terret_result_add_notice (result, "The session was closed; processes the command left running were killed.");
      else
        terret_result_add_notice (result, "The session was closed; the command was killed.");
      break;

    case RUN_END_INTERRUPTED:
      {
        g_autofree char *seconds = format_seconds (run->interrupt_grace);
        g_autofree char *notice = NULL;

        if (run->exited_on_its_own)
          notice = g_strdup_printf ("Processes the command left running were still there %ss "
                                    "after the interrupt and were killed.", seconds);
        else
          notice = g_strdup_printf ("The command was still running %ss after it was interrupted, "
                                    "so it was killed with its process group.", seconds);
        terret_result_add_notice (result, notice);
      }
      break;

    case RUN_END_NONE:
      if (anyone_left)
        terret_result_add_notice (result, "Processes the command left running were killed when it ended.");
      break;

    case RUN_END_CANCELLED:
    default:
      g_assert_not_reached ();
    }

  /* A detached command's end that nobody waits for: the next poll of its
   * key collects it, unless the key was closed. */
  if (task == NULL && run->end != RUN_END_CLOSED)
    g_hash_table_replace (self->parked, g_strdup (run->session), g_steal_pointer (&result));

  run_free (run);
  if (task != NULL)
    g_task_return_pointer (task, g_steal_pointer (&result), g_object_unref);
}

/* Ends a detached command nobody waits for at once: kill its group, reap
 * bash (SIGKILL cannot be ignored, so the wait is short) and free the
 * run, with no result. For a close or a disposal, where no main loop may
 * ever run the command's context again. */
static void
run_end_now (Run *run)
{
  g_assert (run->task == NULL && run->poll_task == NULL);

  run_kill_group (run);
  _terret_clear_source (&run->child_source);
  if (!run->exited)
    {
      int wait_status;

      /* ECHILD (a child watch that reaped it already) means gone too. */
      while (waitpid (run->pid, &wait_status, 0) < 0 && errno == EINTR)
        ;
    }

  g_ptr_array_remove_fast (run->executor->runs, run);
  run_free (run);
}

/* A detached command is read on the main context of whoever last asked
 * for it (the run, then each poll): the one its caller iterates. */
static void
run_adopt_context (Run *run)
{
  g_autoptr(GMainContext) context = g_main_context_ref_thread_default ();

  if (context == run->context)
    return;

  g_main_context_unref (run->context);
  run->context = g_steal_pointer (&context);

  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    {
      RunStream *rs = &run->streams[i];

      if (rs->source == NULL)
        continue;
      _terret_clear_source (&rs->source);
      rs->source = g_unix_fd_source_new (rs->fd, G_IO_IN | G_IO_HUP | G_IO_ERR);
      g_source_set_static_name (rs->source, "[terret-oneshot] output");
      g_source_set_callback (rs->source, G_SOURCE_FUNC (run_stream_ready_cb), rs, NULL);
      g_source_attach (rs->source, run->context);
    }

  if (run->child_source != NULL)
    {
      _terret_clear_source (&run->child_source);
      /* A child watch may have reaped bash already on the old context;
       * run_reap() then finds it gone, its status lost. */
      if (run->exit_fd >= 0 || !run_reap (run))
        run_watch_child (run);
    }

  if (run->grace_source != NULL)
    run_schedule_complete (run, seconds_to_ms (run->drain_grace));
  if (run->escalate_source != NULL)
    run_attach_escalation (run);
}

/* --- Spawning -------------------------------------------------------------- */

typedef struct
{
  pid_t host;
} ChildSetup;

/* Runs in the child between fork and exec: only async-signal-safe calls.
 *
 * - setsid(): bash leads a new session and process group, so a timeout or
 *   a cancellation can kill everything the command started with one
 *   kill(-pgid), and the command is detached from the host's terminal.
 * - PR_SET_PDEATHSIG: bash is killed if the host dies, instead of running
 *   on unsupervised. It fires when the thread that spawned it exits, so a
 *   run must be started from a thread that outlives it (the thread that
 *   iterates the run's main context does). getppid() closes the race of a
 *   host that died before the prctl() took effect.
 * - The host may ignore SIGPIPE or block signals; ignored dispositions
 *   and the mask survive exec, and `yes | head` would then misbehave.
 */
static void
child_setup (gpointer user_data)
{
  const ChildSetup *setup = user_data;
  sigset_t none;

  /* A command that cannot get its own group cannot be contained: it does
   * not run at all. */
  if (setsid () < 0)
    _exit (127);

  if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid () != setup->host)
    _exit (127);

  signal (SIGPIPE, SIG_DFL);
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
}

/* Layers `KEY=VALUE` entries over @envp. @what names the overlay in the
 * error, which says which entry is malformed. */
static gboolean
overlay_env (GStrv               *envp,
             const char * const  *overlay,
             const char          *what,
             int                  code,
             GError             **error)
{
  for (guint i = 0; overlay != NULL && overlay[i] != NULL; i++)
    {
      const char *eq = strchr (overlay[i], '=');
      g_autofree char *key = NULL;

      if (eq == NULL || eq == overlay[i])
        {
          g_set_error (error, TERRET_EXEC_ERROR, code,
                       "The %s entry “%s” is not of the form VARIABLE=value",
                       what, overlay[i]);
          return FALSE;
        }

      key = g_strndup (overlay[i], eq - overlay[i]);
      *envp = g_environ_setenv (*envp, key, eq + 1, TRUE);
    }

  return TRUE;
}

/* Everything a run needs from the settings and the request, checked
 * before anything is spawned. The settings are read once here, so a
 * setting changed while the run goes on governs only the next run. */
static gboolean
run_spawn (Run            *run,
           GError        **error)
{
  TerretOneshotExecutor *self = run->executor;
  const char *command = terret_request_get_command (run->request);
  const char *cwd = terret_request_get_cwd (run->request);
  g_autofree char *shell_path = NULL;
  g_auto(GStrv) envp = NULL;
  g_autoptr(GError) local_error = NULL;
  const char *argv[4];
  ChildSetup setup;
  int out_fd = -1;
  int err_fd = -1;

  if (cwd == NULL)
    cwd = self->cwd;
  if (cwd != NULL && !g_file_test (cwd, G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "The working directory “%s” is not a directory", cwd);
      return FALSE;
    }

  envp = g_get_environ ();
  if (!overlay_env (&envp, (const char * const *)self->env, "env setting's",
                    TERRET_EXEC_ERROR_INVALID_CONFIG, error) ||
      !overlay_env (&envp, terret_request_get_env (run->request), "request's env",
                    TERRET_EXEC_ERROR_INVALID_REQUEST, error))
    return FALSE;

  /* Looked up in the host's PATH when the run starts, so a changed
   * `shell` setting governs the next run. */
  shell_path = g_find_program_in_path (self->shell);
  if (shell_path == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                   "Failed to run the shell: “%s” was not found in PATH", self->shell);
      return FALSE;
    }

  argv[0] = shell_path;
  argv[1] = "-c";
  argv[2] = command;
  argv[3] = NULL;

  setup.host = getpid ();

  /* g_spawn rather than GSubprocessLauncher: the launcher has no way to
   * leave the child unreaped (its own wait would race our child watch)
   * and hands back streams where fd sources are what is wanted. stdin is
   * /dev/null: a command reading stdin gets end of file at once instead
   * of hanging or reading the host's input. The host's other descriptors
   * are closed in the child. */
  if (!g_spawn_async_with_pipes_and_fds (cwd,
                                         argv,
                                         (const char * const *)envp,
                                         (G_SPAWN_DO_NOT_REAP_CHILD |
                                          G_SPAWN_STDIN_FROM_DEV_NULL |
                                          G_SPAWN_CLOEXEC_PIPES),
                                         child_setup, &setup,
                                         -1, -1, -1,
                                         NULL, NULL, 0,
                                         &run->pid,
                                         NULL, &out_fd, &err_fd,
                                         &local_error))
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                   "Failed to run %s: %s", shell_path, local_error->message);
      return FALSE;
    }

  run->streams[0].fd = out_fd;
  run->streams[1].fd = err_fd;

  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    {
      RunStream *rs = &run->streams[i];

      /* The sources read once per wakeup and must never block the loop. */
      if (!g_unix_set_fd_nonblocking (rs->fd, TRUE, NULL))
        g_warning ("Could not make the %s pipe non-blocking", stream_name (rs->stream));

      rs->source = g_unix_fd_source_new (rs->fd, G_IO_IN | G_IO_HUP | G_IO_ERR);
      g_source_set_static_name (rs->source, "[terret-oneshot] output");
      g_source_set_callback (rs->source, G_SOURCE_FUNC (run_stream_ready_cb), rs, NULL);
      g_source_attach (rs->source, run->context);
    }

  /* bash is not reaped yet, so its pid still names it. */
  run->exit_fd = pidfd_open (run->pid, 0);
  run_watch_child (run);

  run->timeout_source = g_timeout_source_new (seconds_to_ms (run->timeout));
  g_source_set_static_name (run->timeout_source, "[terret-oneshot] timeout");
  g_source_set_callback (run->timeout_source, run_timeout_cb, run, NULL);
  g_source_attach (run->timeout_source, run->context);

  return TRUE;
}

/* --- Session keys ------------------------------------------------------ */

/* Whether @run still holds its session key: a closed run is on its way
 * out and no longer reachable by key. */
static gboolean
run_in_session (Run        *run,
                const char *session)
{
  return run->end != RUN_END_CLOSED && g_strcmp0 (run->session, session) == 0;
}

/* Runs of one key are independent, except around a command that may
 * detach: it needs the key to itself, so that a poll or an interrupt of
 * the key can only mean that command. */
static gboolean
check_session_free (TerretOneshotExecutor  *self,
                    TerretRequest          *request,
                    GError                **error)
{
  const char *session = terret_request_get_session (request);
  gboolean detaching = terret_request_get_timeout_action (request) == TERRET_TIMEOUT_ACTION_DETACH;

  for (guint i = 0; i < self->runs->len; i++)
    {
      Run *run = g_ptr_array_index (self->runs, i);

      if (!run_in_session (run, session))
        continue;

      if (run->detached)
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY,
                       "Session “%s” has a command a timeout detached from; poll it or "
                       "interrupt it, and run again once it ended", session);
          return FALSE;
        }
      if (run->timeout_action == TERRET_TIMEOUT_ACTION_DETACH)
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY,
                       "Session “%s” is running a command whose timeout detaches; it has "
                       "the session to itself until it ends", session);
          return FALSE;
        }
      if (detaching)
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY,
                       "Session “%s” is running other commands; a command whose timeout "
                       "detaches needs the session to itself", session);
          return FALSE;
        }
    }

  return TRUE;
}

/* --- Interrupt and poll ------------------------------------------------ */

static gboolean
terret_oneshot_executor_interrupt (TerretExecutor  *executor,
                                   const char      *session,
                                   GError         **error)
{
  TerretOneshotExecutor *self = TERRET_ONESHOT_EXECUTOR (executor);
  gboolean found = FALSE;

  /* Every command of the key: among runs in flight together none is the
   * foreground one, and a close ends them all alike. */
  for (guint i = 0; i < self->runs->len; i++)
    {
      Run *run = g_ptr_array_index (self->runs, i);

      if (!run_in_session (run, session) || run->end != RUN_END_NONE)
        continue;

      found = TRUE;
      /* bash gone, the group draining: the drain grace bounds it. */
      if (run->exited)
        continue;

      /* SIGINT to the group, as ^C does to a terminal's foreground group.
       * A later interrupt keeps the grace that runs. */
      kill (-run->pid, SIGINT);
      if (run->escalate_source == NULL)
        {
          run->escalate_at = g_get_monotonic_time () + (gint64)(run->interrupt_grace * G_USEC_PER_SEC);
          run_attach_escalation (run);
        }
    }

  if (!found)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "Nothing is running in session “%s” to interrupt", session);
      return FALSE;
    }

  return TRUE;
}

static gboolean
run_poll_timeout_cb (gpointer user_data)
{
  run_poll_return (user_data);
  return G_SOURCE_REMOVE;
}

static gboolean
run_poll_cancelled_cb (GCancellable *cancellable,
                       gpointer      user_data)
{
  Run *run = user_data;
  g_autoptr(GTask) task = g_steal_pointer (&run->poll_task);
  GError *error = NULL;

  /* Only the poll ends: the command and its output are there for the
   * next one. */
  _terret_clear_source (&run->poll_timeout_source);
  _terret_clear_source (&run->poll_cancel_source);
  g_cancellable_set_error_if_cancelled (cancellable, &error);
  g_task_return_error (task, error);
  return G_SOURCE_REMOVE;
}

static void
terret_oneshot_executor_poll_async (TerretExecutor      *executor,
                                    const char          *session,
                                    double               wait,
                                    GCancellable        *cancellable,
                                    GAsyncReadyCallback  callback,
                                    gpointer             user_data)
{
  TerretOneshotExecutor *self = TERRET_ONESHOT_EXECUTOR (executor);
  g_autoptr(GTask) task = NULL;
  g_autofree char *parked_key = NULL;
  gpointer parked = NULL;
  Run *run = NULL;
  gboolean in_flight = FALSE;

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, terret_oneshot_executor_poll_async);

  if (g_task_return_error_if_cancelled (task))
    return;

  if (g_hash_table_steal_extended (self->parked, session, (gpointer *)&parked_key, &parked))
    {
      g_task_return_pointer (task, parked, g_object_unref);
      return;
    }

  for (guint i = 0; i < self->runs->len && run == NULL; i++)
    {
      Run *r = g_ptr_array_index (self->runs, i);

      if (!run_in_session (r, session))
        continue;
      if (r->detached)
        run = r;
      else if (r->timeout_action == TERRET_TIMEOUT_ACTION_DETACH)
        in_flight = TRUE;
    }

  if (run == NULL && in_flight)
    {
      g_task_return_new_error (task, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY,
                               "A run is still waiting for the command in session “%s”; its "
                               "result will carry the output", session);
      return;
    }
  if (run == NULL)
    {
      g_task_return_new_error (task, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                               "Nothing is running in session “%s” to poll; only a command a "
                               "timeout detached from can be polled", session);
      return;
    }
  if (run->poll_task != NULL)
    {
      g_task_return_new_error (task, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY,
                               "Another poll of session “%s” is waiting", session);
      return;
    }

  run_adopt_context (run);
  run->poll_task = g_steal_pointer (&task);

  /* What already sits in the pipes, and whether bash has ended, before
   * deciding to wait: a caller that polls without iterating a main
   * context in between still gets every byte, and the end. */
  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    {
      RunStream *rs = &run->streams[i];

      for (guint n = 0; n < POLL_READS && rs->fd >= 0; n++)
        {
          gboolean would_block;

          if (!run_stream_read_once (rs, &would_block) || would_block)
            break;
        }
    }
  run_reap (run);

  if (run->exited)
    {
      if (run->end != RUN_END_NONE ||
          (run->streams[0].fd < 0 && run->streams[1].fd < 0))
        {
          run_complete (run);   /* answers the poll */
          return;
        }
      if (run->grace_source == NULL)
        run_schedule_complete (run, seconds_to_ms (run->drain_grace));
    }

  if (wait <= 0 || run_has_news (run))
    {
      run_poll_return (run);
      return;
    }

  run->poll_timeout_source = g_timeout_source_new (seconds_to_ms (wait));
  g_source_set_static_name (run->poll_timeout_source, "[terret-oneshot] poll wait");
  g_source_set_callback (run->poll_timeout_source, run_poll_timeout_cb, run, NULL);
  g_source_attach (run->poll_timeout_source, run->context);

  if (cancellable != NULL)
    {
      run->poll_cancel_source = g_cancellable_source_new (cancellable);
      g_source_set_static_name (run->poll_cancel_source, "[terret-oneshot] poll cancel");
      g_source_set_callback (run->poll_cancel_source, G_SOURCE_FUNC (run_poll_cancelled_cb),
                             run, NULL);
      g_source_attach (run->poll_cancel_source, run->context);
    }
}

static TerretResult *
terret_oneshot_executor_poll_finish (TerretExecutor  *executor,
                                     GAsyncResult    *result,
                                     GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, executor), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* --- TerretExecutor ---------------------------------------------------- */

static TerretCapabilities
terret_oneshot_executor_get_capabilities (TerretExecutor *executor)
{
  return (TERRET_CAPABILITY_RUNS_COMMANDS |
          TERRET_CAPABILITY_SEPARATE_STDERR |
          TERRET_CAPABILITY_REQUEST_CWD |
          TERRET_CAPABILITY_REQUEST_ENV |
          TERRET_CAPABILITY_PROGRESS |
          TERRET_CAPABILITY_INTERRUPT |
          TERRET_CAPABILITY_POLL |
          TERRET_CAPABILITY_DETACH);
}

static void
terret_oneshot_executor_run_async (TerretExecutor      *executor,
                                   TerretRequest       *request,
                                   GCancellable        *cancellable,
                                   GAsyncReadyCallback  callback,
                                   gpointer             user_data)
{
  TerretOneshotExecutor *self = TERRET_ONESHOT_EXECUTOR (executor);
  g_autoptr(GTask) task = NULL;
  g_autoptr(GError) error = NULL;
  TerretResult *parked;
  double timeout;
  Run *run;

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, terret_oneshot_executor_run_async);
  /* A command that finished is reported as it finished, even if the
   * cancellable fires between its end and the caller's callback: only a
   * run this backend killed for the cancellation reports it. */
  g_task_set_check_cancellable (task, FALSE);

  if (g_task_return_error_if_cancelled (task))
    return;

  if (!check_session_free (self, request, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  timeout = terret_request_get_timeout (request);
  if (timeout <= 0)
    timeout = self->timeout;

  run = g_new0 (Run, 1);
  run->executor = self;
  run->task = g_object_ref (task);
  run->request = g_object_ref (request);
  run->session = g_strdup (terret_request_get_session (request));
  run->context = g_main_context_ref_thread_default ();
  run->timeout = timeout;
  run->drain_grace = self->drain_grace;
  run->interrupt_grace = self->interrupt_grace;
  run->timeout_action = terret_request_get_timeout_action (request);
  run->exit_fd = -1;
  run->notices = g_string_new (NULL);
  run->buffer = g_malloc (READ_CHUNK);
  /* Clamped so window + overshoot cannot overflow; memory runs out long
   * before either limit matters. */
  run->window = (gsize)MIN (self->max_output, (guint64)G_MAXSIZE / 4);

  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    {
      RunStream *rs = &run->streams[i];

      rs->run = run;
      rs->stream = i == 0 ? TERRET_STREAM_STDOUT : TERRET_STREAM_STDERR;
      rs->fd = -1;
      rs->capture = run_new_capture (run);
      /* Framing lines nobody reads is wasted work. */
      if (terret_request_has_progress_func (request))
        rs->line = g_byte_array_new ();
    }

  if (!run_spawn (run, &error))
    {
      run_free (run);
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  /* A cancellable source, not a signal handler: g_cancellable_cancel()
   * may come from any thread, and the source brings the stop to the
   * run's own context at once, with no tick. */
  if (cancellable != NULL)
    {
      run->cancel_source = g_cancellable_source_new (cancellable);
      g_source_set_static_name (run->cancel_source, "[terret-oneshot] cancellable");
      g_source_set_callback (run->cancel_source, G_SOURCE_FUNC (run_cancelled_cb), run, NULL);
      g_source_attach (run->cancel_source, run->context);
    }

  /* The end of a command detached earlier in this key, never polled:
   * its caller chose to run something else instead of collecting it. */
  parked = g_hash_table_lookup (self->parked, run->session);
  if (parked != NULL)
    {
      g_autofree char *status = terret_result_get_exited (parked)
        ? g_strdup_printf ("with status %d", terret_result_get_exit_status (parked))
        : g_strdup ("without a status");

      g_string_append_printf (run->notices,
                              "The command left running earlier in this session ended %s "
                              "before its last output was polled; that output was discarded.",
                              status);
      g_hash_table_remove (self->parked, run->session);
    }

  g_ptr_array_add (self->runs, run);
}

static TerretResult *
terret_oneshot_executor_run_finish (TerretExecutor  *executor,
                                    GAsyncResult    *result,
                                    GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, executor), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
terret_oneshot_executor_close_session (TerretExecutor *executor,
                                       const char     *session)
{
  TerretOneshotExecutor *self = TERRET_ONESHOT_EXECUTOR (executor);

  /* Backwards: a detached command nobody waits for is freed here, and a
   * removal moves the last run, already seen, into its slot. A stopped
   * run in flight completes from its own dispatch. */
  for (guint i = self->runs->len; i > 0; i--)
    {
      Run *run = g_ptr_array_index (self->runs, i - 1);

      if (session != NULL && g_strcmp0 (run->session, session) != 0)
        continue;

      if (run->task == NULL && run->poll_task == NULL)
        run_end_now (run);
      else
        run_stop (run, RUN_END_CLOSED);
    }

  /* A closed key starts afresh: an end nobody polled goes too. */
  if (session == NULL)
    g_hash_table_remove_all (self->parked);
  else
    g_hash_table_remove (self->parked, session);
}

static void
terret_oneshot_executor_close_all (TerretExecutor *executor)
{
  terret_oneshot_executor_close_session (executor, NULL);
}

static GPid
terret_oneshot_executor_get_session_pid (TerretExecutor *executor,
                                         const char     *session)
{
  /* No process carries a session between runs. */
  return 0;
}

static void
executor_iface_init (TerretExecutorInterface *iface)
{
  iface->get_capabilities = terret_oneshot_executor_get_capabilities;
  iface->run_async = terret_oneshot_executor_run_async;
  iface->run_finish = terret_oneshot_executor_run_finish;
  iface->close_session = terret_oneshot_executor_close_session;
  iface->close_all = terret_oneshot_executor_close_all;
  iface->get_session_pid = terret_oneshot_executor_get_session_pid;
  iface->interrupt = terret_oneshot_executor_interrupt;
  iface->poll_async = terret_oneshot_executor_poll_async;
  iface->poll_finish = terret_oneshot_executor_poll_finish;
}

/* --- GInitable --------------------------------------------------------- */

static gboolean
terret_oneshot_executor_initable_init (GInitable     *initable,
                                       GCancellable  *cancellable,
                                       GError       **error)
{
  TerretOneshotExecutor *self = TERRET_ONESHOT_EXECUTOR (initable);
  g_autofree char *shell_path = g_find_program_in_path (self->shell);

  if (shell_path == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "The oneshot backend needs the shell “%s”, which was not found in PATH",
                   self->shell);
      return FALSE;
    }

  return TRUE;
}

static void
initable_iface_init (GInitableIface *iface)
{
  iface->init = terret_oneshot_executor_initable_init;
}

/* --- GObject ------------------------------------------------------------- */

static void
terret_oneshot_executor_dispose (GObject *object)
{
  TerretOneshotExecutor *self = TERRET_ONESHOT_EXECUTOR (object);

  /* Runs in flight and polls hold the executor through their tasks; a
   * detached command nobody polls does not, and is ended here. Others are
   * reached only through g_object_run_dispose(); they still end with
   * their process groups. */
  if (self->runs != NULL)
    terret_oneshot_executor_close_all (TERRET_EXECUTOR (self));

  G_OBJECT_CLASS (terret_oneshot_executor_parent_class)->dispose (object);
}

static void
terret_oneshot_executor_finalize (GObject *object)
{
  TerretOneshotExecutor *self = TERRET_ONESHOT_EXECUTOR (object);

  g_assert (self->runs->len == 0);

  g_clear_pointer (&self->runs, g_ptr_array_unref);
  g_clear_pointer (&self->parked, g_hash_table_unref);
  g_clear_pointer (&self->cwd, g_free);
  g_clear_pointer (&self->env, g_strfreev);
  g_clear_pointer (&self->shell, g_free);

  G_OBJECT_CLASS (terret_oneshot_executor_parent_class)->finalize (object);
}

static void
terret_oneshot_executor_get_property (GObject    *object,
                                      guint       prop_id,
                                      GValue     *value,
                                      GParamSpec *pspec)
{
  TerretOneshotExecutor *self = TERRET_ONESHOT_EXECUTOR (object);

  switch (prop_id)
    {
    case PROP_TIMEOUT:
      g_value_set_double (value, self->timeout);
      break;
    case PROP_MAX_OUTPUT:
      g_value_set_uint64 (value, self->max_output);
      break;
    case PROP_CWD:
      g_value_set_string (value, self->cwd);
      break;
    case PROP_ENV:
      g_value_set_boxed (value, self->env);
      break;
    case PROP_DRAIN_GRACE:
      g_value_set_double (value, self->drain_grace);
      break;
    case PROP_SHELL:
      g_value_set_string (value, self->shell);
      break;
    case PROP_INTERRUPT_GRACE:
      g_value_set_double (value, self->interrupt_grace);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
set_double (TerretOneshotExecutor *self,
            double                *field,
            double                 value,
            guint                  prop_id)
{
  if (*field != value)
    {
      *field = value;
      g_object_notify_by_pspec (G_OBJECT (self), properties[prop_id]);
    }
}

static void
terret_oneshot_executor_set_property (GObject      *object,
                                      guint         prop_id,
                                      const GValue *value,
                                      GParamSpec   *pspec)
{
  TerretOneshotExecutor *self = TERRET_ONESHOT_EXECUTOR (object);

  switch (prop_id)
    {
    case PROP_TIMEOUT:
      set_double (self, &self->timeout, g_value_get_double (value), prop_id);
      break;
    case PROP_MAX_OUTPUT:
      if (self->max_output != g_value_get_uint64 (value))
        {
          self->max_output = g_value_get_uint64 (value);
          g_object_notify_by_pspec (object, pspec);
        }
      break;
    case PROP_CWD:
      if (_terret_set_str (&self->cwd, g_value_get_string (value)))
        g_object_notify_by_pspec (object, pspec);
      break;
    case PROP_ENV:
      {
        const char * const *env = g_value_get_boxed (value);
        const char * const empty[] = { NULL };

        if (env == NULL)
          env = empty;
        if (!g_strv_equal ((const char * const *)self->env, env))
          {
            g_strfreev (self->env);
            self->env = g_strdupv ((char **)env);
            g_object_notify_by_pspec (object, pspec);
          }
      }
      break;
    case PROP_DRAIN_GRACE:
      set_double (self, &self->drain_grace, g_value_get_double (value), prop_id);
      break;
    case PROP_SHELL:
      {
        const char *shell = g_value_get_string (value);

        if (shell == NULL || *shell == '\0')
          shell = DEFAULT_SHELL;
        if (_terret_set_str (&self->shell, shell))
          g_object_notify_by_pspec (object, pspec);
      }
      break;
    case PROP_INTERRUPT_GRACE:
      set_double (self, &self->interrupt_grace, g_value_get_double (value), prop_id);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
terret_oneshot_executor_class_init (TerretOneshotExecutorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = terret_oneshot_executor_dispose;
  object_class->finalize = terret_oneshot_executor_finalize;
  object_class->get_property = terret_oneshot_executor_get_property;
  object_class->set_property = terret_oneshot_executor_set_property;

  properties[PROP_TIMEOUT] =
    g_param_spec_double ("timeout", NULL,
                         "Seconds a command may run when its request names no timeout; "
                         "then it and everything it started are killed",
                         0.001, G_MAXDOUBLE, DEFAULT_TIMEOUT,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  properties[PROP_MAX_OUTPUT] =
    g_param_spec_uint64 ("max-output", NULL,
                         "Bytes kept of the end of each of stdout and stderr (up to a "
                         "quarter more is held before older lines are dropped and counted)",
                         1, G_MAXUINT64, TERRET_TAIL_CAPTURE_DEFAULT_WINDOW,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  properties[PROP_CWD] =
    g_param_spec_string ("cwd", NULL,
                         "Working directory of commands whose request names none "
                         "(unset: the host's own)",
                         NULL,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  properties[PROP_ENV] =
    g_param_spec_boxed ("env", NULL,
                        "VARIABLE=value entries layered over the inherited environment "
                        "of every command (a request's own entries go on top)",
                        G_TYPE_STRV,
                        (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  properties[PROP_DRAIN_GRACE] =
    g_param_spec_double ("drain-grace", NULL,
                         "Seconds to keep reading output after bash exits while background "
                         "processes hold its pipes, before they are killed",
                         0, 3600, DEFAULT_DRAIN_GRACE,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  properties[PROP_SHELL] =
    g_param_spec_string ("shell", NULL,
                         "The bash that runs each command as `SHELL -c COMMAND`: a path, "
                         "or a name looked up in PATH",
                         DEFAULT_SHELL,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  properties[PROP_INTERRUPT_GRACE] =
    g_param_spec_double ("interrupt-grace", NULL,
                         "Seconds an interrupted command may go on running before it is "
                         "killed with its whole process group",
                         0, 3600, TERRET_SHELL_SESSION_DEFAULT_INTERRUPT_GRACE,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
terret_oneshot_executor_class_finalize (TerretOneshotExecutorClass *klass)
{
}

static void
terret_oneshot_executor_init (TerretOneshotExecutor *self)
{
  self->timeout = DEFAULT_TIMEOUT;
  self->max_output = TERRET_TAIL_CAPTURE_DEFAULT_WINDOW;
  self->env = g_new0 (char *, 1);
  self->drain_grace = DEFAULT_DRAIN_GRACE;
  self->shell = g_strdup (DEFAULT_SHELL);
  self->interrupt_grace = TERRET_SHELL_SESSION_DEFAULT_INTERRUPT_GRACE;
  self->runs = g_ptr_array_new ();
  self->parked = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
}

/* --- Module ------------------------------------------------------------ */

/* The entry points are declared by <gio/giomodule.h>; G_MODULE_EXPORT
 * keeps them visible from a module built with hidden symbols. */
G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  terret_oneshot_executor_register_type (G_TYPE_MODULE (module));
  g_io_extension_point_implement (TERRET_EXECUTOR_EXTENSION_POINT_NAME,
                                  terret_oneshot_executor_get_type (),
                                  "oneshot",
                                  50);
}

G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
}

G_MODULE_EXPORT char **
g_io_module_query (void)
{
  char *extension_points[] = { (char *)TERRET_EXECUTOR_EXTENSION_POINT_NAME, NULL };

  return g_strdupv (extension_points);
}
