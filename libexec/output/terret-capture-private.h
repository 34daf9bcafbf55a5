/* terret-capture-private.h: bounded output capture: the three ways to keep
 * a stream's bytes, and the stream capture the engines use, which picks one
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib-object.h>

#include "terret-types.h"

G_BEGIN_DECLS

/*
 * TerretHeadCapture:
 *
 * Keeps the first bytes of a stream up to a limit while still letting a
 * reader scan the rest of it for a marker.
 *
 * Every byte appended has a stream offset (the first byte is offset 0).
 * Below the limit all bytes are retained. Past it the bytes beyond the
 * limit are counted and discarded, except for a rolling window that
 * ends at the stream's end and holds the latest append and at least
 * `window` bytes before it, so a marker of up to `window` bytes that ends
 * in the latest append is whole in it, even one that straddles the
 * limit. [method@Terret.HeadCapture.peek] returns the contiguous region
 * a marker scanner searches after each append, and
 * [method@Terret.HeadCapture.finish] ends the capture where the marker
 * begins, so no byte of the marker is ever returned as output.
 */
typedef struct _TerretHeadCapture TerretHeadCapture;

#define TERRET_TYPE_HEAD_CAPTURE (_terret_head_capture_get_type ())

GType              _terret_head_capture_get_type       (void) G_GNUC_CONST;
TerretHeadCapture *_terret_head_capture_new            (gsize               limit,
                                                        gsize               window);
void               _terret_head_capture_free           (TerretHeadCapture  *self);
void               _terret_head_capture_append         (TerretHeadCapture  *self,
                                                        const guint8       *data,
                                                        gsize               len);
guint64            _terret_head_capture_get_seen       (TerretHeadCapture  *self);
const guint8      *_terret_head_capture_peek           (TerretHeadCapture  *self,
                                                        guint64            *region_start,
                                                        gsize              *region_len);
GBytes            *_terret_head_capture_finish         (TerretHeadCapture  *self,
                                                        guint64             end,
                                                        guint64            *dropped);
GBytes            *_terret_head_capture_finish_partial (TerretHeadCapture  *self,
                                                        guint64            *dropped);

/*
 * TerretTailCapture:
 *
 * Keeps the last bytes of a stream: a window plus an overshoot, evicting
 * only once the overshoot is reached so the cost stays amortized-linear,
 * and cutting at a newline when there is one.
 */
typedef struct _TerretTailCapture TerretTailCapture;

#define TERRET_TYPE_TAIL_CAPTURE (_terret_tail_capture_get_type ())

/*
 * TERRET_TAIL_CAPTURE_DEFAULT_WINDOW:
 *
 * What one stream's tail keeps by default: 1 MiB plus 50 KiB of slack for
 * line alignment.
 */
#define TERRET_TAIL_CAPTURE_DEFAULT_WINDOW (1024 * 1024 + 50 * 1024)

/*
 * TERRET_TAIL_CAPTURE_DEFAULT_OVERSHOOT:
 *
 * The overshoot an eviction waits for by default.
 */
#define TERRET_TAIL_CAPTURE_DEFAULT_OVERSHOOT (256 * 1024)

GType              _terret_tail_capture_get_type (void) G_GNUC_CONST;
TerretTailCapture *_terret_tail_capture_new      (gsize               window,
                                                  gsize               overshoot);
void               _terret_tail_capture_free     (TerretTailCapture  *self);
void               _terret_tail_capture_append   (TerretTailCapture  *self,
                                                  const guint8       *data,
                                                  gsize               len);
guint64            _terret_tail_capture_get_seen (TerretTailCapture  *self);
gsize              _terret_tail_capture_get_size (TerretTailCapture  *self);
GBytes            *_terret_tail_capture_finish   (TerretTailCapture  *self,
                                                  guint64            *dropped);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TerretHeadCapture, _terret_head_capture_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TerretTailCapture, _terret_tail_capture_free)

