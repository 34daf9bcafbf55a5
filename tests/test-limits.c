/* test-limits.c: the limit-* settings, with real processes, on pty and oneshot
 *
 * Each limit is hit for real and the result must say which; the next run
 * works; the host is never what pays. A limit a cgroup holds is tested
 * where this host lets one be made (the executor says so in its
 * containment description), its rlimit fallback otherwise.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include <glib/gstdio.h>

#include "terret-test-utils.h"

static TerretExecutor *
new_executor (const char *backend,
              const char *key,
              const char *value)
{
  g_autoptr(GError) error = NULL;
  TerretExecutor *executor = terret_executor_new (backend, &error);

  g_assert_no_error (error);
  terret_executor_set_setting (executor, key, value, &error);
  g_assert_no_error (error);
  return executor;
}

/* Whether a cgroup holds @what ("limit-memory", "limit-processes") here. */
static gboolean
cgroup_holds (TerretExecutor *executor,
              const char     *what)
{
  g_autofree char *containment = terret_executor_dup_containment (executor);
  g_autofree char *needle = g_strdup_printf ("%s is held by a cgroup", what);
  g_autofree char *needle2 = g_strdup_printf ("%s by a cgroup", what);

  g_assert_nonnull (containment);
  return strstr (containment, needle) != NULL || strstr (containment, needle2) != NULL;
}

static char *
stdout_text (TerretResult *result)
{
  GBytes *out = terret_result_get_stdout (result);

  return g_strndup (g_bytes_get_data (out, NULL), g_bytes_get_size (out));
}

static void
assert_next_run_works (TerretExecutor *executor)
{
  g_autoptr(TerretResult) result = terret_test_run_in (executor, TERRET_DEFAULT_SESSION,
                                                       "echo works; (exit 4)", 60);
  g_autofree char *out = stdout_text (result);

  g_assert_cmpint (terret_result_get_exit_status (result), ==, 4);
  g_assert_cmpstr (out, ==, "works\n");
  g_assert_cmpint (terret_result_get_limits_hit (result), ==, TERRET_LIMIT_NONE);
}

static void
test_memory (gconstpointer data)
{
  g_autoptr(TerretExecutor) executor = new_executor (data, "limit-memory", "64M");
  g_autoptr(TerretResult) result = NULL;
  g_autofree char *out = NULL;

  g_test_summary ("200 MB written under limit-memory=64M: the allocation is refused or its "
                  "process killed, the result names the limit where a cgroup holds it, and "
                  "the next run works.");

  result = terret_test_run_in (executor, TERRET_DEFAULT_SESSION,
                               "python3 -c 'b = bytearray(b\"x\" * (200 << 20))'; echo \"st=$?\"", 60);
  out = stdout_text (result);
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  if (cgroup_holds (executor, "limit-memory"))
    {
      /* The OOM killer in the cgroup: SIGKILL, as bash reports it. */
      g_assert_nonnull (strstr (out, "st=137\n"));
      g_assert_cmpint (terret_result_get_limits_hit (result), ==, TERRET_LIMIT_MEMORY);
      g_assert_nonnull (strstr (terret_result_get_notice (result), "limit-memory (64 MiB)"));
    }
  else
    {
      /* The address space: MemoryError. */
      g_assert_nonnull (strstr (out, "st=1\n"));
    }
  assert_next_run_works (executor);
}

static void
test_processes (gconstpointer data)
{
  g_autoptr(TerretExecutor) executor = new_executor (data, "limit-processes", "32");
  g_autoptr(TerretResult) result = NULL;

  g_test_summary ("200 background jobs under limit-processes=32: forks past the limit are "
                  "refused, the result names the limit, nothing is left and the next run works.");

  /* Bounded: without a cgroup (root ignores RLIMIT_NPROC) it would still
   * only start 200 sleeps, which end with the run or session. */
  if (!cgroup_holds (executor, "limit-processes"))
    {
      g_test_skip ("no cgroup can be made here, and the rlimit fallback does not hold for root");
      return;
    }

  result = terret_test_run_in (executor, TERRET_DEFAULT_SESSION,
                               "for i in $(seq 200); do sleep 30 & done 2>/dev/null; echo forked", 60);
  g_assert_true (terret_result_get_limits_hit (result) & TERRET_LIMIT_PROCESSES);
  g_assert_nonnull (strstr (terret_result_get_notice (result), "limit-processes (32)"));
  assert_next_run_works (executor);
}

