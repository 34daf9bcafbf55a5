/* terret-launcher.h: how a backend starts a process
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <glib-object.h>

#include "terret-process.h"
#include "terret-types.h"

G_BEGIN_DECLS

#define TERRET_TYPE_LAUNCHER (terret_launcher_get_type ())

TERRET_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (TerretLauncher, terret_launcher, TERRET, LAUNCHER, GObject)

TERRET_AVAILABLE_IN_0_2
TerretLauncher      *terret_launcher_new           (void);
TERRET_AVAILABLE_IN_0_2
const char * const  *terret_launcher_get_environ   (TerretLauncher      *self);
TERRET_AVAILABLE_IN_0_2
void                 terret_launcher_set_environ   (TerretLauncher      *self,
                                                    const char * const  *envp);
TERRET_AVAILABLE_IN_0_2
const char          *terret_launcher_getenv        (TerretLauncher      *self,
                                                    const char          *variable);
TERRET_AVAILABLE_IN_0_2
void                 terret_launcher_setenv        (TerretLauncher      *self,
                                                    const char          *variable,
                                                    const char          *value);
TERRET_AVAILABLE_IN_0_2
void                 terret_launcher_unsetenv      (TerretLauncher      *self,
                                                    const char          *variable);
TERRET_AVAILABLE_IN_0_2
const char          *terret_launcher_get_cwd       (TerretLauncher      *self);
TERRET_AVAILABLE_IN_0_2
void                 terret_launcher_set_cwd       (TerretLauncher      *self,
                                                    const char          *cwd);
TERRET_AVAILABLE_IN_0_2
void                 terret_launcher_take_fd       (TerretLauncher      *self,
                                                    int                  source_fd,
                                                    int                  target_fd);
TERRET_AVAILABLE_IN_0_2
void                 terret_launcher_take_terminal (TerretLauncher      *self,
                                                    int                  terminal_fd);
TERRET_AVAILABLE_IN_0_2
guint64              terret_launcher_get_limit     (TerretLauncher      *self,
                                                    TerretLimits         limit);
TERRET_AVAILABLE_IN_0_2
void                 terret_launcher_set_limit     (TerretLauncher      *self,
                                                    TerretLimits         limit,
                                                    guint64              value);
TERRET_AVAILABLE_IN_0_2
TerretProcess       *terret_launcher_spawn         (TerretLauncher      *self,
                                                    const char * const  *argv,
                                                    GError             **error);

G_END_DECLS
