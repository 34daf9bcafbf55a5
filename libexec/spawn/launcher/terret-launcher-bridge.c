/* terret-launcher-bridge.c: a launcher whose processes run on a far side
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 *   terret-launcher --socket FD --bridge [--timeout SECONDS]
 *                   [--install N ARG...] [--probe N ARG...] --far N ARG...
 *
 * To the library it is a launcher like any other: it takes spawn requests
 * with their descriptors on the request socket and speaks for each unit
 * on its unit socket (terret-launcher-wire.h). Descriptors cannot cross
 * into a container, so it runs the --far command (an engine's `exec -i`
 * or `run -i` of `terret-launcher --serve`) and carries everything over
 * that command's standard input and output as frames
 * (terret-launcher-far.h): spawns, events, controls, and the bytes of
 * each descriptor, which stay on this host.
 *
 * It says hello to the library only once the far launcher has: until
 * then whatever the engine prints (on stderr, and docker's on stdout too)
 * is its explanation, written to the bridge's stderr when the far side
 * never answers. A far launcher that is missing (or another build) is
 * put in place with the --install command, once, and the --far command
 * run again: so a copy in an existing container is made the first time
 * only.
 *
 * When the launcher could not be put in place or could not run there (no
 * answer without a timeout), the --probe command, if any, tells whether
 * the far side runs commands at all: if it does, the bridge exits with
 * BRIDGE_NO_LAUNCHER instead of 1, so the library can tell a launcher
 * that cannot be there from a far side that cannot be reached.
 *
 * The far side ends with everything it started when the bridge's end of
 * the engine's standard input closes: when the library is gone and with
 * it every unit, or when this process dies however it dies; the engine
 * client goes with it (PR_SET_PDEATHSIG), closing that input.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "terret-launcher-bridge-options.h"
#include "terret-launcher-relay.h"
#include "terret-launcher-unit.h"

/* The end of what the engine said explains its failure; an engine made
 * verbose may say a lot before. */
#define WORDS_MAX 4096

/* After the far side was told to end, how long its engine client may
 * take to leave (a disposable container is removed meanwhile). */
#define LEAVING_MSEC 20000

/* The exit status that says: the far side runs commands (its probe did),
 * only not the launcher. The library reads it (terret-launcher-link.c). */
#define BRIDGE_NO_LAUNCHER 3

/* A unit whose control socket is the library's unit socket. */
typedef struct
{
  RelayUnit relay;              /* first: the set holds units as this */
  int gone;                     /* the far side said nothing is left */
  int exited;                   /* an EXITED went to the library */
} BridgeUnit;

typedef struct
{
  int sock;                     /* the request socket; -1 once ended */
  RelayPeer peer;               /* the engine client's stdout and stdin */
  pid_t client;                 /* 0 once reaped */
  int client_status;
  int client_err;               /* its stderr; -1 once ended */
  char words[WORDS_MAX];
  size_t n_words;
  int sigfd;
  RelayUnits units;
  uint32_t next_id;
  int far_lost;
} Bridge;

/* --- The engine's words ------------------------------------------------- */

static void
add_words (Bridge     *bridge,
           const char *text,
           size_t      len)
{
  if (len == 0)
    return;
  if (len >= WORDS_MAX)
    {
      text += len - WORDS_MAX;
      len = WORDS_MAX;
    }
  if (bridge->n_words + len > WORDS_MAX)
    {
      size_t drop = bridge->n_words + len - WORDS_MAX;

      memmove (bridge->words, bridge->words + drop, bridge->n_words - drop);
      bridge->n_words -= drop;
    }
  memcpy (bridge->words + bridge->n_words, text, len);
  bridge->n_words += len;
}

static void
read_words (Bridge *bridge)
{
  char chunk[4096];
  ssize_t n;

  do
    n = read (bridge->client_err, chunk, sizeof chunk);
  while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
    return;
  if (n <= 0)
    {
      close (bridge->client_err);
      bridge->client_err = -1;
      return;
    }
  add_words (bridge, chunk, n);
}

/* --- The engine's command ----------------------------------------------- */

