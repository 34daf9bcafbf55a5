/* terret-test-shell-state.c: shell state a command can set, as test cases
 *
 * The rule (docs/pty.md): whatever state a command leaves in the shell
 * either behaves as at a terminal, or ends that run at once with a notice
 * that says so, and the next run has a working shell. Never the
 * session's own text in the output, never a forged or lost status, never
 * a hang (every step has a timeout far beyond what it needs, and must not
 * reach it). The pty and ssh tests run every case here on their backend.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "terret-test-shell-state.h"
#include "terret-test-utils.h"

/* A step's status when the run has none (the session could not tell). */
#define NO_STATUS (-1)

/* What a step's notice must be: none, or matching a glob. */
#define QUIET NULL

typedef struct
{
  const char *command;
  int status;
  const char *output;           /* a glob (GPatternSpec) over the output */
  const char *notice;           /* a glob, or QUIET */
} Step;

typedef struct
{
  const char *name;
  Step steps[8];
} Case;

static const Case cases[] = {
  { "xtrace", {
      { "set -x", 0, "", QUIET },
      /* At a terminal the trace is `+ echo traced`; the command runs in
       * an eval, one level down, so bash writes `++`. */
      { "echo traced", 0, "++ echo traced\ntraced\n", QUIET },
      { "set +x", 0, "++ set +x\n", QUIET },
      { "echo plain", 0, "plain\n", QUIET },
    } },
  { "xtrace-ps4", {
      { "PS4='>>> '; set -x", 0, "", QUIET },
      { "true", 0, ">>>> true\n", QUIET },
      { "set +x", 0, "*set +x\n", QUIET },
    } },
  { "xtrace-indirect", {
      /* Turned on where no word shows it: the session finds it anyway. */
      { "t() { set -x; }", 0, "", QUIET },
      { "t", 0, "", QUIET },
      { "echo traced", 0, "++ echo traced\ntraced\n", QUIET },
      { "set +x", 0, "++ set +x\n", QUIET },
      { "echo plain", 0, "plain\n", QUIET },
    } },
  { "verbose", {
      { "set -v", 0, "", QUIET },
      { "echo shown", 0, "*shown\n", QUIET },
      { "set +v", 0, "*", QUIET },
      { "echo plain", 0, "plain\n", QUIET },
    } },
  { "debug-trap", {
      { "trap 'echo \"T:$BASH_COMMAND\"' DEBUG", 0, "", QUIET },
      { "echo hi; (exit 4)", 4, "T:echo hi\nhi\n", QUIET },
      { "trap - DEBUG", 0, "T:trap - DEBUG\n", QUIET },
      { "echo plain", 0, "plain\n", QUIET },
    } },
  { "err-trap", {
      /* Once per failing command, never for the session's own steps. */
      { "trap 'echo \"E:$BASH_COMMAND\"' ERR", 0, "", QUIET },
      { "false", 1, "E:false\n", QUIET },
      { "true", 0, "", QUIET },
      { "trap - ERR; false", 1, "", QUIET },
    } },
  { "return-trap", {
      { "set -T; f() { :; }; trap 'echo R' RETURN", 0, "", QUIET },
      { "f; echo x", 0, "R\nx\n", QUIET },
      { "echo plain", 0, "plain\n", QUIET },
      { "trap - RETURN; set +T", 0, "", QUIET },
    } },
  { "exit-trap-and-signals", {
      { "trap 'echo bye' EXIT; trap '' INT TERM HUP; trap 'echo usr1' USR1", 0, "", QUIET },
      { "kill -USR1 $$; echo after", 0, "usr1\nafter\n", QUIET },
      { "echo plain", 0, "plain\n", QUIET },
    } },
  { "stdout-closed", {
      /* As at a terminal: nothing on stdout until it is put back. */
      { "exec >/dev/null", 0, "", QUIET },
      { "echo hidden; echo err >&2", 0, "err\n", QUIET },
      { "exec >/dev/tty", 0, "", QUIET },
      { "echo shown", 0, "shown\n", QUIET },
      { "exec >&-", 0, "", QUIET },
      { "echo gone; exec >/dev/tty; echo back", 0, "*write error*back\n", QUIET },
    } },
  { "stderr-closed", {
      { "exec 2>/dev/null", 0, "", QUIET },
      { "ls /nonexistent-terret-path; echo out", 0, "out\n", QUIET },
      { "exec 2>/dev/tty", 0, "", QUIET },
      { "echo err >&2", 0, "err\n", QUIET },
    } },
  { "stdin-redirected", {
      /* The shell reads requests there: put back, and said. */
      { "exec </dev/null", 0, "", "*standard input*" },
      { "echo after", 0, "after\n", QUIET },
      { "exec 2>/dev/tty; exec </dev/null", 0, "", "*standard input*" },
      { "echo again", 0, "again\n", QUIET },
    } },
  { "line-editing", {
      { "set -o vi", 0, "", "*Line editing*" },
      { "echo vi", 0, "vi\n", QUIET },
      { "set -o emacs", 0, "", "*Line editing*" },
      { "echo emacs", 0, "emacs\n", QUIET },
    } },
  { "job-control", {
      { "set -m", 0, "", "*Job control*" },
      { "sleep 0 & wait; echo jobs", 0, "[1] *\njobs\n", QUIET },
    } },
  { "functions-over-builtins", {
      { "eval() { echo E; }; set() { echo S; }; trap() { echo T; }; declare() { :; }; "
        "unset() { :; }; exec() { :; }; command() { :; }; shopt() { :; }; return() { :; }; "
        "stty() { :; }; printf() { echo P; }; :() { echo C; }", 0, "", QUIET },
      { "echo fine; (exit 3)", 3, "fine\n", QUIET },
      /* The command's own exec and : are its functions, as at a terminal. */
      { "exec </dev/null", 0, "C\n", QUIET },
      { "echo plain", 0, "plain\n", QUIET },
    } },
  { "function-named-builtin", {
      /* It takes every step of the session's: the run says the session
       * was replaced, and the command ran once, in the new one. */
      { "builtin() { echo fake; }", 0, "", QUIET },
      { "echo fn", 0, "fn\n", "*fresh session*" },
      { "echo plain", 0, "plain\n", QUIET },
    } },
  { "reserved-word-aliases", {
      { "shopt -s expand_aliases; alias '{=echo' '[[=echo' 'if=echo' '!=echo'", 0, "", "*alias*" },
      { "if [[ -n x ]]; then { echo ok; }; fi", 0, "ok\n", QUIET },
    } },
  { "prompt-command", {
      /* Runs before each prompt, as at a terminal; the prompt it sets is
       * not the session's. */
      { "PROMPT_COMMAND='PS1=\"x> \"; echo PC'", 0, "PC\n", QUIET },
      { "echo a", 0, "a\nPC\n", QUIET },
      { "unset PROMPT_COMMAND", 0, "", QUIET },
      { "echo b", 0, "b\n", QUIET },
      { "PS1='$ '; PS0=zero; PS2=two", 0, "", QUIET },
      /* PS0 is printed before each command runs, as at a terminal. */
      { "echo c", 0, "zeroc\n", QUIET },
      { "PS0=", 0, "zero", QUIET },
    } },
  { "nounset-and-ifs", {
      { "set -u", 0, "", QUIET },
      { "echo $terret_unset_var", 1, "*terret_unset_var: unbound variable\n", QUIET },
      { "IFS=x; set -- 1 2; echo \"$*\"", 0, "1x2\n", QUIET },
      { "echo \"$PWD\" >/dev/null; unset IFS; set +u; echo u", 0, "u\n", QUIET },
    } },
  { "last-argument", {
      { "echo the_last_word >/dev/null", 0, "", QUIET },
      { "echo \"$_\"", 0, "the_last_word\n", QUIET },
    } },
  { "harness-variables", {
      /* Its own names made read-only: the run ends with no status and
       * says so; the next shell is new. */
      { "readonly __terret_k", NO_STATUS, "", "*session's own steps*" },
      { "echo plain", 0, "plain\n", QUIET },
    } },
  { "errexit", {
      { "set -e", 0, "", QUIET },
      { "true; echo still", 0, "still\n", QUIET },
      { "false", 1, "", "*exited with status 1*" },
      { "echo fresh", 0, "fresh\n", QUIET },
    } },
  { "exit", {
      /* bash's own status, and without the "exit" bash says as it goes. */
      { "echo out; exit 3", 3, "out\n", "*exited with status 3*" },
      { "echo fresh", 0, "fresh\n", QUIET },
    } },
};

