/* terret-launcher-relay.h: frames and streams, for both ends of a far link
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the bridge (terret-launcher-bridge.c) and the far launcher
 * (terret-launcher-serve.c) do alike: frames queued for and parsed from
 * the peer, and streams carried under credit (terret-launcher-far.h).
 * Everything is non-blocking; each side's loop polls what
 * relay_*_events() asks for and calls the matching pump.
 */

#pragma once

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "terret-launcher-far.h"
#include "terret-launcher-wire.h"

typedef struct
{
  uint8_t *data;
  size_t start;                 /* bytes before it were consumed */
  size_t len;                   /* bytes from start on */
  size_t size;
} RelayBuffer;

void    relay_buffer_append  (RelayBuffer   *buffer,
                              const void    *data,
                              size_t         len);
void    relay_buffer_consume (RelayBuffer   *buffer,
                              size_t         len);
void    relay_buffer_clear   (RelayBuffer   *buffer);

/* The peer: frames are read from in_fd and written to out_fd. */
typedef struct
{
  int in_fd;
  int out_fd;
  RelayBuffer incoming;
  RelayBuffer outgoing;
  int closed;                   /* in_fd reached its end */
  int broken;                   /* out_fd's reader is gone */
} RelayPeer;

void relay_send       (RelayPeer     *peer,
                       FarType        type,
                       uint32_t       unit,
                       uint16_t       stream,
                       const void    *payload,
                       size_t         size);
void relay_send_record (RelayPeer    *peer,
                        FarType       type,
                        uint32_t      unit,
                        const TerretWireRecord *record);
int  relay_record_from (const uint8_t *payload,
                        size_t         size,
                        TerretWireRecord *record);
/* Writes what is queued; returns -1 once the reader is gone. */
int  relay_flush      (RelayPeer     *peer);
/* Reads what is there; returns 0 at the end of the peer's output. */
int  relay_fill       (RelayPeer     *peer);
/* The next whole frame: 1 with @header and @payload set (valid until the
 * next call), 0 when it is not all there yet, -1 for one larger than
 * @max_size. */
int  relay_next       (RelayPeer     *peer,
                       size_t         max_size,
                       FarHeader     *header,
                       const uint8_t **payload);

/* A frame from the peer, handed on; returns -1 when it broke the
 * protocol. */
typedef int (*RelayFrameFunc) (void            *data,
                               const FarHeader *header,
                               const uint8_t   *payload);
/* Hands each whole frame the peer sent to @handle, in order; returns -1
 * when one broke the protocol (or was larger than @max_size). */
int  relay_dispatch   (RelayPeer      *peer,
                       size_t          max_size,
                       RelayFrameFunc  handle,
                       void           *data);

/* One child descriptor of a unit, carried between the peer and a local
 * descriptor: sent (read locally, DATA to the peer), received (DATA from
 * the peer, written locally), or both (a terminal). */
typedef struct
{
  int fd;                       /* -1 once closed */
  uint16_t index;
  unsigned sends : 1;
  unsigned receives : 1;
  unsigned read_end : 1;        /* sends: nothing more to read */
  unsigned peer_end : 1;        /* receives: the peer said EOF */
  unsigned write_end : 1;       /* receives: done (flushed after peer_end, or broken) */
  unsigned broken : 1;          /* receives: the local reader is gone; bytes are dropped */
  uint32_t credit;              /* sends: bytes the peer may still take */
  uint32_t delivered;           /* receives: written locally, not yet credited */
  RelayBuffer pending;          /* receives: not yet written locally */
} RelayStream;

void  relay_stream_init    (RelayStream   *stream,
                            int            fd,
                            uint16_t       index,
                            int            sends,
                            int            receives);
/* What to poll the stream's descriptor for (0: nothing now). */
short relay_stream_events  (const RelayStream *stream);
/* Reads a DATA frame's worth (or the end) and sends it. */
void  relay_stream_pump_read  (RelayStream *stream,
                               RelayPeer   *peer,
                               uint32_t     unit);
/* Writes what is pending, crediting the peer. */
void  relay_stream_pump_write (RelayStream *stream,
                               RelayPeer   *peer,
                               uint32_t     unit);
/* A frame about the stream from the peer; returns -1 when the peer broke
 * the protocol (more than its credit). */
int   relay_stream_receive (RelayStream   *stream,
                            RelayPeer     *peer,
                            uint32_t       unit,
                            const FarHeader *header,
                            const uint8_t *payload);
/* Whether nothing more will move either way. */
int   relay_stream_done    (const RelayStream *stream);
void  relay_stream_close   (RelayStream   *stream);

/* Makes room for @need entries in *@pfds. */
void  relay_pollfds_reserve (struct pollfd **pfds,
                             size_t         *size,
                             size_t          need);
/* One entry per stream, from @pfds on; a stream with nothing wanted of
 * it is not polled (a hung-up descriptor would report its hangup again
 * and again). */
void  relay_streams_poll   (const RelayStream   *streams,
                            size_t               n_streams,
                            struct pollfd       *pfds);
/* One unit's entries: its control socket, then its streams; returns
 * how many it took. */
size_t relay_unit_poll     (struct pollfd       *pfds,
                            int                  control,
                            const RelayStream   *streams,
                            size_t               n_streams);
/* Waits for news on @pfds: 1, 0 for a signal (poll again), -1 on error. */
int   relay_wait           (struct pollfd       *pfds,
                            size_t               n);
/* Whether any of the streams' entries came back with news. */
int   relay_streams_ready  (const struct pollfd *pfds,
                            size_t               n_streams);
/* Moves what the streams' entries say can move. */
void  relay_streams_pump   (RelayStream         *streams,
                            size_t               n_streams,
                            const struct pollfd *pfds,
                            RelayPeer           *peer,
                            uint32_t             unit);
