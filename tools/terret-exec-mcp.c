/* terret-exec-mcp.c: `terret-exec mcp`, a Model Context Protocol server
 * over stdio
 *
 * JSON-RPC 2.0, one message per line (the MCP stdio transport), MCP
 * revision 2025-06-18. Tool calls run asynchronously on the main loop, as
 * serve's runs do, so calls in different sessions proceed concurrently;
 * the tools themselves are terret-exec-mcp-tools.c's. docs/mcp.md is the
 * reference.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib-unix.h>
#include <gio/gunixinputstream.h>

#include "terret-exec-common.h"
#include "terret-exec-mcp-tools.h"

/* JSON-RPC 2.0's error codes. */
#define RPC_PARSE_ERROR      -32700
#define RPC_INVALID_REQUEST  -32600
#define RPC_METHOD_NOT_FOUND -32601
#define RPC_INVALID_PARAMS   -32602

/* The revisions served, newest first. Before 2025-06-18 a tool result
 * has no structuredContent and a tool no outputSchema. */
static const char * const protocol_versions[] = { "2025-06-18", "2025-03-26", "2024-11-05", NULL };
#define STRUCTURED_SINCE "2025-06-18"

typedef struct
{
  CliMcpTools *tools;               /* (owned) */
  GMainLoop *loop;                  /* (owned) */
  GDataInputStream *input;          /* (owned) */
  GCancellable *read_cancellable;   /* (owned) */
  GHashTable *calls;                /* (owned) serialized id → Call, in flight */
  char *protocol_version;           /* (owned) (nullable) until initialize */
  GError *read_error;               /* (owned) (nullable) */
  GError *write_error;              /* (owned) (nullable) */
  int caught_signal;
  guint read_pending : 1;
  guint input_done : 1;
  guint finished : 1;
} Server;

/* A tools/call in flight. A cancelled one is still waited for (its
 * command must be over before the server may exit) but never answered,
 * as the spec asks. */
typedef struct
{
  Server *server;
  JsonNode *id;                     /* (owned) */
  char *key;                        /* (owned) */
  JsonNode *progress_token;         /* (owned) (nullable) */
  GCancellable *cancellable;        /* (owned) */
  gint64 progress;
} Call;

static void server_maybe_finish (Server *server);
static void server_read_next    (Server *server);

static void
call_free (Call *call)
{
  g_clear_pointer (&call->id, json_node_unref);
  g_clear_pointer (&call->key, g_free);
  g_clear_pointer (&call->progress_token, json_node_unref);
  g_clear_object (&call->cancellable);
  g_free (call);
}

static gboolean
server_structured (Server *server)
{
  return server->protocol_version == NULL ||
         g_strcmp0 (server->protocol_version, STRUCTURED_SINCE) >= 0;
}

/* Stops taking messages; calls in flight are cancelled (the client that
 * closed its end is shutting the server down) and then waited for. */
static void
server_stop (Server *server)
{
  g_autoptr(GList) calls = NULL;

  server->input_done = TRUE;
  g_cancellable_cancel (server->read_cancellable);

  /* Collected first: a cancellation may complete a call at once. */
  calls = g_hash_table_get_values (server->calls);
  for (GList *l = calls; l != NULL; l = l->next)
    g_object_ref (((Call *) l->data)->cancellable);
  for (GList *l = calls; l != NULL; l = l->next)
    {
      GCancellable *cancellable = ((Call *) l->data)->cancellable;

      g_cancellable_cancel (cancellable);
      g_object_unref (cancellable);
    }
}

