/* test-far.c: processes on a far side, through a bridge
 *
 * The far side here is a local `terret-launcher --serve` started by the
 * bridge directly, so the protocol (spawns, streams under credit, the
 * terminal made there, events, the ends) is checked without a container
 * engine, and under the sanitizers; test-containers.c runs the same far
 * launcher inside podman and docker.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib-unix.h>
#include <glib/gstdio.h>

#include "terret-error.h"
#include "terret-far-side-private.h"
#include "terret-launcher-link-private.h"
#include "terret-launcher-private.h"
#include "terret-process-private.h"
#include "terret-test-utils.h"

static TerretLauncherLink *
far_link_for (const char * const *argv,
              const char * const *install,
              double              timeout)
{
  g_autoptr(TerretFarSide) far = terret_far_side_new ("the test's far side", argv);

  if (install != NULL)
    terret_far_side_set_install (far, install);
  if (timeout > 0)
    terret_far_side_set_timeout (far, timeout);
  return _terret_launcher_link_new_far (far);
}

static TerretLauncherLink *
far_link (void)
{
  const char *argv[] = { terret_far_side_get_launcher (), "--serve", NULL };

  return far_link_for (argv, NULL, 0);
}

/* Everything @fd carries until its end. */
static GByteArray *
read_all (int fd)
{
  GByteArray *bytes = g_byte_array_new ();
  guint8 chunk[65536];
  gssize n;

  while ((n = read (fd, chunk, sizeof chunk)) != 0)
    {
      if (n < 0 && errno == EINTR)
        continue;
      g_assert_cmpint (n, >, 0);
      g_byte_array_append (bytes, chunk, n);
    }
  close (fd);
  return bytes;
}

typedef struct
{
  GByteArray *out;
  GByteArray *err;
  int status;
} Outcome;

static void
outcome_clear (Outcome *outcome)
{
  g_clear_pointer (&outcome->out, g_byte_array_unref);
  g_clear_pointer (&outcome->err, g_byte_array_unref);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Outcome, outcome_clear)

typedef struct
{
  int fd;
  GBytes *bytes;
} Feed;

static gpointer
feed_input (gpointer data)
{
  Feed *feed = data;
  gsize len;
  const guint8 *p = g_bytes_get_data (feed->bytes, &len);

  while (len > 0)
    {
      gssize n = write (feed->fd, p, len);

      g_assert_cmpint (n, >, 0);
      p += n;
      len -= n;
    }
  close (feed->fd);
  g_bytes_unref (feed->bytes);
  g_free (feed);
  return NULL;
}

/* Starts @argv on the far side with stdout and stderr on pipes (and
 * @input on stdin, when not NULL), reads both to their ends, and waits
 * for its end. */
static gboolean
run_far (TerretLauncherLink  *link,
         const char * const  *argv,
         const char * const  *envp,
         const char          *cwd,
         GBytes              *input,
         Outcome             *outcome,
         GError             **error)
{
  g_autoptr(TerretLauncher) launcher = _terret_launcher_new_for (link);
  g_autoptr(TerretProcess) process = NULL;
  GThread *writer = NULL;
  int out[2], err[2], in[2] = { -1, -1 };

  g_assert_true (g_unix_open_pipe (out, FD_CLOEXEC, NULL));
  g_assert_true (g_unix_open_pipe (err, FD_CLOEXEC, NULL));
  terret_launcher_set_environ (launcher, envp);
  terret_launcher_set_cwd (launcher, cwd);
  terret_launcher_take_fd (launcher, out[1], 1);
  terret_launcher_take_fd (launcher, err[1], 2);
  if (input != NULL)
    {
      g_assert_true (g_unix_open_pipe (in, FD_CLOEXEC, NULL));
      terret_launcher_take_fd (launcher, in[0], 0);
    }

  process = terret_launcher_spawn (launcher, argv, error);
  if (process == NULL)
    {
      close (out[0]);
      close (err[0]);
      if (in[1] >= 0)
        close (in[1]);
      return FALSE;
    }

  if (input != NULL)
    {
      Feed *feed = g_new0 (Feed, 1);

      /* From a thread, while this one reads: a process that writes as it
       * reads would fill its output before its input was all written. */
      feed->fd = in[1];
      feed->bytes = g_bytes_ref (input);
      writer = g_thread_new ("feed", feed_input, feed);
    }
  outcome->out = read_all (out[0]);
  outcome->err = read_all (err[0]);
  if (writer != NULL)
    g_thread_join (writer);
  g_assert_true (terret_process_wait_exited (process, -1));
  g_assert_true (terret_process_get_exited (process, &outcome->status));
  terret_process_terminate (process);
  return TRUE;
}

