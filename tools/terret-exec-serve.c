/* terret-exec-serve.c: `terret-exec serve`, requests as JSON Lines
 *
 * One request per line on stdin, one response line per request on stdout,
 * written when that request is done. Runs are asynchronous on the main
 * loop, so runs in different sessions proceed concurrently and a slow one
 * holds back no other response. docs/cli.md is the protocol reference.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib-unix.h>
#include <gio/gunixinputstream.h>

#include "terret-exec-common.h"

typedef struct _Server Server;

/* The longest request line served. Requests carry commands, not data: a
 * longer line is answered as invalid, its bytes skipped as they arrive,
 * so a runaway writer cannot grow the server's memory without bound. */
#define MAX_LINE (8 * 1024 * 1024)

/* Bytes asked of stdin per read. */
#define READ_CHUNK (64 * 1024)

struct _Server
{
  TerretExecutor *executor;         /* (owned) */
  GMainLoop *loop;                  /* (owned) */
  GInputStream *input;              /* (owned) */
  GByteArray *pending;              /* (owned) the line read so far */
  GCancellable *read_cancellable;   /* (owned) */
  GQueue runs;                      /* Run, the runs in flight */
  GError *read_error;               /* (owned) (nullable) */
  GError *write_error;              /* (owned) (nullable) */
  int caught_signal;
  guint read_pending : 1;
  guint discarding : 1;             /* past MAX_LINE: skip to the newline */
  guint input_done : 1;
  guint finished : 1;
};

/* A run in flight. The id is kept serialized too: `cancel` finds its
 * target by comparing serialized ids, so 1, "1" and {"n":1} differ. The
 * session lets `cancel` name a run by where it runs instead. */
typedef struct
{
  Server *server;
  JsonNode *id;                     /* (owned) (nullable) */
  char *id_key;                     /* (owned) */
  char *session;                    /* (owned) */
  GCancellable *cancellable;        /* (owned) */
  GList link;                       /* in Server.runs */
} Run;

/*
 * OpFunc:
 *
 * Carries out one op. On success the op has written its response, or a
 * run will when it completes; on failure the dispatcher writes the error
 * response. Fields other than those listed for the op were already
 * refused, and a field's type is the op's to check.
 */
typedef gboolean (*OpFunc) (Server      *server,
                            JsonNode    *id,
                            JsonObject  *request,
                            GError     **error);

typedef struct
{
  const char *name;
  const char * const *fields;       /* accepted besides `id` and `op` */
  OpFunc func;
} Op;

static void server_maybe_finish (Server *server);
static void server_read_next    (Server *server);

static char *
id_key (JsonNode *id)
{
  return id != NULL ? json_to_string (id, FALSE) : g_strdup ("null");
}

static Run *
run_new (Server     *server,
         JsonNode   *id,
         const char *session)
{
  Run *run = g_new0 (Run, 1);

  run->server = server;
  run->id = id != NULL ? json_node_copy (id) : NULL;
  run->id_key = id_key (id);
  run->session = g_strdup (session);
  run->cancellable = g_cancellable_new ();
  run->link.data = run;

  return run;
}

static void
run_free (Run *run)
{
  g_clear_pointer (&run->id, json_node_unref);
  g_clear_pointer (&run->id_key, g_free);
  g_clear_pointer (&run->session, g_free);
  g_clear_object (&run->cancellable);
  g_free (run);
}

static gboolean
run_matches (Run        *run,
             const char *key,
             const char *session)
{
  return (key == NULL || g_str_equal (run->id_key, key)) &&
         (session == NULL || g_str_equal (run->session, session));
}

/* Cancels every run whose id serializes to @key and that runs in
 * @session (either NULL: any). The cancellables are collected first:
 * cancelling may complete a run at once, which takes it out of the queue
 * being walked. */
static guint
server_cancel_runs (Server     *server,
                    const char *key,
                    const char *session)
{
  g_autoptr(GPtrArray) cancellables = g_ptr_array_new_with_free_func (g_object_unref);

  for (GList *l = server->runs.head; l != NULL; l = l->next)
    {
      Run *run = l->data;

      if (run_matches (run, key, session))
        g_ptr_array_add (cancellables, g_object_ref (run->cancellable));
    }

  for (guint i = 0; i < cancellables->len; i++)
    g_cancellable_cancel (g_ptr_array_index (cancellables, i));

  return cancellables->len;
}

/* Stops taking requests: in-flight runs still finish and answer. */
static void
server_stop_reading (Server *server)
{
  server->input_done = TRUE;
  g_cancellable_cancel (server->read_cancellable);
}

