/* terret-exec-fields.c: the fields of a request and of a result, listed
 * once for `serve`, `mcp` and `--json`
 *
 * A request field is one row: its name, the #TerretRequest property a run
 * sets from it (whose type is the field's type), and its description; the
 * checks, the request a run makes and the tools' inputSchema all come
 * from the row. A result field is one row too: its name, its JSON Schema
 * type and description, and the function that reads it from a result;
 * serve's responses, mcp's structuredContent and its outputSchema come
 * from the rows.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include "terret-exec-fields.h"

/* Request fields -------------------------------------------------------- */

static const CliField fields[] = {
  /* A run's: each sets the request property it names. */
  { .name = "command", .property = "command",
    .description = "The command line, as bash reads it" },
  { .name = "session", .property = "session",
    .description = "The session key (default \"default\")" },
  { .name = "timeout", .property = "timeout",
    .description = "Seconds the command may run; 0 or absent: the backend's setting" },
  { .name = "on_timeout", .property = "timeout-action",
    .description = "At the timeout, kill the command (default) or return its output so far and "
                   "leave it running (bash_poll, bash_input and bash_interrupt then reach it)",
    .withheld = "detach", .withheld_needs = TERRET_CAPABILITY_DETACH,
    .withheld_description = "At the timeout, kill the command" },
  { .name = "capture", .property = "capture",
    .description = "Which part of a long output to keep: the start, the end, or both with the "
                   "middle omitted (a build's cause and its error); default: the backend's" },
  { .name = "keep_full_output", .property = "keep-full-output",
    .description = "Also keep every byte of the output in a file whose path the result gives "
                   "(full_output)" },
  /* A run's own cwd, environment and clocks. */
  { .name = "cwd", .property = "cwd",
    .description = "The directory the command runs in, absolute or relative to the session's; "
                   "a session's own cwd is back as it was after the command" },
  { .name = "env", .property = "env",
    .description = "Variables set for this command only, as {\"NAME\": \"value\"}; a session's "
                   "own variables are back as they were after the command" },
  { .name = "return_after", .property = "return-after",
    .description = "Seconds after which the output so far comes back and the command goes on "
                   "(bash_poll collects the rest); the same as timeout with on_timeout detach, "
                   "so give one or the other" },
  { .name = "deadline", .property = "deadline",
    .description = "Seconds after which the command and everything it started are ended, even "
                   "after it came back running and whether or not anyone polls it" },
  { .name = "idle_timeout", .property = "idle-timeout",
    .description = "Seconds without any output after which on_idle applies" },
  { .name = "on_idle", .property = "idle-action",
    .description = "After idle_timeout seconds without output: end the command (kill, the "
                   "default) or return its output so far marked stalled and leave it running "
                   "(return: it may be waiting for input)",
    .withheld = "return", .withheld_needs = TERRET_CAPABILITY_DETACH,
    .withheld_description = "After idle_timeout seconds without output: end the command" },

  /* The other ops' own. */
  { .name = "data", .type = CLI_FIELD_STRING,
    .description = "The text to type" },
  { .name = "data_base64", .type = CLI_FIELD_STRING,
    .description = "The bytes to type, in base64, instead of data (bytes that are not text)" },
  { .name = "wait", .type = CLI_FIELD_SECONDS,
    .description = "Seconds to wait for new output at most; 0 or absent: answer at once" },
  { .name = "target", .type = CLI_FIELD_ANY,
    .description = "The id of the run or poll to cancel" },

  /* read's: a range of a run's full output. */
  { .name = "path", .type = CLI_FIELD_STRING,
    .description = "A full_output path a result gave; default: the last run of the session" },
  { .name = "stream", .type = CLI_FIELD_STRING,
    .description = "\"stdout\" (default) or \"stderr\", where the backend keeps it apart" },
  { .name = "offset", .type = CLI_FIELD_COUNT,
    .description = "The byte to start at (omitted_at of a cut result is where its middle begins)" },
  { .name = "length", .type = CLI_FIELD_COUNT,
    .description = "Bytes to read at most from offset" },
  { .name = "line", .type = CLI_FIELD_COUNT,
    .description = "The line to start at (1 is the first), instead of offset" },
  { .name = "lines", .type = CLI_FIELD_COUNT,
    .description = "Lines to read at most" },
  { .name = "pattern", .type = CLI_FIELD_STRING,
    .description = "A regular expression (PCRE): only the lines it matches, each with its line "
                   "number and offset" },
};

