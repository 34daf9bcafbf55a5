/* terret-container-config.c: what reaches a container, and how
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The backend's own settings and the engine command lines made from them:
 * the one that reaches the far launcher (`exec -i` into a running
 * container or pod, `run -i --rm` of a disposable one) and the one that
 * copies the launcher into a running container.
 */

#include <string.h>
#include <sys/resource.h>

#include <gio/gio.h>

#include "terret-container-config.h"

/* Where the far launcher is in a disposable container: bind-mounted
 * read-only from this host, never written into the image. */
#define DISPOSABLE_LAUNCHER "/.terret-launcher"

#define DEFAULT_LAUNCHER_DIR "/tmp"
#define DEFAULT_CONNECT_TIMEOUT 30

struct _TerretContainerConfig
{
  gatomicrefcount ref_count;
  TerretContainerEngine engine;

  GMutex mutex;
  char *container;              /* (owned) (nullable) */
  char *image;                  /* (owned) (nullable) */
  char *engine_path;            /* (owned) (nullable) NULL: the engine's usual name */
  GStrv engine_options;         /* (owned) */
  char *launcher_dir;           /* (owned) */
  guint connect_timeout;
  char *namespace;              /* (owned) (nullable) */
  char *kube_container;         /* (owned) (nullable) */
  char *context;                /* (owned) (nullable) */
  char *kubeconfig;             /* (owned) (nullable) */
  int launcher;                 /* TerretContainerLauncher */

  /* launcher=auto found the launcher cannot be there: why, in the
   * engine's words, and whether a result has said so yet. */
  char *fallback_why;           /* (owned) (nullable) */
  gboolean notice_given;
};

static GType launcher_type;

static const GEnumValue launcher_values[] = {
  { TERRET_CONTAINER_LAUNCHER_AUTO, "TERRET_CONTAINER_LAUNCHER_AUTO", "auto" },
  { TERRET_CONTAINER_LAUNCHER_REQUIRED, "TERRET_CONTAINER_LAUNCHER_REQUIRED", "required" },
  { TERRET_CONTAINER_LAUNCHER_NONE, "TERRET_CONTAINER_LAUNCHER_NONE", "none" },
  { 0, NULL, NULL },
};

void
terret_container_config_register (GTypeModule *module)
{
  launcher_type = g_type_module_register_enum (module, "TerretContainerLauncher", launcher_values);
}

/* What the engine's exec does not do, said wherever containment is none. */
#define NOT_CONTAINED \
  "containment none: what a command starts may outlive its run in the container (the " \
  "engine's exec does not end it when its client goes: moby/moby#35703), and the limit-* " \
  "settings are refused"


/* --- The settings, by name ---------------------------------------------- */

#define PODMAN (1u << TERRET_CONTAINER_PODMAN)
#define DOCKER (1u << TERRET_CONTAINER_DOCKER)
#define KUBERNETES (1u << TERRET_CONTAINER_KUBERNETES)

typedef enum
{
  KIND_STRING,
  KIND_STRV,
  KIND_UINT,
  KIND_ENUM,
} Kind;

typedef struct
{
  const char *name;
  guint engines;
  Kind kind;
  gsize offset;
  const char *blurb;
} Setting;