static void
server_send (Server   *server,
             JsonNode *message)
{
  if (server->write_error != NULL)
    return;

  if (!cli_write_json_line (STDOUT_FILENO, message, &server->write_error))
    {
      if (!g_error_matches (server->write_error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE))
        g_printerr ("terret-exec: %s\n", server->write_error->message);
      server_stop (server);
    }
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
respond_result (Server   *server,
                JsonNode *id,
                JsonNode *result)
{
  g_autoptr(JsonBuilder) builder = message_begin (id);
  g_autoptr(JsonNode) message = NULL;

  json_builder_set_member_name (builder, "result");
  json_builder_add_value (builder, result);
  json_builder_end_object (builder);

  message = json_builder_get_root (builder);
  server_send (server, message);
}

static void
respond_error (Server     *server,
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
  server_send (server, message);
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
method_initialize (Server     *server,
                   JsonNode   *id,
                   JsonObject *params)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  const char *asked = NULL;
  const char *version = protocol_versions[0];

  if (params != NULL &&
      !cli_json_get_string (params, "protocolVersion", FALSE, &asked, NULL))
    {
      respond_error (server, id, RPC_INVALID_PARAMS, "“protocolVersion” must be a string");
      return;
    }
  if (asked != NULL && g_strv_contains (protocol_versions, asked))
    version = asked;

  g_free (server->protocol_version);
  server->protocol_version = g_strdup (version);

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
call_progress (const char *text,
               gpointer    user_data)
{
  Call *call = user_data;
  Server *server = call->server;
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) message = NULL;

  if (call->progress_token == NULL || g_cancellable_is_cancelled (call->cancellable))
    return;

  /* progress must grow with each notification: bytes so far does. */
  call->progress += strlen (text);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "jsonrpc");
  json_builder_add_string_value (builder, "2.0");
  json_builder_set_member_name (builder, "method");
  json_builder_add_string_value (builder, "notifications/progress");
  json_builder_set_member_name (builder, "params");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "progressToken");
  json_builder_add_value (builder, json_node_copy (call->progress_token));
  json_builder_set_member_name (builder, "progress");
  json_builder_add_int_value (builder, call->progress);
  json_builder_set_member_name (builder, "message");
  json_builder_add_string_value (builder, text);
  json_builder_end_object (builder);
  json_builder_end_object (builder);

  message = json_builder_get_root (builder);
  server_send (server, message);
}

static void
call_done (GObject      *object,
           GAsyncResult *res,
           gpointer      user_data)
{
  Call *call = user_data;
  Server *server = call->server;
  g_autoptr(GError) error = NULL;
  JsonNode *result;

  result = cli_mcp_tools_call_finish (CLI_MCP_TOOLS (object), res, &error);

  if (result != NULL && !g_cancellable_is_cancelled (call->cancellable))
    respond_result (server, call->id, result);
  else if (result != NULL)
    json_node_unref (result);
  else if (g_error_matches (error, CLI_MCP_TOOLS_ERROR, CLI_MCP_TOOLS_ERROR_UNKNOWN_TOOL) ||
           g_error_matches (error, CLI_MCP_TOOLS_ERROR, CLI_MCP_TOOLS_ERROR_INVALID_ARGUMENTS))
    respond_error (server, call->id, RPC_INVALID_PARAMS, error->message);
  else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    respond_error (server, call->id, RPC_INVALID_PARAMS, error->message);

  g_hash_table_remove (server->calls, call->key);
  server_maybe_finish (server);
}

static void
method_tools_call (Server     *server,
                   JsonNode   *id,
                   const char *key,
                   JsonObject *params)
{
  JsonNode *arguments, *meta;
  const char *name = NULL;
  Call *call;

  if (params == NULL || !cli_json_get_string (params, "name", TRUE, &name, NULL))
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
  if (g_hash_table_contains (server->calls, key))
    {
      respond_error (server, id, RPC_INVALID_REQUEST, "a request with this id is in flight");
      return;
    }

  call = g_new0 (Call, 1);
  call->server = server;
  call->id = json_node_copy (id);
  call->key = g_strdup (key);
  call->cancellable = g_cancellable_new ();

  meta = json_object_get_member (params, "_meta");
  if (meta != NULL && JSON_NODE_HOLDS_OBJECT (meta))
    {
      JsonNode *token = json_object_get_member (json_node_get_object (meta), "progressToken");

      if (token != NULL && JSON_NODE_HOLDS_VALUE (token))
        call->progress_token = json_node_copy (token);
    }

  g_hash_table_insert (server->calls, call->key, call);
  cli_mcp_tools_call_async (server->tools, name,
                            arguments != NULL && JSON_NODE_HOLDS_OBJECT (arguments)
                              ? json_node_get_object (arguments) : NULL,
                            server_structured (server),
                            call->progress_token != NULL ? call_progress : NULL, call,
                            call->cancellable, call_done, call);
}

/* notifications/cancelled: the run of that request ends, and the request
 * gets no answer. An id not in flight (already answered) is ignored, as
 * the spec allows for the race between answer and cancel. */
