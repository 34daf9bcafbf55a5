/* terret-settings-private.h: backend settings from strings
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

gboolean _terret_settings_value_from_string (GParamSpec   *pspec,
                                             const char   *text,
                                             GValue       *value,
                                             GError      **error);
char    *_terret_settings_describe_type     (GParamSpec   *pspec);

G_END_DECLS
