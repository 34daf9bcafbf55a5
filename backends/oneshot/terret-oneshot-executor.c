/* terret-oneshot-executor.c: one `bash -c` process per command
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <math.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib-unix.h>
#include <glib/gstdio.h>

#include <terret-exec.h>

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

struct _TerretOneshotExecutor
{
  GObject parent_instance;

  double timeout;
  guint64 max_output;
  char *cwd;                    /* (owned) (nullable) */
  GStrv env;                    /* (owned) */
  double drain_grace;
  char *shell;                  /* (owned) */

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
} RunStream;

struct _Run
{
  TerretOneshotExecutor *executor;  /* (unowned) the task holds a reference */
  GTask *task;                      /* (owned) */
  TerretRequest *request;           /* (owned) */
  char *session;                    /* (owned) */
  GMainContext *context;            /* (owned) */

  GPid pid;                         /* bash, leader of its own process group */
  double timeout;
  double drain_grace;
  int wait_status;
  RunEnd end;
  guint exited : 1;                 /* bash has been reaped */
  guint exited_on_its_own : 1;      /* ... before anything stopped the run */
  guint left_processes : 1;         /* the final group kill found someone */

  GSource *child_source;            /* (owned) (nullable) */
  GSource *timeout_source;          /* (owned) (nullable) */
  GSource *cancel_source;           /* (owned) (nullable) */
  GSource *grace_source;            /* (owned) (nullable) */

  RunStream streams[2];
  guint8 *buffer;                   /* (owned) READ_CHUNK bytes */
};

static void run_check_done (Run *run);
static void run_complete (Run *run);

/* g_set_str() arrived in GLib 2.76; this is its contract. */
static gboolean
set_string (char       **field,
            const char  *value)
{
  if (g_strcmp0 (*field, value) == 0)
    return FALSE;

  g_free (*field);
  *field = g_strdup (value);
  return TRUE;
}

static void
clear_source (GSource **source)
{
  if (*source != NULL)
    {
      g_source_destroy (*source);
      g_clear_pointer (source, g_source_unref);
    }
}

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
  clear_source (&rs->source);

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

static gboolean
run_stream_ready_cb (int          fd,
                     GIOCondition condition,
                     gpointer     user_data)
{
  RunStream *rs = user_data;
  Run *run = rs->run;
  gssize n;

  n = read (fd, run->buffer, READ_CHUNK);
  if (n > 0)
    {
      run_stream_take (rs, run->buffer, n);
      return G_SOURCE_CONTINUE;
    }
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return G_SOURCE_CONTINUE;

  /* End of file, or an error that leaves nothing more to read. */
  run_stream_close (rs);
  run_check_done (run);   /* may complete and free the run */
  return G_SOURCE_REMOVE;
}

/* --- Run lifetime -------------------------------------------------------- */

static void
run_free (Run *run)
{
  clear_source (&run->child_source);
  clear_source (&run->timeout_source);
  clear_source (&run->cancel_source);
  clear_source (&run->grace_source);

  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    {
      RunStream *rs = &run->streams[i];

      clear_source (&rs->source);
      if (rs->fd >= 0)
        g_close (rs->fd, NULL);
      g_clear_pointer (&rs->capture, terret_tail_capture_free);
      if (rs->line != NULL)
        g_byte_array_unref (rs->line);
    }

  g_clear_object (&run->task);
  g_clear_object (&run->request);
  g_clear_pointer (&run->session, g_free);
  g_clear_pointer (&run->context, g_main_context_unref);
  g_clear_pointer (&run->buffer, g_free);
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
  clear_source (&run->grace_source);
  run->grace_source = g_timeout_source_new (delay_ms);
  g_source_set_static_name (run->grace_source, "[terret-oneshot] drain grace");
  g_source_set_callback (run->grace_source, run_grace_cb, run, NULL);
  g_source_attach (run->grace_source, run->context);
}

/* Stops a run for @end: kill the group now; the run completes when the
 * child watch has reaped bash (or at once, from the loop, if it already
 * has). */
