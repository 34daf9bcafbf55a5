/* terret-result.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <sys/wait.h>

#include "terret-result.h"
#include "terret-result-fields-private.h"

/**
 * TerretResult:
 *
 * What a command that ran left behind: its exit status or the signal that
 * ended it, its output, and a notice when something happened that the
 * caller did not ask for (a truncation, a session restart, a timeout).
 *
 * A result means the command ran. Its status is absent when the command
 * did not report one (it was interrupted, timed out, or its shell ended
 * under it): an exit code that was not seen is never invented. The
 * output is bytes exactly as the command wrote them; past a backend's
 * capture limit some bytes are dropped, and
 * [method@Terret.Result.get_dropped] and
 * [method@Terret.Result.get_cut_offset] say how many and where, so a
 * renderer can show "… N bytes omitted …" at the right place
 * ([method@Terret.Result.format_omitted] writes that line), and
 * [method@Terret.Result.get_omitted_at] says where in the stream they
 * began; [method@Terret.Result.get_omitted_lines] and
 * [method@Terret.Result.get_omitted_errors] say what they held. With
 * keep-full-output, [method@Terret.Result.get_full_output] names a file
 * that holds every byte.
 *
 * The setters are for backends, which build a result once before handing
 * it to the caller.
 *
 * Since: 0.1
 */

G_DEFINE_FINAL_TYPE (TerretResult, terret_result, G_TYPE_OBJECT)

static void
terret_result_finalize (GObject *object)
{
  TerretResult *self = (TerretResult *)object;

  g_clear_pointer (&self->stdout_bytes, g_bytes_unref);
  g_clear_pointer (&self->stderr_bytes, g_bytes_unref);
  if (self->notice != NULL)
    g_string_free (g_steal_pointer (&self->notice), TRUE);
  g_clear_pointer (&self->cwd, g_free);
  g_clear_pointer (&self->pipestatus, g_array_unref);
  g_clear_pointer (&self->spool[0], _terret_spool_unref);
  g_clear_pointer (&self->spool[1], _terret_spool_unref);
  g_clear_pointer (&self->omitted_errors[0], g_ptr_array_unref);
  g_clear_pointer (&self->omitted_errors[1], g_ptr_array_unref);
  _terret_input_wait_clear (&self->input);

  G_OBJECT_CLASS (terret_result_parent_class)->finalize (object);
}

static void
terret_result_class_init (TerretResultClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = terret_result_finalize;
}

static void
terret_result_init (TerretResult *self)
{
  self->stdout_bytes = g_bytes_new (NULL, 0);
  self->exit_status = -1;
  self->input.since = -1;
}

/**
 * terret_result_new:
 *
 * For backends: creates an empty result with no status and no output.
 *
 * Returns: (transfer full): a new result
 *
 * Since: 0.1
 */
TerretResult *
terret_result_new (void)
{
  return g_object_new (TERRET_TYPE_RESULT, NULL);
}

/**
 * terret_result_get_exited:
 * @self: a result
 *
 * Gets whether the command reported an exit status. It did not when
 * it was killed, timed out, or its shell ended under it.
 *
 * Returns: %TRUE when the command reported an exit status
 *
 * Since: 0.1
 */
gboolean
terret_result_get_exited (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), FALSE);

  return self->exit_status >= 0;
}

/**
 * terret_result_get_exit_status:
 * @self: a result
 *
 * Gets the command's exit status.
 *
 * Returns: the exit status, or -1 when the command did not report one
 *
 * Since: 0.1
 */
int
terret_result_get_exit_status (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), -1);

  return self->exit_status;
}

/**
 * terret_result_get_term_signal:
 * @self: a result
 *
 * Gets the signal that ended the command, where the backend knows it.
 *
 * Returns: the signal that ended the command, or 0 when none is known
 *
 * Since: 0.1
 */
int
terret_result_get_term_signal (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), 0);

  return self->term_signal;
}

/**
 * terret_result_get_stdout:
 * @self: a result
 *
 * The standard output as captured; for a backend without
 * %TERRET_CAPABILITY_SEPARATE_STDERR, everything the command's terminal
 * carried.
 *
 * Returns: (transfer none): the bytes, possibly empty
 *
 * Since: 0.1
 */
GBytes *
terret_result_get_stdout (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), NULL);

  return self->stdout_bytes;
}

