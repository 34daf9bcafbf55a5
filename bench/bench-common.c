/* bench-common.c: timing, statistics, process probes, the raw baselines
 * and the report every benchmark program prints and writes as JSON
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <json-glib/json-glib.h>

#include "bench-common.h"

static char *opt_json = NULL;
static gboolean opt_strict = FALSE;

static GOptionEntry common_entries[] = {
  { "json", 0, 0, G_OPTION_ARG_FILENAME, &opt_json,
    "Write the figures as JSON to PATH (default: $TERRET_BENCH_JSON_DIR/PROGRAM.json)", "PATH" },
  { "strict", 0, 0, G_OPTION_ARG_NONE, &opt_strict,
    "Exit with status 1 when a target is missed", NULL },
  { NULL }
};

void
bench_init (int           *argc,
            char        ***argv,
            const char    *summary,
            GOptionEntry  *entries)
{
  g_autoptr(GOptionContext) context = g_option_context_new (NULL);
  g_autoptr(GError) error = NULL;

  g_option_context_set_summary (context, summary);
  g_option_context_add_main_entries (context, common_entries, NULL);
  if (entries != NULL)
    g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, argc, argv, &error))
    {
      g_printerr ("%s\n", error->message);
      exit (2);
    }

  /* The backend under test is always named; a stray override in the
   * environment must not swap it. */
  g_unsetenv ("TERRET_EXECUTOR");
  setvbuf (stdout, NULL, _IOLBF, 0);
}

const char *
bench_json_path (const char *program)
{
  static char *path = NULL;
  const char *dir;

  if (opt_json != NULL)
    return opt_json;
  if (path != NULL)
    return path;

  dir = g_getenv ("TERRET_BENCH_JSON_DIR");
  if (dir == NULL || *dir == '\0')
    return NULL;

  g_mkdir_with_parents (dir, 0755);
  path = g_strdup_printf ("%s/%s.json", dir, program);
  return path;
}

/* Seconds on the monotonic clock, at nanosecond resolution (GLib's
 * monotonic time stops at microseconds, too coarse for a median). */
double
bench_now (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  double x = *(const double *)a, y = *(const double *)b;

  return x < y ? -1 : x > y ? 1 : 0;
}

static double
percentile (const double *sorted,
            guint         n,
            double        p)
{
  double rank = p * (n - 1);
  guint lo = (guint)floor (rank);
  guint hi = MIN (lo + 1, n - 1);

  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}

void
bench_stats (GArray     *samples,
             BenchStats *stats)
{
  g_autofree double *sorted = NULL;
  double sum = 0;
  guint n = samples->len;

  memset (stats, 0, sizeof *stats);
  if (n == 0)
    return;

  sorted = g_memdup2 (samples->data, n * sizeof (double));
  qsort (sorted, n, sizeof (double), compare_doubles);
  for (guint i = 0; i < n; i++)
    sum += sorted[i];

  stats->n = n;
  stats->median = percentile (sorted, n, 0.5);
  stats->p99 = percentile (sorted, n, 0.99);
  stats->mean = sum / n;
  stats->min = sorted[0];
  stats->max = sorted[n - 1];
}