static const Setting settings[] = {
  { "container", PODMAN | DOCKER, KIND_STRING, G_STRUCT_OFFSET (TerretContainerConfig, container),
    "The name or id of a running container to run in (or set image)" },
  { "container", KUBERNETES, KIND_STRING, G_STRUCT_OFFSET (TerretContainerConfig, container),
    "The running pod to run in; required" },
  { "image", PODMAN | DOCKER, KIND_STRING, G_STRUCT_OFFSET (TerretContainerConfig, image),
    "Instead of container: a local image (never pulled) to start a disposable container from, "
    "one per executor and policy, whose first process is the launcher: it ends, and is removed, "
    "with what it serves" },
  { "engine-path", PODMAN | DOCKER | KUBERNETES, KIND_STRING,
    G_STRUCT_OFFSET (TerretContainerConfig, engine_path),
    "The engine's client: a path, or a name looked up in PATH (unset: its usual name)" },
  { "engine-options", PODMAN | DOCKER, KIND_STRV,
    G_STRUCT_OFFSET (TerretContainerConfig, engine_options),
    "Extra arguments to the engine's run of a disposable container, before the image (a bind "
    "mount: -v /src:/src; --runtime runc)" },
  { "engine-options", KUBERNETES, KIND_STRV, G_STRUCT_OFFSET (TerretContainerConfig, engine_options),
    "Extra arguments to every kubectl command, before its subcommand (--server=URL, --token=...)" },
  { "launcher-dir", PODMAN | DOCKER | KUBERNETES, KIND_STRING,
    G_STRUCT_OFFSET (TerretContainerConfig, launcher_dir),
    "Where the launcher is copied in a running container, once: a directory there that is "
    "writable and not mounted noexec (/dev/shm usually is)" },
  { "connect-timeout", PODMAN | DOCKER | KUBERNETES, KIND_UINT,
    G_STRUCT_OFFSET (TerretContainerConfig, connect_timeout),
    "Seconds reaching the container may take, a disposable one's start and the launcher's copy "
    "included; an engine that does not answer in time is killed" },
  { "launcher", PODMAN | DOCKER, KIND_ENUM, G_STRUCT_OFFSET (TerretContainerConfig, launcher),
    "For a running container: auto (the launcher; where it cannot be copied in or cannot run "
    "there, plain bash through the engine's exec, said in the containment and the first "
    "result), required (the launcher, else unavailable) or none (plain bash through the "
    "engine's exec: what a command starts may outlive its run; limit-* refused). A disposable "
    "container always has the launcher (read-only, needs no writable place): auto is required "
    "there, none is refused" },
  { "namespace", KUBERNETES, KIND_STRING, G_STRUCT_OFFSET (TerretContainerConfig, namespace),
    "The pod's namespace (unset: the context's)" },
  { "kube-container", KUBERNETES, KIND_STRING, G_STRUCT_OFFSET (TerretContainerConfig, kube_container),
    "The container in the pod (unset: the pod's default one)" },
  { "context", KUBERNETES, KIND_STRING, G_STRUCT_OFFSET (TerretContainerConfig, context),
    "The kubeconfig context (unset: the current one)" },
  { "kubeconfig", KUBERNETES, KIND_STRING, G_STRUCT_OFFSET (TerretContainerConfig, kubeconfig),
    "The kubeconfig file (unset: $KUBECONFIG, else ~/.kube/config)" },
};

static const Setting *
find_setting (TerretContainerEngine  engine,
              const char            *name)
{
  for (guint i = 0; i < G_N_ELEMENTS (settings); i++)
    if ((settings[i].engines & (1u << engine)) != 0 && strcmp (settings[i].name, name) == 0)
      return &settings[i];
  return NULL;
}

TerretContainerConfig *
terret_container_config_new (TerretContainerEngine engine)
{
  TerretContainerConfig *self = g_new0 (TerretContainerConfig, 1);

  g_atomic_ref_count_init (&self->ref_count);
  g_mutex_init (&self->mutex);
  self->engine = engine;
  self->engine_options = g_new0 (char *, 1);
  self->launcher_dir = g_strdup (DEFAULT_LAUNCHER_DIR);
  self->connect_timeout = DEFAULT_CONNECT_TIMEOUT;
  return self;
}

TerretContainerConfig *
terret_container_config_ref (TerretContainerConfig *self)
{
  g_atomic_ref_count_inc (&self->ref_count);
  return self;
}

void
terret_container_config_unref (TerretContainerConfig *self)
{
  if (!g_atomic_ref_count_dec (&self->ref_count))
    return;

  g_free (self->container);
  g_free (self->image);
  g_free (self->engine_path);
  g_strfreev (self->engine_options);
  g_free (self->launcher_dir);
  g_free (self->namespace);
  g_free (self->kube_container);
  g_free (self->context);
  g_free (self->kubeconfig);
  g_free (self->fallback_why);
  g_mutex_clear (&self->mutex);
  g_free (self);
}

TerretContainerEngine
terret_container_config_get_engine (TerretContainerConfig *self)
{
  return self->engine;
}

const char *
terret_container_config_get_engine_name (TerretContainerConfig *self)
{
  static const char * const names[] = { "podman", "docker", "kubectl" };

  return names[self->engine];
}

