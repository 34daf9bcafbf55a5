/* test-sandbox.c: the sandbox and environment policy, with real bwrap
 *
 * Every case runs on pty and on oneshot, through the backend, with the
 * command doing what a model's command would: writing where it may not,
 * connecting out, reading the environment and the process table. The
 * escape table (below) tries
 * every way out the sandbox is meant to close, each first unsandboxed, to
 * prove the attempt works, then sandboxed, where it must fail with the
 * host untouched.
 *
 * Where bwrap cannot make a sandbox (a chroot, a container without user
 * namespaces), the tests find that out by running bwrap themselves, skip
 * with its words, and still check that terret-exec refuses as
 * unavailable, with those words.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/prctl.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib/gstdio.h>

#include <json-glib/json-glib.h>

#include "terret-test-utils.h"

static TerretExecutor *new_executor (const char         *backend,
                                     const char * const *settings);

/* Why bwrap cannot make a sandbox here, in its own words, or NULL when
 * it can; found by running it, never by asking terret-exec. */
static const char *
bwrap_refusal (void)
{
  static char *reason;
  static gsize done;

  if (g_once_init_enter (&done))
    {
      g_autofree char *bwrap = g_find_program_in_path ("bwrap");
      g_autofree char *err = NULL;
      g_autoptr(GError) error = NULL;
      int status = 0;

      if (bwrap != NULL)
        {
          const char *argv[] = { bwrap, "--die-with-parent", "--new-session", "--unshare-pid",
                                 "--unshare-net", "--unshare-ipc", "--unshare-uts",
                                 "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                                 "--tmpfs", "/tmp", "true", NULL };

          if (!g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                             NULL, &err, &status, &error))
            reason = g_strdup (error->message);
          else if (!g_spawn_check_wait_status (status, NULL))
            reason = g_strdup (g_strstrip (err));
        }
      g_once_init_leave (&done, 1);
    }
  return reason;
}

/* Skips the test where there is no sandbox to test: without bwrap; or
 * where bwrap cannot make one, after checking that a sandboxed run on
 * @backend is refused as unavailable in bwrap's words. */
static gboolean
skip_without_sandbox (const char *backend)
{
  g_autofree char *bwrap = g_find_program_in_path ("bwrap");
  const char *refusal;

  if (bwrap == NULL)
    {
      g_test_skip ("bwrap is not installed (apt install bubblewrap)");
      return TRUE;
    }
  refusal = bwrap_refusal ();
  if (refusal == NULL)
    return FALSE;

  {
    const char *settings[] = { "sandbox=read-only", NULL };
    g_autoptr(TerretExecutor) executor = new_executor (backend, settings);
    g_autoptr(TerretRequest) request = terret_request_new ("echo never");
    g_autoptr(TerretResult) result = NULL;
    g_autoptr(GError) error = NULL;
    g_autofree char *skip = NULL;

    result = terret_executor_run (executor, request, NULL, &error);
    g_assert_null (result);
    g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE);
    if (strstr (error->message, refusal) == NULL)
      g_error ("the refusal “%s” does not carry bwrap's words “%s”", error->message, refusal);
    skip = g_strdup_printf ("bwrap cannot make a sandbox here: %s", refusal);
    g_test_skip (skip);
  }
  return TRUE;
}

#define SKIP_WITHOUT_SANDBOX(backend)        \
  G_STMT_START {                             \
    if (skip_without_sandbox (backend))      \
      return;                                \
  } G_STMT_END

static TerretExecutor *
new_executor (const char         *backend,
              const char * const *settings)
{
  g_autoptr(GError) error = NULL;
  TerretExecutor *executor = terret_executor_new_with_settings (backend, settings, &error);

  g_assert_no_error (error);
  return executor;
}

/* stdout and stderr of a run, as one text (pty merges them anyway). */
static char *
run_text (TerretExecutor *executor,
          const char     *command)
{
  g_autoptr(TerretResult) result = terret_test_run_in (executor, TERRET_DEFAULT_SESSION, command, 60);
  GBytes *out = terret_result_get_stdout (result);
  GBytes *err = terret_result_get_stderr (result);
  g_autoptr(GString) text = g_string_new_len (g_bytes_get_data (out, NULL), g_bytes_get_size (out));

  if (err != NULL)
    g_string_append_len (text, g_bytes_get_data (err, NULL), g_bytes_get_size (err));
  g_assert_false (terret_result_get_timed_out (result));
  return g_string_free (g_steal_pointer (&text), FALSE);
}

static void
assert_contains (const char *text,
                 const char *needle)
{
  if (strstr (text, needle) == NULL)
    g_error ("“%s” is not in “%s”", needle, text);
}

static char *
make_outside_dir (void)
{
  /* /var/tmp: on the host's filesystem wherever the tree is, and never
   * under the /tmp the sandbox makes its own. */
  g_autofree char *template = g_build_filename ("/var/tmp", "terret-sandbox-outside-XXXXXX", NULL);

  g_assert_nonnull (g_mkdtemp (template));
  return g_steal_pointer (&template);
}

static void
test_filesystem (gconstpointer data)
{
  g_autofree char *workspace = terret_test_make_tmpdir ();
  /* Not under /tmp, which is the sandbox's own. */
  g_autofree char *outside = make_outside_dir ();
  g_autofree char *ws_setting = g_strdup_printf ("workspace=%s", workspace);
  const char *settings[] = { "sandbox=workspace-write", ws_setting, NULL };
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *command = NULL;
  g_autofree char *text = NULL;
  g_autofree char *inside_file = g_build_filename (workspace, "made-inside", NULL);
  g_autofree char *outside_file = g_build_filename (outside, "made-outside", NULL);

  g_test_summary ("Under workspace-write the workspace is writable and the rest of the "
                  "filesystem is not: the command's own error says EROFS.");
  SKIP_WITHOUT_SANDBOX (data);

  executor = new_executor (data, settings);
  command = g_strdup_printf ("echo in > '%s' && echo wrote; echo out > '%s'; echo st=$?",
                             inside_file, outside_file);
  text = run_text (executor, command);
  assert_contains (text, "wrote\n");
  assert_contains (text, "Read-only file system");
  assert_contains (text, "st=1\n");
  g_assert_true (g_file_test (inside_file, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (outside_file, G_FILE_TEST_EXISTS));
  g_rmdir (outside);
}

static void
test_read_only (gconstpointer data)
{
  g_autofree char *workspace = terret_test_make_tmpdir ();
  g_autofree char *cwd = g_strdup_printf ("cwd=%s", workspace);
  const char *settings[] = { "sandbox=read-only", cwd, NULL };
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *text = NULL;

  g_test_summary ("Under read-only not even the cwd is writable; /tmp is, and is private.");
  SKIP_WITHOUT_SANDBOX (data);

  executor = new_executor (data, settings);
  text = run_text (executor, "touch here; echo st=$?; echo t > /tmp/terret-private && cat /tmp/terret-private");
  assert_contains (text, "Read-only file system");
  assert_contains (text, "st=1\n");
  assert_contains (text, "t\n");
  g_assert_false (g_file_test ("/tmp/terret-private", G_FILE_TEST_EXISTS));
}

static void
test_private_tmp (gconstpointer data)
{
  const char *settings[] = { "sandbox=read-only", NULL };
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *host_file = NULL;
  g_autofree char *command = NULL;
  g_autofree char *text = NULL;
  int fd;

  g_test_summary ("The host's /tmp is not the sandbox's.");
  SKIP_WITHOUT_SANDBOX (data);

  host_file = g_strdup ("/tmp/terret-host-XXXXXX");
  fd = g_mkstemp (host_file);
  g_assert_cmpint (fd, >=, 0);
  close (fd);
  executor = new_executor (data, settings);
  command = g_strdup_printf ("[ -e '%s' ] && echo visible || echo invisible", host_file);
  text = run_text (executor, command);
  g_unlink (host_file);
  g_assert_cmpstr (text, ==, "invisible\n");
}

static void
listener_open (GSocketListener **listener,
               guint16          *port)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GInetAddress) loopback = g_inet_address_new_loopback (G_SOCKET_FAMILY_IPV4);
  g_autoptr(GSocketAddress) address = g_inet_socket_address_new (loopback, 0);
  g_autoptr(GSocketAddress) bound = NULL;

  *listener = g_socket_listener_new ();
  g_assert_true (g_socket_listener_add_address (*listener, address, G_SOCKET_TYPE_STREAM,
                                                G_SOCKET_PROTOCOL_TCP, NULL, &bound, &error));
  g_assert_no_error (error);
  *port = g_inet_socket_address_get_port (G_INET_SOCKET_ADDRESS (bound));
}

