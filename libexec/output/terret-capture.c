/* terret-capture.c: one stream's capture under a capture mode
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The engines keep a stream through this alone; which of the three
 * captures does the keeping is the run's capture mode.
 */

#include "config.h"

#include "terret-capture-private.h"
#include "terret-output-line.h"

struct _TerretStreamCapture
{
  TerretCaptureMode mode;
  gsize limit;
  TerretHeadCapture *head;          /* (owned) (nullable) */
  TerretTailCapture *tail;          /* (owned) (nullable) */
  TerretHeadTailCapture *head_tail; /* (owned) (nullable) */

  /* The bytes a cut may omit, scanned as they pass: from the limit for a
   * head, from the start for a tail, from where the kept head ends for a
   * head-tail (known once the stream has passed the head). */
  TerretErrorCapture *errors;       /* (owned) */
  GPtrArray *omitted_texts;         /* (owned) (nullable) after a cut finish */
  GArray *omitted_offsets;          /* (owned) (nullable) */
  guint64 omitted_lines;
};

/*
 * _terret_stream_capture_new:
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
_terret_stream_capture_new (TerretCaptureMode mode,
                            gsize             limit)
{
  TerretStreamCapture *self;

  g_return_val_if_fail (mode == TERRET_CAPTURE_MODE_HEAD || mode == TERRET_CAPTURE_MODE_TAIL ||
                        mode == TERRET_CAPTURE_MODE_HEAD_TAIL, NULL);

  self = g_new0 (TerretStreamCapture, 1);
  self->mode = mode;
  self->limit = limit;
  self->errors = _terret_error_capture_new (TERRET_OMITTED_ERRORS_MAX);
  switch (mode)
    {
    case TERRET_CAPTURE_MODE_HEAD:
      /* The session engine's scanner works ahead of the capture and never
       * lets a marker byte into it, so the window needs one byte. */
      self->head = _terret_head_capture_new (limit, 1);
      break;
    case TERRET_CAPTURE_MODE_TAIL:
      self->tail = _terret_tail_capture_new (limit, CLAMP (limit / 4, 4096,
                                                           TERRET_TAIL_CAPTURE_DEFAULT_OVERSHOOT));
      _terret_error_capture_start (self->errors, 0);
      break;
    case TERRET_CAPTURE_MODE_HEAD_TAIL:
    case TERRET_CAPTURE_MODE_DEFAULT:
    default:
      self->head_tail = _terret_head_tail_capture_new (limit);
      break;
    }

  return self;
}

void
_terret_stream_capture_free (TerretStreamCapture *self)
{
  if (self == NULL)
    return;

  g_clear_pointer (&self->head, _terret_head_capture_free);
  g_clear_pointer (&self->tail, _terret_tail_capture_free);
  g_clear_pointer (&self->head_tail, _terret_head_tail_capture_free);
  g_clear_pointer (&self->errors, _terret_error_capture_free);
  g_clear_pointer (&self->omitted_texts, g_ptr_array_unref);
  g_clear_pointer (&self->omitted_offsets, g_array_unref);
  g_free (self);
}

TerretCaptureMode
_terret_stream_capture_get_mode (TerretStreamCapture *self)
{
  g_return_val_if_fail (self != NULL, TERRET_CAPTURE_MODE_DEFAULT);

  return self->mode;
}

/* Feeds the error scan the part of an append at stream offsets from
 * @from on, where the append began at @seen. */
static void
scan_from (TerretStreamCapture *self,
           guint64              seen,
           guint64              from,
           const guint8        *data,
           gsize                len)
{
  gsize skip;

  if (seen + len <= from)
    return;
  skip = seen < from ? (gsize) (from - seen) : 0;
  _terret_error_capture_append (self->errors, data + skip, len - skip);
}

