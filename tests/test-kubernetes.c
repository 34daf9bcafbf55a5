/* test-kubernetes.c: the kubernetes backend, and the container backends' settings
 *
 * No cluster can run here. kubectl's command lines are checked through a
 * stand-in (containers/kubectl-shim) that records them and serves the far
 * side from this host, as a pod would: so the whole way (the backend, the
 * bridge, the far launcher, the terminal made there) runs here in both
 * modes, and nothing a command starts survives its end (this host's
 * /proc is the far side's). The real kubectl's failures against a
 * refused and a silent server are checked to be clear and bounded; where
 * KUBECONFIG reaches a cluster, a pod there is used.
 *
 * No engine is needed, so this runs under the sanitizers too, which the
 * engines' suites (test-containers.c) do not.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include <gio/gio.h>

#include "terret-test-containment.h"
#include "terret-test-utils.h"

/* Settings that make the kubernetes backend run through the stand-in,
 * whose log is @log. */
static GPtrArray *
shim_settings (const char *mode,
               const char *log)
{
  g_autofree char *shim = g_test_build_filename (G_TEST_DIST, "containers", "kubectl-shim", NULL);
  g_autofree char *launcher_dir = g_path_get_dirname (g_getenv ("TERRET_LAUNCHER"));
  g_autofree char *launcher = g_build_filename (launcher_dir, "terret-launcher-static", NULL);
  GPtrArray *settings = g_ptr_array_new_with_free_func (g_free);

  g_setenv ("TERRET_TEST_KUBECTL_LOG", log, TRUE);
  /* The far side the stand-in serves is the launcher a copy would put
   * there. */
  g_setenv ("TERRET_TEST_FAR_LAUNCHER", launcher, TRUE);
  g_ptr_array_add (settings, g_strdup_printf ("mode=%s", mode));
  g_ptr_array_add (settings, g_strdup_printf ("engine-path=%s", shim));
  g_ptr_array_add (settings, g_strdup ("container=web-0"));
  return settings;
}

static TerretExecutor *
new_kubernetes (GPtrArray  *settings,
                GError    **error)
{
  g_ptr_array_add (settings, NULL);
  return terret_executor_new_with_settings ("kubernetes", (const char * const *)settings->pdata,
                                            error);
}


static char **
read_log_lines (const char *path)
{
  g_autofree char *log = NULL;
  g_autoptr(GError) error = NULL;

  g_file_get_contents (path, &log, NULL, &error);
  g_assert_no_error (error);
  return g_strsplit (g_strchomp (log), "\n", -1);
}

