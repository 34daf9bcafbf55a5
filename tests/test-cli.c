/* test-cli.c: the terret-exec command line and its serve protocol, run as
 * a real process
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "terret-test-utils.h"

/* Helpers -------------------------------------------------------------- */

static gboolean
have_backend (const char *name)
{
  GList *infos = terret_backend_info_list ();
  gboolean found = FALSE;

  for (GList *l = infos; l != NULL; l = l->next)
    found |= g_str_equal (terret_backend_info_get_name (l->data), name);
  g_list_free_full (infos, g_object_unref);

  return found;
}

/* Backends that run commands are skipped, with the reason, in a build
 * without them (-Dlocal-shell=disabled). */
#define REQUIRE_BACKEND(name)                                           \
  G_STMT_START {                                                        \
    if (!have_backend (name))                                           \
      {                                                                 \
        g_test_skip ("the " name " backend is not built");              \
        return;                                                         \
      }                                                                 \
  } G_STMT_END

static GPtrArray *
cli_argv (const char *first,
          va_list     args)
{
  GPtrArray *argv = g_ptr_array_new ();

  g_ptr_array_add (argv, (char *) terret_test_cli_path ());
  for (const char *arg = first; arg != NULL; arg = va_arg (args, const char *))
    g_ptr_array_add (argv, (char *) arg);
  g_ptr_array_add (argv, NULL);

  return argv;
}

static int
exit_code (GSubprocess *proc)
{
  g_assert_true (g_subprocess_get_if_exited (proc));
  return g_subprocess_get_exit_status (proc);
}

/* Runs the CLI with the given arguments to completion; returns its exit
 * status and everything it wrote. */
G_GNUC_NULL_TERMINATED static int
cli_run (GBytes    **out,
         GBytes    **err,
         const char *first,
         ...)
{
  g_autoptr(GPtrArray) argv = NULL;
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) stdout_bytes = NULL;
  g_autoptr(GBytes) stderr_bytes = NULL;
  g_autoptr(GBytes) empty = g_bytes_new_static ("", 0);
  va_list args;

  va_start (args, first);
  argv = cli_argv (first, args);
  va_end (args);

  proc = g_subprocess_newv ((const char * const *) argv->pdata,
                            G_SUBPROCESS_FLAGS_STDIN_PIPE |
                            G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                            G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);
  g_assert_no_error (error);

  /* stdin is an empty pipe: the CLI must not depend on the test's own. */
  g_subprocess_communicate (proc, empty, NULL, &stdout_bytes, &stderr_bytes, &error);
  g_assert_no_error (error);

  if (out != NULL)
    *out = g_steal_pointer (&stdout_bytes);
  if (err != NULL)
    *err = g_steal_pointer (&stderr_bytes);

  return exit_code (proc);
}

static char *
bytes_to_string (GBytes *bytes)
{
  gsize len = 0;
  const char *data = g_bytes_get_data (bytes, &len);

  return g_strndup (data != NULL ? data : "", len);
}

static void
assert_contains (GBytes     *bytes,
                 const char *needle)
{
  g_autofree char *text = bytes_to_string (bytes);

  if (strstr (text, needle) == NULL)
    g_error ("“%s” does not contain “%s”", text, needle);
}

static JsonNode *
parse_json (const char *text)
{
  g_autoptr(GError) error = NULL;
  JsonNode *node = json_from_string (text, &error);

  g_assert_no_error (error);
  g_assert_nonnull (node);
  return node;
}

/* The one JSON object --json printed, and nothing else. */
static JsonObject *
parse_single_object (GBytes    *bytes,
                     JsonNode **node_out)
{
  g_autofree char *text = bytes_to_string (bytes);
  size_t len = strlen (text);

  g_assert_cmpuint (len, >, 0);
  g_assert_cmpint (text[len - 1], ==, '\n');
  g_assert_null (memchr (text, '\n', len - 1));

  *node_out = parse_json (text);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (*node_out));
  return json_node_get_object (*node_out);
}

static void
assert_member_null (JsonObject *object,
                    const char *name)
{
  g_assert_true (json_object_has_member (object, name));
  g_assert_true (json_object_get_null_member (object, name));
}

static const char *
error_code (JsonObject *response)
{
  JsonObject *error;

  g_assert_false (json_object_get_boolean_member (response, "ok"));
  error = json_object_get_object_member (response, "error");
  g_assert_nonnull (error);
  g_assert_nonnull (json_object_get_string_member (error, "message"));
  return json_object_get_string_member (error, "code");
}

/* Everything @stream still has, up to its end, as a string. */
static char *
read_rest (GInputStream *stream)
{
  g_autoptr(GOutputStream) sink = g_memory_output_stream_new_resizable ();
  g_autoptr(GError) error = NULL;

  g_output_stream_splice (sink, stream, G_OUTPUT_STREAM_SPLICE_NONE, NULL, &error);
  g_assert_no_error (error);
  /* The terminating NUL, so the data reads as a string. */
  g_output_stream_write_all (sink, "", 1, NULL, NULL, &error);
  g_assert_no_error (error);
  g_output_stream_close (sink, NULL, &error);
  g_assert_no_error (error);
  return g_memory_output_stream_steal_data (G_MEMORY_OUTPUT_STREAM (sink));
}

/* A running `terret-exec serve`, driven line by line. */
typedef struct
{
  GSubprocess *proc;
  GOutputStream *input;
  GDataInputStream *output;
} Server;

static void
server_clear (Server *server)
{
  g_clear_object (&server->output);
  g_clear_object (&server->input);
  if (server->proc != NULL)
    g_subprocess_force_exit (server->proc);
  g_clear_object (&server->proc);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (Server, server_clear)

G_GNUC_NULL_TERMINATED static void
server_start (Server     *server,
              const char *first,
              ...)
{
  g_autoptr(GPtrArray) argv = NULL;
  g_autoptr(GError) error = NULL;
  va_list args;

  va_start (args, first);
  argv = cli_argv (first, args);
  va_end (args);
  g_ptr_array_insert (argv, 1, (char *) "serve");

  server->proc = g_subprocess_newv ((const char * const *) argv->pdata,
                                    G_SUBPROCESS_FLAGS_STDIN_PIPE |
                                    G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error);
  g_assert_no_error (error);

  server->input = g_object_ref (g_subprocess_get_stdin_pipe (server->proc));
  server->output = g_data_input_stream_new (g_subprocess_get_stdout_pipe (server->proc));
}

static void
server_send (Server     *server,
             const char *line)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = g_strconcat (line, "\n", NULL);

  g_output_stream_write_all (server->input, text, strlen (text), NULL, NULL, &error);
  g_assert_no_error (error);
  g_output_stream_flush (server->input, NULL, &error);
  g_assert_no_error (error);
}

/* A run request, with the JSON escaping done by json-glib. */
static void
server_send_run (Server     *server,
                 const char *id_json,
                 const char *session,
                 const char *command,
                 double      timeout)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *line = NULL;

  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "id");
  json_builder_add_value (builder, parse_json (id_json));
  if (session != NULL)
    {
      json_builder_set_member_name (builder, "session");
      json_builder_add_string_value (builder, session);
    }
  json_builder_set_member_name (builder, "command");
  json_builder_add_string_value (builder, command);
  if (timeout > 0)
    {
      json_builder_set_member_name (builder, "timeout");
      json_builder_add_double_value (builder, timeout);
    }
  json_builder_end_object (builder);

  root = json_builder_get_root (builder);
  line = json_to_string (root, FALSE);
  server_send (server, line);
}

static JsonNode *
server_recv (Server *server)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *line = NULL;
  JsonNode *node;

  line = g_data_input_stream_read_line (server->output, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (line);

  node = parse_json (line);
  g_assert_true (JSON_NODE_HOLDS_OBJECT (node));
  g_assert_true (json_object_has_member (json_node_get_object (node), "id"));
  g_assert_true (json_object_has_member (json_node_get_object (node), "ok"));
  return node;
}

/* The next @n responses, keyed by their serialized id: concurrent runs
 * answer in the order they finish, so tests look answers up by id. */
static GHashTable *
server_recv_n (Server *server,
               guint   n)
{
  GHashTable *responses = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
                                                 (GDestroyNotify) json_node_unref);

  for (guint i = 0; i < n; i++)
    {
      JsonNode *node = server_recv (server);
      JsonNode *id = json_object_get_member (json_node_get_object (node), "id");
      char *key = json_to_string (id, FALSE);

      g_assert_false (g_hash_table_contains (responses, key));
      g_hash_table_insert (responses, key, node);
    }

  return responses;
}

static JsonObject *
response_for (GHashTable *responses,
              const char *id_json)
{
  JsonNode *node = g_hash_table_lookup (responses, id_json);

  if (node == NULL)
    g_error ("no response with id %s", id_json);
  return json_node_get_object (node);
}

static JsonObject *
server_recv_object (Server   *server,
                    JsonNode **keep)
{
  *keep = server_recv (server);
  return json_node_get_object (*keep);
}

