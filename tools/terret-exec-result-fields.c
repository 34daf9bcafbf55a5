/* terret-exec-result-fields.c: the fields of a result, listed once for
 * `serve`, `mcp` and `--json`
 *
 * A result field is one row: its name, its JSON Schema type and
 * description, and the function that reads it from a result; serve's
 * responses, mcp's structuredContent and its outputSchema come from the
 * rows. The executor's list is described here too.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-exec-common.h"
#include "terret-exec-json-bytes.h"
#include "terret-exec-fields.h"

typedef struct _ResultField ResultField;

typedef void (*ResultAddFunc) (JsonBuilder       *builder,
                               const ResultField *field,
                               TerretResult      *result);

struct _ResultField
{
  const char *name;
  const char *type;         /* its JSON Schema type, as JSON */
  const char *description;
  ResultAddFunc add;
  gboolean bytes;           /* NAME when the bytes are text, else NAME_base64 */
  TerretStream stream;      /* for a stream's own */
  gboolean (*flag) (TerretResult *result);  /* for add_flag */
};

/* A path is bytes too; a non-UTF-8 one travels as base64 rather than
 * being mangled into something that names no file. */
static void
add_path_member (JsonBuilder *builder,
                 const char  *name,
                 const char  *path)
{
  if (path != NULL)
    cli_json_add_bytes (builder, name, (const guint8 *) path, strlen (path));
  else
    {
      json_builder_set_member_name (builder, name);
      json_builder_add_null_value (builder);
    }
}

static void
add_status (JsonBuilder       *builder,
            const ResultField *field,
            TerretResult      *result)
{
  json_builder_set_member_name (builder, field->name);
  if (terret_result_get_exited (result))
    json_builder_add_int_value (builder, terret_result_get_exit_status (result));
  else
    json_builder_add_null_value (builder);
}

static void
add_signal (JsonBuilder       *builder,
            const ResultField *field,
            TerretResult      *result)
{
  int term_signal = terret_result_get_term_signal (result);

  json_builder_set_member_name (builder, field->name);
  if (term_signal > 0)
    json_builder_add_int_value (builder, term_signal);
  else
    json_builder_add_null_value (builder);
}

static void
add_output (JsonBuilder       *builder,
            const ResultField *field,
            TerretResult      *result)
{
  GBytes *bytes = field->stream == TERRET_STREAM_STDOUT ? terret_result_get_stdout (result)
                                                        : terret_result_get_stderr (result);
  gsize len = 0;
  const guint8 *data;

  if (bytes == NULL)
    {
      json_builder_set_member_name (builder, field->name);
      json_builder_add_null_value (builder);
      return;
    }

  data = g_bytes_get_data (bytes, &len);
  cli_json_add_bytes (builder, field->name, data, len);
}

static void
add_notice (JsonBuilder       *builder,
            const ResultField *field,
            TerretResult      *result)
{
  const char *notice = terret_result_get_notice (result);

  json_builder_set_member_name (builder, field->name);
  if (notice != NULL)
    json_builder_add_string_value (builder, notice);
  else
    json_builder_add_null_value (builder);
}

/* A boolean the row's getter reads. */
static void
add_flag (JsonBuilder       *builder,
          const ResultField *field,
          TerretResult      *result)
{
  json_builder_set_member_name (builder, field->name);
  json_builder_add_boolean_value (builder, field->flag (result));
}

/* The limits' names are their settings' without `limit-`: the flags'
 * generated nicks, comma-separated. */
static void
add_limit_hit (JsonBuilder       *builder,
               const ResultField *field,
               TerretResult      *result)
{
  TerretLimits hit = terret_result_get_limits_hit (result);
  g_autoptr(GFlagsClass) klass = NULL;
  g_autoptr(GString) names = NULL;

  json_builder_set_member_name (builder, field->name);
  if (hit == TERRET_LIMIT_NONE)
    {
      json_builder_add_null_value (builder);
      return;
    }

  klass = g_type_class_ref (TERRET_TYPE_LIMITS);
  names = g_string_new (NULL);
  for (guint i = 0; i < klass->n_values; i++)
    {
      if (klass->values[i].value == 0 || (hit & klass->values[i].value) == 0)
        continue;
      if (names->len > 0)
        g_string_append_c (names, ',');
      g_string_append (names, klass->values[i].value_nick);
    }
  json_builder_add_string_value (builder, names->str);
}

