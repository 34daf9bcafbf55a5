/* terret-exec-common.c: the response object, request fields and exit
 * codes, shared by `terret-exec --json`, `terret-exec serve` and
 * `terret-exec mcp` so all speak exactly the same fields
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "terret-exec-common.h"

/*
 * cli_error_code:
 *
 * The protocol's name for @error's kind. Anything outside the two known
 * domains is reported as `failed` rather than invented as a new code.
 */
const char *
cli_error_code (const GError *error)
{
  g_assert (error != NULL);

  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    return "cancelled";

  /* The error enum's own nicks: busy, unavailable, no-shell, ... */
  if (error->domain == TERRET_EXEC_ERROR)
    {
      g_autoptr(GEnumClass) klass = g_type_class_ref (TERRET_TYPE_EXEC_ERROR);
      GEnumValue *value = g_enum_get_value (klass, error->code);

      if (value != NULL)
        return value->value_nick;
    }

  return "failed";
}

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

static void
add_gbytes_member (JsonBuilder *builder,
                   const char  *name,
                   GBytes      *bytes)
{
  const guint8 *data;
  gsize len = 0;

  if (bytes == NULL)
    {
      json_builder_set_member_name (builder, name);
      json_builder_add_null_value (builder);
      return;
    }

  data = g_bytes_get_data (bytes, &len);
  add_bytes_member (builder, name, data, len);
}

static void
add_stream_capture_members (JsonBuilder  *builder,
                            TerretResult *result,
                            TerretStream  stream,
                            const char   *prefix)
{
  g_autofree char *omitted_at = g_strconcat (prefix, "omitted_at", NULL);
  g_autofree char *full_output = g_strconcat (prefix, "full_output", NULL);
  g_autofree char *dropped = g_strconcat (stream == TERRET_STREAM_STDOUT ? "stdout_" : prefix,
                                          "dropped", NULL);
  const char *path = terret_result_get_full_output (result, stream);

  json_builder_set_member_name (builder, dropped);
  json_builder_add_int_value (builder, (gint64) terret_result_get_dropped (result, stream));

  json_builder_set_member_name (builder, omitted_at);
  if (terret_result_get_dropped (result, stream) > 0)
    json_builder_add_int_value (builder, (gint64) terret_result_get_omitted_at (result, stream));
  else
    json_builder_add_null_value (builder);

  if (path != NULL)
    add_bytes_member (builder, full_output, (const guint8 *) path, strlen (path));
  else
    {
      json_builder_set_member_name (builder, full_output);
      json_builder_add_null_value (builder);
    }
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
  const char *notice = terret_result_get_notice (result);
  const char *cwd = terret_result_get_cwd (result);
  int term_signal = terret_result_get_term_signal (result);

  json_builder_set_member_name (builder, "status");
  if (terret_result_get_exited (result))
    json_builder_add_int_value (builder, terret_result_get_exit_status (result));
  else
    json_builder_add_null_value (builder);

  json_builder_set_member_name (builder, "signal");
  if (term_signal > 0)
    json_builder_add_int_value (builder, term_signal);
  else
    json_builder_add_null_value (builder);

  add_gbytes_member (builder, "stdout", terret_result_get_stdout (result));
  add_gbytes_member (builder, "stderr", terret_result_get_stderr (result));

  json_builder_set_member_name (builder, "notice");
  if (notice != NULL)
    json_builder_add_string_value (builder, notice);
  else
    json_builder_add_null_value (builder);

  json_builder_set_member_name (builder, "timed_out");
  json_builder_add_boolean_value (builder, terret_result_get_timed_out (result));

  /* A run that a timeout detached from, or a poll before the command
   * ended: no status yet, more output to come. */
  json_builder_set_member_name (builder, "running");
  json_builder_add_boolean_value (builder, terret_result_get_running (result));

  /* The limits it ran into, by the names of their settings without
   * `limit-`, comma-separated: "memory", "processes,cpu". */
  json_builder_set_member_name (builder, "limit_hit");
  if (terret_result_get_limits_hit (result) != TERRET_LIMIT_NONE)
    {
      g_autoptr(GFlagsClass) klass = g_type_class_ref (TERRET_TYPE_LIMITS);
      g_autoptr(GString) names = g_string_new (NULL);
      TerretLimits hit = terret_result_get_limits_hit (result);

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
  else
    json_builder_add_null_value (builder);

  json_builder_set_member_name (builder, "dropped");
  json_builder_add_int_value (builder,
                              (gint64)(terret_result_get_dropped (result, TERRET_STREAM_STDOUT) +
                                       terret_result_get_dropped (result, TERRET_STREAM_STDERR)));

  /* Where the capture left bytes out, per stream, and the files that
   * hold them all (keep-full-output). */
  add_stream_capture_members (builder, result, TERRET_STREAM_STDOUT, "");
  add_stream_capture_members (builder, result, TERRET_STREAM_STDERR, "stderr_");

  /* A directory name is bytes too; a non-UTF-8 one travels as base64
   * rather than being mangled into something that names no directory. */
  if (cwd != NULL)
    add_bytes_member (builder, "cwd", (const guint8 *)cwd, strlen (cwd));
  else
    {
      json_builder_set_member_name (builder, "cwd");
      json_builder_add_null_value (builder);
    }
}

/*
 * cli_response_new:
 * @id: (nullable): the request's id, copied as is; %NULL for JSON null
 * @result: (nullable): what a run left behind
 * @error: (nullable): why the request was not carried out
 *
 * One protocol response. With @error it is `{id, ok: false, error}`; with
 * @result the full set of run fields; with neither, the bare
 * acknowledgement `{id, ok: true}` of an op that has nothing to report.
 */
JsonNode *
cli_response_new (JsonNode     *id,
                  TerretResult *result,
                  const GError *error)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  json_builder_begin_object (builder);

  json_builder_set_member_name (builder, "id");
  if (id != NULL)
    json_builder_add_value (builder, json_node_copy (id));
  else
    json_builder_add_null_value (builder);

  json_builder_set_member_name (builder, "ok");
  json_builder_add_boolean_value (builder, error == NULL);

  if (error != NULL)
    {
      json_builder_set_member_name (builder, "error");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "code");
      json_builder_add_string_value (builder, cli_error_code (error));
      json_builder_set_member_name (builder, "message");
      json_builder_add_string_value (builder, error->message);
      json_builder_end_object (builder);
    }
  else if (result != NULL)
    cli_result_add_members (builder, result);

  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}

