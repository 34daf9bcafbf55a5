/* terret-exec-stdio.c: the stdio server under `serve` and `mcp`
 *
 * One loop for both fronts. Requests are lines of JSON on stdin, each
 * bounded in length; answers are lines on stdout, each written whole. A
 * request being carried out is a call, in flight on the main loop until
 * it answers, so calls in different sessions proceed concurrently and a
 * slow one holds back no other answer. The end of input, SIGINT and
 * SIGTERM end the server the same way for both: no more requests are
 * read, the calls in flight end, every session is closed so nothing the
 * server started outlives it, and the exit status says why. What a line
 * means and what an answer looks like is the dialect's: JSON Lines in
 * terret-exec-serve.c, JSON-RPC in terret-exec-mcp.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib-unix.h>
#include <gio/gio.h>

#include "terret-exec-common.h"
#include "terret-exec-stdio.h"

/* The longest line read. Requests carry commands, not data: a longer
 * line is refused, its bytes skipped as they arrive, so a runaway writer
 * cannot grow the server's memory without bound. */
#define MAX_LINE (8 * 1024 * 1024)

/* Bytes asked of stdin per read. */
#define READ_CHUNK (64 * 1024)

struct _CliStdio
{
  const CliDialect *dialect;
  TerretExecutor *executor;         /* (owned) */
  GMainLoop *loop;                  /* (owned) */
  guint input_source;               /* the watch on stdin, while reading */
  GByteArray *pending;              /* (owned) the line read so far */
  GQueue calls;                     /* CliCall, in flight */
  GHashTable *sessions;             /* (owned) the session keys runs named */
  CliOutputs *outputs;              /* (owned) the full-output files runs left */
  gboolean keep_full_output;        /* runs keep it unless they say otherwise */
  gpointer data;                    /* (owned) the dialect's */
  GDestroyNotify data_destroy;
  GError *read_error;               /* (owned) (nullable) */
  GError *write_error;              /* (owned) (nullable) */
  int caught_signal;
  guint read_pending : 1;
  guint discarding : 1;             /* past MAX_LINE: skip to the newline */
  guint input_done : 1;
  guint finished : 1;
};

/* A call in flight. Its id is kept serialized too, as its key: calls are
 * found by comparing keys, so 1, "1" and {"n":1} differ. The session lets
 * a call be found by where it runs instead. */
struct _CliCall
{
  CliStdio *server;
  JsonNode *id;                     /* (owned) (nullable) */
  char *key;                        /* (owned) */
  char *session;                    /* (owned) (nullable) */
  GCancellable *cancellable;        /* (owned) */
  CliProgressFunc progress;
  gpointer data;                    /* (owned) the dialect's */
  GDestroyNotify data_destroy;
  GList link;                       /* in CliStdio.calls */
};

static void server_maybe_finish (CliStdio *server);

/* Server --------------------------------------------------------------- */

/* Puts @data, owned with @destroy, in a dialect's slot, freeing what was
 * there. */
static void
set_owned (gpointer       *slot,
           GDestroyNotify *slot_destroy,
           gpointer        data,
           GDestroyNotify  destroy)
{
  if (*slot_destroy != NULL && *slot != NULL)
    (*slot_destroy) (*slot);
  *slot = data;
  *slot_destroy = destroy;
}

const CliDialect *
cli_stdio_get_dialect (CliStdio *server)
{
  return server->dialect;
}

TerretExecutor *
cli_stdio_get_executor (CliStdio *server)
{
  return server->executor;
}

/* The session keys runs named (a set): `close` tells a mistyped one from
 * a session that never was, which the executor cannot. */
GHashTable *
cli_stdio_get_sessions (CliStdio *server)
{
  return server->sessions;
}

/* The full-output files of the runs answered, for `read`. */
CliOutputs *
cli_stdio_get_outputs (CliStdio *server)
{
  return server->outputs;
}

gboolean
cli_stdio_keeps_full_output (CliStdio *server)
{
  return server->keep_full_output;
}

gpointer
cli_stdio_get_data (CliStdio *server)
{
  return server->data;
}

void
cli_stdio_set_data (CliStdio       *server,
                    gpointer        data,
                    GDestroyNotify  destroy)
{
  set_owned (&server->data, &server->data_destroy, data, destroy);
}

