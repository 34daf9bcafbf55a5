/* terret-exec-mcp-tools.c: the tools of `terret-exec mcp`
 *
 * `bash` runs a command in a session; `bash_input`, `bash_interrupt`,
 * `bash_poll` and `bash_close` drive the sessions, each offered only
 * where the backend's capabilities say it works. A tool's result is what
 * a model reads (one text item) and, where the client speaks MCP
 * 2025-06-18, the run fields of `serve` as structuredContent.
 * JSON-RPC is terret-exec-mcp.c's. docs/mcp.md is the reference.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-exec-common.h"
#include "terret-exec-mcp-tools.h"

struct _CliMcpTools
{
  GObject parent_instance;

  TerretExecutor *executor;   /* (owned) */
  TerretCapabilities caps;
  GHashTable *sessions;       /* (owned) the session keys a bash call named */
};

G_DEFINE_FINAL_TYPE (CliMcpTools, cli_mcp_tools, G_TYPE_OBJECT)

G_DEFINE_QUARK (cli-mcp-tools-error-quark, cli_mcp_tools_error)

typedef struct _Tool Tool;

/* Carries out a call whose arguments hold only the tool's own members;
 * returns the tool result at once, or NULL when it completes @task. */
typedef JsonNode *(*ToolFunc) (CliMcpTools *self,
                               JsonObject  *arguments,
                               GTask       *task,
                               GError     **error);

struct _Tool
{
  const char *name;
  TerretCapabilities needs;   /* listed only when the backend has all */
  const char * const *fields;
  const char *description;
  const char *input_schema;
  gboolean has_output;        /* the run fields as structuredContent */
  ToolFunc func;
};

typedef struct
{
  CliMcpProgressFunc progress;
  gpointer progress_data;
  gboolean structured;
} Call;

/* The run fields serve answers with (docs/cli.md): text where the bytes
 * are UTF-8, NAME_base64 otherwise. */
static const char run_output_schema[] =
  "{\"type\": \"object\","
  " \"properties\": {"
  "  \"status\": {\"type\": [\"integer\", \"null\"], \"description\": \"The exit status; null when none was seen (killed, timed out, still running, the shell ended)\"},"
  "  \"signal\": {\"type\": [\"integer\", \"null\"], \"description\": \"The signal that ended the command\"},"
  "  \"stdout\": {\"type\": \"string\", \"description\": \"The output, when it is valid UTF-8 (all of it with a backend that merges stderr in)\"},"
  "  \"stdout_base64\": {\"type\": \"string\", \"description\": \"The output's exact bytes in base64, when they are not UTF-8\"},"
  "  \"stderr\": {\"type\": [\"string\", \"null\"], \"description\": \"Standard error; null when the backend merges it into stdout\"},"
  "  \"stderr_base64\": {\"type\": \"string\"},"
  "  \"notice\": {\"type\": [\"string\", \"null\"], \"description\": \"Something the caller did not ask for: truncation, a restarted session, a timeout\"},"
  "  \"timed_out\": {\"type\": \"boolean\"},"
  "  \"running\": {\"type\": \"boolean\", \"description\": \"The command goes on (a detached timeout): poll it with bash_poll\"},"
  "  \"limit_hit\": {\"type\": [\"string\", \"null\"], \"description\": \"The resource limits the command ran into (memory, processes, cpu, file-size, open-files), comma-separated\"},"
  "  \"dropped\": {\"type\": \"integer\", \"description\": \"Bytes of output the capture dropped\"},"
  "  \"cwd\": {\"type\": [\"string\", \"null\"], \"description\": \"The session's working directory after the run, where the backend knows it\"},"
  "  \"omitted_at\": {\"type\": [\"integer\", \"null\"], \"description\": \"Where in the output the omitted bytes begin (dropped of them)\"},"
  "  \"full_output\": {\"type\": [\"string\", \"null\"], \"description\": \"The file holding the whole output, with keep_full_output\"},"
  "  \"cwd_base64\": {\"type\": \"string\"}"
  " },"
  " \"required\": [\"status\", \"signal\", \"notice\", \"timed_out\", \"running\", \"dropped\"]}";

/* Arguments ------------------------------------------------------------ */

