package prefork

import (
	"fmt"
	"time"

	"github.com/actd/actd/prefork/acceptfilter"
	"github.com/actd/actd/protocol"
	"golang.org/x/sys/unix"
)

// holds reports whether the master holds connections under cfg: a filter
// in dispatch mode.
func (c Config) holds() bool { return c.Filter != acceptfilter.None && c.Mode == protocol.Dispatch }

// deferData is the data filter where children accept (exclusive and shared
// mode): TCP_DEFER_ACCEPT on every TCP listener. Under any other filter it
// does nothing.
func deferData(cfg Config, listeners []*listener) error {
	if cfg.Filter != acceptfilter.Data {
		return nil
	}
	for _, l := range listeners {
		if err := deferAccept(l.FD, cfg.HoldTimeout); err != nil {
			return fmt.Errorf("listener %d (%s): %w", l.index, l.Name, err)
		}
	}
	return nil
}

// deferAccept sets TCP_DEFER_ACCEPT on fd: the kernel queues a connection
// only once data has arrived, or after about timeout, what the data filter
// is in exclusive and shared mode, where the master does not accept. A
// socket that is not TCP is left as it is.
func deferAccept(fd int, timeout time.Duration) error {
	if _, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO); err != nil {
		return nil
	}
	secs := int(max((timeout+time.Second-1)/time.Second, 1))
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_DEFER_ACCEPT, secs); err != nil {
		return fmt.Errorf("TCP_DEFER_ACCEPT: %w", err)
	}
	return nil
}
