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
 * (`bash -c` per command, stdout and stderr apart, as oneshot). The SDK
 * has one base class per mode, so the executor makes both engines
 * (terret-container-engines.c) when it is made, takes every setting for
 * both while the registry applies the configuration, and keeps the one
 * its mode names at g_initable_init(): the mode is set when the executor
 * is made, never on a live one. From then on it forwards every call to
 * that engine, and its settings are that engine's, plus the container's
 * own (terret-container-config.c).
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

typedef struct
{
  GObject parent_instance;

  TerretContainerConfig *config; /* (owned) */
  ContainerMode mode;
  gboolean initialized;
  /* Before init both; after, the mode's. */
  TerretExecutor *session;      /* (owned) (nullable) */
  TerretExecutor *command;      /* (owned) (nullable) */
  /* Engine settings set before init: a mode that lacks one refuses it. */
  GHashTable *set_early;        /* (owned) (element-type utf8) */
} TerretContainerExecutor;

/* Where each of a class's properties goes. */
typedef enum
{
  TARGET_MODE,
  TARGET_CONFIG,
  TARGET_ENGINE,
} Target;

typedef struct
{
  GObjectClass parent_class;

  TerretContainerEngine engine;
  guint n_props;
  Target *targets;              /* by property id */
  guint8 *modes;                /* by property id: 1 << MODE_* of the engines that have it */
} TerretContainerExecutorClass;

#define CONTAINER_EXECUTOR(o) ((TerretContainerExecutor *)(o))
#define CONTAINER_EXECUTOR_GET_CLASS(o) ((TerretContainerExecutorClass *)G_OBJECT_GET_CLASS (o))

static TerretExecutor *
get_engine (TerretContainerExecutor *self)
{
  return self->mode == MODE_SESSION ? self->session : self->command;
}

#define ENGINE_IFACE(self) TERRET_EXECUTOR_GET_IFACE (get_engine (self))

/* --- TerretExecutor, forwarded ------------------------------------------ */

static TerretCapabilities
container_get_capabilities (TerretExecutor *executor)
{
  TerretContainerExecutor *self = CONTAINER_EXECUTOR (executor);

  return ENGINE_IFACE (self)->get_capabilities (get_engine (self));
}

/* An engine's outcome, which @task (tagged with the engine's finish
 * function) hands on to the caller. */
typedef TerretResult *(*FinishFunc) (TerretExecutor  *self,
                                     GAsyncResult    *result,
                                     GError         **error);

typedef struct
{
  FinishFunc finish;
  TerretRequest *request;       /* (owned) (nullable) a run's, to run again */
  guint attempts;
} Forward;

static void
forward_free (gpointer data)
{
  Forward *forward = data;

  g_clear_object (&forward->request);
  g_free (forward);
}

static void
forward_done (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  TerretContainerExecutor *self = g_task_get_source_object (task);
  Forward *forward = g_task_get_task_data (task);
  GError *error = NULL;
  TerretResult *outcome = forward->finish (TERRET_EXECUTOR (source), result, &error);

  if (outcome == NULL && g_error_matches (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NO_LAUNCHER))
    {
      /* The container runs commands, not the launcher (launcher=auto
       * gave its far side a probe): from now on this executor runs plain
       * bash there, and the run starts again that way. Twice at most: a
       * run that chose the launcher just before another's fallback finds
       * it missing once more. */
      if (terret_container_config_fall_back (self->config, error->message) &&
          forward->request != NULL && forward->attempts++ < 2)
        {
          GCancellable *cancellable = g_task_get_cancellable (task);

          g_clear_error (&error);
          ENGINE_IFACE (self)->run_async (get_engine (self), forward->request, cancellable,
                                          forward_done, g_steal_pointer (&task));
          return;
        }
      error->code = TERRET_EXEC_ERROR_UNAVAILABLE;
    }

  if (outcome == NULL)
    g_task_return_error (task, error);
  else
    {
      g_autofree char *notice = forward->request != NULL
        ? terret_container_config_take_notice (self->config) : NULL;

      if (notice != NULL)
        terret_result_add_notice (outcome, notice);
      g_task_return_pointer (task, outcome, g_object_unref);
    }
}

/* The caller's task: its source is this executor, as the caller expects;
 * the engine decides what a cancellation means for a run that ended
 * meanwhile, and its outcome stands. */
static GTask *
forward_task (TerretContainerExecutor *self,
              GCancellable            *cancellable,
              GAsyncReadyCallback      callback,
              gpointer                 user_data,
              gpointer                 source_tag,
              FinishFunc               finish,
              TerretRequest           *request)
{
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  Forward *forward = g_new0 (Forward, 1);

  forward->finish = finish;
  forward->request = request != NULL ? g_object_ref (request) : NULL;
  g_task_set_source_tag (task, source_tag);
  g_task_set_check_cancellable (task, FALSE);
  g_task_set_task_data (task, forward, forward_free);
  return task;
}

