package cases

import (
	"net/http"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// An operation whose body is only merge-patch JSON takes a body: its
// valid request carries it with that Content-Type (before, the kit read
// such an operation as taking none, and sent it "a JSON body where none is
// taken" as a case a correct server must refuse).
func TestBodyOfAnotherJSONType(t *testing.T) {
	spec, err := openapi3.NewLoader().LoadFromData([]byte(`
openapi: 3.0.3
info: {title: t, version: 1.0.0}
paths:
  /pets/{petId}:
    parameters:
      - {name: petId, in: path, required: true, schema: {type: integer}}
    patch:
      operationId: updatePet
      requestBody:
        required: true
        content:
          application/merge-patch+json:
            schema: {type: object, properties: {name: {type: string, maxLength: 8}}}
      responses: {'204': {description: patched}}
    put:
      operationId: replacePet
      requestBody:
        content:
          application/json:
            schema: {type: object}
          application/merge-patch+json:
            schema: {type: string}
      responses: {'204': {description: replaced}}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, op := range Operations(spec) {
		if op.Body == nil {
			t.Errorf("%s: no body", op.ID)
			continue
		}
		got[op.ID] = op.BodyType
		if h := op.BodyHeader(); h.Get("Content-Type") != op.BodyType {
			t.Errorf("%s: Content-Type %q, want %q", op.ID, h.Get("Content-Type"), op.BodyType)
		}
	}
	if got["updatePet"] != "application/merge-patch+json" || got["replacePet"] != "application/json" {
		t.Errorf("body types %v; want merge-patch for updatePet, application/json where it is one", got)
	}
	if (&Operation{Method: http.MethodPost}).BodyHeader().Get("Content-Type") != "application/json" {
		t.Error("an operation of no known type: want application/json")
	}
}
