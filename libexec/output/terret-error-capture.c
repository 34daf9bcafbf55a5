/* terret-error-capture.c: the lines of a stream that look like errors,
 * found as the bytes go past
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A cut result drops a middle that may hold the one line that matters (a
 * compiler's error above a long tail of warnings, the failed test among
 * thousands). The stream capture feeds this the bytes it may omit; it
 * counts their newlines and keeps the first few lines shaped like an
 * error, with their offsets, so the result can say what the middle held
 * without anyone reading it again. Memory stays bounded: one line's
 * start (LINE_SCAN bytes) and the lines kept. An append costs a count of
 * its newlines and one search for the words every error shape holds;
 * only a line that holds one meets the error pattern, and once enough
 * lines are kept only the count goes on.
 */

#include "config.h"

#include <string.h>

#include "terret-capture-private.h"
#include "terret-utf8-private.h"

/* Bytes of a line kept to classify it; an error's shape is in its start. */
#define LINE_SCAN 1024

/* Bytes of a kept line the result shows. */
#define LINE_SHOWN 512

struct _TerretErrorCapture
{
  guint max_lines;
  guint64 start;                /* the stream offset of the first byte */
  guint64 pos;                  /* the stream offset of the next byte */
  guint64 newlines;
  guint64 line_start;           /* the stream offset of the current line */
  GByteArray *line;             /* (owned) its first LINE_SCAN bytes */
  GArray *offsets;              /* (owned) guint64: of the lines kept */
  GPtrArray *texts;             /* (owned) GBytes: their starts */
  guint started : 1;
};

/*
 * What counts as an error line: a compiler's `file:line[:col]: error`,
 * `error:`/`Error:`/`ERROR:` (also `error[E0308]:`, `ValueError:`),
 * `FAILED`/`FAIL` as a word (test runners, `--- FAIL:`), TAP's `not ok`,
 * Python's `Traceback (most recent call last)`, and `panic:`/`panicked`.
 */
static const char error_pattern[] =
  "^\\S+?:\\d+(?::\\d+)?:\\s*(?:fatal\\s+)?error\\b"
  "|(?:error|Error|ERROR)(?:\\[\\w+\\])?:"
  "|\\bFAIL(?:ED)?\\b"
  "|^not ok\\b"
  "|^Traceback \\(most recent call last\\)"
  "|\\bpanic(?:ked\\b|:)";

static GRegex *
error_regex (void)
{
  static gsize once;
  static GRegex *regex;

  if (g_once_init_enter (&once))
    {
      g_autoptr(GError) error = NULL;

      /* RAW: output need not be UTF-8. */
      regex = g_regex_new (error_pattern, G_REGEX_RAW | G_REGEX_OPTIMIZE, 0, &error);
      g_assert_no_error (error);
      g_once_init_leave (&once, 1);
    }
  return regex;
}

/* Every error shape holds one of these words. Most output holds none,
 * and is passed over sixteen bytes at a time by their first three
 * letters, without a line of it meeting the error pattern: a regular
 * expression of the words alone, or a memmem per word, costs several
 * times the capture itself. */
static const struct
{
  char word[10];
  guint8 len;
} keywords[] = {
  { "rror", 4 }, { "RROR", 4 }, { "FAIL", 4 }, { "panic", 5 }, { "not ok", 6 }, { "Traceback", 9 },
};

typedef guint8 Bytes16 __attribute__ ((vector_size (16)));
typedef gint8 Mask16 __attribute__ ((vector_size (16)));

#define SPLAT(c) ((Bytes16) { c, c, c, c, c, c, c, c, c, c, c, c, c, c, c, c })

static inline Mask16
starts (Bytes16 a,
        Bytes16 b,
        Bytes16 c,
        guint8  x,
        guint8  y,
        guint8  z)
{
  return (a == SPLAT (x)) & (b == SPLAT (y)) & (c == SPLAT (z));
}

static gboolean
keyword_at (const guint8 *data,
            gsize         len,
            gsize         at)
{
  for (guint k = 0; k < G_N_ELEMENTS (keywords); k++)
    {
      if (data[at] == (guint8) keywords[k].word[0] && len - at >= keywords[k].len &&
          memcmp (data + at, keywords[k].word, keywords[k].len) == 0)
        return TRUE;
    }
  return FALSE;
}

