package check

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/history"
	"github.com/petstore/petstore/internal/schemagen/schematest"
)

// The members the crafted histories of TestMemberAnomalies send beside the
// typed ones, and the defaults they are audited under.
var (
	tagsXY  = schematest.Made(`{"size":{"height":3,"unit":"cm"},"tags":["x","y"]}`)
	petRest = schematest.Made(`{"size":{"height":3,"unit":"cm"},"tags":["x","y"],"vaccinated":false}`)
)

// evolvedNewPet is openapi.yaml's NewPet evolved (schematest.Evolve): its
// defaults are status's (available) and vaccinated's (false).
func evolvedNewPet(t *testing.T) *openapi3.Schema {
	t.Helper()
	spec, err := schematest.Evolved()
	if err != nil {
		t.Fatal(err)
	}
	return spec.Components.Schemas["NewPet"].Value
}

func petWith(id int64, name, status, rest string) history.Pet {
	return history.Pet{ID: id, Name: name, CategoryID: 1, Status: status, Rest: rest}
}

// withMembers is a history whose creates send members beside the typed
// ones, and leave defaults out: key k1 sends tags and a size but no status
// nor vaccinated, is acknowledged, then replayed; a keyless create sends
// vaccinated; a walk, a get and the final state show both pets as sent,
// defaults applied.
func withMembers() ([]history.Op, []history.Pet) {
	a := &history.Body{Name: "a", CategoryID: 1, Rest: tagsXY}
	b := &history.Body{Name: "b", CategoryID: 1, Status: "sold", Rest: schematest.Made(`{"vaccinated":true}`)}
	p1, p2 := petWith(1, "a", "available", petRest), petWith(2, "b", "sold", schematest.Made(`{"vaccinated":true}`))
	ops := []history.Op{
		{Kind: history.Create, Invoke: 10, Complete: 20, Key: "k1", Body: a, Attempt: 1, Outcome: history.OK, Status: 201, Pet: ptr(p1), Requests: 1, Answered: 1},
		{Kind: history.Create, Invoke: 21, Complete: 25, Key: "k1", Body: a, Attempt: 2, Outcome: history.OK, Status: 201, Pet: ptr(p1), Replayed: true, Requests: 1, Answered: 1},
		{Kind: history.Create, Invoke: 11, Complete: 22, Body: b, Outcome: history.OK, Status: 201, Pet: ptr(p2), Requests: 1, Answered: 1},
		{Kind: history.Walk, Invoke: 30, Complete: 40, Outcome: history.OK, Limit: 2, IDs: []int64{1, 2}, Requests: 2, Answered: 2,
			Pages: []history.Page{page(0, 2, apitest.Path("/pets?after=2&limit=2")), page(2, 0, "")}, Pets: []history.Pet{p1, p2}},
		{Kind: history.Get, Invoke: 41, Complete: 42, ID: 1, Outcome: history.OK, Status: 200, Pet: ptr(p1), Requests: 1, Answered: 1},
	}
	return ops, []history.Pet{p1, p2}
}

func TestMembersClean(t *testing.T) {
	ops, state := withMembers()
	r := Check(ops, state, Options{NewPet: evolvedNewPet(t)})
	var out bytes.Buffer
	r.Print(&out)
	if !r.OK() || r.Reads != 4 {
		t.Fatalf("a clean history fails, or counts %d reads (want 4: the walk's two, the get, the replay):\n%s", r.Reads, out.String())
	}
	// Without the defaults, a member left out is expected absent.
	if r := Check(ops, state, Options{}); len(r.Lost) != 1 {
		t.Errorf("without defaults: lost %q, want pet 1 only", r.Lost)
	}
}

