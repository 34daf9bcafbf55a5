/* terret-container-engines.h: the engine a container executor drives
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <terret-exec.h>

#include "terret-container-config.h"

G_BEGIN_DECLS

#define TERRET_TYPE_CONTAINER_SESSION (terret_container_session_get_type ())
G_DECLARE_FINAL_TYPE (TerretContainerSession, terret_container_session, TERRET, CONTAINER_SESSION,
                      TerretSessionExecutor)

#define TERRET_TYPE_CONTAINER_COMMAND (terret_container_command_get_type ())
G_DECLARE_FINAL_TYPE (TerretContainerCommand, terret_container_command, TERRET, CONTAINER_COMMAND,
                      TerretCommandExecutor)

void            terret_container_engines_register (GTypeModule           *module);
TerretExecutor *terret_container_engine_new       (TerretContainerConfig *config,
                                                   gboolean               session);

G_END_DECLS
