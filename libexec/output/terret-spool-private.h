/* terret-spool-private.h: every byte of a run's output, in a file
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* A file of one stream's whole output (keep-full-output), created 0600
 * in a private directory and written through a small buffer by the run
 * that reads the stream. Its owner removes it when the session closes,
 * unless the caller took it (terret_result_steal_full_output()). Taking
 * and removing are safe from any thread; writing is the run's. */
typedef struct _TerretSpool TerretSpool;

TerretSpool *_terret_spool_new          (const char   *dir,
                                         const char   *suffix,
                                         guint64       max,
                                         GError      **error);
TerretSpool *_terret_spool_ref          (TerretSpool  *spool);
void         _terret_spool_unref        (TerretSpool  *spool);
void         _terret_spool_write        (TerretSpool  *spool,
                                         const guint8 *data,
                                         gsize         len);
void         _terret_spool_flush        (TerretSpool  *spool);
void         _terret_spool_close        (TerretSpool  *spool);
void         _terret_spool_truncate     (TerretSpool  *spool,
                                         guint64       length);
const char  *_terret_spool_get_path     (TerretSpool  *spool);
guint64      _terret_spool_get_seen     (TerretSpool  *spool);
char        *_terret_spool_describe     (TerretSpool  *spool,
                                         const char   *stream_name);
char        *_terret_spool_take         (TerretSpool  *spool);
void         _terret_spool_remove       (TerretSpool  *spool);
char        *_terret_spool_default_dir  (void);

/* The spools of one session, removed together when it closes. */
typedef struct
{
  GMutex mutex;
  GPtrArray *spools;            /* (owned) (element-type TerretSpool) */
} TerretSpoolList;

void         _terret_spool_list_init       (TerretSpoolList *list);
void         _terret_spool_list_clear      (TerretSpoolList *list);
void         _terret_spool_list_add        (TerretSpoolList *list,
                                            TerretSpool     *spool);
void         _terret_spool_list_remove_all (TerretSpoolList *list);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TerretSpool, _terret_spool_unref)

G_END_DECLS