/*
 * cli_exit_code_for_result:
 *
 * The exit code that reports a command that ran: 124 when it timed out
 * (whatever killed it then), 128+N when signal N ended it, its status
 * when it reported one, and 255 when it reported none.
 */
int
cli_exit_code_for_result (TerretResult *result)
{
  int term_signal;

  if (terret_result_get_timed_out (result))
    return CLI_EXIT_TIMEOUT;

  term_signal = terret_result_get_term_signal (result);
  if (term_signal > 0)
    return CLI_EXIT_SIGNAL_BASE + term_signal;

  if (terret_result_get_exited (result))
    return terret_result_get_exit_status (result);

  return CLI_EXIT_NO_STATUS;
}

/*
 * cli_write_all:
 *
 * Writes all of @data to @fd before returning. The output may be a pipe
 * someone else left non-blocking, so EAGAIN waits for room with poll()
 * rather than dropping or spinning.
 */
gboolean
cli_write_all (int          fd,
               const void  *data,
               gsize        len,
               GError     **error)
{
  const guint8 *p = data;

  while (len > 0)
    {
      gssize n = write (fd, p, len);

      if (n < 0)
        {
          int errsv = errno;

          if (errsv == EINTR)
            continue;
          if (errsv == EAGAIN || errsv == EWOULDBLOCK)
            {
              struct pollfd pfd = { .fd = fd, .events = POLLOUT };

              if (poll (&pfd, 1, -1) < 0 && errno != EINTR)
                errsv = errno;
              else
                continue;
            }

          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errsv),
                       "cannot write to fd %d: %s", fd, g_strerror (errsv));
          return FALSE;
        }

      p += n;
      len -= n;
    }

  return TRUE;
}

/* @node as one line of compact JSON, newline-terminated, written at once
 * so lines from concurrent runs never interleave. */
gboolean
cli_write_json_line (int        fd,
                     JsonNode  *node,
                     GError   **error)
{
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(GString) line = NULL;
  gsize len = 0;
  g_autofree char *text = NULL;

  json_generator_set_root (generator, node);
  text = json_generator_to_data (generator, &len);

  line = g_string_new_len (text, len);
  g_string_append_c (line, '\n');

  return cli_write_all (fd, line->str, line->len, error);
}

/* Request fields ------------------------------------------------------- */

/*
 * cli_json_get_string:
 *
 * A string member of @request; absent or null leaves *out NULL, which is
 * an error only when @required.
 */
gboolean
cli_json_get_string (JsonObject  *request,
                     const char  *name,
                     gboolean     required,
                     const char **out,
                     GError     **error)
{
  JsonNode *node = json_object_get_member (request, name);

  *out = NULL;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    {
      if (!required)
        return TRUE;
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“%s” is required", name);
      return FALSE;
    }

  if (!JSON_NODE_HOLDS_VALUE (node) || json_node_get_value_type (node) != G_TYPE_STRING)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“%s” must be a string", name);
      return FALSE;
    }

  *out = json_node_get_string (node);
  return TRUE;
}

