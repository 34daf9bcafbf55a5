/* terret-shell-marker.c: reading what a session's bash prints back
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The other half of terret-shell-protocol.c: where in the terminal's
 * bytes a prompt of the session's begins (a marker, PS1 printed
 * unexpanded, PS2, a replacing shell's announcement), what it says, and
 * what its flags mean for the next request and for the result.
 */

#include "config.h"

#include <string.h>

#include "terret-shell-protocol-private.h"

/* A status is at most 255; an exchange number is a 64-bit counter. */
#define STATUS_MAX_DIGITS 3
#define EXCHANGE_MAX_DIGITS 20
#define FLAGS_MAX 32
/* bash keeps a status per command of a pipeline: room for thousands. */
#define PIPESTATUS_MAX (16 * 1024)

/* A cwd longer than this after a key is taken for output rather than held
 * back forever. */
#define CWD_MAX (64 * 1024)

/* What bash prints for PS1 when promptvars is off: PS1 as it stands, its
 * `\036` decoded. It begins with an RS byte, which `echo "$PS1"` does not
 * print (that prints the escape), and holds nothing of the key. */
static const char literal_prompt[] =
  "\x1e${__terret_K}" TERRET_PROTOCOL_MARKER_FIELDS "\x1e${__terret_K}\n";
#define LITERAL_LEN (sizeof literal_prompt - 1)

/*
 * _terret_protocol_scan:
 *
 * Finds where in @data something that may be a marker begins: the lead
 * (RS and @key), or PS1 printed literally. Returns where in *@start, and
 * whether @data ends before it could be told (the bytes from *@start on
 * are then held back, so no part of a marker is ever output). With
 * TERRET_LEAD_NONE, *@start is @len.
 */
