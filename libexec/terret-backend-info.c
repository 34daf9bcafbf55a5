/* terret-backend-info.c: the installed backends: their modules, loaded
 * once, and what is known of each
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-backend-info.h"
#include "terret-backend-info-private.h"
#include "terret-executor.h"

/*
 * load_directory:
 *
 * Loads every backend module in @dir whose file name was not loaded
 * before. GIO's own directory loader would do, but it keeps the file a
 * module came from to itself; naming each GTypeModule after its file is
 * what lets a host see where a backend was loaded from.
 */
static void
load_directory (const char *dir,
                GHashTable *seen)
{
  g_autoptr(GDir) gdir = g_dir_open (dir, 0, NULL);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  const char *name;

  if (gdir == NULL)
    return;

  while ((name = g_dir_read_name (gdir)) != NULL)
    {
      if (g_str_has_prefix (name, "lib") && g_str_has_suffix (name, "." G_MODULE_SUFFIX))
        g_ptr_array_add (names, g_strdup (name));
    }

  /* Directory order is arbitrary; load order decides which type wins a
   * name clash, so make it stable. */
  g_ptr_array_sort (names, (GCompareFunc)g_strcmp0);

  for (guint i = 0; i < names->len; i++)
    {
      const char *basename = g_ptr_array_index (names, i);
      g_autofree char *path = NULL;
      GIOModule *module;

      if (g_hash_table_contains (seen, basename))
        continue;

      path = g_build_filename (dir, basename, NULL);
      module = g_io_module_new (path);
      g_type_module_set_name (G_TYPE_MODULE (module), path);

      /* Used once and never unused: a GTypeModule cannot unregister its
       * types, and backends' sources call into module code, so a loaded
       * backend stays for the life of the process. */
      if (!g_type_module_use (G_TYPE_MODULE (module)))
        {
          g_warning ("Failed to load backend module %s", path);
          g_object_unref (module);
          continue;
        }

      g_hash_table_add (seen, g_strdup (basename));
    }
}

/* The extension point is process-global, as GIO's own are: modules are
 * loaded once, on first use, so everything after the first call is a
 * lookup. */
static gpointer
load_modules (gpointer data)
{
  g_autoptr(GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  GIOExtensionPoint *ep;
  const char *extra;

  ep = g_io_extension_point_register (TERRET_EXECUTOR_EXTENSION_POINT_NAME);
  g_io_extension_point_set_required_type (ep, TERRET_TYPE_EXECUTOR);

  /* Directories named by the environment come first and a module file
   * name loads once, so an uninstalled build or a plugin under development
   * overrides the installed copy of the same module. */
  extra = g_getenv (TERRET_EXEC_MODULE_PATH_ENV);
  if (extra != NULL && *extra != '\0')
    {
      g_auto(GStrv) dirs = g_strsplit (extra, G_SEARCHPATH_SEPARATOR_S, -1);

      for (guint i = 0; dirs[i] != NULL; i++)
        {
          if (*dirs[i] != '\0')
            load_directory (dirs[i], seen);
        }
    }

  load_directory (TERRET_BACKEND_DIR, seen);

  return ep;
}

GIOExtensionPoint *
_terret_backend_info_get_extension_point (void)
{
  static GOnce once = G_ONCE_INIT;

  return g_once (&once, load_modules, NULL);
}

/* "pty, oneshot, noshell": for error messages that must say what exists. */
char *
_terret_backend_info_list_names (void)
{
  GIOExtensionPoint *ep = _terret_backend_info_get_extension_point ();
  g_autoptr(GString) names = g_string_new (NULL);

  for (GList *l = g_io_extension_point_get_extensions (ep); l != NULL; l = l->next)
    {
      if (names->len > 0)
        g_string_append (names, ", ");
      g_string_append (names, g_io_extension_get_name (l->data));
    }

  if (names->len == 0)
    g_string_append (names, "none (no backend modules were found)");

  return g_string_free (g_steal_pointer (&names), FALSE);
}

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
  GIOExtensionPoint *ep = _terret_backend_info_get_extension_point ();
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

/*
 * _terret_backend_info_list_type_settings:
 *
 * The settings of a backend @type: its writable properties that are not
 * construct-only, which is what set_setting(), `--set` and the
 * configuration file's group can set. NULL-terminated; the pspecs are
 * the class's.
 */
GParamSpec **
_terret_backend_info_list_type_settings (GType  type,
                                         guint *n_settings)
{
  g_autoptr(GTypeClass) klass = g_type_class_ref (type);
  g_autofree GParamSpec **pspecs = NULL;
  GPtrArray *settings = g_ptr_array_new ();
  guint n = 0;

  pspecs = g_object_class_list_properties (G_OBJECT_CLASS (klass), &n);
  for (guint i = 0; i < n; i++)
    if ((pspecs[i]->flags & G_PARAM_WRITABLE) != 0 &&
        (pspecs[i]->flags & G_PARAM_CONSTRUCT_ONLY) == 0)
      g_ptr_array_add (settings, pspecs[i]);

  if (n_settings != NULL)
    *n_settings = settings->len;
  g_ptr_array_add (settings, NULL);
  return (GParamSpec **)g_ptr_array_free (settings, FALSE);
}

/**
 * terret_backend_info_list_settings:
 * @self: a backend info
 * @n_settings: (out) (optional): where to store how many there are
 *
 * Lists the backend's settings without creating an executor: the
 * properties that [method@Terret.Executor.set_setting], `--set` and the
 * backend's group of the configuration file can set, with their types,
 * ranges, defaults and descriptions, as
 * [method@Terret.Executor.list_settings] lists them for an executor.
 *
 * Returns: (array length=n_settings) (transfer container): the settings,
 *   %NULL-terminated
 *
 * Since: 0.2
 */
GParamSpec **
terret_backend_info_list_settings (TerretBackendInfo *self,
                                   guint             *n_settings)
{
  g_return_val_if_fail (TERRET_IS_BACKEND_INFO (self), NULL);

  return _terret_backend_info_list_type_settings (g_io_extension_get_type (self->extension),
                                                  n_settings);
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
