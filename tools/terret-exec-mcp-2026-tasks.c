/* terret-exec-mcp-2026-tasks.c: the tasks of MCP 2026-07-28's Tasks
 * extension (io.modelcontextprotocol/tasks) in `terret-exec mcp`
 *
 * A task's command runs in stretches: the run, then a poll after each
 * hand-back, until it ends. A stretch that hands the command back while
 * it waits for input on its terminal (the result's input state) makes the
 * task input_required, with one elicitation/create in form mode: the
 * prompt as its message, one string field. tasks/update types the
 * accepted value into the terminal, then Enter (a pager gets the keys
 * alone), or interrupts the command for an answer that declines, and the
 * next stretch is a poll. A hand-back for any other
 * reason (a return_after the call asked for) is polled on at once. The
 * task completes with the tool result the last stretch makes, its output
 * preceded by the earlier stretches'. terret-exec-mcp-2026.c has the
 * methods; docs/mcp.md is the reference.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-exec-common.h"
#include "terret-exec-json-bytes.h"
#include "terret-exec-fields.h"
#include "terret-exec-mcp-2026.h"
#include "terret-exec-mcp-tools.h"
#include "terret-exec-ops.h"

/* What a client is told to wait between two tasks/get: a prompt is known
 * within a second of its coming, and so is the answer. */
#define POLL_INTERVAL_MS 500

/* How long one poll of a task's command waits for news: bounded, and
 * answered at once by output, the end, or a wait for input. */
#define POLL_WAIT_SECONDS 60.0

/* The earlier stretches' output a task keeps for its result, each
 * stream: the capture bounds each stretch; this bounds their sum. */
#define EARLIER_MAX (1024 * 1024)

/* The one field of an input request's form. */
#define INPUT_FIELD "input"

typedef struct
{
  char *session;                    /* (owned) (nullable) where its command runs */
  guint stretches;
  guint inputs;
  char *input_key;                  /* (owned) (nullable) the outstanding request's */
  JsonNode *input_request;          /* (owned) (nullable) */
  gboolean pager;
  GByteArray *out;                  /* (owned) earlier stretches' stdout */
  GByteArray *err;                  /* (owned) (nullable) their stderr, where not merged */
  GString *text;                    /* (owned) the same as a model reads it */
  guint64 dropped;                  /* bytes past EARLIER_MAX */
} Task26;

static void
task26_free (gpointer data)
{
  Task26 *t = data;

  g_free (t->session);
  g_free (t->input_key);
  g_clear_pointer (&t->input_request, json_node_unref);
  g_byte_array_unref (t->out);
  g_clear_pointer (&t->err, g_byte_array_unref);
  g_string_free (t->text, TRUE);
  g_free (t);
}

static void
call26_free (gpointer data)
{
  CliMcp26Call *mcp_call = data;

  g_clear_pointer (&mcp_call->task, cli_mcp_task_unref);
  g_free (mcp_call);
}

/* @task: (nullable): the task the call is a stretch of */
CliCall *
cli_mcp26_call_new (CliStdio   *server,
                    JsonNode   *id,
                    CliMcpTask *task)
{
  CliCall *call = cli_call_new (server, id);
  CliMcp26Call *mcp_call = g_new0 (CliMcp26Call, 1);

  mcp_call->head.wire = &cli_mcp_wire_2026;
  mcp_call->task = task != NULL ? cli_mcp_task_ref (task) : NULL;
  cli_call_set_data (call, mcp_call, call26_free);
  return call;
}

/* @task's run started in @session. */
void
cli_mcp26_task_begin (CliMcpTask *task,
                      const char *session)
{
  Task26 *t = g_new0 (Task26, 1);

  t->session = g_strdup (session);
  t->out = g_byte_array_new ();
  t->text = g_string_new (NULL);
  cli_mcp_task_set_data (task, t, task26_free);
}

/* Task ----------------------------------------------------------------- */

