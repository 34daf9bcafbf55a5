/* terret-exec-mcp-2026.c: the wire of MCP 2026-07-28 in `terret-exec mcp`
 *
 * Every request is whole by itself: its params._meta carries the
 * revision (io.modelcontextprotocol/protocolVersion), the client and its
 * capabilities (io.modelcontextprotocol/clientCapabilities); there is no
 * initialize, and server/discover says what initialize said. Results say
 * their kind (resultType). With the Tasks extension
 * (io.modelcontextprotocol/tasks) declared in a request's capabilities,
 * tools/call of bash answers with a task (resultType "task"), which
 * tasks/get, tasks/update and tasks/cancel reach; there is no tasks/list
 * and no tasks/result in this revision. The task's stretches and its
 * input are terret-exec-mcp-2026-tasks.c's; terret-exec-mcp.c frames the
 * messages. docs/mcp.md is the reference.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-exec-common.h"
#include "terret-exec-fields.h"
#include "terret-exec-mcp-2026.h"
#include "terret-exec-mcp-tools.h"
#include "terret-exec-ops.h"

static const char * const protocol_versions[] = { "2026-07-28", NULL };

#define TASKS_EXTENSION "io.modelcontextprotocol/tasks"
#define CLIENT_CAPABILITIES_META "io.modelcontextprotocol/clientCapabilities"
#define SERVER_INFO_META "io.modelcontextprotocol/serverInfo"

/* How long a task is kept from its creation: long enough for a build,
 * bounded so a long-lived server does not hoard results nobody asks for. */
#define TASK_TTL_MS (60 * 60 * 1000)

static gpointer
state_new (void)
{
  return cli_mcp_tasks_new ();
}

static void
state_free (gpointer state)
{
  cli_mcp_tasks_free (state);
}

static CliMcpTasks *
tasks_of (CliStdio *server)
{
  return cli_mcp_wire_state (server, &cli_mcp_wire_2026);
}

/* Whether the request's own capabilities declare the Tasks extension:
 * `"extensions": {"io.modelcontextprotocol/tasks": {}}`. */
static gboolean
client_has_tasks (JsonObject *params)
{
  JsonNode *meta = params != NULL ? json_object_get_member (params, "_meta") : NULL;
  JsonNode *caps, *extensions, *tasks;

  if (meta == NULL || !JSON_NODE_HOLDS_OBJECT (meta))
    return FALSE;
  caps = json_object_get_member (json_node_get_object (meta), CLIENT_CAPABILITIES_META);
  if (caps == NULL || !JSON_NODE_HOLDS_OBJECT (caps))
    return FALSE;
  extensions = json_object_get_member (json_node_get_object (caps), "extensions");
  if (extensions == NULL || !JSON_NODE_HOLDS_OBJECT (extensions))
    return FALSE;
  tasks = json_object_get_member (json_node_get_object (extensions), TASKS_EXTENSION);
  return tasks != NULL && JSON_NODE_HOLDS_OBJECT (tasks);
}

/* @result with `"resultType": "complete"`, as every result of this
 * revision says its kind. (transfer full) */
static JsonNode *
complete (JsonNode *result)
{
  json_object_set_string_member (json_node_get_object (result), "resultType", "complete");
  return result;
}

/* Methods -------------------------------------------------------------- */

/* What initialize said before this revision: the revisions served, the
 * capabilities (tools, and the Tasks extension), who the server is. */
