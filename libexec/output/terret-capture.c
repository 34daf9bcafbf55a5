/* terret-capture.c: bounded output capture shared by the backends
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-capture-private.h"

#include <string.h>

/* Every buffer here grows geometrically from this size. */
#define BUFFER_MIN_ALLOC 256

/* UTF-8 ------------------------------------------------------------------ */

static inline gboolean
utf8_is_continuation (guint8 byte)
{
  return (byte & 0xC0) == 0x80;
}

/* The length a UTF-8 sequence beginning with @lead announces, or 0 when
 * @lead cannot begin one (a continuation byte, 0xF8..0xFF). Only the bit
 * pattern counts, not whether the code point would be valid: C0, C1 and
 * F5..F7 announce 2, 2 and 4 bytes like any other lead. */
static inline guint
utf8_sequence_length (guint8 lead)
{
  if (lead < 0x80)
    return 1;
  if ((lead & 0xE0) == 0xC0)
    return 2;
  if ((lead & 0xF0) == 0xE0)
    return 3;
  if ((lead & 0xF8) == 0xF0)
    return 4;
  return 0;
}

/*
 * terret_utf8_whole_prefix:
 * @data: (array length=len) (nullable): the bytes before a cut
 * @len: where the cut lies, the number of bytes in @data
 *
 * Backs a cut at @len off to the last whole UTF-8 character, so that a
 * cut made by the caller never splits a character in two.
 *
 * Only an incomplete trailing character is removed, and so never more
 * than three bytes: the function walks back over at most three
 * continuation bytes (`10xxxxxx`) to a lead byte, and when the length
 * the lead announces (`0xxxxxxx` 1, `110xxxxx` 2, `1110xxxx` 3,
 * `11110xxx` 4) is longer than the bytes present, the cut moves to just
 * before the lead.
 *
 * Bytes that were never valid UTF-8 are left exactly as they are: a
 * stray continuation byte, a run of four or more continuation bytes, or
 * a byte that cannot begin a sequence (0xF8..0xFF) ends the walk without
 * moving the cut. The rule reads only the length a lead announces, not
 * the code point: a complete-length overlong such as `C0 80` is kept
 * verbatim, and a lone `C0` at the cut is removed like any other
 * incomplete sequence (at most three bytes that the cut was losing
 * anyway).
 *
 * Returns: the length of the prefix of @data that ends on a character
 *   boundary, at most @len and at least `@len - 3`
 */
gsize
terret_utf8_whole_prefix (const guint8 *data,
                          gsize         len)
{
  gsize trailing = 0;
  gsize lead_at;

  g_return_val_if_fail (data != NULL || len == 0, 0);

  while (trailing < 3 && trailing < len &&
         utf8_is_continuation (data[len - 1 - trailing]))
    trailing++;

  /* Nothing but continuation bytes back to the start: no lead to judge. */
  if (trailing == len)
    return len;

  /* A fourth continuation byte is no lead either: utf8_sequence_length()
   * answers 0 for it, which keeps the cut where it is. */
  lead_at = len - 1 - trailing;
  if (utf8_sequence_length (data[lead_at]) > trailing + 1)
    return lead_at;

  return len;
}

/*
 * terret_utf8_whole_suffix:
 * @data: (array length=len) (nullable): the bytes around a cut
 * @len: the number of bytes in @data
 * @start: where the kept part begins, at most @len
 *
 * The mirror of [func@Terret.utf8_whole_prefix] for a cut at the front:
 * the caller keeps `data[start..len)` and must not begin it in the middle
 * of a character.
 *
 * The continuation bytes at @start are skipped only when they belong to a
 * character whose lead byte lies before @start, at most three bytes back,
 * and whose announced length reaches past @start. Any other continuation
 * bytes at @start (with no lead, or past the length their lead announced)
 * were never part of a valid character and are kept as they are.
 *
 * Returns: the first offset at or after @start that does not split a
 *   character, at most `@start + 3`
 */
