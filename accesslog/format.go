package accesslog

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// DefaultFormat is the combined log format plus the duration in
// microseconds.
const DefaultFormat = `%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %D`

// Entry is one request as the access log sees it.
type Entry struct {
	Start    time.Time     // the request's head came
	Duration time.Duration // from Start to the response's end
	Remote   string        // the client's HOST:PORT (after PROXY), or HOST
	Method   string
	Path     string // without the query string
	Query    string // without its "?"; "" for none
	Proto    string // HTTP/1.1
	Status   int
	Bytes    int64                    // response body bytes sent
	Header   func(name string) string // a request header's value, "" if absent; nil: none
}

// Host returns the client's address without its port.
func (e *Entry) Host() string {
	if h, _, err := net.SplitHostPort(e.Remote); err == nil {
		return h
	}
	return e.Remote
}

// Format is a compiled access-log format.
type Format struct{ parts []part }

// part is a literal (verb 0) or one directive: its letter and, for
// %{Name}i, the header name.
type part struct {
	lit  string
	verb byte
	name string
}

// verbs are the directives Compile accepts, with what they print.
const verbs = "hlutrmUqHsbBDTP"

// Compile returns the format for s: Apache LogFormat directives %h %l %u
// %t %r %m %U %q %H %s %>s %b %B %D %T %P %{Name}i and %%, anything else
// literal. It returns an error naming the first unknown or unfinished
// directive.
func Compile(s string) (*Format, error) {
	f := &Format{}
	lit := ""
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			lit += s[i : i+1]
			continue
		}
		p, n, err := directive(s[i+1:])
		if err != nil {
			return nil, fmt.Errorf("access log format at byte %d: %w", i, err)
		}
		i += n
		if p.verb == '%' {
			lit += "%"
			continue
		}
		if lit != "" {
			f.parts, lit = append(f.parts, part{lit: lit}), ""
		}
		f.parts = append(f.parts, p)
	}
	if lit != "" {
		f.parts = append(f.parts, part{lit: lit})
	}
	return f, nil
}

// directive reads the directive after a '%' at the start of s. It returns
// it and the bytes it took, or an error naming what is wrong.
func directive(s string) (part, int, error) {
	switch {
	case s == "":
		return part{}, 0, errors.New(`"%" at the end: write %% for a percent sign`)
	case s[0] == '%':
		return part{verb: '%'}, 1, nil
	case s[0] == '>' && len(s) > 1 && s[1] == 's':
		return part{verb: 's'}, 2, nil
	case s[0] == '{':
		end := strings.IndexByte(s, '}')
		if end < 2 || end+1 >= len(s) || s[end+1] != 'i' {
			return part{}, 0, errors.New("want %{Name}i, a request header")
		}
		return part{verb: 'i', name: s[1:end]}, end + 2, nil
	case strings.IndexByte(verbs, s[0]) >= 0:
		return part{verb: s[0]}, 1, nil
	}
	return part{}, 0, fmt.Errorf("unknown directive %%%c: want one of %%h %%l %%u %%t %%r %%m %%U %%q %%H %%s %%>s %%b %%B %%D %%T %%P %%{Name}i %%%%", s[0])
}

// Append appends e's line, without a newline, to b.
func (f *Format) Append(b []byte, e *Entry) []byte {
	for _, p := range f.parts {
		b = p.append(b, e)
	}
	return b
}

func (p part) append(b []byte, e *Entry) []byte {
	switch p.verb {
	case 0:
		return append(b, p.lit...)
	case 'h':
		return escape(b, e.Host())
	case 'l', 'u':
		return append(b, '-')
	case 't':
		return e.Start.AppendFormat(b, "[02/Jan/2006:15:04:05 -0700]")
	case 'r':
		b = escape(append(escape(b, e.Method), ' '), e.Path)
		return escape(append(b, ' '), e.Proto)
	case 'm':
		return escape(b, e.Method)
	case 'U':
		return escape(b, e.Path)
	case 'q':
		if e.Query == "" {
			return b
		}
		return escape(append(b, '?'), e.Query)
	case 'H':
		return escape(b, e.Proto)
	case 's':
		return strconv.AppendInt(b, int64(e.Status), 10)
	}
	return p.appendMore(b, e)
}

func (p part) appendMore(b []byte, e *Entry) []byte {
	switch p.verb {
	case 'b':
		if e.Bytes == 0 {
			return append(b, '-')
		}
		return strconv.AppendInt(b, e.Bytes, 10)
	case 'B':
		return strconv.AppendInt(b, e.Bytes, 10)
	case 'D':
		return strconv.AppendInt(b, e.Duration.Microseconds(), 10)
	case 'T':
		return strconv.AppendInt(b, int64(e.Duration/time.Second), 10)
	case 'P':
		return strconv.AppendInt(b, int64(os.Getpid()), 10)
	case 'i':
		v := ""
		if e.Header != nil {
			v = e.Header(p.name)
		}
		if v == "" {
			return append(b, '-')
		}
		return escape(b, v)
	}
	return b
}

// escape appends s with '"' and '\' backslashed and control and non-ASCII
// bytes as \xHH, as Apache does, so that no client can break a line or
// forge a field.
func escape(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < ' ' || c >= 0x7f:
			b = append(b, '\\', 'x', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return b
}

// Headers returns the request headers the format prints (%{Name}i), in
// the order it names them; a worker keeps only these of a request.
func (f *Format) Headers() []string {
	var names []string
	for _, p := range f.parts {
		if p.verb == 'i' {
			names = append(names, p.name)
		}
	}
	return names
}
