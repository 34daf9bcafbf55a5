/* test-input.c: commands that wait for input on their terminal, seen and answered
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Real programs on the pty backend: a `[Y/n]` prompt, a secret, git's
 * pager, python's input(), a password read from /dev/tty. Each is handed
 * back as soon as it waits (a plain run, on-input report), says what it
 * waits for, and is answered through the API and through serve's input
 * op to its right output. Commands that are quiet for other reasons (a
 * CPU loop, a sleep, a pipe, a socket, a lock) are never said to wait.
 */

#include <string.h>

#include <json-glib/json-glib.h>

#include "terret-test-utils.h"

static TerretExecutor *
new_executor (const char *backend)
{
  g_autoptr(GError) error = NULL;
  TerretExecutor *executor = terret_executor_new (backend, &error);

  g_assert_no_error (error);
  g_assert_nonnull (executor);
  return executor;
}

static void
set_setting (TerretExecutor *executor,
             const char     *key,
             const char     *value)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (terret_executor_set_setting (executor, key, value, &error));
  g_assert_no_error (error);
}

/* A run of @command in @session; with @return_after > 0 it detaches. */
static TerretResult *
run (TerretExecutor *executor,
     const char     *session,
     const char     *command,
     double          return_after)
{
  g_autoptr(TerretRequest) request = terret_request_new (command);
  g_autoptr(GError) error = NULL;
  TerretResult *result;

  terret_request_set_session (request, session);
  if (return_after > 0)
    terret_request_set_return_after (request, return_after);
  else
    terret_request_set_timeout (request, 120);
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (result);
  return result;
}

static void
append_stdout (GString      *out,
               TerretResult *result)
{
  gsize len = 0;
  const char *data = g_bytes_get_data (terret_result_get_stdout (result), &len);

  g_string_append_len (out, data, len);
}

/* The result of a command handed back because it waits for input. */
static void
assert_waits (TerretResult *result,
              const char   *prompt,
              gboolean      secret,
              gboolean      pager)
{
  g_assert_true (terret_result_get_running (result));
  g_assert_false (terret_result_get_exited (result));
  g_assert_false (terret_result_get_timed_out (result));
  g_assert_cmpint (terret_result_get_clock (result), ==, TERRET_CLOCK_INPUT);
  g_assert_cmpint (terret_result_get_input_state (result), ==, TERRET_INPUT_STATE_WAITING);
  g_assert_cmpstr (terret_result_get_input_prompt (result), ==, prompt);
  g_assert_cmpint (terret_result_get_input_secret (result), ==, secret);
  g_assert_cmpint (terret_result_get_input_pager (result), ==, pager);
  g_assert_cmpfloat (terret_result_get_input_since (result), >=, 0);
  g_assert_nonnull (strstr (terret_result_get_notice (result), "waits for input"));
}

static void
send_text (TerretExecutor *executor,
           const char     *session,
           const char     *text)
{
  g_autoptr(GBytes) data = g_bytes_new (text, strlen (text));
  g_autoptr(GError) error = NULL;

  g_assert_true (terret_executor_send_input (executor, session, data, &error));
  g_assert_no_error (error);
}

/* Polls @session into @out until the command ended. Bounded by a count,
 * never by the clock. */
static TerretResult *
poll_to_end (TerretExecutor *executor,
             const char     *session,
             GString        *out)
{
  for (guint i = 0; i < 200; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TerretResult) result = terret_executor_poll (executor, session, 10, NULL, &error);

      g_assert_no_error (error);
      append_stdout (out, result);
      if (!terret_result_get_running (result))
        {
          g_assert_cmpint (terret_result_get_input_state (result), ==, TERRET_INPUT_STATE_NOT_WAITING);
          return g_steal_pointer (&result);
        }
    }
  g_assert_not_reached ();
  return NULL;
}

/* Polls @session into @out until the command waits for input again. */
static TerretResult *
poll_to_wait (TerretExecutor *executor,
              const char     *session,
              GString        *out)
{
  for (guint i = 0; i < 200; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TerretResult) result = terret_executor_poll (executor, session, 10, NULL, &error);

      g_assert_no_error (error);
      append_stdout (out, result);
      g_assert_true (terret_result_get_running (result));
      if (terret_result_get_input_state (result) == TERRET_INPUT_STATE_WAITING)
        return g_steal_pointer (&result);
    }
  g_assert_not_reached ();
  return NULL;
}

/* A prompt, answered through the API: the run is handed back at once
 * with what it waits for, and the answer takes it to its end. */
