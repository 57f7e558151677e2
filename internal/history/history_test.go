package history

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"
)

// TestRoundTrip: what concurrent writers add is read back whole, one op a
// line, and so is a final state.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	w, err := CreateFile(filepath.Join(dir, "history.jsonl"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	walk := Op{Kind: Walk, Process: 3, Invoke: 1, Complete: 2, Replica: "r2", Outcome: OK, Filter: "sold", Limit: 100, IDs: []int64{1, 5, 9}, Requests: 2, Answered: 2}
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			w.Add(Op{Kind: Create, Process: i, Key: "k", Body: &Body{Name: "n", CategoryID: 1, Status: "sold"}, Outcome: OK, Status: 201, Pet: &Pet{ID: 1, Name: "n", CategoryID: 1, Status: "sold"}})
		})
	}
	wg.Wait()
	w.Add(walk)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ops, err := ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 51 || !reflect.DeepEqual(ops[50], walk) || ops[0].Pet == nil || ops[0].Body.Name != "n" {
		t.Fatalf("read back %d ops; last %+v", len(ops), ops[len(ops)-1])
	}

	state := []Pet{{ID: 1, Name: "a", CategoryID: 2, Status: "sold"}, {ID: 2, Name: "b\n\"", CategoryID: 3, Status: "pending"}}
	if err := WritePets(filepath.Join(dir, "state.jsonl"), state); err != nil {
		t.Fatal(err)
	}
	got, err := ReadPetsFile(filepath.Join(dir, "state.jsonl"))
	if err != nil || !reflect.DeepEqual(got, state) {
		t.Fatalf("state read back as %+v, %v", got, err)
	}
}

// TestWalkPetsOnce: a Writer records each version of a pet once; a walk
// that shows it again as it was has it in IDs alone, and a new version of
// it is recorded.
func TestWalkPetsOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	w, err := CreateFile(path, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	a, b := Pet{ID: 1, Name: "a", CategoryID: 1, Status: "sold"}, Pet{ID: 2, Name: "b", CategoryID: 1, Status: "sold"}
	b2 := b
	b2.Status = "pending"
	w.Add(Op{Kind: Walk, IDs: []int64{1, 2}, Pets: []Pet{a, b}})
	w.Add(Op{Kind: Walk, IDs: []int64{1, 2}, Pets: []Pet{a, b2}})
	w.Add(Op{Kind: Walk, IDs: []int64{1, 2}, Pets: []Pet{a, b}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ops, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]Pet{{a, b}, {b2}, nil}
	for i, op := range ops {
		if !reflect.DeepEqual(op.Pets, want[i]) || len(op.IDs) != 2 {
			t.Errorf("walk %d: pets %+v, ids %v; want pets %+v", i, op.Pets, op.IDs, want[i])
		}
	}
}

// TestMembers: a pet's and a body's other members are kept whole, in one
// canonical form (members sorted, arrays in order, integers exact), and
// written back as the API's flat object.
func TestMembers(t *testing.T) {
	var p Pet
	in := `{"status":"sold","tags":[ "b" , "a"],"id":1,"name":"n","categoryId":2,"size":{"unit":"cm","height":9223372036854775807}}`
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	want := Pet{ID: 1, Name: "n", CategoryID: 2, Status: "sold", Rest: `{"size":{"height":9223372036854775807,"unit":"cm"},"tags":["b","a"]}`}
	if p != want {
		t.Fatalf("read %+v, want %+v", p, want)
	}
	out, _ := json.Marshal(p)
	if string(out) != `{"id":1,"name":"n","categoryId":2,"status":"sold","size":{"height":9223372036854775807,"unit":"cm"},"tags":["b","a"]}` {
		t.Errorf("written as %s", out)
	}
	b, err := NewBody(map[string]any{"name": "n", "categoryId": json.Number("2"), "tags": []any{"b", "a"}})
	if err != nil || b != (Body{Name: "n", CategoryID: 2, Rest: `{"tags":["b","a"]}`}) {
		t.Fatalf("NewBody: %+v, %v", b, err)
	}
	out, _ = json.Marshal(b)
	var back Body
	if err := json.Unmarshal(out, &back); err != nil || back != b || string(out) != `{"name":"n","categoryId":2,"tags":["b","a"]}` {
		t.Errorf("body written as %s, read back as %+v (%v)", out, back, err)
	}
}
