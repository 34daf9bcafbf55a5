/* test-registry.c: backend modules, selection order and settings
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <glib/gstdio.h>

#include "terret-test-utils.h"

/* Set by meson: whether the pty and oneshot modules were built. */
#ifndef TERRET_TEST_LOCAL_SHELL
#error "TERRET_TEST_LOCAL_SHELL must be defined"
#endif

static void
write_config (const char *dir,
              const char *contents)
{
  g_autofree char *conf_dir = g_build_filename (dir, "terret-exec", NULL);
  g_autofree char *path = g_build_filename (conf_dir, "executor.conf", NULL);
  g_autoptr(GError) error = NULL;

  g_assert_cmpint (g_mkdir_with_parents (conf_dir, 0700), ==, 0);
  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

static void
write_user_config (const char *contents)
{
  write_config (g_get_user_config_dir (), contents);
}

static TerretExecutor *
assert_default_is (const char *expected)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretExecutor) executor = terret_executor_new_default (&error);

  g_assert_no_error (error);
  g_assert_nonnull (executor);
  g_assert_cmpstr (terret_executor_get_name (executor), ==, expected);
  return g_steal_pointer (&executor);
}

static void
assert_default_fails (TerretExecError  code,
                      const char      *const *fragments)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretExecutor) executor = terret_executor_new_default (&error);

  g_assert_null (executor);
  g_assert_error (error, TERRET_EXEC_ERROR, (int)code);
  for (guint i = 0; fragments[i] != NULL; i++)
    {
      if (strstr (error->message, fragments[i]) == NULL)
        g_error ("“%s” not in “%s”", fragments[i], error->message);
    }
}

#define FRAGMENTS(...) ((const char * const[]) { __VA_ARGS__, NULL })

static void
test_list (void)
{
  g_autolist(TerretBackendInfo) infos = terret_backend_info_list ();
  const char *module_path = g_getenv ("TERRET_EXEC_MODULE_PATH");
  gboolean saw_noshell = FALSE, saw_pty = FALSE, saw_oneshot = FALSE;
  int last_priority = G_MAXINT;

  g_test_summary ("Backends come from the module directories, highest priority first, "
                  "each with the module file it was loaded from.");

  g_assert_nonnull (module_path);
  for (GList *l = infos; l != NULL; l = l->next)
    {
      TerretBackendInfo *info = l->data;
      const char *name = terret_backend_info_get_name (info);
      const char *path = terret_backend_info_get_module_path (info);
      g_autoptr(GError) error = NULL;
      g_autofree char *dir = NULL;

      g_assert_cmpint (terret_backend_info_get_priority (info), <=, last_priority);
      last_priority = terret_backend_info_get_priority (info);
      g_assert_true (g_type_is_a (terret_backend_info_get_backend_type (info), TERRET_TYPE_EXECUTOR));
      g_assert_nonnull (path);

      if (g_str_equal (name, "noshell"))
        {
          saw_noshell = TRUE;
          g_assert_cmpint (terret_backend_info_get_priority (info), ==, -100);
          /* Loaded from the build tree named by the environment, not from
           * whatever may be installed. */
          g_assert_true (g_str_has_suffix (path, "libterret-noshell.so"));
          dir = g_path_get_dirname (path);
          g_assert_nonnull (strstr (module_path, dir));
          g_assert_true (terret_backend_info_check_supported (info, &error));
          g_assert_no_error (error);
        }
      saw_pty |= g_str_equal (name, "pty");
      saw_oneshot |= g_str_equal (name, "oneshot");
    }

  g_assert_true (saw_noshell);
  g_assert_cmpint (saw_pty, ==, TERRET_TEST_LOCAL_SHELL);
  g_assert_cmpint (saw_oneshot, ==, TERRET_TEST_LOCAL_SHELL);
}

static void
test_explicit (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretExecutor) executor = NULL;

  g_test_summary ("An explicit name beats the environment and the config file.");

  write_user_config ("[executor]\nbackend=nosuch\n");
  g_setenv ("TERRET_EXECUTOR", "nosuch-either", TRUE);

  executor = terret_executor_new ("noshell", &error);
  g_assert_no_error (error);
  g_assert_cmpstr (terret_executor_get_name (executor), ==, "noshell");

  g_unsetenv ("TERRET_EXECUTOR");
}

