/* test-mcp-2026.c: `terret-exec mcp` on MCP 2026-07-28 and the Tasks
 * extension, run as a real process and spoken to in JSON-RPC lines as a
 * host would, without node
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include <json-glib/json-glib.h>

#include "terret-test-mcp.h"
#include "terret-test-utils.h"

#define META_2026 "\"_meta\": {\"io.modelcontextprotocol/protocolVersion\": \"2026-07-28\", " \
                  "\"io.modelcontextprotocol/clientInfo\": {\"name\": \"test-mcp\", \"version\": \"1\"}, " \
                  "\"io.modelcontextprotocol/clientCapabilities\": {}}"
#define META_2026_TASKS "\"_meta\": {\"io.modelcontextprotocol/protocolVersion\": \"2026-07-28\", " \
                        "\"io.modelcontextprotocol/clientCapabilities\": " \
                        "{\"extensions\": {\"io.modelcontextprotocol/tasks\": {}}}}"

/* tasks/get of @task_id until its status leaves working; the last answer.
 * Paced by the pollIntervalMs the server suggests (a tenth of it, to keep
 * the test short) rather than spinning on the server: the status is the
 * event waited for, and the suite's timeout bounds a server that never
 * settles. */
static JsonNode *
task_until_settled (Mcp        *mcp,
                    const char *task_id)
{
  g_autofree char *get = g_strdup_printf ("{\"taskId\": \"%s\", " META_2026_TASKS "}", task_id);

  for (;;)
    {
      JsonNode *response = mcp_call (mcp, "tasks/get", get);
      JsonObject *result = result_of (response);

      g_assert_cmpstr (json_object_get_string_member (result, "resultType"), ==, "complete");
      g_assert_cmpstr (json_object_get_string_member (result, "taskId"), ==, task_id);
      if (!g_str_equal (json_object_get_string_member (result, "status"), "working"))
        return response;
      g_usleep (json_object_get_int_member (result, "pollIntervalMs") * 1000 / 10);
      json_node_unref (response);
    }
}