static void
test_network (gconstpointer data)
{
  g_autoptr(GSocketListener) listener = NULL;
  guint16 port;
  g_autofree char *command = NULL;

  g_test_summary ("A connect to a loopback listener of the host fails under the sandbox's "
                  "default network=off and succeeds under network=on.");
  SKIP_WITHOUT_SANDBOX (data);

  listener_open (&listener, &port);
  command = g_strdup_printf ("(exec 3<>/dev/tcp/127.0.0.1/%u) 2>/dev/null && echo connected || "
                             "echo refused", port);
  {
    const char *off[] = { "sandbox=read-only", NULL };
    g_autoptr(TerretExecutor) executor = new_executor (data, off);
    g_autofree char *text = run_text (executor, command);

    g_assert_cmpstr (text, ==, "refused\n");
  }
  {
    const char *on[] = { "sandbox=read-only", "network=on", NULL };
    g_autoptr(TerretExecutor) executor = new_executor (data, on);
    g_autofree char *text = run_text (executor, command);

    g_assert_cmpstr (text, ==, "connected\n");
  }
  {
    /* The network alone cut, without a filesystem sandbox. */
    const char *net_only[] = { "network=off", NULL };
    g_autoptr(TerretExecutor) executor = new_executor (data, net_only);
    g_autofree char *text = run_text (executor, command);

    g_assert_cmpstr (text, ==, "refused\n");
  }
}

static void
test_environment (gconstpointer data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *text = NULL;
  const char *command = "echo \"${TERRET_TEST_API_KEY-absent} ${TERRET_TEST_PLAIN-absent} "
                        "${GIVEN_TOKEN-absent} ${HOME:+home}\"";

  g_test_summary ("Under a sandbox secret-looking variables are dropped, env entries still "
                  "given; env-policy core keeps only the core variables.");
  SKIP_WITHOUT_SANDBOX (data);

  g_setenv ("TERRET_TEST_API_KEY", "secret", TRUE);
  g_setenv ("TERRET_TEST_PLAIN", "plain", TRUE);
  {
    const char *settings[] = { "sandbox=read-only", "env=GIVEN_TOKEN=given", NULL };

    executor = new_executor (data, settings);
    text = run_text (executor, command);
    g_assert_cmpstr (text, ==, "absent plain given home\n");
    g_clear_object (&executor);
    g_clear_pointer (&text, g_free);
  }
  {
    const char *settings[] = { "env-policy=core", NULL };

    executor = new_executor (data, settings);
    text = run_text (executor, command);
    g_assert_cmpstr (text, ==, "absent absent absent home\n");
  }
  g_unsetenv ("TERRET_TEST_API_KEY");
  g_unsetenv ("TERRET_TEST_PLAIN");
}

static void
test_processes_and_hidden (gconstpointer data)
{
  const char *settings[] = { "sandbox=read-only", NULL };
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *ssh_dir = g_build_filename (g_get_home_dir (), ".ssh", NULL);
  g_autofree char *key = g_build_filename (ssh_dir, "id_test", NULL);
  g_autofree char *command = NULL;
  g_autofree char *text = NULL;

  g_test_summary ("Inside, the process table is the sandbox's alone, and ~/.ssh is empty.");
  SKIP_WITHOUT_SANDBOX (data);

  g_assert_cmpint (g_mkdir_with_parents (ssh_dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (key, "private", -1, NULL));
  executor = new_executor (data, settings);
  command = g_strdup_printf ("[ -e /proc/%d ] && echo host-visible; n=$(ls /proc | grep -c '^[0-9]'); "
                             "[ \"$n\" -lt 12 ] && echo few; ls -A '%s' | wc -l",
                             (int)getpid (), ssh_dir);
  text = run_text (executor, command);
  g_assert_cmpstr (text, ==, "few\n0\n");
}

static void
test_session_persists (void)
{
  const char *settings[] = { "sandbox=read-only", NULL };
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autofree char *status_path = NULL;
  g_autofree char *status = NULL;
  GPid pid;

  g_test_summary ("A sandboxed pty session keeps cd and export from run to run, inside the "
                  "same sandbox, and its pid is the host's.");
  SKIP_WITHOUT_SANDBOX ("pty");

  executor = new_executor ("pty", settings);
  first = run_text (executor, "cd /usr; export TERRET_KEPT=yes; echo $$");
  second = run_text (executor, "echo \"$PWD $TERRET_KEPT $$\"");
  g_assert_true (g_str_has_prefix (second, "/usr yes "));
  g_assert_true (g_str_has_suffix (second, first));

  /* The session's pid is the host's view of the shell, whose pid inside
   * is the namespace's. */
  pid = terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION);
  g_assert_cmpint (pid, >, 0);
  status_path = g_strdup_printf ("/proc/%d/status", pid);
  g_assert_true (g_file_get_contents (status_path, &status, NULL, NULL));
  {
    g_autofree char *nspid = g_strdup_printf ("NSpid:\t%d\t", pid);

    assert_contains (status, nspid);
  }
}

static void
test_missing_bwrap (gconstpointer data)
{
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *bash_link = g_build_filename (dir, "bash", NULL);
  g_autofree char *bash = g_find_program_in_path ("bash");
  g_autofree char *old_path = g_strdup (g_getenv ("PATH"));
  const char *settings[] = { "sandbox=read-only", NULL };
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = terret_request_new ("echo never");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  g_test_summary ("Without bwrap on PATH a sandboxed run fails unavailable, naming "
                  "bubblewrap, and runs nothing.");

  g_assert_nonnull (bash);
  g_assert_cmpint (symlink (bash, bash_link), ==, 0);
  executor = new_executor (data, settings);
  g_setenv ("PATH", dir, TRUE);
  result = terret_executor_run (executor, request, NULL, &error);
  g_setenv ("PATH", old_path, TRUE);
  g_assert_null (result);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE);
  assert_contains (error->message, "bubblewrap");
}

