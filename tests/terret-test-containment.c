/* terret-test-containment.c: what a command starts ends with its owner
 *
 * A command starts processes meant to escape: a plain background job, a
 * `setsid` one, a `nohup` one, a double fork, and jobs that ignore HUP,
 * TERM and INT, in a new session too. Each is named in its argv[0] by a
 * token drawn for the test, so /proc tells whether any is left, whatever
 * its session, group or parent. After the owner ends the run (close,
 * timeout, cancel, disposal, the host's SIGKILL), none may be.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <signal.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "terret-test-containment.h"
#include "terret-test-utils.h"

#define N_ESCAPEES 6

/* Bounds on waiting for processes to appear or go: far beyond what either
 * takes, and never what a test asserts. */
#define APPEAR_TRIES 2000
#define VANISH_TRIES 3000
#define TRY_USEC 10000

static char *
make_token (void)
{
  return g_strdup_printf ("terret-escapee-%08x%08x", g_random_int (), g_random_int ());
}

/* The command: the escapees, then (once all of them run) "ready", then,
 * when @linger, a sleep that keeps the run in flight. */
static char *
escapees_command (const char *token,
                  gboolean    linger)
{
  return g_strdup_printf (
    "T=%1$s; "
    "(exec -a $T-plain sleep 300) & "
    "setsid bash -c \"exec -a $T-setsid sleep 300\" & "
    "nohup bash -c \"exec -a $T-nohup sleep 300\" >/dev/null 2>&1 & "
    "bash -c \"(bash -c 'exec -a $T-double sleep 300' &) &\"; "
    "(trap '' HUP TERM INT; exec -a $T-ignoring sleep 300) & "
    "setsid -f bash -c \"trap '' HUP TERM INT; exec -a $T-setsid-ignoring sleep 300\" "
    "</dev/null >/dev/null 2>&1; "
    "for i in $(seq 1000); do [ \"$(pgrep -c -f \"^$T-\")\" -ge %2$d ] && break; sleep 0.01; done; "
    "echo ready;%3$s",
    token, N_ESCAPEES, linger ? " sleep 300" : "");
}

/* Live processes whose argv[0] begins with @token; with @describe, each
 * on stderr (state, parent, group, session, ignored signals), saying
 * which step of the stop did not reach it. */
static guint
count_escapees_full (const char *token,
                     gboolean    describe)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc", 0, NULL);
  g_autofree char *prefix = g_strconcat (token, "-", NULL);
  const char *name;
  guint count = 0;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *cmdline_path = NULL;
      g_autofree char *stat_path = NULL;
      g_autofree char *cmdline = NULL;
      g_autofree char *stat = NULL;
      const char *paren;

      if (!g_ascii_isdigit (name[0]))
        continue;
      cmdline_path = g_build_filename ("/proc", name, "cmdline", NULL);
      if (!g_file_get_contents (cmdline_path, &cmdline, NULL, NULL) ||
          !g_str_has_prefix (cmdline, prefix))
        continue;
      stat_path = g_build_filename ("/proc", name, "stat", NULL);
      if (!g_file_get_contents (stat_path, &stat, NULL, NULL))
        continue;
      paren = strrchr (stat, ')');
      if (paren == NULL || paren[1] != ' ' || paren[2] == 'Z')
        continue;
      count++;
      if (describe)
        {
          g_autofree char *status_path = g_build_filename ("/proc", name, "status", NULL);
          g_autofree char *status = NULL;
          /* After the command's name: state ppid pgrp session ... */
          g_auto(GStrv) fields = g_strsplit (paren + 2, " ", 5);
          const char *sig;

          g_file_get_contents (status_path, &status, NULL, NULL);
          sig = status != NULL ? strstr (status, "SigIgn:") : NULL;
          if (g_strv_length (fields) >= 5)
            g_printerr ("#   pid %s %s: state %s, parent %s, group %s, session %s; %.*s\n", name,
                        cmdline + strlen (prefix), fields[0], fields[1], fields[2], fields[3],
                        sig != NULL ? (int)strcspn (sig, "\n") : 0, sig != NULL ? sig : "");
        }
    }
  return count;
}

static guint
count_escapees (const char *token)
{
  return count_escapees_full (token, FALSE);
}

/* Iterates the default main context meanwhile: a run in flight needs it. */
static void
assert_escapees_running (const char *token)
{
  for (guint i = 0; i < APPEAR_TRIES && count_escapees (token) < N_ESCAPEES; i++)
    {
      while (g_main_context_iteration (NULL, FALSE))
        ;
      g_usleep (TRY_USEC);
    }
  g_assert_cmpuint (count_escapees (token), ==, N_ESCAPEES);
}

static void
assert_no_escapees (const char *token)
{
  for (guint i = 0; i < VANISH_TRIES && count_escapees (token) > 0; i++)
    g_usleep (TRY_USEC);
  if (count_escapees (token) != 0)
    {
      g_printerr ("# %s: left after the run:\n", g_test_get_path ());
      count_escapees_full (token, TRUE);
    }
  g_assert_cmpuint (count_escapees (token), ==, 0);
}

static void
assert_ready (TerretResult *result)
{
  GBytes *out = terret_result_get_stdout (result);
  g_autofree char *text = g_strndup (g_bytes_get_data (out, NULL), g_bytes_get_size (out));

  g_assert_nonnull (strstr (text, "ready\n"));
}

