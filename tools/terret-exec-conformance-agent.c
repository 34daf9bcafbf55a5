/* terret-exec-conformance-agent.c: what an agent host relies on beyond a
 * run: the list, the three clocks, a request's own cwd and environment,
 * and the statuses of a pipeline
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdio.h>
#include <string.h>

#include "terret-exec-conformance-util.h"

/* A detached command's end, polled for until it comes: the clocks under
 * test end it, the kit's safety deadline bounds the wait. */
static TerretResult *
poll_until_ended (TerretExecutor *executor,
                  const char     *session,
                  GString        *output)
{
  for (;;)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TerretResult) result = terret_executor_poll (executor, session, SAFETY_TIMEOUT,
                                                             NULL, &error);
      GBytes *bytes;

      g_assert_no_error (error);
      bytes = terret_result_get_stdout (result);
      if (output != NULL && bytes != NULL)
        g_string_append_len (output, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));
      if (!terret_result_get_running (result))
        return g_steal_pointer (&result);
    }
}

/* A request that hands its command back: no timeout of the kit's (it is
 * the same clock), a deadline as the safety net instead. */
static TerretRequest *
new_return_request (const char *command,
                    const char *session,
                    double      return_after)
{
  TerretRequest *request = terret_request_new (command);

  terret_request_set_session (request, session);
  terret_request_set_return_after (request, return_after);
  terret_request_set_deadline (request, SAFETY_TIMEOUT);
  return request;
}

static TerretSessionInfo *
find_info (GPtrArray  *infos,
           const char *key)
{
  for (guint i = 0; i < infos->len; i++)
    if (g_str_equal (terret_session_info_get_key (g_ptr_array_index (infos, i)), key))
      return g_ptr_array_index (infos, i);
  return NULL;
}

/* Whether a process of this host runs with exactly @cmdline (its argv
 * joined by NUL bytes), as /proc shows every pid namespace's processes. */
static gboolean
cmdline_running (const char *cmdline,
                 gsize       len)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc", 0, NULL);
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *contents = NULL;
      gsize got = 0;

      if (!g_ascii_isdigit (name[0]))
        continue;
      path = g_build_filename ("/proc", name, "cmdline", NULL);
      if (g_file_get_contents (path, &contents, &got, NULL) && got == len &&
          memcmp (contents, cmdline, len) == 0 && kit_process_alive (atoi (name)))
        return TRUE;
    }
  return FALSE;
}

/* --- list ------------------------------------------------------------- */

static void
test_list (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GPtrArray) infos = NULL;
  g_autoptr(GError) error = NULL;
  TerretSessionInfo *info;
  const char *command = "printf started; sleep 30";

  REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS | TERRET_CAPABILITY_DETACH);
  g_test_summary ("The list names each session and each command left running, with its "
                  "state, command, start and output so far; a backend without it refuses.");

  executor = kit_new_executor ();
  if ((kit.caps & TERRET_CAPABILITY_LIST) == 0)
    {
      infos = terret_executor_list (executor, NULL, &error);
      g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED);
      g_assert_null (infos);
      return;
    }

  g_clear_object (&result);
  result = kit_run_in (executor, OTHER_SESSION, "true");
  request = new_return_request (command, "conformance-listed", 0.5);
  g_clear_object (&result);
  result = kit_run_request (executor, request);
  g_assert_true (terret_result_get_running (result));

  infos = terret_executor_list (executor, NULL, &error);
  g_assert_no_error (error);
  info = find_info (infos, "conformance-listed");
  g_assert_nonnull (info);
  g_assert_cmpint (terret_session_info_get_state (info), ==, TERRET_SESSION_STATE_DETACHED);
  g_assert_cmpstr (terret_session_info_get_command (info), ==, command);
  g_assert_nonnull (terret_session_info_get_started (info));
  /* Kept or not, every byte counts: the detaching result carried these. */
  g_assert_cmpuint (terret_session_info_get_output_bytes (info), >=, strlen ("started"));
  if (kit.caps & TERRET_CAPABILITY_SESSION_PID)
    g_assert_cmpint (terret_session_info_get_pid (info), ==,
                     terret_executor_get_session_pid (executor, "conformance-listed"));

  /* A persistent session stays listed, idle; a one-shot key is only
   * there while something runs in it. */
  info = find_info (infos, OTHER_SESSION);
  if (kit.caps & TERRET_CAPABILITY_PERSISTENT_SESSIONS)
    {
      g_assert_nonnull (info);
      g_assert_cmpint (terret_session_info_get_state (info), ==, TERRET_SESSION_STATE_IDLE);
      g_assert_null (terret_session_info_get_command (info));
    }
  else
    g_assert_null (info);

  /* Sorted by key. */
  for (guint i = 1; i < infos->len; i++)
    g_assert_cmpint (strcmp (terret_session_info_get_key (g_ptr_array_index (infos, i - 1)),
                             terret_session_info_get_key (g_ptr_array_index (infos, i))), <, 0);

  terret_executor_close_session (executor, "conformance-listed");
  g_clear_pointer (&infos, g_ptr_array_unref);
  infos = terret_executor_list (executor, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (find_info (infos, "conformance-listed"));
}

