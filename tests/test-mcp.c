/* test-mcp.c: `terret-exec mcp`, run as a real process and spoken to in
 * JSON-RPC lines as an MCP host would
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "terret-test-mcp.h"
#include "terret-test-utils.h"

/* Tests ---------------------------------------------------------------- */

static void
test_initialize (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(JsonNode) response = NULL;
  JsonObject *result;

  g_test_summary ("initialize negotiates the revision and declares the tools capability, and "
                  "tasks from 2025-11-25; an older revision gets tools without outputSchema");
  mcp_start (&mcp, "noshell");

  response = mcp_call (&mcp, "initialize", "{\"protocolVersion\": \"1999-01-01\", \"capabilities\": {}, "
                                           "\"clientInfo\": {\"name\": \"t\", \"version\": \"1\"}}");
  result = result_of (response);
  g_assert_cmpstr (json_object_get_string_member (result, "protocolVersion"), ==, "2025-11-25");
  g_assert_true (json_object_has_member (json_object_get_object_member (result, "capabilities"), "tools"));
  g_assert_true (json_object_has_member (json_object_get_object_member (result, "capabilities"), "tasks"));
  g_clear_pointer (&response, json_node_unref);

  response = mcp_call (&mcp, "initialize", "{\"protocolVersion\": \"2025-06-18\", \"capabilities\": {}, "
                                           "\"clientInfo\": {\"name\": \"t\", \"version\": \"1\"}}");
  result = result_of (response);
  g_assert_cmpstr (json_object_get_string_member (result, "protocolVersion"), ==, "2025-06-18");
  g_assert_false (json_object_has_member (json_object_get_object_member (result, "capabilities"), "tasks"));
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (result, "serverInfo"), "name"),
                   ==, "terret-exec");
  g_clear_pointer (&response, json_node_unref);

  response = mcp_call (&mcp, "initialize", "{\"protocolVersion\": \"2024-11-05\", \"capabilities\": {}, "
                                           "\"clientInfo\": {\"name\": \"t\", \"version\": \"1\"}}");
  g_assert_cmpstr (json_object_get_string_member (result_of (response), "protocolVersion"), ==, "2024-11-05");
  g_clear_pointer (&response, json_node_unref);

  response = mcp_call (&mcp, "tools/list", NULL);
  {
    JsonArray *tools = json_object_get_array_member (result_of (response), "tools");

    g_assert_cmpuint (json_array_get_length (tools), ==, 1);
    g_assert_false (json_object_has_member (json_array_get_object_element (tools, 0), "outputSchema"));
  }
  g_clear_pointer (&response, json_node_unref);

  response = mcp_call (&mcp, "ping", NULL);
  g_assert_cmpuint (json_object_get_size (result_of (response)), ==, 0);

  mcp_finish (&mcp);
}

/* Each backend lists bash and the session tools its capabilities offer. */
static void
check_tools_list (const char *backend)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(JsonNode) response = NULL;
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) expected = g_ptr_array_new ();
  TerretCapabilities caps;
  JsonArray *tools;

  executor = terret_executor_new (backend, &error);
  g_assert_no_error (error);
  caps = terret_executor_get_capabilities (executor);
  g_ptr_array_add (expected, (char *) "bash");
  if (caps & TERRET_CAPABILITY_INPUT)
    g_ptr_array_add (expected, (char *) "bash_input");
  if (caps & TERRET_CAPABILITY_INTERRUPT)
    g_ptr_array_add (expected, (char *) "bash_interrupt");
  if (caps & TERRET_CAPABILITY_POLL)
    g_ptr_array_add (expected, (char *) "bash_poll");
  if (caps & TERRET_CAPABILITY_RUNS_COMMANDS)
    g_ptr_array_add (expected, (char *) "bash_output");
  if (caps & TERRET_CAPABILITY_PERSISTENT_SESSIONS)
    g_ptr_array_add (expected, (char *) "bash_close");
  if (caps & TERRET_CAPABILITY_LIST)
    g_ptr_array_add (expected, (char *) "bash_list");

  mcp_start (&mcp, backend);
  mcp_initialize (&mcp);
  response = mcp_call (&mcp, "tools/list", NULL);
  tools = json_object_get_array_member (result_of (response), "tools");

  g_assert_cmpuint (json_array_get_length (tools), ==, expected->len);
  for (guint i = 0; i < expected->len; i++)
    {
      JsonObject *tool = json_array_get_object_element (tools, i);
      JsonObject *schema = json_object_get_object_member (tool, "inputSchema");

      g_assert_cmpstr (json_object_get_string_member (tool, "name"), ==, g_ptr_array_index (expected, i));
      g_assert_cmpstr (json_object_get_string_member (schema, "type"), ==, "object");
      g_assert_nonnull (json_object_get_string_member (tool, "description"));
      /* bash_list declares its own output: the sessions. */
      if (g_str_equal (g_ptr_array_index (expected, i), "bash_list"))
        g_assert_true (json_object_has_member (json_object_get_object_member (json_object_get_object_member (tool, "outputSchema"),
                                                                              "properties"), "sessions"));
    }

  /* bash declares serve's run fields as its output. */
  {
    JsonObject *bash = json_array_get_object_element (tools, 0);
    JsonObject *output = json_object_get_object_member (bash, "outputSchema");
    JsonObject *properties = json_object_get_object_member (output, "properties");
    const char *fields[] = { "status", "signal", "stdout", "stdout_base64", "stderr", "notice",
                             "timed_out", "running", "dropped", "cwd", "clock", "stalled",
                             "pipestatus" };

    for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
      g_assert_true (json_object_has_member (properties, fields[i]));
    g_assert_true (json_object_has_member (json_object_get_object_member (json_object_get_object_member (bash, "inputSchema"),
                                                                          "properties"), "command"));
  }

  mcp_finish (&mcp);
}

static void
test_tools_list_noshell (void)
{
  g_test_summary ("tools/list on noshell: bash alone");
  check_tools_list ("noshell");
}

