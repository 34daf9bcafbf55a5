/* test-containers.c: the podman, docker and kubernetes backends, with real engines
 *
 * Images are built from this host's files by containers/build-images,
 * which also says what `run` needs here (rlimits within the host's hard
 * limits, another runtime); an engine that cannot run a container at all
 * skips its tests with the engine's own words. Nothing here relies on the
 * host's containers.conf: the suite runs with CONTAINERS_CONF pointing at
 * an empty file.
 *
 * The containment escapees (terret-test-containment.c) run inside the
 * containers: rootful engines' containers share this host's kernel, so
 * this host's /proc shows their processes, and the check that they run
 * proves that the probe sees them. After close, timeout, cancel,
 * disposal and a SIGKILL of the host none may be left, nor the far
 * launcher in a running container, nor a disposable container in
 * `ENGINE ps -a`.
 *
 * The kubernetes backend, which no engine here can serve, is in
 * test-kubernetes.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <gio/gio.h>
#include <glib/gstdio.h>

#include "terret-test-containment.h"
#include "terret-test-utils.h"

/* Bounds on waiting for an engine to remove a container: far beyond what
 * it takes, and never what a test asserts. */
#define GONE_TRIES 300
#define GONE_USEC 100000

typedef struct
{
  const char *name;
  gboolean probed;
  char *skip;                   /* (owned) (nullable) why it cannot run here */
  GStrv run_options;            /* (owned) what `run` needs here */
} Engine;

static Engine engines[] = { { "podman" }, { "docker" } };

/* --- The engines ---------------------------------------------------------- */

/* `ENGINE ARG...`, with `run`'s options after a `run`. */
static char *
engine_run (Engine      *engine,
            GError     **error,
            const char  *first,
            ...)
{
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  const char *arg;
  va_list args;

  g_ptr_array_add (argv, (gpointer)engine->name);
  va_start (args, first);
  for (arg = first; arg != NULL; arg = va_arg (args, const char *))
    {
      g_ptr_array_add (argv, (gpointer)arg);
      if (strcmp (arg, "run") == 0 || strcmp (arg, "create") == 0)
        for (guint i = 0; engine->run_options[i] != NULL; i++)
          g_ptr_array_add (argv, engine->run_options[i]);
    }
  va_end (args);
  g_ptr_array_add (argv, NULL);
  return terret_test_run_argv ((const char * const *)argv->pdata, error);
}

/* The engine, its images built and its run options found; NULL (the
 * test skipped, in the engine's words) when it cannot run here. */
static Engine *
require_engine (const char *name)
{
  Engine *engine = NULL;

  for (guint i = 0; i < G_N_ELEMENTS (engines); i++)
    if (strcmp (engines[i].name, name) == 0)
      engine = &engines[i];
  g_assert_nonnull (engine);

  /* podman reads its configuration under them, docker its own. */
  terret_test_give_home ();

  if (!engine->probed)
    {
      g_autofree char *script = g_test_build_filename (G_TEST_DIST, "containers", "build-images", NULL);
      const char *argv[] = { script, engine->name, NULL };
      g_autoptr(GError) error = NULL;
      g_autofree char *options = NULL;

      engine->probed = TRUE;
      if (g_find_program_in_path (engine->name) == NULL)
        engine->skip = g_strdup_printf ("%s is not installed", engine->name);
      else if ((options = terret_test_run_argv (argv, &error)) == NULL)
        engine->skip = g_strdup_printf ("%s cannot run a container here: %s", engine->name,
                                        error->message);
      else if (!g_shell_parse_argv (*options != '\0' ? options : "true", NULL,
                                    &engine->run_options, NULL))
        g_assert_not_reached ();
      else if (*options == '\0')
        g_clear_pointer (&engine->run_options, g_strfreev);
      if (engine->run_options == NULL)
        engine->run_options = g_new0 (char *, 1);
    }

  if (engine->skip != NULL)
    {
      /* One TAP line: an engine's error spans several. */
      g_strdelimit (g_strstrip (engine->skip), "\n", ' ');
      g_test_skip (engine->skip);
      return NULL;
    }
  return engine;
}

static char *
make_label (void)
{
  return g_strdup_printf ("terret-test=%08x%08x", g_random_int (), g_random_int ());
}

/* A running container of @image, labelled, kept alive by its first
 * process; its name. With @locked, no place in it takes the launcher:
 * its filesystem is read-only, and its /tmp, the one writable place, is
 * mounted noexec. */