// TestMemberAnomalies plants one change of a member at a time, in a read or
// in the store: a read that alters, drops, reorders or adds a member is a
// wrong read; a store that does (the reads agreeing with it) loses the
// acknowledged pet.
func TestMemberAnomalies(t *testing.T) {
	type ops = []history.Op
	type pets = []history.Pet
	rest := func(p *history.Pet, r string) { p.Rest = r }
	for _, tc := range []struct {
		name  string
		plant func(ops, pets) (ops, pets)
		kind  string
		want  string
	}{
		{"a walk alters a member", func(o ops, s pets) (ops, pets) {
			rest(&o[3].Pets[0], strings.Replace(petRest, `"y"`, `"z"`, 1))
			return o, s
		}, KindWrongReads, schematest.Made(`pet 1 returned as {ID:1 Name:a CategoryID:1 Status:available {"size":{"height":3,"unit":"cm"},"tags":["x","z"]`)},
		{"a walk drops a member", func(o ops, s pets) (ops, pets) {
			rest(&o[3].Pets[0], schematest.Made(`{"size":{"height":3,"unit":"cm"},"vaccinated":false}`))
			return o, s
		}, KindWrongReads, "pet 1 returned as"},
		{"a get reorders an array", func(o ops, s pets) (ops, pets) {
			p := petWith(1, "a", "available", strings.Replace(petRest, `["x","y"]`, `["y","x"]`, 1))
			o[4].Pet = &p
			return o, s
		}, KindWrongReads, "(first: get 1 from  at 0 ms)"},
		{"a walk adds a member", func(o ops, s pets) (ops, pets) {
			rest(&o[3].Pets[1], schematest.Made(`{"chip":"123456789012345","vaccinated":true}`))
			return o, s
		}, KindWrongReads, "pet 2 returned as"},
		{"a walk drops a member's default", func(o ops, s pets) (ops, pets) {
			rest(&o[3].Pets[0], tagsXY)
			return o, s
		}, KindWrongReads, "pet 1 returned as"},
		{"a replay alters a member", func(o ops, s pets) (ops, pets) {
			p := petWith(1, "a", "available", strings.Replace(petRest, `"height":3`, `"height":4`, 1))
			o[1].Pet = &p
			return o, s
		}, KindWrongReads, "(first: replay to key k1 attempt 2"},
		{"stored without a member sent", func(o ops, s pets) (ops, pets) {
			dropped := petWith(1, "a", "available", schematest.Made(`{"size":{"height":3,"unit":"cm"},"vaccinated":false}`))
			s[0], o[1].Pet, o[3].Pets[0], o[4].Pet = dropped, &dropped, dropped, &dropped
			return o, s
		}, KindLost, "pet 1 acknowledged as"},
		{"stored with an array sorted", func(o ops, s pets) (ops, pets) {
			sorted := petWith(1, "a", "available", petRest)
			for i := range 2 {
				o[i].Body = &history.Body{Name: "a", CategoryID: 1, Rest: strings.Replace(tagsXY, `["x","y"]`, `["y","x"]`, 1)}
			}
			s[0], o[1].Pet, o[3].Pets[0], o[4].Pet = sorted, &sorted, sorted, &sorted
			return o, s
		}, KindLost, schematest.Made(`but the request was {Name:a CategoryID:1 Status: {"size":{"height":3,"unit":"cm"},"tags":["y","x"]}}`)},
		{"stored without its default", func(o ops, s pets) (ops, pets) {
			other := petWith(1, "a", "pending", petRest)
			s[0], o[0].Pet, o[1].Pet, o[3].Pets[0], o[4].Pet = other, &other, &other, other, &other
			return o, s
		}, KindLost, "stored as {ID:1 Name:a CategoryID:1 Status:pending"},
		{"stored with a member it was not sent", func(o ops, s pets) (ops, pets) {
			added := petWith(2, "b", "sold", schematest.Made(`{"tags":[],"vaccinated":true}`))
			s[1], o[2].Pet, o[3].Pets[1] = added, &added, added
			return o, s
		}, KindLost, schematest.Made(`pet 2 stored as {ID:2 Name:b CategoryID:1 Status:sold {"tags":[],"vaccinated":true}}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, s := withMembers()
			o, s = tc.plant(o, s)
			r := Check(o, s, Options{NewPet: evolvedNewPet(t)})
			var out bytes.Buffer
			r.Print(&out)
			got := r.Of(tc.kind)
			if r.OK() || r.Anomalies() != len(got) || !slices.ContainsFunc(got, func(l string) bool { return strings.Contains(l, tc.want) }) {
				t.Fatalf("want %s only, one of them %q; got:\n%s", tc.kind, tc.want, out.String())
			}
		})
	}
}

// A history written before bodies and pets held other members reads as
// before, and audits clean.
func TestOldHistoryReads(t *testing.T) {
	lines := `{"kind":"create","invoke":1,"complete":2,"key":"k","body":{"name":"a","categoryId":3,"status":"sold"},"attempt":1,"outcome":"ok","status":201,"pet":{"id":1,"name":"a","categoryId":3,"status":"sold"},"requests":1,"answered":1}
{"kind":"walk","invoke":3,"complete":4,"outcome":"ok","limit":100,"ids":[1],"pages":[{"replica":"r1","status":200,"n":1}],"pets":[{"id":1,"name":"a","categoryId":3,"status":"sold"}]}
`
	ops, err := history.Read(strings.NewReader(lines))
	if err != nil {
		t.Fatal(err)
	}
	if b := ops[0].Body; b == nil || *b != (history.Body{Name: "a", CategoryID: 3, Status: "sold"}) {
		t.Fatalf("body read as %+v", b)
	}
	state, err := history.ReadPets(strings.NewReader(`{"id":1,"name":"a","categoryId":3,"status":"sold"}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	// openapi.yaml's NewPet, whose members are 1.2.0's.
	spec, err := gen.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	if r := Check(ops, state, Options{NewPet: spec.Components.Schemas["NewPet"].Value}); !r.OK() {
		var out bytes.Buffer
		r.Print(&out)
		t.Fatalf("an old history fails:\n%s", out.String())
	}
	// And a new line is the API's own pet, one flat object.
	b, _ := json.Marshal(petWith(1, "a", "sold", `{"tags":["x"]}`))
	if string(b) != `{"id":1,"name":"a","categoryId":1,"status":"sold","tags":["x"]}` {
		t.Errorf("a pet is written as %s", b)
	}
}

// withCare is the evolved NewPet with an object member whose own member
// has a default, a float and a date-time.
func withCare(t *testing.T) *openapi3.Schema {
	t.Helper()
	s := evolvedNewPet(t)
	for name, text := range map[string]string{
		"care":  `{"type": "object", "properties": {"level": {"type": "integer", "default": 3}}}`,
		"ratio": `{"type": "number", "format": "float"}`,
		"seen":  `{"type": "string", "format": "date-time"}`,
	} {
		var m openapi3.Schema
		if err := json.Unmarshal([]byte(text), &m); err != nil {
			t.Fatal(err)
		}
		s.Properties[schematest.Name(name)] = openapi3.NewSchemaRef("", &m)
	}
	return s
}

// TestValuesBySchema (issue 59, findings 1 and 2): a pet is stored as sent
// when each member is the same value by the schema's rules: a default
// nested in a member applies ({"care":{}} is stored as {"care":{"level":3}}),
// a float is its float32, a date-time its instant. A store that drops the
// nested default, or keeps another float32 or instant, loses the pet.
func TestValuesBySchema(t *testing.T) {
	sent := schematest.Made(`{"care":{},"ratio":3.4028234663852886e+38,"seen":"2020-01-01T01:00:00.500+01:00"}`)
	for _, tc := range []struct{ stored, lost string }{
		{schematest.Made(`{"care":{"level":3},"ratio":3.4028235e+38,"seen":"2020-01-01T00:00:00.5Z","vaccinated":false}`), ""},
		{schematest.Made(`{"care":{"level":3},"ratio":340282346638528860000000000000000000000,"seen":"2020-01-01T01:00:00.5+01:00","vaccinated":false}`), ""},
		{schematest.Made(`{"care":{},"ratio":3.4028235e+38,"seen":"2020-01-01T00:00:00.5Z","vaccinated":false}`), "lost"},
		{schematest.Made(`{"care":{"level":3},"ratio":3.4028233e+38,"seen":"2020-01-01T00:00:00.5Z","vaccinated":false}`), "lost"},
		{schematest.Made(`{"care":{"level":3},"ratio":3.4028235e+38,"seen":"2020-01-01T00:00:00.6Z","vaccinated":false}`), "lost"},
	} {
		p := petWith(1, "a", "available", tc.stored)
		ops := []history.Op{{Kind: history.Create, Invoke: 1, Complete: 2, Key: "k", Body: &history.Body{Name: "a", CategoryID: 1, Rest: sent},
			Attempt: 1, Outcome: history.OK, Status: 201, Pet: &p, Requests: 1, Answered: 1}}
		r := Check(ops, []history.Pet{p}, Options{NewPet: withCare(t)})
		var out bytes.Buffer
		r.Print(&out)
		if got := len(r.Lost) > 0; got != (tc.lost != "") || r.Anomalies() != len(r.Lost) {
			t.Errorf("sent %s, stored %s: lost %v, want %v:\n%s", sent, tc.stored, got, tc.lost != "", out.String())
		}
	}
}
