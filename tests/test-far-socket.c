/* test-far-socket.c: a far side reached with a socket handed to its launcher
 *
 * terret_far_side_new_for_socket(): the backend starts the launcher
 * itself, with one end of a socket pair as its descriptor 3, where
 * descriptors reach it (the Flatpak session helper's HostCommand for
 * flatpak-host). Here the start function spawns the local static
 * launcher, as the helper would on a host, so the SDK's side of it
 * (descriptors handed over, a far side's programs and environment, the
 * launcher's failures, units apart from the launcher's process group) is
 * checked on any machine, under the sanitizers; tests/flatpak runs it
 * through the real helper.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <glib-unix.h>

#include "terret-error.h"
#include "terret-far-side-private.h"
#include "terret-launcher-link-private.h"
#include "terret-launcher-private.h"
#include "terret-test-utils.h"

typedef struct
{
  const char *program;          /* what is started; NULL: the static launcher */
  const char *refuse;           /* when set, the start fails with these words */
  GPid pid;                     /* what was started */
  guint starts;
} Host;

/* The helper's part: the program with @argv, @socket_fd as 3, @output_fd
 * as 1 and 2, /dev/null as 0, in a session of its own (as HostCommand
 * starts a command), with FAR_OWN=own in its environment. */
static gboolean
start_here (TerretFarSide       *far_side,
            const char * const  *argv,
            int                  socket_fd,
            int                  output_fd,
            gpointer             user_data,
            GError             **error)
{
  Host *host = user_data;
  const char *program = host->program != NULL ? host->program : terret_far_side_get_launcher ();
  g_autoptr(GPtrArray) args = g_ptr_array_new ();
  g_auto(GStrv) envp = g_environ_setenv (g_get_environ (), "FAR_OWN", "own", TRUE);
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  pid_t pid;
  int ret;

  host->starts++;
  if (host->refuse != NULL)
    {
      g_set_error_literal (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE, host->refuse);
      return FALSE;
    }

  g_ptr_array_add (args, (char *)program);
  for (guint i = 0; argv[i] != NULL; i++)
    g_ptr_array_add (args, (char *)argv[i]);
  g_ptr_array_add (args, NULL);

  posix_spawnattr_init (&attr);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSID);
  posix_spawn_file_actions_init (&actions);
  posix_spawn_file_actions_addopen (&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2 (&actions, output_fd, 1);
  posix_spawn_file_actions_adddup2 (&actions, output_fd, 2);
  posix_spawn_file_actions_adddup2 (&actions, socket_fd, 3);
  posix_spawn_file_actions_addclosefrom_np (&actions, 4);
  ret = posix_spawn (&pid, program, &actions, &attr, (char **)args->pdata, envp);
  posix_spawn_file_actions_destroy (&actions);
  posix_spawnattr_destroy (&attr);
  g_assert_cmpint (ret, ==, 0);
  host->pid = pid;
  return TRUE;
}

static TerretLauncherLink *
link_for (Host *host)
{
  g_autoptr(TerretFarSide) far = terret_far_side_new_for_socket ("the test's host", start_here,
                                                                 host, NULL);

  return _terret_launcher_link_new_far (far);
}

/* Everything @fd carries until its end. */
static char *
read_all (int fd)
{
  GString *text = g_string_new (NULL);
  char chunk[4096];
  gssize n;

  while ((n = read (fd, chunk, sizeof chunk)) != 0)
    {
      if (n < 0 && errno == EINTR)
        continue;
      g_assert_cmpint (n, >, 0);
      g_string_append_len (text, chunk, n);
    }
  close (fd);
  return g_string_free (text, FALSE);
}

/* @argv through @link with stdout on a pipe, read to its end; its
 * status. */
static char *
run (TerretLauncherLink  *link,
     const char * const  *argv,
     const char * const  *envp,
     int                  terminal,
     int                 *status,
     GError             **error)
{
  g_autoptr(TerretLauncher) launcher = _terret_launcher_new_for (link);
  g_autoptr(TerretProcess) process = NULL;
  int out[2];
  char *text;

  g_assert_true (g_unix_open_pipe (out, FD_CLOEXEC, NULL));
  terret_launcher_set_environ (launcher, envp);
  if (terminal >= 0)
    terret_launcher_take_terminal (launcher, terminal);
  terret_launcher_take_fd (launcher, out[1], terminal >= 0 ? 3 : 1);
  process = terret_launcher_spawn (launcher, argv, error);
  if (process == NULL)
    {
      close (out[0]);
      return NULL;
    }
  text = read_all (out[0]);
  g_assert_true (terret_process_wait_exited (process, -1));
  g_assert_true (terret_process_get_exited (process, status));
  return text;
}