/* Where the first keyword at or after @from in @data begins, or -1. */
static gssize
find_keyword (const guint8 *data,
              gsize         len,
              gsize         from)
{
  gsize i = from;

  for (; i + 18 <= len; i += 16)
    {
      Bytes16 a, b, c;
      Mask16 m;
      guint64 halves[2];

      memcpy (&a, data + i, 16);
      memcpy (&b, data + i + 1, 16);
      memcpy (&c, data + i + 2, 16);
      m = starts (a, b, c, 'r', 'r', 'o') | starts (a, b, c, 'R', 'R', 'O') |
          starts (a, b, c, 'F', 'A', 'I') | starts (a, b, c, 'p', 'a', 'n') |
          starts (a, b, c, 'n', 'o', 't') | starts (a, b, c, 'T', 'r', 'a');
      memcpy (halves, &m, 16);
      if ((halves[0] | halves[1]) == 0)
        continue;
      for (gsize j = 0; j < 16; j++)
        if (m[j] != 0 && keyword_at (data, len, i + j))
          return (gssize) (i + j);
    }
  for (; i < len; i++)
    if (keyword_at (data, len, i))
      return (gssize) i;
  return -1;
}

/* Keeps the line at @offset when it is an error's. */
static void
classify (TerretErrorCapture *self,
          const guint8       *line,
          gsize               len,
          guint64             offset)
{
  len = MIN (len, LINE_SCAN);
  if (self->texts->len < self->max_lines && len > 0 &&
      g_regex_match_full (error_regex (), (const char *) line, len, 0, 0, NULL, NULL))
    {
      gsize shown = _terret_utf8_whole_prefix (line, MIN (len, LINE_SHOWN));

      g_array_append_val (self->offsets, offset);
      g_ptr_array_add (self->texts, g_bytes_new (line, shown));
    }
}

/* The line carried across appends ended (or the stream did). */
static void
end_line (TerretErrorCapture *self)
{
  if (self->line->len > 0 && find_keyword (self->line->data, self->line->len, 0) >= 0)
    classify (self, self->line->data, self->line->len, self->line_start);
  g_byte_array_set_size (self->line, 0);
}

static void
carry (TerretErrorCapture *self,
       const guint8       *data,
       gsize               len)
{
  if (self->texts->len < self->max_lines && self->line->len < LINE_SCAN)
    g_byte_array_append (self->line, data, MIN (len, LINE_SCAN - self->line->len));
}

/* Eight bytes at a time: a byte of x = word ^ "\n\n..." is zero exactly
 * where the word holds a newline, and ((x & 0x7f..) + 0x7f..) | x has
 * its high bit clear exactly at those bytes (no carry crosses a byte). */
static guint64
count_newlines (const guint8 *data,
                gsize         len)
{
  const guint64 ones7 = G_GUINT64_CONSTANT (0x7f7f7f7f7f7f7f7f);
  const guint64 highs = G_GUINT64_CONSTANT (0x8080808080808080);
  const guint64 newlines = G_GUINT64_CONSTANT (0x0a0a0a0a0a0a0a0a);
  guint64 n = 0;
  gsize i = 0;

  for (; i + 8 <= len; i += 8)
    {
      guint64 word, x;

      memcpy (&word, data + i, 8);
      x = word ^ newlines;
      /* One bit per newline byte, summed by a multiply: eight at most. */
      x = (~(((x & ones7) + ones7) | x) & highs) >> 7;
      n += (x * G_GUINT64_CONSTANT (0x0101010101010101)) >> 56;
    }
  for (; i < len; i++)
    n += data[i] == '\n';
  return n;
}

/* Whole lines, @data ending with a newline: one search finds the next
 * keyword, and only its line is classified. */