gsize
terret_utf8_whole_suffix (const guint8 *data,
                          gsize         len,
                          gsize         start)
{
  gsize back;

  g_return_val_if_fail (data != NULL || len == 0, start);
  g_return_val_if_fail (start <= len, len);

  if (start == len || !utf8_is_continuation (data[start]))
    return start;

  for (back = 1; back <= 3 && back <= start; back++)
    {
      guint8 byte = data[start - back];
      gsize char_end;
      gsize pos;

      if (utf8_is_continuation (byte))
        continue;

      /* The first non-continuation byte decides: either its character
       * reaches past @start, or the bytes at @start are not its own. */
      if (utf8_sequence_length (byte) <= back)
        return start;

      char_end = start - back + utf8_sequence_length (byte);
      for (pos = start; pos < char_end && pos < len && utf8_is_continuation (data[pos]); pos++)
        ;
      return pos;
    }

  return start;
}

/* Buffers ---------------------------------------------------------------- */

/* Makes room for @needed bytes in *@buf, growing geometrically so that
 * appends stay amortized-linear, but never allocating more than @bound:
 * the bound is what the capture promises about its memory. */
static void
buffer_reserve (guint8 **buf,
                gsize   *alloc,
                gsize    needed,
                gsize    bound)
{
  gsize size;

  g_assert (needed <= bound);

  if (needed <= *alloc)
    return;

  size = MAX (*alloc, BUFFER_MIN_ALLOC);
  while (size < needed)
    size = size >= bound / 2 ? bound : size * 2;
  size = MIN (size, bound);

  *buf = g_realloc (*buf, size);
  *alloc = size;
}

