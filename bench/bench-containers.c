/* bench-containers.c: a command in a container through the backend, next to
 * the local backends and the engine's own exec, measured in the same run
 *
 * For each engine that can run a container here (podman, docker): a
 * running container of the test image, and `true` round trips through the
 * backend in both modes, beside local oneshot and pty and beside
 * `ENGINE exec CONTAINER bash -c true`, interleaved in blocks; then the
 * start of a session in a disposable container from the image, next to
 * `ENGINE run --rm IMAGE true`, both with no network.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-common.h"

static int opt_runs = 200;
static int opt_block = 20;
static int opt_starts = 10;
static char *opt_engine = NULL;

static GOptionEntry entries[] = {
  { "runs", 'n', 0, G_OPTION_ARG_INT, &opt_runs, "Round trips per subject (default 200)", "N" },
  { "block", 0, 0, G_OPTION_ARG_INT, &opt_block,
    "Round trips per subject before moving to the next (default 20)", "N" },
  { "starts", 0, 0, G_OPTION_ARG_INT, &opt_starts,
    "Disposable containers started per engine (default 10)", "N" },
  { "engine", 0, 0, G_OPTION_ARG_STRING, &opt_engine, "Only this engine (podman or docker)", "NAME" },
  { NULL }
};

typedef enum {
  SUBJECT_ONESHOT,
  SUBJECT_PTY,
  SUBJECT_CONTAINER_ONESHOT,
  SUBJECT_CONTAINER_SESSION,
  SUBJECT_ENGINE_EXEC,
  N_SUBJECTS
} Subject;

typedef struct
{
  const char *engine;
  GStrv run_options;
  char *engine_path;            /* for posix_spawn, which does not look in PATH */
  char *container;
  TerretExecutor *local[2];     /* oneshot, pty */
  TerretExecutor *backend[2];   /* mode=oneshot, mode=session */
  TerretRequest *request;
  char *names[N_SUBJECTS];
} Fixture;

/* Runs @argv; its stdout, or NULL after saying why. */
static char *
run_argv (const char * const *argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;

  process = g_subprocess_newv (argv, G_SUBPROCESS_FLAGS_STDOUT_PIPE | G_SUBPROCESS_FLAGS_STDERR_PIPE,
                               &error);
  if (process == NULL || !g_subprocess_communicate_utf8 (process, NULL, NULL, &out, &err, &error))
    {
      g_printerr ("%s: %s\n", argv[0], error->message);
      return NULL;
    }
  if (!g_subprocess_get_successful (process))
    {
      g_printerr ("%s failed: %s\n", argv[0], g_strstrip (err));
      return NULL;
    }
  return g_strstrip (g_steal_pointer (&out));
}

/* `ENGINE run OPTIONS ARGS...` */
static char *
engine_run (Fixture            *fixture,
            const char * const *args)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();

  g_ptr_array_add (argv, (gpointer)fixture->engine);
  g_ptr_array_add (argv, (gpointer)"run");
  for (guint i = 0; fixture->run_options[i] != NULL; i++)
    g_ptr_array_add (argv, fixture->run_options[i]);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer)args[i]);
  g_ptr_array_add (argv, NULL);
  return run_argv ((const char * const *)argv->pdata);
}

static TerretExecutor *
backend_new (Fixture    *fixture,
             const char *mode,
             const char *target)
{
  g_autoptr(GString) options = g_string_new (NULL);
  g_autofree char *mode_setting = g_strdup_printf ("mode=%s", mode);
  g_autofree char *options_setting = NULL;
  const char *settings[] = { mode_setting, target, NULL, NULL, NULL };
  g_autoptr(GError) error = NULL;
  TerretExecutor *executor;

  for (guint i = 0; fixture->run_options[i] != NULL; i++)
    g_string_append_printf (options, "%s%s", i > 0 ? ";" : "", fixture->run_options[i]);
  if (options->len > 0)
    {
      options_setting = g_strdup_printf ("engine-options=%s", options->str);
      settings[2] = options_setting;
    }
  if (g_str_has_prefix (target, "image="))
    settings[settings[2] != NULL ? 3 : 2] = "network=off";
  executor = terret_executor_new_with_settings (fixture->engine, settings, &error);
  if (executor == NULL)
    {
      g_printerr ("Could not create the %s executor: %s\n", fixture->engine, error->message);
      exit (1);
    }
  return executor;
}

