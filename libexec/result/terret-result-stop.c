/* terret-result-stop.c: how a stopped command ended
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-result-private.h"
#include "terret-result-fields-private.h"

/**
 * terret_result_get_ended_by:
 * @self: a result
 *
 * Gets the last signal of the stop sequence the command heard before it
 * ended, when its timeout, its deadline, a cancellation or its session's
 * close stopped it (see [property@Terret.Request:stop-grace]):
 * %TERRET_STOP_SIGNAL_INTERRUPT when the interrupt was enough (a test
 * runner's summary, a build's last words are then in the output),
 * %TERRET_STOP_SIGNAL_KILL when it was still running at the grace's
 * end. %TERRET_STOP_SIGNAL_NONE when nothing stopped it.
 *
 * Returns: the signal
 *
 * Since: 0.3
 */
TerretStopSignal
terret_result_get_ended_by (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), TERRET_STOP_SIGNAL_NONE);

  return self->ended_by;
}

/**
 * terret_result_get_stop_time:
 * @self: a result
 *
 * Gets how long the stop took, from its first signal to the command's
 * end; never much more than the grace.
 *
 * Returns: seconds, 0 when nothing stopped the command
 *
 * Since: 0.3
 */
double
terret_result_get_stop_time (TerretResult *self)
{
  g_return_val_if_fail (TERRET_IS_RESULT (self), 0);

  return self->stop_seconds;
}

/**
 * terret_result_set_stop:
 * @self: a result
 * @ended_by: the last signal of the stop the command heard
 * @seconds: how long the stop took
 *
 * Sets how a stopped command ended; see
 * [method@Terret.Result.get_ended_by].
 *
 * Since: 0.3
 */
void
terret_result_set_stop (TerretResult     *self,
                        TerretStopSignal  ended_by,
                        double            seconds)
{
  g_return_if_fail (TERRET_IS_RESULT (self));
  g_return_if_fail (seconds >= 0);

  self->ended_by = ended_by;
  self->stop_seconds = seconds;
}
