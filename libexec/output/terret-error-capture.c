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
 * start (LINE_SCAN bytes) and the lines kept. Most lines cost a newline
 * search and one pass for a few rare bytes; only a line that holds a
 * keyword meets the regular expression.
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

/* Whether @line holds one of the keywords every error shape has: most
 * lines do not, and never meet the regular expression. */
static gboolean
has_keyword (const guint8 *line,
             gsize         len)
{
  for (gsize i = 0; i < len; i++)
    {
      gsize left = len - i;

      switch (line[i])
        {
        case 'r':
          if (left >= 4 && memcmp (line + i, "rror", 4) == 0)
            return TRUE;
          break;
        case 'R':
          if (left >= 4 && memcmp (line + i, "RROR", 4) == 0)
            return TRUE;
          break;
        case 'F':
          if (left >= 4 && memcmp (line + i, "FAIL", 4) == 0)
            return TRUE;
          break;
        case 'p':
          if (left >= 5 && memcmp (line + i, "panic", 5) == 0)
            return TRUE;
          break;
        case 'n':
          if (i == 0 && left >= 6 && memcmp (line, "not ok", 6) == 0)
            return TRUE;
          break;
        case 'T':
          if (i == 0 && left >= 9 && memcmp (line, "Traceback", 9) == 0)
            return TRUE;
          break;
        default:
          break;
        }
    }
  return FALSE;
}

/* The line that began at line_start ended (or the stream did). */
static void
end_line (TerretErrorCapture *self)
{
  const guint8 *data = self->line->data;
  gsize len = self->line->len;

  if (self->texts->len < self->max_lines && len > 0 && has_keyword (data, len) &&
      g_regex_match_full (error_regex (), (const char *) data, len, 0, 0, NULL, NULL))
    {
      gsize shown = _terret_utf8_whole_prefix (data, MIN (len, LINE_SHOWN));

      g_array_append_val (self->offsets, self->line_start);
      g_ptr_array_add (self->texts, g_bytes_new (data, shown));
    }
  g_byte_array_set_size (self->line, 0);
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

/* The stream's next bytes, from where the scan stands. */
void
_terret_error_capture_append (TerretErrorCapture *self,
                              const guint8       *data,
                              gsize               len)
{
  g_return_if_fail (self->started);

  while (len > 0)
    {
      const guint8 *newline = memchr (data, '\n', len);
      gsize n = newline != NULL ? (gsize) (newline - data) : len;

      /* Once enough lines are kept, only the count goes on. */
      if (self->texts->len < self->max_lines && self->line->len < LINE_SCAN)
        g_byte_array_append (self->line, data, MIN (n, LINE_SCAN - self->line->len));

      if (newline == NULL)
        {
          self->pos += n;
          return;
        }

      end_line (self);
      self->newlines++;
      self->pos += n + 1;
      self->line_start = self->pos;
      data += n + 1;
      len -= n + 1;
    }
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