static void
add_dropped_total (JsonBuilder       *builder,
                   const ResultField *field,
                   TerretResult      *result)
{
  json_builder_set_member_name (builder, field->name);
  json_builder_add_int_value (builder,
                              (gint64)(terret_result_get_dropped (result, TERRET_STREAM_STDOUT) +
                                       terret_result_get_dropped (result, TERRET_STREAM_STDERR)));
}

static void
add_dropped (JsonBuilder       *builder,
             const ResultField *field,
             TerretResult      *result)
{
  json_builder_set_member_name (builder, field->name);
  json_builder_add_int_value (builder, (gint64) terret_result_get_dropped (result, field->stream));
}

static void
add_omitted_at (JsonBuilder       *builder,
                const ResultField *field,
                TerretResult      *result)
{
  json_builder_set_member_name (builder, field->name);
  if (terret_result_get_dropped (result, field->stream) > 0)
    json_builder_add_int_value (builder, (gint64) terret_result_get_omitted_at (result, field->stream));
  else
    json_builder_add_null_value (builder);
}

static void
add_omitted_lines (JsonBuilder       *builder,
                   const ResultField *field,
                   TerretResult      *result)
{
  json_builder_set_member_name (builder, field->name);
  if (terret_result_get_dropped (result, field->stream) > 0)
    json_builder_add_int_value (builder, (gint64) terret_result_get_omitted_lines (result, field->stream));
  else
    json_builder_add_null_value (builder);
}

/* [{"offset": N, "text": "..."}]: the omitted lines that look like errors. */
static void
add_omitted_errors (JsonBuilder       *builder,
                    const ResultField *field,
                    TerretResult      *result)
{
  GPtrArray *lines = terret_result_get_omitted_errors (result, field->stream);

  json_builder_set_member_name (builder, field->name);
  if (lines == NULL || terret_result_get_dropped (result, field->stream) == 0)
    {
      json_builder_add_null_value (builder);
      return;
    }

  json_builder_begin_array (builder);
  for (guint i = 0; i < lines->len; i++)
    {
      TerretOutputLine *line = g_ptr_array_index (lines, i);
      gsize len = 0;
      const guint8 *data = g_bytes_get_data (terret_output_line_get_text (line), &len);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "offset");
      json_builder_add_int_value (builder, (gint64) terret_output_line_get_offset (line));
      cli_json_add_bytes (builder, "text", data, len);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
}

static void
add_full_output (JsonBuilder       *builder,
                 const ResultField *field,
                 TerretResult      *result)
{
  add_path_member (builder, field->name, terret_result_get_full_output (result, field->stream));
}

static void
add_cwd (JsonBuilder       *builder,
         const ResultField *field,
         TerretResult      *result)
{
  add_path_member (builder, field->name, terret_result_get_cwd (result));
}

static void
add_clock (JsonBuilder       *builder,
           const ResultField *field,
           TerretResult      *result)
{
  g_autoptr(GEnumClass) klass = g_type_class_ref (TERRET_TYPE_CLOCK);
  TerretClock clock = terret_result_get_clock (result);

  json_builder_set_member_name (builder, field->name);
  if (clock == TERRET_CLOCK_NONE)
    json_builder_add_null_value (builder);
  else
    json_builder_add_string_value (builder, g_enum_get_value (klass, clock)->value_nick);
}

