/* terret-output-line.h: one line of a command's output, where it was
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <glib-object.h>

#include "terret-version-macros.h"

G_BEGIN_DECLS

#define TERRET_TYPE_OUTPUT_LINE (terret_output_line_get_type ())

typedef struct _TerretOutputLine TerretOutputLine;

TERRET_AVAILABLE_IN_0_2
GType             terret_output_line_get_type   (void) G_GNUC_CONST;
TERRET_AVAILABLE_IN_0_2
TerretOutputLine *terret_output_line_new        (guint64           offset,
                                                 GBytes           *text);
TERRET_AVAILABLE_IN_0_2
TerretOutputLine *terret_output_line_ref        (TerretOutputLine *self);
TERRET_AVAILABLE_IN_0_2
void              terret_output_line_unref      (TerretOutputLine *self);
TERRET_AVAILABLE_IN_0_2
guint64           terret_output_line_get_offset (TerretOutputLine *self);
TERRET_AVAILABLE_IN_0_2
GBytes           *terret_output_line_get_text   (TerretOutputLine *self);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TerretOutputLine, terret_output_line_unref)

G_END_DECLS
