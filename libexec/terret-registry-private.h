/* terret-registry-private.h: backend modules and their selection
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <gio/gio.h>

#include "terret-executor.h"

G_BEGIN_DECLS

#define TERRET_CONFIG_FILE "terret-exec/executor.conf"
#define TERRET_CONFIG_GROUP "executor"

GIOExtensionPoint *_terret_registry_get_extension_point (void);
GIOExtension      *_terret_registry_lookup_type         (GType          type);
char              *_terret_registry_list_names          (void);
GKeyFile          *_terret_registry_load_config         (char         **path,
                                                         GError       **error);
const char        *_terret_registry_backend_name        (TerretExecutor *self);

G_END_DECLS
