package slowclient

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

// The clients of issue 21, whose request head is whole but whose body
// comes slowly (Post) or who take the answer slowly (Read). Each paces
// itself in steps of Step on its own connection, one request with
// Connection: close, a deadline on every read and write.

// Step is how often a pacing client sends or takes its next piece.
const Step = 250 * time.Millisecond

// dialWait bounds the connect of Post and Read.
const dialWait = 5 * time.Second

// Post sends body as POST path to addr at about rate bytes a second, then
// reads the answer. It returns nil if the answer is 200 with body back
// exactly, all before deadline; else what went wrong.
func Post(addr, path string, body []byte, rate int, deadline time.Time) error {
	c, err := net.DialTimeout("tcp", addr, dialWait)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(deadline)
	head := "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\nConnection: close\r\n\r\n"
	if _, err := io.WriteString(c, head); err != nil {
		return err
	}
	step := stepOf(rate)
	for rest := body; len(rest) > 0; rest = rest[min(step, len(rest)):] {
		if _, err := c.Write(rest[:min(step, len(rest))]); err != nil {
			return fmt.Errorf("%d bytes of the body left: %w", len(rest), err)
		}
		if len(rest) > step {
			time.Sleep(Step)
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

// Read sends GET path to addr and copies the answer's body to w at about
// rate bytes a second, until end or the body's last byte. It returns the
// bytes copied, and an error if the answer is not 200, the body ends short
// of its Content-Length, w fails, or the connection fails before end (the
// last read may wait until a step past end).
func Read(addr, path string, w io.Writer, rate int, end time.Time) (int64, error) {
	c, err := net.DialTimeout("tcp", addr, dialWait)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(end.Add(dialWait))
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
	var n int64
	for time.Now().Before(end) {
		k, err := io.CopyN(w, resp.Body, int64(stepOf(rate)))
		n += k
		if err == io.EOF {
			if resp.ContentLength >= 0 && n != resp.ContentLength {
				return n, fmt.Errorf("body ended at %d of %d bytes", n, resp.ContentLength)
			}
			return n, nil
		}
		if err != nil {
			return n, err
		}
		time.Sleep(Step)
	}
	return n, nil
}

// stepOf is the bytes a client paced at rate moves per Step, at least 1.
func stepOf(rate int) int { return max(1, rate*int(Step)/int(time.Second)) }
