package prefork

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestUnitsStoreAutoHeld: the shipped services' fd store
// (FileDescriptorStoreMax=) holds what the master holds by default:
// maxAutoHeld, the default max-held's bound under their LimitNOFILE.
func TestUnitsStoreAutoHeld(t *testing.T) {
	for _, unit := range []string{"actd.service", "actd@.service"} {
		text, err := os.ReadFile("../packaging/systemd/" + unit)
		if err != nil {
			t.Fatal(err)
		}
		store := regexp.MustCompile(`(?m)^FileDescriptorStoreMax=(\d+)$`).FindSubmatch(text)
		nofile := regexp.MustCompile(`(?m)^LimitNOFILE=(\d+)$`).FindSubmatch(text)
		if store == nil || nofile == nil {
			t.Fatalf("%s: no FileDescriptorStoreMax= or LimitNOFILE=", unit)
		}
		n, _ := strconv.Atoi(string(nofile[1]))
		held, _ := heldBudget(DefaultConfig(), 1, n)
		if got := string(store[1]); got != strconv.Itoa(held) {
			t.Errorf("%s: FileDescriptorStoreMax=%s, want %d: what the master holds by default under LimitNOFILE=%d", unit, got, held, n)
		}
	}
}

// TestHeldBudget: what the fd limit leaves, as --max-held asks it.
func TestHeldBudget(t *testing.T) {
	cfg := DefaultConfig() // max-children 32: 64 + 1 + 2*65 = 195 fds reserved
	tests := []struct {
		name    string
		maxHeld int
		nofile  int
		want    int
		byFDs   bool
	}{
		{"auto, plenty", 0, 65536, maxAutoHeld, false},
		{"auto, tight", 0, 1195, 1000, true},
		{"auto, none left", 0, 128, minHeld, true},
		{"asked, fits", 500, 65536, 500, false},
		{"asked, lowered", 5000, 1195, 1000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg.MaxHeld = tt.maxHeld
			got, byFDs := heldBudget(cfg, 1, tt.nofile)
			if got != tt.want || byFDs != tt.byFDs {
				t.Errorf("got %d, %v; want %d, %v", got, byFDs, tt.want, tt.byFDs)
			}
		})
	}
}