static void
check_answered (const char *command,
                const char *prompt,
                gboolean    secret,
                gboolean    pager,
                const char *answer,
                const char *expected_end)
{
  g_autoptr(TerretExecutor) executor = new_executor ("pty");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GString) out = g_string_new (NULL);

  result = run (executor, "ask", command, 0);
  assert_waits (result, prompt, secret, pager);
  append_stdout (out, result);
  g_clear_object (&result);

  send_text (executor, "ask", answer);
  result = poll_to_end (executor, "ask", out);
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  g_assert_true (g_str_has_suffix (out->str, expected_end));
}

static void
test_yes_no (void)
{
  g_test_summary ("An apt-style [Y/n] prompt (read -p) is handed back waiting, with its "
                  "prompt; y answers it");
  check_answered ("echo 'Need to get 1 MB.'; read -p 'Do you want to continue? [Y/n] ' a; "
                  "echo \"answer=$a\"",
                  "Do you want to continue? [Y/n]", FALSE, FALSE, "y\n", "answer=y\n");
}

static void
test_secret (void)
{
  g_test_summary ("read -s waits for a secret: echo is off");
  check_answered ("read -s -p 'Passphrase: ' p; echo; echo \"length=${#p}\"",
                  "Passphrase:", TRUE, FALSE, "hunter2\n", "length=7\n");
}

static void
test_python (void)
{
  g_test_summary ("python3's input() with no prompt: waiting, no prompt; a line answers it");
  check_answered ("python3 -c 'print(\"you said\", input())'", NULL, FALSE, FALSE, "hi\n",
                  "you said hi\n");
}

static void
test_dev_tty (void)
{
  g_test_summary ("A sudo-like password prompt read from /dev/tty with stdin elsewhere: a "
                  "secret");
  check_answered ("ask_password () { read -s -p '[sudo] password for user: ' pw </dev/tty; echo; "
                  "echo \"authenticated ${#pw}\"; }; ask_password </dev/null",
                  "[sudo] password for user:", TRUE, FALSE, "pw\n", "authenticated 2\n");
}

static void
test_pager (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ("pty");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *setup = NULL;
  g_autofree char *log = NULL;

  g_autofree char *git = g_find_program_in_path ("git");
  g_autofree char *less = g_find_program_in_path ("less");

  if (git == NULL || less == NULL)
    {
      g_test_skip ("git or less is not installed");
      return;
    }
  g_test_summary ("git log with a pager (less): handed back with the pager flag; q ends it");

  setup = g_strdup_printf ("cd '%s' && git init -q && for i in 1 2 3; do git -c user.name=t "
                           "-c user.email=t@example.org commit -q --allow-empty -m \"change $i\"; "
                           "done", dir);
  result = run (executor, "git", setup, 0);
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  g_assert_cmpint (terret_result_get_input_state (result), ==, TERRET_INPUT_STATE_NOT_WAITING);
  g_clear_object (&result);

  /* The session's defaults page with cat; this asks for less, always. */
  log = g_strdup_printf ("cd '%s' && TERM=xterm LESS= GIT_PAGER=less git -p log --format=%%s", dir);
  result = run (executor, "git", log, 0);
  assert_waits (result, "(END)", FALSE, TRUE);
  append_stdout (out, result);
  g_assert_nonnull (strstr (out->str, "change 3\r\nchange 2\r\nchange 1"));
  g_clear_object (&result);

  send_text (executor, "git", "q");
  result = poll_to_end (executor, "git", out);
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
}

/* A command that waits twice: a poll that waits returns when it waits
 * again, with the new prompt. */
static void
test_waits_again (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ("pty");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GString) out = g_string_new (NULL);

  g_test_summary ("A command handed back waiting, answered, that waits again: polls say so "
                  "with the second prompt");
  result = run (executor, "twice", "read -p 'name? ' a; read -p 'age? ' b; echo \"$a is $b\"", 0);
  assert_waits (result, "name?", FALSE, FALSE);
  g_clear_object (&result);

  send_text (executor, "twice", "ada\n");
  result = poll_to_wait (executor, "twice", out);
  g_assert_cmpstr (terret_result_get_input_prompt (result), ==, "age?");
  g_assert_null (terret_result_get_notice (result));
  g_clear_object (&result);

  send_text (executor, "twice", "36\n");
  result = poll_to_end (executor, "twice", out);
  g_assert_cmpstr (out->str, ==, "age? ada is 36\n");
}

/* return_after hands a command back when it waits, not at the end of
 * its clock. */
