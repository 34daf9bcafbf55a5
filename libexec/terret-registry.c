/* terret-registry.c: choosing a backend, and creating it configured
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-backend-info-private.h"
#include "terret-error.h"
#include "terret-executor.h"

#define TERRET_CONFIG_FILE "terret-exec/executor.conf"
#define TERRET_CONFIG_GROUP "executor"

/*
 * load_config:
 *
 * The first terret-exec/executor.conf under $XDG_CONFIG_HOME, then each of
 * $XDG_CONFIG_DIRS. Files are not merged: a user's file replaces the
 * system's, as an explicit choice should. Returns %NULL without an error
 * when there is no file.
 */
static GKeyFile *
load_config (char   **path,
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

/* --- Choosing a backend ------------------------------------------------- */

/* What a choice of backend is made with: the configuration file (if
 * any) and the caller's own settings, applied after the file's. */
typedef struct
{
  GKeyFile *config;             /* (nullable) */
  const char *config_path;      /* (nullable) */
  const char * const *settings; /* (nullable) KEY=VALUE */
} Choice;

static gboolean
apply_settings (TerretExecutor      *executor,
                const char * const  *settings,
                GError             **error)
{
  for (guint i = 0; settings != NULL && settings[i] != NULL; i++)
    {
      const char *eq = strchr (settings[i], '=');
      g_autofree char *key = NULL;
      g_autoptr(GError) local_error = NULL;

      if (eq == NULL || eq == settings[i])
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                       "setting “%s” is not KEY=VALUE", settings[i]);
          return FALSE;
        }

      key = g_strndup (settings[i], eq - settings[i]);
      if (!terret_executor_set_setting (executor, key, eq + 1, &local_error))
        {
          g_propagate_prefixed_error (error, g_steal_pointer (&local_error),
                                      "setting “%s”: ", settings[i]);
          return FALSE;
        }
    }

  return TRUE;
}

/*
 * create_backend:
 *
 * Instantiates @ext's type, applies its group of the configuration file
 * and then the caller's settings before init, so settings that decide
 * whether the backend can work (the shell's path, a host) are in place,
 * then initializes it.
 *
 * A configuration error is reported as such; a failed init is
 * TERRET_EXEC_ERROR_UNAVAILABLE, which selection by priority treats as
 * "try the next one".
 */
static TerretExecutor *
create_backend (GIOExtension  *ext,
                const Choice  *choice,
                GError       **error)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(GError) local_error = NULL;

  executor = g_object_new (g_io_extension_get_type (ext), NULL);

  if (choice->config != NULL &&
      !terret_executor_apply_key_file (executor, choice->config, choice->config_path, error))
    return NULL;

  if (!apply_settings (executor, choice->settings, error))
    return NULL;

  if (G_IS_INITABLE (executor) &&
      !g_initable_init (G_INITABLE (executor), NULL, &local_error))
    {
      if (local_error->domain == TERRET_EXEC_ERROR)
        g_propagate_prefixed_error (error, g_steal_pointer (&local_error),
                                    "backend “%s”: ", g_io_extension_get_name (ext));
      else
        g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
                     "backend “%s”: %s", g_io_extension_get_name (ext),
                     local_error->message);
      return NULL;
    }

  return g_steal_pointer (&executor);
}

static TerretExecutor *
new_by_name (const char    *name,
             const Choice  *choice,
             GError       **error)
{
  GIOExtensionPoint *ep = _terret_backend_info_get_extension_point ();
  GIOExtension *ext = g_io_extension_point_get_extension_by_name (ep, name);

  if (ext == NULL)
    {
      g_autofree char *names = _terret_backend_info_list_names ();

      g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNKNOWN_BACKEND,
                   "no backend named “%s”; available: %s", name, names);
      return NULL;
    }

  return create_backend (ext, choice, error);
}

/* Says where a failed choice came from; a configuration error already
 * names its file and group, so it is passed on as it is. */
static void
propagate_choice_error (GError     **dest,
                        GError      *src,
                        const char  *where,
                        const char  *name)
{
  if (g_error_matches (src, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG))
    g_propagate_error (dest, src);
  else
    g_propagate_prefixed_error (dest, src, "%s%s: ", where, name);
}

static void
print_help (void)
{
  GIOExtensionPoint *ep = _terret_backend_info_get_extension_point ();

  g_printerr ("Supported values for %s (highest priority first):\n", TERRET_EXECUTOR_ENV);
  for (GList *l = g_io_extension_point_get_extensions (ep); l != NULL; l = l->next)
    g_printerr ("  %-12s priority %d\n",
                g_io_extension_get_name (l->data),
                g_io_extension_get_priority (l->data));
}

