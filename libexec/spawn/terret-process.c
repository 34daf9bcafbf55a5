/* terret-process.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib-unix.h>

#include "terret-launcher-wire.h"
#include "terret-process-private.h"

/**
 * TerretProcess:
 *
 * A process a [class@Terret.Launcher] started, and everything it starts.
 *
 * The process is not the host's child: it runs under a unit of the
 * executor's launcher, which reaps it and every orphan it leaves (a
 * `setsid` or `nohup` job, a double fork) and reports here. So the one
 * way to watch a process is [method@Terret.Process.create_exit_source],
 * whatever the kernel or a debugger under the host supports, and its
 * wait status is never lost to a race with another reaper.
 *
 * [method@Terret.Process.kill] ends the process together with everything
 * it started, whichever session or process group they moved to;
 * [method@Terret.Process.terminate] also waits until nothing of it is
 * left. Disposing the object does the same, so no process outlives the
 * object that owns it; nor the host: a unit whose host died ends what it
 * contains.
 *
 * Since: 0.2
 */

struct _TerretProcess
{
  GObject parent_instance;

  GPid pid;

  /* Guards everything below: sources on different contexts and threads
   * ask about one process. */
  GMutex mutex;
  int unit_fd;                  /* the library's end of the unit socket, or -1 */
  int wait_status;
  GPtrArray *sources;           /* (element-type GSource) (unowned) waiting for news */
  guint exited : 1;             /* the process ended; wait_status is its */
  guint gone : 1;               /* the unit closed: nothing of the process is left */
  guint kill_sent : 1;
  guint left_others : 1;        /* it ended leaving processes it started */
  guint far : 1;                /* it runs on a far side: its pid is not this host's */
  TerretLimits limits_hit;      /* what its cgroup refused, as of its end */
  guint stop_sent : 1;          /* its unit runs the stop sequence */
  guint sparing : 1;            /* a spared stop waits for what the command started to end */
  guint32 answered;             /* the last answer to a question (ACCOUNTED, INPUT) */
  int input_found;              /* a look at the far terminal: a TerretWireInput */
  unsigned input_flags;         /* ... and TERRET_WIRE_INPUT_* */
  gint64 spare_deadline;        /* monotonic time by when the unit reports that end */
  int stop_signal;              /* the last signal the stop sequence sent, as of now */
  int stop_signal_at_exit;      /* ... when the process ended; -1: it ended before any stop */
  gint64 stop_began;            /* monotonic time the stop was asked for */
  int stop_grace_msec;
  gint64 stop_ended;            /* ... and the process's end, after it */
  GArray *signalled;            /* (element-type TerretStopped) what the stop signalled */
};

G_DEFINE_FINAL_TYPE (TerretProcess, terret_process, G_TYPE_OBJECT)

/* The most processes a stop's account keeps; the rest are counted out. */
#define SIGNALLED_MAX 64

/* One process the stop sequence signalled: the last signal it sent to a
 * pid is the one that ended it. */
static void
process_note_signalled (TerretProcess *self,
                        int            pid,
                        int            signum,
                        gboolean       is_process,
                        const char    *cmdline,
                        gsize          len)
{
  TerretStopped *entry = NULL;

  for (guint i = 0; i < self->signalled->len; i++)
    if (g_array_index (self->signalled, TerretStopped, i).pid == pid)
      entry = &g_array_index (self->signalled, TerretStopped, i);
  if (entry == NULL)
    {
      TerretStopped fresh = { 0 };

      if (self->signalled->len >= SIGNALLED_MAX)
        return;
      fresh.pid = pid;
      fresh.is_process = is_process;
      g_array_append_val (self->signalled, fresh);
      entry = &g_array_index (self->signalled, TerretStopped, self->signalled->len - 1);
    }
  /* The latest name is the one it was stopped under (a subshell named
   * at a close's start may have exec'd since). NUL-separated arguments,
   * the last cut anywhere: joined by spaces. */
  if (len > 0 || entry->command == NULL)
    {
      GString *text = g_string_new (NULL);

      for (gsize i = 0; i < len; i++)
        g_string_append_c (text, cmdline[i] != '\0' ? cmdline[i] : ' ');
      g_strchomp (text->str);
      g_free (entry->command);
      entry->command = g_utf8_make_valid (text->str, -1);
      g_string_free (text, TRUE);
    }
  /* An account's 0 names it, a signal says what ended it. */
  if (signum != 0)
    entry->signum = signum;
}