static void
test_tools_list_oneshot (void)
{
  REQUIRE_BACKEND ("oneshot");
  g_test_summary ("tools/list on oneshot: bash and the tools its capabilities offer");
  check_tools_list ("oneshot");
}

static void
test_tools_list_pty (void)
{
  REQUIRE_BACKEND ("pty");
  g_test_summary ("tools/list on pty: bash and every session tool");
  check_tools_list ("pty");
}

static void
test_session_cwd (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(JsonNode) response = NULL;
  JsonObject *out;

  REQUIRE_BACKEND ("pty");

  g_test_summary ("bash: cd in one call holds for the next call in the session; "
                  "the text ends with a status line, structuredContent has the run fields");
  mcp_start (&mcp, "pty");
  mcp_initialize (&mcp);

  response = mcp_tool (&mcp, "bash", "{\"command\": \"cd /tmp\"}");
  out = structured_of (result_of (response));
  g_assert_cmpint (json_object_get_int_member (out, "status"), ==, 0);
  g_assert_cmpstr (json_object_get_string_member (out, "cwd"), ==, "/tmp");
  g_clear_pointer (&response, json_node_unref);

  response = mcp_tool (&mcp, "bash", "{\"command\": \"pwd\"}");
  out = structured_of (result_of (response));
  g_assert_cmpstr (json_object_get_string_member (out, "stdout"), ==, "/tmp\n");
  g_assert_true (json_object_get_null_member (out, "signal"));
  g_assert_false (json_object_get_boolean_member (out, "timed_out"));
  g_assert_false (json_object_get_boolean_member (out, "running"));
  g_assert_cmpint (json_object_get_int_member (out, "dropped"), ==, 0);
  g_assert_cmpstr (tool_text (result_of (response)), ==, "/tmp\n[exit status 0; cwd: /tmp]");
  g_clear_pointer (&response, json_node_unref);

  /* Bytes that are not UTF-8: exact in base64, replaced in the text. */
  response = mcp_tool (&mcp, "bash", "{\"command\": \"printf 'a\\\\377'; (exit 4)\"}");
  out = structured_of (result_of (response));
  g_assert_cmpstr (json_object_get_string_member (out, "stdout_base64"), ==, "Yf8=");
  g_assert_false (json_object_has_member (out, "stdout"));
  g_assert_true (g_str_has_prefix (tool_text (result_of (response)), "a\xef\xbf\xbd\n[exit status 4"));

  mcp_finish (&mcp);
}

static void
test_sessions_isolated (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(JsonNode) response = NULL;

  REQUIRE_BACKEND ("pty");

  g_test_summary ("bash: two sessions keep their own cwd and variables");
  mcp_start (&mcp, "pty");
  mcp_initialize (&mcp);

  response = mcp_tool (&mcp, "bash", "{\"session\": \"a\", \"command\": \"cd /tmp; export X=from-a\"}");
  g_clear_pointer (&response, json_node_unref);
  response = mcp_tool (&mcp, "bash", "{\"session\": \"b\", \"command\": \"cd /; export X=from-b\"}");
  g_clear_pointer (&response, json_node_unref);

  response = mcp_tool (&mcp, "bash", "{\"session\": \"a\", \"command\": \"echo $PWD $X\"}");
  g_assert_cmpstr (json_object_get_string_member (structured_of (result_of (response)), "stdout"), ==, "/tmp from-a\n");
  g_clear_pointer (&response, json_node_unref);
  response = mcp_tool (&mcp, "bash", "{\"session\": \"b\", \"command\": \"echo $PWD $X\"}");
  g_assert_cmpstr (json_object_get_string_member (structured_of (result_of (response)), "stdout"), ==, "/ from-b\n");
  g_clear_pointer (&response, json_node_unref);

  /* Closing one leaves the other; the closed one starts afresh. */
  response = mcp_tool (&mcp, "bash_close", "{\"session\": \"a\"}");
  g_assert_false (json_object_get_boolean_member (result_of (response), "isError"));
  g_clear_pointer (&response, json_node_unref);
  response = mcp_tool (&mcp, "bash", "{\"session\": \"a\", \"command\": \"echo \\\"[$X]\\\"\"}");
  g_assert_cmpstr (json_object_get_string_member (structured_of (result_of (response)), "stdout"), ==, "[]\n");
  g_clear_pointer (&response, json_node_unref);
  response = mcp_tool (&mcp, "bash", "{\"session\": \"b\", \"command\": \"echo $X\"}");
  g_assert_cmpstr (json_object_get_string_member (structured_of (result_of (response)), "stdout"), ==, "from-b\n");

  mcp_finish (&mcp);
}

