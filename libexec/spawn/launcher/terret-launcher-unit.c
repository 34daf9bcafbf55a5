/* terret-launcher-unit.c: one process, and everything it starts
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A unit is the launcher's child for one requested process. It sets
 * itself up as a child subreaper, starts the process, reports its pid
 * and its end on the unit socket, and reaps every orphan the process
 * leaves: a `setsid` job, a `nohup` job, a double fork all stay its
 * descendants. When the library says STOP, the unit runs the stop
 * sequence (terret-launcher-stop.c), which ends in the KILL sweep; when
 * the library says KILL, the sweep comes at once: the unit SIGKILLs its
 * children again and again, as grandchildren are reparented to it, until
 * none is left, and only then closes the socket: the library's EOF means
 * that nothing is left. When the library's end closes (the host died),
 * the unit runs the stop of a closing terminal on its own, with the grace
 * its spawn request gave (none: the sweep at once).
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "terret-launcher-cgroup.h"
#include "terret-launcher-input.h"
#include "terret-launcher-unit.h"

/* Descriptors the process is given are moved above this first, so that
 * installing one never overwrites another still to be installed. */
#define FD_PARKING 100

/* The signals whose disposition is not the default in the launcher, as
 * launcher_note_signals() found them; units inherit the set with the
 * dispositions it describes. */
static sigset_t set_signals;
static int set_signals_known;

void
launcher_note_signals (void)
{
  sigemptyset (&set_signals);
  for (int sig = 1; sig < NSIG; sig++)
    {
      struct sigaction action;

      if (sig != SIGKILL && sig != SIGSTOP && sigaction (sig, NULL, &action) == 0 &&
          action.sa_handler != SIG_DFL)
        sigaddset (&set_signals, sig);
    }
  set_signals_known = 1;
}

static void
send_record (int      fd,
             uint32_t type,
             int32_t  a,
             int32_t  b)
{
  TerretWireRecord record = { type, a, b, 0 };

  while (send (fd, &record, sizeof record, MSG_NOSIGNAL) < 0 && errno == EINTR)
    ;
}

/* In the process, after fork and before exec: the one place in the tree
 * where a child is set up. Reports a failure on @report and exits. */
static void
start_process (const Plan       *plan,
               const UnitCgroup *cgroup,
               const int        *child_fds,
               size_t            n_child_fds,
               int               unit_fd,
               int               report,
               pid_t             unit)
  __attribute__ ((noreturn));

static void
fail (int report,
      int stage)
  __attribute__ ((noreturn));

static void
fail (int report,
      int stage)
{
  int info[2] = { errno, stage };

  while (write (report, info, sizeof info) < 0 && errno == EINTR)
    ;
  _exit (127);
}

/* The limits a cgroup does not hold, as rlimits, soft and hard alike so
 * nothing the process runs can raise them; CPU time gets a second more
 * of hard limit, so SIGXCPU (which says why) comes before SIGKILL. */
static int
set_limits (const Plan       *plan,
            const UnitCgroup *cgroup)
{
  struct { int resource; uint64_t soft, hard; } limits[5];
  size_t n = 0;

  if (plan->limit_memory != 0 && cgroup->memory[0] == '\0')
    limits[n].resource = RLIMIT_AS, limits[n].soft = limits[n].hard = plan->limit_memory, n++;
  if (plan->limit_processes != 0 && cgroup->pids[0] == '\0')
    limits[n].resource = RLIMIT_NPROC, limits[n].soft = limits[n].hard = plan->limit_processes, n++;
  if (plan->limit_cpu != 0)
    limits[n].resource = RLIMIT_CPU, limits[n].soft = plan->limit_cpu,
      limits[n].hard = plan->limit_cpu + 1, n++;
  if (plan->limit_file_size != 0)
    limits[n].resource = RLIMIT_FSIZE, limits[n].soft = limits[n].hard = plan->limit_file_size, n++;
  if (plan->limit_open_files != 0)
    limits[n].resource = RLIMIT_NOFILE, limits[n].soft = limits[n].hard = plan->limit_open_files, n++;

  for (size_t i = 0; i < n; i++)
    {
      struct rlimit limit = { limits[i].soft, limits[i].hard };

      if (setrlimit (limits[i].resource, &limit) < 0)
        return -1;
    }
  return 0;
}

