/* terret-exec-conformance.c: the behavioural contract, run against any backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * terret-exec-conformance --backend NAME [--set KEY=VALUE]... [GTest options]
 *
 * Runs every check of the contract a backend promises its callers and
 * prints TAP. A check is skipped only when the backend does not declare
 * the capability it needs, never because of the backend's name, so a
 * third-party backend passes the same kit as the built-in ones. A backend
 * that does not run commands at all is checked for refusing every run
 * with a clear error, and nothing else.
 *
 * The settings are written into a private configuration file before the
 * backend is created, so settings that decide whether the backend can
 * work at all (a host, a port) are in place for its initialization, and
 * no user configuration leaks in.
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "terret-exec-conformance-util.h"

static void
remove_config_dir (void)
{
  g_autofree char *file = NULL;
  g_autofree char *sub = NULL;

  if (kit.config_dir == NULL)
    return;
  sub = g_build_filename (kit.config_dir, "terret-exec", NULL);
  file = g_build_filename (sub, "executor.conf", NULL);
  g_unlink (file);
  g_rmdir (sub);
  g_rmdir (kit.config_dir);
  g_clear_pointer (&kit.config_dir, g_free);
}

/* Writes the settings as the backend's group of a private configuration
 * and points the configuration lookup at it alone. */
static gboolean
write_config (GPtrArray  *settings,
              GError    **error)
{
  g_autoptr(GKeyFile) key_file = g_key_file_new ();
  g_autofree char *sub = NULL;
  g_autofree char *path = NULL;

  kit.config_dir = g_dir_make_tmp ("terret-exec-conformance-XXXXXX", error);
  if (kit.config_dir == NULL)
    return FALSE;
  atexit (remove_config_dir);

  for (guint i = 0; i < settings->len; i++)
    {
      const char *setting = g_ptr_array_index (settings, i);
      const char *eq = strchr (setting, '=');
      g_autofree char *key = NULL;

      if (eq == NULL || eq == setting)
        {
          g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                       "--set takes KEY=VALUE, not “%s”", setting);
          return FALSE;
        }
      key = g_strndup (setting, eq - setting);
      g_key_file_set_value (key_file, kit.backend, key, eq + 1);
    }

  sub = g_build_filename (kit.config_dir, "terret-exec", NULL);
  path = g_build_filename (sub, "executor.conf", NULL);
  if (g_mkdir (sub, 0700) != 0)
    {
      g_set_error (error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                   "Could not create %s: %s", sub, g_strerror (errno));
      return FALSE;
    }
  if (!g_key_file_save_to_file (key_file, path, error))
    return FALSE;

  g_setenv ("XDG_CONFIG_HOME", kit.config_dir, TRUE);
  g_setenv ("XDG_CONFIG_DIRS", kit.config_dir, TRUE);
  g_unsetenv (TERRET_EXECUTOR_ENV);

  return TRUE;
}

static void
usage (const char *prog)
{
  g_printerr ("Usage: %s --backend NAME [--set KEY=VALUE]... [GTest options]\n"
              "\n"
              "Runs the terret-exec behavioural contract against the backend NAME and\n"
              "prints TAP. Settings are applied as the [NAME] group of the configuration.\n"
              "Checks the backend cannot meet are skipped by its declared capabilities.\n",
              prog);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GPtrArray) settings = g_ptr_array_new ();
  g_autoptr(GPtrArray) rest = g_ptr_array_new ();
  g_autoptr(TerretExecutor) probe = NULL;
  g_autoptr(GError) error = NULL;
  gboolean have_tap = FALSE;
  int rest_argc;
  char **rest_argv;
  int ret;

  /* Our own options come out before GTest sees the rest. */
  g_ptr_array_add (rest, argv[0]);
  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];

      if (g_str_equal (arg, "--backend") || g_str_equal (arg, "--set"))
        {
          if (i + 1 >= argc)
            {
              usage (argv[0]);
              return 2;
            }
          if (g_str_equal (arg, "--backend"))
            kit.backend = argv[++i];
          else
            g_ptr_array_add (settings, argv[++i]);
        }
      else if (g_str_has_prefix (arg, "--backend="))
        kit.backend = (char *)arg + strlen ("--backend=");
      else if (g_str_has_prefix (arg, "--set="))
        g_ptr_array_add (settings, (char *)arg + strlen ("--set="));
      else if (g_str_equal (arg, "--help") || g_str_equal (arg, "-h"))
        {
          usage (argv[0]);
          return 0;
        }
      else
        {
          if (g_str_equal (arg, "--tap"))
            have_tap = TRUE;
          g_ptr_array_add (rest, argv[i]);
        }
    }
  if (!have_tap)
    g_ptr_array_add (rest, (char *)"--tap");
  g_ptr_array_add (rest, NULL);

  if (kit.backend == NULL || *kit.backend == '\0')
    {
      usage (argv[0]);
      return 2;
    }

  if (!write_config (settings, &error))
    {
      g_printerr ("%s: %s\n", argv[0], error->message);
      return 2;
    }

  rest_argc = rest->len - 1;
  rest_argv = (char **)rest->pdata;
  g_test_init (&rest_argc, &rest_argv, NULL);

  probe = terret_executor_new (kit.backend, &error);
  if (probe == NULL)
    {
      printf ("Bail out! cannot create the backend “%s”: %s\n", kit.backend, error->message);
      return 1;
    }
  kit.caps = terret_executor_get_capabilities (probe);
  g_clear_object (&probe);
  g_test_message ("backend %s, capabilities 0x%x", kit.backend, (guint)kit.caps);

  conformance_add_run_checks ();
  conformance_add_session_checks ();
  conformance_add_agent_checks ();

  ret = g_test_run ();

  return ret;
}
