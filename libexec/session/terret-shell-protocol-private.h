/* terret-shell-protocol-private.h: what a session says to its bash, and reads back
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The prompt's lead byte: RS, which output almost never ends in (output
 * that might be the start of a marker is held back until it is known). */
#define TERRET_PROTOCOL_LEAD_BYTE 0x1e

/* The marker's fields after the key, as PS1 expands them: the exchange
 * whose harness ran last, its status, `$-`, the flags, the statuses of
 * the command's last pipeline (`PIPESTATUS`, space-separated), the cwd. */
#define TERRET_PROTOCOL_MARKER_FIELDS \
  "${__terret_k}:${__terret_s}:$-:${__terret_f}${__terret_d:+D}:${__terret_p};${PWD-}"

/* The key that marks a shell's prompts: decimal digits (about 133 random
 * bits), which no output processing a command can turn on rewrites
 * (`stty olcuc` upper-cases letters). */
#define TERRET_PROTOCOL_KEY_LEN 40

/* A marker is the lead (RS, then the key), the number of the exchange
 * whose harness ran last, its status, flags, the cwd, and the lead again
 * before a newline. */
#define TERRET_PROTOCOL_LEAD_LEN (TERRET_PROTOCOL_KEY_LEN + 1)

typedef struct
{
  char key[TERRET_PROTOCOL_KEY_LEN + 1];
  guint8 lead[TERRET_PROTOCOL_LEAD_LEN];
} TerretProtocolKey;

typedef enum
{
  TERRET_MARKER_INCOMPLETE,     /* may become one: wait for more bytes */
  TERRET_MARKER_INVALID,        /* not a marker: output */
  TERRET_MARKER_FOUND,
} TerretMarkerParse;

/* What a prompt says of the shell that printed it. */
typedef enum
{
  TERRET_MARKER_KIND_NORMAL,
  /* Printed through output processing a command turned on (`stty sane`
   * gives CR-LF, `stty olcuc` capitals): its fields cannot be trusted. */
  TERRET_MARKER_KIND_MANGLED,
  /* PS1 printed unexpanded: promptvars was off. */
  TERRET_MARKER_KIND_LITERAL,
  /* A new shell a command exec'd into announced itself. */
  TERRET_MARKER_KIND_REPLACED,
  /* PS2: bash asks for the rest of a command left open. */
  TERRET_MARKER_KIND_CONTINUATION,
} TerretMarkerKind;

/* What a marker says. */
typedef struct
{
  TerretMarkerKind kind;
  guint64 exchange;
  int status;
  char *options;                /* (owned) the shell's `$-` */
  char *flags;                  /* (owned) what the harness found or undid */
  char *pipestatus;             /* (owned) `PIPESTATUS` as the harness saved it */
  char *cwd;                    /* (owned) */
  gsize len;                    /* bytes of the marker */
} TerretMarker;

/* Where something that may be a marker begins in a stretch of output. */
typedef enum
{
  TERRET_LEAD_NONE,             /* nowhere: all of it is output */
  TERRET_LEAD_PARTIAL,          /* the stretch ends inside what may become one */
  TERRET_LEAD_FOUND,
} TerretLeadScan;

/* How a command is carried to bash (see terret-shell-protocol.c). */
typedef enum
{
  TERRET_CARRY_ALIAS,           /* parsed at the top level through an alias */
  TERRET_CARRY_EVAL,            /* inside an eval: one level down, for traces */
} TerretCarry;

/* terret-shell-protocol.c */
void               _terret_protocol_key_init     (TerretProtocolKey        *key);
GByteArray        *_terret_protocol_modes        (const TerretProtocolKey  *key);
GByteArray        *_terret_protocol_handshake    (const TerretProtocolKey  *key);
TerretCarry        _terret_protocol_choose_carry (const char               *command);
gboolean           _terret_protocol_needs_care   (const char               *command);
gboolean           _terret_protocol_may_persist  (const char               *command);
gboolean           _terret_protocol_may_exec     (const char               *command);
gboolean           _terret_protocol_check_env    (const char * const       *env,
                                                  GError                  **error);
GByteArray        *_terret_protocol_request      (const char               *command,
                                                  const char               *cwd,
                                                  const char * const       *env,
                                                  guint64                   exchange,
                                                  TerretCarry               carry,
                                                  gboolean                  careful,
                                                  gboolean                  announce,
                                                  gboolean                  remote);
GByteArray        *_terret_protocol_recovery     (guint64                   exchange,
                                                  guint64                   abandoned,
                                                  gboolean                  remote);

/* terret-shell-marker.c */
TerretLeadScan     _terret_protocol_scan         (const TerretProtocolKey  *key,
                                                  const guint8             *data,
                                                  gsize                     len,
                                                  gsize                    *start);
TerretMarkerParse  _terret_protocol_parse_marker (const TerretProtocolKey  *key,
                                                  const guint8             *data,
                                                  gsize                     len,
                                                  TerretMarker             *marker);
void               _terret_marker_clear          (TerretMarker             *marker);
void               _terret_protocol_flags_state  (const TerretMarker       *marker,
                                                  gboolean                  careful,
                                                  gboolean                 *next_careful,
                                                  gboolean                 *recover);
char              *_terret_protocol_describe_flags (const char             *flags);
const char        *_terret_protocol_unusable     (const char               *flags);

/* Marker flags the run acts on: the command never ran (its alias did not
 * expand), and aliases cannot carry commands. */
#define TERRET_FLAG_NOT_RUN "U"
#define TERRET_FLAG_NO_ALIAS 'A'

/* Marker flag: the request's own working directory could not be entered,
 * and nothing of the request ran. */
#define TERRET_FLAG_NO_CWD 'W'

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (TerretMarker, _terret_marker_clear)

G_END_DECLS
