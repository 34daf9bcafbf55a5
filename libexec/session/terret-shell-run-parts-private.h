/* terret-shell-run-parts-private.h: what the files of a run share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A run is written by concern, in layers that call only downwards, top
 * first: terret-shell-run-clocks.c, the session's timers as they reach
 * the run; terret-shell-run.c drives its exchanges (the terminal read,
 * markers, cancellation) and decides how each ends;
 * terret-shell-run-input.c, a command waiting for input;
 * terret-shell-run-output.c turns what the terminal carried into output
 * and results; terret-shell-run-outcome.c hands the outcome over (or
 * the command back, detached); terret-shell-run-stop.c, the graceful
 * stop; terret-shell-run-terminal.c writes to the shell's terminal and
 * ends the shell. The one call upwards, a terminal found gone, goes
 * through the run's on_gone.
 */

#pragma once

#include "terret-capture-private.h"
#include "terret-detach-private.h"
#include "terret-input-wait-private.h"
#include "terret-shell-run-private.h"

G_BEGIN_DECLS

typedef enum
{
  EXCHANGE_HANDSHAKE,           /* a new shell started, and its set-up (or its modes) */
  EXCHANGE_SETUP,               /* the set-up, after a remote terminal's modes */
  EXCHANGE_RECOVERY,            /* the harness step alone, after an abandoned line */
  EXCHANGE_COMMAND,
} ExchangeKind;

/* What a graceful stop of the command is for (terret-shell-run-stop.c). */
typedef enum
{
  SHELL_STOP_NONE,
  SHELL_STOP_TIMEOUT,
  SHELL_STOP_DEADLINE,
  SHELL_STOP_IDLE,
  SHELL_STOP_CANCELLED,
} ShellStop;

struct _TerretShellRun
{
  TerretShellRunHost host;      /* the session's; host.session (owned) */
  GMainContext *context;        /* (owned) (nullable) where the session's sources are */
  GTask *task;                  /* (owned) (nullable) once detached */
  TerretRequest *request;       /* (owned) */
  TerretRunPlan *plan;          /* (owned) */
  gint64 started;               /* wall-clock time of the run's start, for a list */
  gint64 began;                 /* monotonic time the command was first sent */
  gint64 last_output;           /* monotonic time of the command's last byte, or its start */
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
  int status;                   /* from the marker; -1: none yet, -2: a stale, mangled or
                                 * unexpanded one, -3: a shell exec'd in its place */
  TerretMarker marker;          /* the exchange's, once found */
  TerretLimits limits_before;   /* what the shell's cgroup had refused before the command */

  TerretDetach detach;
  TerretInputWatch *input;      /* (owned) (nullable) where the terminal can be looked at */
  guint interrupt_requested : 1;  /* before the command was written */
  guint interrupt_written : 1;
  guint escalated : 1;
  guint shell_ended : 1;
  guint recovering : 1;         /* the command's outcome comes from a recovery */
  guint careful : 1;            /* the exchange took the careful path */
  guint resent : 1;             /* the command was sent again once, not having run */
  guint left_open : 1;          /* bash asked for more of the command: it goes into an eval */
  guint take_back : 1;          /* the reader owes bash the ^C that takes it back */
  guint clocks_armed : 1;       /* the deadline and idle timeout run from the command's start */
  ShellStop stop;               /* a graceful stop runs, and why */
  TerretProcess *stop_process;  /* (owned) (nullable) the shell it stops, whose account it reads */
  /* What the run does when its writer finds the terminal gone: a call
   * upwards, so the lowest layer needs nothing above it. */
  void (*on_gone) (TerretShellRun *run);
};

/* terret-shell-run.c */
void                 _terret_shell_run_start          (TerretShellRun *run,
                                                       ExchangeKind    kind);
void                 _terret_shell_run_fail_handshake (TerretShellRun *run,
                                                       const char     *why);

/* terret-shell-run-input.c */
void                 _terret_shell_run_input_begin    (TerretShellRun *run);
gboolean             _terret_shell_run_input_look     (TerretShellRun *run);
void                 _terret_shell_run_input_output   (TerretShellRun *run,
                                                       const guint8   *data,
                                                       gsize           len);
void                 _terret_shell_run_on_quiet       (TerretShellRun *run);

/* terret-shell-run-terminal.c */
gboolean             _terret_shell_run_flush          (TerretShellRun *run);
void                 _terret_shell_run_queue_input    (TerretShellRun *run,
                                                       const guint8   *data,
                                                       gsize           len);
void                 _terret_shell_run_send_interrupt_now (TerretShellRun *run);
void                 _terret_shell_run_kill_shell     (TerretShellRun *run);

/* terret-shell-run-stop.c */
gboolean             _terret_shell_run_stop           (TerretShellRun *run,
                                                       ShellStop       why);
void                 _terret_shell_run_stop_outcome   (TerretShellRun *run,
                                                       TerretResult  **result,
                                                       GError        **error);

/* terret-shell-run-stuck.c */
char                *_terret_shell_run_describe_stuck (TerretShellChannel *channel);

/* terret-shell-run-outcome.c */
void                 _terret_shell_run_return         (TerretShellRun *run,
                                                       TerretResult   *result,
                                                       GError         *error);
void                 _terret_shell_run_detach         (TerretShellRun *run,
                                                       TerretClock     clock,
                                                       double          seconds);

/* terret-shell-run-output.c */
gboolean             _terret_shell_run_feed           (TerretShellRun *run,
                                                       const guint8   *data,
                                                       gsize           len);
GBytes              *_terret_shell_run_take_partial   (TerretShellRun *run,
                                                       guint64        *dropped,
                                                       gsize          *cut);
TerretResult        *_terret_shell_run_finish_capture (TerretShellRun *run);
TerretResult        *_terret_shell_run_partial_result (TerretShellRun *run);
TerretResult        *_terret_shell_run_take_stretch   (gpointer        run);
gboolean             _terret_shell_run_has_news       (gpointer        run);
char                *_terret_shell_run_describe_end   (TerretShellRun *run,
                                                       TerretResult   *result);
TerretLimits         _terret_shell_run_limits_hit     (TerretShellRun *run);
gboolean             _terret_shell_run_note_limits    (TerretShellRun *run,
                                                       TerretResult   *result,
                                                       int             wait_status);
void                 _terret_shell_run_strip_exit_echo (TerretShellRun *run,
                                                       TerretResult   *result);
void                 _terret_shell_run_input_note     (TerretShellRun *run,
                                                       TerretResult   *result,
                                                       gboolean        running);
gboolean             _terret_shell_run_input_news     (TerretShellRun *run);

G_END_DECLS