static void
server_respond (Server       *server,
                JsonNode     *id,
                TerretResult *result,
                const GError *error)
{
  g_autoptr(JsonNode) response = NULL;

  if (server->write_error != NULL)
    return;

  response = cli_response_new (id, result, error);
  if (!cli_write_json_line (STDOUT_FILENO, response, &server->write_error))
    {
      /* Nobody hears the answers any more: running on would only leave
       * commands working for no one. */
      if (!g_error_matches (server->write_error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE))
        g_printerr ("terret-exec: %s\n", server->write_error->message);
      server_stop_reading (server);
      server_cancel_runs (server, NULL, NULL);
    }
}

static void
run_done (GObject      *object,
          GAsyncResult *result,
          gpointer      user_data)
{
  Run *run = user_data;
  Server *server = run->server;
  g_autoptr(TerretResult) run_result = NULL;
  g_autoptr(GError) error = NULL;

  run_result = terret_executor_run_finish (TERRET_EXECUTOR (object), result, &error);

  g_queue_unlink (&server->runs, &run->link);
  server_respond (server, run->id, run_result, error);
  run_free (run);

  server_maybe_finish (server);
}

/* Ops ------------------------------------------------------------------ */

static gboolean
op_run (Server      *server,
        JsonNode    *id,
        JsonObject  *request,
        GError     **error)
{
  g_autoptr(TerretRequest) run_request = cli_request_from_json (request, error);
  Run *run;

  if (run_request == NULL)
    return FALSE;

  run = run_new (server, id, terret_request_get_session (run_request));
  g_queue_push_tail_link (&server->runs, &run->link);
  terret_executor_run_async (server->executor, run_request, run->cancellable, run_done, run);

  return TRUE;
}

static gboolean
op_input (Server      *server,
          JsonNode    *id,
          JsonObject  *request,
          GError     **error)
{
  g_autoptr(GBytes) data = NULL;
  const char *session, *text, *encoded;

  if (!cli_json_get_string (request, "session", FALSE, &session, error) ||
      !cli_json_get_string (request, "data", FALSE, &text, error) ||
      !cli_json_get_string (request, "data_base64", FALSE, &encoded, error))
    return FALSE;

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

  if (!terret_executor_send_input (server->executor,
                                   session != NULL ? session : TERRET_DEFAULT_SESSION,
                                   data, error))
    return FALSE;

  server_respond (server, id, NULL, NULL);
  return TRUE;
}

static gboolean
op_interrupt (Server      *server,
              JsonNode    *id,
              JsonObject  *request,
              GError     **error)
{
  const char *session;

  if (!cli_json_get_string (request, "session", FALSE, &session, error))
    return FALSE;

  if (!terret_executor_interrupt (server->executor,
                                  session != NULL ? session : TERRET_DEFAULT_SESSION, error))
    return FALSE;

  server_respond (server, id, NULL, NULL);
  return TRUE;
}

static void
poll_done (GObject      *object,
           GAsyncResult *result,
           gpointer      user_data)
{
  Run *run = user_data;
  Server *server = run->server;
  g_autoptr(TerretResult) poll_result = NULL;
  g_autoptr(GError) error = NULL;

  poll_result = terret_executor_poll_finish (TERRET_EXECUTOR (object), result, &error);

  g_queue_unlink (&server->runs, &run->link);
  server_respond (server, run->id, poll_result, error);
  run_free (run);

  server_maybe_finish (server);
}

/* A poll waits like a run: it is in flight (and cancellable by its id)
 * until it answers. */
static gboolean
op_poll (Server      *server,
         JsonNode    *id,
         JsonObject  *request,
         GError     **error)
{
  const char *session;
  double wait = 0;
  Run *run;

  if (!cli_json_get_string (request, "session", FALSE, &session, error) ||
      !cli_json_get_seconds (request, "wait", &wait, error))
    return FALSE;

  run = run_new (server, id, session != NULL ? session : TERRET_DEFAULT_SESSION);
  g_queue_push_tail_link (&server->runs, &run->link);
  terret_executor_poll_async (server->executor,
                              session != NULL ? session : TERRET_DEFAULT_SESSION,
                              wait, run->cancellable, poll_done, run);

  return TRUE;
}

static gboolean
op_close (Server      *server,
          JsonNode    *id,
          JsonObject  *request,
          GError     **error)
{
  const char *session;

  if (!cli_json_get_string (request, "session", FALSE, &session, error))
    return FALSE;

  terret_executor_close_session (server->executor,
                                 session != NULL ? session : TERRET_DEFAULT_SESSION);
  server_respond (server, id, NULL, NULL);

  return TRUE;
}