static void
test_malformed (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(JsonNode) response = NULL;

  g_test_summary ("malformed JSON-RPC gets the standard codes; the server goes on");
  mcp_start (&mcp, "noshell");

  mcp_send_line (&mcp, "{not json");
  response = mcp_recv (&mcp);
  g_assert_cmpint (error_code_of (response), ==, -32700);
  g_assert_true (json_object_get_null_member (json_node_get_object (response), "id"));
  g_clear_pointer (&response, json_node_unref);

  mcp_send_line (&mcp, "[1, 2]");
  response = mcp_recv (&mcp);
  g_assert_cmpint (error_code_of (response), ==, -32600);
  g_clear_pointer (&response, json_node_unref);

  mcp_send_line (&mcp, "{\"id\": 1, \"method\": \"ping\"}");
  response = mcp_recv (&mcp);
  g_assert_cmpint (error_code_of (response), ==, -32600);
  g_clear_pointer (&response, json_node_unref);

  mcp_send_line (&mcp, "{\"jsonrpc\": \"2.0\", \"id\": 2}");
  response = mcp_recv (&mcp);
  g_assert_cmpint (error_code_of (response), ==, -32600);
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (response), "id"), ==, 2);
  g_clear_pointer (&response, json_node_unref);

  /* Unknown notifications are ignored, unknown requests are not. */
  mcp_send_line (&mcp, "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/whatever\"}");
  mcp.next_id = 10;
  response = mcp_call (&mcp, "resources/list", NULL);
  g_assert_cmpint (error_code_of (response), ==, -32601);
  g_clear_pointer (&response, json_node_unref);

  response = mcp_call (&mcp, "tools/call", "{\"name\": \"rm_rf\", \"arguments\": {}}");
  g_assert_cmpint (error_code_of (response), ==, -32602);
  g_clear_pointer (&response, json_node_unref);
  response = mcp_call (&mcp, "tools/call", "{\"arguments\": {}}");
  g_assert_cmpint (error_code_of (response), ==, -32602);
  g_clear_pointer (&response, json_node_unref);
  response = mcp_tool (&mcp, "bash", "{\"command\": 42}");
  g_assert_cmpint (error_code_of (response), ==, -32602);
  g_clear_pointer (&response, json_node_unref);
  response = mcp_tool (&mcp, "bash", "{\"command\": \"true\", \"cwd\": [\"/\"]}");
  g_assert_cmpint (error_code_of (response), ==, -32602);
  g_clear_pointer (&response, json_node_unref);
  response = mcp_tool (&mcp, "bash", "{\"command\": \"true\", \"on_timeout\": \"wait\"}");
  g_assert_cmpint (error_code_of (response), ==, -32602);
  g_clear_pointer (&response, json_node_unref);
  /* A tool the backend lacks is as unknown as one that never was. */
  response = mcp_tool (&mcp, "bash_poll", "{}");
  g_assert_cmpint (error_code_of (response), ==, -32602);
  g_clear_pointer (&response, json_node_unref);

  /* Nothing ran on noshell: a tool result with isError and the reason. */
  response = mcp_tool (&mcp, "bash", "{\"command\": \"true\"}");
  g_assert_true (json_object_get_boolean_member (result_of (response), "isError"));
  g_assert_true (g_str_has_prefix (tool_text (result_of (response)), "error (no-shell): "));

  mcp_finish (&mcp);
}

/* Every refusal made after a line parsed as an object: the id when it was
 * readable, the field at fault in the message. */
static void
test_refusals (void)
{
  g_auto(Mcp) mcp = { 0 };
  gboolean pty = have_backend ("pty");
  struct {
    const char *line;
    gint64 code;
    const char *id;
    const char *field;
    gboolean needs_pty;  /* a session tool */
  } cases[] = {
    /* A NUL anywhere: named down to where it is. */
    { "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\", \"params\": {\"name\": \"bash\", "
      "\"arguments\": {\"command\": \"echo a\\u0000; exit 1\"}}}", -32602, "1", "“params.arguments.command”" },
    { "{\"jsonrpc\": \"2.0\", \"id\": \"s\", \"method\": \"pi\\u0000ng\"}", -32600, "\"s\"", "“method”" },
    { "{\"jsonrpc\": \"2.0\", \"id\": \"\\u0000\", \"method\": \"ping\"}", -32600, "null", "“id”" },
    /* The envelope. */
    { "{\"jsonrpc\": \"1.0\", \"id\": 3, \"method\": \"ping\"}", -32600, "3", "“jsonrpc”" },
    { "{\"jsonrpc\": \"2.0\", \"id\": 4}", -32600, "4", "“method”" },
    { "{\"jsonrpc\": \"2.0\", \"id\": 5, \"method\": \"ping\", \"params\": [1]}", -32602, "5", "“params”" },
    { "{\"jsonrpc\": \"2.0\", \"id\": 1.5, \"method\": \"ping\"}", -32600, "null", "“id”" },
    { "{\"jsonrpc\": \"2.0\", \"id\": 6, \"method\": \"initialize\", \"params\": {\"protocolVersion\": 1}}",
      -32602, "6", "“protocolVersion”" },
    /* tools/call. */
    { "{\"jsonrpc\": \"2.0\", \"id\": 7, \"method\": \"tools/call\", \"params\": {}}", -32602, "7", "“name”" },
    { "{\"jsonrpc\": \"2.0\", \"id\": 8, \"method\": \"tools/call\", \"params\": {\"name\": \"bash\", "
      "\"arguments\": []}}", -32602, "8", "“arguments”" },
    { "{\"jsonrpc\": \"2.0\", \"id\": 9, \"method\": \"tools/call\", \"params\": {\"name\": \"bash\", "
      "\"arguments\": {}}}", -32602, "9", "“command”" },
    { "{\"jsonrpc\": \"2.0\", \"id\": 10, \"method\": \"tools/call\", \"params\": {\"name\": \"bash\", "
      "\"arguments\": {\"command\": 1}}}", -32602, "10", "“command”" },
    { "{\"jsonrpc\": \"2.0\", \"id\": 11, \"method\": \"tools/call\", \"params\": {\"name\": \"bash\", "
      "\"arguments\": {\"command\": \"true\", \"session\": {}}}}", -32602, "11", "“session”" },
    { "{\"jsonrpc\": \"2.0\", \"id\": 12, \"method\": \"tools/call\", \"params\": {\"name\": \"bash\", "
      "\"arguments\": {\"command\": \"true\", \"timeout\": \"soon\"}}}", -32602, "12", "“timeout”" },
    { "{\"jsonrpc\": \"2.0\", \"id\": 13, \"method\": \"tools/call\", \"params\": {\"name\": \"bash\", "
      "\"arguments\": {\"command\": \"true\", \"on_timeout\": \"wait\"}}}", -32602, "13", "“on_timeout”" },
    { "{\"jsonrpc\": \"2.0\", \"id\": 14, \"method\": \"tools/call\", \"params\": {\"name\": \"bash\", "
      "\"arguments\": {\"command\": \"true\", \"capture\": \"middle\"}}}", -32602, "14", "“capture”" },
    { "{\"jsonrpc\": \"2.0\", \"id\": 15, \"method\": \"tools/call\", \"params\": {\"name\": \"bash\", "
      "\"arguments\": {\"command\": \"true\", \"keep_full_output\": 1}}}", -32602, "15", "“keep_full_output”" },
    { "{\"jsonrpc\": \"2.0\", \"id\": 16, \"method\": \"tools/call\", \"params\": {\"name\": \"bash\", "
      "\"arguments\": {\"command\": \"true\", \"cwd\": 5}}}", -32602, "16", "“cwd”" },
    { "{\"jsonrpc\": \"2.0\", \"id\": 22, \"method\": \"tools/call\", \"params\": {\"name\": \"bash\", "
      "\"arguments\": {\"command\": \"true\", \"env\": [\"A=1\"]}}}", -32602, "22", "“env”" },
    { "{\"jsonrpc\": \"2.0\", \"id\": 23, \"method\": \"tools/call\", \"params\": {\"name\": \"bash\", "
      "\"arguments\": {\"command\": \"true\", \"on_idle\": \"wait\"}}}", -32602, "23", "“on_idle”" },
    /* The session tools. */
    { "{\"jsonrpc\": \"2.0\", \"id\": 17, \"method\": \"tools/call\", \"params\": {\"name\": \"bash_input\", "
      "\"arguments\": {}}}", -32602, "17", "“data”", TRUE },
    { "{\"jsonrpc\": \"2.0\", \"id\": 18, \"method\": \"tools/call\", \"params\": {\"name\": \"bash_input\", "
      "\"arguments\": {\"data_base64\": \"!!\"}}}", -32602, "18", "“data_base64”", TRUE },
    { "{\"jsonrpc\": \"2.0\", \"id\": 19, \"method\": \"tools/call\", \"params\": {\"name\": \"bash_poll\", "
      "\"arguments\": {\"wait\": \"long\"}}}", -32602, "19", "“wait”", TRUE },
    { "{\"jsonrpc\": \"2.0\", \"id\": 20, \"method\": \"tools/call\", \"params\": {\"name\": \"bash_close\", "
      "\"arguments\": {\"session\": 2}}}", -32602, "20", "“session”", TRUE },
    { "{\"jsonrpc\": \"2.0\", \"id\": 21, \"method\": \"tools/call\", \"params\": {\"name\": \"bash_interrupt\", "
      "\"arguments\": {\"session\": \"a\", \"signal\": 9}}}", -32602, "21", "“signal”", TRUE },
  };

  g_test_summary ("Every refusal of a message that parsed carries its id where it was "
                  "readable, and names the field at fault; notifications get no answer");
  mcp_start (&mcp, pty ? "pty" : "noshell");

  /* A notification at fault is not answered: the next answer is the
   * ping's. */
  mcp_send_line (&mcp, "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/x\\u0000\"}");
  mcp.next_id = 100;
  {
    g_autoptr(JsonNode) response = mcp_call (&mcp, "ping", NULL);

    g_assert_cmpuint (json_object_get_size (result_of (response)), ==, 0);
  }

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(JsonNode) response = NULL;
      g_autofree char *id = NULL;
      JsonObject *object;
      const char *message;

      if (cases[i].needs_pty && !pty)
        continue;

      mcp_send_line (&mcp, cases[i].line);
      response = mcp_recv (&mcp);
      object = json_node_get_object (response);
      id = json_to_string (json_object_get_member (object, "id"), FALSE);
      g_assert_cmpstr (id, ==, cases[i].id);
      g_assert_cmpint (error_code_of (response), ==, cases[i].code);
      message = json_object_get_string_member (json_object_get_object_member (object, "error"), "message");
      if (strstr (message, cases[i].field) == NULL)
        g_error ("%s: “%s” does not name %s", cases[i].line, message, cases[i].field);
    }

  mcp_finish (&mcp);
}

