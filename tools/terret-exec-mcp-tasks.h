/* terret-exec-mcp-tasks.h: the tasks of `terret-exec mcp` (MCP 2025-11-25,
 * and the Tasks extension of 2026-07-28)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "terret-exec-stdio.h"

G_BEGIN_DECLS

/*
 * CliMcpTaskStatus:
 *
 * Where a task is; the last three are terminal and never change.
 * input_required is only the 2026-07-28 wire's: a command waiting for
 * input on its terminal.
 */
typedef enum {
  CLI_MCP_TASK_WORKING,
  CLI_MCP_TASK_INPUT_REQUIRED,
  CLI_MCP_TASK_COMPLETED,
  CLI_MCP_TASK_FAILED,
  CLI_MCP_TASK_CANCELLED,
} CliMcpTaskStatus;

typedef struct _CliMcpTasks CliMcpTasks;
typedef struct _CliMcpTask CliMcpTask;

CliMcpTasks     *cli_mcp_tasks_new            (void);
void             cli_mcp_tasks_free           (CliMcpTasks       *tasks);
CliMcpTask      *cli_mcp_tasks_add            (CliMcpTasks       *tasks,
                                               gint64             ttl);
CliMcpTask      *cli_mcp_tasks_lookup         (CliMcpTasks       *tasks,
                                               const char        *task_id);
JsonNode        *cli_mcp_tasks_list           (CliMcpTasks       *tasks,
                                               const char        *cursor,
                                               GError           **error);
CliMcpTask      *cli_mcp_tasks_find           (CliMcpTasks       *tasks,
                                               JsonObject        *params,
                                               const char        *doing,
                                               GError           **error);
CliMcpTask      *cli_mcp_tasks_find_to_cancel (CliMcpTasks       *tasks,
                                               JsonObject        *params,
                                               GError           **error);
void             cli_mcp_tasks_remove         (CliMcpTasks       *tasks,
                                               CliMcpTask        *task);
void             cli_mcp_tasks_settle         (CliMcpTasks       *tasks,
                                               CliMcpTask        *task);

CliMcpTask      *cli_mcp_task_ref             (CliMcpTask        *task);
void             cli_mcp_task_unref           (CliMcpTask        *task);
const char      *cli_mcp_task_get_id          (CliMcpTask        *task);
CliMcpTaskStatus cli_mcp_task_get_status      (CliMcpTask        *task);
const char      *cli_mcp_task_get_status_name (CliMcpTask        *task);
gboolean         cli_mcp_task_is_terminal     (CliMcpTask        *task);
gboolean         cli_mcp_task_end             (CliMcpTask        *task,
                                               CliMcpTaskStatus   status,
                                               const char        *message,
                                               JsonNode          *result);
JsonNode        *cli_mcp_task_get_result      (CliMcpTask        *task);
void             cli_mcp_task_set_running     (CliMcpTask        *task,
                                               CliMcpTaskStatus   status,
                                               const char        *message);
const char      *cli_mcp_task_get_status_message (CliMcpTask     *task);
GDateTime       *cli_mcp_task_get_created     (CliMcpTask        *task);
GDateTime       *cli_mcp_task_get_updated     (CliMcpTask        *task);
gint64           cli_mcp_task_get_ttl         (CliMcpTask        *task);
gpointer         cli_mcp_task_get_data        (CliMcpTask        *task);
void             cli_mcp_task_set_data        (CliMcpTask        *task,
                                               gpointer           data,
                                               GDestroyNotify     destroy);
const char      *cli_mcp_task_get_call_key    (CliMcpTask        *task);
void             cli_mcp_task_set_call_key    (CliMcpTask        *task,
                                               const char        *key);
JsonNode        *cli_mcp_task_call_id         (CliMcpTask        *task);
void             cli_mcp_task_add_members     (CliMcpTask        *task,
                                               JsonBuilder       *builder);
JsonNode        *cli_mcp_task_to_json         (CliMcpTask        *task);
void             cli_mcp_task_add_waiter      (CliMcpTask        *task,
                                               CliCall           *call);
gboolean         cli_mcp_task_remove_waiter   (CliMcpTask        *task,
                                               CliCall           *call);
GPtrArray       *cli_mcp_task_take_waiters    (CliMcpTask        *task);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (CliMcpTask, cli_mcp_task_unref)

G_END_DECLS
