/* terret-shell-protocol.c: what a session says to its bash, and reads back
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The rule this protocol is built to: no shell state a command sets can
 * make the session print protocol text, lose or forge a status, or hang.
 * Options (`set -x`, `set -v`, `set -e`, `set -a`), traps (DEBUG, ERR,
 * RETURN), functions and aliases over any name, redirections of the
 * shell's own descriptors, PS1, PS0 and PROMPT_COMMAND, TMOUT, terminal
 * modes, builtins disabled, a shell exec'd in its place: each either
 * behaves as at a terminal or ends the run at once with a notice saying
 * what happened (docs/protocol.md lists them).
 *
 * - The end of an exchange is the prompt. PS1 holds the marker: the
 *   shell's key, the number of the exchange whose harness ran last, its
 *   status, flags and the cwd, all parameter expansions. bash prints it
 *   after every line it ran, and prompt expansion runs no command, so no
 *   trap fires for it, no function or alias reaches it, `set -x` does not
 *   trace it and `set -e`/`set -u` cannot stop it. PS1 itself holds no
 *   key and no RS byte (they come from `\036` escapes and a variable), so
 *   a command printing `$PS1` prints no marker; with promptvars off bash
 *   prints PS1 as it stands, which the reader knows for what it is.
 * - A command runs at the top level, as typed, wherever anything could
 *   tell the difference: a trace shows `+ cmd`, an ERR trap fires once,
 *   `$BASH_COMMAND` and `caller` are the command's. The request's first
 *   line stores the command, with the harness after it in one group, as
 *   an alias; the second line is the alias. bash parses the whole group
 *   before running any of it, from memory: a command reading stdin never
 *   sees the protocol, an alias the command defines cannot reach the
 *   harness, and a syntax error fails it whole, with bash's own message
 *   and status 2. A group left open makes bash ask for more with PS2,
 *   which is a marker too: the session takes the line back with ^C and
 *   has an eval say what is wrong. PS1 prints nothing for the prompt
 *   between the two lines. A here-document (its body would be read from
 *   the terminal, not the alias), a PROMPT_COMMAND or PS0 (they would run
 *   twice) or a shell where aliases do not expand take the command into
 *   an eval instead, one level down; so does the fast path below, where
 *   nothing can tell (no trace, no trap), and which saves a prompt.
 * - While the shell is known clean (no DEBUG trap, no xtrace or verbose,
 *   nothing set aside), the harness is a few assignments: the fast path,
 *   costing what the command's own line costs. Its `:` is a probe: a
 *   DEBUG trap that fires before the next statement leaves `$_` its own,
 *   and the marker then says so (flag D), as `$-` says whether the
 *   command turned on xtrace, verbose, allexport or job control.
 * - When it is not, or the command's text may make it so (`set`, `trap`,
 *   `source`, `readonly`...), the careful path: a restore step puts back
 *   what the last harness set aside (a DEBUG trap, `set -x`, TMOUT, the
 *   user's PROMPT_COMMAND), the command runs, then the harness runs in a
 *   group whose stdout and stderr are closed, so a DEBUG handler or
 *   `set -x` that reaches it prints nothing, and sets those aside again
 *   before the next request line is read. Its functions carry the trace
 *   attribute, which is what lets a DEBUG trap be set and removed from
 *   inside them, and call no function themselves (FUNCNEST).
 * - A marker numbered before the exchange means the harness never ran:
 *   the line was abandoned (^C, an expansion error), or taken by a
 *   function named `builtin`, or the prompt was printed mangled (a
 *   command turned output processing on) or unexpanded. A recovery line,
 *   the harness alone, tells which and carries the line's status; a
 *   shell where even that fails is replaced, and the run says why.
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "terret-error.h"
#include "terret-shell-channel.h"
#include "terret-shell-protocol-private.h"

/* The statuses of the command's last pipeline, saved in the harness's
 * first statement with its `$?`, before anything else runs: in an
 * assignment `[@]` joins them with spaces whatever IFS holds. */
#define PIPESTATUS_SAVE "__terret_p=${PIPESTATUS[@]}"

/* The fast path's harness, after the command: the status and the
 * statuses of its last pipeline, the command's `$_` (put back before the
 * next command), then the way out of a request's own cwd and variables
 * (%3$s: context_steps()), then the probe: `:` sets `$_`,
 * and what the next statement finds there is its argument unless a DEBUG
 * handler ran in between; no flags left from a careful step; the
 * command's alias removed, so that no request can ever run an earlier
 * command again; the exchange's number, then PS1 put back, for a command
 * that changed it unseen (a function): a PS1 made read-only with the
 * marker in it fails that last assignment, and the marker still works.
 * In a group with stdout and stderr closed: whatever the command turned
 * on (xtrace, a DEBUG trap) prints nothing of it, and the marker says
 * what is now on. A group that cannot even be opened (no descriptor left
 * under `ulimit -n` to save stdout in) says so (flag r): the status is
 * lost, and bash has closed stdout on its way out. */
static const char fast_step[] =
  "{ __terret_s=$? " PIPESTATUS_SAVE " __terret_u=$_;%3$s\\builtin : p;__terret_d=${_#p};%2$s__terret_f= "
  "__terret_k=%1$" G_GUINT64_FORMAT " PS1=$__terret_ps1;} >&- 2>&-"
  "||__terret_k=%1$" G_GUINT64_FORMAT " __terret_f=r";