static void
test_2026_wire (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(JsonNode) response = NULL;
  g_autofree char *task_id = NULL;
  g_autofree char *params = NULL;
  JsonObject *result;
  JsonArray *tools;

  REQUIRE_BACKEND ("pty");

  g_test_summary ("MCP 2026-07-28 without initialize: server/discover, tools/list and tools/call "
                  "with resultType, a task where the request declares the Tasks extension, "
                  "tasks/get, tasks/update and tasks/cancel; no tasks/list; an unknown revision "
                  "is -32022; the 2025-11-25 lane beside it is untouched");
  mcp_start (&mcp, "pty");

  response = mcp_call (&mcp, "server/discover", "{" META_2026 "}");
  result = result_of (response);
  g_assert_cmpstr (json_object_get_string_member (result, "resultType"), ==, "complete");
  g_assert_cmpstr (json_array_get_string_element (json_object_get_array_member (result, "supportedVersions"), 0),
                   ==, "2026-07-28");
  g_assert_true (json_object_has_member (json_object_get_object_member (json_object_get_object_member (result, "capabilities"),
                                                                        "extensions"),
                                         "io.modelcontextprotocol/tasks"));
  g_assert_nonnull (json_object_get_object_member (json_object_get_object_member (result, "_meta"),
                                                   "io.modelcontextprotocol/serverInfo"));
  g_clear_pointer (&response, json_node_unref);

  response = mcp_call (&mcp, "tools/list", "{" META_2026 "}");
  result = result_of (response);
  g_assert_cmpstr (json_object_get_string_member (result, "resultType"), ==, "complete");
  g_assert_true (json_object_has_member (result, "ttlMs"));
  tools = json_object_get_array_member (result, "tools");
  for (guint i = 0; i < json_array_get_length (tools); i++)
    g_assert_false (json_object_has_member (json_array_get_object_element (tools, i), "execution"));
  g_clear_pointer (&response, json_node_unref);

  /* Without the extension: the result, at once. */
  response = mcp_call (&mcp, "tools/call",
                       "{\"name\": \"bash\", \"arguments\": {\"command\": \"echo plain\"}, " META_2026 "}");
  result = result_of (response);
  g_assert_cmpstr (json_object_get_string_member (result, "resultType"), ==, "complete");
  g_assert_cmpstr (json_object_get_string_member (structured_of (result), "stdout"), ==, "plain\n");
  g_clear_pointer (&response, json_node_unref);

  /* With it: a task, which completes with the tool result. */
  response = mcp_call (&mcp, "tools/call",
                       "{\"name\": \"bash\", \"arguments\": {\"command\": \"echo tasked\"}, " META_2026_TASKS "}");
  result = result_of (response);
  g_assert_cmpstr (json_object_get_string_member (result, "resultType"), ==, "task");
  g_assert_cmpstr (json_object_get_string_member (result, "status"), ==, "working");
  g_assert_true (json_object_has_member (result, "pollIntervalMs"));
  task_id = g_strdup (json_object_get_string_member (result, "taskId"));
  g_clear_pointer (&response, json_node_unref);
  response = task_until_settled (&mcp, task_id);
  result = result_of (response);
  g_assert_cmpstr (json_object_get_string_member (result, "status"), ==, "completed");
  result = json_object_get_object_member (result, "result");
  g_assert_cmpstr (json_object_get_string_member (result, "resultType"), ==, "complete");
  g_assert_cmpstr (json_object_get_string_member (structured_of (result), "stdout"), ==, "tasked\n");
  g_clear_pointer (&response, json_node_unref);

  /* An update no request waits for is harmless; a cancel of an ended
   * task is refused. */
  params = g_strdup_printf ("{\"taskId\": \"%s\", \"inputResponses\": {\"x\": {\"action\": \"cancel\"}}, "
                            META_2026_TASKS "}", task_id);
  response = mcp_call (&mcp, "tasks/update", params);
  g_assert_cmpstr (json_object_get_string_member (result_of (response), "resultType"), ==, "complete");
  g_clear_pointer (&response, json_node_unref);
  g_clear_pointer (&params, g_free);
  params = g_strdup_printf ("{\"taskId\": \"%s\", " META_2026_TASKS "}", task_id);
  response = mcp_call (&mcp, "tasks/cancel", params);
  g_assert_cmpint (error_code_of (response), ==, -32602);
  g_clear_pointer (&response, json_node_unref);
  g_clear_pointer (&params, g_free);
  g_clear_pointer (&task_id, g_free);

  /* tasks/cancel ends a running task and its command. */
  response = mcp_call (&mcp, "tools/call",
                       "{\"name\": \"bash\", \"arguments\": {\"command\": \"sleep 30\", \"session\": \"c\"}, "
                       META_2026_TASKS "}");
  task_id = g_strdup (json_object_get_string_member (result_of (response), "taskId"));
  g_clear_pointer (&response, json_node_unref);
  params = g_strdup_printf ("{\"taskId\": \"%s\", " META_2026_TASKS "}", task_id);
  response = mcp_call (&mcp, "tasks/cancel", params);
  g_assert_cmpstr (json_object_get_string_member (result_of (response), "resultType"), ==, "complete");
  g_clear_pointer (&response, json_node_unref);
  response = task_until_settled (&mcp, task_id);
  g_assert_cmpstr (json_object_get_string_member (result_of (response), "status"), ==, "cancelled");
  g_clear_pointer (&response, json_node_unref);

  /* Not in this revision, and a revision not served. */
  response = mcp_call (&mcp, "tasks/list", "{" META_2026_TASKS "}");
  g_assert_cmpint (error_code_of (response), ==, -32601);
  g_clear_pointer (&response, json_node_unref);
  response = mcp_call (&mcp, "initialize", "{" META_2026 "}");
  g_assert_cmpint (error_code_of (response), ==, -32601);
  g_clear_pointer (&response, json_node_unref);
  response = mcp_call (&mcp, "tools/list",
                       "{\"_meta\": {\"io.modelcontextprotocol/protocolVersion\": \"2099-01-01\"}}");
  g_assert_cmpint (error_code_of (response), ==, -32022);
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (json_object_get_object_member (json_node_get_object (response), "error"), "data"), "requested"), ==, "2099-01-01");
  g_clear_pointer (&response, json_node_unref);

  /* The 2025-11-25 lane beside it. */
  mcp_initialize (&mcp);
  response = mcp_tool (&mcp, "bash", "{\"command\": \"echo old\"}");
  g_assert_false (json_object_has_member (result_of (response), "resultType"));
  g_clear_pointer (&response, json_node_unref);

  mcp_finish (&mcp);
}

