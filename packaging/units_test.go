package packaging

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	sdunit "github.com/coreos/go-systemd/v22/unit"
)

// readUnit parses packaging/systemd/name.
func readUnit(t *testing.T, name string) []*sdunit.UnitOption {
	t.Helper()
	f, err := os.Open(filepath.Join("systemd", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opts, err := sdunit.DeserializeOptions(f)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return opts
}

// values returns every value of section.name, in file order; nil if absent.
func values(opts []*sdunit.UnitOption, section, name string) []string {
	var v []string
	for _, o := range opts {
		if o.Section == section && o.Name == name {
			v = append(v, o.Value)
		}
	}
	return v
}

// directive is one line a unit must carry: Section/Name=Value. A directive
// that may repeat is compared with all its values joined by " | ".
type directive struct{ section, name, value string }

// hardening is the sandbox of both services.
var hardening = []directive{
	{"Service", "DynamicUser", "yes"},
	{"Service", "CapabilityBoundingSet", ""},
	{"Service", "AmbientCapabilities", ""},
	{"Service", "NoNewPrivileges", "yes"},
	{"Service", "ProtectSystem", "strict"},
	{"Service", "ProtectHome", "yes"},
	{"Service", "PrivateTmp", "yes"},
	{"Service", "PrivateDevices", "yes"},
	{"Service", "PrivateUsers", "yes"},
	{"Service", "ProtectHostname", "yes"},
	{"Service", "ProtectClock", "yes"},
	{"Service", "ProtectKernelTunables", "yes"},
	{"Service", "ProtectKernelModules", "yes"},
	{"Service", "ProtectKernelLogs", "yes"},
	{"Service", "ProtectControlGroups", "yes"},
	{"Service", "ProtectProc", "invisible"},
	{"Service", "ProcSubset", "pid"},
	{"Service", "RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6 AF_NETLINK"},
	{"Service", "RestrictNamespaces", "yes"},
	{"Service", "RestrictRealtime", "yes"},
	{"Service", "RestrictSUIDSGID", "yes"},
	{"Service", "LockPersonality", "yes"},
	{"Service", "MemoryDenyWriteExecute", "yes"},
	{"Service", "SystemCallArchitectures", "native"},
	{"Service", "SystemCallFilter", "@system-service | ~@privileged @resources"},
	{"Service", "SystemCallErrorNumber", "EPERM"},
	{"Service", "UMask", "0077"},
}

// lifecycle is how systemd runs both services.
var lifecycle = []directive{
	{"Service", "Type", "notify"},
	{"Service", "NotifyAccess", "main"},
	{"Service", "ExecReload", "/usr/bin/actd reload"},
	{"Service", "WatchdogSec", "20s"},
	{"Service", "Restart", "on-failure"},
	{"Service", "RestartPreventExitStatus", "78"},
	{"Service", "KillMode", "mixed"},
	{"Service", "TimeoutStopSec", "35s"},
	{"Service", "OOMPolicy", "continue"},
	{"Service", "LimitNOFILE", "65536"},
	{"Service", "FileDescriptorStoreMax", "16384"},
	{"Service", "Environment", "FDSTORE=16384"},
}

// Directives the services must not carry: they would undo the sandbox or
// let children notify. User= is allowed where a unit names its own.
var forbidden = []string{"User", "Group", "Delegate", "PermissionsStartOnly", "IgnoreSIGPIPE"}

func TestServiceDirectives(t *testing.T) {
	units := []struct {
		file string
		own  []directive
	}{
		{"actd.service", []directive{
			{"Unit", "Requires", "actd.socket"},
			{"Unit", "After", "actd.socket"},
			{"Unit", "Documentation", "man:actd(8)"},
			{"Service", "ExecStart", "/usr/bin/actd --config /etc/actd/actd.conf"},
			{"Service", "RuntimeDirectory", "actd"},
			{"Install", "Also", "actd.socket"},
		}},
		{"actd@.service", []directive{
			{"Unit", "Requires", "actd@%i.socket"},
			{"Unit", "After", "actd@%i.socket"},
			{"Unit", "Documentation", "man:actd(8)"},
			{"Service", "ExecStart", "/usr/bin/actd --config /etc/actd/%i.conf"},
			{"Service", "RuntimeDirectory", "actd-%i"},
			// One dynamic user per instance (issue 11 item 8): without it
			// every actd@NAME runs as the same user "actd".
			{"Service", "User", "actd-%i"},
			{"Install", "Also", "actd@%i.socket"},
		}},
	}
	for _, u := range units {
		opts := readUnit(t, u.file)
		for _, d := range slices.Concat(u.own, lifecycle, hardening) {
			t.Run(u.file+"/"+d.name, func(t *testing.T) {
				got := values(opts, d.section, d.name)
				if got == nil {
					t.Fatalf("[%s] %s= missing, want %q", d.section, d.name, d.value)
				}
				if g := strings.Join(got, " | "); g != d.value {
					t.Errorf("[%s] %s=%q, want %q", d.section, d.name, g, d.value)
				}
			})
		}
		t.Run(u.file+"/forbidden", func(t *testing.T) {
			for _, name := range forbidden {
				own := slices.ContainsFunc(u.own, func(d directive) bool { return d.name == name })
				if got := values(opts, "Service", name); got != nil && !own {
					t.Errorf("%s=%q present, want absent", name, got)
				}
			}
		})
	}
}

func TestSocketDirectives(t *testing.T) {
	sockets := []struct {
		file   string
		listen []string // nil: the address comes from a drop-in
		fdName string
	}{
		{"actd.socket", []string{"127.0.0.1:7333"}, "http"},
		{"actd@.socket", nil, "%i"},
	}
	for _, s := range sockets {
		t.Run(s.file, func(t *testing.T) {
			opts := readUnit(t, s.file)
			if got := values(opts, "Socket", "ListenStream"); !slices.Equal(got, s.listen) {
				t.Errorf("ListenStream=%q, want %q", got, s.listen)
			}
			for _, name := range []string{"ListenDatagram", "ListenSequentialPacket", "Accept", "Service"} {
				if got := values(opts, "Socket", name); got != nil {
					t.Errorf("%s=%q present, want absent (one service, Accept=no)", name, got)
				}
			}
			checks := []directive{
				{"Socket", "FileDescriptorName", s.fdName},
				{"Socket", "Backlog", "4096"},
				{"Install", "WantedBy", "sockets.target"},
			}
			for _, d := range checks {
				if got := strings.Join(values(opts, d.section, d.name), " | "); got != d.value {
					t.Errorf("[%s] %s=%q, want %q", d.section, d.name, got, d.value)
				}
			}
		})
	}
}

// serviceCommented are the service directives a reader cannot guess.
var serviceCommented = []string{"Requires", "Type", "NotifyAccess", "ExecReload", "WatchdogSec",
	"RestartPreventExitStatus", "KillMode", "TimeoutStopSec", "OOMPolicy",
	"RuntimeDirectory", "LimitNOFILE", "FileDescriptorStoreMax", "Environment", "DynamicUser", "CapabilityBoundingSet",
	"ProtectProc", "RestrictAddressFamilies", "MemoryDenyWriteExecute",
	"SystemCallFilter", "SystemCallErrorNumber", "Also"}

// TestNonObviousDirectivesAreCommented wants a comment line right above the
// first occurrence of each directive a reader cannot guess.
func TestNonObviousDirectivesAreCommented(t *testing.T) {
	commented := map[string][]string{
		"actd.service":  serviceCommented,
		"actd@.service": append(slices.Clone(serviceCommented), "User"),
		"actd.socket":   {"ListenStream", "FileDescriptorName", "Backlog"},
		"actd@.socket":  {"FileDescriptorName", "Backlog"},
	}
	for file, names := range commented {
		data, err := os.ReadFile(filepath.Join("systemd", file))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		for _, name := range names {
			t.Run(file+"/"+name, func(t *testing.T) {
				i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, name+"=") })
				switch {
				case i < 0:
					t.Fatalf("%s= not found", name)
				case i == 0 || !strings.HasPrefix(lines[i-1], "#"):
					t.Errorf("line %d %q: got no comment above it, want one", i+1, lines[i])
				}
			})
		}
	}
}

