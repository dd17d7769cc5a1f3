package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Wire is the header format, the second byte of every message. It stays 1
// while the 8-byte header keeps its layout; what a master or worker speaks
// beyond it is negotiated (caps.go), not read from this byte.
const Wire = 1

// MessageSize is the size of the header that starts every message, and of
// every message that carries no text, in bytes.
const MessageSize = 8

// MaxText is the longest text a message may carry after its header.
const MaxText = 248

// MaxPacket is the largest packet on a back-channel: a header and MaxText.
const MaxPacket = MessageSize + MaxText

// Type is the first byte of a message: one ASCII letter.
type Type byte

// Message types. docs/protocol.md is the reference; the Since column of its
// table is Since(t).
const (
	Hello   Type = 'H' // child → master: first message; Value the PID, Listener the Caps
	Idle    Type = 'I' // child → master: ready for an order
	Busy    Type = 'B' // child → master: serving a connection from Listener
	Pong    Type = 'O' // child → master: answer to Ping; Value is the ping's sequence
	Served  Type = 'S' // child → master: accepted and finished Value connections on Listener without a Busy
	Request Type = 'R' // child → master, revision 2: the request in hand, as Text
	Keep    Type = 'K' // child → master, revision 3: gives back an idle connection from Listener, its fd attached
	Write   Type = 'W' // child → master, revision 5: finish this response: the connection and the data attached, Offset and Length after the header
	Tally   Type = 'T' // child → master, revision 6: request counts since the last Tally, the Tallies after the header (tally.go)
	Accept  Type = 'A' // master → child: accept one connection on Listener
	Ping    Type = 'P' // master → child: answer with Pong and the same Value
	Drain   Type = 'D' // master → child: finish the current connection, then exit
	Conn    Type = 'C' // master → child, revision 3: serve the connection attached, from Listener
	Fork    Type = 'F' // master → zygote, revision 3: fork a child for slot Listener, its back-channel attached
	Unsent  Type = 'U' // master → child, revision 5: a Write the master did not take (--offload-total): write it yourself
)

// types lists every type with what it is; the order is the order of the
// table in docs/protocol.md.
var types = []struct {
	t        Type
	name     string
	child    bool // sent by children (else by the master)
	text     bool // carries Text
	fd       bool // carries a file descriptor (SCM_RIGHTS); Write carries two
	revision int  // the protocol revision that added it
}{
	{Hello, "hello", true, false, false, 1},
	{Idle, "idle", true, false, false, 1},
	{Busy, "busy", true, false, false, 1},
	{Pong, "pong", true, false, false, 1},
	{Served, "served", true, false, false, 1},
	{Request, "request", true, true, false, 2},
	{Keep, "keep", true, false, true, 3},
	{Write, "write", true, false, true, 5},
	{Tally, "tally", true, false, false, 6},
	{Accept, "accept", false, false, false, 1},
	{Ping, "ping", false, false, false, 1},
	{Drain, "drain", false, false, false, 1},
	{Conn, "connection", false, false, true, 3},
	{Fork, "fork", false, false, true, 3},
	{Unsent, "unsent", false, false, true, 5},
}

// byType indexes types by type byte, for a lookup per message that costs
// the same for every type: 0 for an unknown type, else the index in types
// plus one.
var byType = func() (idx [256]uint8) {
	for i, e := range types {
		idx[e.t] = uint8(i + 1)
	}
	return idx
}()

func lookup(t Type) (int, bool) {
	i := byType[t]
	return int(i) - 1, i != 0
}

// String returns the type's name, or its byte quoted for an unknown one:
// 'X' (0x58), or 0x00 when it is not printable.
func (t Type) String() string {
	if i, ok := lookup(t); ok {
		return types[i].name
	}
	if t >= 0x20 && t < 0x7f {
		return fmt.Sprintf("'%c' (%#02x)", byte(t), byte(t))
	}
	return fmt.Sprintf("%#02x", byte(t))
}

// FromChild reports whether t is a type a child may send.
func (t Type) FromChild() bool {
	i, ok := lookup(t)
	return ok && types[i].child
}

// FromMaster reports whether t is a type the master may send.
func (t Type) FromMaster() bool {
	i, ok := lookup(t)
	return ok && !types[i].child
}

// HasText reports whether messages of type t carry text after the header.
func (t Type) HasText() bool {
	i, ok := lookup(t)
	return ok && types[i].text
}

// HasTrailer reports whether messages of type t carry the Offset and
// Length trailer (TrailerSize bytes) after the header: Write and Unsent,
// which carry two file descriptors (the connection, the data).
func (t Type) HasTrailer() bool { return t == Write || t == Unsent }

// HasFD reports whether messages of type t carry a file descriptor in
// their SCM_RIGHTS ancillary data (SendFD, RecvFD); no other type may.
func (t Type) HasFD() bool {
	i, ok := lookup(t)
	return ok && types[i].fd
}

// Since returns the protocol revision that added t, or 0 for an unknown type.
func Since(t Type) int {
	if i, ok := lookup(t); ok {
		return types[i].revision
	}
	return 0
}

// KeepAccepting is the Value of a dispatch-mode Accept that lets the child,
// once done with the connection it was sent for, accept the next ones
// waiting on the same listener by itself (up to a batch) before it reports
// Idle. The master sends it while more connections wait than it has idle
// children to order. A worker may treat it as a plain order.
const KeepAccepting uint32 = 1

// NotReady is the Value of a Keep for a connection the child accepted
// itself and found not ready (CapScreen): the master holds it as one it
// accepted. 0: a keep-alive connection between two requests (parked).
const NotReady uint32 = 1

