/* terret-container-config.h: what reaches a container, and how
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <terret-exec.h>

G_BEGIN_DECLS

typedef enum
{
  TERRET_CONTAINER_PODMAN,
  TERRET_CONTAINER_DOCKER,
  TERRET_CONTAINER_KUBERNETES,
} TerretContainerEngine;

/* The backend's own settings, shared by the executor and its engine
 * object; guarded, since runs start on any thread. */
typedef struct _TerretContainerConfig TerretContainerConfig;

/* What of the engine's settings a far side depends on. */
typedef struct
{
  TerretNetwork network;
  guint64 limit_memory;
  guint64 limit_processes;
} TerretContainerPolicy;

TerretContainerConfig *terret_container_config_new     (TerretContainerEngine   engine);
TerretContainerConfig *terret_container_config_ref     (TerretContainerConfig  *self);
void                   terret_container_config_unref   (TerretContainerConfig  *self);
TerretContainerEngine  terret_container_config_get_engine (TerretContainerConfig *self);
const char            *terret_container_config_get_engine_name (TerretContainerConfig *self);
gboolean               terret_container_config_is_disposable (TerretContainerConfig *self);

/* The settings by property name: TRUE when @name is one of them. */
gboolean terret_container_config_get (TerretContainerConfig *self,
                                      const char            *name,
                                      GValue                *value);
gboolean terret_container_config_set (TerretContainerConfig *self,
                                      const char            *name,
                                      const GValue          *value,
                                      gboolean              *changed);
void     terret_container_config_install_properties (GObjectClass          *klass,
                                                     TerretContainerEngine  engine,
                                                     guint                  first_id);

gboolean       terret_container_config_check     (TerretContainerConfig        *self,
                                                  GError                      **error);
TerretFarSide *terret_container_config_far_side  (TerretContainerConfig        *self,
                                                  const TerretContainerPolicy  *policy,
                                                  GError                      **error);
char          *terret_container_config_describe  (TerretContainerConfig        *self,
                                                  gboolean                      session);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TerretContainerConfig, terret_container_config_unref)

G_END_DECLS
