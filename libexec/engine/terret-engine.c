/* terret-engine.c: the engine core, under both ways of running commands
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-engine-private.h"
#include "terret-error.h"
#include "terret-executor.h"
#include "terret-sandbox-private.h"

/**
 * TerretEngine:
 *
 * What every backend that runs shells owns, whichever way it runs
 * commands: the settings (one store, snapshotted when a shell or a run
 * starts), the launcher processes and the far side, containment and the
 * environment a process starts with, [iface@Gio.Initable], the ends of
 * detached commands nobody polled yet, the full-output files of each
 * session key, listing and closing, and how a run is stopped.
 *
 * How commands run is its mode ([enum@Terret.EngineMode]): one
 * persistent shell per session key (%TERRET_ENGINE_MODE_SESSION, as
 * [class@Terret.SessionExecutor]) or one process per command
 * (%TERRET_ENGINE_MODE_ONESHOT, as [class@Terret.CommandExecutor]). A
 * backend derives from one of those two; one that serves both modes
 * under one name derives from this class, installs the settings of both
 * and sets its mode, before g_initable_init(), with
 * [method@Terret.Engine.set_mode].
 *
 * Since: 0.3
 */

typedef struct
{
  TerretSettingsStore settings;
  guint64 set_explicitly;       /* 1 << row of each setting ever set */
  TerretEngineMode mode;
  TerretLauncherLinkPool links; /* one launcher per sandbox policy */

  const TerretEngineStrategy *strategy;
  gpointer state;               /* (owned) the strategy's */

  /* Guards parked, parked_infos and spools: sessions report from the
   * thread that ran them. */
  GMutex mutex;
  /* The ends of detached commands that no poll collected yet, by session
   * key; the next poll of the key returns it, the next run drops it. */
  GHashTable *parked;           /* (owned) (element-type utf8 TerretResult) */
  /* The same keys: how a list shows each (its command, start, output). */
  GHashTable *parked_infos;     /* (owned) (element-type utf8 TerretSessionInfo) */
  /* Full-output files by session key, removed when the key is closed,
   * but for those a caller took. */
  GHashTable *spools;           /* (owned) (element-type utf8 GPtrArray<TerretSpool>) */
} TerretEnginePrivate;

static void executor_iface_init (TerretExecutorInterface *iface);
static void initable_iface_init (GInitableIface *iface);

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (TerretEngine, terret_engine, G_TYPE_OBJECT,
                                  G_ADD_PRIVATE (TerretEngine)
                                  G_IMPLEMENT_INTERFACE (TERRET_TYPE_EXECUTOR, executor_iface_init)
                                  G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE, initable_iface_init))

#define PRIV(self) ((TerretEnginePrivate *)terret_engine_get_instance_private (self))

/* --- For the strategies ----------------------------------------------- */

TerretSettings *
_terret_engine_snapshot (TerretEngine *self)
{
  return _terret_settings_store_snapshot (&PRIV (self)->settings);
}

gpointer
_terret_engine_get_strategy (TerretEngine *self)
{
  return PRIV (self)->state;
}

/* The launcher a process with @settings starts under: on the subclass's
 * far side, or inside the sandbox they ask for, if any. */
TerretLauncherLink *
_terret_engine_get_link (TerretEngine    *self,
                         TerretSettings  *settings,
                         GError         **error)
{
  TerretEngineClass *klass = TERRET_ENGINE_GET_CLASS (self);
  g_autoptr(TerretFarSide) far = NULL;
  g_autoptr(GError) local_error = NULL;

  if (klass->get_far_side != NULL &&
      (far = klass->get_far_side (self, &local_error)) == NULL && local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }
  return _terret_sandbox_get_link (settings, &PRIV (self)->links, far, error);
}

void
_terret_engine_park (TerretEngine      *self,
                     const char        *key,
                     TerretResult      *result,
                     TerretSessionInfo *info)
{
  TerretEnginePrivate *priv = PRIV (self);

  g_mutex_lock (&priv->mutex);
  g_hash_table_replace (priv->parked, g_strdup (key), g_object_ref (result));
  g_hash_table_replace (priv->parked_infos, g_strdup (key), info);
  g_mutex_unlock (&priv->mutex);
}

