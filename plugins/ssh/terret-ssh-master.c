/* terret-ssh-master.c: one OpenSSH master connection
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib-unix.h>
#include <glib/gstdio.h>

#include "terret-ssh-master.h"

/* How long a master asked to exit gets before its unit is killed. */
#define EXIT_GRACE_MSEC 2000

/* A master's stderr is kept to explain its end; a master says a line
 * for each session on a terminal it cannot copy, so it is emptied once
 * it grows past this (its writer appends, so it starts again at 0). */
#define MASTER_DIAGNOSTICS_KEPT (64 * 1024)

static gboolean
process_is_running (TerretProcess *process)
{
  return process != NULL && !terret_process_check_exited (process);
}

/* Ends @master's process: one that is up is asked to exit, and closes
 * its connection cleanly; its unit is ended whatever it did. */
void
terret_ssh_master_shut_down (TerretSshMaster *master,
                             TerretLauncher  *launcher)
{
  g_autoptr(TerretProcess) process = g_steal_pointer (&master->process);

  if (master->state == TERRET_SSH_MASTER_UP && process_is_running (process) && launcher != NULL)
    {
      g_autofree char *control_path = g_strdup_printf ("ControlPath=%s", master->path);
      const char *argv[] = {
        "ssh", "-F", "none", "-o", control_path, "-O", "exit", "--", master->host, NULL,
      };
      g_autoptr(TerretProcess) exiter = NULL;

      exiter = terret_launcher_spawn (launcher, argv, NULL);
      if (exiter != NULL)
        terret_process_wait_exited (exiter, EXIT_GRACE_MSEC);
      terret_process_wait_exited (process, EXIT_GRACE_MSEC);
    }

  /* Disposing it ends its unit and waits until nothing of it is left. */
  g_clear_object (&process);
  /* A master that was killed leaves its socket. */
  g_unlink (master->path);
}

TerretSshMaster *
terret_ssh_master_ref (TerretSshMaster *master)
{
  master->ref++;
  return master;
}

void
terret_ssh_master_unref (TerretSshMaster *master)
{
  if (--master->ref > 0)
    return;

  g_assert (master->process == NULL);
  if (master->ready_fd >= 0)
    close (master->ready_fd);
  if (master->diagnostics_fd >= 0)
    close (master->diagnostics_fd);
  g_free (master->signature);
  g_free (master->path);
  g_free (master->host);
  g_free (master->said);
  g_free (master);
}

/* Whether a master listens on @path: a client connecting would get in.
 * Tells a master that died (killed, it leaves its socket behind) from
 * one that is there, at once. */
static gboolean
master_answers (const char *path)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  int ret;

  if (fd < 0)
    return TRUE;
  g_strlcpy (addr.sun_path, path, sizeof addr.sun_path);
  do
    ret = connect (fd, (struct sockaddr *)&addr, sizeof addr);
  while (ret < 0 && errno == EINTR);
  /* EAGAIN: its backlog is full, so it listens. */
  ret = ret == 0 || errno == EAGAIN;
  close (fd);

  return ret;
}

/* A master says that it cannot copy the terminal modes of each session
 * whose client has no terminal: never why it ended. */
static void
drop_terminal_complaints (char *text)
{
  char *line;

  while ((line = strstr (text, "tcgetattr: ")) != NULL)
    {
      char *start = line, *end = strchr (line, '\n');

      while (start > text && start[-1] != '\n')
        start--;
      if (end == NULL)
        {
          *start = '\0';
          break;
        }
      memmove (start, end + 1, strlen (end + 1) + 1);
    }
}

/* The master is gone (it failed to log in, or died): why, as it said. */
static void
master_set_gone (TerretSshMaster *master)
{
  g_autofree char *text = NULL;

  if (master->state == TERRET_SSH_MASTER_GONE)
    return;

  master->state = TERRET_SSH_MASTER_GONE;
  text = terret_ssh_read_diagnostics (master->diagnostics_fd);
  drop_terminal_complaints (text);
  /* A master only ends on its own when it failed: whatever its status,
   * it is a client's failure. */
  master->failure = terret_ssh_classify (text, 255, &master->said);
  if (master->failure == TERRET_SSH_FAILURE_NONE)
    master->failure = TERRET_SSH_FAILURE_CLOSED;
  g_debug ("The master on %s is gone: %s", master->path,
           master->said != NULL ? master->said : "it said nothing");
}

