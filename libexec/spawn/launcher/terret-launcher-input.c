/* terret-launcher-input.c: whether a command waits for input on its terminal
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A command waits for input when a process of its terminal's foreground
 * group sleeps in read(2) on the terminal and no process of the group
 * runs: the kernel says so in /proc (each process's state, and the system
 * call it sleeps in with its arguments), and the terminal says which
 * group is in the foreground (tcgetpgrp on the master) and whether it
 * echoes. Nothing is guessed from silence: where that state cannot be
 * read, the answer is unknown.
 *
 * Plain C, so that the side that holds the terminal looks: the library
 * for a pty of its host, the far launcher for a terminal it made in a
 * container or on the host of a Flatpak (whose /proc the library cannot
 * read). It reads kernel state only when asked, on an event.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include "terret-launcher-input.h"

/* Programs that hold the terminal to page: they wait for a key, and may
 * wait in poll(2) rather than read(2). Matched on the process's name
 * (its comm); `pager` is Debian's alternative, git's pager is one of
 * these. */
static const char * const pagers[] = {
  "less", "more", "most", "pg", "pager", "lv", "w3m", NULL
};

typedef struct
{
  unsigned readers;
  pid_t *reader_pids;           /* (nullable) */
  size_t reader_pids_max;
  size_t n_reader_pids;
  unsigned running;
  unsigned unreadable;
  unsigned members;
  int pager;
} GroupLook;

static int
is_pager (const char *comm)
{
  for (size_t i = 0; pagers[i] != NULL; i++)
    if (strcmp (pagers[i], comm) == 0)
      return 1;
  return 0;
}

static int
read_small_file (const char *path,
                 char       *buffer,
                 size_t      size)
{
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  ssize_t n;

  if (fd < 0)
    return 0;
  n = read (fd, buffer, size - 1);
  close (fd);
  if (n < 0)
    return 0;
  buffer[n] = '\0';
  return 1;
}

/* Whether @pid's descriptor @fd is the terminal @tty, or /dev/tty (the
 * controlling terminal: for a process of the terminal's foreground
 * group, the terminal). Compared by inode, so a terminal seen through
 * another mount namespace's devpts is still recognised. */
static int
fd_is_terminal (const char              *pid,
                unsigned long long       fd,
                const struct stat       *tty)
{
  char path[320];
  struct stat st;

  snprintf (path, sizeof path, "/proc/%s/fd/%llu", pid, fd);
  if (stat (path, &st) < 0 || !S_ISCHR (st.st_mode))
    return 0;
  return (st.st_dev == tty->st_dev && st.st_ino == tty->st_ino) ||
         st.st_rdev == makedev (5, 0);
}

static int
is_read_call (long nr)
{
  return nr == SYS_read || nr == SYS_readv || nr == SYS_pread64 || nr == SYS_preadv;
}

/* A pager may sleep in poll or select with the terminal among its
 * descriptors; which ones, /proc does not say, hence pagers only. */
static int
is_poll_call (long nr)
{
  return
#ifdef SYS_poll
    nr == SYS_poll ||
#endif
#ifdef SYS_select
    nr == SYS_select ||
#endif
    nr == SYS_ppoll || nr == SYS_pselect6;
}

/* One process of the group: what it does. */
static void
look_at_process (const char        *pid,
                 const char        *comm,
                 char               state,
                 const struct stat *tty,
                 GroupLook         *look)
{
  char path[320];
  char text[512];
  char *end;
  long nr;

  look->members++;
  switch (state)
    {
    case 'Z':
    case 'X':
      look->members--;
      return;
    case 'S':
      break;
    case 'T':
    case 't':
      /* Stopped: it waits for a signal, not for input. */
      return;
    default:
      look->running++;
      return;
    }

  snprintf (path, sizeof path, "/proc/%s/syscall", pid);
  if (!read_small_file (path, text, sizeof text))
    {
      look->unreadable++;
      return;
    }
  if (strncmp (text, "running", 7) == 0)
    {
      look->running++;
      return;
    }
  errno = 0;
  nr = strtol (text, &end, 10);
  if (errno != 0 || end == text)
    return;
  if (is_read_call (nr))
    {
      if (fd_is_terminal (pid, strtoull (end, NULL, 16), tty))
        {
          look->readers++;
          if (look->reader_pids != NULL && look->n_reader_pids < look->reader_pids_max)
            look->reader_pids[look->n_reader_pids++] = (pid_t)atoi (pid);
          look->pager |= is_pager (comm);
        }
    }
  else if (is_poll_call (nr) && is_pager (comm))
    {
      look->readers++;
      look->pager = 1;
    }
}

/* The foreground group @group of the terminal @tty (its subsidiary,
 * opened for this look: a descriptor kept open would hide the terminal's
 * end from the session), and, when there is one, its @master. */
