/* terret-launcher-link-private.h: the library's side of one launcher process
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

#include "terret-far-side.h"

G_BEGIN_DECLS

typedef struct _TerretLauncherLink TerretLauncherLink;

TerretLauncherLink *_terret_launcher_link_new          (void);
TerretLauncherLink *_terret_launcher_link_new_wrapped  (const char * const *wrapper,
                                                       GBytes             *filter);
TerretLauncherLink *_terret_launcher_link_new_far      (TerretFarSide      *far);
gboolean          _terret_launcher_link_is_far       (TerretLauncherLink  *self);
TerretLauncherLink *_terret_launcher_link_ref          (TerretLauncherLink  *self);
void              _terret_launcher_link_unref        (TerretLauncherLink  *self);
TerretLauncherLink *_terret_launcher_link_get_default  (void);
int               _terret_launcher_link_spawn        (TerretLauncherLink  *self,
                                                   int                payload_fd,
                                                   int                unit_fd,
                                                   const int         *child_fds,
                                                   guint              n_child_fds,
                                                   GError           **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TerretLauncherLink, _terret_launcher_link_unref)

/* An executor's launchers, one per sandbox policy: runs with the same
 * policy share one, a changed setting starts another for what starts
 * next. */
typedef struct
{
  GMutex mutex;
  GHashTable *by_wrapper;       /* (owned) sandbox key or "" -> link */
} TerretLauncherLinkPool;

void              _terret_launcher_link_pool_init    (TerretLauncherLinkPool *pool);
void              _terret_launcher_link_pool_clear   (TerretLauncherLinkPool *pool);
TerretLauncherLink *_terret_launcher_link_pool_get     (TerretLauncherLinkPool *pool,
                                                       const char             *key,
                                                       const char * const     *wrapper,
                                                       GBytes                 *filter);
TerretLauncherLink *_terret_launcher_link_pool_get_far (TerretLauncherLinkPool *pool,
                                                     TerretFarSide          *far);

G_END_DECLS
