/* terret-result-private.h: what the engines attach to a result
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "terret-result.h"
#include "terret-output-line.h"
#include "terret-capture-private.h"
#include "terret-spool-private.h"
#include "terret-result-input-private.h"

G_BEGIN_DECLS

void _terret_result_set_spool         (TerretResult *self,
                                       TerretStream  stream,
                                       TerretSpool  *spool);
void _terret_result_set_omitted_lines (TerretResult *self,
                                       TerretStream  stream,
                                       guint64       lines,
                                       GPtrArray    *errors);
void _terret_result_set_input_wait    (TerretResult          *self,
                                       const TerretInputWait *wait);

void _terret_result_report_omitted    (TerretResult        *self,
                                       TerretStream         stream,
                                       TerretStreamCapture *capture,
                                       guint64              base);

G_END_DECLS
