/* terret-sandbox.c: where commands may reach, through bubblewrap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The commands are often a model's: the sandbox bounds what they can
 * touch. bubblewrap does the namespaces and mounts (the engine Flatpak
 * uses; writing that by hand would be writing bubblewrap again). What is
 * here is the policy: which bwrap arguments a `sandbox`, `workspace`,
 * `writable`, `hidden`, `unhide`, `network` and `allow-unix-sockets`
 * setting mean, which seccomp filter goes with them
 * (terret-sandbox-filter.c), and the environment policy, which holds
 * with or without a sandbox.
 *
 * The sandbox is not set up per command: the executor's launcher itself
 * runs inside it (terret-launcher-link.c), one per policy, so every shell and
 * command it forks is inside already and a command costs what it costs
 * unsandboxed. A pty session's shell lives in it, and keeps its cd and
 * export from run to run. A sandbox that cannot be set up fails the run
 * as unavailable, saying why; nothing ever runs unsandboxed instead.
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "terret-error.h"
#include "terret-launcher-private.h"
#include "terret-sandbox-filter-private.h"
#include "terret-sandbox-private.h"

/* Hidden by default under a sandbox: the keys, tokens and agents a
 * command has no business with. Relative to HOME: */
static const char * const default_hidden_home[] = {
  ".ssh", ".gnupg",                     /* keys and their agents' sockets */
  ".aws", ".azure", ".config/gcloud",   /* cloud accounts */
  ".kube",                              /* cluster credentials */
  ".docker/config.json", ".docker/run", /* registry logins, Docker Desktop's socket */
  ".config/containers/auth.json",       /* podman's registry logins */
  ".netrc", ".git-credentials", ".config/git/credentials", /* git and curl passwords */
  ".config/gh",                         /* GitHub CLI token */
  ".npmrc", ".pypirc", ".gem/credentials", /* package registries' tokens */
  ".cargo/credentials", ".cargo/credentials.toml",
  ".pgpass", ".my.cnf",                 /* database passwords */
  ".vault-token", ".terraform.d/credentials.tfrc.json",
  ".password-store", ".local/share/keyrings", /* pass, GNOME Keyring */
  NULL
};

/* The host's own sockets that are its root or a user's session: the
 * container engines (root of the host), systemd's and D-Bus's. */
static const char * const default_hidden_host[] = {
  "/run/docker.sock", "/var/run/docker.sock", "/run/podman/podman.sock",
  "/run/containerd/containerd.sock", "/run/crio/crio.sock", "/run/dbus/system_bus_socket",
  "/run/systemd/private", NULL
};

/* In $XDG_RUNTIME_DIR: a name, or a prefix ending in '*'. */
static const char * const default_hidden_runtime[] = {
  "bus", "docker.sock", "podman", "containers", "gnupg", "keyring", "systemd", "wayland-*",
  "pulse", "pipewire-*", NULL
};

static const char * const default_env_exclude[] = {
  "*KEY*", "*SECRET*", "*TOKEN*", "*PASSWORD*", "*CREDENTIAL*", NULL
};

static const char * const core_environ[] = {
  "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TERM", "TMPDIR", "TZ", NULL
};

/* --- The environment ---------------------------------------------------- */

static gboolean
is_core (const char *name)
{
  return g_strv_contains (core_environ, name) || g_str_has_prefix (name, "LC_");
}

/*
 * _terret_sandbox_filter_environ:
 *
 * The host's environment @envp (consumed) as the env-policy and
 * env-exclude settings leave it. The env setting goes on top afterwards,
 * so what the caller asks for explicitly is never dropped.
 */
