/* terret-launcher-relay.h: frames and streams, for both ends of a far link
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What the bridge (terret-launcher-bridge.c) and the far launcher
 * (terret-launcher-serve.c) do alike: frames queued for and parsed from
 * the peer, streams carried under credit (terret-launcher-far.h), and the
 * units they belong to. Everything is non-blocking; each side's loop
 * polls its peer and its units (relay_peer_poll(), relay_units_poll())
 * beside descriptors of its own, waits, and hands on what came:
 * relay_units_pump() for the units, relay_dispatch() for the peer's
 * frames.
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
/* A record with what follows it in its message (a SIGNALLED event's
 * command line), carried whole across the link. */
typedef struct
{
  TerretWireRecord record;
  size_t tail_len;
  char tail[TERRET_WIRE_CMDLINE_MAX];
} RelayMessage;

void relay_send_record (RelayPeer    *peer,
                        FarType       type,
                        uint32_t      unit,
                        const TerretWireRecord *record);
void relay_send_message (RelayPeer   *peer,
                         FarType      type,
                         uint32_t     unit,
                         const RelayMessage *message);
int  relay_message_from (const uint8_t *payload,
                         size_t         size,
                         RelayMessage  *message);
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
/* Whether nothing more will move either way. */
int   relay_stream_done    (const RelayStream *stream);
void  relay_stream_close   (RelayStream   *stream);

/* One unit as both ends carry it: its control socket, which carries
 * records (TerretWireRecord) between this end and the unit (the
 * library's unit socket on the bridge, the unit process's own on the far
 * side), and the process's descriptors as streams. Each end's unit holds
 * one as its first member, so a RelayUnit of the set is the end's own. */
typedef struct
{
  uint32_t id;
  int control;                  /* -1 once closed */
  RelayStream streams[TERRET_WIRE_MAX_FDS];
  size_t n_streams;
} RelayUnit;

/* The next message on the unit's control socket, which is open: 1 with
 * @message set, 0 when there is none now, -1 at the socket's end (or for
 * a broken record), which closes it. */
int   relay_unit_read_control (RelayUnit        *unit,
                               RelayMessage     *message);
/* A DATA, EOF or CREDIT frame for one of the unit's streams; returns -1
 * when the peer broke the protocol. */
int   relay_unit_receive   (RelayUnit       *unit,
                            RelayPeer       *peer,
                            const FarHeader *header,
                            const uint8_t   *payload);

/* An end's units, in the order they are polled. */
typedef struct
{
  RelayUnit **items;
  size_t n;
  size_t size;
} RelayUnits;

/* Takes @unit, allocated whole by its end with malloc(). */
void       relay_units_add    (RelayUnits       *units,
                               RelayUnit        *unit);
RelayUnit *relay_units_find   (const RelayUnits *units,
                               uint32_t          id);
/* Closes what is left of the @i-th unit and frees it; the last unit
 * takes its place. */
void       relay_units_remove (RelayUnits       *units,
                               size_t            i);

/* Makes room for @need entries in *@pfds. */
void  relay_pollfds_reserve (struct pollfd **pfds,
                             size_t         *size,
                             size_t          need);
/* The peer's two entries: its output, read while @reading, and its
 * input while frames are queued for it. Returns how many they took. */
size_t relay_peer_poll     (const RelayPeer     *peer,
                            int                  reading,
                            struct pollfd       *pfds);
/* Each unit's entries, in the order of the set, from @pfds on: its
 * control socket, then its streams; a stream with nothing wanted of it
 * is not polled (a hung-up descriptor would report its hangup again and
 * again). Returns how many they took. */
size_t relay_units_poll    (const RelayUnits    *units,
                            struct pollfd       *pfds);
/* Waits for news on @pfds, through any signal; returns -1 on error. */
int   relay_wait           (struct pollfd       *pfds,
                            size_t               n);
/* Reads all the signalfd @sigfd holds; returns whether a signal other
 * than SIGCHLD came. */
int   relay_read_signals   (int                  sigfd);

/* Reads what the unit's control socket holds (called while it is open). */
typedef void (*RelayControlFunc) (void      *data,
                                  RelayUnit *unit);

/* When a unit's control socket is read after a poll. */
typedef enum
{
  RELAY_CONTROL_ALONE,          /* when its own entry came back with news */
  RELAY_CONTROL_BEFORE_STREAMS, /* also when only its streams' did: a control
                                 * is ordered before the bytes written after
                                 * it, and may have come in after its socket
                                 * was polled */
} RelayControlOrder;

/* After a poll of relay_units_poll()'s entries at @pfds, unit by unit in
 * the order of the set: its control read with @read_control as @order
 * says, then what its streams' entries say can move. The set stays as
 * it was polled: @read_control adds or removes no unit. */
void  relay_units_pump     (RelayUnits          *units,
                            const struct pollfd *pfds,
                            RelayPeer           *peer,
                            RelayControlOrder    order,
                            RelayControlFunc     read_control,
                            void                *data);