static void
scan_lines (TerretErrorCapture *self,
            const guint8       *data,
            gsize               len,
            guint64             offset)
{
  gsize from = 0;

  while (self->texts->len < self->max_lines)
    {
      gssize hit = find_keyword (data, len, from);
      const guint8 *before, *newline;
      gsize line_start, line_end;

      if (hit < 0)
        return;

      before = memrchr (data, '\n', (gsize) hit);
      line_start = before != NULL ? (gsize) (before - data) + 1 : 0;
      newline = memchr (data + hit, '\n', len - (gsize) hit);
      g_assert (newline != NULL);
      line_end = (gsize) (newline - data);
      classify (self, data + line_start, line_end - line_start, offset + line_start);
      from = line_end + 1;
    }
}

/*
 * _terret_error_capture_new:
 * @max_lines: how many error lines to keep at most
 *
 * Returns: (transfer full): a capture not started yet
 */
TerretErrorCapture *
_terret_error_capture_new (guint max_lines)
{
  TerretErrorCapture *self = g_new0 (TerretErrorCapture, 1);

  self->max_lines = max_lines;
  self->line = g_byte_array_new ();
  self->offsets = g_array_new (FALSE, FALSE, sizeof (guint64));
  self->texts = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);
  return self;
}

void
_terret_error_capture_free (TerretErrorCapture *self)
{
  if (self == NULL)
    return;

  g_byte_array_unref (self->line);
  g_array_unref (self->offsets);
  g_ptr_array_unref (self->texts);
  g_free (self);
}

/*
 * _terret_error_capture_start:
 * @offset: the stream offset of the first byte to come; a line begins
 *   there, whether or not the stream's does
 *
 * Starts the scan.
 */
void
_terret_error_capture_start (TerretErrorCapture *self,
                             guint64             offset)
{
  g_return_if_fail (!self->started);

  self->started = TRUE;
  self->start = self->pos = self->line_start = offset;
}

gboolean
_terret_error_capture_is_started (TerretErrorCapture *self)
{
  return self->started;
}

/* The stream's next bytes, from where the scan stands: the line carried
 * from before ends at the first newline, the whole lines after it are
 * searched at once, and the last one is carried on. */
void
_terret_error_capture_append (TerretErrorCapture *self,
                              const guint8       *data,
                              gsize               len)
{
  const guint8 *first, *last;
  gsize tail;

  g_return_if_fail (self->started);

  if (len == 0)
    return;

  first = memchr (data, '\n', len);
  if (first == NULL)
    {
      carry (self, data, len);
      self->pos += len;
      return;
    }

  carry (self, data, (gsize) (first - data));
  end_line (self);
  last = memrchr (first, '\n', len - (gsize) (first - data));
  self->newlines += 1 + count_newlines (first + 1, (gsize) (last - first));
  if (last > first && self->texts->len < self->max_lines)
    scan_lines (self, first + 1, (gsize) (last - first), self->pos + (guint64) (first + 1 - data));

  tail = (gsize) (last + 1 - data);
  self->line_start = self->pos + tail;
  carry (self, last + 1, len - tail);
  self->pos += len;
}

/* Newlines among the bytes appended. */
guint64
_terret_error_capture_get_newlines (TerretErrorCapture *self)
{
  return self->newlines;
}

/*
 * _terret_error_capture_finish:
 * @end: lines that begin at or past it are not wanted
 * @offsets: (out): the kept lines' stream offsets (guint64)
 *
 * Ends the scan (a last line without its newline counts as a line).
 *
 * Returns: (transfer full) (element-type GBytes): the kept lines that
 *   begin before @end, each the start of its line
 */
GPtrArray *
_terret_error_capture_finish (TerretErrorCapture  *self,
                              guint64              end,
                              GArray             **offsets)
{
  GPtrArray *texts = g_ptr_array_new_with_free_func ((GDestroyNotify) g_bytes_unref);

  if (self->pos > self->line_start)
    end_line (self);

  *offsets = g_array_new (FALSE, FALSE, sizeof (guint64));
  for (guint i = 0; i < self->texts->len; i++)
    {
      guint64 offset = g_array_index (self->offsets, guint64, i);

      /* Offsets grow: past @end, every one after is too. */
      if (offset >= end)
        break;
      g_array_append_val (*offsets, offset);
      g_ptr_array_add (texts, g_bytes_ref (g_ptr_array_index (self->texts, i)));
    }
  return texts;
}
