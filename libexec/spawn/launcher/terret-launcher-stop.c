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
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
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
 * it moved to; reported (with its command line) when @tell. */
static void
signal_tree (UnitStop *stop,
             pid_t     process,
             int       sig,
             int       tell)
{
  pid_t pids[WALK_MAX];
  size_t n = children_of (getpid (), pids, WALK_MAX);

  /* Breadth first: the list grows as it is walked. */
  for (size_t i = 0; i < n; i++)
    n += children_of (pids[i], pids + n, WALK_MAX - n);
  for (size_t i = 0; i < n; i++)
    {
      if (tell)
        report (stop, TERRET_WIRE_EVENT_SIGNALLED, pids[i], sig, pids[i] == process, pids[i]);
      kill (pids[i], sig);
    }
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

  if (stop->term_ms >= 0 && now >= stop->term_ms)
    {
      stop->term_ms = -1;
      report (stop, TERRET_WIRE_EVENT_STOP_STAGE, SIGTERM, (int32_t)(now - stop->began_ms), 0, 0);
      if (stop->flags & TERRET_WIRE_STOP_FOREGROUND)
        {
          /* The terminal's foreground group, which with job control off
           * is the shell's own: an interactive bash ignores SIGTERM and
           * stays, its command does not. */
          kill (-process, SIGTERM);
          kill (-process, SIGCONT);
        }
      else
        {
          signal_tree (stop, process, SIGTERM, 1);
          signal_tree (stop, process, SIGCONT, 0);
        }
    }

  if (now >= stop->kill_ms)
    {
      report (stop, TERRET_WIRE_EVENT_STOP_STAGE, SIGKILL, (int32_t)(now - stop->began_ms), 0, 0);
      /* Who was still there, for the library's account; the sweep
       * follows. */
      signal_tree (stop, process, SIGKILL, 1);
      return 1;
    }
  return 0;
}