gboolean
terret_container_config_is_disposable (TerretContainerConfig *self)
{
  gboolean disposable;

  g_mutex_lock (&self->mutex);
  disposable = self->image != NULL;
  g_mutex_unlock (&self->mutex);
  return disposable;
}

gboolean
terret_container_config_get (TerretContainerConfig *self,
                             const char            *name,
                             GValue                *value)
{
  const Setting *setting = find_setting (self->engine, name);
  gpointer field;

  if (setting == NULL)
    return FALSE;
  field = G_STRUCT_MEMBER_P (self, setting->offset);
  g_mutex_lock (&self->mutex);
  if (setting->kind == KIND_STRING)
    g_value_set_string (value, *(char **)field);
  else if (setting->kind == KIND_STRV)
    g_value_set_boxed (value, *(char ***)field);
  else if (setting->kind == KIND_ENUM)
    g_value_set_enum (value, *(int *)field);
  else
    g_value_set_uint (value, *(guint *)field);
  g_mutex_unlock (&self->mutex);
  return TRUE;
}

gboolean
terret_container_config_set (TerretContainerConfig *self,
                             const char            *name,
                             const GValue          *value,
                             gboolean              *changed)
{
  const Setting *setting = find_setting (self->engine, name);
  gpointer field;

  if (setting == NULL)
    return FALSE;
  field = G_STRUCT_MEMBER_P (self, setting->offset);
  g_mutex_lock (&self->mutex);
  if (setting->kind == KIND_STRING)
    {
      const char *text = g_value_get_string (value);

      /* Empty is unset; for the launcher's directory, unset is the default. */
      if (text != NULL && *text == '\0')
        text = NULL;
      if (text == NULL && strcmp (name, "launcher-dir") == 0)
        text = DEFAULT_LAUNCHER_DIR;
      *changed = g_strcmp0 (*(char **)field, text) != 0;
      g_free (*(char **)field);
      *(char **)field = g_strdup (text);
    }
  else if (setting->kind == KIND_STRV)
    {
      char **words = g_value_get_boxed (value);

      *changed = TRUE;
      g_strfreev (*(char ***)field);
      *(char ***)field = words != NULL ? g_strdupv (words) : g_new0 (char *, 1);
    }
  else if (setting->kind == KIND_ENUM)
    {
      *changed = *(int *)field != g_value_get_enum (value);
      *(int *)field = g_value_get_enum (value);
    }
  else
    {
      *changed = *(guint *)field != g_value_get_uint (value);
      *(guint *)field = g_value_get_uint (value);
    }
  g_mutex_unlock (&self->mutex);
  return TRUE;
}

