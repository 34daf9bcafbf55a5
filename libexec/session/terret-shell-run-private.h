/* terret-shell-run-private.h: one run of a session, as the session drives it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

#include "terret-launcher.h"
#include "terret-result-input-private.h"
#include "terret-run-plan-private.h"
#include "terret-shell-channel.h"
#include "terret-shell-state-private.h"
#include "terret-timers-private.h"

G_BEGIN_DECLS

typedef struct _TerretShellRun TerretShellRun;

/* What a run needs of the session it runs in, and where it reports; the
 * run knows nothing else of it. @session is the object handed to
 * _terret_shell_run_new(). */
typedef struct
{
  /* Puts the session's sources (the shell's output and exit, the
   * timers) on @context, creating those the current shell needs. */
  void            (*adopt)           (GObject         *session,
                                      GMainContext    *context);
  /* The shell is going: the sources that watch it go first. */
  void            (*drop_sources)    (GObject         *session);
  /* A launcher for a new shell, from @settings; may adjust the
   * handshake's budget. */
  TerretLauncher *(*start_shell)     (GObject         *session,
                                      TerretSettings  *settings,
                                      double          *handshake_timeout,
                                      GError         **error);
  /* Whether the session was closed while the run was in flight. */
  gboolean        (*close_requested) (GObject         *session);
  /* @notice is owed to the session's next run. */
  void            (*owe_notice)      (GObject         *session,
                                      const char      *notice);
  /* The run is over: the session is free again. @parked, when not NULL,
   * is the end of a detached command nobody waits for, to keep for the
   * next poll. Called before the run's outcome is returned. */
  void            (*finished)        (GObject         *session,
                                      TerretShellRun  *run,
                                      TerretResult    *parked);
} TerretShellRunFuncs;

/* The size of the read buffer a session lends its runs. */
#define TERRET_SHELL_READ_CHUNK (64 * 1024)

/* What a session lends each of its runs. Each run holds a reference on
 * @session, which owns the rest. */
typedef struct
{
  const TerretShellRunFuncs *funcs;
  GObject *session;
  const char *key;                    /* the session's key, for messages */
  TerretShellChannel *channel;
  TerretShellState *state;            /* the current shell's */
  TerretTimers *timers;               /* slots TERRET_SHELL_TIMER_* below */
  guint8 *read_buffer;                /* TERRET_SHELL_READ_CHUNK bytes */
} TerretShellRunHost;

/* The run's deadlines, on the session's timers. */
enum
{
  TERRET_SHELL_TIMER_DEADLINE,        /* the exchange's timeout */
  TERRET_SHELL_TIMER_EXIT_GRACE,      /* the shell ended: the last output's grace */
  TERRET_SHELL_TIMER_ESCALATE,        /* an interrupt's grace */
  TERRET_SHELL_TIMER_POLL,            /* a poll's wait */
  TERRET_SHELL_TIMER_HARD,            /* the request's deadline, detached or not */
  TERRET_SHELL_TIMER_IDLE,            /* the request's idle timeout */
  TERRET_SHELL_TIMER_QUIET,           /* the output went quiet: does the command wait for input? */
};

TerretShellRun *_terret_shell_run_new         (const TerretShellRunHost *host,
                                               GTask                    *task,
                                               TerretRequest            *request,
                                               TerretRunPlan            *plan,
                                               GCancellable             *cancellable,
                                               TerretSpool              *spool);
void            _terret_shell_run_add_notice  (TerretShellRun           *run,
                                               const char               *notice);
void            _terret_shell_run_begin       (TerretShellRun           *run);
gboolean        _terret_shell_run_is_detached (TerretShellRun           *run);
void            _terret_shell_run_describe    (TerretShellRun           *run,
                                               const char              **command,
                                               gint64                   *started,
                                               guint64                  *output_bytes,
                                               TerretInputWait          *input);
void            _terret_shell_run_poll        (TerretShellRun           *run,
                                               GTask                    *task,
                                               double                    wait,
                                               GCancellable             *cancellable);
void            _terret_shell_run_send_input  (TerretShellRun           *run,
                                               const guint8             *data,
                                               gsize                     len);
void            _terret_shell_run_interrupt   (TerretShellRun           *run);
gboolean        _terret_shell_run_is_cancelled_stop (TerretShellRun     *run);
void            _terret_shell_run_ended       (TerretShellRun           *run);
void            _terret_shell_run_on_readable (TerretShellRun           *run);
void            _terret_shell_run_on_exited   (TerretShellRun           *run);
void            _terret_shell_run_on_timer    (TerretShellRun           *run,
                                               guint                     which);

G_END_DECLS
