/* test-ssh.c: the ssh backend against a real sshd on 127.0.0.1
 *
 * Each test starts its own sshd (Debian's openssh-server) on a free port,
 * with a throwaway host key, an authorized key and a known_hosts file in
 * a temporary directory, as the user running the tests. The backend is
 * configured as a host would configure it: an [ssh] group in
 * executor.conf.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "terret-test-containment.h"
#include "terret-test-shell-state.h"
#include "terret-test-utils.h"

#define SSHD_PATH "/usr/sbin/sshd"
#define SSH_KEYGEN "ssh-keygen"

/* sshd refuses to start as root without its privilege separation
 * directory (Debian's service creates it at boot). */
#define PRIVSEP_DIR "/run/sshd"

typedef struct
{
  char *dir;                    /* (owned) */
  char *host_key;               /* (owned) */
  char *client_key;             /* (owned) */
  char *wrong_key;              /* (owned) */
  char *other_host_key;         /* (owned) */
  char *known_hosts;            /* (owned) */
  char *sshd_config;            /* (owned) */
  char *sshd_log;               /* (owned) */
  guint16 port;
  GPid sshd;
} Fixture;

/* --- /proc ------------------------------------------------------------ */

static gboolean
read_ppid (const char *pid_dir,
           GPid       *ppid,
           char      **comm)
{
  g_autofree char *path = g_build_filename ("/proc", pid_dir, "stat", NULL);
  g_autofree char *contents = NULL;
  const char *open_paren, *close_paren;
  char state;
  int parent;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return FALSE;

  open_paren = strchr (contents, '(');
  close_paren = strrchr (contents, ')');
  if (open_paren == NULL || close_paren == NULL ||
      sscanf (close_paren + 1, " %c %d", &state, &parent) != 2 || state == 'Z')
    return FALSE;

  *ppid = parent;
  if (comm != NULL)
    *comm = g_strndup (open_paren + 1, close_paren - open_paren - 1);
  return TRUE;
}

/* Every live process descending from @root, with its command name. */
static GHashTable *
collect_descendants (GPid root)
{
  g_autoptr(GHashTable) parents = g_hash_table_new (NULL, NULL);
  g_autoptr(GHashTable) comms = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  GHashTable *found = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  g_autoptr(GDir) dir = g_dir_open ("/proc", 0, NULL);
  gboolean grew = TRUE;
  const char *name;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      char *comm = NULL;
      GPid ppid;

      if (g_ascii_isdigit (name[0]) && read_ppid (name, &ppid, &comm))
        {
          GPid pid = atoi (name);

          g_hash_table_insert (parents, GINT_TO_POINTER (pid), GINT_TO_POINTER (ppid));
          g_hash_table_insert (comms, GINT_TO_POINTER (pid), comm);
        }
    }

  while (grew)
    {
      GHashTableIter iter;
      gpointer pid, ppid;

      grew = FALSE;
      g_hash_table_iter_init (&iter, parents);
      while (g_hash_table_iter_next (&iter, &pid, &ppid))
        {
          if (!g_hash_table_contains (found, pid) &&
              (GPOINTER_TO_INT (ppid) == root || g_hash_table_contains (found, ppid)))
            {
              g_hash_table_insert (found, pid, g_strdup (g_hash_table_lookup (comms, pid)));
              grew = TRUE;
            }
        }
    }

  return found;
}

/* Live processes whose argument vector holds @word as a whole argument:
 * how a test finds what it started on the remote side (which is this
 * host, but whose processes are no descendants of the test's). */
static guint
count_processes_with_arg (const char *word)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc", 0, NULL);
  const char *name;
  guint count = 0;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *cmdline = NULL;
      gsize len = 0;
      GPid ppid;

      if (!g_ascii_isdigit (name[0]) || !read_ppid (name, &ppid, NULL))
        continue;
      path = g_build_filename ("/proc", name, "cmdline", NULL);
      if (!g_file_get_contents (path, &cmdline, &len, NULL))
        continue;
      for (gsize i = 0; i < len; i += strlen (cmdline + i) + 1)
        {
          if (g_str_equal (cmdline + i, word))
            {
              count++;
              break;
            }
        }
    }

  return count;
}

/* Waits, without a timing assertion, until no process holds @word: a
 * hung-up process may take a moment to leave the process table. */
static void
assert_no_process_with_arg (const char *word)
{
  for (guint i = 0; i < 1000 && count_processes_with_arg (word) > 0; i++)
    g_usleep (10 * 1000);
  g_assert_cmpuint (count_processes_with_arg (word), ==, 0);
}

/* Waits until a process started remotely is there: `cmd &` returns
 * before the child has exec'd. */
static void
await_process_with_arg (const char *word)
{
  for (guint i = 0; i < 1000 && count_processes_with_arg (word) == 0; i++)
    g_usleep (10 * 1000);
  g_assert_cmpuint (count_processes_with_arg (word), ==, 1);
}

static void
assert_session_gone (GPid sid)
{
  for (guint i = 0; i < 1000 && terret_test_count_session_members (sid) > 0; i++)
    g_usleep (10 * 1000);
  g_assert_cmpuint (terret_test_count_session_members (sid), ==, 0);
}

/* A word no other process on this host has as an argument: a sleep
 * duration, so `sleep WORD` is findable in /proc. */
static char *
unique_sleep_arg (void)
{
  static guint counter;

  return g_strdup_printf ("%u.%u%u", 900 + g_atomic_int_add (&counter, 1),
                          (guint)getpid (), g_random_int_range (1000, 9999));
}

/* --- sshd ------------------------------------------------------------- */

static void
run_or_die (const char * const *argv)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *err = NULL;
  int wait_status = 0;

  g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                NULL, NULL, NULL, &err, &wait_status, &error);
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (wait_status, NULL))
    g_error ("%s failed: %s", argv[0], err);
}

