/* bench-throughput.c: a large output through each backend, next to the
 * same bytes read from a raw pty and a raw pipe in the same run
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-common.h"

static double opt_mb = 50;
static int opt_reps = 3;

static GOptionEntry entries[] = {
  { "megabytes", 'm', 0, G_OPTION_ARG_DOUBLE, &opt_mb,
    "Megabytes (10^6) of output per run (default 50; 200 for the full figure)", "MB" },
  { "reps", 'r', 0, G_OPTION_ARG_INT, &opt_reps, "Runs per subject (default 3)", "N" },
  { NULL }
};

typedef enum {
  SUBJECT_RAW_PIPE,
  SUBJECT_RAW_PTY,
  SUBJECT_ONESHOT,
  SUBJECT_ONESHOT_CAPPED,
  SUBJECT_PTY,
  SUBJECT_PTY_CAPPED,
  SUBJECT_ONESHOT_SPOOL,
  SUBJECT_PTY_SPOOL,
  N_SUBJECTS
} Subject;

static const char *subject_names[N_SUBJECTS] = {
  "raw pipe, read+discard",
  "raw pty, read+discard",
  "oneshot (cap above size)",
  "oneshot (default cap)",
  "pty (cap above size)",
  "pty (default cap)",
  "oneshot (default cap, full output spooled)",
  "pty (default cap, full output spooled)",
};

typedef struct
{
  guint64 size;
  char *size_str;
  char *command;
  TerretExecutor *oneshot;
  TerretExecutor *oneshot_capped;
  TerretExecutor *pty;
  TerretExecutor *pty_capped;
  TerretExecutor *oneshot_spool;
  TerretExecutor *pty_spool;
} Fixture;

/* What `cat >/dev/null` does, in process: read in cat's 128 KiB chunks
 * and throw away. */
static guint64
read_to_end (int fd)
{
  static guint8 chunk[128 * 1024];
  guint64 total = 0;

  for (;;)
    {
      gssize n = read (fd, chunk, sizeof chunk);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return total;
      total += n;
    }
}

static guint64
raw_pipe (Fixture *fixture)
{
  const char *argv[] = { "head", "-c", fixture->size_str, "/dev/zero", NULL };
  posix_spawn_file_actions_t actions;
  int fds[2];
  pid_t pid;
  guint64 total;

  if (pipe2 (fds, O_CLOEXEC) < 0)
    exit (1);
  posix_spawn_file_actions_init (&actions);
  posix_spawn_file_actions_adddup2 (&actions, fds[1], 1);
  if (posix_spawnp (&pid, "head", &actions, NULL, (char * const *)argv, environ) != 0)
    exit (1);
  posix_spawn_file_actions_destroy (&actions);
  close (fds[1]);
  total = read_to_end (fds[0]);
  close (fds[0]);
  waitpid (pid, NULL, 0);
  return total;
}

static guint64
raw_pty (Fixture *fixture)
{
  const char *argv[] = { "head", "-c", fixture->size_str, "/dev/zero", NULL };
  guint64 total;
  pid_t pid;
  int master;

  if (!bench_raw_pty_spawn (argv, &pid, &master))
    exit (1);
  /* A pty reports its end as EIO once the last slave holder is gone. */
  total = read_to_end (master);
  close (master);
  waitpid (pid, NULL, 0);
  return total;
}

static guint64
backend_run (TerretExecutor *executor,
             const char     *command,
             const char     *name)
{
  g_autoptr(TerretRequest) request = terret_request_new (command);
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  result = bench_run_on_loop (executor, request, NULL, &error);
  if (result == NULL || terret_result_get_exit_status (result) != 0)
    {
      g_printerr ("%s: the command failed: %s\n", name,
                  error != NULL ? error->message : terret_result_get_notice (result));
      exit (1);
    }
  return g_bytes_get_size (terret_result_get_stdout (result)) +
         terret_result_get_dropped (result, TERRET_STREAM_STDOUT);
}

static guint64
run_subject (Fixture *fixture,
             Subject  subject)
{
  switch (subject)
    {
    case SUBJECT_RAW_PIPE:
      return raw_pipe (fixture);
    case SUBJECT_RAW_PTY:
      return raw_pty (fixture);
    case SUBJECT_ONESHOT:
      return backend_run (fixture->oneshot, fixture->command, subject_names[subject]);
    case SUBJECT_ONESHOT_CAPPED:
      return backend_run (fixture->oneshot_capped, fixture->command, subject_names[subject]);
    case SUBJECT_PTY:
      return backend_run (fixture->pty, fixture->command, subject_names[subject]);
    case SUBJECT_PTY_CAPPED:
      return backend_run (fixture->pty_capped, fixture->command, subject_names[subject]);
    case SUBJECT_ONESHOT_SPOOL:
      return backend_run (fixture->oneshot_spool, fixture->command, subject_names[subject]);
    case SUBJECT_PTY_SPOOL:
      return backend_run (fixture->pty_spool, fixture->command, subject_names[subject]);
    case N_SUBJECTS:
    default:
      g_assert_not_reached ();
    }
  return 0;
}

