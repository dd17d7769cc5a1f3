package prefork

import (
	"fmt"
	"os"
	"strconv"

	"github.com/actd/actd/protocol"
)

// The access log and the request body limit (Config.AccessLog,
// AccessLogFormat, MaxRequestBody) are the children's to apply; the
// master's part is the environment and, for an access log to a file, the
// file. The master opens it (O_WRONLY|O_APPEND|O_CREAT, 0640) for each
// generation, before any of the generation's children starts, and passes
// it as the first extra fd after the back-channel (protocol/access.go):
// a reload reopens it, so a file logrotate renamed is followed by a new
// one. Each child writes its lines with one write(2) each; O_APPEND keeps
// them whole. The generation keeps its file (Program.logFile) for the
// children it starts later; the master closes it once the generation can
// no longer start any (a later reload serves, or it was abandoned).

// accessLogMode is the file mode of a new access-log file.
const accessLogMode = 0o640

// openAccessLog opens the access-log file cfg names. It returns nil, nil
// when cfg logs to the journal or not at all, and an error naming the file
// if it cannot be opened.
func openAccessLog(cfg Config) (*os.File, error) {
	if cfg.AccessLog == "" || cfg.AccessLog == "journal" {
		return nil, nil
	}
	f, err := os.OpenFile(cfg.AccessLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, accessLogMode)
	if err != nil {
		return nil, fmt.Errorf("access-log: %w", err) // the key, for exit status 78
	}
	return f, nil
}

// operatorEnv returns the children's environment for the access log and
// the body limit: nothing for what is off.
func operatorEnv(cfg Config, listeners int) []string {
	var env []string
	switch cfg.AccessLog {
	case "":
	case "journal":
		env = append(env, protocol.EnvAccessLog+"=journal")
	default:
		env = append(env, protocol.EnvAccessLog+"=fd:"+strconv.Itoa(protocol.FirstExtraFD(listeners, cfg.Mode.SpeaksProtocol())))
	}
	if cfg.AccessLog != "" && cfg.AccessLogFormat != "" {
		env = append(env, protocol.EnvAccessLogFormat+"="+cfg.AccessLogFormat)
	}
	if cfg.MaxRequestBody > 0 {
		env = append(env, protocol.EnvMaxRequestBody+"="+strconv.FormatUint(cfg.MaxRequestBody, 10))
	}
	return env
}

// closeLog closes f unless it is nil or keep.
func closeLog(f, keep *os.File) {
	if f != nil && f != keep {
		f.Close()
	}
}
