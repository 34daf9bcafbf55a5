/* terret-common-settings.c: the settings every engine shares, defined once
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Each setting is one row of the table below: its name, type, range,
 * default per engine, description, the engines that have it and the
 * field of TerretSettings it fills. The engines' properties, their
 * getters and setters, the snapshots' defaults, copies and frees, the
 * API reference's property docs (terret-settings-docgen.c) and
 * docs/settings.md all come from the rows; adding a setting is a row and
 * a field, and the code that reads it.
 */

#include "config.h"

#include <string.h>

#include "terret-common-settings-private.h"
#include "terret-enum-types.h"
#include "terret-error.h"
#include "terret-launcher-private.h"
#include "terret-sandbox-private.h"
#include "terret-util-private.h"

#define SESSION TERRET_SETTING_ENGINE (TERRET_ENGINE_SESSION)
#define COMMAND TERRET_SETTING_ENGINE (TERRET_ENGINE_COMMAND)
#define BOTH (SESSION | COMMAND)

#define FIELD(name) G_STRUCT_OFFSET (TerretSettings, name)
#define SAME(member, value) { { .member = (value) }, { .member = (value) } }

#define KiB (G_GUINT64_CONSTANT (1) << 10)
#define MiB (G_GUINT64_CONSTANT (1) << 20)
#define GiB (G_GUINT64_CONSTANT (1) << 30)

static const char * const no_entries[] = { NULL };

/* In property-id order (id = index + 1): the order `--list-backends`
 * shows them in. */