static void
test_kubectl_argv (void)
{
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *log = g_build_filename (dir, "kubectl.log", NULL);
  g_autofree char *kubeconfig = g_build_filename (dir, "config", NULL);
  g_autofree char *kubeconfig_option = g_strdup_printf ("--kubeconfig=%s", kubeconfig);
  g_autofree char *far = NULL;
  g_auto(GStrv) lines = NULL;
  g_auto(GStrv) exec_words = NULL;
  g_auto(GStrv) cp_words = NULL;
  const char *modes[] = { "session", "oneshot" };

  g_test_summary ("The kubernetes backend's kubectl command lines: exec -i into the pod's "
                  "container with the launcher copied in once with kubectl cp, namespace, "
                  "context, kubeconfig and extra options in place; a run through them works.");

  for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
    {
      g_autoptr(GPtrArray) settings = shim_settings (modes[m], log);
      g_autoptr(GError) error = NULL;
      g_autoptr(TerretExecutor) executor = NULL;
      g_autoptr(TerretResult) result = NULL;

      g_ptr_array_add (settings, g_strdup ("namespace=agents"));
      g_ptr_array_add (settings, g_strdup ("kube-container=sandbox"));
      g_ptr_array_add (settings, g_strdup ("context=lab"));
      g_ptr_array_add (settings, g_strdup_printf ("kubeconfig=%s", kubeconfig));
      g_ptr_array_add (settings, g_strdup ("engine-options=--insecure-skip-tls-verify=true"));
      executor = new_kubernetes (settings, &error);
      g_assert_no_error (error);
      result = terret_test_run_ok (executor, "echo through kubectl");
      terret_test_assert_bytes_str (terret_result_get_stdout (result), "through kubectl\n");
    }

  lines = read_log_lines (log);
  /* exec (the launcher is not there), cp, exec, and the second executor's
   * exec finding it there. */
  g_assert_cmpuint (g_strv_length (lines), ==, 4);
  exec_words = g_strsplit (lines[0], "\x1f", -1);
  g_assert_cmpuint (g_strv_length (exec_words), ==, 11);
  g_assert_cmpstr (exec_words[0], ==, kubeconfig_option);
  g_assert_cmpstr (exec_words[1], ==, "--context=lab");
  g_assert_cmpstr (exec_words[2], ==, "--insecure-skip-tls-verify=true");
  g_assert_cmpstr (exec_words[3], ==, "exec");
  g_assert_cmpstr (exec_words[4], ==, "-i");
  g_assert_cmpstr (exec_words[5], ==, "--namespace=agents");
  g_assert_cmpstr (exec_words[6], ==, "--container=sandbox");
  g_assert_cmpstr (exec_words[7], ==, "web-0");
  g_assert_cmpstr (exec_words[8], ==, "--");
  g_assert_true (g_str_has_prefix (exec_words[9], "/tmp/terret-launcher-"));
  g_assert_cmpstr (exec_words[10], ==, "--serve");
  far = g_strdup_printf ("web-0:%s", exec_words[9]);

  cp_words = g_strsplit (lines[1], "\x1f", -1);
  g_assert_cmpuint (g_strv_length (cp_words), ==, 8);
  g_assert_cmpstr (cp_words[0], ==, kubeconfig_option);
  g_assert_cmpstr (cp_words[1], ==, "--context=lab");
  g_assert_cmpstr (cp_words[2], ==, "--insecure-skip-tls-verify=true");
  g_assert_cmpstr (cp_words[3], ==, "cp");
  g_assert_cmpstr (cp_words[4], ==, "--namespace=agents");
  g_assert_cmpstr (cp_words[5], ==, "--container=sandbox");
  g_assert_true (g_str_has_suffix (cp_words[6], "/terret-launcher-static"));
  g_assert_cmpstr (cp_words[7], ==, far);

  g_assert_cmpstr (lines[2], ==, lines[0]);
  g_assert_cmpstr (lines[3], ==, lines[0]);
}

typedef struct
{
  const char *mode;
  TerretTestEnd end;
  gboolean detach;
} Case;

static void
test_containment (gconstpointer data)
{
  const Case *c = data;
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *log = g_build_filename (dir, "kubectl.log", NULL);
  g_autoptr(GPtrArray) settings = shim_settings (c->mode, log);
  g_autoptr(GError) error = NULL;
  TerretExecutor *executor = new_kubernetes (settings, &error);

  g_test_summary ("Through the far launcher, nothing a command starts (setsid, nohup, "
                  "double-forked, HUP-ignoring jobs) outlives its end.");
  g_assert_no_error (error);
  terret_test_containment_check (executor, c->end, c->detach);
}

