/* terret-exec-conformance.c: the behavioural contract, run against any backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * terret-exec-conformance --backend NAME [--set KEY=VALUE]... [GTest options]
 *
 * Runs every check of the contract a backend promises its callers and
 * prints TAP. A check is skipped only when the backend does not declare
 * the capability it needs, never because of the backend's name, so a
 * third-party backend passes the same kit as the built-in ones. A backend
 * that does not run commands at all is checked for refusing every run
 * with a clear error, and nothing else.
 *
 * The settings are written into a private configuration file before the
 * backend is created, so settings that decide whether the backend can
 * work at all (a host, a port) are in place for its initialization, and
 * no user configuration leaks in.
 */

#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <terret-exec.h>

/* A hung backend must not hang the kit: every run that is not about
 * timeouts carries this one. */
#define SAFETY_TIMEOUT 60.0

/* How long a process may take to disappear after its session was ended
 * (killed processes are reaped by whoever their parent is). */
#define GONE_WAIT_MS 10000

#define OTHER_SESSION "conformance-other"

static struct
{
  char *backend;
  char *config_dir;
  TerretCapabilities caps;
} kit;

/* --- Helpers ---------------------------------------------------------- */

#define REQUIRE_CAPS(needed)                                            \
  G_STMT_START {                                                        \
    if ((kit.caps & (needed)) != (needed))                              \
      {                                                                 \
        g_test_skip ("the backend does not declare " #needed);          \
        return;                                                         \
      }                                                                 \
  } G_STMT_END

#define REQUIRE_COMMANDS() REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS)

static TerretExecutor *
new_executor (void)
{
  g_autoptr(GError) error = NULL;
  TerretExecutor *executor;

  executor = terret_executor_new (kit.backend, &error);
  g_assert_no_error (error);
  g_assert_nonnull (executor);

  return executor;
}

static gboolean
has_setting (TerretExecutor *executor,
             const char     *name)
{
  g_autofree GParamSpec **settings = terret_executor_list_settings (executor, NULL);

  for (guint i = 0; settings[i] != NULL; i++)
    if (g_str_equal (g_param_spec_get_name (settings[i]), name))
      return TRUE;

  return FALSE;
}

static void
set_setting (TerretExecutor *executor,
             const char     *key,
             const char     *value)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (terret_executor_set_setting (executor, key, value, &error));
  g_assert_no_error (error);
}

static TerretRequest *
new_request (const char *command)
{
  TerretRequest *request = terret_request_new (command);

  terret_request_set_timeout (request, SAFETY_TIMEOUT);

  return request;
}

static TerretResult *
run_request (TerretExecutor *executor,
             TerretRequest  *request)
{
  g_autoptr(GError) error = NULL;
  TerretResult *result;

  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (result);

  return result;
}

static TerretResult *
run_in (TerretExecutor *executor,
        const char     *session,
        const char     *command)
{
  g_autoptr(TerretRequest) request = new_request (command);

  terret_request_set_session (request, session);

  return run_request (executor, request);
}

static TerretResult *
run (TerretExecutor *executor,
     const char     *command)
{
  return run_in (executor, TERRET_DEFAULT_SESSION, command);
}

static void
assert_bytes (GBytes     *bytes,
              const char *expected,
              gssize      expected_len)
{
  const guint8 *data;
  gsize len = 0;

  g_assert_nonnull (bytes);
  if (expected_len < 0)
    expected_len = strlen (expected);
  data = g_bytes_get_data (bytes, &len);
  g_assert_cmpmem (data, len, expected, expected_len);
}

static char *
bytes_to_string (GBytes *bytes)
{
  gsize len = 0;
  const char *data;

  g_assert_nonnull (bytes);
  data = g_bytes_get_data (bytes, &len);

  return g_strndup (data, len);
}

