/* test-stdio.c: `terret-exec serve` and `terret-exec mcp` end the same
 * way, run as real processes side by side: at the end of input, on
 * SIGINT, SIGTERM and SIGHUP, with a command in flight and an idle session
 * holding a process of its own
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <signal.h>
#include <string.h>

#include <json-glib/json-glib.h>

#include "terret-test-utils.h"

typedef enum {
  END_OF_INPUT,
  END_SIGINT,
  END_SIGTERM,
  END_SIGHUP,
} Ending;

typedef struct
{
  const char *path;
  const char *dialect;
  Ending ending;
  int exit_status;           /* or, with -1, ended by the signal */
  const char *answer;        /* how the run in flight answers: "status 0",
                              * "cancelled", or NULL: not at all */
} EndCase;

/* serve lets runs in flight answer at the end of input; an MCP host that
 * closes the server's input is shutting it down, so mcp ends them then,
 * unanswered as a cancelled call is. Signals cancel in both; SIGHUP
 * keeps its default in both. */
static const EndCase end_cases[] = {
  { "/stdio/end/serve/input", "serve", END_OF_INPUT, 0, "status 0" },
  { "/stdio/end/serve/sigint", "serve", END_SIGINT, 128 + SIGINT, "cancelled" },
  { "/stdio/end/serve/sigterm", "serve", END_SIGTERM, 128 + SIGTERM, "cancelled" },
  { "/stdio/end/serve/sighup", "serve", END_SIGHUP, -1, NULL },
  { "/stdio/end/mcp/input", "mcp", END_OF_INPUT, 0, NULL },
  { "/stdio/end/mcp/sigint", "mcp", END_SIGINT, 128 + SIGINT, NULL },
  { "/stdio/end/mcp/sigterm", "mcp", END_SIGTERM, 128 + SIGTERM, NULL },
  { "/stdio/end/mcp/sighup", "mcp", END_SIGHUP, -1, NULL },
};

static gboolean
have_backend (const char *name)
{
  GList *infos = terret_backend_info_list ();
  gboolean found = FALSE;

  for (GList *l = infos; l != NULL; l = l->next)
    found |= g_str_equal (terret_backend_info_get_name (l->data), name);
  g_list_free_full (infos, g_object_unref);

  return found;
}

/* A run of @command in @session, as @dialect asks for one. */
static char *
run_line (const char *dialect,
          const char *id,
          const char *session,
          const char *command)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *text = NULL;
  gboolean mcp = g_str_equal (dialect, "mcp");

  json_builder_begin_object (builder);
  if (mcp)
    {
      json_builder_set_member_name (builder, "jsonrpc");
      json_builder_add_string_value (builder, "2.0");
      json_builder_set_member_name (builder, "method");
      json_builder_add_string_value (builder, "tools/call");
    }
  json_builder_set_member_name (builder, "id");
  json_builder_add_string_value (builder, id);
  if (mcp)
    {
      json_builder_set_member_name (builder, "params");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, "bash");
      json_builder_set_member_name (builder, "arguments");
      json_builder_begin_object (builder);
    }
  json_builder_set_member_name (builder, "session");
  json_builder_add_string_value (builder, session);
  json_builder_set_member_name (builder, "command");
  json_builder_add_string_value (builder, command);
  if (mcp)
    {
      json_builder_end_object (builder);
      json_builder_end_object (builder);
    }
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  text = json_to_string (root, FALSE);
  return g_strconcat (text, "\n", NULL);
}

static void
send_line (GOutputStream *input,
           const char    *line)
{
  g_autoptr(GError) error = NULL;

  g_output_stream_write_all (input, line, strlen (line), NULL, NULL, &error);
  g_assert_no_error (error);
  g_output_stream_flush (input, NULL, &error);
  g_assert_no_error (error);
}

/* The next answer, or NULL at the end of output. */
static JsonObject *
recv_answer (GDataInputStream  *output,
             JsonNode         **keep)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *line = g_data_input_stream_read_line (output, NULL, NULL, &error);

  g_assert_no_error (error);
  if (line == NULL)
    return NULL;

  *keep = json_from_string (line, &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (*keep));
  return json_node_get_object (*keep);
}

/* How @answer says its run ended, in the table's words. */
static char *
describe_answer (const char *dialect,
                 JsonObject *answer)
{
  JsonObject *fields = answer;

  if (g_str_equal (dialect, "mcp"))
    {
      g_assert_false (json_object_has_member (answer, "error"));
      fields = json_object_get_object_member (json_object_get_object_member (answer, "result"),
                                              "structuredContent");
      g_assert_nonnull (fields);
    }
  else if (!json_object_get_boolean_member (answer, "ok"))
    return g_strdup (json_object_get_string_member (json_object_get_object_member (answer, "error"), "code"));

  if (json_object_get_null_member (fields, "status"))
    return g_strdup ("no status");
  return g_strdup_printf ("status %" G_GINT64_FORMAT, json_object_get_int_member (fields, "status"));
}

