/* terret-exec-conformance-util.c: how the conformance kit's checks run
 * commands and look at processes
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terret-exec-conformance-util.h"

/* Filled in by main() before any check runs. */
ConformanceKit kit;

TerretExecutor *
kit_new_executor (void)
{
  g_autoptr(GError) error = NULL;
  TerretExecutor *executor;

  executor = terret_executor_new (kit.backend, &error);
  g_assert_no_error (error);
  g_assert_nonnull (executor);

  return executor;
}

gboolean
kit_has_setting (TerretExecutor *executor,
                 const char     *name)
{
  g_autofree GParamSpec **settings = terret_executor_list_settings (executor, NULL);

  for (guint i = 0; settings[i] != NULL; i++)
    if (g_str_equal (g_param_spec_get_name (settings[i]), name))
      return TRUE;

  return FALSE;
}

void
kit_set_setting (TerretExecutor *executor,
                 const char     *key,
                 const char     *value)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (terret_executor_set_setting (executor, key, value, &error));
  g_assert_no_error (error);
}

TerretRequest *
kit_new_request (const char *command)
{
  TerretRequest *request = terret_request_new (command);

  terret_request_set_timeout (request, SAFETY_TIMEOUT);

  return request;
}

TerretResult *
kit_run_request (TerretExecutor *executor,
                 TerretRequest  *request)
{
  g_autoptr(GError) error = NULL;
  TerretResult *result;

  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_no_error (error);
  g_assert_nonnull (result);

  return result;
}

TerretResult *
kit_run_in (TerretExecutor *executor,
            const char     *session,
            const char     *command)
{
  g_autoptr(TerretRequest) request = kit_new_request (command);

  terret_request_set_session (request, session);

  return kit_run_request (executor, request);
}

TerretResult *
kit_run (TerretExecutor *executor,
         const char     *command)
{
  return kit_run_in (executor, TERRET_DEFAULT_SESSION, command);
}

void
kit_assert_bytes (GBytes     *bytes,
                  const char *expected,
                  gssize      expected_len)
{
  const guint8 *data;
  gsize len = 0;

  g_assert_nonnull (bytes);
  if (expected_len < 0)
    expected_len = strlen (expected);
  data = g_bytes_get_data (bytes, &len);
  g_assert_cmpmem (data, len, expected, expected_len);
}

char *
kit_bytes_to_string (GBytes *bytes)
{
  gsize len = 0;
  const char *data;

  g_assert_nonnull (bytes);
  data = g_bytes_get_data (bytes, &len);

  return g_strndup (data, len);
}

/* A run whose command exited with @status and wrote exactly @expected. */
void
kit_assert_exits (TerretExecutor *executor,
                  const char     *command,
                  int             status,
                  const char     *expected,
                  gssize          expected_len)
{
  g_autoptr(TerretResult) result = kit_run (executor, command);

  /* What it said instead, for whoever reads the failure. */
  if (!terret_result_get_exited (result))
    {
      g_autofree char *out = kit_bytes_to_string (terret_result_get_stdout (result));

      g_printerr ("# %s: no exit: signal %d, notice “%s”, output “%s”\n", command,
                  terret_result_get_term_signal (result),
                  terret_result_get_notice (result) != NULL ? terret_result_get_notice (result) : "",
                  out);
    }
  g_assert_true (terret_result_get_exited (result));
  g_assert_cmpint (terret_result_get_exit_status (result), ==, status);
  g_assert_cmpint (terret_result_get_term_signal (result), ==, 0);
  g_assert_false (terret_result_get_timed_out (result));
  kit_assert_bytes (terret_result_get_stdout (result), expected, expected_len);
  g_assert_cmpuint (terret_result_get_dropped (result, TERRET_STREAM_STDOUT), ==, 0);
}

void
kit_async_done (GObject      *object,
                GAsyncResult *result,
                gpointer      user_data)
{
  AsyncWait *wait = user_data;

  wait->result = g_object_ref (result);
}

TerretResult *
kit_async_finish (TerretExecutor  *executor,
                  AsyncWait       *wait,
                  GError         **error)
{
  TerretResult *result;

  while (wait->result == NULL)
    g_main_context_iteration (NULL, TRUE);

  result = terret_executor_run_finish (executor, wait->result, error);
  g_clear_object (&wait->result);

  return result;
}

/* --- /proc ------------------------------------------------------------ */

/* Reads the state and session id of a process from a /proc stat line.
 * The command name may hold spaces and parentheses; the fields resume
 * after the last ')'. */
gboolean
kit_parse_stat (const char *line,
                char       *state,
                GPid       *sid)
{
  const char *p = strrchr (line, ')');
  int ppid, pgrp, session;

  if (p == NULL || sscanf (p + 1, " %c %d %d %d", state, &ppid, &pgrp, &session) != 4)
    return FALSE;
  *sid = session;

  return TRUE;
}

gboolean
kit_read_stat (GPid  pid,
               char *state,
               GPid *sid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int)pid);
  g_autofree char *contents = NULL;

  return g_file_get_contents (path, &contents, NULL, NULL) && kit_parse_stat (contents, state, sid);
}

gboolean
kit_process_alive (GPid pid)
{
  char state;
  GPid sid;

  /* A zombie has ended; whether its parent reaped it yet is not ours. */
  return kit_read_stat (pid, &state, &sid) && state != 'Z';
}

guint
kit_count_session_members (GPid sid)
{
  g_autoptr(GDir) dir = g_dir_open ("/proc", 0, NULL);
  const char *name;
  guint count = 0;

  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      char state;
      GPid session;

      if (g_ascii_isdigit (name[0]) &&
          kit_read_stat (atoi (name), &state, &session) &&
          session == sid && state != 'Z')
        count++;
    }

  return count;
}

void
kit_assert_process_gone (GPid pid)
{
  for (guint i = 0; i < GONE_WAIT_MS / 10 && kit_process_alive (pid); i++)
    g_usleep (10 * 1000);
  g_assert_false (kit_process_alive (pid));
}

void
kit_assert_session_gone (GPid sid)
{
  for (guint i = 0; i < GONE_WAIT_MS / 10 && kit_count_session_members (sid) > 0; i++)
    g_usleep (10 * 1000);
  g_assert_cmpuint (kit_count_session_members (sid), ==, 0);
}

char *
kit_read_trimmed (const char *path)
{
  char *contents = NULL;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return NULL;

  return g_strstrip (contents);
}