/**
 * terret_result_get_stderr:
 * @self: a result
 *
 * Gets the standard error, for backends with
 * %TERRET_CAPABILITY_SEPARATE_STDERR.
 *
 * Returns: (transfer none) (nullable): the standard error as captured, or
 *   %NULL when the backend merges it into stdout
 *
 * Since: 0.1
 */
GBytes *
terret_result_get_stderr (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), NULL);

  return self->stderr_bytes;
}

/**
 * terret_result_get_notice:
 * @self: a result
 *
 * A notice tells the caller something happened that it did not ask for:
 * output truncated, a session restarted and its cwd and variables lost,
 * a timeout. It is kept out of the output so the output stays exactly
 * what the command wrote.
 *
 * Returns: (nullable): the notice, or %NULL
 *
 * Since: 0.1
 */
const char *
terret_result_get_notice (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), NULL);

  return self->notice != NULL ? self->notice->str : NULL;
}

/**
 * terret_result_get_timed_out:
 * @self: a result
 *
 * Gets whether the command was stopped because it ran past its
 * timeout. The output is then what it wrote until then.
 *
 * Returns: %TRUE when the command ran past its timeout
 *
 * Since: 0.1
 */
gboolean
terret_result_get_timed_out (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), FALSE);

  return self->timed_out;
}

/**
 * terret_result_get_limits_hit:
 * @self: a result
 *
 * Gets the resource limits (the `limit-*` settings) the command ran
 * into: memory it was refused or killed for, a fork refused, a process
 * ended for its CPU time or a file it grew too far. The notice says so
 * too.
 *
 * Returns: the limits hit, %TERRET_LIMIT_NONE when none was
 *
 * Since: 0.2
 */
TerretLimits
terret_result_get_limits_hit (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), TERRET_LIMIT_NONE);

  return self->limits_hit;
}

/**
 * terret_result_get_running:
 * @self: a result
 *
 * Gets whether the command is still running: a run whose request's
 * timeout action is %TERRET_TIMEOUT_ACTION_DETACH returned at its timeout,
 * or a poll returned before the command ended. The result then has no
 * status; [method@Terret.Executor.poll_async] collects the output that
 * follows and, once the command ended, its status and cwd.
 *
 * Returns: %TRUE while the command goes on
 *
 * Since: 0.1
 */
gboolean
terret_result_get_running (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), FALSE);

  return self->running;
}

/**
 * terret_result_get_dropped:
 * @self: a result
 * @stream: which stream
 *
 * Gets how many bytes of @stream the capture dropped to stay within
 * the backend's output limit.
 *
 * Returns: how many bytes of @stream the capture dropped
 *
 * Since: 0.1
 */
guint64
terret_result_get_dropped (TerretResult *self,
                           TerretStream  stream)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), 0);
  g_return_val_if_fail (stream <= TERRET_STREAM_STDERR, 0);

  return self->dropped[stream];
}

/**
 * terret_result_get_cut_offset:
 * @self: a result
 * @stream: which stream
 *
 * Where in the kept bytes of @stream the dropped bytes were: the length
 * of the kept bytes when the head was kept, 0 when the tail was, the
 * length of the kept head for %TERRET_CAPTURE_MODE_HEAD_TAIL.
 * Meaningful only when [method@Terret.Result.get_dropped] is not 0.
 *
 * Returns: a byte offset into the kept bytes
 *
 * Since: 0.1
 */
gsize
terret_result_get_cut_offset (TerretResult *self,
                              TerretStream  stream)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), 0);
  g_return_val_if_fail (stream <= TERRET_STREAM_STDERR, 0);

  return self->cut_offset[stream];
}

/**
 * terret_result_get_cwd:
 * @self: a result
 *
 * Gets the session's working directory after the run.
 *
 * Returns: (nullable) (type filename): the session's working directory
 *   after the run, where the backend knows it
 *
 * Since: 0.1
 */
const char *
terret_result_get_cwd (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), NULL);

  return self->cwd;
}

/**
 * terret_result_get_pipestatus:
 * @self: a result
 * @n_statuses: (out) (optional): return location for the number of statuses
 *
 * Gets the exit statuses of the commands of the last pipeline the command
 * line ran, as bash's `PIPESTATUS` has them: `false | true` gives 1 and 0,
 * where the exit status is the last one's (0) unless `pipefail` is on.
 *
 * Returns: (nullable) (array length=n_statuses): the statuses, or %NULL
 *   where the backend cannot know them (see the backend's documentation)
 *   or none were seen
 *
 * Since: 0.2
 */
