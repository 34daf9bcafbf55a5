/* test-oneshot.c: the backend that runs each command as `bash -c`
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib-unix.h>
#include <glib/gstdio.h>

#include "terret-test-utils.h"

/* Generous: reached only when the behaviour under test is broken, so a
 * broken run shows up as a timed-out result instead of a hung test. */
#define GUARD_TIMEOUT 60.0

static TerretExecutor *
new_oneshot (void)
{
  g_autoptr(GError) error = NULL;
  TerretExecutor *executor = terret_executor_new ("oneshot", &error);

  g_assert_no_error (error);
  g_assert_nonnull (executor);
  return executor;
}

static TerretRequest *
new_request (const char *command)
{
  TerretRequest *request = terret_request_new (command);

  terret_request_set_timeout (request, GUARD_TIMEOUT);
  return request;
}

static TerretResult *
run_ok (TerretExecutor *executor,
        TerretRequest  *request)
{
  g_autoptr(GError) error = NULL;
  TerretResult *result = terret_test_run (executor, request, &error);

  g_assert_no_error (error);
  g_assert_nonnull (result);
  return result;
}

static TerretResult *
run_command_ok (TerretExecutor *executor,
                const char     *command)
{
  g_autoptr(TerretRequest) request = new_request (command);

  return run_ok (executor, request);
}

/* Prints bash's pid and session id: the first line of the output of a
 * command that starts with it. */
#define PRINT_SESSION "echo $$ $(cut -d' ' -f6 /proc/$$/stat)"

/* The pid in the first line of @bytes, printed by PRINT_SESSION; bash
 * must lead its own session, whose id the test then checks for leftovers. */
static GPid
parse_pid (GBytes *bytes)
{
  g_autofree char *text = g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
  char *end = NULL;
  gint64 pid = g_ascii_strtoll (text, &end, 10);
  gint64 sid = g_ascii_strtoll (end, NULL, 10);

  g_assert_cmpint (pid, >, 1);
  g_assert_cmpint (sid, ==, pid);
  return (GPid)pid;
}

/* No live process is left in session @sid. bash itself has been reaped
 * when a run completes; what it started was sent SIGKILL, which the
 * kernel delivers asynchronously to processes this test cannot wait for,
 * so give them a moment to be gone. The bound only keeps a failure from
 * hanging; it asserts nothing about speed. */
static void
assert_session_gone (GPid sid)
{
  for (guint i = 0; i < 1000 && terret_test_count_session_members (sid) > 0; i++)
    g_usleep (10 * G_TIME_SPAN_MILLISECOND);

  g_assert_cmpuint (terret_test_count_session_members (sid), ==, 0);
}

/* --- Async runs on the default main context ---------------------------- */

typedef struct
{
  TerretResult *result;
  GError *error;
  gboolean done;
} RunWait;

static void
run_wait_clear (RunWait *wait)
{
  g_clear_object (&wait->result);
  g_clear_error (&wait->error);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (RunWait, run_wait_clear)

static void
run_wait_done_cb (GObject      *object,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  RunWait *wait = user_data;

  wait->result = terret_executor_run_finish (TERRET_EXECUTOR (object), result, &wait->error);
  wait->done = TRUE;
}

static void
run_wait_start (TerretExecutor *executor,
                TerretRequest  *request,
                GCancellable   *cancellable,
                RunWait        *wait)
{
  terret_executor_run_async (executor, request, cancellable, run_wait_done_cb, wait);
}

static void
run_wait_finish (RunWait *wait)
{
  while (!wait->done)
    g_main_context_iteration (NULL, TRUE);
}

/* --- Progress ------------------------------------------------------------ */

typedef struct
{
  GByteArray *bytes[2];         /* everything reported, per stream */
  GPtrArray *pieces[2];         /* (element-type GBytes) each report */
  guint64 seen[2];
  gsize largest;
  gboolean count_only;          /* a flood: count, keep nothing */
} Progress;

static void
progress_init (Progress *progress)
{
  for (guint i = 0; i < 2; i++)
    {
      progress->bytes[i] = g_byte_array_new ();
      progress->pieces[i] = g_ptr_array_new_with_free_func ((GDestroyNotify)g_bytes_unref);
    }
}

static void
progress_clear (Progress *progress)
{
  for (guint i = 0; i < 2; i++)
    {
      g_clear_pointer (&progress->bytes[i], g_byte_array_unref);
      g_clear_pointer (&progress->pieces[i], g_ptr_array_unref);
    }
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Progress, progress_clear)

static void
progress_record (Progress     *progress,
                 TerretStream  stream,
                 GBytes       *data)
{
  gsize len = g_bytes_get_size (data);

  g_assert_cmpuint (len, >, 0);
  progress->seen[stream] += len;
  progress->largest = MAX (progress->largest, len);
  if (progress->count_only)
    return;

  g_byte_array_append (progress->bytes[stream], g_bytes_get_data (data, NULL), len);
  g_ptr_array_add (progress->pieces[stream], g_bytes_ref (data));
}

static void
progress_cb (TerretRequest *request,
             TerretStream   stream,
             GBytes        *data,
             gpointer       user_data)
{
  progress_record (user_data, stream, data);
}

static void
assert_piece (Progress     *progress,
              TerretStream  stream,
              guint         index,
              const char   *expected,
              gssize        len)
{
  g_assert_cmpuint (index, <, progress->pieces[stream]->len);
  terret_test_assert_bytes_eq (g_ptr_array_index (progress->pieces[stream], index), expected, len);
}

/* --- Tests ----------------------------------------------------------------- */

static void
test_capabilities (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();

  g_test_summary ("The backend declares what it offers and carries no session process.");

  g_assert_cmpstr (terret_executor_get_name (executor), ==, "oneshot");
  g_assert_cmpint (terret_executor_get_capabilities (executor), ==,
                   TERRET_CAPABILITY_RUNS_COMMANDS |
                   TERRET_CAPABILITY_SEPARATE_STDERR |
                   TERRET_CAPABILITY_REQUEST_CWD |
                   TERRET_CAPABILITY_REQUEST_ENV |
                   TERRET_CAPABILITY_PROGRESS |
                   TERRET_CAPABILITY_INTERRUPT |
                   TERRET_CAPABILITY_POLL |
                   TERRET_CAPABILITY_DETACH |
                   TERRET_CAPABILITY_CLOCKS |
                   TERRET_CAPABILITY_LIST);
  g_assert_cmpint (terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION), ==, 0);
}

static void
test_exit_status (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  const int statuses[] = { 0, 3, 255 };

  g_test_summary ("The exit status is bash's, across the whole range.");

  for (guint i = 0; i < G_N_ELEMENTS (statuses); i++)
    {
      g_autofree char *command = g_strdup_printf ("exit %d", statuses[i]);
      g_autoptr(TerretResult) result = run_command_ok (executor, command);

      g_assert_true (terret_result_get_exited (result));
      g_assert_cmpint (terret_result_get_exit_status (result), ==, statuses[i]);
      g_assert_cmpint (terret_result_get_term_signal (result), ==, 0);
      g_assert_false (terret_result_get_timed_out (result));
      g_assert_null (terret_result_get_notice (result));
    }
}

