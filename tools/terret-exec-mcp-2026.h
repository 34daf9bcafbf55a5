/* terret-exec-mcp-2026.h: MCP 2026-07-28's wire in `terret-exec mcp`, its
 * tasks' side
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "terret-exec-mcp-tasks.h"
#include "terret-exec-mcp-wire.h"

G_BEGIN_DECLS

/* A call of the 2026-07-28 wire: a plain tools/call, or one stretch (the
 * run, then each poll) of a task's command. */
typedef struct
{
  CliMcpCallHead head;
  CliMcpTask *task;                 /* (owned) (nullable) */
} CliMcp26Call;

CliCall  *cli_mcp26_call_new        (CliStdio          *server,
                                     JsonNode          *id,
                                     CliMcpTask        *task);
void      cli_mcp26_task_begin      (CliMcpTask        *task,
                                     const char        *session);
void      cli_mcp26_task_add_members (CliMcpTask       *task,
                                     JsonBuilder       *builder,
                                     gboolean           detailed);
void      cli_mcp26_task_stretch    (CliStdio          *server,
                                     CliMcpTask        *task,
                                     const CliOutcome  *outcome);
gboolean  cli_mcp26_task_update     (CliStdio          *server,
                                     CliMcpTask        *task,
                                     JsonObject        *responses,
                                     GError           **error);
void      cli_mcp26_task_cancel     (CliStdio          *server,
                                     CliMcpTask        *task);

G_END_DECLS
