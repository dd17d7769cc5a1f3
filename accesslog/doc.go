// Package accesslog writes one line per HTTP request, as the master's
// --access-log and --access-log-format ask every worker to (environment
// ACTD_ACCESS_LOG and ACTD_ACCESS_LOG_FORMAT, protocol/access.go).
//
// Contract:
//
//   - [Compile] turns an Apache LogFormat string (gunicorn's letters) into
//     a [Format]; [Format.Append] renders one [Entry] with it. The query
//     string is never part of %r or %U, only of %q.
//   - [FromEnv] returns the child's [Logger]: nil when the access log is
//     off, one writing each line with one write(2) to the fd the master
//     passed ("fd:N"), or one sending a native-protocol entry per request
//     to the journal ("journal"), with the fields HTTP_STATUS,
//     HTTP_METHOD, HTTP_PATH, HTTP_BYTES, HTTP_DURATION_US and
//     REMOTE_ADDR, or to stderr when no journal socket answers.
//
// docs/operations.md ("Access log") is the operator's reference.
package accesslog
