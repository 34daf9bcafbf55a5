/* terret-sandbox.c: where commands may reach, through bubblewrap
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The commands are often a model's: the sandbox bounds what they can
 * touch. bubblewrap does the namespaces and mounts (the engine Flatpak
 * uses; writing that by hand would be writing bubblewrap again). What is
 * here is the policy: which bwrap arguments a `sandbox`, `workspace`,
 * `writable`, `hidden` and `network` setting mean, and the environment
 * policy, which holds with or without a sandbox.
 *
 * The sandbox is not set up per command: the executor's launcher itself
 * runs inside it (terret-launcher-link.c), one per policy, so every shell and
 * command it forks is inside already and a command costs what it costs
 * unsandboxed. A pty session's shell lives in it, and keeps its cd and
 * export from run to run. A sandbox that cannot be set up fails the run
 * as unavailable, saying why; nothing ever runs unsandboxed instead.
 */

#include "config.h"

#include <string.h>
#include <unistd.h>

#include "terret-enum-types.h"
#include "terret-error.h"
#include "terret-launcher-private.h"
#include "terret-sandbox-private.h"

/* Hidden by default under a sandbox: the keys and agents a command has
 * no business with. Relative to HOME, or a variable naming a path. */
static const char * const default_hidden_home[] = { ".ssh", ".gnupg", NULL };

static const char * const default_env_exclude[] = {
  "*KEY*", "*SECRET*", "*TOKEN*", "*PASSWORD*", "*CREDENTIAL*", NULL
};

static const char * const core_environ[] = {
  "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "TERM", "TMPDIR", "TZ", NULL
};

gboolean
_terret_sandbox_is_setting (TerretSettingId id)
{
  return id >= TERRET_SETTING_SANDBOX && id <= TERRET_SETTING_ENV_EXCLUDE;
}

GParamSpec *
_terret_sandbox_param_spec (TerretSettingId id,
                            GParamFlags     flags)
{
  switch (id)
    {
    case TERRET_SETTING_SANDBOX:
      return g_param_spec_enum ("sandbox", NULL,
                                "What commands may write, through bubblewrap: none, read-only "
                                "(everything read-only, a private /tmp, a PID namespace) or "
                                "workspace-write (as read-only, with workspace and writable "
                                "read-write); a sandbox that cannot be set up is an error",
                                TERRET_TYPE_SANDBOX, TERRET_SANDBOX_NONE, flags);
    case TERRET_SETTING_WORKSPACE:
      return g_param_spec_string ("workspace", NULL,
                                  "The directory writable under sandbox=workspace-write (unset: "
                                  "the cwd setting, else the host's cwd)",
                                  NULL, flags);
    case TERRET_SETTING_WRITABLE:
      return g_param_spec_boxed ("writable", NULL,
                                 "More paths read-write under sandbox=workspace-write",
                                 G_TYPE_STRV, flags);
    case TERRET_SETTING_HIDDEN:
      return g_param_spec_boxed ("hidden", NULL,
                                 "Paths made invisible under a sandbox (unset: ~/.ssh, ~/.gnupg, "
                                 "and the host's D-Bus, ssh-agent, X11 and Wayland sockets)",
                                 G_TYPE_STRV, flags);
    case TERRET_SETTING_NETWORK:
      return g_param_spec_enum ("network", NULL,
                                "on, off (a network namespace with loopback only), or default: "
                                "off under a sandbox, on without one",
                                TERRET_TYPE_NETWORK, TERRET_NETWORK_DEFAULT, flags);
    case TERRET_SETTING_ENV_POLICY:
      return g_param_spec_enum ("env-policy", NULL,
                                "What of the host's environment commands get: inherit, core (PATH, "
                                "HOME, USER, LOGNAME, SHELL, LANG, LC_*, TERM, TMPDIR, TZ) or none; "
                                "env-exclude then drops, env adds",
                                TERRET_TYPE_ENV_POLICY, TERRET_ENV_POLICY_INHERIT, flags);
    case TERRET_SETTING_ENV_EXCLUDE:
      return g_param_spec_boxed ("env-exclude", NULL,
                                 "Glob patterns of variables dropped from the host's environment "
                                 "(unset: none without a sandbox; *KEY*, *SECRET*, *TOKEN*, "
                                 "*PASSWORD*, *CREDENTIAL* under one)",
                                 G_TYPE_STRV, flags);
    default:
      g_assert_not_reached ();
    }
}

void
_terret_sandbox_copy (TerretSettings       *to,
                      const TerretSettings *from)
{
  to->workspace = g_strdup (from->workspace);
  to->writable = g_strdupv (from->writable);
  to->hidden = g_strdupv (from->hidden);
  to->env_exclude = g_strdupv (from->env_exclude);
}