char **
_terret_sandbox_filter_environ (const TerretSettings *settings,
                                char                **envp)
{
  const char * const *exclude = settings->env_exclude != NULL
    ? (const char * const *)settings->env_exclude
    : settings->sandbox != TERRET_SANDBOX_NONE ? default_env_exclude : NULL;
  g_autoptr(GPtrArray) kept = g_ptr_array_new ();

  if (settings->env_policy == TERRET_ENV_POLICY_INHERIT && (exclude == NULL || exclude[0] == NULL))
    return envp;

  for (guint i = 0; envp[i] != NULL; i++)
    {
      const char *eq = strchr (envp[i], '=');
      g_autofree char *name = g_strndup (envp[i], eq != NULL ? (gsize)(eq - envp[i]) : strlen (envp[i]));
      gboolean keep = settings->env_policy == TERRET_ENV_POLICY_INHERIT ||
                      (settings->env_policy == TERRET_ENV_POLICY_CORE && is_core (name));

      for (guint j = 0; keep && exclude != NULL && exclude[j] != NULL; j++)
        keep = !g_pattern_match_simple (exclude[j], name);
      if (keep)
        g_ptr_array_add (kept, g_strdup (envp[i]));
    }
  g_strfreev (envp);
  g_ptr_array_add (kept, NULL);
  return (char **)g_ptr_array_free (g_steal_pointer (&kept), FALSE);
}

/* --- The sandbox ------------------------------------------------------- */

static gboolean
has_entries (GStrv strv)
{
  return strv != NULL && strv[0] != NULL;
}

static gboolean
network_on (const TerretSettings *settings)
{
  return settings->network == TERRET_NETWORK_ON ||
         (settings->network == TERRET_NETWORK_DEFAULT && settings->sandbox == TERRET_SANDBOX_NONE);
}

static TerretSandboxFilter
filter_for (const TerretSettings *settings)
{
  TerretSandboxFilter flags = 0;

  if (settings->sandbox != TERRET_SANDBOX_NONE)
    flags |= TERRET_SANDBOX_FILTER_ESCAPES;
  if (!network_on (settings))
    flags |= TERRET_SANDBOX_FILTER_NETWORK;
  if (!network_on (settings) && has_entries (settings->allow_unix_sockets))
    flags |= TERRET_SANDBOX_FILTER_ALLOW_UNIX;
  return flags;
}

static void
add (GPtrArray  *argv,
     const char *word)
{
  g_ptr_array_add (argv, g_strdup (word));
}

static void
add_pair (GPtrArray  *argv,
          const char *option,
          const char *path)
{
  add (argv, option);
  add (argv, path);
  add (argv, path);
}

/* Hides @path, which exists: an empty directory over a directory,
 * /dev/null over anything else, so a file reads as empty (a device on a
 * plain bind, which is nodev, could not be opened at all, and a program
 * reading its configuration would fail on it). */
static void
add_hidden (GPtrArray  *argv,
            const char *path)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      add (argv, "--tmpfs");
      add (argv, path);
    }
  else
    {
      add (argv, "--dev-bind");
      add (argv, "/dev/null");
      add (argv, path);
    }
}

/* ~/ is HOME, in what a user writes and in the defaults alike. */
static char *
expand_home (const char *path)
{
  if (g_str_equal (path, "~"))
    return g_strdup (g_get_home_dir ());
  if (g_str_has_prefix (path, "~/"))
    return g_build_filename (g_get_home_dir (), path + 2, NULL);
  return g_strdup (path);
}

/* A unix socket's path in a variable such as DOCKER_HOST or
 * DBUS_SESSION_BUS_ADDRESS: unix://PATH or unix:path=PATH[,...]. */
static void
add_socket_variable (GPtrArray  *paths,
                     const char *name)
{
  const char *value = g_getenv (name);

  if (value == NULL)
    return;
  if (g_str_has_prefix (value, "unix://"))
    g_ptr_array_add (paths, g_strdup (value + strlen ("unix://")));
  else if (g_str_has_prefix (value, "unix:path="))
    g_ptr_array_add (paths, g_strndup (value + strlen ("unix:path="),
                                       strcspn (value + strlen ("unix:path="), ",")));
}

