/* terret-shell-protocol.c: what a session says to its bash, and reads back
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The rule this protocol is built to: no shell state a command sets can
 * make the session print protocol text, lose or forge a status, or hang.
 * Options (`set -x`, `set -v`, `set -e`), traps (DEBUG, ERR, RETURN),
 * functions and aliases over any name, redirections of the shell's own
 * descriptors, PS1 and PROMPT_COMMAND either behave as at a terminal or
 * end the run at once with a notice saying what happened.
 *
 * - The end of an exchange is the prompt. PS1 holds the marker: the
 *   shell's key, the number of the exchange whose harness ran last, its
 *   status, flags and the cwd, all parameter expansions. bash prints it
 *   after every line it ran, and prompt expansion runs no command, so no
 *   trap fires for it, no function or alias reaches it, `set -x` does not
 *   trace it and `set -e`/`set -u` cannot stop it.
 * - Each request is one line bash parses whole before running anything:
 *   the command quoted for `builtin eval`, so a command reading stdin
 *   never sees the protocol and a syntax error returns at once, with
 *   status 2; then the harness, which saves the status and numbers the
 *   exchange. Inside the eval, so the eval itself returns 0: an ERR trap
 *   fires once for a failing command, as at a terminal.
 * - While the shell is known clean (no DEBUG trap, no xtrace or verbose,
 *   nothing set aside), the harness is a few assignments: the fast path,
 *   costing what the command's own line costs. Its `:` is a probe: a
 *   DEBUG trap that fires before the next statement leaves `$_` its own,
 *   and the marker then says so (flag D), as `$-` says whether the
 *   command turned on xtrace, verbose or job control.
 * - When it is not, or the command's text may make it so (`set`, `trap`,
 *   `source`...), the careful path: a restore step puts back what the
 *   last harness set aside (a DEBUG trap, `set -x`), the command runs,
 *   then the harness runs in a group whose stdout and stderr are closed,
 *   so a DEBUG handler or `set -x` that reaches it prints nothing, and
 *   sets those aside again before the next request line is read. Its
 *   functions carry the trace attribute, which is what lets a DEBUG trap
 *   be set and removed from inside them.
 * - A marker numbered before the exchange means the harness never ran:
 *   the line was abandoned (^C, an expansion error), or taken by a
 *   function named `builtin`, or bash printed a prompt it had not
 *   expanded again (it does after a quote left open inside an eval). A
 *   recovery line, the harness alone, tells which and carries the line's
 *   status; a shell where even that fails is replaced, and the run says
 *   why.
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "terret-shell-protocol-private.h"

/* The prompt's lead byte: RS, which output almost never ends in (output
 * that might be the start of a marker is held back until it is known). */
#define LEAD_BYTE 0x1e

/* A status is at most 255; an exchange number is a 64-bit counter. */
#define STATUS_MAX_DIGITS 3
#define EXCHANGE_MAX_DIGITS 20
#define FLAGS_MAX 32

/* A cwd longer than this after a key is taken for output rather than held
 * back forever. */
#define CWD_MAX (64 * 1024)

/* The fast path's harness, after the command: the status, the command's
 * `$_` (put back before the next command), then the probe: `:` sets `$_`,
 * and what the next statement finds there is its argument unless a DEBUG
 * handler ran in between; no flags left from a careful step; PS1 put back, for a command that changed it
 * unseen (a function); and last the exchange's number, so a harness cut
 * short leaves the marker stale. In a group with stdout and stderr
 * closed: whatever the command turned on (xtrace, a DEBUG trap) prints
 * nothing of it, and the marker says what is now on. */
static const char fast_step[] =
  "{ __terret_s=$? __terret_u=$_;\\builtin : p;__terret_d=${_#p} __terret_f= PS1=$__terret_ps1 "
  "__terret_k=%1$" G_GUINT64_FORMAT ";} >&- 2>&-";

/* The careful path's harness: the same saved, then __terret_N, in a group
 * with stdout and stderr closed; then the descriptors the prompt needs,
 * checked in the open, by which time nothing traces them. */