/*
 * cli_fields_list:
 *
 * Every request field, a run's first, in the order tools list them.
 */
const CliField *
cli_fields_list (guint *n_fields)
{
  *n_fields = G_N_ELEMENTS (fields);
  return fields;
}

const CliField *
cli_field_lookup (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      if (g_str_equal (fields[i].name, name))
        return &fields[i];
    }

  return NULL;
}

static GParamSpec *
field_pspec (const CliField *field)
{
  g_autoptr(GTypeClass) klass = g_type_class_ref (TERRET_TYPE_REQUEST);
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_CLASS (klass), field->property);

  /* The table names properties that exist: a typo is a bug here. The
   * spec outlives the reference, as a static type's class does. */
  g_assert (pspec != NULL);
  return pspec;
}

/* A request field holds what its property holds: double properties are
 * durations in seconds. */
static CliFieldType
field_type (const CliField *field)
{
  GParamSpec *pspec;

  if (field->property == NULL)
    return field->type;

  pspec = field_pspec (field);
  if (G_IS_PARAM_SPEC_STRING (pspec))
    return CLI_FIELD_STRING;
  if (G_IS_PARAM_SPEC_DOUBLE (pspec))
    return CLI_FIELD_SECONDS;
  if (G_IS_PARAM_SPEC_BOOLEAN (pspec))
    return CLI_FIELD_BOOLEAN;
  if (G_IS_PARAM_SPEC_ENUM (pspec))
    return CLI_FIELD_ENUM;
  if (G_IS_PARAM_SPEC_BOXED (pspec) && pspec->value_type == G_TYPE_STRV)
    return CLI_FIELD_ENV;

  g_error ("request property “%s” has a type no field reads", field->property);
}

static GType
value_type (JsonNode *value)
{
  return JSON_NODE_HOLDS_VALUE (value) ? json_node_get_value_type (value) : G_TYPE_INVALID;
}

/*
 * cli_format_choices:
 *
 * @choices as a message lists them: `"a", "b" or "c"`.
 */
char *
cli_format_choices (const char * const *choices)
{
  GString *text = g_string_new (NULL);
  guint n = g_strv_length ((char **) choices);

  for (guint i = 0; i < n; i++)
    g_string_append_printf (text, "%s\"%s\"", i == 0 ? "" : i + 1 < n ? ", " : " or ", choices[i]);

  return g_string_free (text, FALSE);
}

/*
 * cli_enum_from_nick:
 * @what: how the message names the field, e.g. `“capture”`
 *
 * The value of @type whose nick is @nick, or an error listing the nicks:
 * the generated names, never a copy of them.
 */
gboolean
cli_enum_from_nick (GType        type,
                    const char  *what,
                    const char  *nick,
                    int         *value,
                    GError     **error)
{
  g_autoptr(GEnumClass) klass = g_type_class_ref (type);
  GEnumValue *found = g_enum_get_value_by_nick (klass, nick);
  g_autoptr(GPtrArray) nicks = NULL;
  g_autofree char *choices = NULL;

  if (found != NULL)
    {
      *value = found->value;
      return TRUE;
    }

  nicks = g_ptr_array_new ();
  for (guint i = 0; i < klass->n_values; i++)
    g_ptr_array_add (nicks, (char *) klass->values[i].value_nick);
  g_ptr_array_add (nicks, NULL);
  choices = cli_format_choices ((const char * const *) nicks->pdata);

  g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
               "%s must be %s, not “%s”", what, choices, nick);
  return FALSE;
}