/* The paths hidden by default on this host, whether they exist or not. */
static GPtrArray *
default_hidden (void)
{
  GPtrArray *paths = g_ptr_array_new_with_free_func (g_free);
  const char *runtime = g_getenv ("XDG_RUNTIME_DIR");
  const char *agent = g_getenv ("SSH_AUTH_SOCK");

  for (guint i = 0; default_hidden_home[i] != NULL; i++)
    g_ptr_array_add (paths, g_build_filename (g_get_home_dir (), default_hidden_home[i], NULL));
  for (guint i = 0; default_hidden_host[i] != NULL; i++)
    g_ptr_array_add (paths, g_strdup (default_hidden_host[i]));
  if (agent != NULL && *agent != '\0')
    g_ptr_array_add (paths, g_strdup (agent));
  add_socket_variable (paths, "DBUS_SESSION_BUS_ADDRESS");
  add_socket_variable (paths, "DOCKER_HOST");
  add_socket_variable (paths, "CONTAINER_HOST");
  if (runtime != NULL && g_path_is_absolute (runtime))
    {
      g_autoptr(GDir) dir = g_dir_open (runtime, 0, NULL);
      const char *name;

      for (guint i = 0; default_hidden_runtime[i] != NULL; i++)
        if (!g_str_has_suffix (default_hidden_runtime[i], "*"))
          g_ptr_array_add (paths, g_build_filename (runtime, default_hidden_runtime[i], NULL));
      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        for (guint i = 0; default_hidden_runtime[i] != NULL; i++)
          if (g_str_has_suffix (default_hidden_runtime[i], "*") &&
              strncmp (name, default_hidden_runtime[i], strlen (default_hidden_runtime[i]) - 1) == 0)
            g_ptr_array_add (paths, g_build_filename (runtime, name, NULL));
    }
  /* X11's sockets are in /tmp, which is the sandbox's own. */
  return paths;
}

static gboolean
str_in (GPtrArray  *strings,
        const char *s)
{
  for (guint i = 0; i < strings->len; i++)
    if (g_str_equal (g_ptr_array_index (strings, i), s))
      return TRUE;
  return FALSE;
}

/* Adds @path to @hidden as the path it resolves to, once: what bwrap
 * mounts over is the file itself (/var/run/docker.sock is
 * /run/docker.sock). Nothing for what does not exist. */
static void
add_existing (GPtrArray  *hidden,
              const char *path)
{
  g_autofree char *real = NULL;
  struct stat st;

  /* One stat for the many defaults not on this host, before resolving. */
  if (!g_path_is_absolute (path) || stat (path, &st) < 0 || (real = realpath (path, NULL)) == NULL)
    return;
  if (!str_in (hidden, real))
    g_ptr_array_add (hidden, g_steal_pointer (&real));
}

/*
 * hidden_paths:
 *
 * What a sandbox under @settings hides, as existing resolved paths: the
 * defaults but those unhidden, then the hidden setting's. An unhide
 * entry that is not a default is an error, so a misspelt one is not
 * taken for done.
 */
static GPtrArray *
hidden_paths (const TerretSettings  *settings,
              GError               **error)
{
  g_autoptr(GPtrArray) defaults = default_hidden ();
  g_autoptr(GPtrArray) unhidden = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) hidden = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; settings->unhide != NULL && settings->unhide[i] != NULL; i++)
    {
      g_autofree char *path = expand_home (settings->unhide[i]);

      if (!str_in (defaults, path))
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                       "The unhide path “%s” is not one of the paths hidden by default "
                       "(terret-exec --check lists them)", settings->unhide[i]);
          return NULL;
        }
      g_ptr_array_add (unhidden, g_steal_pointer (&path));
    }

  for (guint i = 0; i < defaults->len; i++)
    if (!str_in (unhidden, g_ptr_array_index (defaults, i)))
      add_existing (hidden, g_ptr_array_index (defaults, i));
  for (guint i = 0; settings->hidden != NULL && settings->hidden[i] != NULL; i++)
    {
      g_autofree char *path = expand_home (settings->hidden[i]);

      add_existing (hidden, path);
    }
  return g_steal_pointer (&hidden);
}

static gboolean
is_socket (const char *path)
{
  struct stat st;

  return stat (path, &st) == 0 && S_ISSOCK (st.st_mode);
}