static char *
make_key (const char *dir,
          const char *name)
{
  char *path = g_build_filename (dir, name, NULL);
  const char *argv[] = { SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", path, NULL };

  run_or_die (argv);
  return path;
}

/* "ssh-ed25519 AAAA..." of a key pair. */
static char *
public_key (const char *key)
{
  g_autofree char *pub_path = g_strconcat (key, ".pub", NULL);
  g_autofree char *contents = NULL;
  g_auto(GStrv) fields = NULL;
  g_autoptr(GError) error = NULL;

  g_file_get_contents (pub_path, &contents, NULL, &error);
  g_assert_no_error (error);
  fields = g_strsplit (contents, " ", 3);
  g_assert_nonnull (fields[1]);
  return g_strdup_printf ("%s %s", fields[0], fields[1]);
}

static void
write_file (const char *path,
            const char *contents)
{
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

/* A known_hosts line for 127.0.0.1 on the fixture's port with @key. */
static void
write_known_hosts (Fixture    *fixture,
                   const char *path,
                   const char *key)
{
  g_autofree char *pub = public_key (key);
  g_autofree char *line = g_strdup_printf ("[127.0.0.1]:%u %s\n", fixture->port, pub);

  write_file (path, line);
}

static guint16
free_port (void)
{
  struct sockaddr_in addr = { 0 };
  socklen_t len = sizeof addr;
  int fd = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

  g_assert_cmpint (fd, >=, 0);
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
  g_assert_cmpint (bind (fd, (struct sockaddr *)&addr, sizeof addr), ==, 0);
  g_assert_cmpint (getsockname (fd, (struct sockaddr *)&addr, &len), ==, 0);
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
  /* An sshd must not outlive a test program that crashed. */
  prctl (PR_SET_PDEATHSIG, SIGKILL);
}

static void
sshd_start (Fixture *fixture)
{
  const char *argv[] = { SSHD_PATH, "-D", "-e", "-f", fixture->sshd_config, NULL };
  g_autoptr(GError) error = NULL;
  int log_fd;

  log_fd = g_open (fixture->sshd_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  g_assert_cmpint (log_fd, >=, 0);
  g_spawn_async_with_pipes_and_fds (NULL, argv, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                                    sshd_child_setup, NULL,
                                    -1, log_fd, log_fd, NULL, NULL, 0,
                                    &fixture->sshd, NULL, NULL, NULL, &error);
  close (log_fd);
  g_assert_no_error (error);

  /* Ready once it accepts; an sshd that exits instead says why in its
   * log. */
  for (guint i = 0; i < 2000 && !port_accepts (fixture->port); i++)
    {
      int wait_status;

      if (waitpid (fixture->sshd, &wait_status, WNOHANG) == fixture->sshd)
        {
          g_autofree char *log = NULL;

          fixture->sshd = 0;
          g_file_get_contents (fixture->sshd_log, &log, NULL, NULL);
          g_error ("sshd exited at start: %s", log);
        }
      g_usleep (5 * 1000);
    }
  g_assert_true (port_accepts (fixture->port));
}

/* Kills the listening sshd and the per-connection ones it forked; with
 * @everything, also whatever they started (the remote shells), which a
 * test that checks what the hangup ends must not do. */
static void
sshd_kill (Fixture  *fixture,
           gboolean  everything)
{
  g_autoptr(GHashTable) descendants = NULL;
  GHashTableIter iter;
  gpointer pid, comm;

  if (fixture->sshd == 0)
    return;

  descendants = collect_descendants (fixture->sshd);
  kill (fixture->sshd, SIGKILL);
  g_hash_table_iter_init (&iter, descendants);
  while (g_hash_table_iter_next (&iter, &pid, &comm))
    {
      if (everything || g_strcmp0 (comm, "sshd") == 0)
        kill (GPOINTER_TO_INT (pid), SIGKILL);
    }

  waitpid (fixture->sshd, NULL, 0);
  fixture->sshd = 0;
}

static void
fixture_setup (Fixture       *fixture,
               gconstpointer  data)
{
  g_autofree char *authorized_keys = NULL;
  g_autofree char *client_pub = NULL;
  g_autofree char *authorized = NULL;
  g_autofree char *config = NULL;

  if (!g_file_test (SSHD_PATH, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("no " SSHD_PATH ": install openssh-server (build-aux/install-deps) "
                   "to test the ssh backend");
      return;
    }
  if (getuid () == 0 && g_mkdir_with_parents (PRIVSEP_DIR, 0755) < 0)
    {
      g_test_skip ("cannot create " PRIVSEP_DIR ", which sshd needs when run as root");
      return;
    }

  fixture->dir = terret_test_make_tmpdir ();
  fixture->host_key = make_key (fixture->dir, "host_key");
  fixture->other_host_key = make_key (fixture->dir, "other_host_key");
  fixture->client_key = make_key (fixture->dir, "client_key");
  fixture->wrong_key = make_key (fixture->dir, "wrong_key");
  fixture->known_hosts = g_build_filename (fixture->dir, "known_hosts", NULL);
  fixture->sshd_config = g_build_filename (fixture->dir, "sshd_config", NULL);
  fixture->sshd_log = g_build_filename (fixture->dir, "sshd.log", NULL);
  fixture->port = free_port ();

  authorized_keys = g_build_filename (fixture->dir, "authorized_keys", NULL);
  client_pub = public_key (fixture->client_key);
  authorized = g_strconcat (client_pub, "\n", NULL);
  write_file (authorized_keys, authorized);
  write_known_hosts (fixture, fixture->known_hosts, fixture->host_key);

  config = g_strdup_printf ("ListenAddress 127.0.0.1\n"
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
                            "LogLevel INFO\n",
                            fixture->port, fixture->host_key, fixture->dir, authorized_keys);
  write_file (fixture->sshd_config, config);

  sshd_start (fixture);
}

static void
fixture_teardown (Fixture       *fixture,
                  gconstpointer  data)
{
  sshd_kill (fixture, TRUE);

  g_free (fixture->dir);
  g_free (fixture->host_key);
  g_free (fixture->other_host_key);
  g_free (fixture->client_key);
  g_free (fixture->wrong_key);
  g_free (fixture->known_hosts);
  g_free (fixture->sshd_config);
  g_free (fixture->sshd_log);
}

/* --- The backend ------------------------------------------------------ */

/* The [ssh] group a host would write, in the test's own config dir. */
static void
write_executor_conf (Fixture    *fixture,
                     const char *extra)
{
  g_autofree char *dir = g_build_filename (g_get_user_config_dir (), "terret-exec", NULL);
  g_autofree char *path = g_build_filename (dir, "executor.conf", NULL);
  g_autofree char *contents = NULL;

  g_assert_cmpint (g_mkdir_with_parents (dir, 0700), ==, 0);
  contents = g_strdup_printf ("[ssh]\n"
                              "host=127.0.0.1\n"
                              "port=%u\n"
                              "identity-file=%s\n"
                              "known-hosts=%s\n"
                              "config-file=none\n"
                              "connect-timeout=10\n"
                              "%s",
                              fixture->port, fixture->client_key, fixture->known_hosts,
                              extra != NULL ? extra : "");
  write_file (path, contents);
}

static TerretExecutor *
new_executor (Fixture *fixture)
{
  g_autoptr(GError) error = NULL;
  TerretExecutor *executor;

  write_executor_conf (fixture, NULL);
  executor = terret_executor_new ("ssh", &error);
  g_assert_no_error (error);
  g_assert_nonnull (executor);
  return executor;
}

static void
set_setting (TerretExecutor *executor,
             const char     *key,
             const char     *value)
{
  g_autoptr(GError) error = NULL;

  terret_executor_set_setting (executor, key, value, &error);
  g_assert_no_error (error);
}

/* The run's error, which must be @code and mention each of @words
 * (case-insensitively). */
static void
assert_run_fails (TerretExecutor *executor,
                  int             code,
                  const char     *first_word,
                  ...)
{
  g_autoptr(TerretRequest) request = terret_request_new ("echo never");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *message = NULL;
  const char *word;
  va_list words;

  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_error (error, TERRET_EXEC_ERROR, code);
  g_assert_null (result);

  message = g_ascii_strdown (error->message, -1);
  g_test_message ("%s", error->message);
  va_start (words, first_word);
  for (word = first_word; word != NULL; word = va_arg (words, const char *))
    {
      if (strstr (message, word) == NULL)
        g_error ("“%s” does not mention “%s”", error->message, word);
    }
  va_end (words);
}

#define SKIP_WITHOUT_SSHD(fixture) \
  G_STMT_START { if ((fixture)->dir == NULL) return; } G_STMT_END

/* --- Configuration ---------------------------------------------------- */

static void
test_unconfigured (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(GError) error = NULL;

  /* No [ssh] group at all: never picked, and says why when named. */
  executor = terret_executor_new ("ssh", &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE);
  g_assert_null (executor);
  g_assert_nonnull (strstr (error->message, "no host configured"));
}

static void
test_invalid_settings (Fixture       *fixture,
                       gconstpointer  data)
{
  /* The setting, and a bad value for it. */
  const char *bad[][2] = {
    { "strict-host-key-checking", "maybe" },
    { "ssh-options", "-oProxyCommand=x" },
    { "ssh-options", "Compression" },
    { "user", "-oProxyCommand=x" },
    { "identity-file", "/nonexistent/key" },
  };

  SKIP_WITHOUT_SSHD (fixture);

  for (guint i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autoptr(TerretExecutor) executor = NULL;
      g_autoptr(GError) error = NULL;
      g_autofree char *extra = g_strdup_printf ("%s=%s\n", bad[i][0], bad[i][1]);

      /* Refused when the backend is created... */
      write_executor_conf (fixture, extra);
      executor = terret_executor_new ("ssh", &error);
      g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG);
      g_assert_null (executor);
      g_assert_nonnull (strstr (error->message, bad[i][0]));
      g_clear_error (&error);

      /* ...and when set on a live one, at its next run. */
      executor = new_executor (fixture);
      set_setting (executor, bad[i][0], bad[i][1]);
      assert_run_fails (executor, TERRET_EXEC_ERROR_INVALID_CONFIG, bad[i][0], NULL);
    }

  /* A host ssh would take for an option. */
  {
    g_autoptr(TerretExecutor) executor = new_executor (fixture);

    set_setting (executor, "host", "-oProxyCommand=x");
    assert_run_fails (executor, TERRET_EXEC_ERROR_INVALID_CONFIG, "host", NULL);
  }

  /* An env entry the remote `env` would run as a command. */
  {
    g_autoptr(TerretExecutor) executor = new_executor (fixture);

    set_setting (executor, "env", "not a name=1");
    assert_run_fails (executor, TERRET_EXEC_ERROR_INVALID_CONFIG, "not a name", NULL);
  }
}

/* --- Running ---------------------------------------------------------- */

static void
test_exact (Fixture       *fixture,
            gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);

  terret_test_assert_terminal_run (executor, "printf 'no newline'", 0, "no newline");
  terret_test_assert_terminal_run (executor, "printf 'a\\rb\\r'", 0, "a\rb\r");
  terret_test_assert_terminal_run (executor, "echo one; echo two >&2", 0, "one\ntwo\n");
  terret_test_assert_terminal_run (executor, "false", 1, "");
  terret_test_assert_terminal_run (executor, "(exit 255)", 255, "");
  terret_test_assert_terminal_run (executor, "", 0, "");
  terret_test_assert_terminal_run (executor, "printf '%s\\n' \"$TERM $PAGER $GIT_PAGER\"", 0, "dumb cat cat\n");
  terret_test_assert_terminal_run (executor, "stty size", 0, "24 80\n");
  terret_test_assert_terminal_run (executor, "printf '\\xc3\\xa9\\xe2\\x82\\xac\\x01\\x7f'", 0, "é€\x01\x7f");
  terret_test_assert_terminal_run (executor, "printf '%s' '\x03\x1a\x04\x1c' | od -An -tx1", 0, " 03 1a 04 1c\n");
  terret_test_assert_terminal_run (executor, "cat <<'EOF'\nline one\n  $HOME stays\nEOF", 0, "line one\n  $HOME stays\n");
  terret_test_assert_terminal_run (executor, "echo done", 0, "done\n");

  /* A remote terminal's modes cannot be set from here: each request puts
   * them back after its command, so echo turned on stays out of the next
   * run, and a command's status survives the restoring. */
  terret_test_assert_terminal_run (executor, "stty echo; exit_status_kept() { return 3; }; exit_status_kept", 3, "");
  terret_test_assert_terminal_run (executor, "echo after", 0, "after\n");
  terret_test_assert_terminal_run (executor, "set -- a b; stty echo", 0, "");
  terret_test_assert_terminal_run (executor, "echo \"$# $1 $2\"", 0, "2 a b\n");
}

/* Every shell-state case, on one executor: the remote shell is the same
 * engine's, behind a terminal the host cannot set modes on. */
static void
test_shell_state (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);

  for (guint i = 0; i < terret_test_shell_state_n_cases (); i++)
    {
      g_test_message ("case: %s", terret_test_shell_state_name (i));
      terret_test_shell_state_check (executor, i);
    }
}

/* Whether the remote side (this machine) can have a PID namespace (not in
 * a chroot, nor without the privilege), found by trying what it tries;
 * else why not, in unshare's words. */
static gboolean
pid_namespace_possible (char **why)
{
  const char *argv[] = { "unshare", "--pid", "--fork", "--kill-child", "--mount-proc", "true",
                         NULL };
  g_autofree char *err = NULL;
  int status = -1;

  if (g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL,
                    NULL, NULL, NULL, &err, &status, NULL) &&
      g_spawn_check_wait_status (status, NULL))
    return TRUE;
  *why = g_strdup (err != NULL && *g_strstrip (err) != '\0' ? err : "no unshare");
  return FALSE;
}

