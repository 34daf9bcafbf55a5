/* terret-flatpak-host.h: a Flatpak app's host, through the session helper
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <terret-exec.h>

G_BEGIN_DECLS

typedef struct _TerretFlatpakHost TerretFlatpakHost;

TerretFlatpakHost *terret_flatpak_host_new       (void);
TerretFlatpakHost *terret_flatpak_host_ref       (TerretFlatpakHost  *self);
void               terret_flatpak_host_unref     (TerretFlatpakHost  *self);
gboolean           terret_flatpak_host_check     (TerretFlatpakHost  *self,
                                                  GCancellable       *cancellable,
                                                  GError            **error);
TerretFarSide     *terret_flatpak_host_far_side  (TerretFlatpakHost  *self,
                                                  GError            **error);
char              *terret_flatpak_host_describe  (TerretFlatpakHost  *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TerretFlatpakHost, terret_flatpak_host_unref)

G_END_DECLS
