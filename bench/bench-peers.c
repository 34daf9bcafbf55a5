/* bench-peers.c: `terret-exec serve` next to the seeds it replaces, all
 * driven by the peers' own bench.py in one run
 *
 * Each of bench.py's phases runs once per round for every server, the
 * servers taking turns (and the first in each round rotating) so that a
 * noisy neighbour or a frequency change lands on all of them alike. Our
 * figures are then set beside the peer of the same kind: pty against the
 * Ruby seed (and pexpect), oneshot against the Rust seed.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>

#include "bench-common.h"

static char *opt_peers_dir = NULL;
static char *opt_cli = NULL;
static char *opt_only = NULL;
static char *opt_raw = NULL;
static char *opt_baseline = NULL;
static int opt_rounds = 3;
static int opt_other_rounds = 1;
static double opt_big_timeout = 20;

static GOptionEntry entries[] = {
  { "peers-dir", 0, 0, G_OPTION_ARG_FILENAME, &opt_peers_dir,
    "The peers (default: $TERRET_PEERS_DIR, else shared/peers beside the checkout)", "DIR" },
  { "terret-exec", 0, 0, G_OPTION_ARG_FILENAME, &opt_cli,
    "The terret-exec CLI to serve with (default: this build's)", "PATH" },
  { "rounds", 'n', 0, G_OPTION_ARG_INT, &opt_rounds,
    "Times phase a runs for each server, in turns (default 3)", "N" },
  { "other-rounds", 0, 0, G_OPTION_ARG_INT, &opt_other_rounds,
    "Times each of phases b-e runs for each server, in turns (default 1)", "N" },
  { "only", 0, 0, G_OPTION_ARG_STRING, &opt_only,
    "The bench.py phases to run (default a,b,c,d,e)", "LIST" },
  { "big-timeout", 0, 0, G_OPTION_ARG_DOUBLE, &opt_big_timeout,
    "Timeout of phase b's large runs, passed to bench.py (default 20; bench.py's own is 120)", "S" },
  { "baseline", 0, 0, G_OPTION_ARG_FILENAME, &opt_baseline,
    "Also serve pty and oneshot from the build in DIR, in turns with this one's", "DIR" },
  { "raw", 0, 0, G_OPTION_ARG_FILENAME, &opt_raw,
    "Also write every report bench.py printed, as a JSON array, to PATH", "PATH" },
  { NULL }
};

typedef enum {
  SERVER_RUBY_SEED,
  SERVER_PTY,
  SERVER_PEXPECT,
  SERVER_RUST_SEED,
  SERVER_ONESHOT,
  SERVER_PTY_FLOOR,
  SERVER_ONESHOT_FLOOR,
  SERVER_PTY_BASELINE,
  SERVER_ONESHOT_BASELINE,
  N_SERVERS
} ServerId;

#define N_PHASES 5

static const char phase_keys[N_PHASES] = { 'a', 'b', 'c', 'd', 'e' };

/* The members bench.py reports each phase under. */
static const char *phase_members[N_PHASES] = {
  "a_sequential_true",
  "b_throughput",
  "c_cancel",
  "d_32_sessions_sleep_0_5",
  "e_rss_during_yes",
};

typedef struct
{
  const char *name;     /* ours, or the peer's folder */
  const char *backend;  /* (nullable) ours: the backend we serve with */
  const char *floor;    /* (nullable) a floor server of this build's: runs phase a only */
  gboolean baseline;    /* ours, served from the --baseline build */
  GStrv argv;           /* (owned) the serve command */
  char *unrunnable;     /* (owned) (nullable) why it is skipped */
  GPtrArray *reports[N_PHASES];   /* (owned) JsonNode, one a round */
} Server;

/* One figure of a bench.py report: @path is the member under the phase's
 * object, through any objects on the way ("zeros_50MB/mb_per_s"). A rate
 * is better higher: its ratio is the slowdown (the peer's over ours), so
 * that in every row a ratio below 1 means better than the peer. */