static void
start_process (const Plan       *plan,
               const UnitCgroup *cgroup,
               const int        *child_fds,
               size_t            n_child_fds,
               int               unit_fd,
               int               report,
               pid_t             unit)
{
  int parked[TERRET_WIRE_MAX_FDS];
  int highest = 2;
  sigset_t none;

  /* Its own word, for its pid as the library sees it. */
  send_record (unit_fd, TERRET_WIRE_EVENT_PID, getpid (), 0);

  /* A host that ignores SIGPIPE or blocks signals must not pass that on:
   * `yes | head` would print errors instead of ending quietly. Only what
   * the launcher found set is reset (one call each, not one for every
   * signal on every run); without that note, everything is. */
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP && (!set_signals_known || sigismember (&set_signals, sig)))
      signal (sig, SIG_DFL);
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);

  /* A session and process group of its own: no terminal of the host's,
   * and one group a signal reaches as a whole (job control is off in a
   * session's shell, so its children stay in it). */
  if (setsid () < 0)
    fail (report, TERRET_WIRE_STAGE_SESSION);

  /* If the unit goes (killed), so does the process; its orphans go to the
   * launcher. The check after the prctl closes the race with a unit that
   * died before it took effect. */
  if (prctl (PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid () != unit)
    fail (report, TERRET_WIRE_STAGE_SESSION);

  for (size_t i = 0; i < n_child_fds; i++)
    {
      parked[i] = fcntl (child_fds[i], F_DUPFD, FD_PARKING);
      if (parked[i] < 0)
        fail (report, TERRET_WIRE_STAGE_DESCRIPTORS);
    }

  if (plan->terminal >= 0)
    {
      int tty = parked[plan->terminal];

      for (int target = 0; target <= 2; target++)
        if (dup2 (tty, target) < 0)
          fail (report, TERRET_WIRE_STAGE_DESCRIPTORS);
      /* A session leader without a terminal takes the one on 0 as its
       * controlling terminal: ^C on it reaches the process's group. */
      if (ioctl (0, TIOCSCTTY, 0) < 0)
        fail (report, TERRET_WIRE_STAGE_TERMINAL);
    }
  else
    {
      int null = open ("/dev/null", O_RDWR | O_CLOEXEC);

      /* Standard streams nobody asked for read and write nothing, rather
       * than whatever the launcher's happened to be. */
      for (int target = 0; target <= 2; target++)
        if (null < 0 || dup2 (null, target) < 0)
          fail (report, TERRET_WIRE_STAGE_DESCRIPTORS);
    }

  for (size_t i = 0; i < plan->n_fds; i++)
    {
      int target = plan->fds[i].target;

      if (dup2 (parked[plan->fds[i].index], target) < 0)
        fail (report, TERRET_WIRE_STAGE_DESCRIPTORS);
      if (target > highest)
        highest = target;
    }

  /* Nothing else crosses exec: not the parked copies, not the unit's
   * socket, not anything the launcher inherited. The report pipe is
   * close-on-exec and closes itself. */
  for (int fd = highest + 1; fd < report; fd++)
    close (fd);
  if (syscall (SYS_close_range, report + 1, ~0U, 0) < 0)
    {
      for (int fd = report + 1; fd < 65536; fd++)
        close (fd);
    }

  if (cgroup_join (cgroup) != 0 || set_limits (plan, cgroup) < 0)
    fail (report, TERRET_WIRE_STAGE_LIMITS);

  if (plan->cwd != NULL && chdir (plan->cwd) < 0)
    fail (report, TERRET_WIRE_STAGE_CWD);

  execve (plan->argv[0], plan->argv, plan->envp);
  fail (report, TERRET_WIRE_STAGE_EXEC);
}

/* The pids of the calling process's children, from /proc. Returns how
 * many were stored. */
static size_t
list_children (pid_t  *pids,
               size_t  size)
{
  char path[64];
  size_t n = 0;
  FILE *f;
  int pid;

  snprintf (path, sizeof path, "/proc/self/task/%d/children", (int)getpid ());
  f = fopen (path, "re");
  if (f == NULL)
    return 0;
  while (n < size && fscanf (f, "%d", &pid) == 1)
    pids[n++] = pid;
  fclose (f);
  return n;
}

void
launcher_kill_children (void (*on_reaped) (int pid, int status, void *data),
                        void  *data)
{
  pid_t pids[1024];

  for (;;)
    {
      size_t n = list_children (pids, sizeof pids / sizeof pids[0]);
      int status;
      pid_t pid;

      if (n == 0)
        {
          /* /proc may be missing; then waiting is what tells. */
          while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
            if (on_reaped != NULL)
              on_reaped (pid, status, data);
          if (pid < 0 || list_children (pids, 1) == 0)
            break;
          continue;
        }

      for (size_t i = 0; i < n; i++)
        {
          /* The group too: its members are descendants that would
           * otherwise only come to us one generation at a time. While the
           * child lives (it is ours, unreaped), no other group can carry
           * its id. */
          kill (-pids[i], SIGKILL);
          kill (pids[i], SIGKILL);
        }

      /* SIGKILL cannot be caught: the wait is short. One at a time, then
       * look again, since each death may reparent more to us. */
      do
        pid = waitpid (-1, &status, 0);
      while (pid < 0 && errno == EINTR);
      if (pid < 0)
        break;
      if (on_reaped != NULL)
        on_reaped (pid, status, data);
      while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
        if (on_reaped != NULL)
          on_reaped (pid, status, data);
    }
}

