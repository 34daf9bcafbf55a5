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

G_END_DECLS
