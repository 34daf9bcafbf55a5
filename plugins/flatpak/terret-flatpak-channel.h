/* terret-flatpak-channel.h: a session's bash on the host, on a terminal made here
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <terret-exec.h>

G_BEGIN_DECLS

#define TERRET_TYPE_FLATPAK_CHANNEL (terret_flatpak_channel_get_type ())
G_DECLARE_FINAL_TYPE (TerretFlatpakChannel, terret_flatpak_channel, TERRET, FLATPAK_CHANNEL,
                      TerretShellChannel)

void                terret_flatpak_channel_register (GTypeModule *module);
TerretShellChannel *terret_flatpak_channel_new      (void);

G_END_DECLS
