package worker

import (
	"os"
	"strconv"

	"github.com/actd/actd/protocol"
)

// MaxRequestBody returns the largest request body, in bytes, the master
// lets a worker read (--max-request-body, ACTD_MAX_REQUEST_BODY): a
// request whose Content-Length is larger gets 413 without its body being
// read, and so does a chunked body once it grows past it. It returns -1
// for no limit: the variable absent, 0, or not a number.
func MaxRequestBody() int64 {
	n, err := strconv.ParseInt(os.Getenv(protocol.EnvMaxRequestBody), 10, 64)
	if err != nil || n <= 0 {
		return -1
	}
	return n
}

// The request head limits every worker kind keeps (protocol/access.go):
// a head larger than MaxHeaderBytes, or with more than MaxHeaderFields
// fields, gets 431. For net/http, set http.Server.MaxHeaderBytes to
// MaxHeaderBytes; Requests counts the fields.
const (
	MaxHeaderBytes  = protocol.MaxHeadBytes
	MaxHeaderFields = protocol.MaxHeadFields
)