static gboolean
path_is_under (const char *path,
               const char *dir)
{
  gsize n = strlen (dir);

  return strncmp (path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* The sockets host services listen on by path, from the kernel's list
 * for this network namespace (/proc/net/unix: flag 0x10000 is
 * listening; a path starting with @ is abstract, cut off by the network
 * namespace already). */
static GPtrArray *
listening_sockets (void)
{
  GPtrArray *paths = g_ptr_array_new_with_free_func (g_free);
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;

  if (!g_file_get_contents ("/proc/net/unix", &contents, NULL, NULL))
    return paths;
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 1; lines[i] != NULL; i++)
    {
      g_auto(GStrv) fields = g_strsplit_set (lines[i], " ", -1);
      g_autoptr(GPtrArray) words = g_ptr_array_new ();

      for (guint j = 0; fields[j] != NULL; j++)
        if (*fields[j] != '\0')
          g_ptr_array_add (words, fields[j]);
      /* Num RefCount Protocol Flags Type St Inode Path */
      if (words->len < 8 || *(char *)g_ptr_array_index (words, 7) != '/')
        continue;
      if ((g_ascii_strtoull (g_ptr_array_index (words, 3), NULL, 16) & 0x10000) == 0)
        continue;
      if (!str_in (paths, g_ptr_array_index (words, 7)))
        g_ptr_array_add (paths, g_strdup (g_ptr_array_index (words, 7)));
    }
  return paths;
}

/* With the network off and allow-unix-sockets set, unix sockets work
 * again, so the host's must be out of sight but those allowed: /run (and
 * $XDG_RUNTIME_DIR) emptied, where services put theirs, and every other
 * listening one found now covered. Sockets a host service binds later
 * elsewhere than there or /tmp are not covered: --check says so. Returns
 * the arguments that bind the allowed ones back, for the end. */
static GPtrArray *
add_unix_socket_policy (GPtrArray             *argv,
                        const TerretSettings  *settings,
                        GError               **error)
{
  g_autoptr(GPtrArray) allowed = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) listening = NULL;
  g_autoptr(GPtrArray) back = g_ptr_array_new_with_free_func (g_free);
  const char *runtime = g_getenv ("XDG_RUNTIME_DIR");

  for (guint i = 0; settings->allow_unix_sockets[i] != NULL; i++)
    {
      g_autofree char *path = expand_home (settings->allow_unix_sockets[i]);
      g_autofree char *real = g_path_is_absolute (path) ? realpath (path, NULL) : NULL;

      if (real == NULL || !is_socket (real))
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                       "The allow-unix-sockets path “%s” is not an absolute path to a unix "
                       "socket that exists", settings->allow_unix_sockets[i]);
          return NULL;
        }
      add_pair (back, "--ro-bind", real);
      g_ptr_array_add (allowed, g_steal_pointer (&real));
    }

  if (g_file_test ("/run", G_FILE_TEST_IS_DIR))
    {
      add (argv, "--tmpfs");
      add (argv, "/run");
    }
  if (runtime != NULL && g_path_is_absolute (runtime) && !path_is_under (runtime, "/run") &&
      g_file_test (runtime, G_FILE_TEST_IS_DIR))
    {
      add (argv, "--tmpfs");
      add (argv, runtime);
    }

  listening = listening_sockets ();
  for (guint i = 0; i < listening->len; i++)
    {
      const char *path = g_ptr_array_index (listening, i);
      g_autofree char *real = realpath (path, NULL);

      if (real == NULL || str_in (allowed, real) || path_is_under (real, "/run") ||
          (settings->sandbox != TERRET_SANDBOX_NONE && path_is_under (real, "/tmp")) ||
          !is_socket (real))
        continue;
      add_hidden (argv, real);
    }
  return g_steal_pointer (&back);
}

static gboolean
check_path (const char  *setting,
            const char  *path,
            GError     **error)
{
  if (!g_path_is_absolute (path) || !g_file_test (path, G_FILE_TEST_EXISTS))
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                   "The %s path “%s” is not an absolute path that exists", setting, path);
      return FALSE;
    }
  return TRUE;
}

/*
 * _terret_sandbox_build_wrapper:
 * @filter: (out) (nullable): the seccomp filter bwrap is to load
 * @key: (out) (nullable): what tells this sandbox from another, for
 *   sharing a launcher among runs under the same one
 *
 * The bwrap command line the executor's launcher runs under for
 * @settings, up to its `--`; NULL with no error when there is no sandbox,
 * NULL with TERRET_EXEC_ERROR_UNAVAILABLE when bwrap is not there, or
 * _INVALID_CONFIG for a path that cannot be.
 */