static int
monotonic_msec (void)
{
  struct timespec now;

  clock_gettime (CLOCK_MONOTONIC, &now);
  return (int)(now.tv_sec * 1000 + now.tv_nsec / 1000000);
}

/* Starts @argv with its standard streams on pipes: *in_fd writes its
 * stdin, *out_fd reads its stdout, *err_fd its stderr (NULL: stdout and
 * stderr on one pipe). It dies with the bridge. */
static pid_t
start_command (char **argv,
               int   *in_fd,
               int   *out_fd,
               int   *err_fd)
{
  int in[2] = { -1, -1 }, out[2] = { -1, -1 }, err[2] = { -1, -1 };
  pid_t pid;

  if (pipe2 (in, O_CLOEXEC) < 0 || pipe2 (out, O_CLOEXEC) < 0 ||
      (err_fd != NULL && pipe2 (err, O_CLOEXEC) < 0))
    goto failed;

  pid = fork ();
  if (pid < 0)
    goto failed;
  if (pid == 0)
    {
      sigset_t none;

      sigemptyset (&none);
      sigprocmask (SIG_SETMASK, &none, NULL);
      signal (SIGPIPE, SIG_DFL);
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      if (dup2 (in[0], 0) < 0 || dup2 (out[1], 1) < 0 ||
          dup2 (err_fd != NULL ? err[1] : out[1], 2) < 0)
        _exit (127);
      syscall (SYS_close_range, 3, ~0U, 0);
      execvp (argv[0], argv);
      fprintf (stderr, "%s: %s\n", argv[0], strerror (errno));
      _exit (127);
    }

  close (in[0]);
  close (out[1]);
  *in_fd = in[1];
  *out_fd = out[0];
  if (err_fd != NULL)
    {
      close (err[1]);
      *err_fd = err[0];
    }
  return pid;

failed:
  {
    int saved_errno = errno;

    for (int i = 0; i < 2; i++)
      {
        if (in[i] >= 0)
          close (in[i]);
        if (out[i] >= 0)
          close (out[i]);
        if (err[i] >= 0)
          close (err[i]);
      }
    errno = saved_errno;
  }
  return -1;
}

/* Ends the engine client: the far side is told to leave, in band (an
 * engine may not pass the end of its input on), and its input closes;
 * then it has LEAVING_MSEC to go before it is killed. */
static void
stop_client (Bridge *bridge,
             int     kill_now)
{
  int deadline = monotonic_msec () + LEAVING_MSEC;

  if (bridge->peer.out_fd >= 0 && !kill_now && !bridge->peer.broken)
    {
      /* Whatever is queued, then the farewell, within the bound: an
       * engine that stopped reading is killed below. */
      relay_send (&bridge->peer, FAR_BYE, 0, 0, NULL, 0);
      while (relay_flush (&bridge->peer) == 0 && bridge->peer.outgoing.len > 0)
        {
          struct pollfd pfd = { bridge->peer.out_fd, POLLOUT, 0 };
          int left = deadline - monotonic_msec ();

          if (left <= 0 || (poll (&pfd, 1, left) < 0 && errno != EINTR))
            break;
        }
    }
  if (bridge->peer.out_fd >= 0)
    close (bridge->peer.out_fd);
  bridge->peer.out_fd = -1;
  if (bridge->client > 0 && kill_now)
    kill (bridge->client, SIGKILL);

  while (bridge->client > 0)
    {
      struct pollfd pfd = { bridge->sigfd, POLLIN, 0 };
      int left = deadline - monotonic_msec ();
      pid_t pid;

      do
        pid = waitpid (bridge->client, &bridge->client_status, WNOHANG);
      while (pid < 0 && errno == EINTR);
      if (pid != 0)
        {
          bridge->client = 0;
          break;
        }
      if (left <= 0)
        {
          kill (bridge->client, SIGKILL);
          deadline = monotonic_msec () + LEAVING_MSEC;
          continue;
        }
      if (poll (&pfd, 1, left) > 0)
        relay_read_signals (bridge->sigfd);
    }

  if (bridge->peer.in_fd >= 0)
    close (bridge->peer.in_fd);
  bridge->peer.in_fd = -1;
  if (bridge->client_err >= 0)
    close (bridge->client_err);
  bridge->client_err = -1;
  relay_buffer_clear (&bridge->peer.incoming);
  relay_buffer_clear (&bridge->peer.outgoing);
  bridge->peer.closed = 0;
  bridge->peer.broken = 0;
}

