/* terret-run-plan-private.h: a request resolved against the settings, once
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "terret-capture-private.h"
#include "terret-common-settings-private.h"
#include "terret-process.h"
#include "terret-request.h"
#include "terret-result.h"
#include "terret-spool-private.h"
#include "terret-timers-private.h"

G_BEGIN_DECLS

/* What one run goes by: its request resolved against the settings it
 * started with, when it starts, so that both engines read one answer
 * (the request's value, else the setting's) instead of asking each time.
 * Owned by the run; never changed once made. */
typedef struct
{
  TerretSettings *settings;     /* (owned) everything else the run reads */
  double timeout;               /* seconds, > 0: the request's, else the setting;
                                 * a return-after is a timeout that detaches */
  TerretTimeoutAction timeout_action;
  TerretClock timeout_clock;    /* what the timeout is called: timeout, or return-after */
  double deadline;              /* seconds from the command's start; 0: none */
  double idle_timeout;          /* seconds without output; 0: none */
  TerretIdleAction idle_action;
  gboolean may_detach;          /* a clock may hand the command back (return-after, idle return) */
  TerretCaptureMode capture;    /* the request's, else the setting; never _DEFAULT */
  gsize capture_limit;          /* bytes a capture holds: max-output, clamped */
  gboolean keep_full_output;    /* the request asks, or the setting says */
  double stop_grace;            /* seconds a stop gives the command; 0: SIGKILL at once */
  char *cwd;                    /* (owned) (nullable) where the command runs: the request's,
                                 * else the cwd setting; NULL: where the launcher is */
} TerretRunPlan;

TerretRunPlan       *_terret_run_plan_new               (TerretSettings       *settings,
                                                         TerretRequest        *request);
void                 _terret_run_plan_free              (TerretRunPlan        *plan);
TerretStreamCapture *_terret_run_plan_new_capture       (const TerretRunPlan  *plan);
TerretSpool         *_terret_run_plan_open_spool        (const TerretRunPlan  *plan,
                                                         const char           *suffix,
                                                         GError              **error);
char                *_terret_run_plan_describe_dropped  (const TerretRunPlan  *plan,
                                                         const char           *stream,
                                                         gsize                 kept,
                                                         gsize                 cut,
                                                         guint64               dropped,
                                                         guint64               seen);
gboolean             _terret_run_plan_idle_check        (const TerretRunPlan  *plan,
                                                         gint64                last_output,
                                                         TerretTimers         *timers,
                                                         guint                 which);
void                 _terret_run_plan_note_clock        (const TerretRunPlan  *plan,
                                                         TerretResult         *result,
                                                         TerretClock           clock);
gboolean             _terret_run_plan_note_stop         (const TerretRunPlan  *plan,
                                                         TerretResult         *result,
                                                         TerretProcess        *process);
TerretLimits         _terret_run_plan_note_limits       (const TerretRunPlan  *plan,
                                                         TerretResult         *result,
                                                         TerretLimits          hit,
                                                         int                   wait_status);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TerretRunPlan, _terret_run_plan_free)

G_END_DECLS
