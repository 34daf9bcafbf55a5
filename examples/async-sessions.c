/* async-sessions.c: several sessions at once on one executor and one main loop
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Usage: async-sessions [BACKEND]
 *
 * Starts three sessions that print a few lines each, slowly, and a fourth
 * that would run for a minute. Output is printed as it arrives, through
 * each request's progress callback, interleaved across sessions. Once the
 * three have finished, the fourth is cancelled with its GCancellable.
 *
 * Exits 0 when every run behaved as expected: the three exited with status
 * 0 and exactly their lines as output, and the fourth failed with
 * G_IO_ERROR_CANCELLED. Exits 77 (skipped) on a backend that runs no
 * commands, 1 otherwise.
 */

#include <stdio.h>
#include <string.h>

#include <terret-exec.h>

#define N_SESSIONS 3
#define LINES "for i in 1 2 3; do echo \"$KEY line $i\"; sleep 0.1; done"

typedef struct _App App;

typedef struct
{
  App *app;                     /* (unowned) */
  char *key;                    /* (owned) */
  char *expected;               /* (owned) (nullable) NULL: expect a cancellation */
  GString *heard;               /* (owned) what the progress callback got */
} Session;

struct _App
{
  TerretExecutor *executor;     /* (owned) */
  GMainLoop *loop;              /* (owned) */
  GCancellable *cancellable;    /* (owned) for the long run */
  TerretCapabilities caps;
  guint pending;
  guint finished;
  gboolean ok;
};

static void
session_free (Session *session)
{
  g_free (session->key);
  g_free (session->expected);
  g_string_free (session->heard, TRUE);
  g_free (session);
}

static void
fail (App        *app,
      const char *key,
      const char *what)
{
  g_printerr ("[%s] unexpected: %s\n", key, what);
  app->ok = FALSE;
}

/* Called on this thread's main context whenever output arrives: whole
 * lines or chunks, depending on the backend. */
static void
on_progress (TerretRequest *request,
             TerretStream   stream,
             GBytes        *data,
             gpointer       user_data)
{
  Session *session = user_data;
  gsize len;
  const char *bytes = g_bytes_get_data (data, &len);

  g_string_append_len (session->heard, bytes, len);
  printf ("[%s %s] ", session->key, stream == TERRET_STREAM_STDERR ? "stderr" : "stdout");
  fwrite (bytes, 1, len, stdout);
  if (len > 0 && bytes[len - 1] != '\n')
    putchar ('\n');
  fflush (stdout);
}

static void
check_result (Session      *session,
              TerretResult *result)
{
  App *app = session->app;
  gsize len;
  const char *out = g_bytes_get_data (terret_result_get_stdout (result), &len);

  printf ("[%s] finished: status %d%s%s\n", session->key,
          terret_result_get_exit_status (result),
          terret_result_get_notice (result) != NULL ? ", notice: " : "",
          terret_result_get_notice (result) != NULL ? terret_result_get_notice (result) : "");

  if (session->expected == NULL)
    fail (app, session->key, "the run was not cancelled");
  else if (!terret_result_get_exited (result) || terret_result_get_exit_status (result) != 0)
    fail (app, session->key, "the command did not exit with status 0");
  else if (len != strlen (session->expected) || memcmp (out, session->expected, len) != 0)
    fail (app, session->key, "the output is not what the command printed");
  else if ((app->caps & TERRET_CAPABILITY_PROGRESS) &&
           (session->heard->len != len || memcmp (session->heard->str, out, len) != 0))
    fail (app, session->key, "the progress callback did not see the whole output");
}

static void
on_run_done (GObject      *source,
             GAsyncResult *res,
             gpointer      user_data)
{
  Session *session = user_data;
  App *app = session->app;
  g_autoptr(GError) error = NULL;
  g_autoptr(TerretResult) result = NULL;

  result = terret_executor_run_finish (TERRET_EXECUTOR (source), res, &error);

  if (result != NULL)
    check_result (session, result);
  else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      printf ("[%s] cancelled, as asked: %s\n", session->key, error->message);
      if (session->expected != NULL)
        fail (app, session->key, "a run that was not cancelled reported a cancellation");
    }
  else
    fail (app, session->key, error->message);

  /* Once the others are done, stop the long one. */
  if (session->expected != NULL && ++app->finished == N_SESSIONS)
    {
      printf ("cancelling the long run\n");
      g_cancellable_cancel (app->cancellable);
    }

  if (--app->pending == 0)
    g_main_loop_quit (app->loop);
}

static void
start (App        *app,
       GPtrArray  *sessions,
       const char *key,
       const char *command,
       const char *expected,
       double      timeout)
{
  g_autoptr(TerretRequest) request = terret_request_new (command);
  Session *session = g_new0 (Session, 1);

  session->app = app;
  session->key = g_strdup (key);
  session->expected = g_strdup (expected);
  session->heard = g_string_new (NULL);
  g_ptr_array_add (sessions, session);

  /* Each key is its own session: runs on different keys go on at once. */
  terret_request_set_session (request, key);
  terret_request_set_timeout (request, timeout);
  terret_request_set_progress_func (request, on_progress, session, NULL);

  app->pending++;
  terret_executor_run_async (app->executor, request,
                             expected == NULL ? app->cancellable : NULL,
                             on_run_done, session);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) sessions = g_ptr_array_new_with_free_func ((GDestroyNotify)session_free);
  App app = { 0 };

  if (argc > 2)
    {
      g_printerr ("usage: %s [BACKEND]\n", argv[0]);
      return 2;
    }

  app.executor = argc > 1 ? terret_executor_new (argv[1], &error)
                          : terret_executor_new_default (&error);
  if (app.executor == NULL)
    {
      g_printerr ("no executor: %s\n", error->message);
      return 1;
    }

  app.caps = terret_executor_get_capabilities (app.executor);
  printf ("backend: %s\n", terret_executor_get_name (app.executor));
  if (!(app.caps & TERRET_CAPABILITY_RUNS_COMMANDS))
    {
      printf ("the %s backend runs no commands; nothing to show\n",
              terret_executor_get_name (app.executor));
      g_object_unref (app.executor);
      return 77;
    }

  app.loop = g_main_loop_new (NULL, FALSE);
  app.cancellable = g_cancellable_new ();
  app.ok = TRUE;

  for (guint i = 0; i < N_SESSIONS; i++)
    {
      g_autofree char *key = g_strdup_printf ("session-%u", i + 1);
      g_autofree char *command = g_strdup_printf ("KEY=%s; " LINES, key);
      g_autofree char *expected = g_strdup_printf ("%s line 1\n%s line 2\n%s line 3\n",
                                                key, key, key);

      start (&app, sessions, key, command, expected, 60);
    }
  start (&app, sessions, "long", "echo started; sleep 60", NULL, 120);

  g_main_loop_run (app.loop);

  /* Nothing is left running: closing is what disposal does anyway. */
  terret_executor_close_all (app.executor);

  g_clear_object (&app.cancellable);
  g_clear_pointer (&app.loop, g_main_loop_unref);
  g_clear_object (&app.executor);

  printf ("%s\n", app.ok ? "all runs behaved as expected" : "some runs did not behave as expected");
  return app.ok ? 0 : 1;
}
