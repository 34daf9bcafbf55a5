/* terret-supervisor-private.h: the library's side of one launcher process
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The environment variable naming the launcher program, for uninstalled
 * trees (meson devenv and the tests set it); unset, the installed one. */
#define TERRET_LAUNCHER_ENV "TERRET_LAUNCHER"

typedef struct _TerretSupervisor TerretSupervisor;

TerretSupervisor *_terret_supervisor_new          (void);
TerretSupervisor *_terret_supervisor_ref          (TerretSupervisor  *self);
void              _terret_supervisor_unref        (TerretSupervisor  *self);
TerretSupervisor *_terret_supervisor_get_default  (void);
const char       *_terret_supervisor_get_program  (void);
int               _terret_supervisor_spawn        (TerretSupervisor  *self,
                                                   int                payload_fd,
                                                   int                unit_fd,
                                                   const int         *child_fds,
                                                   guint              n_child_fds,
                                                   GError           **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TerretSupervisor, _terret_supervisor_unref)

G_END_DECLS