/*
 * cli_field_check:
 * @value: (nullable): the field's member
 *
 * Whether @value is one @field may hold; absent or null always is. The
 * error names the field.
 */
gboolean
cli_field_check (const CliField  *field,
                 JsonNode        *value,
                 GError         **error)
{
  CliFieldType type = field_type (field);
  GType held;

  if (value == NULL || JSON_NODE_HOLDS_NULL (value))
    return TRUE;

  held = value_type (value);
  switch (type)
    {
    case CLI_FIELD_STRING:
      if (held == G_TYPE_STRING)
        return TRUE;
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“%s” must be a string", field->name);
      return FALSE;

    case CLI_FIELD_ENV:
      {
        g_autoptr(GList) names = NULL;

        if (!JSON_NODE_HOLDS_OBJECT (value))
          {
            g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                         "“%s” must be an object of strings, {\"NAME\": \"value\"}", field->name);
            return FALSE;
          }
        names = json_object_get_members (json_node_get_object (value));
        for (GList *l = names; l != NULL; l = l->next)
          {
            JsonNode *member = json_object_get_member (json_node_get_object (value), l->data);

            if (value_type (member) != G_TYPE_STRING || strchr (l->data, '=') != NULL ||
                *(const char *)l->data == '\0')
              {
                g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                             "“%s”: “%s” must be a variable's name with a string value",
                             field->name, (const char *)l->data);
                return FALSE;
              }
          }
        return TRUE;
      }

    case CLI_FIELD_SECONDS:
      {
        double seconds;

        if (held != G_TYPE_INT64 && held != G_TYPE_DOUBLE)
          {
            g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                         "“%s” must be a number of seconds", field->name);
            return FALSE;
          }
        seconds = held == G_TYPE_INT64 ? (double) json_node_get_int (value) : json_node_get_double (value);
        {
          g_autofree char *what = g_strdup_printf ("“%s”", field->name);

          return cli_check_seconds (what, seconds, error);
        }
      }

    case CLI_FIELD_BOOLEAN:
      if (held == G_TYPE_BOOLEAN)
        return TRUE;
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“%s” must be true or false", field->name);
      return FALSE;

    case CLI_FIELD_ENUM:
      {
        g_autofree char *what = g_strdup_printf ("“%s”", field->name);
        int unused;

        if (held != G_TYPE_STRING)
          {
            g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                         "“%s” must be a string", field->name);
            return FALSE;
          }
        return cli_enum_from_nick (field_pspec (field)->value_type, what,
                                   json_node_get_string (value), &unused, error);
      }

    case CLI_FIELD_COUNT:
      if (held == G_TYPE_INT64 && json_node_get_int (value) >= 0)
        return TRUE;
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“%s” must be a whole number from 0", field->name);
      return FALSE;

    case CLI_FIELD_ANY:
    default:
      return TRUE;
    }
}

/*
 * cli_field_schema:
 * @caps: what the backend can do: a withheld value is left out without
 *
 * The JSON Schema of @field, as a tool's inputSchema lists it.
 */
