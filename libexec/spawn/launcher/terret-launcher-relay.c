/* terret-launcher-relay.c: frames and streams, for both ends of a far link
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "terret-launcher-id.h"
#include "terret-launcher-relay.h"

/* --- Buffers ------------------------------------------------------------ */

void
relay_buffer_append (RelayBuffer *buffer,
                     const void  *data,
                     size_t       len)
{
  if (len == 0)
    return;

  if (buffer->start + buffer->len + len > buffer->size)
    {
      /* Consumed bytes are dropped before growing: most of the time the
       * buffer empties and refills, and the move is free. */
      if (buffer->start > 0)
        {
          memmove (buffer->data, buffer->data + buffer->start, buffer->len);
          buffer->start = 0;
        }
      if (buffer->len + len > buffer->size)
        {
          size_t size = buffer->size ? buffer->size : 4096;
          uint8_t *data2;

          while (size < buffer->len + len)
            size *= 2;
          data2 = realloc (buffer->data, size);
          if (data2 == NULL)
            abort ();
          buffer->data = data2;
          buffer->size = size;
        }
    }
  memcpy (buffer->data + buffer->start + buffer->len, data, len);
  buffer->len += len;
}

void
relay_buffer_consume (RelayBuffer *buffer,
                      size_t       len)
{
  buffer->start += len;
  buffer->len -= len;
  if (buffer->len == 0)
    buffer->start = 0;
  /* A burst is over: give back what it took, beyond a working size. */
  if (buffer->len == 0 && buffer->size > 4 * FAR_WINDOW)
    relay_buffer_clear (buffer);
}

void
relay_buffer_clear (RelayBuffer *buffer)
{
  free (buffer->data);
  memset (buffer, 0, sizeof *buffer);
}

/* --- Frames ------------------------------------------------------------- */

void
relay_send (RelayPeer  *peer,
            FarType     type,
            uint32_t    unit,
            uint16_t    stream,
            const void *payload,
            size_t      size)
{
  uint8_t header[FAR_HEADER_SIZE];

  /* A peer that stopped reading gets nothing more: its frames would only
   * pile up. */
  if (peer->broken)
    return;
  far_put32 (header, (uint32_t)size);
  far_put16 (header + 4, (uint16_t)type);
  far_put16 (header + 6, stream);
  far_put32 (header + 8, unit);
  relay_buffer_append (&peer->outgoing, header, sizeof header);
  relay_buffer_append (&peer->outgoing, payload, size);
}

void
relay_send_message (RelayPeer          *peer,
                    FarType             type,
                    uint32_t            unit,
                    const RelayMessage *message)
{
  uint8_t payload[16 + TERRET_WIRE_CMDLINE_MAX];
  size_t tail_len = message->tail_len < TERRET_WIRE_CMDLINE_MAX ? message->tail_len
                                                                : TERRET_WIRE_CMDLINE_MAX;

  far_put32 (payload, message->record.type);
  far_put32 (payload + 4, (uint32_t)message->record.a);
  far_put32 (payload + 8, (uint32_t)message->record.b);
  far_put32 (payload + 12, (uint32_t)message->record.c);
  memcpy (payload + 16, message->tail, tail_len);
  relay_send (peer, type, unit, 0, payload, 16 + tail_len);
}

void
relay_send_record (RelayPeer              *peer,
                   FarType                 type,
                   uint32_t                unit,
                   const TerretWireRecord *record)
{
  RelayMessage message = { *record, 0, { 0 } };

  relay_send_message (peer, type, unit, &message);
}

int
relay_message_from (const uint8_t *payload,
                    size_t         size,
                    RelayMessage  *message)
{
  if (size < 16 || size > 16 + TERRET_WIRE_CMDLINE_MAX)
    return -1;
  message->record.type = far_get32 (payload);
  message->record.a = (int32_t)far_get32 (payload + 4);
  message->record.b = (int32_t)far_get32 (payload + 8);
  message->record.c = (int32_t)far_get32 (payload + 12);
  message->tail_len = size - 16;
  memcpy (message->tail, payload + 16, message->tail_len);
  return 0;
}

