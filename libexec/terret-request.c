/* terret-request.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-enum-types.h"
#include "terret-request.h"
#include "terret-util-private.h"

/**
 * TerretRequest:
 *
 * One command for a [iface@Terret.Executor] to run, and how: the session
 * it runs in, its timeout, and optionally a working directory, an
 * environment overlay and a progress callback.
 *
 * A request is a value: an executor reads it when the run starts and
 * keeps a reference only to report progress. Which of the optional parts
 * a backend honours is told by [method@Terret.Executor.get_capabilities].
 *
 * Since: 0.1
 */
struct _TerretRequest
{
  GObject parent_instance;

  char *command;             /* (owned) */
  char *session;             /* (owned) */
  char *cwd;                 /* (owned) (nullable) */
  GStrv env;                 /* (owned) environ-style overlay */
  double timeout;
  TerretTimeoutAction timeout_action;
  TerretCaptureMode capture;
  gboolean keep_full_output;
  double return_after;
  double deadline;
  double idle_timeout;
  TerretIdleAction idle_action;
  double stop_grace;         /* < 0: the executor's */
  TerretResult *cancelled_result; /* (owned) (nullable) what the last cancelled run printed */

  TerretProgressFunc progress_func;
  gpointer progress_data;
  GDestroyNotify progress_notify;
};