static void
test_duplicate_id (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(JsonNode) response = NULL;
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *fifo = terret_test_make_fifo (dir, "go");
  g_autofree char *args = NULL;
  g_autofree char *line = NULL;
  guint id;

  REQUIRE_BACKEND ("oneshot");

  g_test_summary ("a tools/call whose id is in flight is refused with that id, naming it; "
                  "the call in flight goes on");
  mcp_start (&mcp, "oneshot");

  args = g_strdup_printf ("{\"name\": \"bash\", \"arguments\": {\"command\": \"cat '%s'\"}}", fifo);
  id = mcp_request (&mcp, "tools/call", args);
  line = g_strdup_printf ("{\"jsonrpc\": \"2.0\", \"id\": %u, \"method\": \"tools/call\", \"params\": %s}",
                          id, args);
  mcp_send_line (&mcp, line);

  response = mcp_recv (&mcp);
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (response), "id"), ==, id);
  g_assert_cmpint (error_code_of (response), ==, -32600);
  g_assert_nonnull (strstr (json_object_get_string_member (json_object_get_object_member (json_node_get_object (response), "error"),
                                                           "message"), "“id”"));
  g_clear_pointer (&response, json_node_unref);

  terret_test_write_fifo (fifo, "first\n");
  response = mcp_response (&mcp, id, NULL);
  g_assert_cmpstr (json_object_get_string_member (structured_of (result_of (response)), "stdout"), ==, "first\n");

  mcp_finish (&mcp);
}

