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
 * stdout and stderr apart, as oneshot). The SDK has one base class per
 * mode, so the executor makes both engines (terret-flatpak-engines.c)
 * when it is made, takes every setting for both while the registry
 * applies the configuration, and keeps the one its mode names at
 * g_initable_init(): the mode is set when the executor is made. From
 * then on it forwards every call to that engine, whose settings are its
 * own.
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
  GObject parent_instance;

  FlatpakMode mode;
  gboolean initialized;
  /* Before init both; after, the mode's. */
  TerretExecutor *session;      /* (owned) (nullable) */
  TerretExecutor *command;      /* (owned) (nullable) */
  /* Engine settings set before init: a mode that lacks one refuses it. */
  GHashTable *set_early;        /* (owned) (element-type utf8) */
} TerretFlatpakExecutor;

typedef struct
{
  GObjectClass parent_class;

  guint n_props;
  guint8 *modes;                /* by property id: 1 << MODE_* of the engines that have it */
} TerretFlatpakExecutorClass;

GType terret_flatpak_executor_get_type (void);

static void executor_iface_init (TerretExecutorInterface *iface);
static void initable_iface_init (GInitableIface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (TerretFlatpakExecutor, terret_flatpak_executor, G_TYPE_OBJECT,
                                G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (TERRET_TYPE_EXECUTOR,
                                                               executor_iface_init)
                                G_IMPLEMENT_INTERFACE_DYNAMIC (G_TYPE_INITABLE,
                                                               initable_iface_init))

#define FLATPAK_EXECUTOR(o) ((TerretFlatpakExecutor *)(o))
#define FLATPAK_EXECUTOR_GET_CLASS(o) ((TerretFlatpakExecutorClass *)G_OBJECT_GET_CLASS (o))
#define PROP_MODE 1

static TerretExecutor *
get_engine (TerretFlatpakExecutor *self)
{
  return self->mode == MODE_SESSION ? self->session : self->command;
}

#define ENGINE_IFACE(self) TERRET_EXECUTOR_GET_IFACE (get_engine (self))

/* --- TerretExecutor, forwarded ------------------------------------------ */

static TerretCapabilities
flatpak_get_capabilities (TerretExecutor *executor)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (executor);

  return ENGINE_IFACE (self)->get_capabilities (get_engine (self));
}

/* An engine's outcome, which the caller's task (its source this
 * executor, as the caller expects) hands on. */
typedef gpointer (*FinishFunc) (TerretExecutor  *self,
                                GAsyncResult    *result,
                                GError         **error);

static void flatpak_list_async (TerretExecutor      *executor,
                                GCancellable        *cancellable,
                                GAsyncReadyCallback  callback,
                                gpointer             user_data);

static void
forward_done (GObject      *source,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  FinishFunc finish = g_task_get_task_data (task);
  GError *error = NULL;
  gpointer outcome = finish (TERRET_EXECUTOR (source), result, &error);

  if (outcome == NULL)
    g_task_return_error (task, error);
  else if (g_task_get_source_tag (task) == flatpak_list_async)
    g_task_return_pointer (task, outcome, (GDestroyNotify)g_ptr_array_unref);
  else
    g_task_return_pointer (task, outcome, g_object_unref);
}

/* The engine decides what a cancellation means for a run that ended
 * meanwhile, and its outcome stands. */
static GTask *
forward_task (TerretFlatpakExecutor *self,
              GCancellable          *cancellable,
              GAsyncReadyCallback    callback,
              gpointer               user_data,
              gpointer               source_tag,
              FinishFunc             finish)
{
  GTask *task = g_task_new (self, cancellable, callback, user_data);

  g_task_set_source_tag (task, source_tag);
  g_task_set_check_cancellable (task, FALSE);
  g_task_set_task_data (task, (gpointer)finish, NULL);
  return task;
}

