/* The wire of actd's back-channel (docs/protocol.md) up to REVISION, as the
 * Go package protocol has it: a name is the Go name in upper case.
 * protocol/languages_test.go compiles this header and fails when a name up
 * to REVISION is missing or disagrees with Go.
 */
#ifndef C_WORKER_WIRE_H
#define C_WORKER_WIRE_H

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#define REVISION 1    /* the protocol revision worker.c is written for */
#define WIRE 1        /* the header format, the second byte of every message */
#define HEADER_SIZE 8 /* type, wire, listener (u16), value (u32), network order */

/* child -> master */
#define HELLO 'H'  /* value: the PID; listener: the capabilities (none here) */
#define IDLE 'I'
#define BUSY 'B'   /* listener: where the connection came in */
#define PONG 'O'   /* value: the ping's */
#define SERVED 'S' /* value: how many connections, finished without a B */
/* master -> child */
#define ACCEPT 'A' /* listener: where to accept */
#define PING 'P'
#define DRAIN 'D'

/* encode writes one message into m. */
static inline void encode(unsigned char m[HEADER_SIZE], char type, uint16_t listener, uint32_t value) {
	uint16_t l = htons(listener);
	uint32_t v = htonl(value);
	m[0] = (unsigned char)type;
	m[1] = WIRE;
	memcpy(m + 2, &l, 2);
	memcpy(m + 4, &v, 4);
}

#endif