int
relay_flush (RelayPeer *peer)
{
  while (peer->outgoing.len > 0 && !peer->broken)
    {
      ssize_t n = write (peer->out_fd, peer->outgoing.data + peer->outgoing.start,
                         peer->outgoing.len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        break;
      if (n <= 0)
        {
          peer->broken = 1;
          relay_buffer_clear (&peer->outgoing);
          break;
        }
      relay_buffer_consume (&peer->outgoing, n);
    }
  return peer->broken ? -1 : 0;
}

int
relay_fill (RelayPeer *peer)
{
  uint8_t chunk[64 * 1024];
  ssize_t n;

  do
    n = read (peer->in_fd, chunk, sizeof chunk);
  while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    return 1;
  if (n <= 0)
    {
      peer->closed = 1;
      return 0;
    }
  relay_buffer_append (&peer->incoming, chunk, n);
  return 1;
}

int
relay_next (RelayPeer      *peer,
            size_t          max_size,
            FarHeader      *header,
            const uint8_t **payload)
{
  const uint8_t *p = peer->incoming.data + peer->incoming.start;

  if (peer->incoming.len < FAR_HEADER_SIZE)
    return 0;
  header->size = far_get32 (p);
  header->type = far_get16 (p + 4);
  header->stream = far_get16 (p + 6);
  header->unit = far_get32 (p + 8);
  if (header->size > max_size)
    return -1;
  if (peer->incoming.len < FAR_HEADER_SIZE + (size_t)header->size)
    return 0;
  *payload = p + FAR_HEADER_SIZE;
  /* Consumed now; the bytes stay where they are until the next append. */
  peer->incoming.start += FAR_HEADER_SIZE + header->size;
  peer->incoming.len -= FAR_HEADER_SIZE + header->size;
  return 1;
}

/* --- Streams ------------------------------------------------------------ */

void
relay_stream_init (RelayStream *stream,
                   int          fd,
                   uint16_t     index,
                   int          sends,
                   int          receives)
{
  memset (stream, 0, sizeof *stream);
  stream->fd = fd;
  stream->index = index;
  stream->sends = sends != 0;
  stream->receives = receives != 0;
  stream->read_end = !sends;
  stream->write_end = !receives;
  stream->credit = FAR_WINDOW;
}

short
relay_stream_events (const RelayStream *stream)
{
  short events = 0;

  if (stream->fd < 0)
    return 0;
  if (!stream->read_end && stream->credit > 0)
    events |= POLLIN;
  if (!stream->write_end && stream->pending.len > 0)
    events |= POLLOUT;
  return events;
}

/* A stream's descriptor closes once nothing moves either way: a pipe's
 * reader then sees its end. A terminal or a socket carried both ways is
 * told the end of one way without losing the other. */
static void
end_reading (RelayStream *stream)
{
  stream->read_end = 1;
  if (relay_stream_done (stream))
    relay_stream_close (stream);
}

static void
end_writing (RelayStream *stream)
{
  struct stat st;

  stream->write_end = 1;
  relay_buffer_clear (&stream->pending);
  if (relay_stream_done (stream))
    relay_stream_close (stream);
  else if (stream->fd >= 0 && fstat (stream->fd, &st) == 0 && S_ISSOCK (st.st_mode))
    shutdown (stream->fd, SHUT_WR);
}

void
relay_stream_pump_read (RelayStream *stream,
                        RelayPeer   *peer,
                        uint32_t     unit)
{
  uint8_t chunk[FAR_DATA_MAX];
  size_t want = stream->credit < sizeof chunk ? stream->credit : sizeof chunk;
  ssize_t n;

  if (stream->read_end || stream->fd < 0 || want == 0)
    return;

  do
    n = read (stream->fd, chunk, want);
  while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    return;
  if (n <= 0)
    {
      /* EOF, or EIO: a terminal whose other side is all closed. */
      end_reading (stream);
      relay_send (peer, FAR_EOF, unit, stream->index, NULL, 0);
      return;
    }
  stream->credit -= n;
  relay_send (peer, FAR_DATA, unit, stream->index, chunk, n);
}

static void
give_credit (RelayStream *stream,
             RelayPeer   *peer,
             uint32_t     unit,
             int          all)
{
  uint8_t payload[4];

  /* In batches: one CREDIT per quarter window keeps the sender going
   * without a frame for every write. */
  if (stream->delivered == 0 || (!all && stream->delivered < FAR_WINDOW / 4))
    return;
  far_put32 (payload, stream->delivered);
  relay_send (peer, FAR_CREDIT, unit, stream->index, payload, sizeof payload);
  stream->delivered = 0;
}

void
relay_stream_pump_write (RelayStream *stream,
                         RelayPeer   *peer,
                         uint32_t     unit)
{
  while (stream->pending.len > 0 && !stream->write_end)
    {
      ssize_t n = write (stream->fd, stream->pending.data + stream->pending.start,
                         stream->pending.len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        break;
      if (n <= 0)
        {
          /* The reader is gone (EPIPE, EIO): what comes is dropped, and
           * credited at once, so the sender never waits on it. */
          stream->delivered += stream->pending.len;
          stream->broken = 1;
          end_writing (stream);
          break;
        }
      stream->delivered += n;
      relay_buffer_consume (&stream->pending, n);
    }
  if (stream->pending.len == 0 && stream->peer_end && !stream->write_end)
    end_writing (stream);
  give_credit (stream, peer, unit, stream->pending.len == 0);
}

/* A frame about the stream from the peer; returns -1 when the peer broke
 * the protocol (more than its credit). */
static int
relay_stream_receive (RelayStream     *stream,
                      RelayPeer       *peer,
                      uint32_t         unit,
                      const FarHeader *header,
                      const uint8_t   *payload)
{
  switch (header->type)
    {
    case FAR_DATA:
      if (!stream->receives || stream->peer_end ||
          stream->pending.len + header->size > FAR_WINDOW)
        return -1;
      if (stream->write_end)
        {
          stream->delivered += header->size;
          give_credit (stream, peer, unit, 1);
          return 0;
        }
      relay_buffer_append (&stream->pending, payload, header->size);
      relay_stream_pump_write (stream, peer, unit);
      return 0;

    case FAR_EOF:
      if (!stream->receives)
        return -1;
      stream->peer_end = 1;
      relay_stream_pump_write (stream, peer, unit);
      return 0;

    case FAR_CREDIT:
      if (!stream->sends || header->size != 4 ||
          (uint64_t)stream->credit + far_get32 (payload) > FAR_WINDOW)
        return -1;
      stream->credit += far_get32 (payload);
      return 0;

    default:
      return -1;
    }
}

int
relay_stream_done (const RelayStream *stream)
{
  return stream->read_end && stream->write_end;
}

void
relay_stream_close (RelayStream *stream)
{
  if (stream->fd >= 0)
    close (stream->fd);
  stream->fd = -1;
  stream->read_end = 1;
  stream->write_end = 1;
  relay_buffer_clear (&stream->pending);
}

/* --- Units -------------------------------------------------------------- */

int
relay_unit_read_control (RelayUnit    *unit,
                         RelayMessage *message)
{
  struct
  {
    TerretWireRecord record;
    char tail[TERRET_WIRE_CMDLINE_MAX];
  } got;
  ssize_t n;

  do
    n = recv (unit->control, &got, sizeof got, MSG_DONTWAIT);
  while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    return 0;
  if (n < (ssize_t)sizeof got.record)
    {
      close (unit->control);
      unit->control = -1;
      return -1;
    }
  message->record = got.record;
  message->tail_len = (size_t)n - sizeof got.record;
  memcpy (message->tail, got.tail, message->tail_len);
  return 1;
}

int
relay_unit_receive (RelayUnit       *unit,
                    RelayPeer       *peer,
                    const FarHeader *header,
                    const uint8_t   *payload)
{
  if (header->stream >= unit->n_streams)
    return -1;
  return relay_stream_receive (&unit->streams[header->stream], peer, unit->id, header, payload);
}

void
relay_units_add (RelayUnits *units,
                 RelayUnit  *unit)
{
  if (units->n == units->size)
    {
      size_t size = units->size ? units->size * 2 : 16;
      RelayUnit **items = realloc (units->items, size * sizeof *items);

      if (items == NULL)
        abort ();
      units->items = items;
      units->size = size;
    }
  units->items[units->n++] = unit;
}

RelayUnit *
relay_units_find (const RelayUnits *units,
                  uint32_t          id)
{
  for (size_t i = 0; i < units->n; i++)
    if (units->items[i]->id == id)
      return units->items[i];
  return NULL;
}

void
relay_units_remove (RelayUnits *units,
                    size_t      i)
{
  RelayUnit *unit = units->items[i];

  for (size_t j = 0; j < unit->n_streams; j++)
    relay_stream_close (&unit->streams[j]);
  if (unit->control >= 0)
    close (unit->control);
  free (unit);
  units->items[i] = units->items[--units->n];
}

/* --- Polling ------------------------------------------------------------ */

void
relay_pollfds_reserve (struct pollfd **pfds,
                       size_t         *size,
                       size_t          need)
{
  if (need <= *size)
    return;
  free (*pfds);
  *size = need * 2;
  *pfds = malloc (*size * sizeof **pfds);
  if (*pfds == NULL)
    abort ();
}

size_t
relay_peer_poll (const RelayPeer *peer,
                 int              reading,
                 struct pollfd   *pfds)
{
  pfds[0] = (struct pollfd) { reading ? peer->in_fd : -1, POLLIN, 0 };
  /* A descriptor with nothing wanted of it is not polled: a hung-up one
   * would report its hangup again and again. */
  pfds[1] = (struct pollfd) { peer->outgoing.len > 0 ? peer->out_fd : -1, POLLOUT, 0 };
  return 2;
}

size_t
relay_units_poll (const RelayUnits *units,
                  struct pollfd    *pfds)
{
  size_t n = 0;

  for (size_t i = 0; i < units->n; i++)
    {
      const RelayUnit *unit = units->items[i];

      pfds[n++] = (struct pollfd) { unit->control, POLLIN, 0 };
      for (size_t j = 0; j < unit->n_streams; j++)
        {
          short events = relay_stream_events (&unit->streams[j]);

          pfds[n++] = (struct pollfd) { events ? unit->streams[j].fd : -1, events, 0 };
        }
    }
  return n;
}

int
relay_wait (struct pollfd *pfds,
            size_t         n)
{
  while (poll (pfds, n, -1) < 0)
    if (errno != EINTR)
      return -1;
  return 0;
}

int
relay_read_signals (int sigfd)
{
  struct signalfd_siginfo si;
  int others = 0;

  while (read (sigfd, &si, sizeof si) == sizeof si)
    if (si.ssi_signo != SIGCHLD)
      others = 1;
  return others;
}

int
relay_dispatch (RelayPeer      *peer,
                size_t          max_size,
                RelayFrameFunc  handle,
                void           *data)
{
  FarHeader header;
  const uint8_t *payload;
  int got;

  while ((got = relay_next (peer, max_size, &header, &payload)) > 0)
    if (handle (data, &header, payload) < 0)
      return -1;
  return got < 0 ? -1 : 0;
}

static int
streams_ready (const struct pollfd *pfds,
               size_t               n_streams)
{
  for (size_t i = 0; i < n_streams; i++)
    if (pfds[i].revents != 0)
      return 1;
  return 0;
}

void
relay_units_pump (RelayUnits          *units,
                  const struct pollfd *pfds,
                  RelayPeer           *peer,
                  RelayControlOrder    order,
                  RelayControlFunc     read_control,
                  void                *data)
{
  for (size_t i = 0; i < units->n; i++)
    {
      RelayUnit *unit = units->items[i];
      const struct pollfd *streams_pfds = pfds + 1;
      int control_ready = pfds[0].revents != 0;

      if (order == RELAY_CONTROL_BEFORE_STREAMS && !control_ready)
        control_ready = streams_ready (streams_pfds, unit->n_streams);
      if (control_ready && unit->control >= 0)
        read_control (data, unit);
      for (size_t j = 0; j < unit->n_streams; j++)
        {
          if (streams_pfds[j].revents & (POLLIN | POLLHUP | POLLERR))
            relay_stream_pump_read (&unit->streams[j], peer, unit->id);
          if (streams_pfds[j].revents & (POLLOUT | POLLERR))
            relay_stream_pump_write (&unit->streams[j], peer, unit->id);
        }
      pfds += 1 + unit->n_streams;
    }
}

const char launcher_build_id[] = TERRET_LAUNCHER_BUILD_ID;