void
terret_container_config_install_properties (GObjectClass          *klass,
                                            TerretContainerEngine  engine,
                                            guint                  first_id)
{
  const GParamFlags flags = (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  guint id = first_id;

  for (guint i = 0; i < G_N_ELEMENTS (settings); i++)
    {
      const Setting *setting = &settings[i];
      GParamSpec *pspec;

      if ((setting->engines & (1u << engine)) == 0)
        continue;
      if (setting->kind == KIND_STRING)
        pspec = g_param_spec_string (setting->name, NULL, setting->blurb,
                                     strcmp (setting->name, "launcher-dir") == 0
                                     ? DEFAULT_LAUNCHER_DIR : NULL, flags);
      else if (setting->kind == KIND_STRV)
        pspec = g_param_spec_boxed (setting->name, NULL, setting->blurb, G_TYPE_STRV, flags);
      else if (setting->kind == KIND_ENUM)
        pspec = g_param_spec_enum (setting->name, NULL, setting->blurb, launcher_type,
                                   TERRET_CONTAINER_LAUNCHER_AUTO, flags);
      else
        pspec = g_param_spec_uint (setting->name, NULL, setting->blurb, 1, 3600,
                                   DEFAULT_CONNECT_TIMEOUT, flags);
      g_object_class_install_property (klass, id++, pspec);
    }
}

/* --- Checking ----------------------------------------------------------- */

/* A word the engine would read as one of its options. */
static gboolean
is_option_like (const char *word)
{
  return word[0] == '-' || strpbrk (word, " \t\n") != NULL;
}

/*
 * terret_container_config_check:
 *
 * What must hold before anything is tried: a container or an image, not
 * both; names the engine cannot take for options; the engine's client
 * on this host; the launcher that runs in the container.
 */
gboolean
terret_container_config_check (TerretContainerConfig  *self,
                               GError                **error)
{
  const char *engine_name = terret_container_config_get_engine_name (self);
  g_autofree char *engine_path = NULL;
  g_autofree char *found = NULL;
  gboolean ok = FALSE;

  g_mutex_lock (&self->mutex);
  if (self->container == NULL && self->image == NULL)
    g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                 self->engine == TERRET_CONTAINER_KUBERNETES
                 ? "no pod configured: set “container” (the pod's name) in the [kubernetes] "
                   "group of executor.conf, or pass --set container=POD"
                 : "no container configured: set “container” (a running container) or “image” "
                   "(a disposable one) in the [%s] group of executor.conf, or pass --set",
                 engine_name);
  else if (self->container != NULL && self->image != NULL)
    g_set_error_literal (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                         "container and image are both set: run in a running container, or in "
                         "a disposable one from an image, not both");
  else if (self->container != NULL && is_option_like (self->container))
    terret_exec_error_set_invalid_setting (error, "container", self->container, "not a container's name or id");
  else if (self->image != NULL && is_option_like (self->image))
    terret_exec_error_set_invalid_setting (error, "image", self->image, "not an image's name");
  else if (self->namespace != NULL && is_option_like (self->namespace))
    terret_exec_error_set_invalid_setting (error, "namespace", self->namespace, "not a namespace's name");
  else if (self->kube_container != NULL && is_option_like (self->kube_container))
    terret_exec_error_set_invalid_setting (error, "kube-container", self->kube_container, "not a container's name");
  else if (!g_path_is_absolute (self->launcher_dir))
    terret_exec_error_set_invalid_setting (error, "launcher-dir", self->launcher_dir, "not an absolute path");
  else if (self->image != NULL && self->launcher == TERRET_CONTAINER_LAUNCHER_NONE)
    g_set_error_literal (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                         "launcher=none is for a running container (container): a disposable "
                         "one (image) has the launcher as its first process, bind-mounted "
                         "read-only, and needs no writable place for it");
  else
    ok = TRUE;
  engine_path = g_strdup (self->engine_path != NULL ? self->engine_path : engine_name);
  g_mutex_unlock (&self->mutex);
  if (!ok)
    return FALSE;

  found = g_find_program_in_path (engine_path);
  if (found == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "The %s backend needs the engine's client: “%s” was not found%s",
                   self->engine == TERRET_CONTAINER_KUBERNETES ? "kubernetes" : engine_name,
                   engine_path, g_path_is_absolute (engine_path) ? "" : " in PATH");
      return FALSE;
    }
  if (!g_file_test (terret_far_side_get_launcher (), G_FILE_TEST_IS_EXECUTABLE))
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "The launcher that runs in the container, %s, is missing: this terret-exec "
                   "was built without static linking (install libc6-dev and rebuild)",
                   terret_far_side_get_launcher ());
      return FALSE;
    }
  return TRUE;
}

/* --- Command lines ------------------------------------------------------ */

static void
add (GPtrArray  *argv,
     const char *word)
{
  g_ptr_array_add (argv, g_strdup (word));
}

/* kubectl's options that say which cluster, before any subcommand. */
static void
add_kube_globals (GPtrArray             *argv,
                  TerretContainerConfig *self)
{
  if (self->kubeconfig != NULL)
    g_ptr_array_add (argv, g_strdup_printf ("--kubeconfig=%s", self->kubeconfig));
  if (self->context != NULL)
    g_ptr_array_add (argv, g_strdup_printf ("--context=%s", self->context));
  for (guint i = 0; self->engine_options[i] != NULL; i++)
    add (argv, self->engine_options[i]);
}

/* Podman's own default rlimits (nofile and nproc 1048576) are refused
 * where the host's hard limits are lower and root lacks
 * CAP_SYS_RESOURCE: the container gets this process's hard limits
 * instead, nproc no higher than pid_max (podman lowers its own to it). */