/* A run whose command exited with @status and wrote exactly @expected. */
static void
assert_exits (TerretExecutor *executor,
              const char     *command,
              int             status,
              const char     *expected,
              gssize          expected_len)
{
  g_autoptr(TerretResult) result = run (executor, command);

  g_assert_true (terret_result_get_exited (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, status);
  g_assert_cmpint (terret_result_get_term_signal (result), ==, 0);
  g_assert_false (terret_result_get_timed_out (result));
  assert_bytes (terret_result_get_stdout (result), expected, expected_len);
  g_assert_cmpuint (terret_result_get_dropped (result, TERRET_STREAM_STDOUT), ==, 0);
}

typedef struct
{
  GAsyncResult *result;         /* (owned) (nullable) */
} AsyncWait;

static void
async_done (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  AsyncWait *wait = user_data;

  wait->result = g_object_ref (result);
}

static TerretResult *
async_finish (TerretExecutor  *executor,
              AsyncWait       *wait,
              GError         **error)
{
  TerretResult *result;

  while (wait->result == NULL)
    g_main_context_iteration (NULL, TRUE);

  result = terret_executor_run_finish (executor, wait->result, error);
  g_clear_object (&wait->result);

  return result;
}

/* --- /proc ------------------------------------------------------------ */

/* Reads the state and session id of a process from a /proc stat line.
 * The command name may hold spaces and parentheses; the fields resume
 * after the last ')'. */
static gboolean
parse_stat (const char *line,
            char       *state,
            GPid       *sid)
{
  const char *p = strrchr (line, ')');
  int ppid, pgrp, session;

  if (p == NULL || sscanf (p + 1, " %c %d %d %d", state, &ppid, &pgrp, &session) != 4)
    return FALSE;
  *sid = session;

  return TRUE;
}

static gboolean
read_stat (GPid  pid,
           char *state,
           GPid *sid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int)pid);
  g_autofree char *contents = NULL;

  return g_file_get_contents (path, &contents, NULL, NULL) && parse_stat (contents, state, sid);
}

static gboolean
process_alive (GPid pid)
{
  char state;
  GPid sid;

  /* A zombie has ended; whether its parent reaped it yet is not ours. */
  return read_stat (pid, &state, &sid) && state != 'Z';
}

static guint
count_session_members (GPid sid)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc", 0, NULL);
  const char *name;
  guint count = 0;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      char state;
      GPid session;

      if (g_ascii_isdigit (name[0]) &&
          read_stat (atoi (name), &state, &session) &&
          session == sid && state != 'Z')
        count++;
    }

  return count;
}

static void
assert_process_gone (GPid pid)
{
  for (guint i = 0; i < GONE_WAIT_MS / 10 && process_alive (pid); i++)
    g_usleep (10 * 1000);
  g_assert_false (process_alive (pid));
}

static void
assert_session_gone (GPid sid)
{
  for (guint i = 0; i < GONE_WAIT_MS / 10 && count_session_members (sid) > 0; i++)
    g_usleep (10 * 1000);
  g_assert_cmpuint (count_session_members (sid), ==, 0);
}

static char *
read_trimmed (const char *path)
{
  char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return NULL;

  return g_strstrip (contents);
}

/* --- Checks ----------------------------------------------------------- */

static void
test_capabilities (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();

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
  g_autoptr(TerretExecutor) executor = new_executor ();
  g_autoptr(TerretRequest) request = new_request ("echo hello");
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
  terret_executor_run_async (executor, request, NULL, async_done, &wait);
  result = async_finish (executor, &wait, &error);
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

  executor = new_executor ();
  assert_exits (executor, "printf 'no newline'", 0, "no newline", -1);
  assert_exits (executor, "printf 'two\\nlines\\n'", 0, "two\nlines\n", -1);
  assert_exits (executor, "printf 'a\\377\\376b\\200\\303'", 0, "a\377\376b\200\303", -1);
  assert_exits (executor, "printf 'a\\r\\nb\\rc\\r'", 0, "a\r\nb\rc\r", -1);
  assert_exits (executor, "printf 'nul\\000byte'", 0, "nul\0byte", 8);
  assert_exits (executor, "true", 0, "", 0);
}

