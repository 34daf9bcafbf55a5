/* terret-exec-ops.c: what a request can ask of the server, once for
 * `serve` (ops) and `mcp` (tools)
 *
 * Each op is a row: serve's name, mcp's tool and the capabilities it
 * needs, its fields, and the function that carries it out over the
 * executor. The function ends the call with an outcome (a result, an
 * error, or words saying what was done) that each dialect renders its
 * own way; the fields are checked against terret-exec-fields.c's rows
 * before it runs.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-exec-fields.h"
#include "terret-exec-ops.h"
#include "terret-exec-read.h"

static const char *
session_of (JsonObject *fields)
{
  const char *session = cli_fields_get_string (fields, "session");

  return session != NULL ? session : TERRET_DEFAULT_SESSION;
}

typedef TerretResult *(*FinishFunc) (TerretExecutor  *executor,
                                     GAsyncResult    *result,
                                     GError         **error);

/* A run's or a poll's result: its full-output files are remembered for
 * `read` first. */
static void
finish_call (CliCall      *call,
             GObject      *executor,
             GAsyncResult *res,
             FinishFunc    finish)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretResult) result = finish (TERRET_EXECUTOR (executor), res, &error);

  if (result != NULL)
    cli_outputs_record (cli_stdio_get_outputs (cli_call_get_server (call)),
                        cli_call_get_session (call), result);
  cli_call_return (call, result, error, NULL);
}

/* run ------------------------------------------------------------------ */

/* A run in flight: its call, and its request, which keeps what a
 * cancelled run printed. */
typedef struct
{
  CliCall *call;
  TerretRequest *request;       /* (owned) */
} RunCall;

static void
run_done (GObject      *object,
          GAsyncResult *res,
          gpointer      user_data)
{
  RunCall *run = user_data;
  g_autoptr(TerretRequest) request = run->request;
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretResult) result = terret_executor_run_finish (TERRET_EXECUTOR (object), res,
                                                               &error);
  CliCall *call = run->call;

  g_free (run);
  /* A cancelled run answers `cancelled`, with what the command printed
   * until its stop ended it. */
  if (result == NULL && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED) &&
      terret_request_get_cancelled_result (request) != NULL)
    result = g_object_ref (terret_request_get_cancelled_result (request));
  if (result != NULL)
    cli_outputs_record (cli_stdio_get_outputs (cli_call_get_server (call)),
                        cli_call_get_session (call), result);
  cli_call_return (call, result, error, NULL);
}

static void
on_progress (TerretRequest *request,
             TerretStream   stream,
             GBytes        *data,
             gpointer       user_data)
{
  CliCall *call = user_data;

  cli_call_get_progress (call) (call, data);
}

static gboolean
op_run (CliCall        *call,
        JsonObject     *fields,
        TerretRequest  *request,
        GError        **error)
{
  CliStdio *server = cli_call_get_server (call);
  const char *session = terret_request_get_session (request);
  RunCall *run;

  cli_call_set_session (call, session);
  g_hash_table_add (cli_stdio_get_sessions (server), g_strdup (session));
  /* mcp keeps it unless the call says otherwise: a model cannot cheaply
   * run a command with side effects again to see the middle it lost. */
  if (cli_stdio_keeps_full_output (server) &&
      (json_object_get_member (fields, "keep_full_output") == NULL ||
       JSON_NODE_HOLDS_NULL (json_object_get_member (fields, "keep_full_output"))))
    terret_request_set_keep_full_output (request, TRUE);
  if (cli_call_get_progress (call) != NULL)
    terret_request_set_progress_func (request, on_progress, call, NULL);

  run = g_new0 (RunCall, 1);
  run->call = call;
  run->request = g_object_ref (request);
  terret_executor_run_async (cli_stdio_get_executor (server), request,
                             cli_call_get_cancellable (call), run_done, run);
  return TRUE;
}

/* read ------------------------------------------------------------------ */

static void
read_done (GObject      *object,
           GAsyncResult *res,
           gpointer      user_data)
{
  CliCall *call = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) read = cli_read_finish (res, &error);
  g_autofree char *text = NULL;

  if (read == NULL)
    {
      cli_call_return (call, NULL, error, NULL);
      return;
    }
  text = cli_read_text (json_node_get_object (read));
  cli_call_return_data (call, json_node_get_object (read), text);
}

