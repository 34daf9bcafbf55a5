/* terret-both-modes.c: one backend name for both modes, its mode a setting
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A backend that serves both modes under one name (the container
 * backends, flatpak-host) is one TerretEngine whose mode its mode
 * setting names: `mode=session` (one persistent bash per session key)
 * or `mode=oneshot` (`bash -c` per command). The SDK installs the
 * engines' settings on its two base classes only, so such a backend
 * installs copies of both sets, once each, in words of its own where it
 * changes their meaning. It takes every one while the registry applies
 * the configuration, whatever the mode of that moment, and refuses at
 * g_initable_init() one its mode lacks; the mode is set when the
 * executor is made, never on a live one. This is that part, the same
 * in every such backend; its own settings and hooks are its own.
 */

#include <string.h>

#include <gio/gio.h>

#include "terret-both-modes.h"

static const char * const mode_names[] = { "session", "oneshot" };

static guint8
modes_of (const TerretBothModesClass *both_class,
          guint                       prop_id)
{
  if (prop_id < both_class->first_id || prop_id - both_class->first_id >= both_class->n_settings)
    return 0;
  return both_class->modes[prop_id - both_class->first_id];
}

gboolean
terret_both_modes_has (const TerretBothModesClass *both_class,
                       GParamSpec                 *pspec,
                       TerretEngineMode            mode)
{
  return (modes_of (both_class, pspec->param_id) & (1u << mode)) != 0;
}

/* A copy of an engine's setting for the backend's class, its text
 * saying which mode it is for when only one has it. */
static GParamSpec *
copy_setting (GParamSpec                 *p,
              guint                       modes,
              const TerretBothModesWords *backend_words,
              guint                       n_words,
              GObjectClass               *klass)
{
  const GParamFlags flags = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_NAME;
  const char *name = g_param_spec_get_name (p);
  const char *words = g_param_spec_get_blurb (p);
  g_autofree char *blurb = NULL;

  for (guint i = 0; i < n_words; i++)
    if (strcmp (backend_words[i].name, name) == 0)
      words = backend_words[i].blurb;
  blurb = modes == (1u << TERRET_ENGINE_MODE_SESSION) ? g_strdup_printf ("%s (mode=session)", words)
          : modes == (1u << TERRET_ENGINE_MODE_ONESHOT) ? g_strdup_printf ("%s (mode=oneshot)", words)
          : g_strdup (words);

  if (G_IS_PARAM_SPEC_DOUBLE (p))
    {
      GParamSpecDouble *d = G_PARAM_SPEC_DOUBLE (p);

      return g_param_spec_double (name, NULL, blurb, d->minimum, d->maximum, d->default_value, flags);
    }
  if (G_IS_PARAM_SPEC_UINT64 (p))
    {
      GParamSpecUInt64 *u = G_PARAM_SPEC_UINT64 (p);

      return g_param_spec_uint64 (name, NULL, blurb, u->minimum, u->maximum, u->default_value, flags);
    }
  if (G_IS_PARAM_SPEC_UINT (p))
    {
      GParamSpecUInt *u = G_PARAM_SPEC_UINT (p);

      return g_param_spec_uint (name, NULL, blurb, u->minimum, u->maximum, u->default_value, flags);
    }
  if (G_IS_PARAM_SPEC_INT (p))
    {
      GParamSpecInt *i = G_PARAM_SPEC_INT (p);

      return g_param_spec_int (name, NULL, blurb, i->minimum, i->maximum, i->default_value, flags);
    }
  if (G_IS_PARAM_SPEC_BOOLEAN (p))
    return g_param_spec_boolean (name, NULL, blurb, G_PARAM_SPEC_BOOLEAN (p)->default_value, flags);
  if (G_IS_PARAM_SPEC_STRING (p))
    return g_param_spec_string (name, NULL, blurb, G_PARAM_SPEC_STRING (p)->default_value, flags);
  if (G_IS_PARAM_SPEC_ENUM (p))
    return g_param_spec_enum (name, NULL, blurb, G_PARAM_SPEC_VALUE_TYPE (p),
                              G_PARAM_SPEC_ENUM (p)->default_value, flags);
  if (G_IS_PARAM_SPEC_FLAGS (p))
    return g_param_spec_flags (name, NULL, blurb, G_PARAM_SPEC_VALUE_TYPE (p),
                               G_PARAM_SPEC_FLAGS (p)->default_value, flags);
  if (G_IS_PARAM_SPEC_BOXED (p))
    return g_param_spec_boxed (name, NULL, blurb, G_PARAM_SPEC_VALUE_TYPE (p), flags);

  g_error ("%s: cannot take over the setting %s of type %s", G_OBJECT_CLASS_NAME (klass), name,
           G_PARAM_SPEC_TYPE_NAME (p));
  return NULL;
}

/* Installs the mode setting at @mode_id and the engines' settings from
 * @first_id on: the backend's own settings, if any, are between. */