static void
test_return_after (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ("pty");
  g_autoptr(TerretResult) result = NULL;

  g_test_summary ("A run with return_after is handed back as soon as its command waits for "
                  "input, not when return_after passes");
  result = run (executor, "ra", "printf 'Overwrite? '; read x", 3600);
  assert_waits (result, "Overwrite?", FALSE, FALSE);
}

typedef struct
{
  TerretExecutor *executor;
  guint told;
  char *prompt;
} Told;

static void
on_waiting (TerretRequest *request,
            const char    *prompt,
            gboolean       secret,
            gboolean       pager,
            gpointer       user_data)
{
  Told *told = user_data;

  told->told++;
  g_free (told->prompt);
  told->prompt = g_strdup (prompt);
  g_assert_false (secret);
  g_assert_false (pager);
  send_text (told->executor, "told", "blue\n");
}

static void
test_signal (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ("pty");
  g_autoptr(TerretRequest) request = terret_request_new ("read -p 'colour? ' c; echo \"[$c]\"");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  Told told = { executor, 0, NULL };

  g_test_summary ("on-input wait: the run waits on, the request's waiting-for-input says so "
                  "with the prompt, and a handler's answer ends it");
  set_setting (executor, "on-input", "wait");
  terret_request_set_session (request, "told");
  terret_request_set_timeout (request, 120);
  g_signal_connect (request, "waiting-for-input", G_CALLBACK (on_waiting), &told);
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (told.told, ==, 1);
  g_assert_cmpstr (told.prompt, ==, "colour?");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "colour? [blue]\n");
  g_assert_cmpint (terret_result_get_input_state (result), ==, TERRET_INPUT_STATE_NOT_WAITING);
  g_free (told.prompt);
}

static void
test_on_input_eof (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ("pty");
  g_autoptr(TerretResult) result = NULL;

  g_test_summary ("on-input eof: a read gets an end of file, and the command goes on to its "
                  "end; the session stays usable");
  set_setting (executor, "on-input", "eof");
  result = run (executor, TERRET_DEFAULT_SESSION, "read -p 'Continue? ' x; echo \"read=$?\"", 0);
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "Continue? read=1\n");
  g_clear_object (&result);

  result = run (executor, TERRET_DEFAULT_SESSION, "python3 -c 'input()' 2>/dev/null; echo \"python=$?\"", 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "python=1\n");
  g_clear_object (&result);

  /* One that keeps asking is handed back after three. */
  result = run (executor, TERRET_DEFAULT_SESSION, "while :; do read -p 'again? ' x; done", 0);
  assert_waits (result, "again?", FALSE, FALSE);
  g_assert_cmpstr (terret_result_get_input_prompt (result), ==, "again?");
  g_assert_true (terret_executor_interrupt (executor, TERRET_DEFAULT_SESSION, NULL));
  g_clear_object (&result);
  {
    g_autoptr(GString) out = g_string_new (NULL);

    result = poll_to_end (executor, TERRET_DEFAULT_SESSION, out);
  }
  g_clear_object (&result);
  terret_test_assert_terminal_run (executor, "echo next", 0, "next\n");
}

static void
test_on_input_fail (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ("pty");
  g_autoptr(TerretResult) result = NULL;

  g_test_summary ("on-input fail: the command is stopped with its session, the prompt in the "
                  "notice; the next run gets a fresh session");
  set_setting (executor, "on-input", "fail");
  result = run (executor, TERRET_DEFAULT_SESSION, "read -p 'Delete everything? [y/N] ' x", 0);
  g_assert_false (terret_result_get_running (result));
  g_assert_false (terret_result_get_exited (result));
  g_assert_cmpint (terret_result_get_clock (result), ==, TERRET_CLOCK_INPUT);
  g_assert_nonnull (strstr (terret_result_get_notice (result), "“Delete everything? [y/N]”"));
  g_clear_object (&result);
  terret_test_assert_terminal_run (executor, "echo next", 0, "next\n");
}

/* --- No false positives ------------------------------------------------ */

/* @command is quiet without waiting for input: it is handed back by its
 * return_after, not as a wait, and a poll (which looks again) agrees. */
