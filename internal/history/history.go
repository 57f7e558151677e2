// Package history is the record of what clients did to the API, as JSON
// lines: every operation a client invoked, with when it was invoked and
// completed, where, what it sent and how it ended (ok, failed,
// indeterminate), and every fault a nemesis injected. The chaos run
// (cmd/petstore-chaos) writes one, and so does the conformance kit
// (petstore conform -history; kit.go); the checker (internal/check) judges
// either.
package history

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// The kinds of record.
const (
	Create = "create" // POST /pets, with or without Idempotency-Key
	Get    = "get"    // GET /pets/{id} of an acknowledged id
	Walk   = "walk"   // GET /pets from the start, following Link rel="next"
	Fault  = "fault"  // a fault the nemesis injected
)

// The outcomes of an operation.
const (
	// OK: the server answered, and the answer says what happened: 201 for
	// a create, 200 or 404 for a get, every page for a walk.
	OK = "ok"
	// Failed: a definite refusal; a create that failed wrote nothing (4xx,
	// a 503 that says so, a connection that was never made).
	Failed = "failed"
	// Indeterminate: no answer (a timeout, a dropped connection), or one
	// that says the create may have happened (503 "may have been created").
	Indeterminate = "indeterminate"
)

// Op is one line of the history. Times are nanoseconds since the run
// started (monotonic).
type Op struct {
	Kind     string `json:"kind"`
	Process  int    `json:"process,omitempty"` // the client that invoked it
	Invoke   int64  `json:"invoke"`
	Complete int64  `json:"complete"`
	Replica  string `json:"replica,omitempty"` // the replica asked; a walk's first
	Outcome  string `json:"outcome,omitempty"`
	Status   int    `json:"status,omitempty"` // HTTP status; 0 without an answer
	Code     string `json:"code,omitempty"`   // the Error body's code, of a non-2xx answer
	Error    string `json:"error,omitempty"`  // the error or the Error body's message
	// Violations are the ways the answer broke openapi.yaml (a body that
	// does not read, an undocumented status or header), as the client
	// that got it found them (internal/contract); a walk's are its pages'.
	Violations []string `json:"violations,omitempty"`

	// Create: the request; Attempt counts from 1 over the retries of a key.
	Key     string `json:"key,omitempty"`
	Body    *Body  `json:"body,omitempty"`
	Attempt int    `json:"attempt,omitempty"`
	// Create (201) and get (200): the answer; Replayed, a 201 that says it
	// replays an earlier request's (Idempotent-Replayed: true).
	Pet      *Pet `json:"pet,omitempty"`
	Replayed bool `json:"replayed,omitempty"`
	// Get: the id asked for.
	ID int64 `json:"id,omitempty"`

	// Walk: the status filter ("" for none), the page size, the ids
	// visited in order, and every request it made, in order.
	Filter string  `json:"filter,omitempty"`
	Limit  int     `json:"limit,omitempty"`
	IDs    []int64 `json:"ids,omitempty"`
	Pages  []Page  `json:"pages,omitempty"`
	// Walk: the pets it visited, as the pages showed them. A Writer keeps
	// only the versions (id and fields) that no earlier line recorded: a
	// pet seen again as it was is in IDs alone.
	Pets []Pet `json:"pets,omitempty"`

	// Requests and Answered count the HTTP requests an operation made
	// (a walk makes one a page, and retries a page) and those answered
	// 2xx or 4xx: the availability.
	Requests int `json:"requests,omitempty"`
	Answered int `json:"answered,omitempty"`

	// Fault: what and on what.
	Fault  string `json:"fault,omitempty"`
	Target string `json:"target,omitempty"`

	Kit // the kit's records (kit.go)
}

// Page is one request of a walk: the cursor it asked for (0: the first
// page), the replica asked, and the answer: its status, Error code and
// message, or, answered 200, the number of pets on the page (in the walk's
// IDs, in order) and the target of its Link rel="next" ("" for none).
type Page struct {
	After   int64  `json:"after,omitempty"`
	Replica string `json:"replica,omitempty"`
	Status  int    `json:"status,omitempty"`
	Code    string `json:"code,omitempty"`
	Error   string `json:"error,omitempty"`
	N       int    `json:"n,omitempty"`
	Next    string `json:"next,omitempty"`
}

// Writer appends ops to a JSON lines file; safe for concurrent use.
type Writer struct {
	mu    sync.Mutex
	f     io.Closer // nil: the caller's to close (NewWriter)
	w     *bufio.Writer
	start time.Time
	err   error
	seen  map[Pet]bool // the pet versions walks recorded
}

// CreateFile opens a new history at path; times are measured from start.
func CreateFile(path string, start time.Time) (*Writer, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &Writer{f: f, w: bufio.NewWriter(f), start: start, seen: map[Pet]bool{}}, nil
}

// NewWriter is a Writer to w, which the caller closes after Close; times
// are measured from start.
func NewWriter(w io.Writer, start time.Time) *Writer {
	return &Writer{w: bufio.NewWriter(w), start: start, seen: map[Pet]bool{}}
}

// Since is t in the history's time: nanoseconds since the start.
func (w *Writer) Since(t time.Time) int64 { return int64(t.Sub(w.start)) }

// Now is the history's time now.
func (w *Writer) Now() int64 { return w.Since(time.Now()) }

// Add appends op; of a walk's Pets, only those no earlier line recorded.
// A walk's pets are marked seen and its line written under one lock, so
// that the line recording a version comes before any line leaving it out;
// an op with no pets is marshaled outside it.
func (w *Writer) Add(op Op) {
	var b []byte
	var err error
	if len(op.Pets) == 0 {
		b, err = json.Marshal(op)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(op.Pets) > 0 {
		var novel []Pet
		for _, p := range op.Pets {
			if !w.seen[p] {
				w.seen[p] = true
				novel = append(novel, p)
			}
		}
		op.Pets = novel
		b, err = json.Marshal(op)
	}
	if err == nil {
		b = append(b, '\n')
		_, err = w.w.Write(b)
	}
	if w.err == nil {
		w.err = err
	}
}

// Close flushes and closes the file, and returns the first error.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.w.Flush(); w.err == nil {
		w.err = err
	}
	if w.f == nil {
		return w.err
	}
	if err := w.f.Close(); w.err == nil {
		w.err = err
	}
	return w.err
}

// Read returns every line of r as an Op.
func Read(r io.Reader) ([]Op, error) {
	return readLines[Op](r)
}

// ReadPets returns every line of r as a Pet: the final state of the store.
func ReadPets(r io.Reader) ([]Pet, error) {
	return readLines[Pet](r)
}

func readLines[T any](r io.Reader) ([]T, error) {
	var out []T
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 256<<20) // a walk's line lists every id
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// ReadFile is Read of the file at path.
func ReadFile(path string) ([]Op, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ops, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ops, nil
}

// ReadPetsFile is ReadPets of the file at path.
func ReadPetsFile(path string) ([]Pet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ps, err := ReadPets(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ps, nil
}

// WritePets writes ps as JSON lines to path.
func WritePets(path string, ps []Pet) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, p := range ps {
		if err := enc.Encode(p); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
