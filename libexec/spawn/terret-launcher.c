/* terret-launcher.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gio/gio.h>

#include "terret-launcher-wire.h"
#include "terret-enum-types.h"
#include "terret-error.h"
#include "terret-launcher-private.h"
#include "terret-process-private.h"

/**
 * TerretLauncher:
 *
 * Holds what a process is started with (its environment, working
 * directory and descriptors) and starts it, as a #GSubprocessLauncher
 * does: a backend fills one in, spawns, and drops it.
 *
 * A backend does not create its own: a [class@Terret.ShellChannel] is
 * handed one for its shell, filled in from the executor's settings, and
 * the process it spawns runs under the executor's launcher process, so
 * it is contained with everything it starts (see [class@Terret.Process]).
 * [ctor@Terret.Launcher.new] gives one for a process of the host's own.
 *
 * Descriptors given with [method@Terret.Launcher.take_fd] and
 * [method@Terret.Launcher.take_terminal] belong to the launcher, which
 * closes them once it has spawned, or is disposed. A process's standard
 * streams it was not given read and write `/dev/null`; no other
 * descriptor of the host reaches it.
 *
 * Since: 0.2
 */

/* The limits, by bit number of TerretLimits; the launcher program names
 * each by its flag's nick. */
#define N_LIMITS 5

G_STATIC_ASSERT (TERRET_LIMIT_MEMORY == TERRET_WIRE_LIMIT_MEMORY);
G_STATIC_ASSERT (TERRET_LIMIT_PROCESSES == TERRET_WIRE_LIMIT_PROCESSES);
G_STATIC_ASSERT (TERRET_LIMIT_CPU == TERRET_WIRE_LIMIT_CPU);
G_STATIC_ASSERT (TERRET_LIMIT_FILE_SIZE == TERRET_WIRE_LIMIT_FILE_SIZE);
G_STATIC_ASSERT (TERRET_LIMIT_OPEN_FILES == TERRET_WIRE_LIMIT_OPEN_FILES);

struct _TerretLauncher
{
  GObject parent_instance;

  TerretLauncherLink *link;   /* (owned) */
  GStrv environ;                 /* (owned) */
  char *cwd;                     /* (owned) (nullable) */
  GArray *fds;                   /* (element-type FdMapping) taken descriptors */
  int terminal;                  /* taken, or -1 */
  guint64 limits[N_LIMITS];      /* by bit number of TerretLimits; 0: none */
  guint stop_grace_msec;         /* the unit's own stop when the host is gone; 0: SIGKILL */
};

typedef struct
{
  int source;
  int target;
} FdMapping;


G_DEFINE_FINAL_TYPE (TerretLauncher, terret_launcher, G_TYPE_OBJECT)

static void
terret_launcher_finalize (GObject *object)
{
  TerretLauncher *self = TERRET_LAUNCHER (object);

  for (guint i = 0; i < self->fds->len; i++)
    close (g_array_index (self->fds, FdMapping, i).source);
  if (self->terminal >= 0)
    close (self->terminal);

  g_clear_pointer (&self->fds, g_array_unref);
  g_clear_pointer (&self->environ, g_strfreev);
  g_clear_pointer (&self->cwd, g_free);
  g_clear_pointer (&self->link, _terret_launcher_link_unref);

  G_OBJECT_CLASS (terret_launcher_parent_class)->finalize (object);
}

static void
terret_launcher_class_init (TerretLauncherClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = terret_launcher_finalize;
}

static void
terret_launcher_init (TerretLauncher *self)
{
  self->environ = g_get_environ ();
  self->fds = g_array_new (FALSE, FALSE, sizeof (FdMapping));
  self->terminal = -1;
}

TerretLauncher *
_terret_launcher_new_for (TerretLauncherLink *launcher_link)
{
  TerretLauncher *self = g_object_new (TERRET_TYPE_LAUNCHER, NULL);

  self->link = _terret_launcher_link_ref (launcher_link);
  return self;
}

/* Whether the process will run on a far side (see TerretFarSide). */
gboolean
_terret_launcher_is_far (TerretLauncher *self)
{
  return _terret_launcher_link_is_far (self->link);
}

/**
 * terret_launcher_new:
 *
 * Creates a launcher for a process of the host's own, contained as the
 * processes of executors are, under a launcher process shared by the
 * whole host process. It starts with the host's environment.
 *
 * Returns: (transfer full): a new launcher
 *
 * Since: 0.2
 */