static void
test_signal (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretResult) result = NULL;

  g_test_summary ("A command ended by a signal has no exit status, and the signal is told.");

  result = run_command_ok (executor, "echo before; kill -TERM $$; echo after");
  g_assert_false (terret_result_get_exited (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, -1);
  g_assert_cmpint (terret_result_get_term_signal (result), ==, SIGTERM);
  g_assert_false (terret_result_get_timed_out (result));
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "before\n");
}

static void
test_streams_separate (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretRequest) request = new_request ("echo out1; echo err1 >&2; echo out2; echo err2 >&2");
  g_autoptr(TerretResult) result = NULL;
  g_auto(Progress) progress = { 0 };

  g_test_summary ("stdout and stderr are captured apart, and progress tags each line "
                  "with its stream.");

  progress_init (&progress);
  terret_request_set_progress_func (request, progress_cb, &progress, NULL);
  result = run_ok (executor, request);

  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "out1\nout2\n");
  terret_test_assert_bytes_str (terret_result_get_stderr (result), "err1\nerr2\n");
  g_assert_cmpuint (progress.pieces[TERRET_STREAM_STDOUT]->len, ==, 2);
  g_assert_cmpuint (progress.pieces[TERRET_STREAM_STDERR]->len, ==, 2);
  assert_piece (&progress, TERRET_STREAM_STDOUT, 0, "out1\n", -1);
  assert_piece (&progress, TERRET_STREAM_STDOUT, 1, "out2\n", -1);
  assert_piece (&progress, TERRET_STREAM_STDERR, 0, "err1\n", -1);
  assert_piece (&progress, TERRET_STREAM_STDERR, 1, "err2\n", -1);
  g_assert_cmpuint (terret_result_get_dropped (result, TERRET_STREAM_STDOUT), ==, 0);
  g_assert_cmpuint (terret_result_get_dropped (result, TERRET_STREAM_STDERR), ==, 0);
}

static void
test_long_command (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GString) payload = g_string_new (NULL);
  g_autoptr(GString) command = g_string_new ("cat <<'TERRET_EOF'\n");
  guint n = 0;

  g_test_summary ("A command of 1 MB, far over what one argument may hold, runs "
                  "byte-exact, and what carried it is closed before it runs.");

  while (payload->len < 1024 * 1024)
    g_string_append_printf (payload, "line %u: \xc3\xa9\xe2\x82\xac 'single' \"double\" "
                            "$HOME `tick` \\back %%s\n", n++);
  g_string_append_len (command, payload->str, payload->len);
  g_string_append (command, "TERRET_EOF\n"
                            "[ -e /proc/$$/fd/3 ] && echo 'fd 3 open' >&2; "
                            "[ -n \"${__terret_command+set}\" ] && echo 'variable left' >&2; (exit 7)");

  g_object_set (executor, "max-output", (guint64)(4 * 1024 * 1024), NULL);
  request = new_request (command->str);
  result = run_ok (executor, request);

  g_assert_cmpint (terret_result_get_exit_status (result), ==, 7);
  terret_test_assert_bytes_eq (terret_result_get_stdout (result), payload->str, payload->len);
  terret_test_assert_bytes_str (terret_result_get_stderr (result), "");
}

static void
test_bytes_exact (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_auto(Progress) progress = { 0 };
  static const char expected[] = "a\0b\xff\xfe\r\nc\rd";
  gsize expected_len = sizeof expected - 1;

  g_test_summary ("Output is the bytes the command wrote: NUL bytes, invalid UTF-8 and "
                  "carriage returns pass untouched, and no newline is invented.");

  request = new_request ("printf 'a\\0b\\xff\\xfe\\r\\nc\\rd'; printf '\\xff' >&2");
  progress_init (&progress);
  terret_request_set_progress_func (request, progress_cb, &progress, NULL);
  result = run_ok (executor, request);

  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  terret_test_assert_bytes_eq (terret_result_get_stdout (result), expected, expected_len);
  terret_test_assert_bytes_eq (terret_result_get_stderr (result), "\xff", 1);

  /* Progress carries the same bytes: the line, then the last line
   * without a newline at end of file. */
  g_assert_cmpmem (progress.bytes[TERRET_STREAM_STDOUT]->data,
                   progress.bytes[TERRET_STREAM_STDOUT]->len,
                   expected, expected_len);
  g_assert_cmpuint (progress.pieces[TERRET_STREAM_STDOUT]->len, ==, 2);
  assert_piece (&progress, TERRET_STREAM_STDOUT, 0, "a\0b\xff\xfe\r\n", 7);
  assert_piece (&progress, TERRET_STREAM_STDOUT, 1, "c\rd", 3);
  g_assert_cmpuint (progress.pieces[TERRET_STREAM_STDERR]->len, ==, 1);
  assert_piece (&progress, TERRET_STREAM_STDERR, 0, "\xff", 1);
}

/* @path without symbolic links, as `pwd -P` prints it. */
static char *
physical_line (const char *path)
{
  g_autofree char *resolved = realpath (path, NULL);

  g_assert_nonnull (resolved);
  return g_strdup_printf ("%s\n", resolved);
}

static void
test_cwd (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autofree char *setting_dir = terret_test_make_tmpdir ();
  g_autofree char *request_dir = terret_test_make_tmpdir ();
  g_autofree char *host_dir = g_get_current_dir ();
  g_autofree char *expected = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  g_test_summary ("The working directory is the request's, else the cwd setting's, else "
                  "the host's; a changed setting governs the next run.");

  result = run_command_ok (executor, "pwd -P");
  expected = g_strdup_printf ("%s\n", host_dir);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), expected);
  g_clear_object (&result);
  g_clear_pointer (&expected, g_free);

  g_assert_true (terret_executor_set_setting (executor, "cwd", setting_dir, &error));
  g_assert_no_error (error);
  result = run_command_ok (executor, "pwd -P");
  expected = physical_line (setting_dir);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), expected);
  g_clear_object (&result);
  g_clear_pointer (&expected, g_free);

  {
    g_autoptr(TerretRequest) request = new_request ("pwd -P");

    terret_request_set_cwd (request, request_dir);
    result = run_ok (executor, request);
    expected = physical_line (request_dir);
    terret_test_assert_bytes_str (terret_result_get_stdout (result), expected);
  }
}

static void
test_cwd_invalid (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *marker = g_build_filename (dir, "ran", NULL);
  g_autofree char *missing = g_build_filename (dir, "no such dir", NULL);
  g_autofree char *file = g_build_filename (dir, "a file", NULL);
  g_autofree char *command = g_strdup_printf ("touch '%s'", marker);
  const char *bad[] = { missing, file };

  g_test_summary ("A cwd that is not a directory is an invalid-request error naming it, "
                  "and nothing runs.");

  g_assert_true (g_file_set_contents (file, "", 0, NULL));

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(TerretRequest) request = new_request (command);
      g_autoptr(TerretResult) result = NULL;
      g_autoptr(GError) error = NULL;

      terret_request_set_cwd (request, bad[i]);
      result = terret_test_run (executor, request, &error);
      g_assert_null (result);
      g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST);
      g_assert_nonnull (strstr (error->message, bad[i]));
      g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
    }

  /* The same check holds for the setting. */
  {
    g_autoptr(TerretResult) result = NULL;
    g_autoptr(GError) error = NULL;

    g_object_set (executor, "cwd", missing, NULL);
    result = terret_test_run_command (executor, command, &error);
    g_assert_null (result);
    g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST);
    g_assert_nonnull (strstr (error->message, missing));
    g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
  }
}

