/* terret-launcher-far.h: what a bridge and a far launcher say to each other
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Where the library cannot hand a launcher descriptors (inside a
 * container, behind an engine's `exec -i`), it talks to a bridge on this
 * host (`terret-launcher --bridge`) over the local wire, as to any
 * launcher; the bridge runs the engine's command, whose standard input
 * and output reach a far launcher (`terret-launcher --serve`), and
 * carries the conversation over them as frames:
 *
 *   size (4) | type (2) | stream (2) | unit (4) | payload (size bytes)
 *
 * all little-endian. A unit is one spawn request, numbered by the bridge;
 * a stream is one of its child descriptors, by index. Bytes of a stream
 * flow under credit: a sender has FAR_WINDOW bytes per stream and
 * direction, and a receiver gives them back (CREDIT) as it delivers them,
 * so a reader that stops reading holds up its own stream only, and the
 * memory either side holds is bounded whatever a command prints.
 *
 * The far launcher's first frame is HELLO; until then the engine's
 * output is its own words (an error about a missing container). The end
 * of the bridge's side (EOF on the far launcher's stdin) ends every unit
 * there, with everything it started.
 */

#pragma once

#include <stddef.h>
#include <stdint.h>

#define FAR_HEADER_SIZE 12
#define FAR_DATA_MAX    (32 * 1024)
/* A spawn carries an argument vector and an environment: the kernel's
 * own bound on both together is in this range. */
#define FAR_SPAWN_MAX   (4 * 1024 * 1024)
#define FAR_WINDOW      (256 * 1024)

#define FAR_MAGIC   0x54524546u   /* "TREF" */
#define FAR_VERSION 1

typedef enum
{
  FAR_HELLO = 1,   /* far: u32 magic, u32 version, then the launcher's build id (text) */
  FAR_SPAWN,       /* bridge: a unit's plan, the local wire's records (see below) */
  FAR_DATA,        /* both: bytes of a stream, at most FAR_DATA_MAX */
  FAR_EOF,         /* both: a stream ended on the sender's side */
  FAR_CREDIT,      /* both: u32, bytes of a stream the receiver delivered */
  FAR_CONTROL,     /* bridge: a TerretWireRecord for the unit (KILL, SIGNAL_GROUP) */
  FAR_EVENT,       /* far: a TerretWireRecord from the unit (STARTED, FAILED, EXITED) */
  FAR_GONE,        /* far: nothing the unit contained is left */
  FAR_BYE,         /* bridge: end every unit and leave, as at the input's end (which an
                    * engine whose client goes may never pass on: older kubectl) */
} FarType;

/* In a FAR_SPAWN plan, besides the local wire's records: the child
 * descriptors the bridge writes to ("INDEX"), which the process reads;
 * every other one but the terminal the process writes to. A terminal is
 * made on the far side, and both ways. Environment entries are added to
 * the far launcher's own environment (the container's), never a whole
 * one; argv[0] without a slash is looked up in PATH there. */
#define FAR_KEY_INPUT "input"

typedef struct
{
  uint32_t size;
  uint16_t type;
  uint16_t stream;
  uint32_t unit;
} FarHeader;

static inline void
far_put32 (uint8_t  *p,
           uint32_t  v)
{
  p[0] = v & 0xff, p[1] = (v >> 8) & 0xff, p[2] = (v >> 16) & 0xff, p[3] = v >> 24;
}

static inline uint32_t
far_get32 (const uint8_t *p)
{
  return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void
far_put16 (uint8_t  *p,
           uint16_t  v)
{
  p[0] = v & 0xff, p[1] = v >> 8;
}

static inline uint16_t
far_get16 (const uint8_t *p)
{
  return p[0] | (uint16_t)(p[1] << 8);
}
