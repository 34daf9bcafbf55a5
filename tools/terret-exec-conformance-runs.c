/* terret-exec-conformance-runs.c: the contract of a run: output, status,
 * timeouts, cancellation, the cap, sessions, requests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <signal.h>
#include <string.h>

#include "terret-exec-conformance-util.h"

static void
test_capabilities (void)
{
  g_autoptr(TerretExecutor) executor = kit_new_executor ();

  g_test_summary ("The executor is the backend asked for and declares stable capabilities.");

  g_assert_cmpstr (terret_executor_get_name (executor), ==, kit.backend);
  g_assert_cmpuint (terret_executor_get_capabilities (executor), ==, kit.caps);
  if ((kit.caps & TERRET_CAPABILITY_RUNS_COMMANDS) == 0)
    g_assert_cmpuint (kit.caps & (TERRET_CAPABILITY_PERSISTENT_SESSIONS |
                                  TERRET_CAPABILITY_PROGRESS |
                                  TERRET_CAPABILITY_SESSION_PID), ==, 0);
}

static void
test_noshell (void)
{
  g_autoptr(TerretExecutor) executor = kit_new_executor ();
  g_autoptr(TerretRequest) request = kit_new_request ("echo hello");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  AsyncWait wait = { 0 };

  g_test_summary ("A backend that does not run commands refuses every run with "
                  "no-shell or unavailable, synchronously and asynchronously.");

  if ((kit.caps & TERRET_CAPABILITY_RUNS_COMMANDS) != 0)
    {
      g_test_skip ("the backend declares TERRET_CAPABILITY_RUNS_COMMANDS");
      return;
    }

  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_null (result);
  g_assert_nonnull (error);
  g_assert_true (g_error_matches (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NO_SHELL) ||
                 g_error_matches (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE));
  g_assert_nonnull (error->message);
  g_assert_cmpstr (error->message, !=, "");
  g_clear_error (&error);

  terret_request_set_session (request, OTHER_SESSION);
  terret_executor_run_async (executor, request, NULL, kit_async_done, &wait);
  result = kit_async_finish (executor, &wait, &error);
  g_assert_null (result);
  g_assert_true (g_error_matches (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NO_SHELL) ||
                 g_error_matches (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE));

  /* Closing what never ran is harmless. */
  terret_executor_close_session (executor, TERRET_DEFAULT_SESSION);
  terret_executor_close_all (executor);
}

static void
test_output_exact (void)
{
  g_autoptr(TerretExecutor) executor = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("Output is the bytes the command wrote: no newline invented, "
                  "invalid UTF-8 and carriage returns kept as they are.");

  executor = kit_new_executor ();
  kit_assert_exits (executor, "printf 'no newline'", 0, "no newline", -1);
  kit_assert_exits (executor, "printf 'two\\nlines\\n'", 0, "two\nlines\n", -1);
  kit_assert_exits (executor, "printf 'a\\377\\376b\\200\\303'", 0, "a\377\376b\200\303", -1);
  kit_assert_exits (executor, "printf 'a\\r\\nb\\rc\\r'", 0, "a\r\nb\rc\r", -1);
  kit_assert_exits (executor, "printf 'nul\\000byte'", 0, "nul\0byte", 8);
  kit_assert_exits (executor, "true", 0, "", 0);
}

static void
test_status (void)
{
  g_autoptr(TerretExecutor) executor = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("Exit statuses 0, 3 and 255 are reported as they are.");

  executor = kit_new_executor ();
  kit_assert_exits (executor, "true", 0, "", 0);
  kit_assert_exits (executor, "echo three; (exit 3)", 3, "three\n", -1);
  kit_assert_exits (executor, "(exit 255)", 255, "", 0);
  kit_assert_exits (executor, "false", 1, "", 0);
}

