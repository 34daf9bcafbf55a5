/* terret-launcher-stop.c: a unit's stop sequence, bounded
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What a terminal, systemd and `docker stop` do, in one place for every
 * backend: the process hears first what a terminal sends (the library's
 * ^C on a terminal, SIGINT to the group otherwise, or SIGHUP and SIGCONT
 * to everything when its terminal "closes"), then SIGTERM halfway
 * through the grace, then the KILL sweep at the grace's end. The timers
 * are the unit's poll timeout: nothing ticks in between. Whatever the
 * program does (ignores every signal, forks, stops itself), the sweep
 * comes at the grace's end.
 *
 * A session's bash that comes back to its prompt before the sweep (^C
 * ended its command) is spared (unit_stop_spare()): it stays, with what
 * was there before the command started (earlier background jobs, as a
 * terminal's ^C leaves them), and the stages go on for what the command
 * started, its background jobs, `setsid` and `nohup` ones too; their
 * end is reported, and the unit stays. Whose a process is, is told by
 * its start time, the kernel's (/proc/PID/stat), in the unit's own
 * clock: no host's clock is compared with it.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "terret-launcher-unit.h"

/* Processes a walk of the unit's tree visits at most; the KILL sweep
 * ends whatever a larger tree (a fork bomb) leaves. */
#define WALK_MAX 1024

static int64_t
now_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
report (UnitStop *stop,
        uint32_t  type,
        int32_t   a,
        int32_t   b,
        int32_t   c,
        pid_t     cmdline_of)
{
  struct
  {
    TerretWireRecord record;
    char cmdline[TERRET_WIRE_CMDLINE_MAX];
  } event = { { type, a, b, c }, { 0 } };
  size_t len = 0;

  if (stop->report_fd < 0)
    return;
  if (cmdline_of > 0)
    {
      char path[64];
      int fd;

      snprintf (path, sizeof path, "/proc/%d/cmdline", (int)cmdline_of);
      fd = open (path, O_RDONLY | O_CLOEXEC);
      if (fd >= 0)
        {
          ssize_t n = read (fd, event.cmdline, sizeof event.cmdline);

          len = n > 0 ? (size_t)n : 0;
          close (fd);
        }
    }
  while (send (stop->report_fd, &event, sizeof event.record + len, MSG_NOSIGNAL) < 0 &&
         errno == EINTR)
    ;
}

/* Clock ticks since boot now, as /proc/PID/stat counts a start. */
static unsigned long long
now_ticks (void)
{
  struct timespec ts;
  unsigned long long hz = (unsigned long long)sysconf (_SC_CLK_TCK);

  clock_gettime (CLOCK_BOOTTIME, &ts);
  return (unsigned long long)ts.tv_sec * hz + (unsigned long long)ts.tv_nsec * hz / 1000000000ull;
}

/* Whether @pid is still there (not a zombie) and started at or after
 * @since (clock ticks since boot). */