static const TerretSettingDef defs[] = {
  {
    .name = "timeout", .kind = TERRET_SETTING_DOUBLE, .engines = BOTH, .offset = FIELD (timeout),
    .min = 0.001, .max = G_MAXDOUBLE, .defaults = SAME (number, 120.0),
    .blurb = { "Seconds a command may run when its request names no timeout; then it is "
               "interrupted and its session killed",
               "Seconds a command may run when its request names no timeout; then it and "
               "everything it started are killed" },
    .since = { "0.1", "0.2" },
  },
  {
    .name = "max-output", .kind = TERRET_SETTING_UINT64, .engines = BOTH,
    .offset = FIELD (max_output), .umax = G_MAXUINT64,
    /* A tail gets 50 KiB of slack for its line alignment. */
    .defaults = { { .count = MiB }, { .count = MiB + 50 * KiB } },
    .blurb = { "Bytes of a run's output kept; past it the first bytes are kept (or what capture "
               "says) and the rest counted and dropped",
               "Bytes kept of the end of each of stdout and stderr (or what capture says; up to a "
               "quarter more is held before older lines are dropped and counted)" },
    .doc = "A cut never splits a UTF-8 character; the result says how many bytes were dropped "
           "([method@Terret.Result.get_dropped]).",
    .since = { "0.1", "0.2" },
  },
  {
    .name = "cwd", .kind = TERRET_SETTING_STRING, .engines = BOTH, .offset = FIELD (cwd),
    .defaults = SAME (text, NULL),
    .blurb = { "Working directory a new session's shell starts in (unset: the host's own)",
               "Working directory of commands whose request names none (unset: the host's own)" },
    .doc = "A remote backend's unset is the remote side's default.",
    .since = { "0.1", "0.2" },
  },
  {
    .name = "env", .kind = TERRET_SETTING_STRV, .engines = BOTH, .offset = FIELD (env),
    .unset_is_default = TRUE, .defaults = SAME (list, no_entries),
    .blurb = { "VARIABLE=value entries layered over the inherited environment and the defaults "
               "(TERM=dumb, PAGER=cat, ...) of a new session's shell",
               "VARIABLE=value entries layered over the inherited environment of every command "
               "(a request's own entries go on top)" },
    .doc = "They go on top of what env-policy and env-exclude leave of the host's environment; "
           "for a session, on top of the defaults of [method@Terret.SessionExecutor.dup_environ].",
    .since = { "0.1", "0.2" },
  },
  {
    .name = "shell", .kind = TERRET_SETTING_STRING, .engines = BOTH, .offset = FIELD (shell),
    .unset_is_default = TRUE, .defaults = SAME (text, TERRET_DEFAULT_SHELL),
    .blurb = { "The bash a new session runs: a path, or a name looked up in PATH",
               "The bash that runs each command as `SHELL -c COMMAND`: a path, or a name looked "
               "up in PATH" },
    .doc = "Setting %NULL or an empty string restores the default, `bash`.",
    .since = { "0.1", "0.2" },
  },
  {
    .name = "handshake-timeout", .kind = TERRET_SETTING_DOUBLE, .engines = SESSION,
    .offset = FIELD (handshake_timeout), .min = 0.001, .max = G_MAXDOUBLE,
    .defaults = SAME (number, 10.0),
    .blurb = { "Seconds a new session's shell has to answer its start-up handshake" },
    .doc = "Past it the run fails as unavailable.",
    .since = { "0.1" },
  },
  {
    .name = "interrupt-grace", .kind = TERRET_SETTING_DOUBLE, .engines = BOTH,
    .offset = FIELD (interrupt_grace), .min = 0, .max = G_MAXDOUBLE,
    .defaults = SAME (number, 2.0),
    .blurb = { "Seconds an interrupted command may stay silent and running before it is killed "
               "with everything it started" },
    .doc = "An interrupt is [method@Terret.Executor.interrupt].",
    .since = { "0.1", "0.2" },
  },
  {
    .name = "stop-grace", .kind = TERRET_SETTING_DOUBLE, .engines = BOTH,
    .offset = FIELD (stop_grace), .min = 0, .max = 3600,
    .defaults = SAME (number, 3.0),
    .blurb = { "Seconds a command ended by its timeout, deadline, a cancel or its session's close "
               "has to finish: first ^C (or SIGINT to its group; SIGHUP on a close), SIGTERM "
               "halfway, then SIGKILL of everything it started (0: SIGKILL at once)" },
    .doc = "What the command prints meanwhile is in its result. The default, 3 s, is enough for "
           "a test runner's or a build's summary and a server's clean-up, and short enough for "
           "an agent waiting on the answer; systemd's 90 s is for services, not commands. A "
           "request can set its own ([property@Terret.Request:stop-grace]).",
    .since = { "0.3", "0.3" },
  },
  {
    .name = "drain-grace", .kind = TERRET_SETTING_DOUBLE, .engines = COMMAND,
    .offset = FIELD (drain_grace), .min = 0, .max = 3600, .defaults = SAME (number, 0.25),
    .blurb = { NULL, "Seconds to keep reading output after bash exits while background processes "
                     "hold its pipes, before they are killed" },
    .since = { NULL, "0.2" },
  },
  {
    .name = "limit-memory", .kind = TERRET_SETTING_UINT64, .engines = BOTH,
    .offset = FIELD (limit_memory), .umax = G_MAXUINT64, .defaults = SAME (count, 0),
    .blurb = { "Bytes of memory a session's shell and everything it starts may use together, "
               "held by a cgroup where one can be made, else per process as address space (0: no "
               "limit; K, M, G suffixes)",
               "Bytes of memory a command and everything it starts may use together, held by a "
               "cgroup where one can be made, else per process as address space (0: no limit; "
               "K, M, G suffixes)" },
    .doc = "The cgroup is the session's or run's own (cgroup v2 with the controllers delegated, "
           "or v1 as root); past the limit the OOM killer ends the biggest process in it, and "
           "the result says so ([method@Terret.Result.get_limits_hit]).",
    .since = { "0.2", "0.2" },
  },
  {
    .name = "limit-processes", .kind = TERRET_SETTING_UINT64, .engines = BOTH,
    .offset = FIELD (limit_processes), .umax = G_MAXUINT64, .defaults = SAME (count, 0),
    .blurb = { "Processes that may run at once in a session or run, held by a cgroup where one "
               "can be made, else counted over the user's (0: no limit)" },
    .doc = "Forks past it fail. The rlimit that stands in for a cgroup does not bind root, so "
           "inside a sandbox (where no cgroup can be made) a host running as root is refused the "
           "setting. A session whose limit was hit is ended, so that a fork bomb cannot hold the "
           "next run at the limit.",
    .since = { "0.2", "0.2" },
  },
  {
    .name = "limit-cpu", .kind = TERRET_SETTING_UINT64, .engines = BOTH,
    .offset = FIELD (limit_cpu), .umax = G_MAXUINT64, .defaults = SAME (count, 0),
    .blurb = { "Seconds of CPU time each process may use (SIGXCPU, then SIGKILL a second later; "
               "0: no limit)" },
    .doc = "An rlimit, soft and hard alike, so nothing inside can raise it.",
    .since = { "0.2", "0.2" },
  },
  {
    .name = "limit-file-size", .kind = TERRET_SETTING_UINT64, .engines = BOTH,
    .offset = FIELD (limit_file_size), .umax = G_MAXUINT64, .defaults = SAME (count, 0),
    .blurb = { "Bytes a process may write a file to (SIGXFSZ; 0: no limit; K, M, G suffixes)" },
    .doc = "An rlimit, soft and hard alike, so nothing inside can raise it.",
    .since = { "0.2", "0.2" },
  },
  {
    .name = "limit-open-files", .kind = TERRET_SETTING_UINT64, .engines = BOTH,
    .offset = FIELD (limit_open_files), .umax = G_MAXUINT64, .defaults = SAME (count, 0),
    .blurb = { "Descriptors each process may have open (0: no limit)" },
    .doc = "An rlimit, soft and hard alike; past it an open fails with `EMFILE`.",
    .since = { "0.2", "0.2" },
  },
  {
    .name = "capture", .kind = TERRET_SETTING_ENUM, .engines = BOTH, .offset = FIELD (capture),
    .enum_type = terret_capture_mode_get_type, .unset_is_default = TRUE,
    .defaults = { { .choice = TERRET_CAPTURE_MODE_HEAD }, { .choice = TERRET_CAPTURE_MODE_TAIL } },
    .blurb = { "Which bytes of a stream past max-output are kept: head, tail, or head-tail (the "
               "first and last halves of max-output); default is the backend's own" },
    .doc = "A request may choose its own with [method@Terret.Request.set_capture]. Setting "
           "%TERRET_CAPTURE_MODE_DEFAULT restores the backend's own: the head for a session, the "
           "tail for a one-shot command.",
    .since = { "0.2", "0.2" },
  },
  {
    .name = "keep-full-output", .kind = TERRET_SETTING_BOOLEAN, .engines = BOTH,
    .offset = FIELD (keep_full_output), .defaults = SAME (flag, FALSE),
    .blurb = { "Write every byte of each run's output to a file (0600, in full-output-dir) named "
               "in the result; removed when the session closes unless the caller takes it" },
    .doc = "The file is named by [method@Terret.Result.get_full_output]; a caller keeps it with "
           "[method@Terret.Result.steal_full_output].",
    .since = { "0.2", "0.2" },
  },
  {
    .name = "full-output-dir", .kind = TERRET_SETTING_STRING, .engines = BOTH,
    .offset = FIELD (full_output_dir), .unset_is_default = TRUE, .defaults = SAME (text, NULL),
    .blurb = { "Directory of full-output files (unset: terret-exec under $XDG_RUNTIME_DIR, else "
               "terret-exec-UID in the temporary directory, created 0700)" },
    .doc = "A directory in the temporary directory must be this user's alone.",
    .since = { "0.2", "0.2" },
  },
  {
    .name = "full-output-max", .kind = TERRET_SETTING_UINT64, .engines = BOTH,
    .offset = FIELD (full_output_max), .umax = G_MAXUINT64, .defaults = SAME (count, GiB),
    .blurb = { "Bytes a full-output file holds at most; past it the output is counted, not "
               "written" },
    .doc = "The result's notice then says how much the file lacks.",
    .since = { "0.2", "0.2" },
  },
  {
    .name = "sandbox", .kind = TERRET_SETTING_ENUM, .engines = BOTH, .offset = FIELD (sandbox),
    .enum_type = terret_sandbox_get_type, .defaults = SAME (choice, TERRET_SANDBOX_NONE),
    .blurb = { "What commands may write, through bubblewrap: none, read-only (everything "
               "read-only, a private /tmp, a PID namespace) or workspace-write (as read-only, "
               "with workspace and writable read-write); a sandbox that cannot be set up is an "
               "error" },
    .doc = "The executor's launcher runs inside the sandbox, one per policy, so every shell and "
           "command it starts is inside already. A sandbox that cannot be set up fails the run "
           "with %TERRET_EXEC_ERROR_UNAVAILABLE; nothing ever runs unsandboxed instead.",
    .since = { "0.2", "0.2" },
  },
  {
    .name = "workspace", .kind = TERRET_SETTING_STRING, .engines = BOTH,
    .offset = FIELD (workspace), .unset_is_default = TRUE, .defaults = SAME (text, NULL),
    .blurb = { "The directory writable under sandbox=workspace-write (unset: the cwd setting, "
               "else the host's cwd)" },
    .doc = "Under sandbox=read-only it stays visible, read-only.",
    .since = { "0.2", "0.2" },
  },
  {
    .name = "writable", .kind = TERRET_SETTING_STRV, .engines = BOTH,
    .offset = FIELD (writable), .defaults = SAME (list, NULL),
    .blurb = { "More paths read-write under sandbox=workspace-write" },
    .doc = "Each must be an absolute path that exists.",
    .since = { "0.2", "0.2" },
  },
  {
    .name = "hidden", .kind = TERRET_SETTING_STRV, .engines = BOTH, .offset = FIELD (hidden),
    .defaults = SAME (list, NULL),
    .blurb = { "Paths made invisible under a sandbox besides the defaults (credential stores: "
               "~/.ssh, ~/.gnupg, ~/.aws, ~/.kube, ~/.netrc and the like; the host's agent, D-Bus, "
               "display and container engine sockets); ~/ is HOME" },
    .doc = "A directory is covered by an empty one, anything else by `/dev/null`, so a file "
           "reads as empty.",
    .since = { "0.2", "0.2" },
  },
  {
    .name = "unhide", .kind = TERRET_SETTING_STRV, .engines = BOTH, .offset = FIELD (unhide),
    .defaults = SAME (list, NULL),
    .blurb = { "Paths hidden by default left visible on purpose, each one of the defaults "
               "(terret-exec --check lists them); ~/ is HOME" },
    .since = { "0.2", "0.2" },
  },
  {
    .name = "network", .kind = TERRET_SETTING_ENUM, .engines = BOTH, .offset = FIELD (network),
    .enum_type = terret_network_get_type, .defaults = SAME (choice, TERRET_NETWORK_DEFAULT),
    .blurb = { "on, off (a network namespace with loopback only, and no unix socket: those reach "
               "the host's services), or default: off under a sandbox, on without one" },
    .doc = "Off holds without a filesystem sandbox too.",
    .since = { "0.2", "0.2" },
  },
  {
    .name = "allow-unix-sockets", .kind = TERRET_SETTING_STRV, .engines = BOTH,
    .offset = FIELD (allow_unix_sockets), .defaults = SAME (list, NULL),
    .blurb = { "Host unix sockets reachable with the network off: unix sockets are allowed "
               "again, /run is emptied and every other socket a host service listens on is "
               "hidden (unset: none)" },
    .since = { "0.2", "0.2" },
  },
  {
    .name = "env-policy", .kind = TERRET_SETTING_ENUM, .engines = BOTH,
    .offset = FIELD (env_policy), .enum_type = terret_env_policy_get_type,
    .defaults = SAME (choice, TERRET_ENV_POLICY_INHERIT),
    .blurb = { "What of the host's environment commands get: inherit, core (PATH, HOME, USER, "
               "LOGNAME, SHELL, LANG, LC_*, TERM, TMPDIR, TZ) or none; env-exclude then drops, "
               "env adds" },
    .doc = "It holds with or without a sandbox.",
    .since = { "0.2", "0.2" },
  },
  {
    .name = "env-exclude", .kind = TERRET_SETTING_STRV, .engines = BOTH,
    .offset = FIELD (env_exclude), .defaults = SAME (list, NULL),
    .blurb = { "Glob patterns of variables dropped from the host's environment (unset: none "
               "without a sandbox; *KEY*, *SECRET*, *TOKEN*, *PASSWORD*, *CREDENTIAL* under one)" },
    .doc = "What the env setting adds is never dropped.",
    .since = { "0.2", "0.2" },
  },
  /* The clocks a request names none of. */
  {
    .name = "deadline", .kind = TERRET_SETTING_DOUBLE, .engines = BOTH, .offset = FIELD (deadline),
    .min = 0, .max = G_MAXDOUBLE, .defaults = SAME (number, 0.0),
    .blurb = { "Seconds after which a command whose request names no deadline is ended with "
               "everything it started, handed back or not; 0: none" },
    .doc = "See [method@Terret.Request.set_deadline].",
    .since = { "0.2", "0.2" },
  },
  {
    .name = "idle-timeout", .kind = TERRET_SETTING_DOUBLE, .engines = BOTH,
    .offset = FIELD (idle_timeout), .min = 0, .max = G_MAXDOUBLE, .defaults = SAME (number, 0.0),
    .blurb = { "Seconds without output after which a command whose request names no idle timeout "
               "is ended (or handed back, as its request's idle action says); 0: none" },
    .doc = "See [method@Terret.Request.set_idle_timeout].",
    .since = { "0.2", "0.2" },
  },
  /* A command that waits for input on its terminal (a one-shot command has none). */
  {
    .name = "on-input", .kind = TERRET_SETTING_ENUM, .engines = SESSION,
    .offset = FIELD (on_input), .enum_type = terret_input_action_get_type,
    .defaults = SAME (choice, TERRET_INPUT_ACTION_REPORT),
    .blurb = { "What a run that does not detach does when its command waits for input on its "
               "terminal: report (hand it back at once, running, with its prompt), eof (type ^D "
               "for it), fail (stop it, the prompt in the notice) or wait (for input from "
               "another call, until the timeout)" },
    .doc = "A request that detaches is handed back as report says whatever this is; see "
           "[Interactive commands](interactive.html).",
    .since = { "0.3" },
  },
};

