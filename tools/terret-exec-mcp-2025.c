/* terret-exec-mcp-2025.c: the wire of MCP 2025-11-25 and the revisions
 * before it in `terret-exec mcp`
 *
 * initialize settles a revision for the connection; tools/call may run
 * as a task (terret-exec-mcp-tasks.c) from 2025-11-25, with tasks/get,
 * tasks/result, tasks/cancel and tasks/list. The tools are the ops that
 * have one (terret-exec-ops.c), as terret-exec-mcp-tools.c shows them to
 * a model; terret-exec-mcp.c frames the messages and hands this table
 * every one that names no revision of its own. docs/mcp.md is the
 * reference.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-exec-common.h"
#include "terret-exec-fields.h"
#include "terret-exec-mcp-tasks.h"
#include "terret-exec-mcp-wire.h"
#include "terret-exec-mcp-tools.h"
#include "terret-exec-ops.h"
#include "terret-exec-stdio.h"

/* The shared framing (terret-exec-mcp.c) under this file's short names. */
#define RPC_INVALID_REQUEST  CLI_RPC_INVALID_REQUEST
#define RPC_METHOD_NOT_FOUND CLI_RPC_METHOD_NOT_FOUND
#define RPC_INVALID_PARAMS   CLI_RPC_INVALID_PARAMS

#define respond_result cli_mcp_respond_result
#define respond_error cli_mcp_respond_error
#define empty_result cli_mcp_empty_result
#define server_caps cli_mcp_server_caps

/* The revisions served, newest first. Before 2025-06-18 a tool result
 * has no structuredContent and a tool no outputSchema; before 2025-11-25
 * there are no tasks. */
static const char * const protocol_versions[] = {
  "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", NULL
};
#define STRUCTURED_SINCE "2025-06-18"
#define TASKS_SINCE "2025-11-25"

/* How long a task is kept from its creation when the client names no
 * ttl: long enough for a build, bounded so a long-lived server does not
 * hoard results nobody asks for. */
#define DEFAULT_TASK_TTL_MS (60 * 60 * 1000)

#define RELATED_TASK "io.modelcontextprotocol/related-task"

/* The wire's own: the revision initialize settled on, and its tasks. */
typedef struct
{
  char *version;                    /* (owned) (nullable) before initialize */
  CliMcpTasks *tasks;               /* (owned) */
} McpServer;

static gpointer
mcp_server_new (void)
{
  McpServer *mcp = g_new0 (McpServer, 1);

  mcp->tasks = cli_mcp_tasks_new ();
  return mcp;
}

static void
mcp_server_free (gpointer data)
{
  McpServer *mcp = data;

  g_free (mcp->version);
  cli_mcp_tasks_free (mcp->tasks);
  g_free (mcp);
}

/* A call's own: a tools/call's (whose run may be a task's), or a
 * tasks/result's waiting for its task. */
typedef struct
{
  CliMcpCallHead head;
  JsonNode *progress_token;         /* (owned) (nullable) */
  gint64 progress;
  gboolean structured;
  CliMcpTask *task;                 /* (owned) (nullable) the task it runs */
  CliMcpTask *awaited;              /* (owned) (nullable) the task it waits for */
  gulong cancelled_id;
} McpCall;

static void
mcp_call_free (McpCall *mcp_call)
{
  g_clear_pointer (&mcp_call->progress_token, json_node_unref);
  g_clear_pointer (&mcp_call->task, cli_mcp_task_unref);
  g_clear_pointer (&mcp_call->awaited, cli_mcp_task_unref);
  g_free (mcp_call);
}

static McpServer *
mcp_server (CliStdio *server)
{
  return cli_mcp_wire_state (server, &cli_mcp_wire_2025);
}

/* Before initialize, the newest revision's shapes. */
static gboolean
server_speaks (CliStdio   *server,
               const char *since)
{
  const char *version = mcp_server (server)->version;

  return version == NULL || g_strcmp0 (version, since) >= 0;
}

static gboolean
server_structured (CliStdio *server)
{
  return server_speaks (server, STRUCTURED_SINCE);
}

