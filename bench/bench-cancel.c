/* bench-cancel.c: cancel-to-callback latency and timeout overshoot per
 * backend, next to a raw kill+reap measured in the same run
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-common.h"

static int opt_cancels = 100;
static int opt_timeouts = 10;
static double opt_timeout = 0.2;
static double opt_delay = 0.02;

static GOptionEntry entries[] = {
  { "cancels", 'n', 0, G_OPTION_ARG_INT, &opt_cancels, "Cancellations per subject (default 100)", "N" },
  { "timeouts", 't', 0, G_OPTION_ARG_INT, &opt_timeouts, "Timeouts per subject (default 10)", "N" },
  { "timeout", 0, 0, G_OPTION_ARG_DOUBLE, &opt_timeout, "The timeout, seconds (default 0.2)", "S" },
  { "delay", 0, 0, G_OPTION_ARG_DOUBLE, &opt_delay,
    "Seconds the command runs before it is cancelled (default 0.02)", "S" },
  { NULL }
};

typedef struct
{
  double t_cancel;
  double t_done;
  gboolean done;
  GError *error;
  TerretResult *result;
  GCancellable *cancellable;
} Attempt;

static void
attempt_done (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  Attempt *attempt = user_data;

  attempt->t_done = bench_now ();
  attempt->result = terret_executor_run_finish (TERRET_EXECUTOR (object), result, &attempt->error);
  attempt->done = TRUE;
}

static gboolean
attempt_cancel (gpointer user_data)
{
  Attempt *attempt = user_data;

  attempt->t_cancel = bench_now ();
  g_cancellable_cancel (attempt->cancellable);
  return G_SOURCE_REMOVE;
}

/* Starts `sleep 10`, cancels it after the delay from a timeout source on
 * the same loop (as a UI's Stop button would), returns milliseconds from
 * the cancel to the callback. */