static void
test_unknown (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretExecutor) executor = terret_executor_new ("carrier-pigeon", &error);

  g_test_summary ("An unknown backend is an error that names it and lists the available ones.");

  g_assert_null (executor);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNKNOWN_BACKEND);
  g_assert_nonnull (strstr (error->message, "carrier-pigeon"));
  g_assert_nonnull (strstr (error->message, "noshell"));
}

static void
test_env (void)
{
  g_autoptr(TerretExecutor) executor = NULL;

  g_test_summary ("TERRET_EXECUTOR beats the config file and priority; an unknown "
                  "name there is an error, not a fallback.");

  write_user_config ("[executor]\nbackend=nosuch\n");
  g_setenv ("TERRET_EXECUTOR", "noshell", TRUE);
  executor = assert_default_is ("noshell");

  g_setenv ("TERRET_EXECUTOR", "nosuch-env", TRUE);
  assert_default_fails (TERRET_EXEC_ERROR_UNKNOWN_BACKEND,
                        FRAGMENTS ("TERRET_EXECUTOR=nosuch-env:", "noshell"));

  g_unsetenv ("TERRET_EXECUTOR");
}

static void
test_env_help (void)
{
  g_test_summary ("TERRET_EXECUTOR=help lists the backends and goes on to the next rule.");

  if (g_test_subprocess ())
    {
      g_autoptr(TerretExecutor) executor = NULL;

      g_setenv ("TERRET_EXECUTOR", "help", TRUE);
      write_user_config ("[executor]\nbackend=noshell\n");
      executor = assert_default_is ("noshell");
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
  g_test_trap_assert_stderr ("*Supported values for TERRET_EXECUTOR*noshell*priority -100*");
}

static void
test_config_file (void)
{
  g_autoptr(TerretExecutor) executor = NULL;

  g_test_summary ("[executor] backend= in the user's executor.conf picks the backend.");

  write_user_config ("# chosen by the operator\n[executor]\nbackend=noshell\n");
  executor = assert_default_is ("noshell");
}

static void
test_config_dirs (void)
{
  const char * const *system_dirs = g_get_system_config_dirs ();
  g_autoptr(TerretExecutor) from_system = NULL;

  g_test_summary ("Without a user file the first of $XDG_CONFIG_DIRS that has one is "
                  "used; a user file replaces it.");

  g_assert_nonnull (system_dirs[0]);
  g_assert_nonnull (system_dirs[1]);

  /* The second system directory only: the search must go past the first. */
  write_config (system_dirs[1], "[executor]\nbackend=noshell\n");
  from_system = assert_default_is ("noshell");

  write_user_config ("[executor]\nbackend=nosuch-user\n");
  assert_default_fails (TERRET_EXEC_ERROR_UNKNOWN_BACKEND,
                        FRAGMENTS ("executor.conf", "[executor] backend=nosuch-user", "no backend named"));
}

static void
test_priority (void)
{
  g_autoptr(TerretExecutor) executor = NULL;

  g_test_summary ("With no choice made, the highest-priority backend that works wins: "
                  "pty where the local shell backends are built, noshell where not.");

  executor = assert_default_is (TERRET_TEST_LOCAL_SHELL ? "pty" : "noshell");
}

static void
test_config_errors (void)
{
  g_test_summary ("Each kind of bad configuration is an error naming file, group, key "
                  "and what is allowed.");

  write_user_config ("[executor]\nbackend=noshell\ncolour=blue\n");
  assert_default_fails (TERRET_EXEC_ERROR_INVALID_CONFIG,
                        FRAGMENTS ("executor.conf", "[executor]", "colour", "allowed: backend"));

  write_user_config ("[executor\nbackend=noshell\n");
  assert_default_fails (TERRET_EXEC_ERROR_INVALID_CONFIG, FRAGMENTS ("executor.conf"));

  if (!TERRET_TEST_LOCAL_SHELL)
    return;

  write_user_config ("[executor]\nbackend=oneshot\n[oneshot]\ntimeout=soon\n");
  assert_default_fails (TERRET_EXEC_ERROR_INVALID_CONFIG,
                        FRAGMENTS ("executor.conf", "[oneshot] timeout", "soon", "a number"));

  write_user_config ("[executor]\nbackend=oneshot\n[oneshot]\ntimeout=-3\n");
  assert_default_fails (TERRET_EXEC_ERROR_INVALID_CONFIG,
                        FRAGMENTS ("[oneshot] timeout", "-3", "out of range"));

  write_user_config ("[executor]\nbackend=oneshot\n[oneshot]\nmax-output=lots\n");
  assert_default_fails (TERRET_EXEC_ERROR_INVALID_CONFIG,
                        FRAGMENTS ("[oneshot] max-output", "lots", "an integer from"));

  write_user_config ("[executor]\nbackend=oneshot\n[oneshot]\ncolour=blue\n");
  assert_default_fails (TERRET_EXEC_ERROR_INVALID_CONFIG,
                        FRAGMENTS ("[oneshot] colour", "no setting", "timeout", "max-output"));

  /* The backend's group applies however the backend was chosen. */
  write_user_config ("[oneshot]\ntimeout=forever\n");
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(TerretExecutor) executor = terret_executor_new ("oneshot", &error);

    g_assert_null (executor);
    g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG);
    g_assert_nonnull (strstr (error->message, "forever"));
  }
}

