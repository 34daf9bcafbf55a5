/* test-pty.c: the pty backend, with real bash on real terminals
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "terret-test-shell-state.h"
#include "terret-test-utils.h"

static TerretExecutor *
new_executor (void)
{
  g_autoptr(GError) error = NULL;
  TerretExecutor *executor = terret_executor_new ("pty", &error);

  g_assert_no_error (error);
  g_assert_nonnull (executor);
  return executor;
}

static char *
bytes_to_string (GBytes *bytes)
{
  gsize len;
  const char *data = g_bytes_get_data (bytes, &len);

  return g_strndup (data, len);
}

/* Waits, without a timing assertion, until nothing is left in @sid: a
 * SIGKILLed process may take a moment to leave the process table. */
static void
assert_session_gone (GPid sid)
{
  for (guint i = 0; i < 500 && terret_test_count_session_members (sid) > 0; i++)
    g_usleep (10 * 1000);
  g_assert_cmpuint (terret_test_count_session_members (sid), ==, 0);
}

/* --- Exactness -------------------------------------------------------- */

static void
test_exact_basic (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();

  terret_test_assert_terminal_run (executor, "printf 'no newline'", 0, "no newline");
  terret_test_assert_terminal_run (executor, "printf 'a\\rb\\r'", 0, "a\rb\r");
  terret_test_assert_terminal_run (executor, "echo one; echo two >&2", 0, "one\ntwo\n");
  terret_test_assert_terminal_run (executor, "false", 1, "");
  terret_test_assert_terminal_run (executor, "(exit 255)", 255, "");
  terret_test_assert_terminal_run (executor, "", 0, "");
  terret_test_assert_terminal_run (executor, "printf '%s\\n' \"$TERM $PAGER $GIT_PAGER $MANPAGER\"", 0,
                                   "dumb cat cat cat\n");
  /* A host that ignores SIGPIPE must not hand that to the shell. */
  terret_test_assert_terminal_run (executor, "yes | head -n 1", 0, "y\n");
}

static void
test_exact_job_line (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretResult) result = terret_test_run_ok (executor, "sleep 0.1 & wait");
  g_autofree char *out = bytes_to_string (terret_result_get_stdout (result));

  /* The shell's own line is reported, not hidden. */
  g_assert_true (g_regex_match_simple ("^\\[1\\] [0-9]+\n$", out, 0, 0));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
}

static void
test_exact_syntax_error (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  const char *commands[] = { "echo \"unclosed", "if true", "echo 'a", "( echo", "echo done \\" };

  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      /* A long timeout: the run must end by itself, with bash's status. */
      g_autoptr(TerretResult) result = terret_test_run_in (executor, TERRET_DEFAULT_SESSION, commands[i], 60);
      g_autofree char *out = bytes_to_string (terret_result_get_stdout (result));

      g_assert_false (terret_result_get_timed_out (result));
      if (i < 4)
        {
          g_assert_cmpint (terret_result_get_exit_status (result), ==, 2);
          g_assert_nonnull (strstr (out, "unexpected"));
        }
    }
  terret_test_assert_terminal_run (executor, "echo fine", 0, "fine\n");
}

static void
test_exact_long_command (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(GString) command = g_string_new ("echo ");
  g_autoptr(GString) expected = g_string_new (NULL);

  for (guint i = 0; i < 20000; i++)
    g_string_append_c (expected, 'a' + i % 26);
  g_string_append (command, expected->str);
  g_string_append_c (expected, '\n');

  terret_test_assert_terminal_run (executor, command->str, 0, expected->str);
}

static void
test_exact_multiline (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();

  terret_test_assert_terminal_run (executor, "cat <<'EOF'\nline one\n  $HOME stays\nEOF\necho done", 0,
                                   "line one\n  $HOME stays\ndone\n");
  terret_test_assert_terminal_run (executor, "for i in 1 2 3\ndo\n  echo $i\ndone", 0, "1\n2\n3\n");
  terret_test_assert_terminal_run (executor, "f() {\n  echo \"in f: $1\"\n}\nf x", 0, "in f: x\n");
  terret_test_assert_terminal_run (executor, "f y", 0, "in f: y\n");
}

static void
test_exact_control_bytes (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();

  /* Raw, a 0x03 would be a SIGINT and 0x1a a SIGTSTP; 0x04 an EOF. */
  terret_test_assert_terminal_run (executor, "printf '%s' '\x03\x1a\x04\x1c\x7f\xc3\xa9' | od -An -tx1", 0,
                                   " 03 1a 04 1c 7f c3 a9\n");
  terret_test_assert_terminal_run (executor, "echo 'it'\"'\"'s' \\\\ ! \"!x\"", 0, "it's \\ ! !x\n");
}

/* --- Persistence ------------------------------------------------------ */

static void
test_session_persistence (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *cd = g_strdup_printf ("cd '%s'; export TERRET_FOO=bar; X=local", dir);
  g_autofree char *expected = g_strdup_printf ("%s bar local\n", dir);
  g_autoptr(TerretResult) first = terret_test_run_ok (executor, cd);
  g_autoptr(TerretResult) other = NULL;

  g_assert_cmpstr (terret_result_get_cwd (first), ==, dir);
  terret_test_assert_terminal_run (executor, "echo \"$PWD $TERRET_FOO $X\"", 0, expected);

  /* Another key is another shell. */
  other = terret_test_run_in (executor, "other", "echo \"$TERRET_FOO\"", 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (other), "\n");
  g_assert_cmpint (terret_executor_get_session_pid (executor, "other"), !=,
                   terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION));
}

static void
test_session_pid (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretResult) result = NULL;
  g_autofree char *expected = NULL;
  GPid pid;

  g_assert_cmpint (terret_executor_get_session_pid (executor, "none"), ==, 0);
  g_assert_true (terret_executor_get_capabilities (executor) & TERRET_CAPABILITY_SESSION_PID);

  result = terret_test_run_ok (executor, "echo $$");
  pid = terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION);
  g_assert_cmpint (pid, >, 0);
  expected = g_strdup_printf ("%d\n", pid);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), expected);
}

static void
test_cwd_newline (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autofree char *base = terret_test_make_tmpdir ();
  g_autofree char *dir = g_build_filename (base, "a\nb;0\x01", NULL);
  g_autoptr(TerretResult) result = NULL;

  g_assert_cmpint (g_mkdir (dir, 0700), ==, 0);
  {
    g_autofree char *command = g_strdup_printf ("cd '%s'", dir);

    result = terret_test_run_ok (executor, command);
  }
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  g_assert_cmpstr (terret_result_get_cwd (result), ==, dir);
}

/* --- Forgery ---------------------------------------------------------- */