static void
method_discover (CliStdio *server,
                 JsonNode *id)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_auto(GStrv) versions = cli_mcp_versions ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "resultType");
  json_builder_add_string_value (builder, "complete");
  json_builder_set_member_name (builder, "supportedVersions");
  json_builder_begin_array (builder);
  for (guint i = 0; versions[i] != NULL; i++)
    json_builder_add_string_value (builder, versions[i]);
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "capabilities");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "tools");
  json_builder_begin_object (builder);
  json_builder_end_object (builder);
  json_builder_set_member_name (builder, "extensions");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, TASKS_EXTENSION);
  json_builder_begin_object (builder);
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  json_builder_set_member_name (builder, "instructions");
  json_builder_add_string_value (builder,
                                 CLI_MCP_INSTRUCTIONS " A command that waits for input on its "
                                 "terminal becomes an input_required task.");
  /* The same for every client and until the server ends; not cached, as
   * the backend's settings may differ in the next server. */
  json_builder_set_member_name (builder, "ttlMs");
  json_builder_add_int_value (builder, 0);
  json_builder_set_member_name (builder, "cacheScope");
  json_builder_add_string_value (builder, "private");
  json_builder_set_member_name (builder, "_meta");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, SERVER_INFO_META);
  json_builder_add_value (builder, cli_mcp_server_info ());
  json_builder_end_object (builder);
  json_builder_end_object (builder);

  cli_mcp_respond_result (server, id, json_builder_get_root (builder));
}

static void
method_tools_list (CliStdio *server,
                   JsonNode *id)
{
  /* A Tool of this revision has no `execution`: whether a call becomes a
   * task is the server's choice, per request. */
  JsonNode *list = cli_mcp_tools_list (cli_mcp_server_caps (server), TRUE, FALSE);
  JsonObject *object = json_node_get_object (list);

  json_object_set_int_member (object, "ttlMs", 0);
  json_object_set_string_member (object, "cacheScope", "private");
  cli_mcp_respond_result (server, id, complete (list));
}

/* The answer to a tools/call that became a task: the Task, and words a
 * host may hand its model at once. */
static JsonNode *
create_task_result (CliMcpTask *task)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autofree char *words = g_strdup_printf ("The command runs as task %s; its result comes when it "
                                            "ends, and a prompt it waits at comes as input_required.",
                                            cli_mcp_task_get_id (task));

  json_builder_begin_object (builder);
  cli_mcp26_task_add_members (task, builder, FALSE);
  json_builder_set_member_name (builder, "resultType");
  json_builder_add_string_value (builder, "task");
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
  CliMcpTask *task = NULL;
  const CliOp *op;
  CliCall *call;

  op = cli_mcp_tool_call_read (server, id, params, &arguments);
  if (op == NULL)
    return;

  /* The server's choice, per request: a command the client can follow as
   * a task runs as one, its run the task's first stretch. */
  if (op->tasks && client_has_tasks (params))
    {
      task = cli_mcp_tasks_add (tasks_of (server), TASK_TTL_MS);
      task_id = cli_mcp_task_call_id (task);
      json_object_set_int_member (json_node_get_object (task_id), "stretch", 0);
    }

  call = cli_mcp26_call_new (server, task != NULL ? task_id : id, task);
  if (!cli_mcp_tool_call_start (server, id, call, op, arguments))
    {
      /* Refused before it ran: no task was made. */
      if (task != NULL)
        cli_mcp_tasks_remove (tasks_of (server), task);
      return;
    }

  if (task != NULL)
    {
      cli_mcp26_task_begin (task, cli_call_get_session (call));
      cli_mcp_task_set_call_key (task, cli_call_get_key (call));
      cli_mcp_respond_result (server, id, create_task_result (task));
    }
}

/* The task a tasks/ request names, or an error answered. */
static CliMcpTask *
find_task (CliStdio   *server,
           JsonNode   *id,
           JsonObject *params,
           const char *doing)
{
  g_autoptr(GError) error = NULL;
  CliMcpTask *task = cli_mcp_tasks_find (tasks_of (server), params, doing, &error);

  if (task == NULL)
    cli_mcp_respond_error (server, id, CLI_RPC_INVALID_PARAMS, error->message);
  return task;
}