static void
check_not_waiting (const char *command)
{
  g_autoptr(TerretExecutor) executor = new_executor ("pty");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GError) error = NULL;

  result = run (executor, "quiet", command, 1);
  g_assert_true (terret_result_get_running (result));
  g_assert_cmpint (terret_result_get_clock (result), ==, TERRET_CLOCK_RETURN_AFTER);
  g_assert_cmpint (terret_result_get_input_state (result), ==, TERRET_INPUT_STATE_NOT_WAITING);
  g_assert_null (terret_result_get_input_prompt (result));
  g_assert_cmpfloat (terret_result_get_input_since (result), <, 0);
  g_clear_object (&result);

  result = terret_executor_poll (executor, "quiet", 0, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (terret_result_get_running (result));
  g_assert_cmpint (terret_result_get_input_state (result), ==, TERRET_INPUT_STATE_NOT_WAITING);
  g_clear_object (&result);

  g_assert_true (terret_executor_interrupt (executor, "quiet", &error));
  g_assert_no_error (error);
  result = poll_to_end (executor, "quiet", out);
}

static void
test_quiet_busy (void)
{
  g_test_summary ("A CPU loop is not waiting for input");
  check_not_waiting ("while :; do :; done");
}

static void
test_quiet_sleep (void)
{
  g_test_summary ("A sleep is not waiting for input");
  check_not_waiting ("echo 'sleeping'; sleep 1000");
}

static void
test_quiet_pipe (void)
{
  g_test_summary ("A read(2) on an empty pipe is not waiting for input");
  check_not_waiting ("sleep 1000 | cat");
}

static void
test_quiet_socket (void)
{
  g_test_summary ("A read(2) and an accept on sockets are not waiting for input");
  check_not_waiting ("python3 -c 'import os, socket; a, b = socket.socketpair(); "
                     "os.read(a.fileno(), 1)'");
  check_not_waiting ("python3 -c 'import socket; s = socket.socket(); "
                     "s.bind((\"127.0.0.1\", 0)); s.listen(); s.accept()'");
}

static void
test_quiet_lock (void)
{
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *command = g_strdup_printf ("( exec 9>'%s/lock'; flock 9; flock '%s/lock' true )",
                                              dir, dir);

  g_test_summary ("flock on a held lock is not waiting for input");
  check_not_waiting (command);
}

/* --- Without a terminal -------------------------------------------------- */

static void
test_oneshot (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  executor = terret_executor_new ("oneshot", &error);
  if (executor == NULL)
    {
      g_test_skip ("the oneshot backend is not built");
      return;
    }
  g_test_summary ("oneshot: stdin is /dev/null, so a read ends at once; no terminal, so the "
                  "state is unknown");
  result = run (executor, "one", "read -p 'Continue? ' x; echo \"read=$?\"", 0);
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "read=1\n");
  g_assert_cmpint (terret_result_get_input_state (result), ==, TERRET_INPUT_STATE_UNKNOWN);
}

/* --- serve ---------------------------------------------------------------- */

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

static JsonObject *
server_ask (Server     *server,
            const char *line,
            JsonNode  **keep)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *text = g_strconcat (line, "\n", NULL);
  g_autofree char *answer = NULL;

  g_output_stream_write_all (server->input, text, strlen (text), NULL, NULL, &error);
  g_assert_no_error (error);
  answer = g_data_input_stream_read_line (server->output, NULL, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (answer);
  g_clear_pointer (keep, json_node_unref);
  *keep = json_from_string (answer, &error);
  g_assert_no_error (error);
  return json_node_get_object (*keep);
}