/* Ends input; the server must answer nothing more and exit 0. */
static void
server_finish (Server *server)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *line = NULL;

  g_output_stream_close (server->input, NULL, &error);
  g_assert_no_error (error);

  line = g_data_input_stream_read_line (server->output, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (line);

  g_subprocess_wait (server->proc, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (exit_code (server->proc), ==, 0);
}

/* Exit codes ----------------------------------------------------------- */

static void
test_exit_status (void)
{
  REQUIRE_BACKEND ("oneshot");

  g_assert_cmpint (cli_run (NULL, NULL, "--backend", "oneshot", "-c", "true", NULL), ==, 0);
  g_assert_cmpint (cli_run (NULL, NULL, "--backend", "oneshot", "-c", "exit 3", NULL), ==, 3);
  g_assert_cmpint (cli_run (NULL, NULL, "--backend", "oneshot", "-c", "exit 255", NULL), ==, 255);
}

static void
test_exit_timeout (void)
{
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;

  REQUIRE_BACKEND ("oneshot");

  g_test_summary ("A timeout exits 124, keeps the output so far and says why on stderr");
  g_assert_cmpint (cli_run (&out, &err, "--backend", "oneshot", "--timeout", "0.3",
                            "-c", "echo before; exec sleep 60", NULL), ==, 124);
  terret_test_assert_bytes_str (out, "before\n");
  assert_contains (err, "terret-exec: ");
}

static void
test_exit_signal (void)
{
  REQUIRE_BACKEND ("oneshot");

  g_test_summary ("A command ended by signal N exits 128+N");
  g_assert_cmpint (cli_run (NULL, NULL, "--backend", "oneshot", "-c", "kill -TERM $$", NULL), ==, 128 + SIGTERM);
}

static void
test_exit_unknown_backend (void)
{
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;

  g_test_summary ("An unknown backend exits 125 and lists the backends there are");
  g_assert_cmpint (cli_run (&out, &err, "--backend", "no-such-backend", "-c", "true", NULL), ==, 125);
  g_assert_cmpuint (g_bytes_get_size (out), ==, 0);
  assert_contains (err, "terret-exec: ");
  assert_contains (err, "no-such-backend");
  assert_contains (err, "noshell");
  if (have_backend ("oneshot"))
    assert_contains (err, "oneshot");
}

static void
test_exit_bad_setting (void)
{
  g_autoptr(GBytes) err = NULL;
  g_autoptr(GBytes) err2 = NULL;
  g_autoptr(GBytes) err3 = NULL;

  g_assert_cmpint (cli_run (NULL, &err, "--backend", "noshell", "--set", "no-such-key=1",
                            "-c", "true", NULL), ==, 125);
  assert_contains (err, "no-such-key");

  g_assert_cmpint (cli_run (NULL, &err2, "--backend", "noshell", "--set", "novalue",
                            "-c", "true", NULL), ==, 125);
  assert_contains (err2, "KEY=VALUE");

  if (have_backend ("oneshot"))
    {
      g_assert_cmpint (cli_run (NULL, &err3, "--backend", "oneshot", "--set", "timeout=soon",
                                "-c", "true", NULL), ==, 125);
      assert_contains (err3, "soon");
      assert_contains (err3, "timeout");
    }
}

static void
test_exit_no_shell (void)
{
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;
  g_autofree char *text = NULL;

  g_test_summary ("noshell runs nothing: 125 and its explanation on stderr");
  g_assert_cmpint (cli_run (&out, &err, "--backend", "noshell", "-c", "echo hi", NULL), ==, 125);
  g_assert_cmpuint (g_bytes_get_size (out), ==, 0);
  text = bytes_to_string (err);
  g_assert_true (g_str_has_prefix (text, "terret-exec: "));
  assert_contains (err, "no shell");
}

static void
test_exit_usage (void)
{
  g_autoptr(GBytes) err = NULL;
  g_autoptr(GBytes) err2 = NULL;

  g_assert_cmpint (cli_run (NULL, &err, "--backend", "noshell", NULL), ==, 125);
  assert_contains (err, "no command");
  g_assert_cmpint (cli_run (NULL, &err2, "--backend", "noshell", "-c", "true", "--", "true", NULL), ==, 125);
  g_assert_cmpint (cli_run (NULL, NULL, "--timeout", "-1", "-c", "true", NULL), ==, 125);
  g_assert_cmpint (cli_run (NULL, NULL, "--no-such-option", NULL), ==, 125);
}

/* Streaming and the command's words ------------------------------------ */

static void
test_stream_separate (void)
{
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) err = NULL;

  REQUIRE_BACKEND ("oneshot");

  g_assert_cmpint (cli_run (&out, &err, "--backend", "oneshot", "-c",
                            "echo out; echo err >&2; printf 'no newline'", NULL), ==, 0);
  terret_test_assert_bytes_str (out, "out\nno newline");
  terret_test_assert_bytes_str (err, "err\n");
}

static void
test_stream_live (void)
{
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GDataInputStream) output = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *fifo = terret_test_make_fifo (dir, "go");
  g_autofree char *command = NULL;
  g_autofree char *first = NULL;
  g_autofree char *rest = NULL;
  int hold;

  REQUIRE_BACKEND ("oneshot");

  g_test_summary ("Output reaches the CLI's stdout while the command still runs: "
                  "the command waits for a go that is given only after its first line arrived");

  /* Held open read-write, so the command's open never blocks and a go
   * written after a failed run still lands instead of hanging the test. */
  hold = open (fifo, O_RDWR | O_CLOEXEC);
  g_assert_cmpint (hold, >=, 0);

  command = g_strdup_printf ("echo first; read go < '%s'; echo \"last $go\"", fifo);
  proc = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                           terret_test_cli_path (), "--backend", "oneshot",
                           "--timeout", "30", "-c", command, NULL);
  g_assert_no_error (error);
  output = g_data_input_stream_new (g_subprocess_get_stdout_pipe (proc));

  first = g_data_input_stream_read_line (output, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (first, ==, "first");

  g_assert_cmpint (write (hold, "go\n", 3), ==, 3);

  rest = read_rest (G_INPUT_STREAM (output));
  g_assert_cmpstr (rest, ==, "last go\n");

  g_subprocess_wait (proc, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (exit_code (proc), ==, 0);
  close (hold);
}

static void
test_words (void)
{
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) out2 = NULL;
  g_autoptr(GBytes) out3 = NULL;

  REQUIRE_BACKEND ("oneshot");

  g_test_summary ("The words after the options are joined with single spaces and "
                  "the shell parses the result, as ssh does");
  g_assert_cmpint (cli_run (&out, NULL, "--backend", "oneshot", "--",
                            "printf", "'%s-%s'", "a  b", "c", NULL), ==, 0);
  /* "a  b" was one word here, but the joined line splits it again. */
  terret_test_assert_bytes_str (out, "a-bc-");

  g_assert_cmpint (cli_run (&out2, NULL, "--backend", "oneshot", "--",
                            "echo", "-n", "x;", "exit", "7", NULL), ==, 7);
  terret_test_assert_bytes_str (out2, "x");

  /* Options stop at the first word, so the command's own options are its. */
  g_assert_cmpint (cli_run (&out3, NULL, "--backend", "oneshot", "echo", "-n", "--json", NULL), ==, 0);
  terret_test_assert_bytes_str (out3, "--json");
}

