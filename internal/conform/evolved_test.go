package conform_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/conform"
	"github.com/petstore/petstore/internal/contract"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/schemagen/schematest"
	"github.com/petstore/petstore/internal/strict"
	"github.com/petstore/petstore/internal/value"
)

// keeping is the reference app as the server of a spec evolved with
// members it does not know (schematest.Evolve) behaves once every member of
// NewPet flows through it: a create's members the app does not know are
// validated against the evolved NewPet (an invalid one is refused 400, as
// the app refuses), kept by pet, their defaults applied, and shown by every
// answer that shows the pet (the 201 and its replays, getPet, every page);
// a key's request is its every member (the same key with one of them
// changed is refused 422, as the app refuses its own). A defect may be
// planted (the kinds below).
type keeping struct {
	app    http.Handler
	base   string
	known  map[string]bool  // the app's NewPet's members
	newPet *openapi3.Schema // the evolved NewPet
	defect string

	mu    sync.Mutex
	extra map[int64]map[string]any // by pet: the members the app does not know
	keys  map[string]string        // by API key and Idempotency-Key: the first create's such members, canonical
}

// The defects keeping may plant.
const (
	dropsTags      = "drops tags"              // the store forgets one member it does not know
	keyIgnoresThem = "key ignores new members" // the fingerprint leaves them out
	sortsArrays    = "sorts arrays"            // the store sorts an array member
	pagesAlter     = "pages alter a member"    // a page shows a nested member altered
	noDefaults     = "no defaults"             // a member left out does not take its default
	rivalMember    = "a member of its own"     // every pet answered with a member NewPet does not have: no defect where Pet is open
)

func newKeeping(t *testing.T, spec *openapi3.T, defect string) *keeping {
	t.Helper()
	app, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	base, err := contract.BasePath(spec)
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for name := range app.Components.Schemas["NewPet"].Value.Properties {
		known[name] = true
	}
	return &keeping{base: base, known: known, newPet: spec.Components.Schemas["NewPet"].Value, defect: defect,
		extra: map[int64]map[string]any{}, keys: map[string]string{}}
}

func (k *keeping) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, isPets := strings.CutPrefix(r.URL.EscapedPath(), k.base+"/pets")
	one := strings.HasPrefix(rest, "/") && !strings.Contains(rest[1:], "/")
	switch {
	case isPets && rest == "" && r.Method == http.MethodPost:
		k.create(w, r)
	case isPets && (rest == "" || one) && r.Method == http.MethodGet:
		rec := httptest.NewRecorder()
		k.app.ServeHTTP(rec, r)
		k.show(rec, rest == "")
		copyResponse(w, rec)
	default:
		k.app.ServeHTTP(w, r)
	}
}

// lazyBody hands the app the body as transform makes it, reading the
// request's own only when the app reads: a request refused before its body
// is read stays so.
type lazyBody struct {
	r         io.ReadCloser
	transform func([]byte) []byte
	out       *bytes.Reader
}

func (l *lazyBody) Read(p []byte) (int, error) {
	if l.out == nil {
		b, err := io.ReadAll(l.r)
		if err != nil {
			return 0, err
		}
		l.out = bytes.NewReader(l.transform(b))
	}
	return l.out.Read(p)
}

func (l *lazyBody) Close() error { return l.r.Close() }

func (k *keeping) create(w http.ResponseWriter, r *http.Request) {
	key := ""
	if ks := r.Header.Values("Idempotency-Key"); len(ks) == 1 {
		key = r.Header.Get("Authorization") + "\x00" + strings.Trim(ks[0], `"`)
	}
	var kept map[string]any
	r2 := r.Clone(r.Context())
	r2.Body = &lazyBody{r: r.Body, transform: func(b []byte) []byte {
		var out []byte
		kept, out = k.split(b, key)
		return out
	}}
	rec := httptest.NewRecorder()
	k.app.ServeHTTP(rec, r2)
	if rec.Code == http.StatusCreated && kept != nil {
		var pet struct{ ID int64 }
		json.Unmarshal(rec.Body.Bytes(), &pet)
		k.mu.Lock()
		if rec.Header().Get("Idempotent-Replayed") == "" {
			k.extra[pet.ID] = kept
		}
		if _, ok := k.keys[key]; key != "" && !ok {
			k.keys[key] = canonical(kept)
		}
		k.mu.Unlock()
	}
	k.show(rec, false)
	copyResponse(w, rec)
}

