/* terret-flatpak-executor.c: the flatpak-host backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include <gio/gio.h>
#include <terret-exec.h>

#include "terret-flatpak-channel.h"
#include "terret-flatpak-engines.h"
#include "terret-flatpak-host.h"

/*
 * TerretFlatpakExecutor:
 *
 * Runs commands on the host of the Flatpak app it is in, under a
 * launcher of terret-exec's own started there through the Flatpak
 * session helper (terret-flatpak-host.c). One backend name for both
 * modes: `mode=session` (the default: one persistent bash per session
 * key on a terminal, as pty) or `mode=oneshot` (`bash -c` per command,
 * stdout and stderr apart, as oneshot). It is one TerretEngine, whose
 * mode its mode setting names: it installs the settings of both modes,
 * takes them all while the registry applies the configuration, and
 * refuses at g_initable_init() one its mode lacks; the mode is set when
 * the executor is made, never on a live one. Its class's hooks
 * (terret-flatpak-engines.c) put every shell and command on the host.
 */

typedef enum
{
  MODE_SESSION,
  MODE_ONESHOT,
} FlatpakMode;

static const GEnumValue mode_values[] = {
  { MODE_SESSION, "MODE_SESSION", "session" },
  { MODE_ONESHOT, "MODE_ONESHOT", "oneshot" },
  /* The local backends' names for the same two. */
  { MODE_SESSION, "MODE_PTY", "pty" },
  { 0, NULL, NULL },
};

static GType mode_type;

typedef struct
{
  TerretEngineClass parent_class;

  guint n_props;
  guint8 *modes;                /* by property id: 1 << MODE_* of the engines that have it */
} TerretFlatpakExecutorClass;

GType terret_flatpak_executor_get_type (void);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretFlatpakExecutor, terret_flatpak_executor, TERRET_TYPE_ENGINE,
                                G_TYPE_FLAG_FINAL, {})

#define FLATPAK_EXECUTOR(o) ((TerretFlatpakExecutor *)(o))
#define FLATPAK_EXECUTOR_GET_CLASS(o) ((TerretFlatpakExecutorClass *)G_OBJECT_GET_CLASS (o))
#define PROP_MODE 1

#define MODE(self) ((FlatpakMode)terret_engine_get_mode (TERRET_ENGINE (self)))

/* --- Initialization: the mode is chosen ----------------------------------- */

/* The settings set before init must all be the mode's; then the host's
 * own checks. */
static gboolean
flatpak_check_available (TerretEngine  *engine,
                         GCancellable  *cancellable,
                         GError       **error)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (engine);
  TerretFlatpakExecutorClass *klass = FLATPAK_EXECUTOR_GET_CLASS (self);
  const char *mode_name = mode_values[MODE (self)].value_nick;
  GHashTableIter iter;
  const char *name;

  self->initialized = TRUE;

  g_hash_table_iter_init (&iter, self->set_early);
  while (g_hash_table_iter_next (&iter, (gpointer *)&name, NULL))
    {
      GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (self), name);

      if ((klass->modes[pspec->param_id] & (1u << MODE (self))) == 0)
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                       "the setting “%s” is not one of mode=%s (it is for mode=%s)", name,
                       mode_name, mode_values[!MODE (self)].value_nick);
          return FALSE;
        }
    }

  return terret_flatpak_engine_check_available (engine, cancellable, error);
}

/* --- Properties ---------------------------------------------------------- */

static void
flatpak_get_property (GObject    *object,
                      guint       prop_id,
                      GValue     *value,
                      GParamSpec *pspec)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (object);
  TerretFlatpakExecutorClass *klass = FLATPAK_EXECUTOR_GET_CLASS (object);
  const char *name = g_param_spec_get_name (pspec);

  if (prop_id == PROP_MODE)
    g_value_set_enum (value, MODE (self));
  /* A setting of the other mode only is its default, unless set (which
   * init then refuses). */
  else if ((klass->modes[prop_id] & (1u << MODE (self))) != 0 ||
           g_hash_table_contains (self->set_early, name))
    terret_engine_get_shared_setting (TERRET_ENGINE (self), name, value);
  else
    g_param_value_set_default (pspec, value);
}