static void
check_cli_signal (int signum)
{
  g_autoptr(GSubprocess) proc = NULL;
  g_autoptr(GDataInputStream) output = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *pids = NULL;

  proc = g_subprocess_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE, &error,
                           terret_test_cli_path (), "--backend", "oneshot", "--timeout", "120",
                           "-c", "sleep 1000 & echo $! $$; wait", NULL);
  g_assert_no_error (error);
  output = g_data_input_stream_new (g_subprocess_get_stdout_pipe (proc));

  /* The line arrives live, so the command is running when it is read. */
  pids = g_data_input_stream_read_line (output, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (pids);

  g_subprocess_send_signal (proc, signum);
  g_subprocess_wait (proc, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (exit_code (proc), ==, 128 + signum);

  terret_test_wait_gone_all (pids);
}

static void
test_cli_signal (void)
{
  REQUIRE_BACKEND ("oneshot");

  g_test_summary ("SIGINT or SIGTERM to the CLI cancels the run: exit 130 or 143, "
                  "and nothing the command started is left running");
  check_cli_signal (SIGINT);
  check_cli_signal (SIGTERM);
}

/* --json --------------------------------------------------------------- */

static void
test_json_fields (void)
{
  g_autoptr(GBytes) out = NULL;
  g_autoptr(JsonNode) node = NULL;
  JsonObject *response;

  REQUIRE_BACKEND ("oneshot");

  g_assert_cmpint (cli_run (&out, NULL, "--backend", "oneshot", "--json", "-c",
                            "printf 'out é'; printf err >&2; exit 4", NULL), ==, 4);
  response = parse_single_object (out, &node);

  assert_member_null (response, "id");
  g_assert_true (json_object_get_boolean_member (response, "ok"));
  g_assert_cmpint (json_object_get_int_member (response, "status"), ==, 4);
  assert_member_null (response, "signal");
  g_assert_cmpstr (json_object_get_string_member (response, "stdout"), ==, "out é");
  g_assert_false (json_object_has_member (response, "stdout_base64"));
  g_assert_cmpstr (json_object_get_string_member (response, "stderr"), ==, "err");
  g_assert_false (json_object_has_member (response, "stderr_base64"));
  assert_member_null (response, "notice");
  g_assert_false (json_object_get_boolean_member (response, "timed_out"));
  g_assert_cmpint (json_object_get_int_member (response, "dropped"), ==, 0);
  g_assert_true (json_object_has_member (response, "cwd"));
  g_assert_false (json_object_has_member (response, "error"));
}

static void
test_json_base64 (void)
{
  g_autoptr(GBytes) out = NULL;
  g_autoptr(JsonNode) node = NULL;
  JsonObject *response;
  g_autofree guchar *decoded = NULL;
  gsize len = 0;

  REQUIRE_BACKEND ("oneshot");

  g_test_summary ("Output that is not UTF-8 travels as base64, byte for byte");
  g_assert_cmpint (cli_run (&out, NULL, "--backend", "oneshot", "--json", "-c",
                            "printf '\\xff'; printf 'a\\0b' >&2", NULL), ==, 0);
  response = parse_single_object (out, &node);

  g_assert_false (json_object_has_member (response, "stdout"));
  g_assert_cmpstr (json_object_get_string_member (response, "stdout_base64"), ==, "/w==");
  g_assert_false (json_object_has_member (response, "stderr"));
  decoded = g_base64_decode (json_object_get_string_member (response, "stderr_base64"), &len);
  g_assert_cmpmem (decoded, len, "a\0b", 3);
}

static void
test_json_timeout (void)
{
  g_autoptr(GBytes) out = NULL;
  g_autoptr(JsonNode) node = NULL;
  JsonObject *response;

  REQUIRE_BACKEND ("oneshot");

  g_assert_cmpint (cli_run (&out, NULL, "--backend", "oneshot", "--json", "--timeout", "0.3",
                            "-c", "echo partial; exec sleep 60", NULL), ==, 124);
  response = parse_single_object (out, &node);
  g_assert_true (json_object_get_boolean_member (response, "ok"));
  g_assert_true (json_object_get_boolean_member (response, "timed_out"));
  assert_member_null (response, "status");
  g_assert_cmpstr (json_object_get_string_member (response, "stdout"), ==, "partial\n");
}

static void
test_json_not_run (void)
{
  g_autoptr(GBytes) out = NULL;
  g_autoptr(GBytes) out2 = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(JsonNode) node2 = NULL;
  JsonObject *response;

  g_test_summary ("With --json, a run that never happened is still one JSON object");
  g_assert_cmpint (cli_run (&out, NULL, "--backend", "noshell", "--json", "-c", "true", NULL), ==, 125);
  response = parse_single_object (out, &node);
  g_assert_cmpstr (error_code (response), ==, "no-shell");
  g_assert_false (json_object_has_member (response, "status"));

  g_assert_cmpint (cli_run (&out2, NULL, "--backend", "no-such-backend", "--json", "-c", "true", NULL), ==, 125);
  response = parse_single_object (out2, &node2);
  g_assert_cmpstr (error_code (response), ==, "unknown-backend");
}

/* --list-backends ------------------------------------------------------ */

static void
test_list_text (void)
{
  g_autoptr(GBytes) out = NULL;

  g_assert_cmpint (cli_run (&out, NULL, "--list-backends", NULL), ==, 0);
  assert_contains (out, "noshell (priority -100): supported\n");
  assert_contains (out, "libterret-noshell.so");

  if (have_backend ("oneshot"))
    {
      assert_contains (out, "oneshot (priority 50)");
      assert_contains (out, "    timeout (number, default ");
    }
  if (have_backend ("pty"))
    assert_contains (out, "pty (priority 100)");
}

static JsonObject *
find_backend (JsonArray  *array,
              const char *name)
{
  for (guint i = 0; i < json_array_get_length (array); i++)
    {
      JsonObject *backend = json_array_get_object_element (array, i);

      if (g_strcmp0 (json_object_get_string_member (backend, "name"), name) == 0)
        return backend;
    }

  return NULL;
}

static void
test_list_json (void)
{
  g_autoptr(GBytes) out = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *text = NULL;
  JsonArray *array;
  JsonObject *noshell;
  GList *infos;

  g_assert_cmpint (cli_run (&out, NULL, "--list-backends", "--json", NULL), ==, 0);
  text = bytes_to_string (out);
  node = parse_json (text);
  g_assert_true (JSON_NODE_HOLDS_ARRAY (node));
  array = json_node_get_array (node);

  /* Exactly the backends the library knows, each fully described. */
  infos = terret_backend_info_list ();
  g_assert_cmpuint (json_array_get_length (array), ==, g_list_length (infos));
  for (GList *l = infos; l != NULL; l = l->next)
    {
      JsonObject *backend = find_backend (array, terret_backend_info_get_name (l->data));

      g_assert_nonnull (backend);
      g_assert_cmpint (json_object_get_int_member (backend, "priority"), ==,
                       terret_backend_info_get_priority (l->data));
      g_assert_cmpstr (json_object_get_string_member (backend, "module"), ==,
                       terret_backend_info_get_module_path (l->data));
      g_assert_true (json_object_has_member (backend, "supported"));
      if (json_object_get_boolean_member (backend, "supported"))
        assert_member_null (backend, "reason");
      else
        g_assert_nonnull (json_object_get_string_member (backend, "reason"));
      g_assert_nonnull (json_object_get_array_member (backend, "settings"));
    }
  g_list_free_full (infos, g_object_unref);

  noshell = find_backend (array, "noshell");
  g_assert_nonnull (noshell);
  g_assert_cmpint (json_object_get_int_member (noshell, "priority"), ==, -100);
  g_assert_true (json_object_get_boolean_member (noshell, "supported"));

  if (have_backend ("oneshot"))
    {
      JsonArray *settings = json_object_get_array_member (find_backend (array, "oneshot"), "settings");
      gboolean found = FALSE;

      for (guint i = 0; i < json_array_get_length (settings); i++)
        {
          JsonObject *setting = json_array_get_object_element (settings, i);

          if (!g_str_equal (json_object_get_string_member (setting, "name"), "timeout"))
            continue;
          found = TRUE;
          g_assert_cmpstr (json_object_get_string_member (setting, "type"), ==, "number");
          g_assert_cmpfloat (json_object_get_double_member (setting, "default"), >, 0);
          g_assert_cmpstr (json_object_get_string_member (setting, "description"), !=, "");
        }
      g_assert_true (found);
    }
}

/* serve ---------------------------------------------------------------- */

static void
test_serve_bad_options (void)
{
  g_autoptr(GBytes) err = NULL;
  g_autoptr(GBytes) err2 = NULL;

  g_test_summary ("serve refuses to start, with 125, on an executor it cannot create");
  g_assert_cmpint (cli_run (NULL, &err, "serve", "--backend", "no-such-backend", NULL), ==, 125);
  assert_contains (err, "noshell");
  g_assert_cmpint (cli_run (NULL, &err2, "serve", "--backend", "noshell", "--set", "x=1", NULL), ==, 125);
  assert_contains (err2, "“x”");
  g_assert_cmpint (cli_run (NULL, NULL, "serve", "extra", NULL), ==, 125);
}

static void
test_serve_empty (void)
{
  g_auto(Server) server = { 0 };

  server_start (&server, "--backend", "noshell", NULL);
  server_finish (&server);
}

static void
test_serve_ids (void)
{
  g_auto(Server) server = { 0 };
  const char *ids[] = { "1", "-2.5", "\"one\"", "{\"k\":[1,null,\"x\"]}", "true", "null" };
  const char *backend = have_backend ("oneshot") ? "oneshot" : "noshell";

  g_test_summary ("Any JSON id is echoed as is, whatever the outcome of the run");
  server_start (&server, "--backend", backend, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (ids); i++)
    {
      g_autoptr(JsonNode) response = NULL;
      g_autofree char *echoed = NULL;
      g_autofree char *command = g_strdup_printf ("echo %u", i);

      server_send_run (&server, ids[i], NULL, command, 0);
      response = server_recv (&server);
      echoed = json_to_string (json_object_get_member (json_node_get_object (response), "id"), FALSE);
      g_assert_cmpstr (echoed, ==, ids[i]);

      if (g_str_equal (backend, "oneshot"))
        {
          g_autofree char *expected = g_strdup_printf ("%u\n", i);

          g_assert_true (json_object_get_boolean_member (json_node_get_object (response), "ok"));
          g_assert_cmpstr (json_object_get_string_member (json_node_get_object (response), "stdout"), ==, expected);
        }
      else
        g_assert_cmpstr (error_code (json_node_get_object (response)), ==, "no-shell");
    }

  /* A request without an id is answered with a null one. */
  {
    g_autoptr(JsonNode) response = NULL;

    server_send (&server, "{\"op\":\"close-all\"}");
    response = server_recv (&server);
    assert_member_null (json_node_get_object (response), "id");
    g_assert_true (json_object_get_boolean_member (json_node_get_object (response), "ok"));
  }

  server_finish (&server);
}

static void
test_serve_malformed (void)
{
  g_auto(Server) server = { 0 };
  struct {
    const char *line;
    const char *id;
  } cases[] = {
    { "garbage", "null" },
    { "{\"id\": 1, \"command\": ", "null" },
    { "[1, 2]", "null" },
    { "\"run\"", "null" },
    { "{\"id\": 3}", "3" },
    { "{\"id\": 4, \"command\": 5}", "4" },
    { "{\"id\": 5, \"command\": \"true\", \"timeout\": \"soon\"}", "5" },
    { "{\"id\": 6, \"command\": \"true\", \"timeout\": -1}", "6" },
    { "{\"id\": 7, \"op\": \"launch\", \"command\": \"true\"}", "7" },
    { "{\"id\": 8, \"op\": 1}", "8" },
    { "{\"id\": 9, \"command\": \"true\", \"session\": []}", "9" },
    { "{\"id\": 10, \"command\": \"true\", \"colour\": \"red\"}", "10" },
    { "{\"id\": 11, \"op\": \"cancel\"}", "11" },
    { "{\"id\": 12, \"op\": \"cancel\", \"target\": 99}", "12" },
    /* json-glib would cut the command at the NUL: refused, not run cut,
     * with its id. */
    { "{\"id\": 13, \"command\": \"echo a\\u0000; exit 1\"}", "13" },
  };

  g_test_summary ("Every malformed line gets an invalid-request answer and serving goes on");
  server_start (&server, "--backend", "noshell", NULL);

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(JsonNode) response = NULL;
      g_autofree char *id = NULL;

      server_send (&server, cases[i].line);
      response = server_recv (&server);
      id = json_to_string (json_object_get_member (json_node_get_object (response), "id"), FALSE);
      g_assert_cmpstr (id, ==, cases[i].id);
      g_assert_cmpstr (error_code (json_node_get_object (response)), ==, "invalid-request");
    }

  /* Blank lines are no requests; the next real one is still served, and
   * an escaped backslash before "u0000" is no NUL. */
  server_send (&server, "");
  server_send (&server, "{\"id\": \"after\", \"command\": \"printf '\\\\u0000'\"}");
  {
    g_autoptr(JsonNode) response = server_recv (&server);

    g_assert_cmpstr (json_object_get_string_member (json_node_get_object (response), "id"), ==, "after");
    g_assert_cmpstr (error_code (json_node_get_object (response)), ==, "no-shell");
  }

  server_finish (&server);
}

/* Every refusal made after a line parsed as an object: the id when it was
 * readable, the field at fault in the message. */
