package acceptfilter

// The readiness rule of a listener that terminates TLS, under either
// filter (docs/protocol.md, "TLS"): the child's handshake should find the
// whole ClientHello in its first read, so that a client slow to start its
// handshake holds the master's table, not a child.

// TLS record and handshake values the rule reads (RFC 8446, 5.1 and 4).
const (
	recordHandshake = 22 // ContentType handshake
	recordHeader    = 5  // type, legacy version (2), length (2)
	maxRecord       = 1<<14 + 256
	clientHello     = 1 // HandshakeType client_hello
	handshakeHeader = 4 // type, length (3)
)

// HelloReady reports whether head, the bytes a connection on a TLS
// listener has sent so far, make it ready: they hold a whole ClientHello
// (handshake records, type 22, whose payloads carry the first handshake
// message, type 1, to the end its 3-byte length gives), or they cannot
// become one (a record of another type or version 3.x, an empty or
// oversized record, a first message of another type: the worker's
// handshake fails at once and closes), or they are HeadLimit bytes. It
// returns false for no bytes and for a ClientHello still coming.
func HelloReady(head []byte) bool {
	if len(head) >= HeadLimit {
		return true
	}
	var msg [handshakeHeader]byte // the message's header, which records may split
	got := 0                      // bytes of the message seen
	for at := 0; at < len(head); {
		rec := head[at:]
		if rec[0] != recordHandshake || len(rec) > 1 && rec[1] != 3 {
			return true // not TLS, or not the handshake
		}
		if len(rec) < recordHeader {
			return false
		}
		n := int(rec[3])<<8 | int(rec[4])
		if n == 0 || n > maxRecord {
			return true
		}
		body := rec[recordHeader:min(len(rec), recordHeader+n)]
		for _, b := range body {
			if got < handshakeHeader {
				msg[got] = b
			}
			got++
		}
		if got >= handshakeHeader {
			if msg[0] != clientHello {
				return true
			}
			if got >= handshakeHeader+(int(msg[1])<<16|int(msg[2])<<8|int(msg[3])) {
				return true
			}
		}
		at += recordHeader + n
	}
	return false
}
