/* terret-backend-info.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-backend-info.h"
#include "terret-error.h"
#include "terret-executor.h"
#include "terret-registry-private.h"

/**
 * TerretBackendInfo:
 *
 * What the registry knows of one installed backend: its name, priority,
 * type and the module file it came from. Listing backends loads their
 * modules but creates no executor;
 * [method@Terret.BackendInfo.check_supported] does, briefly, to ask the
 * backend whether it can work on this host.
 *
 * Since: 0.1
 */
struct _TerretBackendInfo
{
  GObject parent_instance;

  GIOExtension *extension;   /* owned by the extension point, which lives forever */
};

G_DEFINE_FINAL_TYPE (TerretBackendInfo, terret_backend_info, G_TYPE_OBJECT)

static void
terret_backend_info_class_init (TerretBackendInfoClass *klass)
{
}

static void
terret_backend_info_init (TerretBackendInfo *self)
{
}

/**
 * terret_backend_info_list:
 *
 * Loads the backend modules (once per process) and lists them.
 *
 * Returns: (transfer full) (element-type TerretBackendInfo): the
 *   backends, highest priority first
 *
 * Since: 0.1
 */
GList *
terret_backend_info_list (void)
{
  GIOExtensionPoint *ep = _terret_registry_get_extension_point ();
  GList *infos = NULL;

  for (GList *l = g_io_extension_point_get_extensions (ep); l != NULL; l = l->next)
    {
      TerretBackendInfo *info = g_object_new (TERRET_TYPE_BACKEND_INFO, NULL);

      info->extension = l->data;
      infos = g_list_prepend (infos, info);
    }

  return g_list_reverse (infos);
}

/**
 * terret_backend_info_get_name:
 * @self: a backend info
 *
 * Gets the name the backend registered under, the one
 * [func@Terret.Executor.new], `TERRET_EXECUTOR` and `backend=` take.
 *
 * Returns: the backend's name
 *
 * Since: 0.1
 */
const char *
terret_backend_info_get_name (TerretBackendInfo *self)
{
  g_return_val_if_fail (TERRET_IS_BACKEND_INFO (self), NULL);

  return g_io_extension_get_name (self->extension);
}

/**
 * terret_backend_info_get_priority:
 * @self: a backend info
 *
 * Gets the backend's priority.
 *
 * Returns: the backend's priority; selection prefers higher ones
 *
 * Since: 0.1
 */
int
terret_backend_info_get_priority (TerretBackendInfo *self)
{
  g_return_val_if_fail (TERRET_IS_BACKEND_INFO (self), 0);

  return g_io_extension_get_priority (self->extension);
}

/**
 * terret_backend_info_get_backend_type:
 * @self: a backend info
 *
 * The backend's type; its writable properties are its settings.
 *
 * Returns: the #GType implementing [iface@Terret.Executor]
 *
 * Since: 0.1
 */
GType
terret_backend_info_get_backend_type (TerretBackendInfo *self)
{
  g_return_val_if_fail (TERRET_IS_BACKEND_INFO (self), G_TYPE_INVALID);

  return g_io_extension_get_type (self->extension);
}

/**
 * terret_backend_info_get_module_path:
 * @self: a backend info
 *
 * Gets the file the backend's module was loaded from.
 *
 * Returns: (nullable) (type filename): the module file the backend was
 *   loaded from, or %NULL when it was not loaded from a module
 *
 * Since: 0.1
 */
const char *
terret_backend_info_get_module_path (TerretBackendInfo *self)
{
  GTypePlugin *plugin;

  g_return_val_if_fail (TERRET_IS_BACKEND_INFO (self), NULL);

  /* GIO names each module's GTypeModule after its file. */
  plugin = g_type_get_plugin (g_io_extension_get_type (self->extension));
  if (plugin == NULL || !G_IS_TYPE_MODULE (plugin))
    return NULL;

  return G_TYPE_MODULE (plugin)->name;
}

/**
 * terret_backend_info_check_supported:
 * @self: a backend info
 * @error: return location for a #GError
 *
 * Asks the backend whether it can work on this host, by creating and
 * initializing an executor that is dropped at once.
 *
 * Returns: %TRUE when it can; %FALSE with @error saying why not
 *
 * Since: 0.1
 */
gboolean
terret_backend_info_check_supported (TerretBackendInfo  *self,
                                     GError            **error)
{
  g_autoptr(GObject) executor = NULL;

  g_return_val_if_fail (TERRET_IS_BACKEND_INFO (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  executor = g_object_new (g_io_extension_get_type (self->extension), NULL);
  if (G_IS_INITABLE (executor))
    return g_initable_init (G_INITABLE (executor), NULL, error);

  return TRUE;
}
