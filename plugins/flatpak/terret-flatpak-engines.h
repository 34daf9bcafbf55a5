/* terret-flatpak-engines.h: the engines a flatpak-host executor drives
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <terret-exec.h>

#include "terret-flatpak-host.h"

G_BEGIN_DECLS

#define TERRET_TYPE_FLATPAK_SESSION (terret_flatpak_session_get_type ())
G_DECLARE_FINAL_TYPE (TerretFlatpakSession, terret_flatpak_session, TERRET, FLATPAK_SESSION,
                      TerretSessionExecutor)

#define TERRET_TYPE_FLATPAK_COMMAND (terret_flatpak_command_get_type ())
G_DECLARE_FINAL_TYPE (TerretFlatpakCommand, terret_flatpak_command, TERRET, FLATPAK_COMMAND,
                      TerretCommandExecutor)

void            terret_flatpak_engines_register (GTypeModule       *module);
TerretExecutor *terret_flatpak_engine_new       (TerretFlatpakHost *host,
                                                 gboolean           session);

G_END_DECLS