static void
add_time (JsonBuilder *builder,
          const char  *name,
          GDateTime   *time)
{
  g_autofree char *text = g_date_time_format_iso8601 (time);

  json_builder_set_member_name (builder, name);
  json_builder_add_string_value (builder, text);
}

/*
 * cli_mcp26_task_add_members:
 * @detailed: a DetailedTask (tasks/get): with its input requests, result
 *   or error as its status has them; else a Task (a tools/call's answer)
 *
 * The members of the extension's Task for one being built.
 */
void
cli_mcp26_task_add_members (CliMcpTask  *task,
                            JsonBuilder *builder,
                            gboolean     detailed)
{
  Task26 *t = cli_mcp_task_get_data (task);
  const char *message = cli_mcp_task_get_status_message (task);

  json_builder_set_member_name (builder, "taskId");
  json_builder_add_string_value (builder, cli_mcp_task_get_id (task));
  json_builder_set_member_name (builder, "status");
  json_builder_add_string_value (builder, cli_mcp_task_get_status_name (task));
  if (message != NULL)
    {
      g_autofree char *valid = g_utf8_make_valid (message, -1);

      json_builder_set_member_name (builder, "statusMessage");
      json_builder_add_string_value (builder, valid);
    }
  add_time (builder, "createdAt", cli_mcp_task_get_created (task));
  add_time (builder, "lastUpdatedAt", cli_mcp_task_get_updated (task));
  json_builder_set_member_name (builder, "ttlMs");
  json_builder_add_int_value (builder, cli_mcp_task_get_ttl (task));
  json_builder_set_member_name (builder, "pollIntervalMs");
  json_builder_add_int_value (builder, POLL_INTERVAL_MS);

  if (!detailed)
    return;

  switch (cli_mcp_task_get_status (task))
    {
    case CLI_MCP_TASK_INPUT_REQUIRED:
      json_builder_set_member_name (builder, "inputRequests");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, t->input_key);
      json_builder_add_value (builder, json_node_copy (t->input_request));
      json_builder_end_object (builder);
      break;
    case CLI_MCP_TASK_COMPLETED:
      json_builder_set_member_name (builder, "result");
      json_builder_add_value (builder, json_node_copy (cli_mcp_task_get_result (task)));
      break;
    case CLI_MCP_TASK_FAILED:
      json_builder_set_member_name (builder, "error");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "code");
      json_builder_add_int_value (builder, CLI_RPC_INTERNAL_ERROR);
      json_builder_set_member_name (builder, "message");
      json_builder_add_string_value (builder, message != NULL ? message : "the task failed");
      json_builder_end_object (builder);
      break;
    case CLI_MCP_TASK_WORKING:
    case CLI_MCP_TASK_CANCELLED:
    default:
      break;
    }
}

/* Stretches ------------------------------------------------------------ */

static void
keep_bytes (Task26     *t,
            GByteArray *into,
            GBytes     *bytes)
{
  gsize len = bytes != NULL ? g_bytes_get_size (bytes) : 0;
  gsize room = EARLIER_MAX - MIN (into->len, EARLIER_MAX);
  g_autofree char *text = NULL;

  if (len == 0)
    return;
  g_byte_array_append (into, g_bytes_get_data (bytes, NULL), MIN (len, room));
  t->dropped += len - MIN (len, room);
  text = cli_mcp_progress_text (bytes);
  if (text != NULL && t->text->len < EARLIER_MAX)
    {
      if (into == t->err)
        g_string_append (t->text, "[stderr]\n");
      g_string_append (t->text, text);
    }
}

/* A stretch handed the command back: its output is kept for the end. */
static void
keep_stretch (Task26       *t,
              TerretResult *result)
{
  keep_bytes (t, t->out, terret_result_get_stdout (result));
  if (terret_result_get_stderr (result) != NULL)
    {
      if (t->err == NULL)
        t->err = g_byte_array_new ();
      keep_bytes (t, t->err, terret_result_get_stderr (result));
    }
}