static void
add_ended_by (JsonBuilder       *builder,
              const ResultField *field,
              TerretResult      *result)
{
  g_autoptr(GEnumClass) klass = g_type_class_ref (TERRET_TYPE_STOP_SIGNAL);
  TerretStopSignal by = terret_result_get_ended_by (result);

  json_builder_set_member_name (builder, field->name);
  if (by == TERRET_STOP_SIGNAL_NONE)
    json_builder_add_null_value (builder);
  else
    json_builder_add_string_value (builder, g_enum_get_value (klass, by)->value_nick);
}

static void
add_stop_time (JsonBuilder       *builder,
               const ResultField *field,
               TerretResult      *result)
{
  json_builder_set_member_name (builder, field->name);
  if (terret_result_get_ended_by (result) == TERRET_STOP_SIGNAL_NONE)
    json_builder_add_null_value (builder);
  else
    json_builder_add_double_value (builder, terret_result_get_stop_time (result));
}

static void
add_pipestatus (JsonBuilder       *builder,
                const ResultField *field,
                TerretResult      *result)
{
  guint n = 0;
  const int *statuses = terret_result_get_pipestatus (result, &n);

  json_builder_set_member_name (builder, field->name);
  if (statuses == NULL)
    {
      json_builder_add_null_value (builder);
      return;
    }
  json_builder_begin_array (builder);
  for (guint i = 0; i < n; i++)
    json_builder_add_int_value (builder, statuses[i]);
  json_builder_end_array (builder);
}

static void
add_waiting (JsonBuilder       *builder,
             const ResultField *field,
             TerretResult      *result)
{
  TerretInputState state = terret_result_get_input_state (result);

  json_builder_set_member_name (builder, field->name);
  if (state == TERRET_INPUT_STATE_UNKNOWN)
    json_builder_add_null_value (builder);
  else
    json_builder_add_boolean_value (builder, state == TERRET_INPUT_STATE_WAITING);
}

static void
add_input_prompt (JsonBuilder       *builder,
                  const ResultField *field,
                  TerretResult      *result)
{
  const char *prompt = terret_result_get_input_prompt (result);

  json_builder_set_member_name (builder, field->name);
  if (prompt != NULL && terret_result_get_input_state (result) == TERRET_INPUT_STATE_WAITING)
    json_builder_add_string_value (builder, prompt);
  else
    json_builder_add_null_value (builder);
}

static void
add_waiting_since (JsonBuilder       *builder,
                   const ResultField *field,
                   TerretResult      *result)
{
  double since = terret_result_get_input_since (result);

  json_builder_set_member_name (builder, field->name);
  if (since >= 0 && terret_result_get_input_state (result) == TERRET_INPUT_STATE_WAITING)
    json_builder_add_double_value (builder, since);
  else
    json_builder_add_null_value (builder);
}