/* What a remote command starts ends with its session, as a local one's
 * does (the remote side is this machine, so /proc sees it). */
static void
test_containment (Fixture       *fixture,
                  gconstpointer  data)
{
  const TerretTestEnd ends[] = {
    TERRET_TEST_END_CLOSE, TERRET_TEST_END_TIMEOUT, TERRET_TEST_END_CANCEL, TERRET_TEST_END_DISPOSE,
  };
  g_autofree char *why = NULL;

  SKIP_WITHOUT_SSHD (fixture);
  /* Without the launcher on the remote (an uninstalled tree) the remote
   * side is contained by a PID namespace, or else by the hangup alone,
   * which setsid and nohup jobs survive: then there is no containment to
   * test, and the remote says which held. */
  if (!pid_namespace_possible (&why))
    {
      g_autoptr(TerretExecutor) executor = new_executor (fixture);
      g_autofree char *skip = g_strdup_printf ("no PID namespace here (%s): the remote side "
                                               "is contained by the hangup alone", why);

      terret_test_assert_terminal_run (executor, "echo $TERRET_CONTAINMENT", 0, "hangup\n");
      g_test_skip (skip);
      return;
    }
  for (guint i = 0; i < G_N_ELEMENTS (ends); i++)
    terret_test_containment_check (new_executor (fixture), ends[i], FALSE);
}

/* The same under the launcher, run as the remote command: the remote
 * has it where remote-launcher says (the build's); a path that is not
 * there is refused, not run without it. */
static void
test_containment_launcher (Fixture       *fixture,
                           gconstpointer  data)
{
  const TerretTestEnd ends[] = { TERRET_TEST_END_CLOSE, TERRET_TEST_END_TIMEOUT };
  const char *launcher = g_getenv ("TERRET_LAUNCHER");
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretResult) result = NULL;

  SKIP_WITHOUT_SSHD (fixture);
  g_assert_nonnull (launcher);

  executor = new_executor (fixture);
  {
    g_autofree char *why = NULL;
    gboolean pid_namespace = pid_namespace_possible (&why);

    if (!pid_namespace)
      g_test_message ("no PID namespace here (%s): the remote shell is contained by the "
                      "hangup alone", why);
    terret_test_assert_terminal_run (executor, "echo $TERRET_CONTAINMENT", 0,
                                     pid_namespace ? "pid-namespace\n" : "hangup\n");
  }
  set_setting (executor, "remote-launcher", launcher);
  terret_executor_close_all (executor);
  terret_test_assert_terminal_run (executor, "echo $TERRET_CONTAINMENT", 0, "launcher\n");
  /* The shell's death ends the session at once, as without it, and
   * reads as a death, not a status. */
  {
    g_autoptr(TerretResult) killed = terret_test_run_ok (executor, "kill -9 $$");

    g_assert_false (terret_result_get_exited (killed));
    g_assert_nonnull (terret_result_get_notice (killed));
  }
  terret_test_assert_terminal_run (executor, "echo back", 0, "back\n");

  for (guint i = 0; i < G_N_ELEMENTS (ends); i++)
    {
      TerretExecutor *each = new_executor (fixture);

      set_setting (each, "remote-launcher", launcher);
      terret_test_containment_check (each, ends[i], FALSE);
    }

  set_setting (executor, "remote-launcher", "/nonexistent/terret-launcher");
  terret_executor_close_all (executor);
  request = terret_request_new ("echo never");
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "/nonexistent/terret-launcher"));
}

