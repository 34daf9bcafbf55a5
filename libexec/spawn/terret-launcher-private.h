/* terret-launcher-private.h: launcher settings only the library sets
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "terret-launcher.h"
#include "terret-launcher-link-private.h"

G_BEGIN_DECLS

TerretLauncher *_terret_launcher_new_for (TerretLauncherLink *launcher_link);
gboolean        _terret_launcher_is_far  (TerretLauncher     *self);
char           *_terret_launcher_describe_containment (gboolean sandboxed);
void            _terret_launcher_set_stop_grace (TerretLauncher *self,
                                                 double          seconds);

G_END_DECLS
