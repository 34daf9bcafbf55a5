/* terret-container-executor.c: the podman, docker and kubernetes backends
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

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
 * one TerretEngine, whose mode its mode setting names, with the settings
 * of both modes (terret-both-modes.c, shared with flatpak-host); the
 * mode is set when the executor is made, never on a live one. Its
 * class's hooks (terret-container-engines.c) put every shell and command
 * in the container; its own settings are in terret-container-config.c.
 *
 * Each backend is a type of its own (the registry names a backend by its
 * type), the three sharing this code: podman, docker, and kubernetes
 * (kubectl), which reaches a running pod only.
 */

static const GEnumValue mode_values[] = {
  { TERRET_ENGINE_MODE_SESSION, "MODE_SESSION", "session" },
  { TERRET_ENGINE_MODE_ONESHOT, "MODE_ONESHOT", "oneshot" },
  { 0, NULL, NULL },
};

static GType mode_type;

typedef struct
{
  TerretEngineClass parent_class;

  TerretContainerEngine engine;
  TerretBothModesClass both;
} TerretContainerExecutorClass;

#define CONTAINER_EXECUTOR(o) ((TerretContainerExecutor *)(o))
#define CONTAINER_EXECUTOR_GET_CLASS(o) ((TerretContainerExecutorClass *)G_OBJECT_GET_CLASS (o))

/* Ids: 1 the mode, then the container's own settings, then the
 * engines'. */
#define PROP_MODE 1
#define PROP_FIRST_CONFIG 2

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

  if (!terret_both_modes_check (&self->both, &klass->both, engine, error))
    return FALSE;

  for (guint i = 0; i < G_N_ELEMENTS (host_only); i++)
    {
      GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (self), host_only[i]);
      g_auto(GValue) value = G_VALUE_INIT;

      if (pspec == NULL ||
          !terret_both_modes_has (&klass->both, pspec, terret_engine_get_mode (engine)))
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

/* The mode and the engines' settings are the shared code's; the rest
 * are the container's own. */
static void
container_get_property (GObject    *object,
                        guint       prop_id,
                        GValue     *value,
                        GParamSpec *pspec)
{
  TerretContainerExecutor *self = CONTAINER_EXECUTOR (object);

  if (!terret_both_modes_get_property (&self->both, &CONTAINER_EXECUTOR_GET_CLASS (self)->both,
                                       TERRET_ENGINE (self), prop_id, value, pspec))
    terret_container_config_get (self->config, g_param_spec_get_name (pspec), value);
}

static void
container_set_property (GObject      *object,
                        guint         prop_id,
                        const GValue *value,
                        GParamSpec   *pspec)
{
  TerretContainerExecutor *self = CONTAINER_EXECUTOR (object);
  gboolean changed = TRUE;

  if (terret_both_modes_set_property (&self->both, &CONTAINER_EXECUTOR_GET_CLASS (self)->both,
                                      TERRET_ENGINE (self), prop_id, value, pspec))
    return;
  terret_container_config_set (self->config, g_param_spec_get_name (pspec), value, &changed);
  if (changed)
    g_object_notify_by_pspec (object, pspec);
}

/* The engines' words for the settings whose meaning the container
 * changes: where a shell starts, what it inherits. */
static const TerretBothModesWords container_words[] = {
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

static void
container_class_init (TerretContainerExecutorClass *klass,
                      TerretContainerEngine         engine)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  guint n_config;

  object_class->get_property = container_get_property;
  object_class->set_property = container_set_property;
  terret_container_engine_class_init (TERRET_ENGINE_CLASS (klass));
  TERRET_ENGINE_CLASS (klass)->check_available = container_check_available;
  klass->engine = engine;

  /* The container's own settings, then, after as many ids, the mode's
   * and the engines'. */
  terret_container_config_install_properties (object_class, engine, PROP_FIRST_CONFIG);
  g_free (g_object_class_list_properties (object_class, &n_config));
  terret_both_modes_class_install (&klass->both, object_class, PROP_MODE, mode_type,
                                   "session (one persistent bash per session key, cd and export "
                                   "persist) or oneshot (bash -c per command, stdout and stderr "
                                   "apart); set when the executor is made",
                                   PROP_FIRST_CONFIG + n_config, container_words,
                                   G_N_ELEMENTS (container_words));
}

static void
container_init (TerretContainerExecutor *self,
                TerretContainerEngine    engine)
{
  self->config = terret_container_config_new (engine);
  terret_both_modes_init (&self->both);
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

  terret_both_modes_clear (&self->both);
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
