/* terret-input-wait-private.h: whether a command waits for input on its terminal
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

#include "terret-launcher-input.h"
#include "terret-result-input-private.h"
#include "terret-types.h"

G_BEGIN_DECLS

/* The longest prompt a result carries, in bytes. */
#define TERRET_INPUT_PROMPT_MAX 256

/* A run's watch for waits: the last line it printed, when it last
 * looked, and what it found. */
typedef struct _TerretInputWatch TerretInputWatch;

TerretInputWatch      *_terret_input_watch_new     (void);
void                   _terret_input_watch_free    (TerretInputWatch *watch);
void                   _terret_input_watch_output  (TerretInputWatch *watch,
                                                    const guint8     *data,
                                                    gsize             len);
void                   _terret_input_watch_input   (TerretInputWatch *watch);
gboolean               _terret_input_watch_look    (TerretInputWatch *watch,
                                                    int               terminal,
                                                    gint64            run_start);
gboolean               _terret_input_watch_note    (TerretInputWatch *watch,
                                                    TerretWireInput   found,
                                                    unsigned          flags,
                                                    gint64            run_start);
double                 _terret_input_watch_settle  (TerretInputWatch *watch);
gboolean               _terret_input_watch_is_news (TerretInputWatch *watch);
void                   _terret_input_watch_told    (TerretInputWatch *watch);
guint                  _terret_input_watch_count_answer (TerretInputWatch *watch);
gboolean               _terret_input_watch_stop         (TerretInputWatch *watch);
gboolean               _terret_input_watch_is_stopped   (TerretInputWatch *watch);
gboolean               _terret_input_watch_is_stopping  (TerretInputWatch *watch);
void                   _terret_input_watch_continue     (TerretInputWatch *watch);
const TerretInputWait *_terret_input_watch_get     (TerretInputWatch *watch);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TerretInputWatch, _terret_input_watch_free)

G_END_DECLS
