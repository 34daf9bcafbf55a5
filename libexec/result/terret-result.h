/* terret-result.h: what a command that ran left behind
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <glib-object.h>

#include "terret-types.h"

G_BEGIN_DECLS

#define TERRET_TYPE_RESULT (terret_result_get_type ())

TERRET_AVAILABLE_IN_0_1
G_DECLARE_FINAL_TYPE (TerretResult, terret_result, TERRET, RESULT, GObject)

TERRET_AVAILABLE_IN_0_1
TerretResult *terret_result_new                  (void);

TERRET_AVAILABLE_IN_0_1
gboolean      terret_result_get_exited           (TerretResult *self);
TERRET_AVAILABLE_IN_0_1
int           terret_result_get_exit_status      (TerretResult *self);
TERRET_AVAILABLE_IN_0_1
int           terret_result_get_term_signal      (TerretResult *self);
TERRET_AVAILABLE_IN_0_1
GBytes       *terret_result_get_stdout           (TerretResult *self);
TERRET_AVAILABLE_IN_0_1
GBytes       *terret_result_get_stderr           (TerretResult *self);
TERRET_AVAILABLE_IN_0_1
const char   *terret_result_get_notice           (TerretResult *self);
TERRET_AVAILABLE_IN_0_1
gboolean      terret_result_get_timed_out        (TerretResult *self);
TERRET_AVAILABLE_IN_0_1
gboolean      terret_result_get_running          (TerretResult *self);
TERRET_AVAILABLE_IN_0_1
guint64       terret_result_get_dropped          (TerretResult *self,
                                                  TerretStream  stream);
TERRET_AVAILABLE_IN_0_1
gsize         terret_result_get_cut_offset       (TerretResult *self,
                                                  TerretStream  stream);
TERRET_AVAILABLE_IN_0_1
const char   *terret_result_get_cwd              (TerretResult *self);
TERRET_AVAILABLE_IN_0_2
TerretLimits  terret_result_get_limits_hit       (TerretResult *self);
TERRET_AVAILABLE_IN_0_2
guint64       terret_result_get_omitted_at       (TerretResult *self,
                                                  TerretStream  stream);
TERRET_AVAILABLE_IN_0_2
char         *terret_result_format_omitted       (TerretResult *self,
                                                  TerretStream  stream);
TERRET_AVAILABLE_IN_0_2
const char   *terret_result_get_full_output      (TerretResult *self,
                                                  TerretStream  stream);
TERRET_AVAILABLE_IN_0_2
char         *terret_result_steal_full_output    (TerretResult *self,
                                                  TerretStream  stream);

TERRET_AVAILABLE_IN_0_2
const int    *terret_result_get_pipestatus       (TerretResult *self,
                                                  guint        *n_statuses);
TERRET_AVAILABLE_IN_0_2
TerretClock   terret_result_get_clock            (TerretResult *self);
TERRET_AVAILABLE_IN_0_2
gboolean      terret_result_get_stalled          (TerretResult *self);
TERRET_AVAILABLE_IN_0_3
TerretStopSignal terret_result_get_ended_by      (TerretResult *self);
TERRET_AVAILABLE_IN_0_3
double        terret_result_get_stop_time        (TerretResult *self);

/* For backends: a result is built once, then handed to the caller. */
TERRET_AVAILABLE_IN_0_1
void          terret_result_set_exit_status      (TerretResult *self,
                                                  int           status);
TERRET_AVAILABLE_IN_0_1
void          terret_result_set_term_signal      (TerretResult *self,
                                                  int           signum);
TERRET_AVAILABLE_IN_0_1
void          terret_result_set_wait_status      (TerretResult *self,
                                                  int           wait_status);
TERRET_AVAILABLE_IN_0_1
void          terret_result_set_stdout           (TerretResult *self,
                                                  GBytes       *bytes);
TERRET_AVAILABLE_IN_0_1
void          terret_result_set_stderr           (TerretResult *self,
                                                  GBytes       *bytes);
TERRET_AVAILABLE_IN_0_1
void          terret_result_add_notice           (TerretResult *self,
                                                  const char   *notice);
TERRET_AVAILABLE_IN_0_1
void          terret_result_set_timed_out        (TerretResult *self,
                                                  gboolean      timed_out);
TERRET_AVAILABLE_IN_0_1
void          terret_result_set_running          (TerretResult *self,
                                                  gboolean      running);
TERRET_AVAILABLE_IN_0_2
void          terret_result_set_limits_hit       (TerretResult *self,
                                                  TerretLimits  limits);
TERRET_AVAILABLE_IN_0_1
void          terret_result_set_dropped          (TerretResult *self,
                                                  TerretStream  stream,
                                                  guint64       dropped,
                                                  gsize         cut_offset);
TERRET_AVAILABLE_IN_0_2
void          terret_result_set_omitted_at       (TerretResult *self,
                                                  TerretStream  stream,
                                                  guint64       omitted_at);
TERRET_AVAILABLE_IN_0_2
void          terret_result_set_pipestatus       (TerretResult *self,
                                                  const int    *statuses,
                                                  guint         n_statuses);
TERRET_AVAILABLE_IN_0_2
void          terret_result_set_clock            (TerretResult *self,
                                                  TerretClock   clock);
TERRET_AVAILABLE_IN_0_2
void          terret_result_set_stalled          (TerretResult *self,
                                                  gboolean      stalled);
TERRET_AVAILABLE_IN_0_3
void          terret_result_set_stop             (TerretResult     *self,
                                                  TerretStopSignal  ended_by,
                                                  double            seconds);

TERRET_AVAILABLE_IN_0_1
void          terret_result_set_cwd              (TerretResult *self,
                                                  const char   *cwd);

TERRET_AVAILABLE_IN_0_2
guint64       terret_result_get_omitted_lines    (TerretResult *self,
                                                  TerretStream  stream);
TERRET_AVAILABLE_IN_0_2
GPtrArray    *terret_result_get_omitted_errors   (TerretResult *self,
                                                  TerretStream  stream);

TERRET_AVAILABLE_IN_0_3
TerretInputState terret_result_get_input_state  (TerretResult *self);
TERRET_AVAILABLE_IN_0_3
const char      *terret_result_get_input_prompt (TerretResult *self);
TERRET_AVAILABLE_IN_0_3
gboolean         terret_result_get_input_secret (TerretResult *self);
TERRET_AVAILABLE_IN_0_3
gboolean         terret_result_get_input_pager  (TerretResult *self);
TERRET_AVAILABLE_IN_0_3
double           terret_result_get_input_since  (TerretResult *self);

G_END_DECLS
