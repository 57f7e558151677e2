// Command shapegen writes gen/shape: the facts of openapi.yaml that the
// code needs beyond what oapi-codegen generates, in a package that imports
// nothing, so that the domain and the stores read them (they must not
// import gen, which drags Echo in). `make generate` runs it
// (gen/generate.go); `make check-generate` compares its output.
//
// The facts: PetStatus's values, NewPet's default status, PetName's
// bounds, listPets' limit, and the most
// bytes a pet's members take where the memory store keeps them (the name
// as UTF-8, the members without behaviour as canonical JSON). A spec that
// leaves a member unbounded is refused, each such member named with the
// bound to add, and nothing is written.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/value"
)

func main() {
	in := flag.String("in", "openapi.yaml", "the spec")
	out := flag.String("out", "shape/shape.go", "the Go file to write")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "shapegen:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	doc, err := openapi3.NewLoader().LoadFromFile(in)
	if err != nil {
		return err
	}
	f, err := factsOf(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if len(f.unbounds) > 0 {
		return fmt.Errorf("%s: %w", in, unboundedError(f.unbounds))
	}
	src, err := render(f)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}

// typed are the members of NewPet that internal/pets types, each for a
// behaviour of its own: every other member is kept as canonical JSON.
var typed = map[string]bool{"name": true, "categoryId": true, "status": true}

// facts are what shape.go says.
type facts struct {
	Statuses           []status
	DefaultStatus      string
	MinName, MaxName   int
	DefaultLimit       int
	MinLimit, MaxLimit int
	MaxKey             int
	MaxNameBytes       int
	Extra              []string // NewPet's members kept as canonical JSON
	MaxExtraBytes      int      // -1: unbounded
	Unbounded          string   // the first place unbounded, when MaxExtraBytes is -1
	unbounds           []unbound
}

type status struct{ Const, Value string }

func factsOf(doc *openapi3.T) (*facts, error) {
	schemas := doc.Components.Schemas
	var f facts
	var errs []error
	need := func(what string, ok bool) {
		if !ok {
			errs = append(errs, fmt.Errorf("%s: missing", what))
		}
	}
	ps := schemas["PetStatus"]
	need("components.schemas.PetStatus.enum", ps != nil && len(ps.Value.Enum) > 0)
	if ps != nil {
		for _, v := range ps.Value.Enum {
			s, ok := v.(string)
			need("a string value of PetStatus", ok)
			f.Statuses = append(f.Statuses, status{"PetStatus" + goName(s), s})
		}
	}
	np := schemas["NewPet"]
	need("components.schemas.NewPet", np != nil)
	if np == nil {
		return nil, errors.Join(errs...)
	}
	props := np.Value.Properties
	for _, m := range []string{"name", "categoryId", "status"} {
		need("NewPet.properties."+m, props[m] != nil)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	d, _ := value.Default(props["status"].Value)
	def, _ := d.(string)
	f.DefaultStatus = def
	need("NewPet.properties.status.default", def != "")
	name := props["name"].Value
	need("NewPet.properties.name.maxLength", name.MaxLength != nil)
	if name.MaxLength != nil {
		f.MinName, f.MaxName = int(name.MinLength), int(*name.MaxLength)
		f.MaxNameBytes = f.MaxName * utf8Max
	}
	limit := parameter(doc, "Limit")
	var limitDefault int
	if limit != nil {
		d, _ := value.Default(limit)
		limitDefault, _ = strconv.Atoi(value.NormalText(d))
	}
	need("components.parameters.Limit (default, minimum, maximum)", limit != nil && limitDefault != 0 && limit.Min != nil && limit.Max != nil)
	if limit != nil && limitDefault != 0 && limit.Min != nil && limit.Max != nil {
		f.DefaultLimit, f.MinLimit, f.MaxLimit = limitDefault, int(*limit.Min), int(*limit.Max)
	}
	f.MaxExtraBytes, f.unbounds = extraBytes(np.Value, &f.Extra)
	if len(f.unbounds) > 0 {
		f.Unbounded = f.unbounds[0].String()
	}
	return &f, errors.Join(errs...)
}

// unboundedError says every place of NewPet the schema leaves unbounded,
// each with its member's name and the bound to add, in one message: a pet
// must have a most bytes, which the memory store's bounds and the
// documents' figures are made of.
func unboundedError(us []unbound) error {
	var lines []string
	members := map[string]bool{}
	for _, u := range us {
		member, _, _ := strings.Cut(strings.TrimPrefix(u.at, "/"), "/")
		where := ""
		switch {
		case member == "":
			member = "NewPet"
		case u.at != "/"+member:
			where = " at " + u.at
		}
		members[member] = true
		lines = append(lines, fmt.Sprintf("\n  %s%s: %s; fix: %s", member, where, u.lacks, u.fix))
	}
	what := fmt.Sprintf("%d members", len(members))
	if len(members) == 1 {
		what = "a member"
	}
	return fmt.Errorf("NewPet leaves %s of a pet unbounded, and the memory store's bounds need the most bytes a pet takes "+
		"(docs/operating.md#bounds); bound each in the spec, then make generate again:%s",
		what, strings.Join(lines, ""))
}

// parameter is the schema of components.parameters[name], or nil.
func parameter(doc *openapi3.T, name string) *openapi3.Schema {
	p := doc.Components.Parameters[name]
	if p == nil || p.Value == nil || p.Value.Schema == nil {
		return nil
	}
	return p.Value.Schema.Value
}

// goName makes an enum value a part of a Go name: "on-hold" is OnHold.
func goName(v string) string {
	var b strings.Builder
	up := true
	for _, r := range v {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			up = true
			continue
		}
		if up {
			r = unicode.ToUpper(r)
		}
		b.WriteRune(r)
		up = false
	}
	return b.String()
}

var tmpl = template.Must(template.New("shape").Parse(`// Code generated by tools/shapegen from openapi.yaml; DO NOT EDIT.

// Package shape holds the facts of openapi.yaml that the code needs beyond
// the generated server, for packages that must not import gen (it drags
// Echo in): the domain and the stores. make generate writes it.
package shape

// PetStatuses are the values of PetStatus, in the spec's order.
var PetStatuses = [...]string{ {{- range .Statuses}}{{printf "%q" .Value}}, {{end -}} }

// The values of PetStatus, by name.
const (
{{- range .Statuses}}
	{{.Const}} = {{printf "%q" .Value}}
{{- end}}
)

// DefaultStatus is NewPet's status when a create omits it.
const DefaultStatus = {{printf "%q" .DefaultStatus}}

// PetName's bounds, in characters.
const (
	MinNameLength = {{.MinName}}
	MaxNameLength = {{.MaxName}}
)

// listPets' limit: its default and its bounds.
const (
	DefaultLimit = {{.DefaultLimit}}
	MinLimit     = {{.MinLimit}}
	MaxLimit     = {{.MaxLimit}}
)

// ExtraMembers are the members of NewPet without behaviour of their own
// (all but name, categoryId and status), which the server keeps as one
// object of canonical JSON (internal/value).
var ExtraMembers = []string{ {{- range .Extra}}{{printf "%q" .}}, {{end -}} }

// The most bytes a pet's members take where the memory store keeps them:
// the name in UTF-8 (MaxNameLength characters of up to 4 bytes), and the
// members without behaviour in canonical JSON (each character of a string
// up to 6 bytes, as \u0000), 0 when there are none. MaxExtraBytes is -1
// when the schema leaves a member unbounded: Unbounded names the first
// such (a JSON pointer into NewPet, and what it lacks); only the request
// body's bound bounds it then.
const (
	MaxNameBytes  = {{.MaxNameBytes}}
	MaxExtraBytes = {{.MaxExtraBytes}}
	Unbounded     = {{printf "%q" .Unbounded}}
)
`))

func render(f *facts) ([]byte, error) {
	var b bytes.Buffer
	if err := tmpl.Execute(&b, f); err != nil {
		return nil, err
	}
	return format.Source(b.Bytes())
}