/* The limits hold for the remote shell, set there; the local client,
 * which only carries bytes, has none of them. */
static void
test_limits (Fixture       *fixture,
             gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *limits_path = NULL;
  g_autofree char *limits = NULL;
  GPid client;

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);
  set_setting (executor, "limit-open-files", "50");
  set_setting (executor, "limit-cpu", "7");
  set_setting (executor, "limit-file-size", "2M");
  set_setting (executor, "limit-memory", "1G");

  terret_test_assert_terminal_run (executor,
                                   "echo $(ulimit -S -n) $(ulimit -H -n) $(ulimit -S -t) "
                                   "$(ulimit -H -t) $(ulimit -f) $(ulimit -v)",
                                   0, "50 50 7 8 2048 1048576\n");
  terret_test_assert_terminal_run (executor, "head -c 3000000 /dev/zero > /dev/null; echo ok", 0, "ok\n");

  client = terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION);
  g_assert_cmpint (client, >, 0);
  limits_path = g_strdup_printf ("/proc/%d/limits", client);
  g_assert_true (g_file_get_contents (limits_path, &limits, NULL, NULL));
  g_assert_null (g_regex_match_simple ("Max open files +50 ", limits, 0, 0) ? "limited" : NULL);
  g_assert_null (g_regex_match_simple ("Max cpu time +7 ", limits, 0, 0) ? "limited" : NULL);
}

static void
test_containment_host_killed (Fixture       *fixture,
                              gconstpointer  data)
{
  g_autofree char *port = NULL;
  g_autofree char *identity = NULL;
  g_autofree char *known_hosts = NULL;
  g_autofree char *why = NULL;

  SKIP_WITHOUT_SSHD (fixture);
  if (!pid_namespace_possible (&why))
    {
      g_autofree char *skip = g_strdup_printf ("no PID namespace here (%s): the remote side "
                                               "is contained by the hangup alone", why);

      g_test_skip (skip);
      return;
    }
  port = g_strdup_printf ("port=%u", fixture->port);
  identity = g_strdup_printf ("identity-file=%s", fixture->client_key);
  known_hosts = g_strdup_printf ("known-hosts=%s", fixture->known_hosts);
  {
    const char *args[] = {
      "serve", "--backend", "ssh", "--set", "host=127.0.0.1", "--set", port, "--set", identity,
      "--set", known_hosts, "--set", "config-file=none", NULL,
    };

    terret_test_containment_host_killed (args, FALSE);
  }
}

static void
test_persistence (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) first = NULL;
  g_autoptr(TerretResult) other = NULL;
  g_autofree char *cd = NULL;
  g_autofree char *expected = NULL;

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);

  cd = g_strdup_printf ("cd '%s'; export TERRET_FOO=bar; X=local", fixture->dir);
  first = terret_test_run_ok (executor, cd);
  g_assert_cmpint (terret_result_get_exit_status (first), ==, 0);
  g_assert_cmpstr (terret_result_get_cwd (first), ==, fixture->dir);

  expected = g_strdup_printf ("%s bar local\n", fixture->dir);
  terret_test_assert_terminal_run (executor, "echo \"$PWD $TERRET_FOO $X\"", 0, expected);
  g_assert_cmpuint (terret_session_executor_get_n_sessions (TERRET_SESSION_EXECUTOR (executor)), ==, 1);

  /* Another key is another remote shell, over another connection. */
  other = terret_test_run_in (executor, "other", "echo \"[$TERRET_FOO]\"", 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (other), "[]\n");
  g_assert_cmpint (terret_executor_get_session_pid (executor, "other"), >, 0);
  g_assert_cmpint (terret_executor_get_session_pid (executor, "other"), !=,
                   terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION));
}

static void
test_cwd_and_env (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *expected = NULL;

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);
  dir = g_build_filename (fixture->dir, "it's a dir", NULL);
  g_assert_cmpint (g_mkdir (dir, 0700), ==, 0);

  /* The host's own environment (TERRET_SSH_HOST_ONLY, set in main())
   * stays on the host. */
  set_setting (executor, "cwd", dir);
  set_setting (executor, "env", "TERRET_A=one two;TERRET_B=it's;PAGER=less");

  expected = g_strdup_printf ("%s|one two|it's|less|\n", dir);
  terret_test_assert_terminal_run (executor, "echo \"$PWD|$TERRET_A|$TERRET_B|$PAGER|$TERRET_SSH_HOST_ONLY\"", 0,
                                   expected);

  /* A cwd the remote host does not have fails the start, saying so. */
  set_setting (executor, "cwd", "/nonexistent/terret");
  terret_executor_close_all (executor);
  assert_run_fails (executor, TERRET_EXEC_ERROR_UNAVAILABLE, "/nonexistent/terret", NULL);
}

static void
test_shell_exit (Fixture       *fixture,
                 gconstpointer  data)
{
  const char *commands[] = { "exit 3", "exit 255", "kill -9 $$" };
  /* What the client passes on: the remote shell's status, except 255,
   * which it also exits with when the remote shell was killed. */
  const int statuses[] = { 3, -1, -1 };
  g_autoptr(TerretExecutor) executor = NULL;

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);

  for (guint i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      g_autoptr(TerretResult) result = terret_test_run_ok (executor, commands[i]);
      g_autoptr(TerretResult) next = NULL;

      /* The remote shell ended, the connection did not fail: the client
       * exits with 255 for both `exit 255` and a killed shell, and says
       * nothing, so no connection failure may be reported, nor a status. */
      g_assert_cmpint (terret_result_get_exit_status (result), ==, statuses[i]);
      g_assert_nonnull (terret_result_get_notice (result));
      g_assert_null (strstr (terret_result_get_notice (result), "connection"));

      next = terret_test_run_ok (executor, "echo again");
      g_assert_cmpint (terret_result_get_exit_status (next), ==, 0);
      terret_test_assert_bytes_str (terret_result_get_stdout (next), "again\n");
    }
}

static void
store_result (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  GAsyncResult **out = user_data;

  *out = g_object_ref (result);
}