void
_terret_stream_capture_append (TerretStreamCapture *self,
                               const guint8        *data,
                               gsize                len)
{
  guint64 seen;

  g_return_if_fail (self != NULL);

  seen = _terret_stream_capture_get_seen (self);
  if (self->head != NULL)
    {
      _terret_head_capture_append (self->head, data, len);
      if (seen + len > self->limit)
        {
          if (!_terret_error_capture_is_started (self->errors))
            _terret_error_capture_start (self->errors, self->limit);
          scan_from (self, seen, self->limit, data, len);
        }
    }
  else if (self->tail != NULL)
    {
      _terret_tail_capture_append (self->tail, data, len);
      _terret_error_capture_append (self->errors, data, len);
    }
  else
    {
      gsize head_end, head;

      _terret_head_tail_capture_append (self->head_tail, data, len);
      if (_terret_error_capture_is_started (self->errors))
        _terret_error_capture_append (self->errors, data, len);
      else if (seen + len >= self->limit / 2)
        {
          /* The head is fixed now: the scan starts where the kept head
           * ends, with what of the head a cut would omit. */
          const guint8 *buf = _terret_head_tail_capture_peek_head (self->head_tail, &head_end, &head);

          _terret_error_capture_start (self->errors, head_end);
          _terret_error_capture_append (self->errors, buf + head_end, head - head_end);
          scan_from (self, seen, head, data, len);
        }
    }
}

guint64
_terret_stream_capture_get_seen (TerretStreamCapture *self)
{
  g_return_val_if_fail (self != NULL, 0);

  if (self->head != NULL)
    return _terret_head_capture_get_seen (self->head);
  if (self->tail != NULL)
    return _terret_tail_capture_get_seen (self->tail);
  return _terret_head_tail_capture_get_seen (self->head_tail);
}

/*
 * _terret_stream_capture_finish:
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
_terret_stream_capture_finish (TerretStreamCapture *self,
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
      bytes = partial ? _terret_head_capture_finish_partial (self->head, &count)
                      : _terret_head_capture_finish (self->head,
                                                     _terret_head_capture_get_seen (self->head),
                                                     &count);
      cut = g_bytes_get_size (bytes);
    }
  else if (self->tail != NULL)
    {
      bytes = _terret_tail_capture_finish (self->tail, &count);
      cut = count > 0 ? 0 : g_bytes_get_size (bytes);
    }
  else
    bytes = _terret_head_tail_capture_finish (self->head_tail, &count, &cut);

  /* What the omitted bytes held: [cut, cut + count) of the stream. Their
   * newlines are those scanned less those of the kept bytes past the
   * cut (a head keeps none; the scan of a head begins at its limit, and
   * the few bytes a partial head backs off hold no newline). */
  if (count > 0 && _terret_error_capture_is_started (self->errors))
    {
      gsize len = 0;
      const guint8 *data = g_bytes_get_data (bytes, &len);
      guint64 kept_newlines = 0;

      for (gsize i = MIN (cut, len); i < len; i++)
        kept_newlines += data[i] == '\n';
      self->omitted_lines = _terret_error_capture_get_newlines (self->errors) - kept_newlines;
      self->omitted_texts = _terret_error_capture_finish (self->errors, cut + count,
                                                          &self->omitted_offsets);
    }

  if (dropped != NULL)
    *dropped = count;
  if (cut_offset != NULL)
    *cut_offset = cut;
  return bytes;
}

/*
 * _terret_stream_capture_take_omitted:
 * @self: a capture that finished
 * @base: the stream offset of the capture's first byte (a poll's
 *   stretch begins past the earlier ones')
 * @n_lines: (out): how many lines the omitted bytes held
 *
 * What the bytes a cut finish omitted held: the first lines among them
 * that look like errors, at their stream offsets, or NULL when the
 * capture omitted nothing it could tell of.
 */
GPtrArray *
_terret_stream_capture_take_omitted (TerretStreamCapture *self,
                                     guint64              base,
                                     guint64             *n_lines)
{
  GPtrArray *lines;

  g_return_val_if_fail (self != NULL, NULL);

  *n_lines = 0;
  if (self->omitted_texts == NULL)
    return NULL;

  lines = g_ptr_array_new_with_free_func ((GDestroyNotify) terret_output_line_unref);
  for (guint i = 0; i < self->omitted_texts->len; i++)
    g_ptr_array_add (lines, terret_output_line_new (base + g_array_index (self->omitted_offsets, guint64, i),
                                                    g_ptr_array_index (self->omitted_texts, i)));
  *n_lines = self->omitted_lines;
  return lines;
}
