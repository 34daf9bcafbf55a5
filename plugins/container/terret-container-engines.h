/* terret-container-engines.h: what a container changes in the SDK's engine
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <terret-exec.h>

#include "terret-both-modes.h"
#include "terret-container-config.h"

G_BEGIN_DECLS

/* One backend (podman, docker, kubernetes): an engine in the mode its
 * mode setting names, with the container's settings. */
typedef struct
{
  TerretEngine parent_instance;

  TerretContainerConfig *config; /* (owned) */
  TerretBothModes both;
} TerretContainerExecutor;

void     terret_container_engine_class_init      (TerretEngineClass  *klass);
gboolean terret_container_engine_check_available (TerretEngine       *engine,
                                                  GCancellable       *cancellable,
                                                  GError            **error);

G_END_DECLS
