/* terret-session-info.c: one entry of an executor's list
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-session-info.h"

/**
 * TerretSessionInfo:
 *
 * What [method@Terret.Executor.list_async] says of one session or of one
 * command left running: its key, its state, the command, when it started,
 * the process behind it and how much it printed so far. A snapshot,
 * never updated.
 *
 * Since: 0.2
 */
struct _TerretSessionInfo
{
  GObject parent_instance;

  char *key;                    /* (owned) */
  char *command;                /* (owned) (nullable) */
  GDateTime *started;           /* (owned) (nullable) */
  TerretSessionState state;
  GPid pid;
  guint64 output_bytes;
  char *input_prompt;           /* (owned) (nullable) */
  double input_since;           /* < 0: not waiting */
  TerretInputState input_state;
  guint input_secret : 1;
  guint input_pager : 1;
};

G_DEFINE_FINAL_TYPE (TerretSessionInfo, terret_session_info, G_TYPE_OBJECT)

static void
terret_session_info_finalize (GObject *object)
{
  TerretSessionInfo *self = TERRET_SESSION_INFO (object);

  g_clear_pointer (&self->key, g_free);
  g_clear_pointer (&self->command, g_free);
  g_clear_pointer (&self->started, g_date_time_unref);
  g_clear_pointer (&self->input_prompt, g_free);

  G_OBJECT_CLASS (terret_session_info_parent_class)->finalize (object);
}

static void
terret_session_info_class_init (TerretSessionInfoClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = terret_session_info_finalize;
}

static void
terret_session_info_init (TerretSessionInfo *self)
{
  self->input_state = TERRET_INPUT_STATE_UNKNOWN;
  self->input_since = -1;
}

/**
 * terret_session_info_new:
 * @key: the session key
 * @state: what runs there
 * @command: (nullable): the command running, or that ran last and whose
 *   end waits for a poll; %NULL for an idle session
 * @started: (nullable): when @command started
 * @pid: the process on the host that carries it (a session's shell), or 0
 *   where the backend cannot name one
 * @output_bytes: bytes @command printed so far
 *
 * For backends: one entry of a list.
 *
 * Returns: (transfer full): a new entry
 *
 * Since: 0.2
 */
TerretSessionInfo *
terret_session_info_new (const char         *key,
                         TerretSessionState  state,
                         const char         *command,
                         GDateTime          *started,
                         GPid                pid,
                         guint64             output_bytes)
{
  TerretSessionInfo *self;

  g_return_val_if_fail (key != NULL, NULL);

  self = g_object_new (TERRET_TYPE_SESSION_INFO, NULL);
  self->key = g_strdup (key);
  self->state = state;
  self->command = g_strdup (command);
  self->started = started != NULL ? g_date_time_ref (started) : NULL;
  self->pid = pid;
  self->output_bytes = output_bytes;
  return self;
}

/**
 * terret_session_info_get_key:
 * @self: an entry
 *
 * Gets the session key, which the session ops (poll, input, interrupt,
 * close) take.
 *
 * Returns: the key
 *
 * Since: 0.2
 */
const char *
terret_session_info_get_key (TerretSessionInfo *self)
{
  g_return_val_if_fail (TERRET_IS_SESSION_INFO (self), NULL);

  return self->key;
}

/**
 * terret_session_info_get_state:
 * @self: an entry
 *
 * Gets what runs in the session.
 *
 * Returns: the state
 *
 * Since: 0.2
 */
TerretSessionState
terret_session_info_get_state (TerretSessionInfo *self)
{
  g_return_val_if_fail (TERRET_IS_SESSION_INFO (self), TERRET_SESSION_STATE_IDLE);

  return self->state;
}

/**
 * terret_session_info_get_command:
 * @self: an entry
 *
 * Gets the command running, or whose end waits for a poll.
 *
 * Returns: (nullable): the command, or %NULL for an idle session
 *
 * Since: 0.2
 */
const char *
terret_session_info_get_command (TerretSessionInfo *self)
{
  g_return_val_if_fail (TERRET_IS_SESSION_INFO (self), NULL);

  return self->command;
}

/**
 * terret_session_info_get_started:
 * @self: an entry
 *
 * Gets when the command started, on the wall clock.
 *
 * Returns: (nullable) (transfer none): when, or %NULL without a command
 *
 * Since: 0.2
 */
GDateTime *
terret_session_info_get_started (TerretSessionInfo *self)
{
  g_return_val_if_fail (TERRET_IS_SESSION_INFO (self), NULL);

  return self->started;
}