static void
test_long_line (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(GString) line = g_string_new ("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\", "
                                          "\"params\": {\"name\": \"bash\", \"arguments\": {\"command\": \"echo ");
  g_autoptr(JsonNode) refused = NULL;
  g_autoptr(JsonNode) served = NULL;

  g_test_summary ("A message line of 8 MiB or more is refused as an invalid request (id null) "
                  "without being held in memory, and serving goes on with the next line");
  mcp_start (&mcp, "noshell");

  while (line->len < 8 * 1024 * 1024 + 100)
    g_string_append (line, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
  g_string_append (line, "\"}}}");
  mcp_send_line (&mcp, line->str);
  mcp.next_id = 2;

  refused = mcp_recv (&mcp);
  g_assert_true (json_object_get_null_member (json_node_get_object (refused), "id"));
  g_assert_cmpint (error_code_of (refused), ==, -32600);
  g_assert_nonnull (strstr (json_object_get_string_member (json_object_get_object_member (json_node_get_object (refused), "error"),
                                                           "message"), "shorter than"));

  served = mcp_call (&mcp, "ping", NULL);
  g_assert_cmpuint (json_object_get_size (result_of (served)), ==, 0);

  mcp_finish (&mcp);
}

static void
test_is_error (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(JsonNode) response = NULL;
  JsonObject *result;

  REQUIRE_BACKEND ("pty");

  g_test_summary ("isError, with the reason as text, when nothing ran: a busy session, "
                  "closing a session never opened");
  mcp_start (&mcp, "pty");
  mcp_initialize (&mcp);

  response = mcp_tool (&mcp, "bash_close", "{\"session\": \"never\"}");
  result = result_of (response);
  g_assert_true (json_object_get_boolean_member (result, "isError"));
  g_assert_nonnull (strstr (tool_text (result), "never"));
  g_assert_false (json_object_has_member (result, "structuredContent"));
  g_clear_pointer (&response, json_node_unref);

  /* A detached command keeps its session busy. */
  response = mcp_tool (&mcp, "bash", "{\"session\": \"b\", \"command\": \"sleep 30\", "
                                     "\"timeout\": 0.1, \"on_timeout\": \"detach\"}");
  g_assert_true (json_object_get_boolean_member (structured_of (result_of (response)), "running"));
  g_clear_pointer (&response, json_node_unref);

  response = mcp_tool (&mcp, "bash", "{\"session\": \"b\", \"command\": \"true\"}");
  result = result_of (response);
  g_assert_true (json_object_get_boolean_member (result, "isError"));
  g_assert_true (g_str_has_prefix (tool_text (result), "error (busy): "));
  g_clear_pointer (&response, json_node_unref);

  response = mcp_tool (&mcp, "bash_close", "{\"session\": \"b\"}");
  g_assert_false (json_object_get_boolean_member (result_of (response), "isError"));

  mcp_finish (&mcp);
}

static void
test_detach_poll (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(JsonNode) response = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  JsonObject *result;

  REQUIRE_BACKEND ("pty");

  g_test_summary ("a command detached at its timeout takes input and is polled to its end");
  mcp_start (&mcp, "pty");
  mcp_initialize (&mcp);

  response = mcp_tool (&mcp, "bash", "{\"session\": \"i\", \"command\": \"read x; echo \\\"got:$x\\\"\", "
                                     "\"timeout\": 0.2, \"on_timeout\": \"detach\"}");
  result = structured_of (result_of (response));
  g_assert_true (json_object_get_boolean_member (result, "running"));
  g_assert_true (json_object_get_null_member (result, "status"));
  g_assert_nonnull (strstr (tool_text (result_of (response)), "still running"));
  g_clear_pointer (&response, json_node_unref);

  response = mcp_tool (&mcp, "bash_input", "{\"session\": \"i\", \"data\": \"hi\\n\"}");
  g_assert_false (json_object_get_boolean_member (result_of (response), "isError"));
  g_clear_pointer (&response, json_node_unref);

  for (guint i = 0; ; i++)
    {
      g_assert_cmpuint (i, <, 100);
      response = mcp_tool (&mcp, "bash_poll", "{\"session\": \"i\", \"wait\": 10}");
      result = structured_of (result_of (response));
      g_string_append (out, json_object_get_string_member (result, "stdout"));
      if (!json_object_get_boolean_member (result, "running"))
        {
          g_assert_cmpint (json_object_get_int_member (result, "status"), ==, 0);
          g_clear_pointer (&response, json_node_unref);
          break;
        }
      g_clear_pointer (&response, json_node_unref);
    }
  g_assert_cmpstr (out->str, ==, "got:hi\n");

  mcp_finish (&mcp);
}

/* A model that lost a session's name finds its command with bash_list;
 * bash takes a cwd, variables and the clocks, and says how a pipeline's
 * commands ended. */
static void
test_list_clocks_context (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(JsonNode) response = NULL;
  JsonObject *result, *entry;
  JsonArray *sessions, *statuses;

  REQUIRE_BACKEND ("pty");

  g_test_summary ("bash_list shows a command handed back by return_after; bash takes cwd, "
                  "env and idle_timeout, and reports pipestatus and stalled");
  mcp_start (&mcp, "pty");
  mcp_initialize (&mcp);

  response = mcp_tool (&mcp, "bash", "{\"session\": \"lost\", \"command\": \"echo up; sleep 60\", "
                                     "\"return_after\": 0.5, \"deadline\": 60}");
  result = structured_of (result_of (response));
  g_assert_true (json_object_get_boolean_member (result, "running"));
  g_assert_cmpstr (json_object_get_string_member (result, "clock"), ==, "return-after");
  g_clear_pointer (&response, json_node_unref);

  response = mcp_tool (&mcp, "bash_list", "{}");
  result = structured_of (result_of (response));
  sessions = json_object_get_array_member (result, "sessions");
  g_assert_cmpuint (json_array_get_length (sessions), ==, 1);
  entry = json_array_get_object_element (sessions, 0);
  g_assert_cmpstr (json_object_get_string_member (entry, "session"), ==, "lost");
  g_assert_cmpstr (json_object_get_string_member (entry, "state"), ==, "detached");
  g_assert_cmpstr (json_object_get_string_member (entry, "command"), ==, "echo up; sleep 60");
  g_assert_nonnull (strstr (tool_text (result_of (response)), "“lost”: running, handed back"));
  g_clear_pointer (&response, json_node_unref);

  response = mcp_tool (&mcp, "bash", "{\"command\": \"echo \\\"$PWD $A\\\"; (exit 2) | true\", "
                                     "\"cwd\": \"/usr\", \"env\": {\"A\": \"b\"}}");
  result = structured_of (result_of (response));
  g_assert_cmpstr (json_object_get_string_member (result, "stdout"), ==, "/usr b\n");
  statuses = json_object_get_array_member (result, "pipestatus");
  g_assert_cmpuint (json_array_get_length (statuses), ==, 2);
  g_assert_cmpint (json_array_get_int_element (statuses, 0), ==, 2);
  g_assert_nonnull (strstr (tool_text (result_of (response)), "pipeline statuses 2 0"));
  g_clear_pointer (&response, json_node_unref);

  /* Quiet without waiting for input: a wait would be handed back as one. */
  response = mcp_tool (&mcp, "bash", "{\"session\": \"ask\", \"command\": \"printf 'sure? '; sleep 60\", "
                                     "\"idle_timeout\": 0.5, \"on_idle\": \"return\"}");
  result = structured_of (result_of (response));
  g_assert_true (json_object_get_boolean_member (result, "stalled"));
  g_assert_true (json_object_get_boolean_member (result, "running"));
  g_assert_nonnull (strstr (tool_text (result_of (response)), "stalled"));
  g_clear_pointer (&response, json_node_unref);

  mcp_finish (&mcp);
}

static void
test_progress (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(JsonNode) response = NULL;
  g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func ((GDestroyNotify) json_node_unref);
  g_autoptr(GString) seen = g_string_new (NULL);
  gint64 last = 0;
  guint id;

  REQUIRE_BACKEND ("oneshot");

  g_test_summary ("a call with a progressToken gets notifications/progress carrying its "
                  "output before the result, with growing progress");
  mcp_start (&mcp, "oneshot");
  mcp_initialize (&mcp);

  id = mcp_request (&mcp, "tools/call", "{\"name\": \"bash\", \"arguments\": {\"command\": "
                                        "\"echo one; echo two\"}, \"_meta\": {\"progressToken\": \"tok\"}}");
  response = mcp_response (&mcp, id, notes);

  g_assert_cmpuint (notes->len, >, 0);
  for (guint i = 0; i < notes->len; i++)
    {
      JsonObject *params = json_object_get_object_member (json_node_get_object (g_ptr_array_index (notes, i)),
                                                          "params");

      g_assert_cmpstr (json_object_get_string_member (params, "progressToken"), ==, "tok");
      g_assert_cmpint (json_object_get_int_member (params, "progress"), >, last);
      last = json_object_get_int_member (params, "progress");
      g_string_append (seen, json_object_get_string_member (params, "message"));
    }
  g_assert_cmpstr (seen->str, ==, "one\ntwo\n");
  g_assert_cmpstr (json_object_get_string_member (structured_of (result_of (response)), "stdout"), ==, "one\ntwo\n");

  mcp_finish (&mcp);
}

static void
test_cancel (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(JsonNode) response = NULL;
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *fifo = terret_test_make_fifo (dir, "pid");
  g_autofree char *args = NULL;
  g_autofree char *pids = NULL;
  g_autofree char *cancel = NULL;
  guint id, ping;

  REQUIRE_BACKEND ("oneshot");

  g_test_summary ("notifications/cancelled ends the run of that request, which gets no answer");
  mcp_start (&mcp, "oneshot");
  mcp_initialize (&mcp);

  args = g_strdup_printf ("{\"name\": \"bash\", \"arguments\": {\"session\": \"c\", "
                          "\"command\": \"sleep 30 & echo $! $$ > '%s'; wait\"}}", fifo);
  id = mcp_request (&mcp, "tools/call", args);
  pids = terret_test_read_fifo (fifo);

  cancel = g_strdup_printf ("{\"jsonrpc\": \"2.0\", \"method\": \"notifications/cancelled\", "
                            "\"params\": {\"requestId\": %u, \"reason\": \"test\"}}", id);
  mcp_send_line (&mcp, cancel);
  terret_test_wait_gone_all (pids);

  /* The next message is the ping's answer: the cancelled call has none. */
  ping = mcp_request (&mcp, "ping", NULL);
  response = mcp_recv (&mcp);
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (response), "id"), ==, ping);
  g_clear_pointer (&response, json_node_unref);

  /* A cancel of what is no longer in flight is ignored. */
  mcp_send_line (&mcp, cancel);
  response = mcp_tool (&mcp, "bash", "{\"session\": \"c\", \"command\": \"echo again\"}");
  g_assert_cmpstr (json_object_get_string_member (structured_of (result_of (response)), "stdout"), ==, "again\n");

  mcp_finish (&mcp);
}