static void
test_forgery_printf_function (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();

  terret_test_assert_terminal_run (executor, "printf() { echo intercepted; }; alias printf='echo aliased'", 0, "");
  terret_test_assert_terminal_run (executor, "echo still; (exit 3)", 3, "still\n");
}

static void
test_forgery_debug_trap (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretResult) result = NULL;
  g_autofree char *out = NULL;

  g_test_summary ("A DEBUG trap fires for the command's own commands, as at a terminal, "
                  "never for the session's, and the status is the command's.");

  /* Set in one run, it does not fire for that run's own harness either. */
  terret_test_assert_terminal_run (executor, "trap 'echo \"[$BASH_COMMAND]\"' DEBUG", 0, "");

  result = terret_test_run_ok (executor, "echo hi; (exit 4)");
  out = bytes_to_string (terret_result_get_stdout (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 4);
  g_assert_cmpstr (out, ==, "[echo hi]\nhi\n");
  g_clear_object (&result);

  result = terret_test_run_ok (executor, "trap - DEBUG");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  terret_test_assert_terminal_run (executor, "echo clean", 0, "clean\n");
}

static void
test_forgery_history (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autofree char *home = terret_test_make_tmpdir ();
  g_autofree char *histfile = g_build_filename (home, ".bash_history", NULL);
  g_autofree char *env = g_strdup_printf ("HOME=%s", home);
  const char *envv[] = { env, NULL };

  g_object_set (executor, "env", envv, NULL);
  terret_test_assert_terminal_run (executor, "echo one", 0, "one\n");
  terret_test_assert_terminal_run (executor, "history; fc -l 2>/dev/null; echo \"[$HISTFILE]\"", 0, "[]\n");
  terret_executor_close_all (executor);

  /* A hangup is when bash saves history; it must have nowhere to. */
  terret_test_assert_terminal_run (executor, "echo two", 0, "two\n");
  {
    g_autoptr(TerretResult) result = terret_test_run_ok (executor, "kill -HUP $$");

    g_assert_false (terret_result_get_exited (result));
  }
  g_assert_false (g_file_test (histfile, G_FILE_TEST_EXISTS));
}

static void
test_shell_state (gconstpointer data)
{
  g_autoptr(TerretExecutor) executor = new_executor ();

  terret_test_shell_state_check (executor, GPOINTER_TO_UINT (data));
}

/* --- Stdin readers and the terminal ----------------------------------- */

static void
test_stdin_readers (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  const char *readers[] = { "read x; echo \"got $x\"", "cat", "head -c 1" };
  g_autoptr(GError) error = NULL;

  /* Stopped as soon as it waits, so the next run finds the session free. */
  g_assert_true (terret_executor_set_setting (executor, "on-input", "fail", &error));
  g_assert_no_error (error);
  for (guint i = 0; i < G_N_ELEMENTS (readers); i++)
    {
      g_autoptr(TerretResult) result = terret_test_run_in (executor, TERRET_DEFAULT_SESSION, readers[i], 60);

      /* The reader saw none of the protocol: it waited for input. */
      g_assert_cmpint (terret_result_get_clock (result), ==, TERRET_CLOCK_INPUT);
      g_assert_false (terret_result_get_exited (result));
      terret_test_assert_bytes_str (terret_result_get_stdout (result), "");
      terret_test_assert_terminal_run (executor, "echo next", 0, "next\n");
    }
}

static void
test_stty_echo (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();

  terret_test_assert_terminal_run (executor, "stty echo icanon onlcr ixon", 0, "");
  terret_test_assert_terminal_run (executor, "echo after", 0, "after\n");
  terret_test_assert_terminal_run (executor, "printf 'x\\ny\\n'", 0, "x\ny\n");
}

/* --- Caps ------------------------------------------------------------- */

static void
assert_capped (TerretExecutor *executor,
               const char     *command,
               const char     *expected,
               gssize          expected_len,
               guint64         dropped)
{
  g_autoptr(TerretResult) result = terret_test_run_ok (executor, command);

  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  terret_test_assert_bytes_eq (terret_result_get_stdout (result), expected, expected_len);
  g_assert_cmpuint (terret_result_get_dropped (result, TERRET_STREAM_STDOUT), ==, dropped);
  if (dropped > 0)
    {
      g_assert_nonnull (terret_result_get_notice (result));
      g_assert_cmpuint (terret_result_get_cut_offset (result, TERRET_STREAM_STDOUT), ==,
                        g_bytes_get_size (terret_result_get_stdout (result)));
    }
  else
    g_assert_null (terret_result_get_notice (result));
}

static void
test_cap_around_limit (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  const guint limit = 100;

  g_object_set (executor, "max-output", (guint64)limit, NULL);

  /* Every length around the limit, including those where the marker
   * begins inside the kept bytes and straddles the cap. */
  for (guint n = limit - 40; n <= limit + 40; n++)
    {
      g_autofree char *command = g_strdup_printf ("head -c %u /dev/zero | tr '\\0' x", n);
      g_autofree char *expected = g_strnfill (MIN (n, limit), 'x');

      assert_capped (executor, command, expected, -1, n > limit ? n - limit : 0);
    }
}

static void
test_cap_utf8 (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autofree char *xs = g_strnfill (99, 'x');
  g_autofree char *with_ff = g_strconcat (xs, "\xff", NULL);

  g_object_set (executor, "max-output", (guint64)100, NULL);

  /* 99 + é (2 bytes) + 3: the cut at 100 would split é, so 99 are kept. */
  assert_capped (executor, "head -c 99 /dev/zero | tr '\\0' x; printf '\\303\\251yyy'",
                 xs, -1, 5);
  /* Invalid bytes stay as written: 99 + FF FE, cut at 100. */
  assert_capped (executor, "head -c 99 /dev/zero | tr '\\0' x; printf '\\377\\376'",
                 with_ff, -1, 1);
  /* Within the limit, invalid bytes and a trailing lead byte are output. */
  assert_capped (executor, "printf 'a\\377\\303'", "a\xff\xc3", -1, 0);
}

static void
test_cap_huge (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretResult) result = NULL;
  const guint64 total = 5 * 1000 * 1000 + 1;
  gsize len;
  const guint8 *data;

  /* The default cap; the status of a huge command is never lost. */
  result = terret_test_run_ok (executor, "head -c 5000000 /dev/zero | tr '\\0' x; echo; (exit 7)");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 7);
  data = g_bytes_get_data (terret_result_get_stdout (result), &len);
  g_assert_cmpuint (len, ==, 1 << 20);
  g_assert_cmpuint (terret_result_get_dropped (result, TERRET_STREAM_STDOUT), ==, total - len);
  g_assert_true (data[0] == 'x' && data[len - 1] == 'x');
  g_assert_nonnull (strstr (terret_result_get_notice (result), "1048576"));

  /* No unread byte is charged to the next run. */
  terret_test_assert_terminal_run (executor, "echo next", 0, "next\n");
}