/* The careful path's harness: the same saved and the same way out (%5$s),
 * PS1 put back first when nothing stops it (so that whatever cuts the
 * harness short still ends at a marker, a stale one), __terret_N, and
 * the exchange's number last.
 * When PS1 could not be made the marker (flag P), the harness prints the
 * marker itself, on the terminal. Besides stdout and stderr the group
 * closes the descriptor BASH_XTRACEFD names (its number taken as the
 * redirections are read, by an arithmetic expansion that runs nothing;
 * stderr when it names none), so that `set -x` traces nothing of the
 * harness there either. Standard input stays: a remote terminal's modes
 * are set through it. Then the descriptors the prompt needs, checked in
 * the open, by which time nothing traces them. */
static const char careful_step[] =
  "{ __terret_s=%2$s%3$s;%5$s\\builtin unalias __terret_c;"
  "[[ -n ${PS1+${PS1@a}} ]]||PS1=$__terret_ps1;\\__terret_N||__terret_f+=M;%4$s"
  "__terret_k=%1$" G_GUINT64_FORMAT ";"
  "[[ $__terret_f != *P* ]]||\\builtin printf %%s \"${__terret_ps1@P}\" >&$__terret_in;}"
  " 0<&$((__terret_xf=10#0${BASH_XTRACEFD:+${BASH_XTRACEFD//[!0-9]/}},"
  "__terret_xf=__terret_xf>2?__terret_xf:2,0)) >&- 2>&- {__terret_xf}>&-"
  "||__terret_k=%1$" G_GUINT64_FORMAT " __terret_f=r;"
  "[[ -t 0&&-t 2 ]]||\\__terret_fds";

/* Before the command. The fast path puts back `$_`, and the careful path
 * what was set aside as well: first the command's own standard error, in
 * the open (a redirection made inside the closed group would end with
 * it), then the rest in a group with stdout and stderr closed, since a
 * RETURN trap fires as __terret_R returns; the arguments only set `$_`.
 * A command that may exec another program first has a new shell made to
 * announce itself (__terret_X). */
static const char fast_restore[] = "\\builtin : __terret_k=%1$" G_GUINT64_FORMAT " \"$__terret_u\";";
static const char careful_restore[] =
  "[[ -z $__terret_rf ]]||\\builtin eval \"$__terret_rf\";"
  "{ %2$s\\__terret_R __terret_k=%1$" G_GUINT64_FORMAT " \"$__terret_u\";} >&- 2>&-;";

/* The alias carry's two lines: the group stored as the alias the
 * second line is, in one assignment (a ^C lands before it or after it),
 * and the alias. bash parses the whole group before it runs any of it:
 * a syntax error fails it at once, with bash's own message and status 2,
 * and a group left open (a quote, an `if` without `fi`) makes bash ask for
 * more with PS2, which is a marker of its own (RS key C RS key): the
 * session then takes the line back with ^C and sends the command in an
 * eval, which says what is wrong. The prompt between the lines prints
 * nothing (__terret_i=0 selects the empty element of __terret_x in PS1,
 * once). */
static const char alias_request[] =
  "BASH_ALIASES[__terret_c]=$'%2$s' __terret_a=%1$" G_GUINT64_FORMAT " __terret_i=0 "
  "PS1=$__terret_psw\n__terret_c\n";

/* The eval carry's line: the group in an eval. A syntax error fails the
 * eval at once, with bash's message and status 2, before anything of the
 * group runs; the harness did not run either, and the recovery that the
 * stale marker brings carries the status. (A quote left open makes bash
 * print its last prompt again, unexpanded: that stale marker too.) */
static const char eval_request[] = "\\builtin eval $'%1$s'\n";

/* For a channel whose terminal modes cannot be set from the host side
 * (a remote pty behind ssh): the same modes, from inside, after every
 * command, so `stty sane` cannot mangle the marker or make later
 * requests echo, and ^C interrupts whatever modes the remote terminal
 * was made with; `command -p`, so an empty PATH cannot stop it. */
#define TTY_MODES \
  "-echo -opost -icanon -ixon -ixoff -istrip -inlcr -igncr -icrnl isig intr ^C min 1 time 0"
static const char remote_modes[] =
  "\\command -p stty " TTY_MODES " 2>/dev/null;PS1='\\036%1$s0:0:i::;\\036%1$s'$'\\n'\n";