typedef struct
{
  int phase;
  const char *figure;
  const char *path;
  const char *unit;
  double scale;
  gboolean rate;
  gboolean targeted;    /* the pairs' targets are on this one */
} Figure;

static const Figure figures[] = {
  { 0, "true round trip median", "median_ms", "ms", 1, FALSE, TRUE },
  { 0, "true round trip p99", "p99_ms", "ms", 1, FALSE, FALSE },
  { 0, "first run, fresh server", "first_run_ms", "ms", 1, FALSE, FALSE },
  { 1, "MB/s 50 MB line (ratio=slowdown)", "zeros_50MB/mb_per_s", "MB/s", 1, TRUE, FALSE },
  { 1, "MB/s 1 MB line (ratio=slowdown)", "zeros_1MB_x5/mb_per_s", "MB/s", 1, TRUE, FALSE },
  { 1, "MB/s seq 2M (ratio=slowdown)", "seq_2M/mb_per_s", "MB/s", 1, TRUE, FALSE },
  { 2, "cancel to response, sleep 10", "latency_ms", "ms", 1, FALSE, FALSE },
  { 3, "32 sessions sleep 0.5, wall", "wall_s", "ms", 1000, FALSE, FALSE },
  { 4, "server RSS before yes", "baseline_rss_mb", "MB", 1, FALSE, FALSE },
  { 4, "server peak RSS (VmHWM), yes 5 s", "vm_hwm_mb", "MB", 1, FALSE, FALSE },
  { 4, "tree peak RSS, yes 5 s", "peak_tree_rss_mb", "MB", 1, FALSE, FALSE },
};

/* Ours beside a peer of the same kind, with the targets the project set
 * on the round-trip median (each a row; 0 for none). */
typedef struct
{
  ServerId ours;
  ServerId peer;
  double median_targets[2];
} Pair;

static const Pair pairs[] = {
  { SERVER_PTY, SERVER_RUBY_SEED, { 0.6, 1.0 } },
  { SERVER_PTY, SERVER_PEXPECT, { 0, 0 } },
  { SERVER_ONESHOT, SERVER_RUST_SEED, { 0.8, 1.0 } },
  /* The floors (bench-floor-pty.c, bench-floor-oneshot.c): what no server
   * of the kind can beat, beside the seeds, and ours over them. */
  { SERVER_PTY_FLOOR, SERVER_RUBY_SEED, { 0, 0 } },
  { SERVER_ONESHOT_FLOOR, SERVER_RUST_SEED, { 0, 0 } },
  { SERVER_PTY, SERVER_PTY_FLOOR, { 0, 0 } },
  { SERVER_ONESHOT, SERVER_ONESHOT_FLOOR, { 0, 0 } },
  /* With --baseline: ours over another build's, same run. */
  { SERVER_PTY, SERVER_PTY_BASELINE, { 0, 0 } },
  { SERVER_ONESHOT, SERVER_ONESHOT_BASELINE, { 0, 0 } },
};

/* --- Running a program with a deadline --------------------------------- */

typedef struct
{
  gboolean done;
  gboolean expired;
  GBytes *out;
  GBytes *err;
  GError *error;
} Communicate;

static void
communicate_done (GObject      *object,
                  GAsyncResult *result,
                  gpointer      user_data)
{
  Communicate *c = user_data;

  g_subprocess_communicate_finish (G_SUBPROCESS (object), result, &c->out, &c->err, &c->error);
  c->done = TRUE;
}

static gboolean
communicate_expired (gpointer user_data)
{
  Communicate *c = user_data;

  c->expired = TRUE;
  return G_SOURCE_REMOVE;
}

static char *
bytes_to_string (GBytes *bytes)
{
  gsize size = 0;
  const char *data = bytes != NULL ? g_bytes_get_data (bytes, &size) : NULL;

  return g_strndup (data != NULL ? data : "", size);
}

static char *
last_line (const char *text)
{
  g_autofree char *copy = g_strstrip (g_strdup (text));
  const char *line = strrchr (copy, '\n');

  return g_strdup (line != NULL ? line + 1 : copy);
}

