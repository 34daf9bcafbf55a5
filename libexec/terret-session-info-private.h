/* terret-session-info-private.h: what both engines do with their lists
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

#include "terret-session-info.h"

G_BEGIN_DECLS

void _terret_session_infos_return (GTask     *task,
                                   GPtrArray *infos);

G_END_DECLS
