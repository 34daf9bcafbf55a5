/* terret-session-info.h: one entry of an executor's list
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <glib-object.h>

#include "terret-types.h"

G_BEGIN_DECLS

#define TERRET_TYPE_SESSION_INFO (terret_session_info_get_type ())

TERRET_AVAILABLE_IN_0_2
G_DECLARE_FINAL_TYPE (TerretSessionInfo, terret_session_info, TERRET, SESSION_INFO, GObject)

TERRET_AVAILABLE_IN_0_2
TerretSessionInfo  *terret_session_info_new              (const char          *key,
                                                          TerretSessionState   state,
                                                          const char          *command,
                                                          GDateTime           *started,
                                                          GPid                 pid,
                                                          guint64              output_bytes);
TERRET_AVAILABLE_IN_0_2
const char         *terret_session_info_get_key          (TerretSessionInfo   *self);
TERRET_AVAILABLE_IN_0_2
TerretSessionState  terret_session_info_get_state        (TerretSessionInfo   *self);
TERRET_AVAILABLE_IN_0_2
const char         *terret_session_info_get_command      (TerretSessionInfo   *self);
TERRET_AVAILABLE_IN_0_2
GDateTime          *terret_session_info_get_started      (TerretSessionInfo   *self);
TERRET_AVAILABLE_IN_0_2
GPid                terret_session_info_get_pid          (TerretSessionInfo   *self);
TERRET_AVAILABLE_IN_0_2
guint64             terret_session_info_get_output_bytes (TerretSessionInfo   *self);
TERRET_AVAILABLE_IN_0_3
void                terret_session_info_set_input        (TerretSessionInfo   *self,
                                                          TerretInputState     state,
                                                          const char          *prompt,
                                                          gboolean             secret,
                                                          gboolean             pager,
                                                          double               since);
TERRET_AVAILABLE_IN_0_3
TerretInputState    terret_session_info_get_input_state  (TerretSessionInfo   *self);
TERRET_AVAILABLE_IN_0_3
const char         *terret_session_info_get_input_prompt (TerretSessionInfo   *self);
TERRET_AVAILABLE_IN_0_3
gboolean            terret_session_info_get_input_secret (TerretSessionInfo   *self);
TERRET_AVAILABLE_IN_0_3
gboolean            terret_session_info_get_input_pager  (TerretSessionInfo   *self);
TERRET_AVAILABLE_IN_0_3
double              terret_session_info_get_input_since  (TerretSessionInfo   *self);

G_END_DECLS