static void
test_config_applies (void)
{
  g_autoptr(TerretExecutor) executor = NULL;
  g_auto(GStrv) env = NULL;
  double timeout = 0;

  g_test_summary ("A backend's group sets its settings, lists in key-file syntax.");

  if (!TERRET_TEST_LOCAL_SHELL)
    {
      g_test_skip ("the oneshot backend is not built");
      return;
    }

  write_user_config ("[executor]\nbackend=oneshot\n"
                     "[oneshot]\ntimeout=2.5\nenv=A=1;B=two words;C=semi\\;colon\n");
  executor = assert_default_is ("oneshot");

  g_object_get (executor, "timeout", &timeout, "env", &env, NULL);
  g_assert_cmpfloat (timeout, ==, 2.5);
  g_assert_cmpuint (g_strv_length (env), ==, 3);
  g_assert_cmpstr (env[0], ==, "A=1");
  g_assert_cmpstr (env[1], ==, "B=two words");
  g_assert_cmpstr (env[2], ==, "C=semi;colon");
}

static void
test_set_setting (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretExecutor) executor = NULL;
  g_autofree char *cwd = NULL;
  double timeout = 0;

  g_test_summary ("Settings convert from text by type, within range, or fail naming the key.");

  if (!TERRET_TEST_LOCAL_SHELL)
    {
      g_test_skip ("the oneshot backend is not built");
      return;
    }

  executor = terret_executor_new ("oneshot", &error);
  g_assert_no_error (error);

  g_assert_true (terret_executor_set_setting (executor, "timeout", "0.25", &error));
  g_assert_no_error (error);
  g_object_get (executor, "timeout", &timeout, NULL);
  g_assert_cmpfloat (timeout, ==, 0.25);

  g_assert_false (terret_executor_set_setting (executor, "timeout", "0.25s", &error));
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG);
  g_assert_nonnull (strstr (error->message, "timeout"));
  g_clear_error (&error);

  g_assert_false (terret_executor_set_setting (executor, "timeout", "nan", &error));
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG);
  g_clear_error (&error);

  g_assert_false (terret_executor_set_setting (executor, "max-output", "-1", &error));
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG);
  g_clear_error (&error);

  g_assert_false (terret_executor_set_setting (executor, "verbosity", "11", &error));
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG);
  g_assert_nonnull (strstr (error->message, "verbosity"));
  g_assert_nonnull (strstr (error->message, "oneshot"));
  g_clear_error (&error);

  /* An empty value puts an unset-by-default setting back to unset. */
  g_assert_true (terret_executor_set_setting (executor, "cwd", "/", &error));
  g_object_get (executor, "cwd", &cwd, NULL);
  g_assert_cmpstr (cwd, ==, "/");
  g_clear_pointer (&cwd, g_free);
  g_assert_true (terret_executor_set_setting (executor, "cwd", "", &error));
  g_object_get (executor, "cwd", &cwd, NULL);
  g_assert_null (cwd);
}

static void
test_with_settings (void)
{
  const char * const missing_shell[] = { "shell=/nonexistent/bash", NULL };
  const char * const timeouts[] = { "timeout=5", "timeout=7.5", NULL };
  const char * const malformed[] = { "timeout", NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretExecutor) executor = NULL;
  double timeout = 0;

  g_test_summary ("Settings given at creation apply in order after the config file and "
                  "before the backend initializes, so they can decide whether it works.");

  if (!TERRET_TEST_LOCAL_SHELL)
    {
      g_test_skip ("the oneshot backend is not built");
      return;
    }

  /* Applied before init: the backend sees the shell it was given. */
  executor = terret_executor_new_with_settings ("oneshot", missing_shell, &error);
  g_assert_null (executor);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "/nonexistent/bash"));
  g_clear_error (&error);

  write_user_config ("[executor]\nbackend=oneshot\n[oneshot]\ntimeout=3\n");
  executor = terret_executor_new_with_settings (NULL, timeouts, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (terret_executor_get_name (executor), ==, "oneshot");
  g_object_get (executor, "timeout", &timeout, NULL);
  g_assert_cmpfloat (timeout, ==, 7.5);
  g_clear_object (&executor);

  executor = terret_executor_new_with_settings ("oneshot", malformed, &error);
  g_assert_null (executor);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG);
  g_assert_nonnull (strstr (error->message, "“timeout”"));
}