static void
test_eof_in_flight (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *fifo = terret_test_make_fifo (dir, "pid");
  g_autofree char *args = NULL;
  g_autofree char *pids = NULL;

  REQUIRE_BACKEND ("pty");

  g_test_summary ("end of input ends the calls in flight, closes every session and exits 0");
  mcp_start (&mcp, "pty");
  mcp_initialize (&mcp);

  args = g_strdup_printf ("{\"name\": \"bash\", \"arguments\": {\"session\": \"e\", "
                          "\"command\": \"sleep 30 & echo $! $$ > '%s'; wait\"}}", fifo);
  mcp_request (&mcp, "tools/call", args);
  pids = terret_test_read_fifo (fifo);

  mcp_finish (&mcp);
  terret_test_wait_gone_all (pids);
}

/* A 2025-06-18 client knows no tasks: a `task` member is ignored (the
 * call answers as it always did) and the tasks/ methods are unknown. */
static void
test_tasks_older_revision (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(JsonNode) response = NULL;
  JsonArray *tools;

  REQUIRE_BACKEND ("oneshot");

  g_test_summary ("before 2025-11-25 a task-augmented call runs as a plain call; tasks/ are unknown");
  mcp_start (&mcp, "oneshot");
  mcp_initialize (&mcp);

  response = mcp_call (&mcp, "tools/list", NULL);
  tools = json_object_get_array_member (result_of (response), "tools");
  for (guint i = 0; i < json_array_get_length (tools); i++)
    g_assert_false (json_object_has_member (json_array_get_object_element (tools, i), "execution"));
  g_clear_pointer (&response, json_node_unref);

  response = mcp_call (&mcp, "tools/call",
                       "{\"name\": \"bash\", \"arguments\": {\"command\": \"echo plain\"}, \"task\": {}}");
  g_assert_cmpstr (json_object_get_string_member (structured_of (result_of (response)), "stdout"), ==, "plain\n");
  g_clear_pointer (&response, json_node_unref);

  response = mcp_call (&mcp, "tasks/list", "{}");
  g_assert_cmpint (error_code_of (response), ==, -32601);

  mcp_finish (&mcp);
}