TerretLauncher *
terret_launcher_new (void)
{
  return _terret_launcher_new_for (_terret_launcher_link_get_default ());
}

/**
 * terret_launcher_get_environ:
 * @self: a launcher
 *
 * Gets the whole environment the process will start with.
 *
 * Returns: (array zero-terminated=1) (transfer none): the environment
 *
 * Since: 0.2
 */
const char * const *
terret_launcher_get_environ (TerretLauncher *self)
{
  g_return_val_if_fail (TERRET_IS_LAUNCHER (self), NULL);

  return (const char * const *)self->environ;
}

/**
 * terret_launcher_set_environ:
 * @self: a launcher
 * @envp: (array zero-terminated=1) (nullable): the whole environment,
 *   `VARIABLE=value` entries, or %NULL for none at all
 *
 * Replaces the environment the process will start with.
 *
 * Since: 0.2
 */
void
terret_launcher_set_environ (TerretLauncher     *self,
                             const char * const *envp)
{
  g_return_if_fail (TERRET_IS_LAUNCHER (self));

  g_strfreev (self->environ);
  self->environ = envp != NULL ? g_strdupv ((char **)envp) : g_new0 (char *, 1);
}

/**
 * terret_launcher_getenv:
 * @self: a launcher
 * @variable: (type filename): a variable's name
 *
 * Gets a variable of the environment the process will start with.
 *
 * Returns: (nullable) (type filename): its value, or %NULL when unset
 *
 * Since: 0.2
 */
const char *
terret_launcher_getenv (TerretLauncher *self,
                        const char     *variable)
{
  g_return_val_if_fail (TERRET_IS_LAUNCHER (self), NULL);
  g_return_val_if_fail (variable != NULL, NULL);

  return g_environ_getenv (self->environ, variable);
}

/**
 * terret_launcher_setenv:
 * @self: a launcher
 * @variable: (type filename): a variable's name, without `=`
 * @value: (type filename): its value
 *
 * Sets a variable of the environment the process will start with.
 *
 * Since: 0.2
 */
void
terret_launcher_setenv (TerretLauncher *self,
                        const char     *variable,
                        const char     *value)
{
  g_return_if_fail (TERRET_IS_LAUNCHER (self));
  g_return_if_fail (variable != NULL && *variable != '\0' && strchr (variable, '=') == NULL);
  g_return_if_fail (value != NULL);

  self->environ = g_environ_setenv (self->environ, variable, value, TRUE);
}

/**
 * terret_launcher_unsetenv:
 * @self: a launcher
 * @variable: (type filename): a variable's name
 *
 * Removes a variable from the environment the process will start with.
 *
 * Since: 0.2
 */
void
terret_launcher_unsetenv (TerretLauncher *self,
                          const char     *variable)
{
  g_return_if_fail (TERRET_IS_LAUNCHER (self));
  g_return_if_fail (variable != NULL);

  self->environ = g_environ_unsetenv (self->environ, variable);
}

/**
 * terret_launcher_get_cwd:
 * @self: a launcher
 *
 * Gets the working directory the process will start in.
 *
 * Returns: (nullable) (type filename): the directory, or %NULL for the
 *   host's own
 *
 * Since: 0.2
 */
const char *
terret_launcher_get_cwd (TerretLauncher *self)
{
  g_return_val_if_fail (TERRET_IS_LAUNCHER (self), NULL);

  return self->cwd;
}

/**
 * terret_launcher_set_cwd:
 * @self: a launcher
 * @cwd: (nullable) (type filename): the directory, or %NULL for the
 *   host's own
 *
 * Sets the working directory the process will start in. One that cannot
 * be entered fails the spawn, naming it.
 *
 * Since: 0.2
 */
void
terret_launcher_set_cwd (TerretLauncher *self,
                         const char     *cwd)
{
  g_return_if_fail (TERRET_IS_LAUNCHER (self));

  g_free (self->cwd);
  self->cwd = g_strdup (cwd);
}

/**
 * terret_launcher_take_fd:
 * @self: a launcher
 * @source_fd: a descriptor of the host's; the launcher owns it from now on
 * @target_fd: the number it has in the process
 *
 * Gives the process a descriptor: @source_fd becomes @target_fd in it.
 * Standard streams not given read and write `/dev/null`.
 *
 * Since: 0.2
 */
