/*
 * responder: the per-connection program of the inetd-style peer in actd's
 * benchmark suite (systemd-socket-activate --accept). It serves exactly one
 * HTTP request on the connection it was started for and exits, the way an
 * inetd service does.
 *
 * The connection is fd 3 when LISTEN_FDS is set (systemd's protocol) and fd 0
 * otherwise (inetd). An optional argument is a delay in milliseconds slept
 * before answering. The answer has the same body shape as actd's built-in
 * handler: "slot=0 pid=P\n", with "Connection: close".
 *
 * Written in C so the figure measures the inetd model (one fork and exec per
 * connection), not a language runtime's start-up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int fd = getenv("LISTEN_FDS") ? 3 : 0;
	char head[8192];
	size_t n = 0;

	while (n < sizeof head - 1) {
		ssize_t r = read(fd, head + n, sizeof head - 1 - n);
		if (r <= 0)
			return 0;
		n += (size_t)r;
		head[n] = '\0';
		if (strstr(head, "\r\n\r\n"))
			break;
	}
	if (argc > 1) {
		long ms = atol(argv[1]);
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		nanosleep(&ts, NULL);
	}
	char body[64], out[256];
	int blen = snprintf(body, sizeof body, "slot=0 pid=%d\n", (int)getpid());
	int olen = snprintf(out, sizeof out,
		"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
		"Content-Length: %d\r\nConnection: close\r\n\r\n%s", blen, body);
	for (int off = 0; off < olen;) {
		ssize_t w = write(fd, out + off, (size_t)(olen - off));
		if (w <= 0)
			return 1;
		off += (int)w;
	}
	shutdown(fd, SHUT_WR);
	return 0;
}