static void
test_check_cli (void)
{
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *bash_link = g_build_filename (dir, "bash", NULL);
  g_autofree char *bash = g_find_program_in_path ("bash");
  g_autofree char *path = g_strdup_printf ("PATH=%s", dir);
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  int status;

  g_test_summary ("terret-exec --check says what holds and exits non-zero when the policy "
                  "cannot: a sandbox without bwrap.");
  SKIP_WITHOUT_SANDBOX ("oneshot");

  {
    const char *argv[] = { terret_test_cli_path (), "--check", "--backend", "oneshot",
                           "--set", "sandbox=workspace-write", NULL };

    g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                                 NULL, &status, &error));
    g_assert_no_error (error);
    g_assert_true (g_spawn_check_wait_status (status, NULL));
    assert_contains (out, "Sandbox (bubblewrap)");
    assert_contains (out, "probe: a command ran");
    g_clear_pointer (&out, g_free);
  }

  g_assert_cmpint (symlink (bash, bash_link), ==, 0);
  {
    const char *argv[] = { terret_test_cli_path (), "--check", "--backend", "oneshot",
                           "--set", "sandbox=read-only", NULL };
    g_auto(GStrv) envp = g_environ_setenv (g_get_environ (), "PATH", dir, TRUE);

    g_assert_true (g_spawn_sync (NULL, (char **)argv, envp, G_SPAWN_DEFAULT, NULL, NULL, &out,
                                 NULL, &status, &error));
    g_assert_no_error (error);
    g_assert_false (g_spawn_check_wait_status (status, NULL));
    assert_contains (out, "NOT INSTALLED");
    assert_contains (out, "probe: FAILED");
    assert_contains (out, "bubblewrap");
  }
  (void)path;
}

/* --- The escape table ---------------------------------------------------- */

/* A unix socket listener of the host's, answering every connection with
 * its secret, on a thread of its own (the runs block the test's). */
typedef struct
{
  int fd;
  char *path;                   /* (nullable) a path socket, removed at the end */
  GThread *thread;
  gint accepted;
  char *secret;
} Listener;

static gpointer
listener_thread (gpointer data)
{
  Listener *listener = data;
  struct pollfd pending = { listener->fd, POLLIN, 0 };
  int fd;

  /* A connection is counted while it still waits in the backlog, before
   * accept() takes it out: listener_reached() then sees it pending or
   * counted, never neither, however late this thread is scheduled. */
  for (;;)
    {
      if (poll (&pending, 1, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          break;
        }
      if ((pending.revents & POLLIN) == 0)
        break;
      g_atomic_int_inc (&listener->accepted);
      fd = accept4 (listener->fd, NULL, NULL, SOCK_CLOEXEC);
      if (fd < 0)
        break;
      if (write (fd, listener->secret, strlen (listener->secret)) < 0)
        g_printerr ("listener: %s\n", g_strerror (errno));
      close (fd);
    }
  return NULL;
}

/* On @name: a path, or with @abstract an abstract name. */
static Listener *
listener_new (const char *name,
              gboolean    abstract,
              const char *secret)
{
  Listener *listener = g_new0 (Listener, 1);
  struct sockaddr_un address = { AF_UNIX, { 0 } };
  socklen_t len = offsetof (struct sockaddr_un, sun_path) + strlen (name) + 1;

  g_assert_cmpuint (strlen (name), <, sizeof address.sun_path - 1);
  memcpy (address.sun_path + (abstract ? 1 : 0), name, strlen (name));
  listener->fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  g_assert_cmpint (listener->fd, >=, 0);
  g_assert_cmpint (bind (listener->fd, (struct sockaddr *)&address, len), ==, 0);
  g_assert_cmpint (listen (listener->fd, 16), ==, 0);
  listener->path = abstract ? NULL : g_strdup (name);
  listener->secret = g_strdup (secret);
  listener->thread = g_thread_new ("listener", listener_thread, listener);
  return listener;
}

static void
listener_free (Listener *listener)
{
  /* Wakes the accept() with an error. */
  shutdown (listener->fd, SHUT_RDWR);
  g_thread_join (listener->thread);
  close (listener->fd);
  if (listener->path != NULL)
    g_unlink (listener->path);
  g_free (listener->path);
  g_free (listener->secret);
  g_free (listener);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Listener, listener_free)

/* A directory for host sockets where services put theirs, /run, when the
 * test may write there; else one it may. */
static char *
make_socket_dir (void)
{
  const char *bases[] = { "/run", g_get_user_runtime_dir (), "/var/tmp" };

  for (guint i = 0; i < G_N_ELEMENTS (bases); i++)
    {
      g_autofree char *template = g_build_filename (bases[i], "terret-sock-XXXXXX", NULL);

      if (access (bases[i], W_OK) == 0 && g_mkdtemp (template) != NULL)
        return g_steal_pointer (&template);
    }
  g_assert_not_reached ();
}

/* What one attempt aims at, made afresh for each run, so the unsandboxed
 * proof leaves nothing the sandboxed attempt could lean on. */
typedef struct
{
  char *secret;
  char *workspace;              /* in /var/tmp, the filesystem outside is on */
  char *outside;                /* outside the workspace */
  char *outside_file;           /* holds "host\n" */
  char *probe;                  /* the probe, copied into the workspace */
  char *socket_dir;
  Listener *path_listener;
  Listener *abstract_listener;
  char *abstract_name;
  GPid target;                  /* a process of the host's, its cwd outside: cat, which
                                 * echoes what it is sent for as long as it lives */
  int target_in;
  int target_out;
  long key;                     /* in the test's user keyring, or -1 */
  char *key_description;
  char *mqueue;                 /* a POSIX message queue holding the secret */
  int shm_id;                   /* a System V segment holding the secret */
  int shm_key;
  char *dev_shm;                /* a file in /dev/shm holding the secret */
  char *socket_list;            /* the host's listening path sockets, in the workspace */
} Targets;

static void
write_socket_list (Targets *t)
{
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  g_autoptr(GString) list = g_string_new (NULL);

  g_assert_true (g_file_get_contents ("/proc/net/unix", &contents, NULL, NULL));
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 1; lines[i] != NULL; i++)
    {
      g_auto(GStrv) words = g_regex_split_simple ("\\s+", g_strstrip (lines[i]), 0, 0);

      /* Num RefCount Protocol Flags Type St Inode Path: listening (flag
       * 0x10000) on a path. */
      if (g_strv_length (words) >= 8 && words[7][0] == '/' &&
          (g_ascii_strtoull (words[3], NULL, 16) & 0x10000) != 0)
        g_string_append_printf (list, "%s\n", words[7]);
    }
  t->socket_list = g_build_filename (t->workspace, "host-sockets", NULL);
  g_assert_true (g_file_set_contents (t->socket_list, list->str, -1, NULL));
}

/* A target process must not outlive a test that failed midway. */
static void
die_with_test (gpointer data)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

