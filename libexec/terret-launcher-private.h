/* terret-launcher-private.h: launcher settings only the library sets
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <sys/resource.h>

#include "terret-launcher.h"
#include "terret-supervisor-private.h"

G_BEGIN_DECLS

TerretLauncher *_terret_launcher_new_for   (TerretSupervisor *supervisor);
void            _terret_launcher_set_rlimit (TerretLauncher   *self,
                                             int               resource,
                                             rlim_t            limit);

G_END_DECLS