static void
mcp_initialize_tasks (Mcp *mcp)
{
  g_autoptr(JsonNode) response =
    mcp_call (mcp, "initialize",
              "{\"protocolVersion\": \"2025-11-25\", \"capabilities\": {}, "
              "\"clientInfo\": {\"name\": \"test-mcp\", \"version\": \"1\"}}");

  g_assert_cmpstr (json_object_get_string_member (result_of (response), "protocolVersion"), ==, "2025-11-25");
  mcp_send_line (mcp, "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\"}");
}

/* The next message, which must be the task's status notification. */
static void
expect_task_status (Mcp        *mcp,
                    const char *status)
{
  g_autoptr(JsonNode) node = mcp_recv (mcp);
  JsonObject *object = json_node_get_object (node);

  g_assert_cmpstr (json_object_get_string_member (object, "method"), ==, "notifications/tasks/status");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (object, "params"), "status"),
                   ==, status);
}

static void
test_tasks_refusals (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(JsonNode) response = NULL;

  REQUIRE_BACKEND ("pty");

  g_test_summary ("tasks: an unknown task, a tool that runs no task, a bad ttl and a bad cursor "
                  "are invalid params or method not found, as the spec says");
  mcp_start (&mcp, "pty");
  mcp_initialize_tasks (&mcp);

  response = mcp_call (&mcp, "tasks/get", "{\"taskId\": \"nope\"}");
  g_assert_cmpint (error_code_of (response), ==, -32602);
  g_clear_pointer (&response, json_node_unref);
  response = mcp_call (&mcp, "tasks/result", "{\"taskId\": \"nope\"}");
  g_assert_cmpint (error_code_of (response), ==, -32602);
  g_clear_pointer (&response, json_node_unref);
  response = mcp_call (&mcp, "tasks/cancel", "{}");
  g_assert_cmpint (error_code_of (response), ==, -32602);
  g_clear_pointer (&response, json_node_unref);
  response = mcp_call (&mcp, "tasks/list", "{\"cursor\": \"x\"}");
  g_assert_cmpint (error_code_of (response), ==, -32602);
  g_clear_pointer (&response, json_node_unref);
  /* A number before any task was made: no cursor this server gave. */
  response = mcp_call (&mcp, "tasks/list", "{\"cursor\": \"1\"}");
  g_assert_cmpint (error_code_of (response), ==, -32602);
  g_clear_pointer (&response, json_node_unref);
  /* null is absent, for a method's params and a tool's arguments. */
  response = mcp_call (&mcp, "tasks/list", "{\"cursor\": null, \"_meta\": null}");
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (result_of (response), "tasks")), ==, 0);
  g_clear_pointer (&response, json_node_unref);
  response = mcp_tool (&mcp, "bash", "{\"command\": \"echo n\", \"session\": null, \"timeout\": null, "
                       "\"no_such_argument\": null}");
  g_assert_cmpstr (json_object_get_string_member (structured_of (result_of (response)), "stdout"), ==, "n\n");
  g_clear_pointer (&response, json_node_unref);
  response = mcp_call (&mcp, "tools/call", "{\"name\": \"bash_poll\", \"arguments\": {}, \"task\": {}}");
  g_assert_cmpint (error_code_of (response), ==, -32601);
  g_clear_pointer (&response, json_node_unref);
  response = mcp_call (&mcp, "tools/call",
                       "{\"name\": \"bash\", \"arguments\": {\"command\": \"true\"}, \"task\": {\"ttl\": -1}}");
  g_assert_cmpint (error_code_of (response), ==, -32602);
  g_clear_pointer (&response, json_node_unref);
  /* Refused arguments make no task. */
  response = mcp_call (&mcp, "tools/call", "{\"name\": \"bash\", \"arguments\": {}, \"task\": {}}");
  g_assert_cmpint (error_code_of (response), ==, -32602);
  g_clear_pointer (&response, json_node_unref);
  response = mcp_call (&mcp, "tasks/list", NULL);
  g_assert_cmpuint (json_array_get_length (json_object_get_array_member (result_of (response), "tasks")), ==, 0);

  mcp_finish (&mcp);
}

/* tasks/result waits for the task; a notifications/cancelled ends the
 * wait unanswered and leaves the task running; the end of input cancels
 * the task and ends its tree. */