static Targets *
targets_new (void)
{
  Targets *t = g_new0 (Targets, 1);
  g_autofree char *probe_bytes = NULL;
  gsize probe_len;
  g_autofree char *socket_path = NULL;
  struct mq_attr attr = { 0, 1, 64, 0, { 0 } };
  mqd_t queue;
  char *segment;
  const char *cat_argv[] = { "cat", NULL };

  t->secret = g_strdup_printf ("secret-%u", g_random_int ());
  t->workspace = make_outside_dir ();
  t->outside = make_outside_dir ();
  t->outside_file = g_build_filename (t->outside, "file", NULL);
  g_assert_true (g_file_set_contents (t->outside_file, "host\n", -1, NULL));

  /* The probe where the sandbox can run it whatever the build tree's
   * place (a build under /tmp would be hidden by the private /tmp). */
  t->probe = g_build_filename (t->workspace, "terret-escape-probe", NULL);
  g_assert_true (g_file_get_contents (g_getenv ("TERRET_ESCAPE_PROBE"), &probe_bytes,
                                      &probe_len, NULL));
  g_assert_true (g_file_set_contents (t->probe, probe_bytes, probe_len, NULL));
  g_assert_cmpint (g_chmod (t->probe, 0755), ==, 0);

  t->socket_dir = make_socket_dir ();
  socket_path = g_build_filename (t->socket_dir, "service.sock", NULL);
  t->path_listener = listener_new (socket_path, FALSE, t->secret);
  t->abstract_name = g_strdup_printf ("terret-test-%d-%u", (int)getpid (), g_random_int ());
  t->abstract_listener = listener_new (t->abstract_name, TRUE, t->secret);

  g_assert_true (g_spawn_async_with_pipes (t->outside, (char **)cat_argv, NULL,
                                           G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD |
                                           G_SPAWN_STDERR_TO_DEV_NULL,
                                           die_with_test, NULL, &t->target, &t->target_in,
                                           &t->target_out, NULL, NULL));

  t->key_description = g_strdup_printf ("terret-test-%d", (int)getpid ());
  t->key = syscall (SYS_add_key, "user", t->key_description, t->secret, strlen (t->secret),
                    -4 /* KEY_SPEC_USER_KEYRING */);

  t->mqueue = g_strdup_printf ("/terret-test-%d", (int)getpid ());
  mq_unlink (t->mqueue);
  queue = mq_open (t->mqueue, O_CREAT | O_EXCL | O_WRONLY, 0600, &attr);
  g_assert_cmpint (queue, !=, (mqd_t)-1);
  g_assert_cmpint (mq_send (queue, t->secret, strlen (t->secret), 0), ==, 0);
  mq_close (queue);

  t->shm_key = 0x7e000000 | (getpid () & 0xffffff);
  t->shm_id = shmget (t->shm_key, 4096, IPC_CREAT | IPC_EXCL | 0600);
  g_assert_cmpint (t->shm_id, >=, 0);
  segment = shmat (t->shm_id, NULL, 0);
  g_assert_true (segment != (void *)-1);
  strcpy (segment, t->secret);
  shmdt (segment);

  t->dev_shm = g_strdup_printf ("/dev/shm/terret-test-%d", (int)getpid ());
  g_assert_true (g_file_set_contents (t->dev_shm, t->secret, -1, NULL));

  write_socket_list (t);
  return t;
}

static void
targets_free (Targets *t)
{
  g_autofree char *command = g_strdup_printf ("rm -rf '%s' '%s' '%s'", t->workspace, t->outside,
                                               t->socket_dir);
  int status;

  if (t->target > 0)
    {
      kill (t->target, SIGKILL);
      waitpid (t->target, &status, 0);
    }
  close (t->target_in);
  close (t->target_out);
  if (t->key >= 0)
    syscall (SYS_keyctl, 21 /* KEYCTL_INVALIDATE */, t->key);
  mq_unlink (t->mqueue);
  shmctl (t->shm_id, IPC_RMID, NULL);
  g_unlink (t->dev_shm);
  listener_free (t->path_listener);
  listener_free (t->abstract_listener);
  g_assert_cmpint (system (command), ==, 0);
  g_free (t->secret);
  g_free (t->workspace);
  g_free (t->outside);
  g_free (t->outside_file);
  g_free (t->probe);
  g_free (t->socket_dir);
  g_free (t->abstract_name);
  g_free (t->key_description);
  g_free (t->mqueue);
  g_free (t->dev_shm);
  g_free (t->socket_list);
  g_free (t);
}

G_DEFINE_AUTOPTR_CLEANUP_FUNC (Targets, targets_free)

/* @template with @VARIABLE@s replaced by what they name in @t. */
static char *
expand (const char *template,
        Targets    *t)
{
  g_autofree char *pid = g_strdup_printf ("%d", (int)t->target);
  g_autofree char *test_pid = g_strdup_printf ("%d", (int)getpid ());
  g_autofree char *shm_key = g_strdup_printf ("%d", t->shm_key);
  g_autofree char *outside_name = g_path_get_basename (t->outside_file);
  const char *variables[][2] = {
    { "@PROBE@", t->probe }, { "@WORKSPACE@", t->workspace }, { "@OUTSIDE@", t->outside },
    { "@OUTSIDE_FILE@", t->outside_file }, { "@OUTSIDE_NAME@", outside_name },
    { "@SOCKET@", t->path_listener->path }, { "@ABSTRACT@", t->abstract_name },
    { "@PID@", pid }, { "@TEST_PID@", test_pid }, { "@KEY@", t->key_description },
    { "@MQUEUE@", t->mqueue }, { "@SHM_KEY@", shm_key }, { "@DEV_SHM@", t->dev_shm },
    { "@SOCKET_LIST@", t->socket_list }, { "@SECRET@", t->secret },
    { "@HOME@", g_get_home_dir () }, { "@ENV_SECRET@", g_getenv ("TERRET_TEST_SECRET") },
  };
  g_autoptr(GString) text = g_string_new (template);

  for (guint i = 0; i < G_N_ELEMENTS (variables); i++)
    g_string_replace (text, variables[i][0], variables[i][1], 0);
  return g_string_free (g_steal_pointer (&text), FALSE);
}

/* Whether the host shows the attempt's mark. */
static gboolean
file_changed (Targets *t)
{
  g_autofree char *contents = NULL;
  g_autoptr(GDir) dir = g_dir_open (t->outside, 0, NULL);
  guint n = 0;

  while (g_dir_read_name (dir) != NULL)
    n++;
  return n != 1 || !g_file_get_contents (t->outside_file, &contents, NULL, NULL) ||
         !g_str_equal (contents, "host\n");
}

/* Whether the target was killed: alive, it echoes the byte it is sent.
 * A SIGKILL the probe sent is pending by the time the probe answered, and
 * a process with SIGKILL pending never runs again, so the echo decides
 * without a clock: a byte back, alive; end of file, killed. */
static gboolean
target_killed (Targets *t)
{
  char byte = 'x';
  int status;

  if (t->target == 0)
    return TRUE;
  if (write (t->target_in, &byte, 1) == 1 && read (t->target_out, &byte, 1) == 1)
    return FALSE;
  /* Reaped here: nothing for targets_free() to kill or wait for. */
  g_assert_cmpint (waitpid (t->target, &status, 0), ==, t->target);
  g_assert_true (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);
  t->target = 0;
  return TRUE;
}

