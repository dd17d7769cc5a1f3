package main

import (
	"bufio"
	"bytes"

	"github.com/actd/actd/prefork/acceptfilter"
)

// codingStatus returns the status for a request whose Transfer-Encoding
// values, joined with ",", are codings (RFC 9112 6.1, 6.3): 0 for chunked
// alone; 400 if chunked is not the last coding, or comes twice, or a
// coding is empty; 501 for another coding before chunked (the built-in
// handler decodes none).
func codingStatus(codings []byte) int {
	list := bytes.Split(codings, []byte(","))
	for i, c := range list {
		c = bytes.Trim(c, " \t")
		last := i == len(list)-1
		switch {
		case len(c) == 0, !acceptfilter.IsToken(c):
			return 400
		case bytes.EqualFold(c, []byte("chunked")) != last:
			return 400
		}
	}
	if len(list) > 1 {
		return 501
	}
	return 0
}

// chunkLineLimit is the longest chunk-size line, without its CRLF: 400.
const chunkLineLimit = 4096

// chunkedBody reads and drops a chunked body (RFC 9112 7.1): chunk-size
// lines of 1 to 16 hex digits and extensions, at most chunkLineLimit
// bytes, each line ending in CRLF;
// chunk data followed by CRLF; trailer field lines up to an empty line,
// within acceptfilter.HeadLimit. It returns 0, 400 for a malformed body,
// 413 once its data passes limit bytes (negative: no limit; the data past
// it is not read), or the status of a failed read.
func chunkedBody(r *bufio.Reader, limit int) int {
	for {
		line, err := readLine(r, chunkLineLimit+1)
		if err != nil {
			return readStatus(err, 400)
		}
		size, ok := chunkSize(line)
		if !ok {
			return 400
		}
		if size == 0 {
			return trailers(r)
		}
		if limit >= 0 {
			if limit -= size; limit < 0 {
				return 413
			}
		}
		if _, err := r.Discard(size); err != nil {
			return readStatus(err, 400)
		}
		end, err := r.Peek(2)
		if err != nil {
			return readStatus(err, 400)
		}
		if !bytes.Equal(end, crlf) {
			return 400
		}
		r.Discard(2)
	}
}

// chunkSize parses a chunk-size line with its CRLF: the size and true, or
// false for a malformed line. Extensions (";" name ["=" value], with
// spaces or tabs around ";" and "=") are checked only for their bytes:
// tokens, "=", quoted strings' visible bytes.
func chunkSize(line []byte) (int, bool) {
	if !bytes.HasSuffix(line, crlf) {
		return 0, false
	}
	line = line[:len(line)-2]
	n, i := 0, 0
	for ; i < len(line) && i < 17 && hexValue(line[i]) >= 0; i++ {
		n = n<<4 | hexValue(line[i])
	}
	if i == 0 || i > 16 {
		return 0, false
	}
	ext := bytes.TrimLeft(line[i:], " \t")
	if len(ext) > 0 && (ext[0] != ';' || !isFieldValue(ext)) {
		return 0, false
	}
	return n, n >= 0
}

func hexValue(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// trailers reads the trailer field lines after the last chunk, up to the
// empty line. It returns 0 or the status to answer.
func trailers(r *bufio.Reader) int {
	var f framing
	for size := 0; ; {
		line, err := readLine(r, r.Size())
		if err != nil {
			return readStatus(err, 400)
		}
		if size += len(line); size > acceptfilter.HeadLimit {
			return 431
		}
		if !bytes.HasSuffix(line, crlf) {
			return 400
		}
		if len(line) == 2 {
			return 0
		}
		if status := f.parseHeader(line[:len(line)-2]); status != 0 {
			return status
		}
	}
}