/* Set up once per shell.
 *
 * `set +m` turns job control off, a disposal decision: every child stays
 * in the group bash leads, which one signal ends as a unit (the launcher
 * contains the rest). The cost, stated: no `fg`, `bg` or `%1`.
 * `+o history` with HISTFILE unset keeps requests out of the history and
 * the user's history file unwritten; `+H` keeps `!` from rewriting
 * requests. PS0 and PS2 empty, so nothing but the marker is printed
 * between exchanges.
 *
 * PS1 is the marker, `\036${__terret_K}...`: prompt decoding makes the
 * RS, so PS1's value holds neither it nor the key. For the prompt between
 * an alias request's two lines the request sets PS1 to
 * `${__terret_x[__terret_i++]-MARKER}` and the counter to 0: element 0 of
 * __terret_x is the only one set, and it is empty, so that one prompt
 * prints nothing and every later one the marker, until the harness puts
 * the plain one back.
 *
 * __terret_N is the careful harness and __terret_T its checks alone, for
 * PROMPT_COMMAND's last word: a DEBUG trap found by the probe and set
 * aside; builtins the steps use enabled again; xtrace, verbose,
 * allexport and history expansion set aside (the restore step puts them
 * back), line editing (with it bash echoes what it reads), job control
 * and the history list turned off; promptvars on; aliases named like the
 * reserved words the requests use removed; PS1 the marker again (unless
 * read-only: flag P), its attributes dropped; TMOUT (bash would leave
 * the prompt after it) and HISTFILE set aside; PROMPT_COMMAND kept but
 * made to end with __terret_T, and put back as the user had it before
 * each command. Flags say what was done; capitals say what makes the
 * shell unusable. Each ends with an assignment, so its status is 0
 * whatever `return` has become.
 * __terret_fds puts back standard input (bash reads the next request from
 * it: from the terminal as the shell first had it, kept aside in
 * __terret_in, since a `2>/dev/tty` is a terminal but write-only) and
 * standard error (the prompt goes there), restoring the command's for the
 * next command; with `exec` itself, since redirections made through
 * `builtin exec` last only as long as that command (a function of that
 * name is removed first). __terret_R is the restore step. __terret_X
 * exports a PROMPT_COMMAND and an ENV that make a bash or a POSIX shell
 * exec'd in the session's place print `RS key R RS key`; not the
 * session's own bash, which keeps __terret_xa (unexported) and holds
 * them still when ^C cut its line short: its prompt is an earlier
 * exchange's, as after any ^C. __terret_c runs
 * when the request's alias did not expand (aliases off): it says so
 * (flag U), or swallows the prompt of a second line whose first never
 * finished. */