static void
test_settings (void)
{
  struct { const char *settings[4]; int code; const char *needle; } refused[] = {
    { { "container=web-0", "sandbox=read-only", NULL }, TERRET_EXEC_ERROR_INVALID_CONFIG, "sandbox" },
    { { "container=web-0", "env-policy=core", NULL }, TERRET_EXEC_ERROR_INVALID_CONFIG, "env-policy" },
    { { "container=web-0", "mode=session", "drain-grace=1" }, TERRET_EXEC_ERROR_INVALID_CONFIG,
      "mode=oneshot" },
    { { "container=web-0", "mode=oneshot", "handshake-timeout=3" }, TERRET_EXEC_ERROR_INVALID_CONFIG,
      "mode=session" },
    { { "container=web-0", "mode=batch", NULL }, TERRET_EXEC_ERROR_INVALID_CONFIG, "mode" },
    { { "container=web-0", "image=x", NULL }, TERRET_EXEC_ERROR_INVALID_CONFIG, "image" },
    { { "container=web-0", "engine-path=/terret-no-such-dir/kubectl", NULL },
      TERRET_EXEC_ERROR_UNAVAILABLE, "/terret-no-such-dir/kubectl" },
    { { "container=-it", NULL }, TERRET_EXEC_ERROR_INVALID_CONFIG, "-it" },
    { { NULL }, TERRET_EXEC_ERROR_UNAVAILABLE, "no pod configured" },
  };
  g_autofree char *shim = g_test_build_filename (G_TEST_DIST, "containers", "kubectl-shim", NULL);
  g_autofree char *engine_path = g_strdup_printf ("engine-path=%s", shim);

  g_test_summary ("Settings a container backend cannot honour are refused when the executor "
                  "is made, naming them: the sandbox's, a setting of the other mode, an "
                  "unknown mode, a missing engine or pod.");

  for (guint i = 0; i < G_N_ELEMENTS (refused); i++)
    {
      g_autoptr(GPtrArray) settings = g_ptr_array_new ();
      g_autoptr(GError) error = NULL;
      g_autoptr(TerretExecutor) executor = NULL;

      if (strstr (refused[i].needle, "kubectl") == NULL)
        g_ptr_array_add (settings, engine_path);
      for (guint j = 0; j < G_N_ELEMENTS (refused[i].settings) && refused[i].settings[j] != NULL; j++)
        g_ptr_array_add (settings, (gpointer)refused[i].settings[j]);
      g_ptr_array_add (settings, NULL);
      executor = terret_executor_new_with_settings ("kubernetes",
                                                    (const char * const *)settings->pdata, &error);
      g_assert_null (executor);
      g_assert_error (error, TERRET_EXEC_ERROR, refused[i].code);
      if (strstr (error->message, refused[i].needle) == NULL)
        g_error ("“%s” does not say “%s”", error->message, refused[i].needle);
    }
}

static void
test_kubectl_unavailable (void)
{
  g_autofree char *kubectl = g_find_program_in_path ("kubectl");
  g_autofree char *dir = NULL;
  g_autofree char *config = NULL;
  g_autoptr(GSocketListener) silent = NULL;
  g_autoptr(GError) error = NULL;
  guint16 silent_port;
  guint16 refused_port;

  g_test_summary ("Without a cluster the real kubectl fails a run as unavailable in its own "
                  "words, at once when the server refuses, and within connect-timeout when it "
                  "never answers.");
  if (kubectl == NULL)
    {
      g_test_skip ("kubectl is not installed");
      return;
    }

  /* A port nothing listens on, and one that accepts and never answers. */
  {
    g_autoptr(GSocketListener) probe = g_socket_listener_new ();

    refused_port = g_socket_listener_add_any_inet_port (probe, NULL, &error);
    g_assert_no_error (error);
    g_socket_listener_close (probe);
  }
  silent = g_socket_listener_new ();
  silent_port = g_socket_listener_add_any_inet_port (silent, NULL, &error);
  g_assert_no_error (error);

  dir = terret_test_make_tmpdir ();
  for (guint i = 0; i < 2; i++)
    {
      guint16 port = i == 0 ? refused_port : silent_port;
      g_autofree char *yaml = g_strdup_printf (
        "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
        "clusters:\n- name: test\n  cluster:\n    server: https://127.0.0.1:%u\n"
        "contexts:\n- name: test\n  context:\n    cluster: test\n    user: test\n"
        "users:\n- name: test\n  user:\n    token: none\n", port);
      g_autofree char *config_setting = NULL;
      g_autoptr(TerretExecutor) executor = NULL;

      config = g_build_filename (dir, i == 0 ? "refused" : "silent", NULL);
      g_file_set_contents (config, yaml, -1, &error);
      g_assert_no_error (error);
      config_setting = g_strdup_printf ("kubeconfig=%s", config);
      {
        const char *settings[] = { "container=web-0", config_setting, "connect-timeout=2", NULL };

        executor = terret_executor_new_with_settings ("kubernetes", settings, &error);
        g_assert_no_error (error);
      }
      terret_test_assert_run_fails (executor, TERRET_EXEC_ERROR_UNAVAILABLE,
                        i == 0 ? "refused" : "no answer in 2 s");
      g_clear_pointer (&config, g_free);
    }
}