int
main (int    argc,
      char **argv)
{
  Fixture fixture = { 0 };
  GArray *samples[N_SUBJECTS];
  BenchStats stats[N_SUBJECTS];
  BenchReport *report;
  guint64 above;

  bench_init (&argc, &argv, "Throughput of a large output through each backend.", entries);
  opt_reps = MAX (opt_reps, 1);
  fixture.size = (guint64)(opt_mb * 1e6);
  fixture.size_str = g_strdup_printf ("%" G_GUINT64_FORMAT, fixture.size);
  fixture.command = g_strdup_printf ("head -c %s /dev/zero", fixture.size_str);
  above = fixture.size + (1 << 20);

  fixture.oneshot = bench_executor_new ("oneshot");
  fixture.oneshot_capped = bench_executor_new ("oneshot");
  fixture.pty = bench_executor_new ("pty");
  fixture.pty_capped = bench_executor_new ("pty");
  fixture.oneshot_spool = bench_executor_new ("oneshot");
  fixture.pty_spool = bench_executor_new ("pty");
  /* The spool rows keep every byte in a file (under $XDG_RUNTIME_DIR, or
   * the temporary directory), bounded above the output's size. */
  g_object_set (fixture.oneshot_spool, "keep-full-output", TRUE, "full-output-max", above, NULL);
  g_object_set (fixture.pty_spool, "keep-full-output", TRUE, "full-output-max", above, NULL);
  g_object_set (fixture.oneshot, "max-output", above, NULL);
  g_object_set (fixture.pty, "max-output", above, NULL);

  for (int s = 0; s < N_SUBJECTS; s++)
    samples[s] = g_array_new (FALSE, FALSE, sizeof (double));

  /* The persistent shells are started before anything is timed. */
  backend_run (fixture.pty, "true", "pty");
  backend_run (fixture.pty_capped, "true", "pty");
  backend_run (fixture.pty_spool, "true", "pty");

  for (int r = 0; r < opt_reps; r++)
    for (int s = 0; s < N_SUBJECTS; s++)
      {
        double t0 = bench_now ();
        guint64 got = run_subject (&fixture, s);
        double mbps = fixture.size / 1e6 / (bench_now () - t0);

        if (got != fixture.size)
          {
            g_printerr ("%s: %" G_GUINT64_FORMAT " bytes instead of %" G_GUINT64_FORMAT "\n",
                        subject_names[s], got, fixture.size);
            return 1;
          }
        g_array_append_val (samples[s], mbps);
      }

  report = bench_report_new ("throughput");
  bench_report_set_param (report, "megabytes", opt_mb);
  bench_report_set_param (report, "reps", opt_reps);

  for (int s = 0; s < N_SUBJECTS; s++)
    {
      Subject base = (s == SUBJECT_PTY || s == SUBJECT_PTY_CAPPED) ? SUBJECT_RAW_PTY
                     : (s == SUBJECT_ONESHOT || s == SUBJECT_ONESHOT_CAPPED) ? SUBJECT_RAW_PIPE
                     : N_SUBJECTS;
      BenchRow *row;

      bench_stats (samples[s], &stats[s]);
      if (s == SUBJECT_ONESHOT_SPOOL || s == SUBJECT_PTY_SPOOL)
        {
          /* Spool on against spool off, the same backend and cap in the
           * same run: throughput over throughput, at least 0.8. */
          Subject off = s == SUBJECT_PTY_SPOOL ? SUBJECT_PTY_CAPPED : SUBJECT_ONESHOT_CAPPED;

          row = bench_report_add (report, "throughput median (ratio=spool on/off)",
                                  subject_names[s], stats[s].median, "MB/s");
          bench_row_set_baseline (row, subject_names[off], stats[off].median);
          bench_row_set_target_min_ratio (row, 0.8);
          continue;
        }
      row = bench_report_add (report, "throughput median", subject_names[s],
                              stats[s].median, "MB/s");
      if (base != N_SUBJECTS)
        {
          /* Slowdown: baseline throughput over the subject's, i.e. the
           * ratio of times. */
          bench_row_set_baseline (row, subject_names[base], stats[base].median);
          row->ratio = stats[s].median > 0 ? stats[base].median / stats[s].median : NAN;
          bench_row_set_target_ratio (row, 1.5);
          g_free (row->figure);
          row->figure = g_strdup ("throughput median (ratio=slowdown)");
        }
    }

  terret_executor_close_all (fixture.pty);
  terret_executor_close_all (fixture.pty_capped);
  terret_executor_close_all (fixture.pty_spool);
  terret_executor_close_all (fixture.oneshot_spool);
  g_object_unref (fixture.oneshot_spool);
  g_object_unref (fixture.pty_spool);
  g_object_unref (fixture.oneshot);
  g_object_unref (fixture.oneshot_capped);
  g_object_unref (fixture.pty);
  g_object_unref (fixture.pty_capped);
  g_free (fixture.size_str);
  g_free (fixture.command);
  for (int s = 0; s < N_SUBJECTS; s++)
    g_array_unref (samples[s]);

  return bench_report_finish (report);
}
