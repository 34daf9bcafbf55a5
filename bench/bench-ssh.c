/* bench-ssh.c: the time to open an ssh session on a live master
 * connection, next to a first connection and to OpenSSH alone, measured
 * in the same run against an sshd of the program's own
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "bench-common.h"

#define SSHD_PATH "/usr/sbin/sshd"

static int opt_runs = 20;

static GOptionEntry entries[] = {
  { "runs", 'n', 0, G_OPTION_ARG_INT, &opt_runs, "Sessions opened per subject (default 20)", "N" },
  { NULL }
};

typedef struct
{
  char *dir;
  char *client_key;
  char *known_hosts;
  char *config;
  guint16 port;
  GPid sshd;
} Server;

static void
die (const char *format,
     ...) G_GNUC_PRINTF (1, 2);

static void
die (const char *format,
     ...)
{
  va_list args;

  va_start (args, format);
  g_vfprintf (stderr, format, args);
  va_end (args);
  g_printerr ("\n");
  exit (1);
}

static void
run_or_die (const char * const *argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  int wait_status = 0;

  if (!g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                     NULL, NULL, NULL, &err, &wait_status, &error) ||
      !g_spawn_check_wait_status (wait_status, NULL))
    die ("%s failed: %s", argv[0], error != NULL ? error->message : err);
}

static char *
make_key (const char *dir,
          const char *name)
{
  char *path = g_build_filename (dir, name, NULL);
  const char *argv[] = { "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path, NULL };

  run_or_die (argv);
  return path;
}

static char *
public_key (const char *key)
{
  g_autofree char *pub_path = g_strconcat (key, ".pub", NULL);
  g_autofree char *contents = NULL;
  g_auto(GStrv) fields = NULL;

  if (!g_file_get_contents (pub_path, &contents, NULL, NULL))
    die ("cannot read %s", pub_path);
  fields = g_strsplit (contents, " ", 3);
  return g_strdup_printf ("%s %s", fields[0], fields[1]);
}

static void
write_or_die (const char *path,
              const char *contents)
{
  if (!g_file_set_contents (path, contents, -1, NULL))
    die ("cannot write %s", path);
}

static guint16
free_port (void)
{
  struct sockaddr_in addr = { 0 };
  socklen_t len = sizeof addr;
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  if (fd < 0 || bind (fd, (struct sockaddr *)&addr, sizeof addr) < 0 ||
      getsockname (fd, (struct sockaddr *)&addr, &len) < 0)
    die ("no free port");
  close (fd);
  return ntohs (addr.sin_port);
}

static gboolean
port_accepts (guint16 port)
{
  struct sockaddr_in addr = { 0 };
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  gboolean ok;

  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  addr.sin_port = htons (port);
  ok = connect (fd, (struct sockaddr *)&addr, sizeof addr) == 0;
  close (fd);
  return ok;
}

static void
sshd_child_setup (gpointer user_data)
{
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

/* An sshd on 127.0.0.1 as the tests start theirs, with one difference:
 * it sets SHLVL, so that the remote bash does not read the account's
 * ~/.bashrc (Debian's bash reads it for every command sshd runs). What
 * that file costs is the remote account's, the same for every way of
 * connecting, and on a developer's machine it can dwarf the rest. */