/* --- Between runs ----------------------------------------------------- */

static void
test_background_output_not_charged (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretResult) first = NULL;

  first = terret_test_run_ok (executor, "(sleep 0.2; echo late; echo later) &");
  g_assert_cmpint (terret_result_get_exit_status (first), ==, 0);
  g_usleep (600 * 1000);
  terret_test_assert_terminal_run (executor, "echo now", 0, "now\n");
}

static void
test_stale_session (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretResult) result = NULL;
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *cd = g_strdup_printf ("cd '%s'", dir);
  GPid pid;

  g_clear_object (&result);
  result = terret_test_run_ok (executor, cd);
  pid = terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION);
  g_assert_cmpint (kill (pid, SIGKILL), ==, 0);
  g_clear_object (&result);

  /* Wait until it is dead (a zombie), so the next run meets a dead shell. */
  while (terret_test_process_alive (pid))
    g_usleep (10 * 1000);

  result = terret_test_run_ok (executor, "echo fresh; pwd");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  g_assert_nonnull (terret_result_get_notice (result));
  g_assert_nonnull (strstr (terret_result_get_notice (result), "gone"));
  g_assert_cmpstr (terret_result_get_cwd (result), !=, dir);
  g_assert_cmpint (terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION), !=, pid);
  assert_session_gone (pid);
}

/* --- Timeout, death, cancellation ------------------------------------- */

static void
test_timeout (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretResult) result = NULL;
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *cd = g_strdup_printf ("cd '%s'", dir);
  GPid pid;

  g_clear_object (&result);
  result = terret_test_run_ok (executor, cd);
  pid = terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION);
  g_clear_object (&result);

  result = terret_test_run_in (executor, TERRET_DEFAULT_SESSION,
                               "echo partial; sleep 30 & sleep 30; echo never", 0.5);
  g_assert_true (terret_result_get_timed_out (result));
  g_assert_false (terret_result_get_exited (result));
  g_assert_nonnull (terret_result_get_notice (result));
  {
    g_autofree char *out = bytes_to_string (terret_result_get_stdout (result));

    g_assert_true (g_str_has_prefix (out, "partial\n"));
    g_assert_null (strstr (out, "never"));
  }
  assert_session_gone (pid);
  g_clear_object (&result);

  /* A working, fresh session next. */
  result = terret_test_run_ok (executor, "echo again");
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "again\n");
  g_assert_cmpstr (terret_result_get_cwd (result), !=, dir);
}

static void
test_timeout_setting (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretResult) result = NULL;

  terret_executor_set_setting (executor, "timeout", "0.3", &error);
  g_assert_no_error (error);
  result = terret_test_run_ok (executor, "sleep 30");
  g_assert_true (terret_result_get_timed_out (result));
}

static void
test_shell_death (void)
{
  const char *deaths[] = { "exit", "exit 3", "exec true", "kill -9 $$", "echo bye; exit",
                           "sleep 100 & exit", "set -e; false" };
  /* How bash ended: its status, or (negative) the signal that killed it. */
  const int ends[] = { 0, 3, 0, -9, 0, 0, 1 };

  g_test_summary ("A shell that ends under a command is a result with bash's own status "
                  "(or signal) and a notice; the next run gets a fresh shell, and nothing "
                  "of the old one is left.");

  for (guint i = 0; i < G_N_ELEMENTS (deaths); i++)
    {
      g_autoptr(TerretExecutor) executor = new_executor ();
      g_autofree char *dir = terret_test_make_tmpdir ();
      g_autofree char *cd = g_strdup_printf ("cd '%s'", dir);
      g_autoptr(TerretResult) result = NULL;
      GPid pid;

      result = terret_test_run_ok (executor, cd);
      pid = terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION);
      g_clear_object (&result);

      result = terret_test_run_ok (executor, deaths[i]);
      if (ends[i] >= 0)
        {
          g_assert_true (terret_result_get_exited (result));
          g_assert_cmpint (terret_result_get_exit_status (result), ==, ends[i]);
        }
      else
        {
          g_assert_false (terret_result_get_exited (result));
          g_assert_cmpint (terret_result_get_term_signal (result), ==, -ends[i]);
        }
      g_assert_false (terret_result_get_timed_out (result));
      g_assert_nonnull (strstr (terret_result_get_notice (result), "fresh session"));
      /* What was written before the end is kept (an interactive bash
       * then says "exit" itself). */
      if (g_str_has_prefix (deaths[i], "echo bye"))
        {
          g_autofree char *out = bytes_to_string (terret_result_get_stdout (result));

          g_assert_true (g_str_has_prefix (out, "bye\n"));
        }
      assert_session_gone (pid);
      g_clear_object (&result);

      result = terret_test_run_ok (executor, "echo back");
      terret_test_assert_bytes_str (terret_result_get_stdout (result), "back\n");
      g_assert_cmpstr (terret_result_get_cwd (result), !=, dir);
    }
}

static gboolean
cancel_later (gpointer user_data)
{
  g_cancellable_cancel (user_data);
  return G_SOURCE_REMOVE;
}

static void
store_result (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  GAsyncResult **out = user_data;

  *out = g_object_ref (result);
}

static void
test_cancel (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretRequest) request = terret_request_new ("echo started; sleep 30");
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GAsyncResult) async_result = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  GPid pid;

  result = terret_test_run_ok (executor, "true");
  pid = terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION);
  g_clear_object (&result);

  terret_executor_run_async (executor, request, cancellable, store_result, &async_result);
  g_timeout_add (200, cancel_later, cancellable);
  while (async_result == NULL)
    g_main_context_iteration (NULL, TRUE);

  result = terret_executor_run_finish (executor, async_result, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (result);
  /* ^C ended it: what it printed is kept, and the session goes on. */
  result = g_object_ref (terret_request_get_cancelled_result (request));
  g_assert_true (g_str_has_prefix (g_bytes_get_data (terret_result_get_stdout (result), NULL),
                                   "started\n"));
  g_assert_cmpint (terret_result_get_ended_by (result), ==, TERRET_STOP_SIGNAL_INTERRUPT);
  g_clear_object (&result);
  g_assert_cmpint (terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION), ==, pid);

  result = terret_test_run_ok (executor, "echo ok");
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "ok\n");
}

