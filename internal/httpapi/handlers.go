package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/apikey"
	"github.com/petstore/petstore/internal/newpet"
	"github.com/petstore/petstore/internal/pets"
)

// Headers of the deprecated getPet operation (see openapi.yaml).
const (
	deprecationHeader = "@1767225600" // 1 January 2026, RFC 9745
	sunsetHeader      = "Thu, 05 Dec 2030 00:00:00 GMT"
)

// Header values made once, for headers every answer of a kind carries:
// net/http only reads them, and a Set elsewhere replaces the slice.
var (
	deprecationValue = []string{deprecationHeader}
	sunsetValue      = []string{sunsetHeader}
	jsonValue        = []string{echo.MIMEApplicationJSON}
)

// handler implements the generated ServerInterface over a pets.Store.
type handler struct {
	store pets.Store
	// idempotencyTTL is how long the outcome of a create with an
	// Idempotency-Key is kept.
	idempotencyTTL time.Duration
	// base is the base path of the operations, which links name.
	base string
	// plain answers through Echo's default JSON serializer (Handlers).
	plain bool
	// successorLink is getPet's Link, made once (successor).
	successorOnce sync.Once
	successorLink []string
}

var _ gen.ServerInterface = (*handler)(nil)

// Handlers returns the handlers alone, without the app around them (no
// auth, logs, metrics or strict checks): for the bare baseline `make bench`
// measures the app against (internal/benchtarget/bare). Serve New instead.
func Handlers(store pets.Store) (gen.ServerInterface, error) {
	spec, err := gen.GetSpec()
	if err != nil {
		return nil, err
	}
	var schema *openapi3.Schema
	for _, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			if op.OperationID == "createPet" && op.RequestBody != nil {
				schema = bodySchema(op.RequestBody.Value)
			}
		}
	}
	m, err := newpet.New(schema)
	if err != nil {
		return nil, err
	}
	return bareHandler{&handler{store: store, base: BasePath(), plain: true}, m}, nil
}

// bareHandler is handler without decodeBody in front of it: its CreatePet
// decodes the body itself, as a handler of the plain stack would.
type bareHandler struct {
	*handler
	newPet *newpet.Mapper
}

func (h bareHandler) CreatePet(c echo.Context, params gen.CreatePetParams) error {
	var body any
	d := json.NewDecoder(c.Request().Body)
	d.UseNumber()
	if err := d.Decode(&body); err != nil {
		return invalid("body: %v", err)
	}
	n, err := h.newPet.NewPet(body)
	if err != nil {
		return err
	}
	return h.createPet(c, nil, n, params)
}

// bodyBinder makes, from an operation's body schema, what hands the body,
// decoded and checked (decodeBody), to its handler, typed, on the call.
type bodyBinder func(schema *openapi3.Schema) (bindFunc, error)

// bindFunc hands a decoded, checked body to its handler, on the call.
type bindFunc func(cl *call, body any) error

// bodyBinders are the binders of the operations that take a body, by
// operationId: New fails for an operation with a body and no binder.
var bodyBinders = map[string]bodyBinder{
	// createPet's body is the NewPet of the spec the app serves: its
	// members without behaviour become the pet's Extra (package newpet).
	"createPet": func(schema *openapi3.Schema) (bindFunc, error) {
		m, err := newpet.New(schema)
		if err != nil {
			return nil, err
		}
		return func(cl *call, body any) (err error) {
			cl.newPet, err = m.NewPet(body)
			return err
		}, nil
	},
}

// bodySchema is the JSON schema of a request body, or nil.
func bodySchema(body *openapi3.RequestBody) *openapi3.Schema {
	if mt := body.Content.Get(echo.MIMEApplicationJSON); mt != nil && mt.Schema != nil {
		return mt.Schema.Value
	}
	return nil
}

// ListPets answers GET /v1/pets.
func (h *handler) ListPets(c echo.Context, params gen.ListPetsParams) error {
	q := pets.Query{Limit: pets.DefaultLimit}
	if params.Limit != nil {
		q.Limit = int(*params.Limit)
	}
	if params.Status != nil {
		q.Status = pets.Status(*params.Status)
	}
	if params.After != nil {
		q.After = *params.After
	}
	page, err := h.store.List(c.Request().Context(), q)
	if err != nil {
		return err
	}
	if page.More {
		c.Response().Header().Set("Link", nextLink(h.base, q, page.Pets[len(page.Pets)-1].ID))
	}
	return h.json(c, http.StatusOK, page.Pets)
}

// nextLink is the RFC 8288 link to the page after the one that ends at last.
// Its query is what url.Values would encode (names in order; a status is a
// plain word), written in one buffer.
func nextLink(base string, q pets.Query, last int64) string {
	b := make([]byte, 0, 80)
	b = append(b, '<')
	b = append(b, base...)
	b = append(b, "/pets?after="...)
	b = strconv.AppendInt(b, last, 10)
	b = append(b, "&limit="...)
	b = strconv.AppendInt(b, int64(q.Limit), 10)
	if q.Status != "" {
		b = append(b, "&status="...)
		b = append(b, q.Status...)
	}
	b = append(b, `>; rel="next"`...)
	return string(b)
}