static void
test_env (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;
  const char *setting_env[] = { "TERRET_T_SETTING=from setting", "TERRET_T_BOTH=setting", NULL };
  const char *command = "printf '%s|%s|%s|%s' \"$TERRET_T_INHERITED\" \"$TERRET_T_SETTING\" "
                        "\"$TERRET_T_BOTH\" \"$TERRET_T_REQUEST\"";

  g_test_summary ("The environment is the host's, with the env setting layered over it "
                  "and the request's env over that.");

  g_setenv ("TERRET_T_INHERITED", "inherited", TRUE);
  g_setenv ("TERRET_T_BOTH", "inherited", TRUE);

  g_object_set (executor, "env", setting_env, NULL);
  request = new_request (command);
  terret_request_setenv (request, "TERRET_T_BOTH", "request");
  terret_request_setenv (request, "TERRET_T_REQUEST", "a=b c");
  result = run_ok (executor, request);
  terret_test_assert_bytes_str (terret_result_get_stdout (result),
                                "inherited|from setting|request|a=b c");
  g_clear_object (&result);

  /* Without the request's overlay, the setting's value shows. */
  result = run_command_ok (executor, command);
  terret_test_assert_bytes_str (terret_result_get_stdout (result),
                                "inherited|from setting|setting|");

  g_unsetenv ("TERRET_T_INHERITED");
  g_unsetenv ("TERRET_T_BOTH");
}

static void
test_env_invalid (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretRequest) request = new_request ("true");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  const char *bad_request[] = { "NO_EQUALS_SIGN", NULL };
  const char *bad_setting[] = { "=value", NULL };

  g_test_summary ("An env entry that is not VARIABLE=value is an error naming it.");

  terret_request_set_env (request, bad_request);
  result = terret_test_run (executor, request, &error);
  g_assert_null (result);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST);
  g_assert_nonnull (strstr (error->message, "NO_EQUALS_SIGN"));
  g_clear_error (&error);

  g_object_set (executor, "env", bad_setting, NULL);
  result = terret_test_run_command (executor, "true", &error);
  g_assert_null (result);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG);
  g_assert_nonnull (strstr (error->message, "=value"));
}

static void
test_shell_missing_init (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(GObject) other = NULL;
  g_autoptr(GError) error = NULL;

  g_test_summary ("Without its shell the backend is unavailable: init fails, naming it.");

  other = g_initable_new (G_OBJECT_TYPE (executor), NULL, &error,
                          "shell", "/nonexistent/bash", NULL);
  g_assert_null (other);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "/nonexistent/bash"));
}

static void
test_spawn_failure (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  g_test_summary ("A shell that cannot be started is a failed error naming the cause; "
                  "the host goes on and the next run works.");

  /* A shell setting changed on a live executor governs the next run. */
  g_object_set (executor, "shell", "/nonexistent/bash", NULL);
  result = terret_test_run_command (executor, "true", &error);
  g_assert_null (result);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "/nonexistent/bash"));
  g_clear_error (&error);

  /* Found, but exec fails: a directory is no program. */
  g_object_set (executor, "shell", "/", NULL);
  result = terret_test_run_command (executor, "true", &error);
  g_assert_null (result);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED);
  g_assert_nonnull (strstr (error->message, "Could not run /"));
  g_clear_error (&error);
  g_object_set (executor, "shell", "bash", NULL);

  result = run_command_ok (executor, "exit 7");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 7);
}

typedef struct
{
  Progress progress;
  char *fifo;
  gboolean answered;
} LiveProgress;

/* Answers the command through its FIFO when its first line arrives. The
 * command blocks on the FIFO until then, so it can only finish if the
 * line was delivered while it was still running. */
static void
live_progress_cb (TerretRequest *request,
                  TerretStream   stream,
                  GBytes        *data,
                  gpointer       user_data)
{
  LiveProgress *live = user_data;

  progress_record (&live->progress, stream, data);

  if (!live->answered && stream == TERRET_STREAM_STDOUT)
    {
      int fd;

      live->answered = TRUE;
      terret_test_assert_bytes_str (data, "waiting\n");
      /* Blocks until the command opens the FIFO, which is its next step. */
      fd = open (live->fifo, O_WRONLY | O_CLOEXEC);
      g_assert_cmpint (fd, >=, 0);
      g_assert_cmpint (write (fd, "reply\n", 6), ==, 6);
      g_close (fd, NULL);
    }
}

static void
test_progress_live (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *command = NULL;
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;
  LiveProgress live = { 0 };

  g_test_summary ("Lines reach the progress callback while the command runs: the command "
                  "waits for an answer the callback gives on its first line.");

  live.fifo = g_build_filename (dir, "fifo", NULL);
  g_assert_cmpint (mkfifo (live.fifo, 0600), ==, 0);
  progress_init (&live.progress);

  command = g_strdup_printf ("echo waiting; read line < '%s'; echo \"got $line\"", live.fifo);
  request = new_request (command);
  terret_request_set_progress_func (request, live_progress_cb, &live, NULL);
  result = run_ok (executor, request);

  g_assert_true (live.answered);
  g_assert_false (terret_result_get_timed_out (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "waiting\ngot reply\n");
  g_assert_cmpuint (live.progress.pieces[TERRET_STREAM_STDOUT]->len, ==, 2);
  assert_piece (&live.progress, TERRET_STREAM_STDOUT, 1, "got reply\n", -1);

  progress_clear (&live.progress);
  g_free (live.fifo);
}

static void
test_progress_partial_line (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretRequest) request = new_request ("printf 'one\\ntw'; sleep 0.1; printf 'o\\nthree'");
  g_autoptr(TerretResult) result = NULL;
  g_auto(Progress) progress = { 0 };

  g_test_summary ("A line written in parts is delivered whole; the final line without a "
                  "newline is delivered at end of file, without one.");

  progress_init (&progress);
  terret_request_set_progress_func (request, progress_cb, &progress, NULL);
  result = run_ok (executor, request);

  terret_test_assert_bytes_str (terret_result_get_stdout (result), "one\ntwo\nthree");
  g_assert_cmpuint (progress.pieces[TERRET_STREAM_STDOUT]->len, ==, 3);
  assert_piece (&progress, TERRET_STREAM_STDOUT, 0, "one\n", -1);
  assert_piece (&progress, TERRET_STREAM_STDOUT, 1, "two\n", -1);
  assert_piece (&progress, TERRET_STREAM_STDOUT, 2, "three", -1);
}

