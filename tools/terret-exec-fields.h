/* terret-exec-fields.h: the fields of a request and of a result, listed
 * once for `serve`, `mcp` and `--json`
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <json-glib/json-glib.h>
#include <terret-exec.h>

G_BEGIN_DECLS

/*
 * CliFieldType:
 * @CLI_FIELD_STRING: a string
 * @CLI_FIELD_ENV: an object of strings, variable to value
 * @CLI_FIELD_SECONDS: a number of seconds, fractions allowed, 0 to %G_MAXINT
 * @CLI_FIELD_BOOLEAN: true or false
 * @CLI_FIELD_ENUM: a string, one of an enum's nicks
 * @CLI_FIELD_ANY: any JSON value
 * @CLI_FIELD_COUNT: a whole number from 0 (bytes, lines)
 *
 * What a request field holds. `null` counts as missing whatever the type.
 */
typedef enum {
  CLI_FIELD_STRING,
  CLI_FIELD_ENV,
  CLI_FIELD_SECONDS,
  CLI_FIELD_BOOLEAN,
  CLI_FIELD_ENUM,
  CLI_FIELD_ANY,
  CLI_FIELD_COUNT,
} CliFieldType;

/*
 * CliField:
 * @name: the field as requests spell it
 * @property: (nullable): the #TerretRequest property a run sets from it;
 *   %NULL for a field an op reads itself
 * @type: what it holds, for a field without @property (one with a
 *   property holds what the property's type says: a double is seconds)
 * @description: what it means, for a model reading a tool's inputSchema
 * @withheld: (nullable): a value offered only where the backend has
 *   @withheld_needs, so a model is never shown an option that fails
 * @withheld_needs: see @withheld
 * @withheld_description: (nullable): the description without @withheld
 *
 * One field a request may carry.
 */
typedef struct
{
  const char *name;
  const char *property;
  CliFieldType type;
  const char *description;
  const char *withheld;
  TerretCapabilities withheld_needs;
  const char *withheld_description;
} CliField;

const CliField *cli_field_lookup              (const char          *name);
const CliField *cli_fields_list               (guint               *n_fields);
gboolean        cli_field_check               (const CliField      *field,
                                               JsonNode            *value,
                                               GError             **error);
JsonNode       *cli_field_schema              (const CliField      *field,
                                               TerretCapabilities   caps);
TerretRequest  *cli_request_from_fields       (JsonObject          *fields);

gboolean        cli_json_get_string           (JsonObject          *object,
                                               const char          *name,
                                               const char         **out);
const char     *cli_fields_get_string         (JsonObject          *fields,
                                               const char          *name);
gint64          cli_fields_get_count          (JsonObject          *fields,
                                               const char          *name);
double          cli_fields_get_seconds        (JsonObject          *fields,
                                               const char          *name);
gboolean        cli_check_seconds             (const char          *what,
                                               double               seconds,
                                               GError             **error);

char           *cli_format_choices            (const char * const  *choices);
gboolean        cli_enum_from_nick            (GType                type,
                                               const char          *what,
                                               const char          *nick,
                                               int                 *value,
                                               GError             **error);

JsonObject     *cli_session_infos_members     (GPtrArray           *infos);
JsonNode       *cli_session_infos_schema      (void);

void            cli_result_add_members        (JsonBuilder         *builder,
                                               TerretResult        *result);
JsonNode       *cli_result_schema             (void);
char           *cli_result_field_names        (void);

G_END_DECLS
