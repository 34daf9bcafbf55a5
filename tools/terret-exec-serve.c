/* terret-exec-serve.c: `terret-exec serve`, requests as JSON Lines
 *
 * One request object per line on stdin, one response line per request on
 * stdout, written when that request is done. The dialect of the stdio
 * server (terret-exec-stdio.c) whose requests name an op and its fields
 * (terret-exec-ops.c) at the top level, and whose responses carry the id,
 * `ok`, and the run fields or the error. docs/cli.md is the protocol
 * reference.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-exec-common.h"
#include "terret-exec-fields.h"
#include "terret-exec-ops.h"
#include "terret-exec-stdio.h"

static void
serve_send (CliStdio     *server,
            JsonNode     *id,
            TerretResult *result,
            const GError *error,
            JsonObject   *data)
{
  g_autoptr(JsonNode) response = cli_response_new (id, result, error);

  if (data != NULL && error == NULL)
    {
      JsonObject *object = json_node_get_object (response);
      JsonObjectIter iter;
      const char *name;
      JsonNode *member;

      json_object_iter_init (&iter, data);
      while (json_object_iter_next (&iter, &name, &member))
        json_object_set_member (object, name, json_node_copy (member));
    }
  cli_stdio_write (server, response);
}

/* A call answers with what it left, whatever it was: a cancelled run
 * answers `cancelled`. */
static void
serve_respond (CliStdio         *server,
               CliCall          *call,
               const CliOutcome *outcome)
{
  serve_send (server, cli_call_get_id (call), outcome->result, outcome->error, outcome->data);
}

/* Every refusal is `invalid-request`, with the id where it was read. */
static void
serve_refuse (CliStdio     *server,
              JsonObject   *message,
              JsonNode     *id,
              CliRefusal    refusal,
              const char   *field,
              const GError *error)
{
  g_autoptr(GError) invalid = NULL;

  if (refusal == CLI_REFUSAL_NOT_JSON)
    invalid = g_error_new (TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                           "not JSON: %s", error->message);

  serve_send (server, id, NULL, invalid != NULL ? invalid : error, NULL);
}

static char *
op_names (void)
{
  g_autoptr(GPtrArray) names = g_ptr_array_new ();
  guint n_ops;
  const CliOp *ops = cli_ops_list (&n_ops);

  for (guint i = 0; i < n_ops; i++)
    g_ptr_array_add (names, (char *) ops[i].name);
  g_ptr_array_add (names, NULL);

  return cli_format_choices ((const char * const *) names->pdata);
}

static void
serve_handle (CliStdio   *server,
              JsonObject *request)
{
  g_autoptr(GError) error = NULL;
  JsonNode *id = json_object_get_member (request, "id");
  const char *name = NULL;
  const CliOp *op;
  CliCall *call;

  if (!cli_json_get_string (request, "op", &name))
    {
      g_set_error (&error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“op” must be a string");
      serve_refuse (server, request, id, CLI_REFUSAL_FIELD, "op", error);
      return;
    }
  if (name == NULL)
    name = "run";

  op = cli_op_lookup (name);
  if (op == NULL)
    {
      g_autofree char *names = op_names ();

      g_set_error (&error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“op” must be %s, not “%s”", names, name);
      serve_refuse (server, request, id, CLI_REFUSAL_FIELD, "op", error);
      return;
    }

  call = cli_call_new (server, id);
  if (!cli_op_start (op, call, request, &error))
    {
      cli_call_drop (call);
      serve_refuse (server, request, id, CLI_REFUSAL_FIELD, NULL, error);
    }
}

static char *
serve_summary (void)
{
  g_autofree char *ops = cli_ops_describe (FALSE);
  g_autofree char *result = cli_result_field_names ();

  return g_strdup_printf ("Reads requests as JSON Lines on stdin and writes one response line per\n"
                          "request on stdout as each completes; runs in different sessions run\n"
                          "concurrently. A request is an object:\n"
                          "  {\"id\": ANY, \"op\": \"run\", \"session\": \"default\", \"command\": \"ls\", \"timeout\": 2.5}\n"
                          "Ops (run is the default) and their fields: %s.\n"
                          "A response carries the id, ok, and for a run or a poll %s;\n"
                          "when ok is false, error {code, message}.\n"
                          "At the end of input the server lets runs in flight finish, closes every\n"
                          "session and exits 0.", ops, result);
}

static const char * const serve_envelope[] = { "id", "op", NULL };

static const CliDialect serve_dialect = {
  .name = "serve",
  .request_word = "request",
  .tools = FALSE,
  .envelope = serve_envelope,
  .cancel_at_end = FALSE,
  .strict_close = FALSE,
  .summary = serve_summary,
  .reference = "docs/cli.md",
  .handle = serve_handle,
  .refuse = serve_refuse,
  .respond = serve_respond,
};

int
cli_serve_main (int    argc,
                char **argv)
{
  return cli_stdio_main (&serve_dialect, argc, argv);
}
