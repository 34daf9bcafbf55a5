/* bench-memory.c: host peak RSS while `yes` floods each backend, against
 * the host's idle size and the configured output caps
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdlib.h>

#include "bench-common.h"

static double opt_seconds = 3;

static GOptionEntry entries[] = {
  { "seconds", 's', 0, G_OPTION_ARG_DOUBLE, &opt_seconds,
    "Seconds `yes` runs into each backend (default 3; 10 for the full figure)", "S" },
  { NULL }
};

typedef struct
{
  gboolean done;
  TerretResult *result;
  GError *error;
} Flood;

static void
flood_done (GObject      *object,
            GAsyncResult *result,
            gpointer      user_data)
{
  Flood *flood = user_data;

  flood->result = terret_executor_run_finish (TERRET_EXECUTOR (object), result, &flood->error);
  flood->done = TRUE;
}

static gboolean
sample_rss (gpointer user_data)
{
  double *peak = user_data;

  *peak = MAX (*peak, (double)bench_rss_kib ());
  return G_SOURCE_CONTINUE;
}

/* Runs `yes` until the timeout ends it; returns the peak RSS above
 * @idle_kib in KiB. The kernel's high-water mark is reset first where the
 * kernel allows; otherwise the RSS is sampled every 10 ms. */
static double
flood_once (TerretExecutor *executor,
            double          idle_kib,
            guint64        *seen)
{
  g_autoptr(TerretRequest) request = terret_request_new ("yes");
  Flood flood = { 0 };
  gboolean have_hwm = bench_reset_hwm ();
  double peak = idle_kib;
  guint sampler = 0;

  if (!have_hwm)
    sampler = g_timeout_add (10, sample_rss, &peak);
  terret_request_set_timeout (request, opt_seconds);
  terret_executor_run_async (executor, request, NULL, flood_done, &flood);
  while (!flood.done)
    g_main_context_iteration (NULL, TRUE);
  if (have_hwm)
    peak = (double)bench_hwm_kib ();
  else
    g_source_remove (sampler);

  if (flood.result == NULL || !terret_result_get_timed_out (flood.result))
    {
      g_printerr ("yes: expected a timeout: %s\n",
                  flood.error != NULL ? flood.error->message : "no timeout");
      exit (1);
    }
  *seen = g_bytes_get_size (terret_result_get_stdout (flood.result)) +
          terret_result_get_dropped (flood.result, TERRET_STREAM_STDOUT);
  g_clear_object (&flood.result);

  return peak - idle_kib;
}

int
main (int    argc,
      char **argv)
{
  const char *names[] = { "pty", "oneshot" };
  BenchReport *report;

  bench_init (&argc, &argv, "Host RSS while `yes` floods each backend.", entries);

  report = bench_report_new ("memory");
  bench_report_set_param (report, "seconds", opt_seconds);

  for (int b = 0; b < 2; b++)
    {
      g_autoptr(TerretExecutor) executor = bench_executor_new (names[b]);
      g_autoptr(TerretRequest) warm = terret_request_new ("echo warm");
      g_autoptr(TerretResult) result = NULL;
      g_autofree char *subject = NULL;
      guint64 cap = 0, seen = 0;
      double idle, above, cap_kib;
      BenchRow *row;

      g_object_get (executor, "max-output", &cap, NULL);
      /* A run first, so what a run needs once (the module, the shell's
       * session, the loop's arrays) is in the idle size. */
      result = bench_run_on_loop (executor, warm, NULL, NULL);
      idle = (double)bench_rss_kib ();
      above = flood_once (executor, idle, &seen);
      cap_kib = cap / 1024.0;

      subject = g_strdup_printf ("%s (`yes` %g s, %.0f MB)", names[b], opt_seconds, seen / 1e6);
      bench_report_add (report, "idle RSS", names[b], idle, "KiB");
      row = bench_report_add (report, "peak RSS above idle", subject, above, "KiB");
      bench_row_set_baseline (row, "max-output cap", cap_kib);
      bench_row_set_target_ratio (row, 3.0);
      terret_executor_close_all (executor);
    }

  return bench_report_finish (report);
}
