/* terret-container-executor.c: the podman, docker and kubernetes backends
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include <gio/gio.h>
#include <terret-exec.h>

#include "terret-container-channel.h"
#include "terret-container-config.h"
#include "terret-container-engines.h"

/*
 * TerretContainerExecutor:
 *
 * One backend name for both modes: `mode=session` (the default: one
 * persistent bash per session key, as pty and ssh) or `mode=oneshot`
 * (`bash -c` per command, stdout and stderr apart, as oneshot). It is
 * one TerretEngine, whose mode its mode setting names: it installs the
 * settings of both modes, takes them all while the registry applies the
 * configuration, and refuses at g_initable_init() one its mode lacks;
 * the mode is set when the executor is made, never on a live one. Its
 * class's hooks (terret-container-engines.c) put every shell and command
 * in the container; its own settings are in terret-container-config.c.
 *
 * Each backend is a type of its own (the registry names a backend by its
 * type), the three sharing this code: podman, docker, and kubernetes
 * (kubectl), which reaches a running pod only.
 */

typedef enum
{
  MODE_SESSION,
  MODE_ONESHOT,
} ContainerMode;

static const GEnumValue mode_values[] = {
  { MODE_SESSION, "MODE_SESSION", "session" },
  { MODE_ONESHOT, "MODE_ONESHOT", "oneshot" },
  { 0, NULL, NULL },
};

static GType mode_type;

/* Where each of a class's properties goes. */
typedef enum
{
  TARGET_MODE,
  TARGET_CONFIG,
  TARGET_ENGINE,
} Target;

typedef struct
{
  TerretEngineClass parent_class;

  TerretContainerEngine engine;
  guint n_props;
  Target *targets;              /* by property id */
  guint8 *modes;                /* by property id: 1 << MODE_* of the engines that have it */
} TerretContainerExecutorClass;

#define CONTAINER_EXECUTOR(o) ((TerretContainerExecutor *)(o))
#define CONTAINER_EXECUTOR_GET_CLASS(o) ((TerretContainerExecutorClass *)G_OBJECT_GET_CLASS (o))

#define MODE(self) ((ContainerMode)terret_engine_get_mode (TERRET_ENGINE (self)))

/* --- Initialization: the mode is chosen ----------------------------------- */

static const char * const host_only[] = { "sandbox", "env-policy", "env-exclude" };

/* The settings set before init must all be the mode's, and the sandbox
 * settings, which hold on this host, are refused before anything runs;
 * then the container's own checks. */
static gboolean
container_check_available (TerretEngine  *engine,
                           GCancellable  *cancellable,
                           GError       **error)
{
  TerretContainerExecutor *self = CONTAINER_EXECUTOR (engine);
  TerretContainerExecutorClass *klass = CONTAINER_EXECUTOR_GET_CLASS (self);
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

  for (guint i = 0; i < G_N_ELEMENTS (host_only); i++)
    {
      GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (self), host_only[i]);
      g_auto(GValue) value = G_VALUE_INIT;

      if (pspec == NULL || (klass->modes[pspec->param_id] & (1u << MODE (self))) == 0)
        continue;
      g_value_init (&value, G_PARAM_SPEC_VALUE_TYPE (pspec));
      terret_engine_get_shared_setting (engine, host_only[i], &value);
      if (!g_param_value_defaults (pspec, &value))
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                       "the %s backend cannot take %s: the container is the sandbox, and the "
                       "environment there is the container's own (sandbox, env-policy and "
                       "env-exclude hold for commands on this host)",
                       terret_executor_get_name (TERRET_EXECUTOR (self)), host_only[i]);
          return FALSE;
        }
    }

  return terret_container_engine_check_available (engine, cancellable, error);
}

/* --- Properties ---------------------------------------------------------- */

static void
container_get_property (GObject    *object,
                        guint       prop_id,
                        GValue     *value,
                        GParamSpec *pspec)
{
  TerretContainerExecutor *self = CONTAINER_EXECUTOR (object);
  TerretContainerExecutorClass *klass = CONTAINER_EXECUTOR_GET_CLASS (object);
  const char *name = g_param_spec_get_name (pspec);

  switch (klass->targets[prop_id])
    {
    case TARGET_MODE:
      g_value_set_enum (value, MODE (self));
      break;

    case TARGET_CONFIG:
      terret_container_config_get (self->config, name, value);
      break;

    case TARGET_ENGINE:
      /* A setting of the other mode only is its default, unless set
       * (which init then refuses). */
      if ((klass->modes[prop_id] & (1u << MODE (self))) != 0 ||
          g_hash_table_contains (self->set_early, name))
        terret_engine_get_shared_setting (TERRET_ENGINE (self), name, value);
      else
        g_param_value_set_default (pspec, value);
      break;
    }
}