char **
_terret_sandbox_build_wrapper (const TerretSettings  *settings,
                               GBytes               **filter,
                               char                 **key,
                               GError               **error)
{
  g_autoptr(GPtrArray) argv = NULL;
  g_autoptr(GPtrArray) hidden = NULL;
  g_autoptr(GPtrArray) sockets_back = NULL;
  g_autoptr(GBytes) program = NULL;
  g_autofree char *bwrap = NULL;
  g_autofree char *cwd = NULL;
  g_autofree char *stable = NULL;
  TerretSandboxFilter flags = filter_for (settings);
  guint n_stable;

  *filter = NULL;
  *key = NULL;
  if (flags == 0)
    return NULL;

  /* Inside, no cgroup can be made (/sys is read-only), and the rlimit
   * that stands in for one does not hold for root: refused rather than
   * run without the limit. */
  if (settings->limit_processes != 0 && settings->sandbox != TERRET_SANDBOX_NONE && geteuid () == 0)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                   "limit-processes cannot hold inside a sandbox for a host running as root "
                   "(no cgroup can be made there, and the process rlimit does not bind root): "
                   "unset limit-processes, or run without the sandbox");
      return NULL;
    }

  bwrap = g_find_program_in_path ("bwrap");
  if (bwrap == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "The sandbox and network settings need bubblewrap, and bwrap is not in PATH: "
                   "install it (Debian and Ubuntu: apt install bubblewrap; Fedora: dnf install "
                   "bubblewrap), or set sandbox=none and network=on");
      return NULL;
    }

  program = _terret_sandbox_filter_get (flags, error);
  if (program == NULL)
    return NULL;

  argv = g_ptr_array_new_with_free_func (g_free);
  add (argv, bwrap);
  /* Ends with the executor, or the host: nothing it holds outlives it.
   * A session of its own, so nothing inside can push input into the
   * host's terminal (TIOCSTI); every capability dropped, so a command
   * run by root cannot undo the mounts. */
  add (argv, "--die-with-parent");
  add (argv, "--new-session");
  add (argv, "--cap-drop");
  add (argv, "ALL");
  if (!network_on (settings))
    add (argv, "--unshare-net");

  if (settings->sandbox == TERRET_SANDBOX_NONE)
    {
      /* Only the network is cut: the filesystem is the host's. */
      add (argv, "--dev-bind");
      add (argv, "/");
      add (argv, "/");
    }
  else
    {
      add (argv, "--unshare-pid");
      /* The launcher is the namespace's init: a subreaper already, and
       * the one whose end ends everything in it (bwrap's own reaper would
       * be one more process to outlive things). Nothing inside can signal
       * it. */
      add (argv, "--as-pid-1");
      add (argv, "--unshare-ipc");
      add (argv, "--unshare-uts");
      add_pair (argv, "--ro-bind", "/");
      /* Its own /dev, with its own /dev/shm and ptys (and POSIX message
       * queues are the IPC namespace's); its own /proc, of the sandbox's
       * processes; its own /tmp. */
      add (argv, "--dev");
      add (argv, "/dev");
      add (argv, "--proc");
      add (argv, "/proc");
      add (argv, "--tmpfs");
      add (argv, "/tmp");
    }

  if (flags & TERRET_SANDBOX_FILTER_ALLOW_UNIX)
    {
      sockets_back = add_unix_socket_policy (argv, settings, error);
      if (sockets_back == NULL)
        return NULL;
    }

  if (settings->sandbox == TERRET_SANDBOX_READ_ONLY)
    {
      /* Still there to read and to start in, where the private /tmp
       * would have covered it. */
      const char *workspace = settings->workspace != NULL ? settings->workspace : settings->cwd;

      if (workspace != NULL && g_file_test (workspace, G_FILE_TEST_IS_DIR))
        add_pair (argv, "--ro-bind", workspace);
    }
  else if (settings->sandbox == TERRET_SANDBOX_WORKSPACE_WRITE)
    {
      const char *workspace = settings->workspace != NULL ? settings->workspace : settings->cwd;

      if (workspace == NULL)
        workspace = cwd = g_get_current_dir ();
      if (!check_path ("workspace", workspace, error))
        return NULL;
      add_pair (argv, "--bind", workspace);
      for (guint i = 0; settings->writable != NULL && settings->writable[i] != NULL; i++)
        {
          if (!check_path ("writable", settings->writable[i], error))
            return NULL;
          add_pair (argv, "--bind", settings->writable[i]);
        }
    }

  if (settings->sandbox != TERRET_SANDBOX_NONE)
    {
      hidden = hidden_paths (settings, error);
      if (hidden == NULL)
        return NULL;
      for (guint i = 0; i < hidden->len; i++)
        add_hidden (argv, g_ptr_array_index (hidden, i));
    }

  /* What the sandbox is, apart from the host sockets found at this
   * moment: a new one listening does not make another sandbox. */
  n_stable = argv->len;
  if (sockets_back != NULL)
    for (guint i = 0; i < sockets_back->len; i++)
      add (argv, g_ptr_array_index (sockets_back, i));
  add (argv, "--");
  g_ptr_array_add (argv, NULL);

  {
    g_autoptr(GString) joined = g_string_new (NULL);

    for (guint i = 0; i < n_stable; i++)
      g_string_append_printf (joined, "%s\x1f", (char *)g_ptr_array_index (argv, i));
    if (sockets_back != NULL)
      for (guint i = 0; i < sockets_back->len; i++)
        g_string_append_printf (joined, "%s\x1f", (char *)g_ptr_array_index (sockets_back, i));
    g_string_append_printf (joined, "seccomp=%u", flags);
    stable = g_string_free (g_steal_pointer (&joined), FALSE);
  }

  *filter = g_steal_pointer (&program);
  *key = g_steal_pointer (&stable);
  return (char **)g_ptr_array_free (g_steal_pointer (&argv), FALSE);
}