#define HARNESS_CHECKS \
  "__terret_g=$-;\\builtin set +u;__terret_e=;\\builtin eval __terret_e=1;" \
  "[[ $__terret_e == 1 ]]||{ \\command enable builtin eval : set trap unset shopt unalias export " \
  "declare printf command enable exec;__terret_e=;\\builtin eval __terret_e=1;" \
  "if [[ $__terret_e == 1 ]];then __terret_f+=n;else __terret_f+=B;fi;};" \
  "\\builtin : __terret_p;" \
  "[[ $_ == __terret_p ]]||{ __terret_d=$(\\builtin trap -p DEBUG);\\builtin trap - DEBUG;};" \
  "[[ -z $__terret_d&&$- != *[xvmaH]*&&! -o emacs&&! -o vi&&! -o history&&" \
  ":$BASHOPTS: == *:promptvars:*&&:$BASHOPTS: == *:expand_aliases:*&&" \
  "-z ${PROMPT_COMMAND[*]-}${PS0-}${TMOUT-}${HISTFILE-}${PS1+${PS1@a}}&&" \
  "${PS1-} == \"$__terret_ps1\"&&${PS2-} == \"$__terret_ps2\"&&${BASH_ALIASES@a} == A&&" \
  "${#BASH_ALIASES[@]} == 0 ]]||{ __terret_o=;" \
  "[[ -o xtrace ]]&&{ \\builtin set +x;__terret_o+='\\builtin set -x;';__terret_f+=x;};" \
  "[[ -o verbose ]]&&{ \\builtin set +v;__terret_o+='\\builtin set -v;';__terret_f+=v;};" \
  "[[ -o allexport ]]&&{ \\builtin set +a;__terret_o+='\\builtin set -a;';__terret_f+=X;" \
  "\\builtin export -n \"${!__terret_@}\" PS1;};" \
  "[[ -o histexpand ]]&&{ \\builtin set +H;__terret_o+='\\builtin set -H;';__terret_f+=Y;};" \
  "[[ -o monitor ]]&&{ \\builtin set +m;__terret_f+=m;};" \
  "[[ -o emacs||-o vi ]]&&{ \\builtin set +o emacs +o vi;__terret_f+=e;};" \
  "[[ -o history ]]&&{ \\builtin set +o history;__terret_f+=h;};" \
  "[[ :$BASHOPTS: == *:promptvars:* ]]||{ \\builtin shopt -s promptvars;__terret_f+=p;};" \
  "for __terret_w in '{' '}' '[[' ']]' if then else elif fi '!';do " \
  "[[ -z ${BASH_ALIASES[$__terret_w]+a} ]]||{ \\builtin unalias \"$__terret_w\";__terret_f+=a;};done;" \
  "[[ ${__terret_a@a}${__terret_i@a}${__terret_k@a}${__terret_s@a}${__terret_p@a} != *r* ]]||" \
  "__terret_f+=R;" \
  "if [[ ${BASH_ALIASES@a} != A||:$BASHOPTS: != *:expand_aliases:* ]];then __terret_f+=A;" \
  "else BASH_ALIASES[__terret_y]=:;\\builtin unalias __terret_y||__terret_f+=A;fi;" \
  "if [[ ${PS1+${PS1@a}} == *r* ]];then " \
  "if [[ $PS1 == \"$__terret_ps1\"||$PS1 == \"$__terret_psw\" ]];then __terret_f+=A;else __terret_f+=P;fi;" \
  "elif [[ ${PS1-} != \"$__terret_ps1\"||-n ${PS1+${PS1@a}} ]];then " \
  "[[ -z ${PS1+${PS1@a}} ]]||{ \\builtin unset -n PS1;\\builtin unset PS1;__terret_f+=q;};" \
  "PS1=$__terret_ps1;fi;" \
  "[[ ${PS2-} == \"$__terret_ps2\" ]]||if [[ ${PS2+${PS2@a}} == *r* ]];then __terret_f+=A;" \
  "else \\builtin unset -n PS2;\\builtin unset PS2;PS2=$__terret_ps2;fi;" \
  "[[ -z ${TMOUT-} ]]||if [[ ${TMOUT@a} == *r* ]];then __terret_f+=T;else " \
  "__terret_r+=\"TMOUT=${TMOUT@Q};\";\\builtin unset TMOUT;__terret_f+=t;fi;" \
  "[[ -z ${HISTFILE-}||${HISTFILE@a} == *r* ]]||{ __terret_r+=\"HISTFILE=${HISTFILE@Q};\";" \
  "\\builtin unset HISTFILE;__terret_f+=t;};" \
  "[[ -z ${PS0-} ]]||__terret_f+=z;" \
  "[[ ${1-} == t||-z ${PROMPT_COMMAND[*]-} ]]||if [[ ${PROMPT_COMMAND@a} == *r* ]];then __terret_f+=C;" \
  "else __terret_pc=(\"${PROMPT_COMMAND[@]}\") __terret_pca=${PROMPT_COMMAND@a};" \
  "[[ $__terret_pca != *[!ax]* ]]||__terret_f+=q;" \
  "\\builtin unset -n PROMPT_COMMAND;\\builtin unset PROMPT_COMMAND;" \
  "if [[ -n $__terret_pa ]];then PROMPT_COMMAND=(\"${__terret_pc[@]}\" \"$__terret_tail\");" \
  "else PROMPT_COMMAND=${__terret_pc[0]}$'\\n'$__terret_tail;fi;" \
  "__terret_r+='\\builtin unset PROMPT_COMMAND;';" \
  "if [[ $__terret_pca == *a* ]];then __terret_r+='PROMPT_COMMAND=(\"${__terret_pc[@]}\");';" \
  "else __terret_r+='PROMPT_COMMAND=${__terret_pc[0]};';fi;" \
  "[[ $__terret_pca != *x* ]]||__terret_r+='\\builtin export PROMPT_COMMAND;';__terret_f+=c;fi;" \
  "[[ -n $__terret_d ]]&&__terret_f+=d;" \
  "[[ -z $__terret_d$__terret_o ]]||__terret_r+=\"{ $__terret_d${__terret_d:+;}$__terret_o } >&- 2>&-;\";" \
  "[[ -o xtrace||-o verbose||-o emacs||-o vi ]]&&__terret_f+=F;};" \
  "[[ $__terret_g != *u* ]]||\\builtin set -u;__terret_z="