TerretResult *
_terret_engine_take_parked (TerretEngine *self,
                            const char   *key)
{
  TerretEnginePrivate *priv = PRIV (self);
  g_autofree char *parked_key = NULL;
  gpointer parked = NULL;

  g_mutex_lock (&priv->mutex);
  if (g_hash_table_steal_extended (priv->parked, key, (gpointer *)&parked_key, &parked))
    g_hash_table_remove (priv->parked_infos, key);
  g_mutex_unlock (&priv->mutex);

  return parked;
}

/* Removes the files of a closed key, but for those a caller took. */
static void
spools_remove (gpointer data)
{
  GPtrArray *spools = data;

  for (guint i = 0; i < spools->len; i++)
    _terret_spool_remove (g_ptr_array_index (spools, i));
  g_ptr_array_unref (spools);
}

void
_terret_engine_keep_spool (TerretEngine *self,
                           const char   *key,
                           TerretSpool  *spool)
{
  TerretEnginePrivate *priv = PRIV (self);
  GPtrArray *spools;

  g_mutex_lock (&priv->mutex);
  spools = g_hash_table_lookup (priv->spools, key);
  if (spools == NULL)
    {
      spools = g_ptr_array_new_with_free_func ((GDestroyNotify) _terret_spool_unref);
      g_hash_table_insert (priv->spools, g_strdup (key), spools);
    }
  g_ptr_array_add (spools, _terret_spool_ref (spool));
  g_mutex_unlock (&priv->mutex);
}

/* The stop policy: every stop of a run, a timeout's, a cancellation's,
 * a close's, ends here. Today it ends everything the run contains at
 * once. */
void
_terret_engine_stop_run (TerretEngine  *self,
                         TerretProcess *process)
{
  terret_process_kill (process);
}

/* --- TerretExecutor ----------------------------------------------------- */

static TerretCapabilities
terret_engine_get_capabilities (TerretExecutor *executor)
{
  TerretEngine *self = TERRET_ENGINE (executor);

  return TERRET_ENGINE_GET_CLASS (self)->get_capabilities (self);
}

static TerretCapabilities
terret_engine_real_get_capabilities (TerretEngine *self)
{
  return PRIV (self)->strategy->capabilities;
}

/* A run or a poll under way: the caller's task holds it while the
 * strategy's own task runs it. */
typedef struct
{
  TerretRequest *request;       /* (owned) (nullable) a run's, to run again */
  char *key;                    /* (owned) */
  gboolean polled;
  double wait;
  guint attempts;
} Outcome;

static void
outcome_free (gpointer data)
{
  Outcome *outcome = data;

  g_clear_object (&outcome->request);
  g_free (outcome->key);
  g_free (outcome);
}

static void start (TerretEngine *self,
                   GTask        *task);

/* The strategy's outcome, through the class: run again when the class
 * changed what runs (twice at most), else explained. A hook that fails
 * must say why. */
static void
outcome_done (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  TerretEngine *self = g_task_get_source_object (task);
  TerretEngineClass *klass = TERRET_ENGINE_GET_CLASS (self);
  Outcome *o = g_task_get_task_data (task);
  TerretShellChannel *channel = g_task_get_task_data (G_TASK (result));
  GError *failure = NULL;
  GError *error = NULL;
  TerretResult *outcome, *ret;

  outcome = g_task_propagate_pointer (G_TASK (result), &failure);
  if (outcome == NULL && !o->polled && klass->run_again != NULL && o->attempts < 2 &&
      klass->run_again (self, o->request, failure))
    {
      o->attempts++;
      g_clear_error (&failure);
      start (self, g_steal_pointer (&task));
      return;
    }

  /* A session's run refused before it reached a session (its request,
   * its channel) has nothing for the class to explain. */
  if (channel == NULL && PRIV (self)->mode == TERRET_ENGINE_MODE_SESSION)
    {
      if (outcome != NULL)
        g_task_return_pointer (task, outcome, g_object_unref);
      else
        g_task_return_error (task, failure);
      return;
    }

  ret = klass->explain_outcome (self, o->key, channel, o->polled, outcome, failure, &error);
  if (ret != NULL)
    g_task_return_pointer (task, ret, g_object_unref);
  else
    {
      if (error == NULL)
        g_set_error (&error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_FAILED,
                     "The %s backend failed the %s without an error", G_OBJECT_TYPE_NAME (self),
                     o->polled ? "poll" : "run");
      g_task_return_error (task, error);
    }
}

