/* terret-launcher-supervise.c: `terret-launcher --supervise`, for a far side
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Where the library cannot reach with a socket (the remote end of an ssh
 * connection), the launcher runs as the remote command instead:
 *
 *   terret-launcher --supervise PROGRAM [ARG...]
 *
 * It becomes a child subreaper, runs PROGRAM as its child on the same
 * terminal, in the same process group (a terminal's ^C must reach the
 * program as before), and when the program ends, the terminal hangs up
 * (the connection went), or the process that started it dies, it kills
 * everything the program left, `setsid` and `nohup` jobs included: they
 * are its descendants whatever session they made. It ends as the
 * program did: with its status, or by the signal that killed it, so that
 * what started it (sshd) reports a signal, not an invented status.
 */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "terret-launcher-unit.h"

typedef struct
{
  pid_t program;
  int status;
  int ended;
} Supervised;

static void
note_reaped (int   pid,
             int   status,
             void *data)
{
  Supervised *supervised = data;

  if (pid == supervised->program && !supervised->ended)
    {
      supervised->status = status;
      supervised->ended = 1;
    }
}

/* Ends the supervisor as @status says the program ended. */
static int
end_as (int status)
{
  if (WIFSIGNALED (status))
    {
      struct rlimit no_core = { 0, 0 };
      sigset_t none;
      int sig = WTERMSIG (status);

      /* The program's core, if any, is written; the supervisor's would
       * only be noise. */
      setrlimit (RLIMIT_CORE, &no_core);
      signal (sig, SIG_DFL);
      sigemptyset (&none);
      sigprocmask (SIG_SETMASK, &none, NULL);
      raise (sig);
      return 128 + sig;
    }
  if (WIFEXITED (status))
    return WEXITSTATUS (status);
  return 255;
}

int
launcher_supervise_main (char **argv)
{
  /* Signals the terminal sends its foreground group: the program's to
   * act on; the supervisor only outlasts them. */
  static const int ignored[] = { SIGINT, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE };
  Supervised supervised = { 0, 0, 0 };
  pid_t parent = getppid ();
  sigset_t mask;
  int sigfd;

  if (argv[0] == NULL)
    {
      fprintf (stderr, "terret-launcher: --supervise needs a program to run\n");
      return 2;
    }

  prctl (PR_SET_CHILD_SUBREAPER, 1);

  sigemptyset (&mask);
  sigaddset (&mask, SIGCHLD);
  sigaddset (&mask, SIGHUP);
  sigaddset (&mask, SIGTERM);
  sigprocmask (SIG_BLOCK, &mask, NULL);
  sigfd = signalfd (-1, &mask, SFD_CLOEXEC);
  if (sigfd < 0)
    {
      fprintf (stderr, "terret-launcher: signalfd: %s\n", strerror (errno));
      return 127;
    }

  /* The one that started it (sshd's session) going is a hangup too; the
   * check after closes the race with a parent already gone. A parent
   * outside this PID namespace (a container runtime's exec, which leaves
   * as soon as it started us) reads as 0 and is not a lifeline: there
   * the terminal's hangup alone says the connection went. */
  if (parent != 0)
    {
      prctl (PR_SET_PDEATHSIG, SIGHUP);
      if (getppid () != parent)
        return 129;
    }

  supervised.program = fork ();
  if (supervised.program < 0)
    {
      fprintf (stderr, "terret-launcher: fork: %s\n", strerror (errno));
      return 127;
    }
  if (supervised.program == 0)
    {
      sigset_t none;

      sigemptyset (&none);
      sigprocmask (SIG_SETMASK, &none, NULL);
      prctl (PR_SET_PDEATHSIG, SIGKILL);
      execvp (argv[0], argv);
      fprintf (stderr, "terret-launcher: %s: %s\n", argv[0], strerror (errno));
      _exit (127);
    }

  for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
    signal (ignored[i], SIG_IGN);

  while (!supervised.ended)
    {
      struct signalfd_siginfo si;
      ssize_t n = read (sigfd, &si, sizeof si);
      int status;
      pid_t pid;

      if (n < 0 && errno == EINTR)
        continue;
      if (n != sizeof si || si.ssi_signo != SIGCHLD)
        {
          /* Hung up or told to end: nothing stays. */
          launcher_kill_children (note_reaped, &supervised);
          return supervised.ended ? end_as (supervised.status) : 128 + (int)si.ssi_signo;
        }
      while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
        note_reaped (pid, status, &supervised);
    }

  /* The program is gone; what it left goes with it. */
  launcher_kill_children (NULL, NULL);
  return end_as (supervised.status);
}
