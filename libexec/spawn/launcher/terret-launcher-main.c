/* terret-launcher-main.c: the process between a host and what it runs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * One launcher serves one executor. The library starts it once with
 * posix_spawn, so the host's memory is never copied however large the
 * host is, and from then on asks it for every process it runs (a
 * session's shell, an ssh client, a one-shot `bash -c`). For each
 * request the launcher forks a unit (terret-launcher-unit.c), a small
 * process that starts the requested program and contains everything it
 * starts; forking the launcher costs the same whatever the host holds.
 *
 * The launcher is a child subreaper: should a unit die without ending
 * what it contained (someone SIGKILLed it), its orphans come here, and
 * anything here that is not a unit is killed. When the library's end of
 * the request socket closes (the executor went, or the host died), the
 * launcher leaves; units end on their own sockets' EOF.
 *
 * Plain C without GLib: it forks on every request, and a small process
 * with nothing but libc forks fastest.
 *
 *   terret-launcher --socket FD [--far-requests]
 *   terret-launcher --socket FD --bridge ...       (terret-launcher-bridge.c)
 *   terret-launcher --supervise PROGRAM [ARG...]   (terret-launcher-supervise.c)
 *   terret-launcher --serve                        (terret-launcher-serve.c)
 */

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "terret-launcher-environ.h"
#include "terret-launcher-unit.h"

/* Units alive, by pid. A launcher runs the units of one executor: its
 * sessions and runs in flight, rarely more than a few hundred. */
typedef struct
{
  pid_t *pids;
  size_t len;
  size_t size;
} UnitSet;

static void
units_add (UnitSet *units,
           pid_t    pid)
{
  if (units->len == units->size)
    {
      size_t size = units->size ? units->size * 2 : 64;
      pid_t *pids = realloc (units->pids, size * sizeof *pids);

      if (pids == NULL)
        abort ();
      units->pids = pids;
      units->size = size;
    }
  units->pids[units->len++] = pid;
}

static int
units_remove (UnitSet *units,
              pid_t    pid)
{
  for (size_t i = 0; i < units->len; i++)
    {
      if (units->pids[i] == pid)
        {
          units->pids[i] = units->pids[--units->len];
          return 1;
        }
    }
  return 0;
}

/* --far-requests: the library's processes run here but it is not here (a
 * Flatpak app's host, reached through the session helper): its requests
 * are a far side's (terret-launcher-environ.h), descriptors and all else
 * as from a library beside it. */
static int far_requests;

/* Reads the payload and splits it into @plan; a program looked up here
 * goes to @program_out, the caller's to free. Returns 0, or an errno. */
static int
parse_plan (int     payload_fd,
            size_t  n_child_fds,
            char  **data_out,
            char  **program_out,
            Plan   *plan)
{
  struct stat st;
  char *data;
  int error;

  memset (plan, 0, sizeof *plan);
  plan->terminal = -1;

  if (fstat (payload_fd, &st) < 0 || st.st_size <= 0)
    return EINVAL;
  data = malloc (st.st_size + 1);
  if (data == NULL)
    return ENOMEM;
  if (pread (payload_fd, data, st.st_size, 0) != st.st_size)
    {
      free (data);
      return EIO;
    }
  data[st.st_size] = '\0';

  error = launcher_parse_plan (data, st.st_size, n_child_fds, plan);
  if (error == 0 && far_requests)
    {
      char **envp = launcher_merge_environ (plan->envp);

      if (envp == NULL)
        error = ENOMEM;
      else
        {
          free (plan->envp);
          plan->envp = envp;
        }
      if (error == 0 && strchr (plan->argv[0], '/') == NULL)
        {
          *program_out = launcher_find_program (plan->argv[0], plan->envp);
          if (*program_out == NULL)
            error = errno;
          else
            plan->argv[0] = *program_out;
        }
    }
  if (error == 0 && plan->argv[0][0] != '/')
    error = EINVAL;
  if (error != 0)
    {
      free (data);
      return error;
    }
  *data_out = data;
  return 0;
}

/* Takes one spawn request off @sock and forks its unit. Returns -1 when
 * the library is gone. */
static int
handle_request (int      sock,
                int      sigfd,
                UnitSet *units)
{
  int fds[TERRET_WIRE_MAX_FDS];
  size_t n_fds = 0;
  char *data = NULL;
  char *program = NULL;
  Plan plan;
  pid_t pid;
  int error;
  int taken = launcher_take_request (sock, fds, &n_fds);

  if (taken <= 0)
    return taken;

  error = parse_plan (fds[TERRET_WIRE_FD_PAYLOAD], n_fds - TERRET_WIRE_FD_CHILD, &data, &program,
                      &plan);
  if (error != 0)
    {
      launcher_close_fds (fds, n_fds);
      free (plan.argv);
      free (plan.envp);
      free (program);
      free (data);
      launcher_reply (sock, error, 0);
      return 0;
    }

  pid = fork ();
  if (pid == 0)
    {
      /* The unit keeps its own socket and the child's descriptors; the
       * launcher's request socket and signalfd are not its business. */
      close (sock);
      close (sigfd);
      close (fds[TERRET_WIRE_FD_PAYLOAD]);
      /* A process group of its own: the Flatpak session helper signals
       * the launcher's group when the app's bus connection goes, and a
       * unit ends what it contains on its own socket's end, never by a
       * signal that would leave that behind. */
      if (far_requests)
        setpgid (0, 0);
      launcher_unit_main (&plan, fds[TERRET_WIRE_FD_UNIT], fds + TERRET_WIRE_FD_CHILD,
                          n_fds - TERRET_WIRE_FD_CHILD);
    }

  error = pid < 0 ? errno : 0;
  if (pid > 0)
    units_add (units, pid);
  /* Whatever the outcome, the descriptors are the unit's now, or
   * nobody's: the library's EOF on its end of the unit socket tells it. */
  launcher_close_fds (fds, n_fds);
  free (plan.argv);
  free (plan.envp);
  free (program);
  free (data);
  launcher_reply (sock, error, pid > 0 ? pid : 0);
  return 0;
}