static void
container_run_async (TerretExecutor      *executor,
                     TerretRequest       *request,
                     GCancellable        *cancellable,
                     GAsyncReadyCallback  callback,
                     gpointer             user_data)
{
  TerretContainerExecutor *self = CONTAINER_EXECUTOR (executor);
  GTask *task = forward_task (self, cancellable, callback, user_data, container_run_async,
                              ENGINE_IFACE (self)->run_finish, request);

  ENGINE_IFACE (self)->run_async (get_engine (self), request, cancellable, forward_done, task);
}

static void
container_poll_async (TerretExecutor      *executor,
                      const char          *session,
                      double               wait,
                      GCancellable        *cancellable,
                      GAsyncReadyCallback  callback,
                      gpointer             user_data)
{
  TerretContainerExecutor *self = CONTAINER_EXECUTOR (executor);
  GTask *task = forward_task (self, cancellable, callback, user_data, container_poll_async,
                              ENGINE_IFACE (self)->poll_finish, NULL);

  ENGINE_IFACE (self)->poll_async (get_engine (self), session, wait, cancellable, forward_done,
                                   task);
}

static void
list_done (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  GError *error = NULL;
  GPtrArray *infos;

  infos = ENGINE_IFACE (g_task_get_source_object (task))->list_finish (TERRET_EXECUTOR (source),
                                                                      result, &error);
  if (infos == NULL)
    g_task_return_error (task, error);
  else
    g_task_return_pointer (task, infos, (GDestroyNotify)g_ptr_array_unref);
}

/* The engine's list: it names no pid, as a container's name nothing
 * here (a session engine without session pids, a command engine on a
 * far side). */
static void
container_list_async (TerretExecutor      *executor,
                      GCancellable        *cancellable,
                      GAsyncReadyCallback  callback,
                      gpointer             user_data)
{
  TerretContainerExecutor *self = CONTAINER_EXECUTOR (executor);
  GTask *task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, container_list_async);
  ENGINE_IFACE (self)->list_async (get_engine (self), cancellable, list_done, task);
}

static GPtrArray *
container_list_finish (TerretExecutor  *executor,
                       GAsyncResult    *result,
                       GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, executor), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

/* Both finishes: a run's or a poll's task. */
static TerretResult *
container_finish (TerretExecutor  *executor,
                  GAsyncResult    *result,
                  GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, executor), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
container_close_session (TerretExecutor *executor,
                         const char     *session)
{
  TerretContainerExecutor *self = CONTAINER_EXECUTOR (executor);

  ENGINE_IFACE (self)->close_session (get_engine (self), session);
}

static void
container_close_all (TerretExecutor *executor)
{
  TerretContainerExecutor *self = CONTAINER_EXECUTOR (executor);

  ENGINE_IFACE (self)->close_all (get_engine (self));
}

/* A session's shell has a pid in the container's namespace, which names
 * nothing here (or another process): none is declared, none is given. */
static GPid
container_get_session_pid (TerretExecutor *executor,
                           const char     *session)
{
  return 0;
}

static gboolean
container_send_input (TerretExecutor  *executor,
                      const char      *session,
                      GBytes          *data,
                      GError         **error)
{
  TerretContainerExecutor *self = CONTAINER_EXECUTOR (executor);

  if (ENGINE_IFACE (self)->send_input == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED,
                   "the %s backend cannot take input in mode=oneshot",
                   terret_executor_get_name (executor));
      return FALSE;
    }
  return ENGINE_IFACE (self)->send_input (get_engine (self), session, data, error);
}

static gboolean
container_interrupt (TerretExecutor  *executor,
                     const char      *session,
                     GError         **error)
{
  TerretContainerExecutor *self = CONTAINER_EXECUTOR (executor);

  return ENGINE_IFACE (self)->interrupt (get_engine (self), session, error);
}

static char *
container_dup_containment (TerretExecutor *executor)
{
  TerretContainerExecutor *self = CONTAINER_EXECUTOR (executor);

  return ENGINE_IFACE (self)->dup_containment (get_engine (self));
}

static void
executor_iface_init (TerretExecutorInterface *iface)
{
  iface->get_capabilities = container_get_capabilities;
  iface->run_async = container_run_async;
  iface->run_finish = container_finish;
  iface->close_session = container_close_session;
  iface->close_all = container_close_all;
  iface->get_session_pid = container_get_session_pid;
  iface->send_input = container_send_input;
  iface->interrupt = container_interrupt;
  iface->poll_async = container_poll_async;
  iface->poll_finish = container_finish;
  iface->dup_containment = container_dup_containment;
  iface->list_async = container_list_async;
  iface->list_finish = container_list_finish;
}

/* --- GInitable: the mode is chosen ------------------------------------- */

static const char * const host_only[] = { "sandbox", "env-policy", "env-exclude" };

