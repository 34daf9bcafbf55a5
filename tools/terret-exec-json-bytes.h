/* terret-exec-json-bytes.h: bytes as a JSON member, text or base64
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

G_BEGIN_DECLS

void cli_json_add_bytes (JsonBuilder  *builder,
                         const char   *name,
                         const guint8 *data,
                         gsize         len);

G_END_DECLS
