/* terret-exec-mcp.c: `terret-exec mcp`, a Model Context Protocol server
 * over stdio
 *
 * JSON-RPC 2.0, one message per line (the MCP stdio transport): the
 * dialect of the stdio server (terret-exec-stdio.c) whose tools are the
 * ops that have one (terret-exec-ops.c). This file frames the messages
 * and picks, per message, the revision's wire that serves it: a request
 * whose params._meta names its revision (MCP 2026-07-28 and later) goes
 * to that revision's table, any other to 2025-11-25's, which negotiates
 * with initialize as the revisions before it did. Each table is a file
 * of its own (terret-exec-mcp-2025.c, terret-exec-mcp-2026.c); what
 * every revision does alike is here: the answers' framing, who the server
 * is, notifications, and a tools/call's reading and start, between which
 * a revision decides whether the call becomes a task. docs/mcp.md is the
 * reference.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-exec-common.h"
#include "terret-exec-fields.h"
#include "terret-exec-mcp-wire.h"
#include "terret-exec-ops.h"

/* Every wire, newest first. */
static const CliMcpWire * const wires[] = {
  &cli_mcp_wire_2026,
  &cli_mcp_wire_2025,
  NULL
};

/* Each wire's state, by wire. */
typedef struct
{
  GHashTable *states;               /* (owned) CliMcpWire → its state (owned) */
} McpServer;

static void
mcp_server_free (McpServer *mcp)
{
  GHashTableIter iter;
  gpointer key, value;

  g_hash_table_iter_init (&iter, mcp->states);
  while (g_hash_table_iter_next (&iter, &key, &value))
    {
      const CliMcpWire *wire = key;

      if (wire->state_free != NULL)
        wire->state_free (value);
    }
  g_hash_table_unref (mcp->states);
  g_free (mcp);
}

/* (transfer none): @wire's state in @server, made at its first use. */
gpointer
cli_mcp_wire_state (CliStdio         *server,
                    const CliMcpWire *wire)
{
  McpServer *mcp = cli_stdio_get_data (server);
  gpointer state;

  if (mcp == NULL)
    {
      mcp = g_new0 (McpServer, 1);
      mcp->states = g_hash_table_new (NULL, NULL);
      cli_stdio_set_data (server, mcp, (GDestroyNotify) mcp_server_free);
    }
  state = g_hash_table_lookup (mcp->states, wire);
  if (state == NULL && wire->state_new != NULL)
    {
      state = wire->state_new ();
      g_hash_table_insert (mcp->states, (gpointer) wire, state);
    }
  return state;
}

/* (transfer full): every revision served, newest first. */
char **
cli_mcp_versions (void)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();

  for (guint i = 0; wires[i] != NULL; i++)
    g_strv_builder_addv (builder, (const char **) wires[i]->versions);
  return g_strv_builder_end (builder);
}

TerretCapabilities
cli_mcp_server_caps (CliStdio *server)
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

/* @result: (transfer full) */
void
cli_mcp_respond_result (CliStdio *server,
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

/* @data: (transfer full) (nullable) */
void
cli_mcp_respond_error_data (CliStdio   *server,
                            JsonNode   *id,
                            int         code,
                            const char *message_text,
                            JsonNode   *data)
{
  g_autoptr(JsonBuilder) builder = message_begin (id);
  g_autoptr(JsonNode) message = NULL;

  json_builder_set_member_name (builder, "error");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "code");
  json_builder_add_int_value (builder, code);
  json_builder_set_member_name (builder, "message");
  json_builder_add_string_value (builder, message_text);
  if (data != NULL)
    {
      json_builder_set_member_name (builder, "data");
      json_builder_add_value (builder, data);
    }
  json_builder_end_object (builder);
  json_builder_end_object (builder);

  message = json_builder_get_root (builder);
  cli_stdio_write (server, message);
}

void
cli_mcp_respond_error (CliStdio   *server,
                       JsonNode   *id,
                       int         code,
                       const char *message_text)
{
  cli_mcp_respond_error_data (server, id, code, message_text, NULL);
}

JsonNode *
cli_mcp_empty_result (void)
{
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_node_take_object (node, json_object_new ());
  return node;
}

/* A method the revision does not have. */
void
cli_mcp_respond_no_method (CliStdio   *server,
                           JsonNode   *id,
                           const char *method)
{
  g_autofree char *text = g_strdup_printf ("Method not found: %s", method);

  cli_mcp_respond_error (server, id, CLI_RPC_METHOD_NOT_FOUND, text);
}

/* The notifications every revision takes. notifications/cancelled: the
 * run of that request ends, and the request gets no answer. An id not in
 * flight (already answered) is ignored, as the spec allows for the race
 * between answer and cancel. notifications/initialized (2025-11-25 and
 * before) and any other: nothing to do. */
