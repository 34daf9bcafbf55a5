/* test-stop.c: the stop sequence, with real programs, on pty and oneshot
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every stop is driven by an event (the program said it runs, through
 * the progress callback), never by elapsed time: the program has set up
 * its handlers before it is stopped, however busy the machine.
 */

#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "terret-test-utils.h"

typedef struct
{
  GCancellable *cancellable;
  const char *cue;              /* the line that says the program is ready */
  GString *seen;
} Cue;

static void
on_progress (TerretRequest *request,
             TerretStream   stream,
             GBytes        *data,
             gpointer       user_data)
{
  Cue *cue = user_data;
  gsize len = 0;
  const char *text = g_bytes_get_data (data, &len);

  g_string_append_len (cue->seen, text, len);
  if (cue->cancellable != NULL && strstr (cue->seen->str, cue->cue) != NULL)
    g_cancellable_cancel (cue->cancellable);
}

static TerretExecutor *
new_executor (const char *backend)
{
  g_autoptr(GError) error = NULL;
  TerretExecutor *executor = terret_executor_new (backend, &error);

  g_assert_no_error (error);
  return executor;
}

static char *
result_text (TerretResult *result)
{
  gsize len = 0;
  const char *data = g_bytes_get_data (terret_result_get_stdout (result), &len);

  return g_strndup (data, len);
}

/* Runs @command, cancels it once it printed @cue, and returns what the
 * cancelled run kept. */
static TerretResult *
run_cancelled (TerretExecutor *executor,
               const char     *command,
               const char     *cue_text,
               double          grace)
{
  g_autoptr(TerretRequest) request = terret_request_new (command);
  g_autoptr(GCancellable) cancellable = g_cancellable_new ();
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  Cue cue = { cancellable, cue_text, g_string_new (NULL) };

  terret_request_set_stop_grace (request, grace);
  terret_request_set_progress_func (request, on_progress, &cue, NULL);
  result = terret_executor_run (executor, request, cancellable, &error);
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_null (result);
  g_string_free (cue.seen, TRUE);
  g_assert_nonnull (terret_request_get_cancelled_result (request));
  return g_object_ref (terret_request_get_cancelled_result (request));
}

static void
test_interrupt_summary (gconstpointer data)
{
  g_autoptr(TerretExecutor) executor = new_executor (data);
  g_autoptr(TerretResult) result = NULL;
  g_autofree char *out = NULL;
  g_autofree char *python = g_find_program_in_path ("python3");

  g_test_summary ("A cancel interrupts first: a Python program's KeyboardInterrupt summary is "
                  "in the cancelled run's output, and the interrupt ended it.");
  if (python == NULL)
    {
      g_test_skip ("no python3");
      return;
    }
  result = run_cancelled (executor,
                          "python3 -c 'import time, sys\n"
                          "try:\n"
                          "    print(\"working\", flush=True); time.sleep(300)\n"
                          "except KeyboardInterrupt:\n"
                          "    print(\"summary: 3 passed\", flush=True); sys.exit(2)'",
                          "working\n", 5);
  out = result_text (result);
  g_assert_nonnull (strstr (out, "working\nsummary: 3 passed\n"));
  g_assert_cmpint (terret_result_get_ended_by (result), ==, TERRET_STOP_SIGNAL_INTERRUPT);
}

static void
test_timeout_trap (gconstpointer data)
{
  g_autoptr(TerretExecutor) executor = new_executor (data);
  g_autoptr(TerretRequest) request = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;

  g_test_summary ("A timeout interrupts first: what an INT trap prints is in the result, "
                  "timed out, ended by the interrupt.");
  /* The trap is the subshell's first word: set long before the timeout. */
  request = terret_request_new ("( trap 'echo summary; exit 3' INT; echo working; "
                                "while :; do sleep 0.1; done )");
  terret_request_set_timeout (request, 2);
  terret_request_set_stop_grace (request, 5);
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_no_error (error);
  out = result_text (result);
  g_assert_true (terret_result_get_timed_out (result));
  g_assert_nonnull (strstr (out, "working\n"));
  g_assert_nonnull (strstr (out, "summary\n"));
  g_assert_cmpint (terret_result_get_ended_by (result), ==, TERRET_STOP_SIGNAL_INTERRUPT);
}

static void
test_term_handler (gconstpointer data)
{
  g_autoptr(TerretExecutor) executor = new_executor (data);
  g_autoptr(TerretResult) result = NULL;
  g_autofree char *out = NULL;

  g_test_summary ("A program that ignores the interrupt hears SIGTERM within the grace: its "
                  "TERM handler's output is kept.");
  result = run_cancelled (executor,
                          "( trap '' INT; trap 'echo cleanup; exit 4' TERM; echo working; "
                          "while :; do sleep 0.1; done )", "working\n", 2);
  out = result_text (result);
  g_assert_nonnull (strstr (out, "cleanup\n"));
  g_assert_cmpint (terret_result_get_ended_by (result), ==, TERRET_STOP_SIGNAL_TERMINATE);
}

