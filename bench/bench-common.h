/* bench-common.h: what every benchmark program shares
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include <sys/types.h>

#include <terret-exec.h>

G_BEGIN_DECLS

/* One figure of a report: a measured value, optionally next to the
 * baseline it was measured against in the same run, and the target it is
 * held to. */
typedef struct
{
  char *figure;       /* (owned) what is measured, e.g. "round trip median" */
  char *subject;      /* (owned) what was measured, e.g. "pty" */
  double value;
  char *unit;         /* (owned) */
  char *baseline;     /* (owned) (nullable) */
  double baseline_value;
  double ratio;       /* value / baseline_value; NAN without a baseline */
  char *target;       /* (owned) (nullable) e.g. "<= 1.3x" */
  int pass;           /* 1 met, 0 missed, -1 no target */
} BenchRow;

typedef struct _BenchReport BenchReport;

typedef struct
{
  double median;
  double p99;
  double mean;
  double min;
  double max;
  guint n;
} BenchStats;

void          bench_init                 (int          *argc,
                                          char       ***argv,
                                          const char   *summary,
                                          GOptionEntry *entries);
const char   *bench_json_path            (const char   *program);
double        bench_now                  (void);
void          bench_stats                (GArray       *samples,
                                          BenchStats   *stats);
void          bench_raise_fd_limit       (void);
guint64       bench_rss_kib              (void);
guint64       bench_hwm_kib              (void);
gboolean      bench_reset_hwm            (void);
guint64       bench_proc_kib             (const char   *path,
                                          const char   *field);
guint64       bench_ctxt_switches        (void);
void          bench_cpu_seconds          (double       *user,
                                          double       *system);
char         *bench_find_bash            (void);
gboolean      bench_posix_spawn_wait     (const char * const *argv);

TerretExecutor *bench_executor_new       (const char   *name);
TerretResult   *bench_run_on_loop        (TerretExecutor *executor,
                                          TerretRequest  *request,
                                          GCancellable   *cancellable,
                                          GError        **error);

/* A bash on a raw pseudo-terminal, spoken to with the same sentinel
 * protocol as the pty backend, with nothing else in between. */
typedef struct
{
  pid_t pid;
  int master;
  guint64 counter;
  GByteArray *buffer;
} BenchRawShell;

gboolean      bench_raw_pty_spawn        (const char * const *argv,
                                          pid_t              *pid,
                                          int                *master);
gboolean      bench_raw_shell_start      (BenchRawShell *shell,
                                          const char    *bash);
gboolean      bench_raw_shell_run        (BenchRawShell *shell,
                                          const char    *command,
                                          guint64       *bytes);
void          bench_raw_shell_stop       (BenchRawShell *shell);

BenchReport  *bench_report_new           (const char   *program);
void          bench_report_set_param     (BenchReport  *report,
                                          const char   *key,
                                          double        value);
BenchRow     *bench_report_add           (BenchReport  *report,
                                          const char   *figure,
                                          const char   *subject,
                                          double        value,
                                          const char   *unit);
void          bench_row_set_baseline     (BenchRow     *row,
                                          const char   *baseline,
                                          double        baseline_value);
void          bench_row_set_target_ratio (BenchRow     *row,
                                          double        max_ratio);
void          bench_row_set_target_min_ratio (BenchRow *row,
                                          double    min_ratio);
void          bench_row_set_target_max   (BenchRow     *row,
                                          double        max_value);
int           bench_report_finish        (BenchReport  *report);

G_END_DECLS