static int
started_since (pid_t              pid,
               unsigned long long since)
{
  char path[64], buffer[1024], *p;
  unsigned long long start = 0;
  ssize_t n;
  int fd;

  snprintf (path, sizeof path, "/proc/%d/stat", (int)pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  n = read (fd, buffer, sizeof buffer - 1);
  close (fd);
  if (n <= 0)
    return 0;
  buffer[n] = '\0';
  /* After the command's name (which may hold anything): state, then the
   * start time is the 20th field. */
  p = strrchr (buffer, ')');
  if (p == NULL || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
    return 0;
  p += 2;
  for (int field = 0; field < 19 && p != NULL; field++)
    {
      p = strchr (p, ' ');
      if (p != NULL)
        p++;
    }
  if (p == NULL)
    return 0;
  start = strtoull (p, NULL, 10);
  return start >= since;
}

/* The children of @pid (of its main thread), into @pids. */
static size_t
children_of (pid_t   pid,
             pid_t  *pids,
             size_t  size)
{
  char path[64];
  size_t n = 0;
  FILE *f;
  int child;

  snprintf (path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
  f = fopen (path, "re");
  if (f == NULL)
    return 0;
  while (n < size && fscanf (f, "%d", &child) == 1)
    pids[n++] = child;
  fclose (f);
  return n;
}

/* @sig to every process in the unit's tree, whichever group or session
 * it moved to (a command's stop: but the process and what is older than
 * the command); reported (with its command line) when @tell. Returns how
 * many it signalled. */
static size_t
signal_tree (UnitStop *stop,
             pid_t     process,
             int       sig,
             int       tell)
{
  pid_t pids[WALK_MAX];
  size_t n = children_of (getpid (), pids, WALK_MAX), signalled = 0;

  /* Breadth first: the list grows as it is walked. */
  for (size_t i = 0; i < n; i++)
    n += children_of (pids[i], pids + n, WALK_MAX - n);
  for (size_t i = 0; i < n; i++)
    {
      if (stop->command_only &&
          (pids[i] == process || !started_since (pids[i], stop->command_ticks)))
        continue;
      if (tell)
        report (stop, TERRET_WIRE_EVENT_SIGNALLED, pids[i], sig, pids[i] == process, pids[i]);
      kill (pids[i], sig);
      signalled++;
    }
  return signalled;
}

/* A spared stop ends: nothing of the command's is left. */
static void
spare_done (UnitStop *stop)
{
  for (int i = 0; i < stop->n_watch; i++)
    close (stop->watch[i]);
  stop->n_watch = 0;
  stop->active = 0;
  stop->spare = 0;
  report (stop, TERRET_WIRE_EVENT_STOP_DONE, 0, 0, 0, 0);
}

/* What of the command's is left, watched again (a pidfd is readable once
 * its process ended): a spared stop sees their end when it comes, with
 * no timer. Returns how many are left. */
static size_t
spare_watch (UnitStop *stop,
             pid_t     process)
{
  pid_t pids[WALK_MAX];
  size_t n = children_of (getpid (), pids, WALK_MAX), left = 0;

  for (int i = 0; i < stop->n_watch; i++)
    close (stop->watch[i]);
  stop->n_watch = 0;
  for (size_t i = 0; i < n; i++)
    n += children_of (pids[i], pids + n, WALK_MAX - n);
  for (size_t i = 0; i < n; i++)
    {
      int fd;

      if (pids[i] == process || !started_since (pids[i], stop->command_ticks))
        continue;
      left++;
      if (stop->n_watch < UNIT_STOP_WATCH &&
          (fd = (int)syscall (SYS_pidfd_open, pids[i], 0)) >= 0)
        stop->watch[stop->n_watch++] = fd;
    }
  return left;
}

/* A spared stop's end at the grace's: KILL to what is left of the
 * command's, again as orphans come back to the unit, until none is
 * (bounded: a process that SIGKILL has not ended yet is counted again). */
static void
spare_sweep (UnitStop *stop,
             pid_t     process)
{
  for (int round = 0; round < 200 && signal_tree (stop, process, SIGKILL, round == 0) > 0; round++)
    usleep (1000);
  spare_done (stop);
}

void
unit_stop_spare (UnitStop *stop,
                 pid_t     process)
{
  if (!stop->active || !stop->command_only)
    {
      stop->active = 0;
      report (stop, TERRET_WIRE_EVENT_STOP_DONE, 0, 0, 0, 0);
      return;
    }
  stop->spare = 1;
  /* The command is over (bash is back); what it left (background jobs,
   * a `setsid` or `nohup` one) heard no ^C: SIGTERM now, so that the
   * session is ready once they finished, and the sweep at the grace's end. */
  stop->term_ms = -1;
  signal_tree (stop, process, SIGTERM, 1);
  signal_tree (stop, process, SIGCONT, 0);
  if (spare_watch (stop, process) == 0)
    spare_done (stop);
}

void
unit_account (pid_t process,
              int   report_fd)
{
  /* A record of its own: a stop under way keeps its filter. */
  UnitStop account = { .report_fd = report_fd };

  signal_tree (&account, process, 0, 1);
  report (&account, TERRET_WIRE_EVENT_ACCOUNTED, 0, 0, 0, 0);
}

int
unit_stop_watch_fds (const UnitStop *stop,
                     struct pollfd  *pfds)
{
  for (int i = 0; i < stop->n_watch; i++)
    pfds[i] = (struct pollfd){ stop->watch[i], POLLIN, 0 };
  return stop->n_watch;
}

void
unit_stop_begin (UnitStop *stop,
                 pid_t     process,
                 int       grace_ms,
                 int       first_signal,
                 unsigned  flags,
                 int       report_fd)
{
  stop->active = 1;
  stop->spare = 0;
  stop->command_only = 0;
  if (flags & TERRET_WIRE_STOP_FOREGROUND)
    {
      unsigned long long hz = (unsigned long long)sysconf (_SC_CLK_TCK);
      /* One tick more: a start time is cut down to the tick it fell in. */
      unsigned long long back = (unsigned long long)(first_signal > 0 ? first_signal : 0) * hz /
                                1000 + 1;
      unsigned long long now = now_ticks ();

      stop->command_only = 1;
      stop->command_ticks = now > back ? now - back : 0;
      first_signal = 0;
    }
  for (int k = 0; k < stop->n_watch; k++)
    close (stop->watch[k]);
  stop->n_watch = 0;
  stop->flags = flags;
  stop->report_fd = report_fd;
  stop->began_ms = now_ms ();
  stop->term_ms = stop->began_ms + grace_ms / 2;
  stop->kill_ms = stop->began_ms + grace_ms;

  if (flags & TERRET_WIRE_STOP_CLOSE)
    {
      /* As a terminal that closes: SIGHUP, and SIGCONT so that a stopped
       * job hears it (bash's own jobs are its to HUP, and it does). */
      report (stop, TERRET_WIRE_EVENT_STOP_STAGE, SIGHUP, 0, 0, 0);
      signal_tree (stop, process, SIGHUP, 1);
      signal_tree (stop, process, SIGCONT, 0);
    }
  else if (first_signal > 0 && first_signal < NSIG)
    {
      report (stop, TERRET_WIRE_EVENT_STOP_STAGE, first_signal, 0, 0, 0);
      kill (-process, first_signal);
    }
  else
    report (stop, TERRET_WIRE_EVENT_STOP_STAGE, 0, 0, 0, 0);
}

int
unit_stop_wait_ms (const UnitStop *stop)
{
  int64_t next, left;

  if (!stop->active)
    return -1;
  next = stop->term_ms >= 0 ? stop->term_ms : stop->kill_ms;
  left = next - now_ms ();
  return left > 0 ? (int)(left > 60 * 60 * 1000 ? 60 * 60 * 1000 : left) : 0;
}

int
unit_stop_due (UnitStop *stop,
               pid_t     process)
{
  int64_t now = now_ms ();

  if (!stop->active)
    return 0;

  /* Woken by an end, a signal or a word from the library: whether what a
   * spared stop waits for is gone yet. */
  if (stop->spare && spare_watch (stop, process) == 0)
    {
      spare_done (stop);
      return 0;
    }

  if (stop->term_ms >= 0 && now >= stop->term_ms)
    {
      stop->term_ms = -1;
      report (stop, TERRET_WIRE_EVENT_STOP_STAGE, SIGTERM, (int32_t)(now - stop->began_ms), 0, 0);
      /* A command's stop: what the command started, the terminal's
       * foreground job and its background ones alike, never the shell or
       * the jobs it had before; otherwise everything. */
      signal_tree (stop, process, SIGTERM, 1);
      signal_tree (stop, process, SIGCONT, 0);
    }

  if (now >= stop->kill_ms)
    {
      report (stop, TERRET_WIRE_EVENT_STOP_STAGE, SIGKILL, (int32_t)(now - stop->began_ms), 0, 0);
      if (stop->spare)
        {
          spare_sweep (stop, process);
          return 0;
        }
      /* Who was still there, for the library's account; the sweep
       * follows, and takes the shell too. */
      stop->command_only = 0;
      signal_tree (stop, process, SIGKILL, 1);
      return 1;
    }
  return 0;
}