static char *
start_container_full (Engine     *engine,
                      const char *image,
                      const char *label,
                      gboolean    locked)
{
  g_autofree char *name = g_strdup_printf ("terret-test-%08x", g_random_int ());
  g_autofree char *label_option = g_strdup_printf ("--label=%s", label);
  g_autofree char *name_option = g_strdup_printf ("--name=%s", name);
  g_autoptr(GError) error = NULL;
  g_autofree char *id = NULL;

  /* bash's read on an open stdin needs nothing but bash: the static
   * image has nothing else. */
  if (locked)
    id = engine_run (engine, &error, "run", "-d", "-i", name_option, label_option, "--read-only",
                     "--tmpfs=/tmp:rw,noexec", image, "/bin/bash", "-c", "read -r x", NULL);
  else
    id = engine_run (engine, &error, "run", "-d", "-i", name_option, label_option, image,
                     "/bin/bash", "-c", "read -r x", NULL);
  g_assert_no_error (error);
  return g_steal_pointer (&name);
}

static char *
start_container (Engine     *engine,
                 const char *image,
                 const char *label)
{
  return start_container_full (engine, image, label, FALSE);
}

static void
remove_container (Engine     *engine,
                  const char *name)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;

  /* podman waits 10 s for a first process that ignores SIGTERM. */
  if (strcmp (engine->name, "podman") == 0)
    out = engine_run (engine, &error, "rm", "-f", "-t", "0", name, NULL);
  else
    out = engine_run (engine, &error, "rm", "-f", name, NULL);
  g_assert_no_error (error);
}

static guint
count_labelled (Engine     *engine,
                const char *label)
{
  g_autofree char *filter = g_strdup_printf ("--filter=label=%s", label);
  g_autoptr(GError) error = NULL;
  g_autofree char *ids = engine_run (engine, &error, "ps", "-a", "-q", filter, NULL);
  g_auto(GStrv) lines = NULL;

  g_assert_no_error (error);
  if (*ids == '\0')
    return 0;
  lines = g_strsplit (ids, "\n", -1);
  return g_strv_length (lines);
}

/* No container of @label is left, running or stopped. */
static void
assert_no_container (Engine     *engine,
                     const char *label)
{
  for (guint i = 0; i < GONE_TRIES && count_labelled (engine, label) > 0; i++)
    g_usleep (GONE_USEC);
  g_assert_cmpuint (count_labelled (engine, label), ==, 0);
}

/* The far launcher ended in a running container: nothing of ours runs
 * there (the test image has pgrep). */
static void
assert_no_launcher_in (Engine     *engine,
                       const char *name)
{
  const char *probe = "for p in /proc/[0-9]*; do "
                      "  read -r -d '' a <$p/cmdline 2>/dev/null; "
                      "  case $a in */terret-launcher-*) echo $a;; esac; "
                      "done";
  g_autofree char *left = NULL;

  for (guint i = 0; i < GONE_TRIES; i++)
    {
      g_autoptr(GError) error = NULL;

      g_free (left);
      left = engine_run (engine, &error, "exec", name, "/bin/bash", "-c", probe, NULL);
      g_assert_no_error (error);
      if (*left == '\0')
        break;
      g_usleep (GONE_USEC);
    }
  g_assert_cmpstr (left, ==, "");
}

/* Settings for the backend of @engine: a running container @name, or a
 * disposable one of @image labelled @label. */
static GPtrArray *
backend_settings (Engine     *engine,
                  const char *mode,
                  const char *name,
                  const char *image,
                  const char *label)
{
  GPtrArray *settings = g_ptr_array_new_with_free_func (g_free);

  g_ptr_array_add (settings, g_strdup_printf ("mode=%s", mode));
  if (name != NULL)
    g_ptr_array_add (settings, g_strdup_printf ("container=%s", name));
  else
    {
      g_autoptr(GString) options = g_string_new (NULL);

      g_string_append_printf (options, "--label=%s", label);
      for (guint i = 0; engine->run_options[i] != NULL; i++)
        g_string_append_printf (options, ";%s", engine->run_options[i]);
      g_ptr_array_add (settings, g_strdup_printf ("image=%s", image));
      g_ptr_array_add (settings, g_strdup_printf ("engine-options=%s", options->str));
    }
  return settings;
}

static TerretExecutor *
new_backend (Engine     *engine,
             GPtrArray  *settings,
             GError    **error)
{
  g_ptr_array_add (settings, NULL);
  return terret_executor_new_with_settings (engine->name, (const char * const *)settings->pdata,
                                            error);
}

/* --- Containment ---------------------------------------------------------- */

typedef struct
{
  const char *engine;
  const char *mode;
  gboolean image;
  TerretTestEnd end;
  gboolean detach;
  gboolean host_killed;
} Case;