G_DEFINE_FINAL_TYPE (TerretRequest, terret_request, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_COMMAND,
  PROP_SESSION,
  PROP_TIMEOUT,
  PROP_TIMEOUT_ACTION,
  PROP_CWD,
  PROP_ENV,
  PROP_CAPTURE,
  PROP_KEEP_FULL_OUTPUT,
  PROP_RETURN_AFTER,
  PROP_DEADLINE,
  PROP_IDLE_TIMEOUT,
  PROP_IDLE_ACTION,
  PROP_STOP_GRACE,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

enum {
  SIGNAL_WAITING_FOR_INPUT,
  N_SIGNALS
};

static guint signals[N_SIGNALS];

static void
terret_request_finalize (GObject *object)
{
  TerretRequest *self = (TerretRequest *)object;

  terret_request_set_progress_func (self, NULL, NULL, NULL);
  g_clear_pointer (&self->command, g_free);
  g_clear_pointer (&self->session, g_free);
  g_clear_pointer (&self->cwd, g_free);
  g_clear_pointer (&self->env, g_strfreev);
  g_clear_object (&self->cancelled_result);

  G_OBJECT_CLASS (terret_request_parent_class)->finalize (object);
}

static void
terret_request_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  TerretRequest *self = TERRET_REQUEST (object);

  switch (prop_id)
    {
    case PROP_COMMAND:
      g_value_set_string (value, self->command);
      break;
    case PROP_SESSION:
      g_value_set_string (value, self->session);
      break;
    case PROP_TIMEOUT:
      g_value_set_double (value, self->timeout);
      break;
    case PROP_TIMEOUT_ACTION:
      g_value_set_enum (value, self->timeout_action);
      break;
    case PROP_CWD:
      g_value_set_string (value, self->cwd);
      break;
    case PROP_ENV:
      g_value_set_boxed (value, self->env);
      break;
    case PROP_CAPTURE:
      g_value_set_enum (value, self->capture);
      break;
    case PROP_KEEP_FULL_OUTPUT:
      g_value_set_boolean (value, self->keep_full_output);
      break;
    case PROP_RETURN_AFTER:
      g_value_set_double (value, self->return_after);
      break;
    case PROP_STOP_GRACE:
      g_value_set_double (value, self->stop_grace);
      break;

    case PROP_DEADLINE:
      g_value_set_double (value, self->deadline);
      break;
    case PROP_IDLE_TIMEOUT:
      g_value_set_double (value, self->idle_timeout);
      break;
    case PROP_IDLE_ACTION:
      g_value_set_enum (value, self->idle_action);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
terret_request_set_property (GObject      *object,
                             guint         prop_id,
                             const GValue *value,
                             GParamSpec   *pspec)
{
  TerretRequest *self = TERRET_REQUEST (object);

  switch (prop_id)
    {
    case PROP_COMMAND:
      terret_request_set_command (self, g_value_get_string (value));
      break;
    case PROP_SESSION:
      terret_request_set_session (self, g_value_get_string (value));
      break;
    case PROP_TIMEOUT:
      terret_request_set_timeout (self, g_value_get_double (value));
      break;
    case PROP_TIMEOUT_ACTION:
      terret_request_set_timeout_action (self, g_value_get_enum (value));
      break;
    case PROP_CWD:
      terret_request_set_cwd (self, g_value_get_string (value));
      break;
    case PROP_ENV:
      terret_request_set_env (self, g_value_get_boxed (value));
      break;
    case PROP_CAPTURE:
      terret_request_set_capture (self, g_value_get_enum (value));
      break;
    case PROP_KEEP_FULL_OUTPUT:
      terret_request_set_keep_full_output (self, g_value_get_boolean (value));
      break;
    case PROP_RETURN_AFTER:
      terret_request_set_return_after (self, g_value_get_double (value));
      break;
    case PROP_STOP_GRACE:
      terret_request_set_stop_grace (self, g_value_get_double (value));
      break;

    case PROP_DEADLINE:
      terret_request_set_deadline (self, g_value_get_double (value));
      break;
    case PROP_IDLE_TIMEOUT:
      terret_request_set_idle_timeout (self, g_value_get_double (value), self->idle_action);
      break;
    case PROP_IDLE_ACTION:
      terret_request_set_idle_timeout (self, self->idle_timeout, g_value_get_enum (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
terret_request_class_init (TerretRequestClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = terret_request_finalize;
  object_class->get_property = terret_request_get_property;
  object_class->set_property = terret_request_set_property;

  /**
   * TerretRequest:command:
   *
   * The command text, handed to bash as written.
   *
   * Since: 0.1
   */
  properties[PROP_COMMAND] =
    g_param_spec_string ("command", NULL, NULL,
                         "",
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretRequest:session:
   *
   * The session key. Backends with persistent sessions run every request
   * of a key in the same shell.
   *
   * Since: 0.1
   */
  properties[PROP_SESSION] =
    g_param_spec_string ("session", NULL, NULL,
                         TERRET_DEFAULT_SESSION,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretRequest:timeout:
   *
   * Seconds the command may run; 0 means the backend's own default.
   *
   * Since: 0.1
   */
  properties[PROP_TIMEOUT] =
    g_param_spec_double ("timeout", NULL, NULL,
                         0, G_MAXDOUBLE, 0,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretRequest:timeout-action:
   *
   * What the timeout does to a command still running: kill it (the
   * default), or detach from it and leave it running in its session.
   *
   * Since: 0.1
   */
  properties[PROP_TIMEOUT_ACTION] =
    g_param_spec_enum ("timeout-action", NULL, NULL,
                       TERRET_TYPE_TIMEOUT_ACTION, TERRET_TIMEOUT_ACTION_KILL,
                       (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretRequest:cwd:
   *
   * The working directory for this run, or %NULL for the backend's.
   *
   * Since: 0.1
   */
  properties[PROP_CWD] =
    g_param_spec_string ("cwd", NULL, NULL,
                         NULL,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretRequest:env:
   *
   * `VARIABLE=value` entries layered over the backend's environment for
   * this run.
   *
   * Since: 0.1
   */
  properties[PROP_ENV] =
    g_param_spec_boxed ("env", NULL, NULL,
                        G_TYPE_STRV,
                        (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretRequest:capture:
   *
   * Which bytes of each stream the run keeps once its output passes the
   * backend's `max-output`; %TERRET_CAPTURE_MODE_DEFAULT leaves it to the
   * backend's `capture` setting.
   *
   * Since: 0.2
   */
  properties[PROP_CAPTURE] =
    g_param_spec_enum ("capture", NULL, NULL,
                       TERRET_TYPE_CAPTURE_MODE, TERRET_CAPTURE_MODE_DEFAULT,
                       (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretRequest:keep-full-output:
   *
   * Whether the run writes every byte of its output to a file, as the
   * backend's `keep-full-output` setting does for every run; see
   * [method@Terret.Result.get_full_output].
   *
   * Since: 0.2
   */
  properties[PROP_KEEP_FULL_OUTPUT] =
    g_param_spec_boolean ("keep-full-output", NULL, NULL,
                          FALSE,
                          (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretRequest:return-after:
   *
   * Seconds after which the run hands back the output so far and leaves
   * the command running; 0: never. The same clock as
   * [property@Terret.Request:timeout] with
   * %TERRET_TIMEOUT_ACTION_DETACH, under a clearer name: a request gives
   * one or the other.
   *
   * Since: 0.2
   */
  properties[PROP_RETURN_AFTER] =
    g_param_spec_double ("return-after", NULL, NULL,
                         0, G_MAXDOUBLE, 0,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretRequest:deadline:
   *
   * Seconds after its start at which the command and everything it
   * started end, whether the run still waits for it or handed it back
   * (return-after, a detaching timeout, an idle return), polled or not;
   * 0: none.
   *
   * Since: 0.2
   */
  properties[PROP_DEADLINE] =
    g_param_spec_double ("deadline", NULL, NULL,
                         0, G_MAXDOUBLE, 0,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretRequest:stop-grace:
   *
   * Seconds the command has to finish when its timeout, its deadline, a
   * cancellation or its session's close ends it, before everything it
   * started is killed; -1: the executor's `stop-grace` setting, 0:
   * killed at once.
   *
   * Since: 0.3
   */
  properties[PROP_STOP_GRACE] =
    g_param_spec_double ("stop-grace", NULL, NULL,
                         -1, 3600, -1,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretRequest:idle-timeout:
   *
   * Seconds without a byte of output after which
   * [property@Terret.Request:idle-action] applies; 0: none.
   *
   * Since: 0.2
   */
  properties[PROP_IDLE_TIMEOUT] =
    g_param_spec_double ("idle-timeout", NULL, NULL,
                         0, G_MAXDOUBLE, 0,
                         (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  /**
   * TerretRequest:idle-action:
   *
   * What the idle timeout does: end the command, or hand it back marked
   * stalled and leave it running.
   *
   * Since: 0.2
   */
  properties[PROP_IDLE_ACTION] =
    g_param_spec_enum ("idle-action", NULL, NULL,
                       TERRET_TYPE_IDLE_ACTION, TERRET_IDLE_ACTION_KILL,
                       (G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);

  /**
   * TerretRequest::waiting-for-input:
   * @self: the request whose command waits
   * @prompt: (nullable): the last line the command printed, as
   *   [method@Terret.Result.get_input_prompt] says
   * @secret: whether the terminal's echo is off (a password)
   * @pager: whether a pager holds the terminal (it wants a key)
   *
   * Emitted each time the command this request started begins to wait
   * for input on its terminal, on the main context that reads its output
   * (the run's, or once it was handed back, the latest poll's), after the
   * run was handed back if it is. A handler may answer with
   * [method@Terret.Executor.send_input]. Only backends that can see their
   * terminal's processes emit it (pty); see
   * [Interactive commands](interactive.html).
   *
   * A signal on the request rather than on the executor: the request
   * reaches whichever engine runs it, as the progress callback does,
   * while an executor that delegates to others (a container backend)
   * would have to forward a signal of its own.
   *
   * Since: 0.3
   */
  signals[SIGNAL_WAITING_FOR_INPUT] =
    g_signal_new ("waiting-for-input", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                  NULL, NULL, NULL, G_TYPE_NONE, 3, G_TYPE_STRING, G_TYPE_BOOLEAN, G_TYPE_BOOLEAN);
}

static void
terret_request_init (TerretRequest *self)
{
  self->command = g_strdup ("");
  self->session = g_strdup (TERRET_DEFAULT_SESSION);
  self->env = g_new0 (char *, 1);
  self->stop_grace = -1;
}

/**
 * terret_request_new:
 * @command: the command text
 *
 * Creates a request for @command in the default session.
 *
 * Returns: (transfer full): a new request
 *
 * Since: 0.1
 */
TerretRequest *
terret_request_new (const char *command)
{
  g_return_val_if_fail (command != NULL, NULL);

  return g_object_new (TERRET_TYPE_REQUEST, "command", command, NULL);
}

/**
 * terret_request_get_command:
 * @self: a request
 *
 * Gets the command text.
 *
 * Returns: the command text
 *
 * Since: 0.1
 */
const char *
terret_request_get_command (TerretRequest *self)
{
  g_return_val_if_fail (TERRET_IS_REQUEST (self), NULL);

  return self->command;
}

/**
 * terret_request_set_command:
 * @self: a request
 * @command: the command text
 *
 * Sets the command text.
 *
 * Since: 0.1
 */
void
terret_request_set_command (TerretRequest *self,
                            const char    *command)
{
  g_return_if_fail (TERRET_IS_REQUEST (self));
  g_return_if_fail (command != NULL);

  if (_terret_set_str (&self->command, command))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_COMMAND]);
}

/**
 * terret_request_get_session:
 * @self: a request
 *
 * Gets the session key the command runs in.
 *
 * Returns: the session key
 *
 * Since: 0.1
 */
const char *
terret_request_get_session (TerretRequest *self)
{
  g_return_val_if_fail (TERRET_IS_REQUEST (self), NULL);

  return self->session;
}

/**
 * terret_request_set_session:
 * @self: a request
 * @session: (nullable): the session key, or %NULL for %TERRET_DEFAULT_SESSION
 *
 * Sets the session the command runs in.
 *
 * Since: 0.1
 */
void
terret_request_set_session (TerretRequest *self,
                            const char    *session)
{
  g_return_if_fail (TERRET_IS_REQUEST (self));

  if (session == NULL)
    session = TERRET_DEFAULT_SESSION;

  if (_terret_set_str (&self->session, session))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_SESSION]);
}

/**
 * terret_request_get_timeout:
 * @self: a request
 *
 * Gets how long the command may run.
 *
 * Returns: the timeout in seconds, 0 for the backend's default
 *
 * Since: 0.1
 */
double
terret_request_get_timeout (TerretRequest *self)
{
  g_return_val_if_fail (TERRET_IS_REQUEST (self), 0);

  return self->timeout;
}

/**
 * terret_request_set_timeout:
 * @self: a request
 * @seconds: the timeout in seconds, 0 for the backend's default
 *
 * Sets how long the command may run. A command still running then ends
 * the run with a timed-out [class@Terret.Result], not an error.
 *
 * Since: 0.1
 */
void
terret_request_set_timeout (TerretRequest *self,
                            double         seconds)
{
  g_return_if_fail (TERRET_IS_REQUEST (self));
  g_return_if_fail (seconds >= 0);

  if (self->timeout != seconds)
    {
      self->timeout = seconds;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TIMEOUT]);
    }
}

/**
 * terret_request_get_timeout_action:
 * @self: a request
 *
 * Gets what the timeout does to a command still running.
 *
 * Returns: the timeout action, %TERRET_TIMEOUT_ACTION_KILL by default
 *
 * Since: 0.1
 */
TerretTimeoutAction
terret_request_get_timeout_action (TerretRequest *self)
{
  g_return_val_if_fail (TERRET_IS_REQUEST (self), TERRET_TIMEOUT_ACTION_KILL);

  return self->timeout_action;
}

/**
 * terret_request_set_timeout_action:
 * @self: a request
 * @action: what the timeout does
 *
 * Sets what happens to the command when the timeout passes. With
 * %TERRET_TIMEOUT_ACTION_DETACH the run returns the output so far with
 * [method@Terret.Result.get_running] %TRUE and the command goes on; see
 * [method@Terret.Executor.poll_async]. A backend without
 * %TERRET_CAPABILITY_DETACH refuses such a request with
 * %TERRET_EXEC_ERROR_NOT_SUPPORTED.
 *
 * Since: 0.1
 */
void
terret_request_set_timeout_action (TerretRequest       *self,
                                   TerretTimeoutAction  action)
{
  g_return_if_fail (TERRET_IS_REQUEST (self));
  g_return_if_fail (action == TERRET_TIMEOUT_ACTION_KILL || action == TERRET_TIMEOUT_ACTION_DETACH);

  if (self->timeout_action != action)
    {
      self->timeout_action = action;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_TIMEOUT_ACTION]);
    }
}

/**
 * terret_request_get_return_after:
 * @self: a request
 *
 * Gets when the run hands the command back still running.
 *
 * Returns: seconds, 0 for never
 *
 * Since: 0.2
 */
double
terret_request_get_return_after (TerretRequest *self)
{
  g_return_val_if_fail (TERRET_IS_REQUEST (self), 0);

  return self->return_after;
}

/**
 * terret_request_set_return_after:
 * @self: a request
 * @seconds: seconds, fractions allowed; 0 for never
 *
 * Sets when the run hands back the output so far and leaves the command
 * running ([method@Terret.Result.get_running]; poll, input and interrupt
 * reach it). This is [method@Terret.Request.set_timeout] with
 * %TERRET_TIMEOUT_ACTION_DETACH under a clearer name; a request with both
 * a timeout and a return-after is refused with
 * %TERRET_EXEC_ERROR_INVALID_REQUEST. A backend without
 * %TERRET_CAPABILITY_DETACH refuses it with
 * %TERRET_EXEC_ERROR_NOT_SUPPORTED.
 *
 * Since: 0.2
 */
void
terret_request_set_return_after (TerretRequest *self,
                                 double         seconds)
{
  g_return_if_fail (TERRET_IS_REQUEST (self));
  g_return_if_fail (seconds >= 0);

  if (self->return_after != seconds)
    {
      self->return_after = seconds;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_RETURN_AFTER]);
    }
}

/**
 * terret_request_get_deadline:
 * @self: a request
 *
 * Gets the command's hard end.
 *
 * Returns: seconds after the start, 0 for none
 *
 * Since: 0.2
 */
double
terret_request_get_deadline (TerretRequest *self)
{
  g_return_val_if_fail (TERRET_IS_REQUEST (self), 0);

  return self->deadline;
}

/**
 * terret_request_set_deadline:
 * @self: a request
 * @seconds: seconds after the command's start, fractions allowed; 0 for none
 *
 * Sets a hard end: when it passes, the command and everything it started
 * are ended, whether the run still waits for it or already handed it
 * back, and whether or not anyone polls it. The result that reports the
 * end has [method@Terret.Result.get_clock] %TERRET_CLOCK_DEADLINE.
 *
 * Since: 0.2
 */
void
terret_request_set_deadline (TerretRequest *self,
                             double         seconds)
{
  g_return_if_fail (TERRET_IS_REQUEST (self));
  g_return_if_fail (seconds >= 0);

  if (self->deadline != seconds)
    {
      self->deadline = seconds;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_DEADLINE]);
    }
}

/**
 * terret_request_get_stop_grace:
 * @self: a request
 *
 * Gets the grace the command has when something other than its own exit
 * ends it.
 *
 * Returns: seconds, or -1 for the executor's `stop-grace` setting
 *
 * Since: 0.3
 */
double
terret_request_get_stop_grace (TerretRequest *self)
{
  g_return_val_if_fail (TERRET_IS_REQUEST (self), -1);

  return self->stop_grace;
}

/**
 * terret_request_set_stop_grace:
 * @self: a request
 * @seconds: seconds, fractions allowed, at most 3600; 0 to kill at once,
 *   -1 for the executor's `stop-grace` setting
 *
 * Sets how long the command has to finish when its timeout, its
 * deadline, a cancellation or its session's close ends it: it first
 * hears what a terminal sends (^C, or SIGINT to its process group),
 * SIGTERM halfway through, and at the end everything it started is
 * killed. What it prints meanwhile is part of its result, and
 * [method@Terret.Result.get_ended_by] says which signal ended it.
 *
 * Since: 0.3
 */
void
terret_request_set_stop_grace (TerretRequest *self,
                               double         seconds)
{
  g_return_if_fail (TERRET_IS_REQUEST (self));
  g_return_if_fail (seconds == -1 || (seconds >= 0 && seconds <= 3600));

  if (self->stop_grace != seconds)
    {
      self->stop_grace = seconds;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_STOP_GRACE]);
    }
}

/**
 * terret_request_get_cancelled_result:
 * @self: a request
 *
 * Gets what the last run of this request that a cancellation ended
 * left behind. The run itself fails with %G_IO_ERROR_CANCELLED, as a
 * cancelled GIO call does; but the command was stopped gracefully (see
 * [property@Terret.Request:stop-grace]), and what it printed while it
 * ran and while it stopped (a test runner's summary, a server's last
 * words) is here, with [method@Terret.Result.get_ended_by].
 *
 * Returns: (transfer none) (nullable): the result, or %NULL when no run
 *   of this request was cancelled, or its backend keeps nothing of one
 *
 * Since: 0.3
 */
TerretResult *
terret_request_get_cancelled_result (TerretRequest *self)
{
  g_return_val_if_fail (TERRET_IS_REQUEST (self), NULL);

  return self->cancelled_result;
}

/**
 * terret_request_set_cancelled_result:
 * @self: a request
 * @result: (nullable): what the cancelled run left behind
 *
 * For backends: keeps what a run of this request that a cancellation
 * ended left behind, before the run fails with %G_IO_ERROR_CANCELLED;
 * see [method@Terret.Request.get_cancelled_result].
 *
 * Since: 0.3
 */
void
terret_request_set_cancelled_result (TerretRequest *self,
                                     TerretResult  *result)
{
  g_return_if_fail (TERRET_IS_REQUEST (self));
  g_return_if_fail (result == NULL || TERRET_IS_RESULT (result));

  g_set_object (&self->cancelled_result, result);
}

/**
 * terret_request_get_idle_timeout:
 * @self: a request
 * @action: (out) (optional): return location for what it does
 *
 * Gets the idle timeout and what it does.
 *
 * Returns: seconds without output, 0 for none
 *
 * Since: 0.2
 */
double
terret_request_get_idle_timeout (TerretRequest    *self,
                                 TerretIdleAction *action)
{
  if (action != NULL)
    *action = TERRET_IDLE_ACTION_KILL;
  g_return_val_if_fail (TERRET_IS_REQUEST (self), 0);

  if (action != NULL)
    *action = self->idle_action;
  return self->idle_timeout;
}

/**
 * terret_request_set_idle_timeout:
 * @self: a request
 * @seconds: seconds without a byte of output, fractions allowed; 0 for none
 * @action: what happens then
 *
 * Sets what happens to a command that prints nothing for @seconds: with
 * %TERRET_IDLE_ACTION_KILL it is ended with everything it started; with
 * %TERRET_IDLE_ACTION_RETURN the run hands back the output so far,
 * marked [method@Terret.Result.get_stalled], and the command goes on
 * (as a detach: a backend without %TERRET_CAPABILITY_DETACH refuses it
 * with %TERRET_EXEC_ERROR_NOT_SUPPORTED). The clock counts from the
 * last byte the command printed, or from its start.
 *
 * Since: 0.2
 */
void
terret_request_set_idle_timeout (TerretRequest    *self,
                                 double            seconds,
                                 TerretIdleAction  action)
{
  g_return_if_fail (TERRET_IS_REQUEST (self));
  g_return_if_fail (seconds >= 0);
  g_return_if_fail (action == TERRET_IDLE_ACTION_KILL || action == TERRET_IDLE_ACTION_RETURN);

  g_object_freeze_notify (G_OBJECT (self));
  if (self->idle_timeout != seconds)
    {
      self->idle_timeout = seconds;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_IDLE_TIMEOUT]);
    }
  if (self->idle_action != action)
    {
      self->idle_action = action;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_IDLE_ACTION]);
    }
  g_object_thaw_notify (G_OBJECT (self));
}

/**
 * terret_request_get_cwd:
 * @self: a request
 *
 * Gets the working directory of this run.
 *
 * Returns: (nullable) (type filename): the working directory, or %NULL
 *
 * Since: 0.1
 */
const char *
terret_request_get_cwd (TerretRequest *self)
{
  g_return_val_if_fail (TERRET_IS_REQUEST (self), NULL);

  return self->cwd;
}

/**
 * terret_request_set_cwd:
 * @self: a request
 * @cwd: (nullable) (type filename): the working directory, or %NULL for
 *   the backend's
 *
 * Sets the working directory of this run.
 *
 * Since: 0.1
 */
void
terret_request_set_cwd (TerretRequest *self,
                        const char    *cwd)
{
  g_return_if_fail (TERRET_IS_REQUEST (self));

  if (_terret_set_str (&self->cwd, cwd))
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CWD]);
}

/**
 * terret_request_get_env:
 * @self: a request
 *
 * Gets the environment overlay of this run.
 *
 * Returns: (array zero-terminated=1) (transfer none): the environment
 *   overlay, as `VARIABLE=value` entries
 *
 * Since: 0.1
 */
const char * const *
terret_request_get_env (TerretRequest *self)
{
  g_return_val_if_fail (TERRET_IS_REQUEST (self), NULL);

  return (const char * const *)self->env;
}

/**
 * terret_request_set_env:
 * @self: a request
 * @env: (nullable) (array zero-terminated=1): `VARIABLE=value` entries
 *
 * Replaces the environment overlay.
 *
 * Since: 0.1
 */
void
terret_request_set_env (TerretRequest      *self,
                        const char * const *env)
{
  g_return_if_fail (TERRET_IS_REQUEST (self));

  g_strfreev (self->env);
  self->env = env != NULL ? g_strdupv ((char **)env) : g_new0 (char *, 1);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ENV]);
}

/**
 * terret_request_setenv:
 * @self: a request
 * @variable: the variable's name; must not contain `=`
 * @value: its value
 *
 * Sets one variable of the environment overlay, replacing an earlier
 * value of the same variable.
 *
 * Since: 0.1
 */
void
terret_request_setenv (TerretRequest *self,
                       const char    *variable,
                       const char    *value)
{
  g_return_if_fail (TERRET_IS_REQUEST (self));
  g_return_if_fail (variable != NULL && *variable != '\0');
  g_return_if_fail (strchr (variable, '=') == NULL);
  g_return_if_fail (value != NULL);

  self->env = g_environ_setenv (self->env, variable, value, TRUE);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ENV]);
}