static void
test_progress_long_line (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_auto(Progress) progress = { 0 };
  GPtrArray *pieces;
  gsize total = 0;

  g_test_summary ("A line longer than the framing bound goes out in bounded pieces, each "
                  "cut at a character boundary, together the exact bytes.");

  /* One byte of ASCII, then 150000 two-byte characters and no newline:
   * a cut at any even length would split a character. */
  request = new_request ("printf a; yes é | head -c 450000 | tr -d '\\n'");
  progress_init (&progress);
  terret_request_set_progress_func (request, progress_cb, &progress, NULL);
  result = run_ok (executor, request);

  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  g_assert_cmpuint (g_bytes_get_size (terret_result_get_stdout (result)), ==, 300001);
  g_assert_cmpmem (progress.bytes[TERRET_STREAM_STDOUT]->data,
                   progress.bytes[TERRET_STREAM_STDOUT]->len,
                   g_bytes_get_data (terret_result_get_stdout (result), NULL),
                   g_bytes_get_size (terret_result_get_stdout (result)));

  pieces = progress.pieces[TERRET_STREAM_STDOUT];
  g_assert_cmpuint (pieces->len, >, 1);
  for (guint i = 0; i < pieces->len; i++)
    {
      gsize len = 0;
      const char *data = g_bytes_get_data (g_ptr_array_index (pieces, i), &len);

      g_assert_cmpuint (len, <=, 64 * 1024);
      g_assert_true (g_utf8_validate_len (data, len, NULL));
      total += len;
    }
  g_assert_cmpuint (total, ==, 300001);
}

static void
test_capture_seq (void)
{
  guint64 window = 0;
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretResult) result = NULL;
  GBytes *out;
  gsize len = 0;
  const char *data;
  guint64 total = 0;

  g_test_summary ("A large output keeps a bounded tail, cut at a line, ending with the "
                  "last line, and says how much was dropped.");

  for (guint n = 1; n <= 300000; n++)
    total += (guint64)(n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : n < 10000 ? 4 :
                       n < 100000 ? 5 : 6) + 1;

  result = run_command_ok (executor, "seq 1 300000");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);

  out = terret_result_get_stdout (result);
  data = g_bytes_get_data (out, &len);
  /* The default window, and the eviction's slack: a quarter of it, at
   * most 256 KiB. */
  g_object_get (executor, "max-output", &window, NULL);
  g_assert_cmpuint (len, <, window + MIN (window / 4, 256 * 1024));
  g_assert_cmpuint (len, >=, window - 8);
  g_assert_cmpuint (len, >, 7);
  g_assert_cmpmem (data + len - 7, 7, "300000\n", 7);
  /* The kept bytes begin on a line: the line before them was whole. */
  g_assert_true (g_ascii_isdigit (data[0]));
  g_assert_cmpuint (terret_result_get_dropped (result, TERRET_STREAM_STDOUT) + len, ==, total);
  g_assert_cmpuint (terret_result_get_cut_offset (result, TERRET_STREAM_STDOUT), ==, 0);
  g_assert_nonnull (terret_result_get_notice (result));
  g_assert_nonnull (strstr (terret_result_get_notice (result), "stdout"));
  g_assert_nonnull (strstr (terret_result_get_notice (result), "dropped"));
}

static void
test_capture_flood (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_auto(Progress) progress = { 0 };
  const guint8 *data;
  gsize len = 0;
  guint64 dropped;

  g_test_summary ("A command printing without end keeps memory bounded: the capture holds "
                  "max-output plus its eviction slack, and progress frames every byte.");

  g_assert_true (terret_executor_set_setting (executor, "max-output", "4096", &error));
  g_assert_no_error (error);

  request = terret_request_new ("yes");
  terret_request_set_timeout (request, 1.0);
  progress_init (&progress);
  progress.count_only = TRUE;
  terret_request_set_progress_func (request, progress_cb, &progress, NULL);
  result = run_ok (executor, request);

  g_assert_true (terret_result_get_timed_out (result));
  data = g_bytes_get_data (terret_result_get_stdout (result), &len);
  dropped = terret_result_get_dropped (result, TERRET_STREAM_STDOUT);

  /* 4096 bytes kept, plus at most 4096 of slack before an eviction. */
  g_assert_cmpuint (len, >=, 4096);
  g_assert_cmpuint (len, <=, 8192);
  g_assert_cmpuint (dropped, >, 0);
  /* Cut at a line: whole "y\n" lines only. */
  g_assert_cmpuint (len % 2, ==, 0);
  for (gsize i = 0; i < len; i += 2)
    g_assert_cmpmem (data + i, 2, "y\n", 2);
  /* Every byte read was both captured (or counted as dropped) and reported. */
  g_assert_cmpuint (progress.seen[TERRET_STREAM_STDOUT], ==, dropped + len);
  g_assert_cmpuint (progress.largest, ==, 2);
}

static void
test_timeout_partial_output (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;
  const char *notice;
  GPid pid;

  g_test_summary ("A command past its timeout is killed with everything it started; the "
                  "result carries the output so far, timed-out set, no status.");

  request = terret_request_new (PRINT_SESSION "; echo partial >&2; sleep 300 & sleep 300");
  terret_request_set_timeout (request, 0.5);
  result = run_ok (executor, request);

  g_assert_true (terret_result_get_timed_out (result));
  g_assert_false (terret_result_get_exited (result));
  g_assert_cmpint (terret_result_get_term_signal (result), ==, 0);
  terret_test_assert_bytes_str (terret_result_get_stderr (result), "partial\n");
  notice = terret_result_get_notice (result);
  g_assert_nonnull (notice);
  g_assert_nonnull (strstr (notice, "imed out after 0.5s"));
  g_assert_nonnull (strstr (notice, "stopped"));

  pid = parse_pid (terret_result_get_stdout (result));
  assert_session_gone (pid);
}

static void
test_timeout_setting (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  g_test_summary ("A request without a timeout gets the timeout setting's.");

  g_assert_true (terret_executor_set_setting (executor, "timeout", "0.3", &error));
  g_assert_no_error (error);
  result = terret_test_run_command (executor, PRINT_SESSION "; exec sleep 300", &error);
  g_assert_no_error (error);
  g_assert_true (terret_result_get_timed_out (result));
  g_assert_nonnull (strstr (terret_result_get_notice (result), "0.3s"));
  assert_session_gone (parse_pid (terret_result_get_stdout (result)));
}

static void
test_timeout_closed_streams (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;

  g_test_summary ("A command that closed its streams but never exits still ends at the "
                  "timeout.");

  request = terret_request_new (PRINT_SESSION "; exec >&- 2>&-; sleep 300");
  terret_request_set_timeout (request, 0.5);
  result = run_ok (executor, request);

  g_assert_true (terret_result_get_timed_out (result));
  g_assert_false (terret_result_get_exited (result));
  assert_session_gone (parse_pid (terret_result_get_stdout (result)));
}

typedef struct
{
  GCancellable *cancellable;
  GPid pid;
} CancelOnPid;

static void
cancel_on_pid_cb (TerretRequest *request,
                  TerretStream   stream,
                  GBytes        *data,
                  gpointer       user_data)
{
  CancelOnPid *cancel = user_data;

  if (cancel->pid == 0)
    {
      cancel->pid = parse_pid (data);
      g_cancellable_cancel (cancel->cancellable);
    }
}

static void
test_cancel_from_progress (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretRequest) request = new_request (PRINT_SESSION "; sleep 300 & sleep 300");
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_auto(RunWait) wait = { 0 };
  CancelOnPid cancel = { cancellable, 0 };

  g_test_summary ("Cancelling kills the command and everything it started, and the run "
                  "reports G_IO_ERROR_CANCELLED.");

  terret_request_set_progress_func (request, cancel_on_pid_cb, &cancel, NULL);
  run_wait_start (executor, request, cancellable, &wait);
  run_wait_finish (&wait);

  g_assert_null (wait.result);
  g_assert_error (wait.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  assert_session_gone (cancel.pid);
}