static void
stopped_clear (gpointer data)
{
  g_free (((TerretStopped *)data)->command);
}

/* Reads what the unit said, waiting up to @timeout_msec for something
 * when nothing is there (0: not at all, -1: as long as it takes). Wakes
 * every source on news, whichever context it is attached to, since only
 * one of them reads it. Called with the mutex held. */
static void
process_read_locked (TerretProcess *self,
                     int            timeout_msec)
{
  gboolean news = FALSE;

  while (self->unit_fd >= 0 && !self->gone)
    {
      struct
      {
        TerretWireRecord record;
        char cmdline[TERRET_WIRE_CMDLINE_MAX];
      } event;
      TerretWireRecord record;
      ssize_t n;

      if (timeout_msec != 0)
        {
          struct pollfd pfd = { self->unit_fd, POLLIN, 0 };
          int ret;

          do
            ret = poll (&pfd, 1, timeout_msec);
          while (ret < 0 && errno == EINTR);
          if (ret <= 0)
            break;
        }

      do
        n = recv (self->unit_fd, &event, sizeof event, MSG_DONTWAIT);
      while (n < 0 && errno == EINTR);

      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        break;

      record = event.record;
      if (n < (gssize)sizeof record)
        {
          /* The end, or a unit that died without saying so: either way
           * nothing it contained runs any more (a killed unit's orphans
           * are the launcher's to kill). */
          self->gone = TRUE;
          if (!self->exited)
            self->exited = TRUE;
          news = TRUE;
          break;
        }

      if (record.type == TERRET_WIRE_EVENT_STOP_STAGE)
        self->stop_signal = record.a;
      else if (record.type == TERRET_WIRE_EVENT_SIGNALLED)
        process_note_signalled (self, record.a, record.b, record.c != 0, event.cmdline,
                                (gsize)n - sizeof record);
      else if (record.type == TERRET_WIRE_EVENT_ACCOUNTED)
        self->answered = record.type;
      else if (record.type == TERRET_WIRE_EVENT_INPUT)
        {
          self->answered = record.type;
          self->input_found = record.a;
          self->input_flags = (unsigned)record.b;
        }
      else if (record.type == TERRET_WIRE_EVENT_STOP_DONE && self->sparing)
        {
          self->sparing = FALSE;
          news = TRUE;
        }
      if (record.type == TERRET_WIRE_EVENT_EXITED && !self->exited)
        {
          if (self->stop_sent)
            {
              self->stop_signal_at_exit = self->stop_signal;
              self->stop_ended = g_get_monotonic_time ();
            }
          self->wait_status = record.a;
          self->left_others = record.b != 0;
          self->limits_hit = (TerretLimits)record.c;
          self->exited = TRUE;
          news = TRUE;
        }
      /* The first thing a wait for an end should see is the end, so the
       * rest is only read once there is nothing more to wait for; the
       * same for an account's end. */
      if (self->exited && timeout_msec != 0 && !self->kill_sent)
        break;
      if ((record.type == TERRET_WIRE_EVENT_ACCOUNTED || record.type == TERRET_WIRE_EVENT_INPUT) &&
          timeout_msec != 0)
        break;
    }

  if (news)
    for (guint i = 0; i < self->sources->len; i++)
      g_source_set_ready_time (g_ptr_array_index (self->sources, i), 0);
}

/* --- The sources ------------------------------------------------------ */

typedef enum
{
  UNTIL_EXIT,
  UNTIL_GONE,
  UNTIL_SPARED,                 /* a spared stop's end, or the process's */
} ProcessUntil;

typedef struct
{
  GSource source;
  TerretProcess *process;       /* (owned) */
  gpointer tag;
  ProcessUntil until;
} ProcessSource;

static gboolean
process_source_ready (ProcessSource *self)
{
  TerretProcess *process = self->process;
  gboolean ready;

  g_mutex_lock (&process->mutex);
  switch (self->until)
    {
    case UNTIL_GONE:
      ready = process->gone;
      break;
    case UNTIL_SPARED:
      ready = !process->sparing || process->exited;
      break;
    case UNTIL_EXIT:
    default:
      ready = process->exited;
      break;
    }
  g_mutex_unlock (&process->mutex);

  return ready;
}

static gboolean
process_source_prepare (GSource *source,
                        int     *timeout)
{
  *timeout = -1;
  return process_source_ready ((ProcessSource *)source);
}