/* Hands the run or the poll of @task to the strategy. */
static void
start (TerretEngine *self,
       GTask        *task)
{
  TerretEnginePrivate *priv = PRIV (self);
  Outcome *o = g_task_get_task_data (task);
  GCancellable *cancellable = g_task_get_cancellable (task);
  GTask *inner = g_task_new (self, cancellable, outcome_done, task);

  g_task_set_source_tag (inner, start);
  if (o->polled)
    priv->strategy->poll_async (priv->state, o->key, o->wait, cancellable, inner);
  else
    {
      g_autoptr(TerretSettings) settings = _terret_engine_snapshot (self);

      priv->strategy->run_async (priv->state, o->request,
                                 _terret_run_plan_new (settings, o->request), cancellable, inner);
    }
}

static GTask *
outcome_task (TerretEngine        *self,
              GCancellable        *cancellable,
              GAsyncReadyCallback  callback,
              gpointer             user_data,
              gpointer             source_tag,
              TerretRequest       *request,
              const char          *key)
{
  GTask *task = g_task_new (self, cancellable, callback, user_data);
  Outcome *o = g_new0 (Outcome, 1);

  o->request = request != NULL ? g_object_ref (request) : NULL;
  o->polled = request == NULL;
  o->key = g_strdup (key);
  g_task_set_source_tag (task, source_tag);
  g_task_set_task_data (task, o, outcome_free);
  /* The strategy decides what a cancellation means for a run that ended
   * meanwhile, and its outcome stands. */
  g_task_set_check_cancellable (task, FALSE);
  return task;
}

static void
terret_engine_run_async (TerretExecutor      *executor,
                         TerretRequest       *request,
                         GCancellable        *cancellable,
                         GAsyncReadyCallback  callback,
                         gpointer             user_data)
{
  TerretEngine *self = TERRET_ENGINE (executor);

  start (self, outcome_task (self, cancellable, callback, user_data, terret_engine_run_async,
                             request, terret_request_get_session (request)));
}

static void
terret_engine_poll_async (TerretExecutor      *executor,
                          const char          *key,
                          double               wait,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  TerretEngine *self = TERRET_ENGINE (executor);
  GTask *task = outcome_task (self, cancellable, callback, user_data, terret_engine_poll_async,
                              NULL, key);

  ((Outcome *)g_task_get_task_data (task))->wait = wait;
  start (self, task);
}

/* Both finishes: a run's or a poll's task. */
static TerretResult *
terret_engine_run_finish (TerretExecutor  *executor,
                          GAsyncResult    *result,
                          GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, executor), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static void
terret_engine_close_session_full (TerretExecutor *executor,
                                  const char     *key,
                                  GPtrArray      *stopped)
{
  TerretEngine *self = TERRET_ENGINE (executor);
  TerretEnginePrivate *priv = PRIV (self);
  g_autoptr(GPtrArray) spools = g_ptr_array_new_with_free_func (spools_remove);
  gpointer value = NULL;

  if (priv->state != NULL)
    priv->strategy->close (priv->state, key, stopped);

  /* A closed key starts afresh: an end nobody polled goes too, and so do
   * its full-output files (removed outside the lock). */
  g_mutex_lock (&priv->mutex);
  if (key == NULL)
    {
      GHashTableIter iter;
      gpointer stolen_key;

      g_hash_table_remove_all (priv->parked);
      g_hash_table_remove_all (priv->parked_infos);
      g_hash_table_iter_init (&iter, priv->spools);
      while (g_hash_table_iter_next (&iter, &stolen_key, &value))
        {
          g_ptr_array_add (spools, value);
          g_hash_table_iter_steal (&iter);
          g_free (stolen_key);
        }
    }
  else
    {
      g_autofree char *stolen_key = NULL;

      g_hash_table_remove (priv->parked, key);
      g_hash_table_remove (priv->parked_infos, key);
      if (g_hash_table_steal_extended (priv->spools, key, (gpointer *)&stolen_key, &value))
        g_ptr_array_add (spools, value);
    }
  g_mutex_unlock (&priv->mutex);
}

static void
terret_engine_close_session (TerretExecutor *executor,
                             const char     *key)
{
  terret_engine_close_session_full (executor, key, NULL);
}

static void
terret_engine_close_all (TerretExecutor *executor)
{
  terret_engine_close_session_full (executor, NULL, NULL);
}

