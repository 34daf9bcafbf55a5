/* terret-ssh-failure.c: why an OpenSSH client failed, from what it said
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gio/gio.h>

#include "terret-ssh-failure.h"

/* The end of what a client said is what explains its exit; a client
 * made verbose by its options may say a lot before. */
#define DIAGNOSTICS_TAIL (8 * 1024)

/*
 * terret_ssh_diagnostics_new:
 *
 * An anonymous in-memory file for a client's stderr: returns the
 * descriptor it is read (and emptied) through, and sets @writer to the
 * one to give the client, which appends, so that what it says after the
 * file was emptied starts at its beginning.
 */
int
terret_ssh_diagnostics_new (int     *writer,
                            GError **error)
{
  g_autofree char *self_path = NULL;
  int fd = memfd_create ("terret-ssh-stderr", MFD_CLOEXEC);
  int saved_errno;

  if (fd >= 0)
    {
      /* A description of its own: O_APPEND is the description's, and
       * the reader's offset must not move. */
      self_path = g_strdup_printf ("/proc/self/fd/%d", fd);
      *writer = open (self_path, O_WRONLY | O_APPEND | O_CLOEXEC);
      if (*writer >= 0)
        return fd;
    }

  saved_errno = errno;
  if (fd >= 0)
    close (fd);
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
               "Could not set up the ssh client's streams: %s", g_strerror (saved_errno));
  return -1;
}

/*
 * terret_ssh_read_diagnostics:
 *
 * The last DIAGNOSTICS_TAIL bytes a client wrote to its stderr, kept in
 * the file @fd (a memfd), as valid UTF-8 without NULs.
 */
char *
terret_ssh_read_diagnostics (int fd)
{
  g_autofree char *buffer = NULL;
  struct stat st;
  off_t start;
  gssize n;

  if (fd < 0 || fstat (fd, &st) < 0 || st.st_size <= 0)
    return g_strdup ("");

  start = st.st_size > DIAGNOSTICS_TAIL ? st.st_size - DIAGNOSTICS_TAIL : 0;
  buffer = g_malloc (st.st_size - start + 1);
  do
    n = pread (fd, buffer, st.st_size - start, start);
  while (n < 0 && errno == EINTR);
  if (n <= 0)
    return g_strdup ("");

  /* Terminal-style line ends, and NULs that would cut a C string. */
  for (gssize i = 0; i < n; i++)
    if (buffer[i] == '\0' || buffer[i] == '\r')
      buffer[i] = '\n';

  return g_utf8_make_valid (buffer, n);
}

/*
 * terret_ssh_classify:
 *
 * Classifies what a client printed before it exited with @exit_status
 * (-1: it was killed), and sets @said to the line that says so. The
 * strings are OpenSSH's own, stable for decades. The host key checks come
 * first: their banner mentions other failures' words.
 */
TerretSshFailure
terret_ssh_classify (const char  *text,
                     int          exit_status,
                     char       **said)
{
  gboolean client_failed = exit_status == 255;
  static const struct {
    const char *needle;
    TerretSshFailure failure;
  } patterns[] = {
    { "has changed and you have requested strict checking", TERRET_SSH_FAILURE_HOST_KEY_CHANGED },
    { "REMOTE HOST IDENTIFICATION HAS CHANGED", TERRET_SSH_FAILURE_HOST_KEY_CHANGED },
    { "Host key verification failed", TERRET_SSH_FAILURE_HOST_KEY_UNKNOWN },
    { "Permission denied", TERRET_SSH_FAILURE_AUTHENTICATION },
    { "Too many authentication failures", TERRET_SSH_FAILURE_AUTHENTICATION },
    { "No more authentication methods", TERRET_SSH_FAILURE_AUTHENTICATION },
    { "Connection refused", TERRET_SSH_FAILURE_REFUSED },
    { "timed out", TERRET_SSH_FAILURE_TIMED_OUT },
    { "not responding", TERRET_SSH_FAILURE_TIMED_OUT },
    { "No route to host", TERRET_SSH_FAILURE_UNREACHABLE },
    { "Network is unreachable", TERRET_SSH_FAILURE_UNREACHABLE },
    { "Could not resolve hostname", TERRET_SSH_FAILURE_RESOLVE },
    { "closed by remote host", TERRET_SSH_FAILURE_CLOSED },
    { "Connection closed by", TERRET_SSH_FAILURE_CLOSED },
    { "Connection reset", TERRET_SSH_FAILURE_CLOSED },
    { "Broken pipe", TERRET_SSH_FAILURE_CLOSED },
  };
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  const char *last = NULL;

  for (guint p = 0; p < G_N_ELEMENTS (patterns); p++)
    {
      for (guint i = 0; lines[i] != NULL; i++)
        {
          if (strstr (lines[i], patterns[p].needle) != NULL)
            {
              const char *line = lines[i];

              /* The client names itself; the message says it was ssh. */
              if (g_str_has_prefix (line, "ssh: "))
                line += strlen ("ssh: ");
              *said = g_strstrip (g_strdup (line));
              return patterns[p].failure;
            }
        }
    }

  /* Nothing known: the last thing it said is the best explanation. */
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_strstrip (lines[i]);
      if (*lines[i] != '\0')
        last = lines[i];
    }
  if (exit_status == TERRET_SSH_NO_DIRECTORY_STATUS)
    return TERRET_SSH_FAILURE_NO_DIRECTORY;
  if (exit_status == TERRET_SSH_NO_LAUNCHER_STATUS)
    return TERRET_SSH_FAILURE_NO_LAUNCHER;
  if (exit_status == TERRET_SSH_NO_LIMITS_STATUS)
    return TERRET_SSH_FAILURE_NO_LIMITS;
  if (exit_status == TERRET_SSH_NO_SHELL_STATUS)
    return TERRET_SSH_FAILURE_NO_SHELL;
  /* A silent 255 is no failure of the client's: it is also what it exits
   * with when the remote shell was killed by a signal or said `exit 255`. */
  if (!client_failed || last == NULL)
    return TERRET_SSH_FAILURE_NONE;

  *said = g_strdup (last);
  return TERRET_SSH_FAILURE_OTHER;
}
