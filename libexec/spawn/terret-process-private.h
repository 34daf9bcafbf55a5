/* terret-process-private.h: what the library knows of its processes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "terret-process.h"
#include "terret-types.h"

G_BEGIN_DECLS

TerretProcess *_terret_process_new               (GPid           pid,
                                                  int            unit_fd,
                                                  gboolean       far);
gboolean       _terret_process_is_gone           (TerretProcess *self);
gboolean       _terret_process_is_far            (TerretProcess *self);
void           _terret_process_reset_terminal    (TerretProcess *self);
gboolean       _terret_process_left_others       (TerretProcess *self);
GSource       *_terret_process_create_gone_source (TerretProcess *self);
int            _terret_process_get_fd            (TerretProcess *self);
TerretLimits   _terret_process_get_limits_hit    (TerretProcess *self);

G_END_DECLS
