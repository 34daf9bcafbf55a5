/* terret-common-settings.c: the settings every engine shares, defined once
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "terret-common-settings-private.h"
#include "terret-sandbox-private.h"
#include "terret-enum-types.h"
#include "terret-error.h"

#define DEFAULT_SESSION_MAX_OUTPUT (G_GUINT64_CONSTANT (1) << 20)
/* 1 MiB plus 50 KiB of slack for the line alignment of a tail. */
#define DEFAULT_COMMAND_MAX_OUTPUT (1024 * 1024 + 50 * 1024)
#define DEFAULT_HANDSHAKE_TIMEOUT 10.0
#define DEFAULT_INTERRUPT_GRACE 2.0
#define DEFAULT_DRAIN_GRACE 0.25

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

static gboolean    is_capture_setting (TerretSettingId       id);
static GParamSpec *capture_param_spec (TerretSettingId       id,
                                       TerretEngine          engine,
                                       GParamFlags           flags);
static void        capture_defaults   (TerretSettings       *settings);
static void        capture_get        (const TerretSettings *settings,
                                       TerretSettingId       id,
                                       GValue               *value);
static gboolean    capture_set        (TerretSettings       *settings,
                                       TerretSettingId       id,
                                       const GValue         *value);

static GParamSpec *
new_param_spec (TerretSettingId id,
                TerretEngine    engine)
{
  const GParamFlags flags = (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  gboolean session = engine == TERRET_ENGINE_SESSION;

  if (is_capture_setting (id))
    return capture_param_spec (id, engine, flags);
  if (_terret_sandbox_is_setting (id))
    return _terret_sandbox_param_spec (id, flags);

  switch (id)
    {
    case TERRET_SETTING_TIMEOUT:
      return g_param_spec_double ("timeout", NULL,
                                  session
                                  ? "Seconds a command may run when its request names no timeout; "
                                    "then it is interrupted and its session killed"
                                  : "Seconds a command may run when its request names no timeout; "
                                    "then it and everything it started are killed",
                                  0.001, G_MAXDOUBLE, TERRET_DEFAULT_TIMEOUT, flags);
    case TERRET_SETTING_MAX_OUTPUT:
      return g_param_spec_uint64 ("max-output", NULL,
                                  session
                                  ? "Bytes of a run's output kept; past it the first bytes are kept "
                                    "(or what capture says) and the rest counted and dropped"
                                  : "Bytes kept of the end of each of stdout and stderr (or what "
                                    "capture says; up to a quarter more is held before older lines "
                                    "are dropped and counted)",
                                  0, G_MAXUINT64,
                                  session ? DEFAULT_SESSION_MAX_OUTPUT : DEFAULT_COMMAND_MAX_OUTPUT,
                                  flags);
    case TERRET_SETTING_CWD:
      return g_param_spec_string ("cwd", NULL,
                                  session
                                  ? "Working directory a new session's shell starts in "
                                    "(unset: the host's own)"
                                  : "Working directory of commands whose request names none "
                                    "(unset: the host's own)",
                                  NULL, flags);
    case TERRET_SETTING_ENV:
      return g_param_spec_boxed ("env", NULL,
                                 session
                                 ? "VARIABLE=value entries layered over the inherited environment and "
                                   "the defaults (TERM=dumb, PAGER=cat, ...) of a new session's shell"
                                 : "VARIABLE=value entries layered over the inherited environment "
                                   "of every command (a request's own entries go on top)",
                                 G_TYPE_STRV, flags);
    case TERRET_SETTING_SHELL:
      return g_param_spec_string ("shell", NULL,
                                  session
                                  ? "The bash a new session runs: a path, or a name looked up in PATH"
                                  : "The bash that runs each command as `SHELL -c COMMAND`: a path, "
                                    "or a name looked up in PATH",
                                  TERRET_DEFAULT_SHELL, flags);
    case TERRET_SETTING_HANDSHAKE_TIMEOUT:
      return g_param_spec_double ("handshake-timeout", NULL,
                                  "Seconds a new session's shell has to answer its start-up handshake",
                                  0.001, G_MAXDOUBLE, DEFAULT_HANDSHAKE_TIMEOUT, flags);
    case TERRET_SETTING_INTERRUPT_GRACE:
      return g_param_spec_double ("interrupt-grace", NULL,
                                  "Seconds an interrupted command may stay silent and running before "
                                  "it is killed with everything it started",
                                  0, G_MAXDOUBLE, DEFAULT_INTERRUPT_GRACE, flags);
    case TERRET_SETTING_DRAIN_GRACE:
      return g_param_spec_double ("drain-grace", NULL,
                                  "Seconds to keep reading output after bash exits while background "
                                  "processes hold its pipes, before they are killed",
                                  0, 3600, DEFAULT_DRAIN_GRACE, flags);
    case TERRET_SETTING_LIMIT_MEMORY:
      return g_param_spec_uint64 ("limit-memory", NULL,
                                  session
                                  ? "Bytes of memory a session's shell and everything it starts may "
                                    "use together, held by a cgroup where one can be made, else per "
                                    "process as address space (0: no limit; K, M, G suffixes)"
                                  : "Bytes of memory a command and everything it starts may use "
                                    "together, held by a cgroup where one can be made, else per "
                                    "process as address space (0: no limit; K, M, G suffixes)",
                                  0, G_MAXUINT64, 0, flags);
    case TERRET_SETTING_LIMIT_PROCESSES:
      return g_param_spec_uint64 ("limit-processes", NULL,
                                  "Processes that may run at once in a session or run, held by a "
                                  "cgroup where one can be made, else counted over the user's (0: "
                                  "no limit)",
                                  0, G_MAXUINT64, 0, flags);
    case TERRET_SETTING_LIMIT_CPU:
      return g_param_spec_uint64 ("limit-cpu", NULL,
                                  "Seconds of CPU time each process may use (SIGXCPU, then SIGKILL "
                                  "a second later; 0: no limit)",
                                  0, G_MAXUINT64, 0, flags);
    case TERRET_SETTING_LIMIT_FILE_SIZE:
      return g_param_spec_uint64 ("limit-file-size", NULL,
                                  "Bytes a process may write a file to (SIGXFSZ; 0: no limit; K, M, "
                                  "G suffixes)",
                                  0, G_MAXUINT64, 0, flags);
    case TERRET_SETTING_LIMIT_OPEN_FILES:
      return g_param_spec_uint64 ("limit-open-files", NULL,
                                  "Descriptors each process may have open (0: no limit)",
                                  0, G_MAXUINT64, 0, flags);
    case N_TERRET_SETTINGS:
    default:
      g_assert_not_reached ();
    }
}

/*
 * _terret_settings_install:
 *
 * Installs the shared settings @ids on @klass, as properties numbered
 * TERRET_SETTING_PROP (id): one definition (name, type, range, default,
 * description) for every engine that has the setting.
 */
void
_terret_settings_install (GObjectClass          *klass,
                          TerretEngine           engine,
                          const TerretSettingId *ids,
                          guint                  n_ids)
{
  for (guint i = 0; i < n_ids; i++)
    g_object_class_install_property (klass, TERRET_SETTING_PROP (ids[i]),
                                     new_param_spec (ids[i], engine));
}

/* --- Snapshots --------------------------------------------------------- */

static TerretSettings *
settings_new_defaults (TerretEngine engine)
{
  TerretSettings *settings = g_new0 (TerretSettings, 1);

  g_atomic_ref_count_init (&settings->ref_count);
  settings->engine = engine;
  settings->timeout = TERRET_DEFAULT_TIMEOUT;
  settings->max_output = engine == TERRET_ENGINE_SESSION ? DEFAULT_SESSION_MAX_OUTPUT
                                                         : DEFAULT_COMMAND_MAX_OUTPUT;
  settings->env = g_new0 (char *, 1);
  settings->shell = g_strdup (TERRET_DEFAULT_SHELL);
  settings->handshake_timeout = DEFAULT_HANDSHAKE_TIMEOUT;
  settings->interrupt_grace = DEFAULT_INTERRUPT_GRACE;
  settings->drain_grace = DEFAULT_DRAIN_GRACE;
  capture_defaults (settings);
  return settings;
}

static TerretSettings *
settings_copy (const TerretSettings *other)
{
  TerretSettings *settings = g_memdup2 (other, sizeof *other);

  g_atomic_ref_count_init (&settings->ref_count);
  settings->cwd = g_strdup (other->cwd);
  settings->env = g_strdupv (other->env);
  settings->shell = g_strdup (other->shell);
  settings->full_output_dir = g_strdup (other->full_output_dir);
  _terret_sandbox_copy (settings, other);
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

  g_free (settings->cwd);
  g_strfreev (settings->env);
  g_free (settings->shell);
  g_free (settings->full_output_dir);
  _terret_sandbox_clear (settings);
  g_free (settings);
}

/* What a capture may hold: the setting, clamped so that a window plus
 * its overshoot cannot overflow; memory runs out long before. */
gsize
_terret_settings_capture_limit (const TerretSettings *settings)
{
  return (gsize)MIN (settings->max_output, (guint64)G_MAXSIZE / 4);
}

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

/* --- Limits ----------------------------------------------------------- */

static const char * const limit_settings[TERRET_N_LIMITS] = {
  "limit-memory", "limit-processes", "limit-cpu", "limit-file-size", "limit-open-files",
};

/*
 * _terret_settings_apply_limits:
 *
 * The limit settings, as what @launcher's process starts with.
 */
void
_terret_settings_apply_limits (const TerretSettings *settings,
                               TerretLauncher       *launcher)
{
  for (guint i = 0; i < TERRET_N_LIMITS; i++)
    if (settings->limits[i] != 0)
      terret_launcher_set_limit (launcher, (TerretLimits)(1u << i), settings->limits[i]);
}

/*
 * _terret_settings_limits_from_status:
 *
 * The limits a command's end shows it hit, by its wait status: SIGXCPU
 * and SIGXFSZ are sent for the CPU-time and file-size limits alone, and a
 * shell reports a child they ended as 128 + the signal. Only limits that
 * are set count, so a command's own `exit 152` is not taken for one.
 */
TerretLimits
_terret_settings_limits_from_status (const TerretSettings *settings,
                                     int                   wait_status)
{
  TerretLimits hit = TERRET_LIMIT_NONE;
  int sig = 0;

  if (WIFSIGNALED (wait_status))
    sig = WTERMSIG (wait_status);
  else if (WIFEXITED (wait_status) && WEXITSTATUS (wait_status) > 128)
    sig = WEXITSTATUS (wait_status) - 128;

  if (sig == SIGXCPU && settings->limits[2] != 0)
    hit |= TERRET_LIMIT_CPU;
  if (sig == SIGXFSZ && settings->limits[3] != 0)
    hit |= TERRET_LIMIT_FILE_SIZE;
  return hit;
}

/*
 * _terret_settings_describe_limits_hit:
 *
 * A sentence for a result's notice naming the limits in @hit with their
 * values, or NULL when @hit is empty.
 */
char *
_terret_settings_describe_limits_hit (const TerretSettings *settings,
                                      TerretLimits          hit)
{
  g_autoptr(GString) names = g_string_new (NULL);

  for (guint i = 0; i < TERRET_N_LIMITS; i++)
    {
      if ((hit & (1u << i)) == 0)
        continue;
      if (names->len > 0)
        g_string_append (names, " and ");
      if ((1u << i) == TERRET_LIMIT_MEMORY || (1u << i) == TERRET_LIMIT_FILE_SIZE)
        {
          /* Exact, and the same in every locale: 64 MiB, 1536 KiB, 1000 bytes. */
          static const char * const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
          guint64 value = settings->limits[i];
          guint unit = 0;

          while (unit + 1 < G_N_ELEMENTS (units) && value >= 1024 && value % 1024 == 0)
            value /= 1024, unit++;
          g_string_append_printf (names, "%s (%" G_GUINT64_FORMAT " %s)", limit_settings[i], value,
                                  units[unit]);
        }
      else
        g_string_append_printf (names, "%s (%" G_GUINT64_FORMAT "%s)", limit_settings[i],
                                settings->limits[i], (1u << i) == TERRET_LIMIT_CPU ? " s" : "");
    }
  if (names->len == 0)
    return NULL;
  return g_strdup_printf ("The command ran into %s, so what it asked for was refused or it was "
                          "ended.", names->str);
}

/* --- The store --------------------------------------------------------- */

void
_terret_settings_store_init (TerretSettingsStore *store,
                             TerretEngine         engine)
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

void
_terret_settings_store_get (TerretSettingsStore *store,
                            guint                prop_id,
                            GValue              *value)
{
  g_autoptr(TerretSettings) s = _terret_settings_store_snapshot (store);

  if (is_capture_setting ((TerretSettingId)(prop_id - 1)))
    {
      capture_get (s, (TerretSettingId)(prop_id - 1), value);
      return;
    }
  if (_terret_sandbox_is_setting ((TerretSettingId)(prop_id - 1)))
    {
      _terret_sandbox_get (s, (TerretSettingId)(prop_id - 1), value);
      return;
    }

  switch ((TerretSettingId)(prop_id - 1))
    {
    case TERRET_SETTING_TIMEOUT:
      g_value_set_double (value, s->timeout);
      break;
    case TERRET_SETTING_MAX_OUTPUT:
      g_value_set_uint64 (value, s->max_output);
      break;
    case TERRET_SETTING_CWD:
      g_value_set_string (value, s->cwd);
      break;
    case TERRET_SETTING_ENV:
      g_value_set_boxed (value, s->env);
      break;
    case TERRET_SETTING_SHELL:
      g_value_set_string (value, s->shell);
      break;
    case TERRET_SETTING_HANDSHAKE_TIMEOUT:
      g_value_set_double (value, s->handshake_timeout);
      break;
    case TERRET_SETTING_INTERRUPT_GRACE:
      g_value_set_double (value, s->interrupt_grace);
      break;
    case TERRET_SETTING_DRAIN_GRACE:
      g_value_set_double (value, s->drain_grace);
      break;
    case TERRET_SETTING_LIMIT_MEMORY:
    case TERRET_SETTING_LIMIT_PROCESSES:
    case TERRET_SETTING_LIMIT_CPU:
    case TERRET_SETTING_LIMIT_FILE_SIZE:
    case TERRET_SETTING_LIMIT_OPEN_FILES:
      g_value_set_uint64 (value, s->limits[prop_id - TERRET_SETTING_PROP (TERRET_SETTING_LIMIT_MEMORY)]);
      break;
    case N_TERRET_SETTINGS:
    default:
      g_assert_not_reached ();
    }
}

static gboolean
set_double (double *field,
            double  value)
{
  if (*field == value)
    return FALSE;
  *field = value;
  return TRUE;
}

static gboolean
set_string (char       **field,
            const char  *value)
{
  if (g_strcmp0 (*field, value) == 0)
    return FALSE;
  g_free (*field);
  *field = g_strdup (value);
  return TRUE;
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
  gboolean changed = FALSE;

  g_mutex_lock (&store->mutex);
  s = settings_copy (store->current);
  if (is_capture_setting ((TerretSettingId)(prop_id - 1)))
    changed = capture_set (s, (TerretSettingId)(prop_id - 1), value);
  else if (_terret_sandbox_is_setting ((TerretSettingId)(prop_id - 1)))
    changed = _terret_sandbox_set (s, (TerretSettingId)(prop_id - 1), value);
  else switch ((TerretSettingId)(prop_id - 1))
    {
    case TERRET_SETTING_TIMEOUT:
      changed = set_double (&s->timeout, g_value_get_double (value));
      break;
    case TERRET_SETTING_MAX_OUTPUT:
      changed = s->max_output != g_value_get_uint64 (value);
      s->max_output = g_value_get_uint64 (value);
      break;
    case TERRET_SETTING_CWD:
      changed = set_string (&s->cwd, g_value_get_string (value));
      break;
    case TERRET_SETTING_ENV:
      {
        const char * const *env = g_value_get_boxed (value);
        const char * const empty[] = { NULL };

        if (env == NULL)
          env = empty;
        changed = !g_strv_equal ((const char * const *)s->env, env);
        g_strfreev (s->env);
        s->env = g_strdupv ((char **)env);
      }
      break;
    case TERRET_SETTING_SHELL:
      {
        const char *shell = g_value_get_string (value);

        /* Unset or empty is the default again. */
        changed = set_string (&s->shell, shell != NULL && *shell != '\0' ? shell
                                                                         : TERRET_DEFAULT_SHELL);
      }
      break;
    case TERRET_SETTING_HANDSHAKE_TIMEOUT:
      changed = set_double (&s->handshake_timeout, g_value_get_double (value));
      break;
    case TERRET_SETTING_INTERRUPT_GRACE:
      changed = set_double (&s->interrupt_grace, g_value_get_double (value));
      break;
    case TERRET_SETTING_DRAIN_GRACE:
      changed = set_double (&s->drain_grace, g_value_get_double (value));
      break;
    case TERRET_SETTING_LIMIT_MEMORY:
    case TERRET_SETTING_LIMIT_PROCESSES:
    case TERRET_SETTING_LIMIT_CPU:
    case TERRET_SETTING_LIMIT_FILE_SIZE:
    case TERRET_SETTING_LIMIT_OPEN_FILES:
      {
        guint64 *field = &s->limits[prop_id - TERRET_SETTING_PROP (TERRET_SETTING_LIMIT_MEMORY)];

        changed = *field != g_value_get_uint64 (value);
        *field = g_value_get_uint64 (value);
      }
      break;
    case N_TERRET_SETTINGS:
    default:
      g_assert_not_reached ();
    }

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

/* --- What a run keeps of its output ------------------------------------ */

/* The capture settings: which bytes a run keeps past max-output, and the
 * file that keeps them all. Kept together here, apart from the rest. */

#define DEFAULT_FULL_OUTPUT_MAX (G_GUINT64_CONSTANT (1) << 30)

static TerretCaptureMode
engine_capture (TerretEngine engine)
{
  return engine == TERRET_ENGINE_SESSION ? TERRET_CAPTURE_MODE_HEAD : TERRET_CAPTURE_MODE_TAIL;
}

static gboolean
is_capture_setting (TerretSettingId id)
{
  switch (id)
    {
    case TERRET_SETTING_CAPTURE:
    case TERRET_SETTING_KEEP_FULL_OUTPUT:
    case TERRET_SETTING_FULL_OUTPUT_DIR:
    case TERRET_SETTING_FULL_OUTPUT_MAX:
      return TRUE;
    default:
      return FALSE;
    }
}

static GParamSpec *
capture_param_spec (TerretSettingId id,
                    TerretEngine    engine,
                    GParamFlags     flags)
{
  switch (id)
    {
    case TERRET_SETTING_CAPTURE:
      return g_param_spec_enum ("capture", NULL,
                                "Which bytes of a stream past max-output are kept: head, tail, "
                                "or head-tail (the first and last halves of max-output); default "
                                "is the backend's own",
                                TERRET_TYPE_CAPTURE_MODE, engine_capture (engine), flags);
    case TERRET_SETTING_KEEP_FULL_OUTPUT:
      return g_param_spec_boolean ("keep-full-output", NULL,
                                   "Write every byte of each run's output to a file (0600, in "
                                   "full-output-dir) named in the result; removed when the "
                                   "session closes unless the caller takes it",
                                   FALSE, flags);
    case TERRET_SETTING_FULL_OUTPUT_DIR:
      return g_param_spec_string ("full-output-dir", NULL,
                                  "Directory of full-output files (unset: terret-exec under "
                                  "$XDG_RUNTIME_DIR, else terret-exec-UID in the temporary "
                                  "directory, created 0700)",
                                  NULL, flags);
    case TERRET_SETTING_FULL_OUTPUT_MAX:
      return g_param_spec_uint64 ("full-output-max", NULL,
                                  "Bytes a full-output file holds at most; past it the output is "
                                  "counted, not written",
                                  0, G_MAXUINT64, DEFAULT_FULL_OUTPUT_MAX, flags);
    default:
      g_assert_not_reached ();
    }
}

static void
capture_defaults (TerretSettings *settings)
{
  settings->capture = engine_capture (settings->engine);
  settings->keep_full_output = FALSE;
  settings->full_output_dir = NULL;
  settings->full_output_max = DEFAULT_FULL_OUTPUT_MAX;
}

static void
capture_get (const TerretSettings *s,
             TerretSettingId       id,
             GValue               *value)
{
  switch (id)
    {
    case TERRET_SETTING_CAPTURE:
      g_value_set_enum (value, s->capture);
      break;
    case TERRET_SETTING_KEEP_FULL_OUTPUT:
      g_value_set_boolean (value, s->keep_full_output);
      break;
    case TERRET_SETTING_FULL_OUTPUT_DIR:
      g_value_set_string (value, s->full_output_dir);
      break;
    case TERRET_SETTING_FULL_OUTPUT_MAX:
      g_value_set_uint64 (value, s->full_output_max);
      break;
    default:
      g_assert_not_reached ();
    }
}

static gboolean
capture_set (TerretSettings  *s,
             TerretSettingId  id,
             const GValue    *value)
{
  gboolean changed = FALSE;

  switch (id)
    {
    case TERRET_SETTING_CAPTURE:
      {
        /* "default" is the engine's own again. */
        TerretCaptureMode mode = g_value_get_enum (value);

        if (mode == TERRET_CAPTURE_MODE_DEFAULT)
          mode = engine_capture (s->engine);
        changed = s->capture != mode;
        s->capture = mode;
      }
      break;
    case TERRET_SETTING_KEEP_FULL_OUTPUT:
      changed = s->keep_full_output != g_value_get_boolean (value);
      s->keep_full_output = g_value_get_boolean (value);
      break;
    case TERRET_SETTING_FULL_OUTPUT_DIR:
      {
        const char *dir = g_value_get_string (value);

        /* Empty is unset: the default directory. */
        changed = set_string (&s->full_output_dir, dir != NULL && *dir != '\0' ? dir : NULL);
      }
      break;
    case TERRET_SETTING_FULL_OUTPUT_MAX:
      changed = s->full_output_max != g_value_get_uint64 (value);
      s->full_output_max = g_value_get_uint64 (value);
      break;
    default:
      g_assert_not_reached ();
    }

  return changed;
}

/*
 * _terret_settings_capture_mode:
 *
 * What a run keeps of each stream past max-output: the request's mode, or
 * where it leaves it to the executor, the capture setting.
 */
TerretCaptureMode
_terret_settings_capture_mode (const TerretSettings *settings,
                               TerretRequest        *request)
{
  TerretCaptureMode mode = terret_request_get_capture (request);

  return mode != TERRET_CAPTURE_MODE_DEFAULT ? mode : settings->capture;
}

/*
 * _terret_settings_open_spool:
 *
 * The full-output file of one stream of a run, when the request or the
 * keep-full-output setting asks for one; NULL without an error when
 * neither does. A file that cannot be created fails the run before
 * anything is spawned.
 */
TerretSpool *
_terret_settings_open_spool (const TerretSettings  *settings,
                             TerretRequest         *request,
                             const char            *suffix,
                             GError               **error)
{
  if (!settings->keep_full_output && !terret_request_get_keep_full_output (request))
    return NULL;

  return _terret_spool_new (settings->full_output_dir, suffix, settings->full_output_max, error);
}
