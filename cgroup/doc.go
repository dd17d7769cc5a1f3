// Package cgroup finds the control groups of the calling process and reads
// what the kernel keeps there for the pool: the OOM-kill counter of the
// memory controller, on the unified (v2) hierarchy or on the v1 memory
// hierarchy of a hybrid host, and, where systemd delegated the unit's v2
// group (Delegate=), a leaf group per child with its own memory figures and
// limit.
//
// It knows files, not policy: prefork decides what a risen counter means.
// A host or a unit without a memory controller is not an error: the readers
// report false and the caller carries on without the figure.
package cgroup