static void
test_hot_reconfigure (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) before = NULL;
  g_autoptr(TerretResult) after = NULL;
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *expected = g_strdup_printf ("%s\n", dir);

  g_test_summary ("A setting changed on a live executor governs the next run.");

  if (!TERRET_TEST_LOCAL_SHELL)
    {
      g_test_skip ("the oneshot backend is not built");
      return;
    }

  executor = terret_executor_new ("oneshot", &error);
  g_assert_no_error (error);
  g_assert_true (terret_executor_set_setting (executor, "cwd", "/", &error));

  before = terret_test_run_command (executor, "pwd", &error);
  g_assert_no_error (error);
  terret_test_assert_bytes_str (terret_result_get_stdout (before), "/\n");

  g_assert_true (terret_executor_set_setting (executor, "cwd", dir, &error));
  after = terret_test_run_command (executor, "pwd", &error);
  g_assert_no_error (error);
  terret_test_assert_bytes_str (terret_result_get_stdout (after), expected);
}

static void
test_module_path (void)
{
  g_test_summary ("Modules load from the directories in TERRET_EXEC_MODULE_PATH and only "
                  "those (besides the installed directory); with only noshell there, the "
                  "default resolves to it.");

  if (g_test_subprocess ())
    {
      g_auto(GStrv) dirs = g_strsplit (g_getenv ("TERRET_EXEC_MODULE_PATH"), ":", -1);
      g_autofree char *empty = terret_test_make_tmpdir ();
      g_autofree char *path = NULL;
      g_autolist(TerretBackendInfo) infos = NULL;
      g_autoptr(TerretExecutor) executor = NULL;

      for (guint i = 0; dirs[i] != NULL; i++)
        {
          if (g_str_has_suffix (dirs[i], "noshell"))
            path = g_strdup_printf ("%s::%s", empty, dirs[i]);
        }
      g_assert_nonnull (path);

      /* The registry is process-global: only a fresh process sees a new path. */
      g_setenv ("TERRET_EXEC_MODULE_PATH", path, TRUE);
      infos = terret_backend_info_list ();
      g_assert_cmpuint (g_list_length (infos), ==, 1);
      g_assert_cmpstr (terret_backend_info_get_name (infos->data), ==, "noshell");
      executor = assert_default_is ("noshell");
      return;
    }

  /* Modules installed in the compiled-in directory would be listed too. */
  if (g_file_test (TERRET_TEST_BACKEND_DIR, G_FILE_TEST_IS_DIR))
    {
      g_test_skip ("backends are installed in " TERRET_TEST_BACKEND_DIR);
      return;
    }

  g_test_trap_subprocess (NULL, 0, G_TEST_SUBPROCESS_DEFAULT);
  g_test_trap_assert_passed ();
}

static void
test_list_settings (void)
{
  g_autolist(TerretBackendInfo) infos = terret_backend_info_list ();

  g_test_summary ("A backend's settings list the same from its info, without an executor, "
                  "as from an executor; each one a writable property set after construction, "
                  "and set_setting() takes each by its name.");

  for (GList *l = infos; l != NULL; l = l->next)
    {
      TerretBackendInfo *info = l->data;
      g_autoptr(GObject) executor = g_object_new (terret_backend_info_get_backend_type (info), NULL);
      guint n_from_info = 0, n_from_executor = 0;
      g_autofree GParamSpec **from_info = terret_backend_info_list_settings (info, &n_from_info);
      g_autofree GParamSpec **from_executor =
        terret_executor_list_settings (TERRET_EXECUTOR (executor), &n_from_executor);

      g_assert_cmpuint (n_from_info, ==, n_from_executor);
      g_assert_null (from_info[n_from_info]);
      for (guint i = 0; i < n_from_info; i++)
        {
          g_assert_true (from_info[i] == from_executor[i]);
          g_assert_true (from_info[i]->flags & G_PARAM_WRITABLE);
          g_assert_false (from_info[i]->flags & G_PARAM_CONSTRUCT_ONLY);
        }
      if (g_str_equal (terret_backend_info_get_name (info), "pty") ||
          g_str_equal (terret_backend_info_get_name (info), "oneshot"))
        g_assert_cmpuint (n_from_info, >, 20);
    }
}

