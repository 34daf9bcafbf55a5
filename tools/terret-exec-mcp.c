/* terret-exec-mcp.c: `terret-exec mcp`, a Model Context Protocol server
 * over stdio
 *
 * JSON-RPC 2.0, one message per line (the MCP stdio transport), MCP
 * revision 2025-06-18: the dialect of the stdio server
 * (terret-exec-stdio.c) whose tools are the ops that have one
 * (terret-exec-ops.c), as terret-exec-mcp-tools.c shows them to a model.
 * docs/mcp.md is the reference.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-exec-common.h"
#include "terret-exec-fields.h"
#include "terret-exec-mcp-tools.h"
#include "terret-exec-ops.h"
#include "terret-exec-stdio.h"

/* JSON-RPC 2.0's error codes. */
#define RPC_PARSE_ERROR      -32700
#define RPC_INVALID_REQUEST  -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS   -32602

/* The revisions served, newest first. Before 2025-06-18 a tool result
 * has no structuredContent and a tool no outputSchema. */
static const char * const protocol_versions[] = { "2025-06-18", "2025-03-26", "2024-11-05", NULL };
#define STRUCTURED_SINCE "2025-06-18"

/* A tools/call's own, beside its call. */
typedef struct
{
  JsonNode *progress_token;         /* (owned) (nullable) */
  gint64 progress;
  gboolean structured;
} McpCall;

static void
mcp_call_free (McpCall *mcp_call)
{
  g_clear_pointer (&mcp_call->progress_token, json_node_unref);
  g_free (mcp_call);
}

/* The revision initialize settled on is the server's data; before it,
 * the newest revision's shapes. */
static gboolean
server_structured (CliStdio *server)
{
  const char *version = cli_stdio_get_data (server);

  return version == NULL || g_strcmp0 (version, STRUCTURED_SINCE) >= 0;
}

static TerretCapabilities
server_caps (CliStdio *server)
{
  return terret_executor_get_capabilities (cli_stdio_get_executor (server));
}

static JsonBuilder *
message_begin (JsonNode *id)
{
  JsonBuilder *builder = json_builder_new ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "jsonrpc");
  json_builder_add_string_value (builder, "2.0");
  json_builder_set_member_name (builder, "id");
  if (id != NULL)
    json_builder_add_value (builder, json_node_copy (id));
  else
    json_builder_add_null_value (builder);

  return builder;
}

static void
respond_result (CliStdio *server,
                JsonNode *id,
                JsonNode *result)
{
  g_autoptr(JsonBuilder) builder = message_begin (id);
  g_autoptr(JsonNode) message = NULL;

  json_builder_set_member_name (builder, "result");
  json_builder_add_value (builder, result);
  json_builder_end_object (builder);

  message = json_builder_get_root (builder);
  cli_stdio_write (server, message);
}

static void
respond_error (CliStdio   *server,
               JsonNode   *id,
               int         code,
               const char *message_text)
{
  g_autoptr(JsonBuilder) builder = message_begin (id);
  g_autoptr(JsonNode) message = NULL;

  json_builder_set_member_name (builder, "error");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "code");
  json_builder_add_int_value (builder, code);
  json_builder_set_member_name (builder, "message");
  json_builder_add_string_value (builder, message_text);
  json_builder_end_object (builder);
  json_builder_end_object (builder);

  message = json_builder_get_root (builder);
  cli_stdio_write (server, message);
}

static JsonNode *
empty_result (void)
{
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_node_take_object (node, json_object_new ());
  return node;
}

/* Methods -------------------------------------------------------------- */

/* The client's revision when this server speaks it, else the newest: the
 * client then decides whether it can go on (the spec's negotiation). */