JsonNode *
cli_field_schema (const CliField     *field,
                  TerretCapabilities  caps)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  CliFieldType type = field_type (field);
  gboolean withhold = field->withheld != NULL && (caps & field->withheld_needs) != field->withheld_needs;
  static const char * const json_types[] = {
    [CLI_FIELD_STRING] = "string",
    [CLI_FIELD_ENV] = "object",
    [CLI_FIELD_SECONDS] = "number",
    [CLI_FIELD_BOOLEAN] = "boolean",
    [CLI_FIELD_ENUM] = "string",
    [CLI_FIELD_ANY] = NULL,
    [CLI_FIELD_COUNT] = "integer",
  };

  json_builder_begin_object (builder);
  if (json_types[type] != NULL)
    {
      json_builder_set_member_name (builder, "type");
      json_builder_add_string_value (builder, json_types[type]);
    }
  if (type == CLI_FIELD_SECONDS || type == CLI_FIELD_COUNT)
    {
      json_builder_set_member_name (builder, "minimum");
      json_builder_add_int_value (builder, 0);
    }
  if (type == CLI_FIELD_ENUM)
    {
      g_autoptr(GEnumClass) klass = g_type_class_ref (field_pspec (field)->value_type);

      json_builder_set_member_name (builder, "enum");
      json_builder_begin_array (builder);
      for (guint i = 0; i < klass->n_values; i++)
        {
          if (!withhold || !g_str_equal (klass->values[i].value_nick, field->withheld))
            json_builder_add_string_value (builder, klass->values[i].value_nick);
        }
      json_builder_end_array (builder);
    }
  if (type == CLI_FIELD_ENV)
    {
      json_builder_set_member_name (builder, "additionalProperties");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "type");
      json_builder_add_string_value (builder, "string");
      json_builder_end_object (builder);
    }
  json_builder_set_member_name (builder, "description");
  json_builder_add_string_value (builder, withhold ? field->withheld_description : field->description);
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}

/*
 * cli_request_from_fields:
 *
 * The request a run's @fields make, each request field present setting
 * its property. The fields were checked (cli_field_check()).
 */
TerretRequest *
cli_request_from_fields (JsonObject *object)
{
  TerretRequest *request = g_object_new (TERRET_TYPE_REQUEST, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      const CliField *field = &fields[i];
      JsonNode *member = json_object_get_member (object, field->name);
      g_auto(GValue) value = G_VALUE_INIT;
      int nick_value = 0;

      if (field->property == NULL || member == NULL || JSON_NODE_HOLDS_NULL (member))
        continue;

      g_value_init (&value, field_pspec (field)->value_type);
      switch (field_type (field))
        {
        case CLI_FIELD_STRING:
          g_value_set_string (&value, json_node_get_string (member));
          break;
        case CLI_FIELD_ENV:
          {
            g_autoptr(GStrvBuilder) env = g_strv_builder_new ();
            g_autoptr(GList) names = json_object_get_members (json_node_get_object (member));

            for (GList *l = names; l != NULL; l = l->next)
              {
                g_autofree char *entry = g_strconcat (l->data, "=",
                                                      json_object_get_string_member (json_node_get_object (member),
                                                                                    l->data), NULL);

                g_strv_builder_add (env, entry);
              }
            g_value_take_boxed (&value, g_strv_builder_end (env));
          }
          break;
        case CLI_FIELD_SECONDS:
          g_value_set_double (&value, cli_fields_get_seconds (object, field->name));
          break;
        case CLI_FIELD_BOOLEAN:
          g_value_set_boolean (&value, json_node_get_boolean (member));
          break;
        case CLI_FIELD_ENUM:
          cli_enum_from_nick (G_VALUE_TYPE (&value), field->name, json_node_get_string (member),
                              &nick_value, NULL);
          g_value_set_enum (&value, nick_value);
          break;
        case CLI_FIELD_ANY:
        case CLI_FIELD_COUNT:
        default:
          g_assert_not_reached ();
        }
      g_object_set_property (G_OBJECT (request), field->property, &value);
    }

  return request;
}

/*
 * cli_json_get_string:
 *
 * A string member of @object, *out NULL when it is absent or null;
 * %FALSE when it holds anything else.
 */
gboolean
cli_json_get_string (JsonObject  *object,
                     const char  *name,
                     const char **out)
{
  JsonNode *member = json_object_get_member (object, name);

  *out = NULL;
  if (member == NULL || JSON_NODE_HOLDS_NULL (member))
    return TRUE;
  if (value_type (member) != G_TYPE_STRING)
    return FALSE;

  *out = json_node_get_string (member);
  return TRUE;
}