static void
test_serve_refusals (void)
{
  g_auto(Server) server = { 0 };
  struct {
    const char *line;
    const char *id;
    const char *field;
  } cases[] = {
    /* A NUL anywhere: named down to where it is. */
    { "{\"id\": \"n\", \"command\": \"echo a\\u0000; exit 1\"}", "\"n\"", "“command”" },
    { "{\"id\": 2, \"command\": \"true\", \"session\": \"s\\u0000\"}", "2", "“session”" },
    { "{\"id\": 3, \"op\": \"cancel\", \"target\": [\"a\", \"b\\u0000\"]}", "3", "“target[1]”" },
    { "{\"id\": 4, \"command\": \"true\", \"k\\u0000y\": 1}", "4", "“k\\u0000y”" },
    { "{\"command\": \"true\\u0000\", \"id\": 5}", "5", "“command”" },
    { "{\"id\": 5.5, \"command\": \"a\\u0000\", \"command\": \"true\"}", "5.5", "NUL" },
    /* The op. */
    { "{\"id\": 6, \"op\": \"launch\"}", "6", "“op”" },
    { "{\"id\": 7, \"op\": 7}", "7", "“op”" },
    /* A run's fields. */
    { "{\"id\": 8}", "8", "“command”" },
    { "{\"id\": 9, \"command\": 5}", "9", "“command”" },
    { "{\"id\": 10, \"command\": \"true\", \"session\": []}", "10", "“session”" },
    { "{\"id\": 11, \"command\": \"true\", \"timeout\": \"soon\"}", "11", "“timeout”" },
    { "{\"id\": 12, \"command\": \"true\", \"timeout\": -1}", "12", "“timeout”" },
    { "{\"id\": 13, \"command\": \"true\", \"timeout\": 1e300}", "13", "“timeout”" },
    { "{\"id\": 14, \"command\": \"true\", \"on_timeout\": \"wait\"}", "14", "“on_timeout”" },
    { "{\"id\": 15, \"command\": \"true\", \"capture\": \"middle\"}", "15", "“capture”" },
    { "{\"id\": 16, \"command\": \"true\", \"keep_full_output\": \"yes\"}", "16", "“keep_full_output”" },
    { "{\"id\": 17, \"command\": \"true\", \"colour\": \"red\"}", "17", "“colour”" },
    /* The other ops' fields. */
    { "{\"id\": 18, \"op\": \"input\", \"data\": \"x\", \"data_base64\": \"eA==\"}", "18", "“data”" },
    { "{\"id\": 19, \"op\": \"input\", \"data_base64\": \"!!\"}", "19", "“data_base64”" },
    { "{\"id\": 20, \"op\": \"input\", \"data\": 1}", "20", "“data”" },
    { "{\"id\": 21, \"op\": \"poll\", \"wait\": \"long\"}", "21", "“wait”" },
    { "{\"id\": 22, \"op\": \"close\", \"session\": 1}", "22", "“session”" },
    { "{\"id\": 23, \"op\": \"interrupt\", \"session\": true}", "23", "“session”" },
    { "{\"id\": 24, \"op\": \"close-all\", \"session\": \"s\"}", "24", "“session”" },
    { "{\"id\": 25, \"op\": \"cancel\"}", "25", "“target”" },
    { "{\"id\": 26, \"op\": \"cancel\", \"target\": 99}", "26", "“target”" },
    { "{\"id\": 27, \"op\": \"cancel\", \"session\": \"nowhere\"}", "27", "“session”" },
    /* Any id is readable, but one holding a NUL is not. */
    { "{\"id\": {\"k\": [null, true]}, \"command\": 1}", "{\"k\":[null,true]}", "“command”" },
    { "{\"id\": \"\\u0000\", \"command\": \"true\"}", "null", "“id”" },
    { "{\"id\": {\"k\": \"\\u0000\"}, \"command\": \"true\"}", "null", "“id.k”" },
  };

  g_test_summary ("Every refusal of a request that parsed carries its id where it was "
                  "readable, and names the field at fault; serving goes on");
  server_start (&server, "--backend", "noshell", NULL);

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(JsonNode) response = NULL;
      g_autofree char *id = NULL;
      const char *message;

      server_send (&server, cases[i].line);
      response = server_recv (&server);
      id = json_to_string (json_object_get_member (json_node_get_object (response), "id"), FALSE);
      g_assert_cmpstr (id, ==, cases[i].id);
      g_assert_cmpstr (error_code (json_node_get_object (response)), ==, "invalid-request");
      message = json_object_get_string_member (json_object_get_object_member (json_node_get_object (response),
                                                                              "error"), "message");
      if (strstr (message, cases[i].field) == NULL)
        g_error ("%s: “%s” does not name %s", cases[i].line, message, cases[i].field);
    }

  server_send (&server, "{\"id\": \"after\", \"command\": \"true\"}");
  {
    g_autoptr(JsonNode) response = server_recv (&server);

    g_assert_cmpstr (json_object_get_string_member (json_node_get_object (response), "id"), ==, "after");
    g_assert_cmpstr (error_code (json_node_get_object (response)), ==, "no-shell");
  }

  /* null is absent, for a field the op takes and for one it does not. */
  server_send (&server, "{\"id\": \"null\", \"op\": \"list\", \"session\": null}");
  {
    g_autoptr(JsonNode) response = server_recv (&server);

    /* Served as a plain list, which noshell cannot do. */
    g_assert_cmpstr (json_object_get_string_member (json_node_get_object (response), "id"), ==, "null");
    g_assert_cmpstr (error_code (json_node_get_object (response)), ==, "not-supported");
  }
  server_send (&server, "{\"id\": \"null-run\", \"command\": \"true\", \"session\": null, "
               "\"timeout\": null, \"op\": null}");
  {
    g_autoptr(JsonNode) response = server_recv (&server);

    g_assert_cmpstr (json_object_get_string_member (json_node_get_object (response), "id"), ==, "null-run");
    g_assert_cmpstr (error_code (json_node_get_object (response)), ==, "no-shell");
  }

  server_finish (&server);
}

static void
test_serve_long_line (void)
{
  g_auto(Server) server = { 0 };
  g_autoptr(GString) line = g_string_new ("{\"id\": 1, \"command\": \"echo ");
  g_autoptr(JsonNode) refused = NULL;
  g_autoptr(JsonNode) served = NULL;

  g_test_summary ("A request line of 8 MiB or more is refused as invalid without being "
                  "held in memory, and serving goes on with the next line");
  server_start (&server, "--backend", "noshell", NULL);

  while (line->len < 8 * 1024 * 1024 + 100)
    g_string_append (line, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
  g_string_append (line, "\"}");
  server_send (&server, line->str);
  server_send (&server, "{\"id\": 2, \"command\": \"true\"}");

  refused = server_recv (&server);
  assert_member_null (json_node_get_object (refused), "id");
  g_assert_cmpstr (error_code (json_node_get_object (refused)), ==, "invalid-request");
  g_assert_nonnull (strstr (json_object_get_string_member (
                      json_object_get_object_member (json_node_get_object (refused), "error"),
                      "message"), "shorter than"));

  served = server_recv (&server);
  g_assert_cmpint (json_object_get_int_member (json_node_get_object (served), "id"), ==, 2);
  g_assert_cmpstr (error_code (json_node_get_object (served)), ==, "no-shell");

  server_finish (&server);
}

static void
test_serve_close (void)
{
  g_auto(Server) server = { 0 };
  g_autoptr(GHashTable) responses = NULL;
  const char *backend = have_backend ("oneshot") ? "oneshot" : "noshell";

  server_start (&server, "--backend", backend, NULL);
  server_send (&server, "{\"id\": 1, \"op\": \"close\", \"session\": \"s\"}");
  server_send (&server, "{\"id\": 2, \"op\": \"close\"}");
  server_send (&server, "{\"id\": 3, \"op\": \"close-all\"}");
  responses = server_recv_n (&server, 3);

  for (guint i = 1; i <= 3; i++)
    {
      g_autofree char *id = g_strdup_printf ("%u", i);
      JsonObject *response = response_for (responses, id);

      g_assert_true (json_object_get_boolean_member (response, "ok"));
      g_assert_false (json_object_has_member (response, "error"));
    }

  server_finish (&server);
}

/* One request, one answer. */
static JsonObject *
serve_ask (Server      *server,
           const char  *line,
           JsonNode   **keep)
{
  server_send (server, line);
  return server_recv_object (server, keep);
}

/* read over a run's full output: the cut result names the error line in
 * its omitted middle, and read reaches it by offset, by line and by
 * pattern; a read is bounded and says where to go on; a run without
 * keep_full_output, a file the server never gave and a range with two
 * starts are refused, each saying why. */
static void
check_serve_read (const char *backend)
{
  g_auto(Server) server = { 0 };
  g_autoptr(GString) full = g_string_new (NULL);
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *path = NULL;
  g_autofree char *line = NULL;
  JsonObject *response, *match;
  JsonArray *errors, *matches;
  guint64 error_at;

  for (guint i = 1; i <= 20000; i++)
    g_string_append_printf (full, "%u\n", i);
  error_at = full->len;
  g_string_append (full, "x.c:3:1: error: boom\n");
  for (guint i = 20001; i <= 40000; i++)
    g_string_append_printf (full, "%u\n", i);

  server_start (&server, "--backend", backend, "--set", "max-output=1000", NULL);
  response = serve_ask (&server, "{\"id\": 1, \"command\": \"seq 1 20000; echo 'x.c:3:1: error: boom'; "
                                 "seq 20001 40000\", \"keep_full_output\": true}", &node);
  g_assert_true (json_object_get_boolean_member (response, "ok"));
  errors = json_object_get_array_member (response, "omitted_errors");
  g_assert_cmpuint (json_array_get_length (errors), ==, 1);
  g_assert_cmpint (json_object_get_int_member (json_array_get_object_element (errors, 0), "offset"), ==, error_at);
  g_assert_cmpstr (json_object_get_string_member (json_array_get_object_element (errors, 0), "text"), ==,
                   "x.c:3:1: error: boom");
  g_assert_cmpint (json_object_get_int_member (response, "omitted_lines"), >, 39000);
  path = g_strdup (json_object_get_string_member (response, "full_output"));
  g_clear_pointer (&node, json_node_unref);

  /* By offset, as omitted_errors gives it. */
  line = g_strdup_printf ("{\"id\": 2, \"op\": \"read\", \"offset\": %" G_GUINT64_FORMAT ", \"length\": 21}",
                          error_at);
  response = serve_ask (&server, line, &node);
  g_assert_true (json_object_get_boolean_member (response, "ok"));
  g_assert_cmpstr (json_object_get_string_member (response, "data"), ==, "x.c:3:1: error: boom\n");
  g_assert_cmpstr (json_object_get_string_member (response, "path"), ==, path);
  g_assert_cmpint (json_object_get_int_member (response, "size"), ==, full->len);
  g_assert_false (json_object_get_boolean_member (response, "cut"));
  g_clear_pointer (&node, json_node_unref);

  /* By line. */
  response = serve_ask (&server, "{\"id\": 3, \"op\": \"read\", \"line\": 20000, \"lines\": 3}", &node);
  g_assert_cmpstr (json_object_get_string_member (response, "data"), ==, "20000\nx.c:3:1: error: boom\n20001\n");
  g_assert_cmpint (json_object_get_int_member (response, "line"), ==, 20000);
  g_assert_cmpint (json_object_get_int_member (response, "offset"), ==, error_at - 6);
  g_clear_pointer (&node, json_node_unref);

  /* By pattern, by the path the result gave. */
  g_free (line);
  line = g_strdup_printf ("{\"id\": 4, \"op\": \"read\", \"path\": \"%s\", \"pattern\": \"error|^39999$\"}", path);
  response = serve_ask (&server, line, &node);
  matches = json_object_get_array_member (response, "matches");
  g_assert_cmpuint (json_array_get_length (matches), ==, 2);
  match = json_array_get_object_element (matches, 0);
  g_assert_cmpint (json_object_get_int_member (match, "line"), ==, 20001);
  g_assert_cmpint (json_object_get_int_member (match, "offset"), ==, error_at);
  g_assert_cmpstr (json_object_get_string_member (match, "text"), ==, "x.c:3:1: error: boom");
  g_assert_cmpint (json_object_get_int_member (json_array_get_object_element (matches, 1), "line"), ==, 40000);
  g_clear_pointer (&node, json_node_unref);

  /* Bounded: the first 64 KiB, and where to go on. */
  response = serve_ask (&server, "{\"id\": 5, \"op\": \"read\", \"offset\": 0}", &node);
  g_assert_true (json_object_get_boolean_member (response, "cut"));
  g_assert_cmpuint (strlen (json_object_get_string_member (response, "data")), ==, 65536);
  g_assert_cmpmem (json_object_get_string_member (response, "data"), 65536, full->str, 65536);
  g_assert_cmpint (json_object_get_int_member (response, "next_offset"), ==, 65536);
  g_clear_pointer (&node, json_node_unref);

  /* Refusals, each naming its cause. */
  response = serve_ask (&server, "{\"id\": 6, \"op\": \"read\", \"offset\": 1, \"line\": 1}", &node);
  g_assert_false (json_object_get_boolean_member (response, "ok"));
  g_clear_pointer (&node, json_node_unref);
  response = serve_ask (&server, "{\"id\": 7, \"op\": \"read\", \"path\": \"/etc/passwd\"}", &node);
  g_assert_false (json_object_get_boolean_member (response, "ok"));
  g_assert_nonnull (strstr (json_object_get_string_member (json_object_get_object_member (response, "error"),
                                                           "message"), "no full-output file"));
  g_clear_pointer (&node, json_node_unref);
  response = serve_ask (&server, "{\"id\": 8, \"command\": \"echo short\"}", &node);
  g_assert_true (json_object_get_boolean_member (response, "ok"));
  g_clear_pointer (&node, json_node_unref);
  response = serve_ask (&server, "{\"id\": 9, \"op\": \"read\"}", &node);
  g_assert_false (json_object_get_boolean_member (response, "ok"));
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (response, "error"), "code"),
                   ==, "invalid-request");
  g_assert_nonnull (strstr (json_object_get_string_member (json_object_get_object_member (response, "error"),
                                                           "message"), "keep_full_output"));
  g_clear_pointer (&node, json_node_unref);

  server_finish (&server);
}