static void
server_start (Server *server)
{
  g_autofree char *host_key = NULL;
  g_autofree char *authorized = NULL;
  g_autofree char *host_pub = NULL;
  g_autofree char *client_pub = NULL;
  g_autofree char *contents = NULL;
  g_autofree char *log = NULL;
  g_autoptr(GError) error = NULL;
  int log_fd;

  if (getuid () == 0)
    g_mkdir_with_parents ("/run/sshd", 0755);

  server->dir = g_dir_make_tmp ("terret-bench-ssh-XXXXXX", NULL);
  if (server->dir == NULL)
    die ("cannot make a temporary directory");
  host_key = make_key (server->dir, "host_key");
  server->client_key = make_key (server->dir, "client_key");
  server->port = free_port ();

  client_pub = public_key (server->client_key);
  authorized = g_build_filename (server->dir, "authorized_keys", NULL);
  contents = g_strconcat (client_pub, "\n", NULL);
  write_or_die (authorized, contents);
  g_free (contents);

  host_pub = public_key (host_key);
  server->known_hosts = g_build_filename (server->dir, "known_hosts", NULL);
  contents = g_strdup_printf ("[127.0.0.1]:%u %s\n", server->port, host_pub);
  write_or_die (server->known_hosts, contents);
  g_free (contents);

  server->config = g_build_filename (server->dir, "sshd_config", NULL);
  contents = g_strdup_printf ("ListenAddress 127.0.0.1\n"
                              "Port %u\n"
                              "HostKey %s\n"
                              "PidFile %s/sshd.pid\n"
                              "AuthorizedKeysFile %s\n"
                              "UsePAM no\n"
                              "StrictModes no\n"
                              "PermitRootLogin prohibit-password\n"
                              "PubkeyAuthentication yes\n"
                              "PasswordAuthentication no\n"
                              "KbdInteractiveAuthentication no\n"
                              "PrintMotd no\n"
                              "PrintLastLog no\n"
                              "UseDNS no\n"
                              "SetEnv SHLVL=1\n"
                              "LogLevel ERROR\n",
                              server->port, host_key, server->dir, authorized);
  write_or_die (server->config, contents);

  log = g_build_filename (server->dir, "sshd.log", NULL);
  log_fd = g_open (log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  {
    const char *argv[] = { SSHD_PATH, "-D", "-e", "-f", server->config, NULL };

    if (!g_spawn_async_with_pipes_and_fds (NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                           sshd_child_setup, NULL, -1, log_fd, log_fd, NULL, NULL, 0,
                                           &server->sshd, NULL, NULL, NULL, &error))
      die ("cannot start sshd: %s", error->message);
  }
  close (log_fd);

  /* Up once it accepts. */
  for (guint i = 0; i < 2000 && !port_accepts (server->port); i++)
    g_usleep (5 * 1000);
  if (!port_accepts (server->port))
    die ("sshd did not start; see %s", log);
}

static void
server_stop (Server *server)
{
  g_autoptr(GDir) listing = NULL;
  const char *name;

  kill (server->sshd, SIGTERM);
  waitpid (server->sshd, NULL, 0);

  listing = g_dir_open (server->dir, 0, NULL);
  while (listing != NULL && (name = g_dir_read_name (listing)) != NULL)
    {
      g_autofree char *path = g_build_filename (server->dir, name, NULL);

      g_unlink (path);
    }
  g_rmdir (server->dir);
  g_free (server->dir);
  g_free (server->client_key);
  g_free (server->known_hosts);
  g_free (server->config);
}

/* The client's options, as the backend passes them. */
static void
add_client_options (GPtrArray *argv,
                    Server    *server)
{
  const char *options[] = {
    "-o", "BatchMode=yes", "-F", "none", "-i", server->client_key, "-o", "IdentitiesOnly=yes",
    "-o", NULL, "-o", "StrictHostKeyChecking=yes", "-o", "LogLevel=ERROR",
  };
  g_autofree char *known = g_strdup_printf ("UserKnownHostsFile=%s", server->known_hosts);

  for (guint i = 0; i < G_N_ELEMENTS (options); i++)
    g_ptr_array_add (argv, g_strdup (options[i] != NULL ? options[i] : known));
  g_ptr_array_add (argv, g_strdup ("-p"));
  g_ptr_array_add (argv, g_strdup_printf ("%u", server->port));
}

/* OpenSSH alone: `ssh -tt HOST true`, with a connection of its own or
 * (@control_path) on a live master. */
static double
time_raw_session (Server     *server,
                  const char *control_path)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  int status = 0;
  double start;

  g_ptr_array_add (argv, g_strdup ("ssh"));
  g_ptr_array_add (argv, g_strdup ("-tt"));
  if (control_path != NULL)
    {
      g_ptr_array_add (argv, g_strdup ("-o"));
      g_ptr_array_add (argv, g_strdup_printf ("ControlPath=%s", control_path));
      g_ptr_array_add (argv, g_strdup ("-o"));
      g_ptr_array_add (argv, g_strdup ("ControlMaster=no"));
    }
  add_client_options (argv, server);
  g_ptr_array_add (argv, g_strdup ("--"));
  g_ptr_array_add (argv, g_strdup ("127.0.0.1"));
  g_ptr_array_add (argv, g_strdup ("true"));
  g_ptr_array_add (argv, NULL);

  /* Its stdin is no terminal, as the backend's client's is not. */
  start = bench_now ();
  if (!g_spawn_sync (NULL, (char **)argv->pdata, NULL,
                     G_SPAWN_SEARCH_PATH | G_SPAWN_STDIN_FROM_DEV_NULL |
                     G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                     NULL, NULL, NULL, NULL, &status, NULL) ||
      !g_spawn_check_wait_status (status, NULL))
    die ("ssh -tt failed");
  return bench_now () - start;
}

