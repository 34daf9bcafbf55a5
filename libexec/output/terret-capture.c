/* terret-capture.c: one stream's capture under a capture mode
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The engines keep a stream through this alone; which of the three
 * captures does the keeping is the run's capture mode.
 */

#include "config.h"

#include "terret-capture-private.h"

struct _TerretStreamCapture
{
  TerretCaptureMode mode;
  TerretHeadCapture *head;          /* (owned) (nullable) */
  TerretTailCapture *tail;          /* (owned) (nullable) */
  TerretHeadTailCapture *head_tail; /* (owned) (nullable) */
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
  g_free (self);
}

TerretCaptureMode
_terret_stream_capture_get_mode (TerretStreamCapture *self)
{
  g_return_val_if_fail (self != NULL, TERRET_CAPTURE_MODE_DEFAULT);

  return self->mode;
}

void
_terret_stream_capture_append (TerretStreamCapture *self,
                               const guint8        *data,
                               gsize                len)
{
  g_return_if_fail (self != NULL);

  if (self->head != NULL)
    _terret_head_capture_append (self->head, data, len);
  else if (self->tail != NULL)
    _terret_tail_capture_append (self->tail, data, len);
  else
    _terret_head_tail_capture_append (self->head_tail, data, len);
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

  if (dropped != NULL)
    *dropped = count;
  if (cut_offset != NULL)
    *cut_offset = cut;
  return bytes;
}