static double
cancel_once (TerretExecutor *executor)
{
  g_autoptr(TerretRequest) request = terret_request_new ("sleep 10");
  Attempt attempt = { 0 };

  attempt.cancellable = g_cancellable_new ();
  terret_executor_run_async (executor, request, attempt.cancellable, attempt_done, &attempt);
  g_timeout_add_full (G_PRIORITY_DEFAULT, (guint)(opt_delay * 1000), attempt_cancel, &attempt, NULL);
  while (!attempt.done)
    g_main_context_iteration (NULL, TRUE);

  if (!g_error_matches (attempt.error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      g_printerr ("cancel: expected G_IO_ERROR_CANCELLED, got %s\n",
                  attempt.error != NULL ? attempt.error->message : "a result");
      exit (1);
    }
  g_clear_error (&attempt.error);
  g_clear_object (&attempt.cancellable);
  return (attempt.t_done - attempt.t_cancel) * 1e3;
}

/* `sleep 10` with a short timeout: milliseconds past the timeout until
 * the callback. */
static double
timeout_once (TerretExecutor *executor)
{
  g_autoptr(TerretRequest) request = terret_request_new ("sleep 10");
  Attempt attempt = { 0 };
  double t0;

  terret_request_set_timeout (request, opt_timeout);
  t0 = bench_now ();
  terret_executor_run_async (executor, request, NULL, attempt_done, &attempt);
  while (!attempt.done)
    g_main_context_iteration (NULL, TRUE);

  if (attempt.result == NULL || !terret_result_get_timed_out (attempt.result))
    {
      g_printerr ("timeout: the run did not time out\n");
      exit (1);
    }
  g_clear_object (&attempt.result);
  return (attempt.t_done - t0 - opt_timeout) * 1e3;
}

typedef struct
{
  pid_t pid;
  double t_kill;
  double t_reaped;
  gboolean fire_kill;
} RawRun;

static gboolean
raw_kill (gpointer user_data)
{
  RawRun *raw = user_data;
  int status;

  raw->t_kill = bench_now ();
  kill (raw->pid, SIGKILL);
  waitpid (raw->pid, &status, 0);
  raw->t_reaped = bench_now ();
  return G_SOURCE_REMOVE;
}

/* The physical floor on the same loop: a timer, SIGKILL, waitpid. With
 * @delay the timer is the cancel's delay and the figure is kill→reaped;
 * otherwise it is the timeout's and the figure is the overshoot. */
static double
raw_once (double   delay,
          gboolean overshoot)
{
  const char *argv[] = { "sleep", "10", NULL };
  RawRun raw = { 0 };
  double t0 = bench_now ();

  if (posix_spawnp (&raw.pid, "sleep", NULL, NULL, (char * const *)argv, environ) != 0)
    exit (1);
  g_timeout_add_full (G_PRIORITY_DEFAULT, (guint)(delay * 1000), raw_kill, &raw, NULL);
  while (raw.t_reaped == 0)
    g_main_context_iteration (NULL, TRUE);

  return overshoot ? (raw.t_reaped - t0 - delay) * 1e3 : (raw.t_reaped - raw.t_kill) * 1e3;
}

int
main (int    argc,
      char **argv)
{
  const char *names[] = { "pty", "oneshot" };
  TerretExecutor *executors[2];
  GArray *cancel_samples[3], *timeout_samples[3];
  BenchReport *report;
  BenchStats raw_cancel, raw_timeout;

  bench_init (&argc, &argv, "Cancel-to-callback latency and timeout overshoot.", entries);
  opt_cancels = MAX (opt_cancels, 1);
  opt_timeouts = MAX (opt_timeouts, 1);

  for (int b = 0; b < 2; b++)
    executors[b] = bench_executor_new (names[b]);
  for (int s = 0; s < 3; s++)
    {
      cancel_samples[s] = g_array_new (FALSE, FALSE, sizeof (double));
      timeout_samples[s] = g_array_new (FALSE, FALSE, sizeof (double));
    }

  for (int i = 0; i < opt_cancels; i++)
    for (int s = 0; s < 3; s++)
      {
        double ms = s < 2 ? cancel_once (executors[s]) : raw_once (opt_delay, FALSE);

        g_array_append_val (cancel_samples[s], ms);
      }

  for (int i = 0; i < opt_timeouts; i++)
    for (int s = 0; s < 3; s++)
      {
        double ms = s < 2 ? timeout_once (executors[s]) : raw_once (opt_timeout, TRUE);

        g_array_append_val (timeout_samples[s], ms);
      }

  report = bench_report_new ("cancel");
  bench_report_set_param (report, "cancels", opt_cancels);
  bench_report_set_param (report, "timeouts", opt_timeouts);
  bench_report_set_param (report, "timeout", opt_timeout);
  bench_report_set_param (report, "delay", opt_delay);

  bench_stats (cancel_samples[2], &raw_cancel);
  bench_stats (timeout_samples[2], &raw_timeout);

  for (int s = 0; s < 3; s++)
    {
      const char *subject = s < 2 ? names[s] : "raw timer+SIGKILL+waitpid";
      BenchStats stats;
      BenchRow *row;

      bench_stats (cancel_samples[s], &stats);
      row = bench_report_add (report, "cancel to callback median", subject, stats.median, "ms");
      if (s < 2)
        bench_row_set_baseline (row, "raw timer+SIGKILL+waitpid", raw_cancel.median);
      row = bench_report_add (report, "cancel to callback p99", subject, stats.p99, "ms");
      if (s < 2)
        {
          bench_row_set_baseline (row, "raw timer+SIGKILL+waitpid", raw_cancel.p99);
          bench_row_set_target_max (row, 5);
        }

      bench_stats (timeout_samples[s], &stats);
      row = bench_report_add (report, "timeout overshoot median", subject, stats.median, "ms");
      if (s < 2)
        bench_row_set_baseline (row, "raw timer+SIGKILL+waitpid", raw_timeout.median);
      row = bench_report_add (report, "timeout overshoot max", subject, stats.max, "ms");
      if (s < 2)
        {
          bench_row_set_baseline (row, "raw timer+SIGKILL+waitpid", raw_timeout.max);
          bench_row_set_target_max (row, 50);
        }
    }

  terret_executor_close_all (executors[0]);
  for (int b = 0; b < 2; b++)
    g_object_unref (executors[b]);
  for (int s = 0; s < 3; s++)
    {
      g_array_unref (cancel_samples[s]);
      g_array_unref (timeout_samples[s]);
    }

  return bench_report_finish (report);
}
