/* terret-shell-state-private.h: what a session knows of its shell between runs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "terret-shell-protocol-private.h"

G_BEGIN_DECLS

/* One shell as the protocol sees it: the key its prompts carry, the last
 * exchange sent, and what its last marker said the next request must
 * do. Embedded in the session that owns the shell; touched only by the
 * run in flight, one at a time. */
typedef struct
{
  TerretProtocolKey key;
  guint64 exchange;             /* the last exchange sent */
  guint careful : 1;            /* state is set aside: the next request puts it back */
  guint always_careful : 1;     /* functions, aliases or sourced code may change state */
  guint needs_recovery : 1;     /* the shell must meet the careful harness first */
  guint hooks : 1;              /* PROMPT_COMMAND or PS0 would run twice for an alias's two lines */
  guint no_alias : 1;           /* aliases do not expand: commands go into an eval */
} TerretShellState;

GByteArray *_terret_shell_state_new_shell  (TerretShellState   *state,
                                             gboolean            remote);
GByteArray *_terret_shell_state_handshake   (TerretShellState   *state);
GByteArray *_terret_shell_state_recovery    (TerretShellState   *state,
                                             gboolean            remote,
                                             guint64            *expected);
GByteArray *_terret_shell_state_request     (TerretShellState   *state,
                                             const char         *command,
                                             const char         *cwd,
                                             const char * const *env,
                                             gboolean            remote,
                                             gboolean            in_eval,
                                             gboolean           *careful,
                                             guint64            *expected);
void        _terret_shell_state_take_marker (TerretShellState   *state,
                                             const TerretMarker *marker,
                                             gboolean            careful);
void        _terret_shell_state_forget      (TerretShellState   *state);

G_END_DECLS
