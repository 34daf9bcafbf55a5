/* bench-hostsize.c: the cost of a one-shot `true` against the size of the
 * host process, next to posix_spawn and fork + execve in the same hosts
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-common.h"

/* What growing the host must leave free, so the children and the page
 * cache are not what gets squeezed. */
#define HEADROOM_MIB 512

static char *opt_sizes = NULL;
static int opt_runs = 30;
static int opt_block = 10;

static GOptionEntry entries[] = {
  { "sizes", 0, 0, G_OPTION_ARG_STRING, &opt_sizes,
    "Host sizes in MiB, allocated and touched in turn (default 0,2048,8192; 0 is always measured)",
    "LIST" },
  { "runs", 'n', 0, G_OPTION_ARG_INT, &opt_runs, "Round trips per subject and size (default 30)", "N" },
  { "block", 0, 0, G_OPTION_ARG_INT, &opt_block,
    "Round trips per subject before moving to the next (default 10)", "N" },
  { NULL }
};

typedef enum {
  SUBJECT_ONESHOT,
  SUBJECT_POSIX_SPAWN,
  SUBJECT_FORK_EXEC,
  N_SUBJECTS
} Subject;

static const char *subject_names[N_SUBJECTS] = {
  "oneshot (async)",
  "posix_spawn",
  "fork + execve",
};

typedef struct
{
  char *bash;
  TerretExecutor *oneshot;
  TerretRequest *request;
} Fixture;

/* The host's extra memory: one anonymous mapping per step, every page
 * written, so each is resident and in the page tables a fork copies. */
typedef struct
{
  void *start;
  gsize length;
} Chunk;

typedef struct
{
  GArray *chunks;
  guint64 mib;
} Host;

/* The medians of every subject in a host of one size. */
typedef struct
{
  guint64 mib;
  double median[N_SUBJECTS];
} Measured;

static int
compare_mib (gconstpointer a,
             gconstpointer b)
{
  guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;

  return x < y ? -1 : x > y ? 1 : 0;
}

/* The sizes in ascending order, without repeats, 0 first. */
static GArray *
parse_sizes (const char *text)
{
  g_auto(GStrv) words = g_strsplit (text, ",", -1);
  GArray *sizes = g_array_new (FALSE, FALSE, sizeof (guint64));
  guint64 zero = 0;

  g_array_append_val (sizes, zero);
  for (guint i = 0; words[i] != NULL; i++)
    {
      g_autoptr(GError) error = NULL;
      guint64 mib;

      if (!g_ascii_string_to_unsigned (g_strstrip (words[i]), 10, 0, G_MAXUINT32, &mib, &error))
        {
          g_printerr ("--sizes: %s\n", error->message);
          exit (2);
        }
      g_array_append_val (sizes, mib);
    }

  g_array_sort (sizes, compare_mib);
  for (guint i = 1; i < sizes->len; )
    {
      if (g_array_index (sizes, guint64, i) == g_array_index (sizes, guint64, i - 1))
        g_array_remove_index (sizes, i);
      else
        i++;
    }
  return sizes;
}

