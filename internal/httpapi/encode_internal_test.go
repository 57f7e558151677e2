package httpapi

import (
	"math"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/gen"
)

// TestPetJSON requires petJSON to write exactly what Echo's default
// serializer (encoding/json) writes, for names that need escaping.
func TestPetJSON(t *testing.T) {
	// appendPet writes four members; a member added to gen.Pet needs it updated.
	if n := reflect.TypeFor[gen.Pet]().NumField(); n != 4 {
		t.Fatalf("gen.Pet has %d fields; appendPet writes 4: update it", n)
	}
	var all strings.Builder
	for c := 0; c < 0x80; c++ {
		all.WriteByte(byte(c))
	}
	names := []string{
		"Rex", "", all.String(), `<script>&"x"</script>`, "a\u2028b\u2029c", "\u2027\u202a",
		"é ü ß 中文 🐶", "\x7f\u0080\u00a0\ufeff\ufffd", "bad \xff\xfe utf-8 \xc3", "trailing \xe2\x80",
		`back\slash`, "\b\f\n\r\t\x00\x1f",
	}
	var list gen.Pets
	for i, name := range names {
		p := gen.Pet{Id: int64(i) - 1, Name: name, CategoryId: math.MaxInt64 - int64(i), Status: gen.PetStatus(name)}
		list = append(list, p)
		for _, v := range []any{p, gen.Pets{p}} {
			compare(t, v, "")
		}
	}
	for _, v := range []any{list, gen.Pets{}, gen.Pets(nil), gen.Pet{Id: math.MinInt64}, map[string]string{"status": "<ok>"}} {
		compare(t, v, "")
	}
	compare(t, list, "  ") // indented: Echo's default writes it
}

func compare(t *testing.T, v any, indent string) {
	t.Helper()
	e := echo.New()
	write := func(s echo.JSONSerializer) string {
		rec := httptest.NewRecorder()
		if err := s.Serialize(e.NewContext(httptest.NewRequest("GET", "/", nil), rec), v, indent); err != nil {
			t.Fatal(err)
		}
		return rec.Body.String()
	}
	if got, want := write(petJSON{}), write(echo.DefaultJSONSerializer{}); got != want {
		t.Errorf("%#v:\ngot  %q\nwant %q", v, got, want)
	}
}
