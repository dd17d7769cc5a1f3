package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// The slow clients of issue 21: each paces itself in steps of a quarter
// second, on its own connection, with a deadline on every read and write.
const slowStep = 250 * time.Millisecond

// slowBody sends body to POST /echo at address at about rate bytes a
// second, then reads the answer. It returns nil if the answer is 200 with
// body back exactly before deadline, or what went wrong.
func slowBody(address string, body []byte, rate int, deadline time.Time) error {
	c, err := net.DialTimeout("tcp", address, goodTimeout)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(deadline)
	head := "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n"
	if _, err := io.WriteString(c, head); err != nil {
		return err
	}
	step := max(1, rate*int(slowStep)/int(time.Second))
	for rest := body; len(rest) > 0; rest = rest[min(step, len(rest)):] {
		if _, err := c.Write(rest[:min(step, len(rest))]); err != nil {
			return fmt.Errorf("%d bytes of the body left: %w", len(rest), err)
		}
		if len(rest) > step {
			time.Sleep(slowStep)
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return err
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("status %d", resp.StatusCode)
	case !bytes.Equal(got, body):
		return fmt.Errorf("echo of %d bytes: got %d bytes, not the same", len(body), len(got))
	}
	return nil
}

// slowRead sends GET path to address and reads the answer's body at about
// rate bytes a second until end or its last byte. It returns the body
// bytes read, and an error if the answer is not 200 or a byte is not
// issue21Byte of its offset (or another failure before end).
func slowRead(address, path string, rate int, end time.Time) (int64, error) {
	c, err := net.DialTimeout("tcp", address, goodTimeout)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(end.Add(goodTimeout))
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	buf := make([]byte, max(1, rate*int(slowStep)/int(time.Second)))
	var n int64
	for time.Now().Before(end) {
		k, err := io.ReadFull(resp.Body, buf)
		for i, b := range buf[:k] {
			if b != issue21Byte(n+int64(i)) {
				return n + int64(i), fmt.Errorf("byte %d: got %#x, want %#x", n+int64(i), b, issue21Byte(n+int64(i)))
			}
		}
		n += int64(k)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			if n != resp.ContentLength && resp.ContentLength >= 0 {
				return n, fmt.Errorf("body ended at %d of %d bytes", n, resp.ContentLength)
			}
			return n, nil
		}
		if err != nil {
			return n, err
		}
		time.Sleep(slowStep)
	}
	return n, nil
}