static gboolean
container_initable_init (GInitable     *initable,
                         GCancellable  *cancellable,
                         GError       **error)
{
  TerretContainerExecutor *self = CONTAINER_EXECUTOR (initable);
  const char *mode_name = mode_values[self->mode].value_nick;
  GHashTableIter iter;
  const char *name;
  TerretExecutor *engine;

  if (!self->initialized)
    {
      self->initialized = TRUE;
      if (self->mode == MODE_SESSION)
        g_clear_object (&self->command);
      else
        g_clear_object (&self->session);
    }
  engine = get_engine (self);

  g_hash_table_iter_init (&iter, self->set_early);
  while (g_hash_table_iter_next (&iter, (gpointer *)&name, NULL))
    if (g_object_class_find_property (G_OBJECT_GET_CLASS (engine), name) == NULL)
      {
        g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                     "the setting “%s” is not one of mode=%s (it is for mode=%s)", name, mode_name,
                     mode_values[!self->mode].value_nick);
        return FALSE;
      }

  /* Refused before anything runs: they hold on this host. */
  for (guint i = 0; i < G_N_ELEMENTS (host_only); i++)
    {
      GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (engine), host_only[i]);
      g_auto(GValue) value = G_VALUE_INIT;

      if (pspec == NULL)
        continue;
      g_value_init (&value, G_PARAM_SPEC_VALUE_TYPE (pspec));
      g_object_get_property (G_OBJECT (engine), host_only[i], &value);
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

  return g_initable_init (G_INITABLE (engine), cancellable, error);
}

static void
initable_iface_init (GInitableIface *iface)
{
  iface->init = container_initable_init;
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
  TerretExecutor *engine;

  switch (klass->targets[prop_id])
    {
    case TARGET_MODE:
      g_value_set_enum (value, self->mode);
      break;

    case TARGET_CONFIG:
      terret_container_config_get (self->config, g_param_spec_get_name (pspec), value);
      break;

    case TARGET_ENGINE:
      /* Before init, the engine of the mode of that moment, or the other
       * for a setting of the other mode only. */
      engine = (klass->modes[prop_id] & (1u << self->mode)) != 0 ? get_engine (self)
               : self->mode == MODE_SESSION ? self->command : self->session;
      if (engine != NULL)
        g_object_get_property (G_OBJECT (engine), g_param_spec_get_name (pspec), value);
      else
        g_param_value_set_default (pspec, value);
      break;
    }
}

static void
set_engine_property (TerretContainerExecutor *self,
                     TerretExecutor          *engine,
                     GParamSpec              *pspec,
                     const GValue            *value)
{
  if (engine != NULL && g_object_class_find_property (G_OBJECT_GET_CLASS (engine),
                                                      g_param_spec_get_name (pspec)) != NULL)
    g_object_set_property (G_OBJECT (engine), g_param_spec_get_name (pspec), value);
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
      changed = self->mode != (ContainerMode)g_value_get_enum (value);
      if (changed && self->initialized)
        {
          g_warning ("%s: mode is set when the executor is made; this one stays mode=%s",
                     terret_executor_get_name (TERRET_EXECUTOR (self)),
                     mode_values[self->mode].value_nick);
          return;
        }
      self->mode = g_value_get_enum (value);
      break;

    case TARGET_CONFIG:
      terret_container_config_set (self->config, name, value, &changed);
      break;

    case TARGET_ENGINE:
      if (!self->initialized)
        g_hash_table_add (self->set_early, g_strdup (name));
      else if ((klass->modes[prop_id] & (1u << self->mode)) == 0)
        {
          g_warning ("%s: the setting “%s” is not one of mode=%s; ignored",
                     terret_executor_get_name (TERRET_EXECUTOR (self)), name,
                     mode_values[self->mode].value_nick);
          return;
        }
      set_engine_property (self, self->session, pspec, value);
      set_engine_property (self, self->command, pspec, value);
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
    g_type_class_ref (TERRET_TYPE_CONTAINER_SESSION),
    g_type_class_ref (TERRET_TYPE_CONTAINER_COMMAND),
  };
  g_autoptr(GPtrArray) copies = g_ptr_array_new ();
  g_autoptr(GArray) modes = g_array_new (FALSE, TRUE, sizeof (guint8));
  guint n_config;

  object_class->get_property = container_get_property;
  object_class->set_property = container_set_property;
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
  self->mode = MODE_SESSION;
  self->session = terret_container_engine_new (self->config, TRUE);
  self->command = terret_container_engine_new (self->config, FALSE);
  self->set_early = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

static void
container_dispose (GObject       *object,
                   GObjectClass  *parent_class)
{
  TerretContainerExecutor *self = CONTAINER_EXECUTOR (object);

  /* The engine closes every session as it goes: nothing outlives this. */
  g_clear_object (&self->session);
  g_clear_object (&self->command);

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
  G_DEFINE_DYNAMIC_TYPE_EXTENDED (TypeName, type_name, G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,   \
                                  G_IMPLEMENT_INTERFACE_DYNAMIC (TERRET_TYPE_EXECUTOR,     \
                                                                 executor_iface_init)      \
                                  G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_INITABLE,          \
                                                                 initable_iface_init))     \
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
  terret_container_engines_register (type_module);
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