static void
test_busy (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretRequest) slow = terret_request_new ("sleep 0.5; echo slow");
  g_autoptr(TerretRequest) fast = terret_request_new ("echo fast");
  g_autoptr(GAsyncResult) slow_result = NULL;
  g_autoptr(GAsyncResult) fast_result = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  terret_executor_run_async (executor, slow, NULL, store_result, &slow_result);
  terret_executor_run_async (executor, fast, NULL, store_result, &fast_result);
  while (slow_result == NULL || fast_result == NULL)
    g_main_context_iteration (NULL, TRUE);

  result = terret_executor_run_finish (executor, fast_result, &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY);
  g_assert_null (result);
  g_clear_error (&error);

  result = terret_executor_run_finish (executor, slow_result, &error);
  g_assert_no_error (error);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "slow\n");
}

/* --- Progress --------------------------------------------------------- */

static void
collect_progress (TerretRequest *request,
                  TerretStream   stream,
                  GBytes        *data,
                  gpointer       user_data)
{
  GByteArray *collected = user_data;
  gsize len;
  const guint8 *bytes = g_bytes_get_data (data, &len);

  g_assert_cmpint (stream, ==, TERRET_STREAM_STDOUT);
  g_byte_array_append (collected, bytes, len);
}

static void
test_progress (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretRequest) request = terret_request_new ("printf abc; sleep 0.2; printf def");
  g_autoptr(GByteArray) collected = g_byte_array_new ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  terret_request_set_progress_func (request, collect_progress, collected, NULL);
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_no_error (error);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "abcdef");
  g_assert_cmpmem (collected->data, collected->len, "abcdef", 6);
}

/* --- Settings --------------------------------------------------------- */

static void
test_hot_reconfigure (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autofree char *a = terret_test_make_tmpdir ();
  g_autofree char *b = terret_test_make_tmpdir ();
  g_autofree char *a_line = g_strdup_printf ("%s\n", a);
  g_autofree char *b_line = g_strdup_printf ("%s\n", b);
  const char *env[] = { "PAGER=less", "TERRET_X=1", NULL };

  g_object_set (executor, "cwd", a, NULL);
  terret_test_assert_terminal_run (executor, "pwd", 0, a_line);

  /* The running shell keeps what it was started with... */
  g_object_set (executor, "cwd", b, "env", env, NULL);
  {
    g_autofree char *expected = g_strconcat (a_line, "cat\n", NULL);

    terret_test_assert_terminal_run (executor, "pwd; echo \"$PAGER$TERRET_X\"", 0, expected);
  }

  /* ...and the next session gets the new settings. */
  terret_executor_close_session (executor, TERRET_DEFAULT_SESSION);
  {
    g_autofree char *expected = g_strconcat (b_line, "less1\n", NULL);

    terret_test_assert_terminal_run (executor, "pwd; echo \"$PAGER$TERRET_X\"", 0, expected);
  }
}

static void
test_unavailable (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *script = g_build_filename (dir, "mute-shell", NULL);
  g_autofree char *pidfile = g_build_filename (dir, "pid", NULL);
  g_autofree char *body = g_strdup_printf ("#!/bin/sh\necho $$ > '%s'\nexec sleep 100\n", pidfile);
  g_autofree char *pid_text = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  GPid pid;

  g_object_set (executor, "shell", "/nonexistent/bash", NULL);
  result = terret_test_run_command (executor, "echo hi", &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE);
  g_assert_null (result);
  g_clear_error (&error);

  /* A shell that starts and never answers is reaped. */
  g_assert_true (g_file_set_contents (script, body, -1, NULL));
  g_assert_cmpint (g_chmod (script, 0755), ==, 0);
  g_object_set (executor, "shell", script, "handshake-timeout", 0.3, NULL);
  result = terret_test_run_command (executor, "echo hi", &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE);
  g_assert_null (result);
  g_clear_error (&error);

  g_assert_true (g_file_get_contents (pidfile, &pid_text, NULL, NULL));
  pid = atoi (pid_text);
  g_assert_cmpint (pid, >, 0);
  g_assert_false (terret_test_process_alive (pid));
  assert_session_gone (pid);

  /* A shell that exits at once. */
  g_object_set (executor, "shell", "false", NULL);
  result = terret_test_run_command (executor, "echo hi", &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE);
  g_clear_error (&error);

  /* A cwd that does not exist. */
  g_object_set (executor, "shell", "bash", "cwd", "/nonexistent/dir", NULL);
  result = terret_test_run_command (executor, "echo hi", &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE);
  g_clear_error (&error);

  g_object_set (executor, "cwd", NULL, NULL);
  terret_test_assert_terminal_run (executor, "echo works", 0, "works\n");
}

/* --- Nothing left behind ---------------------------------------------- */

static void
test_close_session (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretResult) result = NULL;
  GPid pid;

  result = terret_test_run_ok (executor, "sleep 100 & sleep 100 & (trap '' HUP; sleep 100) &");
  pid = terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION);
  g_assert_cmpuint (terret_test_count_session_members (pid), >=, 4);

  terret_executor_close_session (executor, TERRET_DEFAULT_SESSION);
  g_assert_cmpint (terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION), ==, 0);
  assert_session_gone (pid);

  /* Closing a key with no session is fine, and the key can run again. */
  terret_executor_close_session (executor, "never-used");
  terret_test_assert_terminal_run (executor, "echo again", 0, "again\n");
}

static void
test_close_all_and_dispose (void)
{
  TerretExecutor *executor = new_executor ();
  g_autoptr(TerretResult) a = terret_test_run_in (executor, "a", "sleep 100 &", 0);
  g_autoptr(TerretResult) b = terret_test_run_in (executor, "b", "sleep 100 &", 0);
  GPid pid_a = terret_executor_get_session_pid (executor, "a");
  GPid pid_b = terret_executor_get_session_pid (executor, "b");
  g_autoptr(TerretResult) c = NULL;
  GPid pid_c;

  terret_executor_close_all (executor);
  assert_session_gone (pid_a);
  assert_session_gone (pid_b);

  c = terret_test_run_in (executor, "c", "sleep 100 &", 0);
  pid_c = terret_executor_get_session_pid (executor, "c");
  g_assert_cmpuint (terret_test_count_session_members (pid_c), >=, 2);
  g_object_unref (executor);
  assert_session_gone (pid_c);
}

/* --- Concurrency ------------------------------------------------------ */

typedef struct
{
  guint pending;
  GPtrArray *results;
} Many;

static void
many_done (GObject      *object,
           GAsyncResult *async_result,
           gpointer      user_data)
{
  Many *many = user_data;
  g_autoptr(GError) error = NULL;
  TerretResult *result = terret_executor_run_finish (TERRET_EXECUTOR (object), async_result, &error);

  g_assert_no_error (error);
  g_ptr_array_add (many->results, result);
  many->pending--;
}

