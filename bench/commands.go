package main

import (
	"fmt"
	"os"
	"strings"
)

// writeCommands writes the exact command lines the suite ran, with the work
// directory shown as $WORK, one start's directory as $DIR and the port as
// PORT.
func (r report) writeCommands(b *strings.Builder) {
	b.WriteString("### Commands\n\nServers (tiny response; for the slow load the delay becomes 20ms and the fixed pools 32):\n\n```\n")
	for _, srv := range r.opts.servers {
		line, err := commandLine(r.tools, srv)
		if err != nil {
			line = "(" + err.Error() + ")"
		}
		fmt.Fprintf(b, "%s\n", line)
	}
	b.WriteString("```\n\nApache's `httpd.conf` and `slow.lua` come from `bench/apache.go`, gunicorn's `benchapp.py` from `bench/gunicorn.go` (uWSGI serves the same app, `bench/slowclients.go`; apache-reqtimeout adds Debian's `mod_reqtimeout` lines there).\n\nLoads (wrk prints its summary through `$WORK/summary.lua`; Apache is asked for `/index.txt`, and `/slow` under the slow load):\n\n```\n")
	for _, name := range r.opts.loads {
		l, _ := loadByName(name)
		fmt.Fprintf(b, "%s\n", strings.Join(quoteArgs(wrkArgs("$WORK/summary.lua", "http://127.0.0.1:PORT/", l, r.opts.duration)), " "))
	}
	b.WriteString("```\n\n")
}

// commandLine renders how server srv is started with the fast pool. It
// writes the server's files into a scratch directory to do so, and returns
// an error if it cannot.
func commandLine(t *tools, srv string) (string, error) {
	dir, err := os.MkdirTemp(t.dir, "commands-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	const port = 65001
	cmd, _, err := command(srv, t, setup{pool: fastPool, port: port, dir: dir})
	if err != nil {
		return "", err
	}
	var env []string
	for _, e := range cmd.Env {
		if strings.HasPrefix(e, "BENCH_") {
			env = append(env, e)
		}
	}
	line := strings.Join(append(env, quoteArgs(cmd.Args)...), " ")
	line = strings.ReplaceAll(line, dir, "$DIR")
	line = strings.ReplaceAll(line, t.dir, "$WORK")
	return strings.ReplaceAll(line, fmt.Sprint(port), "PORT"), nil
}

// quoteArgs single-quotes arguments that hold spaces.
func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if strings.ContainsAny(a, " \t") {
			a = "'" + a + "'"
		}
		out[i] = a
	}
	return out
}