typedef enum
{
  HELLO_OK,
  HELLO_NONE,                   /* it ended without one */
  HELLO_OTHER,                  /* a launcher of another build, or protocol */
  HELLO_TIMEOUT,
} HelloOutcome;

/* Reads the far side's first frame: a HELLO from a launcher of this very
 * build. Anything else on its stdout is the engine's words. */
static HelloOutcome
wait_hello (Bridge *bridge,
            int     deadline)
{
  int words_only = 0;

  for (;;)
    {
      struct pollfd pfds[2] = {
        { bridge->peer.in_fd, POLLIN, 0 },
        { bridge->client_err, POLLIN, 0 },
      };
      int left = deadline - monotonic_msec ();
      RelayBuffer *in = &bridge->peer.incoming;

      if (bridge->peer.in_fd < 0 && bridge->client_err < 0)
        return HELLO_NONE;
      if (left <= 0)
        return HELLO_TIMEOUT;
      if (poll (pfds, 2, left) < 0)
        {
          if (errno == EINTR)
            continue;
          return HELLO_NONE;
        }
      if (pfds[1].revents != 0)
        read_words (bridge);
      if (pfds[0].revents == 0)
        continue;

      if (relay_fill (&bridge->peer) == 0)
        {
          add_words (bridge, (char *)in->data + in->start, in->len);
          relay_buffer_clear (in);
          close (bridge->peer.in_fd);
          bridge->peer.in_fd = -1;
          continue;
        }
      if (words_only)
        {
          add_words (bridge, (char *)in->data + in->start, in->len);
          relay_buffer_consume (in, in->len);
          continue;
        }
      if (in->len >= FAR_HEADER_SIZE)
        {
          const uint8_t *p = in->data + in->start;
          uint32_t size = far_get32 (p);
          const uint8_t *payload;
          FarHeader header;

          if (far_get16 (p + 4) != FAR_HELLO || size < 8 || size > 8 + 256 ||
              (in->len >= FAR_HEADER_SIZE + 4 && far_get32 (p + FAR_HEADER_SIZE) != FAR_MAGIC))
            {
              /* Text, not a frame: the engine's own message. */
              words_only = 1;
              add_words (bridge, (char *)p, in->len);
              relay_buffer_consume (in, in->len);
              continue;
            }
          if (relay_next (&bridge->peer, 8 + 256, &header, &payload) > 0)
            {
              size_t id_len = header.size - 8;

              if (far_get32 (payload + 4) != FAR_VERSION || id_len != strlen (launcher_build_id) ||
                  memcmp (payload + 8, launcher_build_id, id_len) != 0)
                {
                  char said[300];

                  snprintf (said, sizeof said, "the launcher there is another build (%.*s)\n",
                            (int)id_len, (const char *)payload + 8);
                  add_words (bridge, said, strlen (said));
                  return HELLO_OTHER;
                }
              return HELLO_OK;
            }
        }
    }
}

/* Runs @argv to its end, its output kept as words (with @keep_words).
 * Returns its wait status, or -1 (it could not start, or was killed at
 * @deadline). */
static int
run_to_end (Bridge  *bridge,
            char   **argv,
            int      deadline,
            int      keep_words)
{
  int timed_out = 0;

  int in_fd, out_fd, status = -1;
  pid_t pid = start_command (argv, &in_fd, &out_fd, NULL);

  if (pid < 0)
    return -1;
  close (in_fd);
  for (;;)
    {
      struct pollfd pfd = { out_fd, POLLIN, 0 };
      int left = deadline - monotonic_msec ();
      char chunk[4096];
      ssize_t n;

      if (left <= 0)
        {
          kill (pid, SIGKILL);
          timed_out = 1;
          if (keep_words)
            add_words (bridge, "the copy did not finish in time\n", 32);
          break;
        }
      if (poll (&pfd, 1, left) <= 0)
        continue;
      n = read (out_fd, chunk, sizeof chunk);
      if (n <= 0 && !(n < 0 && errno == EINTR))
        break;
      if (n > 0 && keep_words)
        add_words (bridge, chunk, n);
    }
  close (out_fd);
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  return timed_out ? -1 : status;
}