static void
test_status_signal (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autofree char *out = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("A shell killed under its command reports no exit status (never an "
                  "invented one), but the signal or a notice; the output before is "
                  "kept, and the next run works.");

  executor = kit_new_executor ();
  result = kit_run (executor, "echo before; kill -KILL $$");
  g_assert_false (terret_result_get_exited (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, -1);
  g_assert_false (terret_result_get_timed_out (result));
  g_assert_true (terret_result_get_term_signal (result) == SIGKILL ||
                 terret_result_get_notice (result) != NULL);
  out = kit_bytes_to_string (terret_result_get_stdout (result));
  g_assert_true (g_str_has_prefix (out, "before\n"));
  g_clear_object (&result);

  kit_assert_exits (executor, "echo after", 0, "after\n", -1);
}

static void
test_notice_plain (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("A run where nothing unexpected happened carries no notice.");

  executor = kit_new_executor ();
  /* The first run of a session may say the session started; the second
   * has nothing to say. */
  g_clear_object (&result);
  result = kit_run (executor, "true");
  g_clear_object (&result);
  result = kit_run (executor, "echo plain");
  kit_assert_bytes (terret_result_get_stdout (result), "plain\n", -1);
  g_assert_null (terret_result_get_notice (result));
}

static void
assert_timed_out (TerretResult *result)
{
  g_autofree char *out = kit_bytes_to_string (terret_result_get_stdout (result));

  g_assert_true (terret_result_get_timed_out (result));
  g_assert_false (terret_result_get_exited (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, -1);
  g_assert_cmpint (terret_result_get_term_signal (result), ==, 0);
  g_assert_nonnull (terret_result_get_notice (result));
  g_assert_true (g_str_has_prefix (out, "partial\n"));
  g_assert_null (strstr (out, "never"));
}

static void
test_timeout_partial (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("A command past its timeout is stopped: timed out, no status, a "
                  "notice, the output so far; the next run works.");

  executor = kit_new_executor ();
  request = terret_request_new ("echo partial; sleep 30; echo never");
  terret_request_set_timeout (request, 0.5);
  result = kit_run_request (executor, request);
  assert_timed_out (result);
  g_clear_object (&result);

  kit_assert_exits (executor, "echo next", 0, "next\n", -1);
}

static void
test_timeout_graceful (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autofree char *out = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("A timeout stops the command gracefully: a program that ignores the "
                  "interrupt hears SIGTERM within the grace, and what its handler prints is "
                  "in the result; the next run works.");

  executor = kit_new_executor ();
  request = kit_new_request ("( trap '' INT; trap 'echo cleanup; exit 4' TERM; echo started; "
                             "while :; do sleep 0.1; done )");
  terret_request_set_timeout (request, 2);
  terret_request_set_stop_grace (request, 4);
  result = kit_run_request (executor, request);
  g_assert_true (terret_result_get_timed_out (result));
  out = kit_bytes_to_string (terret_result_get_stdout (result));
  g_assert_nonnull (strstr (out, "started\n"));
  g_assert_nonnull (strstr (out, "cleanup\n"));
  g_assert_cmpint (terret_result_get_ended_by (result), ==, TERRET_STOP_SIGNAL_TERMINATE);
  g_assert_cmpfloat (terret_result_get_stop_time (result), <, 4 + 1);
  g_clear_object (&result);

  kit_assert_exits (executor, "echo next", 0, "next\n", -1);
}

static void
test_timeout_setting (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("A request without a timeout gets the backend's timeout setting.");

  executor = kit_new_executor ();
  if (!kit_has_setting (executor, "timeout"))
    {
      g_test_skip ("the backend has no timeout setting");
      return;
    }

  kit_set_setting (executor, "timeout", "0.5");
  request = terret_request_new ("echo partial; sleep 30; echo never");
  result = kit_run_request (executor, request);
  assert_timed_out (result);
}

static void
test_busy (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) slow = kit_new_request ("sleep 0.5; echo slow");
  g_autoptr(TerretRequest) fast = kit_new_request ("echo fast");
  g_autoptr(TerretRequest) other = kit_new_request ("echo other");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  AsyncWait slow_wait = { 0 };
  AsyncWait fast_wait = { 0 };
  AsyncWait other_wait = { 0 };

  REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS | TERRET_CAPABILITY_PERSISTENT_SESSIONS);
  g_test_summary ("A second run on a session with a run in flight fails busy, without "
                  "disturbing the first; another session is not held up.");

  executor = kit_new_executor ();
  terret_request_set_session (other, OTHER_SESSION);
  terret_executor_run_async (executor, slow, NULL, kit_async_done, &slow_wait);
  terret_executor_run_async (executor, fast, NULL, kit_async_done, &fast_wait);
  terret_executor_run_async (executor, other, NULL, kit_async_done, &other_wait);

  result = kit_async_finish (executor, &fast_wait, &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY);
  g_assert_null (result);
  g_clear_error (&error);

  result = kit_async_finish (executor, &other_wait, &error);
  g_assert_no_error (error);
  kit_assert_bytes (terret_result_get_stdout (result), "other\n", -1);
  g_clear_object (&result);

  result = kit_async_finish (executor, &slow_wait, &error);
  g_assert_no_error (error);
  kit_assert_bytes (terret_result_get_stdout (result), "slow\n", -1);
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
}

