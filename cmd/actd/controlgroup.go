package main

import (
	"fmt"
	"os"

	"github.com/actd/actd/config"
)

// controlMode is the control socket's mode under --control-group: its
// owner and group may connect (connect(2) needs write permission).
const controlMode = 0o660

// shareControl gives the control socket at path to group (--control-group)
// with mode 0660, so that the group's members can run `actd status` and
// `actd reload`. It does nothing for an empty group. It returns an error
// naming the group for an unknown one or a failed chown or chmod.
func shareControl(path, group string) error {
	if group == "" {
		return nil
	}
	gid, err := config.LookupGroup(group)
	if err != nil {
		return fmt.Errorf("control-group: %w", err)
	}
	if err := os.Chown(path, -1, gid); err != nil {
		return fmt.Errorf("control-group %s: %w", group, err)
	}
	if err := os.Chmod(path, controlMode); err != nil {
		return fmt.Errorf("control-group %s: %w", group, err)
	}
	return nil
}