/*
 * _terret_settings_get_defs:
 *
 * The shared settings, in property-id order: property id = index + 1.
 */
const TerretSettingDef *
_terret_settings_get_defs (guint *n_defs)
{
  *n_defs = G_N_ELEMENTS (defs);
  return defs;
}

static const char *
def_blurb (const TerretSettingDef *def,
           TerretEngineKind            engine)
{
  return def->blurb[engine] != NULL ? def->blurb[engine] : def->blurb[TERRET_ENGINE_SESSION];
}

static GParamSpec *
new_param_spec (const TerretSettingDef *def,
                TerretEngineKind            engine)
{
  const GParamFlags flags = (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  const char *blurb = def_blurb (def, engine);

  switch (def->kind)
    {
    case TERRET_SETTING_DOUBLE:
      return g_param_spec_double (def->name, NULL, blurb, def->min, def->max,
                                  def->defaults[engine].number, flags);
    case TERRET_SETTING_UINT64:
      return g_param_spec_uint64 (def->name, NULL, blurb, 0, def->umax,
                                  def->defaults[engine].count, flags);
    case TERRET_SETTING_BOOLEAN:
      return g_param_spec_boolean (def->name, NULL, blurb, def->defaults[engine].flag, flags);
    case TERRET_SETTING_STRING:
      return g_param_spec_string (def->name, NULL, blurb, def->defaults[engine].text, flags);
    case TERRET_SETTING_STRV:
      return g_param_spec_boxed (def->name, NULL, blurb, G_TYPE_STRV, flags);
    case TERRET_SETTING_ENUM:
      return g_param_spec_enum (def->name, NULL, blurb, def->enum_type (),
                                def->defaults[engine].choice, flags);
    default:
      g_assert_not_reached ();
    }
}

/*
 * _terret_settings_install:
 *
 * Installs the shared settings @engine has on @klass, as properties
 * numbered by their row (index + 1).
 */
void
_terret_settings_install (GObjectClass *klass,
                          TerretEngineKind  engine)
{
  for (guint i = 0; i < G_N_ELEMENTS (defs); i++)
    if (defs[i].engines & TERRET_SETTING_ENGINE (engine))
      g_object_class_install_property (klass, i + 1, new_param_spec (&defs[i], engine));
}

/*
 * _terret_settings_find:
 *
 * The property id (row + 1) of the shared setting @name, or 0.
 */
guint
_terret_settings_find (const char *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (defs); i++)
    if (strcmp (defs[i].name, name) == 0)
      return i + 1;
  return 0;
}

