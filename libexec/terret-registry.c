/* terret-registry.c: backend modules and the configuration that picks one
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "terret-error.h"
#include "terret-registry-private.h"

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
_terret_registry_get_extension_point (void)
{
  static GOnce once = G_ONCE_INIT;

  return g_once (&once, load_modules, NULL);
}

GIOExtension *
_terret_registry_lookup_type (GType type)
{
  GIOExtensionPoint *ep = _terret_registry_get_extension_point ();

  for (GList *l = g_io_extension_point_get_extensions (ep); l != NULL; l = l->next)
    {
      if (g_io_extension_get_type (l->data) == type)
        return l->data;
    }

  return NULL;
}

/* "pty, oneshot, noshell": for error messages that must say what exists. */
char *
_terret_registry_list_names (void)
{
  GIOExtensionPoint *ep = _terret_registry_get_extension_point ();
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

/*
 * _terret_registry_load_config:
 *
 * The first terret-exec/executor.conf under $XDG_CONFIG_HOME, then each of
 * $XDG_CONFIG_DIRS. Files are not merged: a user's file replaces the
 * system's, as an explicit choice should. Returns %NULL without an error
 * when there is no file.
 */
GKeyFile *
_terret_registry_load_config (char   **path,
                              GError **error)
{
  g_autoptr(GKeyFile) key_file = g_key_file_new ();
  g_autoptr(GPtrArray) dirs = g_ptr_array_new ();
  g_autoptr(GError) local_error = NULL;
  const char * const *system_dirs = g_get_system_config_dirs ();
  g_autofree char *found = NULL;

  g_ptr_array_add (dirs, (gpointer)g_get_user_config_dir ());
  for (guint i = 0; system_dirs[i] != NULL; i++)
    g_ptr_array_add (dirs, (gpointer)system_dirs[i]);
  g_ptr_array_add (dirs, NULL);

  if (!g_key_file_load_from_dirs (key_file, TERRET_CONFIG_FILE,
                                  (const char **)dirs->pdata, &found,
                                  G_KEY_FILE_NONE, &local_error))
    {
      g_autofree char *where = NULL;

      if (g_error_matches (local_error, G_KEY_FILE_ERROR, G_KEY_FILE_ERROR_NOT_FOUND))
        return NULL;

      /* load_from_dirs names no file when parsing fails; find it again so
       * the operator is told which one to fix. */
      for (guint i = 0; where == NULL && i + 1 < dirs->len; i++)
        {
          g_autofree char *candidate = g_build_filename (dirs->pdata[i], TERRET_CONFIG_FILE, NULL);

          if (g_file_test (candidate, G_FILE_TEST_EXISTS))
            where = g_steal_pointer (&candidate);
        }

      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                   "%s: %s", where != NULL ? where : TERRET_CONFIG_FILE,
                   local_error->message);
      return NULL;
    }

  if (path != NULL)
    *path = g_steal_pointer (&found);

  return g_steal_pointer (&key_file);
}