static void
add_podman_ulimits (GPtrArray *argv)
{
  struct rlimit nofile, nproc;
  g_autofree char *pid_max_text = NULL;
  guint64 pid_max = G_MAXUINT64;

  if (getrlimit (RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_max != RLIM_INFINITY)
    g_ptr_array_add (argv, g_strdup_printf ("--ulimit=nofile=%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT,
                                            (guint64)nofile.rlim_max, (guint64)nofile.rlim_max));
  if (g_file_get_contents ("/proc/sys/kernel/pid_max", &pid_max_text, NULL, NULL))
    pid_max = g_ascii_strtoull (pid_max_text, NULL, 10);
  if (getrlimit (RLIMIT_NPROC, &nproc) == 0)
    {
      guint64 limit = nproc.rlim_max == RLIM_INFINITY ? pid_max : MIN ((guint64)nproc.rlim_max, pid_max);

      if (limit != G_MAXUINT64)
        g_ptr_array_add (argv, g_strdup_printf ("--ulimit=nproc=%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT,
                                                limit, limit));
    }
}

static char **
finish (GPtrArray *argv)
{
  g_ptr_array_add (argv, NULL);
  return (char **)g_ptr_array_free (argv, FALSE);
}

/*
 * terret_container_config_far_side:
 *
 * The far side under the settings of this moment and @policy (the
 * engine's network and limit settings).
 */
TerretFarSide *
terret_container_config_far_side (TerretContainerConfig        *self,
                                  const TerretContainerPolicy  *policy,
                                  GError                      **error)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) install = NULL;
  g_autoptr(GPtrArray) probe = NULL;
  g_autofree char *name = NULL;
  g_autofree char *far_path = NULL;
  g_auto(GStrv) far_argv = NULL;
  g_auto(GStrv) install_argv = NULL;
  TerretFarSide *far;
  guint timeout;
  const char *engine_name = terret_container_config_get_engine_name (self);

  if (!terret_container_config_check (self, error))
    return NULL;
  /* None: the shells and commands run here, as the engine's exec. */
  if (terret_container_config_is_direct (self))
    return NULL;

  g_mutex_lock (&self->mutex);
  /* A running container's network is its own; only one started here can
   * be given none. */
  if (self->image == NULL && policy->network == TERRET_NETWORK_OFF)
    {
      g_mutex_unlock (&self->mutex);
      g_set_error_literal (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                           "network=off cannot take the network away from a running container: "
                           "use image (a disposable container gets --network=none), or the "
                           "container's own networking");
      return NULL;
    }
  timeout = self->connect_timeout;
  add (argv, self->engine_path != NULL ? self->engine_path : engine_name);

  if (self->image != NULL)
    {
      /* A container of the executor's own, whose first process is the
       * launcher: when the launcher's input ends (this host's side went)
       * it ends everything and exits, which ends the container, and --rm
       * removes it. Never pulled: an image that is not here is an error
       * at once, not a download. */
      add (argv, "run");
      add (argv, "-i");
      add (argv, "--rm");
      add (argv, "--pull=never");
      if (self->engine == TERRET_CONTAINER_PODMAN)
        add_podman_ulimits (argv);
      if (policy->network == TERRET_NETWORK_OFF)
        add (argv, "--network=none");
      if (policy->limit_memory != 0)
        {
          /* Swap too, or the limit only moves memory to swap. */
          g_ptr_array_add (argv, g_strdup_printf ("--memory=%" G_GUINT64_FORMAT, policy->limit_memory));
          g_ptr_array_add (argv, g_strdup_printf ("--memory-swap=%" G_GUINT64_FORMAT, policy->limit_memory));
        }
      if (policy->limit_processes != 0)
        g_ptr_array_add (argv, g_strdup_printf ("--pids-limit=%" G_GUINT64_FORMAT, policy->limit_processes));
      g_ptr_array_add (argv, g_strdup_printf ("--volume=%s:%s:ro", terret_far_side_get_launcher (),
                                              DISPOSABLE_LAUNCHER));
      for (guint i = 0; self->engine_options[i] != NULL; i++)
        add (argv, self->engine_options[i]);
      /* The image's own entrypoint would get the launcher as arguments. */
      g_ptr_array_add (argv, g_strdup_printf ("--entrypoint=%s", DISPOSABLE_LAUNCHER));
      add (argv, self->image);
      add (argv, "--serve");
      name = g_strdup_printf ("a disposable container of image “%s” (%s)", self->image, engine_name);
    }
  else
    {
      g_autofree char *file = g_strdup_printf ("terret-launcher-%s", terret_far_side_get_launcher_id ());

      far_path = g_build_filename (self->launcher_dir, file, NULL);
      install = g_ptr_array_new_with_free_func (g_free);
      add (install, self->engine_path != NULL ? self->engine_path : engine_name);

      if (self->engine == TERRET_CONTAINER_KUBERNETES)
        {
          g_autofree char *target = NULL;

          add_kube_globals (argv, self);
          add (argv, "exec");
          add (argv, "-i");
          if (self->namespace != NULL)
            g_ptr_array_add (argv, g_strdup_printf ("--namespace=%s", self->namespace));
          if (self->kube_container != NULL)
            g_ptr_array_add (argv, g_strdup_printf ("--container=%s", self->kube_container));
          add (argv, self->container);
          add (argv, "--");

          /* kubectl cp needs tar in the container; nothing else copies
           * into a pod. */
          add_kube_globals (install, self);
          add (install, "cp");
          if (self->namespace != NULL)
            g_ptr_array_add (install, g_strdup_printf ("--namespace=%s", self->namespace));
          if (self->kube_container != NULL)
            g_ptr_array_add (install, g_strdup_printf ("--container=%s", self->kube_container));
          add (install, terret_far_side_get_launcher ());
          target = g_strdup_printf ("%s:%s", self->container, far_path);
          add (install, target);
          name = self->kube_container != NULL
            ? g_strdup_printf ("container “%s” of pod “%s” (kubectl)", self->kube_container, self->container)
            : g_strdup_printf ("pod “%s” (kubectl)", self->container);
        }
      else
        {
          /* An existing container keeps running after a session: the
           * launcher is exec'd into it, and ends everything it started
           * when its input ends (the engine closes it when this host's
           * client goes). The copy keeps the file's mode and is made
           * once: its name carries the launcher's build. */
          add (argv, "exec");
          add (argv, "-i");
          add (argv, self->container);

          add (install, "cp");
          add (install, terret_far_side_get_launcher ());
          g_ptr_array_add (install, g_strdup_printf ("%s:%s", self->container, far_path));
          name = g_strdup_printf ("container “%s” (%s)", self->container, engine_name);

          /* With auto, a launcher that cannot be copied in or run is
           * told apart from a container that runs nothing (stopped): the
           * shell that would run without it answers. */
          if (self->launcher == TERRET_CONTAINER_LAUNCHER_AUTO)
            {
              probe = g_ptr_array_new_with_free_func (g_free);
              add (probe, self->engine_path != NULL ? self->engine_path : engine_name);
              add (probe, "exec");
              add (probe, self->container);
              add (probe, policy->shell != NULL ? policy->shell : "bash");
              add (probe, "-c");
              add (probe, ":");
            }
        }
      add (argv, far_path);
      add (argv, "--serve");
    }
  g_mutex_unlock (&self->mutex);

  far_argv = finish (g_steal_pointer (&argv));
  far = terret_far_side_new (name, (const char * const *)far_argv);
  if (install != NULL)
    {
      install_argv = finish (g_steal_pointer (&install));
      terret_far_side_set_install (far, (const char * const *)install_argv);
    }
  if (probe != NULL)
    {
      g_auto(GStrv) probe_argv = finish (g_steal_pointer (&probe));

      terret_far_side_set_probe (far, (const char * const *)probe_argv);
    }
  terret_far_side_set_timeout (far, timeout);
  return far;
}