static const char handshake_script[] =
  "\\builtin set +m +H +o history;\\builtin history -c;\\builtin unset HISTFILE PROMPT_COMMAND;"
  "[[ -n ${__terret_in-} ]]||\\exec {__terret_in}<&0;PS0=;"
  "__terret_k=0 __terret_s=0 __terret_p= __terret_u= __terret_r= __terret_rf= __terret_d= __terret_f= __terret_z= __terret_q= "
  "__terret_i=2 __terret_a=0 __terret_b= __terret_e= __terret_g= __terret_xf= __terret_o= __terret_w= __terret_pa= "
  "__terret_pca= __terret_xa= __terret_xe= __terret_xs= __terret_xp=;__terret_x=('') __terret_pc=();"
  "((BASH_VERSINFO[0]*100+BASH_VERSINFO[1]>=501))&&__terret_pa=1;"
  "__terret_ps1=$'\\\\036${__terret_K}" TERRET_PROTOCOL_MARKER_FIELDS "\\\\036${__terret_K}\\n';"
  "__terret_psw=\"\\${__terret_x[__terret_i++]-$__terret_ps1}\";"
  "__terret_ps2=$'\\\\036${__terret_K}C\\\\036${__terret_K}\\n';"
  "__terret_tail='{ \\__terret_T t;[[ $__terret_f != *P* ]]||"
  "\\builtin printf %s \"${__terret_ps1@P}\" >&$__terret_in;} >&- 2>&-';"
  "__terret_N(){ __terret_r= __terret_rf= __terret_f= __terret_d=;"
  "[[ -z $__terret_xa ]]||{ [[ ${PROMPT_COMMAND-} != \"$__terret_xp\" ]]||\\builtin unset PROMPT_COMMAND;"
  "[[ ${ENV+${ENV@a}} == *r* ]]||{ \\builtin unset ENV;[[ -z $__terret_xs ]]||ENV=$__terret_xe;};"
  "__terret_xa=;};" HARNESS_CHECKS ";};"
  "__terret_T(){ " HARNESS_CHECKS ";};"
  "__terret_R(){ [[ -z $__terret_r ]]||\\builtin eval \"$__terret_r\";};"
  "\\builtin declare -ft __terret_N __terret_T __terret_R;"
  "__terret_X(){ __terret_xa=1 __terret_xe=${ENV-} __terret_xs=${ENV+s} "
  "__terret_xp=\"[ \\\"\\$\\$\\\" = $$ ]&&[ -z \\\"\\${__terret_xa-}\\\" ]&&printf '\\\\036%sR\\\\036%s\\\\n' $__terret_K $__terret_K >/dev/tty\";"
  "[[ -n ${PROMPT_COMMAND[*]-}||${PROMPT_COMMAND+${PROMPT_COMMAND@a}} == *r* ]]||"
  "\\builtin export PROMPT_COMMAND=\"$__terret_xp\";"
  "[[ ${ENV+${ENV@a}} == *r* ]]||\\builtin export ENV=\"\\$($__terret_xp)\";};"
  "__terret_c(){ __terret_q=$?;if [[ $__terret_i == 1 ]];then __terret_k=$__terret_a __terret_f+=U;"
  "else __terret_i=0 PS1=$__terret_psw;fi;\\builtin return $__terret_q;};"
  "__terret_tty(){ \\command -p stty " TTY_MODES ";};"
  "__terret_fds(){ \\builtin unset -f exec;"
  "[[ -t 0 ]]||{ if [[ -t $__terret_in ]];then \\exec 0<&$__terret_in;elif [[ -t 2 ]];then \\exec 0<&2;"
  "elif [[ -t 1 ]];then \\exec 0<&1;else \\exec 0</dev/tty;fi;__terret_f+=i;};"
  "[[ -t 2 ]]||{ \\exec {__terret_e2}>&2 2>&0;"
  "__terret_rf='\\builtin unset -f exec;\\exec 2>&$__terret_e2 {__terret_e2}>&-;';__terret_f+=o;};"
  "__terret_z=;};";

void
_terret_protocol_key_init (TerretProtocolKey *key)
{
  gsize got = 0;

  /* Each digit from one random byte below 250, so all ten are equally
   * likely. getrandom() cannot fail on a kernel with it once the pool is
   * ready; the fallback is for a kernel without it. */
  while (got < TERRET_PROTOCOL_KEY_LEN)
    {
      guint8 bytes[64];
      gssize n = getrandom (bytes, sizeof bytes, 0);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          bytes[0] = g_random_int_range (0, 250);
          n = 1;
        }
      for (gssize i = 0; i < n && got < TERRET_PROTOCOL_KEY_LEN; i++)
        if (bytes[i] < 250)
          key->key[got++] = '0' + bytes[i] % 10;
    }
  key->key[TERRET_PROTOCOL_KEY_LEN] = '\0';
  key->lead[0] = TERRET_PROTOCOL_LEAD_BYTE;
  memcpy (key->lead + 1, key->key, TERRET_PROTOCOL_KEY_LEN);
}

/* @text inside `$'...'`: every byte that is not printable ASCII (and `\`,
 * `'`, `!`) as `\xHH`, so the line is one line whatever the command
 * holds, and no control byte reaches the terminal's line discipline raw
 * (0x03 must not become SIGINT). */
static void
append_quoted (GByteArray *out,
               const char *text)
{
  static const char hex[] = "0123456789abcdef";

  for (const guint8 *p = (const guint8 *)text; *p != '\0'; p++)
    {
      if (*p >= 0x20 && *p < 0x7f && *p != '\\' && *p != '\'' && *p != '!')
        g_byte_array_append (out, p, 1);
      else
        {
          guint8 esc[4] = { '\\', 'x', hex[*p >> 4], hex[*p & 0xf] };

          g_byte_array_append (out, esc, sizeof esc);
        }
    }
}

static void
append (GByteArray *out,
        const char *text)
{
  g_byte_array_append (out, (const guint8 *)text, strlen (text));
}

/* The careful harness of exchange @exchange; @status is what it saves
 * (`$?` after a command), @last_arg what it keeps as the command's `$_`
 * (nothing for a recovery, which saved it itself). */
static char *
careful_harness (guint64     exchange,
                 const char *status,
                 const char *last_arg,
                 const char *epilogue,
                 gboolean    remote)
{
  return g_strdup_printf (careful_step, exchange, status, last_arg,
                          remote ? "\\__terret_tty;" : "", epilogue);
}

/*
 * _terret_protocol_modes:
 *
 * For a remote terminal, whose modes cannot be set from the host side:
 * the line that sets them from inside, answered by a marker of exchange
 * 0 that carries nothing else. The handshake follows once it is read,
 * for a canonical terminal would cut it at 4095 bytes; before the modes
 * apply the line itself may be echoed, and everything before the marker
 * is discarded.
 */
GByteArray *
_terret_protocol_modes (const TerretProtocolKey *key)
{
  g_autofree char *line = g_strdup_printf (remote_modes, key->key);
  GByteArray *out = g_byte_array_new ();

  append (out, line);
  return out;
}