static void
new_process_group (gpointer user_data)
{
  setpgid (0, 0);
}

/* Runs @argv with @stdin_path on its stdin and its stdout and stderr
 * captured, killing it after @seconds. Returns its stdout, or NULL with
 * @why set when it could not start, was killed or did not exit 0. (A
 * file rather than a pipe on stdin: a program that dies at once cannot
 * break it, and what it said on stderr is kept.) */
static char *
run_with_deadline (const char * const *argv,
                   const char         *stdin_path,
                   guint               seconds,
                   char              **why)
{
  g_autoptr(GSubprocessLauncher) launcher = NULL;
  g_autoptr(GSubprocess) process = NULL;
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  Communicate c = { 0 };
  guint deadline;

  launcher = g_subprocess_launcher_new (G_SUBPROCESS_FLAGS_STDOUT_PIPE |
                                        G_SUBPROCESS_FLAGS_STDERR_PIPE);
  g_subprocess_launcher_set_stdin_file_path (launcher, stdin_path);
  g_subprocess_launcher_set_child_setup (launcher, new_process_group, NULL, NULL);
  process = g_subprocess_launcher_spawnv (launcher, argv, &error);
  if (process == NULL)
    {
      *why = g_strdup (error->message);
      return NULL;
    }

  deadline = g_timeout_add_seconds (seconds, communicate_expired, &c);
  g_subprocess_communicate_async (process, NULL, cancellable, communicate_done, &c);
  while (!c.done && !c.expired)
    g_main_context_iteration (NULL, TRUE);
  if (c.expired)
    {
      /* Its whole group, and the reads cancelled: a child it left
       * behind may hold its pipes. */
      kill (-(pid_t)g_ascii_strtoll (g_subprocess_get_identifier (process), NULL, 10), SIGKILL);
      g_cancellable_cancel (cancellable);
      while (!c.done)
        g_main_context_iteration (NULL, TRUE);
      *why = g_strdup_printf ("killed after %u s", seconds);
    }
  else
    g_source_remove (deadline);

  g_subprocess_wait (process, NULL, NULL);
  out = bytes_to_string (c.out);
  err = bytes_to_string (c.err);
  g_clear_pointer (&c.out, g_bytes_unref);
  g_clear_pointer (&c.err, g_bytes_unref);

  if (*why == NULL && c.error != NULL)
    *why = g_strdup (c.error->message);
  g_clear_error (&c.error);
  if (*why == NULL && !g_subprocess_get_successful (process))
    {
      g_autofree char *line = last_line (err);
      g_autofree char *how = g_subprocess_get_if_signaled (process)
        ? g_strdup_printf ("killed by signal %d", g_subprocess_get_term_sig (process))
        : g_strdup_printf ("exited with status %d", g_subprocess_get_exit_status (process));

      *why = g_strdup_printf ("%s%s%s", how, *line != '\0' ? ": " : "", line);
    }
  if (*why != NULL)
    return NULL;
  return g_steal_pointer (&out);
}

/* --- The servers ------------------------------------------------------- */

/* A server is runnable when it answers one `true` with status 0; else
 * the reason. @request_path holds that request. */
static char *
probe (Server     *server,
       const char *request_path)
{
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *out = NULL;
  g_autofree char *line = NULL;
  char *why = NULL;
  JsonObject *response;

  out = run_with_deadline ((const char * const *)server->argv, request_path, 60, &why);
  if (out == NULL)
    return why;

  line = g_strndup (out, strcspn (out, "\n"));
  node = json_from_string (line, NULL);
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return g_strdup_printf ("answered `true` with no JSON object: %.80s", line);
  response = json_node_get_object (node);
  if (!json_object_get_boolean_member_with_default (response, "ok", FALSE) ||
      json_object_get_int_member_with_default (response, "status", -1) != 0)
    return g_strdup_printf ("answered `true` with %.80s", line);
  return NULL;
}

