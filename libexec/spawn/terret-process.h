/* terret-process.h: a process started through a launcher
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <glib-object.h>

#include "terret-version-macros.h"

G_BEGIN_DECLS

#define TERRET_TYPE_PROCESS (terret_process_get_type ())

TERRET_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (TerretProcess, terret_process, TERRET, PROCESS, GObject)

TERRET_AVAILABLE_IN_0_2
GPid      terret_process_get_pid            (TerretProcess  *self);
TERRET_AVAILABLE_IN_0_2
gboolean  terret_process_get_exited         (TerretProcess  *self,
                                             int            *wait_status);
TERRET_AVAILABLE_IN_0_2
gboolean  terret_process_check_exited       (TerretProcess  *self);
TERRET_AVAILABLE_IN_0_2
gboolean  terret_process_wait_exited        (TerretProcess  *self,
                                             int             timeout_msec);
TERRET_AVAILABLE_IN_0_2
GSource  *terret_process_create_exit_source (TerretProcess  *self);
TERRET_AVAILABLE_IN_0_2
void      terret_process_signal_group       (TerretProcess  *self,
                                             int             signum);
TERRET_AVAILABLE_IN_0_2
void      terret_process_kill               (TerretProcess  *self);
TERRET_AVAILABLE_IN_0_2
void      terret_process_terminate          (TerretProcess  *self);

G_END_DECLS