void
cli_mcp_notification (CliStdio   *server,
                      const char *method,
                      JsonObject *params)
{
  JsonNode *request_id = params != NULL ? json_object_get_member (params, "requestId") : NULL;
  g_autofree char *key = NULL;

  if (!g_str_equal (method, "notifications/cancelled") || request_id == NULL)
    return;

  key = cli_id_key (request_id);
  cli_stdio_cancel_calls (server, key, NULL);
}

/* Who the server is (an Implementation), as initialize and then
 * server/discover say it. */
JsonNode *
cli_mcp_server_info (void)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "name");
  json_builder_add_string_value (builder, "terret-exec");
  json_builder_set_member_name (builder, "title");
  json_builder_add_string_value (builder, "terret-exec shell sessions");
  json_builder_set_member_name (builder, "version");
  json_builder_add_string_value (builder, PACKAGE_VERSION);
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}

/* `"_meta": {"io.modelcontextprotocol/model-immediate-response": @words}`,
 * which an answer that is a task carries: words a host may hand its model
 * at once. */
void
cli_mcp_add_immediate_response (JsonBuilder *builder,
                                const char  *words)
{
  json_builder_set_member_name (builder, "_meta");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "io.modelcontextprotocol/model-immediate-response");
  json_builder_add_string_value (builder, words);
  json_builder_end_object (builder);
}

/* Tool calls ----------------------------------------------------------- */

/*
 * cli_mcp_tool_call_read:
 * @arguments: (out) (transfer full): the tool's arguments, an empty
 *   object when the call has none
 *
 * The tool a tools/call names, in every revision, or NULL with the error
 * answered. Whether the call becomes a task is the revision's.
 */
const CliOp *
cli_mcp_tool_call_read (CliStdio    *server,
                        JsonNode    *id,
                        JsonObject  *params,
                        JsonObject **arguments)
{
  g_autofree char *key = cli_id_key (id);
  g_autofree char *unknown = NULL;
  const char *name = NULL;
  JsonNode *node;
  const CliOp *op;

  if (params == NULL || !cli_json_get_string (params, "name", &name) || name == NULL)
    {
      cli_mcp_respond_error (server, id, CLI_RPC_INVALID_PARAMS, "“name” (a string) is required");
      return NULL;
    }

  node = json_object_get_member (params, "arguments");
  if (node != NULL && !JSON_NODE_HOLDS_NULL (node) && !JSON_NODE_HOLDS_OBJECT (node))
    {
      cli_mcp_respond_error (server, id, CLI_RPC_INVALID_PARAMS, "“arguments” must be an object");
      return NULL;
    }

  /* Ids must be unique among requests in flight, or a cancel would not
   * know which one it meant. */
  if (cli_stdio_has_call (server, key))
    {
      cli_mcp_respond_error (server, id, CLI_RPC_INVALID_REQUEST, "“id”: a request with this id is in flight");
      return NULL;
    }

  op = cli_op_lookup_tool (name, cli_mcp_server_caps (server));
  if (op == NULL)
    {
      unknown = g_strdup_printf ("Unknown tool: %s", name);
      cli_mcp_respond_error (server, id, CLI_RPC_INVALID_PARAMS, unknown);
      return NULL;
    }

  *arguments = node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_object_ref (json_node_get_object (node))
                                                              : json_object_new ();
  return op;
}

/*
 * cli_mcp_tool_call_start:
 * @id: the tools/call's id
 * @call: the call that runs @op, dropped when it is refused
 *
 * Starts @op's run as @call, or answers the tools/call with why it was
 * refused and returns %FALSE. The run answers in a later iteration, never
 * within its start.
 */
gboolean
cli_mcp_tool_call_start (CliStdio    *server,
                         JsonNode    *id,
                         CliCall     *call,
                         const CliOp *op,
                         JsonObject  *arguments)
{
  g_autoptr(GError) error = NULL;

  if (cli_op_start (op, call, arguments, &error))
    return TRUE;

  cli_call_drop (call);
  cli_mcp_respond_error (server, id, CLI_RPC_INVALID_PARAMS, error->message);
  return FALSE;
}

/* A cancelled call is still waited for (its command must be over before
 * the server may exit) but never answered, as the spec asks. */