/* --- Describing --------------------------------------------------------- */

/* Plain bash through the engine's exec: launcher=none, or auto once it
 * fell back (a later required is the launcher again, or unavailable). */
static gboolean
is_direct_locked (TerretContainerConfig *self)
{
  return self->image == NULL && self->engine != TERRET_CONTAINER_KUBERNETES &&
         (self->launcher == TERRET_CONTAINER_LAUNCHER_NONE ||
          (self->launcher == TERRET_CONTAINER_LAUNCHER_AUTO && self->fallback_why != NULL));
}

/*
 * terret_container_config_describe:
 *
 * What holds for a command, as dup_containment says it.
 */
char *
terret_container_config_describe (TerretContainerConfig *self,
                                  gboolean               session)
{
  const char *engine_name = terret_container_config_get_engine_name (self);
  const char *what = session ? "session" : "run";
  g_autofree char *where = NULL;
  g_autofree char *ends = NULL;
  g_autofree char *limits = NULL;

  g_autofree char *fallback = NULL;

  g_mutex_lock (&self->mutex);
  if (is_direct_locked (self))
    {
      g_autofree char *why = self->launcher == TERRET_CONTAINER_LAUNCHER_AUTO
        ? g_strdup_printf ("launcher=auto, and the launcher could not be put in place or could "
                           "not run there: %s", self->fallback_why)
        : g_strdup ("launcher=none");
      char *text = g_strdup_printf ("none: plain bash in container “%s” through “%s exec”, "
                                    "without terret-launcher (%s). What a command starts may "
                                    "outlive its %s in the container: the engine's exec does not "
                                    "end it when its client goes (moby/moby#35703). The limit-* "
                                    "settings are refused: nothing would hold them; network "
                                    "stays the container's. No sandbox of this host's: the "
                                    "container is the sandbox.",
                                    self->container != NULL ? self->container : "(unset)",
                                    engine_name, why, what);

      g_mutex_unlock (&self->mutex);
      return text;
    }
  if (self->image == NULL && self->engine != TERRET_CONTAINER_KUBERNETES &&
      self->launcher == TERRET_CONTAINER_LAUNCHER_AUTO)
    fallback = g_strdup (" With launcher=auto, where the launcher cannot be copied in or cannot "
                         "run there (a read-only filesystem, a noexec mount), plain bash through "
                         "the engine's exec instead: containment none, said here and in the "
                         "first result.");
  if (self->image != NULL)
    {
      where = g_strdup_printf ("in a disposable container of image “%s” (%s run --rm), one per "
                               "executor and policy, whose first process is terret-launcher "
                               "(bind-mounted read-only)", self->image, engine_name);
      ends = g_strdup ("the container ends with the executor, or when the host dies, and is "
                       "removed");
      limits = g_strdup ("limit-memory and limit-processes hold for the whole container "
                         "(--memory, --pids-limit: the engine's cgroup); limit-cpu, "
                         "limit-file-size and limit-open-files are rlimits of each process; "
                         "network=off gives it no network (--network=none)");
    }
  else
    {
      where = self->engine == TERRET_CONTAINER_KUBERNETES
        ? g_strdup_printf ("in pod “%s”%s%s%s under terret-launcher, copied once to %s (kubectl "
                           "cp: tar is needed there)",
                           self->container != NULL ? self->container : "(unset)",
                           self->kube_container != NULL ? ", container “" : "",
                           self->kube_container != NULL ? self->kube_container : "",
                           self->kube_container != NULL ? "”," : "", self->launcher_dir)
        : g_strdup_printf ("in container “%s” (%s exec) under terret-launcher, copied once to %s",
                           self->container != NULL ? self->container : "(unset)", engine_name,
                           self->launcher_dir);
      ends = g_strdup ("the launcher ends everything it started when the host's side goes, "
                       "the host's death included (the engine closes its input)");
      limits = g_strdup ("the limit-* settings are the launcher's, as on this host: memory and "
                         "processes by a cgroup where the container lets one be made (a "
                         "default container's cgroups are read-only: then rlimits, memory as "
                         "address space and processes over the user's, which does not hold "
                         "for root), the others rlimits of each process; network stays the "
                         "container's");
    }
  g_mutex_unlock (&self->mutex);

  return g_strdup_printf ("%s: a child subreaper, so what a command starts, setsid, nohup and "
                          "double-forked jobs included, ends with its %s; %s. %s. No sandbox of "
                          "this host's: the container is the sandbox.%s", where, what, ends, limits,
                          fallback != NULL ? fallback : "");
}

