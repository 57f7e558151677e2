package conform_test

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/petstore/petstore/internal/conform"
	"github.com/petstore/petstore/internal/httpapi"
	"github.com/petstore/petstore/internal/schemagen/schematest"
)

// typedMembers are members whose value is not their text, as a spec may
// add them, and as a server with typed models keeps them: a float as a
// float32, a date-time as a time.Time (its offset kept, the zeros that end
// its fraction dropped), a nullable string as a pointer left out when nil.
var typedMembers = map[string]string{
	"ratio": `{"type": "number", "format": "float"}`,
	"seen":  `{"type": "string", "format": "date-time"}`,
	"nick":  `{"type": "string", "nullable": true, "maxLength": 10}`,
}

// typedAnswers re-spells every pet the app answers as encoding/json writes
// the typed members of a Go server (oapi-codegen's models: float32,
// time.Time, *string with omitempty): another spelling of the same value.
func typedAnswers(defect string) func(http.Handler) http.Handler {
	return func(app http.Handler) http.Handler { return typed(app, defect) }
}

// The defects typedAnswers may plant: another value, not another spelling.
const (
	floatStep = "a float one float32 step off"
	hourLater = "a date-time an hour later"
)

func typed(app http.Handler, defect string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		app.ServeHTTP(rec, r)
		if rec.Code/100 == 2 && rec.Body.Len() > 0 {
			dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
			dec.UseNumber()
			var v any
			if dec.Decode(&v) == nil {
				pets, _ := v.([]any)
				if pet, ok := v.(map[string]any); ok {
					pets = []any{pet}
				}
				for _, p := range pets {
					retype(p.(map[string]any), defect)
				}
				b, _ := json.Marshal(v)
				rec.Body.Reset()
				rec.Body.Write(b)
				rec.Header().Set("Content-Length", strconv.Itoa(len(b)))
			}
		}
		copyResponse(w, rec)
	})
}

// retype re-spells pet's typed members as a Go server writes them.
func retype(pet map[string]any, defect string) {
	if n, ok := pet[schematest.Name("ratio")].(json.Number); ok {
		if f, err := strconv.ParseFloat(string(n), 32); err == nil {
			f32 := float32(f)
			if defect == floatStep {
				f32 = math.Nextafter32(f32, 0)
			}
			b, _ := json.Marshal(f32)
			pet[schematest.Name("ratio")] = json.RawMessage(b)
		}
	}
	if s, ok := pet[schematest.Name("seen")].(string); ok {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			if defect == hourLater {
				t = t.Add(time.Hour)
			}
			pet[schematest.Name("seen")] = t
		}
	}
	if pet[schematest.Name("nick")] == nil {
		delete(pet, schematest.Name("nick"))
	}
}

// TestTypedServer (issue 59, finding 1): a correct server that keeps a
// float as a float32, a date-time as a time.Time and a nullable member as a
// pointer answers another spelling of the value sent (3.4028235e+38 for
// 3.4028234663852886e+38, 2020-01-01T00:00:00.5Z for
// 2020-01-01T00:00:00.500-00:00, no member for null): the kit judges the
// value, by the spec's rules, and passes it. One that answers another
// value fails stored_as_sent.
func TestTypedServer(t *testing.T) {
	t.Parallel()
	for _, defect := range []string{"", floatStep, hourLater} {
		t.Run(cmp(defect, "none"), func(t *testing.T) {
			t.Parallel()
			cfg := typedKit(t, defect)
			if defect == "" {
				passes(t, cfg, "a server of typed members (float32, time.Time, *string)")
				return
			}
			if rep, text := runKit(t, cfg); !rep.Failed("stored_as_sent") {
				t.Fatalf("%s: stored_as_sent passes:\n%s", defect, text)
			}
		})
	}
}

// typedKit is the kit's configuration against typedAnswers(defect) over
// the app, both of the evolved spec with typedMembers.
func typedKit(t *testing.T, defect string) conform.Config {
	t.Helper()
	spec, err := schematest.Evolved()
	if err != nil {
		t.Fatal(err)
	}
	for _, schema := range []string{"NewPet", "Pet"} {
		for name, text := range typedMembers {
			var m openapi3.Schema
			if err := json.Unmarshal([]byte(text), &m); err != nil {
				t.Fatal(err)
			}
			spec.Components.Schemas[schema].Value.Properties[schematest.Name(name)] = openapi3.NewSchemaRef("", &m)
		}
	}
	if err := spec.Validate(openapi3.NewLoader().Context); err != nil {
		t.Fatal(err)
	}
	cfg := kitConfig(serveApp(t, httpapi.Config{Spec: spec}, spec, typedAnswers(defect)))
	cfg.MaxRequests = evolvedBudget // more members, more cases: past the default budget on a tree the drill evolved
	cfg.Spec = spec
	return cfg
}
