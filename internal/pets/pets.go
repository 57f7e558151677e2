// Package pets is the domain of the Pet Store: the animals, their status, the
// list query and the Store every storage implementation provides. It knows
// nothing of HTTP or SQL.
package pets

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/petstore/petstore/gen/shape"
	"github.com/petstore/petstore/internal/value/canon"
)

// Status is the availability of a pet: one of openapi.yaml's PetStatus.
type Status string

// Statuses lists every valid Status, in the spec's order (gen/shape, which
// make generate writes: a value added to the spec needs no edit here).
var Statuses = func() (out [len(shape.PetStatuses)]Status) {
	for i, s := range shape.PetStatuses {
		out[i] = Status(s)
	}
	return out
}()

// The statuses named in code (the default) and in tests, from the
// generated table: a value the spec drops stops the build where it is
// named.
const (
	Available = Status(shape.PetStatusAvailable)
	Pending   = Status(shape.PetStatusPending)
	Sold      = Status(shape.PetStatusSold)
	// DefaultStatus is a new pet's status when it has none.
	DefaultStatus = Status(shape.DefaultStatus)
)

// Valid reports whether s is one of the defined statuses.
func (s Status) Valid() bool {
	return slices.Contains(Statuses[:], s)
}

// Limits of the domain, from openapi.yaml (gen/shape).
const (
	MaxNameLength = shape.MaxNameLength // characters (runes), not bytes
	DefaultLimit  = shape.DefaultLimit
	MaxLimit      = shape.MaxLimit
	// MaxKeyLength is the longest Idempotency-Key, in characters: the
	// rule openapi.yaml's pattern for it writes.
	MaxKeyLength = 255
)

// Pet is an animal in the catalogue. It is comparable: Extra holds every
// member without behaviour of its own as one string.
type Pet struct {
	ID         int64
	Name       string
	CategoryID int64
	Status     Status
	Extra      Extra
}

// NewPet is an animal to add; the store assigns its ID.
type NewPet struct {
	Name       string
	CategoryID int64
	Status     Status // empty means DefaultStatus
	Extra      Extra
	// Plain is Extra with every member at its schema default left out, at
	// every depth (package value's Plain), "{}" when that leaves none: what
	// Fingerprint hashes in Extra's place. Only the HTTP layer, which maps
	// a request by the spec's schema (package newpet), knows the defaults;
	// "" stands for Extra itself (a NewPet made otherwise, whose defaults
	// nobody said).
	Plain Extra
}

// Extra is the members of a pet that have no behaviour of their own: every
// member of openapi.yaml's NewPet but name, categoryId and status, with
// their schema defaults applied at every depth, as one JSON object in the
// canonical form of its schema (package value: members sorted, strings
// minimally escaped, numbers exact, a float as its float32, a date-time in
// UTC), or "" when there are none. The domain and the stores keep it as
// it is, byte for byte; the HTTP layer makes it from the request body and
// splices it into every answer, so a member added to the spec needs no Go.
type Extra string

// typedMembers are the members of a pet that have fields of their own, and
// so must not be in its Extra.
var typedMembers = []string{"categoryId", "id", "name", "status"}

// WithID is the pet n becomes when stored with id.
func (n NewPet) WithID(id int64) Pet {
	return Pet{ID: id, Name: n.Name, CategoryID: n.CategoryID, Status: n.Status, Extra: n.Extra}
}

// Normalize returns n with its defaults applied, or an error naming the first
// field that breaks a rule of the domain. Stores accept only normalized pets.
func (n NewPet) Normalize() (NewPet, error) {
	if n.Status == "" {
		n.Status = DefaultStatus
	}
	if n.Extra == "{}" {
		n.Extra = ""
	}
	if n.Extra == "" {
		n.Plain = ""
	}
	switch {
	case !validNameLength(n.Name):
		return n, &ValidationError{Field: "name", Reason: nameLengthRule}
	case !validNameText(n.Name):
		return n, &ValidationError{Field: "name", Reason: nameTextRule}
	case n.CategoryID < 1:
		return n, &ValidationError{Field: "categoryId", Reason: "must be at least 1"}
	case !n.Status.Valid():
		return n, &ValidationError{Field: "status", Reason: statusRule}
	}
	if err := checkExtra(n.Extra); err != nil {
		return n, err
	}
	if n.Plain != "{}" {
		return n, checkExtra(n.Plain)
	}
	return n, nil
}