static const char careful_step[] =
  "{ __terret_s=%2$s __terret_u=$_ __terret_k=%1$" G_GUINT64_FORMAT ";\\__terret_N;%3$s} >&- 2>&-;"
  "[[ -t 0&&-t 2 ]]||\\__terret_fds";

/* Before the command. The fast path puts back `$_`, and the careful path
 * what was set aside as well: first the command's own standard error, in
 * the open (a redirection made inside the closed group would end with
 * it), then the rest in a group with stdout and stderr closed, since a
 * RETURN trap fires as __terret_R returns; the arguments only set `$_`. */
static const char fast_restore[] = "\\builtin : __terret_k=%1$" G_GUINT64_FORMAT " \"$__terret_u\";";
static const char careful_restore[] =
  "[[ -z $__terret_rf ]]||\\builtin eval \"$__terret_rf\";"
  "{ \\__terret_R __terret_k=%1$" G_GUINT64_FORMAT " \"$__terret_u\";} >&- 2>&-;";

/* For a channel whose terminal modes cannot be set from the host side
 * (a remote pty behind ssh): the same modes, from inside, after every
 * command, so `stty echo` cannot make later requests echo. */
static const char remote_modes[] =
  "\\command stty -echo -onlcr -icanon -ixon -ixoff min 1 time 0 2>/dev/null;";

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
 * __terret_N is the careful harness: PS1 put back, a DEBUG trap found by
 * the probe and set aside, options checked, anything unusual to
 * __terret_fix, which sets aside what would trace or echo the next
 * request line (xtrace, verbose), turns off what a session cannot have
 * (line editing: bash 5.2 crashes when a command in an eval turns it on,
 * and with it on bash echoes what it reads; job control; the history
 * list; an alias named like a reserved word, which would take the
 * harness's own `{` or `[[`) and keeps a PROMPT_COMMAND but makes it end
 * by putting PS1 back.
 * __terret_fds puts back standard input (bash reads the next request from
 * it: from the terminal as the shell first had it, kept aside in
 * __terret_in, since a `2>/dev/tty` is a terminal but write-only) and
 * standard error (the prompt goes there), restoring the
 * command's for the next command; with `exec` itself, since redirections
 * made through `builtin exec` last only as long as that command (a
 * function of that name is removed first). __terret_R is the restore
 * step. The restore string is what __terret_R runs; the flags are what the marker
 * reports. Each ends by returning 0, or `set -e` would end the shell
 * where it found something to undo. */
static const char handshake_script[] =
  "\\builtin set +m +H +o history;\\builtin history -c;\\builtin unset HISTFILE PROMPT_COMMAND;"
  "[[ -n ${__terret_in-} ]]||\\exec {__terret_in}<&0;PS0=;PS2=;__terret_k=0 __terret_s=0 __terret_u= __terret_r= __terret_rf= __terret_d= "
  "__terret_f= __terret_pc= __terret_pcw=;"
  "__terret_N(){ __terret_r= __terret_rf= __terret_f= __terret_d= PS1=$__terret_ps1;\\builtin : __terret_p;"
  "[[ $_ == __terret_p ]]||{ __terret_d=$(\\builtin trap -p DEBUG);\\builtin trap - DEBUG;};"
  "[[ -z $__terret_d&&$- != *[xvm]*&&! -o emacs&&! -o vi&&! -o history&&"
  ":$BASHOPTS: == *:promptvars:*&&${PROMPT_COMMAND-} == \"$__terret_pcw\"&&"
  "${#BASH_ALIASES[@]} == 0 ]]||\\__terret_fix;};"
  "__terret_R(){ [[ -z $__terret_r ]]||\\builtin eval \"$__terret_r\";};"
  "\\builtin declare -ft __terret_N __terret_R;"
  "__terret_m(){ \\command stty -echo -onlcr -icanon -ixon -ixoff min 1 time 0 2>/dev/null;};"
  "__terret_fix(){ __terret_o=;"
  "[[ -o xtrace ]]&&{ \\builtin set +x;__terret_o+='\\builtin set -x;';__terret_f+=x;};"
  "[[ -o verbose ]]&&{ \\builtin set +v;__terret_o+='\\builtin set -v;';__terret_f+=v;};"
  "[[ -o monitor ]]&&{ \\builtin set +m;__terret_f+=m;};"
  "[[ -o emacs||-o vi ]]&&{ \\builtin set +o emacs +o vi;__terret_f+=e;};"
  "[[ -o history ]]&&{ \\builtin set +o history;__terret_f+=h;};"
  "[[ :$BASHOPTS: == *:promptvars:* ]]||{ \\builtin shopt -s promptvars;__terret_f+=p;};"
  "for __terret_a in '{' '}' '[[' ']]' if then else elif fi '!';do "
  "[[ -z ${BASH_ALIASES[$__terret_a]+a} ]]||{ \\builtin unalias \"$__terret_a\";__terret_f+=a;};done;"
  "[[ -n $__terret_d ]]&&__terret_f+=d;"
  "if [[ ${PROMPT_COMMAND-} != \"$__terret_pcw\" ]];then __terret_pc=${PROMPT_COMMAND-} "
  "__terret_pcw=;[[ -n $__terret_pc ]]&&{ __terret_pcw=$__terret_pc$'\\n''PS1=$__terret_ps1';"
  "PROMPT_COMMAND=$__terret_pcw;};fi;"
  "[[ -n $__terret_pcw ]]&&{ __terret_r+='PROMPT_COMMAND=$__terret_pc;';__terret_f+=c;};"
  "[[ -n $__terret_d$__terret_o ]]&&__terret_r+=\"{ $__terret_d${__terret_d:+;}$__terret_o } >&- 2>&-;\";"
  "[[ -o xtrace||-o verbose||-o emacs||-o vi ]]&&__terret_f+=F;\\builtin return 0;};"
  "__terret_fds(){ \\builtin unset -f exec;"
  "[[ -t 0 ]]||{ if [[ -t $__terret_in ]];then \\exec 0<&$__terret_in;elif [[ -t 2 ]];then \\exec 0<&2;"
  "elif [[ -t 1 ]];then \\exec 0<&1;else \\exec 0</dev/tty;fi;__terret_f+=i;};"
  "[[ -t 2 ]]||{ \\exec {__terret_e2}>&2 2>&0;"
  "__terret_rf='\\builtin unset -f exec;\\exec 2>&$__terret_e2 {__terret_e2}>&-;';__terret_f+=o;};"
  "\\builtin return 0;};";

void
_terret_protocol_key_init (TerretProtocolKey *key)
{
  static const char hex[] = "0123456789abcdef";
  guint8 bytes[TERRET_PROTOCOL_KEY_BYTES];
  gsize got = 0;

  while (got < sizeof bytes)
    {
      gssize n = getrandom (bytes + got, sizeof bytes - got, 0);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      got += n;
    }
  /* getrandom() cannot fail on a kernel with it once the pool is ready;
   * this is for a kernel without it. */
  for (; got < sizeof bytes; got++)
    bytes[got] = g_random_int_range (0, 256);

  for (gsize i = 0; i < TERRET_PROTOCOL_KEY_BYTES; i++)
    {
      key->key[2 * i] = hex[bytes[i] >> 4];
      key->key[2 * i + 1] = hex[bytes[i] & 0xf];
    }
  key->key[TERRET_PROTOCOL_KEY_LEN] = '\0';
  key->lead[0] = LEAD_BYTE;
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

/* The harness of exchange @exchange, quoted for inside an eval or not;
 * @status is what it saves (`$?` after a command). */
static void
append_step (GByteArray *out,
             guint64     exchange,
             gboolean    careful,
             const char *status,
             gboolean    remote,
             gboolean    quoted)
{
  g_autofree char *step = careful
    ? g_strdup_printf (careful_step, exchange, status, remote ? "\\__terret_m;" : "")
    : g_strdup_printf (fast_step, exchange);

  if (quoted)
    append_quoted (out, step);
  else
    append (out, step);
}

/*
 * _terret_protocol_handshake:
 *
 * The line that sets a new shell up, answered by the first marker
 * (exchange 0). With @remote, the terminal's modes are set from inside
 * first; before they apply the line itself may be echoed, and everything
 * before the marker is discarded.
 */
GByteArray *
_terret_protocol_handshake (const TerretProtocolKey *key,
                            gboolean                 remote)
{
  g_autofree char *ps1 = NULL;
  GByteArray *out = g_byte_array_sized_new (sizeof handshake_script + 256);

  if (remote)
    append (out, remote_modes);
  append (out, handshake_script);

  /* The marker. The cwd ends at the lead, which no path holds. */
  ps1 = g_strdup_printf ("%c%s${__terret_k}:${__terret_s}:$-:${__terret_f}${__terret_d:+D};"
                         "${PWD-}%c%s\n", LEAD_BYTE, key->key, LEAD_BYTE, key->key);
  append (out, "__terret_ps1=$'");
  append_quoted (out, ps1);
  append (out, "';PS1=$__terret_ps1\n");

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
 * The harness normally runs inside the eval, right after the command, so
 * the eval's own status is the harness's and an ERR trap fires once for a
 * failing command. A here-document that is never closed would take what
 * follows in the eval for its body, so a command that may hold one gets
 * the harness after the eval instead (where an ERR trap sees the eval
 * fail too, the one cost). Line editing turned on inside an eval crashes
 * bash 5.2, so a command that may do that runs from a sourced here-string.
 */
TerretCarry
_terret_protocol_choose_carry (const char *command)
{
  if (mentions_word (command, "vi") || mentions_word (command, "emacs"))
    return TERRET_CARRY_SOURCE;

  for (const char *p = strstr (command, "<<"); p != NULL; p = strstr (p + 2, "<<"))
    {
      /* A here-string (<<<) takes nothing from the lines after it. */
      if (p[2] != '<')
        return TERRET_CARRY_EVAL_APART;
      p++;
    }

  return TERRET_CARRY_EVAL;
}

/*
 * _terret_protocol_needs_care:
 *
 * Whether @command may change shell state the fast path cannot take:
 * what names the builtins and variables that set it, and what runs code
 * from elsewhere. It errs towards care; care costs time, not correctness.
 */
gboolean
_terret_protocol_needs_care (const char *command)
{
  static const char * const words[] = {
    "set", "trap", "shopt", "source", "eval", "exec", "enable", "bind", "history",
    "PROMPT_COMMAND", "PS1", "PS4", "BASH_XTRACEFD", "vi", "emacs", NULL
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
 * _terret_protocol_parse_apart:
 *
 * Whether the careful harness must run after the eval, parsed with the
 * request line before the command runs, rather than inside it, parsed
 * after: for a command that may turn on verbose (`set -v`, `-o verbose`,
 * code from elsewhere), which echoes what the eval still parses, or
 * define an alias, which would apply to it.
 */
gboolean
_terret_protocol_parse_apart (const char *command)
{
  if (mentions_word (command, "verbose") || mentions_word (command, "source") ||
      mentions_word (command, "alias") ||
      mentions_word (command, "eval") || sources_file (command))
    return TRUE;

  for (const char *p = strchr (command, '-'); p != NULL; p = strchr (p + 1, '-'))
    {
      if (p != command && is_word_char (p[-1]))
        continue;
      for (const char *q = p + 1; g_ascii_isalpha (*q); q++)
        if (*q == 'v')
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

/*
 * _terret_protocol_request:
 *
 * The request line of exchange @exchange running @command, on the fast
 * or the @careful path. The restore step shares the command's first line,
 * so the command's line numbers (in `$LINENO` and bash's messages) are
 * its own; a syntax error on that line fails it whole, restore step
 * included.
 */
GByteArray *
_terret_protocol_request (const char  *command,
                          guint64      exchange,
                          TerretCarry  carry,
                          gboolean     careful,
                          gboolean     remote)
{
  g_autofree char *restore = g_strdup_printf (careful ? careful_restore : fast_restore, exchange);
  GByteArray *out = g_byte_array_sized_new (strlen (command) + 512);

  append (out, carry == TERRET_CARRY_SOURCE ? "\\builtin . /dev/fd/9 9<<<$'" : "\\builtin eval $'");
  append_quoted (out, restore);
  append_quoted (out, command);
  if (carry == TERRET_CARRY_EVAL)
    {
      append_quoted (out, ends_in_continuation (command) ? "\n\n" : "\n");
      append_step (out, exchange, careful, "$?", remote, TRUE);
      append (out, "'");
    }
  else
    {
      append (out, "';");
      append_step (out, exchange, careful, "$?", remote, FALSE);
    }
  append (out, "\n");

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
 * is still bash's own (flag `b`): a function of that name takes every
 * request line.
 */
GByteArray *
_terret_protocol_recovery (guint64  exchange,
                           guint64  abandoned,
                           gboolean remote)
{
  g_autofree char *head = NULL;
  GByteArray *out = g_byte_array_sized_new (1024);

  head = g_strdup_printf ("__terret_ps=$((__terret_k==%1$" G_GUINT64_FORMAT "?__terret_s:$?)) "
                          "__terret_pu=$_;[[ $__terret_k == %1$" G_GUINT64_FORMAT " ]]||"
                          "__terret_u=$__terret_pu;__terret_b=;"
                          "\\builtin printf -v __terret_b x 2>/dev/null;", abandoned);
  append (out, head);
  append_step (out, exchange, TRUE, "$__terret_ps", remote, FALSE);
  append (out, ";[[ $__terret_b == x ]]||__terret_f+=b\n");

  return out;
}

static gboolean
parse_number (const guint8 *data,
              gsize         len,
              gsize        *i,
              guint         max_digits,
              char          terminator,
              guint64      *value,
              gboolean     *incomplete)
{
  guint digits = 0;

  *value = 0;
  while (*i < len && g_ascii_isdigit (data[*i]))
    {
      if (++digits > max_digits)
        return FALSE;
      *value = *value * 10 + (data[*i] - '0');
      (*i)++;
    }
  if (*i == len)
    {
      *incomplete = TRUE;
      return FALSE;
    }
  if (digits == 0 || data[*i] != terminator)
    return FALSE;
  (*i)++;
  return TRUE;
}

/* Letters up to @terminator, at most FLAGS_MAX of them; @end is where the
 * terminator was. FALSE with *@i == @len when more bytes are needed. */
static gboolean
parse_letters (const guint8 *data,
               gsize         len,
               gsize        *i,
               char          terminator,
               gsize        *end)
{
  gsize start = *i;

  while (*i < len && g_ascii_isalpha (data[*i]))
    {
      if (*i - start >= FLAGS_MAX)
        return FALSE;
      (*i)++;
    }
  if (*i == len || data[*i] != terminator)
    return FALSE;
  *end = (*i)++;
  return TRUE;
}

/*
 * _terret_protocol_parse_marker:
 *
 * @data begins with @key's lead. Parses what follows: exchange digits,
 * ':', status digits, ':', `$-`, ':', flag letters, ';', the cwd, the
 * lead again, a newline. Anything else after a lead is not a marker.
 */
TerretMarkerParse
_terret_protocol_parse_marker (const TerretProtocolKey *key,
                               const guint8            *data,
                               gsize                    len,
                               TerretMarker            *marker)
{
  gsize i = TERRET_PROTOCOL_LEAD_LEN;
  gboolean incomplete = FALSE;
  guint64 exchange, status;
  gsize options_start = 0, options_end = 0, flags_start, flags_end = 0;
  const guint8 *end;

  g_assert (len >= TERRET_PROTOCOL_LEAD_LEN);

  if (!parse_number (data, len, &i, EXCHANGE_MAX_DIGITS, ':', &exchange, &incomplete) ||
      !parse_number (data, len, &i, STATUS_MAX_DIGITS, ':', &status, &incomplete))
    return incomplete ? TERRET_MARKER_INCOMPLETE : TERRET_MARKER_INVALID;
  if (status > 255)
    return TERRET_MARKER_INVALID;
  options_start = i;

  if (!parse_letters (data, len, &i, ':', &options_end) ||
      !parse_letters (data, len, &i, ';', &flags_end))
    return i == len ? TERRET_MARKER_INCOMPLETE : TERRET_MARKER_INVALID;
  flags_start = options_end + 1;

  end = memmem (data + i, len - i, key->lead, TERRET_PROTOCOL_LEAD_LEN);
  if (end == NULL)
    return len - i > CWD_MAX ? TERRET_MARKER_INVALID : TERRET_MARKER_INCOMPLETE;
  if ((gsize)(end - data) + TERRET_PROTOCOL_LEAD_LEN == len)
    return TERRET_MARKER_INCOMPLETE;
  if (end[TERRET_PROTOCOL_LEAD_LEN] != '\n')
    return TERRET_MARKER_INVALID;

  marker->exchange = exchange;
  marker->status = (int)status;
  marker->options = g_strndup ((const char *)data + options_start, options_end - options_start);
  marker->flags = g_strndup ((const char *)data + flags_start, flags_end - flags_start);
  marker->cwd = g_strndup ((const char *)data + i, end - (data + i));
  marker->len = (end - data) + TERRET_PROTOCOL_LEAD_LEN + 1;
  return TERRET_MARKER_FOUND;
}

void
_terret_marker_clear (TerretMarker *marker)
{
  g_clear_pointer (&marker->options, g_free);
  g_clear_pointer (&marker->flags, g_free);
  g_clear_pointer (&marker->cwd, g_free);
}

/*
 * _terret_protocol_flags_state:
 *
 * What a marker says of the shell: whether the next request must take
 * the careful path (something was set aside, to put back before the
 * command), and whether a recovery must come first (a fast exchange left
 * a DEBUG trap, xtrace, verbose or job control on, which the next
 * request line would meet). @careful is the path the exchange took: the
 * fast path's D is a DEBUG trap still live; the careful harness turned
 * off what it found, and its letters say what waits to be put back.
 */
void
_terret_protocol_flags_state (const TerretMarker *marker,
                              gboolean            careful,
                              gboolean           *next_careful,
                              gboolean           *recover)
{
  gboolean live = strpbrk (marker->options, "xvm") != NULL;

  if (careful)
    {
      *recover = FALSE;
      *next_careful = live || strpbrk (marker->flags, "xvdoc") != NULL;
    }
  else
    {
      live = live || strchr (marker->flags, 'D') != NULL;
      *recover = live;
      *next_careful = live;
    }
}

/*
 * _terret_protocol_describe_flags:
 *
 * What the harness had to undo, as a sentence for a result's notice, or
 * NULL when it was nothing worth saying. Set-aside state that is put back
 * before the next command (a DEBUG trap, `set -x`, a PROMPT_COMMAND, a
 * redirected stderr) behaves as at a terminal and is not mentioned.
 */
char *
_terret_protocol_describe_flags (const char *flags)
{
  g_autoptr(GString) notice = g_string_new (NULL);

  if (flags == NULL)
    return NULL;

  if (strchr (flags, 'e') != NULL)
    g_string_append (notice, "Line editing (set -o vi or emacs) is not available in a session "
                             "and was turned off again. ");
  if (strchr (flags, 'm') != NULL)
    g_string_append (notice, "Job control (set -m) is kept off in a session, so that one signal "
                             "ends everything a command started; it was turned off again. ");
  if (strchr (flags, 'h') != NULL)
    g_string_append (notice, "The history list is kept off in a session, since it would hold "
                             "the session's own requests; it was turned off again. ");
  if (strchr (flags, 'a') != NULL)
    g_string_append (notice, "An alias named like a reserved word ({, [[, if...) would take the "
                             "session's own steps, so it was removed. ");
  if (strchr (flags, 'p') != NULL)
    g_string_append (notice, "promptvars was turned on again: the session's prompt needs it. ");
  if (strchr (flags, 'i') != NULL)
    g_string_append (notice, "The command redirected the shell's standard input; it was put back "
                             "on the terminal, since the shell reads the next command from it. ");

  if (notice->len == 0)
    return NULL;
  g_string_truncate (notice, notice->len - 1);
  return g_string_free (g_steal_pointer (&notice), FALSE);
}
