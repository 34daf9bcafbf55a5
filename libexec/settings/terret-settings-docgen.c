/* terret-settings-docgen.c: the shared settings' property docs, from the
 * table that defines them
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Prints a C file of doc comments alone, one per property of each engine
 * class, for g-ir-scanner: the API reference then says what the table
 * says (terret-common-settings.c), and no setting is described twice.
 * Run at build time; the output is scanned, never compiled.
 */

#include "config.h"

#include <string.h>

#include "terret-common-settings-private.h"

static const char * const engine_classes[TERRET_N_ENGINES] = {
  [TERRET_ENGINE_SESSION] = "TerretSessionExecutor",
  [TERRET_ENGINE_COMMAND] = "TerretCommandExecutor",
};

/* @text as comment lines of at most 76 columns, a sentence's end added:
 * blurbs are clauses. Asterisks would be Markdown's emphasis (the glob
 * patterns of env-exclude), and a comment cannot hold its own end. */
static void
print_paragraph (GString    *out,
                 const char *text)
{
  g_autofree char *escaped = NULL;
  g_auto(GStrv) words = NULL;
  gsize column = 0;

  g_assert (strstr (text, "*/") == NULL);
  {
    g_autoptr(GString) s = g_string_new (text);

    g_string_replace (s, "*", "\\*", 0);
    if (s->len > 0 && s->str[s->len - 1] != '.')
      g_string_append_c (s, '.');
    escaped = g_string_free (g_steal_pointer (&s), FALSE);
  }

  words = g_strsplit (escaped, " ", -1);
  for (guint i = 0; words[i] != NULL; i++)
    {
      if (column > 0 && column + 1 + strlen (words[i]) > 76)
        {
          g_string_append_c (out, '\n');
          column = 0;
        }
      if (column == 0)
        {
          g_string_append (out, " * ");
          column = 3;
        }
      else
        {
          g_string_append_c (out, ' ');
          column++;
        }
      g_string_append (out, words[i]);
      column += strlen (words[i]);
    }
  g_string_append (out, "\n");
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GString) out = g_string_new (NULL);
  const TerretSettingDef *defs;
  guint n_defs;

  if (argc != 2)
    {
      g_printerr ("Usage: %s OUTPUT\n", argv[0]);
      return 2;
    }

  defs = _terret_settings_get_defs (&n_defs);
  g_string_append (out, "/* The shared settings' property docs, generated from the table in\n"
                        " * terret-common-settings.c by terret-settings-docgen: scanned for\n"
                        " * the API reference, never compiled. */\n");

  for (guint engine = 0; engine < TERRET_N_ENGINES; engine++)
    for (guint i = 0; i < n_defs; i++)
      {
        const TerretSettingDef *def = &defs[i];
        const char *blurb = def->blurb[engine] != NULL ? def->blurb[engine]
                                                       : def->blurb[TERRET_ENGINE_SESSION];

        if ((def->engines & TERRET_SETTING_ENGINE (engine)) == 0)
          continue;
        g_string_append_printf (out, "\n/**\n * %s:%s:\n *\n", engine_classes[engine], def->name);
        print_paragraph (out, blurb);
        if (def->doc != NULL)
          {
            g_string_append (out, " *\n");
            print_paragraph (out, def->doc);
          }
        g_string_append_printf (out, " *\n * Since: %s\n */\n", def->since[engine]);
      }

  {
    g_autoptr(GError) error = NULL;

    if (!g_file_set_contents (argv[1], out->str, out->len, &error))
      {
        g_printerr ("%s\n", error->message);
        return 1;
      }
  }

  return 0;
}
