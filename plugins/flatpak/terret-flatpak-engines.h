/* terret-flatpak-engines.h: what the host changes in the SDK's engine
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <terret-exec.h>

#include "terret-both-modes.h"
#include "terret-flatpak-host.h"

G_BEGIN_DECLS

/* The flatpak-host backend: an engine in the mode its mode setting
 * names, with the app's host as its far side. */
typedef struct
{
  TerretEngine parent_instance;

  TerretFlatpakHost *host;      /* (owned) */
  TerretBothModes both;
} TerretFlatpakExecutor;

void     terret_flatpak_engine_class_init      (TerretEngineClass  *klass);
gboolean terret_flatpak_engine_check_available (TerretEngine       *engine,
                                                GCancellable       *cancellable,
                                                GError            **error);

G_END_DECLS