/* Whether the backend reports a command waiting for input: a prompt
 * handed back by return_after says so (waiting_for_input true), or that
 * it cannot know (null). */
static gboolean
detects_input (Mcp *mcp)
{
  g_autoptr(JsonNode) response =
    mcp_call (mcp, "tools/call",
              "{\"name\": \"bash\", \"arguments\": {\"command\": \"read -p 'probe: ' x\", "
              "\"session\": \"probe\", \"return_after\": 1}, " META_2026 "}");
  JsonObject *structured = structured_of (result_of (response));
  JsonNode *waiting = json_object_get_member (structured, "waiting_for_input");

  return waiting != NULL && JSON_NODE_HOLDS_VALUE (waiting) && json_node_get_boolean (waiting);
}

/* The task's outstanding input request (its key in *key), which must be
 * an elicitation/create in form mode with one string field. */
static JsonObject *
input_request_of (JsonObject  *task,
                  const char **key)
{
  JsonObject *requests = json_object_get_object_member (task, "inputRequests");
  g_autoptr(GList) keys = json_object_get_members (requests);
  JsonObject *request, *params, *schema;

  g_assert_cmpuint (g_list_length (keys), ==, 1);
  *key = keys->data;
  request = json_object_get_object_member (requests, *key);
  g_assert_cmpstr (json_object_get_string_member (request, "method"), ==, "elicitation/create");
  params = json_object_get_object_member (request, "params");
  g_assert_cmpstr (json_object_get_string_member (params, "mode"), ==, "form");
  schema = json_object_get_object_member (params, "requestedSchema");
  g_assert_cmpstr (json_object_get_string_member (schema, "type"), ==, "object");
  g_assert_cmpstr (json_object_get_string_member (json_object_get_object_member (json_object_get_object_member (schema, "properties"), "input"), "type"), ==, "string");
  return params;
}