/* Hands @len bytes of *@buf over as GBytes without copying them. */
static GBytes *
buffer_steal_bytes (guint8 **buf,
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
static guint64
dropped_count (guint64 total,
               gsize   output_len)
{
  if (G_UNLIKELY (output_len > total))
    g_error ("capture returned %" G_GSIZE_FORMAT " bytes of output for a "
             "stream whose output ends after %" G_GUINT64_FORMAT,
             output_len, total);

  return total - output_len;
}

/* Head capture ----------------------------------------------------------- */

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

G_DEFINE_BOXED_TYPE (TerretHeadCapture, terret_head_capture,
                     head_capture_copy, terret_head_capture_free)

/*
 * terret_head_capture_new:
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
terret_head_capture_new (gsize limit,
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
 * terret_head_capture_free:
 * @self: (transfer full) (nullable): a capture
 *
 * Frees @self and the bytes it holds. Nothing happens when @self is %NULL.
 */
void
terret_head_capture_free (TerretHeadCapture *self)
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

      buffer_reserve (&self->roll, &self->roll_alloc, new_len, bound);
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
          buffer_reserve (&self->roll, &self->roll_alloc, new_len, bound);
        }
      else
        {
          buffer_reserve (&self->roll, &self->roll_alloc, new_len, bound);
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
 * terret_head_capture_append:
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
terret_head_capture_append (TerretHeadCapture *self,
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
      buffer_reserve (&self->head, &self->head_alloc,
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
 * terret_head_capture_get_seen:
 * @self: a capture
 *
 * Gets how many bytes have been appended in all, kept or not. It stays
 * valid after the capture is spent.
 *
 * Returns: the stream offset just past the last byte appended
 */
guint64
terret_head_capture_get_seen (TerretHeadCapture *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->seen;
}

/*
 * terret_head_capture_peek:
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
terret_head_capture_peek (TerretHeadCapture *self,
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

  bytes = buffer_steal_bytes (&self->head, &self->head_alloc, output_len);
  self->head_len = 0;
  g_clear_pointer (&self->roll, g_free);
  self->roll_len = 0;
  self->roll_alloc = 0;
  self->spent = TRUE;

  return bytes;
}

/*
 * terret_head_capture_finish:
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
terret_head_capture_finish (TerretHeadCapture *self,
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
    output_len = terret_utf8_whole_prefix (self->head, self->head_len);

  count = dropped_count (end, output_len);
  if (dropped != NULL)
    *dropped = count;

  return head_capture_spend (self, output_len);
}

/*
 * terret_head_capture_finish_partial:
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
terret_head_capture_finish_partial (TerretHeadCapture *self,
                                    guint64           *dropped)
{
  gsize output_len;
  guint64 count;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (!self->spent, NULL);

  output_len = terret_utf8_whole_prefix (self->head, self->head_len);
  count = dropped_count (self->seen, output_len);
  if (dropped != NULL)
    *dropped = count;

  return head_capture_spend (self, output_len);
}

/* Tail capture ----------------------------------------------------------- */

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

G_DEFINE_BOXED_TYPE (TerretTailCapture, terret_tail_capture,
                     tail_capture_copy, terret_tail_capture_free)

/*
 * terret_tail_capture_new:
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
terret_tail_capture_new (gsize window,
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
 * terret_tail_capture_free:
 * @self: (transfer full) (nullable): a capture
 *
 * Frees @self and the bytes it holds. Nothing happens when @self is %NULL.
 */
void
terret_tail_capture_free (TerretTailCapture *self)
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

  return from + terret_utf8_whole_suffix (around, around_len, keep - from);
}

/*
 * terret_tail_capture_append:
 * @self: a capture that is not spent
 * @data: (array length=len) (nullable): the stream's next bytes
 * @len: the number of bytes in @data
 *
 * Appends the stream's next bytes, evicting the oldest ones as described
 * in [ctor@Terret.TailCapture.new]. Bytes of @data that an eviction would
 * discard are never copied. An empty append changes nothing.
 */
void
terret_tail_capture_append (TerretTailCapture *self,
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
      buffer_reserve (&self->buf, &self->alloc, total, self->bound);
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
          buffer_reserve (&self->buf, &self->alloc, keep, self->bound);
        }
      if (keep > 0)
        memcpy (self->buf, data + skip, keep);
      self->len = keep;
    }
  else
    {
      gsize keep_old = self->len - cut;

      memmove (self->buf, self->buf + cut, keep_old);
      buffer_reserve (&self->buf, &self->alloc, keep_old + len, self->bound);
      memcpy (self->buf + keep_old, data, len);
      self->len = keep_old + len;
    }
}

/*
 * terret_tail_capture_get_seen:
 * @self: a capture
 *
 * Gets how many bytes have been appended in all, kept or not. It stays
 * valid after the capture is spent.
 *
 * Returns: the number of bytes appended
 */
guint64
terret_tail_capture_get_seen (TerretTailCapture *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->seen;
}

/*
 * terret_tail_capture_get_size:
 * @self: a capture
 *
 * Gets how many bytes the capture holds now, never more than its window
 * plus its overshoot. The bytes dropped so far are the ones seen and not
 * held.
 *
 * Returns: the number of bytes held
 */
gsize
terret_tail_capture_get_size (TerretTailCapture *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->len;
}

/*
 * terret_tail_capture_finish:
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
terret_tail_capture_finish (TerretTailCapture *self,
                            guint64           *dropped)
{
  GBytes *bytes;
  guint64 count;

  g_return_val_if_fail (self != NULL, NULL);
  g_return_val_if_fail (!self->spent, NULL);

  count = dropped_count (self->seen, self->len);
  if (dropped != NULL)
    *dropped = count;

  bytes = buffer_steal_bytes (&self->buf, &self->alloc, self->len);
  self->len = 0;
  self->spent = TRUE;

  return bytes;
}

/* Head-tail capture ------------------------------------------------------ */

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
 * terret_head_tail_capture_new:
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
terret_head_tail_capture_new (gsize limit)
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
 * terret_head_tail_capture_free:
 * @self: (transfer full) (nullable): a capture
 *
 * Frees @self and the bytes it holds. Nothing happens when @self is %NULL.
 */