/* The calls in flight, oldest first; not to be changed. */
GList *
cli_stdio_get_calls (CliStdio *server)
{
  return server->calls.head;
}

gboolean
cli_stdio_has_call (CliStdio   *server,
                    const char *key)
{
  for (GList *l = server->calls.head; l != NULL; l = l->next)
    {
      if (g_str_equal (((CliCall *) l->data)->key, key))
        return TRUE;
    }

  return FALSE;
}

/*
 * cli_stdio_cancel_calls:
 * @key: (nullable): a serialized id, or %NULL for any
 * @session: (nullable): a session key, or %NULL for any
 *
 * Cancels every call in flight with that id in that session, and returns
 * how many. The cancellables are collected first: cancelling may
 * complete a call at once, which takes it out of the queue being walked.
 */
guint
cli_stdio_cancel_calls (CliStdio   *server,
                        const char *key,
                        const char *session)
{
  g_autoptr(GPtrArray) cancellables = g_ptr_array_new_with_free_func (g_object_unref);

  for (GList *l = server->calls.head; l != NULL; l = l->next)
    {
      CliCall *call = l->data;

      if ((key == NULL || g_str_equal (call->key, key)) &&
          (session == NULL || g_strcmp0 (call->session, session) == 0))
        g_ptr_array_add (cancellables, g_object_ref (call->cancellable));
    }

  for (guint i = 0; i < cancellables->len; i++)
    g_cancellable_cancel (g_ptr_array_index (cancellables, i));

  return cancellables->len;
}

/* Stops taking requests, and ends the calls in flight: they still
 * answer as their dialect does for a cancelled call. */
static void
server_stop (CliStdio *server)
{
  server->input_done = TRUE;
  if (server->input_source != 0)
    {
      g_source_remove (server->input_source);
      server->input_source = 0;
      server->read_pending = FALSE;
    }
  cli_stdio_cancel_calls (server, NULL, NULL);
}

/* One message as one line. Nobody hears the answers once one cannot be
 * written: running on would only leave commands working for no one. */
void
cli_stdio_write (CliStdio *server,
                 JsonNode *message)
{
  if (server->write_error != NULL)
    return;

  if (!cli_write_json_line (STDOUT_FILENO, message, &server->write_error))
    {
      if (!g_error_matches (server->write_error, G_IO_ERROR, G_IO_ERROR_BROKEN_PIPE))
        g_printerr ("terret-exec: %s\n", server->write_error->message);
      server_stop (server);
    }
}

/* Calls ---------------------------------------------------------------- */

char *
cli_id_key (JsonNode *id)
{
  return id != NULL ? json_to_string (id, FALSE) : g_strdup ("null");
}

/*
 * cli_call_new:
 * @id: (nullable): the request's id, copied
 *
 * A call, in flight from now until cli_call_return() or cli_call_drop().
 */
CliCall *
cli_call_new (CliStdio *server,
              JsonNode *id)
{
  CliCall *call = g_new0 (CliCall, 1);

  call->server = server;
  call->id = id != NULL ? json_node_copy (id) : NULL;
  call->key = cli_id_key (id);
  call->cancellable = g_cancellable_new ();
  call->link.data = call;
  g_queue_push_tail_link (&server->calls, &call->link);

  return call;
}

static void
call_free (CliCall *call)
{
  set_owned (&call->data, &call->data_destroy, NULL, NULL);
  g_clear_pointer (&call->id, json_node_unref);
  g_clear_pointer (&call->key, g_free);
  g_clear_pointer (&call->session, g_free);
  g_clear_object (&call->cancellable);
  g_free (call);
}

CliStdio *
cli_call_get_server (CliCall *call)
{
  return call->server;
}

JsonNode *
cli_call_get_id (CliCall *call)
{
  return call->id;
}

const char *
cli_call_get_key (CliCall *call)
{
  return call->key;
}

const char *
cli_call_get_session (CliCall *call)
{
  return call->session;
}

/* Where the call runs, for a cancel that names the session. */
void
cli_call_set_session (CliCall    *call,
                      const char *session)
{
  g_free (call->session);
  call->session = g_strdup (session);
}

GCancellable *
cli_call_get_cancellable (CliCall *call)
{
  return call->cancellable;
}

CliProgressFunc
cli_call_get_progress (CliCall *call)
{
  return call->progress;
}

/* The dialect's, for a call that reports its command's output as it
 * arrives. */