/* In the order responses carry them. */
static const ResultField result_fields[] = {
  { "status", "[\"integer\", \"null\"]",
    "The exit status; null when none was seen (killed, timed out, still running, the shell ended)",
    add_status },
  { "signal", "[\"integer\", \"null\"]", "The signal that ended the command", add_signal },
  { "stdout", "\"string\"",
    "The output, when it is valid UTF-8 (all of it with a backend that merges stderr in)",
    add_output, .bytes = TRUE },
  { "stderr", "[\"string\", \"null\"]", "Standard error; null when the backend merges it into stdout",
    add_output, .bytes = TRUE, .stream = TERRET_STREAM_STDERR },
  { "notice", "[\"string\", \"null\"]",
    "Something the caller did not ask for: truncation, a restarted session, a timeout", add_notice },
  { "timed_out", "\"boolean\"", "Whether the command ran past its timeout",
    add_flag, .flag = terret_result_get_timed_out },
  { "running", "\"boolean\"", "The command goes on (a detached timeout): poll it with bash_poll",
    add_flag, .flag = terret_result_get_running },
  { "limit_hit", "[\"string\", \"null\"]",
    "The resource limits the command ran into (memory, processes, cpu, file-size, open-files), "
    "comma-separated", add_limit_hit },
  { "dropped", "\"integer\"", "Bytes of output the capture dropped", add_dropped_total },
  { "stdout_dropped", "\"integer\"", "Bytes of stdout the capture dropped", add_dropped },
  { "omitted_at", "[\"integer\", \"null\"]",
    "Where in the output the omitted bytes begin (stdout_dropped of them)", add_omitted_at },
  { "omitted_lines", "[\"integer\", \"null\"]",
    "How many lines the omitted bytes held (their newlines)", add_omitted_lines },
  { "omitted_errors", "[\"array\", \"null\"]",
    "The first omitted lines that look like errors (compiler, test runner, traceback, error:), "
    "each {offset, text}: read around one with bash_output", add_omitted_errors },
  { "full_output", "[\"string\", \"null\"]", "The file holding the whole output, with keep_full_output",
    add_full_output, .bytes = TRUE },
  { "stderr_dropped", "\"integer\"", "Bytes of stderr the capture dropped",
    add_dropped, .stream = TERRET_STREAM_STDERR },
  { "stderr_omitted_at", "[\"integer\", \"null\"]", "Where in stderr the omitted bytes begin",
    add_omitted_at, .stream = TERRET_STREAM_STDERR },
  { "stderr_omitted_lines", "[\"integer\", \"null\"]", "How many lines the omitted stderr held",
    add_omitted_lines, .stream = TERRET_STREAM_STDERR },
  { "stderr_omitted_errors", "[\"array\", \"null\"]",
    "The first omitted stderr lines that look like errors, each {offset, text}",
    add_omitted_errors, .stream = TERRET_STREAM_STDERR },
  { "stderr_full_output", "[\"string\", \"null\"]",
    "The file holding the whole of stderr, with keep_full_output",
    add_full_output, .bytes = TRUE, .stream = TERRET_STREAM_STDERR },
  { "cwd", "[\"string\", \"null\"]",
    "The session's working directory after the run, where the backend knows it", add_cwd, .bytes = TRUE },
  /* Which clock, and the last pipeline. */
  { "clock", "[\"string\", \"null\"]",
    "The clock that ended the command or handed it back: timeout, return-after, deadline, idle; "
    "null when none did", add_clock },
  { "stalled", "\"boolean\"",
    "Handed back for printing nothing for idle_timeout seconds (on_idle return): it goes on, "
    "and may be waiting for input", add_flag, .flag = terret_result_get_stalled },
  { "ended_by", "[\"string\", \"null\"]",
    "The last signal of the stop sequence (stop_grace) the command heard before it ended: "
    "interrupt, hangup, terminate, kill; null when nothing stopped it", add_ended_by },
  { "stop_time", "[\"number\", \"null\"]",
    "Seconds the stop took, from its first signal to the command's end", add_stop_time },
  { "pipestatus", "[\"array\", \"null\"]",
    "The exit status of each command of the last pipeline (bash's PIPESTATUS); null where the "
    "backend cannot know it", add_pipestatus },
  /* A command left running that waits for input on its terminal. */
  { "waiting_for_input", "[\"boolean\", \"null\"]",
    "Whether the command, still running, waits for input on its terminal (answer it with input); "
    "null where that cannot be known (no terminal, a far side whose processes cannot be read)",
    add_waiting },
  { "input_prompt", "[\"string\", \"null\"]",
    "The last line the command printed before it waited for input, at most 256 bytes",
    add_input_prompt },
  { "input_secret", "\"boolean\"", "The input it waits for is not echoed (a password)",
    add_flag, .flag = terret_result_get_input_secret },
  { "input_pager", "\"boolean\"", "A pager holds the terminal: it waits for a key (q ends it)",
    add_flag, .flag = terret_result_get_input_pager },
  { "waiting_since", "[\"number\", \"null\"]",
    "Seconds from the run's start to when the wait for input was first seen", add_waiting_since },
};

/* List fields ---------------------------------------------------------- */

static const char *
state_nick (TerretSessionState state)
{
  g_autoptr(GEnumClass) klass = g_type_class_ref (TERRET_TYPE_SESSION_STATE);

  return g_enum_get_value (klass, state)->value_nick;
}