/*
 * _terret_settings_init_value:
 *
 * Initializes @value to the type of the setting with @prop_id.
 */
void
_terret_settings_init_value (guint   prop_id,
                             GValue *value)
{
  const TerretSettingDef *def = &defs[prop_id - 1];
  static const GType types[] = {
    [TERRET_SETTING_DOUBLE] = G_TYPE_DOUBLE,
    [TERRET_SETTING_UINT64] = G_TYPE_UINT64,
    [TERRET_SETTING_BOOLEAN] = G_TYPE_BOOLEAN,
    [TERRET_SETTING_STRING] = G_TYPE_STRING,
  };

  g_assert (prop_id >= 1 && prop_id <= G_N_ELEMENTS (defs));
  if (def->kind == TERRET_SETTING_STRV)
    g_value_init (value, G_TYPE_STRV);
  else if (def->kind == TERRET_SETTING_ENUM)
    g_value_init (value, def->enum_type ());
  else
    g_value_init (value, types[def->kind]);
}

/* --- Snapshots --------------------------------------------------------- */

static gpointer
field_of (const TerretSettings   *settings,
          const TerretSettingDef *def)
{
  return (guint8 *)settings + def->offset;
}

static TerretSettings *
settings_new_defaults (TerretEngineKind engine)
{
  TerretSettings *settings = g_new0 (TerretSettings, 1);

  g_atomic_ref_count_init (&settings->ref_count);
  settings->engine = engine;
  for (guint i = 0; i < G_N_ELEMENTS (defs); i++)
    {
      const TerretSettingDef *def = &defs[i];
      gpointer field = field_of (settings, def);

      switch (def->kind)
        {
        case TERRET_SETTING_DOUBLE:
          *(double *)field = def->defaults[engine].number;
          break;
        case TERRET_SETTING_UINT64:
          *(guint64 *)field = def->defaults[engine].count;
          break;
        case TERRET_SETTING_BOOLEAN:
          *(gboolean *)field = def->defaults[engine].flag;
          break;
        case TERRET_SETTING_STRING:
          *(char **)field = g_strdup (def->defaults[engine].text);
          break;
        case TERRET_SETTING_STRV:
          *(GStrv *)field = g_strdupv ((char **)def->defaults[engine].list);
          break;
        case TERRET_SETTING_ENUM:
          *(int *)field = def->defaults[engine].choice;
          break;
        default:
          g_assert_not_reached ();
        }
    }

  return settings;
}