static void
test_timeout (Fixture       *fixture,
              gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(TerretResult) next = NULL;
  g_autofree char *word = unique_sleep_arg ();
  g_autofree char *command = g_strdup_printf ("echo partial; sleep %s", word);
  GPid pid;

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);

  terret_test_assert_terminal_run (executor, "export KEPT=1", 0, "");
  pid = terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION);
  g_assert_cmpint (pid, >, 0);

  result = terret_test_run_in (executor, TERRET_DEFAULT_SESSION, command, 1);
  g_assert_true (terret_result_get_timed_out (result));
  g_assert_false (terret_result_get_exited (result));
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "partial\n");
  g_assert_nonnull (terret_result_get_notice (result));

  /* The client is gone, and with the connection the remote sleep. */
  assert_session_gone (pid);
  assert_no_process_with_arg (word);

  next = terret_test_run_ok (executor, "echo \"after [$KEPT]\"");
  g_assert_cmpint (terret_result_get_exit_status (next), ==, 0);
  /* Reconnected: a fresh shell, as the timeout's notice said. */
  terret_test_assert_bytes_str (terret_result_get_stdout (next), "after []\n");
}

static void
test_busy (Fixture       *fixture,
           gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) slow = terret_request_new ("sleep 0.5; echo slow");
  g_autoptr(TerretRequest) fast = terret_request_new ("echo fast");
  g_autoptr(GAsyncResult) slow_result = NULL;
  g_autoptr(GAsyncResult) fast_result = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);

  terret_executor_run_async (executor, slow, NULL, store_result, &slow_result);
  terret_executor_run_async (executor, fast, NULL, store_result, &fast_result);
  while (slow_result == NULL || fast_result == NULL)
    g_main_context_iteration (NULL, TRUE);

  result = terret_executor_run_finish (executor, fast_result, &error);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_BUSY);
  g_assert_null (result);
  g_clear_error (&error);

  result = terret_executor_run_finish (executor, slow_result, &error);
  g_assert_no_error (error);
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "slow\n");
}

static void
test_close_ends_remote (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *word = unique_sleep_arg ();
  g_autofree char *other_word = unique_sleep_arg ();
  g_autofree char *command = g_strdup_printf ("sleep %s & echo started", word);
  g_autofree char *other_command = g_strdup_printf ("sleep %s & echo started", other_word);
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(TerretResult) other = NULL;
  GPid pid, other_pid;

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);

  result = terret_test_run_ok (executor, command);
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  other = terret_test_run_in (executor, "other", other_command, 0);
  g_assert_cmpint (terret_result_get_exit_status (other), ==, 0);
  await_process_with_arg (word);
  await_process_with_arg (other_word);
  pid = terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION);
  other_pid = terret_executor_get_session_pid (executor, "other");

  /* Closing a session ends its client and, on the remote side, its
   * background job; the other session lives on. */
  terret_executor_close_session (executor, TERRET_DEFAULT_SESSION);
  assert_session_gone (pid);
  assert_no_process_with_arg (word);
  g_assert_cmpuint (count_processes_with_arg (other_word), ==, 1);

  /* Dropping the executor ends the rest. */
  g_clear_object (&executor);
  assert_session_gone (other_pid);
  assert_no_process_with_arg (other_word);
}

/* --- Failures --------------------------------------------------------- */

static void
test_refused (Fixture       *fixture,
              gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *port = g_strdup_printf ("%u", free_port ());

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);

  set_setting (executor, "port", port);
  assert_run_fails (executor, TERRET_EXEC_ERROR_UNAVAILABLE, "connection refused", NULL);
  g_assert_cmpint (terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION), ==, 0);

  /* The setting governs the next run, which connects. */
  g_free (port);
  port = g_strdup_printf ("%u", fixture->port);
  set_setting (executor, "port", port);
  terret_test_assert_terminal_run (executor, "echo up", 0, "up\n");
}

static void
test_wrong_key (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);

  set_setting (executor, "identity-file", fixture->wrong_key);
  assert_run_fails (executor, TERRET_EXEC_ERROR_UNAVAILABLE, "permission denied",
                    "authentication", NULL);
}

static void
test_host_key_changed (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *known_hosts = g_build_filename (fixture->dir, "stale_known_hosts", NULL);

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);

  /* known_hosts says the host has another key: refused, even by
   * accept-new, which only learns keys of hosts it has never seen. */
  write_known_hosts (fixture, known_hosts, fixture->other_host_key);
  set_setting (executor, "known-hosts", known_hosts);
  assert_run_fails (executor, TERRET_EXEC_ERROR_UNAVAILABLE, "host key", "does not match", NULL);
  set_setting (executor, "strict-host-key-checking", "accept-new");
  assert_run_fails (executor, TERRET_EXEC_ERROR_UNAVAILABLE, "host key", "does not match", NULL);
}

static void
test_host_key_unknown (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *known_hosts = g_build_filename (fixture->dir, "empty_known_hosts", NULL);
  g_autofree char *pub = public_key (fixture->host_key);
  g_autofree char *learned = NULL;

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);

  write_file (known_hosts, "");
  set_setting (executor, "known-hosts", known_hosts);
  assert_run_fails (executor, TERRET_EXEC_ERROR_UNAVAILABLE, "host key", "known_hosts", NULL);

  /* accept-new learns the key on first use. */
  set_setting (executor, "strict-host-key-checking", "accept-new");
  terret_test_assert_terminal_run (executor, "echo learned", 0, "learned\n");
  g_file_get_contents (known_hosts, &learned, NULL, NULL);
  g_assert_nonnull (strstr (learned, pub));
}

typedef struct
{
  Fixture *fixture;
  const char *word;
  GString *seen;
  gboolean killed;
} DropState;

static void
kill_sshd_once_started (TerretRequest *request,
                        TerretStream   stream,
                        GBytes        *data,
                        gpointer       user_data)
{
  DropState *state = user_data;
  gsize len;
  const char *bytes = g_bytes_get_data (data, &len);

  g_string_append_len (state->seen, bytes, len);
  if (!state->killed && strstr (state->seen->str, "started\n") != NULL)
    {
      /* Only once the remote command is really running: what the hangup
       * ends must have been there. */
      await_process_with_arg (state->word);
      state->killed = TRUE;
      sshd_kill (state->fixture, FALSE);
    }
}

static void
test_connection_dropped (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *word = unique_sleep_arg ();
  g_autofree char *command = g_strdup_printf ("echo started; sleep %s; echo never", word);
  g_autoptr(TerretRequest) request = terret_request_new (command);
  g_autoptr(GAsyncResult) async_result = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(TerretResult) next = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) seen = g_string_new (NULL);
  g_autofree char *notice = NULL;
  DropState state = { fixture, word, seen, FALSE };
  GPid pid;

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);
  terret_test_assert_terminal_run (executor, "export KEPT=1", 0, "");
  pid = terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION);

  /* sshd dies (listener and connection alike) while the command runs. */
  terret_request_set_timeout (request, 120);
  terret_request_set_progress_func (request, kill_sshd_once_started, &state, NULL);
  terret_executor_run_async (executor, request, NULL, store_result, &async_result);
  while (async_result == NULL)
    g_main_context_iteration (NULL, TRUE);

  result = terret_executor_run_finish (executor, async_result, &error);
  g_assert_no_error (error);
  g_assert_true (state.killed);
  g_assert_false (terret_result_get_exited (result));
  g_assert_false (terret_result_get_timed_out (result));
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "started\n");
  notice = g_ascii_strdown (terret_result_get_notice (result), -1);
  g_test_message ("%s", terret_result_get_notice (result));
  g_assert_nonnull (strstr (notice, "connection"));

  /* The hangup ended the remote side; the client has ended too. */
  assert_no_process_with_arg (word);
  assert_session_gone (pid);

  /* With sshd back, the next run reconnects, in a fresh shell. */
  sshd_start (fixture);
  next = terret_test_run_ok (executor, "echo \"back [$KEPT]\"");
  g_assert_cmpint (terret_result_get_exit_status (next), ==, 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (next), "back []\n");
}