static void
assert_bytes (GByteArray *bytes,
              const char *expected,
              gssize      len)
{
  if (len < 0)
    len = strlen (expected);
  g_assert_cmpmem (bytes->data, bytes->len, expected, len);
}

static void
test_output (void)
{
  g_autoptr(TerretLauncherLink) link = far_link ();
  g_auto(Outcome) outcome = { 0 };
  g_autoptr(GError) error = NULL;
  const char *argv[] = { "sh", "-c", "printf 'a\\000b\\n'; printf 'to stderr' >&2; exit 3", NULL };

  g_test_summary ("A process on the far side: stdout byte for byte, stderr apart, its "
                  "status; its program looked up in the far side's PATH.");

  g_assert_true (run_far (link, argv, NULL, NULL, NULL, &outcome, &error));
  g_assert_no_error (error);
  assert_bytes (outcome.out, "a\0b\n", 4);
  assert_bytes (outcome.err, "to stderr", -1);
  g_assert_true (WIFEXITED (outcome.status));
  g_assert_cmpint (WEXITSTATUS (outcome.status), ==, 3);
}

static void
test_environment (void)
{
  g_autoptr(TerretLauncherLink) link = NULL;
  g_auto(Outcome) outcome = { 0 };
  g_autoptr(GError) error = NULL;
  const char *argv[] = { "sh", "-c", "printf '%s/%s/%s' \"$FAR_OWN\" \"$FAR_OVER\" \"$FAR_ADDED\"",
                         NULL };
  const char *envp[] = { "FAR_OVER=request", "FAR_ADDED=added", NULL };

  g_test_summary ("The environment given is added to the far side's own, never a whole "
                  "one: its own variables stay, the given ones win.");

  /* The far launcher inherits the bridge's, which is this process's. */
  g_setenv ("FAR_OWN", "own", TRUE);
  g_setenv ("FAR_OVER", "own", TRUE);
  link = far_link ();
  g_assert_true (run_far (link, argv, envp, NULL, NULL, &outcome, &error));
  g_assert_no_error (error);
  assert_bytes (outcome.out, "own/request/added", -1);
  /* Spawned already: the far side has its environment. */
  g_unsetenv ("FAR_OWN");
  g_unsetenv ("FAR_OVER");
}

static void
test_failures (void)
{
  g_autoptr(TerretLauncherLink) link = far_link ();
  g_auto(Outcome) outcome = { 0 };
  g_autoptr(GError) error = NULL;
  const char *missing[] = { "terret-no-such-program", NULL };
  const char *pwd[] = { "pwd", NULL };

  g_test_summary ("A program not found on the far side and a working directory that cannot "
                  "be entered there are failed spawns naming them; the link stays up.");

  g_assert_false (run_far (link, missing, NULL, NULL, NULL, &outcome, &error));
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "terret-no-such-program"));
  g_assert_nonnull (strstr (error->message, g_strerror (ENOENT)));
  g_clear_error (&error);

  g_assert_false (run_far (link, pwd, NULL, "/terret-no-such-directory", NULL, &outcome, &error));
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "/terret-no-such-directory"));
  g_clear_error (&error);

  g_assert_true (run_far (link, pwd, NULL, "/", NULL, &outcome, &error));
  g_assert_no_error (error);
  assert_bytes (outcome.out, "/\n", -1);
}

static void
test_input (void)
{
  g_autoptr(TerretLauncherLink) link = far_link ();
  g_auto(Outcome) outcome = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) input = NULL;
  const char *argv[] = { "cat", NULL };
  gsize size = 5 * 1024 * 1024 + 7;
  guint8 *data = g_malloc (size);

  g_test_summary ("Standard input is carried to the process and its end too; many windows "
                  "each way, under credit, arrive whole and in order.");

  for (gsize i = 0; i < size; i++)
    data[i] = (guint8)(i * 7 + i / 4099);
  input = g_bytes_new_take (data, size);
  g_assert_true (run_far (link, argv, NULL, NULL, input, &outcome, &error));
  g_assert_no_error (error);
  g_assert_cmpmem (outcome.out->data, outcome.out->len, g_bytes_get_data (input, NULL), size);
  g_assert_cmpint (outcome.status, ==, 0);
}