static gboolean
process_source_check (GSource *source)
{
  ProcessSource *self = (ProcessSource *)source;

  if (self->tag != NULL && g_source_query_unix_fd (source, self->tag) != 0)
    {
      g_mutex_lock (&self->process->mutex);
      process_read_locked (self->process, 0);
      g_mutex_unlock (&self->process->mutex);
    }

  return process_source_ready (self);
}

static gboolean
process_source_dispatch (GSource     *source,
                         GSourceFunc  callback,
                         gpointer     user_data)
{
  ProcessSource *self = (ProcessSource *)source;

  g_source_set_ready_time (source, -1);
  if (!process_source_ready (self))
    return G_SOURCE_CONTINUE;

  if (callback == NULL)
    return G_SOURCE_REMOVE;

  return callback (user_data);
}

static void
process_source_finalize (GSource *source)
{
  ProcessSource *self = (ProcessSource *)source;

  g_mutex_lock (&self->process->mutex);
  g_ptr_array_remove_fast (self->process->sources, source);
  g_mutex_unlock (&self->process->mutex);
  g_clear_object (&self->process);
}

static GSourceFuncs process_source_funcs = {
  process_source_prepare,
  process_source_check,
  process_source_dispatch,
  process_source_finalize,
  NULL, NULL,
};

static GSource *
process_source_new (TerretProcess *self,
                    ProcessUntil   until)
{
  static const char *const names[] = { "[terret] process exit", "[terret] process gone",
                                        "[terret] process spared" };
  GSource *source = g_source_new (&process_source_funcs, sizeof (ProcessSource));
  ProcessSource *ps = (ProcessSource *)source;

  ps->process = g_object_ref (self);
  ps->until = until;
  g_source_set_static_name (source, names[until]);

  g_mutex_lock (&self->mutex);
  if (self->unit_fd >= 0)
    ps->tag = g_source_add_unix_fd (source, self->unit_fd, G_IO_IN | G_IO_HUP | G_IO_ERR);
  g_ptr_array_add (self->sources, source);
  g_mutex_unlock (&self->mutex);

  return source;
}

/* --- GObject ---------------------------------------------------------- */

static void
terret_process_dispose (GObject *object)
{
  TerretProcess *self = TERRET_PROCESS (object);

  /* The last owner gone: nothing it started may stay behind. */
  terret_process_terminate (self);

  G_OBJECT_CLASS (terret_process_parent_class)->dispose (object);
}

static void
terret_process_finalize (GObject *object)
{
  TerretProcess *self = TERRET_PROCESS (object);

  if (self->unit_fd >= 0)
    close (self->unit_fd);
  g_clear_pointer (&self->sources, g_ptr_array_unref);
  g_clear_pointer (&self->signalled, g_array_unref);
  g_mutex_clear (&self->mutex);

  G_OBJECT_CLASS (terret_process_parent_class)->finalize (object);
}

static void
terret_process_class_init (TerretProcessClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = terret_process_dispose;
  object_class->finalize = terret_process_finalize;
}

static void
terret_process_init (TerretProcess *self)
{
  g_mutex_init (&self->mutex);
  self->unit_fd = -1;
  self->sources = g_ptr_array_new ();
  self->stop_signal_at_exit = -1;
  self->signalled = g_array_new (FALSE, TRUE, sizeof (TerretStopped));
  g_array_set_clear_func (self->signalled, stopped_clear);
}

/*
 * _terret_process_new:
 *
 * A process that has started: @pid is its pid, @unit_fd (taken) the
 * library's end of its unit's socket, the STARTED record already read.
 * @far: it runs on a far side, and @pid is the far side's.
 */
TerretProcess *
_terret_process_new (GPid     pid,
                     int      unit_fd,
                     gboolean far)
{
  TerretProcess *self = g_object_new (TERRET_TYPE_PROCESS, NULL);

  self->pid = pid;
  self->unit_fd = unit_fd;
  self->far = far != FALSE;
  return self;
}

/* --- Public ----------------------------------------------------------- */

/**
 * terret_process_get_pid:
 * @self: a process
 *
 * Gets the process's pid. It stays the pid the process had after it
 * ended; compare with [method@Terret.Process.get_exited] before using it.
 * A process on a far side (see [class@Terret.FarSide]) has the pid it has
 * there, in the far side's PID namespace.
 *
 * Returns: the pid
 *
 * Since: 0.2
 */
GPid
terret_process_get_pid (TerretProcess *self)
{
  g_return_val_if_fail (TERRET_IS_PROCESS (self), 0);

  return self->pid;
}