/* A command a timeout detached from loses its connection: the poll that
 * sees it end says why, as a run would. */
static void
test_connection_dropped_detached (Fixture       *fixture,
                                  gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *word = unique_sleep_arg ();
  g_autofree char *command = g_strdup_printf ("echo started; sleep %s; echo never", word);
  g_autoptr(TerretRequest) request = terret_request_new (command);
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(TerretResult) next = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) seen = g_string_new (NULL);
  g_autofree char *notice = NULL;
  GPid pid;

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);
  terret_test_assert_terminal_run (executor, "export KEPT=1", 0, "");
  pid = terret_executor_get_session_pid (executor, TERRET_DEFAULT_SESSION);

  /* A short timeout, to detach while the command runs. */
  terret_request_set_timeout (request, 1);
  terret_request_set_timeout_action (request, TERRET_TIMEOUT_ACTION_DETACH);
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_no_error (error);
  g_assert_true (terret_result_get_running (result));
  g_string_append_len (seen, g_bytes_get_data (terret_result_get_stdout (result), NULL),
                       g_bytes_get_size (terret_result_get_stdout (result)));

  /* sshd dies (listener and connection alike) under the detached
   * command, once it really runs. */
  await_process_with_arg (word);
  sshd_kill (fixture, FALSE);

  while (terret_result_get_running (result))
    {
      g_clear_object (&result);
      result = terret_executor_poll (executor, TERRET_DEFAULT_SESSION, 60, NULL, &error);
      g_assert_no_error (error);
      g_string_append_len (seen, g_bytes_get_data (terret_result_get_stdout (result), NULL),
                           g_bytes_get_size (terret_result_get_stdout (result)));
    }

  g_assert_false (terret_result_get_exited (result));
  g_assert_false (terret_result_get_timed_out (result));
  g_assert_cmpstr (seen->str, ==, "started\n");
  g_test_message ("%s", terret_result_get_notice (result));
  notice = g_ascii_strdown (terret_result_get_notice (result), -1);
  g_assert_nonnull (strstr (notice, "connection"));
  g_assert_nonnull (strstr (notice, "lost"));

  assert_no_process_with_arg (word);
  assert_session_gone (pid);

  sshd_start (fixture);
  next = terret_test_run_ok (executor, "echo \"back [$KEPT]\"");
  g_assert_cmpint (terret_result_get_exit_status (next), ==, 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (next), "back []\n");
}

/* --- Multiplexing ------------------------------------------------------ */

/* The master connections running below this process: their pids and
 * control paths. */
static GHashTable *
find_masters (void)
{
  g_autoptr(GHashTable) descendants = collect_descendants (getpid ());
  GHashTable *masters = g_hash_table_new_full (NULL, NULL, NULL, g_free);
  GHashTableIter iter;
  gpointer pid;

  g_hash_table_iter_init (&iter, descendants);
  while (g_hash_table_iter_next (&iter, &pid, NULL))
    {
      g_autofree char *path = g_strdup_printf ("/proc/%d/cmdline", GPOINTER_TO_INT (pid));
      g_autofree char *cmdline = NULL;
      const char *control_path = NULL;
      gboolean master = FALSE;
      gsize len = 0;

      if (!g_file_get_contents (path, &cmdline, &len, NULL))
        continue;
      for (gsize i = 0; i < len; i += strlen (cmdline + i) + 1)
        {
          if (g_str_equal (cmdline + i, "-M"))
            master = TRUE;
          else if (g_str_has_prefix (cmdline + i, "ControlPath="))
            control_path = cmdline + i + strlen ("ControlPath=");
        }
      if (master && control_path != NULL)
        g_hash_table_insert (masters, pid, g_strdup (control_path));
    }

  return masters;
}

/* The only master running, which must be there. */
static GPid
the_master (char **control_path)
{
  g_autoptr(GHashTable) masters = find_masters ();
  GHashTableIter iter;
  gpointer pid, path;

  g_assert_cmpuint (g_hash_table_size (masters), ==, 1);
  g_hash_table_iter_init (&iter, masters);
  g_assert_true (g_hash_table_iter_next (&iter, &pid, &path));
  if (control_path != NULL)
    *control_path = g_strdup (path);
  return GPOINTER_TO_INT (pid);
}

static guint
count_ssh_processes (void)
{
  g_autoptr(GHashTable) descendants = collect_descendants (getpid ());
  GHashTableIter iter;
  gpointer comm;
  guint n = 0;

  g_hash_table_iter_init (&iter, descendants);
  while (g_hash_table_iter_next (&iter, NULL, &comm))
    n += g_strcmp0 (comm, "ssh") == 0;
  return n;
}

/* What sshd says the session's connection is: the client's address and
 * port, the same for every session on one connection. */
static char *
session_connection (TerretExecutor *executor,
                    const char     *session)
{
  g_autoptr(TerretResult) result = terret_test_run_in (executor, session, "echo \"$SSH_CONNECTION\"", 0);
  gsize len = 0;
  const char *out = g_bytes_get_data (terret_result_get_stdout (result), &len);

  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  g_assert_cmpuint (len, >, 1);
  return g_strndup (out, len);
}

/* The sshd of the fixture again, with @line in its configuration instead
 * of any line with the same keyword (sshd takes a keyword's first). */
static void
sshd_restart_with (Fixture    *fixture,
                   const char *line)
{
  g_autofree char *config = NULL;
  g_autofree char *keyword = g_strndup (line, strcspn (line, " "));
  g_auto(GStrv) lines = NULL;
  g_autoptr(GString) changed = g_string_new (NULL);

  sshd_kill (fixture, TRUE);
  g_assert_true (g_file_get_contents (fixture->sshd_config, &config, NULL, NULL));
  lines = g_strsplit (config, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_autofree char *prefix = g_strconcat (keyword, " ", NULL);

      if (*lines[i] != '\0' && !g_str_has_prefix (lines[i], prefix))
        g_string_append_printf (changed, "%s\n", lines[i]);
    }
  g_string_append_printf (changed, "%s\n", line);
  write_file (fixture->sshd_config, changed->str);
  sshd_start (fixture);
}

/* Starts @n sessions at once, each printing its connection, and returns
 * how many connections they were on; every one must answer. */
static guint
run_burst (TerretExecutor *executor,
           guint           n)
{
  g_autoptr(GPtrArray) requests = g_ptr_array_new_with_free_func (g_object_unref);
  g_autoptr(GHashTable) connections = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GAsyncResult **results = g_new0 (GAsyncResult *, n);

  for (guint i = 0; i < n; i++)
    {
      g_autofree char *key = g_strdup_printf ("burst-%u", i);
      TerretRequest *request = terret_request_new ("echo \"$SSH_CONNECTION\"");

      terret_request_set_session (request, key);
      g_ptr_array_add (requests, request);
      terret_executor_run_async (executor, request, NULL, store_result, &results[i]);
    }
  for (guint i = 0; i < n; i++)
    while (results[i] == NULL)
      g_main_context_iteration (NULL, TRUE);

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(TerretResult) result = terret_executor_run_finish (executor, results[i], &error);
      gsize len = 0;
      const char *out;

      g_assert_no_error (error);
      g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
      out = g_bytes_get_data (terret_result_get_stdout (result), &len);
      g_assert_cmpuint (len, >, 1);
      g_hash_table_add (connections, g_strndup (out, len));
      g_object_unref (results[i]);
    }
  g_free (results);

  return g_hash_table_size (connections);
}