/* --- clocks ------------------------------------------------------------ */

static void
test_return_after (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(TerretResult) end = NULL;
  g_autoptr(GString) rest = g_string_new (NULL);
  g_autoptr(GError) error = NULL;

  REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS | TERRET_CAPABILITY_DETACH |
                TERRET_CAPABILITY_CLOCKS);
  g_test_summary ("return-after hands the output so far back and the command goes on; it "
                  "is one clock with the timeout, and a request naming both is refused.");

  executor = kit_new_executor ();
  request = new_return_request ("printf a; sleep 1; printf b", "conformance-return", 0.2);
  result = kit_run_request (executor, request);
  g_assert_true (terret_result_get_running (result));
  g_assert_cmpint (terret_result_get_clock (result), ==, TERRET_CLOCK_RETURN_AFTER);
  g_assert_false (terret_result_get_stalled (result));
  kit_assert_bytes (terret_result_get_stdout (result), "a", -1);

  end = poll_until_ended (executor, "conformance-return", rest);
  g_assert_cmpint (terret_result_get_exit_status (end), ==, 0);
  g_assert_cmpint (terret_result_get_clock (end), ==, TERRET_CLOCK_NONE);
  g_assert_cmpstr (rest->str, ==, "b");

  g_clear_object (&result);
  terret_request_set_timeout (request, 5);
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST);
  g_assert_null (result);
}

static void
test_deadline_detached (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(TerretResult) end = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *sleeper = g_strdup_printf ("sleep 9%u.5", g_random_int_range (10000, 99999));
  g_autofree char *command = g_strdup_printf ("%s & printf started; wait", sleeper);
  g_autofree char *cmdline = g_strdup_printf ("sleep%c%s", 0, sleeper + strlen ("sleep "));
  gsize cmdline_len = strlen (sleeper) + 1;
  AsyncWait wait = { NULL };

  REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS | TERRET_CAPABILITY_DETACH |
                TERRET_CAPABILITY_CLOCKS);
  g_test_summary ("A deadline ends a command handed back that nobody polls, with everything "
                  "it started; the result that reports it says so.");

  /* On this thread's default context, which keeps running: a detached
   * command is watched where its run was made. */
  executor = kit_new_executor ();
  request = new_return_request (command, "conformance-deadline", 0.3);
  terret_request_set_deadline (request, 1.5);
  terret_executor_run_async (executor, request, NULL, kit_async_done, &wait);
  result = kit_async_finish (executor, &wait, &error);
  g_assert_no_error (error);
  g_assert_true (terret_result_get_running (result));

  /* The probe first: where this host sees the background sleep, it must
   * see it now, or its absence later would prove nothing. */
  for (guint i = 0; i < GONE_WAIT_MS / 10 && !cmdline_running (cmdline, cmdline_len); i++)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (10 * 1000);
    }
  if (cmdline_running (cmdline, cmdline_len))
    {
      for (guint i = 0; i < GONE_WAIT_MS / 10 && cmdline_running (cmdline, cmdline_len); i++)
        {
          g_main_context_iteration (NULL, FALSE);
          g_usleep (10 * 1000);
        }
      g_assert_false (cmdline_running (cmdline, cmdline_len));
    }
  else
    g_test_message ("the command's processes are not visible on this host; only the result "
                    "is checked");

  end = poll_until_ended (executor, "conformance-deadline", NULL);
  g_assert_false (terret_result_get_exited (end));
  g_assert_true (terret_result_get_timed_out (end));
  g_assert_cmpint (terret_result_get_clock (end), ==, TERRET_CLOCK_DEADLINE);
}

static void
test_idle_kill (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = kit_new_request ("printf a; sleep 0.3; printf b; sleep 60");
  g_autoptr(TerretResult) result = NULL;

  REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS | TERRET_CAPABILITY_CLOCKS);
  g_test_summary ("An idle timeout counts from the last byte of output, and ends a command "
                  "that printed nothing for that long.");

  executor = kit_new_executor ();
  terret_request_set_session (request, "conformance-idle");
  terret_request_set_idle_timeout (request, 1, TERRET_IDLE_ACTION_KILL);
  result = kit_run_request (executor, request);
  kit_assert_bytes (terret_result_get_stdout (result), "ab", -1);
  g_assert_false (terret_result_get_exited (result));
  g_assert_false (terret_result_get_running (result));
  g_assert_true (terret_result_get_timed_out (result));
  g_assert_cmpint (terret_result_get_clock (result), ==, TERRET_CLOCK_IDLE);
  g_assert_nonnull (terret_result_get_notice (result));
}

