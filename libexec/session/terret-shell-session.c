/* terret-shell-session.c: one persistent bash over a channel
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A session is one bash, carried by a TerretShellChannel, that runs
 * command after command so that `cd` and `export` from one run are
 * visible to the next, exactly as in a terminal. It owns the shell's
 * state between runs (the protocol's, a TerretShellState; the notice
 * owed to the next run; the end of a detached command nobody polled) and
 * the sources that read the shell, kept from run to run. A run
 * (terret-shell-run.c) is its engine, lent what it needs and reporting
 * back through a table of calls; it knows nothing else of the session.
 *
 * A second run while one is in flight is refused (busy), never queued:
 * one bash can run one thing at a time, and a queue would make a waiting
 * caller's timeout a lie. An idle session costs no wakeups: its sources
 * only wake for output, which between runs belongs to whatever wrote it
 * (a background job) and is dropped.
 */

#include "config.h"

#include <signal.h>
#include <string.h>

#include <glib-unix.h>

#include "terret-detach-private.h"
#include "terret-error.h"
#include "terret-shell-run-private.h"
#include "terret-launcher-wire.h"
#include "terret-process-private.h"
#include "terret-shell-session-private.h"
#include "terret-stopped-process.h"
#include "terret-util-private.h"

/* Bytes sitting on the terminal between two runs belong to whatever wrote
 * them (a background job), never to the next command, so they are
 * drained before it starts. The budget only bounds the pathological case,
 * a background job printing without pause: what it still prints after
 * the budget lands in the next run's output, as it does over a human's
 * next command. */
#define DRAIN_BUDGET_USEC (100 * 1000)

struct _TerretShellSession
{
  GObject parent_instance;

  TerretShellChannel *channel;  /* (owned) */
  char *key;                    /* (owned) the session key, for messages */
  TerretShellStartFunc start;
  gpointer start_data;

  /* The current shell as the protocol knows it; touched only by the run
   * in flight, one at a time. */
  TerretShellState state;

  /* Read buffer and sources, kept from run to run on the context of the
   * last one, so a round trip attaches and destroys nothing. */
  guint8 *read_buffer;          /* (owned) (nullable) */
  GMainContext *context;        /* (owned) (nullable) */
  GSource *read_source;         /* (owned) (nullable) */
  GSource *exit_source;         /* (owned) (nullable) */
  TerretTimers timers;
  guint reading : 1;            /* in the read source's callback */
  guint read_dropped : 1;       /* a nested dispatch of it dropped it */

  /* Guards everything below: runs, closes and input may come from
   * different threads. Never held across I/O. */
  GMutex mutex;
  char *pending_notice;         /* (owned) (nullable) for the next run */
  TerretShellRun *run;          /* (unowned) (nullable) the run in flight or detached */
  TerretResult *parked;         /* (owned) (nullable) a detached end nobody polled */
  char *parked_command;         /* (owned) (nullable) its command, start and output, for a list */
  gint64 parked_started;
  guint64 parked_bytes;
  TerretSpoolList spools;       /* full-output files, removed when the session closes */
  GQueue deferred;              /* (element-type DeferredRun) runs waiting for a stop to end */
  double stop_grace;            /* the current shell's settings': a close's grace */
  GSource *spared_source;       /* (owned) (nullable) a cancelled command's jobs are ending */
  GSource *spared_bound;        /* (owned) (nullable) ... and when to stop waiting for them */
  gint64 spared_deadline;       /* monotonic time the unit reports their end by */
  guint busy : 1;
  guint close_requested : 1;
};

G_DEFINE_FINAL_TYPE (TerretShellSession, terret_shell_session, G_TYPE_OBJECT)

/* --- The session's sources ------------------------------------------------ */

static gboolean session_on_readable (int          fd,
                                     GIOCondition condition,
                                     gpointer     user_data);

/* The terminal's read source. It may recurse: GLib takes a source's
 * descriptors out of the context's poll set around each dispatch of a
 * source that may not (and, before 2.76, wakes the context each time),
 * which cost every exchange two eventfd writes, a read and a loop
 * iteration. session_on_readable() keeps a nested dispatch from reading
 * under the outer one. */