static void
test_tasks_wait_and_eof (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(JsonNode) response = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *fifo = terret_test_make_fifo (dir, "pid");
  g_autofree char *args = NULL;
  g_autofree char *pids = NULL;
  g_autofree char *get = NULL;
  g_autofree char *cancel = NULL;
  g_autofree char *line = NULL;
  const char *task_id;
  guint waiting, ping;

  REQUIRE_BACKEND ("pty");

  g_test_summary ("a tasks/result waits, is cancelled by notifications/cancelled; the end of "
                  "input cancels a working task and ends its tree");
  mcp_start (&mcp, "pty");
  mcp_initialize_tasks (&mcp);

  args = g_strdup_printf ("{\"name\": \"bash\", \"arguments\": {\"session\": \"t\", "
                          "\"command\": \"sleep 30 & echo $! $$ > '%s'; wait\"}, \"task\": {\"ttl\": 600000}}",
                          fifo);
  response = mcp_call (&mcp, "tools/call", args);
  task_id = json_object_get_string_member (json_object_get_object_member (result_of (response), "task"),
                                           "taskId");
  g_assert_cmpint (json_object_get_int_member (json_object_get_object_member (result_of (response), "task"),
                                               "ttl"), ==, 600000);
  get = g_strdup_printf ("{\"taskId\": \"%s\"}", task_id);
  pids = terret_test_read_fifo (fifo);

  waiting = mcp_request (&mcp, "tasks/result", get);
  cancel = g_strdup_printf ("{\"jsonrpc\": \"2.0\", \"method\": \"notifications/cancelled\", "
                            "\"params\": {\"requestId\": %u}}", waiting);
  mcp_send_line (&mcp, cancel);
  /* The next message is the ping's answer: the cancelled wait has none. */
  ping = mcp_request (&mcp, "ping", NULL);
  g_clear_pointer (&response, json_node_unref);
  response = mcp_recv (&mcp);
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (response), "id"), ==, ping);
  g_clear_pointer (&response, json_node_unref);

  response = mcp_call (&mcp, "tasks/get", get);
  g_assert_cmpstr (json_object_get_string_member (result_of (response), "status"), ==, "working");

  /* End of input: the task is cancelled and says so, then the server
   * exits 0 with the task's tree gone. */
  g_output_stream_close (mcp.input, NULL, &error);
  g_assert_no_error (error);
  expect_task_status (&mcp, "cancelled");
  line = g_data_input_stream_read_line (mcp.output, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (line);
  g_subprocess_wait (mcp.proc, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (g_subprocess_get_exit_status (mcp.proc), ==, 0);
  terret_test_wait_gone_all (pids);
}

/* mcp keeps every run's full output unless the call says otherwise, and
 * bash_output reads it; the cut result names the error in its middle. */
static void
test_bash_output (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(JsonNode) response = NULL;
  JsonObject *out;
  JsonArray *errors;
  const char *text;
  gint64 at;
  g_autofree char *args = NULL;

  REQUIRE_BACKEND ("pty");

  g_test_summary ("mcp keeps full output by default; bash_output reads a cut result's middle by "
                  "offset and pattern; a run that kept none is a tool error saying so");
  mcp_start_with (&mcp, "pty", "max-output=1000");
  mcp_initialize (&mcp);

  response = mcp_tool (&mcp, "bash", "{\"command\": \"seq 1 5000; echo 'FAILED test_frob'; seq 1 5000\"}");
  out = structured_of (result_of (response));
  g_assert_false (json_object_get_null_member (out, "full_output"));
  errors = json_object_get_array_member (out, "omitted_errors");
  g_assert_cmpuint (json_array_get_length (errors), ==, 1);
  at = json_object_get_int_member (json_array_get_object_element (errors, 0), "offset");
  g_assert_nonnull (strstr (tool_text (result_of (response)), ": FAILED test_frob …]"));
  g_clear_pointer (&response, json_node_unref);

  args = g_strdup_printf ("{\"offset\": %" G_GINT64_FORMAT ", \"length\": 17}", at);
  response = mcp_tool (&mcp, "bash_output", args);
  text = tool_text (result_of (response));
  g_assert_true (g_str_has_prefix (text, "FAILED test_frob\n["));
  g_clear_pointer (&response, json_node_unref);

  response = mcp_tool (&mcp, "bash_output", "{\"pattern\": \"^FAIL\"}");
  text = tool_text (result_of (response));
  g_assert_true (g_str_has_prefix (text, "5001:"));
  g_assert_nonnull (strstr (text, ": FAILED test_frob\n[1 matching lines"));
  g_clear_pointer (&response, json_node_unref);

  /* Empty bytes are text, in a run's fields and a read's alike: "", never
   * a _base64 member. */
  response = mcp_tool (&mcp, "bash", "{\"command\": \"true\"}");
  g_assert_cmpstr (json_object_get_string_member (structured_of (result_of (response)), "stdout"), ==, "");
  g_assert_false (json_object_has_member (structured_of (result_of (response)), "stdout_base64"));
  g_clear_pointer (&response, json_node_unref);
  response = mcp_tool (&mcp, "bash_output", "{}");
  g_assert_cmpstr (json_object_get_string_member (structured_of (result_of (response)), "data"), ==, "");
  g_assert_false (json_object_has_member (structured_of (result_of (response)), "data_base64"));
  g_clear_pointer (&response, json_node_unref);

  response = mcp_tool (&mcp, "bash", "{\"command\": \"echo x\", \"keep_full_output\": false}");
  g_assert_true (json_object_get_null_member (structured_of (result_of (response)), "full_output"));
  g_clear_pointer (&response, json_node_unref);
  response = mcp_tool (&mcp, "bash_output", "{}");
  g_assert_true (json_object_get_boolean_member (result_of (response), "isError"));
  g_assert_nonnull (strstr (tool_text (result_of (response)), "keep_full_output"));

  mcp_finish (&mcp);
}

int
main (int    argc,
      char **argv)
{
  terret_test_init (&argc, &argv);
  /* The servers these tests start inherit it: a GLib critical any request
   * provokes aborts the server, and the test sees it die. */
  g_setenv ("G_DEBUG", "gc-friendly,fatal-criticals", TRUE);

  g_test_add_func ("/mcp/initialize", test_initialize);
  g_test_add_func ("/mcp/tools-list/noshell", test_tools_list_noshell);
  g_test_add_func ("/mcp/tools-list/oneshot", test_tools_list_oneshot);
  g_test_add_func ("/mcp/tools-list/pty", test_tools_list_pty);
  g_test_add_func ("/mcp/bash/session-cwd", test_session_cwd);
  g_test_add_func ("/mcp/bash/sessions-isolated", test_sessions_isolated);
  g_test_add_func ("/mcp/malformed", test_malformed);
  g_test_add_func ("/mcp/refusals", test_refusals);
  g_test_add_func ("/mcp/refusals/duplicate-id", test_duplicate_id);
  g_test_add_func ("/mcp/long-line", test_long_line);
  g_test_add_func ("/mcp/is-error", test_is_error);
  g_test_add_func ("/mcp/detach-poll", test_detach_poll);
  g_test_add_func ("/mcp/list-clocks-context", test_list_clocks_context);
  g_test_add_func ("/mcp/progress", test_progress);
  g_test_add_func ("/mcp/cancel", test_cancel);
  g_test_add_func ("/mcp/eof-in-flight", test_eof_in_flight);
  g_test_add_func ("/mcp/bash-output", test_bash_output);
  g_test_add_func ("/mcp/tasks/older-revision", test_tasks_older_revision);
  g_test_add_func ("/mcp/tasks/refusals", test_tasks_refusals);
  g_test_add_func ("/mcp/tasks/wait-and-eof", test_tasks_wait_and_eof);

  return g_test_run ();
}