/*
 * cli_json_get_seconds:
 *
 * A duration in seconds, fractions allowed; absent or null leaves *out
 * as it was.
 */
gboolean
cli_json_get_seconds (JsonObject  *request,
                      const char  *name,
                      double      *out,
                      GError     **error)
{
  JsonNode *node = json_object_get_member (request, name);
  GType type;
  double value;

  if (node == NULL || JSON_NODE_HOLDS_NULL (node))
    return TRUE;

  type = JSON_NODE_HOLDS_VALUE (node) ? json_node_get_value_type (node) : G_TYPE_INVALID;
  if (type != G_TYPE_INT64 && type != G_TYPE_DOUBLE)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“%s” must be a number of seconds", name);
      return FALSE;
    }

  value = type == G_TYPE_INT64 ? (double) json_node_get_int (node) : json_node_get_double (node);
  if (!isfinite (value) || value < 0 || value > G_MAXINT)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“%s” must be a number of seconds from 0 to %d", name, G_MAXINT);
      return FALSE;
    }

  *out = value;
  return TRUE;
}

/*
 * cli_request_from_json:
 *
 * The request a `run` names: `command` (required), `session`, `timeout`,
 * `on_timeout` (`kill` or `detach`), `capture` (`head`, `tail`,
 * `head-tail` or `default`) and `keep_full_output`. Other members are the caller's
 * to have checked.
 */
TerretRequest *
cli_request_from_json (JsonObject  *object,
                       GError     **error)
{
  g_autoptr(TerretRequest) request = NULL;
  const char *command, *session, *on_timeout, *capture;
  TerretCaptureMode capture_mode = TERRET_CAPTURE_MODE_DEFAULT;
  JsonNode *keep_full_output = json_object_get_member (object, "keep_full_output");
  double timeout = 0;

  if (!cli_json_get_string (object, "command", TRUE, &command, error) ||
      !cli_json_get_string (object, "session", FALSE, &session, error) ||
      !cli_json_get_seconds (object, "timeout", &timeout, error) ||
      !cli_json_get_string (object, "on_timeout", FALSE, &on_timeout, error) ||
      !cli_json_get_string (object, "capture", FALSE, &capture, error) ||
      (capture != NULL && !cli_parse_capture (capture, &capture_mode, error)))
    return NULL;

  if (keep_full_output != NULL && !JSON_NODE_HOLDS_NULL (keep_full_output) &&
      (!JSON_NODE_HOLDS_VALUE (keep_full_output) ||
       json_node_get_value_type (keep_full_output) != G_TYPE_BOOLEAN))
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“keep_full_output” must be true or false");
      return NULL;
    }

  if (on_timeout != NULL && !g_str_equal (on_timeout, "kill") && !g_str_equal (on_timeout, "detach"))
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“on_timeout” must be \"kill\" or \"detach\", not “%s”", on_timeout);
      return NULL;
    }

  request = terret_request_new (command);
  if (session != NULL)
    terret_request_set_session (request, session);
  terret_request_set_timeout (request, timeout);
  if (on_timeout != NULL && g_str_equal (on_timeout, "detach"))
    terret_request_set_timeout_action (request, TERRET_TIMEOUT_ACTION_DETACH);
  terret_request_set_capture (request, capture_mode);
  if (keep_full_output != NULL && JSON_NODE_HOLDS_VALUE (keep_full_output))
    terret_request_set_keep_full_output (request, json_node_get_boolean (keep_full_output));

  return g_steal_pointer (&request);
}

/*
 * cli_parse_capture:
 *
 * The capture mode a `--capture` option or a `capture` field names:
 * `head`, `tail`, `head-tail` or `default`.
 */
gboolean
cli_parse_capture (const char         *text,
                   TerretCaptureMode  *mode,
                   GError            **error)
{
  g_autoptr(GEnumClass) klass = g_type_class_ref (TERRET_TYPE_CAPTURE_MODE);
  GEnumValue *value = g_enum_get_value_by_nick (klass, text);

  if (value == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "the capture must be head, tail, head-tail or default, not “%s”", text);
      return FALSE;
    }

  *mode = value->value;
  return TRUE;
}

/*
 * cli_take_full_output:
 *
 * A one-shot CLI run's full-output files outlive it: the CLI closes its
 * sessions before it exits, and the path it prints must still name them.
 */
void
cli_take_full_output (TerretResult *result)
{
  g_free (terret_result_steal_full_output (result, TERRET_STREAM_STDOUT));
  g_free (terret_result_steal_full_output (result, TERRET_STREAM_STDERR));
}