static void
test_containment (gconstpointer data)
{
  const Case *c = data;
  Engine *engine = require_engine (c->engine);
  g_autofree char *label = NULL;
  g_autofree char *name = NULL;
  g_autoptr(GPtrArray) settings = NULL;

  g_test_summary ("Nothing a command starts in the container (setsid, nohup, double-forked, "
                  "HUP-ignoring jobs) outlives its end by close, timeout, cancel, disposal or "
                  "the host's SIGKILL; nor does the far launcher, nor a disposable container.");
  if (engine == NULL)
    return;

  label = make_label ();
  if (!c->image)
    name = start_container (engine, "terret-test-bash", label);
  settings = backend_settings (engine, c->mode, name, "terret-test-bash", label);

  if (c->host_killed)
    {
      g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func (g_free);

      g_ptr_array_add (args, g_strdup ("serve"));
      g_ptr_array_add (args, g_strdup ("--backend"));
      g_ptr_array_add (args, g_strdup (engine->name));
      for (guint i = 0; i < settings->len; i++)
        {
          g_ptr_array_add (args, g_strdup ("--set"));
          g_ptr_array_add (args, g_strdup (g_ptr_array_index (settings, i)));
        }
      g_ptr_array_add (args, NULL);
      terret_test_containment_host_killed ((const char * const *)args->pdata, c->detach);
    }
  else
    {
      g_autoptr(GError) error = NULL;
      TerretExecutor *executor = new_backend (engine, settings, &error);

      g_assert_no_error (error);
      terret_test_containment_check (executor, c->end, c->detach);
    }

  if (c->image)
    assert_no_container (engine, label);
  else
    {
      assert_no_launcher_in (engine, name);
      remove_container (engine, name);
    }
}

/* --- Images with nothing but bash ----------------------------------------- */

static void
test_static (gconstpointer data)
{
  const Case *c = data;
  Engine *engine = require_engine (c->engine);
  g_autofree char *label = NULL;
  g_autofree char *name = NULL;
  g_autoptr(GPtrArray) settings = NULL;
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  g_test_summary ("The static launcher serves a command in an image with no C library at all "
                  "(bash-static alone), copied into a running container or bind-mounted into a "
                  "disposable one.");
  if (engine == NULL)
    return;

  label = make_label ();
  if (!c->image)
    name = start_container (engine, "terret-test-static", label);
  settings = backend_settings (engine, c->mode, name, "terret-test-static", label);
  executor = new_backend (engine, settings, &error);
  g_assert_no_error (error);

  result = terret_test_run_ok (executor, "cd /tmp && echo \"static $BASH_VERSION\" && "
                                         "[[ -e /lib/x86_64-linux-gnu/libc.so.6 ]] || echo no-libc");
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 0);
  g_assert_nonnull (strstr (g_bytes_get_data (terret_result_get_stdout (result), NULL), "no-libc"));
  g_clear_object (&result);
  result = terret_test_run_ok (executor, "echo $PWD; exit 4");
  g_assert_true (terret_result_get_exited (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 4);
  /* A session kept its cd; a one-shot command starts afresh. */
  terret_test_assert_bytes_str (terret_result_get_stdout (result),
                                strcmp (c->mode, "session") == 0 ? "/tmp\n" : "/\n");
  g_clear_object (&executor);

  if (c->image)
    assert_no_container (engine, label);
  else
    remove_container (engine, name);
}

/* --- A shell stuck in its start-up ---------------------------------------- */

static void
test_handshake_stuck (gconstpointer data)
{
  Engine *engine = require_engine (data);
  g_autofree char *label = NULL;
  g_autofree char *name = NULL;
  g_autofree char *out = NULL;
  g_autoptr(GPtrArray) settings = NULL;
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  g_test_summary ("A container session's shell that never answers its handshake, its start-up "
                  "waiting: the error names what it was still running, as the far side's unit "
                  "tells it.");
  if (engine == NULL)
    return;

  label = make_label ();
  name = start_container (engine, "terret-test-bash", label);
  out = engine_run (engine, &error, "exec", name, "/bin/bash", "-c",
                    "printf '#!/bin/bash\\nsleep 600\\nexec bash \"$@\"\\n' > /tmp/stuck-shell && "
                    "chmod +x /tmp/stuck-shell", NULL);
  g_assert_no_error (error);

  settings = backend_settings (engine, "session", name, NULL, NULL);
  g_ptr_array_add (settings, g_strdup ("shell=/tmp/stuck-shell"));
  g_ptr_array_add (settings, g_strdup ("handshake-timeout=2"));
  executor = new_backend (engine, settings, &error);
  g_assert_no_error (error);

  request = terret_request_new ("true");
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "start-up"));
  g_assert_nonnull (strstr (error->message, "`sleep 600`"));
  g_clear_object (&executor);

  assert_no_launcher_in (engine, name);
  remove_container (engine, name);
}

/* --- Failures --------------------------------------------------------------- */