static void
test_many_sessions (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(GPtrArray) pids = g_ptr_array_new ();
  Many many = { 0, g_ptr_array_new_with_free_func (g_object_unref) };
  const guint n = 100;

  for (guint round = 0; round < 2; round++)
    {
      for (guint i = 0; i < n; i++)
        {
          g_autofree char *key = g_strdup_printf ("s%u", i);
          g_autofree char *command =
            round == 0 ? g_strdup_printf ("X=%u; sleep 0.2; echo $X", i)
                       : g_strdup ("echo $X");
          g_autoptr(TerretRequest) request = terret_request_new (command);

          terret_request_set_session (request, key);
          many.pending++;
          terret_executor_run_async (executor, request, NULL, many_done, &many);
        }
      while (many.pending > 0)
        g_main_context_iteration (NULL, TRUE);

      g_assert_cmpuint (many.results->len, ==, n);
      for (guint i = 0; i < n; i++)
        {
          TerretResult *result = g_ptr_array_index (many.results, i);
          g_autofree char *out = bytes_to_string (terret_result_get_stdout (result));

          g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
          g_assert_true (g_ascii_isdigit (out[0]));
          g_assert_true (g_str_has_suffix (out, "\n"));
        }
      g_ptr_array_set_size (many.results, 0);
    }

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *key = g_strdup_printf ("s%u", i);

      g_ptr_array_add (pids, GINT_TO_POINTER (terret_executor_get_session_pid (executor, key)));
    }
  terret_executor_close_all (executor);
  for (guint i = 0; i < n; i++)
    assert_session_gone (GPOINTER_TO_INT (g_ptr_array_index (pids, i)));

  g_ptr_array_unref (many.results);
}

static gpointer
thread_run (gpointer user_data)
{
  TerretExecutor *executor = user_data;
  g_autoptr(TerretResult) result = terret_test_run_in (executor, "threaded", "export T=from-thread; echo hi", 0);

  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "hi\n");
  return NULL;
}

static void
test_sync_from_thread (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretResult) result = NULL;
  GThread *thread = g_thread_new ("runner", thread_run, executor);

  g_thread_join (thread);

  /* The session outlives the thread that started it. */
  result = terret_test_run_in (executor, "threaded", "echo $T", 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "from-thread\n");
  g_assert_null (terret_result_get_notice (result));
}


/* --- Interactive: input, detach, poll, interrupt ----------------------- */

static TerretResult *
run_detached (TerretExecutor *executor,
              const char     *session,
              const char     *command,
              double          timeout)
{
  g_autoptr(TerretRequest) request = terret_request_new (command);
  g_autoptr(GError) error = NULL;
  TerretResult *result;

  terret_request_set_session (request, session);
  terret_request_set_timeout (request, timeout);
  terret_request_set_timeout_action (request, TERRET_TIMEOUT_ACTION_DETACH);
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (result);
  return result;
}

static void
append_stdout (GString      *out,
               TerretResult *result)
{
  gsize len;
  const char *data = g_bytes_get_data (terret_result_get_stdout (result), &len);

  g_string_append_len (out, data, len);
}

/* Polls @session, collecting its output into @out, until the output
 * holds @needle (or, with NULL, until the command ended). Returns the
 * last poll's result. Bounded by a count, never by the clock. */
static TerretResult *
poll_until (TerretExecutor *executor,
            const char     *session,
            GString        *out,
            const char     *needle)
{
  for (guint i = 0; i < 100; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TerretResult) result = terret_executor_poll (executor, session, 10, NULL, &error);

      g_assert_no_error (error);
      g_assert_nonnull (result);
      append_stdout (out, result);
      if (!terret_result_get_running (result))
        {
          g_assert_null (needle);
          return g_steal_pointer (&result);
        }
      g_assert_false (terret_result_get_exited (result));
      if (needle != NULL && strstr (out->str, needle) != NULL)
        return g_steal_pointer (&result);
    }

  g_assert_not_reached ();
  return NULL;
}

static void
send_text (TerretExecutor *executor,
           const char     *session,
           const char     *text)
{
  g_autoptr(GBytes) data = g_bytes_new (text, strlen (text));
  g_autoptr(GError) error = NULL;

  g_assert_true (terret_executor_send_input (executor, session, data, &error));
  g_assert_no_error (error);
}

static void
test_interactive_caps (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  TerretCapabilities caps = terret_executor_get_capabilities (executor);

  g_assert_true (caps & TERRET_CAPABILITY_INPUT);
  g_assert_true (caps & TERRET_CAPABILITY_INTERRUPT);
  g_assert_true (caps & TERRET_CAPABILITY_POLL);
  g_assert_true (caps & TERRET_CAPABILITY_DETACH);
}

static void
test_interactive_repl (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(TerretResult) last = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autofree char *bc = g_find_program_in_path ("bc");

  if (bc == NULL)
    {
      g_test_skip ("bc is not installed");
      return;
    }

  result = run_detached (executor, "repl", "bc -q", 0.2);
  g_assert_true (terret_result_get_running (result));
  g_assert_true (terret_result_get_timed_out (result));
  g_assert_false (terret_result_get_exited (result));
  g_assert_nonnull (strstr (terret_result_get_notice (result), "Still running"));

  send_text (executor, "repl", "6*7\n");
  g_clear_object (&result);
  result = poll_until (executor, "repl", out, "42\n");
  g_assert_cmpstr (out->str, ==, "42\n");

  g_string_truncate (out, 0);
  send_text (executor, "repl", "x=5\nx+1\nquit\n");
  last = poll_until (executor, "repl", out, NULL);
  g_assert_cmpstr (out->str, ==, "6\n");
  g_assert_true (terret_result_get_exited (last));
  g_assert_cmpint (terret_result_get_exit_status (last), ==, 0);
  g_assert_false (terret_result_get_running (last));

  /* The session is idle again and kept its shell. */
  g_clear_object (&result);
  result = terret_test_run_in (executor, "repl", "echo after", 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "after\n");
}

static void
test_interactive_read_detached (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(TerretResult) last = NULL;
  g_autoptr(GString) out = g_string_new (NULL);

  result = run_detached (executor, "read", "read x; echo \"got:$x\"", 0.2);
  g_assert_true (terret_result_get_running (result));
  append_stdout (out, result);

  send_text (executor, "read", "hello there\n");
  last = poll_until (executor, "read", out, NULL);
  g_assert_cmpstr (out->str, ==, "got:hello there\n");
  g_assert_cmpint (terret_result_get_exit_status (last), ==, 0);

  /* What the command read is a variable of the session's shell now. */
  g_clear_object (&result);
  result = terret_test_run_in (executor, "read", "echo \"$x\"", 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "hello there\n");
}