// statusRule is the rule on a status, in the spec's values.
var statusRule = func() string {
	quoted := make([]string, len(Statuses))
	for i, s := range Statuses {
		quoted[i] = strconv.Quote(string(s))
	}
	return "must be one of " + strings.Join(quoted, ", ")
}()

// checkExtra refuses an Extra that is not one object in canonical form, or
// that holds a member with a field of its own.
func checkExtra(e Extra) error {
	if e == "" {
		return nil
	}
	if err := canon.Object(string(e)); err != nil {
		return &ValidationError{Field: "extra", Reason: err.Error()}
	}
	for _, name := range canon.Names(string(e)) {
		if slices.Contains(typedMembers, name) {
			return &ValidationError{Field: "extra", Reason: "holds " + name + ", a member with a field of its own"}
		}
	}
	return nil
}

func validNameLength(s string) bool {
	n := utf8.RuneCountInString(s)
	return utf8.ValidString(s) && n >= shape.MinNameLength && n <= MaxNameLength
}

// nameLengthRule is the rule on a name's length, in the spec's bounds.
var nameLengthRule = fmt.Sprintf("must be %d to %d characters of valid UTF-8", shape.MinNameLength, MaxNameLength)

// nameTextRule is the rule on a name's characters, in the words of
// openapi.yaml's PetName (x-pattern-message), whose pattern says the same.
const nameTextRule = "must not contain control characters or explicit bidirectional formatting characters, and must not be only white space"

// validNameText reports whether s keeps nameTextRule: no control character
// (Unicode category Cc: C0, DEL and C1), no explicit bidirectional override,
// embedding or isolate (U+202A-U+202E, U+2066-U+2069: the characters behind
// display spoofing), and not only Unicode White_Space. The implicit marks
// (U+200E, U+200F, U+061C) and the zero-width joiner are allowed: names in
// right-to-left scripts and emoji sequences need them.
func validNameText(s string) bool {
	blank := true
	for _, r := range s {
		if unicode.Is(unicode.Cc, r) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return false
		}
		if !unicode.Is(unicode.White_Space, r) {
			blank = false
		}
	}
	return !blank
}

// Query selects a page of pets: those with ID greater than After, with the
// given Status when it is not empty, in ascending ID order, at most Limit.
type Query struct {
	After  int64
	Status Status
	Limit  int
}

// Check reports an error naming the first parameter of q that is out of range.
func (q Query) Check() error {
	switch {
	case q.Limit < 1 || q.Limit > MaxLimit:
		return &ValidationError{Field: "limit", Reason: fmt.Sprintf("must be between 1 and %d", MaxLimit)}
	case q.After < 0:
		return &ValidationError{Field: "after", Reason: "must be at least 0"}
	case q.Status != "" && !q.Status.Valid():
		return &ValidationError{Field: "status", Reason: statusRule}
	}
	return nil
}

// Page is the answer to a Query. More is true when pets after the last one of
// the page matched the query at the time it ran.
type Page struct {
	Pets []Pet
	More bool
}

// Store keeps the catalogue. Implementations are safe for concurrent use and
// assign IDs that are unique and increase in creation order.
type Store interface {
	// Create stores a normalized NewPet and returns it with its ID. A store
	// that bounds its pets returns ErrFull at the bound.
	Create(ctx context.Context, n NewPet) (Pet, error)
	// Get returns the pet with the given ID, or an error wrapping ErrNotFound.
	Get(ctx context.Context, id int64) (Pet, error)
	// List returns the page of pets that q selects.
	List(ctx context.Context, q Query) (Page, error)
	// CreateOnce is Create for a request a client may retry: the first call
	// with k stores n and records k with n's Fingerprint and the pet's ID,
	// atomically, for k.TTL. A later call with k and the same fingerprint
	// returns that pet and replayed true, storing nothing. It returns an
	// error wrapping ErrKeyReused when k was recorded with another
	// fingerprint, and ErrKeyInFlight while another call with k is running,
	// unless it waits for that call and replays it. Keys of different
	// owners never meet. A store that bounds its pets or its outcomes
	// returns ErrFull or a *KeysFullError for a new k at the bound; a
	// recorded k is answered as ever, replay included.
	CreateOnce(ctx context.Context, n NewPet, k IdempotencyKey) (p Pet, replayed bool, err error)
}

// IdempotencyKey names a create that a client may retry.
type IdempotencyKey struct {
	Owner string        // who sent it: the API key's digest in hex (its 12-digit ID could be shared)
	Key   string        // the client's Idempotency-Key
	TTL   time.Duration // how long the outcome is kept; positive
}

