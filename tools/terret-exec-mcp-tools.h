/* terret-exec-mcp-tools.h: the tools of `terret-exec mcp`, as a model
 * sees them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "terret-exec-stdio.h"

G_BEGIN_DECLS

JsonNode *cli_mcp_tools_list     (TerretCapabilities  caps,
                                  gboolean            structured,
                                  gboolean            tasks);
JsonNode *cli_mcp_tool_result    (const CliOutcome   *outcome,
                                  gboolean            structured);
char     *cli_mcp_progress_text  (GBytes             *data);

G_END_DECLS
