/* terret-tail-capture.c: the last bytes of a stream, from a line's start
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-capture-buffer-private.h"
#include "terret-capture-private.h"
#include "terret-utf8-private.h"

struct _TerretTailCapture
{
  gsize window;
  gsize overshoot;
  gsize bound;                  /* window + overshoot */
  guint64 seen;

  /* The stream's last bytes; seen - len of them were dropped. */
  guint8 *buf;                  /* (owned) (nullable) */
  gsize len;
  gsize alloc;

  guint spent : 1;
};

static TerretTailCapture *tail_capture_copy (TerretTailCapture *self);

G_DEFINE_BOXED_TYPE (TerretTailCapture, _terret_tail_capture,
                     tail_capture_copy, _terret_tail_capture_free)

/*
 * _terret_tail_capture_new:
 * @window: how many of the stream's last bytes to keep at least, before
 *   line alignment
 * @overshoot: how far past @window the kept bytes may grow before an
 *   eviction brings them back
 *
 * Creates a capture that keeps a stream's last bytes.
 *
 * Once `@window + @overshoot` bytes are held, an eviction keeps the last
 * @window bytes, and then moves the cut forward to just after the first
 * newline among them, so the kept bytes begin on a line; when the last
 * @window bytes already begin on a line (the byte before them is a
 * newline) they are kept whole. Only a newline in the first half of the
 * window moves the cut, so a line longer than the window still leaves its
 * tail. Without such a newline the cut only moves past
 * the rest of a character it would split (see
 * [func@Terret.utf8_whole_suffix]). Waiting for the overshoot makes the
 * cost amortized-linear: an eviction moves at most @window bytes, once
 * per @overshoot bytes appended.
 *
 * The capture never holds more than `@window + @overshoot` bytes, however
 * large a single append is. [const@Terret.TAIL_CAPTURE_DEFAULT_WINDOW] and
 * [const@Terret.TAIL_CAPTURE_DEFAULT_OVERSHOOT] are the usual sizes.
 *
 * Returns: (transfer full): a new capture; free it with
 *   [method@Terret.TailCapture.free]
 */
TerretTailCapture *
_terret_tail_capture_new (gsize window,
                          gsize overshoot)
{
  TerretTailCapture *self;

  g_return_val_if_fail (overshoot <= G_MAXSIZE / 2 - window, NULL);

  self = g_new0 (TerretTailCapture, 1);
  self->window = window;
  self->overshoot = overshoot;
  self->bound = window + overshoot;

  return self;
}

/* A deep copy, for the boxed type. */
static TerretTailCapture *
tail_capture_copy (TerretTailCapture *self)
{
  TerretTailCapture *copy;

  g_return_val_if_fail (self != NULL, NULL);

  copy = g_memdup2 (self, sizeof *self);
  copy->buf = g_memdup2 (self->buf, self->len);
  copy->alloc = self->len;

  return copy;
}

/*
 * _terret_tail_capture_free:
 * @self: (transfer full) (nullable): a capture
 *
 * Frees @self and the bytes it holds. Nothing happens when @self is %NULL.
 */
void
_terret_tail_capture_free (TerretTailCapture *self)
{
  if (self == NULL)
    return;

  g_clear_pointer (&self->buf, g_free);
  g_free (self);
}

/* Where an eviction cuts the held bytes followed by @data (@len bytes),
 * as an offset into that concatenation, given that the last @window
 * bytes start at @keep. Reads the concatenation in place so that @data
 * need not be copied before the bytes that will not survive are known. */
static gsize
tail_capture_find_cut (TerretTailCapture *self,
                       const guint8      *data,
                       gsize              len,
                       gsize              keep)
{
  gsize total = self->len + len;
  const guint8 *newline;
  guint8 around[7];
  gsize around_len = 0;
  gsize from;
  gsize end;
  gsize pos;

  /* Everything is within the window: nothing to evict. */
  if (keep == 0)
    return 0;

  /* Just after the first newline from the byte before @keep on: when
   * @keep already begins a line, the cut stays there rather than
   * discarding that whole line too. Only a newline within the first half
   * of the window counts: one line longer than the window (a minified
   * JSON file) would otherwise leave nothing at all to show. */
  from = keep - 1;
  end = MIN (total, keep + self->window / 2);
  if (from < self->len)
    {
      newline = memchr (self->buf + from, '\n', MIN (self->len, end) - from);
      if (newline != NULL)
        return (gsize) (newline - self->buf) + 1;
    }

  from = from > self->len ? from - self->len : 0;
  if (end > self->len && from < end - self->len)
    {
      newline = memchr (data + from, '\n', end - self->len - from);
      if (newline != NULL)
        return self->len + (gsize) (newline - data) + 1;
    }

  /* No newline: the cut stays at @keep unless that splits a character,
   * which only the three bytes before it and the three after can tell. */
  from = keep >= 3 ? keep - 3 : 0;
  for (pos = from; pos < total && around_len < G_N_ELEMENTS (around); pos++)
    around[around_len++] = pos < self->len ? self->buf[pos] : data[pos - self->len];

  return from + _terret_utf8_whole_suffix (around, around_len, keep - from);
}

