/* terret-exec-conformance-sessions.c: the contract of a session's life: closing
 * it, and the interactive operations on a command still running
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "terret-exec-conformance-util.h"

static void
test_close_session_pid (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;
  GPid pids[2];
  GPid sids[2];
  const char *keys[] = { TERRET_DEFAULT_SESSION, OTHER_SESSION };
  GPid own_sid = getsid (0);

  REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS | TERRET_CAPABILITY_SESSION_PID);
  g_test_summary ("The process carrying a session and everything its commands left "
                  "running are gone once the session is closed, or the executor "
                  "disposed.");

  executor = kit_new_executor ();
  g_assert_cmpint (terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION), ==, 0);

  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      char state;

      result = kit_run_in (executor, keys[i], "sleep 30 >/dev/null 2>&1 & echo started");
      g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
      g_clear_object (&result);

      pids[i] = terret_executor_get_session_pid (executor, keys[i]);
      g_assert_cmpint (pids[i], >, 0);
      g_assert_true (kit_read_stat (pids[i], &state, &sids[i]));
    }

  terret_executor_close_session (executor, TERRET_DEFAULT_SESSION);
  g_assert_cmpint (terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION), ==, 0);
  /* A process that leads no session of its own can only be checked
   * alone. */
  if (sids[0] != own_sid)
    kit_assert_session_gone (sids[0]);
  kit_assert_process_gone (pids[0]);
  g_assert_true (kit_process_alive (pids[1]));

  g_clear_object (&executor);
  if (sids[1] != own_sid)
    kit_assert_session_gone (sids[1]);
  kit_assert_process_gone (pids[1]);
}

static void
test_close_nothing_left (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autofree char *out = NULL;
  g_autofree char *local_boot_id = kit_read_trimmed ("/proc/sys/kernel/random/boot_id");
  g_autofree char *local_pidns = g_file_read_link ("/proc/self/ns/pid", NULL);
  g_auto(GStrv) lines = NULL;
  const char *shell_stat = NULL;
  const char *boot_id = NULL;
  const char *pidns = NULL;
  GPid shell_pid = 0;
  GPid sleep_pid = 0;
  GPid sid = 0;
  char state;

  REQUIRE_COMMANDS ();
  g_test_summary ("After close_all and disposal nothing a command started is left "
                  "running (checked in /proc where the shell runs on this host).");

  executor = kit_new_executor ();
  result = kit_run (executor,
                    "sleep 30 >/dev/null 2>&1 </dev/null & "
                    "printf 'pids %s %s\\n' $$ $!; "
                    "printf 'stat %s\\n' \"$(cat /proc/$$/stat 2>/dev/null)\"; "
                    "printf 'boot %s\\n' \"$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)\"; "
                    "printf 'pidns %s\\n' \"$(readlink /proc/self/ns/pid 2>/dev/null)\"");
  out = kit_bytes_to_string (terret_result_get_stdout (result));
  lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      int a, b;

      g_strchomp (lines[i]);
      if (sscanf (lines[i], "pids %d %d", &a, &b) == 2)
        {
          shell_pid = a;
          sleep_pid = b;
        }
      else if (g_str_has_prefix (lines[i], "stat "))
        shell_stat = lines[i] + 5;
      else if (g_str_has_prefix (lines[i], "boot "))
        boot_id = lines[i] + 5;
      else if (g_str_has_prefix (lines[i], "pidns "))
        pidns = lines[i] + 6;
    }
  g_assert_cmpint (shell_pid, >, 0);
  g_assert_cmpint (sleep_pid, >, 0);
  g_clear_object (&result);

  terret_executor_close_all (executor);
  g_clear_object (&executor);

  /* Same kernel and same pid namespace: the pids are ours to look up. */
  if (local_boot_id == NULL || local_pidns == NULL ||
      g_strcmp0 (boot_id, local_boot_id) != 0 || g_strcmp0 (pidns, local_pidns) != 0)
    {
      g_test_skip ("the shell does not run on this host: its processes cannot be checked");
      return;
    }

  g_assert_nonnull (shell_stat);
  g_assert_true (kit_parse_stat (shell_stat, &state, &sid));
  kit_assert_process_gone (sleep_pid);
  kit_assert_process_gone (shell_pid);
  if (sid != getsid (0))
    kit_assert_session_gone (sid);
}

/* A session's close names what it had to stop: a job that ignores SIGHUP
 * ends by SIGTERM, a setsid one by the SIGHUP the unit sends it. The pids
 * are the shell's own, in its pid namespace, as the unit names them. */