void
launcher_kill_strays (const pid_t *units,
                      size_t       n_units)
{
  pid_t pids[1024];
  size_t n;

  if (n_units == 0)
    {
      launcher_kill_children (NULL, NULL);
      return;
    }

  /* Only the orphans: units are children too, and stay. */
  n = list_children (pids, sizeof pids / sizeof pids[0]);
  for (size_t i = 0; i < n; i++)
    {
      int is_unit = 0;

      for (size_t j = 0; j < n_units; j++)
        is_unit |= units[j] == pids[i];
      if (!is_unit && pids[i] > 1)
        kill (pids[i], SIGKILL);
    }
}

typedef struct
{
  pid_t process;
  int unit_fd;
  int reported;
  UnitCgroup cgroup;
} Unit;

static void
send_exited (Unit *unit,
             int   status,
             int   left)
{
  TerretWireRecord record = { TERRET_WIRE_EVENT_EXITED, status, left,
                              (int32_t)cgroup_hits (&unit->cgroup) };

  while (send (unit->unit_fd, &record, sizeof record, MSG_NOSIGNAL) < 0 && errno == EINTR)
    ;
}

static void
note_reaped (int   pid,
             int   status,
             void *data)
{
  Unit *unit = data;

  if (pid == unit->process && !unit->reported)
    {
      send_exited (unit, status, 0);
      unit->reported = 1;
    }
}

/* Whether the process's command waits for input on its terminal (its
 * descriptor 0: a terminal is the process's 0, 1 and 2), as this side's
 * /proc says: for a library that holds the terminal's master but cannot
 * read this side's processes (a Flatpak app's, for its host). */
static void
unit_look_input (const Plan *plan,
                 const Unit *unit)
{
  TerretWireInput found = TERRET_WIRE_INPUT_UNKNOWN;
  unsigned flags = 0;

  if (plan->terminal >= 0)
    found = terret_input_look_process (unit->process, 0, &flags);
  send_record (unit->unit_fd, TERRET_WIRE_EVENT_INPUT, (int32_t)found, (int32_t)flags);
}