/**
 * terret_session_info_get_pid:
 * @self: an entry
 *
 * Gets the process on this host that carries the session or the command:
 * a session's shell, a one-shot command's bash; 0 where the backend
 * cannot name one (a shell inside a container or on another machine).
 *
 * Returns: the pid, or 0
 *
 * Since: 0.2
 */
GPid
terret_session_info_get_pid (TerretSessionInfo *self)
{
  g_return_val_if_fail (TERRET_IS_SESSION_INFO (self), 0);

  return self->pid;
}

/**
 * terret_session_info_get_output_bytes:
 * @self: an entry
 *
 * Gets how many bytes the command printed so far, kept or not.
 *
 * Returns: the bytes
 *
 * Since: 0.2
 */
guint64
terret_session_info_get_output_bytes (TerretSessionInfo *self)
{
  g_return_val_if_fail (TERRET_IS_SESSION_INFO (self), 0);

  return self->output_bytes;
}

/**
 * terret_session_info_set_input:
 * @self: an entry, new
 * @state: whether the command waits for input on its terminal
 * @prompt: (nullable): the last line it printed before it waited
 * @secret: whether the terminal's echo is off
 * @pager: whether a pager holds the terminal
 * @since: seconds from the command's start to when the wait was seen,
 *   negative when it does not wait
 *
 * For backends: what the command's terminal showed at the last look, set
 * before the entry is handed out. An entry says
 * %TERRET_INPUT_STATE_UNKNOWN until then.
 *
 * Since: 0.3
 */
void
terret_session_info_set_input (TerretSessionInfo *self,
                               TerretInputState   state,
                               const char        *prompt,
                               gboolean           secret,
                               gboolean           pager,
                               double             since)
{
  g_return_if_fail (TERRET_IS_SESSION_INFO (self));

  self->input_state = state;
  g_free (self->input_prompt);
  self->input_prompt = g_strdup (prompt);
  self->input_secret = !!secret;
  self->input_pager = !!pager;
  self->input_since = since;
}

/**
 * terret_session_info_get_input_state:
 * @self: an entry
 *
 * Gets whether the command waits for input on its terminal, as the last
 * look at the terminal found it (a look comes when the command's output
 * goes quiet); the same rules as [method@Terret.Result.get_input_state]:
 * %TERRET_INPUT_STATE_UNKNOWN without a command, without a terminal
 * (oneshot), or where the state cannot be read.
 *
 * Returns: the input state
 *
 * Since: 0.3
 */
TerretInputState
terret_session_info_get_input_state (TerretSessionInfo *self)
{
  g_return_val_if_fail (TERRET_IS_SESSION_INFO (self), TERRET_INPUT_STATE_UNKNOWN);

  return self->input_state;
}

/**
 * terret_session_info_get_input_prompt:
 * @self: an entry
 *
 * Gets the last line the command printed before it waited for input, at
 * most 256 bytes, not necessarily UTF-8.
 *
 * Returns: (nullable): the prompt, or %NULL when it does not wait
 *
 * Since: 0.3
 */
const char *
terret_session_info_get_input_prompt (TerretSessionInfo *self)
{
  g_return_val_if_fail (TERRET_IS_SESSION_INFO (self), NULL);

  return self->input_state == TERRET_INPUT_STATE_WAITING ? self->input_prompt : NULL;
}

/**
 * terret_session_info_get_input_secret:
 * @self: an entry
 *
 * Gets whether the input the command waits for is not echoed (a
 * password).
 *
 * Returns: whether it is a secret
 *
 * Since: 0.3
 */
gboolean
terret_session_info_get_input_secret (TerretSessionInfo *self)
{
  g_return_val_if_fail (TERRET_IS_SESSION_INFO (self), FALSE);

  return self->input_state == TERRET_INPUT_STATE_WAITING && self->input_secret;
}

/**
 * terret_session_info_get_input_pager:
 * @self: an entry
 *
 * Gets whether a pager holds the command's terminal, waiting for a key.
 *
 * Returns: whether a pager waits
 *
 * Since: 0.3
 */
gboolean
terret_session_info_get_input_pager (TerretSessionInfo *self)
{
  g_return_val_if_fail (TERRET_IS_SESSION_INFO (self), FALSE);

  return self->input_state == TERRET_INPUT_STATE_WAITING && self->input_pager;
}

/**
 * terret_session_info_get_input_since:
 * @self: an entry
 *
 * Gets when the wait for input was first seen, in seconds from the
 * command's start.
 *
 * Returns: the seconds, or a negative number when it does not wait
 *
 * Since: 0.3
 */
double
terret_session_info_get_input_since (TerretSessionInfo *self)
{
  g_return_val_if_fail (TERRET_IS_SESSION_INFO (self), -1);

  return self->input_state == TERRET_INPUT_STATE_WAITING ? self->input_since : -1;
}