static void
test_serve (void)
{
  const char *argv[] = { terret_test_cli_path (), "serve", "--backend", "pty", NULL };
  g_auto(Server) server = { 0 };
  g_autoptr(JsonNode) node = NULL;
  g_autoptr(GString) out = g_string_new (NULL);
  g_autoptr(GError) error = NULL;
  JsonObject *response;

  g_test_summary ("serve: a prompt is answered with waiting_for_input and its fields, which a "
                  "list carries too; the input op answers it; polls carry it to the end");
  server.proc = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_STDIN_PIPE | G_SUBPROCESS_FLAGS_STDOUT_PIPE,
                                   &error);
  g_assert_no_error (error);
  server.input = g_object_ref (g_subprocess_get_stdin_pipe (server.proc));
  server.output = g_data_input_stream_new (g_subprocess_get_stdout_pipe (server.proc));

  response = server_ask (&server, "{\"id\": 1, \"command\": \"read -s -p 'Token: ' t; echo; "
                                  "echo ${#t}\"}", &node);
  g_assert_true (json_object_get_boolean_member (response, "ok"));
  g_assert_true (json_object_get_boolean_member (response, "running"));
  g_assert_true (json_object_get_boolean_member (response, "waiting_for_input"));
  g_assert_cmpstr (json_object_get_string_member (response, "input_prompt"), ==, "Token:");
  g_assert_true (json_object_get_boolean_member (response, "input_secret"));
  g_assert_false (json_object_get_boolean_member (response, "input_pager"));
  g_assert_cmpfloat (json_object_get_double_member (response, "waiting_since"), >=, 0);
  g_assert_cmpstr (json_object_get_string_member (response, "clock"), ==, "input");

  /* A list says it too, of the command handed back. */
  response = server_ask (&server, "{\"id\": 5, \"op\": \"list\"}", &node);
  g_assert_true (json_object_get_boolean_member (response, "ok"));
  {
    JsonArray *sessions = json_object_get_array_member (response, "sessions");
    JsonObject *entry;

    g_assert_cmpuint (json_array_get_length (sessions), ==, 1);
    entry = json_array_get_object_element (sessions, 0);
    g_assert_cmpstr (json_object_get_string_member (entry, "state"), ==, "detached");
    g_assert_true (json_object_get_boolean_member (entry, "waiting_for_input"));
    g_assert_cmpstr (json_object_get_string_member (entry, "input_prompt"), ==, "Token:");
    g_assert_true (json_object_get_boolean_member (entry, "input_secret"));
    g_assert_false (json_object_get_boolean_member (entry, "input_pager"));
    g_assert_cmpfloat (json_object_get_double_member (entry, "waiting_since"), >=, 0);
  }

  response = server_ask (&server, "{\"id\": 2, \"op\": \"input\", \"data\": \"abcd\\n\"}", &node);
  g_assert_true (json_object_get_boolean_member (response, "ok"));

  for (guint i = 0; i < 200; i++)
    {
      response = server_ask (&server, "{\"id\": 3, \"op\": \"poll\", \"wait\": 10}", &node);
      g_assert_true (json_object_get_boolean_member (response, "ok"));
      g_string_append (out, json_object_get_string_member (response, "stdout"));
      if (!json_object_get_boolean_member (response, "running"))
        break;
    }
  g_assert_false (json_object_get_boolean_member (response, "running"));
  g_assert_cmpint (json_object_get_int_member (response, "status"), ==, 0);
  g_assert_false (json_object_get_boolean_member (response, "waiting_for_input"));
  g_assert_true (json_object_get_null_member (response, "input_prompt"));
  g_assert_cmpstr (out->str, ==, "\n4\n");

  /* An idle session has no command to wait: null. */
  response = server_ask (&server, "{\"id\": 6, \"op\": \"list\"}", &node);
  {
    JsonObject *entry = json_array_get_object_element (json_object_get_array_member (response,
                                                                                     "sessions"), 0);

    g_assert_cmpstr (json_object_get_string_member (entry, "state"), ==, "idle");
    g_assert_true (json_object_get_null_member (entry, "waiting_for_input"));
    g_assert_true (json_object_get_null_member (entry, "input_prompt"));
  }

  /* A run that ends says it does not wait; a backend without a
   * terminal says null. */
  response = server_ask (&server, "{\"id\": 4, \"command\": \"echo hi\"}", &node);
  g_assert_false (json_object_get_boolean_member (response, "waiting_for_input"));
}

int
main (int   argc,
      char *argv[])
{
  terret_test_init (&argc, &argv);

  g_test_add_func ("/input/pty/yes-no", test_yes_no);
  g_test_add_func ("/input/pty/secret", test_secret);
  g_test_add_func ("/input/pty/python", test_python);
  g_test_add_func ("/input/pty/dev-tty", test_dev_tty);
  g_test_add_func ("/input/pty/pager", test_pager);
  g_test_add_func ("/input/pty/waits-again", test_waits_again);
  g_test_add_func ("/input/pty/return-after", test_return_after);
  g_test_add_func ("/input/pty/signal", test_signal);
  g_test_add_func ("/input/pty/on-input-eof", test_on_input_eof);
  g_test_add_func ("/input/pty/on-input-fail", test_on_input_fail);
  g_test_add_func ("/input/quiet/busy", test_quiet_busy);
  g_test_add_func ("/input/quiet/sleep", test_quiet_sleep);
  g_test_add_func ("/input/quiet/pipe", test_quiet_pipe);
  g_test_add_func ("/input/quiet/socket", test_quiet_socket);
  g_test_add_func ("/input/quiet/lock", test_quiet_lock);
  g_test_add_func ("/input/oneshot", test_oneshot);
  g_test_add_func ("/input/serve", test_serve);

  return g_test_run ();
}
