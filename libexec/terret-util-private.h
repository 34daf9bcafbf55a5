/* terret-util-private.h: small helpers shared inside this tree
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Static inline, so the backends shipped in this tree can use them
 * without the library exporting them; never installed.
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* g_set_str() arrived in GLib 2.76; this is its contract: replace
 * *field with a copy of value, and say whether it changed. */
static inline gboolean
_terret_set_str (char       **field,
                 const char  *value)
{
  if (g_strcmp0 (*field, value) == 0)
    return FALSE;

  g_free (*field);
  *field = g_strdup (value);
  return TRUE;
}

/* Detaches *source from its context and drops the reference held in it;
 * nothing happens when it is NULL. */
static inline void
_terret_clear_source (GSource **source)
{
  if (*source != NULL)
    {
      g_source_destroy (*source);
      g_clear_pointer (source, g_source_unref);
    }
}

/* g_date_time_new_from_unix_utc_usec() arrived in GLib 2.80: a wall-clock
 * time from g_get_real_time() as a UTC GDateTime. */
static inline GDateTime *
_terret_date_time_from_usec (gint64 usec)
{
  GDateTime *seconds = g_date_time_new_from_unix_utc (usec / G_USEC_PER_SEC);
  GDateTime *exact = g_date_time_add (seconds, usec % G_USEC_PER_SEC);

  g_date_time_unref (seconds);
  return exact;
}

G_END_DECLS