static gboolean
check_fields (const Tool  *tool,
              JsonObject  *arguments,
              GError     **error)
{
  g_autoptr(GList) members = json_object_get_members (arguments);

  for (GList *l = members; l != NULL; l = l->next)
    {
      if (!g_strv_contains (tool->fields, l->data))
        {
          g_set_error (error, CLI_MCP_TOOLS_ERROR, CLI_MCP_TOOLS_ERROR_INVALID_ARGUMENTS,
                       "unknown argument “%s” for tool “%s”", (const char *) l->data, tool->name);
          return FALSE;
        }
    }

  return TRUE;
}

/* The shared readers report TERRET_EXEC_ERROR_INVALID_REQUEST; here that
 * is the protocol's invalid-params, not a tool failure. */
static void
as_invalid_arguments (GError **error)
{
  if (error != NULL && *error != NULL && (*error)->domain == TERRET_EXEC_ERROR)
    {
      (*error)->domain = CLI_MCP_TOOLS_ERROR;
      (*error)->code = CLI_MCP_TOOLS_ERROR_INVALID_ARGUMENTS;
    }
}

static gboolean
get_session (JsonObject  *arguments,
             const char **session,
             GError     **error)
{
  if (!cli_json_get_string (arguments, "session", FALSE, session, error))
    {
      as_invalid_arguments (error);
      return FALSE;
    }
  if (*session == NULL)
    *session = TERRET_DEFAULT_SESSION;
  return TRUE;
}

/* Results -------------------------------------------------------------- */

static JsonNode *
tool_result_new (const char   *text,
                 TerretResult *result,
                 gboolean      structured,
                 gboolean      is_error)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autofree char *valid = g_utf8_make_valid (text, -1);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "content");
  json_builder_begin_array (builder);
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "text");
  json_builder_set_member_name (builder, "text");
  json_builder_add_string_value (builder, valid);
  json_builder_end_object (builder);
  json_builder_end_array (builder);

  if (result != NULL && structured)
    {
      json_builder_set_member_name (builder, "structuredContent");
      json_builder_begin_object (builder);
      cli_result_add_members (builder, result);
      json_builder_end_object (builder);
    }

  json_builder_set_member_name (builder, "isError");
  json_builder_add_boolean_value (builder, is_error);
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}

/* Nothing ran: the reason, with the protocol's code a model can act on
 * (`busy` means wait or use another session). */
static JsonNode *
tool_error_new (const GError *error)
{
  g_autofree char *text = g_strdup_printf ("error (%s): %s", cli_error_code (error), error->message);

  return tool_result_new (text, NULL, FALSE, TRUE);
}

static void
append_bytes (GString *text,
              GBytes  *bytes)
{
  gsize len = 0;
  const char *data;

  if (bytes == NULL)
    return;
  data = g_bytes_get_data (bytes, &len);
  if (len == 0)
    return;

  /* NUL bytes would end the text early: shown as U+FFFD like any other
   * byte that is not text. structuredContent has the exact bytes. */
  for (gsize i = 0; i < len; )
    {
      const char *nul = memchr (data + i, '\0', len - i);
      gsize n = nul != NULL ? (gsize)(nul - (data + i)) : len - i;
      g_autofree char *valid = g_utf8_make_valid (data + i, n);

      g_string_append (text, valid);
      i += n;
      if (nul != NULL)
        {
          g_string_append (text, "\xef\xbf\xbd");
          i++;
        }
    }
}

/* A stream with the marker line where the capture left bytes out, so
 * a model reads where the middle of a long output went. */
static void
append_stream (GString      *text,
               TerretResult *result,
               TerretStream  stream)
{
  GBytes *bytes = stream == TERRET_STREAM_STDOUT ? terret_result_get_stdout (result)
                                                 : terret_result_get_stderr (result);
  g_autofree char *marker = terret_result_format_omitted (result, stream);
  gsize cut = terret_result_get_cut_offset (result, stream);
  gsize len = bytes != NULL ? g_bytes_get_size (bytes) : 0;

  if (marker == NULL || bytes == NULL)
    {
      append_bytes (text, bytes);
      return;
    }
  {
    g_autoptr(GBytes) before = g_bytes_new_from_bytes (bytes, 0, MIN (cut, len));
    g_autoptr(GBytes) after = g_bytes_new_from_bytes (bytes, MIN (cut, len), len - MIN (cut, len));

    append_bytes (text, before);
    g_string_append (text, marker);
    append_bytes (text, after);
  }
}

/* The output as a model reads it, then one bracketed line saying how the
 * command ended and where the session now is. */