static void
session_attach_read (TerretShellSession *self,
                     GMainContext       *context)
{
  self->read_source = g_unix_fd_source_new (terret_shell_channel_get_read_fd (self->channel),
                                            G_IO_IN | G_IO_HUP | G_IO_ERR);
  g_source_set_static_name (self->read_source, "[terret] shell output");
  g_source_set_callback (self->read_source, G_SOURCE_FUNC (session_on_readable), self, NULL);
  g_source_set_can_recurse (self->read_source, TRUE);
  g_source_attach (self->read_source, context);
}

/* Reads what nobody waits for, until there is nothing to read; at the
 * end of the terminal the source goes (the next run finds the shell gone). */
static gboolean
session_drain (TerretShellSession *self,
               gint64              deadline)
{
  /* On the stack: between runs there is usually nothing to read, and a
   * heap chunk per run made glibc trim and fault its pages again on every
   * run. */
  guint8 buffer[4096];

  for (;;)
    {
      g_autoptr(GError) error = NULL;
      gssize n = terret_shell_channel_read (self->channel, buffer, sizeof buffer, &error);

      if (n < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        return TRUE;
      if (n <= 0)
        return FALSE;
      if (g_get_monotonic_time () >= deadline)
        return TRUE;
    }
}

static TerretShellRun *
session_current_run (TerretShellSession *self)
{
  TerretShellRun *run;

  g_mutex_lock (&self->mutex);
  run = self->run;
  g_mutex_unlock (&self->mutex);

  return run;
}

static gboolean
session_on_readable (int          fd,
                     GIOCondition condition,
                     gpointer     user_data)
{
  TerretShellSession *self = user_data;
  g_autoptr(TerretShellSession) hold = NULL;
  TerretShellRun *run;

  /* The source may recurse (session_attach_read says why): a callback
   * this read completes that iterates the context itself could dispatch
   * it again, under the read in progress. That dispatch drops the source
   * instead, and the outer one attaches a new one once it is done. */
  if (self->reading)
    {
      self->read_dropped = TRUE;
      _terret_clear_source (&self->read_source);
      return G_SOURCE_REMOVE;
    }

  /* A run's callback may drop the last reference to the session. */
  hold = g_object_ref (self);
  self->reading = TRUE;
  run = session_current_run (self);
  if (run != NULL)
    _terret_shell_run_on_readable (run);
  else if (!session_drain (self, g_get_monotonic_time () + DRAIN_BUDGET_USEC))
    {
      /* Level-triggered: a terminal at its end stays readable. */
      self->reading = FALSE;
      g_clear_pointer (&self->read_source, g_source_unref);
      return G_SOURCE_REMOVE;
    }
  self->reading = FALSE;

  if (self->read_dropped)
    {
      self->read_dropped = FALSE;
      if (self->read_source == NULL && self->context != NULL &&
          terret_shell_channel_is_open (self->channel))
        session_attach_read (self, self->context);
    }

  /* A completed run may have dropped the sources; returning CONTINUE from
   * a destroyed source is harmless. */
  return G_SOURCE_CONTINUE;
}

static gboolean
session_on_exited (gpointer user_data)
{
  TerretShellSession *self = user_data;
  TerretShellRun *run = session_current_run (self);

  /* Once: the source stays ready from now on. */
  g_clear_pointer (&self->exit_source, g_source_unref);
  if (run != NULL)
    _terret_shell_run_on_exited (run);
  return G_SOURCE_REMOVE;
}

static void
session_on_timer (gpointer owner,
                  guint    which)
{
  TerretShellSession *self = owner;
  TerretShellRun *run = session_current_run (self);

  if (run != NULL)
    _terret_shell_run_on_timer (run, which);
}

/* Destroys the sources that watch the shell; its process and descriptors
 * are going. The timers stay, disarmed by the run that ends. */
static void
session_drop_sources (TerretShellSession *self)
{
  _terret_clear_source (&self->read_source);
  _terret_clear_source (&self->exit_source);
}

/* Puts the session's sources on @context (the run's, or a poller's),
 * creating those the current shell needs. On the context they are on
 * already this costs nothing: a round trip attaches and destroys nothing. */
static void
session_adopt (TerretShellSession *self,
               GMainContext       *context)
{
  TerretProcess *process = terret_shell_channel_get_process (self->channel);

  if (self->context != context)
    {
      session_drop_sources (self);
      g_clear_pointer (&self->context, g_main_context_unref);
      self->context = g_main_context_ref (context);
    }
  /* A context that went away took its sources with it. */
  if (self->read_source != NULL && g_source_is_destroyed (self->read_source))
    g_clear_pointer (&self->read_source, g_source_unref);
  if (self->exit_source != NULL && g_source_is_destroyed (self->exit_source))
    g_clear_pointer (&self->exit_source, g_source_unref);

  _terret_timers_attach (&self->timers, context);

  if (process == NULL)
    return;

  if (self->read_source == NULL)
    session_attach_read (self, context);
  if (self->exit_source == NULL)
    {
      self->exit_source = terret_process_create_exit_source (process);
      g_source_set_callback (self->exit_source, session_on_exited, self, NULL);
      g_source_attach (self->exit_source, context);
    }
}

/* --- What a run reports ----------------------------------------------------- */

static void
run_adopt (GObject      *session,
           GMainContext *context)
{
  session_adopt (TERRET_SHELL_SESSION (session), context);
}

static void
run_drop_sources (GObject *session)
{
  session_drop_sources (TERRET_SHELL_SESSION (session));
}

static TerretLauncher *
run_start_shell (GObject         *session,
                 TerretSettings  *settings,
                 double          *handshake_timeout,
                 GError         **error)
{
  TerretShellSession *self = TERRET_SHELL_SESSION (session);

  self->stop_grace = settings->stop_grace;
  return self->start (self, settings, handshake_timeout, self->start_data, error);
}

static gboolean
run_close_requested (GObject *session)
{
  TerretShellSession *self = TERRET_SHELL_SESSION (session);
  gboolean closed;

  g_mutex_lock (&self->mutex);
  closed = self->close_requested;
  g_mutex_unlock (&self->mutex);

  return closed;
}

static void
run_owe_notice (GObject    *session,
                const char *notice)
{
  TerretShellSession *self = TERRET_SHELL_SESSION (session);

  g_mutex_lock (&self->mutex);
  g_free (self->pending_notice);
  self->pending_notice = g_strdup (notice);
  g_mutex_unlock (&self->mutex);
}

/* How long past a close's grace its account waits for the unit's sweep:
 * a bound, not a step. */
#define CLOSE_BOUND_MSEC 3000

/* How long a close waits for the unit to name what it contains: a
 * bound, not a step (the unit answers at once). */
#define ACCOUNT_BOUND_MSEC 2000

/* How long past the unit's own bound the session waits for a cancelled
 * command's jobs' end to be reported before it ends the shell: a bound,
 * not a step. */
#define SPARED_BOUND_MSEC 1000

/* A run that arrived while the session's command was being stopped for
 * a caller that no longer waits for it (a cancel), or while what that
 * command started still hears the stop: it waits for the stop, bounded
 * by its grace, instead of failing busy. */
typedef struct
{
  TerretShellSession *self;     /* (owned) */
  TerretRequest *request;       /* (owned) */
  TerretRunPlan *plan;          /* (owned) */
  GCancellable *cancellable;    /* (owned) (nullable) */
  GAsyncReadyCallback callback;
  gpointer user_data;
  GMainContext *context;        /* (owned) */
} DeferredRun;

static gboolean
deferred_resume (gpointer data)
{
  DeferredRun *deferred = data;

  _terret_shell_session_run_async (deferred->self, deferred->request,
                                   g_steal_pointer (&deferred->plan), deferred->cancellable,
                                   deferred->callback, deferred->user_data);
  g_object_unref (deferred->self);
  g_object_unref (deferred->request);
  g_clear_object (&deferred->cancellable);
  g_main_context_unref (deferred->context);
  g_free (deferred);
  return G_SOURCE_REMOVE;
}

/* Called with the mutex held: the runs that waited go on, each on its
 * own context, once the session is free. */
static void
session_resume_deferred (TerretShellSession *self)
{
  DeferredRun *deferred;

  while ((deferred = g_queue_pop_head (&self->deferred)) != NULL)
    {
      g_autoptr(GSource) source = g_idle_source_new ();

      g_source_set_static_name (source, "[terret] run after a stop");
      g_source_set_callback (source, deferred_resume, deferred, NULL);
      g_source_attach (source, deferred->context);
    }
}

/* Once a cancelled command's jobs ended (or their grace did, and the
 * shell goes with them): the runs that waited go on. */
static gboolean
session_on_spared (gpointer user_data)
{
  TerretShellSession *self = user_data;
  TerretProcess *process = terret_shell_channel_get_process (self->channel);

  /* The watch stays until the shell is dealt with: a run that comes
   * meanwhile, from another thread, waits too. */
  if (process != NULL && _terret_process_is_sparing (process, NULL))
    {
      session_drop_sources (self);
      terret_shell_channel_terminate (self->channel);
      run_owe_notice (G_OBJECT (self), "What the cancelled command had started did not end "
                                       "within its grace; the shell session was ended with it, "
                                       "so this run started a fresh session.");
    }
  g_mutex_lock (&self->mutex);
  _terret_clear_source (&self->spared_source);
  _terret_clear_source (&self->spared_bound);
  session_resume_deferred (self);
  g_mutex_unlock (&self->mutex);
  return G_SOURCE_REMOVE;
}

/* The spared stop's watch, on @context: where the runs that wait for it
 * are dispatched (a sync run iterates a context of its own). */
static void
session_attach_spared (TerretShellSession *self,
                       GMainContext       *context)
{
  TerretProcess *process = terret_shell_channel_get_process (self->channel);
  gint64 left = (self->spared_deadline - g_get_monotonic_time ()) / 1000;

  _terret_clear_source (&self->spared_source);
  _terret_clear_source (&self->spared_bound);
  self->spared_source = _terret_process_create_spared_source (process);
  g_source_set_callback (self->spared_source, session_on_spared, self, NULL);
  g_source_attach (self->spared_source, context);
  self->spared_bound = g_timeout_source_new ((guint)CLAMP (left, 0, G_MAXUINT - SPARED_BOUND_MSEC) +
                                             SPARED_BOUND_MSEC);
  g_source_set_static_name (self->spared_bound, "[terret] spared stop's bound");
  g_source_set_callback (self->spared_bound, session_on_spared, self, NULL);
  g_source_attach (self->spared_bound, context);
}

/* Called with the mutex held. Whether the command that ended, cancelled,
 * left jobs that are still hearing the stop: the runs that come meanwhile
 * wait for their end, bounded by the grace. */
static gboolean
session_wait_spared (TerretShellSession *self)
{
  TerretProcess *process = terret_shell_channel_get_process (self->channel);

  if (self->spared_source != NULL)
    return TRUE;
  if (process == NULL || !_terret_process_is_sparing (process, &self->spared_deadline))
    return FALSE;
  session_attach_spared (self, self->context);
  return TRUE;
}

/* The session is free again before the run's outcome is returned,
 * because the caller's callback may start the next run at once. */
static void
run_finished (GObject        *session,
              TerretShellRun *run,
              TerretResult   *parked)
{
  TerretShellSession *self = TERRET_SHELL_SESSION (session);

  g_mutex_lock (&self->mutex);
  self->busy = FALSE;
  self->close_requested = FALSE;
  if (self->run == run)
    self->run = NULL;
  if (parked != NULL)
    {
      const char *command;

      g_set_object (&self->parked, parked);
      g_free (self->parked_command);
      _terret_shell_run_describe (run, &command, &self->parked_started, &self->parked_bytes,
                                  NULL);
      self->parked_command = g_strdup (command);
    }
  if (!session_wait_spared (self))
    session_resume_deferred (self);
  g_mutex_unlock (&self->mutex);
}

/* Whether the run waits for the stop in progress; then @plan is taken. */
static gboolean
session_defer (TerretShellSession  *self,
               TerretRequest       *request,
               TerretRunPlan       *plan,
               GCancellable        *cancellable,
               GAsyncReadyCallback  callback,
               gpointer             user_data)
{
  DeferredRun *deferred;

  g_mutex_lock (&self->mutex);
  if (self->spared_source == NULL &&
      (!self->busy || self->run == NULL || !_terret_shell_run_is_cancelled_stop (self->run)))
    {
      g_mutex_unlock (&self->mutex);
      return FALSE;
    }
  deferred = g_new0 (DeferredRun, 1);
  deferred->self = g_object_ref (self);
  deferred->request = g_object_ref (request);
  deferred->plan = plan;
  deferred->cancellable = cancellable != NULL ? g_object_ref (cancellable) : NULL;
  deferred->callback = callback;
  deferred->user_data = user_data;
  deferred->context = g_main_context_ref_thread_default ();
  g_queue_push_tail (&self->deferred, deferred);
  if (self->spared_source != NULL)
    session_attach_spared (self, deferred->context);
  g_mutex_unlock (&self->mutex);
  return TRUE;
}

static const TerretShellRunFuncs run_funcs = {
  run_adopt,
  run_drop_sources,
  run_start_shell,
  run_close_requested,
  run_owe_notice,
  run_finished,
};

/* --- Object -------------------------------------------------------------- */

static void
terret_shell_session_dispose (GObject *object)
{
  TerretShellSession *self = TERRET_SHELL_SESSION (object);

  session_drop_sources (self);
  _terret_clear_source (&self->spared_source);
  _terret_clear_source (&self->spared_bound);
  _terret_timers_clear (&self->timers);
  if (self->channel != NULL)
    terret_shell_channel_terminate (self->channel);

  G_OBJECT_CLASS (terret_shell_session_parent_class)->dispose (object);
}

static void
terret_shell_session_finalize (GObject *object)
{
  TerretShellSession *self = TERRET_SHELL_SESSION (object);

  g_clear_object (&self->channel);
  g_clear_object (&self->parked);
  g_clear_pointer (&self->parked_command, g_free);
  g_clear_pointer (&self->context, g_main_context_unref);
  g_clear_pointer (&self->pending_notice, g_free);
  g_clear_pointer (&self->read_buffer, g_free);
  g_clear_pointer (&self->key, g_free);
  _terret_spool_list_clear (&self->spools);
  g_mutex_clear (&self->mutex);

  G_OBJECT_CLASS (terret_shell_session_parent_class)->finalize (object);
}

static void
terret_shell_session_class_init (TerretShellSessionClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = terret_shell_session_dispose;
  object_class->finalize = terret_shell_session_finalize;
}

static void
terret_shell_session_init (TerretShellSession *self)
{
  g_mutex_init (&self->mutex);
  _terret_spool_list_init (&self->spools);
  _terret_timers_init (&self->timers, session_on_timer, self, "[terret] shell deadlines");
}

/*
 * _terret_shell_session_new:
 *
 * A session of @key over @channel; no shell runs until the first run,
 * which calls @start to have one started.
 */
TerretShellSession *
_terret_shell_session_new (TerretShellChannel   *channel,
                           const char           *key,
                           TerretShellStartFunc  start,
                           gpointer              start_data)
{
  TerretShellSession *self = g_object_new (TERRET_TYPE_SHELL_SESSION, NULL);

  self->channel = g_object_ref (channel);
  self->key = g_strdup (key);
  self->start = start;
  self->start_data = start_data;
  return self;
}

TerretShellChannel *
_terret_shell_session_get_channel (TerretShellSession *self)
{
  return self->channel;
}

const char *
_terret_shell_session_get_key (TerretShellSession *self)
{
  return self->key;
}

/* The shell's pid while it runs, or 0. */
GPid
_terret_shell_session_get_pid (TerretShellSession *self)
{
  TerretProcess *process = terret_shell_channel_get_process (self->channel);

  if (process == NULL || terret_process_get_exited (process, NULL))
    return 0;
  return terret_process_get_pid (process);
}

/*
 * _terret_shell_session_describe:
 *
 * The session as a list shows it: idle, a command running (its run waits
 * for it) or detached, or a detached command's end waiting for a poll;
 * @with_pid: its shell's pid names a process on this host.
 */
TerretSessionInfo *
_terret_shell_session_describe (TerretShellSession *self,
                                gboolean            with_pid)
{
  g_autoptr(GDateTime) started = NULL;
  g_autofree char *command = NULL;
  TerretSessionState state = TERRET_SESSION_STATE_IDLE;
  TerretInputWait input = { TERRET_INPUT_STATE_UNKNOWN, NULL, -1, FALSE, FALSE };
  TerretSessionInfo *info;
  gint64 started_usec = 0;
  guint64 bytes = 0;

  g_mutex_lock (&self->mutex);
  if (self->run != NULL)
    {
      const char *run_command;

      _terret_shell_run_describe (self->run, &run_command, &started_usec, &bytes, &input);
      command = g_strdup (run_command);
      state = _terret_shell_run_is_detached (self->run) ? TERRET_SESSION_STATE_DETACHED
                                                        : TERRET_SESSION_STATE_RUNNING;
    }
  else if (self->parked != NULL)
    {
      command = g_strdup (self->parked_command);
      started_usec = self->parked_started;
      bytes = self->parked_bytes;
      state = TERRET_SESSION_STATE_ENDED;
      /* It ended: it waits for nothing. */
      input.state = TERRET_INPUT_STATE_NOT_WAITING;
    }
  g_mutex_unlock (&self->mutex);

  if (command != NULL)
    started = _terret_date_time_from_usec (started_usec);
  info = terret_session_info_new (self->key, state, command, started,
                                  with_pid ? _terret_shell_session_get_pid (self) : 0, bytes);
  terret_session_info_set_input (info, input.state, input.prompt, input.secret, input.pager,
                                 input.since);
  _terret_input_wait_clear (&input);
  return info;
}

/* --- Running --------------------------------------------------------------- */

/* Between runs: drops what background jobs printed, and finds out whether
 * the shell is still there. Returns FALSE when it is gone. */
static gboolean
session_check_idle (TerretShellSession *self)
{
  TerretProcess *process = terret_shell_channel_get_process (self->channel);

  if (process == NULL || terret_process_check_exited (process))
    return FALSE;

  return session_drain (self, g_get_monotonic_time () + DRAIN_BUDGET_USEC);
}

/*
 * _terret_shell_session_run_async:
 *
 * Runs @request's command in the session's shell, starting the shell
 * first if there is none (or the previous one ended), by @plan (taken):
 * its timeout, capture and grace for this run, its settings' shell,
 * environment and cwd for a shell started now. The run happens on the
 * caller's thread-default main context.
 */
void
_terret_shell_session_run_async (TerretShellSession  *self,
                                 TerretRequest       *request,
                                 TerretRunPlan       *plan,
                                 GCancellable        *cancellable,
                                 GAsyncReadyCallback  callback,
                                 gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(TerretResult) parked = NULL;
  g_autofree char *pending_notice = NULL;
  g_autoptr(TerretRunPlan) owned_plan = NULL;
  g_autoptr(TerretSpool) spool = NULL;
  g_autoptr(GError) error = NULL;
  TerretShellRun *run;

  if (session_defer (self, request, plan, cancellable, callback, user_data))
    return;
  owned_plan = plan;
  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, _terret_shell_session_run_async);

  if (g_task_return_error_if_cancelled (task))
    return;

  g_mutex_lock (&self->mutex);
  if (self->busy)
    {
      gboolean detached = self->run != NULL && _terret_shell_run_is_detached (self->run);

      g_mutex_unlock (&self->mutex);
      if (detached)
        g_task_return_new_error (task, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY,
                                 "Session “%s” is running a command a timeout detached from; poll "
                                 "it, send it input or interrupt it, and run again once it ended",
                                 self->key);
      else
        g_task_return_new_error (task, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY,
                                 "Session “%s” is already running a command", self->key);
      return;
    }
  self->busy = TRUE;
  self->close_requested = FALSE;
  pending_notice = g_steal_pointer (&self->pending_notice);
  parked = g_steal_pointer (&self->parked);
  g_mutex_unlock (&self->mutex);

  /* The full-output file, before anything runs: a run that asked for one
   * and cannot have it fails as not run. */
  spool = _terret_run_plan_open_spool (plan, ".out", &error);
  if (spool == NULL && error != NULL)
    {
      g_mutex_lock (&self->mutex);
      self->busy = FALSE;
      g_mutex_unlock (&self->mutex);
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  if (spool != NULL)
    _terret_spool_list_add (&self->spools, spool);

  if (self->read_buffer == NULL)
    self->read_buffer = g_malloc (TERRET_SHELL_READ_CHUNK);

  {
    const TerretShellRunHost host = {
      &run_funcs, G_OBJECT (self), self->key, self->channel, &self->state, &self->timers,
      self->read_buffer,
    };

    run = _terret_shell_run_new (&host, g_steal_pointer (&task), request,
                                 g_steal_pointer (&owned_plan), cancellable,
                                 g_steal_pointer (&spool));
  }
  g_mutex_lock (&self->mutex);
  self->run = run;
  g_mutex_unlock (&self->mutex);

  _terret_shell_run_add_notice (run, pending_notice);
  if (parked != NULL)
    {
      g_autofree char *notice = _terret_detach_describe_parked (parked);

      _terret_shell_run_add_notice (run, notice);
    }

  if (terret_shell_channel_is_open (self->channel) && !session_check_idle (self))
    {
      session_drop_sources (self);
      terret_shell_channel_terminate (self->channel);
      _terret_shell_run_add_notice (run, "The shell session had exited; a fresh one was started, "
                                         "so the cwd and variables from earlier runs are gone.");
    }

  _terret_shell_run_begin (run);
}

TerretResult *
_terret_shell_session_run_finish (TerretShellSession  *self,
                                  GAsyncResult        *result,
                                  GError             **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* --- Interacting ----------------------------------------------------------- */

/* The run a caller may talk to, or NULL with the error that says why. */
static TerretShellRun *
session_get_command (TerretShellSession  *self,
                     const char          *what,
                     GError             **error)
{
  TerretShellRun *run = session_current_run (self);

  if (run == NULL)
    g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                 "Nothing is running in session “%s” to %s", self->key, what);
  return run;
}

/*
 * _terret_shell_session_send_input:
 *
 * Writes @data to the terminal of the command running in the session,
 * behind anything written before and without blocking. The terminal is
 * raw, so the bytes reach the command as they are; its special characters
 * still work (0x03 is an interrupt). Input sent while the shell is still
 * starting follows the command. Called on the thread of the session's
 * context.
 */
gboolean
_terret_shell_session_send_input (TerretShellSession  *self,
                                  GBytes              *data,
                                  GError             **error)
{
  const guint8 *bytes;
  gsize len = 0;
  TerretShellRun *run;

  if ((run = session_get_command (self, "send input to", error)) == NULL)
    return FALSE;

  bytes = g_bytes_get_data (data, &len);
  _terret_shell_run_send_input (run, bytes, len);
  return TRUE;
}

/*
 * _terret_shell_session_interrupt:
 *
 * Types ^C into the terminal of the command running in the session. A
 * command that ends on it completes with status 130 (or its own); one
 * that reacts by writing output goes on; one that stays silent and
 * running for interrupt-grace seconds is killed with the shell.
 */
gboolean
_terret_shell_session_interrupt (TerretShellSession  *self,
                                 GError             **error)
{
  TerretShellRun *run;

  if ((run = session_get_command (self, "interrupt", error)) == NULL)
    return FALSE;

  _terret_shell_run_interrupt (run);
  return TRUE;
}

/*
 * _terret_shell_session_poll_async:
 *
 * Collects the output of a command a timeout detached from (see
 * [method@Terret.Executor.poll_async]).
 */
void
_terret_shell_session_poll_async (TerretShellSession  *self,
                                  double               wait,
                                  GCancellable        *cancellable,
                                  GAsyncReadyCallback  callback,
                                  gpointer             user_data)
{
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  TerretResult *parked;
  TerretShellRun *run;

  g_task_set_source_tag (task, _terret_shell_session_poll_async);

  if (g_task_return_error_if_cancelled (task))
    return;

  g_mutex_lock (&self->mutex);
  parked = g_steal_pointer (&self->parked);
  run = self->run;
  g_mutex_unlock (&self->mutex);

  if (parked != NULL)
    g_task_return_pointer (task, parked, g_object_unref);
  else if (run == NULL)
    _terret_detach_return_no_command (task, self->key);
  else
    _terret_shell_run_poll (run, task, wait, cancellable);
}

TerretResult *
_terret_shell_session_poll_finish (TerretShellSession  *self,
                                   GAsyncResult        *result,
                                   GError             **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* --- Closing ---------------------------------------------------------------- */

/* The stop's account of what it signalled, once nothing of the shell is
 * left (bounded by the grace): into @stopped, but the shell itself. */
static void
session_account_stopped (TerretProcess *process,
                         double         grace,
                         GPtrArray     *stopped)
{
  g_autoptr(GArray) signalled = NULL;

  _terret_process_wait_gone (process, (int)(grace * 1000) + CLOSE_BOUND_MSEC);
  signalled = _terret_process_get_stopped (process);
  for (guint i = 0; i < signalled->len; i++)
    {
      const TerretStopped *entry = &g_array_index (signalled, TerretStopped, i);

      if (entry->is_process)
        continue;
      g_ptr_array_add (stopped, terret_stopped_process_new (entry->pid,
                                                            entry->command != NULL ? entry->command : "",
                                                            _terret_stop_signal_from_signum (entry->signum)));
    }
}

static void session_close (TerretShellSession *self);

/*
 * _terret_shell_session_close:
 *
 * Ends the session's shell and everything it started: bash is asked to
 * exit and given about a second, then everything is killed, so no
 * background job survives. Safe from any thread and on a session with no
 * shell. A run in flight is ended at once instead, with no status and a
 * notice saying the session was closed. The session can run commands
 * again afterwards, in a fresh shell. Its full-output files are removed,
 * but for those a caller took. With @stopped, waits for the close's end
 * (bounded by its grace) and adds what it had to stop.
 */
void
_terret_shell_session_close (TerretShellSession *self,
                             GPtrArray          *stopped)
{
  g_autoptr(TerretProcess) process = NULL;

  if (self->channel != NULL && terret_shell_channel_get_process (self->channel) != NULL)
    process = g_object_ref (terret_shell_channel_get_process (self->channel));
  if (stopped != NULL && process != NULL)
    _terret_process_take_account (process, ACCOUNT_BOUND_MSEC);
  session_close (self);
  if (stopped != NULL && process != NULL)
    session_account_stopped (process, self->stop_grace, stopped);
}

static void
session_close (TerretShellSession *self)
{
  g_mutex_lock (&self->mutex);
  if (self->busy && self->run != NULL && _terret_shell_run_is_detached (self->run))
    {
      TerretShellRun *run = self->run;

      /* A detached command: no run call waits on its context, which may
       * never be iterated again (a sync run's), so it ends here. */
      self->close_requested = TRUE;
      g_mutex_unlock (&self->mutex);
      g_object_ref (self);
      _terret_shell_run_ended (run);
      g_mutex_lock (&self->mutex);
      g_clear_object (&self->parked);
      g_clear_pointer (&self->parked_command, g_free);
      g_mutex_unlock (&self->mutex);
      _terret_spool_list_remove_all (&self->spools);
      g_object_unref (self);
      return;
    }
  if (self->busy)
    {
      TerretProcess *process = terret_shell_channel_get_process (self->channel);

      self->close_requested = TRUE;
      g_mutex_unlock (&self->mutex);
      /* As a terminal that closes: the run ends when its shell has. */
      if (self->stop_grace > 0 && process != NULL)
        _terret_process_stop (process, self->stop_grace, 0, TERRET_WIRE_STOP_CLOSE);
      else
        terret_shell_channel_kill (self->channel);
      _terret_spool_list_remove_all (&self->spools);
      return;
    }
  /* Claimed for the farewell, so that a run arriving meanwhile is refused
   * rather than interleaved with it. */
  self->busy = TRUE;
  g_clear_pointer (&self->pending_notice, g_free);
  g_clear_object (&self->parked);
  g_clear_pointer (&self->parked_command, g_free);
  g_mutex_unlock (&self->mutex);

  session_drop_sources (self);
  _terret_shell_farewell (self->channel, self->stop_grace);
  _terret_shell_state_forget (&self->state);

  g_mutex_lock (&self->mutex);
  self->busy = FALSE;
  g_mutex_unlock (&self->mutex);

  /* The session's full-output files go with it, but for those a caller
   * took. */
  _terret_spool_list_remove_all (&self->spools);
}
