/* terret-launcher-serve.c: `terret-launcher --serve`, a launcher on the far side
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Run inside a container by an engine's `exec -i` (or as its first
 * process, by `run -i`), with a bridge on the host at the other end of
 * its standard input and output (terret-launcher-far.h). For each spawn
 * it forks a unit, the same code a local launcher forks
 * (terret-launcher-unit.c), so a process here is contained as one on the
 * host is: the unit is a subreaper, kills everything on its socket's
 * end, sets the limits. The launcher holds the other end of each unit's
 * socket and relays between it and the bridge, and carries the process's
 * descriptors as streams: pipes, and a terminal made here.
 *
 * The end of its standard input (the host side went, whatever killed it)
 * ends every unit with everything it started, and then the launcher; so
 * do SIGTERM, SIGINT and SIGHUP, which it handles (as a container's first
 * process it would otherwise ignore them), and as that first process it
 * also reaps what is reparented to it.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "terret-launcher-environ.h"
#include "terret-launcher-input.h"
#include "terret-launcher-relay.h"
#include "terret-launcher-terminal.h"
#include "terret-launcher-unit.h"

/* A unit whose control socket is our end of the unit process's socket
 * (-1 once it ended). */
typedef struct
{
  RelayUnit relay;              /* first: the set holds units as this */
  pid_t pid;                    /* the unit process; 0 once reaped */
} ServeUnit;

typedef struct
{
  RelayPeer peer;
  int sigfd;
  RelayUnits units;
  int ending;
} Serve;

/* The @i-th unit, as the set holds it. */
static ServeUnit *
serve_unit (Serve  *serve,
            size_t  i)
{
  return (ServeUnit *)serve->units.items[i];
}

/* --- Starting a unit ---------------------------------------------------- */

static void
report_failed (Serve    *serve,
               uint32_t  id,
               int       error,
               int       stage)
{
  TerretWireRecord record = { TERRET_WIRE_EVENT_FAILED, error, stage, 0 };

  relay_send_record (&serve->peer, FAR_EVENT, id, &record);
  relay_send (&serve->peer, FAR_GONE, id, 0, NULL, 0);
}

/* In a forked unit: nothing of the launcher's but @keep (and the
 * standard streams, which are /dev/null and the engine's stderr) may
 * stay open, or a unit would hold another unit's pipes open. */
static void
close_all_but (int    *keep,
               size_t  n)
{
  unsigned int next = 3;

  for (size_t i = 1; i < n; i++)
    for (size_t j = i; j > 0 && keep[j - 1] > keep[j]; j--)
      {
        int t = keep[j];

        keep[j] = keep[j - 1];
        keep[j - 1] = t;
      }
  for (size_t i = 0; i < n; i++)
    {
      if ((unsigned int)keep[i] > next)
        syscall (SYS_close_range, next, (unsigned int)keep[i] - 1, 0);
      if ((unsigned int)keep[i] + 1 > next)
        next = keep[i] + 1;
    }
  if (syscall (SYS_close_range, next, ~0U, 0) < 0)
    for (int fd = next; fd < 65536; fd++)
      close (fd);
}

