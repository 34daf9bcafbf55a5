/* terret-both-modes.h: one backend name for both modes, its mode a setting
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <terret-exec.h>

G_BEGIN_DECLS

/* A setting whose meaning the backend changes, in the backend's words. */
typedef struct
{
  const char *name;
  const char *blurb;
} TerretBothModesWords;

/* In the backend's class: where its mode and the engines' settings are. */
typedef struct
{
  guint mode_id;
  guint first_id;               /* of the engines' settings */
  guint n_settings;
  guint8 *modes;                /* by id - first_id: 1 << TerretEngineMode of the modes that have it */
} TerretBothModesClass;

/* In the backend's instance. */
typedef struct
{
  gboolean initialized;
  /* Engine settings set before init: a mode that lacks one refuses it. */
  GHashTable *set_early;        /* (owned) (element-type utf8) */
} TerretBothModes;

void     terret_both_modes_class_install (TerretBothModesClass        *both_class,
                                          GObjectClass                *klass,
                                          guint                        mode_id,
                                          GType                        mode_type,
                                          const char                  *mode_blurb,
                                          guint                        first_id,
                                          const TerretBothModesWords  *words,
                                          guint                        n_words);
void     terret_both_modes_init          (TerretBothModes             *both);
void     terret_both_modes_clear         (TerretBothModes             *both);
gboolean terret_both_modes_has           (const TerretBothModesClass  *both_class,
                                          GParamSpec                  *pspec,
                                          TerretEngineMode             mode);
gboolean terret_both_modes_check         (TerretBothModes             *both,
                                          const TerretBothModesClass  *both_class,
                                          TerretEngine                *engine,
                                          GError                     **error);
gboolean terret_both_modes_get_property  (TerretBothModes             *both,
                                          const TerretBothModesClass  *both_class,
                                          TerretEngine                *engine,
                                          guint                        prop_id,
                                          GValue                      *value,
                                          GParamSpec                  *pspec);
gboolean terret_both_modes_set_property  (TerretBothModes             *both,
                                          const TerretBothModesClass  *both_class,
                                          TerretEngine                *engine,
                                          guint                        prop_id,
                                          const GValue                *value,
                                          GParamSpec                  *pspec);

G_END_DECLS