/* @name's bytes in @structured: the earlier stretches' before the last's. */
static void
join_stream (JsonObject *structured,
             const char *name,
             GByteArray *earlier)
{
  g_autofree char *base64 = g_strconcat (name, "_base64", NULL);
  g_autoptr(GByteArray) joined = g_byte_array_new ();
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) member = NULL;
  JsonObject *object;

  if (earlier == NULL || earlier->len == 0)
    return;
  g_byte_array_append (joined, earlier->data, earlier->len);
  if (json_object_has_member (structured, name) && !json_object_get_null_member (structured, name))
    {
      const char *text = json_object_get_string_member (structured, name);

      g_byte_array_append (joined, (const guint8 *) text, strlen (text));
    }
  else if (json_object_has_member (structured, base64))
    {
      gsize len = 0;
      g_autofree guchar *bytes = g_base64_decode (json_object_get_string_member (structured, base64), &len);

      g_byte_array_append (joined, bytes, len);
    }
  else
    return;

  json_object_remove_member (structured, name);
  json_object_remove_member (structured, base64);
  json_builder_begin_object (builder);
  cli_json_add_bytes (builder, name, joined->data, joined->len);
  json_builder_end_object (builder);
  member = json_builder_get_root (builder);
  object = json_node_get_object (member);
  if (json_object_has_member (object, name))
    json_object_set_member (structured, name, json_node_copy (json_object_get_member (object, name)));
  else
    json_object_set_member (structured, base64, json_node_copy (json_object_get_member (object, base64)));
}

/* The tool result the last stretch makes, with the earlier stretches'
 * output before its own, as a 2026-07-28 result. */
static JsonNode *
final_result (Task26           *t,
              const CliOutcome *outcome)
{
  JsonNode *result = cli_mcp_tool_result (outcome, TRUE);
  JsonObject *object = json_node_get_object (result);

  if (outcome->result != NULL && (t->out->len > 0 || (t->err != NULL && t->err->len > 0)))
    {
      JsonObject *item = json_array_get_object_element (json_object_get_array_member (object, "content"), 0);
      JsonObject *structured = json_object_get_object_member (object, "structuredContent");
      g_autofree char *text = g_strconcat (t->text->str, json_object_get_string_member (item, "text"), NULL);

      json_object_set_string_member (item, "text", text);
      join_stream (structured, "stdout", t->out);
      join_stream (structured, "stderr", t->err);
      if (t->dropped > 0)
        json_object_set_int_member (structured, "dropped",
                                    json_object_get_int_member (structured, "dropped") + t->dropped);
    }
  json_object_set_string_member (object, "resultType", "complete");
  return result;
}

static void
task_fail (CliMcpTask *task,
           const char *why)
{
  cli_mcp_task_end (task, CLI_MCP_TASK_FAILED, why, NULL);
}

/* The next stretch: a poll of the command the last one handed back. */
static void
start_poll (CliStdio   *server,
            CliMcpTask *task)
{
  Task26 *t = cli_mcp_task_get_data (task);
  g_autoptr(JsonObject) fields = json_object_new ();
  g_autoptr(JsonNode) id = cli_mcp_task_call_id (task);
  g_autoptr(GError) error = NULL;
  CliCall *call;

  /* One id per stretch. */
  json_object_set_int_member (json_node_get_object (id), "stretch", ++t->stretches);
  json_object_set_string_member (fields, "session", t->session);
  json_object_set_double_member (fields, "wait", POLL_WAIT_SECONDS);

  call = cli_mcp26_call_new (server, id, task);
  if (!cli_op_start (cli_op_lookup ("poll"), call, fields, &error))
    {
      cli_call_drop (call);
      task_fail (task, error->message);
      return;
    }
  cli_mcp_task_set_call_key (task, cli_call_get_key (call));
}