static char *
result_text (TerretResult *result)
{
  GString *text = g_string_new (NULL);
  g_autoptr(GPtrArray) facts = g_ptr_array_new_with_free_func (g_free);
  GBytes *err = terret_result_get_stderr (result);
  g_autofree char *joined = NULL;
  gsize dropped = terret_result_get_dropped (result, TERRET_STREAM_STDOUT) +
                  terret_result_get_dropped (result, TERRET_STREAM_STDERR);

  append_stream (text, result, TERRET_STREAM_STDOUT);
  if (err != NULL && g_bytes_get_size (err) > 0)
    {
      if (text->len > 0 && text->str[text->len - 1] != '\n')
        g_string_append_c (text, '\n');
      g_string_append (text, "[stderr]\n");
      append_stream (text, result, TERRET_STREAM_STDERR);
    }
  if (text->len > 0 && text->str[text->len - 1] != '\n')
    g_string_append_c (text, '\n');

  if (terret_result_get_running (result))
    g_ptr_array_add (facts, g_strdup ("still running: bash_poll collects more output"));
  else if (terret_result_get_exited (result))
    g_ptr_array_add (facts, g_strdup_printf ("exit status %d", terret_result_get_exit_status (result)));
  else if (terret_result_get_term_signal (result) > 0)
    g_ptr_array_add (facts, g_strdup_printf ("killed by signal %d (%s)",
                                             terret_result_get_term_signal (result),
                                             g_strsignal (terret_result_get_term_signal (result))));
  else
    g_ptr_array_add (facts, g_strdup ("no exit status"));
  if (terret_result_get_timed_out (result))
    g_ptr_array_add (facts, g_strdup ("timed out"));
  if (dropped > 0)
    g_ptr_array_add (facts, g_strdup_printf ("%" G_GSIZE_FORMAT " bytes of output dropped", dropped));
  if (terret_result_get_notice (result) != NULL)
    g_ptr_array_add (facts, g_strdup_printf ("notice: %s", terret_result_get_notice (result)));
  if (terret_result_get_cwd (result) != NULL)
    g_ptr_array_add (facts, g_strdup_printf ("cwd: %s", terret_result_get_cwd (result)));
  g_ptr_array_add (facts, NULL);

  joined = g_strjoinv ("; ", (char **) facts->pdata);
  g_string_append_printf (text, "[%s]", joined);

  return g_string_free (text, FALSE);
}

static JsonNode *
run_result_new (TerretResult *result,
                gboolean      structured)
{
  g_autofree char *text = result_text (result);

  return tool_result_new (text, result, structured, FALSE);
}

/* bash ----------------------------------------------------------------- */

static void
on_progress (TerretRequest *request,
             TerretStream   stream,
             GBytes        *data,
             gpointer       user_data)
{
  Call *call = user_data;
  g_autoptr(GString) text = g_string_new (NULL);

  append_bytes (text, data);
  if (text->len > 0)
    call->progress (text->str, call->progress_data);
}

/* A run's or a poll's outcome as the tool call's: a cancellation as
 * such, nothing run as an isError result, else the run's fields. */
static void
return_outcome (GTask        *task,
                TerretResult *result,
                GError       *error)
{
  Call *call = g_task_get_task_data (task);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    g_task_return_error (task, g_error_copy (error));
  else if (result == NULL)
    g_task_return_pointer (task, tool_error_new (error), (GDestroyNotify) json_node_unref);
  else
    g_task_return_pointer (task, run_result_new (result, call->structured),
                           (GDestroyNotify) json_node_unref);
}

static void
run_done (GObject      *object,
          GAsyncResult *res,
          gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretResult) result = terret_executor_run_finish (TERRET_EXECUTOR (object), res, &error);

  return_outcome (task, result, error);
}

static JsonNode *
tool_bash (CliMcpTools *self,
           JsonObject  *arguments,
           GTask       *task,
           GError     **error)
{
  Call *call = g_task_get_task_data (task);
  g_autoptr(TerretRequest) request = cli_request_from_json (arguments, error);

  if (request == NULL)
    {
      as_invalid_arguments (error);
      return NULL;
    }

  g_hash_table_add (self->sessions, g_strdup (terret_request_get_session (request)));
  if (call->progress != NULL)
    terret_request_set_progress_func (request, on_progress, call, NULL);

  terret_executor_run_async (self->executor, request, g_task_get_cancellable (task),
                             run_done, g_object_ref (task));
  return NULL;
}