/**
 * terret_request_set_progress_func:
 * @self: a request
 * @func: (nullable) (scope notified) (closure user_data) (destroy notify):
 *   what receives output while the command runs, or %NULL
 * @user_data: data for @func
 * @notify: (nullable): frees @user_data when @func is replaced or the
 *   request is finalized
 *
 * Sets the callback that receives the command's output as it arrives.
 * Backends without %TERRET_CAPABILITY_PROGRESS never call it.
 *
 * Since: 0.1
 */
void
terret_request_set_progress_func (TerretRequest      *self,
                                  TerretProgressFunc  func,
                                  gpointer            user_data,
                                  GDestroyNotify      notify)
{
  GDestroyNotify old_notify;
  gpointer old_data;

  g_return_if_fail (TERRET_IS_REQUEST (self));

  old_notify = self->progress_notify;
  old_data = self->progress_data;

  self->progress_func = func;
  self->progress_data = user_data;
  self->progress_notify = notify;

  if (old_notify != NULL)
    old_notify (old_data);
}

/**
 * terret_request_has_progress_func:
 * @self: a request
 *
 * For backends: whether anything listens to progress, so a backend can
 * skip the work of framing output nobody reads.
 *
 * Returns: %TRUE when a progress callback is set
 *
 * Since: 0.1
 */