/* A range of a run's full output, in a worker thread: the file is the
 * session's last run's, or one whose path a result gave. */
static gboolean
op_read (CliCall        *call,
         JsonObject     *fields,
         TerretRequest  *request,
         GError        **error)
{
  CliStdio *server = cli_call_get_server (call);
  const char *stream_name = cli_fields_get_string (fields, "stream");
  g_autoptr(GError) local_error = NULL;
  g_autofree char *path = NULL;
  TerretStream stream = TERRET_STREAM_STDOUT;
  CliReadRange range = {
    .offset = cli_fields_get_count (fields, "offset"),
    .length = cli_fields_get_count (fields, "length"),
    .line = cli_fields_get_count (fields, "line"),
    .lines = cli_fields_get_count (fields, "lines"),
    .pattern = cli_fields_get_string (fields, "pattern"),
  };

  if (stream_name != NULL && g_str_equal (stream_name, "stderr"))
    stream = TERRET_STREAM_STDERR;
  else if (stream_name != NULL && !g_str_equal (stream_name, "stdout"))
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“stream” must be \"stdout\" or \"stderr\", not “%s”", stream_name);
      return FALSE;
    }
  if (range.offset >= 0 && range.line >= 0)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“offset” and “line” both name where to start: give one");
      return FALSE;
    }
  if (range.line == 0)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“line”: lines are counted from 1");
      return FALSE;
    }

  /* Nothing to read is the answer, not a malformed request: a model
   * reads it as the tool's result. */
  path = cli_outputs_resolve (cli_stdio_get_outputs (server), session_of (fields),
                              cli_fields_get_string (fields, "path"), stream, &local_error);
  if (path == NULL)
    {
      cli_call_return (call, NULL, local_error, NULL);
      return TRUE;
    }

  cli_read_async (path, &range, cli_call_get_cancellable (call), read_done, call);
  return TRUE;
}

/* The session ops --------------------------------------------------------
 *
 * Their words are for a model: only mcp shows them. */

static gboolean
op_input (CliCall        *call,
          JsonObject     *fields,
          TerretRequest  *request,
          GError        **error)
{
  g_autoptr(GBytes) data = NULL;
  g_autoptr(GError) local_error = NULL;
  g_autofree char *done = NULL;
  const char *session = session_of (fields);
  const char *text = cli_fields_get_string (fields, "data");
  const char *encoded = cli_fields_get_string (fields, "data_base64");

  if ((text == NULL) == (encoded == NULL))
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "exactly one of “data” (text) and “data_base64” is required");
      return FALSE;
    }

  if (text != NULL)
    data = g_bytes_new (text, strlen (text));
  else
    {
      gsize len = 0;
      guchar *decoded;

      /* g_base64_decode() skips what is not base64; a request whose bytes
       * would silently differ from what the client meant is refused. */
      for (const char *p = encoded; *p != '\0'; p++)
        {
          if (!g_ascii_isalnum (*p) && *p != '+' && *p != '/' && *p != '=')
            {
              g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                           "“data_base64” is not base64");
              return FALSE;
            }
        }
      decoded = g_base64_decode (encoded, &len);
      data = g_bytes_new_take (decoded, len);
    }

  if (terret_executor_send_input (cli_stdio_get_executor (cli_call_get_server (call)),
                                  session, data, &local_error))
    done = g_strdup_printf ("sent %" G_GSIZE_FORMAT " bytes to the command in session “%s”; "
                            "bash_poll collects its output", g_bytes_get_size (data), session);
  cli_call_return (call, NULL, local_error, done);
  return TRUE;
}

static gboolean
op_interrupt (CliCall        *call,
              JsonObject     *fields,
              TerretRequest  *request,
              GError        **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autofree char *done = NULL;
  const char *session = session_of (fields);

  if (terret_executor_interrupt (cli_stdio_get_executor (cli_call_get_server (call)),
                                 session, &local_error))
    done = g_strdup_printf ("sent ^C to the command in session “%s”; "
                            "bash_poll tells how it ended", session);
  cli_call_return (call, NULL, local_error, done);
  return TRUE;
}

static void
poll_done (GObject      *object,
           GAsyncResult *res,
           gpointer      user_data)
{
  finish_call (user_data, object, res, terret_executor_poll_finish);
}

/* A poll waits like a run: it is in flight (and cancellable by its id)
 * until it answers. */