static void
flatpak_run_async (TerretExecutor      *executor,
                   TerretRequest       *request,
                   GCancellable        *cancellable,
                   GAsyncReadyCallback  callback,
                   gpointer             user_data)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (executor);
  GTask *task = forward_task (self, cancellable, callback, user_data, flatpak_run_async,
                              (FinishFunc)ENGINE_IFACE (self)->run_finish);

  ENGINE_IFACE (self)->run_async (get_engine (self), request, cancellable, forward_done, task);
}

static void
flatpak_poll_async (TerretExecutor      *executor,
                    const char          *session,
                    double               wait,
                    GCancellable        *cancellable,
                    GAsyncReadyCallback  callback,
                    gpointer             user_data)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (executor);
  GTask *task = forward_task (self, cancellable, callback, user_data, flatpak_poll_async,
                              (FinishFunc)ENGINE_IFACE (self)->poll_finish);

  ENGINE_IFACE (self)->poll_async (get_engine (self), session, wait, cancellable, forward_done,
                                   task);
}

/* The engine's list: its pids are the host's, and a session engine
 * without session pids names none. */
static void
flatpak_list_async (TerretExecutor      *executor,
                    GCancellable        *cancellable,
                    GAsyncReadyCallback  callback,
                    gpointer             user_data)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (executor);
  GTask *task = forward_task (self, cancellable, callback, user_data, flatpak_list_async,
                              (FinishFunc)ENGINE_IFACE (self)->list_finish);

  ENGINE_IFACE (self)->list_async (get_engine (self), cancellable, forward_done, task);
}

/* Every finish: a run's, a poll's or a list's task. */
static gpointer
flatpak_finish (TerretExecutor  *executor,
                GAsyncResult    *result,
                GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, executor), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
flatpak_close_session (TerretExecutor *executor,
                       const char     *session)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (executor);

  ENGINE_IFACE (self)->close_session (get_engine (self), session);
}

static void
flatpak_close_all (TerretExecutor *executor)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (executor);

  ENGINE_IFACE (self)->close_all (get_engine (self));
}

/* A host pid names nothing in the app's pid namespace. */
static GPid
flatpak_get_session_pid (TerretExecutor *executor,
                         const char     *session)
{
  return 0;
}

static gboolean
flatpak_send_input (TerretExecutor  *executor,
                    const char      *session,
                    GBytes          *data,
                    GError         **error)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (executor);

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
flatpak_interrupt (TerretExecutor  *executor,
                   const char      *session,
                   GError         **error)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (executor);

  return ENGINE_IFACE (self)->interrupt (get_engine (self), session, error);
}

static char *
flatpak_dup_containment (TerretExecutor *executor)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (executor);

  return ENGINE_IFACE (self)->dup_containment (get_engine (self));
}

static void
executor_iface_init (TerretExecutorInterface *iface)
{
  iface->get_capabilities = flatpak_get_capabilities;
  iface->run_async = flatpak_run_async;
  iface->run_finish = (gpointer)flatpak_finish;
  iface->close_session = flatpak_close_session;
  iface->close_all = flatpak_close_all;
  iface->get_session_pid = flatpak_get_session_pid;
  iface->send_input = flatpak_send_input;
  iface->interrupt = flatpak_interrupt;
  iface->poll_async = flatpak_poll_async;
  iface->poll_finish = (gpointer)flatpak_finish;
  iface->dup_containment = flatpak_dup_containment;
  iface->list_async = flatpak_list_async;
  iface->list_finish = (gpointer)flatpak_finish;
}

/* --- GInitable: the mode is chosen ------------------------------------- */

static gboolean
flatpak_initable_init (GInitable     *initable,
                       GCancellable  *cancellable,
                       GError       **error)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (initable);
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

  return g_initable_init (G_INITABLE (engine), cancellable, error);
}