static TerretWireInput
look_group (pid_t     group,
            int       tty,
            int       master,
            unsigned *flags,
            pid_t    *readers,
            size_t    readers_max,
            size_t   *n_readers)
{
  struct pollfd output = { master, POLLIN, 0 };
  struct pollfd input = { tty, POLLIN, 0 };
  GroupLook look = { 0, readers, readers_max, 0, 0, 0, 0, 0 };
  struct termios modes;
  struct stat tty_stat;
  struct dirent *entry;
  DIR *proc;

  if (group <= 0 || tcgetattr (tty, &modes) < 0 || fstat (tty, &tty_stat) < 0 ||
      (proc = opendir ("/proc")) == NULL)
    return TERRET_WIRE_INPUT_UNKNOWN;

  while ((entry = readdir (proc)) != NULL)
    {
      char path[320];
      char stat_text[1024];
      char *open_paren, *close_paren;
      char state;
      long pgrp;

      if (entry->d_name[0] < '0' || entry->d_name[0] > '9')
        continue;
      snprintf (path, sizeof path, "/proc/%s/stat", entry->d_name);
      if (!read_small_file (path, stat_text, sizeof stat_text))
        continue;
      /* "pid (comm) state ppid pgrp ...": comm may hold anything, so the
       * fields are counted from its last parenthesis. */
      open_paren = strchr (stat_text, '(');
      close_paren = strrchr (stat_text, ')');
      if (open_paren == NULL || close_paren == NULL || close_paren < open_paren)
        continue;
      if (sscanf (close_paren + 1, " %c %*d %ld", &state, &pgrp) != 2 || pgrp != group)
        continue;
      *close_paren = '\0';
      look_at_process (entry->d_name, open_paren + 1, state, &tty_stat, &look);
    }
  closedir (proc);

  /* Only now, after the processes were seen asleep: output they wrote
   * before is waiting to be read, input written before is waiting to
   * reach them. Either way the command is not quiet. Bytes pass through
   * the kernel's flip buffers between the two sides, later; a poll pushes
   * them through first (n_tty_poll), so nothing in flight is missed. */
  if ((master >= 0 && poll (&output, 1, 0) != 0) || poll (&input, 1, 0) != 0)
    look.running++;

  if (n_readers != NULL)
    *n_readers = look.n_reader_pids;
  if (look.members == 0 || look.running > 0)
    return TERRET_WIRE_INPUT_BUSY;
  if (look.unreadable > 0)
    return TERRET_WIRE_INPUT_UNKNOWN;
  if (look.readers == 0)
    return TERRET_WIRE_INPUT_ELSEWHERE;

  if (look.pager)
    *flags |= TERRET_WIRE_INPUT_PAGER;
  else if ((modes.c_lflag & (ECHO | ECHONL)) == 0)
    *flags |= TERRET_WIRE_INPUT_SECRET;
  return TERRET_WIRE_INPUT_WAITING;
}

/*
 * terret_input_look:
 * @terminal: the master of a terminal of this host
 * @flags: (out): TERRET_WIRE_INPUT_SECRET: the terminal's echo is off
 *   (the protocol's modes keep ECHONL as a mark that a program clearing
 *   echo clears too); TERRET_WIRE_INPUT_PAGER: a pager reads it
 * @readers: (nullable): where the pids of the processes reading the
 *   terminal go, at most @readers_max of them, @n_readers set
 *
 * Looks once at the terminal's foreground group. WAITING: a process of
 * it sleeps reading the terminal and none runs; BUSY: a process runs,
 * or output is still unread; ELSEWHERE: the group sleeps, but not on the
 * terminal (sleep, a pipe, a socket, a lock, a child); UNKNOWN: the
 * kernel's state could not be read.
 */
TerretWireInput
terret_input_look (int       terminal,
                   unsigned *flags,
                   pid_t    *readers,
                   size_t    readers_max,
                   size_t   *n_readers)
{
  TerretWireInput found;
  char slave[128];
  int tty;

  *flags = 0;
  if (n_readers != NULL)
    *n_readers = 0;
  if (ptsname_r (terminal, slave, sizeof slave) != 0 ||
      (tty = open (slave, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)) < 0)
    return TERRET_WIRE_INPUT_UNKNOWN;
  found = look_group (tcgetpgrp (terminal), tty, terminal, flags, readers, readers_max,
                      n_readers);
  close (tty);
  return found;
}

/*
 * terret_input_look_process:
 * @process: a process whose descriptor @fd is its controlling terminal
 *
 * As terret_input_look(), where the terminal's master is elsewhere (a
 * unit on a Flatpak app's host, its terminal made in the app): the
 * foreground group is the one /proc says @process's terminal has, and
 * the output not read yet is the master's holder's to see.
 */
TerretWireInput
terret_input_look_process (pid_t     process,
                           int       fd,
                           unsigned *flags)
{
  TerretWireInput found;
  char path[64];
  char stat_text[1024];
  const char *close_paren;
  long group = 0;
  int tty;

  *flags = 0;
  snprintf (path, sizeof path, "/proc/%d/stat", (int)process);
  if (!read_small_file (path, stat_text, sizeof stat_text) ||
      (close_paren = strrchr (stat_text, ')')) == NULL ||
      /* state ppid pgrp session tty_nr tpgid */
      sscanf (close_paren + 1, " %*c %*d %*d %*d %*d %ld", &group) != 1 || group <= 0)
    return TERRET_WIRE_INPUT_UNKNOWN;
  snprintf (path, sizeof path, "/proc/%d/fd/%d", (int)process, fd);
  if ((tty = open (path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)) < 0)
    return TERRET_WIRE_INPUT_UNKNOWN;
  found = isatty (tty) ? look_group ((pid_t)group, tty, -1, flags, NULL, 0, NULL)
                       : TERRET_WIRE_INPUT_UNKNOWN;
  close (tty);
  return found;
}

/* Whether @pid is stopped (or gone): a reader stopped for an end of file
 * has left its read. */
int
terret_input_is_stopped (pid_t pid)
{
  char path[64];
  char text[1024];
  const char *close_paren;

  snprintf (path, sizeof path, "/proc/%d/stat", (int)pid);
  if (!read_small_file (path, text, sizeof text) || (close_paren = strrchr (text, ')')) == NULL ||
      close_paren[1] != ' ')
    return 1;
  return close_paren[2] == 'T' || close_paren[2] == 't' || close_paren[2] == 'Z' ||
         close_paren[2] == 'X';
}