void
terret_launcher_take_fd (TerretLauncher *self,
                         int             source_fd,
                         int             target_fd)
{
  FdMapping mapping = { source_fd, target_fd };

  g_return_if_fail (TERRET_IS_LAUNCHER (self));
  g_return_if_fail (source_fd >= 0 && target_fd >= 0);
  g_return_if_fail (self->fds->len + 1 < TERRET_WIRE_MAX_FDS - TERRET_WIRE_FD_CHILD);

  g_array_append_val (self->fds, mapping);
}

/**
 * terret_launcher_take_terminal:
 * @self: a launcher
 * @terminal_fd: the subsidiary side of a pseudo-terminal; the launcher
 *   owns it from now on
 *
 * Gives the process a terminal: @terminal_fd becomes its standard input,
 * output and error, and its controlling terminal, so ^C typed on it
 * reaches the process's group. Every process a launcher starts leads a
 * session of its own, which is what lets it have one.
 *
 * For an executor whose processes run on a far side (see
 * [class@Terret.FarSide]), @terminal_fd is instead one end of a socket
 * pair: the terminal is made there, in the modes a session's protocol
 * needs, and its bytes are carried over the socket both ways.
 *
 * Since: 0.2
 */
void
terret_launcher_take_terminal (TerretLauncher *self,
                               int             terminal_fd)
{
  g_return_if_fail (TERRET_IS_LAUNCHER (self));
  g_return_if_fail (terminal_fd >= 0);

  if (self->terminal >= 0)
    close (self->terminal);
  self->terminal = terminal_fd;
}

/* The index of @limit, a single TerretLimits flag, or -1. */
static int
limit_index (TerretLimits limit)
{
  for (int i = 0; i < N_LIMITS; i++)
    if (limit == (TerretLimits)(1u << i))
      return i;
  return -1;
}

/**
 * terret_launcher_get_limit:
 * @self: a launcher
 * @limit: one limit
 *
 * Returns: the value of @limit the process will start with, 0 when it
 *   is not limited
 *
 * Since: 0.2
 */
guint64
terret_launcher_get_limit (TerretLauncher *self,
                           TerretLimits    limit)
{
  int i = limit_index (limit);

  g_return_val_if_fail (TERRET_IS_LAUNCHER (self), 0);
  g_return_val_if_fail (i >= 0, 0);

  return self->limits[i];
}

/**
 * terret_launcher_set_limit:
 * @self: a launcher
 * @limit: one limit
 * @value: its value (bytes, processes, seconds or descriptors, as
 *   [flags@Terret.Limits] says), 0 for none
 *
 * Limits what the process and everything it starts may use. Memory and
 * processes are held by a cgroup of the process's own where the host
 * lets one be made (cgroup v2 with the controllers delegated, or v1 as
 * root); else by rlimits, which are weaker (see [flags@Terret.Limits]).
 * The others are rlimits, soft and hard alike, so nothing the process
 * runs can raise them. A channel that runs its shell elsewhere takes the
 * limits (reads them and sets them to 0 here) and applies them there.
 *
 * Since: 0.2
 */
void
terret_launcher_set_limit (TerretLauncher *self,
                           TerretLimits    limit,
                           guint64         value)
{
  int i = limit_index (limit);

  g_return_if_fail (TERRET_IS_LAUNCHER (self));
  g_return_if_fail (i >= 0);

  self->limits[i] = value;
}

/* Whether a unit could make a cgroup with @controller here, as
 * launcher/terret-launcher-cgroup.c would: v2 with the controller in
 * the subtree below the process's cgroup, or the v1 hierarchy, writable. */