static gboolean
server_tasks (CliStdio *server)
{
  return server_speaks (server, TASKS_SINCE);
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

  g_free (mcp_server (server)->version);
  mcp_server (server)->version = g_strdup (version);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "protocolVersion");
  json_builder_add_string_value (builder, version);
  json_builder_set_member_name (builder, "capabilities");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "tools");
  json_builder_begin_object (builder);
  json_builder_end_object (builder);
  if (server_tasks (server))
    {
      /* {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}} */
      json_builder_set_member_name (builder, "tasks");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "list");
      json_builder_begin_object (builder);
      json_builder_end_object (builder);
      json_builder_set_member_name (builder, "cancel");
      json_builder_begin_object (builder);
      json_builder_end_object (builder);
      json_builder_set_member_name (builder, "requests");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "tools");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "call");
      json_builder_begin_object (builder);
      json_builder_end_object (builder);
      json_builder_end_object (builder);
      json_builder_end_object (builder);
      json_builder_end_object (builder);
    }
  json_builder_end_object (builder);
  json_builder_set_member_name (builder, "serverInfo");
  json_builder_add_value (builder, cli_mcp_server_info ());
  json_builder_set_member_name (builder, "instructions");
  json_builder_add_string_value (builder, CLI_MCP_INSTRUCTIONS);
  json_builder_end_object (builder);

  respond_result (server, id, json_builder_get_root (builder));
}

/* `"_meta": {"io.modelcontextprotocol/related-task": {"taskId": ...}}`,
 * which every message about a task carries but the tasks/ methods'. */
static void
add_related_task (JsonBuilder *builder,
                  CliMcpTask  *task)
{
  json_builder_set_member_name (builder, "_meta");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, RELATED_TASK);
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "taskId");
  json_builder_add_string_value (builder, cli_mcp_task_get_id (task));
  json_builder_end_object (builder);
  json_builder_end_object (builder);
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
  if (mcp_call->task != NULL)
    add_related_task (builder, mcp_call->task);
  json_builder_end_object (builder);
  json_builder_end_object (builder);

  message = json_builder_get_root (builder);
  cli_stdio_write (cli_call_get_server (call), message);
}

/* Tasks ---------------------------------------------------------------- */

static void
notify_task_status (CliStdio   *server,
                    CliMcpTask *task)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) message = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "jsonrpc");
  json_builder_add_string_value (builder, "2.0");
  json_builder_set_member_name (builder, "method");
  json_builder_add_string_value (builder, "notifications/tasks/status");
  json_builder_set_member_name (builder, "params");
  json_builder_begin_object (builder);
  cli_mcp_task_add_members (task, builder);
  json_builder_end_object (builder);
  json_builder_end_object (builder);

  message = json_builder_get_root (builder);
  cli_stdio_write (server, message);
}

/* What tasks/result answers for a task that ended: the tool result the
 * call would have answered, tied to its task. */
static JsonNode *
task_result_payload (CliMcpTask *task)
{
  JsonNode *result = json_node_copy (cli_mcp_task_get_result (task));
  g_autoptr(JsonBuilder) meta = json_builder_new ();
  g_autoptr(JsonNode) meta_node = NULL;
  JsonObject *object = json_node_get_object (result);

  json_builder_begin_object (meta);
  add_related_task (meta, task);
  json_builder_end_object (meta);
  meta_node = json_builder_get_root (meta);
  json_object_set_member (object, "_meta",
                          json_node_copy (json_object_get_member (json_node_get_object (meta_node), "_meta")));
  return result;
}

/* @task ended: its waiters get its result, the client the news, and a
 * task past its ttl is forgotten. */
static void
task_ended (CliStdio   *server,
            CliMcpTask *task)
{
  g_autoptr(GPtrArray) waiters = cli_mcp_task_take_waiters (task);

  notify_task_status (server, task);
  for (guint i = 0; i < waiters->len; i++)
    cli_call_return (g_ptr_array_index (waiters, i), NULL, NULL, NULL);
  cli_mcp_tasks_settle (mcp_server (server)->tasks, task);
}