static void
test_serve_read_pty (void)
{
  REQUIRE_BACKEND ("pty");
  g_test_summary ("read: a run's full output by offset, line and pattern, bounded, on pty");
  check_serve_read ("pty");
}

static void
test_serve_read_oneshot (void)
{
  REQUIRE_BACKEND ("oneshot");
  g_test_summary ("read: a run's full output by offset, line and pattern, bounded, on oneshot");
  check_serve_read ("oneshot");
}

static void
test_serve_close_in_flight (void)
{
  g_auto(Server) server = { 0 };
  g_autoptr(GHashTable) responses = NULL;
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *fifo = terret_test_make_fifo (dir, "pid");
  g_autofree char *command = NULL;
  g_autofree char *pids = NULL;
  JsonObject *run;

  REQUIRE_BACKEND ("oneshot");

  g_test_summary ("close ends the session's running command, which still answers");
  server_start (&server, "--backend", "oneshot", NULL);

  command = g_strdup_printf ("sleep 1000 & echo $! $$ > '%s'; wait", fifo);
  server_send_run (&server, "\"long\"", "s", command, 120);
  pids = terret_test_read_fifo (fifo);

  server_send (&server, "{\"id\": \"close\", \"op\": \"close\", \"session\": \"s\"}");
  responses = server_recv_n (&server, 2);
  g_assert_true (json_object_get_boolean_member (response_for (responses, "\"close\""), "ok"));
  run = response_for (responses, "\"long\"");
  /* It ran, so it answers as a run (killed under it), or as cancelled. */
  if (json_object_get_boolean_member (run, "ok"))
    assert_member_null (run, "status");
  terret_test_wait_gone_all (pids);

  server_finish (&server);
}

/* The close of a pty session answers with what it had to stop: a job
 * that ignores SIGHUP ended by SIGTERM, a setsid one by SIGHUP. */
static void
test_serve_close_lists (void)
{
  g_auto(Server) server = { 0 };
  g_autoptr(JsonNode) ran = NULL;
  g_autoptr(JsonNode) closed = NULL;
  JsonObject *answer;
  JsonArray *stopped;
  g_auto(GStrv) pids = NULL;
  const char *out;
  guint found = 0;

  REQUIRE_BACKEND ("pty");

  g_test_summary ("close answers with the processes it had to stop: pid, command line and "
                  "the signal that ended each");
  server_start (&server, "--backend", "pty", NULL);
  server_send_run (&server, "\"jobs\"", "s",
                   /* Answered once both jobs are what they will be (the
                    * first exec'd, the second in its own session): a job
                    * still forking would end as the shell left, and
                    * rightly say so. */
                   "(trap '' HUP; exec sleep 301) & a=$!; setsid sleep 302 & b=$!; "
                   "until [ \"$(tr '\\0' ' ' </proc/$a/cmdline)\" = 'sleep 301 ' ]; do :; done; "
                   "until read -r _ _ _ _ _ sid _ </proc/$b/stat && [ \"$sid\" = \"$b\" ]; do :; done; "
                   "echo \"$a $b\"", 60);
  answer = server_recv_object (&server, &ran);
  g_assert_true (json_object_get_boolean_member (answer, "ok"));
  out = json_object_get_string_member (answer, "stdout");
  pids = g_strsplit (strrchr (g_strchomp ((char *)out), '\n') != NULL
                     ? strrchr (out, '\n') + 1 : out, " ", 2);
  g_assert_cmpuint (g_strv_length (pids), ==, 2);

  answer = serve_ask (&server, "{\"id\": \"close\", \"op\": \"close\", \"session\": \"s\"}",
                      &closed);
  g_assert_true (json_object_get_boolean_member (answer, "ok"));
  stopped = json_object_get_array_member (answer, "stopped");
  g_assert_nonnull (stopped);
  for (guint i = 0; i < json_array_get_length (stopped); i++)
    {
      JsonObject *entry = json_array_get_object_element (stopped, i);
      gint64 pid = json_object_get_int_member (entry, "pid");
      const char *by = json_object_get_string_member_with_default (entry, "ended_by", "");

      if (pid == g_ascii_strtoll (pids[0], NULL, 10))
        {
          g_assert_cmpstr (by, ==, "terminate");
          g_assert_nonnull (strstr (json_object_get_string_member (entry, "command"), "sleep 301"));
          found++;
        }
      else if (pid == g_ascii_strtoll (pids[1], NULL, 10))
        {
          g_assert_cmpstr (by, ==, "hangup");
          found++;
        }
    }
  g_assert_cmpuint (found, ==, 2);

  server_finish (&server);
}

static void
test_serve_cancel (void)
{
  g_auto(Server) server = { 0 };
  g_autoptr(GHashTable) responses = NULL;
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *fifo = terret_test_make_fifo (dir, "pid");
  g_autofree char *command = NULL;
  g_autofree char *pids = NULL;

  REQUIRE_BACKEND ("oneshot");

  g_test_summary ("cancel stops the run with that id: the cancel is acknowledged, "
                  "the run answers cancelled, and its processes are gone");
  server_start (&server, "--backend", "oneshot", NULL);

  command = g_strdup_printf ("sleep 1000 & echo $! $$ > '%s'; wait", fifo);
  server_send_run (&server, "{\"job\":7}", "a", command, 120);
  /* Another run in flight whose id differs only in type is not touched. */
  server_send_run (&server, "\"{\\\"job\\\":7}\"", "b", "exit 5", 0);
  pids = terret_test_read_fifo (fifo);

  server_send (&server, "{\"id\": \"c\", \"op\": \"cancel\", \"target\": {\"job\": 7}}");
  responses = server_recv_n (&server, 3);

  g_assert_true (json_object_get_boolean_member (response_for (responses, "\"c\""), "ok"));
  g_assert_cmpstr (error_code (response_for (responses, "{\"job\":7}")), ==, "cancelled");
  g_assert_cmpint (json_object_get_int_member (response_for (responses, "\"{\\\"job\\\":7}\""), "status"), ==, 5);
  terret_test_wait_gone_all (pids);

  /* Once answered, the run is no longer a target. */
  server_send (&server, "{\"id\": \"again\", \"op\": \"cancel\", \"target\": {\"job\": 7}}");
  {
    g_autoptr(JsonNode) response = server_recv (&server);

    g_assert_cmpstr (error_code (json_node_get_object (response)), ==, "invalid-request");
  }

  server_finish (&server);
}