void
cli_call_set_progress (CliCall         *call,
                       CliProgressFunc  progress)
{
  call->progress = progress;
}

gpointer
cli_call_get_data (CliCall *call)
{
  return call->data;
}

void
cli_call_set_data (CliCall        *call,
                   gpointer        data,
                   GDestroyNotify  destroy)
{
  set_owned (&call->data, &call->data_destroy, data, destroy);
}

/*
 * cli_call_return:
 * @result: (nullable): what the command left behind
 * @error: (nullable): why nothing was done
 * @text: (nullable): what was done, in words
 *
 * Ends @call: its dialect answers, and it leaves flight and is freed.
 */
void
cli_call_return (CliCall      *call,
                 TerretResult *result,
                 const GError *error,
                 const char   *text)
{
  CliStdio *server = call->server;
  CliOutcome outcome = { result, error, text, NULL };

  g_queue_unlink (&server->calls, &call->link);
  server->dialect->respond (server, call, &outcome);
  call_free (call);

  server_maybe_finish (server);
}

/*
 * cli_call_return_data:
 * @data: the members of the answer
 * @text: the same in words, for a model
 *
 * Ends @call with what an op that runs nothing found.
 */
void
cli_call_return_data (CliCall    *call,
                      JsonObject *data,
                      const char *text)
{
  CliStdio *server = call->server;
  CliOutcome outcome = { NULL, NULL, text, data };

  g_queue_unlink (&server->calls, &call->link);
  server->dialect->respond (server, call, &outcome);
  call_free (call);

  server_maybe_finish (server);
}

/* Ends @call unanswered: it was refused before it started, and the
 * dialect answers the refusal. */
void
cli_call_drop (CliCall *call)
{
  CliStdio *server = call->server;

  g_queue_unlink (&server->calls, &call->link);
  call_free (call);

  server_maybe_finish (server);
}

/* Lines ---------------------------------------------------------------- */

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

/* A copy of @line with each escape \u0000 (one not itself escaped) made
 * \u0001, or NULL when there is none. */
static char *
mark_nul_escapes (const char *line,
                  gsize       len)
{
  char *marked = NULL;

  for (gsize i = 0; i + 5 < len; i++)
    {
      gsize backslashes = 0;

      if (line[i] != '\\' || memcmp (line + i + 1, "u0000", 5) != 0)
        continue;
      for (gsize j = i; j > 0 && line[j - 1] == '\\'; j--)
        backslashes++;
      if (backslashes % 2 != 0)
        continue;

      if (marked == NULL)
        marked = g_strndup (line, len);
      marked[i + 5] = '1';
    }

  return marked;
}

static void
append_member_name (GString    *path,
                    const char *name)
{
  if (path->len > 0)
    g_string_append_c (path, '.');
  /* A name that held the NUL shows it where it was. */
  for (const char *p = name; *p != '\0'; p++)
    {
      if (*p == '\001')
        g_string_append (path, "\\u0000");
      else
        g_string_append_c (path, *p);
    }
}

/* Appends to @path where @cut and @marked first differ: the member or
 * element that held a NUL, down to the string that held it. */
static void
append_difference (JsonNode *cut,
                   JsonNode *marked,
                   GString  *path)
{
  if (JSON_NODE_HOLDS_OBJECT (cut) && JSON_NODE_HOLDS_OBJECT (marked))
    {
      JsonObject *cut_object = json_node_get_object (cut);
      JsonObject *marked_object = json_node_get_object (marked);
      g_autoptr(GList) names = json_object_get_members (marked_object);

      for (GList *l = names; l != NULL; l = l->next)
        {
          JsonNode *a = json_object_get_member (cut_object, l->data);
          JsonNode *b = json_object_get_member (marked_object, l->data);

          if (a != NULL && json_node_equal (a, b))
            continue;
          append_member_name (path, l->data);
          if (a != NULL)
            append_difference (a, b, path);
          return;
        }
    }
  else if (JSON_NODE_HOLDS_ARRAY (cut) && JSON_NODE_HOLDS_ARRAY (marked))
    {
      JsonArray *a = json_node_get_array (cut);
      JsonArray *b = json_node_get_array (marked);

      for (guint i = 0; i < json_array_get_length (a) && i < json_array_get_length (b); i++)
        {
          if (json_node_equal (json_array_get_element (a, i), json_array_get_element (b, i)))
            continue;
          g_string_append_printf (path, "[%u]", i);
          append_difference (json_array_get_element (a, i), json_array_get_element (b, i), path);
          return;
        }
    }
}