static void
initable_iface_init (GInitableIface *iface)
{
  iface->init = flatpak_initable_init;
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
  TerretExecutor *engine;

  if (prop_id == PROP_MODE)
    {
      g_value_set_enum (value, self->mode);
      return;
    }
  /* Before init, the engine of the mode of that moment, or the other for
   * a setting of the other mode only. */
  engine = (klass->modes[prop_id] & (1u << self->mode)) != 0 ? get_engine (self)
           : self->mode == MODE_SESSION ? self->command : self->session;
  if (engine != NULL)
    g_object_get_property (G_OBJECT (engine), g_param_spec_get_name (pspec), value);
  else
    g_param_value_set_default (pspec, value);
}

static void
set_engine_property (TerretExecutor *engine,
                     GParamSpec     *pspec,
                     const GValue   *value)
{
  if (engine != NULL && g_object_class_find_property (G_OBJECT_GET_CLASS (engine),
                                                      g_param_spec_get_name (pspec)) != NULL)
    g_object_set_property (G_OBJECT (engine), g_param_spec_get_name (pspec), value);
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

  if (prop_id == PROP_MODE)
    {
      FlatpakMode mode = g_value_get_enum (value);

      if (mode == self->mode)
        return;
      if (self->initialized)
        {
          g_warning ("%s: mode is set when the executor is made; this one stays mode=%s",
                     terret_executor_get_name (TERRET_EXECUTOR (self)),
                     mode_values[self->mode].value_nick);
          return;
        }
      self->mode = mode;
      g_object_notify_by_pspec (object, pspec);
      return;
    }

  if (!self->initialized)
    g_hash_table_add (self->set_early, g_strdup (name));
  else if ((klass->modes[prop_id] & (1u << self->mode)) == 0)
    {
      g_warning ("%s: the setting “%s” is not one of mode=%s; ignored",
                 terret_executor_get_name (TERRET_EXECUTOR (self)), name,
                 mode_values[self->mode].value_nick);
      return;
    }
  set_engine_property (self->session, pspec, value);
  set_engine_property (self->command, pspec, value);
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
terret_flatpak_executor_dispose (GObject *object)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (object);

  /* The engine closes every session as it goes: nothing outlives this. */
  g_clear_object (&self->session);
  g_clear_object (&self->command);

  G_OBJECT_CLASS (terret_flatpak_executor_parent_class)->dispose (object);
}

static void
terret_flatpak_executor_finalize (GObject *object)
{
  TerretFlatpakExecutor *self = FLATPAK_EXECUTOR (object);

  g_clear_pointer (&self->set_early, g_hash_table_unref);

  G_OBJECT_CLASS (terret_flatpak_executor_parent_class)->finalize (object);
}

static void
terret_flatpak_executor_class_init (TerretFlatpakExecutorClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GObjectClass *engine_classes[2] = {
    g_type_class_ref (TERRET_TYPE_FLATPAK_SESSION),
    g_type_class_ref (TERRET_TYPE_FLATPAK_COMMAND),
  };
  g_autoptr(GPtrArray) copies = g_ptr_array_new ();
  g_autoptr(GArray) modes = g_array_new (FALSE, TRUE, sizeof (guint8));

  object_class->get_property = flatpak_get_property;
  object_class->set_property = flatpak_set_property;
  object_class->dispose = terret_flatpak_executor_dispose;
  object_class->finalize = terret_flatpak_executor_finalize;

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
  g_autoptr(TerretFlatpakHost) host = terret_flatpak_host_new ();

  self->mode = MODE_SESSION;
  self->session = terret_flatpak_engine_new (host, TRUE);
  self->command = terret_flatpak_engine_new (host, FALSE);
  self->set_early = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

/* --- Module --------------------------------------------------------------- */

G_MODULE_EXPORT void
g_io_module_load (GIOModule *module)
{
  GTypeModule *type_module = G_TYPE_MODULE (module);

  mode_type = g_type_module_register_enum (type_module, "TerretFlatpakMode", mode_values);
  terret_flatpak_channel_register (type_module);
  terret_flatpak_engines_register (type_module);
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