static gboolean
cancel_cb (gpointer user_data)
{
  g_cancellable_cancel (user_data);
  return G_SOURCE_REMOVE;
}

static void
test_cancel_quiet (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretRequest) request = new_request ("exec sleep 300");
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_auto(RunWait) wait = { 0 };

  g_test_summary ("A command that prints nothing still stops at once when cancelled: the "
                  "cancellable wakes the run, no output is needed.");

  run_wait_start (executor, request, cancellable, &wait);
  g_timeout_add (100, cancel_cb, cancellable);
  run_wait_finish (&wait);

  g_assert_null (wait.result);
  g_assert_error (wait.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
}

static void
test_cancel_before (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *marker = g_build_filename (dir, "ran", NULL);
  g_autofree char *command = g_strdup_printf ("touch '%s'", marker);
  g_autoptr(TerretRequest) request = new_request (command);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  g_test_summary ("A run whose cancellable is already cancelled spawns nothing.");

  g_cancellable_cancel (cancellable);
  result = terret_executor_run (executor, request, cancellable, &error);
  g_assert_null (result);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_false (g_file_test (marker, G_FILE_TEST_EXISTS));
}

static void
test_background_grandchild (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretResult) result = NULL;

  g_test_summary ("A background process holding the pipes does not hold the run: after "
                  "bash exits and a short drain the group is killed, and bash's status "
                  "and output are returned.");

  /* The guard timeout is far shorter than the sleep: a run held by the
   * sleep would come back timed out. */
  result = run_command_ok (executor, PRINT_SESSION " >&2; sleep 300 & echo done");

  g_assert_false (terret_result_get_timed_out (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "done\n");
  g_assert_nonnull (terret_result_get_notice (result));
  g_assert_nonnull (strstr (terret_result_get_notice (result), "killed"));
  assert_session_gone (parse_pid (terret_result_get_stderr (result)));
}

static void
test_background_detached_output (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretResult) result = NULL;

  g_test_summary ("A background process that let go of the pipes is still killed when "
                  "the command ends: a run leaves nothing behind.");

  result = run_command_ok (executor, PRINT_SESSION "; sleep 300 >/dev/null 2>&1 & exit 4");

  g_assert_false (terret_result_get_timed_out (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 4);
  assert_session_gone (parse_pid (terret_result_get_stdout (result)));
}

static void
test_stdin_dev_null (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretRequest) request = new_request ("cat; echo \"cat=$?\"; readlink /proc/$$/fd/0");
  g_autoptr(TerretResult) result = NULL;
  int pipe_fds[2];
  int saved_stdin;

  g_test_summary ("stdin is /dev/null: a command reading it gets end of file at once, "
                  "never the host's input.");

  /* The host's stdin is a pipe that never ends: a command that inherited
   * it would block until the guard timeout. */
  g_assert_true (g_unix_open_pipe (pipe_fds, FD_CLOEXEC, NULL));
  saved_stdin = dup (STDIN_FILENO);
  g_assert_cmpint (saved_stdin, >=, 0);
  g_assert_cmpint (dup2 (pipe_fds[0], STDIN_FILENO), ==, STDIN_FILENO);

  result = run_ok (executor, request);

  g_assert_cmpint (dup2 (saved_stdin, STDIN_FILENO), ==, STDIN_FILENO);
  g_close (saved_stdin, NULL);
  g_close (pipe_fds[0], NULL);
  g_close (pipe_fds[1], NULL);

  g_assert_false (terret_result_get_timed_out (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "cat=0\n/dev/null\n");
}

static void
test_concurrent (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *fifo = g_build_filename (dir, "fifo", NULL);
  g_autofree char *reader_command = NULL;
  g_autofree char *writer_command = NULL;
  g_autoptr(TerretRequest) reader = NULL;
  g_autoptr(TerretRequest) writer = NULL;
  g_auto(RunWait) reader_wait = { 0 };
  g_auto(RunWait) writer_wait = { 0 };

  g_test_summary ("Runs in the same session are in flight together on one context: each "
                  "of these two needs the other to finish.");

  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  reader_command = g_strdup_printf ("read x < '%s'; echo \"reader got $x\"", fifo);
  writer_command = g_strdup_printf ("echo hello > '%s'; echo written", fifo);
  reader = new_request (reader_command);
  writer = new_request (writer_command);

  run_wait_start (executor, reader, NULL, &reader_wait);
  run_wait_start (executor, writer, NULL, &writer_wait);
  run_wait_finish (&reader_wait);
  run_wait_finish (&writer_wait);

  g_assert_no_error (reader_wait.error);
  g_assert_no_error (writer_wait.error);
  g_assert_false (terret_result_get_timed_out (reader_wait.result));
  g_assert_false (terret_result_get_timed_out (writer_wait.result));
  terret_test_assert_bytes_str (terret_result_get_stdout (reader_wait.result), "reader got hello\n");
  terret_test_assert_bytes_str (terret_result_get_stdout (writer_wait.result), "written\n");
}

typedef struct
{
  RunWait wait;
  GPid pid;
} ClosableRun;

static void
record_pid_cb (TerretRequest *request,
               TerretStream   stream,
               GBytes        *data,
               gpointer       user_data)
{
  ClosableRun *run = user_data;

  if (run->pid == 0)
    run->pid = parse_pid (data);
}

static void
closable_run_start (TerretExecutor *executor,
                    const char     *session,
                    ClosableRun    *run)
{
  g_autoptr(TerretRequest) request = new_request (PRINT_SESSION "; sleep 300 & sleep 300");

  terret_request_set_session (request, session);
  terret_request_set_progress_func (request, record_pid_cb, run, NULL);
  run_wait_start (executor, request, NULL, &run->wait);
  while (run->pid == 0)
    g_main_context_iteration (NULL, TRUE);
}

static void
assert_closed (ClosableRun *run)
{
  run_wait_finish (&run->wait);
  g_assert_no_error (run->wait.error);
  g_assert_false (terret_result_get_exited (run->wait.result));
  g_assert_false (terret_result_get_timed_out (run->wait.result));
  g_assert_nonnull (terret_result_get_notice (run->wait.result));
  g_assert_nonnull (strstr (terret_result_get_notice (run->wait.result), "session was closed"));
  assert_session_gone (run->pid);
  run_wait_clear (&run->wait);
}

static void
test_close_session (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  ClosableRun a = { 0 };
  ClosableRun b = { 0 };

  g_test_summary ("Closing a session kills its runs' process groups and leaves other "
                  "sessions' runs alone; closing all kills the rest.");

  closable_run_start (executor, "a", &a);
  closable_run_start (executor, "b", &b);

  terret_executor_close_session (executor, "no such session");
  terret_executor_close_session (executor, "a");
  assert_closed (&a);
  g_assert_false (b.wait.done);
  g_assert_true (terret_test_process_alive (b.pid));

  terret_executor_close_all (executor);
  assert_closed (&b);
}

