/* bench-floor-oneshot.c: the floor of a oneshot server
 *
 * Each request's command is posix_spawned as `bash -c` (bash found once,
 * at start), its stdout and stderr read to their end, its status reaped,
 * and one response written: no launcher, no containment, no limits, no
 * capture bound, no timeout. What terret-exec's oneshot backend adds to a
 * run is what it costs beyond this.
 *
 *   bench-floor-oneshot < requests > responses
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-floor-common.h"

static gboolean
drain (int         fd,
       GByteArray *into)
{
  guint8 chunk[64 * 1024];
  gssize n = read (fd, chunk, sizeof chunk);

  if (n < 0 && errno == EINTR)
    return TRUE;
  if (n <= 0)
    return FALSE;
  g_byte_array_append (into, chunk, n);
  return TRUE;
}

static void
run (const char   *bash,
     FloorRequest *request)
{
  const char *argv[] = { bash, "-c", request->command, NULL };
  g_autoptr(GByteArray) out = g_byte_array_new ();
  g_autoptr(GByteArray) err = g_byte_array_new ();
  posix_spawn_file_actions_t actions;
  struct pollfd fds[2];
  int out_pipe[2], err_pipe[2];
  int status = 0;
  int open_fds = 2;
  pid_t pid;

  if (pipe2 (out_pipe, O_CLOEXEC) < 0 || pipe2 (err_pipe, O_CLOEXEC) < 0)
    {
      floor_respond_error (request, "failed", g_strerror (errno));
      return;
    }

  posix_spawn_file_actions_init (&actions);
  posix_spawn_file_actions_addopen (&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2 (&actions, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2 (&actions, err_pipe[1], 2);
  errno = posix_spawn (&pid, bash, &actions, NULL, (char * const *)argv, environ);
  posix_spawn_file_actions_destroy (&actions);
  close (out_pipe[1]);
  close (err_pipe[1]);
  if (errno != 0)
    {
      close (out_pipe[0]);
      close (err_pipe[0]);
      floor_respond_error (request, "failed", g_strerror (errno));
      return;
    }

  fds[0] = (struct pollfd) { out_pipe[0], POLLIN, 0 };
  fds[1] = (struct pollfd) { err_pipe[0], POLLIN, 0 };
  while (open_fds > 0)
    {
      if (poll (fds, 2, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0 && fds[i].revents != 0 &&
            !drain (fds[i].fd, i == 0 ? out : err))
          {
            close (fds[i].fd);
            fds[i].fd = -1;
            open_fds--;
          }
    }
  for (int i = 0; i < 2; i++)
    if (fds[i].fd >= 0)
      close (fds[i].fd);

  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  floor_respond (request, WIFEXITED (status) ? WEXITSTATUS (status) : -1,
                 out->data, out->len, err->data, err->len, FALSE);
}

int
main (void)
{
  g_autofree char *bash = g_find_program_in_path ("bash");
  FloorRequest request;

  if (bash == NULL)
    {
      g_printerr ("bash is not in PATH\n");
      return 77;
    }

  while (floor_read_request (&request))
    {
      if (g_str_equal (request.op, "run") && request.command != NULL)
        run (bash, &request);
      else if (g_str_equal (request.op, "close") || g_str_equal (request.op, "close-all"))
        floor_respond (&request, 0, NULL, 0, NULL, 0, FALSE);
      else
        floor_respond_error (&request, "unavailable", "a floor server only runs commands");
      floor_clear_request (&request);
    }
  return 0;
}