static gboolean
host_grow (Host    *host,
           guint64  mib)
{
  gsize page = (gsize)sysconf (_SC_PAGESIZE);
  Chunk chunk;

  g_assert (mib >= host->mib);
  if (mib == host->mib)
    return TRUE;

  chunk.length = (gsize)(mib - host->mib) << 20;
  chunk.start = mmap (NULL, chunk.length, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (chunk.start == MAP_FAILED)
    return FALSE;
  for (gsize offset = 0; offset < chunk.length; offset += page)
    ((volatile char *)chunk.start)[offset] = 1;

  g_array_append_val (host->chunks, chunk);
  host->mib = mib;
  return TRUE;
}

static void
host_free (Host *host)
{
  for (guint i = 0; i < host->chunks->len; i++)
    {
      Chunk *chunk = &g_array_index (host->chunks, Chunk, i);

      munmap (chunk->start, chunk->length);
    }
  g_array_unref (host->chunks);
}

static void
one_round_trip (Fixture *fixture,
                Subject  subject)
{
  const char *argv[] = { fixture->bash, "-c", "true", NULL };

  switch (subject)
    {
    case SUBJECT_ONESHOT:
      {
        g_autoptr(GError) error = NULL;
        g_autoptr(TerretResult) result = bench_run_on_loop (fixture->oneshot, fixture->request,
                                                            NULL, &error);

        if (result == NULL || terret_result_get_exit_status (result) != 0)
          {
            g_printerr ("oneshot: `true` failed: %s\n",
                        error != NULL ? error->message : "non-zero status");
            exit (1);
          }
      }
      return;

    case SUBJECT_POSIX_SPAWN:
      if (!bench_posix_spawn_wait (argv))
        {
          g_printerr ("posix_spawn of bash failed\n");
          exit (1);
        }
      return;

    case SUBJECT_FORK_EXEC:
      {
        int status = 0;
        pid_t pid = fork ();

        if (pid == 0)
          {
            execve (argv[0], (char * const *)argv, environ);
            _exit (127);
          }
        if (pid < 0 || waitpid (pid, &status, 0) != pid ||
            !WIFEXITED (status) || WEXITSTATUS (status) != 0)
          {
            g_printerr ("fork + execve of bash failed\n");
            exit (1);
          }
      }
      return;

    case N_SUBJECTS:
    default:
      g_assert_not_reached ();
    }
}

/* Medians of every subject in the host as it is now, interleaved in
 * blocks so a noisy neighbour lands on every subject alike. */
static void
measure (Fixture *fixture,
         double   medians[N_SUBJECTS])
{
  GArray *samples[N_SUBJECTS];

  for (int s = 0; s < N_SUBJECTS; s++)
    {
      samples[s] = g_array_new (FALSE, FALSE, sizeof (double));
      for (int i = 0; i < 3; i++)
        one_round_trip (fixture, s);
    }

  for (int remaining = opt_runs; remaining > 0; remaining -= opt_block)
    for (int s = 0; s < N_SUBJECTS; s++)
      for (int i = 0; i < MIN (opt_block, remaining); i++)
        {
          double t0 = bench_now ();
          double elapsed;

          one_round_trip (fixture, s);
          elapsed = (bench_now () - t0) * 1e3;
          g_array_append_val (samples[s], elapsed);
        }

  for (int s = 0; s < N_SUBJECTS; s++)
    {
      BenchStats stats;

      bench_stats (samples[s], &stats);
      medians[s] = stats.median;
      g_array_unref (samples[s]);
    }
}

static char *
transparent_hugepage_mode (void)
{
  g_autofree char *text = NULL;
  const char *left, *right;

  /* "always [madvise] never": the bracketed word is the mode. */
  if (!g_file_get_contents ("/sys/kernel/mm/transparent_hugepage/enabled", &text, NULL, NULL) ||
      (left = strchr (text, '[')) == NULL || (right = strchr (left, ']')) == NULL)
    return g_strdup ("unknown");
  return g_strndup (left + 1, right - left - 1);
}

int
main (int    argc,
      char **argv)
{
  Fixture fixture = { 0 };
  Host host = { g_array_new (FALSE, FALSE, sizeof (Chunk)), 0 };
  g_autoptr(GArray) sizes = NULL;
  g_autoptr(GArray) measured = g_array_new (FALSE, FALSE, sizeof (Measured));
  g_autofree char *thp = transparent_hugepage_mode ();
  BenchReport *report;
  BenchRow *row;

  bench_init (&argc, &argv,
              "Round trip of `true` through oneshot, posix_spawn and fork + execve "
              "in a host of growing size.", entries);
  opt_runs = MAX (opt_runs, 1);
  opt_block = CLAMP (opt_block, 1, opt_runs);
  sizes = parse_sizes (opt_sizes != NULL ? opt_sizes : "0,2048,8192");

  fixture.bash = bench_find_bash ();
  fixture.oneshot = bench_executor_new ("oneshot");
  fixture.request = terret_request_new ("true");

  report = bench_report_new ("hostsize");
  bench_report_set_param (report, "runs", opt_runs);
  bench_report_set_param (report, "block", opt_block);
  g_print ("transparent huge pages: %s (the host's memory is plain anonymous mmap, no madvise)\n",
           thp);

  for (guint i = 0; i < sizes->len; i++)
    {
      guint64 mib = g_array_index (sizes, guint64, i);
      guint64 available = bench_proc_kib ("/proc/meminfo", "MemAvailable") / 1024;
      double start;
      g_autofree char *subject = g_strdup_printf ("%" G_GUINT64_FORMAT " MiB host", mib);
      Measured at_size = { mib, { 0 } };

      if (mib - host.mib + HEADROOM_MIB > available)
        {
          g_print ("hostsize: %" G_GUINT64_FORMAT " MiB skipped: growing by %" G_GUINT64_FORMAT
                   " MiB would leave less than %d MiB of MemAvailable (%" G_GUINT64_FORMAT " MiB)\n",
                   mib, mib - host.mib, HEADROOM_MIB, available);
          bench_report_add (report, "skipped: MemAvailable", subject, (double)available, "MiB");
          continue;
        }

      start = bench_now ();
      if (!host_grow (&host, mib))
        {
          g_print ("hostsize: %" G_GUINT64_FORMAT " MiB skipped: mmap failed\n", mib);
          bench_report_add (report, "skipped: mmap failed", subject, (double)available, "MiB");
          continue;
        }
      if (mib > 0)
        g_print ("hostsize: grown to %" G_GUINT64_FORMAT " MiB, every page written, in %.1f s\n",
                 mib, bench_now () - start);

      bench_report_add (report, "host RSS", subject, bench_rss_kib () / 1024.0, "MiB");
      bench_report_add (report, "host AnonHugePages", subject,
                        bench_proc_kib ("/proc/self/smaps_rollup", "AnonHugePages") / 1024.0, "MiB");
      measure (&fixture, at_size.median);
      g_array_append_val (measured, at_size);
    }

  /* Grouped by subject, each size against the same subject in the
   * 0-MiB host measured seconds before. */
  for (int s = 0; s < N_SUBJECTS; s++)
    {
      const Measured *base = &g_array_index (measured, Measured, 0);
      g_autofree char *base_name = g_strdup_printf ("%s @ 0 MiB", subject_names[s]);

      for (guint i = 0; i < measured->len; i++)
        {
          const Measured *at_size = &g_array_index (measured, Measured, i);
          g_autofree char *subject = g_strdup_printf ("%s @ %" G_GUINT64_FORMAT " MiB",
                                                      subject_names[s], at_size->mib);

          row = bench_report_add (report, "true round trip median", subject,
                                  at_size->median[s], "ms");
          if (at_size->mib == 0)
            continue;
          bench_row_set_baseline (row, base_name, base->median[s]);
          if (s == SUBJECT_ONESHOT)
            bench_row_set_target_ratio (row, 1.2);
        }
    }

  host_free (&host);
  g_object_unref (fixture.request);
  g_object_unref (fixture.oneshot);
  g_free (fixture.bash);

  return bench_report_finish (report);
}
