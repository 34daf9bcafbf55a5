/* terret-head-tail-capture.c: the first and the last bytes of a stream
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-capture-buffer-private.h"
#include "terret-capture-private.h"
#include "terret-utf8-private.h"

/* Bytes the ring holds before the tail's window: the byte just before it
 * says whether the window begins a line, the three before that whether
 * it begins inside a character. */
#define HEAD_TAIL_CONTEXT 4

struct _TerretHeadTailCapture
{
  gsize limit;
  gsize head;                   /* limit / 2: the first half */
  gsize tail;                   /* limit - head: the last half */
  gsize ring;                   /* tail + HEAD_TAIL_CONTEXT */
  guint64 seen;

  /* Up to head + ring bytes seen, the stream itself. Past that, [0, head)
   * is the head and [head, head + ring) a ring of the stream's last bytes
   * whose oldest byte is at ring_pos. */
  guint8 *buf;                  /* (owned) (nullable) */
  gsize alloc;
  gsize ring_pos;

  guint spent : 1;
};

/*
 * _terret_head_tail_capture_new:
 * @limit: how many bytes of the stream to keep at most
 *
 * Creates a capture that keeps a stream whole up to @limit bytes, and past
 * it the first `@limit / 2` and the last `@limit - @limit / 2` bytes,
 * each cut as [method@Terret.HeadTailCapture.finish] describes.
 *
 * Whatever the stream's length, it holds at most `@limit + 4` bytes: the
 * head, and a ring of the last bytes that appends overwrite in place, so
 * every append costs what copying it costs.
 *
 * Returns: (transfer full): a new capture; free it with
 *   [method@Terret.HeadTailCapture.free]
 */
TerretHeadTailCapture *
_terret_head_tail_capture_new (gsize limit)
{
  TerretHeadTailCapture *self;

  g_return_val_if_fail (limit <= G_MAXSIZE / 2, NULL);

  self = g_new0 (TerretHeadTailCapture, 1);
  self->limit = limit;
  self->head = limit / 2;
  self->tail = limit - self->head;
  self->ring = self->tail + HEAD_TAIL_CONTEXT;

  return self;
}

/*
 * _terret_head_tail_capture_free:
 * @self: (transfer full) (nullable): a capture
 *
 * Frees @self and the bytes it holds. Nothing happens when @self is %NULL.
 */
void
_terret_head_tail_capture_free (TerretHeadTailCapture *self)
{
  if (self == NULL)
    return;

  g_clear_pointer (&self->buf, g_free);
  g_free (self);
}

/*
 * _terret_head_tail_capture_append:
 * @self: a capture that is not spent
 * @data: (array length=len) (nullable): the stream's next bytes
 * @len: the number of bytes in @data
 *
 * Appends the stream's next bytes. Of an append longer than the ring only
 * its last bytes are copied. An empty append changes nothing.
 */
void
_terret_head_tail_capture_append (TerretHeadTailCapture *self,
                                  const guint8          *data,
                                  gsize                  len)
{
  gsize bound;

  g_return_if_fail (self != NULL);
  g_return_if_fail (!self->spent);
  g_return_if_fail (data != NULL || len == 0);
  g_return_if_fail (len <= G_MAXUINT64 - self->seen);

  if (len == 0)
    return;

  bound = self->head + self->ring;
  if (self->seen < bound)
    {
      gsize take = MIN (len, bound - (gsize)self->seen);

      _terret_capture_buffer_reserve (&self->buf, &self->alloc, self->seen + take, bound);
      memcpy (self->buf + self->seen, data, take);
      self->seen += take;
      data += take;
      len -= take;
      if (len == 0)
        return;
    }

  /* The ring: its oldest byte is overwritten first. */
  self->seen += len;
  if (len >= self->ring)
    {
      memcpy (self->buf + self->head, data + len - self->ring, self->ring);
      self->ring_pos = 0;
    }
  else
    {
      gsize first = MIN (len, self->ring - self->ring_pos);

      memcpy (self->buf + self->head + self->ring_pos, data, first);
      memcpy (self->buf + self->head, data + first, len - first);
      self->ring_pos = (self->ring_pos + len) % self->ring;
    }
}

/*
 * _terret_head_tail_capture_get_seen:
 * @self: a capture
 *
 * Gets how many bytes have been appended in all, kept or not. It stays
 * valid after the capture is spent.
 *
 * Returns: the number of bytes appended
 */
guint64
_terret_head_tail_capture_get_seen (TerretHeadTailCapture *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->seen;
}

/*
 * _terret_head_tail_capture_get_size:
 * @self: a capture
 *
 * Gets how many bytes the capture holds now: never more than its limit
 * plus four.
 *
 * Returns: the number of bytes held
 */
gsize
_terret_head_tail_capture_get_size (TerretHeadTailCapture *self)
{
  g_return_val_if_fail (self != NULL, 0);

  if (self->spent)
    return 0;
  return (gsize)MIN (self->seen, (guint64)(self->head + self->ring));
}