static GPid
terret_engine_get_session_pid (TerretExecutor *executor,
                               const char     *key)
{
  TerretEnginePrivate *priv = PRIV (TERRET_ENGINE (executor));

  /* A backend without session pids has none that name a process here. */
  if ((terret_engine_get_capabilities (executor) & TERRET_CAPABILITY_SESSION_PID) == 0)
    return 0;
  return priv->strategy->get_pid (priv->state, key);
}

static gboolean
terret_engine_send_input (TerretExecutor  *executor,
                          const char      *key,
                          GBytes          *data,
                          GError         **error)
{
  TerretEnginePrivate *priv = PRIV (TERRET_ENGINE (executor));

  if (priv->strategy->send_input == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_NOT_SUPPORTED,
                   "the %s backend cannot take input in mode=oneshot",
                   terret_executor_get_name (executor));
      return FALSE;
    }
  return priv->strategy->send_input (priv->state, key, data, error);
}

static gboolean
terret_engine_interrupt (TerretExecutor  *executor,
                         const char      *key,
                         GError         **error)
{
  TerretEnginePrivate *priv = PRIV (TERRET_ENGINE (executor));

  return priv->strategy->interrupt (priv->state, key, error);
}

static int
compare_keys (gconstpointer a,
              gconstpointer b)
{
  return strcmp (terret_session_info_get_key (*(TerretSessionInfo **)a),
                 terret_session_info_get_key (*(TerretSessionInfo **)b));
}

/* The strategy's keys, then the ends waiting for a poll, sorted by key
 * as every engine's list promises. */
static void
terret_engine_list_async (TerretExecutor      *executor,
                          GCancellable        *cancellable,
                          GAsyncReadyCallback  callback,
                          gpointer             user_data)
{
  TerretEngine *self = TERRET_ENGINE (executor);
  TerretEnginePrivate *priv = PRIV (self);
  g_autoptr(GTask) task = g_task_new (self, cancellable, callback, user_data);
  GPtrArray *infos = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  gpointer value;

  g_task_set_source_tag (task, terret_engine_list_async);

  priv->strategy->list (priv->state, infos);
  g_mutex_lock (&priv->mutex);
  g_hash_table_iter_init (&iter, priv->parked_infos);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (infos, g_object_ref (value));
  g_mutex_unlock (&priv->mutex);
  g_ptr_array_sort (infos, compare_keys);
  g_task_return_pointer (task, g_steal_pointer (&infos), (GDestroyNotify)g_ptr_array_unref);
}

static GPtrArray *
terret_engine_list_finish (TerretExecutor  *executor,
                           GAsyncResult    *result,
                           GError         **error)
{
  g_return_val_if_fail (g_task_is_valid (result, executor), NULL);

  return g_task_propagate_pointer (G_TASK (result), error);
}

static char *
terret_engine_dup_containment (TerretExecutor *executor)
{
  TerretEngine *self = TERRET_ENGINE (executor);

  return TERRET_ENGINE_GET_CLASS (self)->describe_containment (self);
}

static char *
terret_engine_real_describe_containment (TerretEngine *self)
{
  g_autoptr(TerretSettings) settings = _terret_engine_snapshot (self);

  return _terret_sandbox_describe (settings);
}

static void
executor_iface_init (TerretExecutorInterface *iface)
{
  iface->dup_containment = terret_engine_dup_containment;
  iface->get_capabilities = terret_engine_get_capabilities;
  iface->run_async = terret_engine_run_async;
  iface->run_finish = terret_engine_run_finish;
  iface->close_session = terret_engine_close_session;
  iface->close_session_full = terret_engine_close_session_full;
  iface->close_all = terret_engine_close_all;
  iface->get_session_pid = terret_engine_get_session_pid;
  iface->send_input = terret_engine_send_input;
  iface->interrupt = terret_engine_interrupt;
  iface->poll_async = terret_engine_poll_async;
  iface->poll_finish = terret_engine_run_finish;
  iface->list_async = terret_engine_list_async;
  iface->list_finish = terret_engine_list_finish;
}

/* --- GInitable ---------------------------------------------------------- */

