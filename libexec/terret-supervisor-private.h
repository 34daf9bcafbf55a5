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
TerretSupervisor *_terret_supervisor_new_wrapped  (const char * const *wrapper);
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

/* An executor's launchers, one per sandbox policy: runs with the same
 * policy share one, a changed setting starts another for what starts
 * next. */
typedef struct
{
  GMutex mutex;
  GHashTable *by_wrapper;       /* (owned) joined wrapper or "" -> supervisor */
} TerretSupervisorPool;

void              _terret_supervisor_pool_init    (TerretSupervisorPool *pool);
void              _terret_supervisor_pool_clear   (TerretSupervisorPool *pool);
TerretSupervisor *_terret_supervisor_pool_get     (TerretSupervisorPool *pool,
                                                   const char * const   *wrapper);

G_END_DECLS
