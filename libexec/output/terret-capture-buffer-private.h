/* terret-capture-buffer-private.h: the bounded buffers the captures keep
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Static inline: shared by the head, tail and head-tail captures alone.
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Every buffer here grows geometrically from this size. */
#define TERRET_CAPTURE_BUFFER_MIN 256

/* Makes room for @needed bytes in *@buf, growing geometrically so that
 * appends stay amortized-linear, but never allocating more than @bound:
 * the bound is what the capture promises about its memory. */
static inline void
_terret_capture_buffer_reserve (guint8 **buf,
                                gsize   *alloc,
                                gsize    needed,
                                gsize    bound)
{
  gsize size;

  g_assert (needed <= bound);

  if (needed <= *alloc)
    return;

  size = MAX (*alloc, TERRET_CAPTURE_BUFFER_MIN);
  while (size < needed)
    size = size >= bound / 2 ? bound : size * 2;
  size = MIN (size, bound);

  *buf = g_realloc (*buf, size);
  *alloc = size;
}

/* Hands @len bytes of *@buf over as GBytes without copying them. */
static inline GBytes *
_terret_capture_buffer_steal (guint8 **buf,
                              gsize   *alloc,
                              gsize    len)
{
  guint8 *data = g_steal_pointer (buf);

  g_assert (len <= *alloc);

  if (len == 0)
    {
      g_free (data);
      *alloc = 0;
      return g_bytes_new (NULL, 0);
    }

  /* Give back the slack that the caller's GBytes would otherwise pin;
   * shrinking reallocates in place. */
  if (len < *alloc)
    data = g_realloc (data, len);
  *alloc = 0;

  return g_bytes_new_take (data, len);
}

/* A bounded dropped-byte count: @output_len bytes of the first @total are
 * returned, so the rest were dropped. The output is always a prefix of
 * what came before the end, so this cannot go negative; if it ever did,
 * bytes past the end (a protocol marker) would be in the output. That is
 * a bug worth stopping for, not a count to round up to zero, and it is
 * checked even where assertions are compiled out. */
static inline guint64
_terret_capture_dropped_count (guint64 total,
                               gsize   output_len)
{
  if (G_UNLIKELY (output_len > total))
    g_error ("capture returned %" G_GSIZE_FORMAT " bytes of output for a "
             "stream whose output ends after %" G_GUINT64_FORMAT,
             output_len, total);

  return total - output_len;
}

G_END_DECLS