static gboolean
cancel_cb (gpointer user_data)
{
  g_cancellable_cancel (user_data);

  return G_SOURCE_REMOVE;
}

typedef struct
{
  GCancellable *cancellable;
  gboolean scheduled;
} CancelOnOutput;

static void
cancel_on_output (TerretRequest *request,
                  TerretStream   stream,
                  GBytes        *data,
                  gpointer       user_data)
{
  CancelOnOutput *cancel = user_data;

  /* Once the command is known to run, cancel from the main loop. */
  if (!cancel->scheduled)
    {
      cancel->scheduled = TRUE;
      g_timeout_add_full (G_PRIORITY_DEFAULT, 50, cancel_cb,
                          g_object_ref (cancel->cancellable), g_object_unref);
    }
}

static void
test_cancel (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = kit_new_request ("echo started; sleep 30; echo never");
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  CancelOnOutput cancel = { cancellable, FALSE };
  AsyncWait wait = { 0 };

  REQUIRE_COMMANDS ();
  g_test_summary ("Cancelling a running command ends it with G_IO_ERROR_CANCELLED; "
                  "the next run on the session works.");

  executor = kit_new_executor ();
  if ((kit.caps & TERRET_CAPABILITY_PROGRESS) != 0)
    terret_request_set_progress_func (request, cancel_on_output, &cancel, NULL);
  else
    g_timeout_add_full (G_PRIORITY_DEFAULT, 300, cancel_cb,
                        g_object_ref (cancellable), g_object_unref);

  terret_executor_run_async (executor, request, cancellable, kit_async_done, &wait);
  result = kit_async_finish (executor, &wait, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (result);
  g_assert_true (g_cancellable_is_cancelled (cancellable));

  kit_assert_exits (executor, "echo again", 0, "again\n", -1);
}

static void
test_cancel_graceful (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  CancelOnOutput cancel = { cancellable, FALSE };
  AsyncWait wait = { 0 };
  TerretResult *kept;
  gsize len = 0;
  const char *out;

  REQUIRE_COMMANDS ();
  REQUIRE_CAPS (TERRET_CAPABILITY_PROGRESS);
  g_test_summary ("A cancel stops the command gracefully: what its interrupt handler prints is "
                  "kept with the cancellation, and the interrupt ended it; nothing is left.");

  /* The trap is set before the first line, which is what cancels. */
  request = kit_new_request ("( trap 'echo summary; exit 3' INT; echo started; "
                             "while :; do sleep 0.1; done )");
  terret_request_set_stop_grace (request, 10);
  executor = kit_new_executor ();
  terret_request_set_progress_func (request, cancel_on_output, &cancel, NULL);
  terret_executor_run_async (executor, request, cancellable, kit_async_done, &wait);
  result = kit_async_finish (executor, &wait, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (result);

  kept = terret_request_get_cancelled_result (request);
  g_assert_nonnull (kept);
  out = g_bytes_get_data (terret_result_get_stdout (kept), &len);
  g_assert_nonnull (g_strstr_len (out, len, "summary"));
  g_assert_cmpint (terret_result_get_ended_by (kept), ==, TERRET_STOP_SIGNAL_INTERRUPT);
  g_assert_cmpfloat (terret_result_get_stop_time (kept), <, 10);

  kit_assert_exits (executor, "echo again", 0, "again\n", -1);
}

/* Cancels as soon as the command said it runs. */
static void
cancel_at_once (TerretRequest *request,
                TerretStream   stream,
                GBytes        *data,
                gpointer       user_data)
{
  g_cancellable_cancel (user_data);
}

static void
test_cancel_then_run (void)
{
  g_autoptr(TerretExecutor) executor = NULL;

  REQUIRE_COMMANDS ();
  REQUIRE_CAPS (TERRET_CAPABILITY_PROGRESS);
  g_test_summary ("A run that follows a cancel at once, before the cancelled run answered, "
                  "runs: never busy, 10 rounds.");

  executor = kit_new_executor ();
  for (guint round = 0; round < 10; round++)
    {
      g_autoptr(TerretRequest) slow = kit_new_request ("echo go; sleep 30");
      g_autoptr(TerretRequest) next = kit_new_request ("echo next");
      g_autoptr(GCancellable) cancellable = g_cancellable_new ();
      g_autoptr(TerretResult) result = NULL;
      g_autoptr(GError) error = NULL;
      AsyncWait cancelled = { 0 };
      AsyncWait after = { 0 };

      terret_request_set_progress_func (slow, cancel_at_once, g_object_ref (cancellable),
                                        g_object_unref);
      terret_executor_run_async (executor, slow, cancellable, kit_async_done, &cancelled);
      while (!g_cancellable_is_cancelled (cancellable) && cancelled.result == NULL)
        g_main_context_iteration (NULL, TRUE);
      terret_executor_run_async (executor, next, NULL, kit_async_done, &after);

      result = kit_async_finish (executor, &cancelled, &error);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
      g_clear_error (&error);
      result = kit_async_finish (executor, &after, &error);
      g_assert_no_error (error);
      kit_assert_bytes (terret_result_get_stdout (result), "next\n", -1);
    }
}

static void
test_cancel_before (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = kit_new_request ("echo never");
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("A run whose cancellable is already cancelled fails cancelled.");

  executor = kit_new_executor ();
  g_cancellable_cancel (cancellable);
  result = terret_executor_run (executor, request, cancellable, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (result);
  g_clear_error (&error);

  kit_assert_exits (executor, "echo fine", 0, "fine\n", -1);
}

/* The expected output of the cap check: @lines lines of 32 euro signs,
 * three bytes each. */
#define EURO "\342\202\254"
#define CAP_LINE_CHARS 32
#define CAP_LINE_BYTES (CAP_LINE_CHARS * 3 + 1)

static void
test_cap_utf8 (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GString) expected = g_string_new (NULL);
  g_autofree char *command = NULL;
  gboolean capped;
  guint lines;
  const char *kept;
  gsize kept_len = 0;
  guint64 dropped;
  gsize cut;

  REQUIRE_COMMANDS ();
  g_test_summary ("Past the output cap (1000 bytes where the backend has a max-output "
                  "setting) the kept bytes are a head and/or tail of the output, the "
                  "dropped count adds up, no UTF-8 character is split, and a notice "
                  "says so.");

  executor = kit_new_executor ();
  capped = kit_has_setting (executor, "max-output");
  if (capped)
    kit_set_setting (executor, "max-output", "1000");

  /* Without a cap setting, far more than any sensible fixed window. */
  lines = capped ? 2000 : 40000;
  for (guint i = 0; i < lines; i++)
    {
      for (guint c = 0; c < CAP_LINE_CHARS; c++)
        g_string_append (expected, EURO);
      g_string_append_c (expected, '\n');
    }
  command = g_strdup_printf ("l=$(printf '\\342\\202\\254%%.0s' $(seq %u)); "
                             "yes \"$l\" | head -n %u",
                             CAP_LINE_CHARS, lines);

  result = kit_run (executor, command);
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  kept = g_bytes_get_data (terret_result_get_stdout (result), &kept_len);
  dropped = terret_result_get_dropped (result, TERRET_STREAM_STDOUT);
  cut = terret_result_get_cut_offset (result, TERRET_STREAM_STDOUT);

  g_assert_cmpuint (kept_len + dropped, ==, expected->len);
  if (capped)
    {
      /* Backends may hold some slack past the cap (a tail capture cuts
       * at a line), so only "most of it was dropped" is universal. */
      g_assert_cmpuint (dropped, >, 0);
      g_assert_cmpuint (kept_len, <, expected->len / 4);
    }

  if (dropped == 0)
    {
      g_assert_cmpmem (kept, kept_len, expected->str, expected->len);
      return;
    }

  g_assert_nonnull (terret_result_get_notice (result));
  g_assert_cmpuint (cut, <=, kept_len);
  /* The kept bytes are the output's first @cut bytes and its last
   * kept_len - cut; each part holds whole characters only. */
  g_assert_cmpmem (kept, cut, expected->str, cut);
  g_assert_cmpmem (kept + cut, kept_len - cut,
                   expected->str + expected->len - (kept_len - cut), kept_len - cut);
  g_assert_true (g_utf8_validate (kept, cut, NULL));
  g_assert_true (g_utf8_validate (kept + cut, kept_len - cut, NULL));
}

static void
test_session_persistence (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;

  REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS | TERRET_CAPABILITY_PERSISTENT_SESSIONS);
  g_test_summary ("The working directory, variables and functions persist from one run "
                  "of a session to the next, and sessions are apart.");

  executor = kit_new_executor ();
  kit_assert_exits (executor, "cd /tmp && export TERRET_CONFORMANCE_X=persisted && "
                    "f () { echo \"function $1\"; }", 0, "", 0);
  kit_assert_exits (executor, "pwd; printf '%s\\n' \"$TERRET_CONFORMANCE_X\"; f ok", 0,
                    "/tmp\npersisted\nfunction ok\n", -1);
  kit_assert_exits (executor, "cd /", 0, "", 0);
  kit_assert_exits (executor, "pwd", 0, "/\n", -1);

  result = kit_run_in (executor, OTHER_SESSION, "printf '%s\\n' \"${TERRET_CONFORMANCE_X-unset}\"");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  kit_assert_bytes (terret_result_get_stdout (result), "unset\n", -1);
}

static void
test_session_restart (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;

  REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS | TERRET_CAPABILITY_PERSISTENT_SESSIONS);
  g_test_summary ("A session whose shell exits reports bash's own status (or none, where the "
                  "backend cannot know it; never an invented one) and a notice, and the next "
                  "run gets a fresh shell without the old state.");

  executor = kit_new_executor ();
  kit_assert_exits (executor, "export TERRET_CONFORMANCE_X=old", 0, "", 0);

  result = kit_run (executor, "exit 3");
  g_assert_true (!terret_result_get_exited (result) || terret_result_get_exit_status (result) == 3);
  g_assert_false (terret_result_get_timed_out (result));
  g_assert_nonnull (terret_result_get_notice (result));
  g_clear_object (&result);

  result = kit_run (executor, "printf '%s\\n' \"${TERRET_CONFORMANCE_X-unset}\"");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  kit_assert_bytes (terret_result_get_stdout (result), "unset\n", -1);
}