static void
test_close_lists (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GPtrArray) stopped = NULL;
  g_autofree char *out = NULL;
  int a = 0, b = 0;
  guint found = 0;

  REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS | TERRET_CAPABILITY_PERSISTENT_SESSIONS);
  g_test_summary ("close_session_full lists each process the close had to stop: its pid, "
                  "its command line and the signal of the stop that ended it.");

  executor = kit_new_executor ();
  /* Answered once both jobs are what they will be (the first exec'd, the
   * second in a session of its own). */
  result = kit_run (executor,
                    "(trap '' HUP; exec sleep 301) & a=$!; setsid sleep 302 & b=$!; "
                    "until [ \"$(tr '\\0' ' ' </proc/$a/cmdline)\" = 'sleep 301 ' ]; do :; done; "
                    "until read -r _ _ _ _ _ sid _ </proc/$b/stat && [ \"$sid\" = \"$b\" ]; "
                    "do :; done; "
                    "printf 'jobs %s %s\\n' \"$a\" \"$b\"");
  out = kit_bytes_to_string (terret_result_get_stdout (result));
  g_assert_nonnull (strstr (out, "jobs "));
  g_assert_cmpint (sscanf (strstr (out, "jobs "), "jobs %d %d", &a, &b), ==, 2);

  terret_executor_close_session_full (executor, TERRET_DEFAULT_SESSION, &stopped);
  g_assert_nonnull (stopped);
  for (guint i = 0; i < stopped->len; i++)
    {
      TerretStoppedProcess *entry = g_ptr_array_index (stopped, i);

      if (terret_stopped_process_get_pid (entry) == a)
        {
          g_assert_cmpint (terret_stopped_process_get_ended_by (entry), ==,
                           TERRET_STOP_SIGNAL_TERMINATE);
          g_assert_nonnull (strstr (terret_stopped_process_get_command (entry), "sleep 301"));
          found++;
        }
      else if (terret_stopped_process_get_pid (entry) == b)
        {
          g_assert_cmpint (terret_stopped_process_get_ended_by (entry), ==,
                           TERRET_STOP_SIGNAL_HANGUP);
          g_assert_nonnull (strstr (terret_stopped_process_get_command (entry), "sleep 302"));
          found++;
        }
    }
  g_assert_cmpuint (found, ==, 2);
}

/* --- Interactive operations -------------------------------------------- */

/* Polls until the command ended; returns the last result, the stdout of
 * every poll appended to @out. Bounded by a count, not the clock. */
static TerretResult *
poll_to_end (TerretExecutor *executor,
             const char     *session,
             GString        *out)
{
  for (guint i = 0; i < 100; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TerretResult) result = terret_executor_poll (executor, session, 10, NULL, &error);
      gsize len;
      const char *data;

      g_assert_no_error (error);
      data = g_bytes_get_data (terret_result_get_stdout (result), &len);
      g_string_append_len (out, data, len);
      if (!terret_result_get_running (result))
        return g_steal_pointer (&result);
    }

  g_assert_not_reached ();
  return NULL;
}

/* A prompt: the run is handed back at once, running, waiting, with the
 * prompt (and whether it is a secret); the answer takes it to its end. */
static void
check_input_waits (TerretExecutor *executor,
                   const char     *command,
                   const char     *prompt,
                   gboolean        secret,
                   const char     *answer,
                   const char     *expected_end)
{
  g_autoptr(TerretRequest) request = kit_new_request (command);
  g_autoptr(GBytes) data = g_bytes_new (answer, strlen (answer));
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GError) error = NULL;

  result = kit_run_request (executor, request);
  g_assert_true (terret_result_get_running (result));
  g_assert_cmpint (terret_result_get_input_state (result), ==, TERRET_INPUT_STATE_WAITING);
  g_assert_cmpstr (terret_result_get_input_prompt (result), ==, prompt);
  g_assert_cmpint (terret_result_get_input_secret (result), ==, secret);
  g_assert_false (terret_result_get_input_pager (result));
  g_clear_object (&result);

  g_assert_true (terret_executor_send_input (executor, TERRET_DEFAULT_SESSION, data, &error));
  g_assert_no_error (error);
  result = poll_to_end (executor, TERRET_DEFAULT_SESSION, out);
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  g_assert_true (g_str_has_suffix (out->str, expected_end));
}