void
terret_head_tail_capture_free (TerretHeadTailCapture *self)
{
  if (self == NULL)
    return;

  g_clear_pointer (&self->buf, g_free);
  g_free (self);
}

/*
 * terret_head_tail_capture_append:
 * @self: a capture that is not spent
 * @data: (array length=len) (nullable): the stream's next bytes
 * @len: the number of bytes in @data
 *
 * Appends the stream's next bytes. Of an append longer than the ring only
 * its last bytes are copied. An empty append changes nothing.
 */
void
terret_head_tail_capture_append (TerretHeadTailCapture *self,
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

      buffer_reserve (&self->buf, &self->alloc, self->seen + take, bound);
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
 * terret_head_tail_capture_get_seen:
 * @self: a capture
 *
 * Gets how many bytes have been appended in all, kept or not. It stays
 * valid after the capture is spent.
 *
 * Returns: the number of bytes appended
 */
guint64
terret_head_tail_capture_get_seen (TerretHeadTailCapture *self)
{
  g_return_val_if_fail (self != NULL, 0);

  return self->seen;
}

/*
 * terret_head_tail_capture_get_size:
 * @self: a capture
 *
 * Gets how many bytes the capture holds now: never more than its limit
 * plus four.
 *
 * Returns: the number of bytes held
 */
gsize
terret_head_tail_capture_get_size (TerretHeadTailCapture *self)
{
  g_return_val_if_fail (self != NULL, 0);

  if (self->spent)
    return 0;
  return (gsize)MIN (self->seen, (guint64)(self->head + self->ring));
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
 * terret_head_tail_capture_finish:
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
terret_head_tail_capture_finish (TerretHeadTailCapture *self,
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
      return buffer_steal_bytes (&self->buf, &self->alloc, len);
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
        start = terret_utf8_whole_suffix (slice, slice_len, start);
    }
  tail_len = slice_len - start;

  /* The head ends after its last newline in its last quarter. */
  near = self->head / 4;
  head_end = 0;
  for (gsize pos = self->head; pos > self->head - near; pos--)
    if (self->buf[pos - 1] == '\n')
      {
        head_end = pos;
        break;
      }
  if (head_end == 0)
    head_end = terret_utf8_whole_prefix (self->buf, self->head);

  if (tail_len > 0)
    memmove (self->buf + head_end, slice + start, tail_len);

  if (dropped != NULL)
    *dropped = dropped_count (self->seen, head_end + tail_len);
  if (cut_offset != NULL)
    *cut_offset = head_end;
  return buffer_steal_bytes (&self->buf, &self->alloc, head_end + tail_len);
}

/* Stream capture --------------------------------------------------------- */

struct _TerretStreamCapture
{
  TerretCaptureMode mode;
  TerretHeadCapture *head;          /* (owned) (nullable) */
  TerretTailCapture *tail;          /* (owned) (nullable) */
  TerretHeadTailCapture *head_tail; /* (owned) (nullable) */
};

/*
 * terret_stream_capture_new:
 * @mode: which bytes to keep; not %TERRET_CAPTURE_MODE_DEFAULT, which an
 *   engine resolves first
 * @limit: the stream's `max-output`
 *
 * Creates the capture of one stream under @mode. A head keeps the first
 * @limit bytes; a tail the last @limit, with an overshoot of a quarter of
 * @limit (4 KiB to 256 KiB) for amortized-linear eviction; a head-tail
 * both halves, in @limit bytes plus four.
 *
 * Returns: (transfer full): a new capture
 */
TerretStreamCapture *
terret_stream_capture_new (TerretCaptureMode mode,
                           gsize             limit)
{
  TerretStreamCapture *self;

  g_return_val_if_fail (mode == TERRET_CAPTURE_MODE_HEAD || mode == TERRET_CAPTURE_MODE_TAIL ||
                        mode == TERRET_CAPTURE_MODE_HEAD_TAIL, NULL);

  self = g_new0 (TerretStreamCapture, 1);
  self->mode = mode;
  switch (mode)
    {
    case TERRET_CAPTURE_MODE_HEAD:
      /* The session engine's scanner works ahead of the capture and never
       * lets a marker byte into it, so the window needs one byte. */
      self->head = terret_head_capture_new (limit, 1);
      break;
    case TERRET_CAPTURE_MODE_TAIL:
      self->tail = terret_tail_capture_new (limit, CLAMP (limit / 4, 4096,
                                                          TERRET_TAIL_CAPTURE_DEFAULT_OVERSHOOT));
      break;
    case TERRET_CAPTURE_MODE_HEAD_TAIL:
    case TERRET_CAPTURE_MODE_DEFAULT:
    default:
      self->head_tail = terret_head_tail_capture_new (limit);
      break;
    }

  return self;
}

void
terret_stream_capture_free (TerretStreamCapture *self)
{
  if (self == NULL)
    return;

  g_clear_pointer (&self->head, terret_head_capture_free);
  g_clear_pointer (&self->tail, terret_tail_capture_free);
  g_clear_pointer (&self->head_tail, terret_head_tail_capture_free);
  g_free (self);
}

TerretCaptureMode
terret_stream_capture_get_mode (TerretStreamCapture *self)
{
  g_return_val_if_fail (self != NULL, TERRET_CAPTURE_MODE_DEFAULT);

  return self->mode;
}

void
terret_stream_capture_append (TerretStreamCapture *self,
                              const guint8        *data,
                              gsize                len)
{
  g_return_if_fail (self != NULL);

  if (self->head != NULL)
    terret_head_capture_append (self->head, data, len);
  else if (self->tail != NULL)
    terret_tail_capture_append (self->tail, data, len);
  else
    terret_head_tail_capture_append (self->head_tail, data, len);
}

guint64
terret_stream_capture_get_seen (TerretStreamCapture *self)
{
  g_return_val_if_fail (self != NULL, 0);

  if (self->head != NULL)
    return terret_head_capture_get_seen (self->head);
  if (self->tail != NULL)
    return terret_tail_capture_get_seen (self->tail);
  return terret_head_tail_capture_get_seen (self->head_tail);
}

/*
 * terret_stream_capture_finish:
 * @self: a capture that is not spent
 * @partial: the stream stopped without its end (a deadline, the shell
 *   gone): a head is then backed off to a whole character even within its
 *   limit, see [method@Terret.HeadCapture.finish_partial]
 * @dropped: (out) (optional): how many bytes were omitted
 * @cut_offset: (out) (optional): where in the kept bytes they were: the
 *   kept length for a head, 0 for a tail, the kept head's length for a
 *   head-tail; the kept length when nothing was omitted
 *
 * Ends the capture. Every byte appended is output.
 *
 * Returns: (transfer full): the kept bytes
 */
GBytes *
terret_stream_capture_finish (TerretStreamCapture *self,
                              gboolean             partial,
                              guint64             *dropped,
                              gsize               *cut_offset)
{
  guint64 count = 0;
  gsize cut = 0;
  GBytes *bytes;

  g_return_val_if_fail (self != NULL, NULL);

  if (self->head != NULL)
    {
      bytes = partial ? terret_head_capture_finish_partial (self->head, &count)
                      : terret_head_capture_finish (self->head,
                                                    terret_head_capture_get_seen (self->head),
                                                    &count);
      cut = g_bytes_get_size (bytes);
    }
  else if (self->tail != NULL)
    {
      bytes = terret_tail_capture_finish (self->tail, &count);
      cut = count > 0 ? 0 : g_bytes_get_size (bytes);
    }
  else
    bytes = terret_head_tail_capture_finish (self->head_tail, &count, &cut);

  if (dropped != NULL)
    *dropped = count;
  if (cut_offset != NULL)
    *cut_offset = cut;
  return bytes;
}
