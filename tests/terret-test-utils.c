/* terret-test-utils.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "terret-test-utils.h"

static char *tmp_root;

static void
remove_tmp_root (void)
{
  g_autofree char *cmd = NULL;

  if (tmp_root == NULL)
    return;

  /* Tests make directories with awkward names; rm handles them all. */
  cmd = g_strdup_printf ("rm -rf '%s'", tmp_root);
  if (system (cmd) != 0)
    g_printerr ("could not remove %s\n", tmp_root);
  g_clear_pointer (&tmp_root, g_free);
}

/*
 * terret_test_init:
 *
 * g_test_init() plus a pinned environment: no user configuration, no
 * backend chosen by the caller's environment, and the uninstalled
 * backends from TERRET_EXEC_MODULE_PATH (set by meson).
 */
void
terret_test_init (int    *argc,
                  char ***argv)
{
  g_autoptr(GError) error = NULL;

  g_test_init (argc, argv, G_TEST_OPTION_ISOLATE_DIRS, NULL);

  tmp_root = g_dir_make_tmp ("terret-test-XXXXXX", &error);
  g_assert_no_error (error);
  atexit (remove_tmp_root);

  /* G_TEST_OPTION_ISOLATE_DIRS gives each test its own HOME and XDG dirs,
   * so no real executor.conf is read; the caller's backend choice must not
   * leak in either. */
  g_unsetenv ("TERRET_EXECUTOR");
}

TerretResult *
terret_test_run (TerretExecutor *executor,
                 TerretRequest  *request,
                 GError        **error)
{
  return terret_executor_run (executor, request, NULL, error);
}

TerretResult *
terret_test_run_command (TerretExecutor *executor,
                         const char     *command,
                         GError        **error)
{
  g_autoptr(TerretRequest) request = terret_request_new (command);

  return terret_executor_run (executor, request, NULL, error);
}

/* A run in @session that must not fail; @timeout 0 is the backend's. */
TerretResult *
terret_test_run_in (TerretExecutor *executor,
                    const char     *session,
                    const char     *command,
                    double          timeout)
{
  g_autoptr(TerretRequest) request = terret_request_new (command);
  g_autoptr(GError) error = NULL;
  TerretResult *result;

  terret_request_set_session (request, session);
  terret_request_set_timeout (request, timeout);
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (result);
  return result;
}

TerretResult *
terret_test_run_ok (TerretExecutor *executor,
                    const char     *command)
{
  return terret_test_run_in (executor, TERRET_DEFAULT_SESSION, command, 0);
}

/* A run on a terminal backend (one stream: stderr NULL) that must
 * complete normally with @status and exactly @expected. */
void
terret_test_assert_terminal_run (TerretExecutor *executor,
                                 const char     *command,
                                 int             status,
                                 const char     *expected)
{
  g_autoptr(TerretResult) result = terret_test_run_ok (executor, command);

  g_assert_true (terret_result_get_exited (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, status);
  g_assert_false (terret_result_get_timed_out (result));
  g_assert_null (terret_result_get_stderr (result));
  terret_test_assert_bytes_str (terret_result_get_stdout (result), expected);
}

void
terret_test_assert_bytes_eq (GBytes     *bytes,
                             const char *expected,
                             gssize      expected_len)
{
  gsize len = 0;
  const guint8 *data;

  g_assert_nonnull (bytes);
  data = g_bytes_get_data (bytes, &len);
  if (expected_len < 0)
    expected_len = strlen (expected);
  g_assert_cmpmem (data, len, expected, expected_len);
}

static gboolean
read_stat (const char *pid_dir,
           char       *state,
           GPid       *sid)
{
  g_autofree char *path = g_build_filename ("/proc", pid_dir, "stat", NULL);
  g_autofree char *contents = NULL;
  const char *p;
  int ppid, pgrp, session;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return FALSE;

  /* The command name may hold spaces and parentheses; fields resume after
   * the last ')'. */
  p = strrchr (contents, ')');
  if (p == NULL)
    return FALSE;

  if (sscanf (p + 1, " %c %d %d %d", state, &ppid, &pgrp, &session) != 4)
    return FALSE;

  *sid = session;
  return TRUE;
}

/*
 * terret_test_count_session_members:
 *
 * Live (non-zombie) processes whose session id is @sid. A zombie has
 * ended; whether its parent has reaped it yet is not ours to decide.
 */
guint
terret_test_count_session_members (GPid sid)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc", 0, NULL);
  const char *name;
  guint count = 0;

  g_assert_nonnull (dir);

  while ((name = g_dir_read_name (dir)) != NULL)
    {
      char state;
      GPid session;

      if (!g_ascii_isdigit (name[0]))
        continue;
      if (read_stat (name, &state, &session) && session == sid && state != 'Z')
        count++;
    }

  return count;
}

/* Whether @pid is gone altogether, reaped by its parent: its launcher
 * reports a process's end before it reaps it, so from then on the end is
 * there to read. */
gboolean
terret_test_process_reaped (GPid pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d", pid);

  return !g_file_test (path, G_FILE_TEST_EXISTS);
}

gboolean
terret_test_process_alive (GPid pid)
{
  g_autofree char *name = g_strdup_printf ("%d", pid);
  char state;
  GPid sid;

  return read_stat (name, &state, &sid) && state != 'Z';
}

/* A fresh directory under this test program's temporary root. */
char *
terret_test_make_tmpdir (void)
{
  g_autofree char *tmpl = g_build_filename (tmp_root, "dir-XXXXXX", NULL);
  char *path = g_mkdtemp (g_steal_pointer (&tmpl));

  g_assert_nonnull (path);
  return path;
}

const char *
terret_test_cli_path (void)
{
  const char *path = g_getenv ("TERRET_EXEC_CLI");

  g_assert_nonnull (path);
  return path;
}