static gboolean
op_close_all (Server      *server,
              JsonNode    *id,
              JsonObject  *request,
              GError     **error)
{
  terret_executor_close_all (server->executor);
  server_respond (server, id, NULL, NULL);

  return TRUE;
}

/* `target` names a run by its id, `session` by where it runs; with both,
 * the target must run in that session, so a client that mixed up its
 * bookkeeping is told rather than having some other run cancelled. */
static gboolean
op_cancel (Server      *server,
           JsonNode    *id,
           JsonObject  *request,
           GError     **error)
{
  JsonNode *target = json_object_get_member (request, "target");
  g_autofree char *key = NULL;
  const char *session;
  const char *elsewhere = NULL;

  if (!cli_json_get_string (request, "session", FALSE, &session, error))
    return FALSE;

  if (target == NULL && session == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "“target” (the id of the run to cancel) or “session” is required");
      return FALSE;
    }

  if (target != NULL)
    key = id_key (target);

  /* Acknowledged first, so the answer to the cancel precedes the
   * cancelled run's own when the backend completes it at once. */
  for (GList *l = server->runs.head; l != NULL; l = l->next)
    {
      Run *run = l->data;

      if (run_matches (run, key, session))
        {
          server_respond (server, id, NULL, NULL);
          server_cancel_runs (server, key, session);
          return TRUE;
        }
      if (run_matches (run, key, NULL))
        elsewhere = run->session;
    }

  if (key != NULL && session != NULL && elsewhere != NULL)
    g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                 "the run with id %s is in session “%s”, not “%s”", key, elsewhere, session);
  else if (key != NULL)
    g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                 "no run with id %s is in flight", key);
  else
    g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                 "nothing is in flight in session “%s”", session);
  return FALSE;
}

static const char * const run_fields[] = { "session", "command", "timeout", "on_timeout",
                                            "capture", "keep_full_output", NULL };
static const char * const input_fields[] = { "session", "data", "data_base64", NULL };
static const char * const poll_fields[] = { "session", "wait", NULL };
static const char * const close_fields[] = { "session", NULL };
static const char * const no_fields[] = { NULL };
static const char * const cancel_fields[] = { "target", "session", NULL };

static const Op ops[] = {
  { "run", run_fields, op_run },
  { "close", close_fields, op_close },
  { "close-all", no_fields, op_close_all },
  { "cancel", cancel_fields, op_cancel },
  { "input", input_fields, op_input },
  { "interrupt", close_fields, op_interrupt },
  { "poll", poll_fields, op_poll },
};

static const Op *
find_op (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    {
      if (g_str_equal (ops[i].name, name))
        return &ops[i];
    }

  return NULL;
}

static char *
list_ops (void)
{
  g_autoptr(GString) names = g_string_new (NULL);

  for (guint i = 0; i < G_N_ELEMENTS (ops); i++)
    g_string_append_printf (names, "%s%s", i ? ", " : "", ops[i].name);

  return g_string_free (g_steal_pointer (&names), FALSE);
}

/* A field the op does not know is refused rather than ignored: a client
 * relying on a field this server predates learns so at once. */
static gboolean
check_fields (const Op    *op,
              JsonObject  *request,
              GError     **error)
{
  g_autoptr(GList) members = json_object_get_members (request);

  for (GList *l = members; l != NULL; l = l->next)
    {
      const char *name = l->data;

      if (g_str_equal (name, "id") || g_str_equal (name, "op") ||
          g_strv_contains (op->fields, name))
        continue;

      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "unknown field “%s” for op “%s”", name, op->name);
      return FALSE;
    }

  return TRUE;
}

static gboolean
dispatch (Server      *server,
          JsonNode    *id,
          JsonObject  *request,
          GError     **error)
{
  const char *op_name = NULL;
  const Op *op;

  if (!cli_json_get_string (request, "op", FALSE, &op_name, error))
    return FALSE;

  op = find_op (op_name != NULL ? op_name : "run");
  if (op == NULL)
    {
      g_autofree char *names = list_ops ();

      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "unknown op “%s”; ops: %s", op_name, names);
      return FALSE;
    }

  if (!check_fields (op, request, error))
    return FALSE;

  return op->func (server, id, request, error);
}

static gboolean
is_blank (const char *line,
          gsize       len)
{
  for (gsize i = 0; i < len; i++)
    {
      if (!g_ascii_isspace (line[i]))
        return FALSE;
    }

  return TRUE;
}