/* A checked string field, or NULL when absent or null. */
const char *
cli_fields_get_string (JsonObject *object,
                       const char *name)
{
  JsonNode *member = json_object_get_member (object, name);

  return member != NULL && !JSON_NODE_HOLDS_NULL (member) ? json_node_get_string (member) : NULL;
}

/*
 * cli_check_seconds:
 *
 * Whether @seconds is a duration a request may name: a number from 0 to
 * G_MAXINT, which every timer takes. The one rule for `--timeout` and
 * every field of seconds; @what names the value in the error.
 */
gboolean
cli_check_seconds (const char  *what,
                   double       seconds,
                   GError     **error)
{
  if (isfinite (seconds) && seconds >= 0 && seconds <= G_MAXINT)
    return TRUE;

  g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
               "%s must be a number of seconds from 0 to %d", what, G_MAXINT);
  return FALSE;
}

/* A checked count, or -1 when absent or null. */
gint64
cli_fields_get_count (JsonObject *object,
                      const char *name)
{
  JsonNode *member = json_object_get_member (object, name);

  return member != NULL && !JSON_NODE_HOLDS_NULL (member) ? json_node_get_int (member) : -1;
}

/* A checked duration, or 0 when absent or null. */
double
cli_fields_get_seconds (JsonObject *object,
                        const char *name)
{
  JsonNode *member = json_object_get_member (object, name);

  if (member == NULL || JSON_NODE_HOLDS_NULL (member))
    return 0;
  return value_type (member) == G_TYPE_INT64 ? (double) json_node_get_int (member)
                                             : json_node_get_double (member);
}

/* Result fields --------------------------------------------------------- */

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

static gboolean
is_text (const guint8 *data,
         gsize         len)
{
  /* g_utf8_validate_len() refuses NUL bytes, which is what we want: a
   * string with an embedded NUL would not survive most JSON readers'
   * C strings, so such output travels as base64 too. */
  return len == 0 || g_utf8_validate_len ((const char *)data, len, NULL);
}

/* `NAME: "text"` when the bytes are valid UTF-8, else `NAME_base64: "..."`:
 * exactly one of the two keys, so a reader never has to guess. */
static void
add_bytes_member (JsonBuilder  *builder,
                  const char   *name,
                  const guint8 *data,
                  gsize         len)
{
  if (is_text (data, len))
    {
      /* g_strndup (NULL, 0), for empty bytes, would give NULL, not "". */
      g_autofree char *text = len > 0 ? g_strndup ((const char *)data, len) : g_strdup ("");

      json_builder_set_member_name (builder, name);
      json_builder_add_string_value (builder, text);
    }
  else
    {
      g_autofree char *member = g_strconcat (name, "_base64", NULL);
      g_autofree char *encoded = g_base64_encode (data, len);

      json_builder_set_member_name (builder, member);
      json_builder_add_string_value (builder, encoded);
    }
}

/* A path is bytes too; a non-UTF-8 one travels as base64 rather than
 * being mangled into something that names no file. */
static void
add_path_member (JsonBuilder *builder,
                 const char  *name,
                 const char  *path)
{
  if (path != NULL)
    add_bytes_member (builder, name, (const guint8 *) path, strlen (path));
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
  add_bytes_member (builder, field->name, data, len);
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
      add_bytes_member (builder, "text", data, len);
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
  { "pipestatus", "[\"array\", \"null\"]",
    "The exit status of each command of the last pipeline (bash's PIPESTATUS); null where the "
    "backend cannot know it", add_pipestatus },
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
 * here) and output bytes.
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
        add_bytes_member (builder, "command", (const guint8 *)command, strlen (command));
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
    "\"output_bytes\": {\"type\": \"integer\", \"description\": \"Bytes it printed so far\"}"
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