/* What is not blocked under @settings, said plainly; NULL when nothing. */
static char *
describe_not_blocked (const TerretSettings *settings)
{
  g_autoptr(GString) text = g_string_new (NULL);

  if (settings->sandbox != TERRET_SANDBOX_NONE)
    g_string_append (text, "a named pipe (FIFO) of the host that the user may write is writable "
                           "(a read-only mount does not cover pipes)");
  if (network_on (settings))
    g_string_append_printf (text, "%severy unix socket of the host, path and abstract, is "
                                  "reachable (network=on)", text->len > 0 ? "; " : "");
  else if (has_entries (settings->allow_unix_sockets))
    g_string_append_printf (text, "%sa unix socket a host service starts listening on after the "
                                  "sandbox started, outside /run%s, is reachable "
                                  "(allow-unix-sockets)", text->len > 0 ? "; " : "",
                            settings->sandbox != TERRET_SANDBOX_NONE ? " and /tmp" : "");
  return text->len > 0 ? g_string_free (g_steal_pointer (&text), FALSE) : NULL;
}

/*
 * _terret_sandbox_describe:
 *
 * The containment of a launcher under @settings, as
 * terret_executor_dup_containment() says it: the launcher's, and the
 * sandbox's when there is one, with what it hides here, the host sockets
 * left reachable, and what it does not block.
 */