/* json-glib decodes the escape \u0000 into a NUL that ends the string
 * there, so "echo a\u0000; rm x" would run as "echo a". A line holding
 * the escape outside an escaped backslash is refused as a whole. */
static gboolean
has_nul_escape (const char *line,
                gsize       len)
{
  for (gsize i = 0; i + 5 < len; i++)
    {
      gsize backslashes = 0;

      if (line[i] != '\\' || memcmp (line + i + 1, "u0000", 5) != 0)
        continue;
      for (gsize j = i; j > 0 && line[j - 1] == '\\'; j--)
        backslashes++;
      if (backslashes % 2 == 0)
        return TRUE;
    }

  return FALSE;
}

static void
handle_line (Server     *server,
             const char *line,
             gsize       len)
{
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  JsonNode *root;
  JsonNode *id = NULL;

  if (is_blank (line, len))
    return;

  if (!json_parser_load_from_data (parser, line, len, &error))
    {
      g_autoptr(GError) invalid = g_error_new (TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                                               "not JSON: %s", error->message);

      server_respond (server, NULL, NULL, invalid);
      return;
    }

  if (has_nul_escape (line, len))
    {
      g_set_error (&error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "a request must not contain NUL characters (\\u0000)");
      server_respond (server, NULL, NULL, error);
      return;
    }

  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (&error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "a request must be a JSON object");
      server_respond (server, NULL, NULL, error);
      return;
    }

  id = json_object_get_member (json_node_get_object (root), "id");
  if (!dispatch (server, id, json_node_get_object (root), &error))
    server_respond (server, id, NULL, error);
}

/* Input ---------------------------------------------------------------- */

/* One line is complete (its newline, or the end of input, came). */
static void
line_complete (Server *server)
{
  if (server->discarding)
    {
      g_autoptr(GError) error = g_error_new (TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                                             "a request line must be shorter than %d bytes",
                                             MAX_LINE);

      server_respond (server, NULL, NULL, error);
      server->discarding = FALSE;
    }
  else
    handle_line (server, (const char *)server->pending->data, server->pending->len);

  g_byte_array_set_size (server->pending, 0);
}

static void
take_input (Server       *server,
            const guint8 *data,
            gsize         len)
{
  while (len > 0 && !server->input_done)
    {
      const guint8 *newline = memchr (data, '\n', len);
      gsize n = newline != NULL ? (gsize)(newline - data) : len;

      if (!server->discarding && server->pending->len + n >= MAX_LINE)
        {
          server->discarding = TRUE;
          g_byte_array_set_size (server->pending, 0);
        }
      if (!server->discarding)
        g_byte_array_append (server->pending, data, n);

      if (newline == NULL)
        return;

      line_complete (server);
      data += n + 1;
      len -= n + 1;
    }
}

static void
chunk_read (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  Server *server = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = NULL;

  server->read_pending = FALSE;
  bytes = g_input_stream_read_bytes_finish (G_INPUT_STREAM (object), result, &error);

  if (bytes == NULL)
    {
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          g_printerr ("terret-exec: cannot read requests: %s\n", error->message);
          server->read_error = g_steal_pointer (&error);
        }
      server->input_done = TRUE;
    }
  else if (g_bytes_get_size (bytes) == 0)
    {
      /* A last line without its newline is still a request. */
      if (!server->input_done && (server->pending->len > 0 || server->discarding))
        line_complete (server);
      server->input_done = TRUE;
    }
  else
    take_input (server, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes));

  if (server->input_done)
    server_maybe_finish (server);
  else
    server_read_next (server);
}

static void
server_read_next (Server *server)
{
  server->read_pending = TRUE;
  g_input_stream_read_bytes_async (server->input, READ_CHUNK, G_PRIORITY_DEFAULT,
                                   server->read_cancellable, chunk_read, server);
}

/* Once input is over and every run has answered, every session is
 * closed so nothing the server started outlives it. */
static void
server_maybe_finish (Server *server)
{
  if (server->finished || !server->input_done || server->read_pending ||
      server->runs.length > 0)
    return;

  server->finished = TRUE;
  terret_executor_close_all (server->executor);
  g_main_loop_quit (server->loop);
}

static gboolean
on_signal (Server *server,
           int     signum)
{
  if (server->caught_signal == 0)
    server->caught_signal = signum;

  server_stop_reading (server);
  server_cancel_runs (server, NULL, NULL);
  server_maybe_finish (server);

  return G_SOURCE_CONTINUE;
}