static void
test_failures (gconstpointer data)
{
  const char *engine_name = data;
  Engine *engine = require_engine (engine_name);
  const char *modes[] = { "session", "oneshot" };
  g_autofree char *label = NULL;
  g_autofree char *stopped = NULL;
  g_autofree char *stopped_option = NULL;

  g_test_summary ("An unknown image, an unknown or stopped container and a missing engine are "
                  "clear errors naming them; settings that hold on this host only are refused.");
  if (engine == NULL)
    return;

  label = make_label ();
  stopped = g_strdup_printf ("terret-test-stopped-%08x", g_random_int ());
  stopped_option = g_strdup_printf ("--name=%s", stopped);
  {
    g_autoptr(GError) error = NULL;
    g_autofree char *label_option = g_strdup_printf ("--label=%s", label);
    g_autofree char *id = engine_run (engine, &error, "create", stopped_option, label_option,
                                      "terret-test-bash", "true", NULL);

    g_assert_no_error (error);
  }

  for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
    {
      const char *mode = modes[m];
      g_autoptr(GError) error = NULL;
      g_autoptr(TerretExecutor) unknown_image = NULL;
      g_autoptr(TerretExecutor) unknown_container = NULL;
      g_autoptr(TerretExecutor) stopped_container = NULL;
      g_autoptr(TerretExecutor) executor = NULL;
      g_autofree char *mode_setting = g_strdup_printf ("mode=%s", mode);
      g_autofree char *image_setting = g_strdup_printf ("image=terret-test-no-such-image-%08x",
                                                        g_random_int ());
      g_autofree char *stopped_setting = g_strdup_printf ("container=%s", stopped);
      const char *image_settings[] = { mode_setting, image_setting, NULL };
      const char *unknown_settings[] = { mode_setting, "container=terret-test-no-such-container",
                                         NULL };
      const char *stopped_settings[] = { mode_setting, stopped_setting, NULL };
      const char *missing[] = { mode_setting, "container=x", "engine-path=/terret-no-such-dir/engine",
                                NULL };
      const char *sandboxed[] = { mode_setting, "container=x", "sandbox=read-only", NULL };
      const char *other_mode[] = { mode_setting, "container=x",
                                   m == 0 ? "drain-grace=1" : "handshake-timeout=5", NULL };
      const char *network_off[] = { mode_setting, stopped_setting, "network=off", NULL };

      unknown_image = terret_executor_new_with_settings (engine->name, image_settings, &error);
      g_assert_no_error (error);
      terret_test_assert_run_fails (unknown_image, TERRET_EXEC_ERROR_UNAVAILABLE,
                                    "terret-test-no-such-image");

      unknown_container = terret_executor_new_with_settings (engine->name, unknown_settings, &error);
      g_assert_no_error (error);
      terret_test_assert_run_fails (unknown_container, TERRET_EXEC_ERROR_UNAVAILABLE,
                        "terret-test-no-such-container");

      stopped_container = terret_executor_new_with_settings (engine->name, stopped_settings, &error);
      g_assert_no_error (error);
      terret_test_assert_run_fails (stopped_container, TERRET_EXEC_ERROR_UNAVAILABLE, stopped);

      /* Without the launcher too: found when the executor is made. */
      {
        const char *none_settings[] = { mode_setting, stopped_setting, "launcher=none", NULL };

        executor = terret_executor_new_with_settings (engine->name, none_settings, &error);
        g_assert_null (executor);
        g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE);
        g_assert_nonnull (strstr (error->message, stopped));
        g_clear_error (&error);
      }

      executor = terret_executor_new_with_settings (engine->name, missing, &error);
      g_assert_null (executor);
      g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE);
      g_assert_nonnull (strstr (error->message, "/terret-no-such-dir/engine"));
      g_clear_error (&error);

      executor = terret_executor_new_with_settings (engine->name, sandboxed, &error);
      g_assert_null (executor);
      g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG);
      g_assert_nonnull (strstr (error->message, "sandbox"));
      g_clear_error (&error);

      executor = terret_executor_new_with_settings (engine->name, other_mode, &error);
      g_assert_null (executor);
      g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG);
      g_assert_nonnull (strstr (error->message, m == 0 ? "mode=oneshot" : "mode=session"));
      g_clear_error (&error);

      executor = terret_executor_new_with_settings (engine->name, network_off, &error);
      g_assert_no_error (error);
      terret_test_assert_run_fails (executor, TERRET_EXEC_ERROR_INVALID_CONFIG, "network=off");
    }

  remove_container (engine, stopped);
  assert_no_container (engine, label);
}

/* --- Limits and network of a disposable container --------------------------- */

