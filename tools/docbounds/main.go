// Command docbounds writes the figures the documents derive from the
// memory store's worst case (internal/memstore's WorstAt, computed from
// openapi.yaml's bounds through gen/shape) into the documents' marked
// blocks, `<!-- bounds:NAME -->…<!-- /bounds:NAME -->`, and the lists of
// the spec's operations into theirs, `<!-- spec:NAME -->…`. `make
// generate` runs it after gen/ is written, so a member or an operation
// added to the spec moves the documents with no hand edit; its test fails
// `make test` when a document and the spec disagree. -check only reports.
package main

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/gen/shape"
	"github.com/petstore/petstore/internal/contract"
	"github.com/petstore/petstore/internal/memstore"
	"github.com/petstore/petstore/internal/pets"
)

func main() {
	root := flag.String("root", ".", "the repository")
	check := flag.Bool("check", false, "only report the documents that disagree")
	flag.Parse()
	stale, err := update(*root, !*check)
	if err != nil {
		fmt.Fprintln(os.Stderr, "docbounds:", err)
		os.Exit(1)
	}
	if *check && len(stale) > 0 {
		fmt.Fprintf(os.Stderr, "docbounds: %s disagree with the computed bounds: run make generate\n", strings.Join(stale, ", "))
		os.Exit(1)
	}
}

// update writes the blocks of every document (when write is set) and
// returns the documents whose blocks were not what they should be.
func update(root string, write bool) (stale []string, err error) {
	w := memstore.WorstAt(memstore.DefaultMaxPets, memstore.DefaultMaxKeys)
	ops, err := operations()
	if err != nil {
		return nil, err
	}
	for file, blocks := range documents(w, ops) {
		path := filepath.Join(root, file)
		old, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		doc := old
		for name, text := range blocks {
			if doc, err = replace(doc, name, text); err != nil {
				return nil, fmt.Errorf("%s: %w", file, err)
			}
		}
		if bytes.Equal(doc, old) {
			continue
		}
		stale = append(stale, file)
		if write {
			if err := os.WriteFile(path, doc, 0o644); err != nil {
				return nil, err
			}
		}
	}
	return stale, nil
}

// replace puts text between the markers of the block name ("bounds:NAME"
// or "spec:NAME").
func replace(doc []byte, name, text string) ([]byte, error) {
	re := regexp.MustCompile(`(?s)(<!-- ` + regexp.QuoteMeta(name) + ` -->)(.*?)(<!-- /` + regexp.QuoteMeta(name) + ` -->)`)
	m := re.FindSubmatchIndex(doc)
	if m == nil {
		return nil, fmt.Errorf("no block %s", name)
	}
	out := append([]byte(nil), doc[:m[3]]...)
	out = append(out, text...)
	return append(out, doc[m[5]:]...), nil
}

// documents are the blocks of each document, by file and marker name.
func documents(w memstore.Worst, ops []op) map[string]map[string]string {
	var list, ids []string
	for _, o := range ops {
		about := "`" + o.id + "`"
		if o.deprecated {
			about += ", deprecated"
		}
		list = append(list, fmt.Sprintf("`%s %s` (%s)", o.method, o.path, about))
		ids = append(ids, "`"+o.id+"`")
	}
	return map[string]map[string]string{
		"docs/operating.md": {"bounds:operating": "\n" + operating(w) + "\n", "spec:operation-ids": strings.Join(ids, ", ")},
		"docs/deploying.md": {"bounds:deploying": deploying(w)},
		"docs/contract.md":  {"spec:operations": strings.Join(list, ", ")},
	}
}

// op is an operation of the spec, its path under the base path.
type op struct {
	id, method, path string
	deprecated       bool
}

// operations are the embedded spec's operations, by path, then method.
func operations() ([]op, error) {
	spec, err := gen.GetSpec()
	if err != nil {
		return nil, err
	}
	base, err := contract.BasePath(spec)
	if err != nil {
		return nil, err
	}
	var out []op
	for _, path := range spec.Paths.InMatchingOrder() {
		for method, o := range spec.Paths.Value(path).Operations() {
			out = append(out, op{id: o.OperationID, method: method, path: base + path, deprecated: o.Deprecated})
		}
	}
	slices.SortFunc(out, func(a, b op) int { return cmp.Or(strings.Compare(a.path, b.path), strings.Compare(a.method, b.method)) })
	return out, nil
}

// operating is the paragraph of docs/operating.md's Bounds.
func operating(w memstore.Worst) string {
	if !w.Bounded {
		return wrap(fmt.Sprintf("The worst case follows from openapi.yaml's bounds, and one is missing: "+
			"`%s` (a JSON pointer into `NewPet`), so a stored pet is bounded only by the 1 MiB request body, "+
			"and no size of the memory store is safe. Bound the member in openapi.yaml, or run on PostgreSQL. "+
			"A kept outcome takes at most %s bytes of heap (a key of %d characters).",
			shape.Unbounded, num(w.OutcomeBytes), pets.MaxKeyLength))
	}
	members := "the pet has no other members"
	if shape.MaxExtraBytes > 0 {
		members = fmt.Sprintf("and its other members (%s) up to %s bytes of canonical JSON", names(shape.ExtraMembers), num(shape.MaxExtraBytes))
	}
	return wrap(fmt.Sprintf("The worst case follows from openapi.yaml's bounds (computed by `internal/memstore`, "+
		"written here by `make generate`): a stored pet takes at most %s bytes of heap (its name up to %d characters "+
		"of up to 4 bytes, %s), a kept outcome %s (a key of %d characters). At the default bounds the store "+
		"holds at most %s MiB of heap, and the server is expected to peak at about %s MiB resident: the heap and "+
		"as much again, the garbage collector's headroom. `make bench-bounds` fills the real binary with the "+
		"largest pets and keys the contract allows and fails above %s MiB. Give its container %s MiB (with the "+
		"%d MiB slow clients may hold, see Connections below), or set `GOMEMLIMIT` below its limit.",
		num(w.PetBytes), shape.MaxNameLength, members, num(w.OutcomeBytes), pets.MaxKeyLength,
		num((w.HeapBytes+1<<20-1)>>20), num(w.PeakMiB), num(w.BoundMiB), num(w.ContainerMiB), 80))
}

// deploying is the clause of docs/deploying.md's environment.
func deploying(w memstore.Worst) string {
	if !w.Bounded {
		return "no size is safe for a full memory store while openapi.yaml leaves a member of a pet unbounded"
	}
	return fmt.Sprintf("at the defaults a full memory store peaks at about %s MiB and slow clients at the connection "+
		"bound may add 80 MiB, so give an in-memory replica's container %s MiB", num(w.PeakMiB), num(w.ContainerMiB))
}

// names lists members as code.
func names(ms []string) string {
	q := make([]string, len(ms))
	for i, m := range ms {
		q[i] = "`" + m + "`"
	}
	return strings.Join(q, ", ")
}

// num writes n with a space between thousands from 10 000 on, as the
// documents do.
func num(n int) string {
	s := strconv.Itoa(n)
	if n < 10000 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// wrap breaks text into lines of at most 76 characters.
func wrap(text string) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len(line)+1+len(word) > 76 {
			lines = append(lines, line)
			line = word
			continue
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return strings.Join(append(lines, line), "\n")
}
