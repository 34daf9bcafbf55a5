/* terret-engine-session.c: the session strategy: one persistent shell per
 * session key, over whatever channel the engine's class provides
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-engine-private.h"
#include "terret-error.h"
#include "terret-executor.h"
#include "terret-launcher-private.h"
#include "terret-shell-protocol-private.h"
#include "terret-shell-session-private.h"

typedef struct
{
  TerretEngine *engine;         /* (unowned) it owns the table */

  /* Guards the table: runs may start from any thread (the sync wrapper
   * runs its own context). Never held while calling the engine's class
   * or a session. */
  GMutex mutex;
  GHashTable *sessions;         /* (owned) key → TerretShellSession */
} SessionTable;

/* --- Starting shells ------------------------------------------------------ */

/* A session found no shell: what its new one starts with, from the
 * settings the run started with, adjusted by the engine's class. */
static TerretLauncher *
start_shell (TerretShellSession  *session,
             TerretSettings      *settings,
             double              *handshake_timeout,
             gpointer             user_data,
             GError             **error)
{
  TerretEngine *engine = user_data;
  TerretEngineClass *klass = TERRET_ENGINE_GET_CLASS (engine);
  g_autoptr(TerretLauncherLink) launcher_link = NULL;
  g_autoptr(TerretLauncher) launcher = NULL;

  launcher_link = _terret_engine_get_link (engine, settings, error);
  if (launcher_link == NULL)
    return NULL;

  launcher = _terret_launcher_new_for (launcher_link);
  if (!_terret_settings_prepare_launcher (settings, launcher, NULL, error))
    return NULL;
  /* A shell starts where the setting says; a request's directory is
   * entered for its command alone (terret-shell-protocol.c). */
  terret_launcher_set_cwd (launcher, settings->cwd);

  if (klass->prepare_spawn != NULL &&
      !klass->prepare_spawn (engine, _terret_shell_session_get_key (session),
                             _terret_shell_session_get_channel (session), launcher,
                             handshake_timeout, error))
    return NULL;

  return g_steal_pointer (&launcher);
}

/* The session of @key: an existing one when @create is FALSE (input,
 * interrupts and polls address a command that is there, and never create
 * a session), else created with a channel from the engine's class,
 * called outside the lock. */
static TerretShellSession *
get_session (SessionTable  *table,
             const char    *key,
             gboolean       create,
             GError       **error)
{
  TerretEngineClass *klass = TERRET_ENGINE_GET_CLASS (table->engine);
  g_autoptr(TerretShellChannel) channel = NULL;
  TerretShellSession *session;

  g_mutex_lock (&table->mutex);
  session = g_hash_table_lookup (table->sessions, key);
  if (session != NULL)
    g_object_ref (session);
  g_mutex_unlock (&table->mutex);

  if (session != NULL)
    return session;

  if (!create)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                   "Nothing is running in session “%s”: it has no shell", key);
      return NULL;
    }

  if (klass->create_channel == NULL)
    {
      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                   "The %s backend does not implement create_channel",
                   G_OBJECT_TYPE_NAME (table->engine));
      return NULL;
    }

  channel = klass->create_channel (table->engine, key, error);
  if (channel == NULL)
    return NULL;
  g_return_val_if_fail (TERRET_IS_SHELL_CHANNEL (channel), NULL);

  /* Another thread may have created the key's session meanwhile; the
   * first one in wins and this channel, never spawned, is dropped. */
  g_mutex_lock (&table->mutex);
  session = g_hash_table_lookup (table->sessions, key);
  if (session == NULL)
    {
      session = _terret_shell_session_new (channel, key, start_shell, table->engine);
      g_hash_table_insert (table->sessions, g_strdup (key), session);
    }
  g_object_ref (session);
  g_mutex_unlock (&table->mutex);

  return session;
}

/* --- The strategy ------------------------------------------------------- */

static void session_poll_async (gpointer       state,
                                const char    *key,
                                double         wait,
                                GCancellable  *cancellable,
                                GTask         *task_in);

static gpointer
session_table_new (TerretEngine *engine)
{
  SessionTable *table = g_new0 (SessionTable, 1);

  table->engine = engine;
  g_mutex_init (&table->mutex);
  table->sessions = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_object_unref);
  return table;
}

static void
session_table_free (gpointer data)
{
  SessionTable *table = data;

  g_clear_pointer (&table->sessions, g_hash_table_unref);
  g_mutex_clear (&table->mutex);
  g_free (table);
}

/* The session's outcome, handed to the core with the session's channel
 * (for the class's explain_outcome); the task's tag tells a poll from a
 * run. */
static void
outcome_done (GObject      *object,
              GAsyncResult *result,
              gpointer      user_data)
{
  g_autoptr(GTask) task = user_data;
  TerretShellSession *session = TERRET_SHELL_SESSION (object);
  GError *failure = NULL;
  TerretResult *outcome;

  outcome = g_task_get_source_tag (task) == session_poll_async
              ? _terret_shell_session_poll_finish (session, result, &failure)
              : _terret_shell_session_run_finish (session, result, &failure);
  g_task_set_task_data (task, g_object_ref (_terret_shell_session_get_channel (session)),
                        g_object_unref);
  if (outcome != NULL)
    g_task_return_pointer (task, outcome, g_object_unref);
  else
    g_task_return_error (task, failure);
}