/* A connection still in @listener's backlog, not yet accepted. */
static gboolean
listener_pending (Listener *listener)
{
  struct pollfd pending = { listener->fd, POLLIN, 0 };

  return poll (&pending, 1, 0) > 0 && (pending.revents & POLLIN) != 0;
}

/* Pending first, then counted: a connection the thread took in between
 * was counted before it was taken. */
static gboolean
listener_reached (Targets *t)
{
  gboolean pending = listener_pending (t->path_listener) ||
                     listener_pending (t->abstract_listener);

  return pending ||
         g_atomic_int_get (&t->path_listener->accepted) > 0 ||
         g_atomic_int_get (&t->abstract_listener->accepted) > 0;
}

typedef struct
{
  const char *name;
  const char *summary;
  const char *command;
  /* The host's side of an escape, checked besides the command's word. */
  gboolean (*host_touched) (Targets *t);
  /* The host itself may refuse the attempt (a kernel without the
   * feature, a sysctl, no privilege): then there is nothing to prove and
   * the case skips, with the probe's words. */
  gboolean host_may_refuse;
  /* Needs root to set up (a setuid file of another user's). */
  gboolean needs_root;
} EscapeCase;

static const EscapeCase escape_cases[] = {
  { "unix-socket", "A host service's unix socket, by path (under /run where the test may write)",
    "@PROBE@ connect @SOCKET@", listener_reached, FALSE, FALSE },
  { "unix-socket-abstract", "A host service's abstract unix socket",
    "@PROBE@ connect-abstract @ABSTRACT@", listener_reached, FALSE, FALSE },
  { "unix-socket-io-uring", "A host unix socket through a socket io_uring made (IORING_OP_SOCKET), "
    "which no filter on socket() sees", "@PROBE@ io-uring-connect @SOCKET@", listener_reached,
    TRUE, FALSE },
#if defined(__x86_64__)
  { "unix-socket-i386", "socket(AF_UNIX) through the i386 entry, socketcall and direct",
    "@PROBE@ socket-i386", NULL, TRUE, FALSE },
#endif
  { "vsock", "A vsock socket, to the hypervisor, in no namespace", "@PROBE@ vsock", NULL, TRUE,
    FALSE },
  { "host-sockets", "Every path socket a host service listens on (/proc/net/unix), and the test's",
    "echo @SOCKET@ >> @SOCKET_LIST@; @PROBE@ connect-all @SOCKET_LIST@", listener_reached, FALSE,
    FALSE },
  { "symlink", "Writing through a symlink out of the workspace",
    "ln -s @OUTSIDE_FILE@ link && echo changed > link && echo escaped: wrote", file_changed, FALSE,
    FALSE },
  { "hardlink", "A hard link out of the workspace, written through",
    "ln @OUTSIDE_FILE@ hard && echo changed > hard && echo escaped: wrote", file_changed, FALSE,
    FALSE },
  { "proc-self-root", "Writing through /proc/self/root",
    "echo changed > /proc/self/root@OUTSIDE_FILE@ && echo escaped: wrote", file_changed, FALSE,
    FALSE },
  { "proc-host-root", "Writing through the test process's /proc/PID/root",
    "echo changed > /proc/@TEST_PID@/root@OUTSIDE_FILE@ && echo escaped: wrote", file_changed,
    FALSE, FALSE },
  { "proc-cwd", "Writing through a host process's /proc/PID/cwd",
    "echo changed > /proc/@PID@/cwd/@OUTSIDE_NAME@ && echo escaped: wrote", file_changed, FALSE,
    FALSE },
  { "kill", "SIGKILL to a host process", "@PROBE@ kill @PID@", target_killed, FALSE, FALSE },
  { "ptrace", "ptrace-attaching a host process", "@PROBE@ ptrace @PID@", NULL, TRUE, FALSE },
  { "tiocsti", "Pushing input into a terminal (TIOCSTI)", "@PROBE@ tiocsti", NULL, TRUE, FALSE },
  { "mount", "Mounting over a directory the test made", "mkdir -p mnt && @PROBE@ mount "
    "@WORKSPACE@/mnt", NULL, TRUE, FALSE },
  { "unshare", "A user namespace, where every capability comes back", "@PROBE@ unshare", NULL,
    TRUE, FALSE },
  { "clone-newuser", "A user namespace through clone()", "@PROBE@ clone-newuser", NULL, TRUE,
    FALSE },
  { "setns", "Entering the test process's network namespace",
    "@PROBE@ setns /proc/@TEST_PID@/ns/net", NULL, TRUE, FALSE },
  { "keyring", "Reading a key the test put in its user keyring", "@PROBE@ keyring @KEY@", NULL,
    TRUE, FALSE },
  { "bpf", "A BPF map in the kernel", "@PROBE@ bpf", NULL, TRUE, FALSE },
  { "perf", "A perf event", "@PROBE@ perf", NULL, TRUE, FALSE },
  { "setuid", "A setuid program of another user's", "cp @PROBE@ suid && chown 65534 suid && "
    "chmod 4755 suid; ./suid euid", NULL, FALSE, TRUE },
  { "dev-shm", "The host's /dev/shm", "cat @DEV_SHM@ && echo && echo escaped: read it", NULL,
    FALSE, FALSE },
  { "mqueue", "A POSIX message queue of the host's", "@PROBE@ mqueue @MQUEUE@", NULL, FALSE,
    FALSE },
  { "sysv-shm", "A System V shared memory segment of the host's", "@PROBE@ sysv-shm @SHM_KEY@",
    NULL, FALSE, FALSE },
  { "host-environ", "The host's environment through /proc: the test's, and the launcher's, "
    "which inherited it", "l=$(cut -d' ' -f4 /proc/$PPID/stat); cat /proc/$l/environ "
    "/proc/@TEST_PID@/environ 2>&1 | tr '\\0' '\\n' | grep -q =@ENV_SECRET@ && "
    "echo escaped: read it",
    NULL, FALSE, FALSE },
  { "launcher-fds", "The launcher's descriptors (the library's socket; once, the host's stdin) "
    "through /proc/PID/fd", "l=$(cut -d' ' -f4 /proc/$PPID/stat); readlink /proc/$l/fd/3 && "
    "exec 9< /proc/$l/fd/0 && echo escaped: opened its stdin", NULL, TRUE, FALSE },
  { "credentials", "A cloud credential store in HOME", "cat @HOME@/.aws/credentials", NULL, FALSE,
    FALSE },
};

typedef struct
{
  const char *backend;
  const EscapeCase *escape;
} EscapeTest;

/* Runs @escape against fresh targets, sandboxed or not; returns its
 * output and whether the host shows it. */