const int *
terret_result_get_pipestatus (TerretResult *self,
                              guint        *n_statuses)
{
  if (n_statuses != NULL)
    *n_statuses = 0;
  g_return_val_if_fail (TERRET_IS_RESULT (self), NULL);

  if (self->pipestatus == NULL)
    return NULL;
  if (n_statuses != NULL)
    *n_statuses = self->pipestatus->len;
  return (const int *)(gpointer)self->pipestatus->data;
}

/**
 * terret_result_get_clock:
 * @self: a result
 *
 * Gets which of the request's clocks ended the command or handed it back:
 * %TERRET_CLOCK_NONE when none did (it ended on its own, or was stopped).
 *
 * Returns: the clock
 *
 * Since: 0.2
 */
TerretClock
terret_result_get_clock (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), TERRET_CLOCK_NONE);

  return self->clock;
}

/**
 * terret_result_get_stalled:
 * @self: a result
 *
 * Gets whether the command was handed back because it printed nothing
 * for its idle timeout (`on_idle` return): it goes on, and may be
 * waiting for input.
 *
 * Returns: whether the command stalled
 *
 * Since: 0.2
 */
gboolean
terret_result_get_stalled (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), FALSE);

  return self->stalled;
}

/**
 * terret_result_set_pipestatus:
 * @self: a result
 * @statuses: (array length=n_statuses) (nullable): the statuses
 * @n_statuses: how many
 *
 * Sets the statuses of the last pipeline; see
 * [method@Terret.Result.get_pipestatus].
 *
 * Since: 0.2
 */
void
terret_result_set_pipestatus (TerretResult *self,
                              const int    *statuses,
                              guint         n_statuses)
{
  g_return_if_fail (TERRET_IS_RESULT (self));
  g_return_if_fail (statuses != NULL || n_statuses == 0);

  g_clear_pointer (&self->pipestatus, g_array_unref);
  if (statuses == NULL)
    return;
  self->pipestatus = g_array_sized_new (FALSE, FALSE, sizeof (int), n_statuses);
  g_array_append_vals (self->pipestatus, statuses, n_statuses);
}

/**
 * terret_result_set_clock:
 * @self: a result
 * @clock: the clock that ended the command or handed it back
 *
 * Sets which clock ended the command; see [method@Terret.Result.get_clock].
 *
 * Since: 0.2
 */
void
terret_result_set_clock (TerretResult *self,
                         TerretClock   clock)
{
  g_return_if_fail (TERRET_IS_RESULT (self));

  self->clock = clock;
}

/**
 * terret_result_set_stalled:
 * @self: a result
 * @stalled: whether the command stalled
 *
 * Sets whether the command was handed back for printing nothing; see
 * [method@Terret.Result.get_stalled].
 *
 * Since: 0.2
 */
void
terret_result_set_stalled (TerretResult *self,
                           gboolean      stalled)
{
  g_return_if_fail (TERRET_IS_RESULT (self));

  self->stalled = !!stalled;
}

/**
 * terret_result_set_exit_status:
 * @self: a result
 * @status: the exit status, 0 to 255, or -1 for none
 *
 * For backends: sets the exit status.
 *
 * Since: 0.1
 */
void
terret_result_set_exit_status (TerretResult *self,
                               int           status)
{
  g_return_if_fail (TERRET_IS_RESULT (self));
  g_return_if_fail (status >= -1 && status <= 255);

  self->exit_status = status;
}

/**
 * terret_result_set_term_signal:
 * @self: a result
 * @signum: the signal that ended the command, or 0 for none
 *
 * For backends: sets the signal that ended the command.
 *
 * Since: 0.1
 */
void
terret_result_set_term_signal (TerretResult *self,
                               int           signum)
{
  g_return_if_fail (TERRET_IS_RESULT (self));
  g_return_if_fail (signum >= 0);

  self->term_signal = signum;
}

/**
 * terret_result_set_wait_status:
 * @self: a result
 * @wait_status: a status as waitpid() reports it
 *
 * Sets the exit status or the terminating signal from a raw wait status.
 *
 * Since: 0.1
 */
void
terret_result_set_wait_status (TerretResult *self,
                               int           wait_status)
{
  g_return_if_fail (TERRET_IS_RESULT (self));

  if (WIFEXITED (wait_status))
    {
      self->exit_status = WEXITSTATUS (wait_status);
      self->term_signal = 0;
    }
  else if (WIFSIGNALED (wait_status))
    {
      self->exit_status = -1;
      self->term_signal = WTERMSIG (wait_status);
    }
}