guint
terret_test_shell_state_n_cases (void)
{
  return G_N_ELEMENTS (cases);
}

const char *
terret_test_shell_state_name (guint i)
{
  g_assert_cmpuint (i, <, G_N_ELEMENTS (cases));
  return cases[i].name;
}

static void
check_step (TerretExecutor *executor,
            const Step     *step)
{
  g_autoptr(TerretResult) result = NULL;
  g_autofree char *output = NULL;
  GBytes *bytes;
  const char *notice;

  g_test_message ("step: %s", step->command);
  result = terret_test_run_in (executor, TERRET_DEFAULT_SESSION, step->command, 60);
  g_assert_false (terret_result_get_timed_out (result));
  g_assert_false (terret_result_get_running (result));

  bytes = terret_result_get_stdout (result);
  g_assert_nonnull (bytes);
  output = g_bytes_get_size (bytes) > 0
    ? g_strndup (g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes))
    : g_strdup ("");
  g_assert_cmpuint (strlen (output), ==, g_bytes_get_size (bytes));
  g_assert_null (strstr (output, "__terret"));
  g_assert_null (strchr (output, 0x1e));
  if (!g_pattern_match_simple (step->output, output))
    g_error ("output of '%s': '%s', expected '%s'", step->command, output, step->output);

  if (step->status == NO_STATUS)
    {
      g_assert_false (terret_result_get_exited (result));
      g_assert_cmpint (terret_result_get_term_signal (result), ==, 0);
    }
  else
    {
      g_assert_true (terret_result_get_exited (result));
      g_assert_cmpint (terret_result_get_exit_status (result), ==, step->status);
    }

  notice = terret_result_get_notice (result);
  if (step->notice == QUIET)
    g_assert_cmpstr (notice, ==, NULL);
  else if (notice == NULL || !g_pattern_match_simple (step->notice, notice))
    g_error ("notice of '%s': '%s', expected '%s'", step->command, notice, step->notice);
}

/* Runs case @i on a fresh default session of @executor, then checks that
 * the session works. */
void
terret_test_shell_state_check (TerretExecutor *executor,
                               guint           i)
{
  const Case *c;

  g_assert_cmpuint (i, <, G_N_ELEMENTS (cases));
  c = &cases[i];

  terret_executor_close_all (executor);
  for (guint s = 0; s < G_N_ELEMENTS (c->steps) && c->steps[s].command != NULL; s++)
    check_step (executor, &c->steps[s]);

  {
    const Step works = { "echo \"$((6 * 7))\"; (exit 5)", 5, "42\n", QUIET };

    check_step (executor, &works);
  }
}