static char *
attempt (const EscapeTest *test,
         gboolean          sandboxed,
         gboolean         *touched)
{
  g_autoptr(Targets) t = targets_new ();
  g_autofree char *command = expand (test->escape->command, t);
  g_autofree char *workspace = g_strdup_printf ("workspace=%s", t->workspace);
  g_autofree char *cwd = g_strdup_printf ("cwd=%s", t->workspace);
  const char *settings[] = { sandboxed ? "sandbox=workspace-write" : "sandbox=none", workspace,
                             cwd, NULL };
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *aws = g_build_filename (g_get_home_dir (), ".aws", NULL);
  g_autofree char *credentials = g_build_filename (aws, "credentials", NULL);
  char *text;

  g_assert_cmpint (g_mkdir_with_parents (aws, 0700), ==, 0);
  g_assert_true (g_file_set_contents (credentials, t->secret, -1, NULL));
  executor = new_executor (test->backend, settings);
  text = run_text (executor, command);
  terret_executor_close_all (executor);

  *touched = strstr (text, t->secret) != NULL ||
             (test->escape->host_touched != NULL && test->escape->host_touched (t));
  return text;
}

static void
test_escape (gconstpointer data)
{
  const EscapeTest *test = data;
  g_autofree char *unsandboxed = NULL;
  g_autofree char *sandboxed = NULL;
  gboolean touched = FALSE;

  g_test_summary (test->escape->summary);
  SKIP_WITHOUT_SANDBOX (test->backend);
  if (test->escape->needs_root && geteuid () != 0)
    {
      g_test_skip ("needs root, to make a file of another user's");
      return;
    }

  /* The attempt works where nothing holds it. */
  unsandboxed = attempt (test, FALSE, &touched);
  if (strstr (unsandboxed, "escaped") == NULL && test->escape->host_may_refuse)
    {
      g_autofree char *skip = g_strdup_printf ("the host itself refuses this attempt, so there "
                                               "is nothing to prove: %s", g_strstrip (unsandboxed));

      g_test_skip (skip);
      return;
    }
  if (strstr (unsandboxed, "escaped") == NULL && !touched)
    {
      g_test_fail_printf ("the probe does not work unsandboxed, so proves nothing: %s",
                          unsandboxed);
      return;
    }
  if (test->escape->host_touched != NULL && !touched)
    {
      g_test_fail_printf ("the probe said it escaped, and the host shows nothing: %s", unsandboxed);
      return;
    }

  /* And fails in the sandbox, with the host untouched. */
  sandboxed = attempt (test, TRUE, &touched);
  if (strstr (sandboxed, "escaped") != NULL || touched)
    g_test_fail_printf ("escaped the sandbox: %s", sandboxed);
}

/* Every case on both backends. */
static void
add_escape_tests (void)
{
  const char *backends[] = { "pty", "oneshot" };
  static EscapeTest tests[2 * G_N_ELEMENTS (escape_cases)];
  guint n = 0;

  for (guint b = 0; b < G_N_ELEMENTS (backends); b++)
    for (guint i = 0; i < G_N_ELEMENTS (escape_cases); i++)
      {
        g_autofree char *path = g_strdup_printf ("/sandbox/%s/escape/%s", backends[b],
                                                 escape_cases[i].name);

        tests[n].backend = backends[b];
        tests[n].escape = &escape_cases[i];
        g_test_add_data_func (path, &tests[n++], test_escape);
      }
}

/* --- Credential stores, unix sockets, sessions, leftovers, refusals ---- */

static char *
write_home_file (const char *relative,
                 const char *contents)
{
  g_autofree char *path = g_build_filename (g_get_home_dir (), relative, NULL);
  g_autofree char *dir = g_path_get_dirname (path);

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  g_assert_true (g_file_set_contents (path, contents, -1, NULL));
  return g_steal_pointer (&path);
}

static void
test_credential_stores (gconstpointer data)
{
  const char *stores[] = {
    ".aws/credentials", ".azure/accessTokens.json", ".config/gcloud/credentials.db",
    ".kube/config", ".docker/config.json", ".netrc", ".git-credentials", ".npmrc", ".pypirc",
    ".cargo/credentials.toml", ".config/gh/hosts.yml", ".ssh/id_ed25519", ".gnupg/secring.gpg",
  };
  g_autofree char *extra = write_home_file ("project/.env", "extra-secret\n");
  g_autofree char *hidden = g_strdup_printf ("hidden=%s", extra);
  g_autoptr(GString) command = g_string_new (NULL);
  g_autoptr(GString) visible = g_string_new (NULL);
  g_autoptr(GString) expected = g_string_new (NULL);

  g_test_summary ("Under a sandbox the credential stores in HOME are hidden by default; hidden "
                  "adds to the defaults; unhide leaves one default visible, and must name one.");
  SKIP_WITHOUT_SANDBOX (data);

  for (guint i = 0; i < G_N_ELEMENTS (stores); i++)
    {
      g_autofree char *path = write_home_file (stores[i], "stored-secret\n");

      g_string_append_printf (command, "echo \"%s:$(cat '%s' 2>/dev/null)\"; ", stores[i], path);
      g_string_append_printf (visible, "%s:stored-secret\n", stores[i]);
      /* ~/.netrc is unhidden below. */
      g_string_append_printf (expected, "%s:%s\n", stores[i],
                              g_str_equal (stores[i], ".netrc") ? "stored-secret" : "");
    }
  g_string_append_printf (command, "echo \"extra:$(cat '%s')\"", extra);
  g_string_append (visible, "extra:extra-secret\n");
  g_string_append (expected, "extra:\n");

  {
    /* The files are there to read without a sandbox. */
    g_autoptr(TerretExecutor) executor = new_executor (data, NULL);
    g_autofree char *text = run_text (executor, command->str);

    g_assert_cmpstr (text, ==, visible->str);
  }
  {
    const char *settings[] = { "sandbox=read-only", hidden, "unhide=~/.netrc", NULL };
    g_autoptr(TerretExecutor) executor = new_executor (data, settings);
    g_autofree char *text = run_text (executor, command->str);

    g_assert_cmpstr (text, ==, expected->str);
  }
  {
    const char *settings[] = { "sandbox=read-only", "unhide=~/.not-a-default", NULL };
    g_autoptr(TerretExecutor) executor = new_executor (data, settings);
    g_autoptr(TerretRequest) request = terret_request_new ("echo never");
    g_autoptr(TerretResult) result = NULL;
    g_autoptr(GError) error = NULL;

    result = terret_executor_run (executor, request, NULL, &error);
    g_assert_null (result);
    g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG);
    assert_contains (error->message, "~/.not-a-default");
  }
}