static void
test_disposable_policy (gconstpointer data)
{
  const Case *c = data;
  Engine *engine = require_engine (c->engine);
  g_autofree char *label = NULL;
  g_autoptr(GPtrArray) settings = NULL;
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  g_test_summary ("On a disposable container limit-memory and limit-processes are the engine's "
                  "cgroup limits for the container, the other limits rlimits of each process, "
                  "and network=off leaves it loopback only.");
  if (engine == NULL)
    return;

  label = make_label ();
  settings = backend_settings (engine, c->mode, NULL, "terret-test-bash", label);
  g_ptr_array_add (settings, g_strdup ("limit-memory=64M"));
  g_ptr_array_add (settings, g_strdup ("limit-processes=50"));
  g_ptr_array_add (settings, g_strdup ("limit-open-files=40"));
  g_ptr_array_add (settings, g_strdup ("network=off"));
  executor = new_backend (engine, settings, &error);
  g_assert_no_error (error);

  result = terret_test_run_ok (executor,
                               "cat /sys/fs/cgroup/pids.max 2>/dev/null || "
                               "cat /sys/fs/cgroup/pids/pids.max; "
                               "cat /sys/fs/cgroup/memory.max 2>/dev/null || "
                               "cat /sys/fs/cgroup/memory/memory.limit_in_bytes; "
                               "ulimit -n; "
                               "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '");
  terret_test_assert_bytes_str (terret_result_get_stdout (result), "50\n67108864\n40\nlo\n");
  g_clear_object (&executor);
  assert_no_container (engine, label);
}

/* --- A pod from podman kube play -------------------------------------------- */

/* podman kube play takes no run options: the runtime and rlimits `run`
 * needs here go in a containers.conf of the test's own. */
static char *
write_containers_conf (Engine     *engine,
                       const char *dir)
{
  g_autoptr(GString) conf = g_string_new ("[containers]\ndefault_ulimits = [");
  g_autofree char *path = g_build_filename (dir, "containers.conf", NULL);
  g_autofree char *runtime = NULL;
  g_autoptr(GError) error = NULL;
  gboolean first = TRUE;

  for (guint i = 0; engine->run_options[i] != NULL; i++)
    {
      const char *option = engine->run_options[i];

      if (g_str_has_prefix (option, "--ulimit="))
        {
          g_string_append_printf (conf, "%s\"%s\"", first ? "" : ", ", option + strlen ("--ulimit="));
          first = FALSE;
        }
      else if (g_str_has_prefix (option, "--runtime="))
        runtime = g_strdup (option + strlen ("--runtime="));
    }
  g_string_append (conf, "]\n");
  if (runtime != NULL)
    g_string_append_printf (conf, "\n[engine]\nruntime = \"%s\"\n", runtime);
  g_file_set_contents (path, conf->str, -1, &error);
  g_assert_no_error (error);
  return g_steal_pointer (&path);
}

static void
test_kube_play (void)
{
  Engine *engine = require_engine ("podman");
  g_autofree char *dir = NULL;
  g_autofree char *manifest = NULL;
  g_autofree char *yaml = NULL;
  g_autofree char *conf = NULL;
  g_autofree char *pod = NULL;
  g_autofree char *container = NULL;
  g_autofree char *out = NULL;
  g_autoptr(GError) error = NULL;
  const char *modes[] = { "session", "oneshot" };

  g_test_summary ("A Pod run by podman kube play is a real pod the podman backend serves, in "
                  "both modes, and nothing is left in it after.");
  if (engine == NULL)
    return;

  dir = terret_test_make_tmpdir ();
  pod = g_strdup_printf ("terret-test-pod-%08x", g_random_int ());
  container = g_strdup_printf ("%s-c", pod);
  yaml = g_strdup_printf ("apiVersion: v1\n"
                          "kind: Pod\n"
                          "metadata:\n"
                          "  name: %s\n"
                          "spec:\n"
                          "  restartPolicy: Never\n"
                          "  containers:\n"
                          "  - name: c\n"
                          "    image: localhost/terret-test-bash:latest\n"
                          "    imagePullPolicy: Never\n"
                          "    command: [\"/bin/sleep\", \"infinity\"]\n", pod);
  manifest = g_build_filename (dir, "pod.yaml", NULL);
  g_file_set_contents (manifest, yaml, -1, &error);
  g_assert_no_error (error);
  conf = write_containers_conf (engine, dir);

  {
    const char *argv[] = { "env", NULL, "podman", "kube", "play", "--network=none", manifest, NULL };
    g_autofree char *env = g_strdup_printf ("CONTAINERS_CONF=%s", conf);

    argv[1] = env;
    out = terret_test_run_argv (argv, &error);
    g_assert_no_error (error);
  }

  for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
    {
      g_autoptr(GPtrArray) settings = backend_settings (engine, modes[m], container, NULL, NULL);
      g_autoptr(TerretExecutor) executor = new_backend (engine, settings, &error);
      g_autoptr(TerretResult) result = NULL;
      g_autofree char *expected = g_strdup_printf ("%s\n", pod);

      g_assert_no_error (error);
      result = terret_test_run_ok (executor, "echo $(</etc/hostname)");
      terret_test_assert_bytes_str (terret_result_get_stdout (result), expected);
      terret_test_containment_check (g_steal_pointer (&executor), TERRET_TEST_END_CLOSE,
                                     m == 1);
      assert_no_launcher_in (engine, container);
    }

  {
    g_autofree char *removed = engine_run (engine, &error, "pod", "rm", "-f", "-t", "0", pod, NULL);

    g_assert_no_error (error);
  }
}

