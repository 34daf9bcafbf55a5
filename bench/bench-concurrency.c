/* bench-concurrency.c: many persistent pty sessions running at once on
 * one main context, next to a single session measured in the same run
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdlib.h>

#include "bench-common.h"

static int opt_sessions = 256;
static double opt_sleep = 0.5;
static int opt_reps = 3;

static GOptionEntry entries[] = {
  { "sessions", 'n', 0, G_OPTION_ARG_INT, &opt_sessions, "Sessions (default 256)", "N" },
  { "sleep", 0, 0, G_OPTION_ARG_DOUBLE, &opt_sleep, "Seconds each command sleeps (default 0.5)", "S" },
  { "reps", 'r', 0, G_OPTION_ARG_INT, &opt_reps, "Repetitions of each phase (default 3)", "N" },
  { NULL }
};

typedef struct
{
  int pending;
  int failed;
} Batch;

static void
batch_done (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  Batch *batch = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretResult) ret = terret_executor_run_finish (TERRET_EXECUTOR (object), result, &error);

  if (ret == NULL || terret_result_get_exit_status (ret) != 0)
    {
      if (batch->failed++ == 0)
        g_printerr ("a run failed: %s\n", error != NULL ? error->message : "non-zero status");
    }
  batch->pending--;
}

/* Runs @command in sessions 0..@n-1 at once; returns the wall time. */
static double
run_batch (TerretExecutor *executor,
           int             n,
           const char     *command)
{
  Batch batch = { n, 0 };
  double t0 = bench_now ();

  for (int i = 0; i < n; i++)
    {
      g_autoptr(TerretRequest) request = terret_request_new (command);
      g_autofree char *key = g_strdup_printf ("s%d", i);

      terret_request_set_session (request, key);
      terret_executor_run_async (executor, request, NULL, batch_done, &batch);
    }
  while (batch.pending > 0)
    g_main_context_iteration (NULL, TRUE);

  if (batch.failed > 0)
    {
      g_printerr ("%d of %d runs failed\n", batch.failed, n);
      exit (1);
    }
  return bench_now () - t0;
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *command = NULL;
  GArray *single = g_array_new (FALSE, FALSE, sizeof (double));
  GArray *many = g_array_new (FALSE, FALSE, sizeof (double));
  GArray *cpu = g_array_new (FALSE, FALSE, sizeof (double));
  BenchStats single_stats, many_stats, cpu_stats;
  BenchReport *report;
  BenchRow *row;
  double cold, close_time, t0;
  guint64 rss_before, rss_after;

  bench_init (&argc, &argv, "Many persistent pty sessions at once on one main context.", entries);
  opt_sessions = MAX (opt_sessions, 1);
  opt_reps = MAX (opt_reps, 1);
  bench_raise_fd_limit ();

  command = g_strdup_printf ("sleep %g", opt_sleep);
  executor = bench_executor_new ("pty");

  /* One session first, so the module, the types and the loop are set up
   * before the idle size is read. */
  run_batch (executor, 1, "true");
  rss_before = bench_rss_kib ();
  cold = run_batch (executor, opt_sessions, "true");
  rss_after = bench_rss_kib ();

  for (int r = 0; r < opt_reps; r++)
    {
      double u0, s0, u1, s1, wall;

      wall = run_batch (executor, 1, command);
      g_array_append_val (single, wall);

      bench_cpu_seconds (&u0, &s0);
      wall = run_batch (executor, opt_sessions, command);
      bench_cpu_seconds (&u1, &s1);
      g_array_append_val (many, wall);
      wall = ((u1 - u0) + (s1 - s0)) * 1e3;
      g_array_append_val (cpu, wall);
    }

  t0 = bench_now ();
  terret_executor_close_all (executor);
  close_time = bench_now () - t0;

  bench_stats (single, &single_stats);
  bench_stats (many, &many_stats);
  bench_stats (cpu, &cpu_stats);

  report = bench_report_new ("concurrency");
  bench_report_set_param (report, "sessions", opt_sessions);
  bench_report_set_param (report, "sleep", opt_sleep);
  bench_report_set_param (report, "reps", opt_reps);

  row = bench_report_add (report, "wall, 1 session", "pty", single_stats.median * 1e3, "ms");
  row = bench_report_add (report, "wall, N sessions at once", "pty", many_stats.median * 1e3, "ms");
  bench_row_set_baseline (row, "wall, 1 session", single_stats.median * 1e3);
  bench_row_set_target_ratio (row, 2.0);
  row = bench_report_add (report, "host CPU, N sessions at once", "pty", cpu_stats.median, "ms");
  row = bench_report_add (report, "host CPU per session-run", "pty",
                          cpu_stats.median / opt_sessions * 1e3, "us");
  row = bench_report_add (report, "host RSS per session", "pty",
                          (double)((gint64)rss_after - (gint64)rss_before) / opt_sessions, "KiB");
  row = bench_report_add (report, "cold start, N sessions at once", "pty", cold * 1e3, "ms");
  row = bench_report_add (report, "close_all, N sessions", "pty", close_time * 1e3, "ms");

  g_array_unref (single);
  g_array_unref (many);
  g_array_unref (cpu);

  return bench_report_finish (report);
}
