/* terret-flatpak-executor.c: the flatpak-host backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <gio/gio.h>
#include <terret-exec.h>

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
 * mode its mode setting names, with the settings of both modes
 * (terret-both-modes.c, shared with the container backends); the mode is
 * set when the executor is made, never on a live one. Its class's hooks
 * (terret-flatpak-engines.c) put every shell and command on the host.
 */

static const GEnumValue mode_values[] = {
  { TERRET_ENGINE_MODE_SESSION, "MODE_SESSION", "session" },
  { TERRET_ENGINE_MODE_ONESHOT, "MODE_ONESHOT", "oneshot" },
  /* The local backends' names for the same two. */
  { TERRET_ENGINE_MODE_SESSION, "MODE_PTY", "pty" },
  { 0, NULL, NULL },
};

static GType mode_type;

typedef struct
{
  TerretEngineClass parent_class;

  TerretBothModesClass both;
} TerretFlatpakExecutorClass;

GType terret_flatpak_executor_get_type (void);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretFlatpakExecutor, terret_flatpak_executor, TERRET_TYPE_ENGINE,
                                G_TYPE_FLAG_FINAL, {})

#define FLATPAK_EXECUTOR(o) ((TerretFlatpakExecutor *)(o))
#define FLATPAK_EXECUTOR_GET_CLASS(o) ((TerretFlatpakExecutorClass *)G_OBJECT_GET_CLASS (o))

/* Ids: 1 the mode, then the engines' settings. */
#define PROP_MODE 1
#define PROP_FIRST_SETTING 2

/* The settings set before init must all be the mode's; then the host's
 * own checks. */
static gboolean
flatpak_check_available (TerretEngine  *engine,
                         GCancellable  *cancellable,
                         GError       **error)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (engine);

  return terret_both_modes_check (&self->both, &FLATPAK_EXECUTOR_GET_CLASS (self)->both, engine,
                                  error) &&
         terret_flatpak_engine_check_available (engine, cancellable, error);
}

static void
flatpak_get_property (GObject    *object,
                      guint       prop_id,
                      GValue     *value,
                      GParamSpec *pspec)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (object);

  if (!terret_both_modes_get_property (&self->both, &FLATPAK_EXECUTOR_GET_CLASS (self)->both,
                                       TERRET_ENGINE (self), prop_id, value, pspec))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
flatpak_set_property (GObject      *object,
                      guint         prop_id,
                      const GValue *value,
                      GParamSpec   *pspec)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (object);

  if (!terret_both_modes_set_property (&self->both, &FLATPAK_EXECUTOR_GET_CLASS (self)->both,
                                       TERRET_ENGINE (self), prop_id, value, pspec))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

/* The engines' words for the settings whose meaning the host changes. */
static const TerretBothModesWords host_words[] = {
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

static void
terret_flatpak_executor_finalize (GObject *object)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (object);

  terret_both_modes_clear (&self->both);
  g_clear_pointer (&self->host, terret_flatpak_host_unref);

  G_OBJECT_CLASS (terret_flatpak_executor_parent_class)->finalize (object);
}

static void
terret_flatpak_executor_class_init (TerretFlatpakExecutorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = flatpak_get_property;
  object_class->set_property = flatpak_set_property;
  object_class->finalize = terret_flatpak_executor_finalize;
  terret_flatpak_engine_class_init (TERRET_ENGINE_CLASS (klass));
  TERRET_ENGINE_CLASS (klass)->check_available = flatpak_check_available;

  terret_both_modes_class_install (&klass->both, object_class, PROP_MODE, mode_type,
                                   "session (one persistent bash per session key on a terminal, "
                                   "cd and export persist; also called pty) or oneshot (bash -c "
                                   "per command, stdout and stderr apart); set when the executor "
                                   "is made",
                                   PROP_FIRST_SETTING, host_words, G_N_ELEMENTS (host_words));
}

static void
terret_flatpak_executor_class_finalize (TerretFlatpakExecutorClass *klass)
{
}

static void
terret_flatpak_executor_init (TerretFlatpakExecutor *self)
{
  self->host = terret_flatpak_host_new ();
  terret_both_modes_init (&self->both);
}

/* --- Module --------------------------------------------------------------- */

static void
flatpak_module_load (GTypeModule *module)
{
  mode_type = g_type_module_register_enum (module, "TerretFlatpakMode", mode_values);
  terret_flatpak_executor_register_type (module);
  /* Above pty (100): an app that was given the host (its finish-args
   * name org.freedesktop.Flatpak, a deliberate grant of a host shell)
   * wants the user's tools, not the runtime's; anywhere else this is
   * unavailable, said in its words, and the next backend is chosen. */
  g_io_extension_point_implement (TERRET_EXECUTOR_EXTENSION_POINT_NAME,
                                  terret_flatpak_executor_get_type (), "flatpak-host", 110);
}

TERRET_DEFINE_BACKEND_MODULE (flatpak_module_load)
