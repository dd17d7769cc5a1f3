/* An actd worker in C, dispatch mode, built against libsystemd.
 *
 *   gcc -o c-worker worker.c $(pkg-config --cflags --libs libsystemd)
 *   actd --listen 127.0.0.1:8080 --listen admin=unix:/run/admin.sock -- ./c-worker
 *   curl http://127.0.0.1:8080/     # c-worker name=tcp-127.0.0.1-8080 slot=0 pid=1234
 *
 * It finds its listeners the way any socket-activated program does, with
 * sd_listen_fds_with_names() (LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES), and
 * answers each connection with the name of the listener it came in on. The
 * back-channel is ACTD_CHANNEL_FD, 8-byte messages (docs/protocol.md,
 * named in wire.h): H and I at start; on A accept once and send B, then I;
 * answer P with O; exit on D or end of file.
 */
#define _GNU_SOURCE /* accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "wire.h"

static int channel;

static void sendmsg8(char type, uint16_t listener, uint32_t value) {
	unsigned char m[HEADER_SIZE];
	encode(m, type, listener, value);
	if (send(channel, m, sizeof m, 0) != sizeof m) {
		perror("c-worker: send");
		exit(1);
	}
}

/* serve reads the request head (or 5 s of nothing) and answers it. */
static void serve(int conn, const char *name) {
	char buf[4096], body[512], head[128];
	struct timeval tv = {5, 0};
	setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	size_t got = 0;
	while (got < sizeof buf - 1) {
		ssize_t n = recv(conn, buf + got, sizeof buf - 1 - got, 0);
		if (n <= 0)
			return;
		got += n;
		buf[got] = 0;
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			break;
	}
	int blen = snprintf(body, sizeof body, "c-worker name=%s slot=%s pid=%d\n", name,
	                    getenv("ACTD_SLOT") ? getenv("ACTD_SLOT") : "?", (int)getpid());
	int hlen = snprintf(head, sizeof head,
	                    "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n"
	                    "Content-Length: %d\r\nConnection: close\r\n\r\n", blen);
	if (send(conn, head, hlen, MSG_NOSIGNAL) == hlen)
		send(conn, body, blen, MSG_NOSIGNAL);
}

int main(void) {
	char **names = NULL;
	int n = sd_listen_fds_with_names(0, &names);
	if (n < 1) {
		fprintf(stderr, "c-worker: sd_listen_fds_with_names: %s\n", n < 0 ? strerror(-n) : "no sockets");
		return 1;
	}
	const char *fd = getenv("ACTD_CHANNEL_FD");
	if (!fd) {
		fprintf(stderr, "c-worker: ACTD_CHANNEL_FD unset: run me in dispatch mode\n");
		return 1;
	}
	channel = atoi(fd);
	sendmsg8(HELLO, 0, (uint32_t)getpid());
	sendmsg8(IDLE, 0, 0);
	for (;;) {
		unsigned char m[16];
		ssize_t got = recv(channel, m, sizeof m, 0);
		if (got == 0)
			return 0; /* the master is gone */
		if (got != HEADER_SIZE || m[1] != WIRE) {
			fprintf(stderr, "c-worker: garbage on the back-channel\n");
			return 1;
		}
		uint16_t l;
		uint32_t v;
		memcpy(&l, m + 2, 2);
		memcpy(&v, m + 4, 4);
		l = ntohs(l);
		switch (m[0]) {
		case PING:
			sendmsg8(PONG, 0, ntohl(v));
			break;
		case DRAIN:
			return 0;
		case ACCEPT: {
			int conn = l < n ? accept4(SD_LISTEN_FDS_START + l, NULL, NULL, SOCK_CLOEXEC) : -1;
			if (conn < 0) { /* EAGAIN: another child took it; anything else: try later */
				sendmsg8(IDLE, 0, 0);
				break;
			}
			sendmsg8(BUSY, l, 0);
			serve(conn, names[l]);
			close(conn);
			sendmsg8(IDLE, 0, 0);
			break;
		}
		}
	}
}