void
terret_both_modes_class_install (TerretBothModesClass       *both_class,
                                 GObjectClass               *klass,
                                 guint                       mode_id,
                                 GType                       mode_type,
                                 const char                 *mode_blurb,
                                 guint                       first_id,
                                 const TerretBothModesWords *words,
                                 guint                       n_words)
{
  GObjectClass *engine_classes[2] = {
    g_type_class_ref (TERRET_TYPE_SESSION_EXECUTOR),
    g_type_class_ref (TERRET_TYPE_COMMAND_EXECUTOR),
  };
  g_autoptr(GPtrArray) copies = g_ptr_array_new ();
  g_autoptr(GArray) modes = g_array_new (FALSE, TRUE, sizeof (guint8));

  /* The engines' settings, once each: the session's first, so a setting
   * both have is described as the session's (the default mode). */
  for (guint e = 0; e < G_N_ELEMENTS (engine_classes); e++)
    {
      guint n;
      g_autofree GParamSpec **pspecs = g_object_class_list_properties (engine_classes[e], &n);

      for (guint i = 0; i < n; i++)
        {
          guint j;

          if ((pspecs[i]->flags & G_PARAM_WRITABLE) == 0)
            continue;
          for (j = 0; j < copies->len; j++)
            if (strcmp (g_param_spec_get_name (g_ptr_array_index (copies, j)),
                        g_param_spec_get_name (pspecs[i])) == 0)
              break;
          if (j == copies->len)
            {
              guint8 none = 0;

              g_ptr_array_add (copies, pspecs[i]);
              g_array_append_val (modes, none);
            }
          g_array_index (modes, guint8, j) |=
            1u << (e == 0 ? TERRET_ENGINE_MODE_SESSION : TERRET_ENGINE_MODE_ONESHOT);
        }
    }

  both_class->mode_id = mode_id;
  both_class->first_id = first_id;
  both_class->n_settings = copies->len;
  both_class->modes = g_new0 (guint8, copies->len);

  g_object_class_install_property (klass, mode_id,
    g_param_spec_enum ("mode", NULL, mode_blurb, mode_type, TERRET_ENGINE_MODE_SESSION,
                       G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS));
  for (guint i = 0; i < copies->len; i++)
    {
      both_class->modes[i] = g_array_index (modes, guint8, i);
      g_object_class_install_property (klass, first_id + i,
                                       copy_setting (g_ptr_array_index (copies, i),
                                                     both_class->modes[i], words, n_words, klass));
    }
  /* The engine classes stay: the copies' names are theirs. */
}

void
terret_both_modes_init (TerretBothModes *both)
{
  both->set_early = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
}

void
terret_both_modes_clear (TerretBothModes *both)
{
  g_clear_pointer (&both->set_early, g_hash_table_unref);
}

/* From g_initable_init(): the mode is chosen, and the settings set
 * before must all be its own. */
gboolean
terret_both_modes_check (TerretBothModes             *both,
                         const TerretBothModesClass  *both_class,
                         TerretEngine                *engine,
                         GError                     **error)
{
  TerretEngineMode mode = terret_engine_get_mode (engine);
  GHashTableIter iter;
  const char *name;

  both->initialized = TRUE;

  g_hash_table_iter_init (&iter, both->set_early);
  while (g_hash_table_iter_next (&iter, (gpointer *)&name, NULL))
    {
      GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (engine), name);

      if (!terret_both_modes_has (both_class, pspec, mode))
        {
          g_set_error (error, TERRET_EXEC_ERROR, TERRET_EXEC_ERROR_INVALID_CONFIG,
                       "the setting “%s” is not one of mode=%s (it is for mode=%s)", name,
                       mode_names[mode], mode_names[!mode]);
          return FALSE;
        }
    }
  return TRUE;
}

/* The mode and the engines' settings; FALSE for a setting of the
 * backend's own. */
gboolean
terret_both_modes_get_property (TerretBothModes            *both,
                                const TerretBothModesClass *both_class,
                                TerretEngine               *engine,
                                guint                       prop_id,
                                GValue                     *value,
                                GParamSpec                 *pspec)
{
  TerretEngineMode mode = terret_engine_get_mode (engine);
  const char *name = g_param_spec_get_name (pspec);

  if (prop_id == both_class->mode_id)
    g_value_set_enum (value, mode);
  else if (modes_of (both_class, prop_id) == 0)
    return FALSE;
  /* A setting of the other mode only is its default, unless set (which
   * init then refuses). */
  else if (terret_both_modes_has (both_class, pspec, mode) ||
           g_hash_table_contains (both->set_early, name))
    terret_engine_get_shared_setting (engine, name, value);
  else
    g_param_value_set_default (pspec, value);
  return TRUE;
}

gboolean
terret_both_modes_set_property (TerretBothModes            *both,
                                const TerretBothModesClass *both_class,
                                TerretEngine               *engine,
                                guint                       prop_id,
                                const GValue               *value,
                                GParamSpec                 *pspec)
{
  TerretEngineMode mode = terret_engine_get_mode (engine);
  const char *name = g_param_spec_get_name (pspec);
  gboolean changed;

  if (prop_id == both_class->mode_id)
    {
      changed = mode != (TerretEngineMode)g_value_get_enum (value);
      if (changed && both->initialized)
        {
          g_warning ("%s: mode is set when the executor is made; this one stays mode=%s",
                     terret_executor_get_name (TERRET_EXECUTOR (engine)), mode_names[mode]);
          return TRUE;
        }
      terret_engine_set_mode (engine, g_value_get_enum (value));
    }
  else if (modes_of (both_class, prop_id) == 0)
    return FALSE;
  else
    {
      if (!both->initialized)
        g_hash_table_add (both->set_early, g_strdup (name));
      else if (!terret_both_modes_has (both_class, pspec, mode))
        {
          g_warning ("%s: the setting “%s” is not one of mode=%s; ignored",
                     terret_executor_get_name (TERRET_EXECUTOR (engine)), name, mode_names[mode]);
          return TRUE;
        }
      changed = terret_engine_set_shared_setting (engine, name, value);
    }

  if (changed)
    g_object_notify_by_pspec (G_OBJECT (engine), pspec);
  return TRUE;
}
