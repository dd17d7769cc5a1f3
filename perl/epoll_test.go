package perl_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEpollNumbers: the syscall numbers Actd::Epoll knows for this
// architecture are the kernel headers' (syscall.ph), and an epoll set it
// makes reports a pipe readable.
func TestEpollNumbers(t *testing.T) {
	if _, err := exec.LookPath("perl"); err != nil {
		t.Skipf("perl needed (Debian package perl): %v", err)
	}
	const script = `use Actd::Epoll;
my $arch = ($Config::Config{archname} =~ /^([^-]+)/)[0];
my $known = $Actd::Epoll::NUMBERS{$arch} or die "no numbers for $arch\n";
my @header = Actd::Epoll::header_numbers();
"@$known" eq "@header" or die "known @$known, syscall.ph @header\n";
pipe(my $r, my $w) or die;
my $epoll = Actd::Epoll->new;
$epoll->add(fileno $r, 0);
my @before = $epoll->wait(0);
syswrite $w, "x";
my @after = $epoll->wait(1000);
print scalar(@before), " ", join(",", @after) eq fileno($r) ? "ready" : "not ready: @after";
`
	out, err := exec.Command("perl", "-Ilib", "-e", script).CombinedOutput()
	if got := strings.TrimSpace(string(out)); err != nil || got != "0 ready" {
		t.Errorf("perl: got %q, %v, want \"0 ready\" (known numbers match syscall.ph, a written pipe is ready)", got, err)
	}
}