static void
test_ignores_everything (gconstpointer data)
{
  g_autoptr(TerretExecutor) executor = new_executor (data);
  g_autoptr(TerretResult) result = NULL;
  g_autofree char *out = NULL;
  const char *pids;

  g_test_summary ("A program that ignores INT and TERM, with setsid and nohup jobs, is killed "
                  "with all of them at the grace's end: within grace + 1 s, nothing left.");
  result = run_cancelled (executor,
                          "trap '' INT TERM HUP; setsid sleep 300 & a=$!; "
                          "nohup sleep 301 >/dev/null 2>&1 & b=$!; echo \"pids $a $b\"; "
                          "echo working; while :; do sleep 0.1; done", "working\n", 1);
  out = result_text (result);
  pids = strstr (out, "pids ");
  g_assert_nonnull (pids);
  *strchr (pids, '\n') = '\0';
  terret_test_wait_gone_all (pids + strlen ("pids "));
  g_assert_cmpint (terret_result_get_ended_by (result), ==, TERRET_STOP_SIGNAL_KILL);
  g_assert_cmpfloat (terret_result_get_stop_time (result), <=, 1 + 1);
}

static void
store_one (GObject      *source,
           GAsyncResult *result,
           gpointer      user_data)
{
  *(GAsyncResult **)user_data = g_object_ref (result);
}

static void
test_close_hup (gconstpointer data)
{
  g_autoptr(TerretExecutor) executor = new_executor (data);
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *file = g_build_filename (dir, "hup", NULL);
  /* `started` comes from the job once its trap is set: from the parent it
   * could come first, and a close then find no trap to run. */
  g_autofree char *command = g_strdup_printf ("( trap 'sleep 0.3; echo hup > %s; exit' HUP TERM; "
                                              "echo started; while :; do sleep 0.1; done ) & "
                                              "wait", file);
  g_autoptr(TerretRequest) request = terret_request_new (command);
  g_autoptr(GAsyncResult) async_result = NULL;
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *contents = NULL;
  Cue cue = { NULL, "started\n", g_string_new (NULL) };

  g_test_summary ("A session's close sends a closing terminal's SIGHUP: a background job's "
                  "HUP trap runs to its end within the grace.");
  terret_request_set_progress_func (request, on_progress, &cue, NULL);
  terret_executor_run_async (executor, request, NULL, store_one, &async_result);
  while (strstr (cue.seen->str, "started\n") == NULL && async_result == NULL)
    g_main_context_iteration (NULL, TRUE);
  terret_executor_close_session (executor, TERRET_DEFAULT_SESSION);
  while (async_result == NULL)
    g_main_context_iteration (NULL, TRUE);
  result = terret_executor_run_finish (executor, async_result, &error);
  g_assert_no_error (error);
  g_string_free (cue.seen, TRUE);

  g_assert_true (g_file_get_contents (file, &contents, NULL, NULL));
  g_assert_cmpstr (contents, ==, "hup\n");
}

typedef struct
{
  GAsyncResult *cancelled;
  GAsyncResult *next;
} Pair;

static void
store (GObject      *source,
       GAsyncResult *result,
       gpointer      user_data)
{
  *(GAsyncResult **)user_data = g_object_ref (result);
}

static void
test_cancel_then_run (gconstpointer data)
{
  g_autoptr(TerretExecutor) executor = new_executor (data);

  g_test_summary ("A run that follows a cancel at once, before the cancelled run answered, "
                  "runs: never busy, 100 rounds.");
  for (guint round = 0; round < 100; round++)
    {
      g_autoptr(TerretRequest) slow = terret_request_new ("echo go; sleep 30");
      g_autoptr(TerretRequest) next = terret_request_new ("echo next");
      g_autoptr(GCancellable) cancellable = g_cancellable_new ();
      g_autoptr(TerretResult) result = NULL;
      g_autoptr(GError) error = NULL;
      Cue cue = { NULL, "go\n", g_string_new (NULL) };
      Pair pair = { NULL, NULL };

      terret_request_set_progress_func (slow, on_progress, &cue, NULL);
      terret_executor_run_async (executor, slow, cancellable, store, &pair.cancelled);
      while (strstr (cue.seen->str, "go\n") == NULL && pair.cancelled == NULL)
        g_main_context_iteration (NULL, TRUE);
      g_cancellable_cancel (cancellable);
      terret_executor_run_async (executor, next, NULL, store, &pair.next);
      while (pair.cancelled == NULL || pair.next == NULL)
        g_main_context_iteration (NULL, TRUE);

      result = terret_executor_run_finish (executor, pair.cancelled, &error);
      g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
      g_clear_error (&error);
      result = terret_executor_run_finish (executor, pair.next, &error);
      g_assert_no_error (error);
      terret_test_assert_bytes_eq (terret_result_get_stdout (result), "next\n", 5);
      g_object_unref (pair.cancelled);
      g_object_unref (pair.next);
      g_string_free (cue.seen, TRUE);
    }
}