static void
notify_cancelled (Server     *server,
                  JsonObject *params)
{
  JsonNode *request_id = params != NULL ? json_object_get_member (params, "requestId") : NULL;
  g_autofree char *key = NULL;
  Call *call;

  if (request_id == NULL)
    return;

  key = json_to_string (request_id, FALSE);
  call = g_hash_table_lookup (server->calls, key);
  if (call != NULL)
    g_cancellable_cancel (call->cancellable);
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
handle_message (Server     *server,
                JsonObject *message)
{
  JsonNode *id = json_object_get_member (message, "id");
  JsonNode *params_node = json_object_get_member (message, "params");
  JsonObject *params = NULL;
  g_autofree char *key = NULL;
  const char *version = NULL, *method = NULL;

  if (!cli_json_get_string (message, "jsonrpc", TRUE, &version, NULL) ||
      !g_str_equal (version, "2.0"))
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

  if (!cli_json_get_string (message, "method", TRUE, &method, NULL))
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

  key = json_to_string (id, FALSE);

  /* Requests before initialize are served as after it, with the newest
   * revision's shapes: a client that skipped the handshake is better
   * served than refused, and one that did not gets no surprise. */
  if (g_str_equal (method, "initialize"))
    method_initialize (server, id, params);
  else if (g_str_equal (method, "ping"))
    respond_result (server, id, empty_result ());
  else if (g_str_equal (method, "tools/list"))
    respond_result (server, id, cli_mcp_tools_list (server->tools, server_structured (server)));
  else if (g_str_equal (method, "tools/call"))
    method_tools_call (server, id, key, params);
  else
    {
      g_autofree char *text = g_strdup_printf ("Method not found: %s", method);

      respond_error (server, id, RPC_METHOD_NOT_FOUND, text);
    }
}

static void
handle_line (Server     *server,
             const char *line,
             gsize       len)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonNode *root;

  if (len == 0 || strspn (line, " \t\r") == len)
    return;

  if (!json_parser_load_from_data (parser, line, len, &error))
    {
      g_autofree char *text = g_strdup_printf ("Parse error: %s", error->message);

      respond_error (server, NULL, RPC_PARSE_ERROR, text);
      return;
    }

  /* MCP 2025-06-18 dropped JSON-RPC batches, so an array is refused like
   * any other message that is not an object. */
  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      respond_error (server, NULL, RPC_INVALID_REQUEST, "a message must be a JSON object");
      return;
    }

  handle_message (server, json_node_get_object (root));
}

/* Input ---------------------------------------------------------------- */

static void
line_read (GObject      *object,
           GAsyncResult *result,
           gpointer      user_data)
{
  Server *server = user_data;
  g_autoptr(GError) error = NULL;
  g_autofree char *line = NULL;
  gsize len = 0;

  server->read_pending = FALSE;
  line = g_data_input_stream_read_line_finish_utf8 (G_DATA_INPUT_STREAM (object), result, &len, &error);

  if (line == NULL && error != NULL && g_error_matches (error, G_CONVERT_ERROR, G_CONVERT_ERROR_ILLEGAL_SEQUENCE))
    {
      respond_error (server, NULL, RPC_PARSE_ERROR, "Parse error: a message must be UTF-8");
      server_read_next (server);
      return;
    }

  if (line == NULL)
    {
      if (error != NULL && !g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_printerr ("terret-exec: cannot read messages: %s\n", error->message);
          server->read_error = g_steal_pointer (&error);
        }
      server_stop (server);
      server_maybe_finish (server);
      return;
    }

  handle_line (server, line, len);

  if (server->input_done)
    server_maybe_finish (server);
  else
    server_read_next (server);
}

static void
server_read_next (Server *server)
{
  server->read_pending = TRUE;
  g_data_input_stream_read_line_async (server->input, G_PRIORITY_DEFAULT,
                                       server->read_cancellable, line_read, server);
}

/* Once input is over and every call has completed, every session is
 * closed so nothing the server started outlives it. */
static void
server_maybe_finish (Server *server)
{
  if (server->finished || !server->input_done || server->read_pending ||
      g_hash_table_size (server->calls) > 0)
    return;

  server->finished = TRUE;
  cli_mcp_tools_close_all (server->tools);
  g_main_loop_quit (server->loop);
}

static gboolean
on_signal (Server *server,
           int     signum)
{
  if (server->caught_signal == 0)
    server->caught_signal = signum;

  server_stop (server);
  server_maybe_finish (server);

  return G_SOURCE_CONTINUE;
}

