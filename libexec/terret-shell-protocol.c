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
 *   shell's key, the exchange's number, its outcome, flags and the cwd,
 *   all parameter and arithmetic expansions. bash prints it after every
 *   line it ran, and prompt expansion runs no command, so no trap fires
 *   for it, no function or alias reaches it, `set -x` does not trace it
 *   and `set -e`/`set -u` cannot stop it. A line that ^C or an expansion
 *   error abandoned still ends in a prompt, with bash's own `$?`.
 * - Each request is one line bash parses whole before running anything:
 *   the exchange's number, then the command quoted for `builtin eval`, so
 *   a command reading stdin never sees the protocol and a syntax error
 *   returns at once with status 2.
 * - Inside the eval, a restore step puts back what the previous exchange
 *   set aside (a DEBUG trap, `set -x`), then the command runs, then the
 *   harness step saves the status and sets aside again whatever would let
 *   the next request line be traced or trapped. The harness step runs in
 *   a group whose stdout and stderr are closed, so a DEBUG trap that
 *   fires for it or `set -x` that traces it prints nothing; it finds a
 *   DEBUG trap by its effect on `$_`, options with `[[ -o ]]`, so the
 *   ordinary exchange costs a few builtins and no fork.
 * - A prompt whose number is not the exchange's means the request line
 *   never ran (a function named `builtin`, a DEBUG trap skipping
 *   commands under extdebug); an outcome past TERRET_PROTOCOL_ABANDONED
 *   means the harness step did not, and a recovery line (harness only)
 *   follows before the next command. The engine ends what it cannot
 *   recover from, and says so.
 */

#include "config.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "terret-shell-protocol-private.h"

/* The prompt's lead byte: RS, which output almost never ends in (output
 * that might be the start of a marker is held back until it is known). */
#define LEAD_BYTE 0x1e

/* A status is at most 255, plus the abandoned offset: at most 3 digits;
 * an exchange number is a 64-bit counter. */
#define OUTCOME_MAX_DIGITS 3
#define EXCHANGE_MAX_DIGITS 20
#define FLAGS_MAX 16

/* A cwd longer than this after a key is taken for output rather than held
 * back forever. */
#define CWD_MAX (64 * 1024)

/* The harness step, after the command: the status and `$_` saved, PS1
 * put back, a DEBUG trap found by the `:` it cannot let through unchanged
 * (its handler runs before `[[` and leaves `$_` its own) and set aside,
 * options checked. Anything unusual goes to __terret_fix. Closed stdout
 * and stderr keep a DEBUG handler's output and `set -x` traces of these
 * lines from ever reaching the terminal. Then the descriptors the prompt
 * needs are checked, in the open, by which time nothing traces them. */
static const char harness_step_head[] =
  "{ __terret_st=%s __terret_sc=$__terret_c __terret_u=$_ __terret_r= __terret_d= __terret_f= "
  "PS1=$__terret_ps1;";
static const char harness_step_body[] =
  "\\: __terret_p;"
  "[[ $_ == __terret_p ]]||{ __terret_d=$(\\builtin trap -p DEBUG);\\builtin trap - DEBUG;};"
  "[[ -z $__terret_d&&$- != *[xvm]*&&! -o emacs&&! -o vi&&! -o history&&"
  ":$BASHOPTS: == *:promptvars:*&&${PROMPT_COMMAND-} == \"$__terret_pcw\" ]]||\\__terret_fix;"
  "} >&- 2>&-;[[ -t 0&&-t 2 ]]||\\__terret_fds";

/* For a channel whose terminal modes cannot be set from the host side
 * (a remote pty behind ssh): the same modes, from inside, after every
 * command, so `stty echo` cannot make later requests echo. */
static const char remote_modes[] =
  "\\command stty -echo -onlcr -icanon -ixon -ixoff min 1 time 0 2>/dev/null;";

/* Before the command: what the previous harness step set aside, back in
 * place; in the ordinary case only `$_`. */
static const char restore_step[] =
  "[[ -z ${__terret_r-} ]]&&\\: \"$__terret_u\"||\\builtin eval \"$__terret_r\";";

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
 * __terret_fix sets aside whatever the harness step found: options that
 * would trace or echo the next request line, a DEBUG trap, line editing
 * (bash 5.2 crashes when a command in an eval turns it on, and with it on
 * bash echoes what it reads), a PROMPT_COMMAND, which is kept but made
 * to end by putting PS1 back. __terret_fds puts back standard input (bash
 * reads the next request from it) and standard error (the prompt goes
 * there), restoring the command's stderr for the next command. The
 * restore string is what the next request runs before its command; the
 * flags are what the marker reports. */