/* A file holding the probe's request, for the servers' stdin. */
static char *
probe_request (void)
{
  g_autoptr(GError) error = NULL;
  char *path = NULL;
  int fd = g_file_open_tmp ("bench-peers-XXXXXX.jsonl", &path, &error);

  if (fd < 0 || !g_close (fd, &error) ||
      !g_file_set_contents (path, "{\"id\":\"probe\",\"command\":\"true\"}\n", -1, &error))
    {
      g_printerr ("peers: could not write the probe's request: %s\n", error->message);
      exit (1);
    }
  return path;
}

static JsonNode *
error_report (const char *why)
{
  g_autoptr(JsonObject) object = json_object_new ();
  JsonNode *node = json_node_new (JSON_NODE_OBJECT);

  json_object_set_string_member (object, "error", why);
  json_node_set_object (node, object);
  return node;
}

/* One bench.py phase against @server: its report, or a report holding
 * only "error". */
static JsonNode *
run_phase (const char *bench_py,
           Server     *server,
           int         phase)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(JsonNode) node = NULL;
  g_autofree char *out = NULL;
  char *why = NULL;
  char only[2] = { phase_keys[phase], '\0' };

  g_ptr_array_add (argv, g_strdup (bench_py));
  for (guint i = 0; server->argv[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup (server->argv[i]));
  g_ptr_array_add (argv, g_strdup ("--only"));
  g_ptr_array_add (argv, g_strdup (only));
  g_ptr_array_add (argv, g_strdup ("--big-timeout"));
  g_ptr_array_add (argv, g_strdup_printf ("%g", opt_big_timeout));
  g_ptr_array_add (argv, NULL);

  /* bench.py keeps its own deadlines; this one is for bench.py itself. */
  out = run_with_deadline ((const char * const *)argv->pdata, "/dev/null",
                           300 + (guint)(3 * opt_big_timeout), &why);
  if (out == NULL)
    {
      g_autofree char *owned = why;

      return error_report (owned);
    }

  node = json_from_string (out, NULL);
  if (node == NULL || !JSON_NODE_HOLDS_OBJECT (node))
    return error_report ("bench.py printed no JSON object");
  return g_steal_pointer (&node);
}

/* --- Reading the reports ----------------------------------------------- */

/* The object member @name of @object, NULL when absent or not an object
 * (json_object_get_object_member would warn). */
static JsonObject *
object_member (JsonObject *object,
               const char *name)
{
  JsonNode *node = json_object_get_member (object, name);

  return node != NULL && JSON_NODE_HOLDS_OBJECT (node) ? json_node_get_object (node) : NULL;
}

/* @figure in one report: its value (NAN when there is none) and, in
 * @note, what qualifies it or why it is missing. */
static double
figure_value (const Figure *figure,
              JsonNode     *report,
              const char  **note)
{
  g_auto(GStrv) steps = g_strsplit (figure->path, "/", -1);
  JsonObject *object = json_node_get_object (report);
  JsonObject *phase;
  JsonNode *member;
  guint last = g_strv_length (steps) - 1;

  *note = NULL;
  if (json_object_has_member (object, "error") ||
      (phase = object_member (object, phase_members[figure->phase])) == NULL ||
      json_object_has_member (phase, "error"))
    {
      *note = "error";
      return NAN;
    }

  object = phase;
  for (guint i = 0; i < last; i++)
    {
      if ((object = object_member (object, steps[i])) == NULL ||
          json_object_has_member (object, "error"))
        {
          *note = "error";
          return NAN;
        }
    }

  /* What bench.py says about the run the figure comes from. */
  if (json_object_has_member (phase, "supported") &&
      !json_object_get_boolean_member (phase, "supported"))
    *note = "no cancel";
  else if (json_object_get_int_member_with_default (phase, "non_zero_status", 0) > 0)
    *note = "non-zero status";
  else if (json_object_get_int_member_with_default (phase, "status_0", 0) !=
           json_object_get_int_member_with_default (phase, "sessions", 0))
    *note = "not all status 0";
  else if (json_object_get_boolean_member_with_default (object, "timed_out", FALSE) &&
           figure->rate)
    *note = "timed out: a bound";

  member = json_object_get_member (object, steps[last]);
  if (member == NULL || !JSON_NODE_HOLDS_VALUE (member) ||
      (json_node_get_value_type (member) != G_TYPE_DOUBLE &&
       json_node_get_value_type (member) != G_TYPE_INT64))
    {
      *note = *note != NULL ? *note : "not reported";
      return NAN;
    }
  return json_node_get_double (member) * figure->scale;
}