static void
method_initialize (CliStdio   *server,
                   JsonNode   *id,
                   JsonObject *params)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  const char *asked = NULL;
  const char *version = protocol_versions[0];

  if (params != NULL && !cli_json_get_string (params, "protocolVersion", &asked))
    {
      respond_error (server, id, RPC_INVALID_PARAMS, "“protocolVersion” must be a string");
      return;
    }
  if (asked != NULL && g_strv_contains (protocol_versions, asked))
    version = asked;

  cli_stdio_set_data (server, g_strdup (version), g_free);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "protocolVersion");
  json_builder_add_string_value (builder, version);
  json_builder_set_member_name (builder, "capabilities");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "tools");
  json_builder_begin_object (builder);
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  json_builder_set_member_name (builder, "serverInfo");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "name");
  json_builder_add_string_value (builder, "terret-exec");
  json_builder_set_member_name (builder, "title");
  json_builder_add_string_value (builder, "terret-exec shell sessions");
  json_builder_set_member_name (builder, "version");
  json_builder_add_string_value (builder, PACKAGE_VERSION);
  json_builder_end_object (builder);
  json_builder_set_member_name (builder, "instructions");
  json_builder_add_string_value (builder,
                                 "Runs shell commands with the bash tool. A session keeps its "
                                 "shell where the backend allows (cd and export persist); one "
                                 "command runs per session at a time.");
  json_builder_end_object (builder);

  respond_result (server, id, json_builder_get_root (builder));
}

static void
call_progress (CliCall *call,
               GBytes  *data)
{
  McpCall *mcp_call = cli_call_get_data (call);
  g_autoptr(JsonBuilder) builder = NULL;
  g_autoptr(JsonNode) message = NULL;
  g_autofree char *text = NULL;

  if (g_cancellable_is_cancelled (cli_call_get_cancellable (call)))
    return;
  text = cli_mcp_progress_text (data);
  if (text == NULL)
    return;

  /* progress must grow with each notification: bytes so far does. */
  mcp_call->progress += strlen (text);

  builder = json_builder_new ();
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "jsonrpc");
  json_builder_add_string_value (builder, "2.0");
  json_builder_set_member_name (builder, "method");
  json_builder_add_string_value (builder, "notifications/progress");
  json_builder_set_member_name (builder, "params");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "progressToken");
  json_builder_add_value (builder, json_node_copy (mcp_call->progress_token));
  json_builder_set_member_name (builder, "progress");
  json_builder_add_int_value (builder, mcp_call->progress);
  json_builder_set_member_name (builder, "message");
  json_builder_add_string_value (builder, text);
  json_builder_end_object (builder);
  json_builder_end_object (builder);

  message = json_builder_get_root (builder);
  cli_stdio_write (cli_call_get_server (call), message);
}

/* A cancelled call is still waited for (its command must be over before
 * the server may exit) but never answered, as the spec asks. */