/*
 * find_nul:
 * @id_readable: (out): whether the object's id held no NUL
 *
 * json-glib decodes the escape \u0000 into a NUL that ends the string
 * there, so "echo a\u0000; rm x" would run as "echo a": a line holding
 * the escape is refused. To name the field that holds it, the line is
 * read again with the escape as \u0001 and the two compared. Returns that
 * field's path (`command`, `params.arguments.command`; empty when no field
 * differs), or NULL when the line holds no NUL.
 */
static char *
find_nul (const char *line,
          gsize       len,
          JsonNode   *root,
          gboolean   *id_readable)
{
  g_autofree char *marked_line = mark_nul_escapes (line, len);
  g_autoptr(JsonNode) marked = NULL;
  GString *path;

  *id_readable = TRUE;
  if (marked_line == NULL)
    return NULL;

  path = g_string_new (NULL);
  /* The same JSON but for an escape's digit: it parses too. */
  marked = json_from_string (marked_line, NULL);
  if (marked != NULL)
    {
      JsonNode *cut_id = json_object_get_member (json_node_get_object (root), "id");
      JsonNode *marked_id = json_object_get_member (json_node_get_object (marked), "id");

      *id_readable = cut_id == NULL || marked_id == NULL || json_node_equal (cut_id, marked_id);
      append_difference (root, marked, path);
    }
  else
    *id_readable = FALSE;

  return g_string_free (path, FALSE);
}

static void
handle_line (CliStdio   *server,
             const char *line,
             gsize       len)
{
  const CliDialect *dialect = server->dialect;
  g_autoptr(JsonParser) parser = json_parser_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *nul = NULL;
  gboolean id_readable;
  JsonObject *object;
  JsonNode *root;

  if (is_blank (line, len))
    return;

  if (!json_parser_load_from_data (parser, line, len, &error))
    {
      dialect->refuse (server, NULL, NULL, CLI_REFUSAL_NOT_JSON, NULL, error);
      return;
    }

  root = json_parser_get_root (parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT (root))
    {
      g_set_error (&error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "a %s must be a JSON object", dialect->request_word);
      dialect->refuse (server, NULL, NULL, CLI_REFUSAL_NOT_OBJECT, NULL, error);
      return;
    }

  object = json_node_get_object (root);
  nul = find_nul (line, len, root, &id_readable);
  if (nul != NULL)
    {
      /* Where a later member of the same name hid the NUL, no field
       * differs: the line is refused all the same. */
      if (*nul != '\0')
        g_set_error (&error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                     "“%s” must not contain NUL characters (\\u0000)", nul);
      else
        g_set_error (&error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                     "a %s must not contain NUL characters (\\u0000)", dialect->request_word);
      dialect->refuse (server, object, id_readable ? json_object_get_member (object, "id") : NULL,
                       CLI_REFUSAL_FIELD, *nul != '\0' ? nul : NULL, error);
      return;
    }

  dialect->handle (server, object);
}

/* Input ---------------------------------------------------------------- */

/* One line is complete (its newline, or the end of input, came). */
static void
line_complete (CliStdio *server)
{
  if (server->discarding)
    {
      g_autoptr(GError) error = g_error_new (TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                                             "a %s line must be shorter than %d bytes",
                                             server->dialect->request_word, MAX_LINE);

      server->dialect->refuse (server, NULL, NULL, CLI_REFUSAL_TOO_LONG, NULL, error);
      server->discarding = FALSE;
    }
  else
    handle_line (server, (const char *)server->pending->data, server->pending->len);

  g_byte_array_set_size (server->pending, 0);
}