static int
open_terminal (int *master_out,
               int *slave_out)
{
  struct winsize size = { TERRET_TERMINAL_ROWS, TERRET_TERMINAL_COLUMNS, 0, 0 };
  struct termios modes;
  char name[128];
  int master, slave;

  master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0)
    return -1;
  if (grantpt (master) < 0 || unlockpt (master) < 0 || ptsname_r (master, name, sizeof name) != 0 ||
      (slave = open (name, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0)
    {
      int saved_errno = errno;

      close (master);
      errno = saved_errno;
      return -1;
    }
  /* In place before the program starts: not even a shell's first prompt
   * is echoed or rewritten. The host cannot set them later (it has no
   * terminal of its own to set them on), so a session re-asserts them
   * from inside. */
  ioctl (master, TIOCSWINSZ, &size);
  if (tcgetattr (master, &modes) == 0)
    {
      terret_terminal_protocol_modes (&modes);
      tcsetattr (master, TCSANOW, &modes);
    }
  *master_out = master;
  *slave_out = slave;
  return 0;
}

static void
start_unit (Serve         *serve,
            uint32_t       id,
            const uint8_t *payload,
            size_t         size)
{
  char *data = malloc (size + 1);
  int inputs[TERRET_WIRE_MAX_FDS] = { 0 };
  int child_fds[TERRET_WIRE_MAX_FDS];
  ServeUnit *unit = NULL;
  char **envp = NULL;
  char *program = NULL;
  size_t n_child = 0;
  int pair[2] = { -1, -1 };
  Plan plan;
  int error, stage = TERRET_WIRE_STAGE_REQUEST;

  if (data == NULL)
    {
      report_failed (serve, id, ENOMEM, TERRET_WIRE_STAGE_REQUEST);
      return;
    }
  memcpy (data, payload, size);
  data[size] = '\0';

  error = launcher_parse_plan (data, size, TERRET_WIRE_MAX_FDS - TERRET_WIRE_FD_CHILD, &plan);
  if (error != 0)
    goto failed;

  /* The streams: every index the plan names, and which way each goes. */
  for (size_t i = 0; i < plan.n_fds; i++)
    if ((size_t)plan.fds[i].index + 1 > n_child)
      n_child = plan.fds[i].index + 1;
  if (plan.terminal >= 0 && (size_t)plan.terminal + 1 > n_child)
    n_child = plan.terminal + 1;
  for (char *p = data; p < data + size; )
    {
      const char *key = p;
      int index;

      p += strlen (p) + 1;
      if (p >= data + size)
        break;
      if (strcmp (key, FAR_KEY_INPUT) == 0 && sscanf (p, "%d", &index) == 1 &&
          index >= 0 && (size_t)index < n_child)
        inputs[index] = 1;
      p += strlen (p) + 1;
    }

  stage = TERRET_WIRE_STAGE_EXEC;
  envp = launcher_merge_environ (plan.envp);
  if (envp == NULL)
    {
      error = ENOMEM;
      goto failed;
    }
  if (strchr (plan.argv[0], '/') == NULL)
    {
      program = launcher_find_program (plan.argv[0], envp);
      if (program == NULL)
        {
          error = errno;
          goto failed;
        }
      plan.argv[0] = program;
    }
  free (plan.envp);
  plan.envp = envp;
  envp = NULL;

  unit = calloc (1, sizeof *unit);
  if (unit == NULL)
    {
      error = ENOMEM;
      goto failed;
    }
  unit->relay.id = id;
  unit->relay.control = -1;

  stage = TERRET_WIRE_STAGE_DESCRIPTORS;
  for (size_t i = 0; i < n_child; i++)
    {
      int ends[2];

      if ((int)i == plan.terminal)
        {
          stage = TERRET_WIRE_STAGE_TERMINAL;
          if (open_terminal (&ends[0], &ends[1]) < 0)
            {
              error = errno;
              goto failed;
            }
          relay_stream_init (&unit->relay.streams[i], ends[0], i, 1, 1);
          child_fds[i] = ends[1];
        }
      else if (pipe2 (ends, O_CLOEXEC) < 0)
        {
          error = errno;
          goto failed;
        }
      else if (inputs[i])
        {
          relay_stream_init (&unit->relay.streams[i], ends[1], i, 0, 1);
          child_fds[i] = ends[0];
        }
      else
        {
          relay_stream_init (&unit->relay.streams[i], ends[0], i, 1, 0);
          child_fds[i] = ends[1];
        }
      unit->relay.n_streams = i + 1;
    }

  stage = TERRET_WIRE_STAGE_FORK;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    {
      error = errno;
      goto failed;
    }

  unit->pid = fork ();
  if (unit->pid < 0)
    {
      error = errno;
      goto failed;
    }
  if (unit->pid == 0)
    {
      int keep[TERRET_WIRE_MAX_FDS + 1];

      for (size_t i = 0; i < n_child; i++)
        keep[i] = child_fds[i];
      keep[n_child] = pair[1];
      close_all_but (keep, n_child + 1);
      launcher_unit_main (&plan, pair[1], child_fds, n_child);
    }

  close (pair[1]);
  unit->relay.control = pair[0];
  for (size_t i = 0; i < n_child; i++)
    {
      int fd = unit->relay.streams[i].fd;

      close (child_fds[i]);
      fcntl (fd, F_SETFL, fcntl (fd, F_GETFL) | O_NONBLOCK);
    }
  relay_units_add (&serve->units, &unit->relay);
  free (plan.argv);
  free (plan.envp);
  free (program);
  free (data);
  return;

failed:
  if (unit != NULL)
    {
      for (size_t i = 0; i < unit->relay.n_streams; i++)
        {
          relay_stream_close (&unit->relay.streams[i]);
          close (child_fds[i]);
        }
      free (unit);
    }
  if (pair[0] >= 0)
    close (pair[0]), close (pair[1]);
  free (plan.argv);
  free (plan.envp);
  free (envp);
  free (program);
  free (data);
  report_failed (serve, id, error, stage);
}

/* --- Units -------------------------------------------------------------- */

/* One record from the unit: one read per poll. */
static void
read_unit (void      *data,
           RelayUnit *unit)
{
  Serve *serve = data;
  RelayMessage message;
  int got = relay_unit_read_control (unit, &message);

  if (got < 0)
    {
      /* The unit's EOF: everything it contained is gone. What the process
       * wrote may still be on its way through the streams; the bridge
       * hears GONE once it is. Nobody reads what is written now. */
      for (size_t i = 0; i < unit->n_streams; i++)
        if (!unit->streams[i].sends)
          relay_stream_close (&unit->streams[i]);
      return;
    }
  /* Its pid as the bridge's host sees it means nothing there. */
  if (got > 0 && message.record.type != TERRET_WIRE_EVENT_PID)
    relay_send_message (&serve->peer, FAR_EVENT, unit->id, &message);
}

/* A unit is over when its socket ended and its output was all sent. */
static int
unit_over (const RelayUnit *unit)
{
  if (unit->control >= 0)
    return 0;
  for (size_t i = 0; i < unit->n_streams; i++)
    if (!unit->streams[i].read_end)
      return 0;
  return 1;
}

static void
remove_over_units (Serve *serve)
{
  for (size_t i = 0; i < serve->units.n; )
    {
      RelayUnit *unit = serve->units.items[i];

      if (unit_over (unit))
        {
          relay_send (&serve->peer, FAR_GONE, unit->id, 0, NULL, 0);
          relay_units_remove (&serve->units, i);
        }
      else
        i++;
    }
}

/* Reaps, and kills what is reparented here that is no unit: the orphans
 * of a unit that was killed before it could end them. */
static void
reap (Serve *serve)
{
  pid_t units[1024];
  size_t n = 0;
  int stray = 0;
  int status;
  pid_t pid;

  while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
    {
      int is_unit = 0;

      for (size_t i = 0; i < serve->units.n; i++)
        if (serve_unit (serve, i)->pid == pid)
          {
            serve_unit (serve, i)->pid = 0;
            is_unit = 1;
            if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
              stray = 1;
          }
      if (!is_unit)
        stray = 1;
    }
  if (!stray)
    return;
  for (size_t i = 0; i < serve->units.n && n < sizeof units / sizeof units[0]; i++)
    if (serve_unit (serve, i)->pid > 0)
      units[n++] = serve_unit (serve, i)->pid;
  launcher_kill_strays (units, n);
}

/* The unit's terminal, made here, back in the protocol's modes whatever
 * a command did to it (`stty echo`): before the bytes that follow, which
 * come after this in the same frames. One read when nothing changed. */
static void
reset_terminal (RelayUnit *unit)
{
  for (size_t i = 0; i < unit->n_streams; i++)
    {
      RelayStream *stream = &unit->streams[i];
      struct termios modes, wanted;

      if (!stream->sends || !stream->receives || stream->fd < 0 ||
          tcgetattr (stream->fd, &modes) < 0)
        continue;
      wanted = modes;
      terret_terminal_protocol_modes (&wanted);
      if (memcmp (&wanted, &modes, sizeof modes) != 0)
        tcsetattr (stream->fd, TCSANOW, &wanted);
    }
}

/* Whether the command on the unit's terminal, made here, waits for
 * input: this side's /proc is the one that says (terret-launcher-input.c).
 * Answered at once, after the output read so far (the same queue). */
static void
look_input (Serve     *serve,
            RelayUnit *unit)
{
  TerretWireRecord record = { TERRET_WIRE_EVENT_INPUT, TERRET_WIRE_INPUT_UNKNOWN, 0, 0 };

  for (size_t i = 0; i < unit->n_streams; i++)
    {
      RelayStream *stream = &unit->streams[i];
      unsigned flags = 0;

      if (!stream->sends || !stream->receives || stream->fd < 0 || !isatty (stream->fd))
        continue;
      record.a = (int32_t)terret_input_look (stream->fd, &flags, NULL, 0, NULL);
      record.b = (int32_t)flags;
      break;
    }
  relay_send_record (&serve->peer, FAR_EVENT, unit->id, &record);
}

/* --- Frames from the bridge --------------------------------------------- */

/* Returns -1 when the bridge broke the protocol. */
static int
handle_frame (void            *data,
              const FarHeader *header,
              const uint8_t   *payload)
{
  Serve *serve = data;
  RelayUnit *unit;
  RelayMessage message;

  if (header->type == FAR_BYE)
    {
      serve->ending = 1;
      return 0;
    }
  if (header->type == FAR_SPAWN)
    {
      if (relay_units_find (&serve->units, header->unit) != NULL)
        return -1;
      start_unit (serve, header->unit, payload, header->size);
      return 0;
    }

  unit = relay_units_find (&serve->units, header->unit);
  /* A unit that is over may still hear about its streams. */
  if (unit == NULL)
    return 0;

  switch (header->type)
    {
    case FAR_DATA:
    case FAR_EOF:
    case FAR_CREDIT:
      return relay_unit_receive (unit, &serve->peer, header, payload);

    case FAR_CONTROL:
      if (relay_message_from (payload, header->size, &message) < 0)
        return -1;
      if (message.record.type == TERRET_WIRE_CONTROL_TERMINAL_MODES)
        reset_terminal (unit);
      else if (message.record.type == TERRET_WIRE_CONTROL_LOOK_INPUT)
        look_input (serve, unit);
      else if (unit->control >= 0)
        send (unit->control, &message.record, sizeof message.record,
              MSG_NOSIGNAL | MSG_DONTWAIT);
      return 0;

    default:
      return -1;
    }
}

/* --- Main --------------------------------------------------------------- */

static void
send_hello (Serve *serve)
{
  size_t id_len = strlen (launcher_build_id);
  uint8_t payload[8 + 256];

  if (id_len > 256)
    id_len = 256;
  far_put32 (payload, FAR_MAGIC);
  far_put32 (payload + 4, FAR_VERSION);
  memcpy (payload + 8, launcher_build_id, id_len);
  relay_send (&serve->peer, FAR_HELLO, 0, 0, payload, 8 + id_len);
}

/* The peer's descriptors, moved out of 0 and 1, which become /dev/null:
 * nothing forked later may hold the engine's pipes by accident. */
static int
take_stdio (Serve *serve)
{
  int null = open ("/dev/null", O_RDWR | O_CLOEXEC);

  serve->peer.in_fd = fcntl (0, F_DUPFD_CLOEXEC, 3);
  serve->peer.out_fd = fcntl (1, F_DUPFD_CLOEXEC, 3);
  if (null < 0 || serve->peer.in_fd < 0 || serve->peer.out_fd < 0 ||
      dup2 (null, 0) < 0 || dup2 (null, 1) < 0)
    return -1;
  close (null);
  fcntl (serve->peer.in_fd, F_SETFL, fcntl (serve->peer.in_fd, F_GETFL) | O_NONBLOCK);
  fcntl (serve->peer.out_fd, F_SETFL, fcntl (serve->peer.out_fd, F_GETFL) | O_NONBLOCK);
  return 0;
}

int
launcher_serve_main (char **argv)
{
  Serve serve = { 0 };
  struct pollfd *pfds = NULL;
  size_t size_pfds = 0;
  sigset_t mask;

  (void)argv;

  if (take_stdio (&serve) < 0)
    {
      fprintf (stderr, "terret-launcher: --serve: %s\n", strerror (errno));
      return 127;
    }

  /* Orphans of a unit that was killed come here, even when this is not
   * the container's first process. */
  prctl (PR_SET_CHILD_SUBREAPER, 1);
  /* Not dumpable, as the local launcher: commands run as its uid, and
   * its descriptors and memory are not theirs to read. */
  prctl (PR_SET_DUMPABLE, 0);
  signal (SIGPIPE, SIG_IGN);
  sigemptyset (&mask);
  sigaddset (&mask, SIGCHLD);
  sigaddset (&mask, SIGTERM);
  sigaddset (&mask, SIGINT);
  sigaddset (&mask, SIGHUP);
  sigprocmask (SIG_BLOCK, &mask, NULL);
  serve.sigfd = signalfd (-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (serve.sigfd < 0)
    {
      fprintf (stderr, "terret-launcher: --serve: signalfd: %s\n", strerror (errno));
      return 127;
    }
  launcher_note_signals ();

  send_hello (&serve);
  relay_flush (&serve.peer);

  while (!serve.ending)
    {
      size_t n = 0;

      relay_pollfds_reserve (&pfds, &size_pfds, 3 + serve.units.n * (1 + TERRET_WIRE_MAX_FDS));

      pfds[n++] = (struct pollfd) { serve.sigfd, POLLIN, 0 };
      n += relay_peer_poll (&serve.peer, 1, pfds + n);
      n += relay_units_poll (&serve.units, pfds + n);

      if (relay_wait (pfds, n) < 0)
        break;

      if (pfds[0].revents & POLLIN)
        {
          /* SIGTERM, SIGINT or SIGHUP: the end. */
          if (relay_read_signals (serve.sigfd))
            serve.ending = 1;
          reap (&serve);
        }

      /* Units first, in the order of the set as polled; a unit added by
       * a frame below is polled next time. */
      relay_units_pump (&serve.units, pfds + 3, &serve.peer, RELAY_CONTROL_ALONE, read_unit,
                        &serve);
      remove_over_units (&serve);

      if (pfds[1].revents & (POLLIN | POLLHUP | POLLERR))
        {
          if (relay_fill (&serve.peer) == 0)
            serve.ending = 1;
          if (relay_dispatch (&serve.peer, FAR_SPAWN_MAX, handle_frame, &serve) < 0)
            {
              fprintf (stderr, "terret-launcher: --serve: the bridge broke the protocol\n");
              serve.ending = 1;
            }
        }

      if (relay_flush (&serve.peer) < 0)
        serve.ending = 1;
    }

  /* The host side is gone: nothing it started here stays. Each unit ends
   * what it contains at its socket's end, as it would if this process
   * died now (killed with the bridge): so it is not killed here, which
   * would leave its contents to whoever adopts orphans, but waited for.
   * What is left after (orphans of a unit someone else killed) comes here
   * and is killed. */
  for (size_t i = 0; i < serve.units.n; i++)
    {
      RelayUnit *unit = serve.units.items[i];

      for (size_t j = 0; j < unit->n_streams; j++)
        relay_stream_close (&unit->streams[j]);
      if (unit->control >= 0)
        close (unit->control);
    }
  for (;;)
    {
      int units_left = 0, status;
      pid_t pid;

      for (size_t i = 0; i < serve.units.n; i++)
        units_left |= serve_unit (&serve, i)->pid > 0;
      if (!units_left)
        break;
      do
        pid = waitpid (-1, &status, 0);
      while (pid < 0 && errno == EINTR);
      if (pid < 0)
        break;
      for (size_t i = 0; i < serve.units.n; i++)
        if (serve_unit (&serve, i)->pid == pid)
          serve_unit (&serve, i)->pid = 0;
    }
  launcher_kill_children (NULL, NULL);
  for (size_t i = 0; i < serve.units.n; i++)
    free (serve.units.items[i]);
  free (serve.units.items);
  free (pfds);
  relay_buffer_clear (&serve.peer.incoming);
  relay_buffer_clear (&serve.peer.outgoing);
  return 0;
}