static void
test_close_dispose (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  ClosableRun run = { 0 };

  g_test_summary ("Disposing the executor ends the runs in flight with it.");

  closable_run_start (executor, TERRET_DEFAULT_SESSION, &run);
  g_object_run_dispose (G_OBJECT (executor));
  assert_closed (&run);
}

/* --- Detach, poll and interrupt ------------------------------------------ */

/* A request whose timeout detaches, in @session. */
static TerretRequest *
new_detaching_request (const char *command,
                       const char *session,
                       double      timeout)
{
  TerretRequest *request = terret_request_new (command);

  terret_request_set_session (request, session);
  terret_request_set_timeout (request, timeout);
  terret_request_set_timeout_action (request, TERRET_TIMEOUT_ACTION_DETACH);
  return request;
}

/* The pid PRINT_SESSION put at the start of @out. */
static GPid
parse_pid_text (GString *out)
{
  g_autoptr(GBytes) bytes = g_bytes_new (out->str, out->len);

  return parse_pid (bytes);
}

static void
append_bytes (GString *out,
              GBytes  *bytes)
{
  gsize len = 0;
  const char *data;

  g_assert_nonnull (bytes);
  data = g_bytes_get_data (bytes, &len);
  g_string_append_len (out, data, len);
}

/* Runs @command detached and checks the run's result; its output goes to
 * @out and @err. */
static void
detach_ok (TerretExecutor *executor,
           const char     *command,
           const char     *session,
           GString        *out,
           GString        *err)
{
  g_autoptr(TerretRequest) request = new_detaching_request (command, session, 0.2);
  g_autoptr(TerretResult) result = run_ok (executor, request);

  g_assert_true (terret_result_get_running (result));
  g_assert_true (terret_result_get_timed_out (result));
  g_assert_false (terret_result_get_exited (result));
  g_assert_cmpint (terret_result_get_term_signal (result), ==, 0);
  g_assert_nonnull (strstr (terret_result_get_notice (result), "Poll session"));
  append_bytes (out, terret_result_get_stdout (result));
  append_bytes (err, terret_result_get_stderr (result));
}

/* Polls @session (sync) until its command ended; returns the last result,
 * the output of every poll appended to @out and @err. Bounded by a count,
 * not the clock. */
static TerretResult *
poll_to_end (TerretExecutor *executor,
             const char     *session,
             GString        *out,
             GString        *err)
{
  for (guint i = 0; i < 1000; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TerretResult) result = terret_executor_poll (executor, session, 10, NULL, &error);

      g_assert_no_error (error);
      append_bytes (out, terret_result_get_stdout (result));
      append_bytes (err, terret_result_get_stderr (result));
      if (!terret_result_get_running (result))
        return g_steal_pointer (&result);
      g_assert_false (terret_result_get_exited (result));
    }

  g_assert_not_reached ();
  return NULL;
}

/* Polls @session until its output so far contains @text. */
static void
poll_until (TerretExecutor *executor,
            const char     *session,
            GString        *out,
            const char     *text)
{
  for (guint i = 0; i < 1000 && strstr (out->str, text) == NULL; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TerretResult) result = terret_executor_poll (executor, session, 10, NULL, &error);

      g_assert_no_error (error);
      g_assert_true (terret_result_get_running (result));
      append_bytes (out, terret_result_get_stdout (result));
    }

  g_assert_nonnull (strstr (out->str, text));
}

static void
assert_poll_error (TerretExecutor *executor,
                   const char     *session,
                   int             code)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretResult) result = terret_executor_poll (executor, session, 0, NULL, &error);

  g_assert_error (error, TERRET_EXEC_ERROR, code);
  g_assert_null (result);
}

static void
assert_run_error (TerretExecutor *executor,
                  TerretRequest  *request,
                  int             code)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretResult) result = terret_test_run (executor, request, &error);

  g_assert_error (error, TERRET_EXEC_ERROR, code);
  g_assert_null (result);
}

/* A detached command is read on the context of whoever asked last, and
 * its end is watched with a pidfd so the watch can move with it. Without
 * pidfd_open (valgrind 3.19 has none) the backend falls back to a GLib
 * child watch, whose status can wait in a source of a context nobody
 * iterates any more (docs/oneshot.md): these tests need the real thing. */
static gboolean
require_pidfd (void)
{
  int fd = pidfd_open (getpid (), 0);

  if (fd < 0)
    {
      g_test_skip ("pidfd_open is not available here (valgrind?); detached commands fall back "
                   "to a child watch that these checks do not cover");
      return FALSE;
    }
  close (fd);
  return TRUE;
}

static void
test_detach_poll (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GString) err = g_string_new (NULL);
  g_autofree char *expected = NULL;
  GPid pid;

  g_test_summary ("A detaching timeout returns the output so far with running set and no "
                  "status; polls return the rest, stdout and stderr apart, then the status; "
                  "the key is then idle.");

  if (!require_pidfd ())
    return;

  detach_ok (executor, PRINT_SESSION "; echo e1 >&2; sleep 1; echo done; echo e2 >&2; exit 4",
             "s", out, err);
  result = poll_to_end (executor, "s", out, err);

  g_assert_false (terret_result_get_running (result));
  g_assert_false (terret_result_get_timed_out (result));
  g_assert_true (terret_result_get_exited (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 4);

  pid = parse_pid_text (out);
  expected = g_strdup_printf ("%d %d\ndone\n", pid, pid);
  g_assert_cmpstr (out->str, ==, expected);
  g_assert_cmpstr (err->str, ==, "e1\ne2\n");
  assert_session_gone (pid);

  assert_poll_error (executor, "s", TERRET_EXEC_ERROR_INVALID_REQUEST);
  g_clear_object (&result);
  result = run_command_ok (executor, "echo again");
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "again\n");
}

static void
test_detach_utf8 (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GString) err = g_string_new (NULL);

  g_test_summary ("A character whose bytes straddle the detach leads the next stretch "
                  "instead of being split between two results.");

  if (!require_pidfd ())
    return;

  /* "é" is C3 A9: the run detaches between its two bytes, each stretch
   * is whole characters, and together they are the output. */
  detach_ok (executor, "printf 'a\\303'; sleep 1; printf '\\251b'", "s", out, err);
  g_assert_true (g_utf8_validate (out->str, out->len, NULL));
  for (guint i = 0; i < 1000; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GString) piece = g_string_new (NULL);

      result = terret_executor_poll (executor, "s", 10, NULL, &error);
      g_assert_no_error (error);
      append_bytes (piece, terret_result_get_stdout (result));
      g_assert_true (g_utf8_validate (piece->str, piece->len, NULL));
      g_string_append_len (out, piece->str, piece->len);
      if (!terret_result_get_running (result))
        break;
      g_clear_object (&result);
    }
  g_assert_cmpstr (out->str, ==, "a\303\251b");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
}

static void
poll_done_cb (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  RunWait *wait = user_data;

  wait->result = terret_executor_poll_finish (TERRET_EXECUTOR (object), result, &wait->error);
  wait->done = TRUE;
}