gboolean
terret_request_has_progress_func (TerretRequest *self)
{
  g_return_val_if_fail (TERRET_IS_REQUEST (self), FALSE);

  return self->progress_func != NULL;
}

/**
 * terret_request_report_progress:
 * @self: a request
 * @stream: which stream the bytes came from
 * @data: (array length=len): the bytes
 * @len: how many
 *
 * For backends: hands output to the progress callback, if there is one.
 * Empty output is not reported.
 *
 * Since: 0.1
 */
void
terret_request_report_progress (TerretRequest *self,
                                TerretStream   stream,
                                const guint8  *data,
                                gsize          len)
{
  g_autoptr(GBytes) bytes = NULL;

  g_return_if_fail (TERRET_IS_REQUEST (self));
  g_return_if_fail (data != NULL || len == 0);

  if (self->progress_func == NULL || len == 0)
    return;

  bytes = g_bytes_new (data, len);
  self->progress_func (self, stream, bytes, self->progress_data);
}

/**
 * terret_request_get_capture:
 * @self: a request
 *
 * Gets which bytes the run keeps past `max-output`.
 *
 * Returns: the capture mode; %TERRET_CAPTURE_MODE_DEFAULT for the
 *   backend's setting
 *
 * Since: 0.2
 */
TerretCaptureMode
terret_request_get_capture (TerretRequest *self)
{
  g_return_val_if_fail (TERRET_IS_REQUEST (self), TERRET_CAPTURE_MODE_DEFAULT);

  return self->capture;
}