// split takes out of a create's body the members the app does not know,
// their defaults applied, and returns them and the body for the app: the
// same bytes when it had none; with a member the app refuses when one is
// invalid; with another categoryId (which the app refuses 422) when its key
// was used with other such members.
func (k *keeping) split(b []byte, key string) (map[string]any, []byte) {
	v, err := strict.DecodeJSON(b)
	body, ok := v.(map[string]any)
	if err != nil || !ok {
		return nil, b
	}
	kept := map[string]any{}
	sent := false
	normal, err := value.Normalize(value.Copy(body), k.newPet)
	if err != nil { // a value the contract's rules refuse (an integer 1.0, a float past float32)
		body["conformInvalid"] = true
		return nil, mustMarshal(body)
	}
	for name := range body {
		if _, kept := normal.(map[string]any)[name]; !kept && !k.known[name] && k.newPet.Properties[name] != nil {
			delete(body, name) // null of an optional member without a default: left out
			sent = true
		}
	}
	for name, m := range normal.(map[string]any) {
		prop := k.newPet.Properties[name]
		if k.known[name] || prop == nil {
			continue
		}
		if _, given := body[name]; given {
			sent = true
			if prop.Value.VisitJSON(m) != nil {
				body["conformInvalid"] = true
				return nil, mustMarshal(body)
			}
			delete(body, name)
		} else if k.defect == noDefaults {
			continue
		}
		kept[name] = m
	}
	k.mu.Lock()
	first, used := k.keys[key]
	k.mu.Unlock()
	if key != "" && used && first != canonical(kept) && k.defect != keyIgnoresThem {
		if body["categoryId"] == json.Number("1") {
			body["categoryId"] = json.Number("2")
		} else {
			body["categoryId"] = json.Number("1")
		}
		return kept, mustMarshal(body)
	}
	if !sent {
		return kept, b
	}
	return kept, mustMarshal(body)
}

// alter plants the answer's defects in a pet, in the members Evolve made
// up (schematest.Name).
func (k *keeping) alter(pet map[string]any, page bool) {
	tags, size := schematest.Name("tags"), schematest.Name("size")
	switch k.defect {
	case dropsTags:
		delete(pet, tags)
	case sortsArrays:
		if arr, ok := pet[tags].([]any); ok {
			arr = slices.Clone(arr)
			slices.SortFunc(arr, func(a, b any) int { return strings.Compare(canonical(a), canonical(b)) })
			pet[tags] = arr
		}
	case pagesAlter:
		if obj, ok := pet[size].(map[string]any); ok && page {
			altered := maps.Clone(obj)
			altered["height"] = json.Number("1001")
			pet[size] = altered
		}
	case rivalMember:
		pet["rivalNote"] = "a member of this implementation's own"
	}
}

// show adds to the pets of rec's body, a 2xx, the members kept for them.
func (k *keeping) show(rec *httptest.ResponseRecorder, page bool) {
	if rec.Code/100 != 2 {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return
	}
	pets, _ := v.([]any)
	if obj, ok := v.(map[string]any); ok {
		pets = []any{obj}
	}
	k.mu.Lock()
	for _, p := range pets {
		pet, _ := p.(map[string]any)
		id, _ := pet["id"].(json.Number).Int64()
		for name, m := range k.extra[id] {
			pet[name] = m
		}
		k.alter(pet, page)
	}
	k.mu.Unlock()
	b := mustMarshal(v)
	rec.Body.Reset()
	rec.Body.Write(b)
	rec.Header().Set("Content-Length", strconv.Itoa(len(b)))
}