/* --- Without the launcher ---------------------------------------------------- */

static TerretExecutor *
new_in_container (Engine      *engine,
                  const char  *mode,
                  const char  *name,
                  const char  *first_setting,
                  ...)
{
  g_autoptr(GPtrArray) settings = backend_settings (engine, mode, name, NULL, NULL);
  g_autoptr(GError) error = NULL;
  TerretExecutor *executor;
  const char *setting;
  va_list args;

  va_start (args, first_setting);
  for (setting = first_setting; setting != NULL; setting = va_arg (args, const char *))
    g_ptr_array_add (settings, g_strdup (setting));
  va_end (args);
  executor = new_backend (engine, settings, &error);
  g_assert_no_error (error);
  return executor;
}

/* Status, both streams, the directory and the environment given, and
 * nothing of this host's environment; in session mode, what a run sets
 * is there for the next. The first result says the containment is none
 * when @notice is set, and no later one does. */
static void
assert_runs_plain (TerretExecutor *executor,
                   const char     *mode,
                   gboolean        notice)
{
  gboolean session = strcmp (mode, "session") == 0;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  /* G_TEST_SRCDIR is in this host's environment (meson sets it). */
  g_assert_nonnull (g_getenv ("G_TEST_SRCDIR"));
  result = terret_test_run_command (executor,
                                    "echo out; echo err >&2; pwd; "
                                    "echo \"$TERRET_TEST_GIVEN/${G_TEST_SRCDIR-unset}\"; "
                                    "(exit 3)", &error);
  g_assert_no_error (error);
  g_assert_true (terret_result_get_exited (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, 3);
  if (session)
    terret_test_assert_bytes_str (terret_result_get_stdout (result), "out\nerr\n/tmp\ngiven/unset\n");
  else
    {
      terret_test_assert_bytes_str (terret_result_get_stdout (result), "out\n/tmp\ngiven/unset\n");
      terret_test_assert_bytes_str (terret_result_get_stderr (result), "err\n");
    }
  if (notice)
    {
      g_assert_nonnull (terret_result_get_notice (result));
      g_assert_nonnull (strstr (terret_result_get_notice (result), "containment none"));
    }
  else
    g_assert_null (terret_result_get_notice (result));
  g_clear_object (&result);

  if (session)
    {
      result = terret_test_run_ok (executor, "cd /; export TERRET_TEST_SET=kept");
      g_assert_null (terret_result_get_notice (result));
      g_clear_object (&result);
      result = terret_test_run_ok (executor, "echo \"$TERRET_TEST_SET\"; pwd");
      terret_test_assert_bytes_str (terret_result_get_stdout (result), "kept\n/\n");
    }
  else
    {
      result = terret_test_run_ok (executor, "echo again");
      terret_test_assert_bytes_str (terret_result_get_stdout (result), "again\n");
    }
  g_assert_null (terret_result_get_notice (result));
}

static void
assert_containment_none (TerretExecutor *executor,
                         const char     *why)
{
  g_autofree char *containment = terret_executor_dup_containment (executor);

  g_assert_true (g_str_has_prefix (containment, "none: "));
  g_assert_nonnull (strstr (containment, "moby/moby#35703"));
  if (strstr (containment, why) == NULL)
    g_error ("“%s” does not say “%s”", containment, why);
}

static void
test_fallback (gconstpointer data)
{
  const Case *c = data;
  Engine *engine = require_engine (c->engine);
  /* Where the launcher was refused, in the engine's words: podman copies
   * it into the tmpfs and cannot run it there, docker cannot copy it
   * into a container whose root is read-only. */
  const char *why = strcmp (c->engine, "podman") == 0 ? "permission denied" : "read-only";
  g_autofree char *label = NULL;
  g_autofree char *name = NULL;
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(TerretExecutor) required = NULL;
  g_autoptr(TerretExecutor) limited = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  g_autofree char *containment = NULL;

  g_test_summary ("Where the launcher cannot be put in place or cannot run (a read-only "
                  "container whose /tmp is noexec), launcher=auto runs plain bash through the "
                  "engine's exec and says containment none, in dup_containment and the first "
                  "result; launcher=required is unavailable naming the cause; a limit is "
                  "refused rather than run without.");
  if (engine == NULL)
    return;

  label = make_label ();
  name = start_container_full (engine, "terret-test-bash", label, TRUE);

  /* The container is what this is about: nothing can be written but
   * /tmp, and nothing there runs; and yet it runs commands. */
  out = engine_run (engine, &error, "exec", name, "/bin/bash", "-c",
                    "touch /terret-test 2>/dev/null && echo writable; "
                    "cp /bin/true /tmp/terret-test && /tmp/terret-test 2>/dev/null && echo runs; "
                    "echo checked", NULL);
  g_assert_no_error (error);
  g_assert_cmpstr (out, ==, "checked");
  g_clear_pointer (&out, g_free);

  executor = new_in_container (engine, c->mode, name, "cwd=/tmp", "env=TERRET_TEST_GIVEN=given",
                               NULL);
  containment = terret_executor_dup_containment (executor);
  g_assert_nonnull (strstr (containment, "under terret-launcher"));
  assert_runs_plain (executor, c->mode, TRUE);
  assert_containment_none (executor, why);
  assert_containment_none (executor, "launcher=auto");
  g_clear_object (&executor);

  required = new_in_container (engine, c->mode, name, "launcher=required", NULL);
  terret_test_assert_run_fails (required, TERRET_EXEC_ERROR_UNAVAILABLE, why);
  g_clear_pointer (&containment, g_free);
  containment = terret_executor_dup_containment (required);
  g_assert_nonnull (strstr (containment, "under terret-launcher"));

  /* The limit is refused once the fallback is known: never run without. */
  limited = new_in_container (engine, c->mode, name, "limit-processes=50", NULL);
  terret_test_assert_run_fails (limited, TERRET_EXEC_ERROR_INVALID_CONFIG, "limit-processes");
  assert_containment_none (limited, why);

  remove_container (engine, name);
  assert_no_container (engine, label);
}

static void
test_launcher_none (gconstpointer data)
{
  const Case *c = data;
  Engine *engine = require_engine (c->engine);
  g_autofree char *label = NULL;
  g_autofree char *name = NULL;
  g_autoptr(TerretExecutor) executor = NULL;
  g_autoptr(GPtrArray) settings = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *mode_setting = g_strdup_printf ("mode=%s", c->mode);
  const char *with_image[] = { mode_setting, "image=terret-test-bash", "launcher=none", NULL };

  g_test_summary ("launcher=none runs plain bash through the engine's exec in a container the "
                  "launcher could serve, says containment none, and refuses limits and an "
                  "image.");
  if (engine == NULL)
    return;

  label = make_label ();
  name = start_container (engine, "terret-test-bash", label);

  executor = new_in_container (engine, c->mode, name, "launcher=none", "cwd=/tmp",
                               "env=TERRET_TEST_GIVEN=given", NULL);
  assert_containment_none (executor, "launcher=none");
  assert_runs_plain (executor, c->mode, FALSE);
  g_clear_object (&executor);
  /* Nothing of the launcher's was put there. */
  {
    g_autofree char *out = engine_run (engine, &error, "exec", name, "/bin/bash", "-c",
                                       "echo /tmp/terret-launcher-*", NULL);

    g_assert_no_error (error);
    g_assert_cmpstr (out, ==, "/tmp/terret-launcher-*");
  }

  settings = backend_settings (engine, c->mode, name, NULL, NULL);
  g_ptr_array_add (settings, g_strdup ("launcher=none"));
  g_ptr_array_add (settings, g_strdup ("limit-memory=64M"));
  executor = new_backend (engine, settings, &error);
  g_assert_null (executor);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG);
  g_assert_nonnull (strstr (error->message, "limit-memory"));
  g_clear_error (&error);

  executor = terret_executor_new_with_settings (engine->name, with_image, &error);
  g_assert_null (executor);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG);
  g_assert_nonnull (strstr (error->message, "launcher=none"));
  g_clear_error (&error);

  remove_container (engine, name);
  assert_no_container (engine, label);
}