/* @text set on @executor's @key reads back as @expected. */
static void
assert_text_sets (GObject    *executor,
                  const char *key,
                  const char *text,
                  GValue     *expected)
{
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (executor), key);
  g_auto(GValue) value = G_VALUE_INIT;
  g_autoptr(GError) error = NULL;

  g_assert_true (terret_executor_set_setting (TERRET_EXECUTOR (executor), key, text, &error));
  g_assert_no_error (error);
  g_value_init (&value, G_PARAM_SPEC_VALUE_TYPE (pspec));
  g_object_get_property (executor, key, &value);
  /* A boxed pspec compares pointers; a list compares by its entries. */
  if (G_VALUE_HOLDS (&value, G_TYPE_STRV)
      ? !g_strv_equal (g_value_get_boxed (&value), g_value_get_boxed (expected))
      : g_param_values_cmp (pspec, &value, expected) != 0)
    g_error ("%s=%s read back as %s", key, text, g_strdup_value_contents (&value));
}

static void
test_text_round_trip (void)
{
  g_autolist(TerretBackendInfo) infos = terret_backend_info_list ();

  g_test_summary ("A setting's value written as text is what set_setting() reads back as that "
                  "value: every default of every backend, and lists with escapes.");

  for (GList *l = infos; l != NULL; l = l->next)
    {
      TerretBackendInfo *info = l->data;
      g_autoptr(GObject) executor = g_object_new (terret_backend_info_get_backend_type (info), NULL);
      g_autofree GParamSpec **settings = terret_backend_info_list_settings (info, NULL);

      for (guint i = 0; settings[i] != NULL; i++)
        {
          const GValue *def = g_param_spec_get_default_value (settings[i]);
          g_autofree char *text = terret_setting_value_to_string (def);

          /* Unset has no text: it is the default already. */
          if (text == NULL)
            continue;
          assert_text_sets (executor, g_param_spec_get_name (settings[i]), text, (GValue *)def);
        }

      if (g_object_class_find_property (G_OBJECT_GET_CLASS (executor), "writable") != NULL)
        {
          const char * const list[] = { "a;b", "c\\d", " e", NULL };
          g_auto(GValue) value = G_VALUE_INIT;
          g_autofree char *text = NULL;

          g_value_init (&value, G_TYPE_STRV);
          g_value_set_boxed (&value, list);
          text = terret_setting_value_to_string (&value);
          g_assert_cmpstr (text, ==, "a\\;b;c\\\\d; e");
          assert_text_sets (executor, "writable", text, &value);
        }
      if (g_object_class_find_property (G_OBJECT_GET_CLASS (executor), "timeout") != NULL)
        {
          g_auto(GValue) value = G_VALUE_INIT;
          g_autofree char *text = NULL;

          g_value_init (&value, G_TYPE_DOUBLE);
          g_value_set_double (&value, 0.1);
          text = terret_setting_value_to_string (&value);
          g_assert_cmpstr (text, ==, "0.1");
          assert_text_sets (executor, "timeout", text, &value);
        }
    }
}

int
main (int   argc,
      char *argv[])
{
  terret_test_init (&argc, &argv);

  g_test_add_func ("/registry/list", test_list);
  g_test_add_func ("/registry/select/explicit", test_explicit);
  g_test_add_func ("/registry/select/unknown", test_unknown);
  g_test_add_func ("/registry/select/env", test_env);
  g_test_add_func ("/registry/select/env-help", test_env_help);
  g_test_add_func ("/registry/select/config-file", test_config_file);
  g_test_add_func ("/registry/select/config-dirs", test_config_dirs);
  g_test_add_func ("/registry/select/priority", test_priority);
  g_test_add_func ("/registry/module-path", test_module_path);
  g_test_add_func ("/settings/config-errors", test_config_errors);
  g_test_add_func ("/settings/config-applies", test_config_applies);
  g_test_add_func ("/settings/set-setting", test_set_setting);
  g_test_add_func ("/settings/list", test_list_settings);
  g_test_add_func ("/settings/text-round-trip", test_text_round_trip);
  g_test_add_func ("/settings/with-settings", test_with_settings);
  g_test_add_func ("/settings/hot-reconfigure", test_hot_reconfigure);

  return g_test_run ();
}