static void
test_socket_run (void)
{
  Host host = { 0 };
  g_autoptr(TerretLauncherLink) link = link_for (&host);
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  const char *argv[] = { "sh", "-c", "printf '%s/%s' \"$FAR_OWN\" \"$FAR_ADDED\"; exit 3", NULL };
  const char *envp[] = { "FAR_ADDED=added", NULL };
  int status = 0;

  g_test_summary ("A far side reached with a socket: its launcher started once by the "
                  "backend's function; a program named without a slash looked up there, the "
                  "environment given added to the launcher's own, a pipe handed over as a "
                  "descriptor, the status.");

  for (guint i = 0; i < 2; i++)
    {
      g_clear_pointer (&out, g_free);
      out = run (link, argv, envp, -1, &status, &error);
      g_assert_no_error (error);
      g_assert_cmpstr (out, ==, "own/added");
      g_assert_true (WIFEXITED (status));
      g_assert_cmpint (WEXITSTATUS (status), ==, 3);
    }
  g_assert_cmpuint (host.starts, ==, 1);
  g_clear_pointer (&link, _terret_launcher_link_unref);
  /* Its socket closed, the launcher leaves. */
  g_assert_cmpint (waitpid (host.pid, &status, 0), ==, host.pid);
  g_assert_true (WIFEXITED (status));
}

static void
test_socket_terminal (void)
{
  Host host = { 0 };
  g_autoptr(TerretLauncherLink) link = link_for (&host);
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  const char *argv[] = { "sh", "-c", "test -t 0 && test -t 1 && echo terminal >&3", NULL };
  char name[128];
  int status = 0;
  int master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  int slave;

  g_test_summary ("A terminal made here is handed to the far launcher as a descriptor, and "
                  "is the process's terminal there.");

  g_assert_cmpint (master, >=, 0);
  g_assert_cmpint (grantpt (master), ==, 0);
  g_assert_cmpint (unlockpt (master), ==, 0);
  g_assert_cmpint (ptsname_r (master, name, sizeof name), ==, 0);
  slave = open (name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  g_assert_cmpint (slave, >=, 0);

  out = run (link, argv, NULL, slave, &status, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, "terminal\n");
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 0);
  close (master);
}

static void
test_socket_failures (void)
{
  Host refusing = { NULL, "the host said no", 0, 0 };
  Host broken = { "/bin/echo", NULL, 0, 0 };
  const char *argv[] = { "true", NULL };
  int status;

  g_test_summary ("A start function's error is the run's, and a launcher that ends before "
                  "its answer is UNAVAILABLE in the words it left.");

  {
    g_autoptr(TerretLauncherLink) link = link_for (&refusing);
    g_autoptr(GError) error = NULL;
    g_autofree char *out = run (link, argv, NULL, -1, &status, &error);

    g_assert_null (out);
    g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE);
    g_assert_cmpstr (error->message, ==, "the host said no");
  }
  {
    g_autoptr(TerretLauncherLink) link = link_for (&broken);
    g_autoptr(GError) error = NULL;
    g_autofree char *out = run (link, argv, NULL, -1, &status, &error);

    /* What it printed, the launcher's arguments, is what it said. */
    g_assert_null (out);
    g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE);
    g_assert_nonnull (strstr (error->message, "Could not reach the test's host: "));
    g_assert_nonnull (strstr (error->message, "--socket"));
    g_assert_cmpint (waitpid (broken.pid, &status, 0), ==, broken.pid);
  }
}

static void
test_socket_group_signal (void)
{
  Host host = { 0 };
  g_autoptr(TerretLauncherLink) link = link_for (&host);
  g_autoptr(TerretLauncher) launcher = _terret_launcher_new_for (link);
  g_autoptr(TerretProcess) process = NULL;
  g_autoptr(GError) error = NULL;
  const char *argv[] = { "sleep", "1000", NULL };
  int status;
  GPid pid;

  g_test_summary ("SIGINT to the far launcher's process group (what the Flatpak session "
                  "helper sends when the app's bus connection goes) ends the launcher but no "
                  "unit: a unit still ends everything it contains.");

  process = terret_launcher_spawn (launcher, argv, &error);
  g_assert_no_error (error);
  pid = terret_process_get_pid (process);
  g_assert_cmpint (pid, >, 0);

  g_assert_cmpint (kill (-host.pid, SIGINT), ==, 0);
  g_assert_cmpint (waitpid (host.pid, &status, 0), ==, host.pid);
  g_assert_true (WIFSIGNALED (status));

  /* Its unit, alive, ends it, and says so once it is gone. */
  terret_process_terminate (process);
  g_assert_true (terret_process_check_exited (process));
  g_assert_cmpint (kill (pid, 0), ==, -1);
  g_assert_cmpint (errno, ==, ESRCH);
}

int
main (int    argc,
      char **argv)
{
  terret_test_init (&argc, &argv);

  g_test_add_func ("/far-socket/run", test_socket_run);
  g_test_add_func ("/far-socket/terminal", test_socket_terminal);
  g_test_add_func ("/far-socket/failures", test_socket_failures);
  g_test_add_func ("/far-socket/group-signal", test_socket_group_signal);
  return g_test_run ();
}