/* Rules 1 to 3 of terret_executor_new_default(). */
static TerretExecutor *
new_configured (const Choice  *choice,
                GError       **error)
{
  GIOExtensionPoint *ep = _terret_backend_info_get_extension_point ();
  g_autoptr(GError) local_error = NULL;
  GKeyFile *config = choice->config;
  const char *env = g_getenv (TERRET_EXECUTOR_ENV);

  if (env != NULL && g_str_equal (env, "help"))
    print_help ();
  else if (env != NULL && *env != '\0')
    {
      TerretExecutor *executor = new_by_name (env, choice, &local_error);

      if (executor == NULL)
        propagate_choice_error (error, g_steal_pointer (&local_error),
                                TERRET_EXECUTOR_ENV "=", env);
      return executor;
    }

  if (config != NULL && g_key_file_has_group (config, TERRET_CONFIG_GROUP))
    {
      g_auto(GStrv) keys = g_key_file_get_keys (config, TERRET_CONFIG_GROUP, NULL, NULL);

      for (guint i = 0; keys != NULL && keys[i] != NULL; i++)
        {
          if (!g_str_equal (keys[i], "backend"))
            {
              g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                           "%s: [%s] has no key “%s”; allowed: backend",
                           choice->config_path, TERRET_CONFIG_GROUP, keys[i]);
              return NULL;
            }
        }

      if (g_key_file_has_key (config, TERRET_CONFIG_GROUP, "backend", NULL))
        {
          g_autofree char *name = g_key_file_get_string (config, TERRET_CONFIG_GROUP, "backend", NULL);
          TerretExecutor *executor = new_by_name (name != NULL ? name : "", choice, &local_error);

          if (executor == NULL)
            {
              g_autofree char *where = g_strdup_printf ("%s: [%s] backend=",
                                                        choice->config_path, TERRET_CONFIG_GROUP);

              propagate_choice_error (error, g_steal_pointer (&local_error), where, name);
            }
          return executor;
        }
    }

  for (GList *l = g_io_extension_point_get_extensions (ep); l != NULL; l = l->next)
    {
      TerretExecutor *executor;

      g_clear_error (&local_error);
      executor = create_backend (l->data, choice, &local_error);
      if (executor != NULL)
        return executor;

      if (!g_error_matches (local_error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE))
        {
          g_propagate_error (error, g_steal_pointer (&local_error));
          return NULL;
        }
      g_debug ("%s", local_error->message);
    }

  g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE,
               "no backend can work on this host%s%s",
               local_error != NULL ? "; the last one said: " : "",
               local_error != NULL ? local_error->message : "");
  return NULL;
}

/**
 * terret_executor_new_with_settings:
 * @name: (nullable): a backend's name, or %NULL for the one the
 *   configuration chooses (see [func@Terret.Executor.new_default])
 * @settings: (nullable) (array zero-terminated=1): `KEY=VALUE` settings
 * @error: return location for a #GError
 *
 * Creates an executor with @settings applied, in order, after the
 * configuration file's group for the backend and before the backend
 * initializes, so a setting the backend needs to work at all (the ssh
 * backend's `host`) can come from the caller. This is what the CLI's
 * `--set` does.
 *
 * Returns: (transfer full): a new executor, or %NULL with @error set as
 *   for [func@Terret.Executor.new]; a bad setting is
 *   %TERRET_EXEC_ERROR_INVALID_CONFIG naming it
 *
 * Since: 0.1
 */
TerretExecutor *
terret_executor_new_with_settings (const char          *name,
                                   const char * const  *settings,
                                   GError             **error)
{
  g_autoptr(GKeyFile) config = NULL;
  g_autofree char *config_path = NULL;
  g_autoptr(GError) local_error = NULL;
  Choice choice;

  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  config = load_config (&config_path, &local_error);
  if (local_error != NULL)
    {
      g_propagate_error (error, g_steal_pointer (&local_error));
      return NULL;
    }

  choice.config = config;
  choice.config_path = config_path;
  choice.settings = settings;

  if (name != NULL)
    return new_by_name (name, &choice, error);

  return new_configured (&choice, error);
}

/**
 * terret_executor_new:
 * @name: a backend's name, such as `pty`, `oneshot` or `noshell`
 * @error: return location for a #GError
 *
 * Creates an executor on the backend called @name, with that backend's
 * group of the configuration file applied (see
 * [func@Terret.Executor.new_default] for where the file is looked up).
 *
 * Returns: (transfer full): a new executor, or %NULL with @error set:
 *   %TERRET_EXEC_ERROR_UNKNOWN_BACKEND (the message lists the available
 *   backends), %TERRET_EXEC_ERROR_INVALID_CONFIG, or
 *   %TERRET_EXEC_ERROR_UNAVAILABLE when the backend cannot work here
 *
 * Since: 0.1
 */
TerretExecutor *
terret_executor_new (const char  *name,
                     GError     **error)
{
  g_return_val_if_fail (name != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return terret_executor_new_with_settings (name, NULL, error);
}

/**
 * terret_executor_new_default:
 * @error: return location for a #GError
 *
 * Creates an executor on the backend the configuration chooses:
 *
 * 1. the `TERRET_EXECUTOR` environment variable, when set (the value
 *    `help` lists the backends on stderr and goes on to the next rule);
 * 2. `backend=` in the `[executor]` group of `terret-exec/executor.conf`,
 *    looked up under `$XDG_CONFIG_HOME`, then each of `$XDG_CONFIG_DIRS`
 *    (the first file found is used);
 * 3. the backend with the highest priority that initializes on this host.
 *
 * The chosen backend's own group of that file (`[pty]`, `[oneshot]`, ...)
 * sets its settings. A backend named by rule 1 or 2 that does not exist
 * or cannot work is an error, not a silent fallback.
 *
 * Returns: (transfer full): a new executor, or %NULL with @error set
 *
 * Since: 0.1
 */
TerretExecutor *
terret_executor_new_default (GError **error)
{
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return terret_executor_new_with_settings (NULL, NULL, error);
}