static void
test_command_descriptor (void)
{
  g_autoptr(TerretLauncherLink) link = far_link ();
  g_autoptr(TerretLauncher) launcher = _terret_launcher_new_for (link);
  g_autoptr(TerretProcess) process = NULL;
  g_autoptr(GByteArray) out = NULL;
  g_autoptr(GError) error = NULL;
  const char *argv[] = { "sh", "-c", "cat <&3", NULL };
  const char text[] = "a command too long for an argument";
  int fd = memfd_create ("test-far", MFD_CLOEXEC);
  int pipe_out[2];

  g_test_summary ("A descriptor the process reads other than stdin (a memfd holding a long "
                  "command) is carried in.");

  g_assert_cmpint (write (fd, text, strlen (text)), ==, strlen (text));
  g_assert_cmpint (lseek (fd, 0, SEEK_SET), ==, 0);
  g_assert_true (g_unix_open_pipe (pipe_out, FD_CLOEXEC, NULL));
  terret_launcher_take_fd (launcher, pipe_out[1], 1);
  terret_launcher_take_fd (launcher, fd, 3);
  process = terret_launcher_spawn (launcher, argv, &error);
  g_assert_no_error (error);
  out = read_all (pipe_out[0]);
  assert_bytes (out, text, -1);
  terret_process_terminate (process);
}

/* Reads what the terminal socket carries until @needle is there. */
static GString *
read_until (int         fd,
            const char *needle)
{
  GString *text = g_string_new (NULL);

  while (strstr (text->str, needle) == NULL)
    {
      char chunk[4096];
      gssize n = read (fd, chunk, sizeof chunk);

      if (n < 0 && errno == EINTR)
        continue;
      g_assert_cmpint (n, >, 0);
      g_string_append_len (text, chunk, n);
    }
  return text;
}

static void
test_terminal (void)
{
  g_autoptr(TerretLauncherLink) link = far_link ();
  g_autoptr(TerretLauncher) launcher = _terret_launcher_new_for (link);
  g_autoptr(TerretProcess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) first = NULL;
  g_autoptr(GString) second = NULL;
  const char *argv[] = {
    "sh", "-c", "[ -t 0 ] && [ -t 1 ] && echo tty-ok; stty size; read x; echo \"got $x\"; "
    "trap 'echo interrupted; exit 5' INT; echo armed; while :; do sleep 1; done", NULL
  };
  int pair[2];
  int status;

  g_test_summary ("A terminal is made on the far side, the process's controlling one, in "
                  "the protocol's modes (no echo, 24x80), and ^C on it interrupts.");

  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), ==, 0);
  terret_launcher_take_terminal (launcher, pair[1]);
  process = terret_launcher_spawn (launcher, argv, &error);
  g_assert_no_error (error);

  first = read_until (pair[0], "24 80\n");
  g_assert_cmpstr (first->str, ==, "tty-ok\n24 80\n");
  g_assert_cmpint (write (pair[0], "abc\n", 4), ==, 4);
  /* No echo of "abc": only the program's own words. */
  second = read_until (pair[0], "armed\n");
  g_assert_cmpstr (second->str, ==, "got abc\narmed\n");
  g_string_truncate (second, 0);
  g_assert_cmpint (write (pair[0], "\003", 1), ==, 1);
  g_string_free (read_until (pair[0], "interrupted\n"), TRUE);

  g_assert_true (terret_process_wait_exited (process, -1));
  g_assert_true (terret_process_get_exited (process, &status));
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status), ==, 5);
  terret_process_terminate (process);
  close (pair[0]);
}

static void
test_terminal_modes (void)
{
  g_autoptr(TerretLauncherLink) link = far_link ();
  g_autoptr(TerretLauncher) launcher = _terret_launcher_new_for (link);
  g_autoptr(TerretProcess) process = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) first = NULL;
  g_autoptr(GString) second = NULL;
  const char *argv[] = { "sh", "-c", "stty echo icanon; echo changed; read x; echo \"got $x\"", NULL };
  int pair[2];

  g_test_summary ("A far terminal a command put in other modes (stty echo) is put back when "
                  "asked, before the bytes written right after the request.");

  g_assert_cmpint (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), ==, 0);
  terret_launcher_take_terminal (launcher, pair[1]);
  process = terret_launcher_spawn (launcher, argv, &error);
  g_assert_no_error (error);

  first = read_until (pair[0], "changed\n");
  g_assert_cmpstr (first->str, ==, "changed\n");
  _terret_process_reset_terminal (process);
  g_assert_cmpint (write (pair[0], "abc\n", 4), ==, 4);
  second = read_until (pair[0], "got abc\n");
  /* Echoed, it would come first. */
  g_assert_cmpstr (second->str, ==, "got abc\n");
  terret_process_terminate (process);
  close (pair[0]);
}

