/* terret-input-wait.c: whether a command waits for input on its terminal
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-input-wait-private.h"

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