static gboolean
op_poll (CliCall        *call,
         JsonObject     *fields,
         TerretRequest  *request,
         GError        **error)
{
  const char *session = session_of (fields);

  cli_call_set_session (call, session);
  terret_executor_poll_async (cli_stdio_get_executor (cli_call_get_server (call)), session,
                              cli_fields_get_seconds (fields, "wait"),
                              cli_call_get_cancellable (call), poll_done, call);
  return TRUE;
}

/* What a close had to stop: `stopped`, each with its pid, command line
 * and the stop's last signal it heard (the nick of TerretStopSignal). */
static JsonObject *
stopped_data (GPtrArray *stopped)
{
  g_autoptr(GEnumClass) klass = g_type_class_ref (TERRET_TYPE_STOP_SIGNAL);
  JsonObject *data = json_object_new ();
  JsonArray *list = json_array_new ();

  for (guint i = 0; i < stopped->len; i++)
    {
      TerretStoppedProcess *entry = g_ptr_array_index (stopped, i);
      JsonObject *item = json_object_new ();
      TerretStopSignal by = terret_stopped_process_get_ended_by (entry);

      json_object_set_int_member (item, "pid", terret_stopped_process_get_pid (entry));
      json_object_set_string_member (item, "command", terret_stopped_process_get_command (entry));
      if (by == TERRET_STOP_SIGNAL_NONE)
        json_object_set_null_member (item, "ended_by");
      else
        json_object_set_string_member (item, "ended_by", g_enum_get_value (klass, by)->value_nick);
      json_array_add_object_element (list, item);
    }
  json_object_set_array_member (data, "stopped", list);
  return data;
}

/* The same in words, for a model. */
static char *
stopped_text (const char *session,
              GPtrArray  *stopped)
{
  g_autoptr(GEnumClass) klass = g_type_class_ref (TERRET_TYPE_STOP_SIGNAL);
  GString *text = g_string_new (NULL);

  g_string_printf (text, "closed session “%s” and everything running in it", session);
  for (guint i = 0; i < stopped->len; i++)
    {
      TerretStoppedProcess *entry = g_ptr_array_index (stopped, i);
      TerretStopSignal by = terret_stopped_process_get_ended_by (entry);

      g_string_append_printf (text, "%s pid %d `%s` (%s)", i == 0 ? "; it stopped:" : ",",
                              (int)terret_stopped_process_get_pid (entry),
                              terret_stopped_process_get_command (entry),
                              by == TERRET_STOP_SIGNAL_NONE ? "ended with its shell"
                                                            : g_enum_get_value (klass, by)->value_nick);
    }
  return g_string_free (text, FALSE);
}

/* The executor cannot tell a session that never was from an idle one; the
 * server can. A model closing a session it never opened has most likely
 * mistyped its name, and mcp says so (strict_close); a program may close
 * a session to be sure it is gone, and serve lets it. */
static gboolean
op_close (CliCall        *call,
          JsonObject     *fields,
          TerretRequest  *request,
          GError        **error)
{
  CliStdio *server = cli_call_get_server (call);
  GHashTable *sessions = cli_stdio_get_sessions (server);
  g_autoptr(GError) local_error = NULL;
  g_autofree char *done = NULL;
  const char *session = session_of (fields);

  if (cli_stdio_get_dialect (server)->strict_close && !g_hash_table_contains (sessions, session))
    {
      g_autoptr(GString) known = g_string_new (NULL);
      GHashTableIter iter;
      gpointer key;

      g_hash_table_iter_init (&iter, sessions);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        g_string_append_printf (known, "%s“%s”", known->len > 0 ? ", " : "", (const char *) key);

      g_set_error (&local_error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "no session “%s” was opened; sessions: %s",
                   session, known->len > 0 ? known->str : "none");
    }
  else
    {
      g_autoptr(GPtrArray) stopped = NULL;

      terret_executor_close_session_full (cli_stdio_get_executor (server), session, &stopped);
      g_hash_table_remove (sessions, session);
      cli_outputs_forget_session (cli_stdio_get_outputs (server), session);
      cli_call_return_data (call, stopped_data (stopped),
                            (done = stopped_text (session, stopped)));
      return TRUE;
    }

  cli_call_return (call, NULL, local_error, done);
  return TRUE;
}

