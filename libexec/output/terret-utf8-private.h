/* terret-utf8-private.h: where a cut may fall in UTF-8 text
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

gsize _terret_utf8_whole_prefix (const guint8 *data,
                                 gsize         len);
gsize _terret_utf8_whole_suffix (const guint8 *data,
                                 gsize         len,
                                 gsize         start);

G_END_DECLS