TerretLeadScan
_terret_protocol_scan (const TerretProtocolKey *key,
                       const guint8            *data,
                       gsize                    len,
                       gsize                   *start)
{
  const guint8 *rs;

  for (gsize i = 0; (rs = memchr (data + i, TERRET_PROTOCOL_LEAD_BYTE, len - i)) != NULL; i++)
    {
      gsize left;

      i = rs - data;
      left = len - i;
      /* Both begin with RS; the stretch may end inside either. */
      if (memcmp (rs, key->lead, MIN (left, TERRET_PROTOCOL_LEAD_LEN)) == 0 ||
          memcmp (rs, literal_prompt, MIN (left, LITERAL_LEN)) == 0)
        {
          *start = i;
          if ((left >= TERRET_PROTOCOL_LEAD_LEN &&
               memcmp (rs, key->lead, TERRET_PROTOCOL_LEAD_LEN) == 0) ||
              (left >= LITERAL_LEN && memcmp (rs, literal_prompt, LITERAL_LEN) == 0))
            return TERRET_LEAD_FOUND;
          return TERRET_LEAD_PARTIAL;
        }
    }

  *start = len;
  return TERRET_LEAD_NONE;
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

/* Statuses separated by single spaces up to @terminator (none when no
 * pipeline ran); @end is where the terminator was. */
static gboolean
parse_statuses (const guint8 *data,
                gsize         len,
                gsize        *i,
                char          terminator,
                gsize        *end)
{
  gsize start = *i;

  while (*i < len && (g_ascii_isdigit (data[*i]) || data[*i] == ' '))
    {
      if (*i - start >= PIPESTATUS_MAX)
        return FALSE;
      (*i)++;
    }
  if (*i == len || data[*i] != terminator)
    return FALSE;
  *end = (*i)++;
  return TRUE;
}

/* After the closing lead: a newline, or CR-LF when output processing
 * was on (then the marker is mangled). */
static TerretMarkerParse
parse_end (const guint8 *data,
           gsize         len,
           gsize         i,
           gsize        *end,
           gboolean     *mangled)
{
  if (i >= len)
    return TERRET_MARKER_INCOMPLETE;
  if (data[i] == '\n')
    {
      *end = i + 1;
      return TERRET_MARKER_FOUND;
    }
  if (data[i] != '\r')
    return TERRET_MARKER_INVALID;
  if (i + 1 >= len)
    return TERRET_MARKER_INCOMPLETE;
  if (data[i + 1] != '\n')
    return TERRET_MARKER_INVALID;
  *mangled = TRUE;
  *end = i + 2;
  return TERRET_MARKER_FOUND;
}

/*
 * _terret_protocol_parse_marker:
 *
 * @data begins where _terret_protocol_scan() found something. Parses a
 * marker: the lead, exchange digits, ':', status digits, ':', `$-`, ':',
 * flag letters, ':', statuses and spaces, ';', the cwd, the lead again, a newline; or the lead, `C` (PS2: bash asks for more of a command), the
 * lead and a newline; or the lead,
 * `R`, the lead and a newline a replacing shell prints; or PS1 as it
 * stands. Anything else is not a marker. A marker whose newline came as
 * CR-LF, or whose `$-` lacks the `i` every interactive shell has (capitals
 * from `stty olcuc`), went through output processing: its kind says its
 * fields cannot be trusted.
 */
TerretMarkerParse
_terret_protocol_parse_marker (const TerretProtocolKey *key,
                               const guint8            *data,
                               gsize                    len,
                               TerretMarker            *marker)
{
  gsize i = TERRET_PROTOCOL_LEAD_LEN;
  gboolean incomplete = FALSE;
  gboolean mangled = FALSE;
  guint64 exchange, status;
  gsize options_start = 0, options_end = 0, flags_start, flags_end = 0, marker_end = 0;
  gsize statuses_start, statuses_end = 0;
  TerretMarkerParse parse;
  const guint8 *end;

  if (len >= LITERAL_LEN && memcmp (data, literal_prompt, LITERAL_LEN) == 0)
    {
      *marker = (TerretMarker) { .kind = TERRET_MARKER_KIND_LITERAL, .len = LITERAL_LEN };
      return TERRET_MARKER_FOUND;
    }
  if (len < TERRET_PROTOCOL_LEAD_LEN || memcmp (data, key->lead, TERRET_PROTOCOL_LEAD_LEN) != 0)
    return memcmp (data, literal_prompt, MIN (len, LITERAL_LEN)) == 0 ? TERRET_MARKER_INCOMPLETE
                                                                       : TERRET_MARKER_INVALID;

  if (i < len && (data[i] == 'R' || data[i] == 'C'))
    {
      TerretMarkerKind kind = data[i] == 'R' ? TERRET_MARKER_KIND_REPLACED
                                             : TERRET_MARKER_KIND_CONTINUATION;

      i++;
      if (len - i < TERRET_PROTOCOL_LEAD_LEN)
        return memcmp (data + i, key->lead, len - i) == 0 ? TERRET_MARKER_INCOMPLETE
                                                          : TERRET_MARKER_INVALID;
      if (memcmp (data + i, key->lead, TERRET_PROTOCOL_LEAD_LEN) != 0)
        return TERRET_MARKER_INVALID;
      parse = parse_end (data, len, i + TERRET_PROTOCOL_LEAD_LEN, &marker_end, &mangled);
      if (parse != TERRET_MARKER_FOUND)
        return parse;
      *marker = (TerretMarker) { .kind = kind, .len = marker_end };
      return TERRET_MARKER_FOUND;
    }

  if (!parse_number (data, len, &i, EXCHANGE_MAX_DIGITS, ':', &exchange, &incomplete) ||
      !parse_number (data, len, &i, STATUS_MAX_DIGITS, ':', &status, &incomplete))
    return incomplete ? TERRET_MARKER_INCOMPLETE : TERRET_MARKER_INVALID;
  if (status > 255)
    return TERRET_MARKER_INVALID;
  options_start = i;

  if (!parse_letters (data, len, &i, ':', &options_end) ||
      !parse_letters (data, len, &i, ':', &flags_end) ||
      !parse_statuses (data, len, &i, ';', &statuses_end))
    return i == len ? TERRET_MARKER_INCOMPLETE : TERRET_MARKER_INVALID;
  flags_start = options_end + 1;
  statuses_start = flags_end + 1;

  end = memmem (data + i, len - i, key->lead, TERRET_PROTOCOL_LEAD_LEN);
  if (end == NULL)
    return len - i > CWD_MAX ? TERRET_MARKER_INVALID : TERRET_MARKER_INCOMPLETE;
  parse = parse_end (data, len, (end - data) + TERRET_PROTOCOL_LEAD_LEN, &marker_end, &mangled);
  if (parse != TERRET_MARKER_FOUND)
    return parse;

  if (memchr (data + options_start, 'i', options_end - options_start) == NULL)
    mangled = TRUE;

  marker->kind = mangled ? TERRET_MARKER_KIND_MANGLED : TERRET_MARKER_KIND_NORMAL;
  marker->exchange = exchange;
  marker->status = (int)status;
  marker->options = g_strndup ((const char *)data + options_start, options_end - options_start);
  marker->flags = g_strndup ((const char *)data + flags_start, flags_end - flags_start);
  marker->pipestatus = g_strndup ((const char *)data + statuses_start, statuses_end - statuses_start);
  marker->cwd = g_strndup ((const char *)data + i, end - (data + i));
  marker->len = marker_end;
  return TERRET_MARKER_FOUND;
}

void
_terret_marker_clear (TerretMarker *marker)
{
  g_clear_pointer (&marker->options, g_free);
  g_clear_pointer (&marker->flags, g_free);
  g_clear_pointer (&marker->pipestatus, g_free);
  g_clear_pointer (&marker->cwd, g_free);
}

/* The letters a careful harness leaves for the restore step to act on:
 * xtrace, verbose, allexport, history expansion, a DEBUG trap, the
 * command's stderr, PROMPT_COMMAND, TMOUT or HISTFILE set aside; PS0 set. */
#define SET_ASIDE_FLAGS "xvXYdoctz"

/*
 * _terret_protocol_flags_state:
 *
 * What a marker says of the shell: whether the next request must take
 * the careful path (something was set aside, to put back before the
 * command), and whether a recovery must come first (a fast exchange left
 * a DEBUG trap, xtrace, verbose, allexport, history expansion or job
 * control on, which the next request line would meet). @careful is the
 * path the exchange took: the fast path's D is a DEBUG trap still live;
 * the careful harness turned off what it found, and its letters say what
 * waits to be put back.
 */
void
_terret_protocol_flags_state (const TerretMarker *marker,
                              gboolean            careful,
                              gboolean           *next_careful,
                              gboolean           *recover)
{
  gboolean live = strpbrk (marker->options, "xvmaH") != NULL;

  if (careful)
    {
      *recover = FALSE;
      *next_careful = live || strpbrk (marker->flags, SET_ASIDE_FLAGS) != NULL;
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
 * before the next command (a DEBUG trap, `set -x`, `set -a`, TMOUT, a
 * PROMPT_COMMAND, a redirected stderr) behaves as at a terminal and is not
 * mentioned.
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
  if (strchr (flags, 'q') != NULL)
    g_string_append (notice, "PS1 or PROMPT_COMMAND had attributes (declare -i, -l, -u, -n, "
                             "export...) that would rewrite the session's prompt; they were "
                             "removed. ");
  if (strchr (flags, 'n') != NULL)
    g_string_append (notice, "A builtin the session's own steps use had been disabled (enable -n); "
                             "it was enabled again. ");
  if (strchr (flags, 'i') != NULL)
    g_string_append (notice, "The command redirected the shell's standard input; it was put back "
                             "on the terminal, since the shell reads the next command from it. ");

  if (notice->len == 0)
    return NULL;
  g_string_truncate (notice, notice->len - 1);
  return g_string_free (g_steal_pointer (&notice), FALSE);
}

/*
 * _terret_protocol_unusable:
 *
 * Why a shell whose marker carries @flags cannot run another request,
 * or NULL when it can. Such a shell is ended after the command's result,
 * which keeps its status: what bash makes impossible is the next one.
 */
const char *
_terret_protocol_unusable (const char *flags)
{
  static const struct {
    char flag;
    const char *why;
  } reasons[] = {
    { 'P', "PS1 was made read-only with a value of its own, so the session's prompt can no "
           "longer be shown" },
    { 'C', "PROMPT_COMMAND was made read-only, so its commands would run unguarded before every "
           "prompt" },
    { 'T', "TMOUT was made read-only, so bash would end the session after that many idle seconds" },
    { 'B', "builtins the session's own steps use were disabled (enable -n) and could not be "
           "enabled again" },
    { 'M', "the session's own functions were removed (unset -f)" },
    { 'R', "a variable the session's own steps use was made read-only" },
    { 'F', "the shell's state could not be put back into a state the session can use" },
  };

  if (flags == NULL)
    return NULL;
  for (guint i = 0; i < G_N_ELEMENTS (reasons); i++)
    if (strchr (flags, reasons[i].flag) != NULL)
      return reasons[i].why;
  return NULL;
}
