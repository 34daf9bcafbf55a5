/* terret-exec-mcp-wire.h: one MCP revision's wire in `terret-exec mcp`
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>

#include "terret-exec-ops.h"
#include "terret-exec-stdio.h"

G_BEGIN_DECLS

/* JSON-RPC 2.0's error codes, and MCP 2026-07-28's own. */
#define CLI_RPC_PARSE_ERROR          -32700
#define CLI_RPC_INVALID_REQUEST      -32600
#define CLI_RPC_METHOD_NOT_FOUND     -32601
#define CLI_RPC_INVALID_PARAMS       -32602
#define CLI_RPC_INTERNAL_ERROR       -32603
#define CLI_RPC_UNSUPPORTED_VERSION  -32022

/* Where a 2026-07-28 request names its revision, in params._meta. */
#define CLI_MCP_PROTOCOL_VERSION_META "io.modelcontextprotocol/protocolVersion"

/* What every revision's instructions begin with. */
#define CLI_MCP_INSTRUCTIONS \
  "Runs shell commands with the bash tool. A session keeps its shell where the backend " \
  "allows (cd and export persist); one command runs per session at a time."

typedef struct _CliMcpWire CliMcpWire;

/*
 * CliMcpWire:
 * @versions: (array zero-terminated=1): the revisions it speaks, newest first
 * @state_new: (nullable): its own state for a server, made at its first message
 * @state_free: (nullable): frees that state when the server ends
 * @request: answers a request (an id that is a string or an integer)
 * @notification: takes a notification, which is never answered
 * @respond: a call it started ended (cli_stdio's respond)
 *
 * One revision's methods and shapes, as libsoup has one table per HTTP
 * version: terret-exec-mcp.c frames JSON-RPC and picks the table per
 * message; a new revision is one more file with one more table.
 */
struct _CliMcpWire
{
  const char * const *versions;
  gpointer (*state_new)    (void);
  void     (*state_free)   (gpointer          state);
  void     (*request)      (CliStdio         *server,
                            JsonNode         *id,
                            const char       *method,
                            JsonObject       *params);
  void     (*notification) (CliStdio         *server,
                            const char       *method,
                            JsonObject       *params);
  void     (*respond)      (CliStdio         *server,
                            CliCall          *call,
                            const CliOutcome *outcome);
};

/* MCP 2025-11-25 and the revisions before it: initialize, then requests. */
extern const CliMcpWire cli_mcp_wire_2025;
/* MCP 2026-07-28: stateless requests, and the Tasks extension. */
extern const CliMcpWire cli_mcp_wire_2026;

/*
 * CliMcpCallHead:
 *
 * What the data of every call a wire starts begins with, so the call's
 * end reaches the wire that started it.
 */
typedef struct
{
  const CliMcpWire *wire;
} CliMcpCallHead;

gpointer   cli_mcp_wire_state            (CliStdio         *server,
                                          const CliMcpWire *wire);
char     **cli_mcp_versions              (void);
void       cli_mcp_respond_result        (CliStdio         *server,
                                          JsonNode         *id,
                                          JsonNode         *result);
void       cli_mcp_respond_error         (CliStdio         *server,
                                          JsonNode         *id,
                                          int               code,
                                          const char       *message);
void       cli_mcp_respond_error_data    (CliStdio         *server,
                                          JsonNode         *id,
                                          int               code,
                                          const char       *message,
                                          JsonNode         *data);
void       cli_mcp_respond_no_method     (CliStdio         *server,
                                          JsonNode         *id,
                                          const char       *method);
JsonNode  *cli_mcp_empty_result          (void);
void       cli_mcp_notification          (CliStdio         *server,
                                          const char       *method,
                                          JsonObject       *params);
TerretCapabilities cli_mcp_server_caps   (CliStdio         *server);
JsonNode  *cli_mcp_server_info           (void);
void       cli_mcp_add_immediate_response (JsonBuilder     *builder,
                                          const char       *words);
const CliOp *cli_mcp_tool_call_read      (CliStdio         *server,
                                          JsonNode         *id,
                                          JsonObject       *params,
                                          JsonObject      **arguments);
gboolean   cli_mcp_tool_call_start       (CliStdio         *server,
                                          JsonNode         *id,
                                          CliCall          *call,
                                          const CliOp      *op,
                                          JsonObject       *arguments);
gboolean   cli_mcp_call_answers          (CliCall          *call,
                                          const CliOutcome *outcome);

G_END_DECLS
