/* terret-stopped-process.h: one process a session's close had to stop
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <glib-object.h>

#include "terret-types.h"

G_BEGIN_DECLS

#define TERRET_TYPE_STOPPED_PROCESS (terret_stopped_process_get_type ())

TERRET_AVAILABLE_IN_0_3
G_DECLARE_FINAL_TYPE (TerretStoppedProcess, terret_stopped_process, TERRET, STOPPED_PROCESS, GObject)

TERRET_AVAILABLE_IN_0_3
TerretStoppedProcess *terret_stopped_process_new          (GPid               pid,
                                                           const char        *command,
                                                           TerretStopSignal   ended_by);
TERRET_AVAILABLE_IN_0_3
GPid                  terret_stopped_process_get_pid      (TerretStoppedProcess *self);
TERRET_AVAILABLE_IN_0_3
const char           *terret_stopped_process_get_command  (TerretStoppedProcess *self);
TERRET_AVAILABLE_IN_0_3
TerretStopSignal      terret_stopped_process_get_ended_by (TerretStoppedProcess *self);

G_END_DECLS