/* Brings @master's state up to date without blocking. */
void
terret_ssh_master_update (TerretSshMaster *master)
{
  struct stat st;

  if (master->state != TERRET_SSH_MASTER_GONE && fstat (master->diagnostics_fd, &st) == 0 &&
      st.st_size > MASTER_DIAGNOSTICS_KEPT && ftruncate (master->diagnostics_fd, 0) < 0)
    g_debug ("Could not empty the stderr of the master on %s: %s", master->path, g_strerror (errno));

  if (master->state == TERRET_SSH_MASTER_CONNECTING)
    {
      struct pollfd pfd = { master->ready_fd, POLLIN, 0 };
      char discard[256];

      if (poll (&pfd, 1, 0) <= 0)
        return;
      /* What a LocalCommand of the user's printed: not the signal. */
      while (read (master->ready_fd, discard, sizeof discard) > 0)
        ;
      if ((pfd.revents & (POLLHUP | POLLERR)) == 0)
        return;
      /* Its stdout closed: replaced once it listens, or closed as it
       * exits; only a master that listens answers. */
      if (master_answers (master->path))
        {
          master->state = TERRET_SSH_MASTER_UP;
          return;
        }
      master_set_gone (master);
    }
  else if (master->state == TERRET_SSH_MASTER_UP && !process_is_running (master->process))
    master_set_gone (master);
}

/* Starts a master listening on @path for @argv (the client's command
 * line up to and including the destination, without its control path). */
TerretSshMaster *
terret_ssh_master_open (TerretLauncher      *launcher,
                        const char          *path,
                        const char          *signature,
                        const char * const  *argv,
                        GError             **error)
{
  g_autoptr(GPtrArray) full = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(TerretProcess) process = NULL;
  TerretSshMaster *master;
  int ready[2];
  int diagnostics, writer = -1;

  if (!g_unix_open_pipe (ready, FD_CLOEXEC, error))
    return NULL;
  diagnostics = terret_ssh_diagnostics_new (&writer, error);
  if (diagnostics < 0)
    {
      close (ready[0]);
      close (ready[1]);
      return NULL;
    }
  g_unix_set_fd_nonblocking (ready[0], TRUE, NULL);

  g_ptr_array_add (full, g_strdup (argv[0]));
  /* First: for ssh the first value of an option wins. */
  g_ptr_array_add (full, g_strdup ("-o"));
  g_ptr_array_add (full, g_strdup_printf ("ControlPath=%s", path));
  for (guint i = 1; argv[i] != NULL; i++)
    g_ptr_array_add (full, g_strdup (argv[i]));
  g_ptr_array_add (full, NULL);

  /* Its stdin reads /dev/null; its stdout is the sign that it is up. */
  terret_launcher_take_fd (launcher, ready[1], 1);
  terret_launcher_take_fd (launcher, writer, 2);
  process = terret_launcher_spawn (launcher, (const char * const *)full->pdata, error);
  if (process == NULL)
    {
      close (ready[0]);
      close (diagnostics);
      return NULL;
    }

  master = g_new0 (TerretSshMaster, 1);
  master->ref = 1;
  master->signature = g_strdup (signature);
  master->path = g_strdup (path);
  master->host = g_strdup (argv[g_strv_length ((char **)argv) - 1]);
  master->process = g_steal_pointer (&process);
  master->ready_fd = ready[0];
  master->diagnostics_fd = diagnostics;
  master->state = TERRET_SSH_MASTER_CONNECTING;

  return master;
}


/* Brings @master's state up to date and, if it seems up, makes sure it
 * still listens: one that was killed leaves its socket behind. */
void
terret_ssh_master_check (TerretSshMaster *master)
{
  terret_ssh_master_update (master);
  if (master->state == TERRET_SSH_MASTER_UP && !master_answers (master->path))
    master_set_gone (master);
}
