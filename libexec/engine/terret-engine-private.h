/* terret-engine-private.h: the engine core and its run strategies
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

#include "terret-common-settings-private.h"
#include "terret-engine.h"
#include "terret-launcher-link-private.h"
#include "terret-run-plan-private.h"
#include "terret-session-info.h"
#include "terret-spool-private.h"

G_BEGIN_DECLS

/* How an engine runs commands: the tables of one mode (the sessions by
 * key, or the runs in flight). The core owns everything else: settings,
 * launchers, containment, parked ends, full-output files, and how a run
 * is stopped. */
typedef struct
{
  TerretCapabilities capabilities; /* the mode's default */
  gpointer (*new)        (TerretEngine   *engine);
  void     (*free)       (gpointer        state);
  /* @plan and @task are transferred. */
  void     (*run_async)  (gpointer        state,
                          TerretRequest  *request,
                          TerretRunPlan  *plan,
                          GCancellable   *cancellable,
                          GTask          *task);
  void     (*poll_async) (gpointer        state,
                          const char     *key,
                          double          wait,
                          GCancellable   *cancellable,
                          GTask          *task);
  /* NULL: the mode takes no input. */
  gboolean (*send_input) (gpointer        state,
                          const char     *key,
                          GBytes         *data,
                          GError        **error);
  gboolean (*interrupt)  (gpointer        state,
                          const char     *key,
                          GError        **error);
  GPid     (*get_pid)    (gpointer        state,
                          const char     *key);
  /* @key NULL: every key. @stopped (nullable): where what the close
   * had to stop goes, once it ended (TerretStoppedProcess). */
  void     (*close)      (gpointer        state,
                          const char     *key,
                          GPtrArray      *stopped);
  void     (*list)       (gpointer        state,
                          GPtrArray      *infos);
  guint    (*count)      (gpointer        state);
} TerretEngineStrategy;

extern const TerretEngineStrategy _terret_engine_session_strategy;
extern const TerretEngineStrategy _terret_engine_command_strategy;

TerretSettings     *_terret_engine_snapshot      (TerretEngine        *self);
TerretLauncherLink *_terret_engine_get_link      (TerretEngine        *self,
                                                  TerretSettings      *settings,
                                                  GError             **error);
gpointer            _terret_engine_get_strategy  (TerretEngine        *self);

/* The ends of detached runs that no poll collected, by key. */
void                _terret_engine_park          (TerretEngine        *self,
                                                  const char          *key,
                                                  TerretResult        *result,
                                                  TerretSessionInfo   *info);
TerretResult       *_terret_engine_take_parked   (TerretEngine        *self,
                                                  const char          *key);
/* A run's full-output file, kept until its key is closed. */
void                _terret_engine_keep_spool    (TerretEngine        *self,
                                                  const char          *key,
                                                  TerretSpool         *spool);

/* How a run is ended: the one place that decides it. */
void                _terret_engine_stop_run      (TerretEngine        *self,
                                                  TerretProcess       *process);

void                _terret_engine_get_property  (GObject             *object,
                                                  guint                prop_id,
                                                  GValue              *value,
                                                  GParamSpec          *pspec);
void                _terret_engine_set_property  (GObject             *object,
                                                  guint                prop_id,
                                                  const GValue        *value,
                                                  GParamSpec          *pspec);

G_END_DECLS