static const char handshake_script[] =
  "\\builtin set +m +H +o history;\\builtin history -c;\\builtin unset HISTFILE PROMPT_COMMAND;"
  "PS0=;PS2=;__terret_c=0 __terret_sc=0 __terret_st=0 __terret_u= __terret_r= __terret_d= "
  "__terret_f= __terret_pc= __terret_pcw=;"
  "__terret_fix(){ __terret_o=;"
  "[[ -o xtrace ]]&&{ \\builtin set +x;__terret_o+='\\builtin set -x;';__terret_f+=x;};"
  "[[ -o verbose ]]&&{ \\builtin set +v;__terret_o+='\\builtin set -v;';__terret_f+=v;};"
  "[[ -o monitor ]]&&{ \\builtin set +m;__terret_f+=m;};"
  "[[ -o emacs||-o vi ]]&&{ \\builtin set +o emacs +o vi;__terret_f+=e;};"
  "[[ -o history ]]&&{ \\builtin set +o history;__terret_f+=h;};"
  "[[ :$BASHOPTS: == *:promptvars:* ]]||{ \\builtin shopt -s promptvars;__terret_f+=p;};"
  "[[ -n $__terret_d ]]&&__terret_f+=d;"
  "if [[ ${PROMPT_COMMAND-} != \"$__terret_pcw\" ]];then __terret_pc=${PROMPT_COMMAND-} "
  "__terret_pcw=;[[ -n $__terret_pc ]]&&{ __terret_pcw=$__terret_pc$'\\n''PS1=$__terret_ps1';"
  "PROMPT_COMMAND=$__terret_pcw;};fi;"
  "[[ -n $__terret_pcw ]]&&__terret_r+='PROMPT_COMMAND=$__terret_pc;';"
  "[[ -n $__terret_d$__terret_o ]]&&__terret_r+=\"{ $__terret_d${__terret_d:+;}$__terret_o } >&- 2>&-;\";"
  "[[ -o xtrace||-o verbose||-o emacs||-o vi ]]&&__terret_f+=F;"
  "__terret_d=;};"
  "__terret_fds(){ [[ -t 0 ]]||{ if [[ -t 2 ]];then \\builtin exec 0<&2;"
  "elif [[ -t 1 ]];then \\builtin exec 0<&1;else \\builtin exec 0</dev/tty;fi;__terret_f+=i;};"
  "[[ -t 2 ]]||{ \\builtin exec {__terret_e2}>&2 2>&0;"
  "__terret_r=\"\\\\builtin exec 2>&\\$__terret_e2 {__terret_e2}>&-;$__terret_r\";__terret_f+=o;};};";

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

