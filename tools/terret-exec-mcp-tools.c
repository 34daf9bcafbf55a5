/* terret-exec-mcp-tools.c: the tools of `terret-exec mcp`, as a model
 * sees them
 *
 * The tools are the ops that have one (terret-exec-ops.c), listed where
 * the backend's capabilities say they work, with the inputSchema their
 * fields make (terret-exec-fields.c). A tool's result is what a model
 * reads (one text item) and, where the client speaks MCP 2025-06-18, the
 * run fields of `serve` as structuredContent. JSON-RPC is
 * terret-exec-mcp.c's. docs/mcp.md is the reference.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-exec-common.h"
#include "terret-exec-fields.h"
#include "terret-exec-mcp-tools.h"
#include "terret-exec-ops.h"

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
  if (terret_result_get_stalled (result))
    g_ptr_array_add (facts, g_strdup ("stalled: no output for idle_timeout; it may wait for input"));
  {
    guint n = 0;
    const int *statuses = terret_result_get_pipestatus (result, &n);

    /* The statuses a pipeline's exit status hides (`make | tail`). */
    if (statuses != NULL && n > 1)
      {
        g_autoptr(GString) list = g_string_new (NULL);

        for (guint i = 0; i < n; i++)
          g_string_append_printf (list, "%s%d", i > 0 ? " " : "", statuses[i]);
        g_ptr_array_add (facts, g_strdup_printf ("pipeline statuses %s", list->str));
      }
  }
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

/*
 * cli_mcp_tool_result:
 * @structured: whether results carry structuredContent
 *
 * The tool result a call's outcome makes: the run fields, an isError
 * result saying why nothing ran, or the words saying what was done.
 */
JsonNode *
cli_mcp_tool_result (const CliOutcome *outcome,
                     gboolean          structured)
{
  if (outcome->result != NULL)
    return run_result_new (outcome->result, structured);
  if (outcome->data != NULL)
    {
      JsonNode *node = tool_result_new (outcome->text, NULL, FALSE, FALSE);

      if (structured)
        {
          JsonNode *data = json_node_new (JSON_NODE_OBJECT);

          json_node_set_object (data, outcome->data);
          json_object_set_member (json_node_get_object (node), "structuredContent", data);
        }
      return node;
    }
  if (outcome->error != NULL)
    return tool_error_new (outcome->error);
  return tool_result_new (outcome->text != NULL ? outcome->text : "done", NULL, FALSE, FALSE);
}

/*
 * cli_mcp_progress_text:
 *
 * Output of a command as progress text: bytes that are not UTF-8
 * replaced; NULL when nothing is left to say.
 */
char *
cli_mcp_progress_text (GBytes *data)
{
  GString *text = g_string_new (NULL);

  append_bytes (text, data);
  if (text->len == 0)
    {
      g_string_free (text, TRUE);
      return NULL;
    }

  return g_string_free (text, FALSE);
}

/* The tool an op is, with the inputSchema its fields make. */
static void
add_tool (JsonBuilder        *builder,
          const CliOp        *op,
          TerretCapabilities  caps,
          gboolean            structured,
          gboolean            tasks)
{
  g_auto(GStrv) names = cli_op_field_names (op);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "name");
  json_builder_add_string_value (builder, op->tool);
  json_builder_set_member_name (builder, "description");
  json_builder_add_string_value (builder, op->description);

  json_builder_set_member_name (builder, "inputSchema");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "type");
  json_builder_add_string_value (builder, "object");
  json_builder_set_member_name (builder, "properties");
  json_builder_begin_object (builder);
  for (guint i = 0; names[i] != NULL; i++)
    {
      json_builder_set_member_name (builder, names[i]);
      json_builder_add_value (builder, cli_field_schema (cli_field_lookup (names[i]), caps));
    }
  json_builder_end_object (builder);
  if (op->required != NULL)
    {
      json_builder_set_member_name (builder, "required");
      json_builder_begin_array (builder);
      json_builder_add_string_value (builder, op->required);
      json_builder_end_array (builder);
    }
  json_builder_set_member_name (builder, "additionalProperties");
  json_builder_add_boolean_value (builder, FALSE);
  json_builder_end_object (builder);

  if (op->output_schema != NULL && structured)
    {
      json_builder_set_member_name (builder, "outputSchema");
      json_builder_add_value (builder, op->output_schema ());
    }

  if (op->has_result && structured)
    {
      json_builder_set_member_name (builder, "outputSchema");
      json_builder_add_value (builder, cli_result_schema ());
    }
  /* A task is the client's choice: a short command is better answered
   * at once. */
  if (op->tasks && tasks)
    {
      json_builder_set_member_name (builder, "execution");
      json_builder_begin_object (builder);
      json_builder_set_member_name (builder, "taskSupport");
      json_builder_add_string_value (builder, "optional");
      json_builder_end_object (builder);
    }
  json_builder_end_object (builder);
}

/*
 * cli_mcp_tools_list:
 * @caps: what the backend can do
 * @structured: whether the client takes outputSchema (MCP 2025-06-18)
 * @tasks: whether the client may run tools as tasks (MCP 2025-11-25)
 *
 * The result of `tools/list`: the tools this backend can serve.
 */
JsonNode *
cli_mcp_tools_list (TerretCapabilities caps,
                    gboolean           structured,
                    gboolean           tasks)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  guint n_ops;
  const CliOp *ops = cli_ops_list (&n_ops);

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "tools");
  json_builder_begin_array (builder);
  for (guint i = 0; i < n_ops; i++)
    {
      if (ops[i].tool != NULL && (caps & ops[i].needs) == ops[i].needs)
        add_tool (builder, &ops[i], caps, structured, tasks);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  return json_builder_get_root (builder);
}