static void
test_2026_input (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(JsonNode) response = NULL;
  g_autofree char *task_id = NULL;
  g_autofree char *update = NULL;
  const char *key = NULL;
  JsonObject *result, *params;

  REQUIRE_BACKEND ("pty");

  g_test_summary ("MCP 2026-07-28: a command at a prompt makes its task input_required with an "
                  "elicitation/create whose message is the prompt (and says a secret is one); "
                  "tasks/update types the answer and Enter, and the task completes with the output");
  mcp_start (&mcp, "pty");
  if (!detects_input (&mcp))
    {
      g_test_skip ("the pty backend does not report a command waiting for input");
      return;
    }

  response = mcp_call (&mcp, "tools/call",
                       "{\"name\": \"bash\", \"arguments\": {\"command\": "
                       "\"read -p 'Name: ' n; read -s -p 'Password: ' p; echo; echo \\\"hello $n, ${#p}\\\"\"}, "
                       META_2026_TASKS "}");
  task_id = g_strdup (json_object_get_string_member (result_of (response), "taskId"));
  g_clear_pointer (&response, json_node_unref);

  /* The name, typed and echoed. */
  response = task_until_settled (&mcp, task_id);
  result = result_of (response);
  g_assert_cmpstr (json_object_get_string_member (result, "status"), ==, "input_required");
  params = input_request_of (result, &key);
  g_assert_nonnull (strstr (json_object_get_string_member (params, "message"), "Name:"));
  g_assert_null (strstr (json_object_get_string_member (params, "message"), "secret"));
  update = g_strdup_printf ("{\"taskId\": \"%s\", \"inputResponses\": {\"%s\": {\"action\": \"accept\", "
                            "\"content\": {\"input\": \"world\"}}}, " META_2026_TASKS "}", task_id, key);
  g_clear_pointer (&response, json_node_unref);
  response = mcp_call (&mcp, "tasks/update", update);
  g_assert_cmpstr (json_object_get_string_member (result_of (response), "resultType"), ==, "complete");
  g_clear_pointer (&response, json_node_unref);
  g_clear_pointer (&update, g_free);

  /* The password: a secret, a new key. */
  response = task_until_settled (&mcp, task_id);
  result = result_of (response);
  g_assert_cmpstr (json_object_get_string_member (result, "status"), ==, "input_required");
  params = input_request_of (result, &key);
  g_assert_nonnull (strstr (json_object_get_string_member (params, "message"), "Password:"));
  g_assert_nonnull (strstr (json_object_get_string_member (params, "message"), "secret"));
  update = g_strdup_printf ("{\"taskId\": \"%s\", \"inputResponses\": {\"%s\": {\"action\": \"accept\", "
                            "\"content\": {\"input\": \"s3cret\"}}}, " META_2026_TASKS "}", task_id, key);
  g_clear_pointer (&response, json_node_unref);
  response = mcp_call (&mcp, "tasks/update", update);
  g_assert_cmpstr (json_object_get_string_member (result_of (response), "resultType"), ==, "complete");
  g_clear_pointer (&response, json_node_unref);

  response = task_until_settled (&mcp, task_id);
  result = result_of (response);
  g_assert_cmpstr (json_object_get_string_member (result, "status"), ==, "completed");
  result = structured_of (json_object_get_object_member (result, "result"));
  g_assert_true (g_str_has_suffix (json_object_get_string_member (result, "stdout"), "hello world, 6\n"));
  g_assert_null (strstr (json_object_get_string_member (result, "stdout"), "s3cret"));

  mcp_finish (&mcp);
}

/* Starts a task running @command in @session and waits until it needs
 * input; the task's id, and its input request's key in *key. */
static char *
task_at_prompt (Mcp         *mcp,
                const char  *command,
                const char  *session,
                char       **key,
                char       **message)
{
  g_autofree char *call = g_strdup_printf ("{\"name\": \"bash\", \"arguments\": {\"command\": \"%s\", "
                                           "\"session\": \"%s\"}, " META_2026_TASKS "}", command, session);
  g_autoptr(JsonNode) response = mcp_call (mcp, "tools/call", call);
  g_autoptr(JsonNode) settled = NULL;
  char *task_id = g_strdup (json_object_get_string_member (result_of (response), "taskId"));
  JsonObject *params;
  const char *k = NULL;

  settled = task_until_settled (mcp, task_id);
  g_assert_cmpstr (json_object_get_string_member (result_of (settled), "status"), ==, "input_required");
  params = input_request_of (result_of (settled), &k);
  *key = g_strdup (k);
  *message = g_strdup (json_object_get_string_member (params, "message"));
  return task_id;
}

static JsonNode *
task_answer (Mcp        *mcp,
             const char *task_id,
             const char *key,
             const char *response_json)
{
  g_autofree char *update = g_strdup_printf ("{\"taskId\": \"%s\", \"inputResponses\": {\"%s\": %s}, "
                                             META_2026_TASKS "}", task_id, key, response_json);
  g_autoptr(JsonNode) response = mcp_call (mcp, "tasks/update", update);

  g_assert_cmpstr (json_object_get_string_member (result_of (response), "resultType"), ==, "complete");
  return task_until_settled (mcp, task_id);
}