static guint64
rss_kib (GPid pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/status", pid);
  g_autofree char *status = NULL;
  const char *line;

  if (!g_file_get_contents (path, &status, NULL, NULL))
    return 0;
  line = strstr (status, "VmRSS:");
  return line != NULL ? g_ascii_strtoull (line + strlen ("VmRSS:"), NULL, 10) : 0;
}

/* The pids of this process's children whose command line holds @word. */
static GArray *
children_with (const char *word)
{
  g_autofree char *path = g_strdup_printf ("/proc/self/task/%d/children", getpid ());
  g_autofree char *children = NULL;
  g_auto(GStrv) pids = NULL;
  GArray *found = g_array_new (FALSE, FALSE, sizeof (GPid));

  if (!g_file_get_contents (path, &children, NULL, NULL))
    return found;
  pids = g_strsplit (g_strstrip (children), " ", -1);
  for (guint i = 0; pids[i] != NULL; i++)
    {
      g_autofree char *cmdline_path = g_strdup_printf ("/proc/%s/cmdline", pids[i]);
      g_autofree char *cmdline = NULL;
      gsize len;
      GPid pid = atoi (pids[i]);

      if (!g_file_get_contents (cmdline_path, &cmdline, &len, NULL))
        continue;
      for (gsize j = 0; j + 1 < len; j++)
        if (cmdline[j] == '\0')
          cmdline[j] = ' ';
      if (strstr (cmdline, word) != NULL)
        g_array_append_val (found, pid);
    }
  return found;
}

static GPid
find_bridge (void)
{
  g_autoptr(GArray) bridges = children_with ("--bridge");

  g_assert_cmpuint (bridges->len, ==, 1);
  return g_array_index (bridges, GPid, 0);
}

static void
test_slow_reader (void)
{
  g_autoptr(TerretLauncherLink) link = far_link ();
  g_autoptr(TerretLauncher) launcher = _terret_launcher_new_for (link);
  g_autoptr(TerretProcess) flood = NULL;
  g_autoptr(GByteArray) out = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(Outcome) outcome = { 0 };
  const char *flood_argv[] = { "head", "-c", "67108864", "/dev/zero", NULL };
  const char *echo_argv[] = { "echo", "meanwhile", NULL };
  int pipe_out[2];
  GPid bridge;

  g_test_summary ("A stream nobody reads holds up itself only: another process on the same "
                  "far side runs meanwhile, and the bridge's memory stays bounded while 64 MiB "
                  "wait to be read.");

  g_assert_true (g_unix_open_pipe (pipe_out, FD_CLOEXEC, NULL));
  terret_launcher_take_fd (launcher, pipe_out[1], 1);
  flood = terret_launcher_spawn (launcher, flood_argv, &error);
  g_assert_no_error (error);

  g_assert_true (run_far (link, echo_argv, NULL, NULL, NULL, &outcome, &error));
  g_assert_no_error (error);
  assert_bytes (outcome.out, "meanwhile\n", -1);

  bridge = find_bridge ();
  /* Its windows and buffers, not the flood: a few MiB at most. */
  g_assert_cmpuint (rss_kib (bridge), <, 32 * 1024);

  out = read_all (pipe_out[0]);
  g_assert_cmpuint (out->len, ==, 67108864);
  g_assert_true (terret_process_wait_exited (flood, -1));
  terret_process_terminate (flood);
}

/* A process as its pid and its start time: a pid alone may be another
 * process's by the time it is looked at again, on a busy host. */
typedef struct
{
  GPid pid;
  guint64 start;
} Identity;

