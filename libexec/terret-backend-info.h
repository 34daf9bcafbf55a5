/* terret-backend-info.h: what the registry knows of one backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <glib-object.h>

#include "terret-version-macros.h"

G_BEGIN_DECLS

#define TERRET_TYPE_BACKEND_INFO (terret_backend_info_get_type ())

TERRET_AVAILABLE_IN_0_1
G_DECLARE_FINAL_TYPE (TerretBackendInfo, terret_backend_info, TERRET, BACKEND_INFO, GObject)

TERRET_AVAILABLE_IN_0_1
GList       *terret_backend_info_list           (void);
TERRET_AVAILABLE_IN_0_1
const char  *terret_backend_info_get_name       (TerretBackendInfo  *self);
TERRET_AVAILABLE_IN_0_1
int          terret_backend_info_get_priority   (TerretBackendInfo  *self);
TERRET_AVAILABLE_IN_0_1
GType        terret_backend_info_get_backend_type (TerretBackendInfo *self);
TERRET_AVAILABLE_IN_0_1
const char  *terret_backend_info_get_module_path (TerretBackendInfo *self);
TERRET_AVAILABLE_IN_0_1
gboolean     terret_backend_info_check_supported (TerretBackendInfo  *self,
                                                  GError            **error);
TERRET_AVAILABLE_IN_0_2
GParamSpec **terret_backend_info_list_settings   (TerretBackendInfo  *self,
                                                  guint              *n_settings);

G_END_DECLS