/* Every connection the sessions were on is a master's: none of them
 * fell back to a connection of its own. */
static void
assert_all_on_masters (guint connections)
{
  g_autoptr(GHashTable) masters = find_masters ();

  g_assert_cmpuint (connections, <=, g_hash_table_size (masters));
}

static void
test_multiplex_burst (Fixture       *fixture,
                      gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  guint connections;

  g_test_summary ("64 sessions started at once all answer, against an sshd with the default "
                  "MaxStartups (which drops logins beyond 10 at once): they share a few "
                  "master connections, at most 8 sessions on each.");
  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);
  /* What is asserted is that every session answers, not how soon: 64
   * remote logins' shells starting at once on a small, busy machine may
   * take longer than the default handshake allows. */
  set_setting (executor, "handshake-timeout", "600");

  connections = run_burst (executor, 64);
  g_test_message ("64 sessions on %u connections", connections);
  g_assert_cmpuint (connections, <=, 64 / 8);
  assert_all_on_masters (connections);
}

/* A server that takes fewer sessions per connection than a master is
 * sent: the sessions it refuses go to other masters, and one that takes
 * none at all fails saying so. */
static void
test_multiplex_refused (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  guint connections;

  SKIP_WITHOUT_SSHD (fixture);
  sshd_restart_with (fixture, "MaxSessions 2");
  executor = new_executor (fixture);

  connections = run_burst (executor, 6);
  g_test_message ("6 sessions on %u connections", connections);
  g_assert_cmpuint (connections, >=, 3);
  assert_all_on_masters (connections);

  g_clear_object (&executor);
  sshd_restart_with (fixture, "MaxSessions 0");
  executor = new_executor (fixture);
  assert_run_fails (executor, TERRET_EXEC_ERROR_UNAVAILABLE, "refused", "session", NULL);
}

typedef struct
{
  const char *word;
  GString *seen;
  GPid master;
  gboolean killed;
} MasterKillState;

static void
kill_master_once_started (TerretRequest *request,
                          TerretStream   stream,
                          GBytes        *data,
                          gpointer       user_data)
{
  MasterKillState *state = user_data;
  gsize len;
  const char *bytes = g_bytes_get_data (data, &len);

  g_string_append_len (state->seen, bytes, len);
  if (!state->killed && strstr (state->seen->str, "started\n") != NULL)
    {
      await_process_with_arg (state->word);
      state->killed = TRUE;
      kill (state->master, SIGKILL);
    }
}

/* The master dies under a command: the run ends as when a connection is
 * lost, and the next run opens another master. */
static void
test_multiplex_master_dies (Fixture       *fixture,
                            gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *word = unique_sleep_arg ();
  g_autofree char *command = g_strdup_printf ("echo started; sleep %s; echo never", word);
  g_autoptr(TerretRequest) request = terret_request_new (command);
  g_autoptr(GAsyncResult) async_result = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(TerretResult) next = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GString) seen = g_string_new (NULL);
  g_autofree char *notice = NULL;
  MasterKillState state = { word, seen, 0, FALSE };
  GPid master;

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);
  terret_test_assert_terminal_run (executor, "export KEPT=1", 0, "");
  master = state.master = the_master (NULL);

  terret_request_set_timeout (request, 120);
  terret_request_set_progress_func (request, kill_master_once_started, &state, NULL);
  terret_executor_run_async (executor, request, NULL, store_result, &async_result);
  while (async_result == NULL)
    g_main_context_iteration (NULL, TRUE);

  result = terret_executor_run_finish (executor, async_result, &error);
  g_assert_no_error (error);
  g_assert_true (state.killed);
  g_assert_false (terret_result_get_exited (result));
  g_assert_false (terret_result_get_timed_out (result));
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "started\n");
  g_test_message ("%s", terret_result_get_notice (result));
  notice = g_ascii_strdown (terret_result_get_notice (result), -1);
  g_assert_nonnull (strstr (notice, "connection"));

  /* The connection went with the master, and the remote command with
   * the connection. */
  assert_no_process_with_arg (word);

  next = terret_test_run_ok (executor, "echo \"back [$KEPT]\"");
  g_assert_cmpint (terret_result_get_exit_status (next), ==, 0);
  terret_test_assert_bytes_str (terret_result_get_stdout (next), "back []\n");
  g_assert_cmpint (the_master (NULL), !=, master);
}

/* The master runs on its own, not in the session that opened it:
 * closing that session leaves the others on the same connection. */
static void
test_multiplex_opener_closed (Fixture       *fixture,
                              gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *word = unique_sleep_arg ();
  g_autofree char *command = g_strdup_printf ("sleep %s & echo started", word);
  g_autofree char *opener = NULL;
  g_autofree char *other = NULL;
  g_autofree char *after = NULL;
  g_autoptr(TerretResult) started = NULL;
  GPid master;

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);

  opener = session_connection (executor, "opener");
  other = session_connection (executor, "other");
  g_assert_cmpstr (opener, ==, other);
  master = the_master (NULL);
  started = terret_test_run_in (executor, "other", command, 0);
  await_process_with_arg (word);

  terret_executor_close_session (executor, "opener");

  after = session_connection (executor, "other");
  g_assert_cmpstr (after, ==, other);
  g_assert_cmpint (the_master (NULL), ==, master);
  g_assert_cmpuint (count_processes_with_arg (word), ==, 1);
  terret_test_assert_terminal_run (executor, "echo still", 0, "still\n");
}

/* Disposing the executor ends every master (asked to exit, so the server
 * sees a clean disconnect) and removes their private directory. */
static void
test_multiplex_dispose (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *control_path = NULL;
  g_autofree char *dir = NULL;
  g_autofree char *log = NULL;
  GStatBuf st;

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);
  g_object_unref (terret_test_run_in (executor, "a", "true", 0));
  g_object_unref (terret_test_run_in (executor, "b", "true", 0));
  the_master (&control_path);
  dir = g_path_get_dirname (control_path);
  g_assert_cmpint (g_stat (dir, &st), ==, 0);
  g_assert_cmpint (st.st_mode & 0777, ==, 0700);
  g_assert_true (g_file_test (control_path, G_FILE_TEST_EXISTS));
  g_assert_cmpuint (count_ssh_processes (), >, 0);

  g_clear_object (&executor);

  g_assert_cmpuint (count_ssh_processes (), ==, 0);
  g_assert_false (g_file_test (control_path, G_FILE_TEST_EXISTS));
  g_assert_false (g_file_test (dir, G_FILE_TEST_EXISTS));

  /* `ssh -O exit`: the master said goodbye before its unit ended. */
  for (guint i = 0; i < 1000; i++)
    {
      g_clear_pointer (&log, g_free);
      g_assert_true (g_file_get_contents (fixture->sshd_log, &log, NULL, NULL));
      if (strstr (log, "disconnected by user") != NULL)
        break;
      g_usleep (10 * 1000);
    }
  g_assert_nonnull (strstr (log, "disconnected by user"));
}

/* multiplex=false: a connection and a login per session, as before
 * multiplexing, and no master. */