static void
session_run_async (gpointer        state,
                   TerretRequest  *request,
                   TerretRunPlan  *plan,
                   GCancellable   *cancellable,
                   GTask          *task_in)
{
  SessionTable *table = state;
  g_autoptr(GTask) task = task_in;
  g_autoptr(TerretRunPlan) owned_plan = plan;
  g_autoptr(TerretShellSession) session = NULL;
  GError *error = NULL;

  if (!_terret_protocol_check_env (terret_request_get_env (request), &error))
    {
      g_task_return_error (task, error);
      return;
    }

  session = get_session (table, terret_request_get_session (request), TRUE, &error);
  if (session == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  g_task_set_source_tag (task, session_run_async);
  _terret_shell_session_run_async (session, request, g_steal_pointer (&owned_plan),
                                   cancellable, outcome_done, g_steal_pointer (&task));
}

static void
session_poll_async (gpointer       state,
                    const char    *key,
                    double         wait,
                    GCancellable  *cancellable,
                    GTask         *task_in)
{
  g_autoptr(GTask) task = task_in;
  g_autoptr(TerretShellSession) session = NULL;
  GError *error = NULL;

  if ((session = get_session (state, key, FALSE, &error)) == NULL)
    {
      g_task_return_error (task, error);
      return;
    }

  g_task_set_source_tag (task, session_poll_async);
  _terret_shell_session_poll_async (session, wait, cancellable, outcome_done,
                                    g_steal_pointer (&task));
}

static gboolean
session_send_input (gpointer     state,
                    const char  *key,
                    GBytes      *data,
                    GError     **error)
{
  g_autoptr(TerretShellSession) session = get_session (state, key, FALSE, error);

  return session != NULL && _terret_shell_session_send_input (session, data, error);
}

static gboolean
session_interrupt (gpointer     state,
                   const char  *key,
                   GError     **error)
{
  g_autoptr(TerretShellSession) session = get_session (state, key, FALSE, error);

  return session != NULL && _terret_shell_session_interrupt (session, error);
}

static GPid
session_get_pid (gpointer    state,
                 const char *key)
{
  g_autoptr(TerretShellSession) session = get_session (state, key, FALSE, NULL);

  return session != NULL ? _terret_shell_session_get_pid (session) : 0;
}

/* Closes the session of @key, or all: the farewells outside the lock,
 * since each takes up to a second. */
static void
session_close (gpointer    state,
               const char *key,
               GPtrArray  *stopped)
{
  SessionTable *table = state;
  g_autoptr(GPtrArray) sessions = g_ptr_array_new_with_free_func (g_object_unref);
  GHashTableIter iter;
  gpointer value;
  g_autofree char *stolen_key = NULL;

  g_mutex_lock (&table->mutex);
  if (key != NULL)
    {
      if (g_hash_table_steal_extended (table->sessions, key, (gpointer *)&stolen_key, &value))
        g_ptr_array_add (sessions, value);
    }
  else
    {
      g_hash_table_iter_init (&iter, table->sessions);
      while (g_hash_table_iter_next (&iter, NULL, &value))
        {
          g_ptr_array_add (sessions, g_object_ref (value));
          g_hash_table_iter_remove (&iter);
        }
    }
  g_mutex_unlock (&table->mutex);

  for (guint i = 0; i < sessions->len; i++)
    _terret_shell_session_close (g_ptr_array_index (sessions, i), stopped);
}

/* Every session of the table, described outside the lock. */
static void
session_list (gpointer   state,
              GPtrArray *infos)
{
  SessionTable *table = state;
  g_autoptr(GPtrArray) sessions = g_ptr_array_new_with_free_func (g_object_unref);
  /* A backend without session pids has none that name a process here. */
  gboolean named_pids = (terret_executor_get_capabilities (TERRET_EXECUTOR (table->engine)) &
                         TERRET_CAPABILITY_SESSION_PID) != 0;
  GHashTableIter iter;
  gpointer value;

  g_mutex_lock (&table->mutex);
  g_hash_table_iter_init (&iter, table->sessions);
  while (g_hash_table_iter_next (&iter, NULL, &value))
    g_ptr_array_add (sessions, g_object_ref (value));
  g_mutex_unlock (&table->mutex);

  for (guint i = 0; i < sessions->len; i++)
    g_ptr_array_add (infos, _terret_shell_session_describe (g_ptr_array_index (sessions, i),
                                                            named_pids));
}

static guint
session_count (gpointer state)
{
  SessionTable *table = state;
  guint n;

  g_mutex_lock (&table->mutex);
  n = g_hash_table_size (table->sessions);
  g_mutex_unlock (&table->mutex);

  return n;
}

const TerretEngineStrategy _terret_engine_session_strategy = {
  .capabilities = (TERRET_CAPABILITY_RUNS_COMMANDS |
                   TERRET_CAPABILITY_PERSISTENT_SESSIONS |
                   TERRET_CAPABILITY_PROGRESS |
                   TERRET_CAPABILITY_REQUEST_CWD |
                   TERRET_CAPABILITY_REQUEST_ENV |
                   TERRET_CAPABILITY_REPORTS_CWD |
                   TERRET_CAPABILITY_SESSION_PID |
                   TERRET_CAPABILITY_INPUT |
                   TERRET_CAPABILITY_INTERRUPT |
                   TERRET_CAPABILITY_POLL |
                   TERRET_CAPABILITY_DETACH |
                   TERRET_CAPABILITY_CLOCKS |
                   TERRET_CAPABILITY_LIST),
  .new = session_table_new,
  .free = session_table_free,
  .run_async = session_run_async,
  .poll_async = session_poll_async,
  .send_input = session_send_input,
  .interrupt = session_interrupt,
  .get_pid = session_get_pid,
  .close = session_close,
  .list = session_list,
  .count = session_count,
};
