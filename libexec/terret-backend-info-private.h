/* terret-backend-info-private.h: the installed backends, inside the library
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

GIOExtensionPoint *_terret_backend_info_get_extension_point (void);
char              *_terret_backend_info_list_names          (void);
GParamSpec       **_terret_backend_info_list_type_settings  (GType       type,
                                                             guint      *n_settings);

G_END_DECLS