static void
test_status (void)
{
  g_autoptr(TerretExecutor) executor = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("Exit statuses 0, 3 and 255 are reported as they are.");

  executor = new_executor ();
  assert_exits (executor, "true", 0, "", 0);
  assert_exits (executor, "echo three; (exit 3)", 3, "three\n", -1);
  assert_exits (executor, "(exit 255)", 255, "", 0);
  assert_exits (executor, "false", 1, "", 0);
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

  executor = new_executor ();
  result = run (executor, "echo before; kill -KILL $$");
  g_assert_false (terret_result_get_exited (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, -1);
  g_assert_false (terret_result_get_timed_out (result));
  g_assert_true (terret_result_get_term_signal (result) == SIGKILL ||
                 terret_result_get_notice (result) != NULL);
  out = bytes_to_string (terret_result_get_stdout (result));
  g_assert_true (g_str_has_prefix (out, "before\n"));
  g_clear_object (&result);

  assert_exits (executor, "echo after", 0, "after\n", -1);
}

static void
test_notice_plain (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("A run where nothing unexpected happened carries no notice.");

  executor = new_executor ();
  /* The first run of a session may say the session started; the second
   * has nothing to say. */
  g_clear_object (&result);
  result = run (executor, "true");
  g_clear_object (&result);
  result = run (executor, "echo plain");
  assert_bytes (terret_result_get_stdout (result), "plain\n", -1);
  g_assert_null (terret_result_get_notice (result));
}

static void
assert_timed_out (TerretResult *result)
{
  g_autofree char *out = bytes_to_string (terret_result_get_stdout (result));

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

  executor = new_executor ();
  request = terret_request_new ("echo partial; sleep 30; echo never");
  terret_request_set_timeout (request, 0.5);
  result = run_request (executor, request);
  assert_timed_out (result);
  g_clear_object (&result);

  assert_exits (executor, "echo next", 0, "next\n", -1);
}

static void
test_timeout_setting (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("A request without a timeout gets the backend's timeout setting.");

  executor = new_executor ();
  if (!has_setting (executor, "timeout"))
    {
      g_test_skip ("the backend has no timeout setting");
      return;
    }

  set_setting (executor, "timeout", "0.5");
  request = terret_request_new ("echo partial; sleep 30; echo never");
  result = run_request (executor, request);
  assert_timed_out (result);
}

static void
test_busy (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) slow = new_request ("sleep 0.5; echo slow");
  g_autoptr(TerretRequest) fast = new_request ("echo fast");
  g_autoptr(TerretRequest) other = new_request ("echo other");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  AsyncWait slow_wait = { 0 };
  AsyncWait fast_wait = { 0 };
  AsyncWait other_wait = { 0 };

  REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS | TERRET_CAPABILITY_PERSISTENT_SESSIONS);
  g_test_summary ("A second run on a session with a run in flight fails busy, without "
                  "disturbing the first; another session is not held up.");

  executor = new_executor ();
  terret_request_set_session (other, OTHER_SESSION);
  terret_executor_run_async (executor, slow, NULL, async_done, &slow_wait);
  terret_executor_run_async (executor, fast, NULL, async_done, &fast_wait);
  terret_executor_run_async (executor, other, NULL, async_done, &other_wait);

  result = async_finish (executor, &fast_wait, &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY);
  g_assert_null (result);
  g_clear_error (&error);

  result = async_finish (executor, &other_wait, &error);
  g_assert_no_error (error);
  assert_bytes (terret_result_get_stdout (result), "other\n", -1);
  g_clear_object (&result);

  result = async_finish (executor, &slow_wait, &error);
  g_assert_no_error (error);
  assert_bytes (terret_result_get_stdout (result), "slow\n", -1);
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
  g_autoptr(TerretRequest) request = new_request ("echo started; sleep 30; echo never");
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  CancelOnOutput cancel = { cancellable, FALSE };
  AsyncWait wait = { 0 };

  REQUIRE_COMMANDS ();
  g_test_summary ("Cancelling a running command ends it with G_IO_ERROR_CANCELLED; "
                  "the next run on the session works.");

  executor = new_executor ();
  if ((kit.caps & TERRET_CAPABILITY_PROGRESS) != 0)
    terret_request_set_progress_func (request, cancel_on_output, &cancel, NULL);
  else
    g_timeout_add_full (G_PRIORITY_DEFAULT, 300, cancel_cb,
                        g_object_ref (cancellable), g_object_unref);

  terret_executor_run_async (executor, request, cancellable, async_done, &wait);
  result = async_finish (executor, &wait, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (result);
  g_assert_true (g_cancellable_is_cancelled (cancellable));

  assert_exits (executor, "echo again", 0, "again\n", -1);
}