/* The harness step, saving @status (`$?` after a command). */
static void
append_harness_step (GByteArray *out,
                     const char *status,
                     gboolean    remote,
                     gboolean    quoted)
{
  void (*add) (GByteArray *, const char *) = quoted ? append_quoted : append;
  g_autofree char *head = g_strdup_printf (harness_step_head, status);

  add (out, head);
  if (remote)
    add (out, remote_modes);
  add (out, harness_step_body);
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
  ps1 = g_strdup_printf ("%c%s${__terret_c}:$((__terret_sc==__terret_c?__terret_st:256+$?)):"
                         "${__terret_f};${PWD-}%c%s\n",
                         LEAD_BYTE, key->key, LEAD_BYTE, key->key);
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

/* Whether @command may switch verbose mode on: `set` followed by options
 * holding a `v`, or the option's name. */
static gboolean
mentions_verbose (const char *command)
{
  if (mentions_word (command, "verbose"))
    return TRUE;

  for (const char *p = strstr (command, "set"); p != NULL; p = strstr (p + 1, "set"))
    {
      const char *q = p + 3;

      if ((p != command && is_word_char (p[-1])) || (*q != ' ' && *q != '\t'))
        continue;
      for (;;)
        {
          while (*q == ' ' || *q == '\t')
            q++;
          if (*q != '-' && *q != '+')
            break;
          for (q++; is_word_char (*q); q++)
            if (*q == 'v')
              return TRUE;
        }
    }
  return FALSE;
}

/*
 * _terret_protocol_choose_carry:
 *
 * The harness step normally runs inside the eval, right after the
 * command: then the eval's own status is the harness step's, so an ERR
 * trap fires once for a failing command, as at a terminal, not a second
 * time for the eval. Three kinds of command could reach text that follows
 * them in the eval, and get the harness step outside instead (where an
 * ERR trap sees the eval fail too, the one cost): a here-document that
 * is never closed takes all that follows as its body; verbose mode,
 * turned on by the command, or by a file it sources, echoes every line
 * the eval still parses. Line editing turned on inside an eval crashes
 * bash 5.2, so a command that may do that runs from a sourced
 * here-string instead.
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

  if (mentions_verbose (command) || mentions_word (command, "source") ||
      mentions_word (command, "."))
    return TERRET_CARRY_EVAL_APART;

  return TERRET_CARRY_EVAL;
}

/*
 * _terret_protocol_request:
 *
 * The request line of exchange @exchange running @command.
 *
 * The restore step shares the command's first line, so the command's
 * line numbers (in `$LINENO` and bash's messages) are its own; a syntax
 * error on that line fails it whole, restore step included, which then
 * has nothing to restore for. A blank line ends a trailing backslash
 * before the harness step.
 */
GByteArray *
_terret_protocol_request (const char  *command,
                          guint64      exchange,
                          TerretCarry  carry,
                          gboolean     remote)
{
  g_autofree char *number = g_strdup_printf ("__terret_c=%" G_GUINT64_FORMAT ";", exchange);
  GByteArray *out = g_byte_array_sized_new (strlen (command) + 1024);

  append (out, number);
  append (out, carry == TERRET_CARRY_SOURCE ? "\\builtin . /dev/fd/9 9<<<$'" : "\\builtin eval $'");
  append_quoted (out, restore_step);
  append_quoted (out, command);
  if (carry == TERRET_CARRY_EVAL)
    {
      append_quoted (out, "\n\n");
      append_harness_step (out, "$?", remote, TRUE);
      append (out, "'");
    }
  else
    {
      append (out, "';");
      append_harness_step (out, "$?", remote, FALSE);
    }
  append (out, "\n");

  return out;
}

/*
 * _terret_protocol_recovery:
 *
 * The harness step alone, for a shell whose last line did not end with
 * it: an abandoned line (^C, an expansion error), or one after which bash
 * printed a stale prompt (it does, after a quote left open inside an
 * eval). Its outcome is the last line's: the status its harness step
 * saved, if it ran, else bash's `$?`, taken before anything of this line
 * runs. It also checks that `builtin` is still bash's own (flag `b`); a
 * function of that name takes every request line.
 */
GByteArray *
_terret_protocol_recovery (guint64  exchange,
                           gboolean remote)
{
  g_autofree char *head = g_strdup_printf ("__terret_ps=$((__terret_sc==__terret_c?__terret_st:$?)) "
                                           "__terret_c=%" G_GUINT64_FORMAT ";__terret_b=;"
                                           "\\builtin printf -v __terret_b x 2>/dev/null;",
                                           exchange);
  GByteArray *out = g_byte_array_sized_new (1024);

  append (out, head);
  append_harness_step (out, "$__terret_ps", remote, FALSE);
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

/*
 * _terret_protocol_parse_marker:
 *
 * @data begins with @key's lead. Parses what follows: exchange digits,
 * ':', outcome digits, ':', flag letters, ';', the cwd, the lead again,
 * a newline. Anything else after a lead is not a marker.
 */
TerretMarkerParse
_terret_protocol_parse_marker (const TerretProtocolKey *key,
                               const guint8            *data,
                               gsize                    len,
                               TerretMarker            *marker)
{
  gsize i = TERRET_PROTOCOL_LEAD_LEN;
  gboolean incomplete = FALSE;
  guint64 exchange, outcome;
  gsize flags_start;
  const guint8 *end;

  g_assert (len >= TERRET_PROTOCOL_LEAD_LEN);

  if (!parse_number (data, len, &i, EXCHANGE_MAX_DIGITS, ':', &exchange, &incomplete) ||
      !parse_number (data, len, &i, OUTCOME_MAX_DIGITS, ':', &outcome, &incomplete))
    return incomplete ? TERRET_MARKER_INCOMPLETE : TERRET_MARKER_INVALID;
  if (outcome >= 2 * TERRET_PROTOCOL_ABANDONED)
    return TERRET_MARKER_INVALID;

  flags_start = i;
  while (i < len && g_ascii_isalpha (data[i]) && i - flags_start <= FLAGS_MAX)
    i++;
  if (i == len)
    return TERRET_MARKER_INCOMPLETE;
  if (data[i] != ';' || i - flags_start > FLAGS_MAX)
    return TERRET_MARKER_INVALID;
  i++;

  end = memmem (data + i, len - i, key->lead, TERRET_PROTOCOL_LEAD_LEN);
  if (end == NULL)
    return len - i > CWD_MAX ? TERRET_MARKER_INVALID : TERRET_MARKER_INCOMPLETE;
  if ((gsize)(end - data) + TERRET_PROTOCOL_LEAD_LEN == len)
    return TERRET_MARKER_INCOMPLETE;
  if (end[TERRET_PROTOCOL_LEAD_LEN] != '\n')
    return TERRET_MARKER_INVALID;

  marker->exchange = exchange;
  marker->outcome = (int)outcome;
  marker->flags = g_strndup ((const char *)data + flags_start, i - 1 - flags_start);
  marker->cwd = g_strndup ((const char *)data + i, end - (data + i));
  marker->len = (end - data) + TERRET_PROTOCOL_LEAD_LEN + 1;
  return TERRET_MARKER_FOUND;
}

void
_terret_marker_clear (TerretMarker *marker)
{
  g_clear_pointer (&marker->flags, g_free);
  g_clear_pointer (&marker->cwd, g_free);
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
