/* terret-test-utils.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/*
 * terret_test_give_home:
 *
 * The isolated test's HOME and XDG directories are /dev/null for the
 * programs it starts; those that read their configuration there (podman,
 * docker, kubectl) get empty directories instead.
 */
void
terret_test_give_home (void)
{
  static const char * const dirs[] = { "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
                                       "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR" };

  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    if (g_strcmp0 (g_getenv (dirs[i]), "/dev/null") == 0)
      {
        g_autofree char *dir = terret_test_make_tmpdir ();

        g_setenv (dirs[i], dir, TRUE);
      }
}

/*
 * terret_test_run_argv:
 *
 * Runs @argv to its end: its stdout, stripped, or %NULL with @error
 * saying what it printed on stderr when it failed.
 */
char *
terret_test_run_argv (const char * const  *argv,
                      GError             **error)
{
  g_autoptr(GSubprocess) process = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  process = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE,
                               error);
  if (process == NULL || !g_subprocess_communicate_utf8 (process, NULL, NULL, &out, &err, error))
    return NULL;
  if (!g_subprocess_get_if_exited (process) || g_subprocess_get_exit_status (process) != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "%s failed: %s", argv[0],
                   g_strstrip (err));
      return NULL;
    }
  return g_strstrip (g_steal_pointer (&out));
}

/*
 * terret_test_assert_run_fails:
 *
 * A run of `true` fails with @code, its message saying @needle.
 */
void
terret_test_assert_run_fails (TerretExecutor *executor,
                              int             code,
                              const char     *needle)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretResult) result = terret_test_run_command (executor, "true", &error);

  g_assert_null (result);
  g_assert_error (error, TERRET_EXEC_ERROR, code);
  if (strstr (error->message, needle) == NULL)
    g_error ("“%s” does not say “%s”", error->message, needle);
}

const char *
terret_test_cli_path (void)
{
  const char *path = g_getenv ("TERRET_EXEC_CLI");

  g_assert_nonnull (path);
  return path;
}

/* --- Capture modes and the full-output file ------------------------------ */

static void
set_setting_ok (TerretExecutor *executor,
                const char     *key,
                const char     *value)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (terret_executor_set_setting (executor, key, value, &error));
  g_assert_no_error (error);
}

/* What `seq 1 N` prints. */
static GString *
seq_text (guint n)
{
  GString *text = g_string_new (NULL);

  for (guint i = 1; i <= n; i++)
    g_string_append_printf (text, "%u\n", i);
  return text;
}

static char *
sha256_hex (const char *data,
            gsize       len)
{
  return g_compute_checksum_for_data (G_CHECKSUM_SHA256, (const guchar *)data, len);
}

/* The file holds exactly @expected: same length, same SHA-256, mode 0600
 * in a 0700 directory. */