void
bench_raise_fd_limit (void)
{
  struct rlimit limit;

  if (getrlimit (RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max)
    {
      limit.rlim_cur = limit.rlim_max;
      setrlimit (RLIMIT_NOFILE, &limit);
    }
}

static guint64
status_field (const char *path,
              const char *field)
{
  g_autofree char *contents = NULL;
  const char *line;
  gsize field_len = strlen (field);

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return 0;

  for (line = contents; line != NULL && *line != '\0'; )
    {
      const char *next = strchr (line, '\n');

      if (strncmp (line, field, field_len) == 0 && line[field_len] == ':')
        return g_ascii_strtoull (line + field_len + 1, NULL, 10);
      line = next != NULL ? next + 1 : NULL;
    }

  return 0;
}

/* A "Field:   N kB" line of a /proc file: /proc/self/status,
 * /proc/meminfo, /proc/self/smaps_rollup. 0 when absent. */
guint64
bench_proc_kib (const char *path,
                const char *field)
{
  return status_field (path, field);
}

guint64
bench_rss_kib (void)
{
  return status_field ("/proc/self/status", "VmRSS");
}

guint64
bench_hwm_kib (void)
{
  return status_field ("/proc/self/status", "VmHWM");
}

/* Linux resets the peak-RSS mark on "5" (since 4.0). */
gboolean
bench_reset_hwm (void)
{
  int fd = open ("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  gboolean ok;

  if (fd < 0)
    return FALSE;
  ok = write (fd, "5", 1) == 1;
  close (fd);
  return ok;
}

/* Context switches of every thread of the process, GLib's worker
 * included: each is a wakeup. */
guint64
bench_ctxt_switches (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/task", 0, NULL);
  const char *name;
  guint64 total = 0;

  if (dir == NULL)
    return 0;

  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_strdup_printf ("/proc/self/task/%s/status", name);

      total += status_field (path, "voluntary_ctxt_switches");
      total += status_field (path, "nonvoluntary_ctxt_switches");
    }

  return total;
}

void
bench_cpu_seconds (double *user,
                   double *system)
{
  struct rusage usage;

  getrusage (RUSAGE_SELF, &usage);
  *user = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6;
  *system = usage.ru_stime.tv_sec + usage.ru_stime.tv_usec * 1e-6;
}

char *
bench_find_bash (void)
{
  char *bash = g_find_program_in_path ("bash");

  if (bash == NULL)
    {
      g_printerr ("bash is not in PATH\n");
      exit (77);
    }
  return bash;
}

/* The physical baseline of a one-shot run: posix_spawn of @argv (argv[0]
 * a path) and waitpid, nothing captured. TRUE when it exited 0. */
gboolean
bench_posix_spawn_wait (const char * const *argv)
{
  int status = 0;
  pid_t pid;

  return posix_spawn (&pid, argv[0], NULL, NULL, (char * const *)argv, environ) == 0 &&
         waitpid (pid, &status, 0) == pid && WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

/* --- The library ----------------------------------------------------- */

TerretExecutor *
bench_executor_new (const char *name)
{
  g_autoptr(GError) error = NULL;
  TerretExecutor *executor = terret_executor_new (name, &error);

  if (executor == NULL)
    {
      g_printerr ("Could not create the %s executor: %s\n", name, error->message);
      exit (77);
    }
  return executor;
}

typedef struct
{
  TerretResult *result;
  GError *error;
  gboolean done;
} LoopRun;

static void
loop_run_done (GObject      *object,
               GAsyncResult *result,
               gpointer      user_data)
{
  LoopRun *run = user_data;

  run->result = terret_executor_run_finish (TERRET_EXECUTOR (object), result, &run->error);
  run->done = TRUE;
}

/* The way a host with a main loop runs a command: run_async on the
 * thread-default context, then iterate until the callback. */
TerretResult *
bench_run_on_loop (TerretExecutor  *executor,
                   TerretRequest   *request,
                   GCancellable    *cancellable,
                   GError         **error)
{
  LoopRun run = { NULL, NULL, FALSE };

  terret_executor_run_async (executor, request, cancellable, loop_run_done, &run);
  while (!run.done)
    g_main_context_iteration (NULL, TRUE);

  if (run.error != NULL)
    g_propagate_error (error, run.error);
  return run.result;
}

/* --- Raw baselines ----------------------------------------------------- */

/* The same terminal modes the pty backend sets: no echo, no output
 * processing, non-canonical input, no flow control, signals kept. */
static void
raw_set_modes (int fd)
{
  struct termios modes;

  if (tcgetattr (fd, &modes) < 0)
    return;
  modes.c_lflag &= ~(ECHO | ECHOE | ECHOK | ECHONL | ICANON | IEXTEN);
  modes.c_lflag |= ISIG;
  modes.c_oflag &= ~OPOST;
  modes.c_iflag &= ~(IXON | IXOFF | IXANY);
  modes.c_cc[VMIN] = 1;
  modes.c_cc[VTIME] = 0;
  tcsetattr (fd, TCSANOW, &modes);
}

gboolean
bench_raw_pty_spawn (const char * const *argv,
                     pid_t              *pid,
                     int                *master_out)
{
  struct winsize size = { 24, 80, 0, 0 };
  char name[128];
  int master, slave;
  pid_t child;

  master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0 || grantpt (master) < 0 || unlockpt (master) < 0 ||
      ptsname_r (master, name, sizeof name) != 0)
    return FALSE;
  slave = open (name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0)
    return FALSE;
  ioctl (master, TIOCSWINSZ, &size);
  raw_set_modes (master);

  child = fork ();
  if (child < 0)
    return FALSE;
  if (child == 0)
    {
      setsid ();
      ioctl (slave, TIOCSCTTY, 0);
      dup2 (slave, 0);
      dup2 (slave, 1);
      dup2 (slave, 2);
      execvp (argv[0], (char * const *)argv);
      _exit (127);
    }

  close (slave);
  *pid = child;
  *master_out = master;
  return TRUE;
}

static gboolean
raw_write_all (int         fd,
               const char *data,
               gsize       len)
{
  while (len > 0)
    {
      gssize n = write (fd, data, len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      data += n;
      len -= n;
    }
  return TRUE;
}

/* Writes one request line (the command in `$'...'` with every byte that
 * is not plain printable ASCII as \xHH, then the marker printf) and reads
 * until the marker's end, as the backend does. */
gboolean
bench_raw_shell_run (BenchRawShell *shell,
                     const char    *command,
                     guint64       *bytes)
{
  static const char hex[] = "0123456789abcdef";
  g_autoptr(GString) request = g_string_new ("\\builtin eval $'");
  char sentinel[33];
  guint8 chunk[64 * 1024];
  guint64 total = 0;

  g_snprintf (sentinel, sizeof sentinel, "%016" G_GINT64_MODIFIER "x%016" G_GINT64_MODIFIER "x",
              (guint64)g_random_int () << 32 | g_random_int (), ++shell->counter);

  for (const guint8 *p = (const guint8 *)command; *p != '\0'; p++)
    {
      if (*p >= 0x20 && *p < 0x7f && *p != '\\' && *p != '\'' && *p != '!')
        g_string_append_c (request, *p);
      else
        g_string_append_printf (request, "\\x%c%c", hex[*p >> 4], hex[*p & 0xf]);
    }
  g_string_append_printf (request,
                          "'; \\builtin printf '%%s%%s%%d;%%s\\0\\n' %.16s %s \"$?\" \"$PWD\"\n",
                          sentinel, sentinel + 16);

  if (!raw_write_all (shell->master, request->str, request->len))
    return FALSE;

  g_byte_array_set_size (shell->buffer, 0);
  for (;;)
    {
      gssize n = read (shell->master, chunk, sizeof chunk);
      const guint8 *found;

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return FALSE;
      total += n;

      /* Keep only a tail that may hold a marker in the making. */
      g_byte_array_append (shell->buffer, chunk, n);
      found = memmem (shell->buffer->data, shell->buffer->len, sentinel, 32);
      if (found != NULL)
        {
          const guint8 *end = memmem (found, shell->buffer->len - (found - shell->buffer->data),
                                      "\0\n", 2);
          if (end != NULL)
            break;
          continue;
        }
      if (shell->buffer->len > 64)
        g_byte_array_remove_range (shell->buffer, 0, shell->buffer->len - 64);
    }

  if (bytes != NULL)
    *bytes = total;
  return TRUE;
}

gboolean
bench_raw_shell_start (BenchRawShell *shell,
                       const char    *bash)
{
  const char *argv[] = { bash, "--norc", "--noprofile", "--noediting", "-s", NULL };

  memset (shell, 0, sizeof *shell);
  shell->buffer = g_byte_array_new ();
  if (!bench_raw_pty_spawn (argv, &shell->pid, &shell->master))
    return FALSE;

  return bench_raw_shell_run (shell,
                              "set +m +H +o history; history -c; unset HISTFILE PROMPT_COMMAND; "
                              "PS0=''; PS1=''; PS2=''",
                              NULL);
}

void
bench_raw_shell_stop (BenchRawShell *shell)
{
  if (shell->pid > 0)
    {
      kill (-shell->pid, SIGKILL);
      close (shell->master);
      waitpid (shell->pid, NULL, 0);
      shell->pid = 0;
    }
  g_clear_pointer (&shell->buffer, g_byte_array_unref);
}

/* --- Reports ------------------------------------------------------------ */

struct _BenchReport
{
  char *program;
  GPtrArray *rows;
  GPtrArray *param_keys;
  GArray *param_values;
};

static void
bench_row_free (BenchRow *row)
{
  g_free (row->figure);
  g_free (row->subject);
  g_free (row->unit);
  g_free (row->baseline);
  g_free (row->target);
  g_free (row);
}

BenchReport *
bench_report_new (const char *program)
{
  BenchReport *report = g_new0 (BenchReport, 1);

  report->program = g_strdup (program);
  report->rows = g_ptr_array_new_with_free_func ((GDestroyNotify)bench_row_free);
  report->param_keys = g_ptr_array_new_with_free_func (g_free);
  report->param_values = g_array_new (FALSE, FALSE, sizeof (double));
  return report;
}

void
bench_report_set_param (BenchReport *report,
                        const char  *key,
                        double       value)
{
  g_ptr_array_add (report->param_keys, g_strdup (key));
  g_array_append_val (report->param_values, value);
}

BenchRow *
bench_report_add (BenchReport *report,
                  const char  *figure,
                  const char  *subject,
                  double       value,
                  const char  *unit)
{
  BenchRow *row = g_new0 (BenchRow, 1);

  row->figure = g_strdup (figure);
  row->subject = g_strdup (subject);
  row->value = value;
  row->unit = g_strdup (unit);
  row->ratio = NAN;
  row->baseline_value = NAN;
  row->pass = -1;
  g_ptr_array_add (report->rows, row);
  return row;
}

void
bench_row_set_baseline (BenchRow   *row,
                        const char *baseline,
                        double      baseline_value)
{
  g_free (row->baseline);
  row->baseline = g_strdup (baseline);
  row->baseline_value = baseline_value;
  row->ratio = baseline_value > 0 ? row->value / baseline_value : NAN;
}

void
bench_row_set_target_ratio (BenchRow *row,
                            double    max_ratio)
{
  g_free (row->target);
  row->target = g_strdup_printf ("<= %.2fx", max_ratio);
  row->pass = !isnan (row->ratio) && row->ratio <= max_ratio;
}

void
bench_row_set_target_min_ratio (BenchRow *row,
                                double    min_ratio)
{
  g_free (row->target);
  row->target = g_strdup_printf (">= %.2fx", min_ratio);
  row->pass = !isnan (row->ratio) && row->ratio >= min_ratio;
}

void
bench_row_set_target_max (BenchRow *row,
                          double    max_value)
{
  g_free (row->target);
  row->target = g_strdup_printf ("< %g %s", max_value, row->unit);
  row->pass = row->value < max_value;
}

static char *
machine_cpu (void)
{
  g_autofree char *cpuinfo = NULL;
  const char *line;

  if (g_file_get_contents ("/proc/cpuinfo", &cpuinfo, NULL, NULL) &&
      (line = strstr (cpuinfo, "model name")) != NULL &&
      (line = strchr (line, ':')) != NULL)
    return g_strstrip (g_strndup (line + 1, strcspn (line + 1, "\n")));
  return g_strdup ("unknown");
}

static char *
machine_bash (void)
{
  g_autofree char *out = NULL;

  if (g_spawn_command_line_sync ("bash -c 'printf %s \"$BASH_VERSION\"'", &out, NULL, NULL, NULL))
    return g_steal_pointer (&out);
  return g_strdup ("unknown");
}

static void
add_double (JsonBuilder *builder,
            const char  *name,
            double       value)
{
  json_builder_set_member_name (builder, name);
  if (isnan (value) || isinf (value))
    json_builder_add_null_value (builder);
  else
    json_builder_add_double_value (builder, value);
}

static void
add_string (JsonBuilder *builder,
            const char  *name,
            const char  *value)
{
  json_builder_set_member_name (builder, name);
  if (value == NULL)
    json_builder_add_null_value (builder);
  else
    json_builder_add_string_value (builder, value);
}

/* Prints the table, writes the JSON, frees the report. Returns the exit
 * status: 1 only with --strict and a missed target. */
int
bench_report_finish (BenchReport *report)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = NULL;
  g_autoptr(JsonNode) root = NULL;
  g_autofree char *cpu = machine_cpu ();
  g_autofree char *bash = machine_bash ();
  g_autofree char *glib = g_strdup_printf ("%u.%u.%u", glib_major_version,
                                           glib_minor_version, glib_micro_version);
  const char *path = bench_json_path (report->program);
  struct utsname uts;
  gboolean missed = FALSE;

  uname (&uts);

  g_print ("\n%s  (%s, %u cores, Linux %s, GLib %s, bash %s)\n",
           report->program, cpu, g_get_num_processors (), uts.release, glib, bash);
  g_print ("%-34s %-26s %12s %-6s %-26s %12s %8s %-12s %s\n",
           "figure", "subject", "value", "unit", "baseline", "base value", "ratio", "target", "");
  for (guint i = 0; i < report->rows->len; i++)
    {
      BenchRow *row = g_ptr_array_index (report->rows, i);
      g_autofree char *base_value = isnan (row->baseline_value)
        ? g_strdup ("") : g_strdup_printf ("%12.3f", row->baseline_value);
      g_autofree char *ratio = isnan (row->ratio)
        ? g_strdup ("") : g_strdup_printf ("%7.2fx", row->ratio);

      g_print ("%-34s %-26s %12.3f %-6s %-26s %12s %8s %-12s %s\n",
               row->figure, row->subject, row->value, row->unit,
               row->baseline != NULL ? row->baseline : "", base_value, ratio,
               row->target != NULL ? row->target : "",
               row->pass == 1 ? "ok" : row->pass == 0 ? "MISSED" : "");
      if (row->pass == 0)
        missed = TRUE;
    }

  json_builder_begin_object (builder);
  add_string (builder, "program", report->program);
  json_builder_set_member_name (builder, "machine");
  json_builder_begin_object (builder);
  add_string (builder, "cpu", cpu);
  json_builder_set_member_name (builder, "cores");
  json_builder_add_int_value (builder, g_get_num_processors ());
  add_string (builder, "kernel", uts.release);
  add_string (builder, "glib", glib);
  add_string (builder, "bash", bash);
  json_builder_end_object (builder);

  json_builder_set_member_name (builder, "params");
  json_builder_begin_object (builder);
  for (guint i = 0; i < report->param_keys->len; i++)
    add_double (builder, g_ptr_array_index (report->param_keys, i),
                g_array_index (report->param_values, double, i));
  json_builder_end_object (builder);

  json_builder_set_member_name (builder, "rows");
  json_builder_begin_array (builder);
  for (guint i = 0; i < report->rows->len; i++)
    {
      BenchRow *row = g_ptr_array_index (report->rows, i);

      json_builder_begin_object (builder);
      add_string (builder, "figure", row->figure);
      add_string (builder, "subject", row->subject);
      add_double (builder, "value", row->value);
      add_string (builder, "unit", row->unit);
      add_string (builder, "baseline", row->baseline);
      add_double (builder, "baseline_value", row->baseline_value);
      add_double (builder, "ratio", row->ratio);
      add_string (builder, "target", row->target);
      json_builder_set_member_name (builder, "met");
      if (row->pass < 0)
        json_builder_add_null_value (builder);
      else
        json_builder_add_boolean_value (builder, row->pass);
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  json_builder_end_object (builder);

  if (path != NULL)
    {
      g_autoptr(GError) error = NULL;

      root = json_builder_get_root (builder);
      generator = json_generator_new ();
      json_generator_set_pretty (generator, TRUE);
      json_generator_set_root (generator, root);
      if (!json_generator_to_file (generator, path, &error))
        g_printerr ("Could not write %s: %s\n", path, error->message);
      else
        g_print ("JSON: %s\n", path);
    }

  g_free (report->program);
  g_ptr_array_unref (report->rows);
  g_ptr_array_unref (report->param_keys);
  g_array_unref (report->param_values);
  g_free (report);

  return (opt_strict && missed) ? 1 : 0;
}