/* The median of @figure over the rounds @server ran, NAN when no round
 * reported it; @note as for figure_value (the last round's that has one). */
static double
figure_median (const Figure *figure,
               Server       *server,
               const char  **note)
{
  GPtrArray *reports = server->reports[figure->phase];
  g_autoptr(GArray) values = g_array_new (FALSE, FALSE, sizeof (double));
  BenchStats stats;

  *note = server->unrunnable != NULL ? "not runnable" : "not run";
  for (guint i = 0; i < reports->len; i++)
    {
      const char *round_note;
      double value = figure_value (figure, g_ptr_array_index (reports, i), &round_note);

      if (i == 0 || round_note != NULL)
        *note = round_note;
      if (!isnan (value))
        g_array_append_val (values, value);
    }
  if (values->len == 0)
    return NAN;
  bench_stats (values, &stats);
  return stats.median;
}

static char *
label (const char *name,
       const char *note)
{
  return note != NULL ? g_strdup_printf ("%s (%s)", name, note) : g_strdup (name);
}

/* The rows of @figure for @pair; FALSE when our server did not report it. */
static gboolean
add_rows (BenchReport  *report,
          const Figure *figure,
          const Pair   *pair,
          Server       *servers)
{
  const char *ours_note, *peer_note;
  double ours = figure_median (figure, &servers[pair->ours], &ours_note);
  double peer = figure_median (figure, &servers[pair->peer], &peer_note);
  g_autofree char *subject = label (servers[pair->ours].name, ours_note);
  g_autofree char *baseline = label (servers[pair->peer].name, peer_note);
  int n_rows = figure->targeted && pair->median_targets[1] > 0 ? 2 : 1;

  for (int t = 0; t < n_rows; t++)
    {
      BenchRow *row = bench_report_add (report, figure->figure, subject, ours, figure->unit);

      bench_row_set_baseline (row, baseline, peer);
      if (figure->rate)
        row->ratio = ours > 0 && peer > 0 ? peer / ours : NAN;
      if (figure->targeted && pair->median_targets[t] > 0 && !isnan (row->ratio))
        bench_row_set_target_ratio (row, pair->median_targets[t]);
    }

  return !isnan (ours);
}

static void
write_raw (const char *path,
           Server     *servers)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();
  g_autoptr(JsonGenerator) generator = json_generator_new ();
  g_autoptr(JsonNode) root = NULL;
  g_autoptr(GError) error = NULL;

  json_builder_begin_array (builder);
  for (int s = 0; s < N_SERVERS; s++)
    for (int p = 0; p < N_PHASES; p++)
      for (guint r = 0; r < servers[s].reports[p]->len; r++)
        {
          json_builder_begin_object (builder);
          json_builder_set_member_name (builder, "server");
          json_builder_add_string_value (builder, servers[s].name);
          json_builder_set_member_name (builder, "phase");
          json_builder_add_string_value (builder, phase_members[p]);
          json_builder_set_member_name (builder, "round");
          json_builder_add_int_value (builder, r + 1);
          json_builder_set_member_name (builder, "report");
          json_builder_add_value (builder, json_node_copy (g_ptr_array_index (servers[s].reports[p], r)));
          json_builder_end_object (builder);
        }
  json_builder_end_array (builder);

  root = json_builder_get_root (builder);
  json_generator_set_pretty (generator, TRUE);
  json_generator_set_root (generator, root);
  if (!json_generator_to_file (generator, path, &error))
    g_printerr ("Could not write %s: %s\n", path, error->message);
}