// KeepAlive is a flag in the Value of a Write: once the response is sent,
// the master parks the connection for its next request (as after a Keep
// with Value 0); without it, the master closes the connection. In an
// Unsent, the same for the child: give the connection back (Keep), or
// close it.
const KeepAlive uint32 = 1

// TrailerSize is the length of a Write's or Unsent's trailer, after its header: the
// data's Offset and Length, each a big-endian uint64.
const TrailerSize = 16

// KeepAcceptingBatch is the most connections a child accepts under one
// KeepAccepting order, the first included; then it reports Idle and reads
// its back-channel again. It should also stop after a while (the Go worker
// library: 50 ms), so that a drain does not wait for a batch of slow
// connections.
const KeepAcceptingBatch = 32

// Message is one decoded back-channel message.
type Message struct {
	Type     Type
	Listener uint16   // listener index (fd 3+Listener) for Accept, Busy, Served, Conn, Keep; Caps for Hello; the slot for Fork
	Value    uint32   // PID for Hello, sequence number for Ping and Pong, a count for Served
	Text     string   // Request only: at most MaxText bytes of UTF-8
	Offset   uint64   // Write and Unsent only: where the data to send starts in the attached file
	Length   uint64   // Write and Unsent only: how many bytes of it to send
	Addr     string   // Conn, Keep, Write, Unsent (revision 6): the client's address from a PROXY header, HOST:PORT; "" for the socket's peer
	Tallies  *Tallies // Tally only: the counts (nil encodes as zeros)
}

// ErrGarbage is wrapped by every Decode error: the peer sent something that is
// not a message.
var ErrGarbage = errors.New("garbage on back-channel")

// Size returns the length of m's packet.
func (m Message) Size() int {
	n := MessageSize + len(m.Text)
	if m.Type.HasTrailer() {
		n += TrailerSize
	}
	if m.Type.HasAddr() {
		n += len(m.Addr)
	}
	if m.Type == Tally {
		n += TallySize
	}
	return n
}

// Encode writes m into b, which must be at least m.Size() bytes long, and
// returns the m.Size() bytes written. A Text longer than MaxText is cut to
// MaxText bytes at a character boundary by the caller (see Truncate).
func (m Message) Encode(b []byte) []byte {
	b = b[:m.Size()]
	b[0] = byte(m.Type)
	b[1] = Wire
	binary.BigEndian.PutUint16(b[2:4], m.Listener)
	binary.BigEndian.PutUint32(b[4:8], m.Value)
	rest := b[MessageSize:]
	if m.Type == Tally {
		encodeTally(rest, m.Tallies)
		return b
	}
	if m.Type.HasTrailer() {
		binary.BigEndian.PutUint64(rest, m.Offset)
		binary.BigEndian.PutUint64(rest[8:], m.Length)
		rest = rest[TrailerSize:]
	}
	if m.Type.HasAddr() {
		copy(rest, m.Addr)
		return b
	}
	copy(rest, m.Text)
	return b
}

// Decode parses one packet. It returns an error wrapping ErrGarbage if the
// packet is shorter than MessageSize, carries another wire format, has an
// unknown type, or has text where its type has none (or more than MaxText,
// or text that is not UTF-8), or is a Write or Unsent without its whole
// trailer, or has an address (after the header of a Conn or Keep, after
// the trailer of a Write or Unsent) that decodeAddr refuses, or is a Tally
// whose trailer is not TallySize bytes.
func Decode(b []byte) (Message, error) {
	if len(b) < MessageSize {
		return Message{}, fmt.Errorf("%w: %d bytes, want %d", ErrGarbage, len(b), MessageSize)
	}
	if b[1] != Wire {
		return Message{}, fmt.Errorf("%w: wire format %d, want %d", ErrGarbage, b[1], Wire)
	}
	m := Message{
		Type:     Type(b[0]),
		Listener: binary.BigEndian.Uint16(b[2:4]),
		Value:    binary.BigEndian.Uint32(b[4:8]),
	}
	text := b[MessageSize:]
	switch {
	case !m.Type.FromChild() && !m.Type.FromMaster():
		return Message{}, fmt.Errorf("%w: unknown type %v", ErrGarbage, m.Type)
	case m.Type == Tally:
		t, err := decodeTally(text)
		if err != nil {
			return Message{}, err
		}
		m.Tallies = t
		return m, nil
	case m.Type.HasTrailer() && len(text) < TrailerSize:
		return Message{}, fmt.Errorf("%w: %v of %d bytes, want %d", ErrGarbage, m.Type, len(b), MessageSize+TrailerSize)
	case m.Type.HasTrailer():
		m.Offset, m.Length = binary.BigEndian.Uint64(text), binary.BigEndian.Uint64(text[8:])
		if err := m.decodeAddr(text[TrailerSize:]); err != nil {
			return Message{}, err
		}
		return m, nil
	case m.Type.HasAddr():
		if err := m.decodeAddr(text); err != nil {
			return Message{}, err
		}
		return m, nil
	case !m.Type.HasText() && len(text) > 0:
		return Message{}, fmt.Errorf("%w: %v of %d bytes, want %d", ErrGarbage, m.Type, len(b), MessageSize)
	case len(text) > MaxText || !utf8.Valid(text):
		return Message{}, fmt.Errorf("%w: %v text of %d bytes, want at most %d of UTF-8", ErrGarbage, m.Type, len(text), MaxText)
	}
	m.Text = string(text)
	return m, nil
}

// Truncate returns s cut to at most MaxText bytes at a character boundary,
// and made valid UTF-8, for a message's Text.
func Truncate(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= MaxText {
		return s
	}
	cut := MaxText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