/**
 * terret_request_set_capture:
 * @self: a request
 * @mode: which bytes to keep past `max-output`
 *
 * Sets which bytes of each stream the run keeps once its output passes
 * the backend's `max-output`: the head, the tail, or both halves
 * (%TERRET_CAPTURE_MODE_HEAD_TAIL). %TERRET_CAPTURE_MODE_DEFAULT, the
 * default, follows the backend's `capture` setting.
 *
 * Since: 0.2
 */
void
terret_request_set_capture (TerretRequest     *self,
                            TerretCaptureMode  mode)
{
  g_return_if_fail (TERRET_IS_REQUEST (self));
  g_return_if_fail (mode <= TERRET_CAPTURE_MODE_HEAD_TAIL);

  if (self->capture != mode)
    {
      self->capture = mode;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_CAPTURE]);
    }
}

/**
 * terret_request_get_keep_full_output:
 * @self: a request
 *
 * Gets whether the request asks for its full output in a file.
 *
 * Returns: %TRUE when the request asks for it
 *
 * Since: 0.2
 */
gboolean
terret_request_get_keep_full_output (TerretRequest *self)
{
  g_return_val_if_fail (TERRET_IS_REQUEST (self), FALSE);

  return self->keep_full_output;
}

/**
 * terret_request_set_keep_full_output:
 * @self: a request
 * @keep: whether to keep every byte of the output in a file
 *
 * Asks the run to write every byte of its output (each stream apart where
 * the backend separates them) to a file, whatever `max-output` keeps in
 * the result. The run keeps its full output when the request or the
 * backend's `keep-full-output` setting asks for it; %FALSE here leaves
 * it to the setting. See [method@Terret.Result.get_full_output] for
 * where the file is and how long it stays.
 *
 * Since: 0.2
 */
void
terret_request_set_keep_full_output (TerretRequest *self,
                                     gboolean       keep)
{
  g_return_if_fail (TERRET_IS_REQUEST (self));

  keep = !!keep;
  if (self->keep_full_output != keep)
    {
      self->keep_full_output = keep;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_KEEP_FULL_OUTPUT]);
    }
}