static void
test_stderr (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("stderr is captured apart where the backend declares it, and merged "
                  "into stdout (stderr NULL) where it does not.");

  executor = kit_new_executor ();
  result = kit_run (executor, "printf out; printf err >&2; printf more");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  if ((kit.caps & TERRET_CAPABILITY_SEPARATE_STDERR) != 0)
    {
      kit_assert_bytes (terret_result_get_stdout (result), "outmore", -1);
      kit_assert_bytes (terret_result_get_stderr (result), "err", -1);
    }
  else
    {
      kit_assert_bytes (terret_result_get_stdout (result), "outerrmore", -1);
      g_assert_null (terret_result_get_stderr (result));
    }
}

static void
collect_progress (TerretRequest *request,
                  TerretStream   stream,
                  GBytes        *data,
                  gpointer       user_data)
{
  GByteArray **collected = user_data;
  gsize len = 0;
  const guint8 *bytes = g_bytes_get_data (data, &len);

  g_assert_cmpint (stream, <=, TERRET_STREAM_STDERR);
  g_byte_array_append (collected[stream], bytes, len);
}

static void
test_progress (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = kit_new_request ("printf abc; sleep 0.2; printf def");
  g_autoptr(GByteArray) out = g_byte_array_new ();
  g_autoptr(GByteArray) err = g_byte_array_new ();
  GByteArray *collected[] = { out, err };
  g_autoptr(TerretResult) result = NULL;
  AsyncWait wait = { 0 };
  g_autoptr(GError) error = NULL;

  REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS | TERRET_CAPABILITY_PROGRESS);
  g_test_summary ("Progress delivers the output as it comes, on the caller's context, "
                  "and its pieces add up to the result's output.");

  executor = kit_new_executor ();
  terret_request_set_progress_func (request, collect_progress, collected, NULL);
  terret_executor_run_async (executor, request, NULL, kit_async_done, &wait);
  result = kit_async_finish (executor, &wait, &error);
  g_assert_no_error (error);
  kit_assert_bytes (terret_result_get_stdout (result), "abcdef", -1);
  g_assert_cmpmem (out->data, out->len, "abcdef", 6);
  g_assert_cmpuint (err->len, ==, 0);
}