static gboolean
op_close_all (CliCall        *call,
              JsonObject     *fields,
              TerretRequest  *request,
              GError        **error)
{
  CliStdio *server = cli_call_get_server (call);

  terret_executor_close_all (cli_stdio_get_executor (server));
  g_hash_table_remove_all (cli_stdio_get_sessions (server));
  cli_outputs_forget_all (cli_stdio_get_outputs (server));
  cli_call_return (call, NULL, NULL, "closed every session and everything running in them");
  return TRUE;
}

static gboolean
call_matches (CliCall    *call,
              const char *key,
              const char *session)
{
  return (key == NULL || g_str_equal (cli_call_get_key (call), key)) &&
         (session == NULL || g_strcmp0 (cli_call_get_session (call), session) == 0);
}

/* `target` names a call by its id, `session` by where it runs; with both,
 * the target must run in that session, so a client that mixed up its
 * bookkeeping is told rather than having some other run cancelled. */
static gboolean
op_cancel (CliCall        *call,
           JsonObject     *fields,
           TerretRequest  *request,
           GError        **error)
{
  CliStdio *server = cli_call_get_server (call);
  JsonNode *target = json_object_get_member (fields, "target");
  const char *session = cli_fields_get_string (fields, "session");
  g_autofree char *key = NULL;
  const char *elsewhere = NULL;

  if (target == NULL && session == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“target” (the id of the run to cancel) or “session” is required");
      return FALSE;
    }

  if (target != NULL)
    key = cli_id_key (target);

  for (GList *l = cli_stdio_get_calls (server); l != NULL; l = l->next)
    {
      CliCall *other = l->data;

      if (other == call)
        continue;
      if (call_matches (other, key, session))
        {
          /* Acknowledged first, so the answer to the cancel precedes the
           * cancelled run's own when the backend completes it at once. */
          cli_call_return (call, NULL, NULL, NULL);
          cli_stdio_cancel_calls (server, key, session);
          return TRUE;
        }
      if (call_matches (other, key, NULL))
        elsewhere = cli_call_get_session (other);
    }

  if (key != NULL && session != NULL && elsewhere != NULL)
    g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                 "“session”: the run with id %s is in session “%s”, not “%s”", key, elsewhere, session);
  else if (key != NULL)
    g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                 "“target”: no run with id %s is in flight", key);
  else
    g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                 "“session”: nothing is in flight in session “%s”", session);
  return FALSE;
}

/* list ----------------------------------------------------------------- */

/* The list as a model reads it: a line per session. */
static char *
describe_infos (GPtrArray *infos)
{
  GString *text = g_string_new (NULL);
  g_autoptr(GDateTime) now = g_date_time_new_now_utc ();

  if (infos->len == 0)
    g_string_append (text, "no sessions and nothing running");
  for (guint i = 0; i < infos->len; i++)
    {
      TerretSessionInfo *info = g_ptr_array_index (infos, i);
      GDateTime *started = terret_session_info_get_started (info);
      const char *command = terret_session_info_get_command (info);
      static const char * const states[] = {
        [TERRET_SESSION_STATE_IDLE] = "idle",
        [TERRET_SESSION_STATE_RUNNING] = "running (a call waits for it)",
        [TERRET_SESSION_STATE_DETACHED] = "running, handed back (bash_poll, bash_input, "
                                          "bash_interrupt, bash_close reach it)",
        [TERRET_SESSION_STATE_ENDED] = "ended; bash_poll collects its end",
      };

      g_string_append_printf (text, "%s“%s”: %s", i > 0 ? "\n" : "", terret_session_info_get_key (info),
                              states[terret_session_info_get_state (info)]);
      if (command != NULL)
        {
          g_autofree char *valid = g_utf8_make_valid (command, -1);

          g_string_append_printf (text, "; command: %s", valid);
        }
      if (started != NULL)
        g_string_append_printf (text, "; started %.0f s ago",
                                g_date_time_difference (now, started) / (double)G_USEC_PER_SEC);
      if (command != NULL)
        g_string_append_printf (text, "; %" G_GUINT64_FORMAT " bytes of output",
                                terret_session_info_get_output_bytes (info));
      if (terret_session_info_get_pid (info) > 0)
        g_string_append_printf (text, "; pid %d", (int)terret_session_info_get_pid (info));
      if (terret_session_info_get_input_state (info) == TERRET_INPUT_STATE_WAITING)
        {
          const char *prompt = terret_session_info_get_input_prompt (info);
          g_autofree char *valid = g_utf8_make_valid (prompt != NULL ? prompt : "", -1);

          g_string_append_printf (text, "; %s at “%s” (bash_input answers it)",
                                  terret_session_info_get_input_pager (info)
                                  ? "a pager waits for a key"
                                  : terret_session_info_get_input_secret (info)
                                  ? "waits for a secret (not echoed)"
                                  : "waits for input",
                                  valid);
        }
    }

  return g_string_free (text, FALSE);
}