static gboolean
terret_engine_real_check_available (TerretEngine  *self,
                                    GCancellable  *cancellable,
                                    GError       **error)
{
  g_autoptr(TerretSettings) settings = NULL;
  g_autofree char *shell_path = NULL;

  /* A session's shell may be elsewhere (over ssh): its channel knows. */
  if (PRIV (self)->mode == TERRET_ENGINE_MODE_SESSION)
    return TRUE;

  settings = _terret_engine_snapshot (self);
  shell_path = g_find_program_in_path (settings->shell);
  if (shell_path == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "The shell “%s” was not found in PATH", settings->shell);
      return FALSE;
    }

  return TRUE;
}

static gboolean
terret_engine_initable_init (GInitable     *initable,
                             GCancellable  *cancellable,
                             GError       **error)
{
  TerretEngine *self = TERRET_ENGINE (initable);
  TerretEngineClass *klass = TERRET_ENGINE_GET_CLASS (self);

  if (klass->check_available == NULL)
    return TRUE;

  return klass->check_available (self, cancellable, error);
}

static void
initable_iface_init (GInitableIface *iface)
{
  iface->init = terret_engine_initable_init;
}

/* --- Public ------------------------------------------------------------- */

/**
 * terret_engine_set_mode:
 * @self: an engine
 * @mode: how it runs commands
 *
 * Chooses how @self runs commands, before it is initialized: a backend
 * that serves both modes under one name calls it when its own mode
 * setting is set. The settings set so far are kept; those left unset
 * take the new mode's defaults.
 *
 * Since: 0.3
 */
void
terret_engine_set_mode (TerretEngine     *self,
                        TerretEngineMode  mode)
{
  TerretEnginePrivate *priv;
  TerretSettingsStore store;
  guint n_defs;

  g_return_if_fail (TERRET_IS_ENGINE (self));
  g_return_if_fail (mode == TERRET_ENGINE_MODE_SESSION || mode == TERRET_ENGINE_MODE_ONESHOT);

  priv = PRIV (self);
  if (priv->mode == mode && priv->state != NULL)
    return;

  if (priv->state != NULL)
    {
      priv->strategy->close (priv->state, NULL, NULL);
      g_clear_pointer (&priv->state, priv->strategy->free);
    }
  priv->strategy = mode == TERRET_ENGINE_MODE_SESSION ? &_terret_engine_session_strategy
                                                      : &_terret_engine_command_strategy;
  priv->state = priv->strategy->new (self);

  if (priv->mode == mode)
    return;

  /* The settings again under the new mode's defaults, but for those set. */
  _terret_settings_store_init (&store, (TerretEngineKind)mode);
  _terret_settings_get_defs (&n_defs);
  for (guint i = 0; i < n_defs && i < 64; i++)
    if (priv->set_explicitly & (G_GUINT64_CONSTANT (1) << i))
      {
        g_auto(GValue) value = G_VALUE_INIT;

        _terret_settings_init_value (i + 1, &value);
        _terret_settings_store_get (&priv->settings, i + 1, &value);
        _terret_settings_store_set (&store, i + 1, &value);
      }
  _terret_settings_store_clear (&priv->settings);
  priv->settings = store;
  priv->mode = mode;
}

/**
 * terret_engine_get_mode:
 * @self: an engine
 *
 * Gets how @self runs commands.
 *
 * Returns: the mode
 *
 * Since: 0.3
 */
TerretEngineMode
terret_engine_get_mode (TerretEngine *self)
{
  g_return_val_if_fail (TERRET_IS_ENGINE (self), TERRET_ENGINE_MODE_SESSION);

  return PRIV (self)->mode;
}

static gboolean
terret_engine_real_prepare_run (TerretEngine    *self,
                                TerretRequest   *request,
                                TerretLauncher  *launcher,
                                GPtrArray       *argv,
                                GError         **error)
{
  return terret_engine_append_shell_command (self, request, launcher, 3, argv, error);
}

static TerretResult *
terret_engine_real_explain_outcome (TerretEngine        *self,
                                    const char          *session_key,
                                    TerretShellChannel  *channel,
                                    gboolean             polled,
                                    TerretResult        *result,
                                    GError              *failure,
                                    GError             **error)
{
  if (failure != NULL)
    g_propagate_error (error, failure);
  return result;
}

/* --- GObject ------------------------------------------------------------ */

static void
terret_engine_dispose (GObject *object)
{
  TerretEngine *self = TERRET_ENGINE (object);

  /* A persistent shell is a process the host owns, and so is a detached
   * command nobody polls (runs in flight and polls hold the engine
   * through their tasks): ended here, so nothing outlives the engine. */
  if (PRIV (self)->parked != NULL)
    terret_engine_close_all (TERRET_EXECUTOR (self));

  G_OBJECT_CLASS (terret_engine_parent_class)->dispose (object);
}