/* The session tools ---------------------------------------------------- */

static JsonNode *
tool_input (CliMcpTools *self,
            JsonObject  *arguments,
            GTask       *task,
            GError     **error)
{
  g_autoptr(GBytes) bytes = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *text = NULL;
  const char *session, *data;

  if (!get_session (arguments, &session, error) ||
      !cli_json_get_string (arguments, "data", TRUE, &data, error))
    {
      as_invalid_arguments (error);
      return NULL;
    }

  bytes = g_bytes_new (data, strlen (data));
  if (!terret_executor_send_input (self->executor, session, bytes, &local_error))
    return tool_error_new (local_error);

  text = g_strdup_printf ("sent %zu bytes to the command in session “%s”; "
                          "bash_poll collects its output", strlen (data), session);
  return tool_result_new (text, NULL, FALSE, FALSE);
}

static JsonNode *
tool_interrupt (CliMcpTools *self,
                JsonObject  *arguments,
                GTask       *task,
                GError     **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *text = NULL;
  const char *session;

  if (!get_session (arguments, &session, error))
    return NULL;

  if (!terret_executor_interrupt (self->executor, session, &local_error))
    return tool_error_new (local_error);

  text = g_strdup_printf ("sent ^C to the command in session “%s”; "
                          "bash_poll tells how it ended", session);
  return tool_result_new (text, NULL, FALSE, FALSE);
}

static void
poll_done (GObject      *object,
           GAsyncResult *res,
           gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretResult) result = terret_executor_poll_finish (TERRET_EXECUTOR (object), res, &error);

  return_outcome (task, result, error);
}

static JsonNode *
tool_poll (CliMcpTools *self,
           JsonObject  *arguments,
           GTask       *task,
           GError     **error)
{
  const char *session;
  double wait = 0;

  if (!get_session (arguments, &session, error))
    return NULL;
  if (!cli_json_get_seconds (arguments, "wait", &wait, error))
    {
      as_invalid_arguments (error);
      return NULL;
    }

  terret_executor_poll_async (self->executor, session, wait, g_task_get_cancellable (task),
                              poll_done, g_object_ref (task));
  return NULL;
}

/* The executor cannot tell a session that never was from an idle one;
 * this server can, and says so, since a model closing a session it never
 * opened has most likely mistyped its name. */
static JsonNode *
tool_close (CliMcpTools *self,
            JsonObject  *arguments,
            GTask       *task,
            GError     **error)
{
  g_autofree char *text = NULL;
  const char *session;

  if (!get_session (arguments, &session, error))
    return NULL;

  if (!g_hash_table_contains (self->sessions, session))
    {
      g_autoptr(GString) known = g_string_new (NULL);
      GHashTableIter iter;
      gpointer key;

      g_hash_table_iter_init (&iter, self->sessions);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        g_string_append_printf (known, "%s“%s”", known->len > 0 ? ", " : "", (const char *) key);

      text = g_strdup_printf ("error (invalid-request): no session “%s” was opened; sessions: %s",
                              session, known->len > 0 ? known->str : "none");
      return tool_result_new (text, NULL, FALSE, TRUE);
    }

  terret_executor_close_session (self->executor, session);
  g_hash_table_remove (self->sessions, session);

  text = g_strdup_printf ("closed session “%s” and everything running in it", session);
  return tool_result_new (text, NULL, FALSE, FALSE);
}

/* The table ------------------------------------------------------------ */

static const char * const bash_fields[] = {
  "command", "session", "timeout", "on_timeout", "capture", "keep_full_output", NULL
};
static const char * const input_fields[] = { "session", "data", NULL };
static const char * const poll_fields[] = { "session", "wait", NULL };
static const char * const session_fields[] = { "session", NULL };

#define SESSION_PROPERTY \
  "\"session\": {\"type\": \"string\", \"description\": \"The session key (default \\\"default\\\")\"}"

