/* terret-exec-common.c: the response object, exit codes and output,
 * shared by `terret-exec --json`, `terret-exec serve` and
 * `terret-exec mcp` so all speak exactly the same fields
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "terret-exec-common.h"
#include "terret-exec-fields.h"

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
  /* With an error too: a cancelled run's output. */
  if (result != NULL)
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

/*
 * cli_parse_capture:
 *
 * The capture mode a `--capture` option names: the mode's nick.
 */
gboolean
cli_parse_capture (const char         *text,
                   TerretCaptureMode  *mode,
                   GError            **error)
{
  int value;

  if (!cli_enum_from_nick (TERRET_TYPE_CAPTURE_MODE, "the capture", text, &value, error))
    return FALSE;

  *mode = (TerretCaptureMode) value;
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