/* --- Without the launcher ----------------------------------------------- */

guint
terret_container_config_get_connect_timeout (TerretContainerConfig *self)
{
  guint timeout;

  g_mutex_lock (&self->mutex);
  timeout = self->connect_timeout;
  g_mutex_unlock (&self->mutex);
  return timeout;
}

gboolean
terret_container_config_is_direct (TerretContainerConfig *self)
{
  gboolean direct;

  g_mutex_lock (&self->mutex);
  direct = is_direct_locked (self);
  g_mutex_unlock (&self->mutex);
  return direct;
}

/*
 * terret_container_config_fall_back:
 * @why: what the launcher's failure was, in the engine's words
 *
 * launcher=auto found that the launcher cannot be there: from now on
 * this executor runs plain bash. Returns FALSE (and changes nothing)
 * when the setting is not auto.
 */
gboolean
terret_container_config_fall_back (TerretContainerConfig *self,
                                   const char            *why)
{
  gboolean falls_back = FALSE;

  g_mutex_lock (&self->mutex);
  if (self->image == NULL && self->launcher == TERRET_CONTAINER_LAUNCHER_AUTO)
    {
      falls_back = TRUE;
      if (self->fallback_why == NULL)
        self->fallback_why = g_strdup (why);
    }
  g_mutex_unlock (&self->mutex);
  return falls_back;
}