static const char *
cgroup_kind (const char *controller)
{
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  const char *kind = NULL;

  if (!g_file_get_contents ("/proc/self/cgroup", &contents, NULL, NULL))
    return NULL;
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL && kind == NULL; i++)
    {
      g_auto(GStrv) fields = g_strsplit (lines[i], ":", 3);
      g_auto(GStrv) names = NULL;
      g_autofree char *dir = NULL;

      if (g_strv_length (fields) != 3)
        continue;
      if (fields[1][0] == '\0')
        {
          g_autofree char *control = NULL;
          g_autofree char *enabled = NULL;
          g_auto(GStrv) words = NULL;

          dir = g_build_filename (g_file_test ("/sys/fs/cgroup/cgroup.controllers", G_FILE_TEST_EXISTS)
                                  ? "/sys/fs/cgroup" : "/sys/fs/cgroup/unified", fields[2], NULL);
          control = g_build_filename (dir, "cgroup.subtree_control", NULL);
          if (!g_file_get_contents (control, &enabled, NULL, NULL))
            continue;
          words = g_strsplit_set (g_strstrip (enabled), " ", -1);
          if (g_strv_contains ((const char * const *)words, controller) && access (dir, W_OK) == 0)
            kind = "cgroup v2";
          continue;
        }
      names = g_strsplit (fields[1], ",", -1);
      if (!g_strv_contains ((const char * const *)names, controller))
        continue;
      dir = g_build_filename ("/sys/fs/cgroup", fields[1], fields[2], NULL);
      if (access (dir, W_OK) == 0)
        kind = "cgroup v1";
    }
  return kind;
}

/*
 * _terret_launcher_describe_containment:
 *
 * What holds here for a process the library starts: the containment and
 * how each limit is enforced, as --list-backends says it.
 */
char *
_terret_launcher_describe_containment (gboolean sandboxed)
{
  /* Inside a sandbox /sys is read-only: no unit can make a cgroup. */
  const char *memory = sandboxed ? NULL : cgroup_kind ("memory");
  const char *pids = sandboxed ? NULL : cgroup_kind ("pids");
  g_autofree char *memory_how = memory != NULL
    ? g_strdup_printf ("is held by a %s of the session's or run's own", memory)
    : g_strdup_printf ("is held as each process's address space (no cgroup can be made %s)",
                       sandboxed ? "inside the sandbox" : "here");
  g_autofree char *pids_how = pids != NULL
    ? g_strdup_printf ("by a %s", pids)
    : g_strdup (geteuid () == 0
                ? "not at all: no cgroup can be made here or in a sandbox, and the rlimit does "
                  "not hold for root"
                : "over all of the user's processes (no cgroup can be made here or in a sandbox)");

  return g_strdup_printf ("every process runs under terret-launcher, a child subreaper: what a "
                          "command starts, setsid, nohup and double-forked jobs included, ends with "
                          "its session or run, and when the host dies. limit-memory %s; "
                          "limit-processes %s; limit-cpu, limit-file-size and limit-open-files "
                          "are rlimits of each process.", memory_how, pids_how);
}

static void
add_record (GString    *payload,
            const char *key,
            const char *value)
{
  g_string_append_len (payload, key, strlen (key) + 1);
  g_string_append_len (payload, value, strlen (value) + 1);
}

static int
write_payload (TerretLauncher      *self,
               const char          *program,
               const char * const  *argv,
               GError             **error)
{
  g_autoptr(GString) payload = g_string_sized_new (4096);
  guint child = 0;
  int fd;

  add_record (payload, TERRET_WIRE_KEY_ARG, program);
  for (guint i = 1; argv[i] != NULL; i++)
    add_record (payload, TERRET_WIRE_KEY_ARG, argv[i]);
  for (guint i = 0; self->environ[i] != NULL; i++)
    add_record (payload, TERRET_WIRE_KEY_ENV, self->environ[i]);
  if (self->cwd != NULL)
    add_record (payload, TERRET_WIRE_KEY_CWD, self->cwd);

  for (guint i = 0; i < self->fds->len; i++, child++)
    {
      g_autofree char *value = g_strdup_printf ("%u %d", child,
                                                g_array_index (self->fds, FdMapping, i).target);

      add_record (payload, TERRET_WIRE_KEY_FD, value);
    }
  if (self->terminal >= 0)
    {
      g_autofree char *value = g_strdup_printf ("%u", child);

      add_record (payload, TERRET_WIRE_KEY_TERMINAL, value);
    }

  for (guint i = 0; i < N_LIMITS; i++)
    {
      g_autoptr(GFlagsClass) limits = NULL;
      g_autofree char *value = NULL;

      if (self->limits[i] == 0)
        continue;
      limits = g_type_class_ref (TERRET_TYPE_LIMITS);
      value = g_strdup_printf ("%s %" G_GUINT64_FORMAT,
                               g_flags_get_first_value (limits, 1u << i)->value_nick,
                               self->limits[i]);
      add_record (payload, TERRET_WIRE_KEY_LIMIT, value);
    }

  if (self->stop_grace_msec > 0)
    {
      g_autofree char *value = g_strdup_printf ("%u", self->stop_grace_msec);

      add_record (payload, TERRET_WIRE_KEY_STOP_GRACE, value);
    }

  /* A memfd rather than the message itself: an argument vector or an
   * environment has no size a socket buffer is sure to take. */
  fd = memfd_create ("terret-spawn", MFD_CLOEXEC);
  if (fd < 0 || write (fd, payload->str, payload->len) != (gssize)payload->len)
    {
      int saved_errno = errno;

      if (fd >= 0)
        close (fd);
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                   "Could not hand the launcher its request: %s", g_strerror (saved_errno));
      return -1;
    }

  return fd;
}