/*
 * cli_session_infos_members:
 * @infos: (element-type TerretSessionInfo): what the executor listed
 *
 * The `sessions` member a list answers with: per entry its key, state,
 * command, start (ISO 8601, UTC), pid (null where none names a process
 * here), output bytes, and whether it waits for input.
 */
JsonObject *
cli_session_infos_members (GPtrArray *infos)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "sessions");
  json_builder_begin_array (builder);
  for (guint i = 0; i < infos->len; i++)
    {
      TerretSessionInfo *info = g_ptr_array_index (infos, i);
      GDateTime *started = terret_session_info_get_started (info);
      const char *command = terret_session_info_get_command (info);

      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "session");
      json_builder_add_string_value (builder, terret_session_info_get_key (info));
      json_builder_set_member_name (builder, "state");
      json_builder_add_string_value (builder, state_nick (terret_session_info_get_state (info)));
      if (command != NULL)
        cli_json_add_bytes (builder, "command", (const guint8 *)command, strlen (command));
      else
        {
          json_builder_set_member_name (builder, "command");
          json_builder_add_null_value (builder);
        }
      json_builder_set_member_name (builder, "started");
      if (started != NULL)
        {
          g_autofree char *text = g_date_time_format_iso8601 (started);

          json_builder_add_string_value (builder, text);
        }
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "pid");
      if (terret_session_info_get_pid (info) > 0)
        json_builder_add_int_value (builder, terret_session_info_get_pid (info));
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "output_bytes");
      json_builder_add_int_value (builder, (gint64)terret_session_info_get_output_bytes (info));
      /* As a result says it (result_fields above), as of the last look. */
      json_builder_set_member_name (builder, "waiting_for_input");
      if (terret_session_info_get_input_state (info) == TERRET_INPUT_STATE_UNKNOWN)
        json_builder_add_null_value (builder);
      else
        json_builder_add_boolean_value (builder, terret_session_info_get_input_state (info) ==
                                                 TERRET_INPUT_STATE_WAITING);
      json_builder_set_member_name (builder, "input_prompt");
      if (terret_session_info_get_input_prompt (info) != NULL)
        json_builder_add_string_value (builder, terret_session_info_get_input_prompt (info));
      else
        json_builder_add_null_value (builder);
      json_builder_set_member_name (builder, "input_secret");
      json_builder_add_boolean_value (builder, terret_session_info_get_input_secret (info));
      json_builder_set_member_name (builder, "input_pager");
      json_builder_add_boolean_value (builder, terret_session_info_get_input_pager (info));
      json_builder_set_member_name (builder, "waiting_since");
      if (terret_session_info_get_input_since (info) >= 0)
        json_builder_add_double_value (builder, terret_session_info_get_input_since (info));
      else
        json_builder_add_null_value (builder);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  return json_object_ref (json_node_get_object (root));
}

