/* bench-floor-common.c: the stdio protocol, as little of it as a floor
 * server needs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-floor-common.h"

void
floor_write_all (int         fd,
                 const void *data,
                 gsize       len)
{
  const char *p = data;

  while (len > 0)
    {
      gssize n = write (fd, p, len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        exit (1);
      p += n;
      len -= n;
    }
}

/* The next request line; FALSE at the end of input. A line that is no
 * JSON object is answered here and skipped. */
gboolean
floor_read_request (FloorRequest *request)
{
  static char *line = NULL;
  static size_t size = 0;

  for (;;)
    {
      JsonObject *object;

      if (getline (&line, &size, stdin) < 0)
        {
          g_clear_pointer (&line, free);
          return FALSE;
        }

      memset (request, 0, sizeof *request);
      request->root = json_from_string (line, NULL);
      if (request->root == NULL || !JSON_NODE_HOLDS_OBJECT (request->root))
        {
          floor_respond_error (request, "invalid-request", "not a JSON object");
          floor_clear_request (request);
          continue;
        }

      object = json_node_get_object (request->root);
      request->id = json_object_get_member (object, "id");
      request->op = json_object_get_string_member_with_default (object, "op", "run");
      request->session = json_object_get_string_member_with_default (object, "session", "default");
      request->command = json_object_get_string_member_with_default (object, "command", NULL);
      return TRUE;
    }
}

void
floor_clear_request (FloorRequest *request)
{
  g_clear_pointer (&request->root, json_node_unref);
}

static void
add_stream (JsonBuilder  *builder,
            const char   *name,
            const guint8 *data,
            gsize         len)
{
  if (g_utf8_validate_len ((const char *)data, len, NULL))
    {
      g_autofree char *text = g_strndup ((const char *)data, len);

      json_builder_set_member_name (builder, name);
      json_builder_add_string_value (builder, text);
    }
  else
    {
      g_autofree char *member = g_strconcat (name, "_base64", NULL);
      g_autofree char *text = g_base64_encode (data, len);

      json_builder_set_member_name (builder, member);
      json_builder_add_string_value (builder, text);
    }
}

static void
send_object (JsonBuilder *builder)
{
  g_autoptr(JsonNode) root = json_builder_get_root (builder);
  g_autofree char *text = json_to_string (root, FALSE);
  gsize len = strlen (text);

  /* One write a response, newline included. */
  text = g_realloc (text, len + 2);
  text[len] = '\n';
  floor_write_all (1, text, len + 1);
}

static void
begin (JsonBuilder  *builder,
       FloorRequest *request,
       gboolean      ok)
{
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "id");
  if (request->id != NULL)
    json_builder_add_value (builder, json_node_copy (request->id));
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "ok");
  json_builder_add_boolean_value (builder, ok);
}

/* A run's response; a negative @status is none (the run ended without). */
void
floor_respond (FloorRequest *request,
               int           status,
               const guint8 *out,
               gsize         out_len,
               const guint8 *err,
               gsize         err_len,
               gboolean      streams_merged)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  begin (builder, request, TRUE);
  json_builder_set_member_name (builder, "status");
  if (status >= 0)
    json_builder_add_int_value (builder, status);
  else
    json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "signal");
  json_builder_add_null_value (builder);
  add_stream (builder, "stdout", out != NULL ? out : (const guint8 *)"", out_len);
  if (streams_merged)
    {
      json_builder_set_member_name (builder, "stderr");
      json_builder_add_null_value (builder);
    }
  else
    add_stream (builder, "stderr", err != NULL ? err : (const guint8 *)"", err_len);
  json_builder_set_member_name (builder, "notice");
  json_builder_add_null_value (builder);
  json_builder_set_member_name (builder, "timed_out");
  json_builder_add_boolean_value (builder, FALSE);
  json_builder_set_member_name (builder, "dropped");
  json_builder_add_int_value (builder, 0);
  json_builder_end_object (builder);
  send_object (builder);
}

void
floor_respond_error (FloorRequest *request,
                     const char   *code,
                     const char   *message)
{
  g_autoptr(JsonBuilder) builder = json_builder_new ();

  begin (builder, request, FALSE);
  json_builder_set_member_name (builder, "error");
  json_builder_begin_object (builder);
  json_builder_set_member_name (builder, "code");
  json_builder_add_string_value (builder, code);
  json_builder_set_member_name (builder, "message");
  json_builder_add_string_value (builder, message);
  json_builder_end_object (builder);
  json_builder_end_object (builder);
  send_object (builder);
}