static void
test_cancel_before (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = new_request ("echo never");
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("A run whose cancellable is already cancelled fails cancelled.");

  executor = new_executor ();
  g_cancellable_cancel (cancellable);
  result = terret_executor_run (executor, request, cancellable, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (result);
  g_clear_error (&error);

  assert_exits (executor, "echo fine", 0, "fine\n", -1);
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

  executor = new_executor ();
  capped = has_setting (executor, "max-output");
  if (capped)
    set_setting (executor, "max-output", "1000");

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

  result = run (executor, command);
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

  executor = new_executor ();
  assert_exits (executor, "cd /tmp && export TERRET_CONFORMANCE_X=persisted && "
                "f () { echo \"function $1\"; }", 0, "", 0);
  assert_exits (executor, "pwd; printf '%s\\n' \"$TERRET_CONFORMANCE_X\"; f ok", 0,
                "/tmp\npersisted\nfunction ok\n", -1);
  assert_exits (executor, "cd /", 0, "", 0);
  assert_exits (executor, "pwd", 0, "/\n", -1);

  result = run_in (executor, OTHER_SESSION, "printf '%s\\n' \"${TERRET_CONFORMANCE_X-unset}\"");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  assert_bytes (terret_result_get_stdout (result), "unset\n", -1);
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

  executor = new_executor ();
  assert_exits (executor, "export TERRET_CONFORMANCE_X=old", 0, "", 0);

  result = run (executor, "exit 3");
  g_assert_true (!terret_result_get_exited (result) || terret_result_get_exit_status (result) == 3);
  g_assert_false (terret_result_get_timed_out (result));
  g_assert_nonnull (terret_result_get_notice (result));
  g_clear_object (&result);

  result = run (executor, "printf '%s\\n' \"${TERRET_CONFORMANCE_X-unset}\"");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  assert_bytes (terret_result_get_stdout (result), "unset\n", -1);
}

static void
test_stderr (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("stderr is captured apart where the backend declares it, and merged "
                  "into stdout (stderr NULL) where it does not.");

  executor = new_executor ();
  result = run (executor, "printf out; printf err >&2; printf more");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  if ((kit.caps & TERRET_CAPABILITY_SEPARATE_STDERR) != 0)
    {
      assert_bytes (terret_result_get_stdout (result), "outmore", -1);
      assert_bytes (terret_result_get_stderr (result), "err", -1);
    }
  else
    {
      assert_bytes (terret_result_get_stdout (result), "outerrmore", -1);
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
  g_autoptr(TerretRequest) request = new_request ("printf abc; sleep 0.2; printf def");
  g_autoptr(GByteArray) out = g_byte_array_new ();
  g_autoptr(GByteArray) err = g_byte_array_new ();
  GByteArray *collected[] = { out, err };
  g_autoptr(TerretResult) result = NULL;
  AsyncWait wait = { 0 };
  g_autoptr(GError) error = NULL;

  REQUIRE_CAPS (TERRET_CAPABILITY_RUNS_COMMANDS | TERRET_CAPABILITY_PROGRESS);
  g_test_summary ("Progress delivers the output as it comes, on the caller's context, "
                  "and its pieces add up to the result's output.");

  executor = new_executor ();
  terret_request_set_progress_func (request, collect_progress, collected, NULL);
  terret_executor_run_async (executor, request, NULL, async_done, &wait);
  result = async_finish (executor, &wait, &error);
  g_assert_no_error (error);
  assert_bytes (terret_result_get_stdout (result), "abcdef", -1);
  g_assert_cmpmem (out->data, out->len, "abcdef", 6);
  g_assert_cmpuint (err->len, ==, 0);
}

static void
test_request_cwd (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = new_request ("pwd");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("A request's cwd is honoured where declared, and refused as not "
                  "supported where not.");

  executor = new_executor ();
  terret_request_set_cwd (request, "/");
  result = terret_executor_run (executor, request, NULL, &error);
  if ((kit.caps & TERRET_CAPABILITY_REQUEST_CWD) != 0)
    {
      g_assert_no_error (error);
      assert_bytes (terret_result_get_stdout (result), "/\n", -1);
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
  g_autoptr(TerretRequest) request = new_request ("printf '%s' \"$TERRET_CONFORMANCE_ENV\"");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  REQUIRE_COMMANDS ();
  g_test_summary ("A request's environment is honoured where declared, and refused as "
                  "not supported where not.");

  executor = new_executor ();
  terret_request_setenv (request, "TERRET_CONFORMANCE_ENV", "from request");
  result = terret_executor_run (executor, request, NULL, &error);
  if ((kit.caps & TERRET_CAPABILITY_REQUEST_ENV) != 0)
    {
      g_assert_no_error (error);
      assert_bytes (terret_result_get_stdout (result), "from request", -1);
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

  executor = new_executor ();
  result = run (executor, "cd /tmp");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  g_assert_cmpstr (terret_result_get_cwd (result), ==, "/tmp");
}

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

  executor = new_executor ();
  g_assert_cmpint (terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION), ==, 0);

  for (guint i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      char state;

      result = run_in (executor, keys[i], "sleep 30 >/dev/null 2>&1 & echo started");
      g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
      g_clear_object (&result);

      pids[i] = terret_executor_get_session_pid (executor, keys[i]);
      g_assert_cmpint (pids[i], >, 0);
      g_assert_true (read_stat (pids[i], &state, &sids[i]));
    }

  terret_executor_close_session (executor, TERRET_DEFAULT_SESSION);
  g_assert_cmpint (terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION), ==, 0);
  /* A process that leads no session of its own can only be checked
   * alone. */
  if (sids[0] != own_sid)
    assert_session_gone (sids[0]);
  assert_process_gone (pids[0]);
  g_assert_true (process_alive (pids[1]));

  g_clear_object (&executor);
  if (sids[1] != own_sid)
    assert_session_gone (sids[1]);
  assert_process_gone (pids[1]);
}

static void
test_close_nothing_left (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autofree char *out = NULL;
  g_autofree char *local_boot_id = read_trimmed ("/proc/sys/kernel/random/boot_id");
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

  executor = new_executor ();
  result = run (executor,
                "sleep 30 >/dev/null 2>&1 </dev/null & "
                "printf 'pids %s %s\\n' $$ $!; "
                "printf 'stat %s\\n' \"$(cat /proc/$$/stat 2>/dev/null)\"; "
                "printf 'boot %s\\n' \"$(cat /proc/sys/kernel/random/boot_id 2>/dev/null)\"; "
                "printf 'pidns %s\\n' \"$(readlink /proc/self/ns/pid 2>/dev/null)\"");
  out = bytes_to_string (terret_result_get_stdout (result));
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
  g_assert_true (parse_stat (shell_stat, &state, &sid));
  assert_process_gone (sleep_pid);
  assert_process_gone (shell_pid);
  if (sid != getsid (0))
    assert_session_gone (sid);
}

/* --- Main ------------------------------------------------------------- */

static void
remove_config_dir (void)
{
  g_autofree char *file = NULL;
  g_autofree char *sub = NULL;

  if (kit.config_dir == NULL)
    return;
  sub = g_build_filename (kit.config_dir, "terret-exec", NULL);
  file = g_build_filename (sub, "executor.conf", NULL);
  g_unlink (file);
  g_rmdir (sub);
  g_rmdir (kit.config_dir);
  g_clear_pointer (&kit.config_dir, g_free);
}

/* Writes the settings as the backend's group of a private configuration
 * and points the configuration lookup at it alone. */
static gboolean
write_config (GPtrArray  *settings,
              GError    **error)
{
  g_autoptr(GKeyFile) key_file = g_key_file_new ();
  g_autofree char *sub = NULL;
  g_autofree char *path = NULL;

  kit.config_dir = g_dir_make_tmp ("terret-exec-conformance-XXXXXX", error);
  if (kit.config_dir == NULL)
    return FALSE;
  atexit (remove_config_dir);

  for (guint i = 0; i < settings->len; i++)
    {
      const char *setting = g_ptr_array_index (settings, i);
      const char *eq = strchr (setting, '=');
      g_autofree char *key = NULL;

      if (eq == NULL || eq == setting)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--set takes KEY=VALUE, not “%s”", setting);
          return FALSE;
        }
      key = g_strndup (setting, eq - setting);
      g_key_file_set_value (key_file, kit.backend, key, eq + 1);
    }

  sub = g_build_filename (kit.config_dir, "terret-exec", NULL);
  path = g_build_filename (sub, "executor.conf", NULL);
  if (g_mkdir (sub, 0700) != 0)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                   "Could not create %s: %s", sub, g_strerror (errno));
      return FALSE;
    }
  if (!g_key_file_save_to_file (key_file, path, error))
    return FALSE;

  g_setenv ("XDG_CONFIG_HOME", kit.config_dir, TRUE);
  g_setenv ("XDG_CONFIG_DIRS", kit.config_dir, TRUE);
  g_unsetenv (TERRET_EXECUTOR_ENV);

  return TRUE;
}

