/* terret-exec-json-bytes.c: bytes as a JSON member, text or base64
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * In a file of its own so that every writer of output (a result's
 * fields, a read, an MCP task) takes it from one place below them all.
 */

#include "config.h"

#include "terret-exec-json-bytes.h"

/*
 * cli_json_add_bytes:
 *
 * Bytes as a member of the object being built: `NAME: "text"` when they
 * are UTF-8 without NUL, else `NAME_base64: "..."`, exactly one of the
 * two, so a reader never has to guess. A string with an embedded NUL
 * would not survive most JSON readers' C strings (g_utf8_validate_len()
 * refuses NUL), so such bytes travel as base64 too. Empty bytes are
 * text: `NAME: ""`, never `NAME_base64: ""`, whatever @data points to.
 */
void
cli_json_add_bytes (JsonBuilder  *builder,
                    const char   *name,
                    const guint8 *data,
                    gsize         len)
{
  if (len == 0 || g_utf8_validate_len ((const char *) data, len, NULL))
    {
      g_autofree char *text = len > 0 ? g_strndup ((const char *) data, len) : g_strdup ("");

      json_builder_set_member_name (builder, name);
      json_builder_add_string_value (builder, text);
    }
  else
    {
      g_autofree char *member = g_strconcat (name, "_base64", NULL);
      g_autofree char *encoded = g_base64_encode (data, len);

      json_builder_set_member_name (builder, member);
      json_builder_add_string_value (builder, encoded);
    }
}