static void
test_serve_cancel_session (void)
{
  g_auto(Server) server = { 0 };
  g_autoptr(GHashTable) responses = NULL;
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *fifo1 = terret_test_make_fifo (dir, "pid1");
  g_autofree char *fifo2 = terret_test_make_fifo (dir, "pid2");
  g_autofree char *command = NULL;
  g_autofree char *pids1 = NULL;
  g_autofree char *pids2 = NULL;
  g_autoptr(JsonNode) node = NULL;
  JsonObject *response;
  const char *message;

  REQUIRE_BACKEND ("oneshot");

  g_test_summary ("cancel with a session cancels what runs there; with a target too, "
                  "a target in another session is refused and left running");
  server_start (&server, "--backend", "oneshot", NULL);

  command = g_strdup_printf ("sleep 30 & echo $! $$ > '%s'; wait", fifo1);
  server_send_run (&server, "1", "s1", command, 120);
  g_clear_pointer (&command, g_free);
  command = g_strdup_printf ("sleep 30 & echo $! $$ > '%s'; wait", fifo2);
  server_send_run (&server, "\"t\"", "s2", command, 120);
  pids1 = terret_test_read_fifo (fifo1);
  pids2 = terret_test_read_fifo (fifo2);

  /* The target runs in s2: naming s1 with it is an error that says so. */
  server_send (&server, "{\"id\": \"x\", \"op\": \"cancel\", \"target\": \"t\", \"session\": \"s1\"}");
  response = server_recv_object (&server, &node);
  g_assert_cmpstr (error_code (response), ==, "invalid-request");
  message = json_object_get_string_member (json_object_get_object_member (response, "error"), "message");
  g_assert_nonnull (strstr (message, "s2"));
  g_assert_nonnull (strstr (message, "s1"));
  g_clear_pointer (&node, json_node_unref);

  /* The session alone names its run. */
  server_send (&server, "{\"id\": \"c1\", \"op\": \"cancel\", \"session\": \"s1\"}");
  responses = server_recv_n (&server, 2);
  g_assert_true (json_object_get_boolean_member (response_for (responses, "\"c1\""), "ok"));
  g_assert_cmpstr (error_code (response_for (responses, "1")), ==, "cancelled");
  terret_test_wait_gone_all (pids1);
  g_clear_pointer (&responses, g_hash_table_unref);

  /* Nothing is left in flight in s1; s2's run was never touched. */
  server_send (&server, "{\"id\": \"c2\", \"op\": \"cancel\", \"session\": \"s1\"}");
  response = server_recv_object (&server, &node);
  g_assert_cmpstr (error_code (response), ==, "invalid-request");
  g_clear_pointer (&node, json_node_unref);
  server_send (&server, "{\"id\": \"c3\", \"op\": \"cancel\", \"session\": 7}");
  response = server_recv_object (&server, &node);
  g_assert_cmpstr (error_code (response), ==, "invalid-request");
  g_clear_pointer (&node, json_node_unref);

  /* Target and its own session together. */
  server_send (&server, "{\"id\": \"c4\", \"op\": \"cancel\", \"target\": \"t\", \"session\": \"s2\"}");
  responses = server_recv_n (&server, 2);
  g_assert_true (json_object_get_boolean_member (response_for (responses, "\"c4\""), "ok"));
  g_assert_cmpstr (error_code (response_for (responses, "\"t\"")), ==, "cancelled");
  terret_test_wait_gone_all (pids2);

  server_finish (&server);
}

/* Two sessions, one reading a FIFO and one writing it: both finish only if
 * the server runs them at the same time. Were it to run them one after
 * the other, the reader would time out with no writer, and then the writer
 * with no reader; the timeouts only turn that failure into an answer. */
static void
check_concurrent (const char *backend)
{
  g_auto(Server) server = { 0 };
  g_autoptr(GHashTable) responses = NULL;
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *fifo = terret_test_make_fifo (dir, "pipe");
  g_autofree char *reader = g_strdup_printf ("cat '%s'", fifo);
  g_autofree char *writer = g_strdup_printf ("echo through > '%s'", fifo);
  JsonObject *read_response, *write_response;
  const char *stdout_text;

  server_start (&server, "--backend", backend, NULL);
  server_send_run (&server, "\"reader\"", "r", reader, 30);
  server_send_run (&server, "\"writer\"", "w", writer, 30);
  responses = server_recv_n (&server, 2);

  read_response = response_for (responses, "\"reader\"");
  write_response = response_for (responses, "\"writer\"");
  g_assert_true (json_object_get_boolean_member (read_response, "ok"));
  g_assert_true (json_object_get_boolean_member (write_response, "ok"));
  g_assert_false (json_object_get_boolean_member (read_response, "timed_out"));
  g_assert_false (json_object_get_boolean_member (write_response, "timed_out"));
  g_assert_cmpint (json_object_get_int_member (read_response, "status"), ==, 0);
  g_assert_cmpint (json_object_get_int_member (write_response, "status"), ==, 0);

  /* A terminal may turn \n into \r\n; the text itself must be there. */
  stdout_text = json_object_get_string_member (read_response, "stdout");
  g_assert_nonnull (strstr (stdout_text, "through"));

  server_finish (&server);
}

static void
test_serve_concurrent_oneshot (void)
{
  REQUIRE_BACKEND ("oneshot");
  check_concurrent ("oneshot");
}

static void
test_serve_concurrent_pty (void)
{
  REQUIRE_BACKEND ("pty");
  check_concurrent ("pty");
}

static void
test_serve_busy_pty (void)
{
  g_auto(Server) server = { 0 };
  g_autoptr(GHashTable) responses = NULL;
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *fifo = terret_test_make_fifo (dir, "pipe");
  g_autofree char *reader = g_strdup_printf ("cat '%s'", fifo);
  g_autofree char *writer = g_strdup_printf ("echo done > '%s'", fifo);
  JsonNode *busy;

  REQUIRE_BACKEND ("pty");

  g_test_summary ("A second run in a pty session that is running one is refused as busy, "
                  "at once, while the first goes on");
  server_start (&server, "--backend", "pty", NULL);

  server_send_run (&server, "\"first\"", "x", reader, 30);
  server_send_run (&server, "\"second\"", "x", "echo second", 60);
  /* The first cannot end before the writer below runs, so the busy
   * answer is the first one to arrive. */
  busy = server_recv (&server);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (busy), "id"), ==, "second");
  g_assert_cmpstr (error_code (json_node_get_object (busy)), ==, "busy");
  json_node_unref (busy);

  server_send_run (&server, "\"writer\"", "y", writer, 30);
  responses = server_recv_n (&server, 2);
  g_assert_true (json_object_get_boolean_member (response_for (responses, "\"first\""), "ok"));
  g_assert_cmpint (json_object_get_int_member (response_for (responses, "\"first\""), "status"), ==, 0);
  g_assert_true (json_object_get_boolean_member (response_for (responses, "\"writer\""), "ok"));

  server_finish (&server);
}