/* Reaches the far launcher, putting it in place first when it is not
 * there. Returns 0, or -1 with the engine's words said on stderr, or
 * BRIDGE_NO_LAUNCHER with them when the probe found that the far side
 * runs commands all the same. */
static int
connect_far (Bridge        *bridge,
             const Options *options)
{
  int deadline = monotonic_msec () + options->timeout_msec;
  HelloOutcome outcome = HELLO_NONE;

  for (int attempt = 0; attempt < 2; attempt++)
    {
      bridge->n_words = 0;
      bridge->client = start_command (options->far, &bridge->peer.out_fd, &bridge->peer.in_fd,
                                      &bridge->client_err);
      if (bridge->client < 0)
        {
          fprintf (stderr, "could not start %s: %s\n", options->far[0], strerror (errno));
          return -1;
        }
      outcome = wait_hello (bridge, deadline);
      if (outcome == HELLO_OK)
        {
          fcntl (bridge->peer.in_fd, F_SETFL, fcntl (bridge->peer.in_fd, F_GETFL) | O_NONBLOCK);
          fcntl (bridge->peer.out_fd, F_SETFL, fcntl (bridge->peer.out_fd, F_GETFL) | O_NONBLOCK);
          fcntl (bridge->client_err, F_SETFL, fcntl (bridge->client_err, F_GETFL) | O_NONBLOCK);
          return 0;
        }
      stop_client (bridge, outcome == HELLO_TIMEOUT);
      if (outcome == HELLO_TIMEOUT || options->install == NULL || attempt > 0)
        break;

      {
        static const char copying[] = "copying the launcher in failed: ";
        int status;

        /* The first attempt's words only said that the launcher is not
         * there; the copy's say why it could not be put there. */
        bridge->n_words = 0;
        add_words (bridge, copying, strlen (copying));
        status = run_to_end (bridge, options->install, deadline, 1);
        if (status != 0)
          {
            if (bridge->n_words == strlen (copying) && status > 0 && WIFEXITED (status))
              {
                char said[64];

                snprintf (said, sizeof said, "%s exited with status %d\n",
                          options->install[0], WEXITSTATUS (status));
                add_words (bridge, said, strlen (said));
              }
            break;
          }
      }
    }

  if (outcome == HELLO_TIMEOUT)
    fprintf (stderr, "no answer in %d s\n", options->timeout_msec / 1000);
  else
    {
      /* Never after a timeout: a slow engine is not a launcher that
       * cannot run, and what answers late must not be run another way. */
      int probed = options->probe != NULL &&
                   run_to_end (bridge, options->probe, deadline, 0) == 0;

      /* Its last words, without the trailing blank. */
      while (bridge->n_words > 0 && (bridge->words[bridge->n_words - 1] == '\n' ||
                                     bridge->words[bridge->n_words - 1] == ' '))
        bridge->n_words--;
      if (bridge->n_words == 0)
        {
          if (WIFEXITED (bridge->client_status))
            fprintf (stderr, "%s exited with status %d without a word\n", options->far[0],
                     WEXITSTATUS (bridge->client_status));
          else
            fprintf (stderr, "%s ended without a word\n", options->far[0]);
        }
      else
        fprintf (stderr, "%.*s\n", (int)bridge->n_words, bridge->words);
      if (probed)
        return BRIDGE_NO_LAUNCHER;
    }
  return -1;
}

/* --- Units -------------------------------------------------------------- */

/* The bridge's unit behind one of the set's. */
static BridgeUnit *
bridge_unit (RelayUnit *relay)
{
  return (BridgeUnit *)relay;
}

/* A spawn request: the plan goes to the far side with the direction of
 * each descriptor, which stays here as a stream. Returns -1 when the
 * library is gone. */