static void
flatpak_set_property (GObject      *object,
                      guint         prop_id,
                      const GValue *value,
                      GParamSpec   *pspec)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (object);
  TerretFlatpakExecutorClass *klass = FLATPAK_EXECUTOR_GET_CLASS (object);
  const char *name = g_param_spec_get_name (pspec);
  gboolean changed;

  if (prop_id == PROP_MODE)
    {
      changed = MODE (self) != (FlatpakMode)g_value_get_enum (value);
      if (changed && self->initialized)
        {
          g_warning ("%s: mode is set when the executor is made; this one stays mode=%s",
                     terret_executor_get_name (TERRET_EXECUTOR (self)),
                     mode_values[MODE (self)].value_nick);
          return;
        }
      terret_engine_set_mode (TERRET_ENGINE (self), g_value_get_enum (value));
    }
  else
    {
      if (!self->initialized)
        g_hash_table_add (self->set_early, g_strdup (name));
      else if ((klass->modes[prop_id] & (1u << MODE (self))) == 0)
        {
          g_warning ("%s: the setting “%s” is not one of mode=%s; ignored",
                     terret_executor_get_name (TERRET_EXECUTOR (self)), name,
                     mode_values[MODE (self)].value_nick);
          return;
        }
      changed = terret_engine_set_shared_setting (TERRET_ENGINE (self), name, value);
    }

  if (changed)
    g_object_notify_by_pspec (object, pspec);
}

/* The engines' words for the settings whose meaning the host changes. */
static const struct
{
  const char *name;
  const char *blurb;
} host_words[] = {
  { "cwd", "Working directory on the host a new shell or command starts in (unset: the home "
           "directory)" },
  { "env", "VARIABLE=value entries added to the host's environment (the Flatpak session "
           "helper's, and for a session the defaults TERM=dumb, PAGER=cat, ...); the app's "
           "is never passed" },
  { "shell", "The bash that runs on the host: a path there, or a name looked up in the host's "
             "PATH" },
  { "sandbox", "Refused: commands run on the host, outside the app's sandbox" },
  { "env-policy", "Refused but for inherit: nothing of the app's environment reaches the host" },
  { "env-exclude", "Refused: nothing of the app's environment reaches the host" },
};

/* A copy of an engine's setting for the executor's class, its text
 * saying which mode it is for when only one has it. */
static GParamSpec *
copy_setting (GParamSpec *p,
              guint       modes)
{
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_NAME;
  const char *name = g_param_spec_get_name (p);
  const char *words = g_param_spec_get_blurb (p);
  g_autofree char *blurb = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (host_words); i++)
    if (strcmp (host_words[i].name, name) == 0)
      words = host_words[i].blurb;
  blurb = modes == (1u << MODE_SESSION) ? g_strdup_printf ("%s (mode=session)", words)
          : modes == (1u << MODE_ONESHOT) ? g_strdup_printf ("%s (mode=oneshot)", words)
          : g_strdup (words);

  if (G_IS_PARAM_SPEC_DOUBLE (p))
    {
      GParamSpecDouble *d = G_PARAM_SPEC_DOUBLE (p);

      return g_param_spec_double (name, NULL, blurb, d->minimum, d->maximum, d->default_value, flags);
    }
  if (G_IS_PARAM_SPEC_UINT64 (p))
    {
      GParamSpecUInt64 *u = G_PARAM_SPEC_UINT64 (p);

      return g_param_spec_uint64 (name, NULL, blurb, u->minimum, u->maximum, u->default_value, flags);
    }
  if (G_IS_PARAM_SPEC_UINT (p))
    {
      GParamSpecUInt *u = G_PARAM_SPEC_UINT (p);

      return g_param_spec_uint (name, NULL, blurb, u->minimum, u->maximum, u->default_value, flags);
    }
  if (G_IS_PARAM_SPEC_INT (p))
    {
      GParamSpecInt *i = G_PARAM_SPEC_INT (p);

      return g_param_spec_int (name, NULL, blurb, i->minimum, i->maximum, i->default_value, flags);
    }
  if (G_IS_PARAM_SPEC_BOOLEAN (p))
    return g_param_spec_boolean (name, NULL, blurb, G_PARAM_SPEC_BOOLEAN (p)->default_value, flags);
  if (G_IS_PARAM_SPEC_STRING (p))
    return g_param_spec_string (name, NULL, blurb, G_PARAM_SPEC_STRING (p)->default_value, flags);
  if (G_IS_PARAM_SPEC_ENUM (p))
    return g_param_spec_enum (name, NULL, blurb, G_PARAM_SPEC_VALUE_TYPE (p),
                              G_PARAM_SPEC_ENUM (p)->default_value, flags);
  if (G_IS_PARAM_SPEC_FLAGS (p))
    return g_param_spec_flags (name, NULL, blurb, G_PARAM_SPEC_VALUE_TYPE (p),
                               G_PARAM_SPEC_FLAGS (p)->default_value, flags);
  if (G_IS_PARAM_SPEC_BOXED (p))
    return g_param_spec_boxed (name, NULL, blurb, G_PARAM_SPEC_VALUE_TYPE (p), flags);

  g_error ("flatpak-host: cannot take over the setting %s of type %s", name,
           G_PARAM_SPEC_TYPE_NAME (p));
  return NULL;
}