static void
test_idle_busy (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = kit_new_request ("for i in 1 2 3 4 5 6 7 8 9 10; do printf .; "
                                                      "sleep 0.1; done");
  g_autoptr(TerretResult) result = NULL;

  REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS | TERRET_CAPABILITY_CLOCKS);
  g_test_summary ("A command that keeps printing is not idle, however long it runs.");

  executor = kit_new_executor ();
  terret_request_set_idle_timeout (request, 5, TERRET_IDLE_ACTION_KILL);
  result = kit_run_request (executor, request);
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  kit_assert_bytes (terret_result_get_stdout (result), "..........", -1);
  g_assert_cmpint (terret_result_get_clock (result), ==, TERRET_CLOCK_NONE);
}

static void
test_idle_return (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(TerretResult) end = NULL;
  g_autoptr(GString) rest = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  gboolean input;

  REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS | TERRET_CAPABILITY_DETACH |
                TERRET_CAPABILITY_CLOCKS);
  g_test_summary ("on_idle return hands back a command that went quiet (waiting for input, "
                  "say), marked stalled; input reaches it and a poll collects its end.");

  /* Where input reaches a command, one that waits for it; else one that
   * goes quiet for a while. */
  input = (kit.caps & TERRET_CAPABILITY_INPUT) != 0;
  request = kit_new_request (input ? "printf 'name? '; read -t 30 x; echo \"got $x\""
                                   : "printf 'name? '; sleep 2; echo \"got terret\"");
  executor = kit_new_executor ();
  terret_request_set_session (request, "conformance-stalled");
  terret_request_set_idle_timeout (request, 0.5, TERRET_IDLE_ACTION_RETURN);
  result = kit_run_request (executor, request);
  g_assert_true (terret_result_get_running (result));
  g_assert_true (terret_result_get_stalled (result));
  g_assert_false (terret_result_get_timed_out (result));
  g_assert_cmpint (terret_result_get_clock (result), ==, TERRET_CLOCK_IDLE);
  kit_assert_bytes (terret_result_get_stdout (result), "name? ", -1);

  if (input)
    {
      g_autoptr(GBytes) data = g_bytes_new_static ("terret\n", 7);

      g_assert_true (terret_executor_send_input (executor, "conformance-stalled", data, &error));
      g_assert_no_error (error);
    }
  end = poll_until_ended (executor, "conformance-stalled", rest);
  g_assert_cmpint (terret_result_get_exit_status (end), ==, 0);
  g_assert_nonnull (strstr (rest->str, "got terret"));
}

/* --- a request's own cwd and environment ------------------------------- */

static void
test_cwd_session (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = kit_new_request ("pwd; cd /; touch conformance-nothing");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;

  REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS | TERRET_CAPABILITY_REQUEST_CWD);
  g_test_summary ("A request's cwd is where its command runs; a session's own cwd is back "
                  "after it; a cwd that does not exist is refused and nothing runs.");

  executor = kit_new_executor ();
  if (kit.caps & TERRET_CAPABILITY_PERSISTENT_SESSIONS)
    {
      result = kit_run (executor, "cd /tmp");
      g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
      g_clear_object (&result);
      terret_request_set_command (request, "pwd; cd /; echo $OLDPWD");
    }
  else
    terret_request_set_command (request, "pwd");

  terret_request_set_cwd (request, "/usr");
  result = kit_run_request (executor, request);
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  if (kit.caps & TERRET_CAPABILITY_PERSISTENT_SESSIONS)
    {
      kit_assert_bytes (terret_result_get_stdout (result), "/usr\n/usr\n", -1);
      if (kit.caps & TERRET_CAPABILITY_REPORTS_CWD)
        g_assert_cmpstr (terret_result_get_cwd (result), ==, "/tmp");
      g_clear_object (&result);
      result = kit_run (executor, "pwd; echo \"${OLDPWD-unset}\"");
      g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
      text = kit_bytes_to_string (terret_result_get_stdout (result));
      g_assert_true (g_str_has_prefix (text, "/tmp\n"));
    }
  else
    kit_assert_bytes (terret_result_get_stdout (result), "/usr\n", -1);

  /* Nothing runs: the probe file is never made, wherever the shell is. */
  g_clear_object (&result);
  terret_request_set_command (request, "touch /tmp/conformance-cwd-ran");
  terret_request_set_cwd (request, "/nonexistent/conformance");
  result = terret_executor_run (executor, request, NULL, &error);
  /* A launcher on a far side (a container's one-shot mode) finds it only
   * as it spawns: a failed spawn, which names it too. */
  if (!g_error_matches (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED))
    g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST);
  g_assert_nonnull (strstr (error->message, "/nonexistent/conformance"));
  g_assert_null (result);
  result = kit_run (executor, "test -e /tmp/conformance-cwd-ran && echo ran || echo absent");
  kit_assert_bytes (terret_result_get_stdout (result), "absent\n", -1);
}