static gboolean
read_identity (GPid     pid,
               char    *state,
               guint64 *start)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", pid);
  g_autofree char *stat = NULL;
  g_auto(GStrv) fields = NULL;
  const char *paren;

  if (!g_file_get_contents (path, &stat, NULL, NULL) || (paren = strrchr (stat, ')')) == NULL)
    return FALSE;
  /* After the name: state is field 3, starttime field 22. */
  fields = g_strsplit (paren + 2, " ", -1);
  if (g_strv_length (fields) < 20)
    return FALSE;
  *state = fields[0][0];
  *start = g_ascii_strtoull (fields[19], NULL, 10);
  return TRUE;
}

static Identity
identify (GPid pid)
{
  Identity identity = { pid, 0 };
  char state;

  g_assert_true (read_identity (pid, &state, &identity.start));
  return identity;
}

static gboolean
alive (const Identity *identity)
{
  guint64 start;
  char state;

  return read_identity (identity->pid, &state, &start) && start == identity->start && state != 'Z';
}

static void
assert_gone (const Identity *identity)
{
  for (guint i = 0; i < 3000 && alive (identity); i++)
    g_usleep (10000);
  g_assert_false (alive (identity));
}

/* Starts, through @link, a command that leaves a `setsid` job behind and
 * prints its pid (the far side's pid namespace is this one here). */
static TerretProcess *
spawn_escapee (TerretLauncherLink *link,
               Identity           *escapee)
{
  g_autoptr(TerretLauncher) launcher = _terret_launcher_new_for (link);
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) text = NULL;
  const char *argv[] = {
    "sh", "-c", "setsid sh -c 'trap \"\" HUP TERM; echo $$; exec sleep 300' </dev/null; sleep 300",
    NULL
  };
  TerretProcess *process;
  int pipe_out[2];

  g_assert_true (g_unix_open_pipe (pipe_out, FD_CLOEXEC, NULL));
  terret_launcher_take_fd (launcher, pipe_out[1], 1);
  process = terret_launcher_spawn (launcher, argv, &error);
  g_assert_no_error (error);
  text = read_until (pipe_out[0], "\n");
  close (pipe_out[0]);
  g_assert_cmpint (atoi (text->str), >, 0);
  *escapee = identify (atoi (text->str));
  return process;
}

static void
test_kill (void)
{
  g_autoptr(TerretLauncherLink) link = far_link ();
  g_autoptr(TerretProcess) process = NULL;
  Identity escapee;

  g_test_summary ("Killing a far process ends everything it started there, a setsid job that "
                  "ignores HUP and TERM included, before it is reported gone.");

  process = spawn_escapee (link, &escapee);
  terret_process_terminate (process);
  g_assert_true (_terret_process_is_gone (process));
  g_assert_false (alive (&escapee));
}

static void
test_bridge_killed (void)
{
  g_autoptr(TerretLauncherLink) link = far_link ();
  g_autoptr(TerretProcess) process = NULL;
  g_autoptr(GArray) serves = NULL;
  Identity escapee, serve;
  GPid bridge;

  g_test_summary ("When the bridge dies (SIGKILL), the far side sees its input end and ends "
                  "everything it started; the process is reported gone.");

  process = spawn_escapee (link, &escapee);
  bridge = find_bridge ();
  {
    g_autofree char *path = g_strdup_printf ("/proc/%d/task/%d/children", bridge, bridge);
    g_autofree char *children = NULL;

    g_assert_true (g_file_get_contents (path, &children, NULL, NULL));
    g_assert_cmpint (atoi (children), >, 0);
    serve = identify (atoi (children));
  }
  g_assert_cmpint (kill (bridge, SIGKILL), ==, 0);
  g_assert_true (terret_process_wait_exited (process, -1));
  assert_gone (&escapee);
  assert_gone (&serve);
}

static void
test_bye (void)
{
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *pid_file = g_build_filename (dir, "serve.pid", NULL);
  g_autofree char *pid_text = NULL;
  /* An engine that never passes the end of its input on: the far
   * launcher reads a fifo this shell keeps open for writing. */
  const char *script =
    "mkfifo \"$1/in\" && exec 4<>\"$1/in\" 3<&0 || exit 1; "
    "cat <&3 >&4 & "
    "\"$2\" --serve <&4 & echo $! >\"$1/serve.pid\"; "
    "wait $!";
  const char *argv[] = { "sh", "-c", script, "sh", dir, terret_far_side_get_launcher (), NULL };
  const char *true_argv[] = { "true", NULL };
  Identity serve;

  g_test_summary ("The far launcher leaves when the bridge says so, even where the engine "
                  "never passes the end of its input on.");

  {
    g_autoptr(TerretLauncherLink) link = far_link_for (argv, NULL, 0);
    g_auto(Outcome) outcome = { 0 };
    g_autoptr(GError) error = NULL;

    g_assert_true (run_far (link, true_argv, NULL, NULL, NULL, &outcome, &error));
    g_assert_no_error (error);
    g_assert_true (g_file_get_contents (pid_file, &pid_text, NULL, NULL));
    serve = identify (atoi (pid_text));
  }
  /* The link is gone: its bridge said goodbye, and waited. */
  assert_gone (&serve);
}