static void
test_detach_busy (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretRequest) plain = new_request ("echo no");
  g_autoptr(TerretRequest) other = new_request ("echo other");
  g_autoptr(TerretRequest) detaching = new_detaching_request ("sleep 300", "c", GUARD_TIMEOUT);
  g_autoptr(TerretRequest) in_c = new_request ("echo no");
  g_autoptr(TerretRequest) kill_run = new_request ("sleep 300");
  g_autoptr(TerretRequest) detach_d = new_detaching_request ("true", "d", GUARD_TIMEOUT);
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GString) err = g_string_new (NULL);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_auto(RunWait) poll = { 0 };
  g_auto(RunWait) run_c = { 0 };
  g_auto(RunWait) run_d = { 0 };

  g_test_summary ("A key with a detached command refuses runs with BUSY while other keys "
                  "run; a second poll is BUSY; cancelling a poll leaves the command; a run "
                  "that may detach has its key to itself.");

  if (!require_pidfd ())
    return;

  terret_request_set_session (plain, "s");
  terret_request_set_session (other, "t");
  terret_request_set_session (in_c, "c");
  terret_request_set_session (kill_run, "d");

  detach_ok (executor, "echo $$; sleep 300", "s", out, err);
  assert_run_error (executor, plain, TERRET_EXEC_ERROR_BUSY);
  result = run_ok (executor, other);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "other\n");
  g_clear_object (&result);

  /* A poll that waits, then a second one. */
  terret_executor_poll_async (executor, "s", GUARD_TIMEOUT, cancellable, poll_done_cb, &poll);
  assert_poll_error (executor, "s", TERRET_EXEC_ERROR_BUSY);
  g_cancellable_cancel (cancellable);
  run_wait_finish (&poll);
  g_assert_error (poll.error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (poll.result);

  /* The command goes on: a poll returns at once with running set. */
  result = terret_executor_poll (executor, "s", 0, NULL, NULL);
  g_assert_nonnull (result);
  g_assert_true (terret_result_get_running (result));
  g_clear_object (&result);
  assert_run_error (executor, plain, TERRET_EXEC_ERROR_BUSY);

  /* A run that may detach, still in flight: its key is its own. */
  run_wait_start (executor, detaching, NULL, &run_c);
  assert_run_error (executor, in_c, TERRET_EXEC_ERROR_BUSY);
  assert_poll_error (executor, "c", TERRET_EXEC_ERROR_BUSY);

  /* ... and it cannot join a key where runs are in flight. */
  run_wait_start (executor, kill_run, NULL, &run_d);
  assert_run_error (executor, detach_d, TERRET_EXEC_ERROR_BUSY);
  assert_poll_error (executor, "d", TERRET_EXEC_ERROR_INVALID_REQUEST);

  terret_executor_close_session (executor, "c");
  terret_executor_close_session (executor, "d");
  run_wait_finish (&run_c);
  run_wait_finish (&run_d);
  g_assert_no_error (run_c.error);
  g_assert_no_error (run_d.error);
  g_assert_false (terret_result_get_running (run_c.result));

  terret_executor_close_session (executor, "s");
  assert_poll_error (executor, "s", TERRET_EXEC_ERROR_INVALID_REQUEST);
  result = run_ok (executor, plain);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "no\n");
}

/* A command whose trap ends it on SIGINT. The sleep runs in the
 * background, where SIGINT is ignored, and bash waits with `wait`, which
 * a trapped signal interrupts: an interrupt that comes while bash is
 * still starting a foreground sleep would otherwise wait for the sleep to
 * end before the trap runs (a shell's ^C race, not the backend's). */
#define TRAP_INT "trap 'echo caught; exit 7' INT; echo ready; sleep 100 & wait"

static void
test_interrupt_trap (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GString) err = g_string_new (NULL);

  g_test_summary ("An interrupt reaches a detached command as SIGINT; a trap that exits "
                  "is reported by the next poll with its status and output.");

  if (!require_pidfd ())
    return;

  detach_ok (executor, TRAP_INT, "s", out, err);
  poll_until (executor, "s", out, "ready\n");
  g_assert_true (terret_executor_interrupt (executor, "s", NULL));
  result = poll_to_end (executor, "s", out, err);

  g_assert_true (terret_result_get_exited (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 7);
  g_assert_cmpstr (out->str, ==, "ready\ncaught\n");
}

static void
ready_cb (TerretRequest *request,
          TerretStream   stream,
          GBytes        *data,
          gpointer       user_data)
{
  *(gboolean *)user_data = TRUE;
}

static void
test_interrupt_in_flight (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretRequest) request = new_request (TRAP_INT);
  g_auto(RunWait) wait = { 0 };
  gboolean ready = FALSE;

  g_test_summary ("An interrupt reaches a run still in flight; its result carries the end.");

  terret_request_set_progress_func (request, ready_cb, &ready, NULL);
  run_wait_start (executor, request, NULL, &wait);
  while (!ready)
    g_main_context_iteration (NULL, TRUE);

  g_assert_true (terret_executor_interrupt (executor, TERRET_DEFAULT_SESSION, NULL));
  run_wait_finish (&wait);
  g_assert_no_error (wait.error);
  g_assert_cmpint (terret_result_get_exit_status (wait.result), ==, 7);
  terret_test_assert_bytes_str (terret_result_get_stdout (wait.result), "ready\ncaught\n");
}

static void
test_interrupt_escalate (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GString) err = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  GPid pid;

  g_test_summary ("A detached command that ignores the interrupt is killed with its whole "
                  "process group after interrupt-grace; nothing is left.");

  if (!require_pidfd ())
    return;

  g_assert_true (terret_executor_set_setting (executor, "interrupt-grace", "0.2", &error));
  g_assert_no_error (error);
  detach_ok (executor, "trap '' INT; " PRINT_SESSION "; sleep 100 & sleep 100", "s", out, err);
  poll_until (executor, "s", out, "\n");
  pid = parse_pid_text (out);

  g_assert_true (terret_executor_interrupt (executor, "s", &error));
  g_assert_no_error (error);
  result = poll_to_end (executor, "s", out, err);

  g_assert_false (terret_result_get_exited (result));
  g_assert_false (terret_result_get_running (result));
  g_assert_nonnull (strstr (terret_result_get_notice (result), "after it was interrupted"));
  assert_session_gone (pid);
  assert_poll_error (executor, "s", TERRET_EXEC_ERROR_INVALID_REQUEST);
}

static void
test_interactive_idle (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(GBytes) data = g_bytes_new_static ("x\n", 2);
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GString) err = g_string_new (NULL);

  g_test_summary ("Poll and interrupt of an idle key are INVALID_REQUEST; input is never "
                  "supported, stdin being /dev/null.");

  assert_poll_error (executor, "s", TERRET_EXEC_ERROR_INVALID_REQUEST);
  g_assert_false (terret_executor_interrupt (executor, "s", &error));
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST);
  g_clear_error (&error);

  detach_ok (executor, "sleep 300", "s", out, err);
  g_assert_false (terret_executor_send_input (executor, "s", data, &error));
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED);
  terret_executor_close_all (executor);
}

/* Iterates the default main context until process @pid has ended and
 * everything its end makes ready was dispatched. */
static void
iterate_until_gone (GPid pid)
{
  while (!terret_test_process_reaped (pid))
    g_main_context_iteration (NULL, TRUE);
  while (g_main_context_pending (NULL))
    g_main_context_iteration (NULL, FALSE);
}

/* Detaches a command on the default main context; returns its pid,
 * which it writes to a file so that it is known however late it runs. */
