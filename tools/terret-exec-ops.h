/* terret-exec-ops.h: what a request can ask of the server, once for
 * `serve` (ops) and `mcp` (tools)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "terret-exec-stdio.h"

G_BEGIN_DECLS

/*
 * CliOpFunc:
 * @request: (nullable): for an op that takes the request fields, the
 *   request they make
 *
 * Carries out @call, whose @fields were checked against the op's list.
 * Returns %TRUE once the call answered, or will (cli_call_return());
 * %FALSE with @error, naming the field at fault, when the request is
 * refused before anything was done.
 */
typedef gboolean (*CliOpFunc) (CliCall        *call,
                               JsonObject     *fields,
                               TerretRequest  *request,
                               GError        **error);

/*
 * CliOp:
 * @name: serve's name for it
 * @tool: (nullable): mcp's tool, or %NULL where MCP has a way of its own
 * @needs: the capabilities without which mcp does not offer the tool
 * @takes_request: it takes every request field (those with a property)
 *   and a #TerretRequest made from them
 * @fields: (array zero-terminated=1) (nullable): its other fields
 * @required: (nullable): the field it cannot do without
 * @has_result: it answers with the run fields (mcp: an outputSchema)
 * @tasks: mcp may run it as a task (MCP 2025-11-25), so a call outlives
 *   its request
 * @description: the tool's, for a model
 * @func: carries it out
 * @output_schema: (nullable): for an op that answers with data of its own
 *   (cli_call_return_data()), its JSON Schema (mcp: an outputSchema)
 *
 * One op. Adding one is a row here and its function: both dialects,
 * mcp's tools/list and --help come from the rows.
 */
typedef struct
{
  const char *name;
  const char *tool;
  TerretCapabilities needs;
  gboolean takes_request;
  const char * const *fields;
  const char *required;
  gboolean has_result;
  gboolean tasks;
  const char *description;
  CliOpFunc func;
  JsonNode *(*output_schema) (void);
} CliOp;

const CliOp *cli_ops_list      (guint              *n_ops);
const CliOp *cli_op_lookup     (const char         *name);
const CliOp *cli_op_lookup_tool (const char        *tool,
                                 TerretCapabilities  caps);
char       **cli_op_field_names (const CliOp       *op);
char        *cli_ops_describe  (gboolean            tools);
gboolean     cli_op_start      (const CliOp        *op,
                                CliCall            *call,
                                JsonObject         *fields,
                                GError            **error);

G_END_DECLS
