/* terret-request-private.h: what the engines tell a request
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "terret-request.h"

G_BEGIN_DECLS

void _terret_request_emit_waiting_for_input (TerretRequest *self,
                                             const char    *prompt,
                                             gboolean       secret,
                                             gboolean       pager);

G_END_DECLS