static void
mcp_respond (CliStdio         *server,
             CliCall          *call,
             const CliOutcome *outcome)
{
  McpCall *mcp_call = cli_call_get_data (call);

  if (g_cancellable_is_cancelled (cli_call_get_cancellable (call)) ||
      g_error_matches (outcome->error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return;

  respond_result (server, cli_call_get_id (call), cli_mcp_tool_result (outcome, mcp_call->structured));
}

static void
method_tools_call (CliStdio   *server,
                   JsonNode   *id,
                   JsonObject *params)
{
  g_autoptr(JsonObject) empty = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *key = cli_id_key (id);
  g_autofree char *unknown = NULL;
  JsonNode *arguments, *meta;
  const char *name = NULL;
  const CliOp *op;
  McpCall *mcp_call;
  CliCall *call;

  if (params == NULL || !cli_json_get_string (params, "name", &name) || name == NULL)
    {
      respond_error (server, id, RPC_INVALID_PARAMS, "“name” (a string) is required");
      return;
    }

  arguments = json_object_get_member (params, "arguments");
  if (arguments != NULL && !JSON_NODE_HOLDS_NULL (arguments) && !JSON_NODE_HOLDS_OBJECT (arguments))
    {
      respond_error (server, id, RPC_INVALID_PARAMS, "“arguments” must be an object");
      return;
    }

  /* Ids must be unique among requests in flight, or a cancel would not
   * know which one it meant. */
  if (cli_stdio_has_call (server, key))
    {
      respond_error (server, id, RPC_INVALID_REQUEST, "“id”: a request with this id is in flight");
      return;
    }

  op = cli_op_lookup_tool (name, server_caps (server));
  if (op == NULL)
    {
      unknown = g_strdup_printf ("Unknown tool: %s", name);
      respond_error (server, id, RPC_INVALID_PARAMS, unknown);
      return;
    }

  mcp_call = g_new0 (McpCall, 1);
  mcp_call->structured = server_structured (server);
  call = cli_call_new (server, id);
  cli_call_set_data (call, mcp_call, (GDestroyNotify) mcp_call_free);

  meta = json_object_get_member (params, "_meta");
  if (meta != NULL && JSON_NODE_HOLDS_OBJECT (meta))
    {
      JsonNode *token = json_object_get_member (json_node_get_object (meta), "progressToken");

      if (token != NULL && JSON_NODE_HOLDS_VALUE (token))
        {
          mcp_call->progress_token = json_node_copy (token);
          cli_call_set_progress (call, call_progress);
        }
    }

  if (arguments == NULL || !JSON_NODE_HOLDS_OBJECT (arguments))
    empty = json_object_new ();
  if (!cli_op_start (op, call, empty != NULL ? empty : json_node_get_object (arguments), &error))
    {
      cli_call_drop (call);
      respond_error (server, id, RPC_INVALID_PARAMS, error->message);
    }
}

/* notifications/cancelled: the run of that request ends, and the request
 * gets no answer. An id not in flight (already answered) is ignored, as
 * the spec allows for the race between answer and cancel. */
static void
notify_cancelled (CliStdio   *server,
                  JsonObject *params)
{
  JsonNode *request_id = params != NULL ? json_object_get_member (params, "requestId") : NULL;
  g_autofree char *key = NULL;

  if (request_id == NULL)
    return;

  key = cli_id_key (request_id);
  cli_stdio_cancel_calls (server, key, NULL);
}

/* Messages ------------------------------------------------------------- */

static gboolean
valid_id (JsonNode *id)
{
  GType type;

  /* MCP narrows JSON-RPC: an id is a string or an integer, never null. */
  if (!JSON_NODE_HOLDS_VALUE (id))
    return FALSE;
  type = json_node_get_value_type (id);
  return type == G_TYPE_STRING || type == G_TYPE_INT64;
}

static void
mcp_handle (CliStdio   *server,
            JsonObject *message)
{
  JsonNode *id = json_object_get_member (message, "id");
  JsonNode *params_node = json_object_get_member (message, "params");
  JsonObject *params = NULL;
  const char *version = NULL, *method = NULL;

  if (!cli_json_get_string (message, "jsonrpc", &version) || g_strcmp0 (version, "2.0") != 0)
    {
      respond_error (server, id != NULL && valid_id (id) ? id : NULL, RPC_INVALID_REQUEST,
                     "not JSON-RPC 2.0: “jsonrpc” must be \"2.0\"");
      return;
    }

  /* A response to us: this server sends no requests, so there is nothing
   * to match it with. */
  if (json_object_has_member (message, "result") || json_object_has_member (message, "error"))
    {
      if (!json_object_has_member (message, "method"))
        return;
    }

  if (!cli_json_get_string (message, "method", &method) || method == NULL)
    {
      respond_error (server, id != NULL && valid_id (id) ? id : NULL, RPC_INVALID_REQUEST,
                     "“method” (a string) is required");
      return;
    }

  if (params_node != NULL && !JSON_NODE_HOLDS_NULL (params_node))
    {
      if (!JSON_NODE_HOLDS_OBJECT (params_node))
        {
          if (id != NULL)
            respond_error (server, valid_id (id) ? id : NULL, RPC_INVALID_PARAMS,
                           "“params” must be an object");
          return;
        }
      params = json_node_get_object (params_node);
    }

  /* A notification: never answered, whatever it is. */
  if (id == NULL)
    {
      if (g_str_equal (method, "notifications/cancelled"))
        notify_cancelled (server, params);
      /* notifications/initialized and any other: nothing to do. */
      return;
    }

  if (!valid_id (id))
    {
      respond_error (server, NULL, RPC_INVALID_REQUEST, "“id” must be a string or an integer");
      return;
    }

  /* Requests before initialize are served as after it, with the newest
   * revision's shapes: a client that skipped the handshake is better
   * served than refused, and one that did not gets no surprise. */
  if (g_str_equal (method, "initialize"))
    method_initialize (server, id, params);
  else if (g_str_equal (method, "ping"))
    respond_result (server, id, empty_result ());
  else if (g_str_equal (method, "tools/list"))
    respond_result (server, id, cli_mcp_tools_list (server_caps (server), server_structured (server)));
  else if (g_str_equal (method, "tools/call"))
    method_tools_call (server, id, params);
  else
    {
      g_autofree char *text = g_strdup_printf ("Method not found: %s", method);

      respond_error (server, id, RPC_METHOD_NOT_FOUND, text);
    }
}

/* A notification is never answered, whatever is wrong with it, and
 * neither is a response. */
static gboolean
expects_answer (JsonObject *message)
{
  return json_object_has_member (message, "id") &&
         (json_object_has_member (message, "method") ||
          !(json_object_has_member (message, "result") || json_object_has_member (message, "error")));
}

/* A line the server refused: not JSON is the parse error, with id null; a
 * fault in params is invalid params, and any other invalid request, each
 * with the id when it was readable. */
static void
mcp_refuse (CliStdio     *server,
            JsonObject   *message,
            JsonNode     *id,
            CliRefusal    refusal,
            const char   *field,
            const GError *error)
{
  g_autofree char *text = NULL;
  int code = RPC_INVALID_REQUEST;

  if (message != NULL && !expects_answer (message))
    return;

  if (refusal == CLI_REFUSAL_NOT_JSON)
    {
      code = RPC_PARSE_ERROR;
      text = g_strdup_printf ("Parse error: %s", error->message);
    }
  else if (refusal == CLI_REFUSAL_FIELD && field != NULL &&
           (g_str_equal (field, "params") || g_str_has_prefix (field, "params.") ||
            g_str_has_prefix (field, "params[")))
    code = RPC_INVALID_PARAMS;

  respond_error (server, id != NULL && valid_id (id) ? id : NULL, code,
                 text != NULL ? text : error->message);
}

static char *
mcp_summary (void)
{
  g_autofree char *tools = cli_ops_describe (TRUE);

  return g_strdup_printf ("Serves the Model Context Protocol (revision 2025-06-18) over stdio:\n"
                          "JSON-RPC 2.0, one message per line. Tools, where the backend offers\n"
                          "them: %s.\n"
                          "A host starts it as a stdio server, e.g. claude mcp add terret --\n"
                          "terret-exec mcp --backend pty. At the end of input it cancels the\n"
                          "calls in flight, closes every session and exits 0.", tools);
}

static const CliDialect mcp_dialect = {
  .name = "mcp",
  .request_word = "message",
  .tools = TRUE,
  .envelope = NULL,
  .cancel_at_end = TRUE,
  .strict_close = TRUE,
  .summary = mcp_summary,
  .reference = "docs/mcp.md",
  .handle = mcp_handle,
  .refuse = mcp_refuse,
  .respond = mcp_respond,
};

int
cli_mcp_main (int    argc,
              char **argv)
{
  return cli_stdio_main (&mcp_dialect, argc, argv);
}
