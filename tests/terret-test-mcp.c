/* terret-test-mcp.c: a `terret-exec mcp` run as a real process and spoken
 * to in JSON-RPC lines as an MCP host would, for the mcp tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>
#include <unistd.h>

#include "terret-test-mcp.h"
#include "terret-test-utils.h"

gboolean
have_backend (const char *name)
{
  GList *infos = terret_backend_info_list ();
  gboolean found = FALSE;

  for (GList *l = infos; l != NULL; l = l->next)
    found |= g_str_equal (terret_backend_info_get_name (l->data), name);
  g_list_free_full (infos, g_object_unref);

  return found;
}

void
mcp_clear (Mcp *mcp)
{
  g_clear_object (&mcp->output);
  g_clear_object (&mcp->input);
  if (mcp->proc != NULL)
    g_subprocess_force_exit (mcp->proc);
  g_clear_object (&mcp->proc);
}

/* With @setting (KEY=VALUE), or none. */
void
mcp_start_with (Mcp        *mcp,
                const char *backend,
                const char *setting)
{
  g_autoptr(GError) error = NULL;

  mcp->proc = g_subprocess_new (G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE,
                                &error, terret_test_cli_path (), "mcp", "--backend", backend,
                                setting != NULL ? "--set" : NULL, setting, NULL);
  g_assert_no_error (error);

  mcp->input = g_object_ref (g_subprocess_get_stdin_pipe (mcp->proc));
  mcp->output = g_data_input_stream_new (g_subprocess_get_stdout_pipe (mcp->proc));
  mcp->next_id = 1;
}

void
mcp_start (Mcp        *mcp,
           const char *backend)
{
  mcp_start_with (mcp, backend, NULL);
}

void
mcp_send_line (Mcp        *mcp,
               const char *line)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = g_strconcat (line, "\n", NULL);

  g_output_stream_write_all (mcp->input, text, strlen (text), NULL, NULL, &error);
  g_assert_no_error (error);
  g_output_stream_flush (mcp->input, NULL, &error);
  g_assert_no_error (error);
}

/* The next message from the server, which must be JSON-RPC 2.0. */
JsonNode *
mcp_recv (Mcp *mcp)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *line = NULL;
  JsonNode *node;

  line = g_data_input_stream_read_line (mcp->output, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (line);

  node = json_from_string (line, &error);
  g_assert_no_error (error);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (node));
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (node), "jsonrpc"), ==, "2.0");
  return node;
}

/* Sends request @method with @params_json (an object, or NULL) under a
 * fresh integer id, and returns that id. */
guint
mcp_request (Mcp        *mcp,
             const char *method,
             const char *params_json)
{
  guint id = mcp->next_id++;
  g_autofree char *line = NULL;

  if (params_json != NULL)
    line = g_strdup_printf ("{\"jsonrpc\": \"2.0\", \"id\": %u, \"method\": \"%s\", \"params\": %s}",
                            id, method, params_json);
  else
    line = g_strdup_printf ("{\"jsonrpc\": \"2.0\", \"id\": %u, \"method\": \"%s\"}", id, method);
  mcp_send_line (mcp, line);
  return id;
}

/* The response to request @id; progress notifications on the way are
 * handed to @notes when given, anything else fails the test. */
JsonNode *
mcp_response (Mcp       *mcp,
              guint      id,
              GPtrArray *notes)
{
  for (;;)
    {
      JsonNode *node = mcp_recv (mcp);
      JsonObject *object = json_node_get_object (node);

      if (json_object_has_member (object, "method"))
        {
          g_assert_cmpstr (json_object_get_string_member (object, "method"), ==, "notifications/progress");
          g_assert_nonnull (notes);
          g_ptr_array_add (notes, node);
          continue;
        }

      g_assert_cmpint (json_object_get_int_member (object, "id"), ==, id);
      return node;
    }
}

JsonNode *
mcp_call (Mcp        *mcp,
          const char *method,
          const char *params_json)
{
  return mcp_response (mcp, mcp_request (mcp, method, params_json), NULL);
}

JsonObject *
result_of (JsonNode *response)
{
  JsonObject *object = json_node_get_object (response);

  g_assert_false (json_object_has_member (object, "error"));
  return json_object_get_object_member (object, "result");
}

gint64
error_code_of (JsonNode *response)
{
  JsonObject *object = json_node_get_object (response);
  JsonObject *error;

  g_assert_false (json_object_has_member (object, "result"));
  error = json_object_get_object_member (object, "error");
  g_assert_nonnull (error);
  g_assert_nonnull (json_object_get_string_member (error, "message"));
  return json_object_get_int_member (error, "code");
}

void
mcp_initialize (Mcp *mcp)
{
  g_autoptr(JsonNode) response =
    mcp_call (mcp, "initialize",
              "{\"protocolVersion\": \"2025-06-18\", \"capabilities\": {}, "
              "\"clientInfo\": {\"name\": \"test-mcp\", \"version\": \"1\"}}");

  g_assert_cmpstr (json_object_get_string_member (result_of (response), "protocolVersion"), ==, "2025-06-18");
  mcp_send_line (mcp, "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\"}");
}

/* A tools/call of @tool with @arguments_json; the tool result. */
JsonNode *
mcp_tool (Mcp        *mcp,
          const char *tool,
          const char *arguments_json)
{
  g_autofree char *params = g_strdup_printf ("{\"name\": \"%s\", \"arguments\": %s}", tool, arguments_json);

  return mcp_call (mcp, "tools/call", params);
}

const char *
tool_text (JsonObject *result)
{
  JsonArray *content = json_object_get_array_member (result, "content");

  g_assert_cmpuint (json_array_get_length (content), ==, 1);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (content, 0), "type"), ==, "text");
  return json_object_get_string_member (json_array_get_object_element (content, 0), "text");
}

JsonObject *
structured_of (JsonObject *result)
{
  g_assert_false (json_object_get_boolean_member (result, "isError"));
  return json_object_get_object_member (result, "structuredContent");
}

/* Ends input; the server must say nothing more and exit 0. */
void
mcp_finish (Mcp *mcp)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *line = NULL;

  g_output_stream_close (mcp->input, NULL, &error);
  g_assert_no_error (error);

  line = g_data_input_stream_read_line (mcp->output, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (line);

  g_subprocess_wait (mcp->proc, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (g_subprocess_get_if_exited (mcp->proc));
  g_assert_cmpint (g_subprocess_get_exit_status (mcp->proc), ==, 0);
}
