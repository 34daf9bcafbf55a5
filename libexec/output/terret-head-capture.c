/* terret-head-capture.c: the first bytes of a stream, its end still scanned
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-capture-buffer-private.h"
#include "terret-capture-private.h"
#include "terret-utf8-private.h"

struct _TerretHeadCapture
{
  gsize limit;
  gsize window;
  guint64 seen;

  /* The stream's first MIN (seen, limit) bytes. */
  guint8 *head;                 /* (owned) (nullable) */
  gsize head_len;
  gsize head_alloc;

  /* Once the stream has passed the limit: its bytes from roll_start to
   * the end, at least the last append and the `window` bytes before it,
   * at most that or twice the window, whichever is more. */
  guint8 *roll;                 /* (owned) (nullable) */
  gsize roll_len;
  gsize roll_alloc;
  guint64 roll_start;

  guint overflowed : 1;
  guint spent : 1;
};

static TerretHeadCapture *head_capture_copy (TerretHeadCapture *self);

G_DEFINE_BOXED_TYPE (TerretHeadCapture, _terret_head_capture,
                     head_capture_copy, _terret_head_capture_free)

/*
 * _terret_head_capture_new:
 * @limit: how many bytes of the stream's head to keep; may be 0
 * @window: the length of the longest marker a reader looks for; at
 *   least 1
 *
 * Creates a capture for a stream whose first @limit bytes are its output
 * and whose end (possibly far past the limit) carries a marker that a
 * reader still has to find.
 *
 * Whatever the stream's length, it holds at most `@limit + 2 × @window`
 * bytes plus the size of the latest append.
 *
 * Returns: (transfer full): a new capture; free it with
 *   [method@Terret.HeadCapture.free]
 */
TerretHeadCapture *
_terret_head_capture_new (gsize limit,
                          gsize window)
{
  TerretHeadCapture *self;

  g_return_val_if_fail (window >= 1, NULL);
  g_return_val_if_fail (window <= G_MAXSIZE / 4, NULL);

  self = g_new0 (TerretHeadCapture, 1);
  self->limit = limit;
  self->window = window;

  return self;
}

/* A deep copy, for the boxed type: the copy continues independently,
 * spent or not. */
static TerretHeadCapture *
head_capture_copy (TerretHeadCapture *self)
{
  TerretHeadCapture *copy;

  g_return_val_if_fail (self != NULL, NULL);

  copy = g_memdup2 (self, sizeof *self);
  copy->head = g_memdup2 (self->head, self->head_len);
  copy->head_alloc = self->head_len;
  copy->roll = g_memdup2 (self->roll, self->roll_len);
  copy->roll_alloc = self->roll_len;

  return copy;
}

/*
 * _terret_head_capture_free:
 * @self: (transfer full) (nullable): a capture
 *
 * Frees @self and the bytes it holds. Nothing happens when @self is %NULL.
 */
void
_terret_head_capture_free (TerretHeadCapture *self)
{
  if (self == NULL)
    return;

  g_clear_pointer (&self->head, g_free);
  g_clear_pointer (&self->roll, g_free);
  g_free (self);
}

/* Makes the rolling window the stream's bytes [roll_start, seen), given
 * that @old holds the bytes from @old_start on (@old_len of them; it may
 * be the window itself) and @data the @len bytes just appended after
 * them, and that the window must keep every byte from @must_keep on.
 * What a trim discards is never copied. */