static gboolean
on_sigint (gpointer user_data)
{
  return on_signal (user_data, SIGINT);
}

static gboolean
on_sigterm (gpointer user_data)
{
  return on_signal (user_data, SIGTERM);
}

static const char serve_summary[] =
  "Reads requests as JSON Lines on stdin and writes one response line per\n"
  "request on stdout as each completes; runs in different sessions run\n"
  "concurrently. A request is an object:\n"
  "  {\"id\": ANY, \"op\": \"run\", \"session\": \"default\", \"command\": \"ls\", \"timeout\": 2.5}\n"
  "Ops: run (default; on_timeout: kill or detach; capture: head, tail or\n"
  "head-tail; keep_full_output: true), close (session), close-all,\n"
  "cancel (target: a run's or poll's id, and/or session: what runs there),\n"
  "input (session, data or data_base64), interrupt (session), poll (session,\n"
  "wait: seconds).\n"
  "A response carries the id, ok, and for a run status, signal, stdout or\n"
  "stdout_base64, stderr or stderr_base64, notice, timed_out, running, dropped,\n"
  "stdout_dropped, omitted_at, full_output, stderr_dropped, stderr_omitted_at,\n"
  "stderr_full_output, cwd;\n"
  "when ok is false, error {code, message}.\n"
  "At the end of input the server lets runs in flight finish, closes every\n"
  "session and exits 0.";

int
cli_serve_main (int    argc,
                char **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *backend = NULL;
  g_auto(GStrv) settings = NULL;
  g_auto(GStrv) rest = NULL;
  Server server = { 0 };
  guint sigint_id, sigterm_id;
  int status;
  const GOptionEntry entries[] = {
    { "backend", 'b', 0, G_OPTION_ARG_STRING, &backend,
      "Use the backend NAME instead of the configured one", "NAME" },
    { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &settings,
      "Set a backend setting (repeatable; see terret-exec --list-backends)", "KEY=VALUE" },
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &rest, NULL, NULL },
    G_OPTION_ENTRY_NULL
  };

  /* The usage line names the subcommand, not just the program. */
  g_set_prgname ("terret-exec serve");
  context = g_option_context_new (NULL);
  g_option_context_set_summary (context, serve_summary);
  g_option_context_set_description (context,
                                    "Exit status: 0 at the end of input, 125 when the executor cannot be\n"
                                    "created, 128+N after signal N (runs in flight are cancelled and\n"
                                    "answered first), 141 when responses cannot be written, 1 when\n"
                                    "requests cannot be read.");
  g_option_context_add_main_entries (context, entries, NULL);

  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("terret-exec serve: %s\nTry “terret-exec serve --help”.\n", error->message);
      return CLI_EXIT_NOT_RUN;
    }

  if (rest != NULL && rest[0] != NULL)
    {
      g_printerr ("terret-exec serve: unexpected argument “%s”\n"
                  "Try “terret-exec serve --help”.\n", rest[0]);
      return CLI_EXIT_NOT_RUN;
    }

  server.executor = terret_executor_new_with_settings (backend, (const char * const *)settings, &error);
  if (server.executor == NULL)
    {
      g_printerr ("terret-exec: %s\n", error->message);
      return CLI_EXIT_NOT_RUN;
    }

  server.loop = g_main_loop_new (NULL, FALSE);
  server.read_cancellable = g_cancellable_new ();
  g_queue_init (&server.runs);

  server.input = g_unix_input_stream_new (STDIN_FILENO, FALSE);
  server.pending = g_byte_array_new ();

  sigint_id = g_unix_signal_add (SIGINT, on_sigint, &server);
  sigterm_id = g_unix_signal_add (SIGTERM, on_sigterm, &server);

  server_read_next (&server);
  g_main_loop_run (server.loop);

  g_source_remove (sigint_id);
  g_source_remove (sigterm_id);

  if (server.caught_signal != 0)
    status = CLI_EXIT_SIGNAL_BASE + server.caught_signal;
  else if (server.write_error != NULL)
    status = CLI_EXIT_SIGNAL_BASE + SIGPIPE;
  else if (server.read_error != NULL)
    status = EXIT_FAILURE;
  else
    status = EXIT_SUCCESS;

  g_assert (server.runs.length == 0);
  g_clear_object (&server.input);
  g_clear_pointer (&server.pending, g_byte_array_unref);
  g_clear_object (&server.read_cancellable);
  g_clear_object (&server.executor);
  g_clear_pointer (&server.loop, g_main_loop_unref);
  g_clear_error (&server.read_error);
  g_clear_error (&server.write_error);

  return status;
}