/* `terret-exec --check` in a container the launcher cannot serve. */
static void
test_fallback_check (void)
{
  Engine *engine = require_engine ("podman");
  g_autofree char *label = NULL;
  g_autofree char *name = NULL;
  g_autofree char *container = NULL;
  g_autofree char *out = NULL;
  g_autoptr(GError) error = NULL;

  g_test_summary ("terret-exec --check says containment none, and why, once its probe fell "
                  "back.");
  if (engine == NULL)
    return;

  label = make_label ();
  name = start_container_full (engine, "terret-test-bash", label, TRUE);
  container = g_strdup_printf ("container=%s", name);
  {
    const char *argv[] = { terret_test_cli_path (), "--backend", "podman", "--set", container,
                           "--check", NULL };

    out = terret_test_run_argv (argv, &error);
    g_assert_no_error (error);
  }
  g_assert_nonnull (strstr (out, "\ncontainment: none: "));
  g_assert_nonnull (strstr (out, "permission denied"));
  g_assert_nonnull (strstr (out, "\nprobe: a command ran"));

  remove_container (engine, name);
  assert_no_container (engine, label);
}

/* --- Main ------------------------------------------------------------------- */

static void
add_case (const char *path,
          const Case *c,
          GTestDataFunc func)
{
  Case *copy = g_memdup2 (c, sizeof *c);

  g_test_add_data_func_full (path, copy, func, g_free);
}

