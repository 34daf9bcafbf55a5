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

/* Whether commands run under the launcher in an existing container. */
typedef enum
{
  TERRET_CONTAINER_LAUNCHER_AUTO,
  TERRET_CONTAINER_LAUNCHER_REQUIRED,
  TERRET_CONTAINER_LAUNCHER_NONE,
} TerretContainerLauncher;

/* The backend's own settings, shared by the executor and its engine
 * object; guarded, since runs start on any thread. */
typedef struct _TerretContainerConfig TerretContainerConfig;

/* What of the engine's settings a far side depends on. */
typedef struct
{
  TerretNetwork network;
  guint64 limit_memory;
  guint64 limit_processes;
  const char *shell;            /* the shell setting, for the fallback's probe */
} TerretContainerPolicy;

void                   terret_container_config_register (GTypeModule *module);

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

/* Plain bash through the engine's exec, without the launcher: with
 * launcher=none, or once launcher=auto fell back. */
guint     terret_container_config_get_connect_timeout (TerretContainerConfig *self);
gboolean  terret_container_config_is_direct      (TerretContainerConfig  *self);
gboolean  terret_container_config_fall_back      (TerretContainerConfig  *self,
                                                  const char             *why);
char     *terret_container_config_take_notice    (TerretContainerConfig  *self);
gboolean  terret_container_config_check_limits   (TerretContainerConfig  *self,
                                                  TerretLauncher         *launcher,
                                                  GError                **error);
char    **terret_container_config_direct_argv    (TerretContainerConfig  *self,
                                                  gboolean                terminal,
                                                  const char * const     *envp,
                                                  const char             *cwd,
                                                  const char * const     *command);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TerretContainerConfig, terret_container_config_unref)

G_END_DECLS
