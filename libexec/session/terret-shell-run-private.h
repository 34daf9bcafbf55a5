/* terret-shell-run-private.h: a session's state, and the run in flight
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Shared by terret-shell-session.c (the session: runs start, input,
 * interrupts, polls, closing) and terret-shell-run.c (the run engine:
 * exchanges with the shell, reading, completing).
 */

#pragma once

#include "terret-detach-private.h"
#include "terret-shell-protocol-private.h"
#include "terret-shell-session-private.h"
#include "terret-timers-private.h"

G_BEGIN_DECLS

/* The run's deadlines, on the session's timers. */
enum
{
  TIMER_DEADLINE,               /* the exchange's timeout */
  TIMER_EXIT_GRACE,             /* the shell ended: the last output's grace */
  TIMER_ESCALATE,               /* an interrupt's grace */
  TIMER_POLL,                   /* a poll's wait */
};

typedef enum
{
  EXCHANGE_HANDSHAKE,           /* a new shell's set-up */
  EXCHANGE_RECOVERY,            /* the harness step alone, after an abandoned line */
  EXCHANGE_COMMAND,
} ExchangeKind;

typedef struct _ShellRun ShellRun;

struct _TerretShellSession
{
  GObject parent_instance;

  TerretShellChannel *channel;  /* (owned) */
  char *key;                    /* (owned) the session key, for messages */
  TerretShellStartFunc start;
  gpointer start_data;

  /* The current shell's protocol state; touched only by the run in
   * flight, one at a time. */
  TerretProtocolKey protocol;
  guint64 exchange;             /* the last exchange sent */
  guint careful : 1;            /* state is set aside: the next request puts it back */
  guint always_careful : 1;     /* functions, aliases or sourced code may change state */
  guint verbose : 1;            /* verbose is set aside: the harness runs apart */
  guint needs_recovery : 1;     /* the shell must meet the careful harness first */

  /* Read buffer and sources, kept from run to run on the context of the
   * last one, so a round trip attaches and destroys nothing. */
  guint8 *read_buffer;          /* (owned) (nullable) */
  GMainContext *context;        /* (owned) (nullable) */
  GSource *read_source;         /* (owned) (nullable) */
  GSource *exit_source;         /* (owned) (nullable) */
  TerretTimers timers;

  /* Guards everything below: runs, closes and input may come from
   * different threads. Never held across I/O. */
  GMutex mutex;
  char *pending_notice;         /* (owned) (nullable) for the next run */
  ShellRun *run;                /* (unowned) (nullable) the run in flight or detached */
  TerretResult *parked;         /* (owned) (nullable) a detached end nobody polled */
  TerretSpoolList spools;       /* full-output files, removed when the session closes */
  guint busy : 1;
  guint close_requested : 1;
};

struct _ShellRun
{
  TerretShellSession *session;  /* (owned) */
  GTask *task;                  /* (owned) (nullable) once detached */
  TerretRequest *request;       /* (owned) */
  TerretRunPlan *plan;          /* (owned) */
  GCancellable *cancellable;    /* (owned) (nullable) */
  GSource *cancel_source;       /* (owned) (nullable) */
  GSource *write_source;        /* (owned) (nullable) while the terminal is full */

  ExchangeKind kind;
  guint64 expected;             /* the exchange whose marker ends it */
  double handshake_timeout;
  GString *notices;             /* (owned) */

  GByteArray *out;              /* (owned) what is still to be written */
  gsize out_pos;
  gsize interrupt_end;          /* an interrupt is queued up to here in @out (0: none) */
  GByteArray *early_input;      /* (owned) (nullable) input before the command started */

  GByteArray *hold;             /* (owned) read, not yet known to be output */
  TerretStreamCapture *capture; /* (owned) confirmed output */
  TerretStreamCapture *command_capture; /* (owned) (nullable) the command's, while a recovery runs */
  TerretSpool *spool;           /* (owned) (nullable) every byte of the command's output */
  guint64 stretch_start;        /* the output's offset where the capture's stretch begins */
  int status;                   /* from the marker; -1: none yet, -2: a stale one */
  TerretMarker marker;          /* the exchange's, once found */
  TerretLimits limits_before;   /* what the shell's cgroup had refused before the command */

  TerretDetach detach;
  guint interrupt_requested : 1;  /* before the command was written */
  guint interrupt_written : 1;
  guint escalated : 1;
  guint shell_ended : 1;
  guint recovering : 1;         /* the command's outcome comes from a recovery */
  guint careful : 1;            /* the exchange took the careful path */
};

/* terret-shell-run.c */
ShellRun *_terret_shell_run_new         (TerretShellSession *session,
                                         GTask              *task,
                                         TerretRequest      *request,
                                         TerretRunPlan      *plan,
                                         GCancellable       *cancellable,
                                         TerretSpool        *spool);
void      _terret_shell_run_free        (ShellRun           *run);
void      _terret_shell_run_add_notice  (ShellRun           *run,
                                         const char         *notice);
void      _terret_shell_run_start       (ShellRun           *run,
                                         ExchangeKind        kind);
void      _terret_shell_run_return      (ShellRun           *run,
                                         TerretResult       *result,
                                         GError             *error);
void      _terret_shell_run_ended       (ShellRun           *run);
void      _terret_shell_run_queue_input (ShellRun           *run,
                                         const guint8       *data,
                                         gsize               len);
void      _terret_shell_run_interrupt   (ShellRun           *run);
void      _terret_shell_session_adopt   (TerretShellSession *session,
                                         GMainContext       *context);
void      _terret_shell_session_drop_sources (TerretShellSession *session);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ShellRun, _terret_shell_run_free)

G_END_DECLS
