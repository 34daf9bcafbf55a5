/* test-containment.c: nothing a command starts outlives its run or session
 *
 * On pty and oneshot (ssh's are in test-ssh.c, with its server): close,
 * timeout, cancel, disposal and the host's SIGKILL each end every process
 * a command started, the ones that set out to escape included.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

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

static guint
count_fds (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  guint n = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

static guint64
rss_kib (void)
{
  g_autofree char *status = NULL;
  const char *line;

  g_assert_true (g_file_get_contents ("/proc/self/status", &status, NULL, NULL));
  line = strstr (status, "VmRSS:");
  g_assert_nonnull (line);
  return g_ascii_strtoull (line + strlen ("VmRSS:"), NULL, 10);
}

static void
test_flat_over_runs (gconstpointer data)
{
  const char *backend = data;
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretExecutor) executor = terret_executor_new (backend, &error);
  /* Under valgrind every run is tens of times slower: fewer runs; under
   * valgrind and AddressSanitizer freed memory is held back on purpose,
   * so only the descriptors are compared there. */
  const char *preload = g_getenv ("LD_PRELOAD");
  gboolean valgrind = preload != NULL && strstr (preload, "vgpreload") != NULL;
#ifdef __SANITIZE_ADDRESS__
  gboolean tool = TRUE;
#else
  gboolean tool = valgrind;
#endif
  /* 2500 runs and 1 MiB, as 10000 and 4 MiB would: a run that keeps 420
   * bytes shows either way, in a quarter of the time (a one-shot run
   * costs a fork and an exec). */
  guint runs = valgrind ? 300 : 2500;
  guint fds_before;
  guint64 rss_before;

  g_test_summary ("The host's descriptors and memory stay flat over thousands of runs in "
                  "one session: nothing is kept per run.");
  g_assert_no_error (error);

  /* Warm: the session, the launcher and the allocator's pools exist. */
  for (guint i = 0; i < 200; i++)
    g_object_unref (terret_test_run_ok (executor, "true"));
  fds_before = count_fds ();
  rss_before = rss_kib ();

  for (guint i = 0; i < runs; i++)
    {
      g_autoptr(TerretResult) result = terret_test_run_ok (executor, "true");

      g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
    }

  g_assert_cmpuint (count_fds (), ==, fds_before);
  /* Bounded, not exact: the allocator may keep a page here and there. */
  if (!tool)
    g_assert_cmpuint (rss_kib (), <=, rss_before + 1024);
  g_test_message ("%u runs: %u descriptors, resident %" G_GUINT64_FORMAT " KiB more", runs,
                  count_fds (), rss_kib () - MIN (rss_kib (), rss_before));
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
  g_test_add_data_func ("/containment/pty/flat-over-runs", "pty", test_flat_over_runs);
  g_test_add_data_func ("/containment/oneshot/flat-over-runs", "oneshot", test_flat_over_runs);

  return g_test_run ();
}