/* The command waits for input: the task asks for it. */
static void
require_input (CliMcpTask   *task,
               TerretResult *result)
{
  Task26 *t = cli_mcp_task_get_data (task);
  const char *prompt = terret_result_get_input_prompt (result);
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(GString) message = g_string_new (NULL);
  g_autofree char *valid = prompt != NULL ? g_utf8_make_valid (prompt, -1) : NULL;

  t->pager = terret_result_get_input_pager (result);
  if (t->pager)
    g_string_append (message, "A pager holds the command's terminal and waits for a key");
  else
    g_string_append (message, "The command waits for input on its terminal");
  if (valid != NULL && *valid != '\0')
    g_string_append_printf (message, ": %s", valid);
  else
    g_string_append_c (message, '.');
  if (terret_result_get_input_secret (result))
    g_string_append (message, " The input is a secret: the terminal does not echo it.");

  g_free (t->input_key);
  t->input_key = g_strdup_printf ("terminal-input-%u", ++t->inputs);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "method");
  json_builder_add_string_value (builder, "elicitation/create");
  json_builder_set_member_name (builder, "params");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "mode");
  json_builder_add_string_value (builder, "form");
  json_builder_set_member_name (builder, "message");
  json_builder_add_string_value (builder, message->str);
  json_builder_set_member_name (builder, "requestedSchema");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "object");
  json_builder_set_member_name (builder, "properties");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, INPUT_FIELD);
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "string");
  json_builder_set_member_name (builder, "title");
  json_builder_add_string_value (builder, t->pager ? "Keys" : "Input");
  json_builder_set_member_name (builder, "description");
  json_builder_add_string_value (builder, t->pager ? "Sent to the pager as typed, without Enter: q quits, "
                                                     "a space pages on"
                                                   : "Typed at the terminal, then Enter");
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  json_builder_set_member_name (builder, "required");
  json_builder_begin_array (builder);
  json_builder_add_string_value (builder, INPUT_FIELD);
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  json_builder_end_object (builder);

  g_clear_pointer (&t->input_request, json_node_unref);
  t->input_request = json_builder_get_root (builder);
  cli_mcp_task_set_running (task, CLI_MCP_TASK_INPUT_REQUIRED, message->str);
}

/*
 * cli_mcp26_task_stretch:
 *
 * A stretch of @task (its run, or a poll) answered with @outcome: the
 * task waits for input, goes on with a poll, or ends. A task that ended
 * meanwhile (tasks/cancel) stays as it is.
 */
void
cli_mcp26_task_stretch (CliStdio         *server,
                        CliMcpTask       *task,
                        const CliOutcome *outcome)
{
  Task26 *t = cli_mcp_task_get_data (task);

  cli_mcp_task_set_call_key (task, NULL);
  if (cli_mcp_task_is_terminal (task))
    return;

  if (g_error_matches (outcome->error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      cli_mcp_task_end (task, CLI_MCP_TASK_CANCELLED, "The server is ending: the task was cancelled.", NULL);
      return;
    }

  if (outcome->result != NULL && terret_result_get_running (outcome->result))
    {
      keep_stretch (t, outcome->result);
      if (terret_result_get_input_state (outcome->result) == TERRET_INPUT_STATE_WAITING)
        require_input (task, outcome->result);
      else
        start_poll (server, task);
      return;
    }

  /* What the call would have answered: a command that ran, whatever its
   * status, or a tool error (isError) saying why nothing did. */
  cli_mcp_task_end (task, CLI_MCP_TASK_COMPLETED, NULL, final_result (t, outcome));
}

/* The accepted value of an elicitation, or NULL with @error. */
static const char *
accepted_value (JsonObject  *response,
                const char  *key,
                GError     **error)
{
  JsonNode *content = json_object_get_member (response, "content");
  JsonNode *value;

  if (content == NULL || !JSON_NODE_HOLDS_OBJECT (content))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "“inputResponses.%s.content” (an object) is required to accept", key);
      return NULL;
    }
  value = json_object_get_member (json_node_get_object (content), INPUT_FIELD);
  if (value == NULL || !JSON_NODE_HOLDS_VALUE (value) || json_node_get_value_type (value) != G_TYPE_STRING)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "“inputResponses.%s.content.%s” must be a string", key, INPUT_FIELD);
      return NULL;
    }
  return json_node_get_string (value);
}