/**
 * terret_process_get_exited:
 * @self: a process
 * @wait_status: (out) (optional): the process's wait status, as waitpid()
 *   gives it, or 0 when its end was not seen (its unit was killed)
 *
 * Tells whether the process has been seen to end, reading nothing new.
 *
 * Returns: whether the process has ended
 *
 * Since: 0.2
 */
gboolean
terret_process_get_exited (TerretProcess *self,
                           int           *wait_status)
{
  gboolean exited;

  g_return_val_if_fail (TERRET_IS_PROCESS (self), FALSE);

  g_mutex_lock (&self->mutex);
  exited = self->exited;
  if (wait_status != NULL)
    *wait_status = self->wait_status;
  g_mutex_unlock (&self->mutex);

  return exited;
}

/**
 * terret_process_check_exited:
 * @self: a process
 *
 * Finds out without blocking whether the process has ended.
 *
 * Returns: whether the process has ended
 *
 * Since: 0.2
 */
gboolean
terret_process_check_exited (TerretProcess *self)
{
  gboolean exited;

  g_return_val_if_fail (TERRET_IS_PROCESS (self), TRUE);

  g_mutex_lock (&self->mutex);
  process_read_locked (self, 0);
  exited = self->exited;
  g_mutex_unlock (&self->mutex);

  return exited;
}

/**
 * terret_process_wait_exited:
 * @self: a process
 * @timeout_msec: how long to wait at most, in milliseconds; -1 for as
 *   long as it takes
 *
 * Waits, blocking, for the process to end. For a process that is on its
 * way out; a main loop should use
 * [method@Terret.Process.create_exit_source].
 *
 * Returns: whether the process has ended
 *
 * Since: 0.2
 */
gboolean
terret_process_wait_exited (TerretProcess *self,
                            int            timeout_msec)
{
  gint64 deadline = timeout_msec < 0 ? -1 : g_get_monotonic_time () + timeout_msec * (gint64)1000;
  gboolean exited;

  g_return_val_if_fail (TERRET_IS_PROCESS (self), TRUE);

  g_mutex_lock (&self->mutex);
  for (;;)
    {
      int left = -1;

      if (self->exited || self->unit_fd < 0)
        break;
      if (deadline >= 0)
        {
          gint64 now = g_get_monotonic_time ();

          if (now >= deadline)
            break;
          left = (int)MAX ((deadline - now + 999) / 1000, 1);
        }
      process_read_locked (self, left);
    }
  exited = self->exited;
  g_mutex_unlock (&self->mutex);

  return exited;
}

/**
 * terret_process_create_exit_source:
 * @self: a process
 *
 * Creates a source that dispatches once the process has ended. Set its
 * callback with g_source_set_callback() (a #GSourceFunc) and attach it to
 * the context the caller runs on; there may be several, on different
 * contexts. It holds no timer: it wakes nobody until the process ends.
 *
 * Returns: (transfer full): a new source
 *
 * Since: 0.2
 */
GSource *
terret_process_create_exit_source (TerretProcess *self)
{
  g_return_val_if_fail (TERRET_IS_PROCESS (self), NULL);

  return process_source_new (self, UNTIL_EXIT);
}

/*
 * _terret_process_create_gone_source:
 *
 * A source that dispatches once nothing of the process is left: the
 * process and everything it started. A unit leaves as soon as that is
 * so, and at the latest once told to kill.
 */
GSource *
_terret_process_create_gone_source (TerretProcess *self)
{
  return process_source_new (self, UNTIL_GONE);
}

/* The unit socket, to poll() along with something else in a blocking
 * wait; readable when there is news. */
int
_terret_process_get_fd (TerretProcess *self)
{
  return self->unit_fd;
}

/* Whether the process ended leaving processes it started: without, its
 * unit leaves by itself, and the EOF is on its way. */
gboolean
_terret_process_left_others (TerretProcess *self)
{
  gboolean left;

  g_mutex_lock (&self->mutex);
  left = self->left_others;
  g_mutex_unlock (&self->mutex);

  return left;
}

/* The number after @key in the flat-keyed file @path, or 0. */
static guint64
read_key (const char *path,
          const char *key)
{
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  gsize len = strlen (key);

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return 0;
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (strncmp (lines[i], key, len) == 0 && lines[i][len] == ' ')
      return g_ascii_strtoull (lines[i] + len + 1, NULL, 10);
  return 0;
}

/*
 * _terret_process_get_limits_hit:
 *
 * The limits its cgroup refused: as the unit said at the end, or while
 * it runs (a session's shell between two commands) as its cgroups say
 * now. The counts only grow: a caller compares with what it saw before.
 * The unit made the cgroups (launcher/terret-launcher-cgroup.c) under
 * /sys/fs/cgroup, where this reads them through /proc/PID/cgroup.
 */