// CreatePet answers POST /v1/pets with the body and the caller the chain
// put on the call.
func (h *handler) CreatePet(c echo.Context, params gen.CreatePetParams) error {
	cl := callOf(c)
	if cl == nil {
		return errNoCall
	}
	return h.createPet(c, cl.caller, cl.newPet, params)
}

// createPet creates n. With an Idempotency-Key, the store creates the pet
// once per key and caller, and a retry gets the first answer again,
// re-derived from the stored pet and marked as a replay.
func (h *handler) createPet(c echo.Context, caller *apikey.Key, n pets.NewPet, params gen.CreatePetParams) error {
	// The store normalizes (defaults, domain rules) and refuses with a
	// *pets.ValidationError, which the mapper answers 400.
	ctx := c.Request().Context()
	if params.IdempotencyKey == nil {
		p, err := h.store.Create(ctx, n)
		if err != nil {
			return err
		}
		return h.created(c, p)
	}
	key, err := idempotencyKey(*params.IdempotencyKey)
	if err != nil {
		return err
	}
	if caller == nil {
		return errors.New("httpapi: an idempotent create without an authenticated key")
	}
	p, replayed, err := h.store.CreateOnce(ctx, n, pets.IdempotencyKey{Owner: caller.Digest.String(), Key: key, TTL: h.idempotencyTTL})
	if errors.Is(err, pets.ErrOutcomeUnknown) {
		return fmt.Errorf("%w: %w", &apiError{Status: http.StatusServiceUnavailable, Code: codeOutcomeUnknown, Message: msgOutcomeUnknownKeyed}, err)
	}
	if err != nil {
		return err
	}
	if replayed {
		c.Response().Header().Set(headerReplayed, "true")
	}
	return h.created(c, p)
}

// created answers 201 with the pet and its Location.
func (h *handler) created(c echo.Context, p pets.Pet) error {
	c.Response().Header().Set(echo.HeaderLocation, h.base+"/pets/"+strconv.FormatInt(p.ID, 10))
	return h.json(c, http.StatusCreated, p)
}

// headerReplayed marks an answer replayed for an Idempotency-Key.
const headerReplayed = "Idempotent-Replayed"

// maxIdempotencyKey is the longest Idempotency-Key, without its quotes.
const maxIdempotencyKey = pets.MaxKeyLength

// idempotencyKey returns the key an Idempotency-Key header names: the value,
// or, in the draft's structured-field form, the string inside its double
// quotes. The validator checks the same syntax (openapi.yaml); this check
// keeps the store safe without it.
func idempotencyKey(v string) (string, error) {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	if v == "" || len(v) > maxIdempotencyKey {
		return "", invalid("Idempotency-Key: must be 1 to %d characters", maxIdempotencyKey)
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.~:+/=", c) >= 0) {
			return "", invalid("Idempotency-Key: must be 1 to %d characters of A-Z a-z 0-9 - _ . ~ : + / =, optionally in double quotes", maxIdempotencyKey)
		}
	}
	return v, nil
}

// GetPet answers GET /v1/pets/{petId}, a deprecated operation.
func (h *handler) GetPet(c echo.Context, petID gen.PetId) error {
	hdr := c.Response().Header()
	hdr["Deprecation"] = deprecationValue
	hdr["Sunset"] = sunsetValue
	hdr["Link"] = h.successor()
	p, err := h.store.Get(c.Request().Context(), petID)
	if err != nil {
		return err
	}
	return h.json(c, http.StatusOK, p)
}

// successor is getPet's Link header: its successor, the list.
func (h *handler) successor() []string {
	h.successorOnce.Do(func() { h.successorLink = []string{"<" + h.base + `/pets>; rel="successor-version"`} })
	return h.successorLink
}

// json answers a pet or a page of them: through the app's petJSON, or,
// for the bare baseline (plain), through encoding/json, Echo's default, as
// a plain stack would: the generated model's struct, by reflection, for
// pets with no other members; as json.Marshalers (petBody) when one has.
func (h *handler) json(c echo.Context, code int, v any) error {
	if !h.plain {
		if hdr := c.Response().Header(); hdr[echo.HeaderContentType] == nil {
			hdr[echo.HeaderContentType] = jsonValue // Echo's, without a slice a request
		}
		return c.JSON(code, v)
	}
	switch v := v.(type) {
	case pets.Pet:
		if v.Extra == "" {
			return c.JSON(code, genPet(v))
		}
		return c.JSON(code, petBody(v))
	case []pets.Pet:
		if !slices.ContainsFunc(v, func(p pets.Pet) bool { return p.Extra != "" }) {
			out := make(gen.Pets, len(v))
			for i, p := range v {
				out[i] = genPet(p)
			}
			return c.JSON(code, out)
		}
		out := make([]petBody, len(v))
		for i, p := range v {
			out[i] = petBody(p)
		}
		return c.JSON(code, out)
	}
	return c.JSON(code, v)
}

// genPet is the generated model of a pet's typed members.
func genPet(p pets.Pet) gen.Pet {
	return gen.Pet{Id: p.ID, Name: p.Name, CategoryId: p.CategoryID, Status: gen.PetStatus(p.Status)}
}

// petBody is a pet as a json.Marshaler, for encoders other than petJSON.
type petBody pets.Pet

func (p petBody) MarshalJSON() ([]byte, error) { return appendPet(nil, pets.Pet(p)), nil }