static void
test_2026_input_actions (void)
{
  g_auto(Mcp) mcp = { 0 };
  g_autoptr(JsonNode) response = NULL;
  g_autofree char *task_id = NULL;
  g_autofree char *key = NULL;
  g_autofree char *message = NULL;
  g_autofree char *params = NULL;
  g_autofree char *less = NULL;
  JsonObject *result;

  REQUIRE_BACKEND ("pty");

  g_test_summary ("MCP 2026-07-28: a pager is input_required and says so, and its key goes without "
                  "Enter; decline interrupts the command; a malformed answer leaves the task "
                  "waiting; tasks/cancel ends a task at a prompt and its command");
  less = g_find_program_in_path ("less");
  if (less == NULL)
    {
      g_test_skip ("less is not installed (build-aux/install-deps --tests installs it)");
      return;
    }
  mcp_start (&mcp, "pty");
  if (!detects_input (&mcp))
    {
      g_test_skip ("the pty backend does not report a command waiting for input");
      return;
    }

  /* A pager: q, alone, quits it (a pager on a terminal it finds lacking
   * may first ask for a key to go on: q answers that too). */
  task_id = task_at_prompt (&mcp, "seq 1 300 | less", "pager", &key, &message);
  g_assert_nonnull (strstr (message, "pager"));
  response = task_answer (&mcp, task_id, key, "{\"action\": \"accept\", \"content\": {\"input\": \"q\"}}");
  for (guint i = 0; i < 3 && g_str_equal (json_object_get_string_member (result_of (response), "status"),
                                          "input_required"); i++)
    {
      const char *next = NULL;

      g_assert_nonnull (strstr (json_object_get_string_member (input_request_of (result_of (response), &next),
                                                               "message"), "pager"));
      g_free (key);
      key = g_strdup (next);
      g_clear_pointer (&response, json_node_unref);
      response = task_answer (&mcp, task_id, key, "{\"action\": \"accept\", \"content\": {\"input\": \"q\"}}");
    }
  result = result_of (response);
  g_assert_cmpstr (json_object_get_string_member (result, "status"), ==, "completed");
  g_assert_cmpint (json_object_get_int_member (structured_of (json_object_get_object_member (result, "result")),
                                               "status"), ==, 0);
  g_clear_pointer (&response, json_node_unref);
  g_clear_pointer (&task_id, g_free);
  g_clear_pointer (&key, g_free);
  g_clear_pointer (&message, g_free);

  /* Decline: the command is interrupted, nothing typed for it. */
  task_id = task_at_prompt (&mcp, "read -p 'Go? ' x; echo \\\"[$x] $?\\\"", "decline", &key, &message);
  g_assert_nonnull (strstr (message, "Go?"));
  /* A malformed answer is refused and the task still waits. */
  params = g_strdup_printf ("{\"taskId\": \"%s\", \"inputResponses\": {\"%s\": {\"action\": \"accept\"}}, "
                            META_2026_TASKS "}", task_id, key);
  response = mcp_call (&mcp, "tasks/update", params);
  g_assert_cmpint (error_code_of (response), ==, -32602);
  g_clear_pointer (&response, json_node_unref);
  response = task_answer (&mcp, task_id, key, "{\"action\": \"decline\"}");
  result = result_of (response);
  g_assert_cmpstr (json_object_get_string_member (result, "status"), ==, "completed");
  result = structured_of (json_object_get_object_member (result, "result"));
  g_assert_null (strstr (json_object_get_string_member (result, "stdout"), "["));
  g_assert_cmpint (json_object_get_int_member (result, "status"), ==, 130);
  g_clear_pointer (&response, json_node_unref);
  g_clear_pointer (&task_id, g_free);
  g_clear_pointer (&key, g_free);
  g_clear_pointer (&message, g_free);
  g_clear_pointer (&params, g_free);

  /* tasks/cancel at a prompt: the task is cancelled and its session, and
   * the command in it, closed. */
  task_id = task_at_prompt (&mcp, "read -p 'Wait: ' x", "cancelled", &key, &message);
  params = g_strdup_printf ("{\"taskId\": \"%s\", " META_2026_TASKS "}", task_id);
  response = mcp_call (&mcp, "tasks/cancel", params);
  g_assert_cmpstr (json_object_get_string_member (result_of (response), "resultType"), ==, "complete");
  g_clear_pointer (&response, json_node_unref);
  response = mcp_call (&mcp, "tasks/get", params);
  g_assert_cmpstr (json_object_get_string_member (result_of (response), "status"), ==, "cancelled");
  g_clear_pointer (&response, json_node_unref);
  response = mcp_call (&mcp, "tools/call", "{\"name\": \"bash_list\", \"arguments\": {}, " META_2026 "}");
  g_assert_null (strstr (tool_text (result_of (response)), "“cancelled”"));

  mcp_finish (&mcp);
}