TerretLimits
_terret_process_get_limits_hit (TerretProcess *self)
{
  g_autofree char *path = NULL;
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  TerretLimits hit = TERRET_LIMIT_NONE;
  gboolean exited;

  g_mutex_lock (&self->mutex);
  exited = self->exited;
  hit = self->limits_hit;
  g_mutex_unlock (&self->mutex);
  /* A far process's pid names nothing here. */
  if (exited || self->far)
    return hit;

  path = g_strdup_printf ("/proc/%d/cgroup", self->pid);
  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return TERRET_LIMIT_NONE;
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) fields = g_strsplit (lines[i], ":", 3);
      g_autofree char *dir = NULL;

      if (g_strv_length (fields) != 3 || !g_str_has_prefix (fields[2], "/") ||
          strstr (fields[2], "/terret-") == NULL)
        continue;
      if (fields[1][0] == '\0')
        {
          g_autofree char *memory_events = NULL;
          g_autofree char *pids_events = NULL;

          dir = g_build_filename (g_file_test ("/sys/fs/cgroup/cgroup.controllers", G_FILE_TEST_EXISTS)
                                  ? "/sys/fs/cgroup" : "/sys/fs/cgroup/unified", fields[2], NULL);
          memory_events = g_build_filename (dir, "memory.events", NULL);
          pids_events = g_build_filename (dir, "pids.events", NULL);
          if (read_key (memory_events, "oom_kill") > 0)
            hit |= TERRET_LIMIT_MEMORY;
          if (read_key (pids_events, "max") > 0)
            hit |= TERRET_LIMIT_PROCESSES;
        }
      else if (strcmp (fields[1], "memory") == 0)
        {
          g_autofree char *file = g_build_filename ("/sys/fs/cgroup/memory", fields[2],
                                                    "memory.oom_control", NULL);

          if (read_key (file, "oom_kill") > 0)
            hit |= TERRET_LIMIT_MEMORY;
        }
      else if (strcmp (fields[1], "pids") == 0)
        {
          g_autofree char *file = g_build_filename ("/sys/fs/cgroup/pids", fields[2],
                                                    "pids.events", NULL);

          if (read_key (file, "max") > 0)
            hit |= TERRET_LIMIT_PROCESSES;
        }
    }
  return hit;
}

gboolean
_terret_process_is_gone (TerretProcess *self)
{
  gboolean gone;

  g_mutex_lock (&self->mutex);
  process_read_locked (self, 0);
  gone = self->gone;
  g_mutex_unlock (&self->mutex);

  return gone;
}