static void
take_input (CliStdio     *server,
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

/* The end of input: serve's calls answer first; an MCP host that closes
 * the server's input is shutting it down, and its calls end with it. */
static void
input_ended (CliStdio *server)
{
  if (server->dialect->cancel_at_end)
    server_stop (server);
  else
    server->input_done = TRUE;
}

/* Standard input is watched by one source for the server's whole life,
 * and read with read(2) when it is ready: an asynchronous stream read
 * per chunk would attach and destroy its own sources every time, which
 * costs a request several wakeups of the loop and as many system calls. */
static gboolean
input_ready (int          fd,
             GIOCondition condition,
             gpointer     user_data)
{
  CliStdio *server = user_data;
  guint8 buffer[READ_CHUNK];
  gssize n;

  do
    n = read (fd, buffer, sizeof buffer);
  while (n < 0 && errno == EINTR);

  if (n < 0 && errno == EAGAIN)
    return G_SOURCE_CONTINUE;
  if (n < 0)
    {
      int saved_errno = errno;

      g_printerr ("terret-exec: cannot read %ss: %s\n", server->dialect->request_word,
                  g_strerror (saved_errno));
      server->read_error = g_error_new (G_IO_ERROR, g_io_error_from_errno (saved_errno),
                                        "%s", g_strerror (saved_errno));
      input_ended (server);
      server->input_done = TRUE;
    }
  else if (n == 0)
    {
      /* A last line without its newline is still a request. */
      if (!server->input_done && (server->pending->len > 0 || server->discarding))
        line_complete (server);
      if (!server->input_done)
        input_ended (server);
      server->input_done = TRUE;
    }
  else
    take_input (server, buffer, n);

  if (!server->input_done)
    return G_SOURCE_CONTINUE;

  /* server_stop() may have removed the watch already. */
  server->input_source = 0;
  server->read_pending = FALSE;
  server_maybe_finish (server);
  return G_SOURCE_REMOVE;
}

/* The watch may recurse: GLib takes a source's descriptors out of the
 * poll set around each dispatch of one that may not, and before 2.76
 * wakes the context for each change, two eventfd writes and a spare loop
 * iteration a request. Nothing the server does from a request iterates
 * the loop. */
static void
server_read_start (CliStdio *server)
{
  g_autoptr(GSource) source = g_unix_fd_source_new (STDIN_FILENO, G_IO_IN | G_IO_HUP | G_IO_ERR);

  g_source_set_static_name (source, "[terret-exec] requests");
  g_source_set_callback (source, G_SOURCE_FUNC (input_ready), server, NULL);
  g_source_set_can_recurse (source, TRUE);
  server->read_pending = TRUE;
  server->input_source = g_source_attach (source, NULL);
}

/* Once input is over and every call has answered, every session is
 * closed so nothing the server started outlives it. */
static void
server_maybe_finish (CliStdio *server)
{
  if (server->finished || !server->input_done || server->read_pending ||
      server->calls.length > 0)
    return;

  server->finished = TRUE;
  terret_executor_close_all (server->executor);
  g_hash_table_remove_all (server->sessions);
  cli_outputs_forget_all (server->outputs);
  g_main_loop_quit (server->loop);
}

/* Signals -------------------------------------------------------------- */

/* SIGINT and SIGTERM end the server as the end of input does, but cancel
 * what is in flight. SIGHUP keeps its default: the server ends at once,
 * and the launcher ends what it started. */
static const int stop_signals[] = { SIGINT, SIGTERM };

typedef struct
{
  CliStdio *server;
  int signum;
  guint source_id;
} SignalWatch;

static gboolean
on_signal (gpointer user_data)
{
  SignalWatch *watch = user_data;
  CliStdio *server = watch->server;

  if (server->caught_signal == 0)
    server->caught_signal = watch->signum;

  server_stop (server);
  server_maybe_finish (server);

  return G_SOURCE_CONTINUE;
}

/* Main ----------------------------------------------------------------- */

static int
serve (CliStdio *server)
{
  SignalWatch watches[G_N_ELEMENTS (stop_signals)];

  server->loop = g_main_loop_new (NULL, FALSE);
  server->pending = g_byte_array_new ();
  server->sessions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  server->outputs = cli_outputs_new (server->keep_full_output);
  g_queue_init (&server->calls);

  for (guint i = 0; i < G_N_ELEMENTS (stop_signals); i++)
    {
      watches[i].server = server;
      watches[i].signum = stop_signals[i];
      watches[i].source_id = g_unix_signal_add (stop_signals[i], on_signal, &watches[i]);
    }

  server_read_start (server);
  g_main_loop_run (server->loop);

  for (guint i = 0; i < G_N_ELEMENTS (stop_signals); i++)
    g_source_remove (watches[i].source_id);

  g_assert (server->calls.length == 0);
  cli_stdio_set_data (server, NULL, NULL);
  g_clear_pointer (&server->sessions, g_hash_table_unref);
  g_clear_pointer (&server->outputs, cli_outputs_free);
  g_clear_pointer (&server->pending, g_byte_array_unref);
  g_clear_handle_id (&server->input_source, g_source_remove);
  g_clear_pointer (&server->loop, g_main_loop_unref);

  if (server->caught_signal != 0)
    return CLI_EXIT_SIGNAL_BASE + server->caught_signal;
  if (server->write_error != NULL)
    return CLI_EXIT_SIGNAL_BASE + SIGPIPE;
  if (server->read_error != NULL)
    return EXIT_FAILURE;
  return EXIT_SUCCESS;
}

/* @text with its lines longer than a terminal's broken at spaces: the
 * summaries list the ops and fields from their tables. An indented line
 * is an example, kept whole. */
static char *
wrap_lines (const char *text)
{
  g_auto(GStrv) lines = g_strsplit (text, "\n", -1);
  GString *wrapped = g_string_new (NULL);

  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) words = g_strsplit (lines[i], " ", -1);
      gsize width = 0;

      if (i > 0)
        g_string_append_c (wrapped, '\n');
      if (g_str_has_prefix (lines[i], "  "))
        {
          g_string_append (wrapped, lines[i]);
          continue;
        }
      for (guint j = 0; words[j] != NULL; j++)
        {
          gsize len = strlen (words[j]);

          if (j > 0 && width + 1 + len > 76)
            {
              g_string_append_c (wrapped, '\n');
              width = 0;
            }
          else if (j > 0)
            {
              g_string_append_c (wrapped, ' ');
              width++;
            }
          g_string_append (wrapped, words[j]);
          width += g_utf8_strlen (words[j], -1);
        }
    }

  return g_string_free (wrapped, FALSE);
}