/* The run of a task answered: the task ends with what the call would
 * have answered. Nothing run (an error) fails the task; a command that
 * ran completes it, whatever its status. A cancelled run leaves the task
 * as tasks/cancel or the end of input left it. */
static void
task_run_respond (CliStdio         *server,
                  McpCall          *mcp_call,
                  const CliOutcome *outcome)
{
  CliMcpTask *task = mcp_call->task;

  CliMcpTaskStatus status = CLI_MCP_TASK_COMPLETED;
  const char *message = NULL;

  cli_mcp_task_set_call_key (task, NULL);
  if (g_error_matches (outcome->error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      status = CLI_MCP_TASK_CANCELLED;
      message = "The server is ending: the task was cancelled.";
    }
  else if (outcome->error != NULL)
    {
      status = CLI_MCP_TASK_FAILED;
      message = outcome->error->message;
    }

  /* One cancelled by tasks/cancel ended then, and said so. */
  if (cli_mcp_task_end (task, status, message, cli_mcp_tool_result (outcome, mcp_call->structured)))
    task_ended (server, task);
}

/* A call ended: a task's run ends its task, a tasks/result's wait
 * answers with the task's result, and a plain call with its tool result,
 * unless it was cancelled. */
static void
wire_respond (CliStdio         *server,
             CliCall          *call,
             const CliOutcome *outcome)
{
  McpCall *mcp_call = cli_call_get_data (call);

  if (mcp_call->task != NULL)
    {
      task_run_respond (server, mcp_call, outcome);
      return;
    }

  if (mcp_call->awaited != NULL)
    {
      g_signal_handler_disconnect (cli_call_get_cancellable (call), mcp_call->cancelled_id);
      if (!g_error_matches (outcome->error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        respond_result (server, cli_call_get_id (call), task_result_payload (mcp_call->awaited));
      return;
    }

  if (cli_mcp_call_answers (call, outcome))
    respond_result (server, cli_call_get_id (call), cli_mcp_tool_result (outcome, mcp_call->structured));
}

/* A task-augmented call's ttl, in milliseconds: `task` is an object whose
 * `ttl`, when there, is a number of milliseconds. */
static gboolean
task_ttl (JsonNode    *task,
          gint64      *ttl,
          const char **fault)
{
  JsonNode *member;
  double value;

  *ttl = DEFAULT_TASK_TTL_MS;
  if (!JSON_NODE_HOLDS_OBJECT (task))
    {
      *fault = "“task” must be an object";
      return FALSE;
    }
  member = json_object_get_member (json_node_get_object (task), "ttl");
  if (member == NULL || JSON_NODE_HOLDS_NULL (member))
    return TRUE;
  if (!JSON_NODE_HOLDS_VALUE (member) ||
      (json_node_get_value_type (member) != G_TYPE_INT64 &&
       json_node_get_value_type (member) != G_TYPE_DOUBLE))
    {
      *fault = "“task.ttl” must be a number of milliseconds";
      return FALSE;
    }
  value = json_node_get_value_type (member) == G_TYPE_INT64 ? (double) json_node_get_int (member)
                                                            : json_node_get_double (member);
  if (!(value >= 0 && value <= G_MAXUINT))
    {
      *fault = "“task.ttl” must be a number of milliseconds from 0 to 4294967295";
      return FALSE;
    }
  *ttl = (gint64) value;
  return TRUE;
}

/* The answer to a task-augmented tools/call: the task, and words a host
 * may hand its model at once. */
static JsonNode *
create_task_result (CliMcpTask *task)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autofree char *words = g_strdup_printf ("The command runs as task %s; its result comes when it "
                                            "ends. Other sessions are free meanwhile; bash_interrupt "
                                            "reaches it in its own.", cli_mcp_task_get_id (task));

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "task");
  json_builder_add_value (builder, cli_mcp_task_to_json (task));
  cli_mcp_add_immediate_response (builder, words);
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}

static void
method_tools_call (CliStdio   *server,
                   JsonNode   *id,
                   JsonObject *params)
{
  g_autoptr(JsonObject) arguments = NULL;
  g_autoptr(JsonNode) task_id = NULL;
  g_autofree char *refused = NULL;
  JsonNode *meta, *task_node;
  const char *fault = NULL;
  CliMcpTask *task = NULL;
  gint64 ttl = 0;
  const CliOp *op;
  McpCall *mcp_call;
  CliCall *call;

  op = cli_mcp_tool_call_read (server, id, params, &arguments);
  if (op == NULL)
    return;

  /* A revision without tasks ignores the member, as the spec asks of a
   * server that did not offer them. */
  task_node = json_object_get_member (params, "task");
  if (task_node != NULL && !JSON_NODE_HOLDS_NULL (task_node) && server_tasks (server))
    {
      if (!task_ttl (task_node, &ttl, &fault))
        {
          respond_error (server, id, RPC_INVALID_PARAMS, fault);
          return;
        }
      if (!op->tasks)
        {
          refused = g_strdup_printf ("Tool %s does not run as a task", op->tool);
          respond_error (server, id, RPC_METHOD_NOT_FOUND, refused);
          return;
        }
      task = cli_mcp_tasks_add (mcp_server (server)->tasks, ttl);
      task_id = cli_mcp_task_call_id (task);
    }

  mcp_call = g_new0 (McpCall, 1);
  mcp_call->head.wire = &cli_mcp_wire_2025;
  mcp_call->structured = server_structured (server);
  call = cli_call_new (server, task != NULL ? task_id : id);
  cli_call_set_data (call, mcp_call, (GDestroyNotify) mcp_call_free);
  if (task != NULL)
    {
      mcp_call->task = cli_mcp_task_ref (task);
      cli_mcp_task_set_call_key (task, cli_call_get_key (call));
    }

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

  if (!cli_mcp_tool_call_start (server, id, call, op, arguments))
    {
      /* Refused before it ran: no task was made. */
      if (task != NULL)
        cli_mcp_tasks_remove (mcp_server (server)->tasks, task);
      return;
    }

  if (task != NULL)
    respond_result (server, id, create_task_result (task));
}

/* The task a tasks/ request names, or an error answered. */
static CliMcpTask *
find_task (CliStdio   *server,
           JsonNode   *id,
           JsonObject *params,
           const char *doing)
{
  g_autoptr(GError) error = NULL;
  CliMcpTask *task = cli_mcp_tasks_find (mcp_server (server)->tasks, params, doing, &error);

  if (task == NULL)
    respond_error (server, id, RPC_INVALID_PARAMS, error->message);
  return task;
}

static void
method_tasks_get (CliStdio   *server,
                  JsonNode   *id,
                  JsonObject *params)
{
  CliMcpTask *task = find_task (server, id, params, "retrieve");

  if (task != NULL)
    respond_result (server, id, cli_mcp_task_to_json (task));
}

static void
on_waiter_cancelled (GCancellable *cancellable,
                     gpointer      user_data)
{
  CliCall *call = user_data;
  McpCall *mcp_call = cli_call_get_data (call);

  if (cli_mcp_task_remove_waiter (mcp_call->awaited, call))
    {
      g_autoptr(GError) error = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                                     "cancelled while waiting for the task");

      cli_call_return (call, NULL, error, NULL);
    }
}

