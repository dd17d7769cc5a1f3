package fdwait

import (
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func pipe(t *testing.T) (r, w int) {
	t.Helper()
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(p[0]); unix.Close(p[1]) })
	return p[0], p[1]
}

// TestReadable: a pipe with data is readable at once, an empty one is not
// within its bound.
func TestReadable(t *testing.T) {
	r, w := pipe(t)
	if ok, err := Readable(r, 20*time.Millisecond); ok || err != nil {
		t.Errorf("empty pipe: got %v, %v, want false, nil", ok, err)
	}
	unix.Write(w, []byte("x"))
	if ok, err := Readable(r, time.Second); !ok || err != nil {
		t.Errorf("pipe with a byte: got %v, %v, want true, nil", ok, err)
	}
}

// TestReadableThroughSignals: signals sent to the very thread that polls
// (SIGUSR1, caught, every 5 ms by tgkill while the test goroutine is
// locked to its thread) do not end the wait early: the pipe written after
// 150 ms is seen as readable. A bare poll returns EINTR here.
func TestReadableThroughSignals(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	r, w := pipe(t)
	caught := make(chan os.Signal, 64)
	signal.Notify(caught, syscall.SIGUSR1)
	defer signal.Stop(caught)
	pid, tid := unix.Getpid(), unix.Gettid()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				unix.Tgkill(pid, tid, unix.SIGUSR1)
			}
		}
	}()
	time.AfterFunc(150*time.Millisecond, func() { unix.Write(w, []byte("x")) })
	start := time.Now()
	if ok, err := Readable(r, 10*time.Second); !ok || err != nil {
		t.Errorf("got %v, %v, want true, nil", ok, err)
	}
	if len(caught) == 0 {
		t.Errorf("no SIGUSR1 caught in %v: the wait was not interrupted at all", time.Since(start))
	}
}