static void
list_done (GObject      *object,
           GAsyncResult *res,
           gpointer      user_data)
{
  CliCall *call = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) infos = terret_executor_list_finish (TERRET_EXECUTOR (object), res, &error);
  g_autoptr(JsonObject) members = NULL;
  g_autofree char *text = NULL;

  if (infos == NULL)
    {
      cli_call_return (call, NULL, error, NULL);
      return;
    }
  members = cli_session_infos_members (infos);
  text = describe_infos (infos);
  cli_call_return_data (call, members, text);
}

static gboolean
op_list (CliCall        *call,
         JsonObject     *fields,
         TerretRequest  *request,
         GError        **error)
{
  terret_executor_list_async (cli_stdio_get_executor (cli_call_get_server (call)),
                              cli_call_get_cancellable (call), list_done, call);
  return TRUE;
}

/* The table ------------------------------------------------------------ */

static const char * const input_fields[] = { "session", "data", "data_base64", NULL };
static const char * const poll_fields[] = { "session", "wait", NULL };
static const char * const session_fields[] = { "session", NULL };
static const char * const cancel_fields[] = { "target", "session", NULL };
static const char * const read_fields[] = {
  "session", "path", "stream", "offset", "length", "line", "lines", "pattern", NULL
};

/* In the order tools/list gives the tools. */
static const CliOp ops[] = {
  { .name = "run", .tool = "bash", .takes_request = TRUE, .required = "command", .has_result = TRUE,
    .tasks = TRUE,
    .description = "Runs a command line in bash and returns its output and exit status. "
                   "Each session is one shell where the backend keeps sessions: cd and export "
                   "persist from one call to the next. A session runs one command at a time; "
                   "use another session to run commands side by side.",
    .func = op_run },
  { .name = "input", .tool = "bash_input", .needs = TERRET_CAPABILITY_INPUT, .fields = input_fields,
    .description = "Types text into the command running in a session (one left running by "
                   "on_timeout detach); \"\\n\" ends a line.",
    .func = op_input },
  { .name = "interrupt", .tool = "bash_interrupt", .needs = TERRET_CAPABILITY_INTERRUPT,
    .fields = session_fields,
    .description = "Sends ^C to the command running in a session; one that ignores it is killed.",
    .func = op_interrupt },
  { .name = "poll", .tool = "bash_poll", .needs = TERRET_CAPABILITY_POLL, .fields = poll_fields,
    .has_result = TRUE,
    .description = "Collects the new output of a command left running by on_timeout detach, "
                   "and its exit status once it ended.",
    .func = op_poll },
  { .name = "read", .tool = "bash_output", .needs = TERRET_CAPABILITY_RUNS_COMMANDS,
    .fields = read_fields,
    .description = "Reads a run's whole output, kept in a file (keep_full_output, on by default "
                   "here): a byte range (offset, length), a line range (line, lines), or the "
                   "lines matching a pattern with their line numbers. The middle a long result "
                   "omitted starts at its omitted_at. Default: the last run of the session.",
    .func = op_read },
  { .name = "close", .tool = "bash_close", .needs = TERRET_CAPABILITY_PERSISTENT_SESSIONS,
    .fields = session_fields,
    .description = "Ends a session's shell and everything running in it; the next bash call "
                   "in that session starts a fresh shell.",
    .func = op_close },
  { .name = "list", .tool = "bash_list", .needs = TERRET_CAPABILITY_LIST,
    .output_schema = cli_session_infos_schema,
    .description = "Lists the sessions and the commands running in them or left running "
                   "(return_after, on_timeout detach, on_idle return): each with its state, "
                   "command, start and output so far. Use it to find a command whose session "
                   "you lost track of.",
    .func = op_list },
  { .name = "close-all", .func = op_close_all },
  /* MCP cancels with notifications/cancelled. */
  { .name = "cancel", .fields = cancel_fields, .func = op_cancel },
};