static int
handle_request (Bridge *bridge)
{
  int fds[TERRET_WIRE_MAX_FDS];
  size_t n_fds = 0, n_child;
  RelayBuffer payload = { 0 };
  BridgeUnit *unit;
  struct stat st;
  Plan plan;
  char *data;
  int error;
  int taken = launcher_take_request (bridge->sock, fds, &n_fds);

  if (taken <= 0)
    return taken;
  n_child = n_fds - TERRET_WIRE_FD_CHILD;

  if (bridge->far_lost)
    {
      launcher_close_fds (fds, n_fds);
      launcher_reply (bridge->sock, ECONNRESET, 0);
      return 0;
    }

  if (fstat (fds[TERRET_WIRE_FD_PAYLOAD], &st) < 0 || st.st_size <= 0 ||
      st.st_size > FAR_SPAWN_MAX - 1024)
    {
      launcher_close_fds (fds, n_fds);
      launcher_reply (bridge->sock, st.st_size > 0 ? E2BIG : EINVAL, 0);
      return 0;
    }
  data = malloc (st.st_size + 1);
  if (data == NULL || pread (fds[TERRET_WIRE_FD_PAYLOAD], data, st.st_size, 0) != st.st_size)
    {
      free (data);
      launcher_close_fds (fds, n_fds);
      launcher_reply (bridge->sock, EIO, 0);
      return 0;
    }
  data[st.st_size] = '\0';
  error = launcher_parse_plan (data, st.st_size, n_child, &plan);
  if (error != 0)
    {
      free (plan.argv);
      free (plan.envp);
      free (data);
      launcher_close_fds (fds, n_fds);
      launcher_reply (bridge->sock, error, 0);
      return 0;
    }

  unit = calloc (1, sizeof *unit);
  if (unit == NULL)
    abort ();
  unit->relay.id = ++bridge->next_id;
  unit->relay.control = fds[TERRET_WIRE_FD_UNIT];
  fcntl (unit->relay.control, F_SETFL, fcntl (unit->relay.control, F_GETFL) | O_NONBLOCK);
  relay_buffer_append (&payload, data, st.st_size);

  /* Which way each descriptor goes: a terminal both; 0 and anything the
   * process may read (a memfd holding a long command) into it; 1, 2 and
   * anything write-only out of it. */
  for (size_t i = 0; i < n_child; i++)
    {
      int fd = fds[TERRET_WIRE_FD_CHILD + i];
      int target = -1, sends;

      for (size_t j = 0; j < plan.n_fds; j++)
        if ((size_t)plan.fds[j].index == i)
          target = plan.fds[j].target;
      if ((int)i == plan.terminal)
        relay_stream_init (&unit->relay.streams[i], fd, i, 1, 1);
      else
        {
          sends = target == 0 ||
                  (target != 1 && target != 2 && (fcntl (fd, F_GETFL) & O_ACCMODE) != O_WRONLY);
          relay_stream_init (&unit->relay.streams[i], fd, i, sends, !sends);
          if (sends)
            {
              char value[24];

              snprintf (value, sizeof value, "%zu", i);
              relay_buffer_append (&payload, FAR_KEY_INPUT, sizeof FAR_KEY_INPUT);
              relay_buffer_append (&payload, value, strlen (value) + 1);
            }
        }
      fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) | O_NONBLOCK);
      unit->relay.n_streams = i + 1;
    }
  free (plan.argv);
  free (plan.envp);
  free (data);
  close (fds[TERRET_WIRE_FD_PAYLOAD]);

  relay_send (&bridge->peer, FAR_SPAWN, unit->relay.id, 0, payload.data + payload.start,
              payload.len);
  relay_buffer_clear (&payload);
  relay_units_add (&bridge->units, &unit->relay);

  /* The unit's "pid" is its number: the library only needs it nonzero,
   * and its process's pid comes with STARTED. */
  launcher_reply (bridge->sock, 0, unit->relay.id);
  return 0;
}

/* The library's end of a unit: controls, or its end, which is KILL. All
 * that are there, before the unit's streams are read: a control is
 * ordered before the bytes written after it (a terminal's modes before a
 * request). */