/* `serve` from the build in @build, with its own modules and launcher
 * (as bench/run sets them). */
static void
baseline_command (GStrvBuilder *command,
                  const char   *build,
                  const char   *backend)
{
  g_autoptr(GString) modules = g_string_new ("TERRET_EXEC_MODULE_PATH=");
  const char *folders[] = { "backends", "plugins" };
  g_autofree char *launcher = NULL;
  g_autofree char *cli = NULL;

  for (guint f = 0; f < G_N_ELEMENTS (folders); f++)
    {
      g_autofree char *parent = g_build_filename (build, folders[f], NULL);
      g_autoptr(GDir) dir = g_dir_open (parent, 0, NULL);
      const char *name;

      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree char *path = g_build_filename (parent, name, NULL);

          if (!g_file_test (path, G_FILE_TEST_IS_DIR))
            continue;
          if (modules->str[modules->len - 1] != '=')
            g_string_append_c (modules, ':');
          g_string_append (modules, path);
        }
    }

  g_strv_builder_add_many (command, "env", modules->str, NULL);
  launcher = g_strdup_printf ("TERRET_LAUNCHER=%s/libexec/spawn/launcher/terret-launcher", build);
  cli = g_build_filename (build, "tools", "terret-exec", NULL);
  g_strv_builder_add_many (command, launcher, cli, NULL);
  g_strv_builder_add_many (command, "serve", "--backend", backend, NULL);
}

static char *
peers_dir (void)
{
  const char *env = g_getenv ("TERRET_PEERS_DIR");

  if (opt_peers_dir != NULL)
    return g_strdup (opt_peers_dir);
  if (env != NULL && *env != '\0')
    return g_strdup (env);
  return g_strdup (TERRET_BENCH_PEERS_DIR);
}

