/* terret-exec-mcp-tools.h: the tools `terret-exec mcp` offers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>
#include <terret-exec.h>

G_BEGIN_DECLS

/*
 * CliMcpProgressFunc:
 *
 * Output of a tool call's command while it runs, as text (bytes that are
 * not UTF-8 replaced), for the protocol to pass on as progress.
 */
typedef void (*CliMcpProgressFunc) (const char *text,
                                    gpointer    user_data);

/*
 * CLI_MCP_TOOLS_ERROR:
 *
 * A call the protocol refuses before any tool runs: the tool is unknown,
 * or the arguments do not match its inputSchema. Anything the executor
 * refuses is a tool result with isError instead.
 */
#define CLI_MCP_TOOLS_ERROR (cli_mcp_tools_error_quark ())

typedef enum {
  CLI_MCP_TOOLS_ERROR_UNKNOWN_TOOL,
  CLI_MCP_TOOLS_ERROR_INVALID_ARGUMENTS,
} CliMcpToolsError;

#define CLI_TYPE_MCP_TOOLS (cli_mcp_tools_get_type ())
G_DECLARE_FINAL_TYPE (CliMcpTools, cli_mcp_tools, CLI, MCP_TOOLS, GObject)

GQuark       cli_mcp_tools_error_quark (void);
CliMcpTools *cli_mcp_tools_new         (TerretExecutor      *executor);
JsonNode    *cli_mcp_tools_list        (CliMcpTools         *self,
                                        gboolean             structured);
void         cli_mcp_tools_call_async  (CliMcpTools         *self,
                                        const char          *name,
                                        JsonObject          *arguments,
                                        gboolean             structured,
                                        CliMcpProgressFunc   progress,
                                        gpointer             progress_data,
                                        GCancellable        *cancellable,
                                        GAsyncReadyCallback  callback,
                                        gpointer             user_data);
JsonNode    *cli_mcp_tools_call_finish (CliMcpTools         *self,
                                        GAsyncResult        *result,
                                        GError             **error);
void         cli_mcp_tools_close_all   (CliMcpTools         *self);

G_END_DECLS