static void
test_request_cwd (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = kit_new_request ("pwd");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("A request's cwd is honoured where declared, and refused as not "
                  "supported where not.");

  executor = kit_new_executor ();
  terret_request_set_cwd (request, "/");
  result = terret_executor_run (executor, request, NULL, &error);
  if ((kit.caps & TERRET_CAPABILITY_REQUEST_CWD) != 0)
    {
      g_assert_no_error (error);
      kit_assert_bytes (terret_result_get_stdout (result), "/\n", -1);
    }
  else
    {
      g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED);
      g_assert_null (result);
    }
}

static void
test_request_env (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = kit_new_request ("printf '%s' \"$TERRET_CONFORMANCE_ENV\"");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("A request's environment is honoured where declared, and refused as "
                  "not supported where not.");

  executor = kit_new_executor ();
  terret_request_setenv (request, "TERRET_CONFORMANCE_ENV", "from request");
  result = terret_executor_run (executor, request, NULL, &error);
  if ((kit.caps & TERRET_CAPABILITY_REQUEST_ENV) != 0)
    {
      g_assert_no_error (error);
      kit_assert_bytes (terret_result_get_stdout (result), "from request", -1);
    }
  else
    {
      g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED);
      g_assert_null (result);
    }
}

static void
test_reports_cwd (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;

  REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS | TERRET_CAPABILITY_REPORTS_CWD);
  g_test_summary ("Results carry the session's working directory after the run.");

  executor = kit_new_executor ();
  result = kit_run (executor, "cd /tmp");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  g_assert_cmpstr (terret_result_get_cwd (result), ==, "/tmp");
}