/* tasks/result blocks until the task ends: the request waits as a call
 * in flight, cancellable by notifications/cancelled like any other. */
static void
method_tasks_result (CliStdio   *server,
                     JsonNode   *id,
                     JsonObject *params)
{
  g_autofree char *key = cli_id_key (id);
  CliMcpTask *task;
  McpCall *mcp_call;
  CliCall *call;

  if (cli_stdio_has_call (server, key))
    {
      respond_error (server, id, RPC_INVALID_REQUEST, "“id”: a request with this id is in flight");
      return;
    }
  task = find_task (server, id, params, "retrieve the result of");
  if (task == NULL)
    return;

  if (cli_mcp_task_is_terminal (task))
    {
      respond_result (server, id, task_result_payload (task));
      return;
    }

  mcp_call = g_new0 (McpCall, 1);
  mcp_call->head.wire = &cli_mcp_wire_2025;
  mcp_call->awaited = cli_mcp_task_ref (task);
  call = cli_call_new (server, id);
  cli_call_set_data (call, mcp_call, (GDestroyNotify) mcp_call_free);
  cli_mcp_task_add_waiter (task, call);
  mcp_call->cancelled_id = g_signal_connect (cli_call_get_cancellable (call), "cancelled",
                                             G_CALLBACK (on_waiter_cancelled), call);
}