// TestFDStoreInStepWithMaxHeld: the services' fd store holds as many
// connections as the master holds by default, and $FDSTORE tells actd that
// size on systemd 252 (issue 22). The default max-held (0) is the fd
// budget up to prefork's maxAutoHeld, which prefork's
// TestUnitsStoreAutoHeld pins to FileDescriptorStoreMax= here; and
// docs/operations.md gives the units' figures.
func TestFDStoreInStepWithMaxHeld(t *testing.T) {
	for _, file := range []string{"actd.service", "actd@.service"} {
		opts := readUnit(t, file)
		max := values(opts, "Service", "FileDescriptorStoreMax")
		if len(max) != 1 {
			t.Fatalf("%s: FileDescriptorStoreMax=%q, want one", file, max)
		}
		if got := values(opts, "Service", "Environment"); !slices.Contains(got, "FDSTORE="+max[0]) {
			t.Errorf("%s: Environment=%q, want FDSTORE=%s (FileDescriptorStoreMax=)", file, got, max[0])
		}
		ops := strings.Join(strings.Fields(mdSection(t, readDoc(t, "../docs/operations.md"), "### When the master dies")), " ")
		for _, want := range []string{"`FileDescriptorStoreMax=" + max[0] + "`", "`Environment=FDSTORE=" + max[0] + "`"} {
			if !strings.Contains(ops, want) {
				t.Errorf("docs/operations.md, When the master dies: does not say %s, as %s has it", want, file)
			}
		}
	}
}