/*
 * _terret_tail_capture_append:
 * @self: a capture that is not spent
 * @data: (array length=len) (nullable): the stream's next bytes
 * @len: the number of bytes in @data
 *
 * Appends the stream's next bytes, evicting the oldest ones as described
 * in [ctor@Terret.TailCapture.new]. Bytes of @data that an eviction would
 * discard are never copied. An empty append changes nothing.
 */
void
_terret_tail_capture_append (TerretTailCapture *self,
                             const guint8      *data,
                             gsize              len)
{
  gsize total;
  gsize cut;

  g_return_if_fail (self != NULL);
  g_return_if_fail (!self->spent);
  g_return_if_fail (data != NULL || len == 0);
  g_return_if_fail (len <= G_MAXSIZE - self->len);
  g_return_if_fail (len <= G_MAXUINT64 - self->seen);

  if (len == 0)
    return;

  self->seen += len;
  total = self->len + len;

  if (total < self->bound)
    {
      _terret_capture_buffer_reserve (&self->buf, &self->alloc, total, self->bound);
      memcpy (self->buf + self->len, data, len);
      self->len = total;
      return;
    }

  cut = tail_capture_find_cut (self, data, len, total - self->window);
  g_assert (cut >= total - self->window && cut <= total);

  if (cut >= self->len)
    {
      gsize skip = cut - self->len;
      gsize keep = len - skip;

      /* Nothing held survives: do not let a reallocation copy it. */
      self->len = 0;
      if (keep > self->alloc)
        {
          g_clear_pointer (&self->buf, g_free);
          self->alloc = 0;
          _terret_capture_buffer_reserve (&self->buf, &self->alloc, keep, self->bound);
        }
      if (keep > 0)
        memcpy (self->buf, data + skip, keep);
      self->len = keep;
    }
  else
    {
      gsize keep_old = self->len - cut;

      memmove (self->buf, self->buf + cut, keep_old);
      _terret_capture_buffer_reserve (&self->buf, &self->alloc, keep_old + len, self->bound);
      memcpy (self->buf + keep_old, data, len);
      self->len = keep_old + len;
    }
}

/*
 * _terret_tail_capture_get_seen:
 * @self: a capture
 *
 * Gets how many bytes have been appended in all, kept or not. It stays
 * valid after the capture is spent.
 *
 * Returns: the number of bytes appended
 */
guint64
_terret_tail_capture_get_seen (TerretTailCapture *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->seen;
}

/*
 * _terret_tail_capture_get_size:
 * @self: a capture
 *
 * Gets how many bytes the capture holds now, never more than its window
 * plus its overshoot. The bytes dropped so far are the ones seen and not
 * held.
 *
 * Returns: the number of bytes held
 */
gsize
_terret_tail_capture_get_size (TerretTailCapture *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->len;
}

/*
 * _terret_tail_capture_finish:
 * @self: a capture that is not spent
 * @dropped: (out) (optional): where to store how many of the stream's
 *   first bytes were dropped
 *
 * Ends the capture and hands over the bytes it holds: the stream's last
 * bytes, preceded by @dropped bytes that were not kept. The cut is
 * therefore at offset 0 of the returned bytes whenever @dropped is not 0.
 *
 * The bytes are handed over without a copy, so this can be called once:
 * @self is spent afterwards, and only
 * [method@Terret.TailCapture.get_seen],
 * [method@Terret.TailCapture.get_size] (then 0) and
 * [method@Terret.TailCapture.free] may still be called on it.
 *
 * Returns: (transfer full): the kept bytes
 */
GBytes *
_terret_tail_capture_finish (TerretTailCapture *self,
                             guint64           *dropped)
{
  GBytes *bytes;
  guint64 count;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (!self->spent, NULL);

  count = _terret_capture_dropped_count (self->seen, self->len);
  if (dropped != NULL)
    *dropped = count;

  bytes = _terret_capture_buffer_steal (&self->buf, &self->alloc, self->len);
  self->len = 0;
  self->spent = TRUE;

  return bytes;
}
