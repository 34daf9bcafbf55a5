/* terret-timers.c: a run's deadlines on one source
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>

#include "terret-timers-private.h"

typedef struct
{
  GSource source;
  TerretTimers *timers;         /* (unowned) the owner clears the source first */
} TimersSource;

static gint64
timers_nearest (TerretTimers *timers)
{
  gint64 nearest = -1;

  for (guint i = 0; i < TERRET_TIMERS_MAX; i++)
    if (timers->deadlines[i] >= 0 && (nearest < 0 || timers->deadlines[i] < nearest))
      nearest = timers->deadlines[i];
  return nearest;
}

/* The source's timeout is worked out in prepare, from the deadlines as
 * they stand, rather than kept in a ready time: g_source_set_ready_time()
 * signals the context's wakeup on every change, which cost a write and
 * an extra loop iteration each time a run armed or disarmed its timeout.
 * A change made on the thread iterating the context is seen at its next
 * prepare; only one made from elsewhere has to wake it. */
static void
timers_update (TerretTimers *timers)
{
  GMainContext *context;

  if (timers->source == NULL || (context = g_source_get_context (timers->source)) == NULL)
    return;
  if (!g_main_context_is_owner (context))
    g_main_context_wakeup (context);
}

static gboolean
timers_prepare (GSource *source,
                int     *timeout)
{
  TerretTimers *timers = ((TimersSource *)source)->timers;
  gint64 nearest = timers_nearest (timers);
  gint64 now;

  if (nearest < 0)
    {
      *timeout = -1;
      return FALSE;
    }
  now = g_source_get_time (source);
  if (nearest <= now)
    {
      *timeout = 0;
      return TRUE;
    }
  /* Rounded up, as GLib rounds a ready time: never early. */
  *timeout = (int)MIN ((nearest - now + 999) / 1000, G_MAXINT);
  return FALSE;
}

static gboolean
timers_check (GSource *source)
{
  TerretTimers *timers = ((TimersSource *)source)->timers;
  gint64 nearest = timers_nearest (timers);

  return nearest >= 0 && nearest <= g_source_get_time (source);
}

/* One deadline per dispatch: the owner's callback may end the run and
 * free the timers with it, so nothing of them is touched after it. */
static gboolean
timers_dispatch (GSource     *source,
                 GSourceFunc  callback,
                 gpointer     user_data)
{
  TerretTimers *timers = ((TimersSource *)source)->timers;
  gint64 now = g_source_get_time (source);

  for (guint i = 0; i < TERRET_TIMERS_MAX; i++)
    {
      if (timers->deadlines[i] >= 0 && timers->deadlines[i] <= now)
        {
          timers->deadlines[i] = -1;
          timers->func (timers->owner, i);
          return G_SOURCE_CONTINUE;
        }
    }

  return G_SOURCE_CONTINUE;
}

static GSourceFuncs timers_source_funcs = {
  timers_prepare, timers_check, timers_dispatch, NULL, NULL, NULL,
};

void
_terret_timers_init (TerretTimers    *timers,
                     TerretTimerFunc  func,
                     gpointer         owner,
                     const char      *name)
{
  timers->source = NULL;
  for (guint i = 0; i < TERRET_TIMERS_MAX; i++)
    timers->deadlines[i] = -1;
  timers->func = func;
  timers->owner = owner;
  timers->name = name;
}

void
_terret_timers_clear (TerretTimers *timers)
{
  if (timers->source != NULL)
    {
      g_source_destroy (timers->source);
      g_clear_pointer (&timers->source, g_source_unref);
    }
}

/* Moves the deadlines to @context, keeping them. */
void
_terret_timers_attach (TerretTimers *timers,
                       GMainContext *context)
{
  if (timers->source != NULL && !g_source_is_destroyed (timers->source) &&
      g_source_get_context (timers->source) == context)
    return;

  _terret_timers_clear (timers);
  timers->source = g_source_new (&timers_source_funcs, sizeof (TimersSource));
  ((TimersSource *)timers->source)->timers = timers;
  g_source_set_static_name (timers->source, timers->name);
  g_source_attach (timers->source, context);
}

void
_terret_timers_arm (TerretTimers *timers,
                    guint         which,
                    gint64        deadline)
{
  g_assert (which < TERRET_TIMERS_MAX);

  timers->deadlines[which] = MAX (deadline, 0);
  timers_update (timers);
}

void
_terret_timers_arm_in (TerretTimers *timers,
                       guint         which,
                       double        seconds)
{
  _terret_timers_arm (timers, which, g_get_monotonic_time () + _terret_seconds_to_usec (seconds));
}

void
_terret_timers_disarm (TerretTimers *timers,
                       guint         which)
{
  g_assert (which < TERRET_TIMERS_MAX);

  if (timers->deadlines[which] < 0)
    return;
  timers->deadlines[which] = -1;
  timers_update (timers);
}

gboolean
_terret_timers_is_armed (TerretTimers *timers,
                         guint         which)
{
  return timers->deadlines[which] >= 0;
}

/* Seconds as microseconds, rounded up so a deadline never comes early,
 * clamped to what centuries hold. */
gint64
_terret_seconds_to_usec (double seconds)
{
  double usec = ceil (seconds * G_USEC_PER_SEC);

  if (!(usec > 0))
    return 0;
  if (usec >= (double)(G_MAXINT64 / 4))
    return G_MAXINT64 / 4;
  return (gint64)usec;
}

/* Seconds for a notice, in the C locale: "0.5 s", never "0,5 s". */
char *
_terret_format_seconds (double seconds)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  return g_strdup (g_ascii_formatd (buf, sizeof buf, "%g", seconds));
}
