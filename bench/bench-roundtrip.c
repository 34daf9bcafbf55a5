/* bench-roundtrip.c: the cost of running `true`, per backend, next to the
 * physical baselines measured in the same run
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-common.h"


static int opt_runs = 1000;
static int opt_block = 50;
static char *opt_only = NULL;

static GOptionEntry entries[] = {
  { "runs", 'n', 0, G_OPTION_ARG_INT, &opt_runs, "Round trips per subject (default 1000)", "N" },
  { "block", 0, 0, G_OPTION_ARG_INT, &opt_block,
    "Round trips per subject before moving to the next (default 50)", "N" },
  { "only", 0, 0, G_OPTION_ARG_STRING, &opt_only,
    "Time only the subjects whose name contains TEXT (for profiling)", "TEXT" },
  { NULL }
};

typedef enum {
  SUBJECT_RAW_PTY,
  SUBJECT_PTY,
  SUBJECT_PTY_SYNC,
  SUBJECT_POSIX_SPAWN,
  SUBJECT_ONESHOT,
  SUBJECT_ONESHOT_SYNC,
  SUBJECT_GSUBPROCESS,
  SUBJECT_ONESHOT_SANDBOXED,
  SUBJECT_PTY_SANDBOXED,
  N_SUBJECTS
} Subject;

static const char *subject_names[N_SUBJECTS] = {
  "raw pty + bash (sentinel)",
  "pty (async, main loop)",
  "pty (sync run)",
  "posix_spawn bash -c true",
  "oneshot (async, main loop)",
  "oneshot (sync run)",
  "GSubprocess communicate",
  "oneshot sandbox=workspace-write (async)",
  "pty sandbox=workspace-write (async)",
};

typedef struct
{
  char *bash;
  BenchRawShell raw;
  TerretExecutor *pty;
  TerretExecutor *oneshot;
  TerretExecutor *sandboxed;     /* (nullable) without bwrap */
  TerretExecutor *pty_sandboxed; /* (nullable) without bwrap */
  TerretRequest *request;
} Fixture;

static void
check_result (TerretResult *result,
              GError       *error,
              Subject       subject)
{
  if (result == NULL || terret_result_get_exit_status (result) != 0)
    {
      g_printerr ("%s: `true` failed: %s\n", subject_names[subject],
                  error != NULL ? error->message : "non-zero status");
      exit (1);
    }
}

static void
one_round_trip (Fixture *fixture,
                Subject  subject)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretResult) result = NULL;

  switch (subject)
    {
    case SUBJECT_RAW_PTY:
      if (!bench_raw_shell_run (&fixture->raw, "true", NULL))
        {
          g_printerr ("raw pty shell failed\n");
          exit (1);
        }
      return;

    case SUBJECT_PTY:
      result = bench_run_on_loop (fixture->pty, fixture->request, NULL, &error);
      check_result (result, error, subject);
      return;

    case SUBJECT_PTY_SYNC:
      result = terret_executor_run (fixture->pty, fixture->request, NULL, &error);
      check_result (result, error, subject);
      return;

    case SUBJECT_ONESHOT:
      result = bench_run_on_loop (fixture->oneshot, fixture->request, NULL, &error);
      check_result (result, error, subject);
      return;

    case SUBJECT_ONESHOT_SYNC:
      result = terret_executor_run (fixture->oneshot, fixture->request, NULL, &error);
      check_result (result, error, subject);
      return;

    case SUBJECT_ONESHOT_SANDBOXED:
      if (fixture->sandboxed == NULL)
        return;
      result = bench_run_on_loop (fixture->sandboxed, fixture->request, NULL, &error);
      check_result (result, error, subject);
      return;

    case SUBJECT_PTY_SANDBOXED:
      if (fixture->pty_sandboxed == NULL)
        return;
      result = bench_run_on_loop (fixture->pty_sandboxed, fixture->request, NULL, &error);
      check_result (result, error, subject);
      return;

    case SUBJECT_POSIX_SPAWN:
      {
        const char *argv[] = { fixture->bash, "-c", "true", NULL };

        if (!bench_posix_spawn_wait (argv))
          {
            g_printerr ("posix_spawn of bash failed\n");
            exit (1);
          }
      }
      return;

    case SUBJECT_GSUBPROCESS:
      {
        const char *argv[] = { fixture->bash, "-c", "true", NULL };
        g_autoptr(GSubprocess) process = NULL;
        g_autoptr(GBytes) out = NULL;
        g_autoptr(GBytes) err = NULL;

        process = g_subprocess_newv (argv, (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                            G_SUBPROCESS_FLAGS_STDERR_PIPE), &error);
        if (process == NULL ||
            !g_subprocess_communicate (process, NULL, NULL, &out, &err, &error) ||
            !g_subprocess_get_successful (process))
          {
            g_printerr ("GSubprocess failed: %s\n", error != NULL ? error->message : "status");
            exit (1);
          }
      }
      return;

    case N_SUBJECTS:
    default:
      g_assert_not_reached ();
    }
}