static void
test_allow_unix_sockets (gconstpointer data)
{
  g_autoptr(Targets) t = NULL;
  g_autofree char *other_dir = NULL;
  g_autofree char *other_path = NULL;
  g_autoptr(Listener) other = NULL;
  g_autofree char *workspace = NULL;
  g_autofree char *cwd = NULL;
  g_autofree char *allow = NULL;
  g_autofree char *command = NULL;
  g_autofree char *text = NULL;

  g_test_summary ("allow-unix-sockets makes the named host sockets reachable with the network "
                  "off, and no other: not one elsewhere, not an abstract one, not any host "
                  "service's.");
  SKIP_WITHOUT_SANDBOX (data);

  t = targets_new ();
  /* Outside /run, where only the hiding of what listens covers it. */
  other_dir = make_outside_dir ();
  other_path = g_build_filename (other_dir, "other.sock", NULL);
  other = listener_new (other_path, FALSE, "other-secret");
  workspace = g_strdup_printf ("workspace=%s", t->workspace);
  cwd = g_strdup_printf ("cwd=%s", t->workspace);
  allow = g_strdup_printf ("allow-unix-sockets=%s", t->path_listener->path);
  {
    g_autofree char *attempts = expand ("@PROBE@ connect @SOCKET@; @PROBE@ connect-abstract "
                                        "@ABSTRACT@; grep -v @SOCKET@ @SOCKET_LIST@ > others; "
                                        "@PROBE@ connect-all others", t);

    command = g_strdup_printf ("%s; %s connect %s", attempts, t->probe, other_path);
  }

  {
    const char *settings[] = { "sandbox=workspace-write", workspace, cwd, allow, NULL };
    g_autoptr(TerretExecutor) executor = new_executor (data, settings);

    text = run_text (executor, command);
  }
  {
    g_auto(GStrv) lines = g_strsplit (text, "\n", -1);

    g_assert_cmpuint (g_strv_length (lines), >=, 4);
    g_assert_true (g_str_has_prefix (lines[0], "escaped: "));
    assert_contains (lines[0], t->secret);
    for (guint i = 1; lines[i] != NULL && *lines[i] != '\0'; i++)
      if (!g_str_has_prefix (lines[i], "refused: "))
        g_error ("a socket not allowed was reached: %s", text);
  }
  g_assert_cmpint (g_atomic_int_get (&other->accepted), ==, 0);
  g_assert_cmpint (g_atomic_int_get (&t->abstract_listener->accepted), ==, 0);

  {
    const char *settings[] = { "sandbox=workspace-write", workspace,
                               "allow-unix-sockets=/nonexistent.sock", NULL };
    g_autoptr(TerretExecutor) executor = new_executor (data, settings);
    g_autoptr(TerretRequest) request = terret_request_new ("echo never");
    g_autoptr(TerretResult) result = NULL;
    g_autoptr(GError) error = NULL;

    result = terret_executor_run (executor, request, NULL, &error);
    g_assert_null (result);
    g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG);
    assert_contains (error->message, "/nonexistent.sock");
  }
  g_unlink (other_path);
  g_rmdir (other_dir);
}

static void
test_session_cannot_loosen (void)
{
  /* What a command can change in its shell, each followed by attempts
   * that must keep failing. */
  const char *changes[] = {
    "cd /", "export LD_PRELOAD=/nonexistent.so", "umask 000", "ulimit -n 64", "trap '' HUP INT",
    "exec 7<>/dev/null", "unset PATH; PATH=/usr/sbin:/usr/bin:/sbin:/bin", "set +m",
    "export BWRAP=/bin/true TERRET_LAUNCHER=/bin/true", "enable -n kill", "alias cd=true",
    "unshare --user --map-root-user true; true", "hash -r",
  };
  g_autoptr(Targets) t = NULL;
  g_autofree char *workspace = NULL;
  g_autofree char *cwd = NULL;
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *first_pid = NULL;

  g_test_summary ("A sandboxed pty session cannot loosen its own sandbox: over many runs, each "
                  "changing the shell's state, the same shell stays under the same filter and "
                  "every attempt keeps failing.");
  SKIP_WITHOUT_SANDBOX ("pty");

  t = targets_new ();
  workspace = g_strdup_printf ("workspace=%s", t->workspace);
  cwd = g_strdup_printf ("cwd=%s", t->workspace);
  {
    const char *settings[] = { "sandbox=workspace-write", workspace, cwd, NULL };

    executor = new_executor ("pty", settings);
  }
  first_pid = run_text (executor, "echo $$");

  for (guint round = 0; round < 3; round++)
    for (guint i = 0; i < G_N_ELEMENTS (changes); i++)
      {
        g_autofree char *attempts = NULL;
        g_autofree char *command = NULL;
        g_autofree char *text = NULL;

        attempts = expand ("echo $$; grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status | "
                           "tr -s '\\t' ' '; @PROBE@ connect @SOCKET@; @PROBE@ keyring @KEY@; "
                           "@PROBE@ unshare; { echo changed > @OUTSIDE_FILE@; } 2>/dev/null || "
                           "echo refused: write", t);
        command = g_strdup_printf ("%s; %s", changes[i], attempts);
        text = run_text (executor, command);
        assert_contains (text, first_pid);
        assert_contains (text, "NoNewPrivs: 1\nSeccomp: 2\n");
        if (strstr (text, "escaped") != NULL)
          g_error ("after “%s”, run %u escaped: %s", changes[i], round, text);
      }
  g_assert_false (listener_reached (t));
  g_assert_false (file_changed (t));
}

static void
test_leftovers_contained (gconstpointer data)
{
  const char *backend = data;
  /* Waits for the run's end (oneshot: its shell exits; pty: the go file
   * the test makes after the run), then tries. */
  const char *leftover =
    "( while [ ! -e go ] && kill -0 $$ 2>/dev/null; do sleep 0.05; done; "
    "@PROBE@ connect @SOCKET@ > later.tmp 2>&1; @PROBE@ keyring @KEY@ >> later.tmp 2>&1; "
    "@PROBE@ kill @PID@ >> later.tmp 2>&1; mv later.tmp later ) & echo started";

  g_test_summary ("What a sandboxed command leaves running is as contained as the command: it "
                  "tries after the run ended and fails, where unsandboxed it gets through.");
  SKIP_WITHOUT_SANDBOX (backend);

  for (guint sandboxed = 0; sandboxed <= 1; sandboxed++)
    {
      g_autoptr(Targets) t = targets_new ();
      g_autofree char *workspace = g_strdup_printf ("workspace=%s", t->workspace);
      g_autofree char *cwd = g_strdup_printf ("cwd=%s", t->workspace);
      /* oneshot: bash's end does not end a run while something holds its
       * output, for as long as drain-grace. */
      const char *settings[] = { sandboxed ? "sandbox=workspace-write" : "sandbox=none",
                                 workspace, cwd,
                                 g_str_equal (backend, "oneshot") ? "drain-grace=60" : NULL,
                                 NULL };
      g_autoptr(TerretExecutor) executor = new_executor (backend, settings);
      g_autofree char *command = expand (leftover, t);
      g_autofree char *started = run_text (executor, command);
      g_autofree char *go = g_build_filename (t->workspace, "go", NULL);
      g_autofree char *later = NULL;

      assert_contains (started, "started");
      g_assert_true (g_file_set_contents (go, "", -1, NULL));
      later = run_text (executor, "while [ ! -e later ]; do sleep 0.05; done; cat later");
      if (!sandboxed)
        {
          /* The proof: the same leftover gets through without a sandbox. */
          assert_contains (later, "escaped");
          g_assert_true (listener_reached (t));
          g_assert_true (target_killed (t));
        }
      else
        {
          if (strstr (later, "escaped") != NULL)
            g_error ("a leftover escaped: %s", later);
          g_assert_false (listener_reached (t));
          g_assert_false (target_killed (t));
        }
      terret_executor_close_all (executor);
    }
}