/* The grace of the stop the process's unit runs on its own when the
 * host is gone (the host died or closed without a word): as the
 * session's close, bounded by the unit. */
void
_terret_launcher_set_stop_grace (TerretLauncher *self,
                                 double          seconds)
{
  self->stop_grace_msec = (guint)(CLAMP (seconds, 0, 3600) * 1000);
}

static const char *
describe_stage (int stage)
{
  switch (stage)
    {
    case TERRET_WIRE_STAGE_REQUEST:
      return "the launcher refused the request";
    case TERRET_WIRE_STAGE_FORK:
      return "could not fork";
    case TERRET_WIRE_STAGE_SESSION:
      return "could not give it a session of its own";
    case TERRET_WIRE_STAGE_TERMINAL:
      return "could not give it its terminal";
    case TERRET_WIRE_STAGE_DESCRIPTORS:
      return "could not give it its descriptors";
    case TERRET_WIRE_STAGE_LIMITS:
      return "could not set its resource limits";
    default:
      return "could not start it";
    }
}

/* The unit's first word: STARTED with the pid, or FAILED with why. */
static GPid
read_start (int          unit_fd,
            const char  *program,
            const char  *cwd,
            GError     **error)
{
  /* The unit answers as soon as exec happened or failed; the bound is
   * for a launcher stuck in the kernel, never met otherwise. */
  struct pollfd pfd = { unit_fd, POLLIN, 0 };
  TerretWireRecord record = { 0 };
  GPid seen = 0;
  ssize_t n = -1;
  int ret;

  for (;;)
    {
      char control[CMSG_SPACE (sizeof (struct ucred))];
      struct iovec iov = { &record, sizeof record };
      struct msghdr msg = { 0 };

      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;

      n = -1;
      do
        ret = poll (&pfd, 1, 30 * 1000);
      while (ret < 0 && errno == EINTR);
      if (ret > 0)
        do
          n = recvmsg (unit_fd, &msg, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);

      if (n != sizeof record || record.type != TERRET_WIRE_EVENT_PID)
        break;

      /* The process's own word: the kernel's credentials on it carry its
       * pid in this namespace, whatever namespace it runs in. */
      for (struct cmsghdr *c = CMSG_FIRSTHDR (&msg); c != NULL; c = CMSG_NXTHDR (&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS)
          {
            struct ucred cred;

            memcpy (&cred, CMSG_DATA (c), sizeof cred);
            seen = cred.pid;
          }
    }

  if (n == sizeof record && record.type == TERRET_WIRE_EVENT_STARTED && record.a > 0)
    return seen > 0 ? seen : record.a;

  if (n == sizeof record && record.type == TERRET_WIRE_EVENT_FAILED)
    {
      if (record.b == TERRET_WIRE_STAGE_CWD)
        g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                     "Could not enter the working directory “%s”: %s", cwd,
                     g_strerror (record.a));
      else if (record.b == TERRET_WIRE_STAGE_EXEC)
        g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                     "Could not run %s: %s", program, g_strerror (record.a));
      else
        g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                     "Could not run %s: %s: %s", program, describe_stage (record.b),
                     g_strerror (record.a));
      return 0;
    }

  g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
               "Could not run %s: the launcher ended before it started", program);
  return 0;
}

/* Where @name is in PATH. Searching costs a stat or an access call for
 * every PATH entry before the one that holds it, on every run; the last
 * answer per name is kept, for as long as PATH is what it was and the
 * file is still there and executable (one access call), so a oneshot run
 * pays for the search once per process rather than once per command.
 * A name with a slash is found from the cwd, which moves: never kept. */
