package config

import (
	"fmt"

	"github.com/actd/actd/activation"
)

// checkListens checks every --listen value (or listen key) and that no
// address comes twice, under the same name or another: two sockets cannot
// bind one address, and without this check the second bind fails with
// "address already in use" as if another program held it. A port 0 (any
// free port) may repeat.
//
// It returns nil, or an *Error for key listen naming the bad or repeated
// value.
func checkListens(values []string) error {
	seen := map[string]string{} // network and address to the value that gave it
	for _, v := range values {
		_, addr, err := activation.ParseListen(v)
		if err != nil {
			return &Error{Key: "listen", Err: err}
		}
		network, address, _ := activation.ParseAddr(addr)
		key := network + " " + address
		if first, ok := seen[key]; ok && !anyPort(address) {
			return &Error{Key: "listen", Err: twice(addr, first, v)}
		}
		seen[key] = v
	}
	return nil
}

// anyPort reports whether a TCP address asks for any free port (":0").
func anyPort(address string) bool {
	return len(address) >= 2 && address[len(address)-2:] == ":0"
}

// twice is the error for address addr given by values first and then.
func twice(addr, first, then string) error {
	if first == then {
		return fmt.Errorf("%s given twice: give each address once", addr)
	}
	return fmt.Errorf("%s given twice (as %q and %q): give each address once", addr, first, then)
}