static void
test_kubernetes_cluster (void)
{
  const char *pod = g_getenv ("TERRET_TEST_KUBE_POD");
  const char *probe[] = { "kubectl", "get", "--raw", "/readyz", "--request-timeout=5s", NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *ready = NULL;
  g_autofree char *pod_setting = NULL;
  const char *modes[] = { "session", "oneshot" };

  g_test_summary ("Where KUBECONFIG reaches a cluster, a pod named by TERRET_TEST_KUBE_POD "
                  "(with bash and tar) runs commands in both modes, and nothing is left.");
  if (g_getenv ("KUBECONFIG") == NULL)
    {
      g_test_skip ("KUBECONFIG is not set: no cluster to reach");
      return;
    }
  if (g_find_program_in_path ("kubectl") == NULL)
    {
      g_test_skip ("kubectl is not installed");
      return;
    }
  ready = terret_test_run_argv (probe, &error);
  if (ready == NULL)
    {
      g_autofree char *why = g_strdup_printf ("KUBECONFIG reaches no cluster: %s", error->message);

      g_test_skip (why);
      return;
    }
  if (pod == NULL)
    {
      g_test_skip ("TERRET_TEST_KUBE_POD names no pod to run in");
      return;
    }

  pod_setting = g_strdup_printf ("container=%s", pod);
  for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
    {
      g_autofree char *mode = g_strdup_printf ("mode=%s", modes[m]);
      const char *settings[] = { mode, pod_setting, NULL };
      TerretExecutor *executor = terret_executor_new_with_settings ("kubernetes", settings, &error);

      g_assert_no_error (error);
      g_object_unref (terret_test_run_ok (executor, "true"));
      /* The pod's processes are not this host's to count; the run's end
       * is what can be checked from here. */
      g_object_unref (executor);
    }
}

int
main (int   argc,
      char *argv[])
{
  static const Case session_close = { "session", TERRET_TEST_END_CLOSE, FALSE };
  static const Case session_timeout = { "session", TERRET_TEST_END_TIMEOUT, FALSE };
  static const Case oneshot_close = { "oneshot", TERRET_TEST_END_CLOSE, TRUE };
  static const Case oneshot_cancel = { "oneshot", TERRET_TEST_END_CANCEL, FALSE };

  terret_test_init (&argc, &argv);
  /* kubectl reads its configuration under HOME. */
  terret_test_give_home ();

  g_test_add_func ("/kubernetes/settings", test_settings);
  g_test_add_func ("/kubernetes/argv", test_kubectl_argv);
  g_test_add_data_func ("/kubernetes/session/containment/close", &session_close, test_containment);
  g_test_add_data_func ("/kubernetes/session/containment/timeout", &session_timeout, test_containment);
  g_test_add_data_func ("/kubernetes/oneshot/containment/close-detached", &oneshot_close,
                        test_containment);
  g_test_add_data_func ("/kubernetes/oneshot/containment/cancel", &oneshot_cancel, test_containment);
  g_test_add_func ("/kubernetes/unavailable", test_kubectl_unavailable);
  g_test_add_func ("/kubernetes/cluster", test_kubernetes_cluster);

  return g_test_run ();
}
