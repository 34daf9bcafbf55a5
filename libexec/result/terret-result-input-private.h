/* terret-result-input-private.h: a wait for input, as a result carries it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The value a run's watch of its terminal (run/terret-input-wait.c)
 * copies into each result it makes: the result's own, so that it needs
 * nothing of the watch.
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