static void
read_unit (void      *data,
           RelayUnit *relay)
{
  Bridge *bridge = data;
  BridgeUnit *unit = bridge_unit (relay);
  RelayMessage message;
  int got;

  while ((got = relay_unit_read_control (relay, &message)) > 0)
    if (!unit->gone)
      relay_send_record (&bridge->peer, FAR_CONTROL, relay->id, &message.record);
  if (got < 0 && !unit->gone)
    {
      TerretWireRecord kill_record = { TERRET_WIRE_CONTROL_KILL, 0, 0, 0 };

      relay_send_record (&bridge->peer, FAR_CONTROL, relay->id, &kill_record);
    }
}

static void
tell_library (BridgeUnit         *unit,
              const RelayMessage *message)
{
  struct
  {
    TerretWireRecord record;
    char tail[TERRET_WIRE_CMDLINE_MAX];
  } out;

  if (unit->relay.control < 0)
    return;
  if (message->record.type == TERRET_WIRE_EVENT_EXITED)
    unit->exited = 1;
  out.record = message->record;
  memcpy (out.tail, message->tail, message->tail_len);
  send (unit->relay.control, &out, sizeof out.record + message->tail_len,
        MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Nothing of the unit is left on the far side: what it sent is all here
 * (GONE comes after its streams' ends), and the library hears the EOF. */
static void
unit_gone (Bridge     *bridge,
           BridgeUnit *unit)
{
  unit->gone = 1;
  if (unit->relay.control >= 0)
    close (unit->relay.control);
  unit->relay.control = -1;
  for (size_t i = 0; i < unit->relay.n_streams; i++)
    {
      RelayStream *stream = &unit->relay.streams[i];

      if (stream->sends)
        {
          stream->read_end = 1;
          if (!stream->receives)
            relay_stream_close (stream);
        }
      if (stream->receives)
        {
          stream->peer_end = 1;
          relay_stream_pump_write (stream, &bridge->peer, unit->relay.id);
        }
    }
}

/* The far side is lost (the engine client ended, the container
 * stopped): what ran there ended with it. */
static void
far_lost (Bridge *bridge)
{
  bridge->far_lost = 1;
  for (size_t i = 0; i < bridge->units.n; i++)
    {
      BridgeUnit *unit = bridge_unit (bridge->units.items[i]);

      if (unit->gone)
        continue;
      if (!unit->exited)
        {
          RelayMessage message = { { TERRET_WIRE_EVENT_EXITED, SIGKILL, 0, 0 }, 0, { 0 } };

          tell_library (unit, &message);
        }
      unit_gone (bridge, unit);
    }
  /* No new spawn can reach it: the library starts another bridge. */
  if (bridge->sock >= 0)
    close (bridge->sock);
  bridge->sock = -1;
}

static int
handle_frame (void            *data,
              const FarHeader *header,
              const uint8_t   *payload)
{
  Bridge *bridge = data;
  RelayUnit *relay = relay_units_find (&bridge->units, header->unit);
  RelayMessage message;

  if (relay == NULL)
    return header->type == FAR_HELLO ? -1 : 0;

  switch (header->type)
    {
    case FAR_EVENT:
      if (relay_message_from (payload, header->size, &message) < 0)
        return -1;
      tell_library (bridge_unit (relay), &message);
      return 0;

    case FAR_GONE:
      unit_gone (bridge, bridge_unit (relay));
      return 0;

    case FAR_DATA:
    case FAR_EOF:
    case FAR_CREDIT:
      return relay_unit_receive (relay, &bridge->peer, header, payload);

    default:
      return -1;
    }
}

static void
remove_done_units (Bridge *bridge)
{
  for (size_t i = 0; i < bridge->units.n; )
    {
      BridgeUnit *unit = bridge_unit (bridge->units.items[i]);
      int done = unit->gone;

      for (size_t j = 0; j < unit->relay.n_streams && done; j++)
        done = relay_stream_done (&unit->relay.streams[j]);
      if (done)
        relay_units_remove (&bridge->units, i);
      else
        i++;
    }
}

/* --- Main --------------------------------------------------------------- */

int
launcher_bridge_main (int    sock,
                      char **argv)
{
  Options options = { 0 };
  Bridge bridge = { 0 };
  struct pollfd *pfds = NULL;
  size_t size_pfds = 0;
  sigset_t mask;
  int status = 0;
  int connected;

  bridge.sock = sock;
  bridge.client_err = -1;
  bridge.peer.in_fd = bridge.peer.out_fd = -1;
  if (bridge_parse_options (argv, &options) < 0)
    {
      fprintf (stderr, "usage: terret-launcher --socket FD --bridge [--timeout SECONDS] "
                       "[--install N ARG...] [--probe N ARG...] --far N ARG...\n");
      return 2;
    }

  signal (SIGPIPE, SIG_IGN);
  sigemptyset (&mask);
  sigaddset (&mask, SIGCHLD);
  sigprocmask (SIG_BLOCK, &mask, NULL);
  bridge.sigfd = signalfd (-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  connected = bridge.sigfd < 0 ? -1 : connect_far (&bridge, &options);
  if (connected != 0)
    {
      free (options.install);
      free (options.probe);
      free (options.far);
      return connected == BRIDGE_NO_LAUNCHER ? BRIDGE_NO_LAUNCHER : 1;
    }

  {
    TerretWireHello hello = { TERRET_WIRE_HELLO_MAGIC, 0 };

    while (send (sock, &hello, sizeof hello, MSG_NOSIGNAL) < 0)
      if (errno != EINTR)
        return 1;
  }

  /* Until the library is gone and every unit with it. */
  while (bridge.sock >= 0 || bridge.units.n > 0)
    {
      size_t n = 0;

      relay_pollfds_reserve (&pfds, &size_pfds, 5 + bridge.units.n * (1 + TERRET_WIRE_MAX_FDS));

      pfds[n++] = (struct pollfd) { bridge.sigfd, POLLIN, 0 };
      pfds[n++] = (struct pollfd) { bridge.sock, POLLIN, 0 };
      n += relay_peer_poll (&bridge.peer, !bridge.far_lost, pfds + n);
      pfds[n++] = (struct pollfd) { bridge.client_err, POLLIN, 0 };
      n += relay_units_poll (&bridge.units, pfds + n);

      if (relay_wait (pfds, n) < 0)
        break;

      if (pfds[0].revents & POLLIN)
        {
          relay_read_signals (bridge.sigfd);
          if (bridge.client > 0 && waitpid (bridge.client, &bridge.client_status, WNOHANG) > 0)
            {
              bridge.client = 0;
              if (!bridge.far_lost)
                far_lost (&bridge);
            }
        }
      if (pfds[4].revents != 0)
        {
          /* Later words are only kept, bounded: nobody asks for them. */
          read_words (&bridge);
        }

      /* Units in the order of the set as polled, each one's controls
       * before its streams' bytes (read_unit). */
      relay_units_pump (&bridge.units, pfds + 5, &bridge.peer, RELAY_CONTROL_BEFORE_STREAMS,
                        read_unit, &bridge);

      if (pfds[2].revents & (POLLIN | POLLHUP | POLLERR))
        {
          if (relay_fill (&bridge.peer) == 0)
            far_lost (&bridge);
          if (relay_dispatch (&bridge.peer, FAR_DATA_MAX + 64, handle_frame, &bridge) < 0 &&
              !bridge.far_lost)
            {
              fprintf (stderr, "terret-launcher: --bridge: the far side broke the protocol\n");
              stop_client (&bridge, 1);
              far_lost (&bridge);
            }
        }

      if (bridge.sock >= 0 && (pfds[1].revents & (POLLIN | POLLHUP | POLLERR)))
        {
          if (handle_request (&bridge) < 0)
            {
              close (bridge.sock);
              bridge.sock = -1;
            }
        }

      if (relay_flush (&bridge.peer) < 0 && !bridge.far_lost)
        far_lost (&bridge);
      remove_done_units (&bridge);
    }

  /* Nothing left to serve: the far side ends, and the engine client
   * (with a disposable container, once the container is removed). */
  stop_client (&bridge, 0);
  if (bridge.client_status != 0 && !bridge.far_lost)
    status = 1;
  free (pfds);
  free (bridge.units.items);
  free (options.install);
  free (options.probe);
  free (options.far);
  return status;
}