/* Where the kept head ends, once the stream has passed it: after its last
 * newline in its last quarter, else at a whole character. */
static gsize
head_end_of (TerretHeadTailCapture *self)
{
  gsize near = self->head / 4;

  for (gsize pos = self->head; pos > self->head - near; pos--)
    if (self->buf[pos - 1] == '\n')
      return pos;
  return _terret_utf8_whole_prefix (self->buf, self->head);
}

/*
 * _terret_head_tail_capture_peek_head:
 * @self: a capture that has seen at least its head (`limit / 2` bytes)
 * @head_end: (out): where the head a finish keeps will end
 * @head: (out): the head's length
 *
 * The head, fixed once the stream has passed it: its bytes from
 * @head_end to @head are the first a cut would omit.
 *
 * Returns: (transfer none): the head's bytes
 */
const guint8 *
_terret_head_tail_capture_peek_head (TerretHeadTailCapture *self,
                                     gsize                 *head_end,
                                     gsize                 *head)
{
  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (!self->spent && self->seen >= self->head, NULL);

  *head_end = head_end_of (self);
  *head = self->head;
  return self->buf;
}

static void
reverse_bytes (guint8 *data,
               gsize   len)
{
  for (gsize i = 0, j = len; i + 1 < j; i++, j--)
    {
      guint8 byte = data[i];

      data[i] = data[j - 1];
      data[j - 1] = byte;
    }
}

/*
 * _terret_head_tail_capture_finish:
 * @self: a capture that is not spent
 * @dropped: (out) (optional): where to store how many bytes were omitted
 * @cut_offset: (out) (optional): where to store where in the returned
 *   bytes the omitted ones were: the length of the kept head, which is
 *   also the stream offset of the first omitted byte
 *
 * Ends the capture and hands over the kept bytes: the whole stream when
 * it is within the limit; past it, the head followed directly by the
 * tail, with @dropped bytes omitted between them.
 *
 * The head is the first `limit / 2` bytes, ending just after the last
 * newline among its last quarter when there is one, else backed off to a
 * whole character ([func@Terret.utf8_whole_prefix]). The tail is the last
 * `limit - limit / 2` bytes, kept whole when the byte before them is a
 * newline, else beginning just after the first newline among its first
 * quarter, else moved past the rest of a character it would split
 * ([func@Terret.utf8_whole_suffix]). The stream's own end is kept as it
 * was read. So at most `limit` bytes are returned, and the omitted span
 * is one contiguous run of the stream.
 *
 * The bytes are handed over without a copy, so this can be called once:
 * @self is spent afterwards.
 *
 * Returns: (transfer full): the kept bytes
 */
GBytes *
_terret_head_tail_capture_finish (TerretHeadTailCapture *self,
                                  guint64               *dropped,
                                  gsize                 *cut_offset)
{
  const guint8 *slice;
  gsize slice_len;
  gsize start, head_end, near, tail_len;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (!self->spent, NULL);

  self->spent = TRUE;

  if (self->seen <= self->limit)
    {
      gsize len = (gsize)self->seen;

      if (dropped != NULL)
        *dropped = 0;
      if (cut_offset != NULL)
        *cut_offset = len;
      return _terret_capture_buffer_steal (&self->buf, &self->alloc, len);
    }

  if (self->seen > self->head + self->ring)
    {
      /* Oldest first again, in place: rotating left by ring_pos is three
       * reversals, and needs no second buffer. */
      guint8 *ring = self->buf + self->head;

      reverse_bytes (ring, self->ring_pos);
      reverse_bytes (ring + self->ring_pos, self->ring - self->ring_pos);
      reverse_bytes (ring, self->ring);
      slice = ring;
      slice_len = self->ring;
    }
  else
    {
      /* Still the stream itself, head included. */
      slice = self->buf;
      slice_len = (gsize)self->seen;
    }

  /* The tail's window begins `tail` bytes before the end, with at least
   * one byte of the stream before it in @slice (seen > limit). */
  start = slice_len - self->tail;
  g_assert (start >= 1);
  near = self->tail / 4;
  if (slice[start - 1] != '\n')
    {
      const guint8 *newline = near > 0 ? memchr (slice + start, '\n', near) : NULL;

      if (newline != NULL)
        start = (gsize)(newline - slice) + 1;
      else
        start = _terret_utf8_whole_suffix (slice, slice_len, start);
    }
  tail_len = slice_len - start;

  head_end = head_end_of (self);

  if (tail_len > 0)
    memmove (self->buf + head_end, slice + start, tail_len);

  if (dropped != NULL)
    *dropped = _terret_capture_dropped_count (self->seen, head_end + tail_len);
  if (cut_offset != NULL)
    *cut_offset = head_end;
  return _terret_capture_buffer_steal (&self->buf, &self->alloc, head_end + tail_len);
}