static void
test_cancel_spares (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ("pty");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(TerretResult) cancelled = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *first = NULL;
  g_autofree char *out = NULL;
  g_autofree char *expected = NULL;
  g_autofree char *check = NULL;
  g_autoptr(TerretRequest) request = NULL;
  const char *pids;
  long early;

  g_test_summary ("A cancel ends what the command started, its background, setsid and nohup "
                  "jobs; the session stays, with its cwd, its variables and the job it had "
                  "before the command.");
  /* The kernel tells a start time in clock ticks: the command starts
   * ticks after the earlier job, which the loop waits for on that clock. */
  first = g_strdup_printf ("cd '%s'; export MARK=kept; sleep 900 & echo \"early $!\"; "
                           "s=$(cut -d' ' -f22 /proc/$!/stat); "
                           "while [ \"$(cut -d' ' -f22 /proc/self/stat)\" -le $((s + 2)) ]; do :; done",
                           dir);
  request = terret_request_new (first);
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_no_error (error);
  out = result_text (result);
  g_assert_nonnull (strstr (out, "early "));
  early = strtol (strstr (out, "early ") + strlen ("early "), NULL, 10);
  g_assert_cmpint (early, >, 0);

  cancelled = run_cancelled (executor,
                             "setsid sleep 901 & a=$!; nohup sleep 902 >/dev/null 2>&1 & b=$!; "
                             "sleep 903 & c=$!; echo \"pids $a $b $c\"; echo working; sleep 904",
                             "working\n", 5);
  g_free (out);
  out = result_text (cancelled);
  pids = strstr (out, "pids ");
  g_assert_nonnull (pids);
  *strchr (pids, '\n') = '\0';
  terret_test_wait_gone_all (pids + strlen ("pids "));

  check = g_strdup_printf ("kill -0 %ld && echo alive; pwd; echo $MARK; kill %ld", early, early);
  g_clear_object (&request);
  g_clear_object (&result);
  request = terret_request_new (check);
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_no_error (error);
  g_free (out);
  out = result_text (result);
  expected = g_strdup_printf ("alive\n%s\nkept\n", dir);
  g_assert_cmpstr (out, ==, expected);
  g_assert_null (terret_result_get_notice (result));
}

static void
test_handshake_stuck (void)
{
  g_autoptr(TerretExecutor) executor = new_executor ("pty");
  g_autofree char *dir = terret_test_make_tmpdir ();
  g_autofree char *lock = g_build_filename (dir, "lock", NULL);
  g_autofree char *shell = g_build_filename (dir, "shell", NULL);
  g_autofree char *script = g_strdup_printf ("#!/bin/bash\nflock '%s' true\nexec bash \"$@\"\n",
                                             lock);
  g_autoptr(TerretRequest) request = terret_request_new ("true");
  g_autoptr(TerretResult) result = NULL;
  g_autoptr(GError) error = NULL;
  int fd;

  g_test_summary ("A shell that never answers its handshake because its start-up waits on a "
                  "stale lock: the error names the process it waits in.");
  g_assert_true (g_file_set_contents (shell, script, -1, NULL));
  g_assert_cmpint (g_chmod (shell, 0755), ==, 0);
  fd = open (lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (flock (fd, LOCK_EX), ==, 0);

  terret_executor_set_setting (executor, "shell", shell, &error);
  g_assert_no_error (error);
  terret_executor_set_setting (executor, "handshake-timeout", "1", &error);
  g_assert_no_error (error);
  result = terret_executor_run (executor, request, NULL, &error);
  g_assert_null (result);
  g_assert_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "start-up"));
  g_assert_nonnull (strstr (error->message, "`flock "));
  close (fd);
}

int
main (int   argc,
      char *argv[])
{
  static const char * const backends[] = { "pty", "oneshot" };

  terret_test_init (&argc, &argv);
  for (guint i = 0; i < G_N_ELEMENTS (backends); i++)
    {
      const char *b = backends[i];
      g_autofree char *p1 = g_strdup_printf ("/stop/%s/interrupt-summary", b);
      g_autofree char *p2 = g_strdup_printf ("/stop/%s/timeout-trap", b);
      g_autofree char *p3 = g_strdup_printf ("/stop/%s/term-handler", b);
      g_autofree char *p4 = g_strdup_printf ("/stop/%s/ignores-everything", b);
      g_autofree char *p5 = g_strdup_printf ("/stop/%s/cancel-then-run", b);
      g_autofree char *p6 = g_strdup_printf ("/stop/%s/close-hup", b);

      g_test_add_data_func (p1, b, test_interrupt_summary);
      g_test_add_data_func (p2, b, test_timeout_trap);
      g_test_add_data_func (p3, b, test_term_handler);
      g_test_add_data_func (p4, b, test_ignores_everything);
      g_test_add_data_func (p5, b, test_cancel_then_run);
      g_test_add_data_func (p6, b, test_close_hup);
    }
  g_test_add_func ("/stop/pty/cancel-spares", test_cancel_spares);
  g_test_add_func ("/stop/pty/handshake-stuck", test_handshake_stuck);
  return g_test_run ();
}
