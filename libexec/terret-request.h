/* terret-request.h: one command to run, and how
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined(__TERRET_EXEC_INSIDE__) && !defined(TERRET_EXEC_COMPILATION)
#error "Only <terret-exec.h> can be included directly."
#endif

#include <glib-object.h>

#include "terret-result.h"
#include "terret-types.h"

G_BEGIN_DECLS

/**
 * TERRET_DEFAULT_SESSION:
 *
 * The session key a request uses unless told otherwise.
 *
 * Since: 0.1
 */
#define TERRET_DEFAULT_SESSION "default"

#define TERRET_TYPE_REQUEST (terret_request_get_type ())

TERRET_AVAILABLE_IN_0_1
G_DECLARE_FINAL_TYPE (TerretRequest, terret_request, TERRET, REQUEST, GObject)

/**
 * TerretProgressFunc:
 * @request: the request whose command produced the output
 * @stream: which stream the bytes came from
 * @data: the bytes, exactly as the command wrote them
 * @user_data: the data given to [method@Terret.Request.set_progress_func]
 *
 * Receives a command's output while it runs. Called on the main context
 * the run was started from. How the bytes are framed (whole lines, or
 * chunks as they arrive) is the backend's; nothing is re-encoded and no
 * newline is invented.
 *
 * Since: 0.1
 */
typedef void (*TerretProgressFunc) (TerretRequest *request,
                                    TerretStream   stream,
                                    GBytes        *data,
                                    gpointer       user_data);

TERRET_AVAILABLE_IN_0_1
TerretRequest       *terret_request_new                (const char         *command);
TERRET_AVAILABLE_IN_0_1
const char          *terret_request_get_command        (TerretRequest      *self);
TERRET_AVAILABLE_IN_0_1
void                 terret_request_set_command        (TerretRequest      *self,
                                                        const char         *command);
TERRET_AVAILABLE_IN_0_1
const char          *terret_request_get_session        (TerretRequest      *self);
TERRET_AVAILABLE_IN_0_1
void                 terret_request_set_session        (TerretRequest      *self,
                                                        const char         *session);
TERRET_AVAILABLE_IN_0_1
double               terret_request_get_timeout        (TerretRequest      *self);
TERRET_AVAILABLE_IN_0_1
void                 terret_request_set_timeout        (TerretRequest      *self,
                                                        double              seconds);
TERRET_AVAILABLE_IN_0_1
TerretTimeoutAction  terret_request_get_timeout_action (TerretRequest      *self);
TERRET_AVAILABLE_IN_0_1
void                 terret_request_set_timeout_action (TerretRequest      *self,
                                                        TerretTimeoutAction action);
TERRET_AVAILABLE_IN_0_2
TerretCaptureMode    terret_request_get_capture        (TerretRequest      *self);
TERRET_AVAILABLE_IN_0_2
void                 terret_request_set_capture        (TerretRequest      *self,
                                                        TerretCaptureMode   mode);
TERRET_AVAILABLE_IN_0_2
gboolean             terret_request_get_keep_full_output (TerretRequest    *self);
TERRET_AVAILABLE_IN_0_2
void                 terret_request_set_keep_full_output (TerretRequest    *self,
                                                          gboolean          keep);
TERRET_AVAILABLE_IN_0_2
double               terret_request_get_return_after   (TerretRequest      *self);
TERRET_AVAILABLE_IN_0_2
void                 terret_request_set_return_after   (TerretRequest      *self,
                                                        double              seconds);
TERRET_AVAILABLE_IN_0_2
double               terret_request_get_deadline       (TerretRequest      *self);
TERRET_AVAILABLE_IN_0_2
void                 terret_request_set_deadline       (TerretRequest      *self,
                                                        double              seconds);
TERRET_AVAILABLE_IN_0_3
double               terret_request_get_stop_grace     (TerretRequest      *self);
TERRET_AVAILABLE_IN_0_3
void                 terret_request_set_stop_grace     (TerretRequest      *self,
                                                        double              seconds);
TERRET_AVAILABLE_IN_0_3
TerretResult        *terret_request_get_cancelled_result (TerretRequest    *self);
TERRET_AVAILABLE_IN_0_3
void                 terret_request_set_cancelled_result (TerretRequest    *self,
                                                          TerretResult     *result);
TERRET_AVAILABLE_IN_0_2
double               terret_request_get_idle_timeout   (TerretRequest      *self,
                                                        TerretIdleAction   *action);
TERRET_AVAILABLE_IN_0_2
void                 terret_request_set_idle_timeout   (TerretRequest      *self,
                                                        double              seconds,
                                                        TerretIdleAction    action);
TERRET_AVAILABLE_IN_0_1
const char          *terret_request_get_cwd            (TerretRequest      *self);
TERRET_AVAILABLE_IN_0_1
void                 terret_request_set_cwd            (TerretRequest      *self,
                                                        const char         *cwd);
TERRET_AVAILABLE_IN_0_1
const char * const  *terret_request_get_env            (TerretRequest      *self);
TERRET_AVAILABLE_IN_0_1
void                 terret_request_set_env            (TerretRequest      *self,
                                                        const char * const *env);
TERRET_AVAILABLE_IN_0_1
void                 terret_request_setenv             (TerretRequest      *self,
                                                        const char         *variable,
                                                        const char         *value);
TERRET_AVAILABLE_IN_0_1
void                 terret_request_set_progress_func  (TerretRequest      *self,
                                                        TerretProgressFunc  func,
                                                        gpointer            user_data,
                                                        GDestroyNotify      notify);
TERRET_AVAILABLE_IN_0_1
gboolean             terret_request_has_progress_func  (TerretRequest      *self);
TERRET_AVAILABLE_IN_0_1
void                 terret_request_report_progress    (TerretRequest      *self,
                                                        TerretStream        stream,
                                                        const guint8       *data,
                                                        gsize               len);

G_END_DECLS