func canonical(v any) string { return value.NormalText(v) }

// The kit takes its values from the spec it is given: on openapi.yaml
// evolved with an array of strings, an object of two scalars, a string with
// a pattern, a date, a number and a boolean with a default, against a
// server that keeps every member, it sends every member at its bounds,
// refuses to see one altered, and holds the key to every member; a member
// of a rival's own where the response is open passes; each defect a server
// of such a spec may have fails the check that names it.
func TestEvolvedSpec(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		defect string
		fails  string
	}{
		{"", ""},
		{rivalMember, ""},
		{dropsTags, "stored_as_sent"},
		{keyIgnoresThem, "idempotent_replay"},
		{sortsArrays, "stored_as_sent"},
		{pagesAlter, "stored_as_sent"},
		{noDefaults, "default_status"},
	} {
		t.Run(cmp(tc.defect, "none"), func(t *testing.T) {
			t.Parallel()
			spec, err := schematest.Evolved()
			if err != nil {
				t.Fatal(err)
			}
			if tc.defect == rivalMember { // response objects open (decision 3): a member of its own is allowed
				spec.Components.Schemas["Pet"].Value.AdditionalProperties = openapi3.AdditionalProperties{}
			}
			k := newKeeping(t, spec, tc.defect)
			cfg := kitConfig(serveSpec(t, spec, func(app http.Handler) http.Handler { k.app = app; return k }))
			cfg.MaxRequests = evolvedBudget // more members, more cases: past the default budget on a tree the drill evolved
			cfg.Spec = spec
			if tc.fails == "" {
				passes(t, cfg, "a server that keeps every member ("+cmp(tc.defect, "nothing else")+")")
				return
			}
			if rep, text := runKit(t, cfg); !rep.Failed(tc.fails) {
				t.Fatalf("%s: %s passes:\n%s", tc.defect, tc.fails, text)
			}
		})
	}
}

func cmp(s, or string) string {
	if s == "" {
		return or
	}
	return s
}

// The reference app serving openapi.yaml evolved (httpapi.Config.Spec: a
// member of NewPet without behaviour needs no Go) passes the kit on that
// spec, every member sent at its bounds and held to the key.
func TestRealAppEvolved(t *testing.T) {
	t.Parallel()
	spec, err := schematest.Evolved()
	if err != nil {
		t.Fatal(err)
	}
	cfg := kitConfig(serveApp(t, httpapi.Config{Spec: spec}, spec, func(h http.Handler) http.Handler { return h }))
	cfg.MaxRequests = evolvedBudget // more members, more cases: past the default budget on a tree the drill evolved
	cfg.Spec = spec
	passes(t, cfg, "the reference app on the evolved spec")
}

// runKit runs the kit with cfg, and returns its report and the report's
// text.
func runKit(t *testing.T, cfg conform.Config) (*conform.Report, string) {
	t.Helper()
	rep, err := conform.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	rep.WriteText(&b)
	return rep, b.String()
}

// passes runs the kit with cfg: target, what it is, must pass it whole.
func passes(t *testing.T, cfg conform.Config, target string) *conform.Report {
	t.Helper()
	rep, text := runKit(t, cfg)
	if rep.Verdict() != conform.Pass {
		t.Fatalf("%s does not pass the kit (seed %d): %s\n%s", target, cfg.Seed, rep.Verdict(), text)
	}
	return rep
}

// evolvedBudget is the request budget of a run on a spec these tests
// evolve: today's spec takes about 960 requests, and each member adds its
// cases, so a tree that has a dozen members more (the drill's) goes past
// the default 2000, and the run is incomplete (budget).
const evolvedBudget = 4 * conform.DefaultMaxRequests
