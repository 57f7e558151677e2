package cluster

import "testing"

// TestSetting: a setting the options already give is replaced where it
// stands, never given twice; one they lack is added; a value that merely
// looks alike (another option's, or not after -c) is left alone.
func TestSetting(t *testing.T) {
	for _, c := range []struct{ opts, want string }{
		{"-c fsync=on -c port=5433", "-c fsync=off -c port=5433"},
		{"-c port=5433", "-c port=5433 -c fsync=off"},
		{"-c wal_sync_method=fsync=on -k /tmp", "-c wal_sync_method=fsync=on -k /tmp -c fsync=off"},
		{"fsync=on", "fsync=on -c fsync=off"},
	} {
		if got := setting(c.opts, "fsync", "off"); got != c.want {
			t.Errorf("setting(%q): got %q, want %q", c.opts, got, c.want)
		}
	}
}