static void
terret_flatpak_executor_finalize (GObject *object)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (object);

  g_clear_pointer (&self->set_early, g_hash_table_unref);
  g_clear_pointer (&self->host, terret_flatpak_host_unref);

  G_OBJECT_CLASS (terret_flatpak_executor_parent_class)->finalize (object);
}

static void
terret_flatpak_executor_class_init (TerretFlatpakExecutorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GObjectClass *engine_classes[2] = {
    g_type_class_ref (TERRET_TYPE_SESSION_EXECUTOR),
    g_type_class_ref (TERRET_TYPE_COMMAND_EXECUTOR),
  };
  g_autoptr(GPtrArray) copies = g_ptr_array_new ();
  g_autoptr(GArray) modes = g_array_new (FALSE, TRUE, sizeof (guint8));

  object_class->get_property = flatpak_get_property;
  object_class->set_property = flatpak_set_property;
  object_class->finalize = terret_flatpak_executor_finalize;
  terret_flatpak_engine_class_init (TERRET_ENGINE_CLASS (klass));
  TERRET_ENGINE_CLASS (klass)->check_available = flatpak_check_available;

  /* The engines' settings, once each: the session's first, so a setting
   * both have is described as the session's (the default mode). */
  for (guint e = 0; e < G_N_ELEMENTS (engine_classes); e++)
    {
      guint n;
      g_autofree GParamSpec **pspecs = g_object_class_list_properties (engine_classes[e], &n);

      for (guint i = 0; i < n; i++)
        {
          guint j;

          if ((pspecs[i]->flags & G_PARAM_WRITABLE) == 0)
            continue;
          for (j = 0; j < copies->len; j++)
            if (strcmp (g_param_spec_get_name (g_ptr_array_index (copies, j)),
                        g_param_spec_get_name (pspecs[i])) == 0)
              break;
          if (j == copies->len)
            {
              guint8 none = 0;

              g_ptr_array_add (copies, pspecs[i]);
              g_array_append_val (modes, none);
            }
          g_array_index (modes, guint8, j) |= 1u << (e == 0 ? MODE_SESSION : MODE_ONESHOT);
        }
    }

  /* Ids: 1 the mode, then the engines' settings. */
  klass->n_props = 2 + copies->len;
  klass->modes = g_new0 (guint8, klass->n_props);
  g_object_class_install_property (object_class, PROP_MODE,
    g_param_spec_enum ("mode", NULL,
                       "session (one persistent bash per session key on a terminal, cd and "
                       "export persist; also called pty) or oneshot (bash -c per command, "
                       "stdout and stderr apart); set when the executor is made",
                       mode_type, MODE_SESSION,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));
  for (guint i = 0; i < copies->len; i++)
    {
      guint id = 2 + i;

      klass->modes[id] = g_array_index (modes, guint8, i);
      g_object_class_install_property (object_class, id,
                                       copy_setting (g_ptr_array_index (copies, i),
                                                     klass->modes[id]));
    }
  /* The engine classes stay: the copies' names are theirs. */
}

static void
terret_flatpak_executor_class_finalize (TerretFlatpakExecutorClass *klass)
{
}

static void
terret_flatpak_executor_init (TerretFlatpakExecutor *self)
{
  self->host = terret_flatpak_host_new ();
  self->set_early = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

/* --- Module --------------------------------------------------------------- */

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  GTypeModule *type_module = G_TYPE_MODULE (module);

  mode_type = g_type_module_register_enum (type_module, "TerretFlatpakMode", mode_values);
  terret_flatpak_channel_register (type_module);
  terret_flatpak_executor_register_type (type_module);
  /* Above pty (100): an app that was given the host (its finish-args
   * name org.freedesktop.Flatpak, a deliberate grant of a host shell)
   * wants the user's tools, not the runtime's; anywhere else this is
   * unavailable, said in its words, and the next backend is chosen. */
  g_io_extension_point_implement (TERRET_EXECUTOR_EXTENSION_POINT_NAME,
                                  terret_flatpak_executor_get_type (), "flatpak-host", 110);
}

G_MODULE_EXPORT void
g_io_module_unload (GIOModule *module)
{
}

G_MODULE_EXPORT char **
g_io_module_query (void)
{
  char *extension_points[] = { (char *)TERRET_EXECUTOR_EXTENSION_POINT_NAME, NULL };

  return g_strdupv (extension_points);
}
