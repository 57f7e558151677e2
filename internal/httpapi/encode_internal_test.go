package httpapi

import (
	"encoding/json"
	"math"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apitest"
	"github.com/petstore/petstore/internal/pets"
)

// TestPetJSON requires petJSON to write for a pets.Pet exactly what Echo's
// default serializer (encoding/json) writes for the gen.Pet of its typed
// members, for names that need escaping.
func TestPetJSON(t *testing.T) {
	var all strings.Builder
	for c := 0; c < 0x80; c++ {
		all.WriteByte(byte(c))
	}
	names := []string{
		"Rex", "", all.String(), `<script>&"x"</script>`, "a\u2028b\u2029c", "\u2027\u202a",
		"é ü ß 中文 🐶", "\x7f\u0080\u00a0\ufeff\ufffd", "bad \xff\xfe utf-8 \xc3", "trailing \xe2\x80",
		`back\slash`, "\b\f\n\r\t\x00\x1f",
	}
	var list []pets.Pet
	for i, name := range names {
		p := pets.Pet{ID: int64(i) - 1, Name: name, CategoryID: math.MaxInt64 - int64(i), Status: pets.Status(name), Extra: required(t)}
		list = append(list, p)
		compare(t, p, genOf(t, p), "")
		compare(t, []pets.Pet{p}, gen.Pets{genOf(t, p)}, "")
	}
	genList := make(gen.Pets, len(list))
	for i, p := range list {
		genList[i] = genOf(t, p)
	}
	compare(t, list, genList, "")
	compare(t, []pets.Pet{}, gen.Pets{}, "")
	minimal := pets.Pet{ID: math.MinInt64, Extra: required(t)}
	compare(t, minimal, genOf(t, minimal), "")
	compare(t, map[string]string{"status": "<ok>"}, map[string]string{"status": "<ok>"}, "")
	compare(t, list, genList, "  ") // indented
}

// required is the Extra of the members the spec's Pet requires beside the
// typed ones, at their simplest (apitest.PetJSON); "" for none: the pets
// here are ones the spec allows, whatever members it requires.
func required(t *testing.T) pets.Extra {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(apitest.PetJSON(`{"id":1,"name":"","categoryId":1,"status":""}`)), &m); err != nil {
		t.Fatal(err)
	}
	for _, typed := range []string{"id", "name", "categoryId", "status"} {
		delete(m, typed)
	}
	if len(m) == 0 {
		return ""
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return pets.Extra(b)
}

// genOf is genPet(p) with p's Extra members in their fields of gen.Pet.
func genOf(t *testing.T, p pets.Pet) gen.Pet {
	t.Helper()
	g := genPet(p)
	if p.Extra != "" {
		if err := json.Unmarshal([]byte(p.Extra), &g); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// TestPetJSONExtra requires a pet's Extra members in its body, each once,
// in canonical order among the typed ones, as stored.
func TestPetJSONExtra(t *testing.T) {
	p := pets.Pet{ID: 7, Name: "<Rex>", CategoryID: 3, Status: pets.Sold,
		Extra: `{"age":3,"color":"<brown>","nested":{"a":[1,"x"],"b":null},"owner":"Ann","tags":["a","b"],"zz":true,"𝔘":1,"ｚ":2}`}
	got := body(t, petJSON{}, p, "")
	want := `{"age":3,"categoryId":3,"color":"<brown>","id":7,"name":"\u003cRex\u003e","nested":{"a":[1,"x"],"b":null},"owner":"Ann","status":"sold","tags":["a","b"],"zz":true,"𝔘":1,"ｚ":2}` + "\n"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(got), &v); err != nil || len(v) != 12 {
		t.Errorf("%s: %d members, %v", got, len(v), err)
	}
	// A member that sorts after every typed one, and one before all.
	for _, extra := range []pets.Extra{`{"a":1}`, `{"zzz":1}`} {
		got := body(t, petJSON{}, pets.Pet{ID: 1, Name: "x", CategoryID: 1, Status: pets.Sold, Extra: extra}, "")
		if !json.Valid([]byte(got)) || !strings.Contains(got, string(extra[1:len(extra)-1])) {
			t.Errorf("Extra %s: got %s", extra, got)
		}
	}
}

func body(t *testing.T, s echo.JSONSerializer, v any, indent string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	if err := s.Serialize(echo.New().NewContext(httptest.NewRequest("GET", "/", nil), rec), v, indent); err != nil {
		t.Fatal(err)
	}
	return rec.Body.String()
}

func compare(t *testing.T, v, plain any, indent string) {
	t.Helper()
	if got, want := body(t, petJSON{}, v, indent), body(t, echo.DefaultJSONSerializer{}, plain, indent); got != want {
		t.Errorf("%#v:\ngot  %q\nwant %q", v, got, want)
	}
	if reflect.TypeOf(v) == reflect.TypeFor[pets.Pet]() { // the bare baseline's encoding too
		if got, want := body(t, echo.DefaultJSONSerializer{}, petBody(v.(pets.Pet)), indent), body(t, echo.DefaultJSONSerializer{}, plain, indent); got != want {
			t.Errorf("petBody %#v:\ngot  %q\nwant %q", v, got, want)
		}
	}
}