/* A master of OpenSSH's own, up once its stdout closed. */
static GPid
raw_master_start (Server     *server,
                  const char *control_path)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GError) error = NULL;
  char buffer[64];
  GPid pid;
  int out;

  g_ptr_array_add (argv, g_strdup ("ssh"));
  g_ptr_array_add (argv, g_strdup ("-M"));
  g_ptr_array_add (argv, g_strdup ("-N"));
  g_ptr_array_add (argv, g_strdup ("-o"));
  g_ptr_array_add (argv, g_strdup_printf ("ControlPath=%s", control_path));
  g_ptr_array_add (argv, g_strdup ("-o"));
  g_ptr_array_add (argv, g_strdup ("ControlPersist=no"));
  add_client_options (argv, server);
  g_ptr_array_add (argv, g_strdup ("--"));
  g_ptr_array_add (argv, g_strdup ("127.0.0.1"));
  g_ptr_array_add (argv, NULL);

  if (!g_spawn_async_with_pipes (NULL, (char **)argv->pdata, NULL,
                                 G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD |
                                 G_SPAWN_STDIN_FROM_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                                 sshd_child_setup, NULL, &pid, NULL, &out, NULL, &error))
    die ("cannot start ssh -M: %s", error->message);
  while (read (out, buffer, sizeof buffer) > 0)
    ;
  close (out);
  if (!g_file_test (control_path, G_FILE_TEST_EXISTS))
    die ("ssh -M did not come up");
  return pid;
}

/* With @remote_launcher, the remote shell runs under it (as on a host
 * with terret-exec installed); else as `auto` finds: here, where the
 * remote is this host, in a PID namespace when the account may make one
 * (root), else by the terminal's hangup. */
static TerretExecutor *
new_executor (Server     *server,
              gboolean    multiplex,
              const char *remote_launcher)
{
  g_autofree char *port = g_strdup_printf ("port=%u", server->port);
  g_autofree char *identity = g_strdup_printf ("identity-file=%s", server->client_key);
  g_autofree char *known_hosts = g_strdup_printf ("known-hosts=%s", server->known_hosts);
  g_autofree char *launcher = g_strdup_printf ("remote-launcher=%s",
                                               remote_launcher != NULL ? remote_launcher : "auto");
  const char *settings[] = {
    "host=127.0.0.1", port, identity, known_hosts, "config-file=none",
    multiplex ? "multiplex=true" : "multiplex=false", launcher, NULL,
  };
  g_autoptr(GError) error = NULL;
  TerretExecutor *executor = terret_executor_new_with_settings ("ssh", settings, &error);

  if (executor == NULL)
    die ("Could not create the ssh executor: %s", error->message);
  return executor;
}

/* The first run of session @key: the session's start, and `true`. */
static double
time_session_start (TerretExecutor *executor,
                    const char     *key)
{
  g_autoptr(TerretRequest) request = terret_request_new ("true");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  double start;

  terret_request_set_session (request, key);
  start = bench_now ();
  result = bench_run_on_loop (executor, request, NULL, &error);
  if (result == NULL || terret_result_get_exit_status (result) != 0)
    die ("session %s: %s", key, error != NULL ? error->message : "true failed");
  return bench_now () - start;
}

static void
add_sample (GArray *samples,
            double  seconds)
{
  double ms = seconds * 1000;

  g_array_append_val (samples, ms);
}