/*
 * cli_mcp26_task_update:
 * @responses: tasks/update's inputResponses
 *
 * The answer to @task's outstanding input request reaches its command's
 * terminal: accept types the value, then Enter (a pager: the keys
 * alone); decline and cancel type ^C, which interrupts the command:
 * nothing is typed for it, as an empty line would be taken for a prompt's
 * default answer (apt's [Y/n] is yes). Answers to
 * no outstanding request are ignored, so a repeated update is harmless.
 * Returns %FALSE with @error when the answer is malformed or could not be
 * delivered; the task then still waits.
 */
gboolean
cli_mcp26_task_update (CliStdio    *server,
                       CliMcpTask  *task,
                       JsonObject  *responses,
                       GError     **error)
{
  TerretExecutor *executor = cli_stdio_get_executor (server);
  Task26 *t = cli_mcp_task_get_data (task);
  g_autoptr(GBytes) data = NULL;
  JsonNode *node;
  JsonObject *response;
  const char *action = NULL;

  if (cli_mcp_task_get_status (task) != CLI_MCP_TASK_INPUT_REQUIRED || t->input_key == NULL)
    return TRUE;
  node = json_object_get_member (responses, t->input_key);
  if (node == NULL)
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT (node))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "“inputResponses.%s” must be an object", t->input_key);
      return FALSE;
    }
  response = json_node_get_object (node);
  if (!cli_json_get_string (response, "action", &action) || action == NULL)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "“inputResponses.%s.action” must be \"accept\", \"decline\" or \"cancel\"", t->input_key);
      return FALSE;
    }

  if (g_str_equal (action, "accept"))
    {
      const char *value = accepted_value (response, t->input_key, error);

      if (value == NULL)
        return FALSE;
      data = t->pager ? g_bytes_new (value, strlen (value))
                      : g_bytes_new_take (g_strconcat (value, "\n", NULL), strlen (value) + 1);
    }
  else if (!g_str_equal (action, "decline") && !g_str_equal (action, "cancel"))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                   "“inputResponses.%s.action” must be \"accept\", \"decline\" or \"cancel\", not “%s”",
                   t->input_key, action);
      return FALSE;
    }

  if (data != NULL ? !terret_executor_send_input (executor, t->session, data, error)
                   : !terret_executor_interrupt (executor, t->session, error))
    return FALSE;

  g_clear_pointer (&t->input_key, g_free);
  g_clear_pointer (&t->input_request, json_node_unref);
  cli_mcp_task_set_running (task, CLI_MCP_TASK_WORKING, NULL);
  start_poll (server, task);
  return TRUE;
}

/*
 * cli_mcp26_task_cancel:
 *
 * Ends @task as cancelled, then its command: the stretch in flight is
 * cancelled (the run's cancel ends the command and everything it
 * started); a command that was handed back (it waited for input) ends
 * with its session, which is closed.
 */
void
cli_mcp26_task_cancel (CliStdio   *server,
                       CliMcpTask *task)
{
  Task26 *t = cli_mcp_task_get_data (task);
  g_autofree char *call_key = g_strdup (cli_mcp_task_get_call_key (task));

  cli_mcp_task_end (task, CLI_MCP_TASK_CANCELLED, "The task was cancelled by request.", NULL);
  if (call_key != NULL)
    cli_stdio_cancel_calls (server, call_key, NULL);
  /* A poll's cancel ends the poll, not the command: a command that was
   * handed back once ends with its session. */
  if (t->session != NULL && (call_key == NULL || t->stretches > 0))
    {
      terret_executor_close_session (cli_stdio_get_executor (server), t->session);
      g_hash_table_remove (cli_stdio_get_sessions (server), t->session);
      cli_outputs_forget_session (cli_stdio_get_outputs (server), t->session);
    }
}