const CliOp *
cli_ops_list (guint *n_ops)
{
  *n_ops = G_N_ELEMENTS (ops);
  return ops;
}

const CliOp *
cli_op_lookup (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      if (g_str_equal (ops[i].name, name))
        return &ops[i];
    }

  return NULL;
}

/* The op behind @tool, where the backend has what it needs: a tool it
 * lacks is as unknown as one that never was. */
const CliOp *
cli_op_lookup_tool (const char         *tool,
                    TerretCapabilities  caps)
{
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      if (g_strcmp0 (ops[i].tool, tool) == 0 && (caps & ops[i].needs) == ops[i].needs)
        return &ops[i];
    }

  return NULL;
}

/* The fields @op takes: the request fields first where it takes them. */
char **
cli_op_field_names (const CliOp *op)
{
  g_autoptr(GStrvBuilder) names = g_strv_builder_new ();

  if (op->takes_request)
    {
      guint n_fields;
      const CliField *fields = cli_fields_list (&n_fields);

      for (guint i = 0; i < n_fields; i++)
        {
          if (fields[i].property != NULL)
            g_strv_builder_add (names, fields[i].name);
        }
    }
  if (op->fields != NULL)
    g_strv_builder_addv (names, (const char **) op->fields);

  return g_strv_builder_end (names);
}

/* The ops, or the tools, with their fields, for --help:
 * "run (command, session, ...), close-all, ...". */
char *
cli_ops_describe (gboolean tools)
{
  GString *text = g_string_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      g_auto(GStrv) names = cli_op_field_names (&ops[i]);
      g_autofree char *joined = g_strjoinv (", ", names);

      if (tools && ops[i].tool == NULL)
        continue;
      g_string_append_printf (text, "%s%s", text->len > 0 ? ", " : "", tools ? ops[i].tool : ops[i].name);
      if (names[0] != NULL)
        g_string_append_printf (text, " (%s)", joined);
    }

  return g_string_free (text, FALSE);
}

/*
 * cli_op_start:
 * @fields: the request, or a tool call's arguments
 *
 * Checks @fields against what @op takes, then carries it out as @call.
 * A field the op does not know is refused rather than ignored: a client
 * relying on a field this server predates learns so at once; one that is
 * null is absent, known or not. Every error
 * names the field at fault; on %FALSE the call was not started and the
 * caller drops it.
 */
gboolean
cli_op_start (const CliOp  *op,
              CliCall      *call,
              JsonObject   *fields,
              GError      **error)
{
  const CliDialect *dialect = cli_stdio_get_dialect (cli_call_get_server (call));
  g_auto(GStrv) names = cli_op_field_names (op);
  g_autoptr(GList) members = json_object_get_members (fields);
  g_autoptr(TerretRequest) request = NULL;
  JsonNode *required;

  for (GList *l = members; l != NULL; l = l->next)
    {
      const char *name = l->data;
      JsonNode *value = json_object_get_member (fields, name);

      /* null is absent, whatever the field: clients send it for an unset
       * one, and a field that is not there has nothing to refuse. */
      if (JSON_NODE_HOLDS_NULL (value))
        continue;
      if (g_strv_contains ((const char * const *) names, name) ||
          (dialect->envelope != NULL && g_strv_contains (dialect->envelope, name)))
        continue;

      if (dialect->tools)
        g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                     "unknown argument “%s” for tool “%s”", name, op->tool);
      else
        g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                     "unknown field “%s” for op “%s”", name, op->name);
      return FALSE;
    }

  for (guint i = 0; names[i] != NULL; i++)
    {
      const CliField *field = cli_field_lookup (names[i]);

      /* The ops list fields that exist: a typo is a bug here. */
      g_assert (field != NULL);
      if (!cli_field_check (field, json_object_get_member (fields, names[i]), error))
        return FALSE;
    }

  required = op->required != NULL ? json_object_get_member (fields, op->required) : NULL;
  if (op->required != NULL && (required == NULL || JSON_NODE_HOLDS_NULL (required)))
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“%s” is required", op->required);
      return FALSE;
    }

  if (op->takes_request)
    request = cli_request_from_fields (fields);

  return op->func (call, fields, request, error);
}