static void
assert_full_output_file (const char *path,
                         const char *expected,
                         gsize       expected_len)
{
  g_autoptr(GChecksum) checksum = g_checksum_new (G_CHECKSUM_SHA256);
  g_autofree char *want = sha256_hex (expected, expected_len);
  g_autofree char *contents = NULL;
  g_autofree char *dir = g_path_get_dirname (path);
  g_autoptr(GError) error = NULL;
  struct stat st;
  gsize len = 0;

  g_assert_nonnull (path);
  g_assert_cmpint (g_stat (path, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0600);
  g_assert_cmpint (g_stat (dir, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0700);

  g_file_get_contents (path, &contents, &len, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (len, ==, expected_len);
  g_checksum_update (checksum, (const guchar *)contents, len);
  g_assert_cmpstr (g_checksum_get_string (checksum), ==, want);
}

/* The head-tail rule restated for ASCII lines: the head's first half of
 * @limit ends after its last newline in its last quarter, the tail's
 * second half begins on a line, after a newline in its first quarter. */
static void
assert_head_tail (TerretResult  *result,
                  TerretStream   stream,
                  const GString *full,
                  gsize          limit)
{
  GBytes *kept = stream == TERRET_STREAM_STDOUT ? terret_result_get_stdout (result)
                                                : terret_result_get_stderr (result);
  gsize head = limit / 2, tail = limit - head;
  gsize q = head, p = full->len - tail;
  g_autoptr(GString) expected = g_string_new (NULL);
  g_autofree char *marker = NULL;
  g_autofree char *words = NULL;

  while (q > head - head / 4 && full->str[q - 1] != '\n')
    q--;
  g_assert_true (full->str[q - 1] == '\n');
  if (full->str[p - 1] != '\n')
    {
      const char *newline = memchr (full->str + p, '\n', tail / 4);

      g_assert_nonnull (newline);
      p = newline - full->str + 1;
    }

  g_string_append_len (expected, full->str, q);
  g_string_append_len (expected, full->str + p, full->len - p);
  terret_test_assert_bytes_eq (kept, expected->str, expected->len);
  g_assert_cmpuint (terret_result_get_dropped (result, stream), ==, p - q);
  g_assert_cmpuint (terret_result_get_cut_offset (result, stream), ==, q);
  g_assert_cmpuint (terret_result_get_omitted_at (result, stream), ==, q);
  {
    guint64 newlines = 0;

    for (gsize i = q; i < p; i++)
      newlines += full->str[i] == '\n';
    g_assert_cmpuint (terret_result_get_omitted_lines (result, stream), ==, newlines);
    /* seq's lines look like no error. */
    g_assert_nonnull (terret_result_get_omitted_errors (result, stream));
    g_assert_cmpuint (terret_result_get_omitted_errors (result, stream)->len, ==, 0);
  }

  /* The cut is on a line boundary, so the marker needs no newline first. */
  marker = terret_result_format_omitted (result, stream);
  words = g_strdup_printf ("[… %" G_GSIZE_FORMAT " bytes omitted, from byte %" G_GSIZE_FORMAT " ",
                           p - q, q);
  g_assert_true (g_str_has_prefix (marker, words));
  g_assert_true (g_str_has_suffix (marker, " …]\n"));
}

/*
 * terret_test_check_head_tail:
 *
 * head-tail and keep-full-output on @executor, whose streams are
 * separate when @separate: exact kept bytes, counts and offsets; the
 * file's SHA-256 and mode; its removal when the session closes and its
 * survival once taken; full-output-max; a cut between characters.
 */
void
terret_test_check_head_tail (TerretExecutor *executor,
                             gboolean        separate)
{
  g_autoptr(GString) out = seq_text (2000);
  g_autoptr(GString) err = seq_text (3000);
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out_path = NULL;
  g_autofree char *err_path = NULL;
  g_autofree char *taken = NULL;
  g_autofree char *runtime_dir = g_build_filename (g_get_user_runtime_dir (), "terret-exec", NULL);
  g_autofree char *dir = NULL;

  set_setting_ok (executor, "max-output", "1000");

  request = terret_request_new (separate ? "seq 1 2000; seq 1 3000 >&2" : "seq 1 2000");
  terret_request_set_session (request, "capture");
  terret_request_set_capture (request, TERRET_CAPTURE_MODE_HEAD_TAIL);
  terret_request_set_keep_full_output (request, TRUE);
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);

  assert_head_tail (result, TERRET_STREAM_STDOUT, out, 1000);
  out_path = g_strdup (terret_result_get_full_output (result, TERRET_STREAM_STDOUT));
  assert_full_output_file (out_path, out->str, out->len);
  dir = g_path_get_dirname (out_path);
  g_assert_cmpstr (dir, ==, runtime_dir);
  if (separate)
    {
      assert_head_tail (result, TERRET_STREAM_STDERR, err, 1000);
      err_path = g_strdup (terret_result_get_full_output (result, TERRET_STREAM_STDERR));
      assert_full_output_file (err_path, err->str, err->len);
      g_assert_cmpstr (out_path, !=, err_path);
    }
  else
    g_assert_null (terret_result_get_full_output (result, TERRET_STREAM_STDERR));

  /* Closing the session removes its files. */
  terret_executor_close_session (executor, "capture");
  g_assert_false (g_file_test (out_path, G_FILE_TEST_EXISTS));
  if (err_path != NULL)
    g_assert_false (g_file_test (err_path, G_FILE_TEST_EXISTS));
  g_assert_null (terret_result_steal_full_output (result, TERRET_STREAM_STDOUT));
  g_clear_object (&result);

  /* One the caller took stays, and is the caller's to remove. */
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_no_error (error);
  taken = terret_result_steal_full_output (result, TERRET_STREAM_STDOUT);
  g_assert_cmpstr (taken, ==, terret_result_get_full_output (result, TERRET_STREAM_STDOUT));
  g_assert_null (terret_result_steal_full_output (result, TERRET_STREAM_STDOUT));
  terret_executor_close_session (executor, "capture");
  assert_full_output_file (taken, out->str, out->len);
  g_assert_cmpint (g_unlink (taken), ==, 0);
  g_clear_object (&result);

  /* From the settings, with the file bounded: the first bytes are in it
   * and the notice says what it lacks. */
  set_setting_ok (executor, "capture", "head-tail");
  set_setting_ok (executor, "keep-full-output", "true");
  set_setting_ok (executor, "full-output-max", "100");
  g_clear_object (&request);
  request = terret_request_new ("seq 1 2000");
  terret_request_set_session (request, "capture");
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_no_error (error);
  assert_head_tail (result, TERRET_STREAM_STDOUT, out, 1000);
  assert_full_output_file (terret_result_get_full_output (result, TERRET_STREAM_STDOUT),
                           out->str, 100);
  g_assert_nonnull (strstr (terret_result_get_notice (result), "full-output-max"));
  g_clear_object (&result);
  set_setting_ok (executor, "keep-full-output", "false");

  /* No newline near either cut: both fall between characters. */
  set_setting_ok (executor, "max-output", "1001");
  g_clear_object (&request);
  request = terret_request_new ("printf 'é%.0s' $(seq 1 2000)");
  terret_request_set_session (request, "capture");
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (g_bytes_get_size (terret_result_get_stdout (result)), ==, 1000);
  g_assert_true (g_utf8_validate (g_bytes_get_data (terret_result_get_stdout (result), NULL),
                                  1000, NULL));
  g_assert_cmpuint (terret_result_get_dropped (result, TERRET_STREAM_STDOUT), ==, 3000);
  g_assert_cmpuint (terret_result_get_omitted_at (result, TERRET_STREAM_STDOUT), ==, 500);
  g_assert_null (terret_result_get_full_output (result, TERRET_STREAM_STDOUT));
  {
    /* The head ends inside a line: the marker begins a line of its own. */
    g_autofree char *marker = terret_result_format_omitted (result, TERRET_STREAM_STDOUT);

    g_assert_true (g_str_has_prefix (marker, "\n[… 3000 bytes omitted, from byte 500 of the "));
  }
  g_clear_object (&result);

  set_setting_ok (executor, "capture", "default");
  terret_executor_close_all (executor);
}

/*
 * terret_test_check_capture_mode:
 *
 * @mode (head or tail) on a `seq 1 2000` under max-output 1000: the kept
 * bytes are the stream's first 1000, or a line-aligned tail, with the
 * counts and offsets to match.
 */
void
terret_test_check_capture_mode (TerretExecutor    *executor,
                                TerretCaptureMode  mode)
{
  g_autoptr(GString) out = seq_text (2000);
  g_autoptr(TerretRequest) request = terret_request_new ("seq 1 2000");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  GBytes *kept;
  gsize len = 0;
  const char *data;
  guint64 dropped;

  set_setting_ok (executor, "max-output", "1000");
  terret_request_set_session (request, "capture");
  terret_request_set_capture (request, mode);
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_no_error (error);

  kept = terret_result_get_stdout (result);
  data = g_bytes_get_data (kept, &len);
  dropped = terret_result_get_dropped (result, TERRET_STREAM_STDOUT);
  g_assert_cmpuint (len + dropped, ==, out->len);
  g_assert_null (terret_result_get_full_output (result, TERRET_STREAM_STDOUT));

  if (mode == TERRET_CAPTURE_MODE_HEAD)
    {
      terret_test_assert_bytes_eq (kept, out->str, 1000);
      g_assert_cmpuint (terret_result_get_cut_offset (result, TERRET_STREAM_STDOUT), ==, 1000);
      g_assert_cmpuint (terret_result_get_omitted_at (result, TERRET_STREAM_STDOUT), ==, 1000);
    }
  else
    {
      /* A tail holds up to its overshoot past the limit; it begins a line. */
      g_assert_cmpuint (len, >=, 1000 - 1000 / 2);
      g_assert_cmpmem (data, len, out->str + dropped, len);
      g_assert_true (out->str[dropped - 1] == '\n');
      g_assert_cmpuint (terret_result_get_cut_offset (result, TERRET_STREAM_STDOUT), ==, 0);
      g_assert_cmpuint (terret_result_get_omitted_at (result, TERRET_STREAM_STDOUT), ==, 0);
    }

  terret_executor_close_all (executor);
}

/* Lines shaped like errors, as compilers, test runners and runtimes print
 * them, and lines that merely mention a keyword. */
static const char * const planted_errors[] = {
  "src/main.c:12:5: error: expected semicolon",
  "error[E0308]: mismatched types",
  "ValueError: bad value",
  "FAILED tests/test_x.py::test_y - assert 1 == 2",
  "--- FAIL: TestFoo (0.00s)",
  "not ok 7 - frobnicates",
  "Traceback (most recent call last):",
  "panic: runtime error: index out of range",
  "thread main panicked at src/main.rs:2:5:",
  "ERROR: Could not find a version",
  "Error: ENOENT: no such file",
  "error: linker command failed",
};

static const char * const planted_harmless[] = {
  "0 errors, 2 warnings",
  "test result: ok. 3 passed; 0 failed",
  "FAILURE is not an option",
  "stderr was empty",
};

/*
 * terret_test_check_omitted_errors:
 *
 * A long output with error lines in its middle, under each capture mode:
 * the result counts the omitted lines and names the first ten error
 * lines (never a harmless one) at their exact offsets, on stderr too
 * where the backend keeps it apart, and the marker shows them.
 */
void
terret_test_check_omitted_errors (TerretExecutor *executor,
                                  gboolean        separate)
{
  static const TerretCaptureMode modes[] = {
    TERRET_CAPTURE_MODE_HEAD_TAIL, TERRET_CAPTURE_MODE_HEAD, TERRET_CAPTURE_MODE_TAIL,
  };
  g_autoptr(GString) full = g_string_new (NULL);
  g_autoptr(GString) command = g_string_new ("{ seq -f 'line %g' 1 1000; ");
  g_autoptr(GArray) offsets = g_array_new (FALSE, FALSE, sizeof (guint64));
  guint line = 1000;

  for (guint i = 1; i <= 1000; i++)
    g_string_append_printf (full, "line %u\n", i);
  for (guint i = 0; i < G_N_ELEMENTS (planted_errors); i++)
    {
      const char *harmless = planted_harmless[i % G_N_ELEMENTS (planted_harmless)];

      g_string_append_printf (command, "seq -f 'line %%g' %u %u; printf '%%s\\n' '%s' '%s'; ",
                              line + 1, line + 100, planted_errors[i], harmless);
      for (guint j = line + 1; j <= line + 100; j++)
        g_string_append_printf (full, "line %u\n", j);
      line += 100;
      g_array_append_val (offsets, full->len);
      g_string_append_printf (full, "%s\n%s\n", planted_errors[i], harmless);
    }
  g_string_append_printf (command, "seq -f 'line %%g' %u %u; }", line + 1, line + 1000);
  for (guint j = line + 1; j <= line + 1000; j++)
    g_string_append_printf (full, "line %u\n", j);
  if (separate)
    g_string_append (command, " 2>&1 | tee /dev/stderr");

  set_setting_ok (executor, "max-output", "1000");
  for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
    {
      g_autoptr(TerretRequest) request = terret_request_new (command->str);
      g_autoptr(TerretResult) result = NULL;
      g_autoptr(GError) error = NULL;

      terret_request_set_session (request, "errors");
      terret_request_set_capture (request, modes[m]);
      result = terret_executor_run (executor, request, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);

      for (TerretStream stream = TERRET_STREAM_STDOUT; stream <= (separate ? TERRET_STREAM_STDERR : TERRET_STREAM_STDOUT); stream++)
        {
          guint64 dropped = terret_result_get_dropped (result, stream);
          guint64 at = terret_result_get_omitted_at (result, stream);
          GPtrArray *lines = terret_result_get_omitted_errors (result, stream);
          g_autofree char *marker = terret_result_format_omitted (result, stream);
          g_autofree char *first = NULL;
          guint64 newlines = 0;

          g_assert_cmpuint (dropped, >, 0);
          g_assert_cmpuint (at + dropped, <=, full->len);
          for (guint64 i = at; i < at + dropped; i++)
            newlines += full->str[i] == '\n';
          g_assert_cmpuint (terret_result_get_omitted_lines (result, stream), ==, newlines);

          /* Every planted line is in the middle: the first ten come, in order. */
          g_assert_nonnull (lines);
          g_assert_cmpuint (lines->len, ==, 10);
          for (guint i = 0; i < lines->len; i++)
            {
              TerretOutputLine *found = g_ptr_array_index (lines, i);

              g_assert_cmpuint (terret_output_line_get_offset (found), ==, g_array_index (offsets, guint64, i));
              terret_test_assert_bytes_eq (terret_output_line_get_text (found), planted_errors[i],
                                           strlen (planted_errors[i]));
            }
          first = g_strdup_printf ("[… at byte %" G_GUINT64_FORMAT ": %s …]\n",
                                   g_array_index (offsets, guint64, 0), planted_errors[0]);
          g_assert_nonnull (strstr (marker, first));
        }
    }

  terret_executor_close_all (executor);
}

/* A FIFO named @name in @dir: a command and the test meet there. */
char *
terret_test_make_fifo (const char *dir,
                       const char *name)
{
  char *path = g_build_filename (dir, name, NULL);

  g_assert_cmpint (mkfifo (path, 0600), ==, 0);
  return path;
}

void
terret_test_write_fifo (const char *path,
                        const char *text)
{
  /* Blocks until the command opens its end: the synchronisation point. */
  int fd = open (path, O_WRONLY | O_CLOEXEC);

  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (write (fd, text, strlen (text)), ==, (gssize) strlen (text));
  close (fd);
}

char *
terret_test_read_fifo (const char *path)
{
  g_autoptr(GError) error = NULL;
  char *contents = NULL;

  /* Blocks until the command has written its end and closed it. */
  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);
  return contents;
}

/*
 * terret_test_wait_gone:
 *
 * Waits for @pid to end, through a pidfd (readable once the process has
 * exited), so a process another one has just killed is given the moment
 * it needs to die without a sleep. The cap only keeps a left-behind
 * process from hanging the test: reaching it fails.
 */
void
terret_test_wait_gone (GPid pid)
{
  int pidfd = syscall (SYS_pidfd_open, pid, 0);
  struct pollfd pfd;
  int n;

  if (pidfd < 0 && errno == ENOSYS)
    {
      /* Only where the syscall is unknown (valgrind): watch /proc. */
      for (guint i = 0; i < 6000 && terret_test_process_alive (pid); i++)
        g_usleep (10 * 1000);
      g_assert_false (terret_test_process_alive (pid));
      return;
    }

  if (pidfd < 0)
    {
      g_assert_cmpint (errno, ==, ESRCH);
      return;
    }

  pfd.fd = pidfd;
  pfd.events = POLLIN;
  do
    n = poll (&pfd, 1, 60 * 1000);
  while (n < 0 && errno == EINTR);
  close (pidfd);

  if (n != 1)
    g_error ("process %d is still running", pid);
  g_assert_false (terret_test_process_alive (pid));
}

/* Waits for each pid in @pids (words), of which there must be one. */
void
terret_test_wait_gone_all (const char *pids)
{
  g_auto(GStrv) words = g_strsplit_set (pids, " \n", -1);
  guint n = 0;

  for (guint i = 0; words[i] != NULL; i++)
    {
      if (*words[i] == '\0')
        continue;
      terret_test_wait_gone ((GPid) g_ascii_strtoll (words[i], NULL, 10));
      n++;
    }
  g_assert_cmpuint (n, >, 0);
}