int
main (int   argc,
      char *argv[])
{
  static const struct { const char *name; TerretTestEnd end; gboolean detach; gboolean host_killed; }
    session_ends[] = {
      { "close", TERRET_TEST_END_CLOSE, FALSE, FALSE },
      { "close-detached", TERRET_TEST_END_CLOSE, TRUE, FALSE },
      { "timeout", TERRET_TEST_END_TIMEOUT, FALSE, FALSE },
      { "cancel", TERRET_TEST_END_CANCEL, FALSE, FALSE },
      { "dispose", TERRET_TEST_END_DISPOSE, FALSE, FALSE },
      { "host-killed", TERRET_TEST_END_CLOSE, FALSE, TRUE },
    },
    oneshot_ends[] = {
      { "run-end", TERRET_TEST_END_RUN, FALSE, FALSE },
      { "timeout", TERRET_TEST_END_TIMEOUT, FALSE, FALSE },
      { "cancel", TERRET_TEST_END_CANCEL, FALSE, FALSE },
      { "close-detached", TERRET_TEST_END_CLOSE, TRUE, FALSE },
      { "dispose-detached", TERRET_TEST_END_DISPOSE, TRUE, FALSE },
      { "host-killed", TERRET_TEST_END_CLOSE, TRUE, TRUE },
    };
  const char *modes[] = { "session", "oneshot" };

  terret_test_init (&argc, &argv);

  for (guint e = 0; e < G_N_ELEMENTS (engines); e++)
    {
      const char *engine = engines[e].name;

      for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
        for (guint image = 0; image < 2; image++)
          {
            guint n = m == 0 ? G_N_ELEMENTS (session_ends) : G_N_ELEMENTS (oneshot_ends);
            const char *where = image ? "image" : "container";

            for (guint i = 0; i < n; i++)
              {
                const char *end = m == 0 ? session_ends[i].name : oneshot_ends[i].name;
                g_autofree char *path = g_strdup_printf ("/containers/%s/%s/%s/containment/%s",
                                                         engine, modes[m], where, end);
                Case c = { engine, modes[m], image,
                           m == 0 ? session_ends[i].end : oneshot_ends[i].end,
                           m == 0 ? session_ends[i].detach : oneshot_ends[i].detach,
                           m == 0 ? session_ends[i].host_killed : oneshot_ends[i].host_killed };

                add_case (path, &c, test_containment);
              }
            {
              g_autofree char *path = g_strdup_printf ("/containers/%s/%s/%s/static-image", engine,
                                                       modes[m], where);
              Case c = { engine, modes[m], image, 0, FALSE, FALSE };

              add_case (path, &c, test_static);
            }
          }
      {
        g_autofree char *path = g_strdup_printf ("/containers/%s/failures", engine);
        g_autofree char *stuck = g_strdup_printf ("/containers/%s/session/container/handshake-stuck",
                                                  engine);

        g_test_add_data_func (path, engine, test_failures);
        g_test_add_data_func (stuck, engine, test_handshake_stuck);
      }
      for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
        {
          g_autofree char *path = g_strdup_printf ("/containers/%s/%s/image/policy", engine,
                                                   modes[m]);
          Case c = { engine, modes[m], TRUE, 0, FALSE, FALSE };

          add_case (path, &c, test_disposable_policy);
        }
      for (guint m = 0; m < G_N_ELEMENTS (modes); m++)
        {
          g_autofree char *fallback = g_strdup_printf ("/containers/%s/%s/container/fallback",
                                                       engine, modes[m]);
          g_autofree char *none = g_strdup_printf ("/containers/%s/%s/container/launcher-none",
                                                   engine, modes[m]);
          Case c = { engine, modes[m], FALSE, 0, FALSE, FALSE };

          add_case (fallback, &c, test_fallback);
          add_case (none, &c, test_launcher_none);
        }
    }
  g_test_add_func ("/containers/podman/kube-play", test_kube_play);
  g_test_add_func ("/containers/podman/fallback-check", test_fallback_check);

  return g_test_run ();
}