static GPid
detach_async (TerretExecutor *executor,
              const char     *session)
{
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *pid_file = g_build_filename (dir, "pid", NULL);
  g_autofree char *quoted = g_shell_quote (pid_file);
  g_autofree char *command = g_strdup_printf ("echo $$ > %s.new && mv %s.new %s; sleep 1; exit 3",
                                              quoted, quoted, quoted);
  g_autoptr(TerretRequest) request = new_detaching_request (command, session, 0.2);
  g_autofree char *text = NULL;
  g_auto(RunWait) wait = { 0 };
  GPid pid;

  run_wait_start (executor, request, NULL, &wait);
  run_wait_finish (&wait);
  g_assert_no_error (wait.error);
  g_assert_true (terret_result_get_running (wait.result));

  while (!g_file_get_contents (pid_file, &text, NULL, NULL))
    g_main_context_iteration (NULL, TRUE);
  pid = (GPid)g_ascii_strtoll (text, NULL, 10);
  g_assert_cmpint (pid, >, 1);
  return pid;
}

static void
test_detach_parked (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(TerretRequest) next = new_request ("echo next");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  g_test_summary ("A detached command that ended with nobody polling: the next poll gets "
                  "its end at once; or the next run drops it and says so.");

  if (!require_pidfd ())
    return;

  iterate_until_gone (detach_async (executor, "a"));
  result = terret_executor_poll (executor, "a", 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_false (terret_result_get_running (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 3);
  g_clear_object (&result);
  assert_poll_error (executor, "a", TERRET_EXEC_ERROR_INVALID_REQUEST);

  iterate_until_gone (detach_async (executor, "b"));
  terret_request_set_session (next, "b");
  result = run_ok (executor, next);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "next\n");
  g_assert_nonnull (strstr (terret_result_get_notice (result), "ended with status 3"));
  assert_poll_error (executor, "b", TERRET_EXEC_ERROR_INVALID_REQUEST);
}

static void
test_detach_close (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GString) err = g_string_new (NULL);
  GPid a, b;

  g_test_summary ("Closing a key, or dropping the executor, kills a detached command with "
                  "everything it started.");

  if (!require_pidfd ())
    return;

  detach_ok (executor, PRINT_SESSION "; sleep 300 & sleep 300", "a", out, err);
  poll_until (executor, "a", out, "\n");
  a = parse_pid_text (out);
  g_string_truncate (out, 0);
  detach_ok (executor, PRINT_SESSION "; sleep 300 & sleep 300", "b", out, err);
  poll_until (executor, "b", out, "\n");
  b = parse_pid_text (out);

  terret_executor_close_session (executor, "a");
  assert_session_gone (a);
  assert_poll_error (executor, "a", TERRET_EXEC_ERROR_INVALID_REQUEST);
  g_assert_true (terret_test_process_alive (b));

  g_clear_object (&executor);
  assert_session_gone (b);
}

static void
test_capture_head_tail (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();

  g_test_summary ("head-tail on each stream apart, each stream's full output in its own "
                  "0600 file, removed when the key is closed unless taken");
  terret_test_check_head_tail (executor, TRUE);
}

static void
test_capture_omitted_errors (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();

  g_test_summary ("a cut result counts the omitted lines and names the first error-looking "
                  "lines among them at their offsets, on each stream, under each capture mode");
  terret_test_check_omitted_errors (executor, TRUE);
}

static void
test_capture_head (void)
{
  g_autoptr(TerretExecutor) executor = new_oneshot ();

  g_test_summary ("A request may keep the head of a one-shot command");
  terret_test_check_capture_mode (executor, TERRET_CAPTURE_MODE_HEAD);
  terret_test_check_capture_mode (executor, TERRET_CAPTURE_MODE_TAIL);
}

int
main (int   argc,
      char *argv[])
{
  terret_test_init (&argc, &argv);

  g_test_add_func ("/oneshot/capabilities", test_capabilities);
  g_test_add_func ("/oneshot/status/exit", test_exit_status);
  g_test_add_func ("/oneshot/status/signal", test_signal);
  g_test_add_func ("/oneshot/output/separate-streams", test_streams_separate);
  g_test_add_func ("/oneshot/output/exact-bytes", test_bytes_exact);
  g_test_add_func ("/oneshot/request/cwd", test_cwd);
  g_test_add_func ("/oneshot/request/cwd-invalid", test_cwd_invalid);
  g_test_add_func ("/oneshot/request/env", test_env);
  g_test_add_func ("/oneshot/request/env-invalid", test_env_invalid);
  g_test_add_func ("/oneshot/spawn/shell-missing-init", test_shell_missing_init);
  g_test_add_func ("/oneshot/spawn/failure", test_spawn_failure);
  g_test_add_func ("/oneshot/progress/live", test_progress_live);
  g_test_add_func ("/oneshot/progress/partial-line", test_progress_partial_line);
  g_test_add_func ("/oneshot/progress/long-line", test_progress_long_line);
  g_test_add_func ("/oneshot/exact/long-command", test_long_command);
  g_test_add_func ("/oneshot/capture/seq-tail", test_capture_seq);
  g_test_add_func ("/oneshot/capture/flood", test_capture_flood);
  g_test_add_func ("/oneshot/timeout/partial-output", test_timeout_partial_output);
  g_test_add_func ("/oneshot/timeout/setting", test_timeout_setting);
  g_test_add_func ("/oneshot/timeout/closed-streams", test_timeout_closed_streams);
  g_test_add_func ("/oneshot/cancel/from-progress", test_cancel_from_progress);
  g_test_add_func ("/oneshot/cancel/quiet", test_cancel_quiet);
  g_test_add_func ("/oneshot/cancel/before-start", test_cancel_before);
  g_test_add_func ("/oneshot/background/grandchild", test_background_grandchild);
  g_test_add_func ("/oneshot/background/detached-output", test_background_detached_output);
  g_test_add_func ("/oneshot/stdin/dev-null", test_stdin_dev_null);
  g_test_add_func ("/oneshot/concurrent", test_concurrent);
  g_test_add_func ("/oneshot/close/session", test_close_session);
  g_test_add_func ("/oneshot/close/dispose", test_close_dispose);
  g_test_add_func ("/oneshot/interactive/detach-poll", test_detach_poll);
  g_test_add_func ("/oneshot/interactive/detach-utf8", test_detach_utf8);
  g_test_add_func ("/oneshot/interactive/busy", test_detach_busy);
  g_test_add_func ("/oneshot/interactive/interrupt-trap", test_interrupt_trap);
  g_test_add_func ("/oneshot/interactive/interrupt-in-flight", test_interrupt_in_flight);
  g_test_add_func ("/oneshot/interactive/interrupt-escalate", test_interrupt_escalate);
  g_test_add_func ("/oneshot/interactive/idle", test_interactive_idle);
  g_test_add_func ("/oneshot/interactive/parked", test_detach_parked);
  g_test_add_func ("/oneshot/interactive/close", test_detach_close);
  g_test_add_func ("/oneshot/capture/head-tail", test_capture_head_tail);
  g_test_add_func ("/oneshot/capture/omitted-errors", test_capture_omitted_errors);
  g_test_add_func ("/oneshot/capture/head", test_capture_head);

  return g_test_run ();
}
