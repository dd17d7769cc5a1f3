package perl_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// journalScript has the handler answer applications that fail, as
// respond does for a request: one that dies (a 500), a cleanup handler
// that dies, one that dies while streaming, and a body with a wide
// character (a warning). A stand-in worker takes the tallies.
const journalScript = `use Actd::Server; use Socket;
socketpair(my $conn, my $client, AF_UNIX, SOCK_STREAM, 0) or die "socketpair: $!";
my $h = Actd::Server->new;
$h->{worker} = bless {}, 'Tallies';    # the tally of each answer goes nowhere
sub Tallies::tally {} sub Tallies::offloads { 0 }
sub request {
    my ($app, @cleanup) = @_;
    $h->{app} = $app;
    my $c = { conn => $conn, buf => '', alive => 1, proto => 'HTTP/1.1', keepalive => 1 };
    $h->respond($c, { REQUEST_METHOD => 'GET', REQUEST_URI => '/x?token=s3cret', 'psgi.errors' => *STDERR, 'psgix.cleanup.handlers' => \@cleanup });
}
request(sub { die "dying on purpose\nsecond line\n" }, sub { die "cleanup failed\n" });
request(sub { sub { my $w = shift->([200, []]); die "late\n" } });
request(sub { [200, [], ["\x{263a}"]] });
sysread $client, my $answer, 65536;
print $answer =~ m{\AHTTP/1.1 500 } ? "500" : "not 500: $answer";
`

// TestJournalPriority: the handler's error lines (an application's die
// and 500, its own complaints) go to stderr with "<3>" (err) or "<4>"
// (warning) before each line when stderr is the journal's stream
// (JOURNAL_STREAM is its device and inode: Actd::Journal), and as they
// are otherwise.
func TestJournalPriority(t *testing.T) {
	needPlack(t)
	lines := []string{ // each line's start, without its priority
		"Plack::Handler::Actd: error serving GET /x: the application died: dying on purpose",
		"second line",
		"Plack::Handler::Actd: cleanup handler: cleanup failed",
		"Plack::Handler::Actd: the application died: late",
		"Wide character in response body: encoding it as UTF-8 at ",
	}
	priorities := []string{"<3>", "<3>", "<3>", "<3>", "<4>"}
	for _, tc := range []struct {
		name    string
		stream  func(dev, ino uint64) string // JOURNAL_STREAM; "" unset
		journal bool
	}{
		{"stderr is the journal", func(dev, ino uint64) string { return fmt.Sprintf("%d:%d", dev, ino) }, true},
		{"another stream is", func(dev, ino uint64) string { return fmt.Sprintf("%d:%d", dev, ino+1) }, false},
		{"no journal", func(dev, ino uint64) string { return "" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
			if err != nil {
				t.Fatal(err)
			}
			defer stderr.Close()
			var st syscall.Stat_t
			if err := syscall.Fstat(int(stderr.Fd()), &st); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("perl", "-Ilib", "-e", journalScript)
			cmd.Env = append(os.Environ(), "JOURNAL_STREAM="+tc.stream(uint64(st.Dev), st.Ino))
			cmd.Stderr = stderr
			out, err := cmd.Output()
			if err != nil || string(out) != "500" {
				t.Fatalf("perl: got %q, %v, want 500", out, err)
			}
			b, err := os.ReadFile(stderr.Name())
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), "s3cret") {
				t.Errorf("stderr: got the query string in\n%s\nwant the request without it (it may carry secrets)", b)
			}
			got := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
			if len(got) != len(lines) {
				t.Fatalf("stderr: got %d lines, want %d:\n%s", len(got), len(lines), b)
			}
			for i, line := range lines {
				if tc.journal {
					line = priorities[i] + line
				}
				if !strings.HasPrefix(got[i], line) {
					t.Errorf("stderr line %d: got %q, want %q...", i+1, got[i], line)
				}
			}
		})
	}
}
