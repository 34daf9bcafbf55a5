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

/* What a step's notice must be: none, or matching a glob; MAYBE before a
 * glob lets it be none, where a backend's harness may undo the state
 * before it matters (a remote shell's is always the careful one). */
#define QUIET NULL
#define MAYBE "?"

typedef struct
{
  const char *command;
  int status;
  const char *output;           /* a glob (GPatternSpec) over the output */
  const char *notice;           /* a glob, or QUIET */
  const char *cwd;              /* (nullable) the request's own */
  const char *env;              /* (nullable) a NAME=VALUE of the request's own */
} Step;

typedef struct
{
  const char *name;
  Step steps[10];
} Case;

static const Case cases[] = {
  /* --- Options and traps ------------------------------------------- */
  { "xtrace", {
      { "set -x", 0, "", QUIET },
      /* At the depth a person sees at a prompt: a command runs at the top
       * level, a function keeps it, a command substitution adds one. */
      { "echo traced", 0, "+ echo traced\ntraced\n", QUIET },
      { "f() { echo in; }; f; (echo sub); x=$(echo cs)", 0,
        "+ f\n+ echo in\nin\n+ echo sub\nsub\n++ echo cs\n+ x=cs\n", QUIET },
      { "eval 'echo ev'", 0, "+ eval 'echo ev'\n++ echo ev\nev\n", QUIET },
      { "set +x", 0, "+ set +x\n", QUIET },
      { "echo plain", 0, "plain\n", QUIET },
    } },
  { "xtrace-ps4", {
      /* The user's PS4, its first character repeated per level only. */
      { "PS4='>>> '; set -x", 0, "", QUIET },
      { "true; echo \"$(true)\"", 0, ">>> true\n>>>> true\n>>> echo ''\n\n", QUIET },
      { "set +x", 0, ">>> set +x\n", QUIET },
    } },
  { "xtrace-indirect", {
      /* Turned on where no word shows it: the session finds it anyway. */
      { "t() { set -x; }", 0, "", QUIET },
      { "t", 0, "", QUIET },
      { "echo traced", 0, "+ echo traced\ntraced\n", QUIET },
      { "set +x", 0, "+ set +x\n", QUIET },
      { "echo plain", 0, "plain\n", QUIET },
    } },
  { "xtrace-fd", {
      /* Traces sent elsewhere still trace nothing of the session's. */
      { "exec 7>&2; BASH_XTRACEFD=7; set -x", 0, "", QUIET },
      { "echo hi", 0, "+ echo hi\nhi\n", QUIET },
      { "set +x; unset BASH_XTRACEFD; exec 7>&-", 0, "+ set +x\n", QUIET },
    } },
  { "xtrace-here-document", {
      /* bash reads a here-document's body from its input, so such a
       * command runs in an eval: one level down (docs/protocol.md). */
      { "set -x", 0, "", QUIET },
      { "cat <<EOF\nbody\nEOF", 0, "++ cat\nbody\n", QUIET },
      { "set +x", 0, "+ set +x\n", QUIET },
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
  { "debug-trap-extdebug", {
      /* A DEBUG trap that skips commands (extdebug) skips the command's,
       * never the session's. */
      { "shopt -s extdebug; trap '[[ $BASH_COMMAND != rm* ]]' DEBUG", 0, "", QUIET },
      { "rm -f /nonexistent; echo kept", 0, "kept\n", QUIET },
      { "trap - DEBUG; shopt -u extdebug", 0, "", QUIET },
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
  { "allexport", {
      /* The command's variables are exported; the session's never are. */
      { "set -a", 0, "", QUIET },
      { "x=1; env | grep -c -e __terret -e '^x=1$'", 0, "1\n", QUIET },
      { "set +a; env | grep -c __terret", 1, "0\n", QUIET },
    } },
  { "history-expansion", {
      { "set -H", 0, "", QUIET },
      { "echo 'a!b' \"c!d\"", 0, "a!b c!d\n", QUIET },
      { "set +H", 0, "", QUIET },
    } },
  { "nounset-and-ifs", {
      { "set -u", 0, "", QUIET },
      { "echo $terret_unset_var", 1, "*terret_unset_var: unbound variable\n", QUIET },
      { "IFS=x; set -- 1 2; echo \"$*\"", 0, "1x2\n", QUIET },
      { "IFS=; echo a b", 0, "a b\n", QUIET },
      { "echo \"$PWD\" >/dev/null; unset IFS; set +u; echo u", 0, "u\n", QUIET },
    } },
  { "posix-and-friends", {
      { "set -o posix -o noclobber -o pipefail -f; shopt -s failglob nullglob xpg_echo", 0, "",
        QUIET },
      { "echo 'a\\tb'; false | true", 1, "a\tb\n", QUIET },
      { "set +o posix +o noclobber +o pipefail +f; shopt -u failglob nullglob xpg_echo", 0, "",
        QUIET },
    } },
  { "compat-and-locale", {
      { "BASH_COMPAT=31 LC_ALL=C", 0, "", QUIET },
      { "printf '%s\\n' 'é€'; [[ a =~ \"a\" ]] && echo m", 0, "é€\nm\n", QUIET },
      { "unset BASH_COMPAT LC_ALL", 0, "", QUIET },
    } },
  { "funcnest", {
      /* The session's steps never nest functions: FUNCNEST=1 bites the
       * command only, as at a terminal. */
      { "FUNCNEST=1", 0, "", QUIET },
      { "echo hi", 0, "hi\n", QUIET },
      { "f() { g; }; g() { :; }; f", 1, "*maximum function nesting level exceeded (1)\n", QUIET },
      { "unset FUNCNEST", 0, "", QUIET },
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
  { "syntax-errors", {
      /* bash's message and status 2 at once, nothing run, and the shell
       * reads its next request as usual (an open quote even leaves
       * bash's parser astray for a line). */
      { "echo )", 2, "*syntax error near unexpected token `)'\n", QUIET },
      { "echo \"open", 2, "*unexpected EOF while looking for matching `\"'\n", QUIET },
      { "if true; then", 2, "*syntax error*", QUIET },
      { "echo ok", 0, "ok\n", QUIET },
    } },

  /* --- The shell's own descriptors ----------------------------------- */
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
  { "open-files-limit", {
      /* Below what bash needs to save a descriptor, no redirection works,
       * the session's included: no status, said, a fresh shell next. */
      { "ulimit -n 3", NO_STATUS, "*", "*open-files limit (ulimit -n)*" },
      { "echo fresh", 0, "fresh\n", QUIET },
      { "ulimit -n 16; echo low", 0, "low\n", QUIET },
      { "echo still", 0, "still\n", QUIET },
    } },

  /* --- The terminal's modes ------------------------------------------ */
  { "terminal-modes", {
      /* Output processing turned on mid-run mangles the prompt (CR-LF,
       * capitals); the session reads the status again after putting the
       * modes back, from the host side or (ssh) from inside. */
      { "stty sane", 0, "", QUIET },
      { "echo one; stty opost onlcr", 0, "one\n", QUIET },
      { "stty opost olcuc -onlcr", 0, "", QUIET },
      { "stty icanon echo; (exit 3)", 3, "", QUIET },
      { "stty -isig intr ^X", 0, "", QUIET },
      /* Taken back with ^C, which interrupts again. */
      { "echo \"open", 2, "*unexpected EOF*", QUIET },
      { "stty raw", 0, "", QUIET },
      /* Input translated (NL to CR, CR dropped) would end no request. */
      { "stty inlcr igncr icrnl istrip", 0, "", QUIET },
      { "printf 'a\\nb\\n'; echo ÉTÉ", 0, "a\nb\nÉTÉ\n", QUIET },
    } },

  /* --- The prompt and what prints it --------------------------------- */
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
  { "prompt-command-array", {
      { "PROMPT_COMMAND=('echo a' 'PS1=x; shopt -u promptvars')", 0, "a\n", "*promptvars*" },
      { "echo hi; declare -p PROMPT_COMMAND", 0,
        "hi\ndeclare -a PROMPT_COMMAND=([0]=\"echo a\" [1]=\"PS1=x; shopt -u promptvars\")\na\n",
        "*promptvars*" },
      { "unset PROMPT_COMMAND", 0, "", QUIET },
      { "echo b", 0, "b\n", QUIET },
    } },
  { "prompt-read-only", {
      /* Read-only with the session's prompt in it: nothing to undo. */
      { "readonly PROMPT_COMMAND PS1 PS2 PS4", 0, "", QUIET },
      { "echo hi", 0, "hi\n", QUIET },
      { "echo again; (exit 4)", 4, "again\n", QUIET },
    } },
  { "prompt-read-only-own-value", {
      /* Read-only with a value of its own, directly or through a name no
       * word shows: the command's status, and a fresh shell next. */
      { "PS1='$ '; readonly PS1", 0, "", "*PS1 was made read-only*" },
      { "echo fresh", 0, "fresh\n", QUIET },
      { "v=PS1", 0, "", QUIET },
      { "printf -v \"$v\" '%s' '$ '; readonly \"$v\"; (exit 6)", 6, "",
        "*PS1 was made read-only*" },
      { "echo fresh", 0, "fresh\n", QUIET },
    } },
  { "prompt-command-read-only", {
      { "PROMPT_COMMAND='echo pc'; readonly PROMPT_COMMAND", 0, "pc\n",
        "*PROMPT_COMMAND was made read-only*" },
      { "echo fresh", 0, "fresh\n", QUIET },
    } },
  { "prompt-attributes", {
      { "declare -u PS1", 0, "", "*attributes*" },
      { "echo up", 0, "up\n", QUIET },
      { "declare -i PS1", 0, "", "*attributes*" },
      { "declare -l PS1; export PS1", 0, "", "*attributes*" },
      { "env | grep -c '^PS1='", 1, "0\n", QUIET },
      { "unset PS1", 0, "", QUIET },
      { "echo unset", 0, "unset\n", QUIET },
    } },
  { "promptvars-off", {
      { "shopt -u promptvars", 0, "", "*promptvars*" },
      { "echo on", 0, "on\n", QUIET },
      /* Where no word shows it, bash prints PS1 unexpanded: the session
       * knows it for its prompt and reads the status again. */
      { "x=sho; ${x}pt -u promptvars; (exit 3)", 3, "", "*promptvars*" },
      { "echo on", 0, "on\n", QUIET },
    } },
  { "prompt-variable-printed", {
      /* The session's prompt holds no key and no RS byte. */
      { "printf '%s' \"$PS1\" | grep -c $'\\x1e'", 1, "0\n", QUIET },
    } },
  { "idle-timeout", {
      /* TMOUT would end the shell while it waits for the next request:
       * set aside between commands, in force during them. */
      { "X=kept; TMOUT=1", 0, "", QUIET },
      { "echo \"$TMOUT\"; sleep 1.5", 0, "1\n", QUIET },
      { "echo \"$X\"", 0, "kept\n", QUIET },
      { "unset TMOUT", 0, "", QUIET },
      { "readonly TMOUT=600", 0, "", "*TMOUT was made read-only*" },
      { "echo fresh", 0, "fresh\n", QUIET },
    } },

  /* --- Functions, aliases, builtins and the session's names ---------- */
  { "functions-over-builtins", {
      { "eval() { echo E; }; set() { echo S; }; trap() { echo T; }; declare() { :; }; "
        "unset() { :; }; exec() { :; }; command() { :; }; shopt() { :; }; return() { :; }; "
        "stty() { :; }; printf() { echo P; }; :() { echo C; }; true() { echo T; }", 0, "", QUIET },
      { "echo fine; (exit 3)", 3, "fine\n", QUIET },
      /* The command's own exec and : are its functions, as at a terminal. */
      { "exec </dev/null", 0, "C\n", QUIET },
      { "echo plain", 0, "plain\n", QUIET },
    } },
  { "function-named-builtin", {
      /* It takes every step of the session's: the command that defined
       * it keeps its status, and the next run has a fresh shell. */
      { "builtin() { echo fake; }", 0, "", "*builtins*" },
      { "echo fn", 0, "fn\n", QUIET },
      { "echo plain", 0, "plain\n", QUIET },
    } },
  { "builtins-disabled", {
      { "enable -n builtin eval printf", 0, "", "*enable -n*" },
      { "echo hi; printf x", 0, "hi\nx", QUIET },
    } },
  { "builtins-disabled-unseen", {
      /* Where no word shows it, the next request is taken before its
       * command starts: that command runs once, in a fresh shell. (A
       * remote shell's harness is always the careful one, which enables
       * it again at once.) */
      { "x=ena y=ev; ${x}ble -n ${y}al", 0, "", MAYBE "*enable -n*" },
      { "echo hi", 0, "hi\n", MAYBE "*fresh session*" },
    } },
  { "reserved-word-aliases", {
      { "shopt -s expand_aliases; alias '{=echo' '[[=echo' 'if=echo' '!=echo'", 0, "", "*alias*" },
      { "if [[ -n x ]]; then { echo ok; }; fi", 0, "ok\n", QUIET },
    } },
  { "aliases-off", {
      /* A command then runs in an eval, one level down. */
      { "shopt -u expand_aliases", 0, "", QUIET },
      { "set -x; echo hi", 0, "++ echo hi\nhi\n", QUIET },
      { "set +x; shopt -s expand_aliases", 0, "++ set +x\n", QUIET },
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
  { "harness-functions", {
      { "unset -f __terret_N", 0, "", "*own functions were removed*" },
      { "echo plain", 0, "plain\n", QUIET },
    } },

  /* --- The shell replaced or set up again ---------------------------- */
  { "rc-files", {
      { "source /etc/profile", 0, "*", QUIET },
      { "echo after; (exit 2)", 2, "after\n", QUIET },
    } },
  { "exec-bash", {
      /* The new shell announces itself: the run ends at once, with what
       * the new shell said as it started and no status (the command had
       * none to give), and says why. */
      { "exec bash", NO_STATUS, "*", "*replaced the shell*" },
      { "echo fresh", 0, "fresh\n", QUIET },
      { "exec bash --norc --noprofile", NO_STATUS, "*", "*replaced the shell*" },
      { "echo fresh", 0, "fresh\n", QUIET },
    } },
  { "exec-sh", {
      { "exec sh", NO_STATUS, "*", "*replaced the shell*" },
      { "echo fresh", 0, "fresh\n", QUIET },
      { "exec bash --posix", NO_STATUS, "*", "*replaced the shell*" },
      { "echo fresh", 0, "fresh\n", QUIET },
    } },
  { "exec-program", {
      { "exec true", 0, "", "*exited with status 0*" },
      { "exec false", 1, "", "*exited with status 1*" },
      { "echo fresh", 0, "fresh\n", QUIET },
    } },
  /* --- A request's own cwd and variables --------------------------- */
  { "request-context", {
      { "cd /usr; readonly CTX_RO=1", 0, "", QUIET },
      /* A read-only variable cannot be set for a command (bash says so);
       * the command runs, and its status holds. */
      { "echo \"$CTX_RO\"", 0, "*readonly variable*1\n", QUIET, .env = "CTX_RO=2" },
      /* What the command makes read-only cannot be put back: the status
       * still holds, and so does the harness. */
      { "readonly CTX_NEW OLDPWD; echo \"$CTX_NEW\"; cd /tmp; (exit 3)", 3, "x\n*", QUIET,
        .cwd = "/", .env = "CTX_NEW=x" },
      { "pwd; echo \"$CTX_NEW\"", 0, "/usr\nx\n", QUIET },
      /* A careful command, a trap and xtrace the command set: none of them
       * sees the way in or out. */
      { "trap 'echo dbg' DEBUG; set -x", 0, "*", QUIET },
      { "echo \"$CTX_VAR\"", 0, "*+ echo in\nin\n", QUIET, .cwd = "/tmp", .env = "CTX_VAR=in" },
      { "set +x; trap - DEBUG", 0, "*", QUIET },
      { "pwd; echo \"${CTX_VAR-unset}\"", 0, "/usr\nunset\n", QUIET },
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
  if (step->cwd != NULL || step->env != NULL)
    {
      g_autoptr(TerretRequest) request = terret_request_new (step->command);
      g_autoptr(GError) error = NULL;
      const char * const env[] = { step->env, NULL };

      terret_request_set_timeout (request, 60);
      terret_request_set_cwd (request, step->cwd);
      if (step->env != NULL)
        terret_request_set_env (request, env);
      result = terret_executor_run (executor, request, NULL, &error);
      g_assert_no_error (error);
    }
  else
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
  else if (step->notice[0] == MAYBE[0] && notice == NULL)
    return;
  else if (notice == NULL ||
           !g_pattern_match_simple (step->notice + (step->notice[0] == MAYBE[0]), notice))
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
