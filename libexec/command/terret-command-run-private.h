/* terret-command-run-private.h: one command's process, read to its end
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

#include "terret-detach-private.h"
#include "terret-launcher-link-private.h"
#include "terret-run-plan-private.h"
#include "terret-session-info.h"

G_BEGIN_DECLS

/* Why a run stopped before its command ended on its own. The first reason
 * wins: a run that timed out and is then closed still timed out. */
typedef enum
{
  RUN_END_NONE,
  RUN_END_TIMEOUT,
  RUN_END_CANCELLED,
  RUN_END_CLOSED,
  RUN_END_INTERRUPTED,          /* still running when the interrupt grace ran out */
  RUN_END_DEADLINE,             /* the request's deadline passed */
  RUN_END_IDLE,                 /* no output for the request's idle timeout */
} RunEnd;

enum
{
  COMMAND_TIMER_TIMEOUT,
  COMMAND_TIMER_DRAIN,
  COMMAND_TIMER_ESCALATE,
  COMMAND_TIMER_POLL,
  COMMAND_TIMER_DEADLINE,       /* the request's hard end, detached or not */
  COMMAND_TIMER_IDLE,           /* the request's idle timeout */
};

typedef struct _CommandRun CommandRun;

/* What a run asks of its owner, the executor, without knowing it (as
 * terret-detach.c's engines do). */
typedef struct
{
  /* Fills in what the run's process starts: @argv and @launcher. */
  gboolean (*prepare) (gpointer         owner,
                       TerretRequest   *request,
                       TerretLauncher  *launcher,
                       GPtrArray       *argv,
                       GError         **error);
  /* The run is over and leaves the owner's runs; @parked, when not NULL,
   * is a detached command's end that nobody waits for. */
  void     (*ended)   (gpointer         owner,
                       CommandRun      *run,
                       TerretResult    *parked);
  /* Ends what the run's process contains: the engine's stop policy. */
  void     (*stop)    (gpointer         owner,
                       TerretProcess   *process);
} TerretCommandRunFuncs;

typedef struct
{
  CommandRun *run;              /* (unowned) the run this stream belongs to */
  TerretStream stream;
  int fd;                       /* -1 once closed */
  GSource *source;              /* (owned) (nullable) */
  TerretStreamCapture *capture; /* (owned) */
  GByteArray *line;             /* (owned) (nullable) partial line, when framing */
  gsize carry;                  /* bytes of the capture carried over from the last stretch */
  guint64 offset;               /* the stream offset of the capture's first byte */
  TerretSpool *spool;           /* (owned) (nullable) every byte of the stream */
} RunStream;

struct _CommandRun
{
  const TerretCommandRunFuncs *funcs;
  gpointer owner;                   /* (unowned) the task holds a reference */
  GTask *task;                      /* (owned) (nullable) once detached */
  TerretRequest *request;           /* (owned) */
  TerretRunPlan *plan;              /* (owned) */
  char *session;                    /* (owned) */
  gint64 started;                   /* wall-clock time of its start, for a list */
  GMainContext *context;            /* (owned) */

  TerretProcess *process;           /* (owned) (nullable) until spawned */
  GSource *exit_source;             /* (owned) (nullable) */
  GSource *gone_source;             /* (owned) (nullable) */
  GSource *cancel_source;           /* (owned) (nullable) */
  TerretTimers timers;
  TerretDetach detach;

  int wait_status;
  gint64 last_output;               /* monotonic time of its last byte, or its start */
  RunEnd end;
  guint exited : 1;                 /* the shell ended */
  guint far : 1;                    /* it runs on a far side, whose pids name nothing here */
  guint exited_on_its_own : 1;      /* ... before anything stopped the run */
  guint kill_sent : 1;              /* its unit was told to end what is left */
  guint anyone_left : 1;            /* ... while something was still there */
  guint stop_sent : 1;              /* its unit runs the stop sequence, which ends in the sweep */

  /* Said at the start of the next result, e.g. a dropped parked end. */
  GString *notices;                 /* (owned) */

  RunStream streams[2];
  guint8 *buffer;                   /* (owned) */
};

CommandRun *_terret_command_run_new    (const TerretCommandRunFuncs *funcs,
                                        gpointer                owner,
                                        GTask                  *task,
                                        TerretRequest          *request,
                                        TerretRunPlan          *plan);
void        _terret_command_run_free   (CommandRun             *run);
gboolean    _terret_command_run_spawn  (CommandRun             *run,
                                        TerretLauncherLink     *launcher_link,
                                        GCancellable           *cancellable,
                                        GError                **error);
void        _terret_command_run_stop   (CommandRun             *run,
                                        RunEnd                  end);
void        _terret_command_run_end_now (CommandRun            *run);
void        _terret_command_run_interrupt (CommandRun          *run);
gboolean    _terret_command_run_in_session (CommandRun         *run,
                                            const char         *session);
TerretSessionInfo *_terret_command_run_describe (CommandRun   *run,
                                                 TerretSessionState state);

G_END_DECLS