static void
test_unreachable (void)
{
  const char *stderr_argv[] = {
    "sh", "-c", "echo 'Error: no container with name or ID \"web\" found' >&2; exit 125", NULL
  };
  const char *stdout_argv[] = { "sh", "-c", "echo 'OCI runtime exec failed: not found'; exit 126",
                                NULL };
  const char *missing_argv[] = { "terret-no-such-engine", "exec", NULL };
  const char *hang_argv[] = { "sleep", "60", NULL };
  const char * const *argvs[] = { stderr_argv, stdout_argv, missing_argv, hang_argv };
  const char *words[] = { "no container with name or ID \"web\" found", "OCI runtime exec failed",
                          "terret-no-such-engine", "no answer in 1 s" };
  const char *true_argv[] = { "true", NULL };

  g_test_summary ("A far side that cannot be reached is UNAVAILABLE in the words of what "
                  "failed (on its stderr, or its stdout as docker says some), and one that "
                  "never answers is within its timeout.");

  for (guint i = 0; i < G_N_ELEMENTS (argvs); i++)
    {
      /* Only the silent one is held to a short timeout: the others answer
       * however loaded the host is. */
      g_autoptr(TerretLauncherLink) link = far_link_for (argvs[i], NULL, argvs[i] == hang_argv ? 1 : 0);
      g_auto(Outcome) outcome = { 0 };
      g_autoptr(GError) error = NULL;

      g_assert_false (run_far (link, true_argv, NULL, NULL, NULL, &outcome, &error));
      g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE);
      g_assert_nonnull (strstr (error->message, "Could not reach the test's far side: "));
      if (strstr (error->message, words[i]) == NULL)
        g_error ("“%s” does not say “%s”", error->message, words[i]);
    }
}

/* A far side whose launcher cannot be put in place: NO_LAUNCHER only
 * when its probe runs, never after a timeout, else UNAVAILABLE; the
 * words are the failed copy's either way. */
static void
test_probe (void)
{
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *target = g_build_filename (dir, "terret-launcher-copy", NULL);
  g_autofree char *marker = g_build_filename (dir, "probed", NULL);
  g_autofree char *probe_script = g_strdup_printf ("echo x >'%s'", marker);
  const char *argv[] = { target, "--serve", NULL };
  const char *hang_argv[] = { "sleep", "60", NULL };
  const char *install[] = { "sh", "-c", "echo 'read-only file system' >&2; exit 1", NULL };
  const char *probe_runs[] = { "sh", "-c", probe_script, NULL };
  const char *probe_fails[] = { "sh", "-c", "exit 125", NULL };
  const char *true_argv[] = { "true", NULL };
  const struct
  {
    const char * const *argv;
    const char * const *probe;
    double timeout;
    int code;
    const char *words;
  } cases[] = {
    { argv, probe_runs, 0, TERRET_EXEC_ERROR_NO_LAUNCHER, "read-only file system" },
    { argv, probe_fails, 0, TERRET_EXEC_ERROR_UNAVAILABLE, "read-only file system" },
    { argv, NULL, 0, TERRET_EXEC_ERROR_UNAVAILABLE, "read-only file system" },
    { hang_argv, probe_runs, 1, TERRET_EXEC_ERROR_UNAVAILABLE, "no answer in 1 s" },
  };

  g_test_summary ("A launcher that cannot be put in place is NO_LAUNCHER when the far side's "
                  "probe runs there, UNAVAILABLE when it does not or when there is none, and "
                  "never after a timeout, whose probe is not even run.");

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(TerretFarSide) far = terret_far_side_new ("the test's far side", cases[i].argv);
      g_autoptr(TerretLauncherLink) link = NULL;
      g_auto(Outcome) outcome = { 0 };
      g_autoptr(GError) error = NULL;

      g_remove (marker);
      terret_far_side_set_install (far, install);
      if (cases[i].probe != NULL)
        terret_far_side_set_probe (far, cases[i].probe);
      if (cases[i].timeout > 0)
        terret_far_side_set_timeout (far, cases[i].timeout);
      link = _terret_launcher_link_new_far (far);

      g_assert_false (run_far (link, true_argv, NULL, NULL, NULL, &outcome, &error));
      g_assert_error (error, TERRET_EXEC_ERROR, cases[i].code);
      if (strstr (error->message, cases[i].words) == NULL)
        g_error ("“%s” does not say “%s”", error->message, cases[i].words);
      /* The probe ran where it should, and only there. */
      g_assert_cmpint (g_file_test (marker, G_FILE_TEST_EXISTS), ==,
                       cases[i].probe == probe_runs && cases[i].timeout == 0);
    }
}