/*
 * _terret_protocol_handshake:
 *
 * The line that sets a new shell up, answered by the first marker
 * (exchange 0).
 */
GByteArray *
_terret_protocol_handshake (const TerretProtocolKey *key)
{
  GByteArray *out = g_byte_array_sized_new (sizeof handshake_script + 256);

  append (out, handshake_script);
  append (out, "__terret_K=");
  append (out, key->key);
  append (out, ";PS2=$__terret_ps2 PS1=$__terret_ps1\n");

  return out;
}

static gboolean
is_word_char (char c)
{
  return g_ascii_isalnum (c) || c == '_' || c == '-';
}

/* Whether @word occurs in @command as a word of its own. */
static gboolean
mentions_word (const char *command,
               const char *word)
{
  gsize len = strlen (word);

  for (const char *p = strstr (command, word); p != NULL; p = strstr (p + 1, word))
    {
      if ((p == command || !is_word_char (p[-1])) && !is_word_char (p[len]))
        return TRUE;
    }
  return FALSE;
}

/*
 * _terret_protocol_choose_carry:
 *
 * A command runs at the top level through an alias, but for a
 * here-document: bash reads a here-document's body from its input, not
 * from an alias's text, so a command that may hold one runs inside an
 * eval (a here-string, `<<<`, takes nothing from later lines).
 */
TerretCarry
_terret_protocol_choose_carry (const char *command)
{
  for (const char *p = strstr (command, "<<"); p != NULL; p = strstr (p + 2, "<<"))
    {
      if (p[2] != '<')
        return TERRET_CARRY_EVAL;
      p++;
    }

  return TERRET_CARRY_ALIAS;
}

/*
 * _terret_protocol_needs_care:
 *
 * Whether @command may change shell state the fast path cannot take:
 * what names the builtins and variables that set it, and what runs code
 * from elsewhere. It errs towards care; care costs time, not correctness.
 * The fast path relies on it: no command it takes can make PS1 or a
 * variable of the session's read-only (`readonly`, `declare -r`), turn
 * off what the prompt needs (`shopt`), or disable a builtin (`enable`).
 */
gboolean
_terret_protocol_needs_care (const char *command)
{
  static const char * const words[] = {
    "set", "trap", "shopt", "source", "eval", "exec", "enable", "bind", "history",
    "readonly", "declare", "typeset", "local", "export", "unset",
    "PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS4", "TMOUT", "HISTFILE", "BASH_XTRACEFD",
    "BASH_ALIASES", "ENV", "vi", "emacs", NULL
  };

  for (guint i = 0; words[i] != NULL; i++)
    if (mentions_word (command, words[i]))
      return TRUE;
  /* The session's own names. */
  return strstr (command, "__terret") != NULL || _terret_protocol_may_persist (command);
}

/* Whether @command may run `.`: a lone dot where a command starts (not
 * `./x`, `..` or `a.b`). */
static gboolean
sources_file (const char *command)
{
  for (const char *p = strchr (command, '.'); p != NULL; p = strchr (p + 1, '.'))
    {
      if ((p == command || strchr (" \t\n;&|({", p[-1]) != NULL) &&
          (p[1] == ' ' || p[1] == '\t'))
        return TRUE;
    }
  return FALSE;
}

/* Whether @command may define a function: `name()` or `function`. */
static gboolean
defines_function (const char *command)
{
  if (mentions_word (command, "function"))
    return TRUE;

  for (const char *p = strchr (command, '('); p != NULL; p = strchr (p + 1, '('))
    {
      const char *q = p + 1;
      const char *n = p;

      while (*q == ' ' || *q == '\t')
        q++;
      while (n > command && (n[-1] == ' ' || n[-1] == '\t'))
        n--;
      if (*q == ')' && n > command && n[-1] != '$' && n[-1] != '=' && n[-1] != '(')
        return TRUE;
    }
  return FALSE;
}

/*
 * _terret_protocol_may_persist:
 *
 * Whether @command may leave behind code that changes shell state later,
 * from a command whose own text names none of it: a function, an alias, a
 * trap, a loaded builtin, or sourced or evaluated code, which may hold
 * any of those. After one, every request of that shell takes the careful
 * path.
 */
gboolean
_terret_protocol_may_persist (const char *command)
{
  static const char * const words[] = {
    "alias", "trap", "enable", "source", "eval", NULL
  };

  for (guint i = 0; words[i] != NULL; i++)
    if (mentions_word (command, words[i]))
      return TRUE;
  return sources_file (command) || defines_function (command);
}

/*
 * _terret_protocol_may_exec:
 *
 * Whether @command may `exec` another program (not only redirections),
 * which replaces the shell: a new shell would wait at a prompt of its
 * own, so the request arms it to announce itself.
 */
gboolean
_terret_protocol_may_exec (const char *command)
{
  for (const char *p = strstr (command, "exec"); p != NULL; p = strstr (p + 4, "exec"))
    {
      const char *q = p + 4;

      if ((p != command && is_word_char (p[-1])) || is_word_char (*q))
        continue;
      while (*q == ' ' || *q == '\t')
        q++;
      while (g_ascii_isdigit (*q))
        q++;
      /* Only redirections follow: `exec >log`, `exec 2>&1`, `exec {fd}<x`. */
      if (*q == '\0' || strchr ("<>&|;)\n{", *q) != NULL)
        continue;
      return TRUE;
    }
  return FALSE;
}