/* The checks of a run, in the order they report. */
void
conformance_add_run_checks (void)
{
  g_test_add_func ("/conformance/capabilities", test_capabilities);
  g_test_add_func ("/conformance/noshell/refuses", test_noshell);
  g_test_add_func ("/conformance/output/exact", test_output_exact);
  g_test_add_func ("/conformance/status/exit", test_status);
  g_test_add_func ("/conformance/status/signal", test_status_signal);
  g_test_add_func ("/conformance/notice/plain", test_notice_plain);
  g_test_add_func ("/conformance/timeout/partial-output", test_timeout_partial);
  g_test_add_func ("/conformance/timeout/setting", test_timeout_setting);
  g_test_add_func ("/conformance/timeout/graceful", test_timeout_graceful);
  g_test_add_func ("/conformance/busy", test_busy);
  g_test_add_func ("/conformance/cancel/running", test_cancel);
  g_test_add_func ("/conformance/cancel/before-start", test_cancel_before);
  g_test_add_func ("/conformance/cancel/graceful", test_cancel_graceful);
  g_test_add_func ("/conformance/cancel/then-run", test_cancel_then_run);
  g_test_add_func ("/conformance/cap/utf8", test_cap_utf8);
  g_test_add_func ("/conformance/session/persistence", test_session_persistence);
  g_test_add_func ("/conformance/session/restart", test_session_restart);
  g_test_add_func ("/conformance/output/stderr", test_stderr);
  g_test_add_func ("/conformance/progress", test_progress);
  g_test_add_func ("/conformance/request/cwd", test_request_cwd);
  g_test_add_func ("/conformance/request/env", test_request_env);
  g_test_add_func ("/conformance/reports-cwd", test_reports_cwd);
}