/* A sandbox bwrap cannot make: here, if bwrap cannot make one at all (a
 * chroot), else as a user a user namespace does not map (bwrap may not
 * make another there). The refusal is `unavailable` in bwrap's own words,
 * from a run, from --check and from serve. */
static void
test_refusal_says_why (void)
{
  g_autofree char *unshare = g_find_program_in_path ("unshare");
  g_autofree char *bwrap = g_find_program_in_path ("bwrap");
  const char *prefix[] = { unshare, "--user" };
  guint n_prefix = G_N_ELEMENTS (prefix);
  g_autofree char *words = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(GError) error = NULL;
  int status;

  g_test_summary ("When bwrap cannot set up the sandbox, runs, --check and serve fail "
                  "unavailable with bwrap's own words.");
  if (bwrap == NULL)
    {
      g_test_skip ("bwrap is not installed (apt install bubblewrap)");
      return;
    }

  if (bwrap_refusal () != NULL)
    {
      words = g_strdup (bwrap_refusal ());
      n_prefix = 0;
    }
  else if (unshare == NULL)
    {
      g_test_skip ("bwrap makes sandboxes here, and there is no unshare to make it fail");
      return;
    }
  else
    {
      /* What bwrap itself says there, found by running it. */
      const char *argv[] = { unshare, "--user", bwrap, "--ro-bind", "/", "/", "true", NULL };

      g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                                   NULL, NULL, &err, &status, &error));
      g_assert_no_error (error);
      if (g_spawn_check_wait_status (status, NULL) || !g_str_has_prefix (err, "bwrap: "))
        {
          g_autofree char *skip = g_strdup_printf ("bwrap does not fail in an unmapped user "
                                                   "namespace here: %s", err);

          g_test_skip (skip);
          return;
        }
      words = g_strdup (g_strstrip (err));
      g_clear_pointer (&err, g_free);
    }

  {
    const char *tail[] = { terret_test_cli_path (), "--backend", "oneshot", "--set",
                           "sandbox=read-only", "-c", "echo never", NULL };
    g_autoptr(GPtrArray) argv = g_ptr_array_new ();

    for (guint i = 0; i < n_prefix; i++)
      g_ptr_array_add (argv, (char *)prefix[i]);
    for (guint i = 0; i < G_N_ELEMENTS (tail); i++)
      g_ptr_array_add (argv, (char *)tail[i]);
    g_assert_true (g_spawn_sync (NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                                 &out, &err, &status, &error));
    g_assert_no_error (error);
    g_assert_false (g_spawn_check_wait_status (status, NULL));
    g_assert_cmpstr (out, ==, "");
    assert_contains (err, "Could not set up the sandbox");
    assert_contains (err, words);
    g_clear_pointer (&out, g_free);
    g_clear_pointer (&err, g_free);
  }
  {
    const char *tail[] = { terret_test_cli_path (), "--check", "--backend", "pty", "--set",
                           "sandbox=read-only", NULL };
    g_autoptr(GPtrArray) argv = g_ptr_array_new ();

    for (guint i = 0; i < n_prefix; i++)
      g_ptr_array_add (argv, (char *)prefix[i]);
    for (guint i = 0; i < G_N_ELEMENTS (tail); i++)
      g_ptr_array_add (argv, (char *)tail[i]);
    g_assert_true (g_spawn_sync (NULL, (char **)argv->pdata, NULL, G_SPAWN_STDERR_TO_DEV_NULL,
                                 NULL, NULL, &out, NULL, &status, &error));
    g_assert_no_error (error);
    g_assert_false (g_spawn_check_wait_status (status, NULL));
    assert_contains (out, "probe: FAILED: ");
    assert_contains (out, words);
    g_clear_pointer (&out, g_free);
  }
  {
    const char *argv[] = { "sh", "-c", "echo '{\"id\":\"r1\",\"command\":\"echo never\"}' | "
                           "exec $0 \"$1\" serve --backend oneshot --set sandbox=read-only",
                           n_prefix > 0 ? "unshare --user" : "", terret_test_cli_path (), NULL };
    g_autoptr(JsonNode) node = NULL;
    JsonObject *response, *failure;

    g_assert_true (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &out,
                                 NULL, &status, &error));
    g_assert_no_error (error);
    node = json_from_string (out, &error);
    g_assert_no_error (error);
    response = json_node_get_object (node);
    g_assert_cmpstr (json_object_get_string_member (response, "id"), ==, "r1");
    g_assert_false (json_object_get_boolean_member (response, "ok"));
    failure = json_object_get_object_member (response, "error");
    g_assert_cmpstr (json_object_get_string_member (failure, "code"), ==, "unavailable");
    assert_contains (json_object_get_string_member (failure, "message"), words);
  }
}

int
main (int   argc,
      char *argv[])
{
  const char *backends[] = { "pty", "oneshot" };

  /* A killed target's pipe must be an error to write to, not a signal. */
  signal (SIGPIPE, SIG_IGN);

  /* The test's own files, HOME included, on the host's filesystem and
   * not under /tmp, which the sandbox replaces with its own: what the
   * sandbox hides must be hidden by it, not by that. For this process
   * alone (GLib keeps the directory it found first); what it runs gets
   * the TMPDIR it had. */
  {
    g_autofree char *tmpdir = g_strdup (g_getenv ("TMPDIR"));

    g_setenv ("TMPDIR", "/var/tmp", TRUE);
    terret_test_init (&argc, &argv);
    if (tmpdir != NULL)
      g_setenv ("TMPDIR", tmpdir, TRUE);
    else
      g_unsetenv ("TMPDIR");
  }

  for (guint i = 0; i < G_N_ELEMENTS (backends); i++)
    {
      const struct { const char *name; GTestDataFunc func; } tests[] = {
        { "filesystem", test_filesystem }, { "read-only", test_read_only },
        { "private-tmp", test_private_tmp }, { "network", test_network },
        { "environment", test_environment }, { "processes-and-hidden", test_processes_and_hidden },
        { "missing-bwrap", test_missing_bwrap },
        { "credential-stores", test_credential_stores },
        { "allow-unix-sockets", test_allow_unix_sockets },
        { "leftovers-contained", test_leftovers_contained },
      };

      for (guint t = 0; t < G_N_ELEMENTS (tests); t++)
        {
          g_autofree char *test_path = g_strdup_printf ("/sandbox/%s/%s", backends[i], tests[t].name);

          g_test_add_data_func (test_path, backends[i], tests[t].func);
        }
    }
  /* In the host's environment, set before any thread: a variable the
   * sandbox drops for commands (*SECRET*), which the launcher inherits
   * when unsandboxed. */
  {
    g_autofree char *secret = g_strdup_printf ("env-secret-%u", g_random_int ());

    g_setenv ("TERRET_TEST_SECRET", secret, TRUE);
  }
  add_escape_tests ();
  g_test_add_func ("/sandbox/pty/session-persists", test_session_persists);
  g_test_add_func ("/sandbox/pty/session-cannot-loosen", test_session_cannot_loosen);
  g_test_add_func ("/sandbox/refusal-says-why", test_refusal_says_why);
  g_test_add_func ("/sandbox/check", test_check_cli);

  return g_test_run ();
}