static void
check_eof_in_flight (const char *backend)
{
  g_auto(Server) server = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *pid_fifo = terret_test_make_fifo (dir, "pid");
  g_autofree char *go_fifo = terret_test_make_fifo (dir, "go");
  g_autofree char *command = NULL;
  g_autofree char *pids = NULL;
  g_autofree char *line = NULL;
  JsonObject *response;

  server_start (&server, "--backend", backend, NULL);

  /* A background process in the session as well: the end of input must
   * take it too once the run has answered. */
  command = g_strdup_printf ("(exec sleep 1000) & echo $! $$ > '%s'; cat '%s'",
                             pid_fifo, go_fifo);
  server_send_run (&server, "\"last\"", "s", command, 120);
  pids = terret_test_read_fifo (pid_fifo);

  g_output_stream_close (server.input, NULL, &error);
  g_assert_no_error (error);

  /* Input is over but the run is still waiting for its go. */
  terret_test_write_fifo (go_fifo, "bye\n");

  node = server_recv (&server);
  response = json_node_get_object (node);
  g_assert_cmpstr (json_object_get_string_member (response, "id"), ==, "last");
  g_assert_true (json_object_get_boolean_member (response, "ok"));
  g_assert_cmpint (json_object_get_int_member (response, "status"), ==, 0);
  g_assert_nonnull (strstr (json_object_get_string_member (response, "stdout"), "bye"));

  line = g_data_input_stream_read_line (server.output, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (line);
  g_subprocess_wait (server.proc, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (exit_code (server.proc), ==, 0);

  terret_test_wait_gone_all (pids);
}

static void
test_serve_eof_oneshot (void)
{
  REQUIRE_BACKEND ("oneshot");
  g_test_summary ("At the end of input a run in flight still answers, then the server "
                  "exits 0 and nothing it started is left running");
  check_eof_in_flight ("oneshot");
}

static void
test_serve_eof_pty (void)
{
  REQUIRE_BACKEND ("pty");
  check_eof_in_flight ("pty");
}

static void
test_serve_signal (void)
{
  g_auto(Server) server = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *fifo = terret_test_make_fifo (dir, "pid");
  g_autofree char *command = NULL;
  g_autofree char *pids = NULL;

  REQUIRE_BACKEND ("oneshot");

  g_test_summary ("SIGTERM to serve cancels what runs, answers it, and exits 143");
  server_start (&server, "--backend", "oneshot", NULL);
  command = g_strdup_printf ("sleep 1000 & echo $! $$ > '%s'; wait", fifo);
  server_send_run (&server, "1", NULL, command, 120);
  pids = terret_test_read_fifo (fifo);

  g_subprocess_send_signal (server.proc, SIGTERM);
  node = server_recv (&server);
  g_assert_cmpstr (error_code (json_node_get_object (node)), ==, "cancelled");

  g_subprocess_wait (server.proc, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (exit_code (server.proc), ==, 128 + SIGTERM);
  terret_test_wait_gone_all (pids);
}


/* Interactive ops ------------------------------------------------------ */

/* Polls @session until the command ended, collecting its stdout. */
static void
server_poll_to_end (Server     *server,
                    const char *session,
                    GString    *out,
                    int         status)
{
  for (guint i = 0; i < 100; i++)
    {
      g_autoptr(JsonNode) node = NULL;
      g_autofree char *line = g_strdup_printf ("{\"id\": \"p%u\", \"op\": \"poll\", \"session\": \"%s\", \"wait\": 10}",
                                               i, session);
      JsonObject *response;

      server_send (server, line);
      response = server_recv_object (server, &node);
      g_assert_true (json_object_get_boolean_member (response, "ok"));
      g_string_append (out, json_object_get_string_member (response, "stdout"));
      if (!json_object_get_boolean_member (response, "running"))
        {
          if (status >= 0)
            g_assert_cmpint (json_object_get_int_member (response, "status"), ==, status);
          return;
        }
      assert_member_null (response, "status");
    }

  g_assert_not_reached ();
}

/* The loop of a host with a long-running command (docs/interactive.md):
 * start a dev server, have it back after 2 s still running, list it, read
 * the middle of its log, stop it. */
static void
check_host_loop (const char *backend)
{
  g_auto(Server) server = { 0 };
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *log = NULL;
  JsonObject *response, *entry = NULL;
  JsonArray *sessions;
  const char *full_output;
  /* A dev server: a build log past max-output, then requests until ^C. */
  const char *dev_server =
    "for i in $(seq 1 2000); do echo \"compiled module $i\"; done; "
    "echo 'src/app.c:12:3: error: unused result (a warning made an error)'; "
    "echo 'listening on :8000'; i=0; "
    "while :; do echo \"GET /$i 200\"; i=$((i+1)); sleep 0.05; done";
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *line = NULL;

  server_start (&server, "--backend", backend, "--set", "max-output=4096",
                "--set", "capture=head-tail", NULL);

  /* Start it: back after 2 s, running, with the head and tail of its log
   * and the whole of it in a file. */
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "id");
  json_builder_add_int_value (builder, 1);
  json_builder_set_member_name (builder, "session");
  json_builder_add_string_value (builder, "dev");
  json_builder_set_member_name (builder, "command");
  json_builder_add_string_value (builder, dev_server);
  json_builder_set_member_name (builder, "return_after");
  json_builder_add_int_value (builder, 2);
  json_builder_set_member_name (builder, "deadline");
  json_builder_add_int_value (builder, 120);
  json_builder_set_member_name (builder, "keep_full_output");
  json_builder_add_boolean_value (builder, TRUE);
  json_builder_end_object (builder);
  root = json_builder_get_root (builder);
  line = json_to_string (root, FALSE);
  server_send (&server, line);
  response = server_recv_object (&server, &node);
  g_assert_true (json_object_get_boolean_member (response, "ok"));
  g_assert_true (json_object_get_boolean_member (response, "running"));
  g_assert_cmpstr (json_object_get_string_member (response, "clock"), ==, "return-after");
  g_assert_cmpint (json_object_get_int_member (response, "stdout_dropped"), >, 0);
  g_assert_nonnull (strstr (json_object_get_string_member (response, "stdout"), "compiled module 1\n"));
  g_assert_nonnull (strstr (json_object_get_string_member (response, "stdout"), "listening on :8000\n"));
  full_output = json_object_get_string_member (response, "full_output");
  g_assert_nonnull (full_output);
  log = g_strdup (full_output);
  g_clear_pointer (&node, json_node_unref);

  /* List it: a host that lost the session's name finds it here. */
  server_send (&server, "{\"id\": 2, \"op\": \"list\"}");
  response = server_recv_object (&server, &node);
  g_assert_true (json_object_get_boolean_member (response, "ok"));
  sessions = json_object_get_array_member (response, "sessions");
  for (guint i = 0; i < json_array_get_length (sessions); i++)
    if (g_str_equal (json_object_get_string_member (json_array_get_object_element (sessions, i), "session"),
                     "dev"))
      entry = json_array_get_object_element (sessions, i);
  g_assert_nonnull (entry);
  g_assert_cmpstr (json_object_get_string_member (entry, "state"), ==, "detached");
  g_assert_cmpstr (json_object_get_string_member (entry, "command"), ==, dev_server);
  g_assert_nonnull (json_object_get_string_member (entry, "started"));
  g_assert_cmpint (json_object_get_int_member (entry, "output_bytes"), >, 4096);
  g_clear_pointer (&node, json_node_unref);

  /* Read the middle of its log through serve: the error line by a
   * pattern, with its line number, then a line the capture left out. */
  server_send (&server, "{\"id\": 5, \"op\": \"read\", \"session\": \"dev\", "
                        "\"pattern\": \": error: \"}");
  response = server_recv_object (&server, &node);
  g_assert_true (json_object_get_boolean_member (response, "ok"));
  {
    JsonArray *matches = json_object_get_array_member (response, "matches");
    JsonObject *match;

    g_assert_cmpuint (json_array_get_length (matches), ==, 1);
    match = json_array_get_object_element (matches, 0);
    g_assert_cmpint (json_object_get_int_member (match, "line"), ==, 2001);
    g_assert_true (g_str_has_prefix (json_object_get_string_member (match, "text"),
                                     "src/app.c:12:3: error: unused result"));
  }
  g_clear_pointer (&node, json_node_unref);
  server_send (&server, "{\"id\": 6, \"op\": \"read\", \"session\": \"dev\", "
                        "\"line\": 1000, \"lines\": 2}");
  response = server_recv_object (&server, &node);
  g_assert_true (json_object_get_boolean_member (response, "ok"));
  g_assert_cmpstr (json_object_get_string_member (response, "data"), ==,
                   "compiled module 1000\ncompiled module 1001\n");
  g_clear_pointer (&node, json_node_unref);

  /* Stop it: ^C, and its end collected. */
  server_send (&server, "{\"id\": 3, \"op\": \"interrupt\", \"session\": \"dev\"}");
  response = server_recv_object (&server, &node);
  g_assert_true (json_object_get_boolean_member (response, "ok"));
  g_clear_pointer (&node, json_node_unref);
  server_poll_to_end (&server, "dev", out, -1);

  /* Listed no more as running. */
  server_send (&server, "{\"id\": 4, \"op\": \"list\"}");
  response = server_recv_object (&server, &node);
  sessions = json_object_get_array_member (response, "sessions");
  for (guint i = 0; i < json_array_get_length (sessions); i++)
    {
      JsonObject *other = json_array_get_object_element (sessions, i);

      if (g_str_equal (json_object_get_string_member (other, "session"), "dev"))
        g_assert_cmpstr (json_object_get_string_member (other, "state"), ==, "idle");
    }
  g_clear_pointer (&node, json_node_unref);

  server_finish (&server);
  /* The log went with the session. */
  g_assert_false (g_file_test (log, G_FILE_TEST_EXISTS));
}

static void
test_serve_host_loop_pty (void)
{
  REQUIRE_BACKEND ("pty");
  g_test_summary ("serve: a host's loop over a dev server on pty: back after 2 s, listed, "
                  "its log's middle read, stopped with ^C");
  check_host_loop ("pty");
}

static void
test_serve_host_loop_oneshot (void)
{
  REQUIRE_BACKEND ("oneshot");
  g_test_summary ("serve: a host's loop over a dev server on oneshot: back after 2 s, listed, "
                  "its log's middle read, stopped with ^C");
  check_host_loop ("oneshot");
}

/* The CLI's own cwd, environment and clocks, and the statuses of a
 * pipeline in --json. */
static void
test_cli_request_options (void)
{
  g_autoptr(GBytes) out = NULL;
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *text = NULL;
  JsonObject *response;
  JsonArray *statuses;

  REQUIRE_BACKEND ("pty");
  g_test_summary ("--cwd, --env, --deadline and --idle-timeout reach the run; --json has "
                  "the clock and the pipeline's statuses");

  g_assert_cmpint (cli_run (&out, NULL, "--backend", "pty", "--json", "--cwd", "/usr",
                            "--env", "CLI_A=one", "--env", "CLI_B=two=2", "--",
                            "echo \"$PWD $CLI_A $CLI_B\"; false | (exit 3) | true", NULL), ==, 0);
  text = bytes_to_string (out);
  node = parse_json (text);
  response = json_node_get_object (node);
  g_assert_cmpstr (json_object_get_string_member (response, "stdout"), ==, "/usr one two=2\n");
  statuses = json_object_get_array_member (response, "pipestatus");
  g_assert_cmpuint (json_array_get_length (statuses), ==, 3);
  g_assert_cmpint (json_array_get_int_element (statuses, 0), ==, 1);
  g_assert_cmpint (json_array_get_int_element (statuses, 1), ==, 3);
  g_assert_cmpint (json_array_get_int_element (statuses, 2), ==, 0);
  assert_member_null (response, "clock");
  g_clear_pointer (&node, json_node_unref);
  g_clear_pointer (&out, g_bytes_unref);

  g_assert_cmpint (cli_run (&out, NULL, "--backend", "oneshot", "--json", "--deadline", "0.5",
                            "-c", "echo up; sleep 60", NULL), ==, 124);
  g_free (text);
  text = bytes_to_string (out);
  node = parse_json (text);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (node), "clock"), ==, "deadline");
  g_clear_pointer (&node, json_node_unref);
  g_clear_pointer (&out, g_bytes_unref);

  g_assert_cmpint (cli_run (&out, NULL, "--backend", "pty", "--json", "--idle-timeout", "0.5",
                            "--on-idle", "kill", "-c", "echo up; sleep 60", NULL), ==, 124);
  g_free (text);
  text = bytes_to_string (out);
  node = parse_json (text);
  g_assert_cmpstr (json_object_get_string_member (json_node_get_object (node), "clock"), ==, "idle");
  g_clear_pointer (&node, json_node_unref);
  g_clear_pointer (&out, g_bytes_unref);

  g_assert_cmpint (cli_run (NULL, NULL, "--backend", "pty", "--cwd", "/nonexistent", "-c", "true",
                            NULL), ==, 125);
  g_assert_cmpint (cli_run (NULL, NULL, "--backend", "pty", "--on-idle", "wait", "-c", "true",
                            NULL), ==, 125);
}

