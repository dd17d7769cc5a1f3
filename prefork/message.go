package prefork

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ProtocolVersion is the back-channel protocol version this package speaks.
const ProtocolVersion = 1

// MessageSize is the size of every back-channel message, in bytes.
const MessageSize = 8

// Type is the first byte of a message: one ASCII letter.
type Type byte

// Message types. Children send Hello, Idle, Busy, Pong and Served; the
// master sends Accept, Ping and Drain. docs/protocol.md is the reference.
const (
	Hello  Type = 'H' // child → master: first message; Value is the child's PID
	Idle   Type = 'I' // child → master: ready for an order
	Busy   Type = 'B' // child → master: serving a connection from Listener
	Pong   Type = 'O' // child → master: answer to Ping; Value is the ping's sequence
	Served Type = 'S' // child → master, exclusive mode: accepted and finished a connection on Listener without a Busy
	Accept Type = 'A' // master → child: accept one connection on Listener
	Ping   Type = 'P' // master → child: answer with Pong and the same Value
	Drain  Type = 'D' // master → child: finish the current connection, then exit
)

// KeepAccepting is the Value of a dispatch-mode Accept that lets the child,
// once done with the connection it was sent for, accept the next ones
// waiting on the same listener by itself (up to a batch) before it reports
// Idle. The master sends it while more connections wait than it has idle
// children to order. A worker may treat it as a plain order.
const KeepAccepting uint32 = 1

// KeepAcceptingBatch is the most connections a child accepts under one
// KeepAccepting order, the first included; then it reports Idle and reads
// its back-channel again. It should also stop after a while (the Go worker
// library: 50 ms), so that a drain does not wait for a batch of slow
// connections.
const KeepAcceptingBatch = 32

// String returns the type's name, or "Type(0xNN)" for an unknown one.
func (t Type) String() string {
	switch t {
	case Hello:
		return "hello"
	case Idle:
		return "idle"
	case Busy:
		return "busy"
	case Pong:
		return "pong"
	case Served:
		return "served"
	case Accept:
		return "accept"
	case Ping:
		return "ping"
	case Drain:
		return "drain"
	}
	return fmt.Sprintf("Type(%#02x)", byte(t))
}

// FromChild reports whether t is a type a child may send.
func (t Type) FromChild() bool {
	return t == Hello || t == Idle || t == Busy || t == Pong || t == Served
}

// FromMaster reports whether t is a type the master may send.
func (t Type) FromMaster() bool {
	return t == Accept || t == Ping || t == Drain
}

// Message is one decoded back-channel message.
type Message struct {
	Type     Type
	Listener uint16 // listener index (fd 3+Listener) for Accept and Busy
	Value    uint32 // PID for Hello, sequence number for Ping and Pong
}

// ErrGarbage is wrapped by every Decode error: the peer sent something that is
// not a version-1 message.
var ErrGarbage = errors.New("garbage on back-channel")

// Encode writes m into b, which must be at least MessageSize bytes long, and
// returns the MessageSize bytes written.
func (m Message) Encode(b []byte) []byte {
	b = b[:MessageSize]
	b[0] = byte(m.Type)
	b[1] = ProtocolVersion
	binary.BigEndian.PutUint16(b[2:4], m.Listener)
	binary.BigEndian.PutUint32(b[4:8], m.Value)
	return b
}

// Decode parses one packet. It returns an error wrapping ErrGarbage if the
// packet is not exactly MessageSize bytes, carries another version, or has an
// unknown type.
func Decode(b []byte) (Message, error) {
	if len(b) != MessageSize {
		return Message{}, fmt.Errorf("%w: %d bytes, want %d", ErrGarbage, len(b), MessageSize)
	}
	if b[1] != ProtocolVersion {
		return Message{}, fmt.Errorf("%w: version %d, want %d", ErrGarbage, b[1], ProtocolVersion)
	}
	m := Message{
		Type:     Type(b[0]),
		Listener: binary.BigEndian.Uint16(b[2:4]),
		Value:    binary.BigEndian.Uint32(b[4:8]),
	}
	if !m.Type.FromChild() && !m.Type.FromMaster() {
		return Message{}, fmt.Errorf("%w: unknown type %v", ErrGarbage, m.Type)
	}
	return m, nil
}