static void
run_stop (Run    *run,
          RunEnd  end)
{
  if (run->end == RUN_END_NONE)
    run->end = end;

  clear_source (&run->timeout_source);
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

static void
run_child_exited_cb (GPid     pid,
                     int      wait_status,
                     gpointer user_data)
{
  Run *run = user_data;

  run->exited = TRUE;
  run->wait_status = wait_status;
  run->exited_on_its_own = (run->end == RUN_END_NONE);
  g_clear_pointer (&run->child_source, g_source_unref);

  /* The deadline is for the command; what is left is a bounded grace. */
  clear_source (&run->timeout_source);

  if (run->end != RUN_END_NONE)
    run_complete (run);
  else
    run_check_done (run);
}

static gboolean
run_timeout_cb (gpointer user_data)
{
  Run *run = user_data;

  g_clear_pointer (&run->timeout_source, g_source_unref);
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

/* Ends the run: bash has been reaped (or, for a grace that ran out, was
 * reaped earlier). Kills what is left of the group, collects what the
 * pipes still hold, and returns the result or the cancellation. Frees
 * @run: callers must not touch it afterwards. */
static void
run_complete (Run *run)
{
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GTask) task = NULL;
  gboolean anyone_left;

  g_assert (run->exited);

  clear_source (&run->timeout_source);
  clear_source (&run->cancel_source);
  clear_source (&run->grace_source);

  /* Whatever the command started goes with it: a run leaves nothing
   * behind. A process that must outlive the run has to leave the group
   * itself (`setsid`). */
  anyone_left = run_kill_group (run);

  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    if (run->streams[i].fd >= 0)
      run_stream_drain (&run->streams[i]);

  g_ptr_array_remove_fast (run->executor->runs, run);
  task = g_steal_pointer (&run->task);

  if (run->end == RUN_END_CANCELLED)
    {
      run_free (run);
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_CANCELLED,
                               "The command was cancelled and killed");
      return;
    }

  result = terret_result_new ();

  /* A status is reported only when bash ended on its own: a status read
   * from a process we killed would be ours, not the command's. */
  if (run->exited_on_its_own)
    terret_result_set_wait_status (result, run->wait_status);

  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    {
      RunStream *rs = &run->streams[i];
      g_autoptr(GBytes) bytes = NULL;
      guint64 dropped = 0;

      bytes = terret_tail_capture_finish (rs->capture, &dropped);
      if (rs->stream == TERRET_STREAM_STDOUT)
        terret_result_set_stdout (result, bytes);
      else
        terret_result_set_stderr (result, bytes);

      /* The tail is kept, so the omitted bytes sit before all of it. */
      terret_result_set_dropped (result, rs->stream, dropped, 0);
      if (dropped > 0)
        add_dropped_notice (result, rs->stream, g_bytes_get_size (bytes), dropped);
    }

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

    case RUN_END_NONE:
      if (anyone_left)
        terret_result_add_notice (result, "Processes the command left running were killed when it ended.");
      break;

    case RUN_END_CANCELLED:
    default:
      g_assert_not_reached ();
    }

  run_free (run);
  g_task_return_pointer (task, g_steal_pointer (&result), g_object_unref);
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

  run->child_source = g_child_watch_source_new (run->pid);
  g_source_set_static_name (run->child_source, "[terret-oneshot] child watch");
  g_source_set_callback (run->child_source, G_SOURCE_FUNC (run_child_exited_cb), run, NULL);
  g_source_attach (run->child_source, run->context);

  run->timeout_source = g_timeout_source_new (seconds_to_ms (run->timeout));
  g_source_set_static_name (run->timeout_source, "[terret-oneshot] timeout");
  g_source_set_callback (run->timeout_source, run_timeout_cb, run, NULL);
  g_source_attach (run->timeout_source, run->context);

  return TRUE;
}

/* --- TerretExecutor ---------------------------------------------------- */

static TerretCapabilities
terret_oneshot_executor_get_capabilities (TerretExecutor *executor)
{
  return (TERRET_CAPABILITY_RUNS_COMMANDS |
          TERRET_CAPABILITY_SEPARATE_STDERR |
          TERRET_CAPABILITY_REQUEST_CWD |
          TERRET_CAPABILITY_REQUEST_ENV |
          TERRET_CAPABILITY_PROGRESS);
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
  run->buffer = g_malloc (READ_CHUNK);

  for (guint i = 0; i < G_N_ELEMENTS (run->streams); i++)
    {
      RunStream *rs = &run->streams[i];
      /* Clamped so window + overshoot cannot overflow; memory runs out
       * long before either limit matters. */
      gsize window = (gsize)MIN (self->max_output, (guint64)G_MAXSIZE / 4);

      rs->run = run;
      rs->stream = i == 0 ? TERRET_STREAM_STDOUT : TERRET_STREAM_STDERR;
      rs->fd = -1;
      /* The overshoot a quarter of the window, and at most the default:
       * each eviction then moves at most the window after at least a
       * quarter of it arrived (amortized-linear), and a small max-output
       * keeps a small peak (window + overshoot) instead of a fixed
       * 256 KiB of slack. */
      rs->capture = terret_tail_capture_new (window,
                                             CLAMP (window / 4, 4096,
                                                    TERRET_TAIL_CAPTURE_DEFAULT_OVERSHOOT));
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

  /* Stopping a run never removes it here (it completes from its own
   * dispatch), so the array is stable while it is scanned. */
  for (guint i = 0; i < self->runs->len; i++)
    {
      Run *run = g_ptr_array_index (self->runs, i);

      if (session == NULL || g_strcmp0 (run->session, session) == 0)
        run_stop (run, RUN_END_CLOSED);
    }
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

  /* Runs in flight hold the executor through their tasks, so this is
   * reached with runs only through g_object_run_dispose(); they still end
   * with their process groups. */
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
      if (set_string (&self->cwd, g_value_get_string (value)))
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
        if (set_string (&self->shell, shell))
          g_object_notify_by_pspec (object, pspec);
      }
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
  self->runs = g_ptr_array_new ();
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