static char *
find_program (const char *name)
{
  G_LOCK_DEFINE_STATIC (found);
  static GHashTable *found = NULL;     /* name -> "PATH\0path" */
  const char *path_env = g_getenv ("PATH");
  g_autofree char *cached = NULL;
  char *program;

  if (strchr (name, '/') != NULL)
    return g_find_program_in_path (name);
  if (path_env == NULL)
    path_env = "";

  G_LOCK (found);
  if (found != NULL)
    {
      const char *entry = g_hash_table_lookup (found, name);

      if (entry != NULL && g_str_equal (entry, path_env))
        cached = g_strdup (entry + strlen (entry) + 1);
    }
  G_UNLOCK (found);

  if (cached != NULL && access (cached, X_OK) == 0)
    return g_steal_pointer (&cached);

  program = g_find_program_in_path (name);
  if (program != NULL)
    {
      gsize env_len = strlen (path_env);
      gsize program_len = strlen (program);
      char *entry = g_malloc (env_len + program_len + 2);

      memcpy (entry, path_env, env_len + 1);
      memcpy (entry + env_len + 1, program, program_len + 1);
      G_LOCK (found);
      if (found == NULL)
        found = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
      g_hash_table_replace (found, g_strdup (name), entry);
      G_UNLOCK (found);
    }
  return program;
}

/**
 * terret_launcher_spawn:
 * @self: a launcher
 * @argv: (array zero-terminated=1): the argument vector; `argv[0]` is a
 *   path, or a name looked up in the host's `PATH`
 * @error: return location for a #GError
 *
 * Starts a process with what the launcher holds. It leads a session and
 * process group of its own and starts with default signal dispositions,
 * whatever the host's are. The descriptors the launcher took are closed
 * here, whether or not the spawn worked.
 *
 * Returns: (transfer full): the process, or %NULL with
 *   %TERRET_EXEC_ERROR_FAILED saying what failed (a program not found, a
 *   working directory that cannot be entered, ...) or
 *   %TERRET_EXEC_ERROR_UNAVAILABLE when the launcher process cannot run
 *
 * Since: 0.2
 */
TerretProcess *
terret_launcher_spawn (TerretLauncher      *self,
                       const char * const  *argv,
                       GError             **error)
{
  g_autofree char *program = NULL;
  int child_fds[TERRET_WIRE_MAX_FDS];
  guint n_child_fds = 0;
  int payload_fd = -1;
  int pair[2] = { -1, -1 };
  GPid pid = 0;

  g_return_val_if_fail (TERRET_IS_LAUNCHER (self), NULL);
  g_return_val_if_fail (argv != NULL && argv[0] != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  for (guint i = 0; i < self->fds->len; i++)
    child_fds[n_child_fds++] = g_array_index (self->fds, FdMapping, i).source;
  if (self->terminal >= 0)
    child_fds[n_child_fds++] = self->terminal;

  /* A far side looks a name up in its own PATH. */
  if (_terret_launcher_link_is_far (self->link) || g_path_is_absolute (argv[0]))
    program = g_strdup (argv[0]);
  else
    program = find_program (argv[0]);
  if (program == NULL)
    g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                 "Could not run “%s”: it was not found in PATH", argv[0]);
  else if ((payload_fd = write_payload (self, program, argv, error)) >= 0)
    {
      int on = 1;

      if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0 ||
          setsockopt (pair[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof on) < 0)
        {
          int saved_errno = errno;

          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                       "Could not create a socket for the process: %s", g_strerror (saved_errno));
        }
      else if (_terret_launcher_link_spawn (self->link, payload_fd, pair[1],
                                         child_fds, n_child_fds, error) > 0)
        {
          /* Only the unit may hold its end: its EOF on ours is the news
           * that nothing is left. */
          close (pair[1]);
          pair[1] = -1;
          pid = read_start (pair[0], program, self->cwd, error);
        }
    }

  /* Taken, so closed: the process has its own copies now, or none. */
  for (guint i = 0; i < n_child_fds; i++)
    close (child_fds[i]);
  g_array_set_size (self->fds, 0);
  self->terminal = -1;
  if (payload_fd >= 0)
    close (payload_fd);
  if (pair[1] >= 0)
    close (pair[1]);

  if (pid <= 0)
    {
      if (pair[0] >= 0)
        close (pair[0]);
      return NULL;
    }

  return _terret_process_new (pid, pair[0], _terret_launcher_link_is_far (self->link));
}
