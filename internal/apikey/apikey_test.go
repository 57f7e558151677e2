package apikey_test

import (
	"strings"
	"testing"

	"github.com/petstore/petstore/internal/apikey"
)

func TestGenerateVerify(t *testing.T) {
	key, digest, err := apikey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(key, apikey.Prefix) || len(key) != len(apikey.Prefix)+43 {
		t.Fatalf("Generate: got key %q, want %s followed by 43 characters", key, apikey.Prefix)
	}
	other, otherDigest, _ := apikey.Generate()
	if other == key || otherDigest == digest {
		t.Fatalf("Generate returned the same key twice")
	}
	set := apikey.NewSet(otherDigest, digest)
	if got, ok := set.Verify(key); !ok || got != digest {
		t.Fatalf("Verify(generated key): got %v, %v; want its digest, true", got, ok)
	}
	for _, bad := range []string{"", key[:len(key)-1], key + "x", strings.ToUpper(key), "Bearer " + key, key + "\x00", strings.Repeat("a", 300)} {
		if _, ok := set.Verify(bad); ok {
			t.Errorf("Verify(%q): got true, want false", bad)
		}
	}
}

// Lookup finds each key of a set at its own entry, with its ID.
func TestLookup(t *testing.T) {
	var keys []string
	var digests []apikey.Digest
	for range 5 {
		k, d, err := apikey.Generate()
		if err != nil {
			t.Fatal(err)
		}
		keys, digests = append(keys, k), append(digests, d)
	}
	set := apikey.NewSet(digests...)
	for i, k := range keys {
		got, ok := set.Lookup(k)
		if !ok || got.Digest != digests[i] || got.ID != digests[i].ID() {
			t.Errorf("Lookup(key %d): got %+v, %v; want digest %v, ID %s", i, got, ok, digests[i], digests[i].ID())
		}
	}
	if got, ok := set.Lookup(keys[0] + "x"); ok || got != nil {
		t.Errorf("Lookup(unknown key): got %+v, %v; want nil, false", got, ok)
	}
}

func TestWellFormed(t *testing.T) {
	const k32 = "abcdefghijklmnopqrstuvwxyz012345"
	for key, want := range map[string]bool{
		k32:                                 true,
		"psk_abc-DEF.ghi~jkl+mno/pqrstuvwx": true,
		k32 + "==":                          true,
		k32[:31]:                            false, // a hand-set key: 32 characters at least
		"abcdefghijklmnop":                  false,
		"short":                             false,
		k32[:16] + " " + k32[16:]:           false,
		k32 + "=x":                          false,
		strings.Repeat("=", 32):             false,
		k32 + "\u00e9":                      false,
		strings.Repeat("a", 257):            false,
	} {
		if got := apikey.WellFormed(key); got != want {
			t.Errorf("WellFormed(%q): got %v, want %v", key, got, want)
		}
	}
}

func TestParseKeys(t *testing.T) {
	const dev, ci = "dev-key-0123456789abcdef01234567", "ci-key-0123456789abcdef012345678"
	ds, err := apikey.ParseKeys(" " + dev + " , ," + ci)
	if err != nil || len(ds) != 2 || ds[0] != apikey.Hash(dev) || ds[1] != apikey.Hash(ci) {
		t.Fatalf("ParseKeys: got %v, %v", ds, err)
	}
	if _, err := apikey.ParseKeys(dev + ",bad key"); err == nil || !strings.Contains(err.Error(), "API key 2") {
		t.Fatalf("ParseKeys with a bad key: got %v, want an error naming key 2", err)
	}
	// The old minimum, 16, no longer does for a key set by hand.
	if _, err := apikey.ParseKeys("dev-key-0123456789"); err == nil || !strings.Contains(err.Error(), "32–256 characters") {
		t.Fatalf("ParseKeys with a key of 18 characters: got %v, want the 32-character minimum", err)
	}
}

// TestLookupShortKey: a presented key of 16 to 31 characters is still
// looked up, for a keys file's digest of one made before the minimum rose;
// a shorter one never is.
func TestLookupShortKey(t *testing.T) {
	set := apikey.NewSet(apikey.Hash("sixteen-chars-ok"), apikey.Hash("fifteen-chars-n"))
	if _, ok := set.Lookup("sixteen-chars-ok"); !ok {
		t.Error("a 16-character key in the set: not found")
	}
	if _, ok := set.Lookup("fifteen-chars-n"); ok {
		t.Error("a 15-character key: found")
	}
}

func TestParseDigests(t *testing.T) {
	d := apikey.Hash("dev-key-0123456789")
	file := "# production keys\n\n" + d.String() + "  # ci\n" + strings.ToUpper(apikey.Hash("x").String()) + "\n"
	ds, err := apikey.ParseDigests(strings.NewReader(file))
	if err != nil || len(ds) != 2 || ds[0] != d || ds[1] != apikey.Hash("x") {
		t.Fatalf("ParseDigests: got %v, %v", ds, err)
	}
	for _, bad := range []string{"", "# only a comment\n", "abc\n", d.String() + "00\n"} {
		if _, err := apikey.ParseDigests(strings.NewReader(bad)); err == nil {
			t.Errorf("ParseDigests(%q): got nil error", bad)
		}
	}
}