/* Whether @command ends in an unescaped backslash, which would join the
 * next line to its last one. */
static gboolean
ends_in_continuation (const char *command)
{
  gsize len = strlen (command);
  gsize backslashes = 0;

  while (backslashes < len && command[len - 1 - backslashes] == '\\')
    backslashes++;
  return backslashes % 2 == 1;
}

/* @text as one single-quoted word: `'` as `'\''`. */
static void
append_single_quoted (GString    *out,
                      const char *text)
{
  g_string_append_c (out, '\'');
  for (const char *p = text; *p != '\0'; p++)
    {
      if (*p == '\'')
        g_string_append (out, "'\\''");
      else
        g_string_append_c (out, *p);
    }
  g_string_append_c (out, '\'');
}

/**
 * terret_shell_is_variable_name:
 * @name: (array length=length) (element-type gchar): a name, not
 *   necessarily nul-terminated
 * @length: its length in bytes, or -1 when it is nul-terminated
 *
 * Whether @name can name a shell variable: a letter or `_`, then
 * letters, digits and `_`. For a backend that passes an environment
 * through a shell's command line, where anything else would be taken
 * for the command.
 *
 * Returns: %TRUE when it can
 *
 * Since: 0.3
 */
gboolean
terret_shell_is_variable_name (const char *name,
                               gssize      length)
{
  gsize len;

  g_return_val_if_fail (name != NULL, FALSE);

  len = length < 0 ? strlen (name) : (gsize)length;
  if (len == 0 || !(g_ascii_isalpha (name[0]) || name[0] == '_'))
    return FALSE;
  for (gsize i = 1; i < len; i++)
    if (!(g_ascii_isalnum (name[i]) || name[i] == '_'))
      return FALSE;
  return TRUE;
}

/*
 * _terret_protocol_check_env:
 *
 * Whether every `NAME=VALUE` of a request's @env can be set in a session:
 * the names go into the request's text, so only a shell variable's name
 * is taken, never one of the session's own (`__terret_...`).
 */
gboolean
_terret_protocol_check_env (const char * const  *env,
                            GError             **error)
{
  for (guint i = 0; env != NULL && env[i] != NULL; i++)
    {
      const char *eq = strchr (env[i], '=');

      if (eq == NULL || !terret_shell_is_variable_name (env[i], eq - env[i]))
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                       "env: “%s” is not NAME=VALUE with a shell variable's name", env[i]);
          return FALSE;
        }
      if (g_str_has_prefix (env[i], "__terret"))
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_REQUEST,
                       "env: “%.*s” is a name the session keeps for itself", (int)(eq - env[i]), env[i]);
          return FALSE;
        }
    }
  return TRUE;
}

/* A request's own cwd and environment, around its command. Before the
 * restore step (so no DEBUG trap or trace the command set sees them): the
 * session's cwd and each variable as it was (value, and whether it was
 * set and exported), then `cd` and `export`. The cd is an if's condition,
 * so a directory that cannot be entered runs nothing of the request (no
 * restore step either: what the last harness set aside stays aside) and
 * the else branch ends the exchange with flag W. After the command, in
 * the harness, once its status is saved: each variable put back, then
 * the session's cwd and OLDPWD; `||:`, so `set -e` cannot end the shell
 * on a cwd a command removed, and through `printf -v`, whose failure on
 * a variable the command made read-only is a builtin's status, where an
 * assignment's would abandon the rest of the line, harness and all. */
static void
context_steps (const char          *cwd,
               const char * const  *env,
               guint64              exchange,
               const char          *unalias,
               GString             *prologue,
               GString             *epilogue,
               GString             *refused)
{
  if (cwd != NULL)
    {
      g_autoptr(GString) dir = g_string_new (NULL);

      /* `./`: a relative directory is the session's, never one CDPATH finds. */
      if (cwd[0] != '/')
        {
          g_autofree char *relative = g_strconcat ("./", cwd, NULL);

          append_single_quoted (dir, relative);
        }
      else
        append_single_quoted (dir, cwd);
      /* Whether the shell got there, not cd's status alone: a cd that
       * moved but could not set an OLDPWD the session made read-only
       * fails too. */
      g_string_append_printf (prologue, "__terret_pw=${PWD-} __terret_ow=${OLDPWD-} __terret_os=${OLDPWD+s};"
                              "if \\builtin cd -- %s >&- 2>&-||[[ . -ef %s%s ]];then ",
                              dir->str, cwd[0] != '/' ? "$__terret_pw/" : "", dir->str);
      g_string_append_printf (refused, "\nelse __terret_k=%" G_GUINT64_FORMAT " __terret_f+=W "
                              "PS1=$__terret_ps1;%s\nfi", exchange, unalias);
    }

  for (guint i = 0; env != NULL && env[i] != NULL; i++)
    {
      const char *eq = strchr (env[i], '=');
      g_autofree char *name = g_strndup (env[i], eq - env[i]);

      g_string_append_printf (prologue, "__terret_ev[%u]=${%s-} __terret_ea[%u]=${%s+s${%s@a}};"
                              "\\builtin export %s=", i, name, i, name, name, name);
      append_single_quoted (prologue, eq + 1);
      g_string_append_c (prologue, ';');
      g_string_append_printf (epilogue, "\\builtin unset -v %s||\\builtin :;"
                              "[[ -z ${__terret_ea[%u]} ]]||{ \\builtin printf -v %s %%s \"${__terret_ev[%u]}\";"
                              "[[ ${__terret_ea[%u]} != *x* ]]||\\builtin export %s;};",
                              name, i, name, i, i, name);
    }

  if (cwd != NULL)
    g_string_append (epilogue, "\\builtin cd -- \"$__terret_pw\"||\\builtin :;"
                               "if [[ -n $__terret_os ]];then \\builtin printf -v OLDPWD %s \"$__terret_ow\";"
                               "else \\builtin unset -v OLDPWD;fi;");
}

