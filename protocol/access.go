package protocol

// Environment the master sets for the access log and the request limits
// (protocol revision 6; workers of older revisions ignore them). Each is
// absent when its setting is off.
const (
	// EnvAccessLog is "journal", or "fd:N": the access-log file the master
	// opened (O_WRONLY|O_APPEND|O_CREAT, 0640) for this generation, at fd N,
	// the first fd after the back-channel (fds.go).
	EnvAccessLog = "ACTD_ACCESS_LOG"
	// EnvAccessLogFormat is the access-log line's format (Apache
	// LogFormat directives); absent: the default, combined plus %D.
	EnvAccessLogFormat = "ACTD_ACCESS_LOG_FORMAT"
	// EnvMaxRequestBody is the largest request body, in bytes, a worker
	// reads: beyond it, 413 and close. Absent: no limit.
	EnvMaxRequestBody = "ACTD_MAX_REQUEST_BODY"
)

// Request head limits, the same in every worker kind and the accept
// filter: beyond either, 431 Request Header Fields Too Large and close.
const (
	MaxHeadBytes  = 32 << 10 // the whole head, request line to the empty line
	MaxHeadFields = 100      // header fields
)
