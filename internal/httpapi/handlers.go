package httpapi

import (
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/petstore/petstore/gen"
	"github.com/petstore/petstore/internal/pets"
)

// Headers of the deprecated getPet operation (see openapi.yaml).
const (
	deprecationHeader = "@1767225600" // 1 January 2026, RFC 9745
	sunsetHeader      = "Thu, 05 Dec 2030 00:00:00 GMT"
	successorLink     = `</v1/pets>; rel="successor-version"`
)

// handler implements the generated ServerInterface over a pets.Store.
type handler struct {
	store pets.Store
}

var _ gen.ServerInterface = (*handler)(nil)

// Handlers returns the handlers alone, without the app around them (no
// auth, logs, metrics or strict checks): for the bare baseline `make bench`
// measures the app against (internal/benchtarget/bare). Serve New instead.
func Handlers(store pets.Store) gen.ServerInterface { return &handler{store: store} }

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
	out := make(gen.Pets, len(page.Pets))
	for i, p := range page.Pets {
		out[i] = toGen(p)
	}
	if page.More {
		c.Response().Header().Set("Link", nextLink(q, page.Pets[len(page.Pets)-1].ID))
	}
	return c.JSON(http.StatusOK, out)
}

// nextLink is the RFC 8288 link to the page after the one that ends at last.
// Its query is what url.Values would encode (names in order; a status is a
// plain word), written in one buffer.
func nextLink(q pets.Query, last int64) string {
	b := make([]byte, 0, 80)
	b = append(b, "</v1/pets?after="...)
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

// CreatePet answers POST /v1/pets.
func (h *handler) CreatePet(c echo.Context) error {
	data, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	var body gen.NewPet
	if err := decodeStrict(data, &body); err != nil {
		return invalid("%s", jsonError(err))
	}
	n := pets.NewPet{Name: body.Name, CategoryID: body.CategoryId}
	if body.Status != nil {
		n.Status = pets.Status(*body.Status)
	}
	// The store normalizes (defaults, domain rules) and refuses with a
	// *pets.ValidationError, which the mapper answers 400.
	p, err := h.store.Create(c.Request().Context(), n)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/pets/"+strconv.FormatInt(p.ID, 10))
	return c.JSON(http.StatusCreated, toGen(p))
}

// GetPet answers GET /v1/pets/{petId}, a deprecated operation.
func (h *handler) GetPet(c echo.Context, petID gen.PetId) error {
	hdr := c.Response().Header()
	hdr.Set("Deprecation", deprecationHeader)
	hdr.Set("Sunset", sunsetHeader)
	hdr.Set("Link", successorLink)
	p, err := h.store.Get(c.Request().Context(), petID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toGen(p))
}

func toGen(p pets.Pet) gen.Pet {
	return gen.Pet{Id: p.ID, Name: p.Name, CategoryId: p.CategoryID, Status: gen.PetStatus(p.Status)}
}