static void
head_capture_roll (TerretHeadCapture *self,
                   const guint8      *old,
                   guint64            old_start,
                   gsize              old_len,
                   const guint8      *data,
                   gsize              len,
                   guint64            must_keep)
{
  guint64 keep_from = old_start;
  gsize new_len;
  gsize bound;

  g_assert (old_start + old_len + len == self->seen);
  g_assert (old_start <= must_keep && must_keep <= self->seen - len);

  /* Trimming only past twice the window, down to the latest append and
   * the window before it, keeps the cost amortized-linear: a trim moves
   * at most `window` old bytes, and those were appended since the last
   * trim or by the append that caused it. */
  if (self->seen - old_start > 2 * (guint64) self->window)
    keep_from = must_keep;
  new_len = self->seen - keep_from;
  bound = MAX (new_len, 2 * self->window);

  if (keep_from >= old_start + old_len)
    {
      gsize skip = keep_from - (old_start + old_len);

      _terret_capture_buffer_reserve (&self->roll, &self->roll_alloc, new_len, bound);
      if (new_len > 0)
        memcpy (self->roll, data + skip, new_len);
    }
  else
    {
      gsize drop = keep_from - old_start;
      gsize keep_old = old_len - drop;

      if (old == self->roll)
        {
          if (drop > 0)
            memmove (self->roll, self->roll + drop, keep_old);
          _terret_capture_buffer_reserve (&self->roll, &self->roll_alloc, new_len, bound);
        }
      else
        {
          _terret_capture_buffer_reserve (&self->roll, &self->roll_alloc, new_len, bound);
          if (keep_old > 0)
            memcpy (self->roll, old + drop, keep_old);
        }

      if (len > 0)
        memcpy (self->roll + keep_old, data, len);
    }

  /* Give back what one huge append needed once the window is small
   * again, so the memory bound is the latest append, not the largest. */
  if (self->roll_alloc / 2 > bound)
    {
      self->roll = g_realloc (self->roll, bound);
      self->roll_alloc = bound;
    }

  self->roll_start = keep_from;
  self->roll_len = new_len;
}

/*
 * _terret_head_capture_append:
 * @self: a capture that is not spent
 * @data: (array length=len) (nullable): the stream's next bytes
 * @len: the number of bytes in @data
 *
 * Appends the stream's next bytes. Those within the limit are kept;
 * those past it are counted, and kept only while they are among the last
 * bytes of the stream that [method@Terret.HeadCapture.peek] shows. An
 * empty append changes nothing.
 */
void
_terret_head_capture_append (TerretHeadCapture *self,
                             const guint8      *data,
                             gsize              len)
{
  gsize take;
  guint64 before;
  guint64 must_keep;

  g_return_if_fail (self != NULL);
  g_return_if_fail (!self->spent);
  g_return_if_fail (data != NULL || len == 0);
  g_return_if_fail (len <= G_MAXUINT64 - self->seen);

  if (len == 0)
    return;

  /* A scanner looks at the region after each append, so a marker that
   * ends in this append must be whole in it: the region keeps all of
   * this append and the `window` bytes before it. */
  before = self->seen;
  must_keep = before > self->window ? before - self->window : 0;
  self->seen += len;

  if (self->overflowed)
    {
      head_capture_roll (self, self->roll, self->roll_start, self->roll_len,
                         data, len, must_keep);
      return;
    }

  take = MIN (len, self->limit - self->head_len);
  if (take > 0)
    {
      _terret_capture_buffer_reserve (&self->head, &self->head_alloc,
                                      self->head_len + take, self->limit);
      memcpy (self->head + self->head_len, data, take);
      self->head_len += take;
    }

  if (self->seen <= self->limit)
    return;

  /* The stream just passed the limit, and the head is complete. The
   * window begins inside the head (must_keep lies at most at `limit -
   * window`), so a marker that begins in the head's last bytes and ends
   * past the limit is whole in it, and so is one that begins and ends in
   * this append before the limit. */
  g_assert (self->head_len == self->limit);
  g_assert (must_keep <= self->limit);
  self->overflowed = TRUE;
  head_capture_roll (self,
                     self->head != NULL ? self->head + must_keep : NULL,
                     must_keep, self->limit - must_keep,
                     data + take, len - take, must_keep);
}

/*
 * _terret_head_capture_get_seen:
 * @self: a capture
 *
 * Gets how many bytes have been appended in all, kept or not. It stays
 * valid after the capture is spent.
 *
 * Returns: the stream offset just past the last byte appended
 */
guint64
_terret_head_capture_get_seen (TerretHeadCapture *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->seen;
}

/*
 * _terret_head_capture_peek:
 * @self: a capture that is not spent
 * @region_start: (out) (optional): the stream offset of the region's
 *   first byte
 * @region_len: (out): the number of bytes in the region
 *
 * Gets the contiguous region of the stream that a marker scanner should
 * search after each append. It always ends at the stream's end. While
 * the stream is within the limit it is everything appended, from offset
 * 0. Past the limit it holds at least the latest append and the `window`
 * bytes before it, so any marker no longer than the window that ends in
 * the latest append is whole in it, one that straddles the limit
 * included. A match at region offset `i` lies at stream offset
 * `region_start + i`, which is what [method@Terret.HeadCapture.finish]
 * takes.
 *
 * The region is valid until @self is next changed or freed.
 *
 * Returns: (array length=region_len) (transfer none): the region's bytes;
 *   never %NULL, even when it is empty
 */
