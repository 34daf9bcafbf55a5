/* terret-result-input.c: what a result says of a wait for input
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Whether the command a result describes waits for input on its
 * terminal, since when, the prompt it printed, and whether the input is
 * a secret or a pager's key.
 */

#include "config.h"

#include "terret-result-private.h"
#include "terret-result-fields-private.h"

/**
 * terret_result_get_input_state:
 * @self: a result
 *
 * Gets whether the command waited for input on its terminal when this
 * result was made: every process of the terminal's foreground group slept
 * reading the terminal. Meaningful for a result of a command that goes on
 * ([method@Terret.Result.get_running]); a result of a command that ended
 * says %TERRET_INPUT_STATE_NOT_WAITING where the backend has a terminal.
 * A backend without a terminal (oneshot), or one that cannot read the
 * state where the command runs, says %TERRET_INPUT_STATE_UNKNOWN: never a
 * guess. See [Interactive commands](interactive.html).
 *
 * Returns: the input state
 *
 * Since: 0.3
 */
TerretInputState
terret_result_get_input_state (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), TERRET_INPUT_STATE_UNKNOWN);

  return self->input.state;
}

/**
 * terret_result_get_input_prompt:
 * @self: a result
 *
 * Gets the prompt of a command that waits for input: the last line it
 * printed before it waited, at most 256 bytes (its end, cut at a
 * character boundary), as valid UTF-8 (bytes that are not are replaced)
 * and without terminal control sequences. It describes the wait; the
 * bytes themselves are in the output.
 *
 * Returns: (nullable): the prompt, or %NULL when the command does not
 *   wait or printed nothing on the line it waits on
 *
 * Since: 0.3
 */
const char *
terret_result_get_input_prompt (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), NULL);

  return self->input.prompt;
}

/**
 * terret_result_get_input_secret:
 * @self: a result
 *
 * Gets whether the command waits for a secret: its terminal's ECHO is off
 * (`read -s`, a password prompt).
 *
 * Returns: %TRUE when the command waits for input that is not echoed
 *
 * Since: 0.3
 */
gboolean
terret_result_get_input_secret (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), FALSE);

  return self->input.secret;
}

/**
 * terret_result_get_input_pager:
 * @self: a result
 *
 * Gets whether a pager holds the terminal (`less`, `more`, `most`, a
 * pager git started): it waits for a key (`q` ends it), not a line.
 *
 * Returns: %TRUE when the command waiting for input is a pager
 *
 * Since: 0.3
 */
gboolean
terret_result_get_input_pager (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), FALSE);

  return self->input.pager;
}

/**
 * terret_result_get_input_since:
 * @self: a result
 *
 * Gets when the wait for input was first seen, in seconds since the run
 * started.
 *
 * Returns: seconds since the run started, or a negative value when the
 *   command does not wait for input
 *
 * Since: 0.3
 */
double
terret_result_get_input_since (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), -1);

  return self->input.since;
}

/* For the engines: what the run knew of a wait for input as it made
 * this result. */
void
_terret_result_set_input_wait (TerretResult          *self,
                               const TerretInputWait *wait)
{
  g_return_if_fail (TERRET_IS_RESULT (self));

  _terret_input_wait_copy (&self->input, wait);
}

void
_terret_input_wait_clear (TerretInputWait *wait)
{
  g_clear_pointer (&wait->prompt, g_free);
  wait->state = TERRET_INPUT_STATE_UNKNOWN;
  wait->since = -1;
  wait->secret = FALSE;
  wait->pager = FALSE;
}

void
_terret_input_wait_copy (TerretInputWait       *dest,
                         const TerretInputWait *src)
{
  if (dest == src)
    return;
  g_free (dest->prompt);
  *dest = *src;
  dest->prompt = g_strdup (src->prompt);
}