/* The notice for the first result that ran without the launcher after a
 * fallback, once; NULL otherwise. */
char *
terret_container_config_take_notice (TerretContainerConfig *self)
{
  char *notice = NULL;

  g_mutex_lock (&self->mutex);
  if (is_direct_locked (self) && self->launcher == TERRET_CONTAINER_LAUNCHER_AUTO &&
      !self->notice_given)
    {
      self->notice_given = TRUE;
      notice = g_strdup_printf ("containment none: the launcher could not be put in place in "
                                "container “%s” or could not run there (%s), so this ran as "
                                "plain bash through “%s exec” (launcher=auto): what a command "
                                "starts may outlive its run there",
                                self->container, self->fallback_why,
                                terret_container_config_get_engine_name (self));
    }
  g_mutex_unlock (&self->mutex);
  return notice;
}

/*
 * terret_container_config_check_limits:
 *
 * Without the launcher nothing holds a limit: a limit the caller set is
 * refused, naming it, rather than run without.
 */
gboolean
terret_container_config_check_limits (TerretContainerConfig  *self,
                                      TerretLauncher         *launcher,
                                      GError                **error)
{
  g_autoptr(GFlagsClass) limits = g_type_class_ref (TERRET_TYPE_LIMITS);

  for (guint i = 0; i < limits->n_values; i++)
    {
      TerretLimits limit = limits->values[i].value;
      g_autofree char *why = NULL;

      if (limit == TERRET_LIMIT_NONE || terret_launcher_get_limit (launcher, limit) == 0)
        continue;
      g_mutex_lock (&self->mutex);
      why = self->launcher == TERRET_CONTAINER_LAUNCHER_AUTO
        ? g_strdup_printf ("the launcher could not be put in place or could not run there (%s)",
                           self->fallback_why)
        : g_strdup ("launcher=none");
      g_mutex_unlock (&self->mutex);
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                   "limit-%s cannot hold in container “%s” without the launcher, and %s: unset "
                   "it, or run where the launcher can (launcher-dir, a writable place not "
                   "mounted noexec; or image)", limits->values[i].value_nick, self->container,
                   why);
      return FALSE;
    }
  return TRUE;
}

/*
 * terret_container_config_direct_argv:
 * @terminal: whether the engine gives the command a terminal (-t)
 * @envp: what is added to the container's environment (never the host's)
 * @cwd: (nullable): the directory in the container
 * @command: what runs there
 *
 * `ENGINE exec -i [-t] [--env=VAR=VAL]... [--workdir=DIR] CONTAINER
 * COMMAND...`: the engine's own exec, nothing of terret's in between.
 */
char **
terret_container_config_direct_argv (TerretContainerConfig *self,
                                     gboolean               terminal,
                                     const char * const    *envp,
                                     const char            *cwd,
                                     const char * const    *command)
{
  GPtrArray *argv = g_ptr_array_new ();

  g_mutex_lock (&self->mutex);
  add (argv, self->engine_path != NULL ? self->engine_path
             : terret_container_config_get_engine_name (self));
  add (argv, "exec");
  add (argv, "-i");
  if (terminal)
    add (argv, "-t");
  for (guint i = 0; envp != NULL && envp[i] != NULL; i++)
    g_ptr_array_add (argv, g_strdup_printf ("--env=%s", envp[i]));
  if (cwd != NULL)
    g_ptr_array_add (argv, g_strdup_printf ("--workdir=%s", cwd));
  add (argv, self->container);
  g_mutex_unlock (&self->mutex);
  for (guint i = 0; command[i] != NULL; i++)
    add (argv, command[i]);
  return finish (argv);
}