static void
test_multiplex_off (Fixture       *fixture,
                    gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autoptr(GHashTable) masters = NULL;

  SKIP_WITHOUT_SSHD (fixture);
  write_executor_conf (fixture, "multiplex=false\n");
  {
    g_autoptr(GError) error = NULL;

    executor = terret_executor_new ("ssh", &error);
    g_assert_no_error (error);
  }

  first = session_connection (executor, "first");
  second = session_connection (executor, "second");
  g_assert_cmpstr (first, !=, second);
  masters = find_masters ();
  g_assert_cmpuint (g_hash_table_size (masters), ==, 0);
  terret_test_assert_terminal_run (executor, "echo \"$TERM\"; (exit 3)", 3, "dumb\n");

  /* And turned on for the sessions that start next. */
  set_setting (executor, "multiplex", "true");
  terret_executor_close_all (executor);
  g_clear_pointer (&first, g_free);
  g_clear_pointer (&second, g_free);
  first = session_connection (executor, "first");
  second = session_connection (executor, "second");
  g_assert_cmpstr (first, ==, second);
}

static guint
count_own_fds (void)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc/self/fd", 0, NULL);
  guint n = 0;

  g_assert_nonnull (dir);
  while (g_dir_read_name (dir) != NULL)
    n++;
  return n;
}

/* Sessions that come and go on a live master leave nothing behind in
 * the host: no descriptor, whichever context their runs were on. */
static void
test_multiplex_nothing_kept (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = NULL;
  guint before;

  SKIP_WITHOUT_SSHD (fixture);
  executor = new_executor (fixture);
  terret_test_assert_terminal_run (executor, "true", 0, "");
  g_object_unref (terret_test_run_in (executor, "warm", "true", 0));
  terret_executor_close_session (executor, "warm");
  before = count_own_fds ();

  for (guint i = 0; i < 20; i++)
    {
      g_autofree char *key = g_strdup_printf ("s%u", i);

      terret_test_assert_terminal_run (executor, "true", 0, "");
      g_object_unref (terret_test_run_in (executor, key, "true", 0));
      g_object_unref (terret_test_run_in (executor, key, "true", 0));
      terret_executor_close_session (executor, key);
    }

  g_assert_cmpuint (count_own_fds (), ==, before);
}

/* --- The conformance kit -------------------------------------------- */

/* The kit is built next to the CLI. */
static char *
conformance_kit_path (void)
{
  g_autofree char *tools = g_path_get_dirname (terret_test_cli_path ());

  return g_build_filename (tools, "terret-exec-conformance", NULL);
}

static void
test_conformance (Fixture       *fixture,
                  gconstpointer  data)
{
  g_autofree char *kit = conformance_kit_path ();
  g_autofree char *port = NULL;
  g_autofree char *identity = NULL;
  g_autofree char *known_hosts = NULL;
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  g_autoptr(GError) error = NULL;
  int wait_status = 0;

  SKIP_WITHOUT_SSHD (fixture);
  if (!g_file_test (kit, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_skip ("the conformance kit was not built");
      return;
    }

  port = g_strdup_printf ("port=%u", fixture->port);
  identity = g_strdup_printf ("identity-file=%s", fixture->client_key);
  known_hosts = g_strdup_printf ("known-hosts=%s", fixture->known_hosts);

  {
    const char *argv[] = {
      kit, "--backend", "ssh",
      "--set", "host=127.0.0.1",
      "--set", port,
      "--set", identity,
      "--set", known_hosts,
      "--set", "config-file=none",
      /* The unit holds the local ssh client, not the far shell: a
       * timed-out command hears ^C through the terminal, then the
       * connection's end, never SIGTERM (docs/stopping.md); a close
       * cannot name the far shell's jobs (an empty list), nor a look see
       * that a command waits for input there (unknown). */
      "-s", "/conformance/timeout/graceful",
      "-s", "/conformance/close/lists",
      "-s", "/conformance/interactive/input-waits",
      NULL
    };

    g_spawn_sync (NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                  &out, &err, &wait_status, &error);
  }
  g_assert_no_error (error);

  /* The kit's own TAP, for whoever reads this test's log. */
  g_test_message ("%s", out);
  if (!g_spawn_check_wait_status (wait_status, NULL))
    g_test_message ("%s", err);
  g_assert_null (strstr (out, "not ok"));
  g_assert_null (strstr (out, "Bail out!"));
  g_assert_nonnull (strstr (out, "ok 1 "));
  g_assert_true (g_spawn_check_wait_status (wait_status, NULL));
}

static void
test_capture_head_tail (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = new_executor (fixture);

  g_test_summary ("head-tail and keep-full-output over ssh, as on pty");
  terret_test_check_head_tail (executor, FALSE);
  terret_test_check_capture_mode (executor, TERRET_CAPTURE_MODE_TAIL);
}

static void
test_capture_omitted_errors (Fixture       *fixture,
                             gconstpointer  data)
{
  g_autoptr(TerretExecutor) executor = new_executor (fixture);

  g_test_summary ("the omitted middle's line count and error lines over ssh, as on pty");
  terret_test_check_omitted_errors (executor, FALSE);
}

int
main (int   argc,
      char *argv[])
{
  terret_test_init (&argc, &argv);

  /* A host that ignores SIGPIPE: the client must not inherit it. */
  signal (SIGPIPE, SIG_IGN);
  /* Set before any thread exists; no remote shell may see it. */
  g_setenv ("TERRET_SSH_HOST_ONLY", "leaked", TRUE);
  /* The runtime directory of the hosts the tests start (serve, the
   * conformance kit): one SIGKILLed leaves its control directory there,
   * which goes with the test's temporary files. */
  {
    g_autofree char *runtime = terret_test_make_tmpdir ();

    g_setenv ("XDG_RUNTIME_DIR", runtime, TRUE);
  }

#define TEST(path, func) \
  g_test_add ("/ssh/" path, Fixture, NULL, fixture_setup, func, fixture_teardown)

  TEST ("config/unconfigured", test_unconfigured);
  TEST ("config/invalid", test_invalid_settings);
  TEST ("run/exact", test_exact);
  TEST ("run/persistence", test_persistence);
  TEST ("run/shell-state", test_shell_state);
  TEST ("containment/ends", test_containment);
  TEST ("containment/launcher", test_containment_launcher);
  TEST ("containment/host-killed", test_containment_host_killed);
  TEST ("limits/remote", test_limits);
  TEST ("run/cwd-and-env", test_cwd_and_env);
  TEST ("run/timeout", test_timeout);
  TEST ("run/busy", test_busy);
  TEST ("run/shell-exit", test_shell_exit);
  TEST ("close/ends-remote", test_close_ends_remote);
  TEST ("unavailable/refused", test_refused);
  TEST ("unavailable/wrong-key", test_wrong_key);
  TEST ("unavailable/host-key-changed", test_host_key_changed);
  TEST ("unavailable/host-key-unknown", test_host_key_unknown);
  TEST ("dropped/reconnect", test_connection_dropped);
  TEST ("dropped/detached", test_connection_dropped_detached);
  TEST ("capture/head-tail", test_capture_head_tail);
  TEST ("capture/omitted-errors", test_capture_omitted_errors);
  TEST ("multiplex/burst", test_multiplex_burst);
  TEST ("multiplex/refused", test_multiplex_refused);
  TEST ("multiplex/master-dies", test_multiplex_master_dies);
  TEST ("multiplex/opener-closed", test_multiplex_opener_closed);
  TEST ("multiplex/dispose", test_multiplex_dispose);
  TEST ("multiplex/off", test_multiplex_off);
  TEST ("multiplex/nothing-kept", test_multiplex_nothing_kept);
  TEST ("conformance", test_conformance);

#undef TEST

  return g_test_run ();
}