void
_terret_sandbox_clear (TerretSettings *settings)
{
  g_clear_pointer (&settings->workspace, g_free);
  g_clear_pointer (&settings->writable, g_strfreev);
  g_clear_pointer (&settings->hidden, g_strfreev);
  g_clear_pointer (&settings->env_exclude, g_strfreev);
}

void
_terret_sandbox_get (const TerretSettings *s,
                     TerretSettingId       id,
                     GValue               *value)
{
  switch (id)
    {
    case TERRET_SETTING_SANDBOX:
      g_value_set_enum (value, s->sandbox);
      break;
    case TERRET_SETTING_WORKSPACE:
      g_value_set_string (value, s->workspace);
      break;
    case TERRET_SETTING_WRITABLE:
      g_value_set_boxed (value, s->writable);
      break;
    case TERRET_SETTING_HIDDEN:
      g_value_set_boxed (value, s->hidden);
      break;
    case TERRET_SETTING_NETWORK:
      g_value_set_enum (value, s->network);
      break;
    case TERRET_SETTING_ENV_POLICY:
      g_value_set_enum (value, s->env_policy);
      break;
    case TERRET_SETTING_ENV_EXCLUDE:
      g_value_set_boxed (value, s->env_exclude);
      break;
    default:
      g_assert_not_reached ();
    }
}

static gboolean
set_strv (GStrv              *field,
          const char * const *value)
{
  if ((*field == NULL && value == NULL) ||
      (*field != NULL && value != NULL && g_strv_equal ((const char * const *)*field, value)))
    return FALSE;
  g_strfreev (*field);
  *field = g_strdupv ((char **)value);
  return TRUE;
}

gboolean
_terret_sandbox_set (TerretSettings  *s,
                     TerretSettingId  id,
                     const GValue    *value)
{
  gboolean changed;

  switch (id)
    {
    case TERRET_SETTING_SANDBOX:
      changed = s->sandbox != (TerretSandbox)g_value_get_enum (value);
      s->sandbox = g_value_get_enum (value);
      return changed;
    case TERRET_SETTING_WORKSPACE:
      {
        const char *workspace = g_value_get_string (value);

        if (workspace != NULL && *workspace == '\0')
          workspace = NULL;
        changed = g_strcmp0 (s->workspace, workspace) != 0;
        g_free (s->workspace);
        s->workspace = g_strdup (workspace);
        return changed;
      }
    case TERRET_SETTING_WRITABLE:
      return set_strv (&s->writable, g_value_get_boxed (value));
    case TERRET_SETTING_HIDDEN:
      return set_strv (&s->hidden, g_value_get_boxed (value));
    case TERRET_SETTING_NETWORK:
      changed = s->network != (TerretNetwork)g_value_get_enum (value);
      s->network = g_value_get_enum (value);
      return changed;
    case TERRET_SETTING_ENV_POLICY:
      changed = s->env_policy != (TerretEnvPolicy)g_value_get_enum (value);
      s->env_policy = g_value_get_enum (value);
      return changed;
    case TERRET_SETTING_ENV_EXCLUDE:
      return set_strv (&s->env_exclude, g_value_get_boxed (value));
    default:
      g_assert_not_reached ();
    }
}

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

/* Hides @path: an empty directory over a directory, /dev/null over
 * anything else; nothing for what does not exist. */
static void
add_hidden (GPtrArray  *argv,
            const char *path)
{
  if (path == NULL || !g_path_is_absolute (path) || !g_file_test (path, G_FILE_TEST_EXISTS))
    return;
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      add (argv, "--tmpfs");
      add (argv, path);
    }
  else
    {
      add (argv, "--ro-bind");
      add (argv, "/dev/null");
      add (argv, path);
    }
}