/**
 * terret_result_set_stdout:
 * @self: a result
 * @bytes: the captured standard output
 *
 * For backends: sets the captured standard output.
 *
 * Since: 0.1
 */
void
terret_result_set_stdout (TerretResult *self,
                          GBytes       *bytes)
{
  g_return_if_fail (TERRET_IS_RESULT (self));
  g_return_if_fail (bytes != NULL);

  g_bytes_ref (bytes);
  g_clear_pointer (&self->stdout_bytes, g_bytes_unref);
  self->stdout_bytes = bytes;
}

/**
 * terret_result_set_stderr:
 * @self: a result
 * @bytes: (nullable): the captured standard error, or %NULL when merged
 *
 * For backends: sets the captured standard error.
 *
 * Since: 0.1
 */
void
terret_result_set_stderr (TerretResult *self,
                          GBytes       *bytes)
{
  g_return_if_fail (TERRET_IS_RESULT (self));

  if (bytes != NULL)
    g_bytes_ref (bytes);
  g_clear_pointer (&self->stderr_bytes, g_bytes_unref);
  self->stderr_bytes = bytes;
}

/**
 * terret_result_add_notice:
 * @self: a result
 * @notice: one sentence for the caller
 *
 * Appends to the notice; sentences are joined with a space.
 *
 * Since: 0.1
 */
void
terret_result_add_notice (TerretResult *self,
                          const char   *notice)
{
  g_return_if_fail (TERRET_IS_RESULT (self));
  g_return_if_fail (notice != NULL);

  if (self->notice == NULL)
    self->notice = g_string_new (notice);
  else
    g_string_append_printf (self->notice, " %s", notice);
}

/**
 * terret_result_set_timed_out:
 * @self: a result
 * @timed_out: whether the command ran past its timeout
 *
 * For backends: marks the run as stopped by its timeout.
 *
 * Since: 0.1
 */
void
terret_result_set_timed_out (TerretResult *self,
                             gboolean      timed_out)
{
  g_return_if_fail (TERRET_IS_RESULT (self));

  self->timed_out = !!timed_out;
}

/**
 * terret_result_set_limits_hit:
 * @self: a result
 * @limits: the limits the command ran into
 *
 * For backends: records which resource limits the command hit.
 *
 * Since: 0.2
 */
void
terret_result_set_limits_hit (TerretResult *self,
                              TerretLimits  limits)
{
  g_return_if_fail (TERRET_IS_RESULT (self));

  self->limits_hit = limits;
}

/**
 * terret_result_set_running:
 * @self: a result
 * @running: whether the command goes on after this result
 *
 * For backends: marks the result as a snapshot of a command that is still
 * running.
 *
 * Since: 0.1
 */
void
terret_result_set_running (TerretResult *self,
                           gboolean      running)
{
  g_return_if_fail (TERRET_IS_RESULT (self));

  self->running = !!running;
}

/**
 * terret_result_set_dropped:
 * @self: a result
 * @stream: which stream
 * @dropped: how many bytes the capture dropped
 * @cut_offset: where in the kept bytes they were
 *
 * For backends: records how many bytes of @stream the capture dropped
 * and where in the kept bytes they were. It also sets where they began
 * in the stream ([method@Terret.Result.get_omitted_at]) to @cut_offset,
 * which is exact for a result that holds the stream from its first byte;
 * a backend whose result holds a later stretch of the stream sets it
 * with [method@Terret.Result.set_omitted_at] afterwards.
 *
 * Since: 0.1
 */
void
terret_result_set_dropped (TerretResult *self,
                           TerretStream  stream,
                           guint64       dropped,
                           gsize         cut_offset)
{
  g_return_if_fail (TERRET_IS_RESULT (self));
  g_return_if_fail (stream <= TERRET_STREAM_STDERR);

  self->dropped[stream] = dropped;
  self->cut_offset[stream] = cut_offset;
  self->omitted_at[stream] = cut_offset;
}

/**
 * terret_result_set_cwd:
 * @self: a result
 * @cwd: (nullable) (type filename): the session's working directory
 *
 * For backends: sets the session's working directory after the run.
 *
 * Since: 0.1
 */
void
terret_result_set_cwd (TerretResult *self,
                       const char   *cwd)
{
  g_return_if_fail (TERRET_IS_RESULT (self));

  g_free (self->cwd);
  self->cwd = g_strdup (cwd);
}