static void
process_send_locked (TerretProcess *self,
                     guint32        type,
                     int            a)
{
  TerretWireRecord record = { type, a, 0, 0 };

  if (self->unit_fd < 0 || self->gone)
    return;

  /* Never blocks: the unit reads its socket at once, and a full socket
   * (it cannot be: controls are rare) would only lose a duplicate. */
  while (send (self->unit_fd, &record, sizeof record, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
         errno == EINTR)
    ;
}

/* Whether the process runs on a far side. */
gboolean
_terret_process_is_far (TerretProcess *self)
{
  return self->far;
}

/* For a process on a far side: its terminal, made there, is put back in
 * the modes a session's protocol needs. Ordered with what is written to
 * the terminal after it: the bridge reads a unit's controls before its
 * streams, and the far launcher applies it before the bytes that follow. */
void
_terret_process_reset_terminal (TerretProcess *self)
{
  g_mutex_lock (&self->mutex);
  process_send_locked (self, TERRET_WIRE_CONTROL_TERMINAL_MODES, 0);
  g_mutex_unlock (&self->mutex);
}

/**
 * terret_process_signal_group:
 * @self: a process
 * @signum: a signal
 *
 * Sends @signum to the process's process group: the process and what it
 * started that stayed in its group, as ^C does at a terminal. Does
 * nothing once nothing of the process is left.
 *
 * Since: 0.2
 */
void
terret_process_signal_group (TerretProcess *self,
                             int            signum)
{
  g_return_if_fail (TERRET_IS_PROCESS (self));
  g_return_if_fail (signum > 0);

  g_mutex_lock (&self->mutex);
  process_send_locked (self, TERRET_WIRE_CONTROL_SIGNAL_GROUP, signum);
  g_mutex_unlock (&self->mutex);
}

/* Sends the unit its stop: see _terret_process_stop(). */
static void
process_stop (TerretProcess *self,
              double         grace,
              int            first,
              guint          flags)
{
  int msec = (int)(CLAMP (grace, 0, 3600) * 1000);

  if (msec <= 0)
    {
      terret_process_kill (self);
      return;
    }

  g_mutex_lock (&self->mutex);
  if (!self->stop_sent && !self->kill_sent && !self->gone)
    {
      TerretWireRecord record = { TERRET_WIRE_CONTROL_STOP, msec, first, (int32_t)flags };

      self->stop_sent = TRUE;
      self->stop_grace_msec = msec;
      self->stop_began = g_get_monotonic_time ();
      self->stop_signal = (flags & TERRET_WIRE_STOP_FOREGROUND) ? 0 : first;
      if (self->unit_fd >= 0)
        while (send (self->unit_fd, &record, sizeof record, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
               errno == EINTR)
          ;
    }
  g_mutex_unlock (&self->mutex);
}

/*
 * _terret_process_stop:
 *
 * Asks the unit for the stop sequence (terret-launcher-stop.c): the
 * process's group hears @first_signal (0: none), or with
 * %TERRET_WIRE_STOP_CLOSE in @flags everything hears SIGHUP and SIGCONT;
 * SIGTERM follows halfway through @grace seconds, and the KILL sweep at
 * their end. A @grace of 0 is a kill. The first stop holds its clock.
 * Returns at once.
 */
void
_terret_process_stop (TerretProcess *self,
                      double         grace,
                      int            first_signal,
                      guint          flags)
{
  process_stop (self, grace, first_signal, flags);
}

/*
 * _terret_process_stop_command:
 *
 * The stop of a command that a session's shell runs, which the caller
 * interrupted on its terminal (^C): SIGTERM halfway through @grace goes
 * to what the command started @since_msec ago, not to the shell or the
 * jobs it had before; the sweep at the grace's end takes everything,
 * unless the shell came back (_terret_process_stop_spare()).
 */
void
_terret_process_stop_command (TerretProcess *self,
                              double         grace,
                              gint64         since_msec)
{
  process_stop (self, grace, (int)CLAMP (since_msec, 0, G_MAXINT32), TERRET_WIRE_STOP_FOREGROUND);
}

/* The stop worked before its end: what is left stays (a session's shell
 * back at its prompt), and a later stop starts afresh. */
void
_terret_process_stop_cancel (TerretProcess *self)
{
  g_mutex_lock (&self->mutex);
  if (self->stop_sent)
    process_send_locked (self, TERRET_WIRE_CONTROL_STOP_CANCEL, 0);
  process_read_locked (self, 0);
  self->stop_sent = FALSE;
  self->stop_signal_at_exit = -1;
  g_mutex_unlock (&self->mutex);
}

/*
 * _terret_stop_signal_from_signum:
 *
 * The stage of the stop sequence a signal it sends names; NONE for any
 * other (0: no signal, as an account's).
 */
TerretStopSignal
_terret_stop_signal_from_signum (int signum)
{
  switch (signum)
    {
    case SIGHUP:
      return TERRET_STOP_SIGNAL_HANGUP;
    case SIGTERM:
      return TERRET_STOP_SIGNAL_TERMINATE;
    case SIGKILL:
      return TERRET_STOP_SIGNAL_KILL;
    case SIGINT:
      return TERRET_STOP_SIGNAL_INTERRUPT;
    default:
      return TERRET_STOP_SIGNAL_NONE;
    }
}

/*
 * _terret_process_get_stop:
 *
 * Whether a stop was asked for; then @signum is the last signal its
 * sequence had sent when the process ended (or as of now, when it has
 * not: 0 for the caller's own ^C), and @msec how long the stop has taken
 * until then.
 */
gboolean
_terret_process_get_stop (TerretProcess *self,
                          int           *signum,
                          guint         *msec)
{
  gboolean sent;

  g_mutex_lock (&self->mutex);
  process_read_locked (self, 0);
  sent = self->stop_sent;
  if (sent)
    {
      gint64 end = self->stop_signal_at_exit >= 0 ? self->stop_ended : g_get_monotonic_time ();

      *signum = self->stop_signal_at_exit >= 0 ? self->stop_signal_at_exit : self->stop_signal;
      *msec = (guint)MAX ((end - self->stop_began) / 1000, 0);
    }
  g_mutex_unlock (&self->mutex);
  return sent;
}

/* Asks the unit with @control and reads until it answers with @answer
 * (or is gone), blocking, up to @timeout_msec: the unit answers at once,
 * so this is a bound, not a step. Called with the mutex held. */
static gboolean
process_ask_locked (TerretProcess *self,
                    guint32        control,
                    guint32        answer,
                    int            timeout_msec)
{
  gint64 deadline = g_get_monotonic_time () + (gint64)timeout_msec * 1000;

  self->answered = 0;
  process_send_locked (self, control, 0);
  while (self->answered != answer && !self->gone)
    {
      gint64 left = deadline - g_get_monotonic_time ();

      if (left <= 0)
        break;
      process_read_locked (self, (int)MAX (left / 1000, 1));
    }
  return self->answered == answer;
}

/*
 * _terret_process_take_account:
 *
 * Before a close: what the unit contains now, each as signalled with 0,
 * so that a process that ends before the stop reaches it (a job its
 * terminal's close ended) is named too. Waits, blocking, up to
 * @timeout_msec for the unit's word. Starts the account afresh.
 */
void
_terret_process_take_account (TerretProcess *self,
                              int            timeout_msec)
{
  g_mutex_lock (&self->mutex);
  g_array_set_size (self->signalled, 0);
  if (self->unit_fd >= 0 && !self->gone)
    process_ask_locked (self, TERRET_WIRE_CONTROL_ACCOUNT, TERRET_WIRE_EVENT_ACCOUNTED,
                        timeout_msec);
  g_mutex_unlock (&self->mutex);
}

/*
 * _terret_process_look_input:
 * @flags: (out): TERRET_WIRE_INPUT_*
 *
 * Whether the command on a terminal the far side made waits for input,
 * as its launcher sees it there (terret-launcher-input.c): this host
 * cannot read that side's /proc. Waits, blocking, up to @timeout_msec
 * for the answer, which comes at once (a bound, not a step); UNKNOWN
 * when none came, or the process is gone.
 */
TerretWireInput
_terret_process_look_input (TerretProcess *self,
                            int            timeout_msec,
                            unsigned      *flags)
{
  TerretWireInput found = TERRET_WIRE_INPUT_UNKNOWN;

  *flags = 0;
  g_mutex_lock (&self->mutex);
  if (self->unit_fd >= 0 && !self->gone && !self->exited &&
      process_ask_locked (self, TERRET_WIRE_CONTROL_LOOK_INPUT, TERRET_WIRE_EVENT_INPUT,
                          timeout_msec) &&
      self->input_found >= TERRET_WIRE_INPUT_UNKNOWN &&
      self->input_found <= TERRET_WIRE_INPUT_WAITING)
    {
      found = (TerretWireInput)self->input_found;
      *flags = self->input_flags;
    }
  g_mutex_unlock (&self->mutex);
  return found;
}

/* What the stop signalled: (element-type TerretStopped) (transfer container). */
GArray *
_terret_process_get_stopped (TerretProcess *self)
{
  GArray *copy;

  g_mutex_lock (&self->mutex);
  process_read_locked (self, 0);
  copy = g_array_sized_new (FALSE, TRUE, sizeof (TerretStopped), self->signalled->len);
  g_array_set_clear_func (copy, stopped_clear);
  for (guint i = 0; i < self->signalled->len; i++)
    {
      TerretStopped entry = g_array_index (self->signalled, TerretStopped, i);

      entry.command = g_strdup (entry.command);
      g_array_append_val (copy, entry);
    }
  g_mutex_unlock (&self->mutex);
  return copy;
}

/* Waits, blocking, up to @timeout_msec for nothing of the process to be
 * left. Returns whether nothing is. */
gboolean
_terret_process_wait_gone (TerretProcess *self,
                           int            timeout_msec)
{
  gint64 deadline = g_get_monotonic_time () + (gint64)timeout_msec * 1000;
  gboolean gone;

  g_mutex_lock (&self->mutex);
  while (self->unit_fd >= 0 && !self->gone)
    {
      gint64 left = deadline - g_get_monotonic_time ();

      if (left <= 0)
        break;
      process_read_locked (self, (int)MAX (left / 1000, 1));
    }
  gone = self->unit_fd < 0 || self->gone;
  g_mutex_unlock (&self->mutex);
  return gone;
}

/**
 * terret_process_kill:
 * @self: a process
 *
 * Makes the process and everything it started end now, whichever
 * session or process group they moved to: its unit SIGKILLs them until
 * none is left. Returns at once; safe from any thread.
 *
 * Since: 0.2
 */
void
terret_process_kill (TerretProcess *self)
{
  g_return_if_fail (TERRET_IS_PROCESS (self));

  g_mutex_lock (&self->mutex);
  if (!self->kill_sent)
    process_send_locked (self, TERRET_WIRE_CONTROL_KILL, 0);
  self->kill_sent = TRUE;
  g_mutex_unlock (&self->mutex);
}

/* Long enough for a unit to SIGKILL and reap anything; a bound only for
 * a process stuck in the kernel, which no signal ends. */
#define TERMINATE_MSEC (10 * 1000)

/* How long past a stop's grace its sweep may take to be reported. */
#define STOP_BOUND_MSEC 2000

/*
 * _terret_process_finish_stop:
 *
 * Waits, blocking, for a stop under way to run its course: its unit's
 * sweep ends it at the grace's end, so the wait is bounded.
 */
void
_terret_process_finish_stop (TerretProcess *self)
{
  gint64 deadline;

  g_mutex_lock (&self->mutex);
  if (self->stop_sent && !self->kill_sent)
    {
      deadline = self->stop_began + ((gint64)self->stop_grace_msec + STOP_BOUND_MSEC) * 1000;
      while (self->unit_fd >= 0 && !self->gone)
        {
          gint64 left = deadline - g_get_monotonic_time ();

          if (left <= 0)
            break;
          process_read_locked (self, (int)MAX (left / 1000, 1));
        }
    }
  g_mutex_unlock (&self->mutex);
}

/*
 * _terret_process_stop_spare:
 *
 * The command's stop (_terret_process_stop_command()) saw its shell
 * come back before the stop's end (at its prompt after ^C): the shell
 * stays, and so does what was there before the command started; what
 * the command started hears the rest of the stop, which the grace bounds. A later stop starts
 * afresh. Returns whether something is left to end: then
 * _terret_process_create_spared_source() says when nothing is.
 */
gboolean
_terret_process_stop_spare (TerretProcess *self)
{
  gboolean sparing = FALSE;

  g_mutex_lock (&self->mutex);
  if (self->stop_sent && !self->kill_sent && self->unit_fd >= 0 && !self->gone)
    {
      self->sparing = TRUE;
      self->spare_deadline = self->stop_began +
                             ((gint64)self->stop_grace_msec + STOP_BOUND_MSEC) * 1000;
      process_send_locked (self, TERRET_WIRE_CONTROL_STOP_SPARE, 0);
      process_read_locked (self, 0);
      sparing = self->sparing;
      self->stop_sent = FALSE;
      self->stop_signal_at_exit = -1;
    }
  g_mutex_unlock (&self->mutex);
  return sparing;
}

/*
 * _terret_process_create_spared_source:
 *
 * A source that dispatches once the spared stop's end is reported (or
 * the process ended).
 */
GSource *
_terret_process_create_spared_source (TerretProcess *self)
{
  return process_source_new (self, UNTIL_SPARED);
}

/* Whether a spared stop still waits for what the command started; and
 * by when (monotonic time) the unit reports its end at the latest. */
gboolean
_terret_process_is_sparing (TerretProcess *self,
                            gint64        *deadline)
{
  gboolean sparing;

  g_mutex_lock (&self->mutex);
  sparing = self->sparing && !self->exited;
  if (deadline != NULL)
    *deadline = self->spare_deadline;
  g_mutex_unlock (&self->mutex);
  return sparing;
}

/**
 * terret_process_terminate:
 * @self: a process
 *
 * Kills the process and everything it started, and waits until nothing
 * of it is left. SIGKILL cannot be ignored, so the wait is short. A
 * graceful stop under way is let run to its end first, which its grace
 * bounds.
 *
 * Since: 0.2
 */
void
terret_process_terminate (TerretProcess *self)
{
  gint64 deadline;

  g_return_if_fail (TERRET_IS_PROCESS (self));

  _terret_process_finish_stop (self);
  terret_process_kill (self);

  deadline = g_get_monotonic_time () + TERMINATE_MSEC * 1000;
  g_mutex_lock (&self->mutex);
  while (self->unit_fd >= 0 && !self->gone)
    {
      gint64 left = deadline - g_get_monotonic_time ();

      if (left <= 0)
        {
          g_warning ("Process %d is still there %d s after it was killed", (int)self->pid,
                     TERMINATE_MSEC / 1000);
          break;
        }
      process_read_locked (self, (int)MAX (left / 1000, 1));
    }
  g_mutex_unlock (&self->mutex);
}