static const Tool tools[] = {
  { "bash", TERRET_CAPABILITY_NONE, bash_fields,
    "Runs a command line in bash and returns its output and exit status. "
    "Each session is one shell where the backend keeps sessions: cd and export "
    "persist from one call to the next. A session runs one command at a time; "
    "use another session to run commands side by side.",
    "{\"type\": \"object\", \"properties\": {"
    " \"command\": {\"type\": \"string\", \"description\": \"The command line, as bash reads it\"},"
    " " SESSION_PROPERTY ","
    " \"timeout\": {\"type\": \"number\", \"minimum\": 0, \"description\": \"Seconds the command may run; 0 or absent: the backend's setting\"},"
    " \"on_timeout\": {\"type\": \"string\", \"enum\": [\"kill\", \"detach\"], \"description\": \"At the timeout, kill the command (default) or return its output so far and leave it running (bash_poll, bash_input and bash_interrupt then reach it)\"},"
    " \"capture\": {\"type\": \"string\", \"enum\": [\"head\", \"tail\", \"head-tail\", \"default\"], \"description\": \"Which part of a long output to keep: the start, the end, or both with the middle omitted (a build's cause and its error); default: the backend's\"},"
    " \"keep_full_output\": {\"type\": \"boolean\", \"description\": \"Also keep every byte of the output in a file whose path the result gives (full_output)\"}"
    "}, \"required\": [\"command\"], \"additionalProperties\": false}",
    TRUE, tool_bash },
  { "bash_input", TERRET_CAPABILITY_INPUT, input_fields,
    "Types text into the command running in a session (one left running by "
    "on_timeout detach); \"\\n\" ends a line.",
    "{\"type\": \"object\", \"properties\": {"
    " " SESSION_PROPERTY ","
    " \"data\": {\"type\": \"string\", \"description\": \"The text to type\"}"
    "}, \"required\": [\"data\"], \"additionalProperties\": false}",
    FALSE, tool_input },
  { "bash_interrupt", TERRET_CAPABILITY_INTERRUPT, session_fields,
    "Sends ^C to the command running in a session; one that ignores it is killed.",
    "{\"type\": \"object\", \"properties\": {" SESSION_PROPERTY "}, \"additionalProperties\": false}",
    FALSE, tool_interrupt },
  { "bash_poll", TERRET_CAPABILITY_POLL, poll_fields,
    "Collects the new output of a command left running by on_timeout detach, "
    "and its exit status once it ended.",
    "{\"type\": \"object\", \"properties\": {"
    " " SESSION_PROPERTY ","
    " \"wait\": {\"type\": \"number\", \"minimum\": 0, \"description\": \"Seconds to wait for new output at most; 0 or absent: answer at once\"}"
    "}, \"additionalProperties\": false}",
    TRUE, tool_poll },
  { "bash_close", TERRET_CAPABILITY_PERSISTENT_SESSIONS, session_fields,
    "Ends a session's shell and everything running in it; the next bash call "
    "in that session starts a fresh shell.",
    "{\"type\": \"object\", \"properties\": {" SESSION_PROPERTY "}, \"additionalProperties\": false}",
    FALSE, tool_close },
};

static const Tool *
find_tool (CliMcpTools *self,
           const char  *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (tools); i++)
    {
      if (g_str_equal (tools[i].name, name) && (self->caps & tools[i].needs) == tools[i].needs)
        return &tools[i];
    }

  return NULL;
}

static JsonNode *
parse_schema (const char *text)
{
  g_autoptr(GError) error = NULL;
  JsonNode *node = json_from_string (text, &error);

  /* The schemas are this file's own text: a bad one is a bug here. */
  g_assert_no_error (error);
  return node;
}

/* bash offers "detach" only where the backend can leave a command
 * running, so a model is never shown an option that fails. */
static JsonNode *
input_schema (CliMcpTools *self,
              const Tool  *tool)
{
  JsonNode *schema = parse_schema (tool->input_schema);
  JsonObject *properties = json_object_get_object_member (json_node_get_object (schema), "properties");

  if (json_object_has_member (properties, "on_timeout") &&
      !(self->caps & TERRET_CAPABILITY_DETACH))
    {
      JsonObject *on_timeout = json_object_get_object_member (properties, "on_timeout");
      JsonArray *values = json_array_new ();

      json_array_add_string_element (values, "kill");
      json_object_set_array_member (on_timeout, "enum", values);
      json_object_set_string_member (on_timeout, "description", "At the timeout, kill the command");
    }

  return schema;
}

/*
 * cli_mcp_tools_list:
 * @structured: whether the client takes outputSchema (MCP 2025-06-18)
 *
 * The result of `tools/list`: the tools this backend can serve.
 */