static void
send_answer (TerretRequest *request,
             const char    *prompt,
             gboolean       secret,
             gboolean       pager,
             gpointer       user_data)
{
  g_assert_null (prompt);
  g_assert_false (secret);
  g_assert_false (pager);
  send_text (user_data, "inflight", "forty-two\n");
}

/* Input reaches a run still in flight, from another call: on-input wait
 * keeps the run waiting, and the request says when it waits. */
static void
test_interactive_read_in_flight (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretRequest) request = terret_request_new ("read x; echo \"[$x]\"");
  g_autoptr(GAsyncResult) async_result = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  g_assert_true (terret_executor_set_setting (executor, "on-input", "wait", &error));
  g_assert_no_error (error);
  terret_request_set_session (request, "inflight");
  terret_request_set_timeout (request, 60);
  g_signal_connect (request, "waiting-for-input", G_CALLBACK (send_answer), executor);
  terret_executor_run_async (executor, request, NULL, store_result, &async_result);
  while (async_result == NULL)
    g_main_context_iteration (NULL, TRUE);

  result = terret_executor_run_finish (executor, async_result, &error);
  g_assert_no_error (error);
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "[forty-two]\n");
}

static void
test_detach_poll_to_completion (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *command = g_strdup_printf ("cd '%s'; echo started; sleep 2; echo done", dir);
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(TerretResult) last = NULL;
  g_autoptr(TerretRequest) busy = terret_request_new ("echo no");
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  GPid pid;

  result = run_detached (executor, "detach", command, 0.5);
  pid = terret_executor_get_session_pid (executor, "detach");
  g_assert_true (terret_result_get_running (result));
  g_assert_false (terret_result_get_exited (result));
  g_assert_null (terret_result_get_cwd (result));
  append_stdout (out, result);

  /* Busy while the command goes on: refused, not queued. */
  terret_request_set_session (busy, "detach");
  g_clear_object (&result);
  result = terret_executor_run (executor, busy, NULL, &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY);
  g_assert_null (result);
  g_clear_error (&error);

  last = poll_until (executor, "detach", out, NULL);
  g_assert_cmpstr (out->str, ==, "started\ndone\n");
  g_assert_true (terret_result_get_exited (last));
  g_assert_cmpint (terret_result_get_exit_status (last), ==, 0);
  g_assert_cmpstr (terret_result_get_cwd (last), ==, dir);
  g_assert_false (terret_result_get_timed_out (last));

  /* Idle again: nothing to poll, and the next run is in the same shell. */
  g_clear_object (&result);
  result = terret_executor_poll (executor, "detach", 0, NULL, &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST);
  g_assert_null (result);
  g_clear_error (&error);

  result = terret_test_run_in (executor, "detach", "pwd", 0);
  g_assert_cmpint (terret_executor_get_session_pid (executor, "detach"), ==, pid);
  g_assert_cmpstr (terret_result_get_cwd (result), ==, dir);
  g_assert_null (terret_result_get_notice (result));

  g_rmdir (dir);
}

static gboolean
set_flag (gpointer user_data)
{
  *(gboolean *)user_data = TRUE;
  return G_SOURCE_REMOVE;
}

static void
test_detach_async_background (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretRequest) request = terret_request_new ("echo a; sleep 0.5; echo b");
  g_autoptr(GAsyncResult) async_result = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(TerretResult) probed = NULL;
  g_autoptr(GError) error = NULL;

  terret_request_set_timeout (request, 0.2);
  terret_request_set_timeout_action (request, TERRET_TIMEOUT_ACTION_DETACH);
  terret_executor_run_async (executor, request, NULL, store_result, &async_result);
  while (async_result == NULL)
    g_main_context_iteration (NULL, TRUE);
  result = terret_executor_run_finish (executor, async_result, &error);
  g_assert_no_error (error);
  g_assert_true (terret_result_get_running (result));

  /* The main context the run started on goes on reading, so the end is
   * seen without a poll and frees the session: a run gets through. */
  for (guint i = 0; i < 200 && probed == NULL; i++)
    {
      g_autoptr(TerretRequest) probe = terret_request_new ("echo probe");
      gboolean fired = FALSE;

      g_timeout_add (50, set_flag, &fired);
      while (!fired)
        g_main_context_iteration (NULL, TRUE);

      probed = terret_executor_run (executor, probe, NULL, &error);
      if (probed == NULL)
        {
          g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY);
          g_clear_error (&error);
        }
    }

  g_assert_nonnull (probed);
  terret_test_assert_bytes_str (terret_result_get_stdout (probed), "probe\n");
  /* Nobody polled the end: the run says it was discarded. */
  g_assert_nonnull (strstr (terret_result_get_notice (probed), "ended with status 0"));
  g_assert_nonnull (strstr (terret_result_get_notice (probed), "discarded"));

  g_clear_object (&result);
  result = terret_executor_poll (executor, TERRET_DEFAULT_SESSION, 0, NULL, &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST);
  g_assert_null (result);
}

static void
test_interrupt_trap_once (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(TerretResult) last = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  GPid pid;

  result = run_detached (executor, "trap",
                         "bash -c 'trap \"trap - INT; c=1; echo caught\" INT; echo ready; "
                         "while :; do sleep 0.05; if [ -n \"$c\" ]; then echo back; c=; fi; done'",
                         0.1);
  pid = terret_executor_get_session_pid (executor, "trap");
  append_stdout (out, result);
  g_clear_object (&result);
  if (strstr (out->str, "ready") == NULL)
    result = poll_until (executor, "trap", out, "ready\n");

  g_assert_true (terret_executor_interrupt (executor, "trap", &error));
  g_assert_no_error (error);
  g_clear_object (&result);
  /* "back" comes once the trap has run and the loop goes on, so the next
   * interrupt finds the default disposition the trap restored. */
  result = poll_until (executor, "trap", out, "back\n");
  g_assert_cmpstr (out->str, ==, "ready\ncaught\nback\n");

  g_assert_true (terret_executor_interrupt (executor, "trap", &error));
  g_assert_no_error (error);
  last = poll_until (executor, "trap", out, NULL);
  g_assert_false (terret_result_get_running (last));
  g_clear_object (&result);
  if (terret_result_get_exited (last))
    {
      /* Ended by the second ^C: interrupted, not killed, so the shell and
       * its state stay. */
      g_assert_cmpint (terret_result_get_exit_status (last), ==, 130);
      result = terret_test_run_in (executor, "trap", "echo still", 0);
      g_assert_cmpint (terret_executor_get_session_pid (executor, "trap"), ==, pid);
      g_assert_null (terret_result_get_notice (result));
    }
  else
    {
      /* A ^C that lands while bash forks the next sleep can be lost the
       * way it is at a terminal; then the escalation ends the loop. */
      g_assert_nonnull (strstr (terret_result_get_notice (last), "interrupted"));
      assert_session_gone (pid);
    }
}

