/* bench-idle.c: wakeups of a host holding idle pty sessions, next to the
 * same loop holding none, measured in the same run
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdlib.h>

#include "bench-common.h"

static int opt_sessions = 50;
static double opt_seconds = 2;

static GOptionEntry entries[] = {
  { "sessions", 'n', 0, G_OPTION_ARG_INT, &opt_sessions, "Idle sessions (default 50)", "N" },
  { "seconds", 's', 0, G_OPTION_ARG_DOUBLE, &opt_seconds, "Seconds of idling (default 2)", "S" },
  { NULL }
};

static gboolean
set_flag (gpointer user_data)
{
  *(gboolean *)user_data = TRUE;
  return G_SOURCE_REMOVE;
}

/* Iterates the default context for the given time, woken only by the one
 * timer that ends it; returns the context switches of all threads. */
static guint64
idle_switches (void)
{
  gboolean over = FALSE;
  guint64 before, after;

  g_timeout_add_full (G_PRIORITY_DEFAULT, (guint)(opt_seconds * 1000), set_flag, &over, NULL);
  before = bench_ctxt_switches ();
  while (!over)
    g_main_context_iteration (NULL, TRUE);
  after = bench_ctxt_switches ();

  return after - before;
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(TerretExecutor) executor = NULL;
  BenchReport *report;
  BenchRow *row;
  guint64 empty, busy;
  double per_second;
  int pending = 0;

  bench_init (&argc, &argv, "Wakeups of a host with idle pty sessions.", entries);
  opt_sessions = MAX (opt_sessions, 1);
  bench_raise_fd_limit ();

  executor = bench_executor_new ("pty");
  empty = idle_switches ();

  for (int i = 0; i < opt_sessions; i++)
    {
      g_autoptr(TerretRequest) request = terret_request_new ("true");
      g_autofree char *key = g_strdup_printf ("s%d", i);
      g_autoptr(GError) error = NULL;
      g_autoptr(TerretResult) result = NULL;

      terret_request_set_session (request, key);
      result = bench_run_on_loop (executor, request, NULL, &error);
      if (result == NULL)
        {
          g_printerr ("session %d: %s\n", i, error->message);
          return 1;
        }
      pending++;
    }

  busy = idle_switches ();
  per_second = ((double)busy - (double)empty) / opt_seconds;

  report = bench_report_new ("idle");
  bench_report_set_param (report, "sessions", opt_sessions);
  bench_report_set_param (report, "seconds", opt_seconds);
  bench_report_add (report, "context switches, no session", "loop only", (double)empty, "count");
  bench_report_add (report, "context switches, idle sessions", "pty", (double)busy, "count");
  row = bench_report_add (report, "wakeups/s caused by sessions", "pty", MAX (per_second, 0), "1/s");
  bench_row_set_target_max (row, 0.5);

  terret_executor_close_all (executor);
  return bench_report_finish (report);
}
