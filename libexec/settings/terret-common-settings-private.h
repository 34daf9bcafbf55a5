/* terret-common-settings-private.h: the settings every engine shares
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib-object.h>

#include "terret-launcher.h"
#include "terret-types.h"

G_BEGIN_DECLS

/* Which engine a setting's default and description are for: a session
 * keeps the head of a run's output, a one-shot command the tail. */
typedef enum
{
  TERRET_ENGINE_SESSION,
  TERRET_ENGINE_COMMAND,
  TERRET_N_ENGINES
} TerretEngineKind;

#define TERRET_DEFAULT_SHELL "bash"

/* What a shell or a run starts with: an immutable snapshot of an
 * executor's settings, taken when it starts, so a setting changed later
 * governs the next shell or run, never one under way. Refcounted; never
 * modified once shared. Each field is one setting of the table in
 * terret-common-settings.c. */
typedef struct
{
  gatomicrefcount ref_count;
  TerretEngineKind engine;
  double timeout;
  guint64 max_output;
  char *cwd;                    /* (nullable) */
  GStrv env;                    /* VARIABLE=value entries, unchecked */
  char *shell;
  double handshake_timeout;
  double interrupt_grace;
  double stop_grace;            /* 0: SIGKILL at once */
  double drain_grace;
  double deadline;              /* 0: none */
  double idle_timeout;          /* 0: none */
  /* The limits; 0: none. */
  guint64 limit_memory;
  guint64 limit_processes;
  guint64 limit_cpu;
  guint64 limit_file_size;
  guint64 limit_open_files;
  /* What a run keeps of its output, and the full-output file. */
  TerretCaptureMode capture;    /* never _DEFAULT: the engine's own */
  gboolean keep_full_output;
  char *full_output_dir;        /* (nullable) the default directory */
  guint64 full_output_max;
  /* Where commands may reach (terret-sandbox.c). */
  TerretSandbox sandbox;
  char *workspace;              /* (nullable) the cwd setting, else the host's */
  GStrv writable;               /* (nullable) */
  GStrv hidden;                 /* (nullable) hidden besides the defaults */
  GStrv unhide;                 /* (nullable) defaults left visible on purpose */
  TerretNetwork network;
  GStrv allow_unix_sockets;     /* (nullable) host sockets reachable with the network off */
  TerretEnvPolicy env_policy;
  GStrv env_exclude;            /* (nullable) NULL: the defaults under a sandbox */
  TerretInputAction on_input;   /* a command that waits for input, without a detach */
} TerretSettings;

/* The kinds of value a shared setting holds, each a field type of
 * TerretSettings. */
typedef enum
{
  TERRET_SETTING_DOUBLE,        /* double */
  TERRET_SETTING_UINT64,        /* guint64 */
  TERRET_SETTING_BOOLEAN,       /* gboolean */
  TERRET_SETTING_STRING,        /* char *, (nullable) */
  TERRET_SETTING_STRV,          /* GStrv, (nullable) */
  TERRET_SETTING_ENUM,          /* an enum of @enum_type */
} TerretSettingKind;

/* One shared setting: everything its property, its field, its default
 * and its documentation come from (terret-common-settings.c). Ranges and
 * defaults are read by kind; a default is per engine where they differ
 * (index TerretEngineKind), else the same in both slots. */
typedef struct
{
  const char *name;
  TerretSettingKind kind;
  guint engines;                /* 1 << TerretEngineKind of each engine that has it */
  gsize offset;                 /* of its field in TerretSettings */
  const char *blurb[TERRET_N_ENGINES]; /* [COMMAND] NULL: as [SESSION] */
  const char *doc;              /* (nullable) more for the API reference */
  const char *since[TERRET_N_ENGINES]; /* the version of each engine's property */
  /* Unset (a NULL or empty string, a NULL list, an enum's 0) is stored
   * as the default. */
  gboolean unset_is_default;
  double min, max;              /* _DOUBLE */
  guint64 umax;                 /* _UINT64 (0 up to it) */
  GType (*enum_type) (void);    /* _ENUM */
  union
  {
    double number;
    guint64 count;
    gboolean flag;
    const char *text;
    const char * const *list;
    int choice;
  } defaults[TERRET_N_ENGINES];
} TerretSettingDef;

#define TERRET_SETTING_ENGINE(engine) (1u << (engine))

const TerretSettingDef *_terret_settings_get_defs    (guint                *n_defs);
void            _terret_settings_install        (GObjectClass         *klass,
                                                 TerretEngineKind          engine);

guint           _terret_settings_find           (const char           *name);
void            _terret_settings_init_value     (guint                 prop_id,
                                                 GValue               *value);
TerretSettings *_terret_settings_ref            (TerretSettings       *settings);
void            _terret_settings_unref          (TerretSettings       *settings);
char          **_terret_settings_build_environ  (const TerretSettings *settings,
                                                 const char * const   *base,
                                                 const char * const   *extra,
                                                 GError              **error);
gboolean        _terret_settings_prepare_launcher (const TerretSettings *settings,
                                                   TerretLauncher       *launcher,
                                                   const char * const   *extra_env,
                                                   GError              **error);
guint64         _terret_settings_get_limit      (const TerretSettings *settings,
                                                 TerretLimits          limit);

/* Where an executor keeps its current settings: swapped whole on every
 * change, so a snapshot is a reference, not a copy. */
typedef struct
{
  GMutex mutex;
  TerretSettings *current;      /* (owned) */
} TerretSettingsStore;

void            _terret_settings_store_init     (TerretSettingsStore  *store,
                                                 TerretEngineKind          engine);
void            _terret_settings_store_clear    (TerretSettingsStore  *store);
TerretSettings *_terret_settings_store_snapshot (TerretSettingsStore  *store);
void            _terret_settings_store_get      (TerretSettingsStore  *store,
                                                 guint                 prop_id,
                                                 GValue               *value);
gboolean        _terret_settings_store_set      (TerretSettingsStore  *store,
                                                 guint                 prop_id,
                                                 const GValue         *value);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TerretSettings, _terret_settings_unref)

G_END_DECLS
