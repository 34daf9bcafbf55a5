/* terret-exec-fields.c: the fields of a request, listed once for `serve`,
 * `mcp` and `--json`
 *
 * A request field is one row: its name, the #TerretRequest property a run
 * sets from it (whose type is the field's type), and its description; the
 * checks, the request a run makes and the tools' inputSchema all come
 * from the row. The result's are in terret-exec-result-fields.c.
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
  { .name = "stop_grace", .property = "stop-grace",
    .description = "Seconds the command has to finish when its timeout, deadline, a cancel or its "
                   "session's close ends it: ^C first, SIGTERM halfway, then SIGKILL of "
                   "everything it started; what it prints meanwhile is in the result (0: kill at "
                   "once; default: the backend's stop-grace)" },
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