static void
test_cpu (gconstpointer data)
{
  g_autoptr(TerretExecutor) executor = new_executor (data, "limit-cpu", "1");
  g_autoptr(TerretResult) result = NULL;

  g_test_summary ("A busy loop under limit-cpu=1 ends by SIGXCPU and the result says so.");

  result = terret_test_run_in (executor, TERRET_DEFAULT_SESSION, "yes >/dev/null", 60);
  if (terret_result_get_exited (result))
    g_assert_cmpint (terret_result_get_exit_status (result), ==, 128 + SIGXCPU);
  else
    g_assert_cmpint (terret_result_get_term_signal (result), ==, SIGXCPU);
  g_assert_cmpint (terret_result_get_limits_hit (result), ==, TERRET_LIMIT_CPU);
  g_assert_nonnull (strstr (terret_result_get_notice (result), "limit-cpu (1 s)"));
  assert_next_run_works (executor);
}

static void
test_file_size (gconstpointer data)
{
  g_autoptr(TerretExecutor) executor = new_executor (data, "limit-file-size", "1M");
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *file = g_build_filename (dir, "big", NULL);
  g_autofree char *command = g_strdup_printf ("head -c 2000000 /dev/zero > '%s'", file);
  g_autoptr(TerretResult) result = NULL;
  GStatBuf st;

  g_test_summary ("Writing 2 MB under limit-file-size=1M stops at 1 MiB by SIGXFSZ, and the "
                  "result says so.");

  result = terret_test_run_in (executor, TERRET_DEFAULT_SESSION, command, 60);
  if (terret_result_get_exited (result))
    g_assert_cmpint (terret_result_get_exit_status (result), ==, 128 + SIGXFSZ);
  else
    g_assert_cmpint (terret_result_get_term_signal (result), ==, SIGXFSZ);
  g_assert_cmpint (terret_result_get_limits_hit (result), ==, TERRET_LIMIT_FILE_SIZE);
  g_assert_cmpint (g_stat (file, &st), ==, 0);
  g_assert_cmpint (st.st_size, ==, 1024 * 1024);
  assert_next_run_works (executor);
}

static void
test_open_files (gconstpointer data)
{
  g_autoptr(TerretExecutor) executor = new_executor (data, "limit-open-files", "40");
  g_autoptr(TerretResult) result = NULL;
  g_autofree char *out = NULL;

  g_test_summary ("limit-open-files is each process's, soft and hard, so nothing raises it.");

  result = terret_test_run_in (executor, TERRET_DEFAULT_SESSION,
                               "ulimit -S -n; ulimit -H -n; ulimit -n 100 2>/dev/null || echo refused", 60);
  out = stdout_text (result);
  g_assert_cmpstr (out, ==, "40\n40\nrefused\n");
}

static void
test_sizes (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretExecutor) executor = terret_executor_new ("oneshot", &error);
  const struct { const char *text; guint64 value; } sizes[] = {
    { "4096", 4096 }, { "64M", 64 << 20 }, { "2G", G_GUINT64_CONSTANT (2) << 30 },
    { "512KiB", 512 << 10 }, { "1k", 1024 }, { "3MB", 3 << 20 }, { "0", 0 },
  };
  const char *bad[] = { "12X", "M", "-1", "1.5G", "99999999999T", "" };

  g_test_summary ("Sizes in bytes take K, M, G and T (powers of 1024); nonsense is refused "
                  "with the setting named.");
  g_assert_no_error (error);

  for (guint i = 0; i < G_N_ELEMENTS (sizes); i++)
    {
      guint64 value = 1;

      terret_executor_set_setting (executor, "limit-memory", sizes[i].text, &error);
      g_assert_no_error (error);
      g_object_get (executor, "limit-memory", &value, NULL);
      g_assert_cmpuint (value, ==, sizes[i].value);
    }
  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_assert_false (terret_executor_set_setting (executor, "limit-memory", bad[i], &error));
      g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG);
      g_assert_nonnull (strstr (error->message, "limit-memory"));
      g_clear_error (&error);
    }
}

int
main (int   argc,
      char *argv[])
{
  const char *backends[] = { "pty", "oneshot" };

  terret_test_init (&argc, &argv);

  for (guint i = 0; i < G_N_ELEMENTS (backends); i++)
    {
      const struct { const char *name; GTestDataFunc func; } tests[] = {
        { "memory", test_memory }, { "processes", test_processes }, { "cpu", test_cpu },
        { "file-size", test_file_size }, { "open-files", test_open_files },
      };

      for (guint t = 0; t < G_N_ELEMENTS (tests); t++)
        {
          g_autofree char *path = g_strdup_printf ("/limits/%s/%s", backends[i], tests[t].name);

          g_test_add_data_func (path, backends[i], tests[t].func);
        }
    }
  g_test_add_func ("/limits/sizes", test_sizes);

  return g_test_run ();
}