gboolean
cli_mcp_call_answers (CliCall          *call,
                      const CliOutcome *outcome)
{
  return !g_cancellable_is_cancelled (cli_call_get_cancellable (call)) &&
         !g_error_matches (outcome->error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
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

/* The revision @params' _meta names, or NULL for none (2025-11-25 and
 * before name it once, in initialize); "" when it is there but no string. */
static const char *
named_version (JsonObject *params)
{
  JsonNode *meta = params != NULL ? json_object_get_member (params, "_meta") : NULL;
  JsonNode *version;

  if (meta == NULL || !JSON_NODE_HOLDS_OBJECT (meta))
    return NULL;
  version = json_object_get_member (json_node_get_object (meta), CLI_MCP_PROTOCOL_VERSION_META);
  if (version == NULL || JSON_NODE_HOLDS_NULL (version))
    return NULL;
  if (!JSON_NODE_HOLDS_VALUE (version) || json_node_get_value_type (version) != G_TYPE_STRING)
    return "";
  return json_node_get_string (version);
}

static const CliMcpWire *
wire_for (const char *version)
{
  for (guint i = 0; wires[i] != NULL; i++)
    if (g_strv_contains (wires[i]->versions, version))
      return wires[i];
  return NULL;
}

/* A revision this server does not speak: the error 2026-07-28 defines,
 * with what it does speak. */
static void
refuse_version (CliStdio   *server,
                JsonNode   *id,
                const char *version)
{
  g_auto(GStrv) versions = cli_mcp_versions ();
  g_autoptr(JsonBuilder) data = json_builder_new ();
  g_autofree char *text = g_strdup_printf ("Unsupported protocol version: “%s”", version);

  json_builder_begin_object (data);
  json_builder_set_member_name (data, "supported");
  json_builder_begin_array (data);
  for (guint i = 0; versions[i] != NULL; i++)
    json_builder_add_string_value (data, versions[i]);
  json_builder_end_array (data);
  json_builder_set_member_name (data, "requested");
  json_builder_add_string_value (data, version);
  json_builder_end_object (data);

  cli_mcp_respond_error_data (server, id, CLI_RPC_UNSUPPORTED_VERSION, text, json_builder_get_root (data));
}

static void
mcp_handle (CliStdio   *server,
            JsonObject *message)
{
  JsonNode *id = json_object_get_member (message, "id");
  JsonNode *params_node = json_object_get_member (message, "params");
  JsonObject *params = NULL;
  const char *version = NULL, *method = NULL;
  const CliMcpWire *wire = &cli_mcp_wire_2025;

  if (!cli_json_get_string (message, "jsonrpc", &version) || g_strcmp0 (version, "2.0") != 0)
    {
      cli_mcp_respond_error (server, id != NULL && valid_id (id) ? id : NULL, CLI_RPC_INVALID_REQUEST,
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
      cli_mcp_respond_error (server, id != NULL && valid_id (id) ? id : NULL, CLI_RPC_INVALID_REQUEST,
                             "“method” (a string) is required");
      return;
    }

  if (params_node != NULL && !JSON_NODE_HOLDS_NULL (params_node))
    {
      if (!JSON_NODE_HOLDS_OBJECT (params_node))
        {
          if (id != NULL)
            cli_mcp_respond_error (server, valid_id (id) ? id : NULL, CLI_RPC_INVALID_PARAMS,
                                   "“params” must be an object");
          return;
        }
      params = json_node_get_object (params_node);
    }

  version = named_version (params);
  if (version != NULL)
    wire = wire_for (version);

  /* A notification: never answered, whatever it is. */
  if (id == NULL)
    {
      if (wire != NULL)
        wire->notification (server, method, params);
      return;
    }

  if (!valid_id (id))
    {
      cli_mcp_respond_error (server, NULL, CLI_RPC_INVALID_REQUEST, "“id” must be a string or an integer");
      return;
    }

  if (wire == NULL)
    refuse_version (server, id, version);
  else
    wire->request (server, id, method, params);
}

/* A call ended: the wire that started it answers. */
static void
mcp_respond (CliStdio         *server,
             CliCall          *call,
             const CliOutcome *outcome)
{
  CliMcpCallHead *head = cli_call_get_data (call);

  head->wire->respond (server, call, outcome);
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
  int code = CLI_RPC_INVALID_REQUEST;

  if (message != NULL && !expects_answer (message))
    return;

  if (refusal == CLI_REFUSAL_NOT_JSON)
    {
      code = CLI_RPC_PARSE_ERROR;
      text = g_strdup_printf ("Parse error: %s", error->message);
    }
  else if (refusal == CLI_REFUSAL_FIELD && field != NULL &&
           (g_str_equal (field, "params") || g_str_has_prefix (field, "params.") ||
            g_str_has_prefix (field, "params[")))
    code = CLI_RPC_INVALID_PARAMS;

  cli_mcp_respond_error (server, id != NULL && valid_id (id) ? id : NULL, code,
                         text != NULL ? text : error->message);
}

static char *
mcp_summary (void)
{
  g_autofree char *tools = cli_ops_describe (TRUE);

  return g_strdup_printf ("Serves the Model Context Protocol over stdio (JSON-RPC 2.0, one message\n"
                          "per line): revision 2026-07-28 for a request whose _meta names it\n"
                          "(stateless, bash as a task of the Tasks extension where the client\n"
                          "declares it, a prompt as input_required); 2025-11-25 after initialize\n"
                          "(bash as a task where the client asks; 2025-06-18 and older as they\n"
                          "were). Tools, where the backend offers them: %s.\n"
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
  .keep_full_output = TRUE,
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