JsonNode *
cli_mcp_tools_list (CliMcpTools *self,
                    gboolean     structured)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  g_return_val_if_fail (CLI_IS_MCP_TOOLS (self), NULL);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "tools");
  json_builder_begin_array (builder);

  for (guint i = 0; i < G_N_ELEMENTS (tools); i++)
    {
      const Tool *tool = &tools[i];

      if ((self->caps & tool->needs) != tool->needs)
        continue;

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "name");
      json_builder_add_string_value (builder, tool->name);
      json_builder_set_member_name (builder, "description");
      json_builder_add_string_value (builder, tool->description);
      json_builder_set_member_name (builder, "inputSchema");
      json_builder_add_value (builder, input_schema (self, tool));
      if (tool->has_output && structured)
        {
          json_builder_set_member_name (builder, "outputSchema");
          json_builder_add_value (builder, parse_schema (run_output_schema));
        }
      json_builder_end_object (builder);
    }

  json_builder_end_array (builder);
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}

/*
 * cli_mcp_tools_call_async:
 * @arguments: (nullable): the call's arguments
 * @structured: whether results carry structuredContent
 * @progress: (nullable): receives a run's output as it arrives
 *
 * Carries out `tools/call`. The result is the tool result (with isError
 * when nothing ran); the error is %CLI_MCP_TOOLS_ERROR when the call was
 * refused, or %G_IO_ERROR_CANCELLED.
 */
void
cli_mcp_tools_call_async (CliMcpTools         *self,
                          const char          *name,
                          JsonObject          *arguments,
                          gboolean             structured,
                          CliMcpProgressFunc   progress,
                          gpointer             progress_data,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  g_autoptr(GTask) task = NULL;
  g_autoptr(JsonObject) empty = NULL;
  g_autoptr(GError) error = NULL;
  const Tool *tool;
  Call *call;
  JsonNode *result;

  g_return_if_fail (CLI_IS_MCP_TOOLS (self));
  g_return_if_fail (name != NULL);

  task = g_task_new (self, cancellable, callback, user_data);
  g_task_set_source_tag (task, cli_mcp_tools_call_async);

  call = g_new0 (Call, 1);
  call->progress = progress;
  call->progress_data = progress_data;
  call->structured = structured;
  g_task_set_task_data (task, call, g_free);

  tool = find_tool (self, name);
  if (tool == NULL)
    {
      g_task_return_new_error (task, CLI_MCP_TOOLS_ERROR, CLI_MCP_TOOLS_ERROR_UNKNOWN_TOOL,
                               "Unknown tool: %s", name);
      return;
    }

  if (arguments == NULL)
    arguments = empty = json_object_new ();

  if (!check_fields (tool, arguments, &error))
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }

  result = tool->func (self, arguments, task, &error);
  if (error != NULL)
    g_task_return_error (task, g_steal_pointer (&error));
  else if (result != NULL)
    g_task_return_pointer (task, result, (GDestroyNotify) json_node_unref);
}

JsonNode *
cli_mcp_tools_call_finish (CliMcpTools   *self,
                           GAsyncResult  *result,
                           GError       **error)
{
  g_return_val_if_fail (g_task_is_valid (result, self), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* Ends every session: what this server started does not outlive it. */
void
cli_mcp_tools_close_all (CliMcpTools *self)
{
  g_return_if_fail (CLI_IS_MCP_TOOLS (self));

  terret_executor_close_all (self->executor);
  g_hash_table_remove_all (self->sessions);
}

CliMcpTools *
cli_mcp_tools_new (TerretExecutor *executor)
{
  CliMcpTools *self;

  g_return_val_if_fail (TERRET_IS_EXECUTOR (executor), NULL);

  self = g_object_new (CLI_TYPE_MCP_TOOLS, NULL);
  self->executor = g_object_ref (executor);
  self->caps = terret_executor_get_capabilities (executor);

  return self;
}

static void
cli_mcp_tools_finalize (GObject *object)
{
  CliMcpTools *self = CLI_MCP_TOOLS (object);

  g_clear_object (&self->executor);
  g_clear_pointer (&self->sessions, g_hash_table_unref);

  G_OBJECT_CLASS (cli_mcp_tools_parent_class)->finalize (object);
}

static void
cli_mcp_tools_class_init (CliMcpToolsClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = cli_mcp_tools_finalize;
}

static void
cli_mcp_tools_init (CliMcpTools *self)
{
  self->sessions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}