static void
check_result (TerretResult *result,
              GError       *error,
              const char   *subject)
{
  if (result == NULL || terret_result_get_exit_status (result) != 0)
    {
      g_printerr ("%s: `true` failed: %s\n", subject,
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
  TerretExecutor *executor = NULL;

  switch (subject)
    {
    case SUBJECT_ONESHOT:
    case SUBJECT_PTY:
      executor = fixture->local[subject - SUBJECT_ONESHOT];
      break;
    case SUBJECT_CONTAINER_ONESHOT:
    case SUBJECT_CONTAINER_SESSION:
      executor = fixture->backend[subject - SUBJECT_CONTAINER_ONESHOT];
      break;
    case SUBJECT_ENGINE_EXEC:
      {
        const char *argv[] = { fixture->engine_path, "exec", fixture->container, "bash", "-c",
                               "true", NULL };

        if (!bench_posix_spawn_wait (argv))
          {
            g_printerr ("%s exec failed\n", fixture->engine);
            exit (1);
          }
      }
      return;
    case N_SUBJECTS:
    default:
      g_assert_not_reached ();
    }

  result = bench_run_on_loop (executor, fixture->request, NULL, &error);
  check_result (result, error, fixture->names[subject]);
}

/* The build-images script: the bench's images are the tests'. */
static char **
prepare_engine (const char *engine)
{
  const char *argv[] = { TERRET_BENCH_BUILD_IMAGES, engine, NULL };
  g_autofree char *options = NULL;
  g_autofree char *found = g_find_program_in_path (engine);
  char **words = NULL;

  if (found == NULL)
    {
      g_printerr ("%s: not installed, left out\n", engine);
      return NULL;
    }
  options = run_argv (argv);
  if (options == NULL)
    {
      g_printerr ("%s: cannot run a container here, left out\n", engine);
      return NULL;
    }
  if (*options == '\0')
    return g_new0 (char *, 1);
  if (!g_shell_parse_argv (options, NULL, &words, NULL))
    g_error ("%s: options not understood: %s", engine, options);
  return words;
}

static void
bench_engine (BenchReport *report,
              const char  *engine,
              GStrv        run_options)
{
  Fixture fixture = { engine, run_options, g_find_program_in_path (engine) };
  GArray *samples[N_SUBJECTS];
  BenchStats stats[N_SUBJECTS];
  g_autofree char *target = NULL;
  g_autoptr(GArray) starts = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) lives = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) engine_runs = g_array_new (FALSE, FALSE, sizeof (double));
  BenchStats start_stats, life_stats, engine_run_stats;
  BenchRow *row;
  int remaining;

  {
    const char *args[] = { "-d", "-i", "--network=none", "terret-test-bash", "/bin/bash", "-c",
                           "read -r x", NULL };

    fixture.container = engine_run (&fixture, args);
    if (fixture.container == NULL)
      exit (1);
  }
  target = g_strdup_printf ("container=%s", fixture.container);
  fixture.local[0] = bench_executor_new ("oneshot");
  fixture.local[1] = bench_executor_new ("pty");
  fixture.backend[0] = backend_new (&fixture, "oneshot", target);
  fixture.backend[1] = backend_new (&fixture, "session", target);
  fixture.request = terret_request_new ("true");
  fixture.names[SUBJECT_ONESHOT] = g_strdup ("oneshot (local)");
  fixture.names[SUBJECT_PTY] = g_strdup ("pty (local)");
  fixture.names[SUBJECT_CONTAINER_ONESHOT] = g_strdup_printf ("%s mode=oneshot", engine);
  fixture.names[SUBJECT_CONTAINER_SESSION] = g_strdup_printf ("%s mode=session", engine);
  fixture.names[SUBJECT_ENGINE_EXEC] = g_strdup_printf ("%s exec CONTAINER bash -c true", engine);

  /* Warm-up: the launcher is copied in, the shells and bridges exist. */
  for (int s = 0; s < N_SUBJECTS; s++)
    {
      samples[s] = g_array_new (FALSE, FALSE, sizeof (double));
      for (int i = 0; i < 5; i++)
        one_round_trip (&fixture, s);
    }

  /* Interleaved in blocks, so a noisy neighbour lands on every subject
   * alike; the engine's exec, a hundred times slower, runs a tenth as
   * often. */
  for (remaining = opt_runs; remaining > 0; remaining -= opt_block)
    for (int s = 0; s < N_SUBJECTS; s++)
      for (int i = 0; i < MIN (opt_block, remaining); i++)
        {
          double t0;

          if (s == SUBJECT_ENGINE_EXEC && i % 10 != 0)
            continue;
          t0 = bench_now ();
          one_round_trip (&fixture, s);
          g_array_append_val (samples[s], (double){ (bench_now () - t0) * 1e3 });
        }

  for (int s = 0; s < N_SUBJECTS; s++)
    bench_stats (samples[s], &stats[s]);

  for (int s = 0; s < N_SUBJECTS; s++)
    {
      row = bench_report_add (report, "true round trip median", fixture.names[s],
                              stats[s].median, "ms");
      if (s == SUBJECT_CONTAINER_ONESHOT)
        {
          bench_row_set_baseline (row, fixture.names[SUBJECT_ONESHOT], stats[SUBJECT_ONESHOT].median);
          bench_row_set_target_ratio (row, 1.5);
        }
      else if (s == SUBJECT_CONTAINER_SESSION)
        bench_row_set_baseline (row, fixture.names[SUBJECT_PTY], stats[SUBJECT_PTY].median);
      else if (s == SUBJECT_ENGINE_EXEC)
        {
          bench_row_set_baseline (row, fixture.names[SUBJECT_CONTAINER_ONESHOT],
                                  stats[SUBJECT_CONTAINER_ONESHOT].median);
          bench_row_set_target_min_ratio (row, 20);
        }
      row = bench_report_add (report, "true round trip p99", fixture.names[s], stats[s].p99, "ms");
    }
  {
    /* The session mode against the engine's exec as well. */
    g_autofree char *subject = g_strdup (fixture.names[SUBJECT_ENGINE_EXEC]);

    row = bench_report_add (report, "true round trip median", subject,
                            stats[SUBJECT_ENGINE_EXEC].median, "ms");
    bench_row_set_baseline (row, fixture.names[SUBJECT_CONTAINER_SESSION],
                            stats[SUBJECT_CONTAINER_SESSION].median);
    bench_row_set_target_min_ratio (row, 20);
  }

  /* A session in a disposable container: its start (to the first result)
   * and its whole life (the container removed at the end), next to the
   * engine's own run of `true`, all without a network. */
  for (int i = 0; i < opt_starts; i++)
    {
      const char *args[] = { "--rm", "--network=none", "terret-test-bash", "true", NULL };
      g_autofree char *out = NULL;
      TerretExecutor *executor;
      double t0 = bench_now (), t1, t2;

      executor = backend_new (&fixture, "session", "image=terret-test-bash");
      {
        g_autoptr(GError) error = NULL;
        g_autoptr(TerretResult) result = bench_run_on_loop (executor, fixture.request, NULL, &error);

        check_result (result, error, "session start from an image");
      }
      t1 = bench_now ();
      g_object_unref (executor);
      t2 = bench_now ();
      g_array_append_val (starts, (double){ (t1 - t0) * 1e3 });
      g_array_append_val (lives, (double){ (t2 - t0) * 1e3 });

      t0 = bench_now ();
      out = engine_run (&fixture, args);
      if (out == NULL)
        exit (1);
      g_array_append_val (engine_runs, (double){ (bench_now () - t0) * 1e3 });
    }
  bench_stats (starts, &start_stats);
  bench_stats (lives, &life_stats);
  bench_stats (engine_runs, &engine_run_stats);
  {
    g_autofree char *engine_subject = g_strdup_printf ("%s run --rm IMAGE true", engine);
    g_autofree char *start_subject = g_strdup_printf ("%s image=, first result", engine);
    g_autofree char *life_subject = g_strdup_printf ("%s image=, first result to removal", engine);

    row = bench_report_add (report, "session start median", engine_subject,
                            engine_run_stats.median, "ms");
    row = bench_report_add (report, "session start median", start_subject, start_stats.median, "ms");
    bench_row_set_baseline (row, engine_subject, engine_run_stats.median);
    row = bench_report_add (report, "session start median", life_subject, life_stats.median, "ms");
    bench_row_set_baseline (row, engine_subject, engine_run_stats.median);
  }

  terret_executor_close_all (fixture.backend[1]);
  terret_executor_close_all (fixture.local[1]);
  for (int i = 0; i < 2; i++)
    {
      g_object_unref (fixture.local[i]);
      g_object_unref (fixture.backend[i]);
    }
  {
    const char *argv[] = { engine, "rm", "-f", fixture.container, NULL };
    const char *podman_argv[] = { engine, "rm", "-f", "-t", "0", fixture.container, NULL };
    g_autofree char *out = run_argv (strcmp (engine, "podman") == 0 ? podman_argv : argv);
  }
  g_object_unref (fixture.request);
  g_free (fixture.container);
  g_free (fixture.engine_path);
  for (int s = 0; s < N_SUBJECTS; s++)
    {
      g_array_unref (samples[s]);
      g_free (fixture.names[s]);
    }
}

int
main (int    argc,
      char **argv)
{
  const char *engines[] = { "podman", "docker" };
  BenchReport *report;
  gboolean any = FALSE;

  bench_init (&argc, &argv, "A command in a container through the backends, beside the local "
              "backends and the engine's own exec.", entries);
  opt_runs = MAX (opt_runs, 1);
  opt_block = CLAMP (opt_block, 1, opt_runs);
  opt_starts = MAX (opt_starts, 1);

  report = bench_report_new ("containers");
  bench_report_set_param (report, "runs", opt_runs);
  bench_report_set_param (report, "block", opt_block);
  bench_report_set_param (report, "starts", opt_starts);

  for (guint e = 0; e < G_N_ELEMENTS (engines); e++)
    {
      g_auto(GStrv) options = NULL;

      if (opt_engine != NULL && strcmp (opt_engine, engines[e]) != 0)
        continue;
      options = prepare_engine (engines[e]);
      if (options == NULL)
        continue;
      bench_engine (report, engines[e], options);
      any = TRUE;
    }
  if (!any)
    {
      g_printerr ("No container engine can run here: nothing measured\n");
      return 77;
    }
  return bench_report_finish (report);
}