/*
 * TerretHeadTailCapture:
 *
 * Keeps the first and the last bytes of a stream: up to a limit, every
 * byte; past it, the first half of the limit and a ring of the last
 * half, which a finish cuts at line boundaries near the cuts. It never
 * holds more than the limit plus four bytes of context.
 */
typedef struct _TerretHeadTailCapture TerretHeadTailCapture;

TerretHeadTailCapture *_terret_head_tail_capture_new      (gsize                   limit);
void                   _terret_head_tail_capture_free     (TerretHeadTailCapture  *self);
void                   _terret_head_tail_capture_append   (TerretHeadTailCapture  *self,
                                                           const guint8           *data,
                                                           gsize                   len);
guint64                _terret_head_tail_capture_get_seen (TerretHeadTailCapture  *self);
gsize                  _terret_head_tail_capture_get_size (TerretHeadTailCapture  *self);
const guint8          *_terret_head_tail_capture_peek_head (TerretHeadTailCapture *self,
                                                           gsize                  *head_end,
                                                           gsize                  *head);
GBytes                *_terret_head_tail_capture_finish   (TerretHeadTailCapture  *self,
                                                           guint64                *dropped,
                                                           gsize                  *cut_offset);

/*
 * TerretErrorCapture:
 *
 * Counts the newlines of the bytes a capture may omit and keeps the first
 * few lines among them shaped like an error, with their offsets, in
 * bounded memory, as the bytes go past.
 */
typedef struct _TerretErrorCapture TerretErrorCapture;

TerretErrorCapture *_terret_error_capture_new          (guint                max_lines);
void                _terret_error_capture_free         (TerretErrorCapture  *self);
void                _terret_error_capture_start        (TerretErrorCapture  *self,
                                                        guint64              offset);
gboolean            _terret_error_capture_is_started   (TerretErrorCapture  *self);
void                _terret_error_capture_append       (TerretErrorCapture  *self,
                                                        const guint8        *data,
                                                        gsize                len);
guint64             _terret_error_capture_get_newlines (TerretErrorCapture  *self);
GPtrArray          *_terret_error_capture_finish       (TerretErrorCapture  *self,
                                                        guint64              end,
                                                        GArray             **offsets);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TerretErrorCapture, _terret_error_capture_free)

/*
 * TERRET_OMITTED_ERRORS_MAX:
 *
 * How many error lines of an omitted middle a result names at most.
 */
#define TERRET_OMITTED_ERRORS_MAX 10

/*
 * TerretStreamCapture:
 *
 * One stream's capture under a capture mode: the head, tail or head-tail
 * capture behind one set of calls, so an engine says once which bytes it
 * keeps. A stream's end as read is kept as read (`finish`); `partial`
 * also backs a head off to a whole character, where the head capture's
 * stop is a cut it made.
 */
typedef struct _TerretStreamCapture TerretStreamCapture;

TerretStreamCapture *_terret_stream_capture_new      (TerretCaptureMode     mode,
                                                      gsize                 limit);
void                 _terret_stream_capture_free     (TerretStreamCapture  *self);
TerretCaptureMode    _terret_stream_capture_get_mode (TerretStreamCapture  *self);
void                 _terret_stream_capture_append   (TerretStreamCapture  *self,
                                                      const guint8         *data,
                                                      gsize                 len);
guint64              _terret_stream_capture_get_seen (TerretStreamCapture  *self);
GBytes              *_terret_stream_capture_finish   (TerretStreamCapture  *self,
                                                      gboolean              partial,
                                                      guint64              *dropped,
                                                      gsize                *cut_offset);
GPtrArray           *_terret_stream_capture_take_omitted (TerretStreamCapture *self,
                                                          guint64              base,
                                                          guint64             *n_lines);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TerretHeadTailCapture, _terret_head_tail_capture_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (TerretStreamCapture, _terret_stream_capture_free)

G_END_DECLS
