/* terret-exec-check.c: `terret-exec --check`, what holds on this host
 *
 * The configured backend and policy, said in full, then tried: a probe
 * command runs through the executor as every command would, so a sandbox
 * that cannot be set up, a missing bwrap, a refused user namespace or a
 * shell that does not start is found here, with the message a run would
 * get, and the exit status says whether the policy holds.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdlib.h>

#include "terret-exec-common.h"

static void
say_setting (TerretExecutor *executor,
             const char     *name)
{
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (executor), name);
  g_auto(GValue) value = G_VALUE_INIT;
  g_autofree char *text = NULL;

  if (pspec == NULL)
    return;
  g_value_init (&value, G_PARAM_SPEC_VALUE_TYPE (pspec));
  g_object_get_property (G_OBJECT (executor), name, &value);
  if (G_VALUE_HOLDS_ENUM (&value))
    {
      GEnumValue *nick = g_enum_get_value (g_type_class_peek (G_VALUE_TYPE (&value)),
                                           g_value_get_enum (&value));

      text = g_strdup (nick != NULL ? nick->value_nick : "?");
    }
  else if (G_VALUE_HOLDS (&value, G_TYPE_STRV))
    text = g_value_get_boxed (&value) != NULL
      ? g_strjoinv (",", g_value_get_boxed (&value)) : g_strdup ("(default)");
  else if (G_VALUE_HOLDS_STRING (&value) && g_value_get_string (&value) == NULL)
    text = g_strdup ("(unset)");
  else
    text = g_strdup_value_contents (&value);
  g_print ("  %s: %s\n", name, text);
}

/*
 * cli_check:
 *
 * Prints what @executor holds here and tries it. Returns the exit code:
 * 0 when the policy holds, 1 when it cannot.
 */
int
cli_check (TerretExecutor *executor)
{
  static const char * const policy[] = {
    "sandbox", "workspace", "writable", "hidden", "unhide", "network", "allow-unix-sockets",
    "env-policy", "env-exclude",
    "limit-memory", "limit-processes", "limit-cpu", "limit-file-size", "limit-open-files",
  };
  g_autofree char *containment = NULL;
  g_autoptr(TerretRequest) request = terret_request_new ("true");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;

  /* Tried first, said after: what holds may be known only once a command
   * ran (a container backend that could not put its launcher in place). */
  terret_request_set_session (request, "terret-exec-check");
  terret_request_set_timeout (request, 60);
  result = terret_executor_run (executor, request, NULL, &error);
  terret_executor_close_all (executor);
  containment = terret_executor_dup_containment (executor);

  g_print ("backend: %s\n", terret_executor_get_name (executor));
  g_print ("containment: %s\n", containment != NULL ? containment : "not described by the backend");
  g_print ("policy:\n");
  for (guint i = 0; i < G_N_ELEMENTS (policy); i++)
    say_setting (executor, policy[i]);

  if (result == NULL)
    {
      g_print ("probe: FAILED: %s\n", error->message);
      return EXIT_FAILURE;
    }
  if (!terret_result_get_exited (result) || terret_result_get_exit_status (result) != 0)
    {
      g_print ("probe: FAILED: `true` did not end with status 0%s%s\n",
               terret_result_get_notice (result) != NULL ? ": " : "",
               terret_result_get_notice (result) != NULL ? terret_result_get_notice (result) : "");
      return EXIT_FAILURE;
    }
  g_print ("probe: a command ran under this policy\n");
  return EXIT_SUCCESS;
}