static TerretSettings *
settings_copy (const TerretSettings *other)
{
  TerretSettings *settings = g_memdup2 (other, sizeof *other);

  g_atomic_ref_count_init (&settings->ref_count);
  for (guint i = 0; i < G_N_ELEMENTS (defs); i++)
    {
      gpointer field = field_of (settings, &defs[i]);

      if (defs[i].kind == TERRET_SETTING_STRING)
        *(char **)field = g_strdup (*(char **)field);
      else if (defs[i].kind == TERRET_SETTING_STRV)
        *(GStrv *)field = g_strdupv (*(GStrv *)field);
    }

  return settings;
}

TerretSettings *
_terret_settings_ref (TerretSettings *settings)
{
  g_atomic_ref_count_inc (&settings->ref_count);
  return settings;
}

void
_terret_settings_unref (TerretSettings *settings)
{
  if (!g_atomic_ref_count_dec (&settings->ref_count))
    return;

  for (guint i = 0; i < G_N_ELEMENTS (defs); i++)
    {
      gpointer field = field_of (settings, &defs[i]);

      if (defs[i].kind == TERRET_SETTING_STRING)
        g_clear_pointer ((char **)field, g_free);
      else if (defs[i].kind == TERRET_SETTING_STRV)
        g_clear_pointer ((GStrv *)field, g_strfreev);
    }
  g_free (settings);
}