static void
terret_engine_finalize (GObject *object)
{
  TerretEngine *self = TERRET_ENGINE (object);
  TerretEnginePrivate *priv = PRIV (self);

  if (priv->state != NULL)
    g_clear_pointer (&priv->state, priv->strategy->free);
  g_clear_pointer (&priv->parked, g_hash_table_unref);
  g_clear_pointer (&priv->parked_infos, g_hash_table_unref);
  g_clear_pointer (&priv->spools, g_hash_table_unref);
  _terret_launcher_link_pool_clear (&priv->links);
  _terret_settings_store_clear (&priv->settings);
  g_mutex_clear (&priv->mutex);

  G_OBJECT_CLASS (terret_engine_parent_class)->finalize (object);
}

/**
 * terret_engine_get_shared_setting:
 * @self: an engine
 * @name: the name of a setting both modes share (`timeout`, `cwd`, ...)
 * @value: (out caller-allocates): where to store it, initialized to the
 *   setting's type
 *
 * Gets a shared setting. For a subclass that installs the shared
 * settings under property ids of its own: its get_property hands them
 * here.
 *
 * Since: 0.3
 */
void
terret_engine_get_shared_setting (TerretEngine *self,
                                  const char   *name,
                                  GValue       *value)
{
  guint id;

  g_return_if_fail (TERRET_IS_ENGINE (self));
  g_return_if_fail (name != NULL);

  id = _terret_settings_find (name);
  g_return_if_fail (id != 0);
  _terret_settings_store_get (&PRIV (self)->settings, id, value);
}

/**
 * terret_engine_set_shared_setting:
 * @self: an engine
 * @name: the name of a setting both modes share
 * @value: its new value, of the setting's type
 *
 * Sets a shared setting; what already started keeps the value it
 * started with. For a subclass's set_property, as
 * [method@Terret.Engine.get_shared_setting].
 *
 * Returns: whether the value changed (the caller notifies)
 *
 * Since: 0.3
 */
gboolean
terret_engine_set_shared_setting (TerretEngine *self,
                                  const char   *name,
                                  const GValue *value)
{
  TerretEnginePrivate *priv;
  guint id;

  g_return_val_if_fail (TERRET_IS_ENGINE (self), FALSE);
  g_return_val_if_fail (name != NULL, FALSE);

  priv = PRIV (self);
  id = _terret_settings_find (name);
  g_return_val_if_fail (id != 0, FALSE);
  if (id <= 64)
    priv->set_explicitly |= G_GUINT64_CONSTANT (1) << (id - 1);
  return _terret_settings_store_set (&priv->settings, id, value);
}

/* The property handlers of a class that installed the shared settings
 * with _terret_settings_install(). */
void
_terret_engine_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  terret_engine_get_shared_setting (TERRET_ENGINE (object), g_param_spec_get_name (pspec), value);
}

void
_terret_engine_set_property (GObject      *object,
                             guint         prop_id,
                             const GValue *value,
                             GParamSpec   *pspec)
{
  if (terret_engine_set_shared_setting (TERRET_ENGINE (object), g_param_spec_get_name (pspec), value))
    g_object_notify_by_pspec (object, pspec);
}

static void
terret_engine_class_init (TerretEngineClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->dispose = terret_engine_dispose;
  object_class->finalize = terret_engine_finalize;

  klass->get_capabilities = terret_engine_real_get_capabilities;
  klass->check_available = terret_engine_real_check_available;
  klass->describe_containment = terret_engine_real_describe_containment;
  klass->explain_outcome = terret_engine_real_explain_outcome;
  klass->prepare_run = terret_engine_real_prepare_run;
}

static void
terret_engine_init (TerretEngine *self)
{
  TerretEnginePrivate *priv = PRIV (self);

  g_mutex_init (&priv->mutex);
  priv->parked = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  priv->parked_infos = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  priv->spools = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, spools_remove);
  _terret_launcher_link_pool_init (&priv->links);
  _terret_settings_store_init (&priv->settings, TERRET_ENGINE_SESSION);
  priv->mode = TERRET_ENGINE_MODE_SESSION;
  priv->strategy = &_terret_engine_session_strategy;
  priv->state = priv->strategy->new (self);
}