static gboolean
interrupt_inflight (gpointer user_data)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (terret_executor_interrupt (user_data, "inflight", &error));
  g_assert_no_error (error);
  return G_SOURCE_REMOVE;
}

static void
test_interrupt_in_flight (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretRequest) request = terret_request_new ("export KEEP=1; sleep 100; echo never");
  g_autoptr(GAsyncResult) async_result = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  GPid pid;

  result = terret_test_run_in (executor, "inflight", "true", 0);
  pid = terret_executor_get_session_pid (executor, "inflight");
  g_clear_object (&result);

  terret_request_set_session (request, "inflight");
  terret_request_set_timeout (request, 60);
  terret_executor_run_async (executor, request, NULL, store_result, &async_result);
  g_timeout_add (200, interrupt_inflight, executor);
  while (async_result == NULL)
    g_main_context_iteration (NULL, TRUE);

  result = terret_executor_run_finish (executor, async_result, &error);
  g_assert_no_error (error);
  g_assert_true (terret_result_get_exited (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 130);
  g_assert_false (terret_result_get_timed_out (result));
  {
    g_autofree char *text = bytes_to_string (terret_result_get_stdout (result));

    g_assert_null (strstr (text, "never"));
  }

  g_clear_object (&result);
  result = terret_test_run_in (executor, "inflight", "echo $KEEP", 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "1\n");
  g_assert_cmpint (terret_executor_get_session_pid (executor, "inflight"), ==, pid);
}

static void
test_interrupt_escalation (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(TerretResult) last = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  GPid pid;

  g_assert_true (terret_executor_set_setting (executor, "interrupt-grace", "0.3", &error));
  g_assert_no_error (error);

  result = run_detached (executor, "ignore", "trap '' INT; sleep 100", 0.2);
  pid = terret_executor_get_session_pid (executor, "ignore");
  g_assert_cmpint (pid, >, 0);
  g_assert_true (terret_result_get_running (result));

  g_assert_true (terret_executor_interrupt (executor, "ignore", &error));
  g_assert_no_error (error);
  last = poll_until (executor, "ignore", out, NULL);
  g_assert_false (terret_result_get_exited (last));
  g_assert_nonnull (strstr (terret_result_get_notice (last), "killed"));
  g_assert_nonnull (strstr (terret_result_get_notice (last), "fresh session"));
  assert_session_gone (pid);

  /* The next run gets a fresh shell. */
  g_clear_object (&result);
  result = terret_test_run_in (executor, "ignore", "echo fresh", 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "fresh\n");
  g_assert_cmpint (terret_executor_get_session_pid (executor, "ignore"), !=, pid);
}

static void
test_interactive_idle_errors (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GBytes) data = g_bytes_new_static ("x\n", 2);
  g_autoptr(GError) error = NULL;

  /* No session at all. */
  result = terret_executor_poll (executor, "nothing", 0, NULL, &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST);
  g_assert_nonnull (strstr (error->message, "nothing"));
  g_clear_error (&error);

  /* A session with nothing running. */
  result = terret_test_run_in (executor, "idle", "true", 0);
  g_clear_object (&result);
  g_assert_false (terret_executor_send_input (executor, "idle", data, &error));
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST);
  g_clear_error (&error);
  g_assert_false (terret_executor_interrupt (executor, "idle", &error));
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST);
  g_clear_error (&error);
  result = terret_executor_poll (executor, "idle", 0, NULL, &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST);
  g_assert_nonnull (strstr (error->message, "“idle”"));
  g_assert_null (result);
}

static void
test_poll_while_run_in_flight (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretRequest) request = terret_request_new ("sleep 0.3; echo slow");
  g_autoptr(GAsyncResult) async_result = NULL;
  g_autoptr(GAsyncResult) poll_result = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  result = terret_test_run_ok (executor, "true");
  g_clear_object (&result);

  terret_executor_run_async (executor, request, NULL, store_result, &async_result);
  terret_executor_poll_async (executor, TERRET_DEFAULT_SESSION, 5, NULL, store_result, &poll_result);
  while (async_result == NULL || poll_result == NULL)
    g_main_context_iteration (NULL, TRUE);

  result = terret_executor_poll_finish (executor, poll_result, &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY);
  g_assert_null (result);
  g_clear_error (&error);

  result = terret_executor_run_finish (executor, async_result, &error);
  g_assert_no_error (error);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "slow\n");
}

static void
test_detach_close_leaves_nothing (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  GPid pid, other;

  result = run_detached (executor, "closing", "sleep 100 & sleep 100", 0.2);
  g_assert_true (terret_result_get_running (result));
  pid = terret_executor_get_session_pid (executor, "closing");
  g_assert_cmpuint (terret_test_count_session_members (pid), >=, 3);

  terret_executor_close_session (executor, "closing");
  assert_session_gone (pid);

  /* Disposing the executor ends a detached command as well. */
  g_clear_object (&result);
  result = run_detached (executor, "disposed", "sleep 100", 0.2);
  other = terret_executor_get_session_pid (executor, "disposed");
  g_clear_object (&executor);
  assert_session_gone (other);
}

/* The output of a detached command is counted against the cap per
 * stretch, and a stretch never charges a later command. */
static void
test_detach_cap_per_stretch (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(TerretResult) last = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  guint64 dropped = 0;

  g_assert_true (terret_executor_set_setting (executor, "max-output", "100", &error));
  g_assert_no_error (error);

  result = run_detached (executor, "cap", "read go; head -c 1000 /dev/zero | tr '\\0' a; "
                                          "read go; printf end", 0.2);
  g_assert_true (terret_result_get_running (result));
  g_clear_object (&result);

  send_text (executor, "cap", "\n");
  for (guint i = 0; i < 100 && out->len + dropped < 1000; i++)
    {
      g_autoptr(TerretResult) r = terret_executor_poll (executor, "cap", 10, NULL, &error);

      g_assert_no_error (error);
      g_assert_true (terret_result_get_running (r));
      g_assert_cmpuint (g_bytes_get_size (terret_result_get_stdout (r)), <=, 100);
      append_stdout (out, r);
      dropped += terret_result_get_dropped (r, TERRET_STREAM_STDOUT);
    }
  g_assert_cmpuint (out->len + dropped, ==, 1000);

  send_text (executor, "cap", "\n");
  last = poll_until (executor, "cap", g_string_truncate (out, 0), NULL);
  g_assert_cmpstr (out->str, ==, "end");
  g_assert_cmpint (terret_result_get_exit_status (last), ==, 0);

  result = terret_test_run_in (executor, "cap", "echo next", 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "next\n");
}