static void
test_env_session (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = kit_new_request ("f () { printf '%s|' \"$CONF_A\"; }; f; "
                                                      "printf '%s|' \"$CONF_B\"; "
                                                      "bash -c 'printf %s \"$CONF_B\"'; "
                                                      "CONF_A=changed; export CONF_C=new");
  g_autoptr(TerretResult) result = NULL;

  REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS | TERRET_CAPABILITY_REQUEST_ENV |
                TERRET_CAPABILITY_PERSISTENT_SESSIONS);
  g_test_summary ("A request's variables hold for its whole command line (functions, "
                  "builtins, children) and a session's own are as they were after it.");

  executor = kit_new_executor ();
  result = kit_run (executor, "CONF_A=session; unset CONF_B CONF_C");
  g_clear_object (&result);

  terret_request_setenv (request, "CONF_A", "req-a");
  terret_request_setenv (request, "CONF_B", "it's b");
  result = kit_run_request (executor, request);
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  kit_assert_bytes (terret_result_get_stdout (result), "req-a|it's b|it's b", -1);
  g_clear_object (&result);

  /* CONF_A: the session's value, not exported; CONF_B unset again; what
   * the command itself exported stays, as at a terminal. */
  result = kit_run (executor, "printf '%s|%s|%s|' \"$CONF_A\" \"${CONF_B-unset}\" \"$CONF_C\"; "
                              "bash -c 'printf %s \"${CONF_A-unexported}\"'");
  kit_assert_bytes (terret_result_get_stdout (result), "session|unset|new|unexported", -1);
}

static void
test_env_refused (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = kit_new_request ("true");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  const char * const bad[] = { "1X=y", NULL };

  REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS | TERRET_CAPABILITY_REQUEST_ENV |
                TERRET_CAPABILITY_PERSISTENT_SESSIONS);
  g_test_summary ("A session refuses a request variable that is not a shell variable's name.");

  executor = kit_new_executor ();
  terret_request_set_env (request, bad);
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST);
  g_assert_null (result);
}

/* --- PIPESTATUS ----------------------------------------------------------- */

static void
assert_pipestatus (TerretResult *result,
                   const int    *expected,
                   guint         n_expected)
{
  guint n = 0;
  const int *statuses = terret_result_get_pipestatus (result, &n);

  g_assert_nonnull (statuses);
  g_assert_cmpmem (statuses, n * sizeof (int), expected, n_expected * sizeof (int));
}

static void
test_pipestatus (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("A session reports PIPESTATUS of the command's last pipeline, on its fast "
                  "and careful paths; a one-shot command reports none.");

  executor = kit_new_executor ();
  result = kit_run (executor, "false | true | (exit 3)");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 3);
  if (!(kit.caps & TERRET_CAPABILITY_PERSISTENT_SESSIONS))
    {
      g_assert_null (terret_result_get_pipestatus (result, NULL));
      return;
    }
  assert_pipestatus (result, (int[]){ 1, 0, 3 }, 3);

  /* The status a pipeline's tail hides, under a trap that runs commands
   * of its own before the harness's first statement, and with IFS set. */
  g_clear_object (&result);
  result = kit_run (executor, "trap 'true | false' DEBUG; IFS=:; (exit 2) | cat");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  assert_pipestatus (result, (int[]){ 2, 0 }, 2);
  g_clear_object (&result);
  result = kit_run (executor, "trap - DEBUG; unset IFS; set -o pipefail; true | (exit 4) | true");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 4);
  assert_pipestatus (result, (int[]){ 0, 4, 0 }, 3);
  g_clear_object (&result);
  result = kit_run (executor, "set +o pipefail; true");
  assert_pipestatus (result, (int[]){ 0 }, 1);
}

void
conformance_add_agent_checks (void)
{
  g_test_add_func ("/conformance/list", test_list);
  g_test_add_func ("/conformance/clocks/return-after", test_return_after);
  g_test_add_func ("/conformance/clocks/deadline-detached", test_deadline_detached);
  g_test_add_func ("/conformance/clocks/idle-kill", test_idle_kill);
  g_test_add_func ("/conformance/clocks/idle-busy", test_idle_busy);
  g_test_add_func ("/conformance/clocks/idle-return", test_idle_return);
  g_test_add_func ("/conformance/request/cwd-session", test_cwd_session);
  g_test_add_func ("/conformance/request/env-session", test_env_session);
  g_test_add_func ("/conformance/request/env-refused", test_env_refused);
  g_test_add_func ("/conformance/pipestatus", test_pipestatus);
}
