package pets_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/petstore/petstore/internal/pets"
)

// TestFingerprintOfOlderPets: a NewPet with only 1.2.0's members hashes
// exactly as 1.2.0 did (name NUL categoryId NUL status), so that an
// outcome kept before the upgrade replays after it.
func TestFingerprintOfOlderPets(t *testing.T) {
	n := pets.NewPet{Name: "Rex — 🐕", CategoryID: 9223372036854775807, Status: pets.Sold}
	want := sha256.Sum256([]byte("Rex — 🐕\x009223372036854775807\x00sold"))
	if got := n.Fingerprint(); got != want {
		t.Errorf("got %s, want %s", hex.EncodeToString(got[:]), hex.EncodeToString(want[:]))
	}
	// A pinned value, in case both sides above change together.
	fp := pets.NewPet{Name: "Rex", CategoryID: 1, Status: pets.Available}.Fingerprint()
	if got := hex.EncodeToString(fp[:]); got != "9470c641d843aa2157c3289c7bb2dcd62b56d707c856f95d0def97de150e28c6" {
		t.Errorf("got %s", got)
	}
}

// TestFingerprintOfExtra: with Extra, the fingerprint is the SHA-256 of the
// whole NewPet in canonical JSON, whose preimage never holds the NUL bytes
// every older preimage holds: the two never meet.
func TestFingerprintOfExtra(t *testing.T) {
	n := pets.NewPet{Name: "a\"<b>", CategoryID: 7, Status: pets.Pending, Extra: `{"age":3,"tags":["x","\u0000"],"zone":"é"}`}
	canonical := string(n.AppendCanonical(nil))
	want := `{"age":3,"categoryId":7,"name":"a\"<b>","status":"pending","tags":["x","\u0000"],"zone":"é"}`
	if canonical != want {
		t.Fatalf("canonical: got %s, want %s", canonical, want)
	}
	if n.Fingerprint() != sha256.Sum256([]byte(want)) {
		t.Error("the fingerprint is not the SHA-256 of the canonical JSON")
	}
	if bytes.IndexByte([]byte(canonical), 0) >= 0 {
		t.Error("canonical JSON holds a NUL byte")
	}
	// Each member counts: changing any one changes the fingerprint.
	for _, m := range []pets.NewPet{
		{Name: "a\"<b>!", CategoryID: 7, Status: pets.Pending, Extra: n.Extra},
		{Name: n.Name, CategoryID: 8, Status: pets.Pending, Extra: n.Extra},
		{Name: n.Name, CategoryID: 7, Status: pets.Sold, Extra: n.Extra},
		{Name: n.Name, CategoryID: 7, Status: pets.Pending, Extra: `{"age":3,"tags":["x"],"zone":"é"}`},
		{Name: n.Name, CategoryID: 7, Status: pets.Pending},
	} {
		if m.Fingerprint() == n.Fingerprint() {
			t.Errorf("%+v fingerprints as %+v", m, n)
		}
	}
}

func TestNormalizeExtra(t *testing.T) {
	ok := pets.NewPet{Name: "Rex", CategoryID: 1}
	for _, e := range []pets.Extra{"", "{}", `{"tags":[]}`} {
		n := ok
		n.Extra = e
		if got, err := n.Normalize(); err != nil || (e == "{}") != (got.Extra == "" && e != "") {
			t.Errorf("Extra %s: got %q, %v", e, got.Extra, err)
		}
	}
	for _, e := range []pets.Extra{`[1]`, `{"b":1,"a":2}`, `{"name":"x"}`, `{"id":1}`, `{"status":"sold"}`, `{"a": 1}`, `{"a":1`, `{"a":1.0}`} {
		n := ok
		n.Extra = e
		var verr *pets.ValidationError
		if _, err := n.Normalize(); !errors.As(err, &verr) {
			t.Errorf("Extra %s: got %v, want a *ValidationError", e, err)
		}
		n.Extra, n.Plain = `{"tags":[]}`, e // Plain is held to the same form
		if _, err := n.Normalize(); !errors.As(err, &verr) {
			t.Errorf("Plain %s: got %v, want a *ValidationError", e, err)
		}
	}
	// Plain goes with Extra: none without it.
	n := ok
	n.Extra, n.Plain = "{}", "{}"
	if got, err := n.Normalize(); err != nil || got.Extra != "" || got.Plain != "" {
		t.Errorf("Extra {} and Plain {}: got %+v, %v", got, err)
	}
}

// TestFingerprintOfDefaults: a member at its default, at any depth, is what
// a request without it means, and is hashed as such: the fingerprint hashes
// Plain (Extra without those members, which the HTTP layer makes by the
// schema) in Extra's place, so a default added to the spec later leaves the
// fingerprints of older requests as they were: an outcome kept before that
// upgrade replays after it.
func TestFingerprintOfDefaults(t *testing.T) {
	old := pets.NewPet{Name: "Rex", CategoryID: 1, Status: pets.Available}
	for _, e := range []pets.Extra{`{"vaccinated":false}`, `{"size":{"unit":"cm"},"vaccinated":false}`} {
		n := old
		n.Extra, n.Plain = e, "{}"
		if n.Fingerprint() != old.Fingerprint() {
			t.Errorf("Extra %s at its defaults: the fingerprint changed", e)
		}
	}
	before := pets.NewPet{Name: "Rex", CategoryID: 1, Status: pets.Available, Extra: `{"care":{}}`}
	after := before
	after.Extra, after.Plain = `{"care":{"level":3}}`, `{"care":{}}`
	if after.Fingerprint() != before.Fingerprint() {
		t.Error("a nested default: the fingerprint changed")
	}
	base := old
	base.Extra = `{"tags":["a"]}`
	for _, e := range []pets.Extra{`{"vaccinated":true}`, `{"size":{"unit":"in"}}`, `{"tags":["a"],"vaccinated":true}`} {
		n := old
		n.Extra, n.Plain = e, e
		if n.Fingerprint() == old.Fingerprint() || n.Fingerprint() == base.Fingerprint() {
			t.Errorf("Extra %s: fingerprints as a request without it", e)
		}
	}
	n := base
	n.Extra, n.Plain = `{"tags":["a"],"vaccinated":false}`, base.Extra
	if n.Fingerprint() != base.Fingerprint() {
		t.Error("a member at its default beside another: the fingerprint changed")
	}
}