static void
test_detach_hex_tail (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(TerretResult) last = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  const char *hex = "0123456789abcdef";

  g_test_summary ("Output whose end could begin a sentinel (every hex digit, one of which "
                  "is the first of this run's) reaches a poll without waiting for more");

  result = run_detached (executor, "hex",
                         "for c in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do printf %s $c; read go; done",
                         0.2);
  g_assert_true (terret_result_get_running (result));
  append_stdout (out, result);

  for (guint i = 0; i < 16; i++)
    {
      /* Bounded by a count, not the clock: a held-back digit never comes. */
      for (guint tries = 0; tries < 30 && out->len < i + 1; tries++)
        {
          g_autoptr(GError) error = NULL;
          g_autoptr(TerretResult) r = terret_executor_poll (executor, "hex", 1, NULL, &error);

          g_assert_no_error (error);
          g_assert_true (terret_result_get_running (r));
          append_stdout (out, r);
        }
      g_assert_cmpmem (out->str, out->len, hex, i + 1);
      send_text (executor, "hex", "\n");
    }

  last = poll_until (executor, "hex", out, NULL);
  g_assert_cmpstr (out->str, ==, hex);
  g_assert_cmpint (terret_result_get_exit_status (last), ==, 0);
}

static void
test_capture_head_tail (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();

  g_test_summary ("head-tail keeps both halves of max-output cut on lines, says where the "
                  "omitted span is, and keep-full-output holds every byte in a 0600 file "
                  "removed with its session unless taken");
  terret_test_check_head_tail (executor, FALSE);
}

static void
test_capture_omitted_errors (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();

  g_test_summary ("a cut result counts the omitted lines and names the first error-looking "
                  "lines among them at their offsets, under each capture mode");
  terret_test_check_omitted_errors (executor, FALSE);
}

static void
test_capture_tail (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();

  g_test_summary ("A request may keep the tail on a session, with the cut at 0");
  terret_test_check_capture_mode (executor, TERRET_CAPTURE_MODE_TAIL);
  terret_test_check_capture_mode (executor, TERRET_CAPTURE_MODE_HEAD);
}

int
main (int   argc,
      char *argv[])
{
  terret_test_init (&argc, &argv);

  /* A host that ignores SIGPIPE (many do): the shell must not inherit it. */
  signal (SIGPIPE, SIG_IGN);

  g_test_add_func ("/pty/exact/basic", test_exact_basic);
  g_test_add_func ("/pty/exact/job-line", test_exact_job_line);
  g_test_add_func ("/pty/exact/syntax-error", test_exact_syntax_error);
  g_test_add_func ("/pty/exact/long-command", test_exact_long_command);
  g_test_add_func ("/pty/exact/multiline", test_exact_multiline);
  g_test_add_func ("/pty/exact/control-bytes", test_exact_control_bytes);
  g_test_add_func ("/pty/session/persistence", test_session_persistence);
  g_test_add_func ("/pty/session/pid", test_session_pid);
  g_test_add_func ("/pty/session/cwd-newline", test_cwd_newline);
  g_test_add_func ("/pty/forgery/printf-function", test_forgery_printf_function);
  g_test_add_func ("/pty/forgery/debug-trap", test_forgery_debug_trap);
  g_test_add_func ("/pty/forgery/history", test_forgery_history);
  for (guint i = 0; i < terret_test_shell_state_n_cases (); i++)
    {
      g_autofree char *path = g_strdup_printf ("/pty/state/%s", terret_test_shell_state_name (i));

      g_test_add_data_func (path, GUINT_TO_POINTER (i), test_shell_state);
    }
  g_test_add_func ("/pty/terminal/stdin-readers", test_stdin_readers);
  g_test_add_func ("/pty/terminal/stty-echo", test_stty_echo);
  g_test_add_func ("/pty/cap/around-limit", test_cap_around_limit);
  g_test_add_func ("/pty/cap/utf8", test_cap_utf8);
  g_test_add_func ("/pty/cap/huge", test_cap_huge);
  g_test_add_func ("/pty/between/background-output", test_background_output_not_charged);
  g_test_add_func ("/pty/between/stale-session", test_stale_session);
  g_test_add_func ("/pty/timeout/fresh-session", test_timeout);
  g_test_add_func ("/pty/timeout/setting", test_timeout_setting);
  g_test_add_func ("/pty/death/variants", test_shell_death);
  g_test_add_func ("/pty/cancel", test_cancel);
  g_test_add_func ("/pty/busy", test_busy);
  g_test_add_func ("/pty/progress", test_progress);
  g_test_add_func ("/pty/settings/hot-reconfigure", test_hot_reconfigure);
  g_test_add_func ("/pty/settings/unavailable", test_unavailable);
  g_test_add_func ("/pty/close/session", test_close_session);
  g_test_add_func ("/pty/close/all-and-dispose", test_close_all_and_dispose);
  g_test_add_func ("/pty/concurrency/many-sessions", test_many_sessions);
  g_test_add_func ("/pty/concurrency/sync-from-thread", test_sync_from_thread);
  g_test_add_func ("/pty/interactive/caps", test_interactive_caps);
  g_test_add_func ("/pty/interactive/repl", test_interactive_repl);
  g_test_add_func ("/pty/interactive/read-detached", test_interactive_read_detached);
  g_test_add_func ("/pty/interactive/read-in-flight", test_interactive_read_in_flight);
  g_test_add_func ("/pty/interactive/idle-errors", test_interactive_idle_errors);
  g_test_add_func ("/pty/detach/poll-to-completion", test_detach_poll_to_completion);
  g_test_add_func ("/pty/detach/async-background", test_detach_async_background);
  g_test_add_func ("/pty/detach/poll-while-run-in-flight", test_poll_while_run_in_flight);
  g_test_add_func ("/pty/detach/close-leaves-nothing", test_detach_close_leaves_nothing);
  g_test_add_func ("/pty/detach/cap-per-stretch", test_detach_cap_per_stretch);
  g_test_add_func ("/pty/capture/head-tail", test_capture_head_tail);
  g_test_add_func ("/pty/capture/omitted-errors", test_capture_omitted_errors);
  g_test_add_func ("/pty/capture/tail", test_capture_tail);
  g_test_add_func ("/pty/detach/hex-tail", test_detach_hex_tail);
  g_test_add_func ("/pty/interrupt/trap-once", test_interrupt_trap_once);
  g_test_add_func ("/pty/interrupt/in-flight", test_interrupt_in_flight);
  g_test_add_func ("/pty/interrupt/escalation", test_interrupt_escalation);

  return g_test_run ();
}