/*
 * cli_stdio_main:
 *
 * `terret-exec serve` or `terret-exec mcp`, as @dialect says: parses the
 * options, creates the executor, serves until the end, and returns the
 * exit status.
 */
int
cli_stdio_main (const CliDialect  *dialect,
                int                argc,
                char             **argv)
{
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *backend = NULL;
  g_autofree char *prgname = g_strconcat ("terret-exec ", dialect->name, NULL);
  g_autofree char *summary_text = dialect->summary ();
  g_autofree char *summary = wrap_lines (summary_text);
  g_autofree char *description = NULL;
  g_auto(GStrv) settings = NULL;
  g_auto(GStrv) rest = NULL;
  CliStdio server = { .dialect = dialect };
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
  g_set_prgname (prgname);
  context = g_option_context_new (NULL);
  g_option_context_set_summary (context, summary);
  /* The exit statuses are the server's, the same for every dialect. */
  description = g_strdup_printf ("Exit status: 0 at the end of input, 125 when the executor cannot be\n"
                                 "created, 128+N after signal N (what is in flight is cancelled\n"
                                 "first), 141 when answers cannot be written, 1 when %ss cannot\n"
                                 "be read. Reference: %s.", dialect->request_word, dialect->reference);
  g_option_context_set_description (context, description);
  g_option_context_add_main_entries (context, entries, NULL);

  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("%s: %s\nTry “%s --help”.\n", prgname, error->message, prgname);
      return CLI_EXIT_NOT_RUN;
    }

  if (rest != NULL && rest[0] != NULL)
    {
      g_printerr ("%s: unexpected argument “%s”\nTry “%s --help”.\n", prgname, rest[0], prgname);
      return CLI_EXIT_NOT_RUN;
    }

  /* A host's own --set keep-full-output wins over the dialect's default. */
  server.keep_full_output = dialect->keep_full_output;
  for (guint i = 0; settings != NULL && settings[i] != NULL; i++)
    if (g_str_has_prefix (settings[i], "keep-full-output="))
      server.keep_full_output = FALSE;

  /* stdout carries the protocol alone: errors go to stderr. */
  server.executor = terret_executor_new_with_settings (backend, (const char * const *)settings, &error);
  if (server.executor == NULL)
    {
      g_printerr ("terret-exec: %s\n", error->message);
      return CLI_EXIT_NOT_RUN;
    }

  status = serve (&server);

  g_clear_object (&server.executor);
  g_clear_error (&server.read_error);
  g_clear_error (&server.write_error);

  return status;
}
