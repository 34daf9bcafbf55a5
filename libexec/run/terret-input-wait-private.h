/* terret-input-wait-private.h: whether a command waits for input on its terminal
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

#include "terret-types.h"

G_BEGIN_DECLS

/* What a run knows of a wait for input: copied into each result. */
typedef struct
{
  TerretInputState state;
  char *prompt;                 /* (owned) (nullable) */
  double since;                 /* seconds into the run; < 0 when not waiting */
  guint secret : 1;
  guint pager : 1;
} TerretInputWait;

void _terret_input_wait_clear (TerretInputWait       *wait);
void _terret_input_wait_copy  (TerretInputWait       *dest,
                               const TerretInputWait *src);

G_END_DECLS