const guint8 *
_terret_head_capture_peek (TerretHeadCapture *self,
                           guint64           *region_start,
                           gsize             *region_len)
{
  static const guint8 empty[1] = { 0 };

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (!self->spent, NULL);
  g_return_val_if_fail (region_len != NULL, NULL);

  if (!self->overflowed)
    {
      if (region_start != NULL)
        *region_start = 0;
      *region_len = self->head_len;
      return self->head != NULL ? self->head : empty;
    }

  if (region_start != NULL)
    *region_start = self->roll_start;
  *region_len = self->roll_len;
  return self->roll != NULL ? self->roll : empty;
}

/* Ends @self, handing over the head's first @output_len bytes. */
static GBytes *
head_capture_spend (TerretHeadCapture *self,
                    gsize              output_len)
{
  GBytes *bytes;

  g_assert (output_len <= self->head_len);

  bytes = _terret_capture_buffer_steal (&self->head, &self->head_alloc, output_len);
  self->head_len = 0;
  g_clear_pointer (&self->roll, g_free);
  self->roll_len = 0;
  self->roll_alloc = 0;
  self->spent = TRUE;

  return bytes;
}

/*
 * _terret_head_capture_finish:
 * @self: a capture that is not spent
 * @end: the stream offset where the output ends (where a scanner found a
 *   marker), at most [method@Terret.HeadCapture.get_seen]
 * @dropped: (out) (optional): where to store how many bytes of the output
 *   are not in the returned bytes
 *
 * Ends the capture of a stream whose output ended at @end; everything
 * from @end on is not output, and none of it is ever returned.
 *
 * When @end is within the limit the output is returned whole, and
 * nothing is dropped. Past the limit the output is the head, backed off
 * to a whole UTF-8 character with [func@Terret.utf8_whole_prefix]
 * because the limit is a cut the capture made; the bytes from there to
 * @end are dropped.
 *
 * The kept bytes are handed over without a copy, so this can be called
 * once: @self is spent afterwards, and only
 * [method@Terret.HeadCapture.get_seen] and
 * [method@Terret.HeadCapture.free] may still be called on it.
 *
 * Returns: (transfer full): the output
 */
GBytes *
_terret_head_capture_finish (TerretHeadCapture *self,
                             guint64            end,
                             guint64           *dropped)
{
  gsize output_len;
  guint64 count;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (!self->spent, NULL);
  g_return_val_if_fail (end <= self->seen, NULL);

  /* head_len is MIN (seen, limit), so past it @end lies past the limit. */
  if (end <= self->head_len)
    output_len = end;
  else
    output_len = _terret_utf8_whole_prefix (self->head, self->head_len);

  count = _terret_capture_dropped_count (end, output_len);
  if (dropped != NULL)
    *dropped = count;

  return head_capture_spend (self, output_len);
}

/*
 * _terret_head_capture_finish_partial:
 * @self: a capture that is not spent
 * @dropped: (out) (optional): where to store how many bytes of the stream
 *   are not in the returned bytes
 *
 * Ends the capture of a stream that stopped without a marker (a deadline
 * passed, the stream ended): every byte appended is output. The head is
 * backed off to a whole UTF-8 character with
 * [func@Terret.utf8_whole_prefix] even when the stream is within the
 * limit, because where the stream stopped is a cut too, not the end of
 * the output.
 *
 * Like [method@Terret.HeadCapture.finish], this can be called once and
 * leaves @self spent.
 *
 * Returns: (transfer full): the output
 */
GBytes *
_terret_head_capture_finish_partial (TerretHeadCapture *self,
                                     guint64           *dropped)
{
  gsize output_len;
  guint64 count;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (!self->spent, NULL);

  output_len = _terret_utf8_whole_prefix (self->head, self->head_len);
  count = _terret_capture_dropped_count (self->seen, output_len);
  if (dropped != NULL)
    *dropped = count;

  return head_capture_spend (self, output_len);
}
