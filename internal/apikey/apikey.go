// Package apikey issues and verifies the bearer keys of the API. Keys are kept
// only as SHA-256 digests and compared in constant time; a key in plain text
// never outlives start-up.
package apikey

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Prefix starts every key that Generate issues.
const Prefix = "psk_"

// Lengths of a key. A key set by hand (PETSTORE_API_KEYS, ParseKeys) has
// at least MinKeyLength characters: at 32, even a key of hex digits alone
// can hold 128 bits, which no rate of guessing the server allows exhausts
// (docs/operating.md). A presented key is looked up from minPresented on,
// the minimum before it was raised: a keys file holds digests, whose keys'
// lengths the server never sees, and one made by hand may name a key of 16.
const (
	MinKeyLength = 32
	MaxKeyLength = 256
	minPresented = 16
)

// Syntax says what a configured key may be, in the words of the README's
// configuration table (its backticks dropped), so that an error and the docs
// agree.
var Syntax = fmt.Sprintf("%d–%d characters of A-Z a-z 0-9 - . _ ~ + /, optionally ending in =", MinKeyLength, MaxKeyLength)

// Digest is the SHA-256 of a key.
type Digest [sha256.Size]byte

// Hash returns the digest of key.
func Hash(key string) Digest {
	var buf [64]byte // a key (47 bytes) is hashed without a copy on the heap
	return sha256.Sum256(append(buf[:0], key...))
}

// String returns the digest in lower-case hex, the form of a keys-file line.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// ID returns a short, non-secret name for the key: the first 12 hex digits of
// its digest. It is what logs and rate limits may name.
func (d Digest) ID() string { return d.String()[:12] }

// Generate returns a new random key and its digest.
func Generate() (string, Digest, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", Digest{}, fmt.Errorf("generate key: %w", err)
	}
	key := Prefix + base64.RawURLEncoding.EncodeToString(b[:])
	return key, Hash(key), nil
}

// WellFormed reports whether key may be set by hand: the syntax of a bearer
// token (RFC 6750 b64token), MinKeyLength to MaxKeyLength characters.
func WellFormed(key string) bool {
	return len(key) >= MinKeyLength && b64token(key)
}

// b64token reports whether key has the syntax of a bearer token (RFC 6750
// b64token) and at most MaxKeyLength characters.
func b64token(key string) bool {
	if len(key) > MaxKeyLength {
		return false
	}
	body := strings.TrimRight(key, "=")
	if body == "" {
		return false
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/':
		default:
			return false
		}
	}
	return true
}

// Set is an immutable set of key digests.
type Set struct {
	keys []Key
}

// Key is a key of a Set: its digest, and its ID, made once.
type Key struct {
	Digest Digest
	ID     string
}

// NewSet returns a set of the given digests.
func NewSet(digests ...Digest) *Set {
	s := &Set{keys: make([]Key, len(digests))}
	for i, d := range digests {
		s.keys[i] = Key{Digest: d, ID: d.ID()}
	}
	return s
}

// Len returns the number of keys in the set.
func (s *Set) Len() int { return len(s.keys) }

// Verify reports whether key belongs to the set, and its digest.
func (s *Set) Verify(key string) (Digest, bool) {
	k, ok := s.Lookup(key)
	if !ok {
		return Digest{}, false
	}
	return k.Digest, true
}

// Lookup returns the set's entry for key, if it has one. Every stored
// digest is compared, in constant time, whatever the outcome.
func (s *Set) Lookup(key string) (*Key, bool) {
	if len(key) < minPresented || !b64token(key) {
		return nil, false
	}
	d := Hash(key)
	match, at := 0, 0
	for i := range s.keys {
		eq := subtle.ConstantTimeCompare(d[:], s.keys[i].Digest[:])
		match |= eq
		at = subtle.ConstantTimeSelect(eq, i, at)
	}
	if match != 1 {
		return nil, false
	}
	return &s.keys[at], true
}

// ParseKeys returns the digests of a comma-separated list of keys, as given in
// PETSTORE_API_KEYS. Empty items are ignored.
func ParseKeys(list string) ([]Digest, error) {
	var out []Digest
	for i, key := range strings.Split(list, ",") {
		key = strings.TrimSpace(key)
		if key == "" {
			continue
		}
		if !WellFormed(key) {
			return nil, fmt.Errorf("API key %d: want %s", i+1, Syntax)
		}
		out = append(out, Hash(key))
	}
	return out, nil
}

// LineError is a keys file's line that is not a digest. It names the line,
// never its text, which may be a key pasted by mistake.
type LineError struct {
	Line   int
	Reason string
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// ParseDigests reads a keys file: one hex SHA-256 digest a line; blank lines
// and everything after a '#' are ignored.
func ParseDigests(r io.Reader) ([]Digest, error) {
	var out []Digest
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var d Digest
		if b, err := hex.DecodeString(line); err != nil || len(b) != len(d) {
			return nil, &LineError{Line: n, Reason: "want a SHA-256 digest in hex (64 characters)"}
		} else {
			copy(d[:], b)
		}
		out = append(out, d)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no digests")
	}
	return out, nil
}
