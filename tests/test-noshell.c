/* test-noshell.c: the backend that runs nothing, and says why
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include "terret-test-utils.h"

static TerretExecutor *
new_noshell (void)
{
  g_autoptr(GError) error = NULL;
  TerretExecutor *executor = terret_executor_new ("noshell", &error);

  g_assert_no_error (error);
  return executor;
}

static void
test_sync (void)
{
  g_autoptr(TerretExecutor) executor = new_noshell ();
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretResult) result = NULL;

  g_test_summary ("Every run fails in-band with no-shell, and the message tells the "
                  "operator what setup is missing.");

  result = terret_test_run_command (executor, "echo hello", &error);
  g_assert_null (result);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NO_SHELL);
  g_assert_nonnull (strstr (error->message, "-Dlocal-shell=enabled"));
  g_assert_nonnull (strstr (error->message, "TERRET_EXECUTOR"));
  g_assert_cmpint (terret_executor_get_capabilities (executor), ==, TERRET_CAPABILITY_NONE);
}

static void
on_run_done (GObject      *object,
             GAsyncResult *result,
             gpointer      user_data)
{
  GError **error = user_data;
  g_autoptr(TerretResult) ret = NULL;

  ret = terret_executor_run_finish (TERRET_EXECUTOR (object), result, error);
  g_assert_null (ret);
}

static void
test_async (void)
{
  g_autoptr(TerretExecutor) executor = new_noshell ();
  g_autoptr(TerretRequest) request = terret_request_new ("true");
  g_autoptr(GError) error = NULL;

  g_test_summary ("The async path fails the same way, on the caller's main context.");

  terret_executor_run_async (executor, request, NULL, on_run_done, &error);
  g_assert_null (error);
  while (error == NULL)
    g_main_context_iteration (NULL, TRUE);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NO_SHELL);
}

static void
test_refuses_unsupported (void)
{
  g_autoptr(TerretExecutor) executor = new_noshell ();
  g_autoptr(TerretRequest) request = terret_request_new ("true");
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretResult) result = NULL;

  g_test_summary ("A request asking for what the backend does not offer is refused, "
                  "not silently run elsewhere.");

  terret_request_set_cwd (request, "/");
  result = terret_test_run (executor, request, &error);
  g_assert_null (result);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "noshell"));
}

static void
test_sessions (void)
{
  g_autoptr(TerretExecutor) executor = new_noshell ();

  g_test_summary ("Closing sessions that never existed is not an error.");

  g_assert_cmpint (terret_executor_get_session_pid (executor, "default"), ==, 0);
  terret_executor_close_session (executor, "default");
  terret_executor_close_all (executor);
}


static void
test_interactive_refused (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretExecutor) executor = terret_executor_new ("noshell", &error);
  g_autoptr(GBytes) data = g_bytes_new_static ("x\n", 2);
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(TerretRequest) request = terret_request_new ("true");
  TerretCapabilities caps;

  g_assert_no_error (error);
  caps = terret_executor_get_capabilities (executor);
  g_assert_false (caps & (TERRET_CAPABILITY_INPUT | TERRET_CAPABILITY_INTERRUPT |
                          TERRET_CAPABILITY_POLL | TERRET_CAPABILITY_DETACH));

  g_assert_false (terret_executor_send_input (executor, "default", data, &error));
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED);
  g_assert_nonnull (strstr (error->message, "noshell"));
  g_clear_error (&error);

  g_assert_false (terret_executor_interrupt (executor, "default", &error));
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED);
  g_clear_error (&error);

  result = terret_executor_poll (executor, "default", 1, NULL, &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED);
  g_assert_null (result);
  g_clear_error (&error);

  terret_request_set_timeout_action (request, TERRET_TIMEOUT_ACTION_DETACH);
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED);
  g_assert_null (result);
}

int
main (int   argc,
      char *argv[])
{
  terret_test_init (&argc, &argv);

  g_test_add_func ("/noshell/run/sync", test_sync);
  g_test_add_func ("/noshell/run/async", test_async);
  g_test_add_func ("/noshell/run/refuses-unsupported", test_refuses_unsupported);
  g_test_add_func ("/noshell/sessions", test_sessions);
  g_test_add_func ("/noshell/interactive/refused", test_interactive_refused);

  return g_test_run ();
}
