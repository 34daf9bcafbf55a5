/* terret-timers-private.h: a run's deadlines on one source
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define TERRET_TIMERS_MAX 7

typedef void (*TerretTimerFunc) (gpointer owner,
                                 guint    which);

/* Several deadlines (a timeout, a grace, a poll's wait) behind one
 * source whose ready time is the nearest, so a run arms and disarms them
 * by storing a number instead of creating, attaching and destroying a
 * source each time. Embedded in its owner; used on the thread that runs
 * the owner's context. */
typedef struct
{
  GSource *source;              /* (owned) (nullable) until attached */
  gint64 deadlines[TERRET_TIMERS_MAX];
  TerretTimerFunc func;
  gpointer owner;
  const char *name;
} TerretTimers;

void      _terret_timers_init      (TerretTimers    *timers,
                                    TerretTimerFunc  func,
                                    gpointer         owner,
                                    const char      *name);
void      _terret_timers_clear     (TerretTimers    *timers);
void      _terret_timers_attach    (TerretTimers    *timers,
                                    GMainContext    *context);
void      _terret_timers_arm       (TerretTimers    *timers,
                                    guint            which,
                                    gint64           deadline);
void      _terret_timers_arm_in    (TerretTimers    *timers,
                                    guint            which,
                                    double           seconds);
void      _terret_timers_disarm    (TerretTimers    *timers,
                                    guint            which);
gboolean  _terret_timers_is_armed  (TerretTimers    *timers,
                                    guint            which);

gint64    _terret_seconds_to_usec  (double           seconds);
char     *_terret_format_seconds   (double           seconds);

G_END_DECLS
