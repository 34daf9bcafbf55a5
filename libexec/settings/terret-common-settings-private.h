/* terret-common-settings-private.h: the settings every engine shares
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <glib-object.h>

#include "terret-launcher.h"
#include "terret-types.h"
#include "terret-request.h"
#include "terret-spool-private.h"

G_BEGIN_DECLS

/* Which engine a setting's default and description are for: a session
 * keeps the head of a run's output, a one-shot command the tail. */
typedef enum
{
  TERRET_ENGINE_SESSION,
  TERRET_ENGINE_COMMAND,
} TerretEngine;

/* Each shared setting, defined once (terret-common-settings.c). An
 * engine's class installs those it has as properties numbered id + 1. */
typedef enum
{
  TERRET_SETTING_TIMEOUT,
  TERRET_SETTING_MAX_OUTPUT,
  TERRET_SETTING_CWD,
  TERRET_SETTING_ENV,
  TERRET_SETTING_SHELL,
  TERRET_SETTING_HANDSHAKE_TIMEOUT,
  TERRET_SETTING_INTERRUPT_GRACE,
  TERRET_SETTING_DRAIN_GRACE,
  /* The limits, in TerretLimits' bit order. */
  TERRET_SETTING_LIMIT_MEMORY,
  TERRET_SETTING_LIMIT_PROCESSES,
  TERRET_SETTING_LIMIT_CPU,
  TERRET_SETTING_LIMIT_FILE_SIZE,
  TERRET_SETTING_LIMIT_OPEN_FILES,
  /* What a run keeps of its output, and the full-output file. */
  TERRET_SETTING_CAPTURE,
  TERRET_SETTING_KEEP_FULL_OUTPUT,
  TERRET_SETTING_FULL_OUTPUT_DIR,
  TERRET_SETTING_FULL_OUTPUT_MAX,
  /* Where commands may reach (terret-sandbox.c). */
  TERRET_SETTING_SANDBOX,
  TERRET_SETTING_WORKSPACE,
  TERRET_SETTING_WRITABLE,
  TERRET_SETTING_HIDDEN,
  TERRET_SETTING_UNHIDE,
  TERRET_SETTING_NETWORK,
  TERRET_SETTING_ALLOW_UNIX_SOCKETS,
  TERRET_SETTING_ENV_POLICY,
  TERRET_SETTING_ENV_EXCLUDE,
  N_TERRET_SETTINGS
} TerretSettingId;

#define TERRET_SETTING_PROP(id) ((guint)(id) + 1)

/* What every engine that spawns locally has alike: the limits, the
 * capture and the sandbox, for its list of settings. */
#define TERRET_SETTINGS_POLICY \
  TERRET_SETTING_LIMIT_MEMORY, TERRET_SETTING_LIMIT_PROCESSES, TERRET_SETTING_LIMIT_CPU, \
  TERRET_SETTING_LIMIT_FILE_SIZE, TERRET_SETTING_LIMIT_OPEN_FILES, \
  TERRET_SETTING_CAPTURE, TERRET_SETTING_KEEP_FULL_OUTPUT, TERRET_SETTING_FULL_OUTPUT_DIR, \
  TERRET_SETTING_FULL_OUTPUT_MAX, \
  TERRET_SETTING_SANDBOX, TERRET_SETTING_WORKSPACE, TERRET_SETTING_WRITABLE, \
  TERRET_SETTING_HIDDEN, TERRET_SETTING_UNHIDE, TERRET_SETTING_NETWORK, \
  TERRET_SETTING_ALLOW_UNIX_SOCKETS, TERRET_SETTING_ENV_POLICY, TERRET_SETTING_ENV_EXCLUDE

#define TERRET_N_LIMITS 5

#define TERRET_DEFAULT_TIMEOUT 120.0
#define TERRET_DEFAULT_SHELL "bash"

/* What a shell or a run starts with: an immutable snapshot of an
 * executor's settings, taken when it starts, so a setting changed later
 * governs the next shell or run, never one under way. Refcounted; never
 * modified once shared. */
typedef struct
{
  gatomicrefcount ref_count;
  TerretEngine engine;
  double timeout;
  guint64 max_output;
  char *cwd;                    /* (nullable) */
  GStrv env;                    /* VARIABLE=value entries, unchecked */
  char *shell;
  double handshake_timeout;
  double interrupt_grace;
  double drain_grace;
  guint64 limits[TERRET_N_LIMITS]; /* by TerretLimits bit number; 0: none */
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
} TerretSettings;

TerretSettings *_terret_settings_ref            (TerretSettings       *settings);
void            _terret_settings_unref          (TerretSettings       *settings);
char          **_terret_settings_build_environ  (const TerretSettings *settings,
                                                 const char * const   *base,
                                                 const char * const   *extra,
                                                 GError              **error);
gsize           _terret_settings_capture_limit  (const TerretSettings *settings);
void            _terret_settings_apply_limits   (const TerretSettings *settings,
                                                 TerretLauncher       *launcher);
TerretLimits    _terret_settings_limits_from_status (const TerretSettings *settings,
                                                     int                   wait_status);
char           *_terret_settings_describe_limits_hit (const TerretSettings *settings,
                                                      TerretLimits          hit);
TerretCaptureMode _terret_settings_capture_mode (const TerretSettings *settings,
                                                 TerretRequest        *request);
TerretSpool    *_terret_settings_open_spool     (const TerretSettings *settings,
                                                 TerretRequest        *request,
                                                 const char           *suffix,
                                                 GError              **error);

/* Where an executor keeps its current settings: swapped whole on every
 * change, so a snapshot is a reference, not a copy. */
typedef struct
{
  GMutex mutex;
  TerretSettings *current;      /* (owned) */
} TerretSettingsStore;

void            _terret_settings_store_init     (TerretSettingsStore  *store,
                                                 TerretEngine          engine);
void            _terret_settings_store_clear    (TerretSettingsStore  *store);
TerretSettings *_terret_settings_store_snapshot (TerretSettingsStore  *store);
void            _terret_settings_store_get      (TerretSettingsStore  *store,
                                                 guint                 prop_id,
                                                 GValue               *value);
gboolean        _terret_settings_store_set      (TerretSettingsStore  *store,
                                                 guint                 prop_id,
                                                 const GValue         *value);
void            _terret_settings_install        (GObjectClass         *klass,
                                                 TerretEngine          engine,
                                                 const TerretSettingId *ids,
                                                 guint                 n_ids);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (TerretSettings, _terret_settings_unref)

G_END_DECLS