// Fingerprint is the SHA-256 of a normalized NewPet: two requests are the
// same when they describe the same pet, whatever their JSON looked like.
// What is hashed is the canonical JSON of the whole NewPet, every member
// (AppendCanonical), but for two things that keep outcomes kept before an
// upgrade replaying after it. Of the members in Extra, those at their
// schema defaults, at any depth, are left out (Plain): a member at its
// default is what a request without it means, so leaving it out tells no
// two requests apart, and a default added to the spec later, at any depth,
// leaves older requests' fingerprints as they were. A pet with no other
// member left hashes as before pets had other members (1.2.0): its name,
// categoryId in base 10 and status, separated by NUL bytes. The two forms
// never meet: canonical JSON holds no raw control character, so never a
// NUL byte, and the older form always holds two.
func (n NewPet) Fingerprint() [sha256.Size]byte {
	switch n.Plain {
	case "{}":
		n.Extra = ""
	case "":
	default:
		n.Extra = n.Plain
	}
	if n.Extra == "" {
		b := make([]byte, 0, len(n.Name)+40)
		b = append(b, n.Name...)
		b = append(b, 0)
		b = strconv.AppendInt(b, n.CategoryID, 10)
		b = append(b, 0)
		b = append(b, n.Status...)
		return sha256.Sum256(b)
	}
	return sha256.Sum256(n.AppendCanonical(make([]byte, 0, 64+len(n.Name)+len(n.Extra))))
}

// AppendCanonical appends n as one JSON object in canonical form: its
// typed members and its Extra's, in canonical order.
func (n NewPet) AppendCanonical(b []byte) []byte {
	m := canon.MembersOf(string(n.Extra))
	b = append(b, '{')
	b = m.AppendBefore(b, "categoryId")
	b = append(b, `"categoryId":`...)
	b = strconv.AppendInt(b, n.CategoryID, 10)
	b = append(b, ',')
	b = m.AppendBefore(b, "name")
	b = append(b, `"name":`...)
	b = canon.AppendString(b, n.Name)
	b = append(b, ',')
	b = m.AppendBefore(b, "status")
	b = append(b, `"status":`...)
	b = canon.AppendString(b, string(n.Status))
	b = append(b, ',')
	b = m.AppendRest(b)
	b[len(b)-1] = '}'
	return b
}

// Errors stores return, wrapped with context.
var (
	// ErrNotFound means no pet has the requested ID.
	ErrNotFound = errors.New("pet not found")
	// ErrUnavailable means the store cannot be reached. Nothing was written,
	// unless the error also wraps ErrOutcomeUnknown.
	ErrUnavailable = errors.New("store unavailable")
	// ErrOutcomeUnknown, always with ErrUnavailable, means a create was sent
	// but its answer was lost: the pet may or may not have been stored.
	ErrOutcomeUnknown = errors.New("outcome unknown: the create may have been stored")
	// ErrKeyInFlight means a create with the same idempotency key is running.
	ErrKeyInFlight = errors.New("idempotency key in flight")
	// ErrKeyReused means the idempotency key was recorded for another request.
	ErrKeyReused = errors.New("idempotency key reused for another request")
	// ErrFull means the store holds as many pets as it may: the create
	// wrote nothing.
	ErrFull = errors.New("store full: it holds as many pets as it may")
	// ErrKeysFull means the store keeps as many idempotency outcomes as it
	// may, all within their TTL: a create with a new key wrote nothing. A
	// *KeysFullError carries it.
	ErrKeysFull = errors.New("idempotency keys full: the store keeps as many outcomes as it may")
	// ErrPanic means the store's code panicked while it worked for the
	// call and recovered: a fault of the server, which the store reports
	// to each caller it affected, with the other errors that say what
	// may have been written.
	ErrPanic = errors.New("the store recovered from a panic")
)

// KeysFullError is ErrKeysFull with the time until the first outcome kept
// expires, making room for one.
type KeysFullError struct {
	Wait time.Duration
}

func (e *KeysFullError) Error() string {
	return fmt.Sprintf("%v; the first expires in %v", ErrKeysFull, e.Wait.Round(time.Second))
}

// Is makes errors.Is(err, ErrKeysFull) hold.
func (e *KeysFullError) Is(target error) bool { return target == ErrKeysFull }

// ValidationError names a field or parameter that breaks a rule of the domain.
type ValidationError struct {
	Field  string
	Reason string
}

func (e *ValidationError) Error() string {
	return e.Field + ": " + e.Reason
}