static void
test_input_waits (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;

  REQUIRE_CAPS (TERRET_CAPABILITY_INPUT | TERRET_CAPABILITY_POLL);
  g_test_summary ("A command waiting for input on its terminal is handed back at once with "
                  "its prompt (on-input report): an apt-style [Y/n], a read -s secret; a "
                  "command that sleeps, or reads a pipe, is not.");

  executor = kit_new_executor ();
  check_input_waits (executor, "echo 'Need to get 1 MB.'; read -p 'Continue? [Y/n] ' a; "
                     "echo \"answer=$a\"", "Continue? [Y/n]", FALSE, "y\n", "answer=y\n");
  check_input_waits (executor, "read -s -p 'Passphrase: ' p; echo; echo \"length=${#p}\"",
                     "Passphrase:", TRUE, "hunter2\n", "length=7\n");

  /* Quiet, but waiting for no input: a false wait would hand it back
   * running. */
  result = kit_run (executor, "sleep 1; (sleep 1; echo piped) | cat; echo done");
  g_assert_false (terret_result_get_running (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
}

static void
test_interactive_unsupported (void)
{
  g_autoptr(TerretExecutor) executor = kit_new_executor ();
  g_autoptr(GBytes) data = g_bytes_new_static ("x\n", 2);
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  g_test_summary ("An interactive operation the backend does not declare fails with "
                  "TERRET_EXEC_ERROR_NOT_SUPPORTED.");

  if ((kit.caps & TERRET_CAPABILITY_INPUT) == 0)
    {
      g_assert_false (terret_executor_send_input (executor, "default", data, &error));
      g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED);
      g_clear_error (&error);
    }
  if ((kit.caps & TERRET_CAPABILITY_INTERRUPT) == 0)
    {
      g_assert_false (terret_executor_interrupt (executor, "default", &error));
      g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED);
      g_clear_error (&error);
    }
  if ((kit.caps & TERRET_CAPABILITY_POLL) == 0)
    {
      result = terret_executor_poll (executor, "default", 0, NULL, &error);
      g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED);
      g_assert_null (result);
      g_clear_error (&error);
    }
  if ((kit.caps & TERRET_CAPABILITY_DETACH) == 0)
    {
      g_autoptr(TerretRequest) request = kit_new_request ("true");

      terret_request_set_timeout_action (request, TERRET_TIMEOUT_ACTION_DETACH);
      result = terret_executor_run (executor, request, NULL, &error);
      g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED);
      g_assert_null (result);
    }
}

static void
test_detach_input_poll (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretRequest) busy = kit_new_request ("echo no");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GBytes) data = g_bytes_new_static ("abc\n", 4);
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GError) error = NULL;

  REQUIRE_CAPS (TERRET_CAPABILITY_DETACH | TERRET_CAPABILITY_POLL);
  g_test_summary ("A detaching timeout returns running with no status; the session is busy; "
                  "input reaches the command (with INPUT); polls collect its output to its "
                  "status.");

  /* Without input the answer comes after a pause that outlasts the timeout. */
  if ((kit.caps & TERRET_CAPABILITY_INPUT) != 0)
    request = kit_new_request ("read x; echo \"[$x]\"");
  else
    request = kit_new_request ("sleep 1; echo '[abc]'");

  executor = kit_new_executor ();
  terret_request_set_timeout (request, 0.3);
  terret_request_set_timeout_action (request, TERRET_TIMEOUT_ACTION_DETACH);
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (terret_result_get_running (result));
  g_assert_false (terret_result_get_exited (result));
  g_clear_object (&result);

  result = terret_executor_run (executor, busy, NULL, &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY);
  g_clear_error (&error);

  if ((kit.caps & TERRET_CAPABILITY_INPUT) != 0)
    {
      g_assert_true (terret_executor_send_input (executor, "default", data, &error));
      g_assert_no_error (error);
    }
  result = poll_to_end (executor, "default", out);
  g_assert_true (terret_result_get_exited (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  g_assert_nonnull (strstr (out->str, "[abc]"));
  g_clear_object (&result);

  result = terret_executor_poll (executor, "default", 0, NULL, &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST);
  g_assert_null (result);
  g_clear_error (&error);

  kit_assert_exits (executor, "echo again", 0, "again\n", -1);
}

static void
test_interrupt_detached (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = kit_new_request ("sleep 100");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GError) error = NULL;

  REQUIRE_CAPS (TERRET_CAPABILITY_DETACH | TERRET_CAPABILITY_POLL | TERRET_CAPABILITY_INTERRUPT);
  g_test_summary ("An interrupt ends a detached command; the session then runs again.");

  executor = kit_new_executor ();
  terret_request_set_timeout (request, 0.3);
  terret_request_set_timeout_action (request, TERRET_TIMEOUT_ACTION_DETACH);
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (terret_result_get_running (result));
  g_clear_object (&result);

  g_assert_true (terret_executor_interrupt (executor, "default", &error));
  g_assert_no_error (error);
  result = poll_to_end (executor, "default", out);
  g_assert_false (terret_result_get_running (result));

  kit_assert_exits (executor, "echo again", 0, "again\n", -1);
}

/* The checks of closing and of interactive operations, in the order they report. */
void
conformance_add_session_checks (void)
{
  g_test_add_func ("/conformance/close/session-pid", test_close_session_pid);
  g_test_add_func ("/conformance/close/nothing-left", test_close_nothing_left);
  g_test_add_func ("/conformance/close/lists", test_close_lists);
  g_test_add_func ("/conformance/interactive/unsupported", test_interactive_unsupported);
  g_test_add_func ("/conformance/interactive/detach-input-poll", test_detach_input_poll);
  g_test_add_func ("/conformance/interactive/interrupt-detached", test_interrupt_detached);
  g_test_add_func ("/conformance/interactive/input-waits", test_input_waits);
}
