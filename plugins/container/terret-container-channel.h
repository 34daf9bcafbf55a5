/* terret-container-channel.h: a shell on a terminal made in the container
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <terret-exec.h>

#include "terret-container-config.h"

G_BEGIN_DECLS

#define TERRET_TYPE_CONTAINER_CHANNEL (terret_container_channel_get_type ())
G_DECLARE_FINAL_TYPE (TerretContainerChannel, terret_container_channel, TERRET, CONTAINER_CHANNEL,
                      TerretShellChannel)

void                terret_container_channel_register (GTypeModule *module);
TerretShellChannel *terret_container_channel_new      (TerretContainerConfig *config);

G_END_DECLS