int
main (int    argc,
      char **argv)
{
  g_autofree char *dir = NULL;
  g_autofree char *bench_py = NULL;
  g_autofree char *request_path = NULL;
  Server servers[N_SERVERS] = {
    [SERVER_RUBY_SEED] = { "ruby-seed", NULL },
    [SERVER_PTY] = { "pty via serve", "pty" },
    [SERVER_PEXPECT] = { "pexpect", NULL },
    [SERVER_RUST_SEED] = { "rust-seed", NULL },
    [SERVER_ONESHOT] = { "oneshot via serve", "oneshot" },
    [SERVER_PTY_FLOOR] = { "pty floor", NULL, TERRET_BENCH_FLOOR_PTY },
    [SERVER_ONESHOT_FLOOR] = { "oneshot floor", NULL, TERRET_BENCH_FLOOR_ONESHOT },
    [SERVER_PTY_BASELINE] = { "pty via serve, baseline", "pty", NULL, TRUE },
    [SERVER_ONESHOT_BASELINE] = { "oneshot via serve, baseline", "oneshot", NULL, TRUE },
  };
  const char *cli;
  gboolean phases[N_PHASES] = { FALSE };
  gboolean failed = FALSE;
  BenchReport *report;
  int status;

  bench_init (&argc, &argv,
              "terret-exec serve (pty, oneshot) next to the Ruby seed, pexpect and the Rust seed, "
              "through the peers' bench.py.", entries);
  opt_rounds = MAX (opt_rounds, 1);
  opt_other_rounds = MAX (opt_other_rounds, 1);

  dir = peers_dir ();
  bench_py = g_build_filename (dir, "bench.py", NULL);
  if (!g_file_test (bench_py, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_print ("peers: no runnable %s; skipped (set TERRET_PEERS_DIR or --peers-dir)\n", bench_py);
      return 77;
    }

  for (const char *c = opt_only != NULL ? opt_only : "abcde"; *c != '\0'; c++)
    {
      const char *key = memchr (phase_keys, *c, N_PHASES);

      if (key != NULL)
        phases[key - phase_keys] = TRUE;
      else if (*c != ',')
        {
          g_printerr ("--only: no phase '%c' (a, b, c, d, e)\n", *c);
          return 2;
        }
    }

  request_path = probe_request ();
  cli = opt_cli != NULL ? opt_cli : TERRET_BENCH_CLI;
  for (int s = 0; s < N_SERVERS; s++)
    {
      Server *server = &servers[s];
      g_autoptr(GStrvBuilder) command = g_strv_builder_new ();

      if (server->baseline)
        {
          if (opt_baseline == NULL)
            {
              server->unrunnable = g_strdup ("no --baseline");
              for (int p = 0; p < N_PHASES; p++)
                server->reports[p] = g_ptr_array_new_with_free_func ((GDestroyNotify)json_node_unref);
              continue;
            }
          baseline_command (command, opt_baseline, server->backend);
        }
      else if (server->backend != NULL)
        {
          g_strv_builder_add_many (command, cli, "serve", "--backend", server->backend, NULL);
        }
      else if (server->floor != NULL)
        g_strv_builder_add (command, server->floor);
      else
        {
          g_autofree char *serve = g_build_filename (dir, server->name, "serve", NULL);

          g_strv_builder_add (command, serve);
        }
      server->argv = g_strv_builder_end (command);
      for (int p = 0; p < N_PHASES; p++)
        server->reports[p] = g_ptr_array_new_with_free_func ((GDestroyNotify)json_node_unref);

      server->unrunnable = probe (server, request_path);
      if (server->unrunnable == NULL)
        continue;
      if (server->backend != NULL || server->floor != NULL)
        {
          g_printerr ("peers: %s does not run: %s\n", server->name, server->unrunnable);
          g_unlink (request_path);
          return 1;
        }
      g_print ("peers: %s is not runnable, skipped (run %s/setup.sh as root): %s\n",
               server->name, dir, server->unrunnable);
    }

  g_unlink (request_path);

  for (int p = 0; p < N_PHASES; p++)
    {
      int rounds = p == 0 ? opt_rounds : opt_other_rounds;

      if (!phases[p])
        continue;
      for (int r = 0; r < rounds; r++)
        for (int k = 0; k < N_SERVERS; k++)
          {
            Server *server = &servers[(k + r) % N_SERVERS];
            double start = bench_now ();
            JsonNode *node;

            if (server->unrunnable != NULL || (server->floor != NULL && p != 0))
              continue;
            node = run_phase (bench_py, server, p);
            g_ptr_array_add (server->reports[p], node);
            g_printerr ("peers: %s round %d/%d, %s: %.1f s%s%s\n", phase_members[p], r + 1, rounds,
                        server->name, bench_now () - start,
                        json_object_has_member (json_node_get_object (node), "error") ? ", error: " : "",
                        json_object_get_string_member_with_default (json_node_get_object (node),
                                                                    "error", ""));
          }
    }

  report = bench_report_new ("peers");
  bench_report_set_param (report, "rounds", opt_rounds);
  bench_report_set_param (report, "other_rounds", opt_other_rounds);
  bench_report_set_param (report, "big_timeout", opt_big_timeout);
  for (guint f = 0; f < G_N_ELEMENTS (figures); f++)
    {
      if (!phases[figures[f].phase])
        continue;
      for (guint i = 0; i < G_N_ELEMENTS (pairs); i++)
        if ((!servers[pairs[i].peer].baseline || opt_baseline != NULL) &&
            (figures[f].phase == 0 ||
             (servers[pairs[i].ours].floor == NULL && servers[pairs[i].peer].floor == NULL)) &&
            !add_rows (report, &figures[f], &pairs[i], servers))
          failed = TRUE;
    }

  if (opt_raw != NULL)
    write_raw (opt_raw, servers);
  for (int s = 0; s < N_SERVERS; s++)
    {
      g_strfreev (servers[s].argv);
      g_free (servers[s].unrunnable);
      for (int p = 0; p < N_PHASES; p++)
        g_ptr_array_unref (servers[s].reports[p]);
    }

  status = bench_report_finish (report);
  if (failed)
    g_printerr ("peers: terret-exec serve did not report every figure (see the rows in parentheses)\n");
  return failed ? 1 : status;
}
