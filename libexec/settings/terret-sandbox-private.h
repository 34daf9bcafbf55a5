/* terret-sandbox-private.h: the sandbox and environment policy settings
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "terret-common-settings-private.h"
#include "terret-launcher-link-private.h"

G_BEGIN_DECLS

char               **_terret_sandbox_filter_environ (const TerretSettings    *settings,
                                                    char                   **envp);
char                *_terret_sandbox_describe       (const TerretSettings    *settings);
char               **_terret_sandbox_build_wrapper  (const TerretSettings    *settings,
                                                    GBytes                 **filter,
                                                    char                   **key,
                                                    GError                 **error);
gboolean             _terret_sandbox_check_far      (const TerretSettings    *settings,
                                                    GError                 **error);
TerretLauncherLink  *_terret_sandbox_get_link       (const TerretSettings    *settings,
                                                    TerretLauncherLinkPool  *pool,
                                                    TerretFarSide           *far,
                                                    GError                 **error);

G_END_DECLS