static void
container_set_property (GObject      *object,
                        guint         prop_id,
                        const GValue *value,
                        GParamSpec   *pspec)
{
  TerretContainerExecutor *self = CONTAINER_EXECUTOR (object);
  TerretContainerExecutorClass *klass = CONTAINER_EXECUTOR_GET_CLASS (object);
  const char *name = g_param_spec_get_name (pspec);
  gboolean changed = TRUE;

  switch (klass->targets[prop_id])
    {
    case TARGET_MODE:
      changed = MODE (self) != (ContainerMode)g_value_get_enum (value);
      if (changed && self->initialized)
        {
          g_warning ("%s: mode is set when the executor is made; this one stays mode=%s",
                     terret_executor_get_name (TERRET_EXECUTOR (self)),
                     mode_values[MODE (self)].value_nick);
          return;
        }
      terret_engine_set_mode (TERRET_ENGINE (self), g_value_get_enum (value));
      break;

    case TARGET_CONFIG:
      terret_container_config_set (self->config, name, value, &changed);
      break;

    case TARGET_ENGINE:
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
      break;
    }

  if (changed)
    g_object_notify_by_pspec (object, pspec);
}

/* The engines' words for the settings whose meaning the container
 * changes: where a shell starts, what it inherits. */
static const struct
{
  const char *name;
  const char *blurb;
} container_words[] = {
  { "cwd", "Working directory in the container a new shell or command starts in (unset: the "
           "container's own)" },
  { "env", "VARIABLE=value entries added to the container's own environment (and, for a "
           "session, to the defaults TERM=dumb, PAGER=cat, ...); the host's is never passed" },
  { "shell", "The bash that runs in the container: a path there, or a name looked up in its PATH" },
  { "limit-memory", "Bytes of memory: for a disposable container, all it runs together "
                    "(--memory); in a running container, a session's or run's, by a cgroup where "
                    "the container lets one be made, else per process as address space (0: no "
                    "limit; K, M, G suffixes)" },
  { "limit-processes", "Processes at once: for a disposable container, all it runs together "
                       "(--pids-limit); in a running container, a session's or run's, by a cgroup "
                       "where the container lets one be made, else counted over the user's (0: no "
                       "limit)" },
  { "sandbox", "Refused: the container is the sandbox" },
  { "workspace", "Not used: the container is the sandbox" },
  { "writable", "Not used: the container is the sandbox" },
  { "hidden", "Not used: the container is the sandbox" },
  { "unhide", "Not used: the container is the sandbox" },
  { "allow-unix-sockets", "Not used: the container is the sandbox" },
  { "env-policy", "Refused but for inherit: nothing of the host's environment reaches the container" },
  { "env-exclude", "Refused: nothing of the host's environment reaches the container" },
  { "network", "off gives a disposable container (image) no network (--network=none); refused "
               "for a running container, whose network is its own" },
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

  for (guint i = 0; i < G_N_ELEMENTS (container_words); i++)
    if (strcmp (container_words[i].name, name) == 0)
      words = container_words[i].blurb;
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

  g_error ("container backends: cannot take over the setting %s of type %s", name,
           G_PARAM_SPEC_TYPE_NAME (p));
  return NULL;
}