static void
run_done (GObject      *source,
          GAsyncResult *res,
          gpointer      user_data)
{
  GError **error = user_data;
  g_autoptr(TerretResult) result = NULL;

  result = terret_executor_run_finish (TERRET_EXECUTOR (source), res, error);
  g_assert_null (result);
  g_assert_nonnull (*error);
}

/*
 * terret_test_containment_check:
 * @executor: (transfer full): consumed
 * @end: how the owner ends the run
 * @detach: whether the run detaches at a short timeout first (so it is
 *   still in flight when @end comes; for close and disposal)
 */
void
terret_test_containment_check (TerretExecutor *executor,
                               TerretTestEnd   end,
                               gboolean        detach)
{
  g_autofree char *token = make_token ();
  g_autofree char *command = NULL;
  g_autoptr(TerretRequest) request = NULL;

  command = escapees_command (token, detach || end == TERRET_TEST_END_TIMEOUT ||
                                     end == TERRET_TEST_END_CANCEL);
  request = terret_request_new (command);
  terret_request_set_timeout (request, 60);

  switch (end)
    {
    case TERRET_TEST_END_CANCEL:
      {
        g_autoptr(GCancellable) cancellable = g_cancellable_new ();
        g_autoptr(GError) error = NULL;

        terret_executor_run_async (executor, request, cancellable, run_done, &error);
        assert_escapees_running (token);
        g_cancellable_cancel (cancellable);
        while (error == NULL)
          g_main_context_iteration (NULL, TRUE);
        g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
        assert_no_escapees (token);
        g_object_unref (executor);
        return;
      }

    case TERRET_TEST_END_TIMEOUT:
      {
        g_autoptr(TerretResult) result = NULL;

        terret_request_set_timeout (request, 2);
        result = terret_test_run (executor, request, NULL);
        g_assert_true (terret_result_get_timed_out (result));
        assert_ready (result);
        assert_no_escapees (token);
        g_object_unref (executor);
        return;
      }

    case TERRET_TEST_END_RUN:
    case TERRET_TEST_END_CLOSE:
    case TERRET_TEST_END_DISPOSE:
      {
        g_autoptr(TerretResult) result = NULL;

        if (detach)
          {
            /* Detached once "ready" is out: the timeout ends nothing. */
            terret_request_set_timeout (request, 2);
            terret_request_set_timeout_action (request, TERRET_TIMEOUT_ACTION_DETACH);
          }
        result = terret_test_run (executor, request, NULL);
        assert_ready (result);
        g_assert_true (terret_result_get_running (result) == detach);
        if (end == TERRET_TEST_END_RUN)
          {
            assert_no_escapees (token);
            g_object_unref (executor);
            return;
          }
        assert_escapees_running (token);
        if (end == TERRET_TEST_END_CLOSE)
          {
            terret_executor_close_all (executor);
            assert_no_escapees (token);
          }
        g_object_unref (executor);
        assert_no_escapees (token);
        return;
      }
    }
  g_assert_not_reached ();
}

/*
 * terret_test_containment_host_killed:
 * @serve_args: `terret-exec` arguments that start `serve` on a backend
 * @detach: whether the run detaches (a one-shot run must still be in
 *   flight when its host dies)
 *
 * The host is `terret-exec serve`; once it has answered the run, it is
 * SIGKILLed, with no chance to close anything.
 */
void
terret_test_containment_host_killed (const char * const *serve_args,
                                     gboolean            detach)
{
  g_autofree char *token = make_token ();
  g_autofree char *command = escapees_command (token, detach);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GSubprocess) host = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GDataInputStream) responses = NULL;
  g_autofree char *request = NULL;
  g_autofree char *line = NULL;
  g_autofree char *response = NULL;

  g_ptr_array_add (argv, (gpointer)terret_test_cli_path ());
  for (guint i = 0; serve_args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer)serve_args[i]);
  g_ptr_array_add (argv, NULL);
  host = g_subprocess_newv ((const char * const *)argv->pdata,
                            G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
  g_assert_no_error (error);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "op");
  json_builder_add_string_value (builder, "run");
  json_builder_set_member_name (builder, "command");
  json_builder_add_string_value (builder, command);
  json_builder_set_member_name (builder, "timeout");
  json_builder_add_double_value (builder, detach ? 2 : 60);
  if (detach)
    {
      json_builder_set_member_name (builder, "on_timeout");
      json_builder_add_string_value (builder, "detach");
    }
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  request = json_generator_to_data (generator, NULL);
  line = g_strconcat (request, "\n", NULL);

  g_assert_true (g_output_stream_write_all (g_subprocess_get_stdin_pipe (host), line, strlen (line),
                                            NULL, NULL, &error));
  g_assert_no_error (error);
  responses = g_data_input_stream_new (g_subprocess_get_stdout_pipe (host));
  response = g_data_input_stream_read_line (responses, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (response);
  g_assert_nonnull (strstr (response, "ready\\n"));
  assert_escapees_running (token);

  g_subprocess_send_signal (host, SIGKILL);
  g_subprocess_wait (host, NULL, &error);
  g_assert_no_error (error);
  assert_no_escapees (token);
}
