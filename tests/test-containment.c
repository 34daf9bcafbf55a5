/* test-containment.c: nothing a command starts outlives its run or session
 *
 * On pty and oneshot (ssh's are in test-ssh.c, with its server): close,
 * timeout, cancel, disposal and the host's SIGKILL each end every process
 * a command started, the ones that set out to escape included.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-test-containment.h"
#include "terret-test-utils.h"

typedef struct
{
  const char *backend;
  TerretTestEnd end;
  gboolean detach;
} Case;

static void
test_end (gconstpointer data)
{
  const Case *c = data;
  g_autoptr(GError) error = NULL;
  TerretExecutor *executor = terret_executor_new (c->backend, &error);

  g_assert_no_error (error);
  terret_test_containment_check (executor, c->end, c->detach);
}

static void
test_host_killed (gconstpointer data)
{
  const Case *c = data;
  const char *args[] = { "serve", "--backend", c->backend, NULL };

  terret_test_containment_host_killed (args, c->detach);
}

int
main (int   argc,
      char *argv[])
{
  static const Case pty_close = { "pty", TERRET_TEST_END_CLOSE, FALSE };
  static const Case pty_timeout = { "pty", TERRET_TEST_END_TIMEOUT, FALSE };
  static const Case pty_cancel = { "pty", TERRET_TEST_END_CANCEL, FALSE };
  static const Case pty_dispose = { "pty", TERRET_TEST_END_DISPOSE, FALSE };
  static const Case pty_detached = { "pty", TERRET_TEST_END_CLOSE, TRUE };
  static const Case oneshot_run = { "oneshot", TERRET_TEST_END_RUN, FALSE };
  static const Case oneshot_timeout = { "oneshot", TERRET_TEST_END_TIMEOUT, FALSE };
  static const Case oneshot_cancel = { "oneshot", TERRET_TEST_END_CANCEL, FALSE };
  static const Case oneshot_close = { "oneshot", TERRET_TEST_END_CLOSE, TRUE };
  static const Case oneshot_dispose = { "oneshot", TERRET_TEST_END_DISPOSE, TRUE };

  terret_test_init (&argc, &argv);

  g_test_add_data_func ("/containment/pty/close", &pty_close, test_end);
  g_test_add_data_func ("/containment/pty/close-detached", &pty_detached, test_end);
  g_test_add_data_func ("/containment/pty/timeout", &pty_timeout, test_end);
  g_test_add_data_func ("/containment/pty/cancel", &pty_cancel, test_end);
  g_test_add_data_func ("/containment/pty/dispose", &pty_dispose, test_end);
  g_test_add_data_func ("/containment/pty/host-killed", &pty_close, test_host_killed);
  g_test_add_data_func ("/containment/oneshot/run-end", &oneshot_run, test_end);
  g_test_add_data_func ("/containment/oneshot/timeout", &oneshot_timeout, test_end);
  g_test_add_data_func ("/containment/oneshot/cancel", &oneshot_cancel, test_end);
  g_test_add_data_func ("/containment/oneshot/close-detached", &oneshot_close, test_end);
  g_test_add_data_func ("/containment/oneshot/dispose-detached", &oneshot_dispose, test_end);
  g_test_add_data_func ("/containment/oneshot/host-killed", &oneshot_close, test_host_killed);

  return g_test_run ();
}