/* The task is cancelled before the answer says so; then its run is
 * cancelled, which ends the command and everything it started (the
 * executor's cancel), and its waiters learn it. */
static void
method_tasks_cancel (CliStdio   *server,
                     JsonNode   *id,
                     JsonObject *params)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GError) cancelled = NULL;
  g_autofree char *call_key = NULL;
  CliOutcome outcome = { NULL, NULL, NULL, NULL };
  CliMcpTask *task = cli_mcp_tasks_find_to_cancel (mcp_server (server)->tasks, params, &error);

  if (task == NULL)
    {
      respond_error (server, id, RPC_INVALID_PARAMS, error->message);
      return;
    }

  cancelled = g_error_new_literal (G_IO_ERROR, G_IO_ERROR_CANCELLED,
                                   "the task was cancelled by tasks/cancel: its command and "
                                   "everything it started were ended");
  outcome.error = cancelled;
  call_key = g_strdup (cli_mcp_task_get_call_key (task));
  cli_mcp_task_end (task, CLI_MCP_TASK_CANCELLED, "The task was cancelled by request.",
                    cli_mcp_tool_result (&outcome, FALSE));
  respond_result (server, id, cli_mcp_task_to_json (task));

  {
    g_autoptr(CliMcpTask) held = cli_mcp_task_ref (task);

    if (call_key != NULL)
      cli_stdio_cancel_calls (server, call_key, NULL);
    task_ended (server, held);
  }
}

static void
method_tasks_list (CliStdio   *server,
                   JsonNode   *id,
                   JsonObject *params)
{
  g_autoptr(GError) error = NULL;
  const char *cursor = NULL;
  JsonNode *list;

  if (params != NULL && !cli_json_get_string (params, "cursor", &cursor))
    {
      respond_error (server, id, RPC_INVALID_PARAMS, "“cursor” must be a string");
      return;
    }
  list = cli_mcp_tasks_list (mcp_server (server)->tasks, cursor, &error);
  if (list == NULL)
    respond_error (server, id, RPC_INVALID_PARAMS, error->message);
  else
    respond_result (server, id, list);
}

/* Requests before initialize are served as after it, with the newest
 * revision's shapes: a client that skipped the handshake is better
 * served than refused, and one that did not gets no surprise. */
static void
wire_request (CliStdio   *server,
              JsonNode   *id,
              const char *method,
              JsonObject *params)
{
  if (g_str_equal (method, "initialize"))
    method_initialize (server, id, params);
  else if (g_str_equal (method, "ping"))
    respond_result (server, id, empty_result ());
  else if (g_str_equal (method, "tools/list"))
    respond_result (server, id, cli_mcp_tools_list (server_caps (server), server_structured (server),
                                                    server_tasks (server)));
  else if (g_str_equal (method, "tools/call"))
    method_tools_call (server, id, params);
  else if (g_str_equal (method, "tasks/get") && server_tasks (server))
    method_tasks_get (server, id, params);
  else if (g_str_equal (method, "tasks/result") && server_tasks (server))
    method_tasks_result (server, id, params);
  else if (g_str_equal (method, "tasks/cancel") && server_tasks (server))
    method_tasks_cancel (server, id, params);
  else if (g_str_equal (method, "tasks/list") && server_tasks (server))
    method_tasks_list (server, id, params);
  else
    cli_mcp_respond_no_method (server, id, method);
}

const CliMcpWire cli_mcp_wire_2025 = {
  .versions = protocol_versions,
  .state_new = mcp_server_new,
  .state_free = mcp_server_free,
  .request = wire_request,
  .notification = cli_mcp_notification,
  .respond = wire_respond,
};