int
main (int    argc,
      char **argv)
{
  Fixture fixture = { 0 };
  GArray *samples[N_SUBJECTS];
  BenchStats stats[N_SUBJECTS];
  BenchReport *report;
  BenchRow *row;
  int remaining;

  bench_init (&argc, &argv, "Round trip of `true` through each backend and its baselines.",
              entries);
  opt_runs = MAX (opt_runs, 1);
  opt_block = CLAMP (opt_block, 1, opt_runs);

  fixture.bash = bench_find_bash ();
  fixture.pty = bench_executor_new ("pty");
  fixture.oneshot = bench_executor_new ("oneshot");
  {
    g_autofree char *bwrap = g_find_program_in_path ("bwrap");

    if (bwrap != NULL)
      {
        g_autoptr(GError) error = NULL;

        /* The sandbox's default network (off) and its seccomp filter
         * come with it: what a sandboxed command really costs. */
        fixture.sandboxed = bench_executor_new ("oneshot");
        fixture.pty_sandboxed = bench_executor_new ("pty");
        if (!terret_executor_set_setting (fixture.sandboxed, "sandbox", "workspace-write", &error) ||
            !terret_executor_set_setting (fixture.pty_sandboxed, "sandbox", "workspace-write",
                                          &error))
          g_error ("%s", error->message);
      }
    else
      g_printerr ("bwrap not found: the sandboxed rows are left out\n");
  }
  fixture.request = terret_request_new ("true");
  if (!bench_raw_shell_start (&fixture.raw, fixture.bash))
    {
      g_printerr ("Could not start bash on a raw pty\n");
      return 1;
    }

  /* Warm-up: the persistent shells exist, the modules and the page cache
   * are hot before anything is timed. */
  for (int s = 0; s < N_SUBJECTS; s++)
    {
      samples[s] = g_array_new (FALSE, FALSE, sizeof (double));
      for (int i = 0; i < 20; i++)
        one_round_trip (&fixture, s);
    }

  /* Interleaved in blocks, so a noisy neighbour or a frequency change
   * lands on every subject alike. */
  for (remaining = opt_runs; remaining > 0; remaining -= opt_block)
    for (int s = 0; s < N_SUBJECTS; s++)
      for (int i = 0; i < MIN (opt_block, remaining) &&
                      (opt_only == NULL || strstr (subject_names[s], opt_only) != NULL); i++)
        {
          double t0 = bench_now ();
          double elapsed;

          one_round_trip (&fixture, s);
          elapsed = (bench_now () - t0) * 1e3;
          g_array_append_val (samples[s], elapsed);
        }

  report = bench_report_new ("roundtrip");
  bench_report_set_param (report, "runs", opt_runs);
  bench_report_set_param (report, "block", opt_block);

  for (int s = 0; s < N_SUBJECTS; s++)
    bench_stats (samples[s], &stats[s]);

  for (int s = 0; s < N_SUBJECTS; s++)
    {
      Subject base = (s == SUBJECT_PTY || s == SUBJECT_PTY_SYNC) ? SUBJECT_RAW_PTY
                     : (s == SUBJECT_ONESHOT || s == SUBJECT_ONESHOT_SYNC ||
                        s == SUBJECT_GSUBPROCESS) ? SUBJECT_POSIX_SPAWN
                     : s == SUBJECT_ONESHOT_SANDBOXED ? SUBJECT_ONESHOT
                     : s == SUBJECT_PTY_SANDBOXED ? SUBJECT_PTY : N_SUBJECTS;

      if ((s == SUBJECT_ONESHOT_SANDBOXED || s == SUBJECT_PTY_SANDBOXED) &&
          fixture.sandboxed == NULL)
        continue;

      row = bench_report_add (report, "true round trip median", subject_names[s],
                              stats[s].median, "ms");
      if (base != N_SUBJECTS)
        {
          bench_row_set_baseline (row, subject_names[base], stats[base].median);
          if (s == SUBJECT_PTY)
            bench_row_set_target_ratio (row, 1.3);
          else if (s == SUBJECT_ONESHOT)
            bench_row_set_target_ratio (row, 1.1);
          else if (s == SUBJECT_ONESHOT_SANDBOXED || s == SUBJECT_PTY_SANDBOXED)
            bench_row_set_target_ratio (row, 1.1);
        }

      row = bench_report_add (report, "true round trip p99", subject_names[s],
                              stats[s].p99, "ms");
      if (base != N_SUBJECTS)
        bench_row_set_baseline (row, subject_names[base], stats[base].p99);
    }

  bench_raw_shell_stop (&fixture.raw);
  terret_executor_close_all (fixture.pty);
  if (fixture.pty_sandboxed != NULL)
    terret_executor_close_all (fixture.pty_sandboxed);
  g_object_unref (fixture.request);
  g_object_unref (fixture.pty);
  g_object_unref (fixture.oneshot);
  g_clear_object (&fixture.sandboxed);
  g_clear_object (&fixture.pty_sandboxed);
  g_free (fixture.bash);
  for (int s = 0; s < N_SUBJECTS; s++)
    g_array_unref (samples[s]);

  return bench_report_finish (report);
}