static void
container_class_init (TerretContainerExecutorClass *klass,
                      TerretContainerEngine         engine)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GObjectClass *engine_classes[2] = {
    g_type_class_ref (TERRET_TYPE_SESSION_EXECUTOR),
    g_type_class_ref (TERRET_TYPE_COMMAND_EXECUTOR),
  };
  g_autoptr(GPtrArray) copies = g_ptr_array_new ();
  g_autoptr(GArray) modes = g_array_new (FALSE, TRUE, sizeof (guint8));
  guint n_config;

  object_class->get_property = container_get_property;
  object_class->set_property = container_set_property;
  terret_container_engine_class_init (TERRET_ENGINE_CLASS (klass));
  TERRET_ENGINE_CLASS (klass)->check_available = container_check_available;
  klass->engine = engine;

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

  /* Ids: 1 the mode, then the container's own settings, then the
   * engines'. */
  terret_container_config_install_properties (object_class, engine, 2);
  {
    guint n;
    g_autofree GParamSpec **own = g_object_class_list_properties (object_class, &n);

    n_config = n;
  }
  klass->n_props = 2 + n_config + copies->len;
  klass->targets = g_new0 (Target, klass->n_props);
  klass->modes = g_new0 (guint8, klass->n_props);
  for (guint id = 2; id < 2 + n_config; id++)
    klass->targets[id] = TARGET_CONFIG;

  klass->targets[1] = TARGET_MODE;
  g_object_class_install_property (object_class, 1,
    g_param_spec_enum ("mode", NULL,
                       "session (one persistent bash per session key, cd and export persist) or "
                       "oneshot (bash -c per command, stdout and stderr apart); set when the "
                       "executor is made",
                       mode_type, MODE_SESSION,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  for (guint i = 0; i < copies->len; i++)
    {
      guint id = 2 + n_config + i;
      GParamSpec *copy = copy_setting (g_ptr_array_index (copies, i), g_array_index (modes, guint8, i));

      klass->targets[id] = TARGET_ENGINE;
      klass->modes[id] = g_array_index (modes, guint8, i);
      g_object_class_install_property (object_class, id, copy);
    }
  /* The engine classes stay: the copies' names are theirs. */
}

static void
container_init (TerretContainerExecutor *self,
                TerretContainerEngine    engine)
{
  self->config = terret_container_config_new (engine);
  self->set_early = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

static void
container_dispose (GObject       *object,
                   GObjectClass  *parent_class)
{
  parent_class->dispose (object);
}

static void
container_finalize (GObject      *object,
                    GObjectClass *parent_class)
{
  TerretContainerExecutor *self = CONTAINER_EXECUTOR (object);

  g_clear_pointer (&self->set_early, g_hash_table_unref);
  g_clear_pointer (&self->config, terret_container_config_unref);

  parent_class->finalize (object);
}

/* --- The three backends --------------------------------------------------- */

/* The registry names a backend by its type: one type per engine, this
 * file's code behind each. Everything is customized through their own
 * class_init, never by adding an interface again to a registered type
 * (a module is loaded more than once in a process). */
#define DEFINE_CONTAINER_BACKEND(TypeName, type_name, ENGINE)                              \
  typedef TerretContainerExecutor TypeName;                                                \
  typedef TerretContainerExecutorClass TypeName##Class;                                    \
  GType type_name##_get_type (void);                                                       \
  G_DEFINE_DYNAMIC_TYPE_EXTENDED (TypeName, type_name, TERRET_TYPE_ENGINE,               \
                                  G_TYPE_FLAG_FINAL, {})                                   \
  static void                                                                              \
  type_name##_dispose (GObject *object)                                                    \
  {                                                                                        \
    container_dispose (object, G_OBJECT_CLASS (type_name##_parent_class));                \
  }                                                                                        \
  static void                                                                              \
  type_name##_finalize (GObject *object)                                                   \
  {                                                                                        \
    container_finalize (object, G_OBJECT_CLASS (type_name##_parent_class));               \
  }                                                                                        \
  static void                                                                              \
  type_name##_class_init (TypeName##Class *klass)                                          \
  {                                                                                        \
    G_OBJECT_CLASS (klass)->dispose = type_name##_dispose;                                 \
    G_OBJECT_CLASS (klass)->finalize = type_name##_finalize;                               \
    container_class_init (klass, ENGINE);                                                  \
  }                                                                                        \
  static void                                                                              \
  type_name##_class_finalize (TypeName##Class *klass)                                      \
  {                                                                                        \
  }                                                                                        \
  static void                                                                              \
  type_name##_init (TypeName *self)                                                        \
  {                                                                                        \
    container_init (self, ENGINE);                                                         \
  }

DEFINE_CONTAINER_BACKEND (TerretPodmanExecutor, terret_podman_executor, TERRET_CONTAINER_PODMAN)
DEFINE_CONTAINER_BACKEND (TerretDockerExecutor, terret_docker_executor, TERRET_CONTAINER_DOCKER)
DEFINE_CONTAINER_BACKEND (TerretKubernetesExecutor, terret_kubernetes_executor,
                          TERRET_CONTAINER_KUBERNETES)

/* --- Module --------------------------------------------------------------- */

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  GTypeModule *type_module = G_TYPE_MODULE (module);

  mode_type = g_type_module_register_enum (type_module, "TerretContainerMode", mode_values);
  terret_container_config_register (type_module);
  terret_container_channel_register (type_module);
  terret_podman_executor_register_type (type_module);
  terret_docker_executor_register_type (type_module);
  terret_kubernetes_executor_register_type (type_module);
  /* Low: a container is never what a caller who named no backend
   * expects, and without one configured these are unavailable. */
  g_io_extension_point_implement (TERRET_EXECUTOR_EXTENSION_POINT_NAME,
                                  terret_podman_executor_get_type (), "podman", 8);
  g_io_extension_point_implement (TERRET_EXECUTOR_EXTENSION_POINT_NAME,
                                  terret_docker_executor_get_type (), "docker", 7);
  g_io_extension_point_implement (TERRET_EXECUTOR_EXTENSION_POINT_NAME,
                                  terret_kubernetes_executor_get_type (), "kubernetes", 6);
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