static void
test_serve_interactive_pty (void)
{
  g_auto(Server) server = { 0 };
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(JsonNode) node = NULL;
  JsonObject *response;

  REQUIRE_BACKEND ("pty");

  g_test_summary ("serve: a run with on_timeout detach returns running: true, as soon as "
                  "it waits for input; input and poll drive the command to its end; a second "
                  "run meanwhile is busy");
  server_start (&server, "--backend", "pty", NULL);

  server_send (&server, "{\"id\": 1, \"session\": \"s\", \"command\": \"read x; echo \\\"got:$x\\\"\", "
                        "\"timeout\": 60, \"on_timeout\": \"detach\"}");
  response = server_recv_object (&server, &node);
  g_assert_true (json_object_get_boolean_member (response, "ok"));
  g_assert_true (json_object_get_boolean_member (response, "running"));
  g_assert_true (json_object_get_boolean_member (response, "waiting_for_input"));
  g_assert_cmpstr (json_object_get_string_member (response, "clock"), ==, "input");
  assert_member_null (response, "status");
  g_clear_pointer (&node, json_node_unref);

  server_send (&server, "{\"id\": 2, \"session\": \"s\", \"command\": \"echo no\"}");
  response = server_recv_object (&server, &node);
  g_assert_cmpstr (error_code (response), ==, "busy");
  g_clear_pointer (&node, json_node_unref);

  /* Base64 input: "hi\n". */
  server_send (&server, "{\"id\": 3, \"op\": \"input\", \"session\": \"s\", \"data_base64\": \"aGkK\"}");
  response = server_recv_object (&server, &node);
  g_assert_true (json_object_get_boolean_member (response, "ok"));
  g_clear_pointer (&node, json_node_unref);

  server_poll_to_end (&server, "s", out, 0);
  g_assert_cmpstr (out->str, ==, "got:hi\n");

  /* Idle again: a poll has nothing to collect. */
  server_send (&server, "{\"id\": 4, \"op\": \"poll\", \"session\": \"s\"}");
  response = server_recv_object (&server, &node);
  g_assert_cmpstr (error_code (response), ==, "invalid-request");
  g_clear_pointer (&node, json_node_unref);

  /* Text input and an interrupt. */
  g_string_truncate (out, 0);
  server_send (&server, "{\"id\": 5, \"session\": \"s\", \"command\": \"read y; echo \\\"[$y]\\\"; sleep 100\", "
                        "\"timeout\": 0.2, \"on_timeout\": \"detach\"}");
  response = server_recv_object (&server, &node);
  g_assert_true (json_object_get_boolean_member (response, "running"));
  g_string_append (out, json_object_get_string_member (response, "stdout"));
  g_clear_pointer (&node, json_node_unref);

  server_send (&server, "{\"id\": 6, \"op\": \"input\", \"session\": \"s\", \"data\": \"yes\\n\"}");
  response = server_recv_object (&server, &node);
  g_assert_true (json_object_get_boolean_member (response, "ok"));
  g_clear_pointer (&node, json_node_unref);

  /* The interrupt waits for the answer to be read: ^C flushes what the
   * terminal has not delivered yet, as it does for a human. */
  for (guint i = 0; i < 100 && strstr (out->str, "[yes]") == NULL; i++)
    {
      server_send (&server, "{\"id\": \"w\", \"op\": \"poll\", \"session\": \"s\", \"wait\": 10}");
      response = server_recv_object (&server, &node);
      g_assert_true (json_object_get_boolean_member (response, "running"));
      g_string_append (out, json_object_get_string_member (response, "stdout"));
      g_clear_pointer (&node, json_node_unref);
    }

  /* How it ends depends on where the interrupt finds the command (130
   * while sleeping); that it ends is what serve promises. A ^C that lands
   * while bash is between the echo and the sleep is answered by bash
   * itself (a newline, which counts as a reaction) and the sleep then
   * starts: press it again, as a person at the terminal would. */
  server_send (&server, "{\"id\": 7, \"op\": \"interrupt\", \"session\": \"s\"}");
  response = server_recv_object (&server, &node);
  g_assert_true (json_object_get_boolean_member (response, "ok"));
  g_clear_pointer (&node, json_node_unref);

  for (guint i = 0; ; i++)
    {
      gboolean quiet;

      g_assert_cmpuint (i, <, 20);
      server_send (&server, "{\"id\": \"i\", \"op\": \"poll\", \"session\": \"s\", \"wait\": 3}");
      response = server_recv_object (&server, &node);
      g_assert_true (json_object_get_boolean_member (response, "ok"));
      g_string_append (out, json_object_get_string_member (response, "stdout"));
      quiet = *json_object_get_string_member (response, "stdout") == '\0';
      if (!json_object_get_boolean_member (response, "running"))
        {
          g_clear_pointer (&node, json_node_unref);
          break;
        }
      g_clear_pointer (&node, json_node_unref);

      /* Quiet and still running: the ^C went to bash, not the sleep. */
      if (quiet)
        {
          server_send (&server, "{\"id\": 7, \"op\": \"interrupt\", \"session\": \"s\"}");
          g_clear_pointer (&node, json_node_unref);
          response = server_recv_object (&server, &node);
          g_clear_pointer (&node, json_node_unref);
        }
    }
  g_assert_true (g_str_has_prefix (out->str, "[yes]\n"));

  /* Bad requests. */
  server_send (&server, "{\"id\": 8, \"op\": \"input\", \"session\": \"s\"}");
  response = server_recv_object (&server, &node);
  g_assert_cmpstr (error_code (response), ==, "invalid-request");
  g_clear_pointer (&node, json_node_unref);
  server_send (&server, "{\"id\": 9, \"command\": \"true\", \"on_timeout\": \"wait\"}");
  response = server_recv_object (&server, &node);
  g_assert_cmpstr (error_code (response), ==, "invalid-request");
  g_clear_pointer (&node, json_node_unref);

  server_finish (&server);
}

static void
test_serve_interactive_unsupported (void)
{
  g_auto(Server) server = { 0 };
  g_autoptr(JsonNode) node = NULL;
  JsonObject *response;

  g_test_summary ("serve: a backend without the interactive operations answers "
                  "not-supported");
  server_start (&server, "--backend", "noshell", NULL);

  server_send (&server, "{\"id\": 1, \"op\": \"input\", \"data\": \"x\"}");
  response = server_recv_object (&server, &node);
  g_assert_cmpstr (error_code (response), ==, "not-supported");
  g_clear_pointer (&node, json_node_unref);
  server_send (&server, "{\"id\": 2, \"op\": \"interrupt\"}");
  response = server_recv_object (&server, &node);
  g_assert_cmpstr (error_code (response), ==, "not-supported");
  g_clear_pointer (&node, json_node_unref);
  server_send (&server, "{\"id\": 3, \"op\": \"poll\", \"wait\": 1}");
  response = server_recv_object (&server, &node);
  g_assert_cmpstr (error_code (response), ==, "not-supported");
  g_clear_pointer (&node, json_node_unref);
  server_send (&server, "{\"id\": 4, \"command\": \"true\", \"on_timeout\": \"detach\"}");
  response = server_recv_object (&server, &node);
  g_assert_cmpstr (error_code (response), ==, "not-supported");
  g_clear_pointer (&node, json_node_unref);

  server_finish (&server);
}

int
main (int    argc,
      char **argv)
{
  terret_test_init (&argc, &argv);
  /* The servers these tests start inherit it: a GLib critical any request
   * provokes aborts the server, and the test sees it die. */
  g_setenv ("G_DEBUG", "gc-friendly,fatal-criticals", TRUE);

  g_test_add_func ("/cli/exit/status", test_exit_status);
  g_test_add_func ("/cli/exit/timeout", test_exit_timeout);
  g_test_add_func ("/cli/exit/signal", test_exit_signal);
  g_test_add_func ("/cli/exit/unknown-backend", test_exit_unknown_backend);
  g_test_add_func ("/cli/exit/bad-setting", test_exit_bad_setting);
  g_test_add_func ("/cli/exit/no-shell", test_exit_no_shell);
  g_test_add_func ("/cli/exit/usage", test_exit_usage);
  g_test_add_func ("/cli/exit/cli-signal", test_cli_signal);
  g_test_add_func ("/cli/stream/separate", test_stream_separate);
  g_test_add_func ("/cli/stream/live", test_stream_live);
  g_test_add_func ("/cli/words", test_words);
  g_test_add_func ("/cli/json/fields", test_json_fields);
  g_test_add_func ("/cli/json/base64", test_json_base64);
  g_test_add_func ("/cli/json/timeout", test_json_timeout);
  g_test_add_func ("/cli/json/not-run", test_json_not_run);
  g_test_add_func ("/cli/list-backends/text", test_list_text);
  g_test_add_func ("/cli/list-backends/json", test_list_json);
  g_test_add_func ("/cli/serve/bad-options", test_serve_bad_options);
  g_test_add_func ("/cli/serve/empty", test_serve_empty);
  g_test_add_func ("/cli/serve/ids", test_serve_ids);
  g_test_add_func ("/cli/serve/malformed", test_serve_malformed);
  g_test_add_func ("/cli/serve/refusals", test_serve_refusals);
  g_test_add_func ("/cli/serve/long-line", test_serve_long_line);
  g_test_add_func ("/cli/serve/close", test_serve_close);
  g_test_add_func ("/cli/serve/close-in-flight", test_serve_close_in_flight);
  g_test_add_func ("/cli/serve/close-lists", test_serve_close_lists);
  g_test_add_func ("/cli/serve/read/pty", test_serve_read_pty);
  g_test_add_func ("/cli/serve/read/oneshot", test_serve_read_oneshot);
  g_test_add_func ("/cli/serve/cancel", test_serve_cancel);
  g_test_add_func ("/cli/serve/cancel-session", test_serve_cancel_session);
  g_test_add_func ("/cli/serve/concurrent/oneshot", test_serve_concurrent_oneshot);
  g_test_add_func ("/cli/serve/concurrent/pty", test_serve_concurrent_pty);
  g_test_add_func ("/cli/serve/busy/pty", test_serve_busy_pty);
  g_test_add_func ("/cli/serve/eof/oneshot", test_serve_eof_oneshot);
  g_test_add_func ("/cli/serve/eof/pty", test_serve_eof_pty);
  g_test_add_func ("/cli/serve/signal", test_serve_signal);
  g_test_add_func ("/cli/serve/interactive/pty", test_serve_interactive_pty);
  g_test_add_func ("/cli/serve/host-loop/pty", test_serve_host_loop_pty);
  g_test_add_func ("/cli/serve/host-loop/oneshot", test_serve_host_loop_oneshot);
  g_test_add_func ("/cli/request-options", test_cli_request_options);
  g_test_add_func ("/cli/serve/interactive/unsupported", test_serve_interactive_unsupported);

  return g_test_run ();
}