static double
median_of (GArray *samples)
{
  BenchStats stats;

  bench_stats (samples, &stats);
  return stats.median;
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GArray) live = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) first = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) own = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) round_trip = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) raw_live = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) raw_own = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr(GArray) live_launched = g_array_new (FALSE, FALSE, sizeof (double));
  const char *remote_launcher = g_getenv ("TERRET_LAUNCHER");
  g_autoptr(TerretExecutor) shared = NULL;
  g_autoptr(TerretExecutor) separate = NULL;
  g_autoptr(TerretExecutor) launched = NULL;
  g_autofree char *control_path = NULL;
  BenchReport *report;
  BenchRow *row;
  Server server = { 0 };
  GPid raw_master;

  bench_init (&argc, &argv, "The time to open an ssh session on a live master connection, "
              "next to a first connection and to OpenSSH alone.", entries);
  opt_runs = MAX (opt_runs, 1);

  if (!g_file_test (SSHD_PATH, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_printerr ("ssh: no " SSHD_PATH " (install openssh-server); skipped\n");
      return 77;
    }
  server_start (&server);

  /* Each round takes one sample of every subject, so that a machine
   * whose load drifts weighs on all of them alike. */
  control_path = g_build_filename (server.dir, "raw-master", NULL);
  raw_master = raw_master_start (&server, control_path);
  /* One session keeps each executor's master up; each timed one is
   * closed before the next. */
  shared = new_executor (&server, TRUE, NULL);
  time_session_start (shared, "keeper");
  if (remote_launcher != NULL)
    {
      launched = new_executor (&server, TRUE, remote_launcher);
      time_session_start (launched, "keeper");
    }
  separate = new_executor (&server, FALSE, NULL);

  for (int i = 0; i < opt_runs; i++)
    {
      g_autofree char *key = g_strdup_printf ("s%d", i);

      /* New sessions on a live connection, and OpenSSH's alone. */
      add_sample (raw_live, time_raw_session (&server, control_path));
      add_sample (live, time_session_start (shared, key));
      terret_executor_close_session (shared, key);
      /* The same under the launcher the tree built, run as the
       * remote's. */
      if (launched != NULL)
        {
          add_sample (live_launched, time_session_start (launched, key));
          terret_executor_close_session (launched, key);
        }

      /* A first connection: a new executor, whose first session opens
       * the master; OpenSSH logging in alone; multiplex=false. */
      add_sample (raw_own, time_raw_session (&server, NULL));
      {
        g_autoptr(TerretExecutor) executor = new_executor (&server, TRUE, NULL);

        add_sample (first, time_session_start (executor, "first"));
      }
      add_sample (own, time_session_start (separate, key));
      terret_executor_close_session (separate, key);

      add_sample (round_trip, time_session_start (shared, "keeper"));
    }

  kill (raw_master, SIGTERM);
  waitpid (raw_master, NULL, 0);
  g_clear_object (&shared);
  g_clear_object (&launched);
  g_clear_object (&separate);

  report = bench_report_new ("ssh");
  bench_report_set_param (report, "runs", opt_runs);

  row = bench_report_add (report, "session start + true, median", "ssh, live connection",
                          median_of (live), "ms");
  bench_row_set_baseline (row, "ssh, first connection", median_of (first));
  bench_row_set_target_max (row, 30);
  row = bench_report_add (report, "session start + true, median", "ssh, first connection",
                          median_of (first), "ms");
  bench_row_set_baseline (row, "ssh -tt true, own login", median_of (raw_own));
  row = bench_report_add (report, "session start + true, median", "ssh multiplex=false",
                          median_of (own), "ms");
  bench_row_set_baseline (row, "ssh -tt true, own login", median_of (raw_own));
  row = bench_report_add (report, "session start + true, median", "ssh, live (vs OpenSSH)",
                          median_of (live), "ms");
  bench_row_set_baseline (row, "ssh -tt true, live master", median_of (raw_live));
  if (live_launched->len > 0)
    {
      row = bench_report_add (report, "session start + true, median", "ssh, live, remote launcher",
                              median_of (live_launched), "ms");
      bench_row_set_baseline (row, "ssh -tt true, live master", median_of (raw_live));
      bench_row_set_target_max (row, 30);
    }
  bench_report_add (report, "run true on a live session, median", "ssh", median_of (round_trip),
                    "ms");

  server_stop (&server);
  return bench_report_finish (report);
}