/* --- The store --------------------------------------------------------- */

void
_terret_settings_store_init (TerretSettingsStore *store,
                             TerretEngineKind         engine)
{
  g_mutex_init (&store->mutex);
  store->current = settings_new_defaults (engine);
}

void
_terret_settings_store_clear (TerretSettingsStore *store)
{
  g_clear_pointer (&store->current, _terret_settings_unref);
  g_mutex_clear (&store->mutex);
}

TerretSettings *
_terret_settings_store_snapshot (TerretSettingsStore *store)
{
  TerretSettings *settings;

  g_mutex_lock (&store->mutex);
  settings = _terret_settings_ref (store->current);
  g_mutex_unlock (&store->mutex);

  return settings;
}

static const TerretSettingDef *
def_of (guint prop_id)
{
  g_assert (prop_id >= 1 && prop_id <= G_N_ELEMENTS (defs));
  return &defs[prop_id - 1];
}

void
_terret_settings_store_get (TerretSettingsStore *store,
                            guint                prop_id,
                            GValue              *value)
{
  g_autoptr(TerretSettings) s = _terret_settings_store_snapshot (store);
  const TerretSettingDef *def = def_of (prop_id);
  gpointer field = field_of (s, def);

  switch (def->kind)
    {
    case TERRET_SETTING_DOUBLE:
      g_value_set_double (value, *(double *)field);
      break;
    case TERRET_SETTING_UINT64:
      g_value_set_uint64 (value, *(guint64 *)field);
      break;
    case TERRET_SETTING_BOOLEAN:
      g_value_set_boolean (value, *(gboolean *)field);
      break;
    case TERRET_SETTING_STRING:
      g_value_set_string (value, *(char **)field);
      break;
    case TERRET_SETTING_STRV:
      g_value_set_boxed (value, *(GStrv *)field);
      break;
    case TERRET_SETTING_ENUM:
      g_value_set_enum (value, *(int *)field);
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

/* Stores @value in @s's field for @def; returns whether it changed. */
static gboolean
set_field (TerretSettings         *s,
           const TerretSettingDef *def,
           const GValue           *value)
{
  gpointer field = field_of (s, def);
  gboolean changed;

  switch (def->kind)
    {
    case TERRET_SETTING_DOUBLE:
      changed = *(double *)field != g_value_get_double (value);
      *(double *)field = g_value_get_double (value);
      return changed;
    case TERRET_SETTING_UINT64:
      changed = *(guint64 *)field != g_value_get_uint64 (value);
      *(guint64 *)field = g_value_get_uint64 (value);
      return changed;
    case TERRET_SETTING_BOOLEAN:
      changed = *(gboolean *)field != g_value_get_boolean (value);
      *(gboolean *)field = g_value_get_boolean (value);
      return changed;
    case TERRET_SETTING_STRING:
      {
        const char *text = g_value_get_string (value);

        if (def->unset_is_default && (text == NULL || *text == '\0'))
          text = def->defaults[s->engine].text;
        return _terret_set_str ((char **)field, text);
      }
    case TERRET_SETTING_STRV:
      {
        const char * const *list = g_value_get_boxed (value);

        if (def->unset_is_default && list == NULL)
          list = def->defaults[s->engine].list;
        return set_strv ((GStrv *)field, list);
      }
    case TERRET_SETTING_ENUM:
      {
        int choice = g_value_get_enum (value);

        if (def->unset_is_default && choice == 0)
          choice = def->defaults[s->engine].choice;
        changed = *(int *)field != choice;
        *(int *)field = choice;
        return changed;
      }
    default:
      g_assert_not_reached ();
    }
}

/*
 * _terret_settings_store_set:
 *
 * Changes one setting: a new snapshot replaces the current one, which
 * whatever started with it keeps. Returns whether the value changed.
 */
gboolean
_terret_settings_store_set (TerretSettingsStore *store,
                            guint                prop_id,
                            const GValue        *value)
{
  g_autoptr(TerretSettings) old = NULL;
  TerretSettings *s;
  gboolean changed;

  g_mutex_lock (&store->mutex);
  s = settings_copy (store->current);
  changed = set_field (s, def_of (prop_id), value);
  if (changed)
    {
      old = store->current;
      store->current = s;
    }
  else
    _terret_settings_unref (s);
  g_mutex_unlock (&store->mutex);

  return changed;
}

/* --- What a process starts with ----------------------------------------- */

/* The defaults that keep a host with no human at the terminal from
 * hanging in a pager or drowning in escape codes. The env setting goes
 * on top of them. */
static const char * const session_environ[] = {
  "TERM=dumb",
  "PAGER=cat",
  "GIT_PAGER=cat",
  "MANPAGER=cat",
  "SYSTEMD_PAGER=cat",
  "GH_PAGER=cat",
  "NO_COLOR=1",
  NULL
};

static gboolean
overlay (GStrv              *envp,
         const char * const *entries,
         const char         *what,
         int                 code,
         GError            **error)
{
  for (guint i = 0; entries != NULL && entries[i] != NULL; i++)
    {
      const char *eq = strchr (entries[i], '=');
      g_autofree char *key = NULL;

      if (eq == NULL || eq == entries[i])
        {
          g_set_error (error, TERRET_EXEC_ERROR, code,
                       "The %s entry “%s” is not of the form VARIABLE=value", what, entries[i]);
          return FALSE;
        }
      key = g_strndup (entries[i], eq - entries[i]);
      *envp = g_environ_setenv (*envp, key, eq + 1, TRUE);
    }

  return TRUE;
}

/*
 * _terret_settings_build_environ:
 *
 * The environment a process starts with: @base (NULL: the host's), for a
 * session's shell the defaults for a host with nobody at the terminal,
 * then the env setting, then @extra (a request's own entries). A
 * session's shell always gets HISTFILE empty, so it never reads or writes
 * the user's history file. A malformed entry fails, naming it:
 * TERRET_EXEC_ERROR_INVALID_CONFIG for the setting's, _INVALID_REQUEST
 * for @extra's.
 */
char **
_terret_settings_build_environ (const TerretSettings  *settings,
                                const char * const    *base,
                                const char * const    *extra,
                                GError               **error)
{
  g_auto(GStrv) envp = base != NULL ? g_strdupv ((char **)base)
                                     : _terret_sandbox_filter_environ (settings, g_get_environ ());
  gboolean session = settings->engine == TERRET_ENGINE_SESSION;

  if (session && !overlay (&envp, session_environ, "default", TERRET_EXEC_ERROR_INVALID_CONFIG, error))
    return NULL;
  if (!overlay (&envp, (const char * const *)settings->env, "env setting's",
                TERRET_EXEC_ERROR_INVALID_CONFIG, error) ||
      !overlay (&envp, extra, "request's env", TERRET_EXEC_ERROR_INVALID_REQUEST, error))
    return NULL;
  if (session)
    envp = g_environ_setenv (envp, "HISTFILE", "", TRUE);

  return g_steal_pointer (&envp);
}

/*
 * _terret_settings_get_limit:
 *
 * The value of the setting for @limit, one TerretLimits flag; 0: none.
 */
guint64
_terret_settings_get_limit (const TerretSettings *settings,
                            TerretLimits          limit)
{
  switch (limit)
    {
    case TERRET_LIMIT_MEMORY:
      return settings->limit_memory;
    case TERRET_LIMIT_PROCESSES:
      return settings->limit_processes;
    case TERRET_LIMIT_CPU:
      return settings->limit_cpu;
    case TERRET_LIMIT_FILE_SIZE:
      return settings->limit_file_size;
    case TERRET_LIMIT_OPEN_FILES:
      return settings->limit_open_files;
    case TERRET_LIMIT_NONE:
    default:
      g_assert_not_reached ();
    }
}

/*
 * _terret_settings_prepare_launcher:
 *
 * What a process of @launcher starts with under @settings: the
 * environment (with @extra_env, a request's, on top) and the limits. Its
 * directory is the run plan's (_terret_run_plan_new()), or for a
 * session's shell the cwd setting, set by the engine. A malformed
 * environment entry fails as _terret_settings_build_environ() says.
 */
gboolean
_terret_settings_prepare_launcher (const TerretSettings  *settings,
                                   TerretLauncher        *launcher,
                                   const char * const    *extra_env,
                                   GError               **error)
{
  g_autoptr(GFlagsClass) limits = g_type_class_ref (TERRET_TYPE_LIMITS);
  const char *no_environ[] = { NULL };
  /* Not the host's environment on a far side: the far side's own is
   * under what is given there. */
  g_auto(GStrv) envp = _terret_settings_build_environ (settings,
                                                       _terret_launcher_is_far (launcher)
                                                       ? no_environ : NULL,
                                                       extra_env, error);

  if (envp == NULL)
    return FALSE;
  terret_launcher_set_environ (launcher, (const char * const *)envp);

  for (guint i = 0; i < limits->n_values; i++)
    {
      TerretLimits limit = limits->values[i].value;

      if (limit != TERRET_LIMIT_NONE && _terret_settings_get_limit (settings, limit) != 0)
        terret_launcher_set_limit (launcher, limit, _terret_settings_get_limit (settings, limit));
    }
  /* The stop a unit runs on its own when the host is gone. */
  _terret_launcher_set_stop_grace (launcher, settings->stop_grace);

  return TRUE;
}