static void
add_default_hidden (GPtrArray *argv)
{
  const char *runtime = g_getenv ("XDG_RUNTIME_DIR");
  const char *agent = g_getenv ("SSH_AUTH_SOCK");
  const char *bus = g_getenv ("DBUS_SESSION_BUS_ADDRESS");

  for (guint i = 0; default_hidden_home[i] != NULL; i++)
    {
      g_autofree char *path = g_build_filename (g_get_home_dir (), default_hidden_home[i], NULL);

      add_hidden (argv, path);
    }
  add_hidden (argv, agent);
  add_hidden (argv, "/run/dbus/system_bus_socket");
  if (bus != NULL && g_str_has_prefix (bus, "unix:path="))
    {
      g_autofree char *path = g_strndup (bus + strlen ("unix:path="),
                                         strcspn (bus + strlen ("unix:path="), ","));

      add_hidden (argv, path);
    }
  if (runtime != NULL)
    {
      g_autoptr(GDir) dir = g_dir_open (runtime, 0, NULL);
      const char *name;
      g_autofree char *bus_path = g_build_filename (runtime, "bus", NULL);

      add_hidden (argv, bus_path);
      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        if (g_str_has_prefix (name, "wayland-") || g_str_has_prefix (name, "pulse"))
          {
            g_autofree char *path = g_build_filename (runtime, name, NULL);

            add_hidden (argv, path);
          }
    }
  /* X11's sockets are in /tmp, which is the sandbox's own. */
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
 *
 * The bwrap command line the executor's launcher runs under for
 * @settings, up to its `--`; NULL with no error when there is no sandbox,
 * NULL with TERRET_EXEC_ERROR_UNAVAILABLE when bwrap is not there, or
 * _INVALID_CONFIG for a path that cannot be.
 */
char **
_terret_sandbox_build_wrapper (const TerretSettings  *settings,
                               GError               **error)
{
  g_autoptr(GPtrArray) argv = NULL;
  g_autofree char *bwrap = NULL;
  g_autofree char *cwd = NULL;
  gboolean network;

  network = settings->network == TERRET_NETWORK_ON ||
            (settings->network == TERRET_NETWORK_DEFAULT && settings->sandbox == TERRET_SANDBOX_NONE);
  if (settings->sandbox == TERRET_SANDBOX_NONE && network)
    return NULL;

  /* Inside, no cgroup can be made (/sys is read-only), and the rlimit
   * that stands in for one does not hold for root: refused rather than
   * run without the limit. */
  if (settings->limits[1] != 0 && settings->sandbox != TERRET_SANDBOX_NONE && geteuid () == 0)
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
  if (!network)
    add (argv, "--unshare-net");

  if (settings->sandbox == TERRET_SANDBOX_NONE)
    {
      /* Only the network is cut: the filesystem is the host's. */
      add (argv, "--dev-bind");
      add (argv, "/");
      add (argv, "/");
      add (argv, "--");
      g_ptr_array_add (argv, NULL);
      return (char **)g_ptr_array_free (g_steal_pointer (&argv), FALSE);
    }

  add (argv, "--unshare-pid");
  /* The launcher is the namespace's init: a subreaper already, and the
   * one whose end ends everything in it (bwrap's own reaper would be one
   * more process to outlive things). Nothing inside can signal it. */
  add (argv, "--as-pid-1");
  add (argv, "--unshare-ipc");
  add (argv, "--unshare-uts");
  add_pair (argv, "--ro-bind", "/");
  add (argv, "--dev");
  add (argv, "/dev");
  add (argv, "--proc");
  add (argv, "/proc");
  add (argv, "--tmpfs");
  add (argv, "/tmp");

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

  if (settings->hidden == NULL)
    add_default_hidden (argv);
  else
    for (guint i = 0; settings->hidden[i] != NULL; i++)
      add_hidden (argv, settings->hidden[i]);

  add (argv, "--");
  g_ptr_array_add (argv, NULL);
  return (char **)g_ptr_array_free (g_steal_pointer (&argv), FALSE);
}

/*
 * _terret_sandbox_describe:
 *
 * The containment of a launcher under @settings, as
 * terret_executor_dup_containment() says it: the launcher's, and the
 * sandbox's when there is one.
 */
char *
_terret_sandbox_describe (const TerretSettings *settings)
{
  gboolean sandboxed = settings->sandbox != TERRET_SANDBOX_NONE;
  gboolean network = settings->network == TERRET_NETWORK_ON ||
                     (settings->network == TERRET_NETWORK_DEFAULT && !sandboxed);
  g_autofree char *launcher = _terret_launcher_describe_containment (sandboxed);
  g_autofree char *bwrap = g_find_program_in_path ("bwrap");

  if (!sandboxed && network)
    return g_steal_pointer (&launcher);

  return g_strdup_printf ("%s Sandbox (bubblewrap%s): %s; network %s; its own PID, IPC and UTS "
                          "namespaces, a session of its own, no capabilities.", launcher,
                          bwrap != NULL ? "" : ", NOT INSTALLED: runs will fail unavailable",
                          settings->sandbox == TERRET_SANDBOX_WORKSPACE_WRITE
                          ? "the filesystem read-only but for the workspace and the writable "
                            "paths, a private /tmp, the hidden paths empty"
                          : settings->sandbox == TERRET_SANDBOX_READ_ONLY
                          ? "the filesystem read-only, a private /tmp, the hidden paths empty"
                          : "the host's filesystem",
                          network ? "the host's" : "off (loopback only)");
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
