/* test-sandbox.c: the sandbox and environment policy, with real bwrap
 *
 * Every case runs on pty and on oneshot, through the backend, with the
 * command doing what a model's command would: writing where it may not,
 * connecting out, reading the environment and the process table.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib/gstdio.h>

#include "terret-test-utils.h"

#define SKIP_WITHOUT_BWRAP()                                             \
  G_STMT_START {                                                        \
    g_autofree char *bwrap_ = g_find_program_in_path ("bwrap");         \
    if (bwrap_ == NULL)                                                 \
      {                                                                 \
        g_test_skip ("bwrap is not installed (apt install bubblewrap)"); \
        return;                                                         \
      }                                                                 \
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
  SKIP_WITHOUT_BWRAP ();

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
  SKIP_WITHOUT_BWRAP ();

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
  SKIP_WITHOUT_BWRAP ();

  fd = g_file_open_tmp ("terret-host-XXXXXX", &host_file, NULL);
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
  SKIP_WITHOUT_BWRAP ();

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
  SKIP_WITHOUT_BWRAP ();

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
  SKIP_WITHOUT_BWRAP ();

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
  SKIP_WITHOUT_BWRAP ();

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
  SKIP_WITHOUT_BWRAP ();

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

int
main (int   argc,
      char *argv[])
{
  const char *backends[] = { "pty", "oneshot" };

  terret_test_init (&argc, &argv);

  for (guint i = 0; i < G_N_ELEMENTS (backends); i++)
    {
      const struct { const char *name; GTestDataFunc func; } tests[] = {
        { "filesystem", test_filesystem }, { "read-only", test_read_only },
        { "private-tmp", test_private_tmp }, { "network", test_network },
        { "environment", test_environment }, { "processes-and-hidden", test_processes_and_hidden },
        { "missing-bwrap", test_missing_bwrap },
      };

      for (guint t = 0; t < G_N_ELEMENTS (tests); t++)
        {
          g_autofree char *test_path = g_strdup_printf ("/sandbox/%s/%s", backends[i], tests[t].name);

          g_test_add_data_func (test_path, backends[i], tests[t].func);
        }
    }
  g_test_add_func ("/sandbox/pty/session-persists", test_session_persists);
  g_test_add_func ("/sandbox/check", test_check_cli);

  return g_test_run ();
}