char *
_terret_sandbox_describe (const TerretSettings *settings)
{
  gboolean sandboxed = settings->sandbox != TERRET_SANDBOX_NONE;
  gboolean network = network_on (settings);
  g_autofree char *launcher = _terret_launcher_describe_containment (sandboxed);
  g_autofree char *bwrap = g_find_program_in_path ("bwrap");
  g_autofree char *not_blocked = describe_not_blocked (settings);
  g_autoptr(GString) text = g_string_new (launcher);

  if (!sandboxed && network)
    return g_string_free (g_steal_pointer (&text), FALSE);

  g_string_append_printf (text, " Sandbox (bubblewrap%s): ",
                          bwrap != NULL ? "" : ", NOT INSTALLED: runs will fail unavailable");
  if (sandboxed)
    g_string_append_printf (text, "%s; its own PID, IPC and UTS namespaces, a session of its "
                                  "own, no capabilities; ",
                            settings->sandbox == TERRET_SANDBOX_WORKSPACE_WRITE
                            ? "the filesystem read-only but for the workspace and the writable "
                              "paths, a private /tmp, the hidden paths empty"
                            : "the filesystem read-only, a private /tmp, the hidden paths empty");
  else
    g_string_append (text, "the host's filesystem; ");
  g_string_append_printf (text, "network %s; a seccomp filter refusing %s%s%s.",
                          network ? "the host's" : "off (loopback only)",
                          sandboxed ? "what namespaces leave open (keyrings, ptrace, mounts, new "
                                      "namespaces, BPF, perf events, io_uring, userfaultfd, "
                                      "terminal input injection)" : "",
                          sandboxed && !network ? " and " : "",
                          network ? "" : "socket families a network namespace does not bound "
                                         "(unix sockets, vsock)");

  if (sandboxed)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GPtrArray) hidden = hidden_paths (settings, &error);

      if (hidden == NULL)
        g_string_append_printf (text, " Hidden: cannot say: %s", error->message);
      else if (hidden->len == 0)
        g_string_append (text, " Hidden: nothing (none of the credential stores and sockets "
                               "hidden by default is on this host).");
      else
        {
          g_string_append (text, " Hidden: ");
          for (guint i = 0; i < hidden->len; i++)
            g_string_append_printf (text, "%s%s", i > 0 ? ", " : "",
                                    (char *)g_ptr_array_index (hidden, i));
          g_string_append_c (text, '.');
        }
    }

  if (network)
    g_string_append (text, " Host unix sockets reachable: all (network=on).");
  else if (has_entries (settings->allow_unix_sockets))
    {
      g_autofree char *list = g_strjoinv (", ", settings->allow_unix_sockets);

      g_string_append_printf (text, " Host unix sockets reachable: %s (allow-unix-sockets; /run "
                                    "emptied, every other listening one hidden).", list);
    }
  else
    g_string_append (text, " Host unix sockets reachable: none (unix sockets are refused with "
                           "the network off).");

  if (not_blocked != NULL)
    g_string_append_printf (text, " Not blocked: %s.", not_blocked);
  return g_string_free (g_steal_pointer (&text), FALSE);
}

/*
 * _terret_sandbox_get_link:
 *
 * The launcher a process with @settings starts under, out of @pool: on
 * @far when there is one (where this host's sandbox settings are
 * refused), else the one inside the sandbox they ask for, started when
 * the policy is first asked for. Fails as _terret_sandbox_build_wrapper()
 * does.
 */
TerretLauncherLink *
_terret_sandbox_get_link (const TerretSettings    *settings,
                          TerretLauncherLinkPool  *pool,
                          TerretFarSide           *far,
                          GError                 **error)
{
  g_autoptr(GError) local_error = NULL;
  g_autoptr(GBytes) filter = NULL;
  g_autofree char *key = NULL;
  g_auto(GStrv) wrapper = NULL;

  if (far != NULL)
    return _terret_sandbox_check_far (settings, error)
           ? _terret_launcher_link_pool_get_far (pool, far) : NULL;

  wrapper = _terret_sandbox_build_wrapper (settings, &filter, &key, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  return _terret_launcher_link_pool_get (pool, key, (const char * const *)wrapper, filter);
}

/*
 * _terret_sandbox_check_far:
 *
 * Refuses the sandbox settings for processes on a far side: the sandbox
 * and the environment policy hold on this host, and would be silently
 * void there. The network setting is the far side's to honour or refuse
 * (a container started for the executor can be given none).
 */
gboolean
_terret_sandbox_check_far (const TerretSettings  *settings,
                           GError               **error)
{
  if (settings->sandbox != TERRET_SANDBOX_NONE || settings->env_policy != TERRET_ENV_POLICY_INHERIT ||
      settings->env_exclude != NULL)
    {
      g_set_error_literal (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                           "This backend's commands do not run on this host, where sandbox, "
                           "env-policy and env-exclude hold: unset them (what they run in is "
                           "their sandbox, and the environment there is its own)");
      return FALSE;
    }
  return TRUE;
}
