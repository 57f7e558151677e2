package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckKitHistory: `petstore-chaos check -history FILE` judges a
// conformance kit's history (petstore conform -history) without a final
// state, as the kit did: exit 0 when valid, 1 with the anomaly when not.
func TestCheckKitHistory(t *testing.T) {
	head := `{"kind":"begin","invoke":1,"complete":1,"contract":{"name":"name","filter":"status","defaults":{"status":"\"available\""},"request":["name","categoryId","status"]}}
{"kind":"scope","invoke":2,"complete":2,"names":"run-"}
{"kind":"create","invoke":3,"complete":4,"outcome":"ok","status":201,"tenant":1,"sent":{"name":"\"run-a\"","categoryId":"1"},"got":{"name":"\"run-a\"","categoryId":"1","status":"\"available\""},"gotId":7}
`
	for _, tc := range []struct {
		name, last string
		exit       int
		out        string
	}{
		{"valid", `{"kind":"get","invoke":5,"complete":6,"outcome":"ok","status":200,"id":7,"gotId":7,"got":{"name":"\"run-a\"","categoryId":"1","status":"\"available\""}}`, 0, "result: valid"},
		{"a wrong read", `{"kind":"get","invoke":5,"complete":6,"outcome":"ok","status":200,"id":7,"gotId":7,"got":{"name":"\"run-a \"","categoryId":"1","status":"\"available\""}}`, 1, "wrong reads (stored_as_sent) at line 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "history.jsonl")
			if err := os.WriteFile(path, []byte(head+tc.last+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			exit := checkCmd([]string{"-history", path, "-state", filepath.Join(t.TempDir(), "none")}, &stdout, &stderr)
			if exit != tc.exit || !strings.Contains(stdout.String(), tc.out) {
				t.Errorf("exit %d, want %d; stdout lacks %q:\n%s%s", exit, tc.exit, tc.out, stdout.String(), stderr.String())
			}
		})
	}
}