/* A unit that ended leaves nothing behind, unless it was killed before it
 * could end what it contained: those orphans are reparented here, and
 * nothing here but a unit has any business running. */
static void
reap (UnitSet *units)
{
  int status;
  pid_t pid;
  int stray = 0;

  while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
    {
      if (!units_remove (units, pid))
        stray = 1;
      else if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
        stray = 1;
    }

  if (stray)
    launcher_kill_strays (units->pids, units->len);
}

/* terret-launcher --outlast PROGRAM [ARG...]: runs PROGRAM and ends,
 * as it did, only once everything it started has ended on its own. For
 * a client whose helper finishes its work just after the client exits
 * (podman's conmon, after its exec): the unit this runs in would
 * otherwise find the helper there and kill it. Nothing is killed here:
 * whatever ends this unit ends them all. */
static int
outlast_main (char **argv)
{
  int program_status = 0;
  pid_t program, pid;
  int status;

  if (argv[0] == NULL)
    {
      fprintf (stderr, "terret-launcher: --outlast needs a program to run\n");
      return 2;
    }
  /* Its orphans come here, to be waited for. */
  prctl (PR_SET_CHILD_SUBREAPER, 1);
  program = fork ();
  if (program < 0)
    {
      fprintf (stderr, "terret-launcher: fork: %s\n", strerror (errno));
      return 127;
    }
  if (program == 0)
    {
      execvp (argv[0], argv);
      fprintf (stderr, "terret-launcher: %s: %s\n", argv[0], strerror (errno));
      _exit (127);
    }
  while ((pid = wait (&status)) > 0 || (pid < 0 && errno == EINTR))
    if (pid == program)
      program_status = status;
  if (WIFSIGNALED (program_status))
    return 128 + WTERMSIG (program_status);
  return WEXITSTATUS (program_status);
}

int
main (int    argc,
      char **argv)
{
  UnitSet units = { 0 };
  sigset_t mask;
  int sock = -1;
  int sigfd;

  if (argc > 1 && strcmp (argv[1], "--supervise") == 0)
    return launcher_supervise_main (argv + 2);
  if (argc > 1 && strcmp (argv[1], "--serve") == 0)
    return launcher_serve_main (argv + 2);
  if (argc > 1 && strcmp (argv[1], "--outlast") == 0)
    return outlast_main (argv + 2);

  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--socket") == 0 && i + 1 < argc)
        sock = atoi (argv[++i]);
      else if (strcmp (argv[i], "--far-requests") == 0)
        far_requests = 1;
      else if (strcmp (argv[i], "--bridge") == 0 && sock >= 0)
        return launcher_bridge_main (sock, argv + i + 1);
    }
  if (sock < 0)
    {
      fprintf (stderr, "usage: %s --socket FD [--far-requests | --bridge ...] | --supervise PROGRAM [ARG...] | "
               "--outlast PROGRAM [ARG...] | --serve\n"
               "The process terret-exec runs commands through; not meant to be run by hand.\n",
               argv[0]);
      return 2;
    }

  /* Orphans of a unit that was killed come here instead of to init. */
  prctl (PR_SET_CHILD_SUBREAPER, 1);
  /* Not dumpable: in a sandbox every command runs as the launcher's uid,
   * and a dumpable launcher's /proc/PID/fd, /proc/PID/mem and environ
   * would be theirs to read and write. Its units inherit this; what they
   * exec does not. */
  prctl (PR_SET_DUMPABLE, 0);

  sigemptyset (&mask);
  sigaddset (&mask, SIGCHLD);
  sigprocmask (SIG_BLOCK, &mask, NULL);
  sigfd = signalfd (-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigfd < 0)
    return 1;
  /* What the host left set (an ignored SIGPIPE), for units to undo. */
  launcher_note_signals ();

  /* Running, inside the sandbox if there is one: until this arrives, an
   * EOF on the socket means the sandbox could not be set up. */
  {
    TerretWireHello hello = { TERRET_WIRE_HELLO_MAGIC, prctl (PR_GET_SECCOMP) };

    while (send (sock, &hello, sizeof hello, MSG_NOSIGNAL) < 0)
      if (errno != EINTR)
        return 1;
  }

  for (;;)
    {
      struct pollfd pfds[2] = { { sock, POLLIN, 0 }, { sigfd, POLLIN, 0 } };

      if (poll (pfds, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }

      if (pfds[1].revents & POLLIN)
        {
          struct signalfd_siginfo info;

          while (read (sigfd, &info, sizeof info) == sizeof info)
            ;
          reap (&units);
        }

      if (pfds[0].revents & (POLLIN | POLLHUP | POLLERR))
        {
          if (handle_request (sock, sigfd, &units) < 0)
            break;
        }
    }

  /* The library is gone. Units outlive the launcher on purpose: each ends
   * when its own socket does, which the library holds (or the host's
   * death closed). */
  free (units.pids);
  return 0;
}