static void
usage (const char *prog)
{
  g_printerr ("Usage: %s --backend NAME [--set KEY=VALUE]... [GTest options]\n"
              "\n"
              "Runs the terret-exec behavioural contract against the backend NAME and\n"
              "prints TAP. Settings are applied as the [NAME] group of the configuration.\n"
              "Checks the backend cannot meet are skipped by its declared capabilities.\n",
              prog);
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

static void
test_interactive_unsupported (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ();
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
      g_autoptr(TerretRequest) request = new_request ("true");

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
  g_autoptr(TerretRequest) busy = new_request ("echo no");
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
    request = new_request ("read x; echo \"[$x]\"");
  else
    request = new_request ("sleep 1; echo '[abc]'");

  executor = new_executor ();
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

  assert_exits (executor, "echo again", 0, "again\n", -1);
}

static void
test_interrupt_detached (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = new_request ("sleep 100");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GError) error = NULL;

  REQUIRE_CAPS (TERRET_CAPABILITY_DETACH | TERRET_CAPABILITY_POLL | TERRET_CAPABILITY_INTERRUPT);
  g_test_summary ("An interrupt ends a detached command; the session then runs again.");

  executor = new_executor ();
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

  assert_exits (executor, "echo again", 0, "again\n", -1);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GPtrArray) settings = g_ptr_array_new ();
  g_autoptr(GPtrArray) rest = g_ptr_array_new ();
  g_autoptr(TerretExecutor) probe = NULL;
  g_autoptr(GError) error = NULL;
  gboolean have_tap = FALSE;
  int rest_argc;
  char **rest_argv;
  int ret;

  /* Our own options come out before GTest sees the rest. */
  g_ptr_array_add (rest, argv[0]);
  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];

      if (g_str_equal (arg, "--backend") || g_str_equal (arg, "--set"))
        {
          if (i + 1 >= argc)
            {
              usage (argv[0]);
              return 2;
            }
          if (g_str_equal (arg, "--backend"))
            kit.backend = argv[++i];
          else
            g_ptr_array_add (settings, argv[++i]);
        }
      else if (g_str_has_prefix (arg, "--backend="))
        kit.backend = (char *)arg + strlen ("--backend=");
      else if (g_str_has_prefix (arg, "--set="))
        g_ptr_array_add (settings, (char *)arg + strlen ("--set="));
      else if (g_str_equal (arg, "--help") || g_str_equal (arg, "-h"))
        {
          usage (argv[0]);
          return 0;
        }
      else
        {
          if (g_str_equal (arg, "--tap"))
            have_tap = TRUE;
          g_ptr_array_add (rest, argv[i]);
        }
    }
  if (!have_tap)
    g_ptr_array_add (rest, (char *)"--tap");
  g_ptr_array_add (rest, NULL);

  if (kit.backend == NULL || *kit.backend == '\0')
    {
      usage (argv[0]);
      return 2;
    }

  if (!write_config (settings, &error))
    {
      g_printerr ("%s: %s\n", argv[0], error->message);
      return 2;
    }

  rest_argc = rest->len - 1;
  rest_argv = (char **)rest->pdata;
  g_test_init (&rest_argc, &rest_argv, NULL);

  probe = terret_executor_new (kit.backend, &error);
  if (probe == NULL)
    {
      printf ("Bail out! cannot create the backend “%s”: %s\n", kit.backend, error->message);
      return 1;
    }
  kit.caps = terret_executor_get_capabilities (probe);
  g_clear_object (&probe);
  g_test_message ("backend %s, capabilities 0x%x", kit.backend, (guint)kit.caps);

  g_test_add_func ("/conformance/capabilities", test_capabilities);
  g_test_add_func ("/conformance/noshell/refuses", test_noshell);
  g_test_add_func ("/conformance/output/exact", test_output_exact);
  g_test_add_func ("/conformance/status/exit", test_status);
  g_test_add_func ("/conformance/status/signal", test_status_signal);
  g_test_add_func ("/conformance/notice/plain", test_notice_plain);
  g_test_add_func ("/conformance/timeout/partial-output", test_timeout_partial);
  g_test_add_func ("/conformance/timeout/setting", test_timeout_setting);
  g_test_add_func ("/conformance/busy", test_busy);
  g_test_add_func ("/conformance/cancel/running", test_cancel);
  g_test_add_func ("/conformance/cancel/before-start", test_cancel_before);
  g_test_add_func ("/conformance/cap/utf8", test_cap_utf8);
  g_test_add_func ("/conformance/session/persistence", test_session_persistence);
  g_test_add_func ("/conformance/session/restart", test_session_restart);
  g_test_add_func ("/conformance/output/stderr", test_stderr);
  g_test_add_func ("/conformance/progress", test_progress);
  g_test_add_func ("/conformance/request/cwd", test_request_cwd);
  g_test_add_func ("/conformance/request/env", test_request_env);
  g_test_add_func ("/conformance/reports-cwd", test_reports_cwd);
  g_test_add_func ("/conformance/close/session-pid", test_close_session_pid);
  g_test_add_func ("/conformance/close/nothing-left", test_close_nothing_left);
  g_test_add_func ("/conformance/interactive/unsupported", test_interactive_unsupported);
  g_test_add_func ("/conformance/interactive/detach-input-poll", test_detach_input_poll);
  g_test_add_func ("/conformance/interactive/interrupt-detached", test_interrupt_detached);

  ret = g_test_run ();

  return ret;
}