/*
 * _terret_protocol_request:
 *
 * The request of exchange @exchange running @command, on the fast or the
 * @careful path, carried as @carry; with @announce, a shell the command
 * may exec in the session's place announces itself. The command runs in
 * one group with the harness after it, so bash parses both before running
 * either, and the group's status is the harness's: an ERR trap fires once
 * for a failing command. The restore step shares the command's first
 * line, so the command's line numbers are its own. With @cwd or @env
 * (checked: _terret_protocol_check_env()), the command runs there and
 * with those variables, and the session's cwd and variables are put back
 * after it (see context_steps()).
 */
GByteArray *
_terret_protocol_request (const char         *command,
                          const char         *cwd,
                          const char * const *env,
                          guint64             exchange,
                          TerretCarry         carry,
                          gboolean            careful,
                          gboolean            announce,
                          gboolean            remote)
{
  g_autofree char *restore = NULL;
  g_autofree char *step = NULL;
  g_autofree char *line = NULL;
  g_autoptr(GByteArray) group = g_byte_array_sized_new (strlen (command) + 512);
  g_autoptr(GByteArray) quoted = g_byte_array_sized_new (strlen (command) + 512);
  g_autoptr(GString) prologue = g_string_new (NULL);
  g_autoptr(GString) epilogue = g_string_new (NULL);
  g_autoptr(GString) refused = g_string_new (NULL);
  GByteArray *out = g_byte_array_sized_new (strlen (command) + 1024);
  const char *unalias = carry == TERRET_CARRY_ALIAS ? "\\builtin unalias __terret_c;" : "";

  context_steps (cwd, env, exchange, unalias, prologue, epilogue, refused);

  if (careful)
    {
      restore = g_strdup_printf (careful_restore, exchange, announce ? "\\__terret_X;" : "");
      step = careful_harness (exchange, "$? " PIPESTATUS_SAVE, " __terret_u=$_", epilogue->str, remote);
    }
  else
    {
      restore = g_strdup_printf (fast_restore, exchange);
      step = g_strdup_printf (fast_step, exchange, unalias, epilogue->str);
    }

  append (group, "{ ");
  append (group, prologue->str);
  append (group, restore);
  append (group, command);
  append (group, ends_in_continuation (command) ? "\n\n" : "\n");
  append (group, step);
  append (group, refused->str);
  append (group, "\n}");
  g_byte_array_append (group, (const guint8 *)"", 1);
  append_quoted (quoted, (const char *)group->data);
  g_byte_array_append (quoted, (const guint8 *)"", 1);

  if (carry == TERRET_CARRY_ALIAS)
    line = g_strdup_printf (alias_request, exchange, (const char *)quoted->data);
  else
    line = g_strdup_printf (eval_request, (const char *)quoted->data);
  append (out, line);

  return out;
}

/*
 * _terret_protocol_recovery:
 *
 * The careful harness alone, as exchange @exchange, after exchange
 * @abandoned ended without its harness's marker. Its status is that
 * line's: what its harness saved, if it ran (bash then printed a stale
 * prompt), else bash's `$?`, taken before anything of this line runs; it
 * keeps the command's `$_` the same way. It also checks that `builtin`
 * is still bash's own and `eval` enabled (flag `b`): a function named
 * `builtin`, or `enable -n`, takes every request line before its command
 * runs.
 */
GByteArray *
_terret_protocol_recovery (guint64  exchange,
                           guint64  abandoned,
                           gboolean remote)
{
  g_autofree char *head = NULL;
  g_autofree char *step = careful_harness (exchange, "$__terret_ps", "", "", remote);
  GByteArray *out = g_byte_array_sized_new (1024);

  head = g_strdup_printf ("__terret_ps=$((__terret_k==%1$" G_GUINT64_FORMAT "?__terret_s:$?)) "
                          "__terret_pq=${PIPESTATUS[@]} __terret_pu=$_;"
                          "[[ $__terret_k == %1$" G_GUINT64_FORMAT " ]]||"
                          "__terret_u=$__terret_pu __terret_p=$__terret_pq;__terret_b=;"
                          "\\builtin printf -v __terret_b x;\\builtin eval __terret_b+=y;", abandoned);
  append (out, head);
  append (out, step);
  append (out, ";[[ $__terret_b == xy ]]||__terret_f+=b\n");

  return out;
}