/* The prompts a host meets most, each answered through tasks/update. */
static const struct {
  const char *name;
  const char *command;
  const char *prompt;
  gboolean secret;
  const char *answer;
  const char *output;
} prompt_cases[] = {
  { "yes-no", "printf 'Do you want to continue? [Y/n] '; read a; echo \\\"answer: $a\\\"",
    "[Y/n]", FALSE, "n", "answer: n\n" },
  { "python-input", "python3 -c 'print(\\\"got \\\" + input(\\\"Value: \\\"))'",
    "Value:", FALSE, "42", "got 42\n" },
  { "secret", "read -s -p 'Passphrase: ' p; echo; echo \\\"length ${#p}\\\"",
    "Passphrase:", TRUE, "hunter2", "length 7\n" },
  { "dev-tty", "bash -c 'read -s -p \\\"[sudo] password for user: \\\" p </dev/tty >/dev/tty 2>&1; "
    "echo; echo \\\"ok ${#p}\\\"'", "[sudo] password", TRUE, "pw", "ok 2\n" },
};

static void
test_2026_prompts (void)
{
  g_auto(Mcp) mcp = { 0 };

  REQUIRE_BACKEND ("pty");

  g_test_summary ("MCP 2026-07-28: a [Y/n] question, python's input(), read -s and a password "
                  "read from /dev/tty each make the task input_required with the prompt (a secret "
                  "said so), and the answer typed through tasks/update reaches the command");
  mcp_start (&mcp, "pty");
  if (!detects_input (&mcp))
    {
      g_test_skip ("the pty backend does not report a command waiting for input");
      return;
    }

  for (guint i = 0; i < G_N_ELEMENTS (prompt_cases); i++)
    {
      g_autofree char *task_id = NULL;
      g_autofree char *key = NULL;
      g_autofree char *message = NULL;
      g_autofree char *answer = g_strdup_printf ("{\"action\": \"accept\", \"content\": {\"input\": \"%s\"}}",
                                                 prompt_cases[i].answer);
      g_autoptr(JsonNode) response = NULL;
      JsonObject *result;
      const char *out;

      g_test_message ("%s", prompt_cases[i].name);
      task_id = task_at_prompt (&mcp, prompt_cases[i].command, prompt_cases[i].name, &key, &message);
      if (strstr (message, prompt_cases[i].prompt) == NULL)
        g_error ("%s: “%s” does not show the prompt %s", prompt_cases[i].name, message, prompt_cases[i].prompt);
      g_assert_cmpint (strstr (message, "secret") != NULL, ==, prompt_cases[i].secret);

      response = task_answer (&mcp, task_id, key, answer);
      result = result_of (response);
      g_assert_cmpstr (json_object_get_string_member (result, "status"), ==, "completed");
      out = json_object_get_string_member (structured_of (json_object_get_object_member (result, "result")), "stdout");
      if (!g_str_has_suffix (out, prompt_cases[i].output))
        g_error ("%s: the output “%s” does not end with “%s”", prompt_cases[i].name, out, prompt_cases[i].output);
      if (prompt_cases[i].secret)
        g_assert_null (strstr (out, prompt_cases[i].answer));
    }

  mcp_finish (&mcp);
}

int
main (int    argc,
      char **argv)
{
  terret_test_init (&argc, &argv);
  /* The servers these tests start inherit it: a GLib critical any request
   * provokes aborts the server, and the test sees it die. */
  g_setenv ("G_DEBUG", "gc-friendly,fatal-criticals", TRUE);

  g_test_add_func ("/mcp/2026/wire", test_2026_wire);
  g_test_add_func ("/mcp/2026/input", test_2026_input);
  g_test_add_func ("/mcp/2026/input-actions", test_2026_input_actions);
  g_test_add_func ("/mcp/2026/prompts", test_2026_prompts);

  return g_test_run ();
}
