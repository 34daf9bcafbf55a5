/* terret-detach-private.h: a command a timeout detached from, and its polls
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

#include "terret-result.h"
#include "terret-timers-private.h"

G_BEGIN_DECLS

/* What a detached command's engine supplies: the session engine keeps
 * the head of one terminal stream, the command engine the tails of two
 * pipes; the bookkeeping around them is the same and lives here. */
typedef struct
{
  /* The output since the last result, as the result of a command that
   * goes on; the next stretch starts empty. */
  TerretResult *(*take_stretch) (gpointer run);
  /* Whether a poll has anything to return yet. */
  gboolean      (*has_news)     (gpointer run);
  /* Reads what is there already; FALSE when that ended the run, whose
   * outcome then went to the poll in flight. */
  gboolean      (*read_pending) (gpointer run);
  /* Moves the run's sources to @context, the poller's. */
  void          (*adopt)        (gpointer      run,
                                 GMainContext *context);
} TerretDetachFuncs;

typedef struct
{
  const TerretDetachFuncs *funcs;
  gpointer run;
  TerretTimers *timers;         /* (unowned) the run's */
  guint poll_timer;             /* the slot of a poll's wait in @timers */
  GTask *poll_task;             /* (owned) (nullable) */
  GSource *poll_cancel;         /* (owned) (nullable) */
  guint detached : 1;
} TerretDetach;

void          _terret_detach_init            (TerretDetach            *detach,
                                              const TerretDetachFuncs *funcs,
                                              gpointer                 run,
                                              TerretTimers            *timers,
                                              guint                    poll_timer);
void          _terret_detach_clear           (TerretDetach            *detach);
TerretResult *_terret_detach_begin           (TerretDetach            *detach,
                                              TerretClock              clock,
                                              double                   seconds,
                                              const char              *session_key,
                                              gboolean                 takes_input);
void          _terret_detach_poll            (TerretDetach            *detach,
                                              GTask                   *task,
                                              double                   wait,
                                              GCancellable            *cancellable);
void          _terret_detach_news            (TerretDetach            *detach);
void          _terret_detach_poll_timed_out  (TerretDetach            *detach);
GTask        *_terret_detach_steal_poll      (TerretDetach            *detach);
char         *_terret_detach_describe_parked (TerretResult            *parked);

/* The errors every engine gives a poll that cannot be served. */
void          _terret_detach_return_no_command (GTask                 *task,
                                                const char            *session_key);
void          _terret_detach_return_not_detached (GTask               *task,
                                                  const char          *session_key);
void          _terret_detach_return_poll_busy (GTask                  *task,
                                               const char             *session_key);

G_END_DECLS
