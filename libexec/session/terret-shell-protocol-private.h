/* terret-shell-protocol-private.h: what a session says to its bash, and reads back
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The key that marks a shell's prompts: 16 random bytes as hex. */
#define TERRET_PROTOCOL_KEY_BYTES 16
#define TERRET_PROTOCOL_KEY_LEN (TERRET_PROTOCOL_KEY_BYTES * 2)

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

/* What a marker says. */
typedef struct
{
  guint64 exchange;
  int status;
  char *options;                /* (owned) the shell's `$-` */
  char *flags;                  /* (owned) what the harness found or undid */
  char *cwd;                    /* (owned) */
  gsize len;                    /* bytes of the marker */
} TerretMarker;

/* How a command is carried to bash (see terret-shell-protocol.c). */
typedef enum
{
  TERRET_CARRY_EVAL,            /* the harness inside the eval */
  TERRET_CARRY_EVAL_APART,      /* the harness after the eval */
  TERRET_CARRY_SOURCE,          /* `.` of a here-string, the harness after */
} TerretCarry;

void               _terret_protocol_key_init    (TerretProtocolKey        *key);
GByteArray        *_terret_protocol_handshake   (const TerretProtocolKey  *key,
                                                 gboolean                  remote);
TerretCarry        _terret_protocol_choose_carry (const char              *command);
gboolean           _terret_protocol_needs_care  (const char               *command);
gboolean           _terret_protocol_may_persist (const char               *command);
gboolean           _terret_protocol_parse_apart (const char               *command);
GByteArray        *_terret_protocol_request     (const char               *command,
                                                 guint64                   exchange,
                                                 TerretCarry               carry,
                                                 gboolean                  careful,
                                                 gboolean                  remote);
GByteArray        *_terret_protocol_recovery    (guint64                   exchange,
                                                 guint64                   abandoned,
                                                 gboolean                  remote);
TerretMarkerParse  _terret_protocol_parse_marker (const TerretProtocolKey *key,
                                                 const guint8             *data,
                                                 gsize                     len,
                                                 TerretMarker             *marker);
void               _terret_marker_clear         (TerretMarker             *marker);
void               _terret_protocol_flags_state (const TerretMarker       *marker,
                                                 gboolean                  careful,
                                                 gboolean                 *next_careful,
                                                 gboolean                 *recover);
char              *_terret_protocol_describe_flags (const char            *flags);

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (TerretMarker, _terret_marker_clear)

G_END_DECLS