static void
test_install (void)
{
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *target = g_build_filename (dir, "terret-launcher-copy", NULL);
  g_autofree char *counter = g_build_filename (dir, "installs", NULL);
  g_autofree char *script = g_strdup_printf ("echo x >>'%s' && cp '%s' '%s'", counter,
                                             terret_far_side_get_launcher (), target);
  const char *argv[] = { target, "--serve", NULL };
  const char *install[] = { "sh", "-c", script, NULL };
  const char *true_argv[] = { "true", NULL };
  g_autofree char *installs = NULL;

  g_test_summary ("A far launcher that is not there is put in place with the install "
                  "command, once: a later connection finds it there.");

  for (guint i = 0; i < 2; i++)
    {
      g_autoptr(TerretLauncherLink) link = far_link_for (argv, install, 0);
      g_auto(Outcome) outcome = { 0 };
      g_autoptr(GError) error = NULL;

      g_assert_true (run_far (link, true_argv, NULL, NULL, NULL, &outcome, &error));
      g_assert_no_error (error);
    }
  g_assert_true (g_file_get_contents (counter, &installs, NULL, NULL));
  g_assert_cmpstr (installs, ==, "x\n");
}

static void
test_many (void)
{
  g_autoptr(TerretLauncherLink) link = far_link ();
  g_autoptr(GPtrArray) processes = g_ptr_array_new_with_free_func (g_object_unref);
  int fds[64];

  g_test_summary ("Many processes at once over one far side each get their own output.");

  for (guint i = 0; i < G_N_ELEMENTS (fds); i++)
    {
      g_autoptr(TerretLauncher) launcher = _terret_launcher_new_for (link);
      g_autoptr(GError) error = NULL;
      g_autofree char *word = g_strdup_printf ("process %u", i);
      const char *argv[] = { "echo", word, NULL };
      int pipe_out[2];

      g_assert_true (g_unix_open_pipe (pipe_out, FD_CLOEXEC, NULL));
      terret_launcher_take_fd (launcher, pipe_out[1], 1);
      g_ptr_array_add (processes, terret_launcher_spawn (launcher, argv, &error));
      g_assert_no_error (error);
      fds[i] = pipe_out[0];
    }
  for (guint i = 0; i < G_N_ELEMENTS (fds); i++)
    {
      g_autoptr(GByteArray) out = read_all (fds[i]);
      g_autofree char *expected = g_strdup_printf ("process %u\n", i);

      assert_bytes (out, expected, -1);
    }
}

int
main (int   argc,
      char *argv[])
{
  terret_test_init (&argc, &argv);

  g_test_add_func ("/far/output", test_output);
  g_test_add_func ("/far/environment", test_environment);
  g_test_add_func ("/far/failures", test_failures);
  g_test_add_func ("/far/input", test_input);
  g_test_add_func ("/far/command-descriptor", test_command_descriptor);
  g_test_add_func ("/far/terminal", test_terminal);
  g_test_add_func ("/far/terminal-modes", test_terminal_modes);
  g_test_add_func ("/far/slow-reader", test_slow_reader);
  g_test_add_func ("/far/many", test_many);
  g_test_add_func ("/far/kill", test_kill);
  g_test_add_func ("/far/bridge-killed", test_bridge_killed);
  g_test_add_func ("/far/bye", test_bye);
  g_test_add_func ("/far/unreachable", test_unreachable);
  g_test_add_func ("/far/install", test_install);
  g_test_add_func ("/far/probe", test_probe);

  return g_test_run ();
}