static gboolean
on_sigint (gpointer user_data)
{
  return on_signal (user_data, SIGINT);
}

static gboolean
on_sigterm (gpointer user_data)
{
  return on_signal (user_data, SIGTERM);
}

static const char mcp_summary[] =
  "Serves the Model Context Protocol (revision 2025-06-18) over stdio:\n"
  "JSON-RPC 2.0, one message per line. Tools: bash (command, session,\n"
  "timeout, on_timeout), and where the backend offers them bash_input,\n"
  "bash_interrupt, bash_poll and bash_close. A host starts it as a stdio\n"
  "server, e.g. claude mcp add terret -- terret-exec mcp --backend pty.\n"
  "At the end of input it cancels the calls in flight, closes every session\n"
  "and exits 0.";

int
cli_mcp_main (int    argc,
              char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *backend = NULL;
  g_auto(GStrv) settings = NULL;
  g_auto(GStrv) rest = NULL;
  g_autoptr(GInputStream) stdin_stream = NULL;
  Server server = { 0 };
  guint sigint_id, sigterm_id;
  int status;
  const GOptionEntry entries[] = {
    { "backend", 'b', 0, G_OPTION_ARG_STRING, &backend,
      "Use the backend NAME instead of the configured one", "NAME" },
    { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &settings,
      "Set a backend setting (repeatable; see terret-exec --list-backends)", "KEY=VALUE" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &rest, NULL, NULL },
    G_OPTION_ENTRY_NULL
  };

  g_set_prgname ("terret-exec mcp");
  context = g_option_context_new (NULL);
  g_option_context_set_summary (context, mcp_summary);
  g_option_context_set_description (context,
                                    "Exit status: 0 at the end of input, 125 when the executor cannot be\n"
                                    "created, 128+N after signal N, 141 when messages cannot be written,\n"
                                    "1 when they cannot be read. Reference: docs/mcp.md.");
  g_option_context_add_main_entries (context, entries, NULL);

  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("terret-exec mcp: %s\nTry “terret-exec mcp --help”.\n", error->message);
      return CLI_EXIT_NOT_RUN;
    }

  if (rest != NULL && rest[0] != NULL)
    {
      g_printerr ("terret-exec mcp: unexpected argument “%s”\n"
                  "Try “terret-exec mcp --help”.\n", rest[0]);
      return CLI_EXIT_NOT_RUN;
    }

  /* stdout carries the protocol alone: errors go to stderr, which MCP
   * hosts show as the server's log. */
  executor = terret_executor_new_with_settings (backend, (const char * const *)settings, &error);
  if (executor == NULL)
    {
      g_printerr ("terret-exec: %s\n", error->message);
      return CLI_EXIT_NOT_RUN;
    }

  server.tools = cli_mcp_tools_new (executor);
  server.loop = g_main_loop_new (NULL, FALSE);
  server.read_cancellable = g_cancellable_new ();
  server.calls = g_hash_table_new_full (g_str_hash, g_str_equal, NULL, (GDestroyNotify) call_free);

  stdin_stream = g_unix_input_stream_new (STDIN_FILENO, FALSE);
  server.input = g_data_input_stream_new (stdin_stream);
  g_data_input_stream_set_newline_type (server.input, G_DATA_STREAM_NEWLINE_TYPE_LF);

  sigint_id = g_unix_signal_add (SIGINT, on_sigint, &server);
  sigterm_id = g_unix_signal_add (SIGTERM, on_sigterm, &server);

  server_read_next (&server);
  g_main_loop_run (server.loop);

  g_source_remove (sigint_id);
  g_source_remove (sigterm_id);

  if (server.caught_signal != 0)
    status = CLI_EXIT_SIGNAL_BASE + server.caught_signal;
  else if (server.write_error != NULL)
    status = CLI_EXIT_SIGNAL_BASE + SIGPIPE;
  else if (server.read_error != NULL)
    status = EXIT_FAILURE;
  else
    status = EXIT_SUCCESS;

  g_assert (g_hash_table_size (server.calls) == 0);
  g_clear_pointer (&server.calls, g_hash_table_unref);
  g_clear_object (&server.input);
  g_clear_object (&server.read_cancellable);
  g_clear_object (&server.tools);
  g_clear_pointer (&server.loop, g_main_loop_unref);
  g_clear_pointer (&server.protocol_version, g_free);
  g_clear_error (&server.read_error);
  g_clear_error (&server.write_error);

  return status;
}