void
launcher_unit_main (const Plan *plan,
                    int         unit_fd,
                    const int  *child_fds,
                    size_t      n_child_fds)
{
  Unit unit = { 0, unit_fd, 0, { { 0 }, { 0 }, 0 } };
  UnitStop stop = { 0 };
  int host_gone = 0;
  int report[2];
  int info[2];
  sigset_t mask;
  ssize_t n;
  int sigfd;

  prctl (PR_SET_CHILD_SUBREAPER, 1);
  cgroup_setup (&unit.cgroup, getpid (), plan->limit_memory, plan->limit_processes);

  sigemptyset (&mask);
  sigaddset (&mask, SIGCHLD);
  sigprocmask (SIG_BLOCK, &mask, NULL);
  sigfd = signalfd (-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

  if (sigfd < 0 || pipe2 (report, O_CLOEXEC) < 0)
    {
      send_record (unit_fd, TERRET_WIRE_EVENT_FAILED, errno, TERRET_WIRE_STAGE_FORK);
      cgroup_remove (&unit.cgroup);
      _exit (0);
    }

  unit.process = fork ();
  if (unit.process < 0)
    {
      send_record (unit_fd, TERRET_WIRE_EVENT_FAILED, errno, TERRET_WIRE_STAGE_FORK);
      cgroup_remove (&unit.cgroup);
      _exit (0);
    }
  if (unit.process == 0)
    {
      close (report[0]);
      close (sigfd);
      start_process (plan, &unit.cgroup, child_fds, n_child_fds, unit_fd, report[1], getppid ());
    }

  close (report[1]);
  for (size_t i = 0; i < n_child_fds; i++)
    close (child_fds[i]);

  /* The report pipe closes at exec: nothing read means the program runs. */
  do
    n = read (report[0], info, sizeof info);
  while (n < 0 && errno == EINTR);
  close (report[0]);

  if (n == sizeof info)
    {
      int status;

      while (waitpid (unit.process, &status, 0) < 0 && errno == EINTR)
        ;
      send_record (unit_fd, TERRET_WIRE_EVENT_FAILED, info[0], info[1]);
      cgroup_remove (&unit.cgroup);
      _exit (0);
    }

  send_record (unit_fd, TERRET_WIRE_EVENT_STARTED, unit.process, 0);

  for (;;)
    {
      struct pollfd pfds[2 + UNIT_STOP_WATCH] = { { host_gone ? -1 : unit_fd, POLLIN, 0 },
                                                  { sigfd, POLLIN, 0 } };
      nfds_t n_pfds = 2 + (nfds_t)unit_stop_watch_fds (&stop, pfds + 2);

      if (poll (pfds, n_pfds, unit_stop_wait_ms (&stop)) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }

      /* A stage of the stop that is due: the sweep ends it. */
      if (unit_stop_due (&stop, unit.process))
        break;

      if (pfds[1].revents & POLLIN)
        {
          struct signalfd_siginfo si;
          int status;
          pid_t pid;

          while (read (sigfd, &si, sizeof si) == sizeof si)
            ;
          /* The process's end is reported at once, with whether anything
           * it started is still there, and before it is reaped: once its
           * pid is gone, the report is on the socket. Its orphans are only
           * reaped: they are its business until the library says KILL.
           * With nothing left, there is nothing more to contain: the unit
           * leaves, and its EOF says so. */
          if (!unit.reported)
            {
              siginfo_t end = { 0 };

              if (waitid (P_PID, unit.process, &end, WEXITED | WNOHANG | WNOWAIT) == 0 &&
                  end.si_pid == unit.process)
                {
                  pid_t children[2];
                  int left = list_children (children, 2) > 1;

                  status = end.si_code == CLD_EXITED
                    ? W_EXITCODE (end.si_status, 0)
                    : end.si_status | (end.si_code == CLD_DUMPED ? WCOREFLAG : 0);
                  send_exited (&unit, status, left);
                  unit.reported = 1;
                }
            }
          while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
            ;
          /* No child at all, not even one still running: nothing left,
           * as the reaping loop's own last answer says (no /proc read). */
          if (unit.reported && pid < 0 && errno == ECHILD)
            goto done;
        }

      if (pfds[0].revents & (POLLIN | POLLHUP | POLLERR))
        {
          TerretWireRecord control;

          do
            n = recv (unit_fd, &control, sizeof control, 0);
          while (n < 0 && errno == EINTR);

          if (n != sizeof control)
            {
              /* The library is gone (the host died, or closed without a
               * word): a closing terminal's stop, on the unit's own
               * clock, unless one runs already. */
              if (plan->stop_grace_ms <= 0)
                break;
              host_gone = 1;
              stop.report_fd = -1;
              /* Nobody is left to hold the shell: nothing is spared. */
              if (!stop.active || stop.spare)
                unit_stop_begin (&stop, unit.process, plan->stop_grace_ms, 0,
                                 TERRET_WIRE_STOP_CLOSE, -1);
              continue;
            }
          if (control.type == TERRET_WIRE_CONTROL_KILL)
            break;
          if (control.type == TERRET_WIRE_CONTROL_STOP)
            {
              if (control.a <= 0)
                break;
              /* The first stop holds its clock; a KILL shortens it. */
              if (!stop.active)
                unit_stop_begin (&stop, unit.process, control.a, control.b,
                                 (unsigned)control.c, unit_fd);
            }
          else if (control.type == TERRET_WIRE_CONTROL_STOP_CANCEL)
            stop.active = 0;
          else if (control.type == TERRET_WIRE_CONTROL_STOP_SPARE)
            unit_stop_spare (&stop, unit.process);
          else if (control.type == TERRET_WIRE_CONTROL_ACCOUNT)
            unit_account (unit.process, unit_fd);
          else if (control.type == TERRET_WIRE_CONTROL_LOOK_INPUT)
            unit_look_input (plan, &unit);
          else if (control.type == TERRET_WIRE_CONTROL_SIGNAL_GROUP && control.a > 0 &&
                   control.a < NSIG)
            {
              /* The group outlives its leader while any member lives, so
               * it names the process's own group even after the process
               * ended (its background jobs); a reused id would need every
               * member gone and the pid space wrapped meanwhile. */
              kill (-unit.process, control.a);
            }
        }
    }

  launcher_kill_children (note_reaped, &unit);
done:
  cgroup_remove (&unit.cgroup);
  /* The EOF the library waits for: everything is gone. */
  close (unit_fd);
  _exit (0);
}