/* The JSON Schema of cli_session_infos_members(), a tool's outputSchema. */
JsonNode *
cli_session_infos_schema (void)
{
  static const char schema[] =
    "{\"type\": \"object\", \"required\": [\"sessions\"], \"properties\": {\"sessions\": "
    "{\"type\": \"array\", \"items\": {\"type\": \"object\", "
    "\"required\": [\"session\", \"state\", \"started\", \"pid\", \"output_bytes\"], "
    "\"properties\": {"
    "\"session\": {\"type\": \"string\", \"description\": \"The session key\"}, "
    "\"state\": {\"type\": \"string\", \"enum\": [\"idle\", \"running\", \"detached\", \"ended\"], "
    "\"description\": \"idle: waits for a command; running: a call waits for it; detached: handed back "
    "still running (poll, input, interrupt, close reach it); ended: its end waits for a poll\"}, "
    "\"command\": {\"type\": [\"string\", \"null\"], \"description\": \"The command\"}, "
    "\"command_base64\": {\"type\": \"string\", \"description\": \"The command's bytes in base64, "
    "when they are not UTF-8\"}, "
    "\"started\": {\"type\": [\"string\", \"null\"], \"description\": \"When it started, ISO 8601\"}, "
    "\"pid\": {\"type\": [\"integer\", \"null\"], \"description\": \"Its process on this host\"}, "
    "\"output_bytes\": {\"type\": \"integer\", \"description\": \"Bytes it printed so far\"}, "
    "\"waiting_for_input\": {\"type\": [\"boolean\", \"null\"], \"description\": \"Whether the "
    "command waits for input on its terminal, as of the last look (answer it with input); null "
    "where that cannot be known\"}, "
    "\"input_prompt\": {\"type\": [\"string\", \"null\"], \"description\": \"The last line it "
    "printed before it waited, at most 256 bytes\"}, "
    "\"input_secret\": {\"type\": \"boolean\", \"description\": \"The input it waits for is not "
    "echoed\"}, "
    "\"input_pager\": {\"type\": \"boolean\", \"description\": \"A pager holds the terminal\"}, "
    "\"waiting_since\": {\"type\": [\"number\", \"null\"], \"description\": \"Seconds from its "
    "start to when the wait was first seen\"}"
    "}}}}}";
  g_autoptr(GError) error = NULL;
  JsonNode *node = json_from_string (schema, &error);

  /* This file's own text: a bad one is a bug here. */
  g_assert_no_error (error);
  return node;
}

/*
 * cli_result_add_members:
 *
 * The run fields of a response (`status`, `signal`, `stdout`, ...,
 * `cwd`) as members of the object @builder is building.
 */
void
cli_result_add_members (JsonBuilder  *builder,
                        TerretResult *result)
{
  for (guint i = 0; i < G_N_ELEMENTS (result_fields); i++)
    result_fields[i].add (builder, &result_fields[i], result);
}

static void
add_schema_property (JsonBuilder *builder,
                     const char  *name,
                     JsonNode    *type,
                     const char  *description)
{
  json_builder_set_member_name (builder, name);
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_value (builder, type);
  json_builder_set_member_name (builder, "description");
  json_builder_add_string_value (builder, description);
  json_builder_end_object (builder);
}

/*
 * cli_result_schema:
 *
 * The JSON Schema of the run fields, a tool's outputSchema. Every field
 * is always there, but one of bytes may come as NAME_base64 instead.
 */
JsonNode *
cli_result_schema (void)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "object");
  json_builder_set_member_name (builder, "properties");
  json_builder_begin_object (builder);
  for (guint i = 0; i < G_N_ELEMENTS (result_fields); i++)
    {
      const ResultField *field = &result_fields[i];
      g_autoptr(GError) error = NULL;
      JsonNode *type = json_from_string (field->type, &error);

      /* The types are this file's own text: a bad one is a bug here. */
      g_assert_no_error (error);
      add_schema_property (builder, field->name, type, field->description);

      if (field->bytes)
        {
          g_autofree char *base64 = g_strconcat (field->name, "_base64", NULL);
          g_autofree char *description = g_strdup_printf ("%s's exact bytes in base64, when they are not UTF-8",
                                                          field->name);

          add_schema_property (builder, base64, json_node_init_string (json_node_alloc (), "string"),
                               description);
        }
    }
  json_builder_end_object (builder);

  json_builder_set_member_name (builder, "required");
  json_builder_begin_array (builder);
  for (guint i = 0; i < G_N_ELEMENTS (result_fields); i++)
    {
      if (!result_fields[i].bytes)
        json_builder_add_string_value (builder, result_fields[i].name);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}

/* The run fields' names, for --help: "status, signal, stdout or
 * stdout_base64, ...". */
char *
cli_result_field_names (void)
{
  GString *names = g_string_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (result_fields); i++)
    {
      g_string_append_printf (names, "%s%s", i > 0 ? ", " : "", result_fields[i].name);
      if (result_fields[i].bytes)
        g_string_append_printf (names, " or %s_base64", result_fields[i].name);
    }

  return g_string_free (names, FALSE);
}