static void
test_end (gconstpointer data)
{
  const EndCase *c = data;
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GDataInputStream) output = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *idle_fifo = terret_test_make_fifo (dir, "idle");
  g_autofree char *busy_fifo = terret_test_make_fifo (dir, "busy");
  g_autofree char *go_fifo = terret_test_make_fifo (dir, "go");
  g_autofree char *idle_command = NULL, *busy_command = NULL;
  g_autofree char *idle_line = NULL, *busy_line = NULL;
  g_autofree char *idle_pid = NULL, *busy_pids = NULL;
  g_autofree char *ended = NULL;
  GOutputStream *input;
  JsonObject *answer;

  if (!have_backend ("pty"))
    {
      g_test_skip ("the pty backend is not built");
      return;
    }

  g_test_summary ("serve and mcp end alike: the calls in flight end or answer as the table says, "
                  "every session is closed with what it started, and the exit status says why");

  proc = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                           terret_test_cli_path (), c->dialect, "--backend", "pty", NULL);
  g_assert_no_error (error);
  input = g_subprocess_get_stdin_pipe (proc);
  output = g_data_input_stream_new (g_subprocess_get_stdout_pipe (proc));

  /* An idle session holding a process: closing it must take the process. */
  idle_command = g_strdup_printf ("(exec sleep 1000 >/dev/null 2>&1) & echo $! > '%s'", idle_fifo);
  idle_line = run_line (c->dialect, "idle", "idle", idle_command);
  send_line (input, idle_line);
  idle_pid = terret_test_read_fifo (idle_fifo);
  answer = recv_answer (output, &node);
  g_assert_nonnull (answer);
  g_assert_cmpstr (json_object_get_string_member (answer, "id"), ==, "idle");
  ended = describe_answer (c->dialect, answer);
  g_assert_cmpstr (ended, ==, "status 0");
  g_clear_pointer (&node, json_node_unref);
  g_clear_pointer (&ended, g_free);

  /* A run in flight, with a process of its own, waiting for its go. */
  busy_command = g_strdup_printf ("(exec sleep 1000) & echo $! $$ > '%s'; cat '%s'", busy_fifo, go_fifo);
  busy_line = run_line (c->dialect, "busy", "busy", busy_command);
  send_line (input, busy_line);
  busy_pids = terret_test_read_fifo (busy_fifo);

  switch (c->ending)
    {
    case END_OF_INPUT:
      g_output_stream_close (input, NULL, &error);
      g_assert_no_error (error);
      /* A run the end of input lets finish gets its go; one it ended has
       * no reader left for it. */
      if (c->answer != NULL)
        terret_test_write_fifo (go_fifo, "go\n");
      break;
    case END_SIGINT:
      g_subprocess_send_signal (proc, SIGINT);
      break;
    case END_SIGTERM:
      g_subprocess_send_signal (proc, SIGTERM);
      break;
    case END_SIGHUP:
    default:
      g_subprocess_send_signal (proc, SIGHUP);
      break;
    }

  answer = recv_answer (output, &node);
  if (c->answer != NULL)
    {
      g_assert_nonnull (answer);
      g_assert_cmpstr (json_object_get_string_member (answer, "id"), ==, "busy");
      ended = describe_answer (c->dialect, answer);
      g_assert_cmpstr (ended, ==, c->answer);
      g_clear_pointer (&node, json_node_unref);
      answer = recv_answer (output, &node);
    }
  /* Nothing more: the output ends. */
  g_assert_null (answer);

  g_subprocess_wait (proc, NULL, &error);
  g_assert_no_error (error);
  if (c->exit_status >= 0)
    {
      g_assert_true (g_subprocess_get_if_exited (proc));
      g_assert_cmpint (g_subprocess_get_exit_status (proc), ==, c->exit_status);
    }
  else
    {
      g_assert_true (g_subprocess_get_if_signaled (proc));
      g_assert_cmpint (g_subprocess_get_term_sig (proc), ==, SIGHUP);
    }

  terret_test_wait_gone_all (idle_pid);
  terret_test_wait_gone_all (busy_pids);
}

int
main (int    argc,
      char **argv)
{
  terret_test_init (&argc, &argv);
  /* The servers these tests start inherit it: a GLib critical any request
   * provokes aborts the server, and the test sees it die. */
  g_setenv ("G_DEBUG", "gc-friendly,fatal-criticals", TRUE);

  for (guint i = 0; i < G_N_ELEMENTS (end_cases); i++)
    g_test_add_data_func (end_cases[i].path, &end_cases[i], test_end);

  return g_test_run ();
}