static void
method_tasks_get (CliStdio   *server,
                  JsonNode   *id,
                  JsonObject *params)
{
  CliMcpTask *task = find_task (server, id, params, "retrieve");
  g_autoptr(JsonBuilder) builder = NULL;

  if (task == NULL)
    return;
  builder = json_builder_new ();
  json_builder_begin_object (builder);
  cli_mcp26_task_add_members (task, builder, TRUE);
  json_builder_set_member_name (builder, "resultType");
  json_builder_add_string_value (builder, "complete");
  json_builder_end_object (builder);
  cli_mcp_respond_result (server, id, json_builder_get_root (builder));
}

static void
method_tasks_update (CliStdio   *server,
                     JsonNode   *id,
                     JsonObject *params)
{
  g_autoptr(GError) error = NULL;
  JsonNode *responses;
  CliMcpTask *task = find_task (server, id, params, "update");

  if (task == NULL)
    return;
  responses = json_object_get_member (params, "inputResponses");
  if (responses == NULL || !JSON_NODE_HOLDS_OBJECT (responses))
    {
      cli_mcp_respond_error (server, id, CLI_RPC_INVALID_PARAMS, "“inputResponses” (an object) is required");
      return;
    }
  if (!cli_mcp26_task_update (server, task, json_node_get_object (responses), &error))
    {
      cli_mcp_respond_error (server, id, CLI_RPC_INVALID_PARAMS, error->message);
      return;
    }
  cli_mcp_respond_result (server, id, complete (cli_mcp_empty_result ()));
}

static void
method_tasks_cancel (CliStdio   *server,
                     JsonNode   *id,
                     JsonObject *params)
{
  g_autoptr(GError) error = NULL;
  CliMcpTask *task = cli_mcp_tasks_find_to_cancel (tasks_of (server), params, &error);

  if (task == NULL)
    {
      cli_mcp_respond_error (server, id, CLI_RPC_INVALID_PARAMS, error->message);
      return;
    }

  {
    g_autoptr(CliMcpTask) held = cli_mcp_task_ref (task);

    cli_mcp26_task_cancel (server, held);
    cli_mcp_respond_result (server, id, complete (cli_mcp_empty_result ()));
    cli_mcp_tasks_settle (tasks_of (server), held);
  }
}

/* The table ------------------------------------------------------------ */

static void
wire_request (CliStdio   *server,
              JsonNode   *id,
              const char *method,
              JsonObject *params)
{
  if (g_str_equal (method, "server/discover"))
    method_discover (server, id);
  else if (g_str_equal (method, "ping"))
    cli_mcp_respond_result (server, id, complete (cli_mcp_empty_result ()));
  else if (g_str_equal (method, "tools/list"))
    method_tools_list (server, id);
  else if (g_str_equal (method, "tools/call"))
    method_tools_call (server, id, params);
  else if (g_str_equal (method, "tasks/get"))
    method_tasks_get (server, id, params);
  else if (g_str_equal (method, "tasks/update"))
    method_tasks_update (server, id, params);
  else if (g_str_equal (method, "tasks/cancel"))
    method_tasks_cancel (server, id, params);
  else
    /* initialize, tasks/list and tasks/result among them: not in this
     * revision. */
    cli_mcp_respond_no_method (server, id, method);
}

/* A plain call answers with its tool result, unless it was cancelled (a
 * cancelled request gets no answer); a task's stretch moves its task on. */
static void
wire_respond (CliStdio         *server,
              CliCall          *call,
              const CliOutcome *outcome)
{
  CliMcp26Call *mcp_call = cli_call_get_data (call);

  if (mcp_call->task != NULL)
    {
      cli_mcp26_task_stretch (server, mcp_call->task, outcome);
      cli_mcp_tasks_settle (tasks_of (server), mcp_call->task);
      return;
    }

  if (cli_mcp_call_answers (call, outcome))
    cli_mcp_respond_result (server, cli_call_get_id (call), complete (cli_mcp_tool_result (outcome, TRUE)));
}

const CliMcpWire cli_mcp_wire_2026 = {
  .versions = protocol_versions,
  .state_new = state_new,
  .state_free = state_free,
  .request = wire_request,
  .notification = cli_mcp_notification,
  .respond = wire_respond,
};
